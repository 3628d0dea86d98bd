// The plan as a graph, for the graph view: nodes, the edges that `${node.alias}` references
// make, loop bodies as groups, findings per node and an automatic layout. Pure functions over
// the YAML text, tested without a DOM; the view only draws what these return.

import dagre from '@dagrejs/dagre';
import { parseDocument } from 'yaml';
import type { ShownFinding } from './api/types';

export type GraphNodeKind = 'block' | 'loop' | 'subflow' | 'unknown';

export interface GraphNode {
  /**
   * The node's JSON pointer in the plan (`/graph/2`, `/graph/2/body/plan/graph/0`): unique even
   * when a loop body reuses an id, and the prefix of the `path` of the node's findings.
   */
  key: string;
  /** The plan node id (`''` when the node has none). */
  id: string;
  kind: GraphNodeKind;
  block: string | null;
  /** The block's catalog category (or the id's prefix before the first dot), or the kind. */
  category: string;
  /** The key of the loop whose body holds this node. */
  parent: string | null;
  /** The called plan of a subflow node. */
  callPlanId: string | null;
  when: string | null;
}

export type EdgeKind = 'data' | 'when' | 'loop' | 'call';

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
  planId: string | null;
  /** Pre-order: a loop comes before its body nodes. */
  nodes: GraphNode[];
  edges: GraphEdge[];
}

export type ParseResult = { ok: true; graph: PlanGraph } | { ok: false; message: string; line: number | null };

/** A node reference: `${node.alias[.path]}` (vars, env and config are not nodes). */
export interface NodeReference {
  node: string;
  alias: string;
}

const NOT_NODES = new Set(['vars', 'env', 'config']);

/** Parses the inside of `${…}` the way keiri-plan does; null for non-node or malformed ones. */
export function parseNodeReference(raw: string): NodeReference | null {
  const text = raw.trim();
  const dot = text.indexOf('.');
  if (dot <= 0) return null;
  const head = text.slice(0, dot).trim();
  const rest = text.slice(dot + 1).trim();
  if (head === '' || rest === '' || NOT_NODES.has(head)) return null;
  const alias = (rest.split('.')[0] ?? '').trim();
  return alias === '' ? null : { node: head, alias };
}

/** Every node reference in `value`: whole strings, inside strings, nested in maps and lists. */
export function extractReferences(value: unknown, out: NodeReference[] = []): NodeReference[] {
  if (typeof value === 'string') {
    let rest = value;
    for (let start = rest.indexOf('${'); start >= 0; start = rest.indexOf('${')) {
      const after = rest.slice(start + 2);
      const end = after.indexOf('}');
      if (end < 0) break;
      const reference = parseNodeReference(after.slice(0, end));
      if (reference !== null) out.push(reference);
      rest = after.slice(end + 1);
    }
  } else if (Array.isArray(value)) {
    for (const item of value) extractReferences(item, out);
  } else if (isRecord(value)) {
    for (const item of Object.values(value)) extractReferences(item, out);
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return null;
}

function kindOf(node: Record<string, unknown>): GraphNodeKind {
  const type = node.type;
  if (type === undefined || type === null || type === 'block') return 'block';
  if (type === 'loop' || type === 'subflow') return type;
  return 'unknown';
}

function whenText(value: unknown): string | null {
  if (isRecord(value)) return text(value.expr);
  return text(value);
}

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

interface Scope {
  ids: Map<string, string>;
  parent: Scope | null;
}

function lookup(scope: Scope | null, id: string): string | null {
  for (let s = scope; s !== null; s = s.parent) {
    const key = s.ids.get(id);
    if (key !== undefined) return key;
  }
  return null;
}

/** Builds the graph of a parsed plan object (`toJS()` of the YAML). */
export function planGraph(plan: unknown, categories?: ReadonlyMap<string, string>): PlanGraph {
  const nodes: GraphNode[] = [];
  const edges = new Map<string, GraphEdge>();
  const addEdge = (source: string, target: string, alias: string, kind: EdgeKind) => {
    if (source === target) return;
    const key = `${source}->${target}`;
    const existing = edges.get(key);
    if (existing === undefined) {
      edges.set(key, { key, source, target, label: alias, kind });
      return;
    }
    if (alias !== '' && !existing.label.split(', ').includes(alias)) {
      existing.label = existing.label === '' ? alias : `${existing.label}, ${alias}`;
    }
    // Data flow is what a reader follows; a condition or loop source on the same pair is secondary.
    if (kind === 'data') existing.kind = 'data';
  };

  const level = (graph: unknown, base: string, parent: string | null, outer: Scope | null) => {
    if (!Array.isArray(graph)) return;
    const scope: Scope = { ids: new Map(), parent: outer };
    const entries: [Record<string, unknown>, GraphNode][] = [];
    graph.forEach((raw, index) => {
      if (!isRecord(raw)) return;
      const key = `${base}/graph/${index}`;
      const id = text(raw.id) ?? '';
      const kind = kindOf(raw);
      const block = text(raw.block);
      const call = isRecord(raw.call) ? raw.call : null;
      const node: GraphNode = {
        key,
        id,
        kind,
        block,
        category: block !== null ? blockCategory(block, categories) : kind,
        parent,
        callPlanId: call !== null ? text(call.plan_id) : null,
        when: whenText(raw.when),
      };
      // The first node with an id wins, as in the validator (a duplicate is its own finding).
      if (id !== '' && !scope.ids.has(id)) scope.ids.set(id, key);
      entries.push([raw, node]);
    });
    for (const [raw, node] of entries) {
      nodes.push(node);
      const connect = (value: unknown, kind: EdgeKind) => {
        for (const reference of extractReferences(value)) {
          const source = lookup(scope, reference.node);
          if (source !== null) addEdge(source, node.key, reference.alias, kind);
        }
      };
      connect(raw.in, 'data');
      connect(raw.when, 'when');
      if (isRecord(raw.foreach)) {
        connect(raw.foreach.input, 'loop');
        connect(raw.foreach.items, 'loop');
      }
      if (isRecord(raw.while)) connect(raw.while.condition, 'loop');
      if (isRecord(raw.call)) connect(raw.call.inputs, 'call');
      const body = isRecord(raw.body) && isRecord(raw.body.plan) ? raw.body.plan : null;
      if (body !== null) level(body.graph, `${node.key}/body/plan`, node.key, scope);
    }
  };

  const root = isRecord(plan) ? plan : {};
  level(root.graph, '', null, null);
  return { planId: text(root.id), nodes, edges: [...edges.values()] };
}

/**
 * Parses plan YAML into its graph. Broken YAML (a syntax error, or a document that is not a
 * mapping) is `ok: false` with the first error, so the caller can keep showing the last good
 * graph; a plan that parses but is invalid still draws what it can.
 */
export function parsePlanGraph(yamlText: string, categories?: ReadonlyMap<string, string>): ParseResult {
  let doc;
  try {
    doc = parseDocument(yamlText, { uniqueKeys: false });
  } catch (err) {
    return { ok: false, message: err instanceof Error ? err.message : String(err), line: null };
  }
  const error = doc.errors[0];
  if (error !== undefined) {
    const line = error.linePos?.[0]?.line ?? lineOf(yamlText, error.pos[0]);
    return { ok: false, message: error.message.split('\n')[0] ?? error.message, line };
  }
  let plan: unknown;
  try {
    plan = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    return { ok: false, message: err instanceof Error ? err.message : String(err), line: null };
  }
  if (plan !== null && plan !== undefined && !isRecord(plan)) {
    return { ok: false, message: 'the plan is not a mapping', line: 1 };
  }
  return { ok: true, graph: planGraph(plan, categories) };
}

function lineOf(textValue: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < textValue.length; i += 1) if (textValue[i] === '\n') line += 1;
  return line;
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
