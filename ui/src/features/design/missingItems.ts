// What a plan still lacks, for the missing-items panel: vars used with no value, the questions
// still open, the steps that need a person while the plan runs (ui.* blocks), and the
// validator's other findings. Each item carries the fix actions that apply to it. Pure
// functions over the server's graph of the plan (its nodes and unvalued vars, found with the
// validator's own reference parser), the findings and the requirements.

import type { FindingCode, PlanGraph as ApiPlanGraph, Requirement, ShownFinding } from '../../api/types';

export type MissingAction =
  | { kind: 'ask'; requirementId: string }
  | { kind: 'pin'; blockId: string }
  | { kind: 'open'; nodeId: string };

export type MissingItem =
  | {
      kind: 'var';
      key: string;
      name: string;
      /** Whether `vars` has the name (with an empty value) or lacks it. */
      defined: boolean;
      nodeIds: string[];
      actions: MissingAction[];
    }
  | { kind: 'question'; key: string; requirement: Requirement; actions: MissingAction[] }
  | { kind: 'ui-step'; key: string; nodeId: string; block: string; actions: MissingAction[] }
  | { kind: 'finding'; key: string; finding: ShownFinding; actions: MissingAction[] };

/** Block ids named in a text (`transforms.join`, `csv.read`): the candidates of a hint. */
export function blockIdsIn(text: string | null): string[] {
  if (text === null) return [];
  const ids = text.match(/\b[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+\b/gu) ?? [];
  return [...new Set(ids)];
}

function lastSegment(pointer: string): string {
  const parts = pointer.split('/');
  return (parts[parts.length - 1] ?? '').replace(/~1/gu, '/').replace(/~0/gu, '~');
}

/** The requirement that answers a finding: same node, and the same input when it names one. */
function requirementFor(finding: ShownFinding, requirements: readonly Requirement[]): Requirement | null {
  if (finding.node_id === null) return null;
  const input = lastSegment(finding.path);
  return (
    requirements.find(
      (r) => r.target.node_id === finding.node_id && (r.target.input == null || r.target.input === input),
    ) ?? null
  );
}

/** Findings shown as items: `ref.undefined_var` is already a var item. */
const COVERED_BY_VARS: ReadonlySet<string> = new Set<FindingCode>(['ref.undefined_var']);
/** Findings about a missing or unknown block: the fix is to pick one from the catalog. */
const BLOCK_CODES: ReadonlySet<string> = new Set<FindingCode>(['block.unknown', 'node.missing_block']);

/**
 * Everything the plan still lacks, in this order: vars without a value, open questions
 * (required first), steps that need a person, then the other findings (errors first).
 */
export function missingItems(
  graph: ApiPlanGraph | null | undefined,
  findings: readonly ShownFinding[],
  requirements: readonly Requirement[],
): MissingItem[] {
  const items: MissingItem[] = [];
  const asked = new Set<string>();

  for (const use of graph?.unresolved_vars ?? []) {
    const requirement = requirements.find((r) => r.target.var === use.name) ?? requirements.find((r) => r.id === use.name);
    const actions: MissingAction[] = [];
    if (requirement !== undefined) {
      actions.push({ kind: 'ask', requirementId: requirement.id });
      asked.add(requirement.id);
    }
    const first = use.node_ids[0];
    if (first !== undefined) actions.push({ kind: 'open', nodeId: first });
    items.push({ kind: 'var', key: `var:${use.name}`, name: use.name, defined: use.defined, nodeIds: use.node_ids, actions });
  }

  const questions = requirements
    .filter((r) => !asked.has(r.id))
    .sort((a, b) => Number(b.required) - Number(a.required));
  for (const requirement of questions) {
    const actions: MissingAction[] = [{ kind: 'ask', requirementId: requirement.id }];
    if (requirement.target.node_id != null) actions.push({ kind: 'open', nodeId: requirement.target.node_id });
    items.push({ kind: 'question', key: `question:${requirement.id}`, requirement, actions });
  }

  // The server's nodes are in pre-order, which is document order.
  for (const node of graph?.nodes ?? []) {
    if (node.block === null || !node.block.startsWith('ui.') || node.id === '') continue;
    items.push({
      kind: 'ui-step',
      key: `ui:${node.id}`,
      nodeId: node.id,
      block: node.block,
      actions: [
        { kind: 'open', nodeId: node.id },
        { kind: 'pin', blockId: node.block },
      ],
    });
  }

  const rest = findings
    .map((finding, index) => ({ finding, index }))
    .filter(({ finding }) => !COVERED_BY_VARS.has(finding.code))
    .sort((a, b) => Number(a.finding.severity === 'warning') - Number(b.finding.severity === 'warning') || a.index - b.index);
  for (const { finding, index } of rest) {
    const actions: MissingAction[] = [];
    const requirement = requirementFor(finding, requirements);
    if (requirement !== null) actions.push({ kind: 'ask', requirementId: requirement.id });
    if (BLOCK_CODES.has(finding.code)) {
      for (const blockId of blockIdsIn(finding.hint)) actions.push({ kind: 'pin', blockId });
    }
    if (finding.node_id !== null) actions.push({ kind: 'open', nodeId: finding.node_id });
    items.push({ kind: 'finding', key: `finding:${index}:${finding.code}:${finding.path}`, finding, actions });
  }
  return items;
}
