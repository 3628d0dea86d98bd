import { describe, expect, it } from 'vitest';
import { ApiError } from '../../api';
import type { RunEvent } from '../../api/types';
import { applyRunEvent, failRun, finishRun, restoredRun, runFailureFindings, runStates, startRun, warningCount } from './sampleRun';

const events: RunEvent[] = [
  { event: 'run_start', run_id: '20261125T100000000Z-abc123', plan_id: 'dup', plan_sha256: '', plan_text: 'plan', started_at: '2026-11-25T10:00:00Z', resumed: false },
  { event: 'node_start', node: 'read', attempt: 1 },
  { event: 'node_finish', node: 'read', duration_ms: 12, rows: 8, outputs: {} },
  { event: 'node_start', node: 'dups', attempt: 1 },
  { event: 'node_error', node: 'dups', code: 'BLOCK_FAILED', message_ja: '列 金額 がありません', message_en: 'no column 金額', attempt: 1, retrying: true },
  { event: 'node_error', node: 'dups', code: 'COLUMN_NOT_FOUND', message_ja: '列 金額 がありません', message_en: 'no column 金額', hint_ja: '存在する列: 請求額, 取引先', hint_en: 'existing columns: 請求額, 取引先', attempt: 2, retrying: false },
  { event: 'node_skipped', node: 'report', reason: 'dependency failed' },
  { event: 'run_finish', status: 'failed', duration_ms: 40, failed: ['dups'] },
];

describe('sample run state', () => {
  it('starts with every node waiting', () => {
    const run = startRun('yaml', ['read', 'dups', 'report']);
    expect(run.status).toBe('running');
    expect(run.nodes.map((n) => [n.id, n.state])).toEqual([
      ['read', 'waiting'],
      ['dups', 'waiting'],
      ['report', 'waiting'],
    ]);
  });

  it('follows the events: done with duration and rows, a retry still running, then failed, skipped', () => {
    let run = startRun('yaml', ['read', 'dups', 'report']);
    const states: string[] = [];
    for (const event of events) {
      run = applyRunEvent(run, event);
      states.push(run.nodes.find((n) => n.id === 'dups')?.state ?? '');
    }
    // dups: waiting ×3, running, running after the retried error, failed, failed, failed.
    expect(states).toEqual(['waiting', 'waiting', 'waiting', 'running', 'running', 'failed', 'failed', 'failed']);
    expect(run.runId).toBe('20261125T100000000Z-abc123');
    expect(run.planId).toBe('dup');
    expect(run.status).toBe('failed');
    expect(run.durationMs).toBe(40);
    const read = run.nodes.find((n) => n.id === 'read');
    expect(read).toMatchObject({ state: 'done', durationMs: 12, rows: 8 });
    // The failure keeps the block's hint (here: the columns the rows do have).
    expect(run.nodes.find((n) => n.id === 'dups')).toMatchObject({
      code: 'COLUMN_NOT_FOUND',
      messageEn: 'no column 金額',
      hintJa: '存在する列: 請求額, 取引先',
      hintEn: 'existing columns: 請求額, 取引先',
    });
    expect([...runStates(run)]).toEqual([
      ['read', 'done'],
      ['dups', 'failed'],
      ['report', 'skipped'],
    ]);
  });

  it('keeps each warning at its top-level node, a loop body\'s named by its inner node, and counts them', () => {
    let run = startRun('yaml', ['read', 'months', 'check']);
    expect(warningCount(run)).toBe(0);
    const warned: RunEvent[] = [
      { event: 'node_start', node: 'read', attempt: 1 },
      { event: 'node_warning', node: 'read', code: 'NO_ROWS', message_ja: 'rows が 0 行です', message_en: 'rows has no rows' },
      { event: 'node_finish', node: 'read', duration_ms: 3, rows: 0, outputs: {} },
      { event: 'node_start', node: 'months', attempt: 1 },
      { event: 'node_warning', node: 'months/filter', code: 'NO_ROWS', message_ja: '4月が 0 行になりました', message_en: 'April came out empty' },
      { event: 'node_finish', node: 'months', duration_ms: 9, rows: 3, outputs: {} },
      { event: 'node_start', node: 'check', attempt: 1 },
      { event: 'node_finish', node: 'check', duration_ms: 2, rows: 0, outputs: {} },
      { event: 'run_finish', status: 'finished', duration_ms: 20, failed: [] },
    ];
    for (const event of warned) run = applyRunEvent(run, event);
    // A finished run still shows what to check.
    expect(run.status).toBe('finished');
    expect(warningCount(run)).toBe(2);
    expect(run.nodes.find((n) => n.id === 'read')?.warnings).toEqual([
      { node: 'read', code: 'NO_ROWS', messageJa: 'rows が 0 行です', messageEn: 'rows has no rows' },
    ]);
    expect(run.nodes.find((n) => n.id === 'months')?.warnings).toEqual([
      { node: 'months/filter', code: 'NO_ROWS', messageJa: '4月が 0 行になりました', messageEn: 'April came out empty' },
    ]);
    expect(run.nodes.find((n) => n.id === 'check')?.warnings).toEqual([]);
  });

  it('adds up an AI node\'s model calls as they happen, failures counted apart', () => {
    const call = {
      purpose: 'document a.pdf',
      provider: 'openai',
      model: 'gpt-4.1',
      strategy: 'json_schema',
      prompt_tokens: 900,
      completion_tokens: 100,
      total_tokens: 1000,
      requests: 1,
      duration_ms: 1200,
      error: null,
    };
    let run = startRun('yaml', ['extract']);
    expect(run.nodes[0]?.ai).toBeNull();
    run = applyRunEvent(run, { event: 'node_start', node: 'extract', attempt: 1 });
    run = applyRunEvent(run, { event: 'llm_call', node: 'extract', call });
    expect(run.nodes[0]).toMatchObject({ state: 'running', ai: { calls: 1, tokens: 1000, model: 'gpt-4.1', failed: 0 } });
    run = applyRunEvent(run, {
      event: 'llm_call',
      node: 'extract',
      call: { ...call, purpose: 'document b.pdf', total_tokens: 0, error: 'LLM_OUTPUT_INVALID', strategy: null },
    });
    expect(run.nodes[0]?.ai).toEqual({ calls: 2, tokens: 1000, model: 'gpt-4.1', failed: 1 });
  });

  it('keeps a long node\'s latest progress while it runs and drops it when it ends or starts again', () => {
    let run = startRun('yaml', ['dups']);
    run = applyRunEvent(run, { event: 'node_start', node: 'dups', attempt: 1 });
    expect(run.nodes[0]?.progress).toBeNull();
    run = applyRunEvent(run, { event: 'node_progress', node: 'dups', done: 50_000, total: 200_000, unit: 'rows' });
    run = applyRunEvent(run, { event: 'node_progress', node: 'dups', done: 150_000, total: 200_000, unit: 'rows' });
    expect(run.nodes[0]).toMatchObject({ state: 'running', progress: { done: 150_000, total: 200_000, unit: 'rows' } });
    // A retried attempt starts over.
    run = applyRunEvent(run, { event: 'node_start', node: 'dups', attempt: 2 });
    expect(run.nodes[0]?.progress).toBeNull();
    run = applyRunEvent(run, { event: 'node_progress', node: 'dups', done: 10, total: null, unit: 'rows' });
    run = applyRunEvent(run, { event: 'node_finish', node: 'dups', duration_ms: 52_000, rows: 3, outputs: {} });
    expect(run.nodes[0]).toMatchObject({ state: 'done', progress: null, rows: 3 });
  });

  it('keeps nested nodes out of the top-level list and adds nodes the text did not name', () => {
    let run = startRun('yaml', ['loop']);
    run = applyRunEvent(run, { event: 'node_start', node: 'loop/inner', attempt: 1 });
    expect(run.nodes.map((n) => n.id)).toEqual(['loop']);
    run = applyRunEvent(run, { event: 'node_reused', node: 'other' });
    expect(run.nodes.map((n) => [n.id, n.state])).toEqual([
      ['loop', 'waiting'],
      ['other', 'done'],
    ]);
  });

  it('takes the response and the errors', () => {
    const run = startRun('yaml', []);
    const done = finishRun(run, { run_id: 'r', plan_id: 'p', run_dir: 'runs/p/r', status: 'finished', failures: [], nodes: [], paused: [], warnings: [], files: [] });
    expect(done).toMatchObject({ status: 'finished', runDir: 'runs/p/r' });
    const refused = failRun(run, new ApiError('PLAN_INVALID', 'the plan has 2 error(s)', { findings: [{}, {}] }));
    expect(refused.status).toBe('error');
    expect(refused.error).toEqual({ code: 'PLAN_INVALID', message: 'the plan has 2 error(s)', findings: 2 });
  });

  it('pauses at a question and is restored from the run records', () => {
    let run = startRun('yaml', ['read', 'ok']);
    run = applyRunEvent(run, { event: 'node_paused', node: 'ok', question: { kind: 'confirmation' }, message_ja: '確認待ち', message_en: 'waiting' });
    expect(run.nodes.find((n) => n.id === 'ok')?.state).toBe('paused');
    const paused = [{ node: 'ok', question: { kind: 'confirmation', message: '送りますか' }, message: '確認待ち' }];
    const restored = restoredRun({
      run_id: 'R',
      plan_id: 'p',
      status: 'paused',
      started_at: '',
      nodes: [],
      failures: [],
      paused,
      warnings: [],
      events: [
        { event: 'run_start', run_id: 'R', plan_id: 'p', plan_sha256: '', plan_text: 'plan', started_at: '', resumed: false },
        { event: 'node_finish', node: 'read', duration_ms: 3, rows: 2, outputs: {} },
        { event: 'node_paused', node: 'ok', question: { kind: 'confirmation' }, message_ja: '確認待ち', message_en: 'waiting' },
        { event: 'run_finish', status: 'paused', duration_ms: 5, failed: [] },
      ],
    });
    expect(restored.status).toBe('paused');
    expect(restored.yaml).toBe('plan');
    expect(restored.runId).toBe('R');
    expect(restored.paused).toEqual(paused);
    expect([...runStates(restored)]).toEqual([
      ['read', 'done'],
      ['ok', 'paused'],
    ]);
  });

  it('turns failed nodes into findings on their YAML line, only for the text that ran', () => {
    const yaml = 'id: p\ngraph:\n  - id: read\n    block: csv.read\n  - {id: dups, block: matching.duplicate_invoices}\n';
    let run = startRun(yaml, ['read', 'dups']);
    run = applyRunEvent(run, { event: 'node_error', node: 'dups', code: 'BLOCK_FAILED', message_ja: '列 金額 がありません', message_en: 'no column 金額', attempt: 1, retrying: false });
    expect(runFailureFindings(run, yaml, 'ja')).toEqual([
      { code: 'BLOCK_FAILED', severity: 'error', node_id: 'dups', path: '', message: '列 金額 がありません', hint: null, line: 5, column: null },
    ]);
    expect(runFailureFindings(run, yaml, 'en')[0]?.message).toBe('no column 金額');
    expect(runFailureFindings(run, `${yaml}# edited\n`, 'ja')).toEqual([]);
  });
});
