// 登録済みのプラン: the list, the picked plan's rerun form starting from the last run's files,
// a required input left empty stopping the run before it is sent, the earlier runs with the
// files each wrote, and 「設計で開く」.

import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PlansView } from './PlansView';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const YAML = 'id: monthly_dupes\nvars: {invoices: inputs/2月.csv}\ngraph:\n  - {id: read, block: csv.read, in: {path: "${vars.invoices}"}}\n';

function serve() {
  const calls: string[] = [];
  const answers: Record<string, unknown> = {
    '/api/plan_list': {
      plans: [
        { id: 'monthly_dupes', description: '請求書の重複チェック', version: null, file: 'designs/monthly_dupes_202611300900.yaml', nodes: 1, open_vars: [] },
        { id: 'payables', description: null, version: null, file: 'designs/payables.yaml', nodes: 3, open_vars: [] },
      ],
    },
    '/api/plan_get': {
      id: 'monthly_dupes',
      file: 'designs/monthly_dupes_202611300900.yaml',
      yaml: YAML,
      inputs: [
        {
          id: 'invoices',
          type: 'file',
          label: '請求書ファイル',
          description: '',
          required: true,
          accept: '.csv',
          default: 'inputs/2月.csv',
          target: { var: 'invoices', node_id: 'read', input: 'path' },
        },
      ],
    },
    '/api/run_list': {
      runs: [
        {
          plan_id: 'monthly_dupes',
          run_id: '20261130T010000',
          status: 'finished',
          started_at: '2026-11-30T01:00:00Z',
          applied: [],
          answered: [],
          vars: { invoices: 'inputs/3月.csv' },
          files: [{ node: 'write', path: 'runs/monthly_dupes/20261130T010000/files/write/exception_report.xlsx' }],
        },
      ],
    },
  };
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string) => {
      calls.push(url);
      return new Response(JSON.stringify(answers[url] ?? {}), { status: 200 });
    }),
  );
  return calls;
}

describe('PlansView', () => {
  it('lists the plans and opens the first with its last run’s file and written files', async () => {
    serve();
    const opened: string[] = [];
    render(<PlansView lang="ja" refresh={1} onOpenInEditor={(yaml) => opened.push(yaml)} />);
    const items = await screen.findAllByTestId('plans-item');
    expect(items.map((i) => i.getAttribute('data-plan-id'))).toEqual(['monthly_dupes', 'payables']);
    const detail = await screen.findByTestId('plan-detail');
    expect(within(detail).getByTestId('plan-file').textContent).toBe('designs/monthly_dupes_202611300900.yaml');
    const field = within(detail).getByTestId('rerun-input');
    expect(field.getAttribute('data-type')).toBe('file');
    // The last run's file, not the plan's own.
    expect((within(field).getByRole('textbox') as HTMLInputElement).value).toBe('inputs/3月.csv');
    expect(within(field).getByTestId('question-file-pick')).toBeTruthy();
    // Earlier runs are unfolded, with the files each wrote.
    await waitFor(() => expect(within(detail).getByTestId('run-history-file').textContent).toBe('exception_report.xlsx'));
    expect((within(detail).getByTestId('run-history') as HTMLDetailsElement).open).toBe(true);
    fireEvent.click(within(detail).getByTestId('plan-open-editor'));
    expect(opened).toEqual([YAML]);
  });

  it('says which input is missing and sends no run', async () => {
    const calls = serve();
    render(<PlansView lang="ja" refresh={1} onOpenInEditor={() => undefined} />);
    const field = await screen.findByTestId('rerun-input');
    fireEvent.change(within(field).getByRole('textbox'), { target: { value: '  ' } });
    fireEvent.click(screen.getByTestId('sample-run-start'));
    const problem = await screen.findByTestId('rerun-problem');
    expect(problem.getAttribute('data-var')).toBe('invoices');
    expect(problem.textContent).toBe('「請求書ファイル」を入れてください');
    expect(calls).not.toContain('/api/plan_run');
  });

  it('says so when nothing is registered yet', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => new Response(JSON.stringify({ plans: [] }), { status: 200 })));
    render(<PlansView lang="ja" refresh={1} onOpenInEditor={() => undefined} />);
    expect((await screen.findByTestId('plans-empty')).textContent).toMatch(/まだ登録したプランはありません/);
  });
});
