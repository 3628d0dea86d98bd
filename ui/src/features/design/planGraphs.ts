// Plan graphs as the server sends them with a validation (keiri-plan's `plan_graph`), written
// by hand for the views' tests: the UI no longer reads references itself, and keiri-plan's
// own tests check how the graph is built from the text.
import type { EdgeKind, GraphEdge, GraphNode, PlanGraph, VarUse } from '../../api/types';

/** A node at the top level, a block node unless `over` says otherwise. */
export function node(key: string, id: string, block: string | null, over: Partial<GraphNode> = {}): GraphNode {
  return { key, id, kind: 'block', block, parent: null, call_plan_id: null, when: null, ...over };
}

export function edge(source: string, target: string, aliases: string[], kind: EdgeKind = 'data'): GraphEdge {
  return { source, target, aliases, kind };
}

export function planGraph(nodes: GraphNode[], edges: GraphEdge[] = [], vars: VarUse[] = []): PlanGraph {
  return { nodes, edges, unresolved_vars: vars };
}

/** The graph of SAMPLE_PLAN (tests/fixtures/sample-plan.yaml). */
export const SAMPLE_GRAPH: PlanGraph = planGraph(
  [
    node('/graph/0', 'read_invoices', 'csv.read'),
    node('/graph/1', 'large_invoices', 'transforms.filter_rows'),
    node('/graph/2', 'save_large', 'csv.write'),
  ],
  [edge('/graph/0', '/graph/1', ['invoices']), edge('/graph/1', '/graph/2', ['large'])],
);
