// The plan as a graph, for the graph view: the server's graph of the plan (keiri-plan's
// `plan_graph`, sent with every validation) in the view's shape, findings per node, an automatic
// layout and where nodes are in the text. References are not parsed here: the server finds them
// with the validator's own parser and scope rule, so the view draws what the validator checks.
// Pure functions, tested without a DOM; the view only draws what these return.

import dagre from '@dagrejs/dagre';
import { parseDocument } from 'yaml';
import type { EdgeKind, NodeKind, PlanGraph as ApiPlanGraph, ShownFinding } from '../../api/types';

export interface GraphNode {
  /**
   * The node's JSON pointer in the plan (`/graph/2`, `/graph/2/body/plan/graph/0`): unique even
   * when a loop body reuses an id, and the prefix of the `path` of the node's findings.
   */
  key: string;
  /** The plan node id (`''` when the node has none). */
  id: string;
  kind: NodeKind;
  block: string | null;
  /** The block's catalog category (or the id's prefix before the first dot), or the kind. */
  category: string;
  /** The key of the loop whose body holds this node. */
  parent: string | null;
  /** The called plan of a subflow node. */
  callPlanId: string | null;
  when: string | null;
}

export interface GraphEdge {
  key: string;
  /** Node keys. */
  source: string;
  target: string;
  /** The output aliases the target reads, joined with `, `. */
  label: string;
  kind: EdgeKind;
}

export interface PlanGraph {
  /** Pre-order: a loop comes before its body nodes. */
  nodes: GraphNode[];
  edges: GraphEdge[];
}

/** The graph of a text with no nodes (the studio does not ask the server about empty text). */
export const EMPTY_PLAN_GRAPH: ApiPlanGraph = { nodes: [], edges: [], unresolved_vars: [] };

/**
 * The category of a block: the catalog's (its directory) when `categories` knows the block,
 * else the id's prefix before the first dot (`transforms.join` → `transforms`).
 */
export function blockCategory(block: string, categories?: ReadonlyMap<string, string>): string {
  const known = categories?.get(block);
  if (known !== undefined) return known;
  const dot = block.indexOf('.');
  return dot > 0 ? block.slice(0, dot) : block;
}

/** The server's graph in the view's shape: each node's category, each edge's key and label. */
export function viewGraph(graph: ApiPlanGraph, categories?: ReadonlyMap<string, string>): PlanGraph {
  return {
    nodes: graph.nodes.map((node) => ({
      key: node.key,
      id: node.id,
      kind: node.kind,
      block: node.block,
      category: node.block !== null ? blockCategory(node.block, categories) : node.kind,
      parent: node.parent,
      callPlanId: node.call_plan_id,
      when: node.when,
    })),
    edges: graph.edges.map((edge) => ({
      key: `${edge.source}->${edge.target}`,
      source: edge.source,
      target: edge.target,
      label: edge.aliases.join(', '),
      kind: edge.kind,
    })),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The ids of the plan's top-level nodes, in order, read from the text itself (the sample run
 * starts with the text on screen, which the last validation may not have seen yet). Text that
 * does not read as a plan has none.
 */
export function topLevelNodeIds(yamlText: string): string[] {
  let plan: unknown;
  try {
    const doc = parseDocument(yamlText, { uniqueKeys: false });
    if (doc.errors.length > 0) return [];
    plan = doc.toJS({ maxAliasCount: 100 });
  } catch {
    return [];
  }
  if (!isRecord(plan) || !Array.isArray(plan.graph)) return [];
  const ids: string[] = [];
  for (const node of plan.graph as unknown[]) {
    const id = isRecord(node) ? node.id : undefined;
    // `id: 12` reads as a number in YAML; the node's id is still its text.
    if (typeof id === 'string' || typeof id === 'number' || typeof id === 'boolean') {
      if (String(id) !== '') ids.push(String(id));
    }
  }
  return ids;
}

/** A node's findings: counts and the first (most severe first, then in list order). */
export interface NodeFindings {
  errors: number;
  warnings: number;
  first: ShownFinding;
}

function pointerWithin(path: string, key: string): boolean {
  return path === key || path.startsWith(`${key}/`);
}

/**
 * The findings that belong to each node (by node key). A finding belongs to the node whose
 * pointer is the longest prefix of its `path` (so a body node's finding is not also its
 * loop's); a finding without such a path falls back to the first node with its `node_id`.
 */
export function findingsByNode(graph: PlanGraph, findings: readonly ShownFinding[]): Map<string, NodeFindings> {
  const byKey = new Map<string, NodeFindings>();
  for (const finding of findings) {
    let owner: GraphNode | null = null;
    for (const node of graph.nodes) {
      if (pointerWithin(finding.path, node.key) && (owner === null || node.key.length > owner.key.length)) owner = node;
    }
    if (owner === null && finding.node_id !== null) {
      owner = graph.nodes.find((node) => node.id === finding.node_id) ?? null;
    }
    if (owner === null) continue;
    const entry = byKey.get(owner.key);
    const isError = finding.severity !== 'warning';
    if (entry === undefined) {
      byKey.set(owner.key, { errors: isError ? 1 : 0, warnings: isError ? 0 : 1, first: finding });
      continue;
    }
    if (isError) entry.errors += 1;
    else entry.warnings += 1;
    if (isError && entry.first.severity === 'warning') entry.first = finding;
  }
  return byKey;
}

/** Where a node is drawn: relative to its parent group (React Flow's convention). */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface LayoutOptions {
  nodeWidth: number;
  nodeHeight: number;
  /** Space around a group's body and above it for the group's title. */
  groupPadding: number;
  groupHeader: number;
  rankSep: number;
  nodeSep: number;
  direction: 'TB' | 'LR';
}

export const DEFAULT_LAYOUT: LayoutOptions = {
  nodeWidth: 210,
  nodeHeight: 72,
  groupPadding: 18,
  groupHeader: 34,
  rankSep: 48,
  nodeSep: 28,
  direction: 'TB',
};

/**
 * Lays the graph out with dagre, bottom-up: each loop body is laid out on its own, its size
 * becomes the loop node's size one level up, and edges that cross a group's border are laid
 * out between the ancestors they connect at that level. (Dagre's own compound mode does not
 * support edges that end at a cluster, which loop nodes are.)
 */
export function layoutGraph(graph: PlanGraph, options: LayoutOptions = DEFAULT_LAYOUT): Map<string, Box> {
  const children = new Map<string | null, GraphNode[]>();
  const parentOf = new Map<string, string | null>();
  for (const node of graph.nodes) {
    parentOf.set(node.key, node.parent);
    const list = children.get(node.parent) ?? [];
    list.push(node);
    children.set(node.parent, list);
  }
  const boxes = new Map<string, Box>();

  // The ancestor of `key` (or `key` itself) whose parent is `level`, if any.
  const atLevel = (key: string, level: string | null): string | null => {
    let current: string | null = key;
    while (current !== null) {
      const parent: string | null = parentOf.get(current) ?? null;
      if (parent === level) return current;
      current = parent;
    }
    return null;
  };

  const layoutLevel = (level: string | null): { width: number; height: number } => {
    const members = children.get(level) ?? [];
    const sizes = new Map<string, { width: number; height: number }>();
    for (const node of members) {
      if ((children.get(node.key) ?? []).length > 0) {
        const inner = layoutLevel(node.key);
        sizes.set(node.key, {
          width: Math.max(options.nodeWidth, inner.width + 2 * options.groupPadding),
          height: inner.height + options.groupHeader + options.groupPadding,
        });
      } else {
        sizes.set(node.key, { width: options.nodeWidth, height: options.nodeHeight });
      }
    }
    const g = new dagre.graphlib.Graph({ multigraph: false });
    g.setGraph({ rankdir: options.direction, ranksep: options.rankSep, nodesep: options.nodeSep, marginx: 0, marginy: 0 });
    g.setDefaultEdgeLabel(() => ({}));
    for (const node of members) {
      const size = sizes.get(node.key) ?? { width: options.nodeWidth, height: options.nodeHeight };
      g.setNode(node.key, { width: size.width, height: size.height });
    }
    for (const edge of graph.edges) {
      const source = atLevel(edge.source, level);
      const target = atLevel(edge.target, level);
      if (source !== null && target !== null && source !== target && !g.hasEdge(source, target)) {
        g.setEdge(source, target);
      }
    }
    dagre.layout(g);
    let width = 0;
    let height = 0;
    const offset = level === null ? { x: 0, y: 0 } : { x: options.groupPadding, y: options.groupHeader };
    for (const node of members) {
      const placed = g.node(node.key);
      const size = sizes.get(node.key) ?? { width: options.nodeWidth, height: options.nodeHeight };
      const x = Math.round((placed?.x ?? 0) - size.width / 2);
      const y = Math.round((placed?.y ?? 0) - size.height / 2);
      boxes.set(node.key, { x: x + offset.x, y: y + offset.y, width: size.width, height: size.height });
      width = Math.max(width, x + size.width);
      height = Math.max(height, y + size.height);
    }
    return { width, height };
  };

  layoutLevel(null);
  return boxes;
}

/** The absolute centre of a node, adding up its ancestors' offsets. */
export function absoluteCenter(graph: PlanGraph, boxes: ReadonlyMap<string, Box>, key: string): { x: number; y: number } | null {
  const box = boxes.get(key);
  if (box === undefined) return null;
  let x = box.x + box.width / 2;
  let y = box.y + box.height / 2;
  let parent = graph.nodes.find((node) => node.key === key)?.parent ?? null;
  while (parent !== null) {
    const parentBox = boxes.get(parent);
    if (parentBox === undefined) break;
    x += parentBox.x;
    y += parentBox.y;
    const current: string = parent;
    parent = graph.nodes.find((node) => node.key === current)?.parent ?? null;
  }
  return { x, y };
}

/** The first node (in pre-order) with the plan node id `id`. */
export function nodeById(graph: PlanGraph, id: string): GraphNode | null {
  return graph.nodes.find((node) => node.id === id) ?? null;
}

// Colours per category, chosen to stay apart in hue and readable with dark text; categories
// the studio does not know take a stable colour from the rest of the palette.
const KNOWN_COLOURS: Record<string, string> = {
  input: '#2f7dd3',
  csv: '#2f7dd3',
  pdf: '#2f7dd3',
  docx: '#2f7dd3',
  file: '#2f7dd3',
  bank: '#2f7dd3',
  transforms: '#7a5cc7',
  matching: '#c2571a',
  ai: '#b0349b',
  control: '#b8860b',
  output: '#1f8a5b',
  excel: '#1f8a5b',
  report: '#1f8a5b',
  journal: '#1f8a5b',
  integration: '#5b6b7f',
  http: '#5b6b7f',
  notify: '#5b6b7f',
  evidence: '#5b6b7f',
  schedule: '#5b6b7f',
  ui: '#d1453b',
  loop: '#6b7280',
  subflow: '#0e7490',
};

const PALETTE = ['#3b82f6', '#a855f7', '#ea580c', '#db2777', '#ca8a04', '#16a34a', '#0891b2', '#64748b'];

/** A stable colour for a category. */
export function categoryColour(category: string): string {
  const known = KNOWN_COLOURS[category];
  if (known !== undefined) return known;
  let hash = 0;
  for (const ch of category) hash = (hash * 31 + (ch.codePointAt(0) ?? 0)) >>> 0;
  return PALETTE[hash % PALETTE.length] ?? '#64748b';
}

// ---- Where nodes are in the text (for the editor <-> graph selection) ----

const ITEM = /^(\s*)-(\s+|$)(.*)$/u;

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

function isBlank(line: string): boolean {
  const content = line.trim();
  return content === '' || content.startsWith('#');
}

function unquote(value: string): string {
  const v = value.trim();
  if (v.length >= 2 && ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'")))) {
    return v.slice(1, -1);
  }
  return v;
}

function idValue(text: string): string | null {
  const match = /^id:\s*(.*?)\s*(#.*)?$/u.exec(text.trim());
  if (match === null) return null;
  const value = unquote(match[1] ?? '');
  return value === '' ? null : value;
}

/** The id of the list item starting at `start` (`- id: x`, a later `id: x` key, or `- {id: x}`). */
function itemId(lines: readonly string[], start: number, itemIndent: number): string | null {
  const first = ITEM.exec(lines[start] ?? '');
  const rest = first?.[3] ?? '';
  const flow = /^\{.*\bid:\s*([^,}]+)/u.exec(rest.trim());
  if (flow !== null) return unquote(flow[1] ?? '') || null;
  const direct = idValue(rest);
  if (direct !== null) return direct;
  const keyIndent = itemIndent + 1 + (first?.[2]?.length ?? 1);
  for (let j = start + 1; j < lines.length; j += 1) {
    const line = lines[j] ?? '';
    if (isBlank(line)) continue;
    const indent = indentOf(line);
    if (indent <= itemIndent) break;
    if (indent === keyIndent) {
      const id = idValue(line);
      if (id !== null) return id;
    }
  }
  return null;
}

/** Whether the list item at `start` is an element of a `graph:` list. */
function underGraph(lines: readonly string[], start: number, itemIndent: number): boolean {
  for (let j = start - 1; j >= 0; j -= 1) {
    const line = lines[j] ?? '';
    if (isBlank(line)) continue;
    const indent = indentOf(line);
    if (indent < itemIndent || (indent === itemIndent && !ITEM.test(line))) {
      return /^\s*graph:\s*(#.*)?$/u.test(line);
    }
  }
  return false;
}

/**
 * The id of the plan node whose YAML holds 1-based `line` (the innermost one: a loop body
 * node rather than its loop), or null outside any node. Text-based, so it works while the
 * rest of the document does not parse.
 */
export function nodeIdAtLine(lines: readonly string[], line: number): string | null {
  if (line < 1 || line > lines.length) return null;
  let limit = Number.POSITIVE_INFINITY;
  for (let j = line - 1; j >= 0; j -= 1) {
    const text = lines[j] ?? '';
    if (isBlank(text)) continue;
    const indent = indentOf(text);
    const item = ITEM.exec(text);
    // The cursor's own line may start the item; above it, an enclosing item sits further left.
    const encloses = j === line - 1 ? indent <= limit : indent < limit;
    if (item !== null && encloses) {
      const id = underGraph(lines, j, indent) ? itemId(lines, j, indent) : null;
      if (id !== null) return id;
      limit = indent;
    } else if (item === null && indent < limit) {
      limit = indent;
    }
    if (limit === 0 && item === null) return null;
  }
  return null;
}

/** The 1-based line that names node `id` (`- id: x`, or its `id:` key), or null. */
export function nodeIdLine(lines: readonly string[], id: string): number | null {
  let fallback: number | null = null;
  for (let j = 0; j < lines.length; j += 1) {
    const text = lines[j] ?? '';
    const item = ITEM.exec(text);
    const key = item !== null ? idValue(item[3] ?? '') : idValue(text);
    if (key !== id) continue;
    if (nodeIdAtLine(lines, j + 1) !== id) continue;
    if (item !== null) return j + 1;
    fallback ??= j + 1;
  }
  return fallback;
}
