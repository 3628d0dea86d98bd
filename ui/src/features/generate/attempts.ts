// The difference between two generation attempts, node by node: which nodes were added or
// removed, and which `in`/`out` keys (and block, when) changed. The planner sends the same
// node-level diff to the model when it asks for a repair; this is the person's view of it.

// The generated name of a plan node, `Node`, would shadow the DOM's here.
import type { Node as PlanNode, Plan } from '../../api/types';

export type NodeChange =
  | { kind: 'added'; node: string; block: string }
  | { kind: 'removed'; node: string; block: string }
  | { kind: 'changed'; node: string; field: string; before: string; after: string };

function show(value: unknown): string {
  if (value === undefined) return '—';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function fields(node: PlanNode): Map<string, unknown> {
  const map = new Map<string, unknown>();
  if (node.block !== undefined) map.set('block', node.block);
  if (node.type !== undefined) map.set('type', node.type);
  for (const [key, value] of Object.entries(node.in ?? {})) map.set(`in.${key}`, value);
  for (const [key, value] of Object.entries(node.out ?? {})) map.set(`out.${key}`, value);
  for (const key of ['when', 'foreach', 'while', 'body', 'call']) {
    if (node[key] !== undefined) map.set(key, node[key]);
  }
  return map;
}

/** The node-level changes from `before` to `after` (both optional: a first attempt has none). */
export function planDiff(before: Plan | null, after: Plan): NodeChange[] {
  const old = new Map((before?.graph ?? []).map((node) => [node.id, node]));
  const now = new Map((after.graph ?? []).map((node) => [node.id, node]));
  const changes: NodeChange[] = [];
  for (const [id, node] of now) {
    const previous = old.get(id);
    if (previous === undefined) {
      changes.push({ kind: 'added', node: id, block: node.block ?? node.type ?? '' });
      continue;
    }
    const a = fields(previous);
    const b = fields(node);
    const keys = [...new Set([...a.keys(), ...b.keys()])];
    for (const key of keys) {
      const x = show(a.get(key));
      const y = show(b.get(key));
      if (x !== y) changes.push({ kind: 'changed', node: id, field: key, before: x, after: y });
    }
  }
  for (const [id, node] of old) {
    if (!now.has(id)) changes.push({ kind: 'removed', node: id, block: node.block ?? node.type ?? '' });
  }
  const vars = [...new Set([...Object.keys(before?.vars ?? {}), ...Object.keys(after.vars ?? {})])];
  for (const name of vars) {
    const x = show(before?.vars?.[name]);
    const y = show(after.vars?.[name]);
    if (x !== y) changes.push({ kind: 'changed', node: 'vars', field: name, before: x, after: y });
  }
  return changes;
}
