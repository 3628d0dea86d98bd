// What a plan still lacks, for the missing-items panel: `${vars.*}` references with no value,
// the questions still open, the steps that need a person while the plan runs (ui.* blocks),
// and the validator's other findings. Each item carries the fix actions that apply to it.
// Pure functions over the YAML text, the findings and the requirements.

import { parseDocument } from 'yaml';
import type { FindingCode, Requirement, ShownFinding } from './api/types';

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

/** The loop variable a `foreach` without `var`/`itemVar` gets (keiri-plan's DEFAULT_LOOP_VAR). */
const DEFAULT_LOOP_VAR = 'item';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The names of `${vars.name…}` references in `value`, in order, with duplicates. */
export function varReferences(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') {
    for (const match of value.matchAll(/\$\{\s*vars\.([^.}\s]+)[^}]*\}/gu)) {
      const name = match[1];
      if (name !== undefined) out.push(name);
    }
  } else if (Array.isArray(value)) {
    for (const item of value) varReferences(item, out);
  } else if (isRecord(value)) {
    for (const item of Object.values(value)) varReferences(item, out);
  }
  return out;
}

function hasValue(value: unknown): boolean {
  return value !== null && value !== undefined && !(typeof value === 'string' && value.trim() === '');
}

interface VarUse {
  name: string;
  defined: boolean;
  nodeIds: string[];
}

/**
 * The vars the plan's nodes use without a value: not defined in any enclosing `vars` (loop
 * variables count as defined inside their body), or defined as null / empty text. Unreadable
 * YAML gives none: the validator reports that.
 */
export function unresolvedVars(yamlText: string): VarUse[] {
  let plan: unknown;
  try {
    const doc = parseDocument(yamlText, { uniqueKeys: false });
    if (doc.errors.length > 0) return [];
    plan = doc.toJS({ maxAliasCount: 100 });
  } catch {
    return [];
  }
  if (!isRecord(plan)) return [];
  const uses = new Map<string, VarUse>();
  type Scope = { vars: Map<string, unknown>; parent: Scope | null };
  const find = (scope: Scope | null, name: string): { found: boolean; value: unknown } => {
    for (let s = scope; s !== null; s = s.parent) if (s.vars.has(name)) return { found: true, value: s.vars.get(name) };
    return { found: false, value: undefined };
  };
  const visit = (level: Record<string, unknown>, scope: Scope) => {
    const graph = Array.isArray(level.graph) ? level.graph : [];
    for (const raw of graph) {
      if (!isRecord(raw)) continue;
      const id = typeof raw.id === 'string' ? raw.id : '';
      const { body: _body, ...own } = raw;
      for (const name of varReferences(own)) {
        const { found, value } = find(scope, name);
        if (found && hasValue(value)) continue;
        const use = uses.get(name) ?? { name, defined: found, nodeIds: [] };
        if (id !== '' && !use.nodeIds.includes(id)) use.nodeIds.push(id);
        uses.set(name, use);
      }
      const body = isRecord(raw.body) && isRecord(raw.body.plan) ? raw.body.plan : null;
      if (body === null) continue;
      const inner = new Map<string, unknown>(isRecord(body.vars) ? Object.entries(body.vars) : []);
      // Loop variables have a value at run time, whatever the text says.
      if (isRecord(raw.foreach)) {
        const loopVar = raw.foreach.var ?? raw.foreach.itemVar;
        inner.set(typeof loopVar === 'string' ? loopVar : DEFAULT_LOOP_VAR, true);
        inner.set('index', true);
      }
      if (isRecord(raw.while)) inner.set('iteration', true);
      visit(body, { vars: inner, parent: scope });
    }
  };
  visit(plan, { vars: new Map(isRecord(plan.vars) ? Object.entries(plan.vars) : []), parent: null });
  return [...uses.values()];
}

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

/** Plan node ids and their blocks, in document order, for the ui.* step items. */
function uiSteps(yamlText: string): { id: string; block: string }[] {
  let plan: unknown;
  try {
    const doc = parseDocument(yamlText, { uniqueKeys: false });
    if (doc.errors.length > 0) return [];
    plan = doc.toJS({ maxAliasCount: 100 });
  } catch {
    return [];
  }
  const steps: { id: string; block: string }[] = [];
  const visit = (level: unknown) => {
    if (!isRecord(level) || !Array.isArray(level.graph)) return;
    for (const raw of level.graph) {
      if (!isRecord(raw)) continue;
      if (typeof raw.block === 'string' && raw.block.startsWith('ui.') && typeof raw.id === 'string') {
        steps.push({ id: raw.id, block: raw.block });
      }
      if (isRecord(raw.body)) visit(raw.body.plan);
    }
  };
  visit(plan);
  return steps;
}

/**
 * Everything the plan still lacks, in this order: vars without a value, open questions
 * (required first), steps that need a person, then the other findings (errors first).
 */
export function missingItems(
  yamlText: string,
  findings: readonly ShownFinding[],
  requirements: readonly Requirement[],
): MissingItem[] {
  const items: MissingItem[] = [];
  const asked = new Set<string>();

  for (const use of unresolvedVars(yamlText)) {
    const requirement = requirements.find((r) => r.target.var === use.name) ?? requirements.find((r) => r.id === use.name);
    const actions: MissingAction[] = [];
    if (requirement !== undefined) {
      actions.push({ kind: 'ask', requirementId: requirement.id });
      asked.add(requirement.id);
    }
    const first = use.nodeIds[0];
    if (first !== undefined) actions.push({ kind: 'open', nodeId: first });
    items.push({ kind: 'var', key: `var:${use.name}`, ...use, actions });
  }

  const questions = requirements
    .filter((r) => !asked.has(r.id))
    .sort((a, b) => Number(b.required) - Number(a.required));
  for (const requirement of questions) {
    const actions: MissingAction[] = [{ kind: 'ask', requirementId: requirement.id }];
    if (requirement.target.node_id != null) actions.push({ kind: 'open', nodeId: requirement.target.node_id });
    items.push({ kind: 'question', key: `question:${requirement.id}`, requirement, actions });
  }

  for (const step of uiSteps(yamlText)) {
    items.push({
      kind: 'ui-step',
      key: `ui:${step.id}`,
      nodeId: step.id,
      block: step.block,
      actions: [
        { kind: 'open', nodeId: step.id },
        { kind: 'pin', blockId: step.block },
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
