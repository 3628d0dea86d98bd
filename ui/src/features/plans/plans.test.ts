// 登録済みのプラン: the rerun form's starting values and the run request it becomes.

import { describe, expect, it } from 'vitest';
import type { Requirement, RunSummary } from '../../api/types';
import { initialValues, rerunRequest } from './plans';

function input(name: string, type: Requirement['type'], extra: Partial<Requirement> = {}): Requirement {
  return {
    id: name,
    type,
    label: name,
    description: '',
    required: true,
    target: { var: name, node_id: 'n', input: 'x' },
    ...extra,
  };
}

function run(vars: Record<string, unknown>, id = '20261130T010000'): RunSummary {
  return { plan_id: 'p', run_id: id, status: 'finished', started_at: '2026-11-30T01:00:00Z', applied: [], answered: [], vars, files: [] };
}

const INPUTS = [input('invoices', 'file', { default: 'inputs/2月.csv' }), input('limit', 'number', { default: 500000 }), input('memo', 'text', { required: false })];

describe('initialValues', () => {
  it('starts from the last run that was given values, else the plan’s own', () => {
    // Newest first: the run refused before it started has no vars and is passed over.
    const runs = [run({}, 'b'), run({ invoices: 'inputs/3月.csv', limit: 300000 }, 'a')];
    expect(initialValues(INPUTS, runs)).toEqual({ invoices: 'inputs/3月.csv', limit: '300000', memo: '' });
    expect(initialValues(INPUTS, [])).toEqual({ invoices: 'inputs/2月.csv', limit: '500000', memo: '' });
  });
});

describe('rerunRequest', () => {
  it('sends files as inputs and the other values typed', () => {
    expect(rerunRequest(INPUTS, { invoices: ' inputs/4月.csv ', limit: '1,200,000', memo: '' })).toEqual({
      inputs: { invoices: 'inputs/4月.csv' },
      vars: { limit: 1200000 },
    });
  });

  it('names the first input it cannot send', () => {
    expect(rerunRequest(INPUTS, { invoices: '', limit: '1' })).toEqual({ var: 'invoices', kind: 'missing' });
    expect(rerunRequest(INPUTS, { invoices: 'a.csv', limit: '百万' })).toEqual({ var: 'limit', kind: 'not_a_number' });
    expect(rerunRequest([input('rows', 'table')], { rows: '[{' })).toEqual({ var: 'rows', kind: 'not_json' });
    expect(rerunRequest([input('rows', 'table')], { rows: '[{"a":1}]' })).toEqual({ inputs: {}, vars: { rows: [{ a: 1 }] } });
  });
});
