import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RunOutputResponse } from '../../api/types';
import { SampleRunPanel } from './SampleRunPanel';
import { IDLE, applyRunEvent, finishRun, startRun, type SampleRun } from './sampleRun';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

function serve(answer: RunOutputResponse, failing: Record<string, { code: string; message: string }> = {}) {
  const calls: unknown[] = [];
  const answers: Record<string, unknown> = {
    '/api/run_output': answer,
    '/api/run_apply': { node: 'report', from: 'runs/p/R1/files/report/outputs/out.xlsx', to: 'outputs/out.xlsx', existed: true },
    '/api/run_undo_apply': { node: 'report', to: 'outputs/out.xlsx', restored: true },
  };
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit) => {
      calls.push({ url, body: JSON.parse(String(init.body)) as unknown });
      const failure = failing[url];
      if (failure !== undefined) return new Response(JSON.stringify(failure), { status: 409 });
      return new Response(JSON.stringify(answers[url] ?? answer), { status: 200 });
    }),
  );
  return calls;
}

function finished(): SampleRun {
  let run = startRun('plan', ['read', 'report']);
  run = applyRunEvent(run, { event: 'run_start', run_id: 'R1', plan_id: 'p', plan_sha256: '', plan_text: 'plan', started_at: '', resumed: false });
  run = applyRunEvent(run, { event: 'node_finish', node: 'read', duration_ms: 5, rows: 3, outputs: {} });
  run = applyRunEvent(run, { event: 'node_finish', node: 'report', duration_ms: 9, rows: null, outputs: {} });
  return finishRun(run, { run_id: 'R1', plan_id: 'p', run_dir: 'runs/p/R1', status: 'finished', failures: [], nodes: [], paused: [], warnings: [], files: [] });
}

const noop = () => undefined;

describe('SampleRunPanel', () => {
  it('counts up how long a running node has run and how far it has got, and stops when it is done', () => {
    vi.useFakeTimers();
    try {
      const start = Date.now();
      let run = startRun('plan', ['read', 'report']);
      run = applyRunEvent(run, { event: 'run_start', run_id: 'R1', plan_id: 'p', plan_sha256: '', plan_text: 'plan', started_at: '', resumed: false });
      run = applyRunEvent(run, { event: 'node_start', node: 'read', attempt: 1 }, start);
      const props = { lang: 'ja' as const, yaml: 'plan', canStart: true, onStart: noop, onCancel: noop, onAnswer: noop, planId: null, onOpenRun: noop, onOpenNode: noop };
      const { rerender } = render(<SampleRunPanel {...props} run={run} />);
      expect(screen.getByTestId('run-node-elapsed').textContent).toBe('0 秒経過');
      act(() => {
        vi.advanceTimersByTime(52_000);
      });
      expect(screen.getByTestId('run-node-elapsed').textContent).toBe('52 秒経過');
      expect(screen.queryByTestId('run-node-progress')).toBeNull();
      run = applyRunEvent(run, { event: 'node_progress', node: 'read', done: 120_000, total: 200_000, unit: 'rows' });
      rerender(<SampleRunPanel {...props} run={run} />);
      const progress = screen.getByTestId('run-node-progress');
      expect(progress.textContent).toBe('120,000 / 200,000 行（60%）');
      expect(progress.querySelector('progress')).toMatchObject({ max: 200_000, value: 120_000 });
      run = applyRunEvent(run, { event: 'node_progress', node: 'read', done: 12_345_678, total: 45_600_000, unit: 'bytes' });
      rerender(<SampleRunPanel {...props} run={run} lang="en" />);
      expect(screen.getByTestId('run-node-progress').textContent).toBe('12.3 / 45.6 MB (27%)');
      run = applyRunEvent(run, { event: 'node_progress', node: 'read', done: 1234, total: null, unit: 'files' });
      rerender(<SampleRunPanel {...props} run={run} />);
      expect(screen.getByTestId('run-node-progress').textContent).toBe('1,234 ファイル');
      run = applyRunEvent(run, { event: 'node_finish', node: 'read', duration_ms: 52_000, rows: 200_000, outputs: {} });
      rerender(<SampleRunPanel {...props} run={run} />);
      expect(screen.queryByTestId('run-node-elapsed')).toBeNull();
      expect(screen.queryByTestId('run-node-progress')).toBeNull();
    } finally {
      vi.useRealTimers();
    }
  });

  it('starts from idle and says the files stay untouched', () => {
    const start = vi.fn();
    render(<SampleRunPanel lang="ja" yaml="plan" run={IDLE} canStart onStart={start} onCancel={noop} onAnswer={noop} planId={null} onOpenRun={noop} onOpenNode={noop} />);
    expect(screen.getByTestId('sample-run-empty').textContent).toContain('元のファイルは変更されません');
    fireEvent.click(screen.getByTestId('sample-run-start'));
    expect(start).toHaveBeenCalledOnce();
  });

  it('lists the files the run wrote, and none before it answered', () => {
    const run = { ...finished(), files: [{ node: 'report', path: 'runs/p/R1/files/report/outputs/請求一覧.xlsx' }] };
    render(<SampleRunPanel lang="ja" yaml="plan" run={run} canStart onStart={noop} onCancel={noop} onAnswer={noop} planId={null} onOpenRun={noop} onOpenNode={noop} />);
    const files = screen.getByTestId('sample-run-files');
    expect(files.textContent).toContain('この実行が書いたファイル（1 件');
    const items = within(files).getAllByTestId('run-file');
    expect(items.map((i) => [i.getAttribute('data-node-id'), i.textContent])).toEqual([['report', 'runs/p/R1/files/report/outputs/請求一覧.xlsx (report)']]);
    cleanup();
    render(<SampleRunPanel lang="en" yaml="plan" run={finished()} canStart onStart={noop} onCancel={noop} onAnswer={noop} planId={null} onOpenRun={noop} onOpenNode={noop} />);
    expect(screen.queryByTestId('sample-run-files')).toBeNull();
  });

  it('shows an output’s headers and codes in words and its amounts with separators', async () => {
    serve({
      node: 'report',
      outputs: {
        duplicates: {
          kind: 'table',
          row_count: 2,
          truncated: false,
          columns: [
            { name: 'invoice_no', type: 'str' },
            { name: 'amount', type: 'f64' },
            { name: 'reason', type: 'str' },
          ],
          rows: [
            { invoice_no: 'INV-1', amount: 110000, reason: 'exact_duplicate' },
            { invoice_no: 'INV-1', amount: 110000, reason: 'exact_duplicate' },
          ],
          labels: {
            columns: { invoice_no: { ja: '請求書番号', en: 'Invoice no.' }, amount: { ja: '金額', en: 'Amount' }, reason: { ja: '理由', en: 'Reason' } },
            values: { reason: { exact_duplicate: { ja: '同じ請求書（完全一致）', en: 'Same invoice (exact)' } } },
            amounts: ['amount'],
          },
        },
      },
      apply_to: null,
      apply_replaces: false,
      applied: false,
      workbook: null,
    });
    render(<SampleRunPanel lang="ja" yaml="plan" run={finished()} canStart onStart={noop} onCancel={noop} onAnswer={noop} planId={null} onOpenRun={noop} onOpenNode={noop} />);
    fireEvent.click(within(screen.getAllByTestId('run-node')[1] as HTMLElement).getByRole('button'));
    const grid = await screen.findByTestId('run-output-grid');
    const headers = within(grid).getAllByRole('columnheader');
    expect(headers.map((h) => h.querySelector('.run-grid-name')?.textContent)).toEqual(['請求書番号', '金額', '理由']);
    // The column's own name stays on hover.
    expect(headers.map((h) => h.getAttribute('title'))).toEqual(['invoice_no', 'amount', 'reason']);
    const cells = within(screen.getAllByTestId('run-output-row')[0] as HTMLElement).getAllByRole('cell');
    expect(cells.map((c) => c.textContent)).toEqual(['INV-1', '110,000', '同じ請求書（完全一致）']);
  });

  it('shows each node state and, on a click, the output grid with column types and the written workbook', async () => {
    const calls = serve({
      node: 'report',
      outputs: {
        rows: {
          kind: 'table',
          row_count: 3,
          truncated: true,
          columns: [
            { name: '取引先', type: 'str' },
            { name: '金額', type: 'f64' },
          ],
          rows: [
            { 取引先: '山田商事', 金額: 10000 },
            { 取引先: 'ヤマダ商事', 金額: 5500 },
          ],
        },
        summary: { kind: 'json', value: { count: 3 } },
      },
      apply_to: 'outputs/out.xlsx',
      apply_replaces: true,
      applied: false,
      workbook: {
        before: 'outputs/out.xlsx',
        after: 'runs/p/R1/files/report/out.xlsx',
        truncated: false,
        patch_diff: [
          { op: 'add_sheet', op_index: 0, sheet: '請求', cell: null, before: null, after: { kind: 'sheet', value: '請求' }, status: 'applied' },
          { op: 'set_value', op_index: 0, sheet: '請求', cell: 'A1', before: null, after: { kind: 'value', value: '取引先' }, status: 'applied' },
        ],
        context: [],
      },
    });
    render(<SampleRunPanel lang="ja" yaml="plan" run={finished()} canStart onStart={noop} onCancel={noop} onAnswer={noop} planId={null} onOpenRun={noop} onOpenNode={noop} />);
    const nodes = screen.getAllByTestId('run-node');
    expect(nodes.map((n) => [n.dataset.nodeId, n.dataset.state])).toEqual([
      ['read', 'done'],
      ['report', 'done'],
    ]);
    // Where the run wrote is said in words; the folder itself is on hover.
    const status = screen.getByTestId('sample-run-status');
    expect(status.textContent).toContain('書き出しはすべてこの実行のフォルダーに保存されます');
    expect(status.querySelector('.run-dir')?.getAttribute('title')).toContain('runs/p/R1');
    fireEvent.click(within(nodes[1] as HTMLElement).getByRole('button'));
    const grid = await screen.findByTestId('run-output-grid');
    expect(calls[0]).toMatchObject({ url: '/api/run_output', body: { plan_id: 'p', run_id: 'R1', node: 'report' } });
    expect(within(grid).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['取引先文字列', '金額数値']);
    expect(screen.getAllByTestId('run-output-row')).toHaveLength(2);
    expect(screen.getByTestId('run-output-table').textContent).toContain('全 3 行（先頭 2 行を表示）');
    expect(screen.getByTestId('run-output-json').textContent).toContain('"count": 3');
    const workbook = screen.getByTestId('run-workbook');
    expect(workbook.dataset.path).toBe('runs/p/R1/files/report/out.xlsx');
    await waitFor(() => expect(within(workbook).getByTestId('workbook-sheet').dataset.sheet).toBe('請求'));
    expect(within(workbook).getByTestId('workbook-cell').dataset.cell).toBe('A1');
    expect(workbook.textContent).toContain('outputs/out.xlsx の現在の内容との差分です');
    // 「この結果で書き込む」 asks first, then writes; undo puts the old workbook back.
    fireEvent.click(screen.getByTestId('run-apply-start'));
    // The file is there: the confirmation says it is replaced, and that undo restores it.
    expect(screen.getByTestId('run-apply-confirm').textContent).toContain('outputs/out.xlsx を置き換えます。今のファイルは保存され、「元に戻す」で戻せます');
    fireEvent.click(screen.getByTestId('run-apply-yes'));
    await screen.findByTestId('run-applied');
    expect(calls[1]).toMatchObject({ url: '/api/run_apply', body: { plan_id: 'p', run_id: 'R1', node: 'report' } });
    fireEvent.click(screen.getByTestId('run-undo-apply'));
    await screen.findByTestId('run-apply-start');
    expect(calls[2]).toMatchObject({ url: '/api/run_undo_apply', body: { plan_id: 'p', run_id: 'R1', node: 'report' } });
  });

  it('says a new file is created, and when the write is refused that the file may be open in Excel, with a retry', async () => {
    const output: RunOutputResponse = {
      node: 'report',
      outputs: {},
      apply_to: 'outputs/new.xlsx',
      apply_replaces: false,
      applied: false,
      workbook: null,
    };
    serve(output, { '/api/run_apply': { code: 'FILE_LOCKED', message: 'writing outputs/new.xlsx: permission denied' } });
    render(<SampleRunPanel lang="ja" yaml="plan" run={finished()} canStart onStart={noop} onCancel={noop} onAnswer={noop} planId={null} onOpenRun={noop} onOpenNode={noop} />);
    fireEvent.click(within(screen.getAllByTestId('run-node')[1] as HTMLElement).getByRole('button'));
    fireEvent.click(await screen.findByTestId('run-apply-start'));
    expect(screen.getByTestId('run-apply-confirm-text').textContent).toBe('outputs/new.xlsx を新しく作ります。「元に戻す」で削除できます。書き込みますか？');
    fireEvent.click(screen.getByTestId('run-apply-yes'));
    const error = await screen.findByTestId('run-apply-error');
    expect(error.dataset.code).toBe('FILE_LOCKED');
    expect(error.textContent).toContain('Excel などで開かれている可能性があります。閉じてからもう一度お試しください');
    // Trying again is one click away.
    expect(screen.getByTestId('run-apply-start')).toBeTruthy();
  });

  it('marks a failed node with its code and message and a stale result', () => {
    let run = startRun('old plan', ['dups']);
    run = applyRunEvent(run, { event: 'run_start', run_id: 'R2', plan_id: 'p', plan_sha256: '', plan_text: 'plan', started_at: '', resumed: false });
    run = applyRunEvent(run, { event: 'node_error', node: 'dups', code: 'BLOCK_FAILED', message_ja: '列 金額 がありません', message_en: 'no column', attempt: 1, retrying: false });
    run = applyRunEvent(run, { event: 'run_finish', status: 'failed', duration_ms: 1500, failed: ['dups'] });
    const open = vi.fn();
    render(<SampleRunPanel lang="ja" yaml="new plan" run={run} canStart onStart={noop} onCancel={noop} onAnswer={noop} planId={null} onOpenRun={noop} onOpenNode={open} />);
    const error = screen.getByTestId('run-node-error');
    expect(error.dataset.code).toBe('BLOCK_FAILED');
    expect(error.textContent).toContain('列 金額 がありません');
    fireEvent.click(within(error).getByRole('button'));
    expect(open).toHaveBeenCalledWith('dups');
    expect(screen.getByTestId('sample-run-stale')).toBeTruthy();
    expect(screen.getByTestId('sample-run-status').textContent).toContain('1.5 秒');
  });

  it('shows a finished run\'s warnings under their nodes and counts them in the status', () => {
    let run = startRun('plan', ['read', 'check']);
    run = applyRunEvent(run, { event: 'run_start', run_id: 'R4', plan_id: 'p', plan_sha256: '', plan_text: 'plan', started_at: '', resumed: false });
    run = applyRunEvent(run, { event: 'node_finish', node: 'read', duration_ms: 5, rows: 10, outputs: {} });
    run = applyRunEvent(run, {
      event: 'node_warning',
      node: 'check',
      code: 'MOSTLY_FLAGGED',
      message_ja: '10 行中 9 行（90%）がチェック zero_amount の問題になりました。列の指定や条件を確認してください',
      message_en: '9 of 10 rows (90%) came out as issues of the zero_amount check: check the columns and conditions',
    });
    run = applyRunEvent(run, { event: 'node_finish', node: 'check', duration_ms: 2, rows: 9, outputs: {} });
    run = applyRunEvent(run, { event: 'run_finish', status: 'finished', duration_ms: 700, failed: [] });
    const { rerender } = render(<SampleRunPanel lang="ja" yaml="plan" run={run} canStart onStart={noop} onCancel={noop} onAnswer={noop} planId={null} onOpenRun={noop} onOpenNode={noop} />);
    expect(screen.getByTestId('sample-run-status').textContent).toContain('確認が必要な警告が 1 件あります');
    const warning = screen.getByTestId('run-node-warning');
    expect(warning.dataset.code).toBe('MOSTLY_FLAGGED');
    expect(warning.textContent).toContain('10 行中 9 行（90%）がチェック zero_amount の問題になりました');
    expect(warning.closest('[data-node-id]')?.getAttribute('data-node-id')).toBe('check');
    expect(screen.getByTestId('sample-run-status').textContent).not.toContain('続行した失敗');
    rerender(<SampleRunPanel lang="en" yaml="plan" run={run} canStart onStart={noop} onCancel={noop} onAnswer={noop} planId={null} onOpenRun={noop} onOpenNode={noop} />);
    expect(screen.getByTestId('sample-run-status').textContent).toContain('1 warning(s) to check');
    expect(screen.getByTestId('run-node-warning').textContent).toContain('9 of 10 rows (90%)');
  });

  it('says a finished run went past failures when on_error: continue let one through', () => {
    let run = startRun('plan', ['slow', 'report']);
    run = applyRunEvent(run, { event: 'run_start', run_id: 'R5', plan_id: 'p', plan_sha256: '', plan_text: 'plan', started_at: '', resumed: false });
    run = applyRunEvent(run, { event: 'node_error', node: 'slow', code: 'TIMEOUT', message_ja: 'ノード slow: 50 ms 以内に終わりませんでした', message_en: 'node slow: did not finish within 50 ms', attempt: 1, retrying: false });
    run = applyRunEvent(run, { event: 'node_finish', node: 'report', duration_ms: 9, rows: 2, outputs: {} });
    run = applyRunEvent(run, { event: 'run_finish', status: 'finished', duration_ms: 2000, failed: ['slow'] });
    render(<SampleRunPanel lang="ja" yaml="plan" run={run} canStart onStart={noop} onCancel={noop} onAnswer={noop} planId={null} onOpenRun={noop} onOpenNode={noop} />);
    expect(screen.getByTestId('sample-run-status').textContent).toContain('完了しました（2.0 秒）。ただし on_error: continue で続行した失敗があります');
    expect(screen.getByTestId('run-node-error').dataset.code).toBe('TIMEOUT');
  });

  it('shows an AI node\'s calls, tokens and model, and LLM_NOT_CONFIGURED as its error', () => {
    let run = startRun('plan', ['extract', 'explain']);
    run = applyRunEvent(run, { event: 'run_start', run_id: 'R3', plan_id: 'p', plan_sha256: '', plan_text: 'plan', started_at: '', resumed: false });
    const call = { purpose: 'document a.pdf', provider: 'openai', model: 'gpt-4.1', strategy: 'json_schema', prompt_tokens: 1000, completion_tokens: 234, total_tokens: 1234, requests: 1, duration_ms: 800, error: null };
    run = applyRunEvent(run, { event: 'llm_call', node: 'extract', call });
    run = applyRunEvent(run, { event: 'llm_call', node: 'extract', call: { ...call, total_tokens: 0, error: 'LLM_OUTPUT_INVALID' } });
    run = applyRunEvent(run, { event: 'node_finish', node: 'extract', duration_ms: 900, rows: 1, outputs: {} });
    run = applyRunEvent(run, { event: 'node_error', node: 'explain', code: 'LLM_NOT_CONFIGURED', message_ja: 'AIモデルが設定されていません', message_en: 'no AI model is configured', attempt: 1, retrying: false });
    render(<SampleRunPanel lang="ja" yaml="plan" run={run} canStart onStart={noop} onCancel={noop} onAnswer={noop} planId={null} onOpenRun={noop} onOpenNode={noop} />);
    const ai = screen.getByTestId('run-node-ai');
    expect(ai.textContent).toBe('AI 2 回 · 1,234 トークン · gpt-4.1 · 失敗 1');
    expect(screen.getByTestId('run-node-error').dataset.code).toBe('LLM_NOT_CONFIGURED');
  });

  it("lists the plan's earlier runs and opens one", async () => {
    const calls: unknown[] = [];
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string, init: RequestInit) => {
        calls.push({ url, body: JSON.parse(String(init.body)) as unknown });
        return new Response(
          JSON.stringify({
            runs: [
              { plan_id: 'p', run_id: 'R2', status: 'paused', started_at: '2026-11-25T10:05:00Z', duration_ms: 900, applied: [], answered: [], vars: {}, files: [] },
              {
                plan_id: 'p',
                run_id: 'R1',
                status: 'finished',
                started_at: '2026-11-25T10:00:00Z',
                duration_ms: 2345,
                applied: [{ node: 'report', to: 'outputs/請求一覧.xlsx', by: 'sato', at: '2026-11-25T10:01:00Z' }],
                answered: [{ node: 'approve', by: 'suzuki', at: '2026-11-25T10:00:30Z' }],
                vars: { invoices: 'inputs/請求書.csv' },
                files: [{ node: 'report', path: 'runs/p/R1/files/report/outputs/請求一覧.xlsx' }],
              },
            ],
          }),
          { status: 200 },
        );
      }),
    );
    const openRun = vi.fn();
    render(<SampleRunPanel lang="ja" yaml="plan" run={IDLE} canStart onStart={noop} onCancel={noop} onAnswer={noop} planId="p" onOpenRun={openRun} onOpenNode={noop} />);
    const items = await screen.findAllByTestId('run-history-item');
    expect(calls[0]).toMatchObject({ url: '/api/run_list', body: { plan_id: 'p' } });
    expect(items.map((i) => [i.dataset.runId, i.dataset.status])).toEqual([
      ['R2', 'paused'],
      ['R1', 'finished'],
    ]);
    expect(screen.getByTestId('run-history').textContent).toContain('過去の実行（2 件）');
    expect(items[1]?.textContent).toContain('2.3 秒');
    // Who wrote what from the run into the workspace.
    const writes = within(items[1] as HTMLElement).getByTestId('run-history-writes');
    expect(writes.textContent).toContain('書き込み: outputs/請求一覧.xlsx（sato、');
    expect(within(items[0] as HTMLElement).queryByTestId('run-history-writes')).toBeNull();
    // Who answered the run's questions (an approval here), and when.
    expect(within(items[1] as HTMLElement).getByTestId('run-history-answers').textContent).toContain('回答: approve（suzuki、');
    expect(within(items[0] as HTMLElement).queryByTestId('run-history-answers')).toBeNull();
    // The files each run wrote in its run folder, by name (the full path on hover).
    const file = within(items[1] as HTMLElement).getByTestId('run-history-file');
    expect(file.textContent).toBe('請求一覧.xlsx');
    expect(file.getAttribute('title')).toBe('runs/p/R1/files/report/outputs/請求一覧.xlsx');
    expect(within(items[0] as HTMLElement).queryByTestId('run-history-files')).toBeNull();
    fireEvent.click(within(items[1] as HTMLElement).getByRole('button'));
    expect(openRun).toHaveBeenCalledWith('p', 'R1');
  });
});
