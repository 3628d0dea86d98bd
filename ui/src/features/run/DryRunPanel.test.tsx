import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { PatchRequest, PatchResponse, PlanDryRunResponse, WorkbookPreview } from '../../api/types';
import { DryRunPanel } from './DryRunPanel';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

type Handler = (body: unknown) => { status?: number; body: unknown };

/** Routes `POST /api/<fn>` to handlers and records the requests. */
function serve(handlers: Record<string, Handler>) {
  const calls: { fn: string; body: unknown }[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit) => {
      const fn = url.replace('/api/', '');
      const body = JSON.parse(String(init.body)) as unknown;
      calls.push({ fn, body });
      const handler = handlers[fn];
      if (handler === undefined) return new Response(JSON.stringify({ code: 'NOT_FOUND', message: fn }), { status: 404 });
      const answer = handler(body);
      return new Response(JSON.stringify(answer.body), { status: answer.status ?? 200 });
    }),
  );
  return calls;
}

const REQUEST: PatchRequest = {
  xlsx_path: 'book.xlsx',
  ops: [
    { op: 'set_value', sheet: '入力データ', cell: 'D2', value: '確認済' },
    { op: 'set_formula', sheet: '入力データ', cell: 'E3', formula: '=D3*2' },
    { op: 'set_value_if', sheet: '入力データ', cell: 'B2', expected: 1, value: 2 },
  ],
  out_dir: null,
  out_name: null,
  on_conflict: null,
  auto_formula: false,
  dry_run: false,
  return_inverse_ops: true,
  preflight_formula_check: true,
};

const PREVIEW_RESPONSE: PatchResponse = {
  out_path: '/ws/book_patched.xlsx',
  patch_diff: [
    { op: 'set_value', op_index: 0, sheet: '入力データ', cell: 'D2', before: { kind: 'value', value: '未確認' }, after: { kind: 'value', value: '確認済' }, status: 'applied' },
    { op: 'set_formula', op_index: 1, sheet: '入力データ', cell: 'E3', before: null, after: { kind: 'formula', value: '=D3*2' }, status: 'applied' },
    { op: 'set_value_if', op_index: 2, sheet: '入力データ', cell: 'B2', before: { kind: 'value', value: 5 }, after: { kind: 'value', value: 2 }, status: 'skipped' },
  ],
  warnings: ['a warning'],
  error: null,
  inverse_ops: [
    { op: 'set_value', sheet: '入力データ', cell: 'E3', value: null },
    { op: 'set_value', sheet: '入力データ', cell: 'D2', value: '未確認' },
  ],
  formula_issues: [{ sheet: '入力データ', cell: 'E3', level: 'warning', code: 'value_error', message: '#VALUE!' }],
};

function dryRun(workbook: WorkbookPreview | null): PlanDryRunResponse {
  return {
    plan_id: 'p',
    order: ['read', 'patch'],
    nodes: [
      { id: 'read', kind: 'block', block: 'csv.read', depends_on: [], inputs: { path: 'a.csv' }, outputs: { rows: [{}] }, when: null, children: [], workbook: null },
      { id: 'patch', kind: 'block', block: 'excel.patch_workbook', depends_on: ['read'], inputs: { xlsx_path: 'book.xlsx' }, outputs: {}, when: null, children: [], workbook },
    ],
    findings: [],
  };
}

const READY: WorkbookPreview = { status: 'ready', message: null, code: null, request: REQUEST, response: PREVIEW_RESPONSE, context: [] };

describe('DryRunPanel', () => {
  it('runs plan_dry_run and shows the order and resolved inputs', async () => {
    const calls = serve({ plan_dry_run: () => ({ body: dryRun(null) }) });
    render(<DryRunPanel lang="ja" yaml="id: p" />);
    expect(screen.getByTestId('dryrun-empty')).toBeTruthy();
    fireEvent.click(screen.getByTestId('dryrun-run'));
    await screen.findByTestId('dryrun-result');
    expect(calls).toEqual([{ fn: 'plan_dry_run', body: { yaml: 'id: p', lang: 'ja' } }]);
    expect(screen.getAllByTestId('dryrun-order-item').map((li) => li.dataset.nodeId)).toEqual(['read', 'patch']);
    const read = screen.getAllByTestId('dryrun-node')[0] as HTMLElement;
    expect(within(read).getByTestId('dryrun-inputs').textContent).toContain('"path": "a.csv"');
    expect(screen.queryByTestId('workbook-preview')).toBeNull();
  });

  it('draws the workbook diff as a grid with before → after, skipped ops and formula issues', async () => {
    serve({ plan_dry_run: () => ({ body: dryRun(READY) }) });
    render(<DryRunPanel lang="ja" yaml="id: p" />);
    fireEvent.click(screen.getByTestId('dryrun-run'));
    const sheet = await screen.findByTestId('workbook-sheet');
    expect(sheet.dataset.sheet).toBe('入力データ');
    const headers = within(sheet).getAllByRole('columnheader').map((th) => th.textContent);
    expect(headers).toEqual(['A', 'B', 'C', 'D', 'E', 'F']);
    const rows = within(sheet).getAllByRole('rowheader').map((th) => th.textContent);
    expect(rows).toEqual(['1', '2', '3', '4']);
    const cells = within(sheet).getAllByTestId('workbook-cell');
    expect(cells.map((c) => [c.dataset.cell, c.dataset.change])).toEqual([
      ['B2', 'skipped'],
      ['D2', 'changed'],
      ['E3', 'added'],
    ]);
    const d2 = cells[1] as HTMLElement;
    expect(d2.title).toBe('D2: 未確認 → 確認済');
    expect(within(d2).getByTestId('workbook-before').textContent).toBe('未確認');
    expect(within(d2).getByTestId('workbook-after').textContent).toBe('確認済');
    // A new formula has no value until Excel calculates it, and the cell says so.
    expect((cells[2] as HTMLElement).title).toBe('E3: （空） → 数式 =D3*2（Excel で開くと計算されます）');
    expect(within(cells[2] as HTMLElement).queryByTestId('workbook-computed')).toBeNull();
    expect(screen.getAllByTestId('workbook-skipped-op').map((li) => li.dataset.opIndex)).toEqual(['2']);
    const issue = screen.getByTestId('workbook-formula-issue');
    expect([issue.dataset.level, issue.dataset.code]).toEqual(['warning', 'value_error']);
    expect(screen.getByTestId('workbook-warnings').textContent).toContain('a warning');
  });

  it('shows what a new formula comes to beside it, as the report will show it', async () => {
    const computed: PatchResponse = {
      ...PREVIEW_RESPONSE,
      patch_diff: [
        { op: 'set_formula', op_index: 0, sheet: '集計', cell: 'B5', before: null, after: { kind: 'formula', value: '=INDEX(B2:B4,3)' }, status: 'applied', computed: 3200000 },
      ],
      formula_issues: [],
    };
    serve({ plan_dry_run: () => ({ body: dryRun({ ...READY, response: computed }) }) });
    render(<DryRunPanel lang="ja" yaml="id: p" />);
    fireEvent.click(screen.getByTestId('dryrun-run'));
    const cell = (await screen.findAllByTestId('workbook-cell'))[0] as HTMLElement;
    expect(within(cell).getByTestId('workbook-after').textContent).toBe('=INDEX(B2:B4,3)');
    expect(within(cell).getByTestId('workbook-computed').textContent).toBe('= 3,200,000');
    expect(cell.title).toBe('B5: （空） → 数式 =INDEX(B2:B4,3)（計算結果: 3,200,000）');
  });

  it('draws the header labels and neighbouring values around a change, formulas with their saved values', async () => {
    const withContext: WorkbookPreview = {
      ...READY,
      context: [
        {
          sheet: '入力データ',
          cells: [
            { cell: 'C1', value: '予定金額', formula: null },
            { cell: 'D1', value: '備考', formula: null },
            { cell: 'C2', value: 55000, formula: null },
            { cell: 'C3', value: 110000, formula: '=C2*2' },
            { cell: 'D2', value: '未確認', formula: null },
          ],
        },
      ],
    };
    serve({ plan_dry_run: () => ({ body: dryRun(withContext) }) });
    render(<DryRunPanel lang="ja" yaml="id: p" />);
    fireEvent.click(screen.getByTestId('dryrun-run'));
    const sheet = await screen.findByTestId('workbook-sheet');
    const cell = (a1: string) => sheet.querySelector(`[data-cell="${a1}"]`) as HTMLElement;
    expect(cell('C1').textContent).toBe('予定金額');
    expect(cell('D1').textContent).toBe('備考');
    expect(cell('C2').textContent).toBe('55000');
    expect(cell('C2').dataset.change).toBe('unchanged');
    // The formula shows its saved value, with the formula on hover.
    expect(within(cell('C3')).getByTestId('workbook-value').textContent).toBe('110000');
    expect(cell('C3').dataset.formula).toBe('=C2*2');
    expect(cell('C3').title).toBe('C3: 数式 =C2*2（保存されている値: 110000）');
    // A changed cell is drawn as a change, not as its neighbour reading.
    expect(cell('D2').dataset.change).toBe('changed');
  });

  it('applies only after a confirmation, then undoes with the inverse ops', async () => {
    const applied: PatchResponse = { ...PREVIEW_RESPONSE, out_path: '/ws/book_patched_1.xlsx' };
    const undone: PatchResponse = { ...PREVIEW_RESPONSE, inverse_ops: [], out_path: '/ws/book_patched_1.xlsx' };
    let patches = 0;
    const calls = serve({
      plan_dry_run: () => ({ body: dryRun(READY) }),
      workbook_patch: () => {
        patches += 1;
        return { body: patches === 1 ? applied : undone };
      },
    });
    render(<DryRunPanel lang="en" yaml="id: p" />);
    fireEvent.click(screen.getByTestId('dryrun-run'));
    fireEvent.click(await screen.findByTestId('workbook-apply'));
    // The file's name in the sentence; its full path on hover, not in the text.
    const confirm = screen.getByTestId('workbook-confirm');
    expect(confirm.textContent).toContain('Save to book_patched.xlsx?');
    expect(confirm.querySelector('p')?.title).toBe('/ws/book_patched.xlsx');
    fireEvent.click(screen.getByTestId('workbook-apply-cancel'));
    expect(calls.filter((c) => c.fn === 'workbook_patch')).toEqual([]);

    fireEvent.click(screen.getByTestId('workbook-apply'));
    fireEvent.click(screen.getByTestId('workbook-apply-confirm'));
    const done = await screen.findByTestId('workbook-applied');
    expect(done.dataset.path).toBe('/ws/book_patched_1.xlsx');
    expect(calls[1]).toEqual({ fn: 'workbook_patch', body: { ...REQUEST, dry_run: false, return_inverse_ops: true } });

    fireEvent.click(screen.getByTestId('workbook-undo'));
    await screen.findByTestId('workbook-undone');
    expect(calls[2]).toEqual({
      fn: 'workbook_patch',
      body: {
        xlsx_path: '/ws/book_patched_1.xlsx',
        ops: PREVIEW_RESPONSE.inverse_ops,
        out_name: 'book_patched_1.xlsx',
        on_conflict: 'overwrite',
        return_inverse_ops: true,
      },
    });
  });

  it('shows an op that cannot apply and refuses to apply', async () => {
    const failing: PatchResponse = {
      ...PREVIEW_RESPONSE,
      patch_diff: [],
      error: { op_index: 1, op: 'set_formula', sheet: '無い', cell: 'A1', message: 'sheet not found' },
    };
    serve({ plan_dry_run: () => ({ body: dryRun({ ...READY, response: failing }) }) });
    render(<DryRunPanel lang="en" yaml="id: p" />);
    fireEvent.click(screen.getByTestId('dryrun-run'));
    expect((await screen.findByTestId('workbook-op-error')).textContent).toContain('sheet not found');
    expect((screen.getByTestId('workbook-apply') as HTMLButtonElement).disabled).toBe(true);
  });

  it('reports an apply whose op failed without offering undo', async () => {
    serve({
      plan_dry_run: () => ({ body: dryRun(READY) }),
      workbook_patch: () => ({
        body: { ...PREVIEW_RESPONSE, error: { op_index: -1, op: 'set_formula', sheet: 'S', cell: 'E3', message: 'formula check failed' } },
      }),
    });
    render(<DryRunPanel lang="en" yaml="id: p" />);
    fireEvent.click(screen.getByTestId('dryrun-run'));
    fireEvent.click(await screen.findByTestId('workbook-apply'));
    fireEvent.click(screen.getByTestId('workbook-apply-confirm'));
    const error = await screen.findByTestId('workbook-apply-error');
    expect(error.textContent).toContain('formula check failed');
    expect(screen.queryByTestId('workbook-undo')).toBeNull();
  });

  it('shows why a workbook node has no preview', async () => {
    serve({
      plan_dry_run: () => ({
        body: dryRun({ status: 'unresolved', message: 'inputs depend on ${read.path}', code: null, request: null, response: null, context: [] }),
      }),
    });
    render(<DryRunPanel lang="en" yaml="id: p" />);
    fireEvent.click(screen.getByTestId('dryrun-run'));
    const preview = await screen.findByTestId('workbook-preview');
    expect(preview.dataset.status).toBe('unresolved');
    expect(preview.textContent).toContain('${read.path}');
    expect(screen.queryByTestId('workbook-apply')).toBeNull();
  });

  it('marks the result stale once the plan changes and blocks applying it', async () => {
    serve({ plan_dry_run: () => ({ body: dryRun(READY) }) });
    const { rerender } = render(<DryRunPanel lang="ja" yaml="id: p" />);
    fireEvent.click(screen.getByTestId('dryrun-run'));
    await screen.findByTestId('workbook-apply');
    rerender(<DryRunPanel lang="ja" yaml="id: q" />);
    expect(screen.getByTestId('dryrun-stale')).toBeTruthy();
    expect((screen.getByTestId('workbook-apply') as HTMLButtonElement).disabled).toBe(true);
  });

  it('shows a failed dry-run by code', async () => {
    serve({
      plan_dry_run: () => ({ status: 422, body: { code: 'PLAN_INVALID', message: 'x', details: { findings: [{}, {}] } } }),
    });
    render(<DryRunPanel lang="ja" yaml="id: p" />);
    fireEvent.click(screen.getByTestId('dryrun-run'));
    const error = await screen.findByTestId('dryrun-error');
    expect(error.dataset.code).toBe('PLAN_INVALID');
    expect(error.textContent).toContain('2 件');
    await waitFor(() => expect((screen.getByTestId('dryrun-run') as HTMLButtonElement).disabled).toBe(false));
  });
});
