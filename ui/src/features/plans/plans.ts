// 登録済みのプラン: what a rerun of a registered plan is given. Each of the plan's inputs
// (`plan_get`'s `inputs`, one per var its nodes read) starts from the value the plan's last run
// used, else the plan's own; the form's text becomes the run's `inputs` (files, checked to
// exist by the server) and `vars` (the other values, typed as the question says).

import type { Requirement, RunSummary } from '../../api/types';

/** The text each input's field starts with, by var name. */
export function initialValues(inputs: readonly Requirement[], runs: readonly RunSummary[]): Record<string, string> {
  // The newest run that got past its start: a run refused for a missing file has no vars.
  const last = runs.find((r) => Object.keys(r.vars ?? {}).length > 0);
  const out: Record<string, string> = {};
  for (const input of inputs) {
    const name = input.target.var;
    if (name == null) continue;
    const used = last?.vars?.[name];
    const value = used !== undefined && used !== null ? used : input.default;
    out[name] = value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  }
  return out;
}

export type RerunProblem = { var: string; kind: 'missing' | 'not_a_number' | 'not_json' };

/**
 * The run request's `inputs` and `vars` from the form, or the first problem: a required input
 * left empty, a number that does not read as one, a table or object that is not JSON. An
 * optional input left empty is not sent (the plan's own value stands).
 */
export function rerunRequest(
  inputs: readonly Requirement[],
  values: Readonly<Record<string, string>>,
): { inputs: Record<string, string>; vars: Record<string, unknown> } | RerunProblem {
  const files: Record<string, string> = {};
  const vars: Record<string, unknown> = {};
  for (const input of inputs) {
    const name = input.target.var;
    if (name == null) continue;
    const text = (values[name] ?? '').trim();
    if (text === '') {
      if (input.required) return { var: name, kind: 'missing' };
      continue;
    }
    if (input.type === 'file') {
      files[name] = text;
    } else if (input.type === 'number' || input.value_type === 'number' || input.value_type === 'integer') {
      const n = Number(text.replace(/[,，¥￥\s]/g, ''));
      if (!Number.isFinite(n)) return { var: name, kind: 'not_a_number' };
      vars[name] = n;
    } else if (input.type === 'boolean') {
      vars[name] = text === 'true';
    } else if (input.type === 'table' || input.value_type === 'object' || input.value_type === 'array') {
      try {
        vars[name] = JSON.parse(text);
      } catch {
        return { var: name, kind: 'not_json' };
      }
    } else {
      vars[name] = text;
    }
  }
  return { inputs: files, vars };
}
