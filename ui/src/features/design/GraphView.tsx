// The plan as a graph (React Flow): nodes coloured by category, edges from references, loop
// bodies drawn inside their loop, each node's findings on it. The graph is the server's, sent
// with each validation; while the text is not a plan, the last good graph stays up with a notice.
// Choosing a node reports its id; the selected id is highlighted and centred. A node is named
// by its block's title from the catalog (Japanese first), with the block id under it and every
// name in full on hover: composed ids such as `invoice_duplicate_detection__read` are alike
// once cut to a node's width.

import {
  Background,
  Controls,
  Handle,
  MarkerType,
  Position,
  ReactFlow,
  ReactFlowProvider,
  useReactFlow,
  type Edge,
  type Node,
  type NodeProps,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { createElement, useEffect, useMemo, useRef, useState, type CSSProperties } from 'react';
import type { BlockSummary, Lang, PlanGraph as ApiPlanGraph, ShownFinding } from '../../api/types';
import {
  absoluteCenter,
  categoryColour,
  findingsByNode,
  layoutGraph,
  nodeById,
  viewGraph,
  type GraphNode,
  type NodeFindings,
  type PlanGraph,
} from './graph';
import { nodeTitle } from '../catalog/catalog';
import { categoryLabel, t, type MessageKey } from '../../shared/i18n';
import type { NodeRunState } from '../run/sampleRun';

interface Props {
  lang: Lang;
  /**
   * The server's graph of the plan (`plan_validate`'s `graph`): `null` when the text is not a
   * plan, `undefined` when no validation has answered (the last good graph, if any, stays up).
   */
  graph: ApiPlanGraph | null | undefined;
  /**
   * The validator's findings for the same text (matched to nodes by path, then node id); when
   * `graph` is null, its `yaml.parse` or `plan.shape` finding says where the text breaks.
   */
  findings: readonly ShownFinding[];
  selectedNodeId: string | null;
  onSelectNode(id: string): void;
  /** The catalog, when known: colours by catalog category instead of the id's prefix. */
  blocks?: readonly BlockSummary[];
  /** A sample run's state of each top-level node, by node id, while it matches this text. */
  runStates?: ReadonlyMap<string, NodeRunState>;
}

type PlanNodeData = {
  node: GraphNode;
  /** The block's title from the catalog, when it has one. */
  title: string | null;
  issues: NodeFindings | null;
  lang: Lang;
  selected: boolean;
  group: boolean;
  run: NodeRunState | null;
};

type PlanFlowNode = Node<PlanNodeData, 'plan'>;

function kindLabel(lang: Lang, node: GraphNode): string {
  if (node.kind === 'loop') return t(lang, 'graph.kind.loop');
  if (node.kind === 'subflow') return t(lang, 'graph.kind.subflow');
  if (node.kind === 'unknown') return t(lang, 'graph.kind.unknown');
  return categoryLabel(lang, node.category);
}

/** Every name of a node, one per line, for the hover text. */
function fullNames(lang: Lang, node: GraphNode, title: string | null): string {
  const lines = [title ?? (node.id !== '' ? node.id : t(lang, 'graph.noId'))];
  if (node.id !== '' && title !== null) lines.push(t(lang, 'graph.nodeId', { id: node.id }));
  if (node.block !== null) lines.push(t(lang, 'graph.blockId', { block: node.block }));
  if (node.kind === 'subflow') lines.push(t(lang, 'graph.calls', { plan: node.callPlanId ?? '?' }));
  if (node.when !== null) lines.push(t(lang, 'graph.when', { expr: node.when }));
  return lines.join('\n');
}

function PlanNodeView({ data }: NodeProps<PlanFlowNode>) {
  const { node, title, issues, lang, selected, group, run } = data;
  const colour = categoryColour(node.category);
  const classes = ['graph-node', group ? 'graph-node-group' : '', selected ? 'graph-node-selected' : ''];
  if (issues !== null) classes.push(issues.errors > 0 ? 'graph-node-error' : 'graph-node-warning');
  if (run !== null) classes.push(`graph-node-run-${run}`);
  const detail =
    node.kind === 'subflow'
      ? t(lang, 'graph.calls', { plan: node.callPlanId ?? '?' })
      : node.block ?? (node.kind === 'loop' ? null : t(lang, 'graph.noBlock'));
  return (
    <div
      className={classes.filter((c) => c !== '').join(' ')}
      style={{ '--node-colour': colour } as CSSProperties}
      data-testid={group ? 'graph-group' : 'graph-node'}
      data-node-id={node.id}
      data-node-key={node.key}
      data-category={node.category}
      data-kind={node.kind}
      data-errors={issues?.errors ?? 0}
      data-warnings={issues?.warnings ?? 0}
      data-selected={selected ? 'true' : 'false'}
      data-run-state={run ?? undefined}
      title={fullNames(lang, node, title)}
    >
      <Handle type="target" position={Position.Top} isConnectable={false} />
      <div className="graph-node-head">
        <span className="graph-node-category">{kindLabel(lang, node)}</span>
        {node.when !== null ? (
          <span className="graph-node-when" aria-label={t(lang, 'graph.when', { expr: node.when })}>
            ?
          </span>
        ) : null}
        {run !== null ? (
          <span className={`graph-node-run graph-node-run-badge-${run}`} data-testid="graph-node-run">
            {t(lang, `graph.run.${run}` as MessageKey)}
          </span>
        ) : null}
        {issues !== null ? (
          <span
            className={`graph-node-badge ${issues.errors > 0 ? 'graph-node-badge-error' : 'graph-node-badge-warning'}`}
            data-testid="graph-node-badge"
          >
            {issues.errors > 0
              ? t(lang, 'graph.errors', { count: issues.errors })
              : t(lang, 'graph.warnings', { count: issues.warnings })}
          </span>
        ) : null}
      </div>
      <div
        className={title !== null ? 'graph-node-title' : 'graph-node-id'}
        data-testid="graph-node-title"
        translate={title !== null ? undefined : 'no'}
      >
        {title ?? (node.id !== '' ? node.id : t(lang, 'graph.noId'))}
      </div>
      {detail !== null ? (
        <div className="graph-node-block" data-testid="graph-node-subtitle" translate="no">
          {detail}
        </div>
      ) : null}
      {issues !== null ? (
        <div className="graph-node-issue" data-testid="graph-node-issue" title={issues.first.message}>
          {issues.first.message}
        </div>
      ) : null}
      <Handle type="source" position={Position.Bottom} isConnectable={false} />
    </div>
  );
}

const NODE_TYPES = { plan: PlanNodeView };

function toFlow(
  graph: PlanGraph,
  findings: readonly ShownFinding[],
  catalog: ReadonlyMap<string, BlockSummary> | undefined,
  lang: Lang,
  selectedKey: string | null,
  runStates: ReadonlyMap<string, NodeRunState> | undefined,
): { nodes: PlanFlowNode[]; edges: Edge[]; boxes: ReturnType<typeof layoutGraph> } {
  const boxes = layoutGraph(graph);
  const issues = findingsByNode(graph, findings);
  const parents = new Set(graph.nodes.map((n) => n.parent).filter((p): p is string => p !== null));
  const nodes = graph.nodes.map((node): PlanFlowNode => {
    const box = boxes.get(node.key) ?? { x: 0, y: 0, width: 210, height: 72 };
    const group = parents.has(node.key);
    const selected = node.key === selectedKey;
    return {
      id: node.key,
      type: 'plan',
      position: { x: box.x, y: box.y },
      width: box.width,
      height: box.height,
      ...(node.parent !== null ? { parentId: node.parent, extent: 'parent' as const } : {}),
      data: {
        node,
        title: node.block !== null ? nodeTitle(catalog?.get(node.block), lang) : null,
        issues: issues.get(node.key) ?? null,
        lang,
        selected,
        group,
        run: node.parent === null ? (runStates?.get(node.id) ?? null) : null,
      },
      selected,
      draggable: false,
      connectable: false,
      // A group sits under its body nodes and edges.
      zIndex: group ? 0 : 1,
    };
  });
  const edges = graph.edges.map(
    (edge): Edge => ({
      id: edge.key,
      source: edge.source,
      target: edge.target,
      // The ports an edge carries are the plan's own names (like the block ids under the
      // nodes), not words to translate.
      // (`translate` is a global attribute SVG's React types do not list.)
      label: edge.label ? createElement('tspan', { translate: 'no' } as Record<string, string>, edge.label) : undefined,
      type: 'smoothstep',
      className: `graph-edge graph-edge-${edge.kind}`,
      markerEnd: { type: MarkerType.ArrowClosed },
      zIndex: 2,
      data: { kind: edge.kind },
    }),
  );
  return { nodes, edges, boxes };
}

/** The finding that says why the text is not a plan. */
function breakOf(findings: readonly ShownFinding[]): ShownFinding | null {
  return findings.find((f) => f.code === 'yaml.parse' || f.code === 'plan.shape') ?? null;
}

function GraphCanvas({ lang, graph: answer, findings, selectedNodeId, onSelectNode, blocks, runStates }: Props) {
  const catalog = useMemo(() => (blocks !== undefined ? new Map(blocks.map((b) => [b.id, b])) : undefined), [blocks]);
  const categories = useMemo(
    () => (blocks !== undefined ? new Map(blocks.map((b) => [b.id, b.category])) : undefined),
    [blocks],
  );
  // The last graph the server sent, kept while the text is not a plan (derived state, updated
  // while rendering as React recommends for values that follow a prop).
  const [lastGood, setLastGood] = useState<ApiPlanGraph | null>(answer ?? null);
  if (answer != null && answer !== lastGood) setLastGood(answer);
  const shown = answer ?? lastGood;
  const graph = useMemo(() => (shown !== null ? viewGraph(shown, categories) : null), [shown, categories]);
  const broken = answer === null;

  const selectedKey = graph !== null && selectedNodeId !== null ? (nodeById(graph, selectedNodeId)?.key ?? null) : null;
  const flow = useMemo(
    () => (graph !== null ? toFlow(graph, findings, catalog, lang, selectedKey, runStates) : null),
    [graph, findings, catalog, lang, selectedKey, runStates],
  );
  const instance = useReactFlow();

  // Centre the selected node when the selection changes (not on every edit of the text).
  const centred = useRef<string | null>(null);
  useEffect(() => {
    if (selectedKey === null || graph === null || flow === null) {
      centred.current = null;
      return;
    }
    if (centred.current === selectedKey) return;
    centred.current = selectedKey;
    const centre = absoluteCenter(graph, flow.boxes, selectedKey);
    if (centre !== null) void instance.setCenter(centre.x, centre.y, { zoom: Math.max(instance.getZoom(), 0.8), duration: 250 });
  }, [selectedKey, graph, flow, instance]);

  // Fit the whole graph again when its set of nodes changes (a node added or removed).
  const shape = graph?.nodes.map((n) => n.key).join('|') ?? '';
  const fitted = useRef(shape);
  useEffect(() => {
    if (fitted.current === shape) return;
    fitted.current = shape;
    if (selectedKey === null) void instance.fitView({ padding: 0.15, duration: 200 });
  }, [shape, selectedKey, instance]);

  const cause = broken ? breakOf(findings) : null;
  let notice: string | null = null;
  if (broken) {
    const where = cause?.line != null ? t(lang, 'graph.line', { line: cause.line }) : '';
    notice = graph !== null ? t(lang, 'graph.stale', { where }) : t(lang, 'graph.broken', { where });
  }

  return (
    <div className="graph-view" data-testid="graph-view" data-state={broken ? (graph !== null ? 'stale' : 'broken') : 'ok'}>
      {notice !== null ? (
        <div className="graph-notice" role="status" data-testid="graph-notice" title={cause?.message}>
          {notice}
        </div>
      ) : null}
      {graph !== null && graph.nodes.length === 0 ? (
        <div className="graph-empty" data-testid="graph-empty">
          {t(lang, 'graph.empty')}
        </div>
      ) : null}
      {flow !== null ? (
        <ReactFlow<PlanFlowNode>
          nodes={flow.nodes}
          edges={flow.edges}
          nodeTypes={NODE_TYPES}
          onNodeClick={(_, node) => {
            if (node.data.node.id !== '') onSelectNode(node.data.node.id);
          }}
          nodesDraggable={false}
          nodesConnectable={false}
          edgesFocusable={false}
          fitView
          fitViewOptions={{ padding: 0.15 }}
          minZoom={0.2}
          maxZoom={2}
          aria-label={t(lang, 'graph.label')}
        >
          <Background gap={20} size={1} />
          <Controls showInteractive={false} />
        </ReactFlow>
      ) : null}
    </div>
  );
}

export function GraphView(props: Props) {
  return (
    <ReactFlowProvider>
      <GraphCanvas {...props} />
    </ReactFlowProvider>
  );
}
