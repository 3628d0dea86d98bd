// 試行実行 (sample run): the plan runs for real on the workspace's files through `plan_run`;
// its events drive each node's state (waiting → running → done / failed / skipped) with its
// duration and row count. Every file the run writes stays in its run directory, so nothing
// the person owns changes. The state machine is pure (`applyRunEvent`) and tested on its own.

import { useCallback, useRef, useState } from 'react';
import { ApiError, planRun, runCancel, runGet, runList, runResume } from '../../api';
import type { PlanRunResponse, ProgressUnit, RunEvent, RunFile, RunGetResponse, RunPaused, ShownFinding } from '../../api/types';

export type NodeRunState = 'waiting' | 'running' | 'done' | 'failed' | 'skipped' | 'paused';

export interface NodeRun {
  id: string;
  state: NodeRunState;
  durationMs: number | null;
  rows: number | null;
  /** When the node started running (ms since the epoch, this window's clock), to show how long a long node has run. */
  startedAt: number | null;
  /** A failed node's code and messages (both languages, as the run recorded them). */
  code: string | null;
  messageJa: string | null;
  messageEn: string | null;
  /** What to do about a failure, when the block said (the sheets a workbook has, the columns the rows have). */
  hintJa: string | null;
  hintEn: string | null;
  /**
   * How far a long node has got (`node_progress`: rows read, deposits matched, bytes of the
   * file), its latest report; none for a node that ended within a second.
   */
  progress: { done: number; total: number | null; unit: ProgressUnit } | null;
  /** The node's model calls so far (`ai.*` blocks): how many, tokens, the model, failures. */
  ai: { calls: number; tokens: number; model: string; failed: number } | null;
  /**
   * What the person must see about the node's result though it ran (a file with no data rows,
   * a check that flagged nearly every row, rows left out); those of nodes inside a loop or
   * subflow (`parent/child`) are the top-level node's, named by their inner node.
   */
  warnings: NodeWarning[];
}

export interface NodeWarning {
  /** The node that gave it (`parent/child` inside a loop or subflow). */
  node: string;
  code: string;
  messageJa: string;
  messageEn: string;
}

export type SampleRunStatus = 'idle' | 'running' | 'finished' | 'failed' | 'cancelled' | 'paused' | 'error';

export interface SampleRun {
  status: SampleRunStatus;
  runId: string | null;
  planId: string | null;
  runDir: string | null;
  /** Top-level nodes in plan order; nodes the events name that the plan text did not are appended. */
  nodes: NodeRun[];
  /** The text that was run (a later edit makes the result stale). */
  yaml: string;
  /** Why the run could not start or ended in error (`PLAN_INVALID`, a transport error, …). */
  error: { code: string; message: string; findings: number | null } | null;
  durationMs: number | null;
  /** The nodes waiting for a person's answer, with their questions. */
  paused: RunPaused[];
  /** Every file the run wrote (from `plan_run`'s answer; none for a run read back from its records). */
  files: RunFile[];
}

export const IDLE: SampleRun = {
  status: 'idle',
  runId: null,
  planId: null,
  runDir: null,
  nodes: [],
  yaml: '',
  error: null,
  durationMs: null,
  paused: [],
  files: [],
};

function waiting(id: string): NodeRun {
  return { id, state: 'waiting', durationMs: null, rows: null, startedAt: null, code: null, messageJa: null, messageEn: null, hintJa: null, hintEn: null, progress: null, ai: null, warnings: [] };
}

/** A run that is starting: every node of the plan waits. */
export function startRun(yaml: string, nodeIds: readonly string[]): SampleRun {
  return { ...IDLE, status: 'running', yaml, nodes: nodeIds.map(waiting) };
}

function updateNode(run: SampleRun, id: string, change: (node: NodeRun) => NodeRun): SampleRun {
  // Events of nodes inside loops and subflows name them `parent/child`: they belong to the
  // top-level node, whose own events say how it ends.
  if (id.includes('/')) return run;
  const known = run.nodes.some((n) => n.id === id);
  const nodes = known ? run.nodes.map((n) => (n.id === id ? change(n) : n)) : [...run.nodes, change(waiting(id))];
  return { ...run, nodes };
}

/** How many warnings the run's nodes gave. */
export function warningCount(run: SampleRun): number {
  return run.nodes.reduce((sum, n) => sum + n.warnings.length, 0);
}

/** The run after one event; `now` is when it arrived (a node's start time). */
export function applyRunEvent(run: SampleRun, event: RunEvent, now: number = Date.now()): SampleRun {
  switch (event.event) {
    case 'run_start':
      return { ...run, runId: event.run_id, planId: event.plan_id };
    case 'node_start':
      return updateNode(run, event.node, (n) => ({ ...n, state: 'running', startedAt: now, progress: null }));
    case 'node_progress':
      return updateNode(run, event.node, (n) => ({ ...n, progress: { done: event.done, total: event.total, unit: event.unit } }));
    case 'node_finish':
      return updateNode(run, event.node, (n) => ({
        ...n,
        state: 'done',
        progress: null,
        durationMs: event.duration_ms,
        rows: event.rows,
      }));
    case 'node_reused':
      return updateNode(run, event.node, (n) => ({ ...n, state: 'done' }));
    case 'node_error':
      // A retried attempt is still running.
      return updateNode(run, event.node, (n) => ({
        ...n,
        state: event.retrying ? 'running' : 'failed',
        code: event.code,
        messageJa: event.message_ja,
        messageEn: event.message_en,
        hintJa: event.hint_ja ?? null,
        hintEn: event.hint_en ?? null,
      }));
    case 'node_warning': {
      const warning: NodeWarning = { node: event.node, code: event.code, messageJa: event.message_ja, messageEn: event.message_en };
      // A warning inside a loop or subflow stays visible at its top-level node.
      const top = event.node.split('/')[0] ?? event.node;
      return updateNode(run, top, (n) => ({ ...n, warnings: [...n.warnings, warning] }));
    }
    case 'node_skipped':
      return updateNode(run, event.node, (n) => ({ ...n, state: 'skipped' }));
    case 'node_paused':
      return updateNode(run, event.node, (n) => ({ ...n, state: 'paused', messageJa: event.message_ja, messageEn: event.message_en }));
    case 'llm_call': {
      const { call } = event;
      return updateNode(run, event.node, (n) => ({
        ...n,
        ai: {
          calls: (n.ai?.calls ?? 0) + 1,
          tokens: (n.ai?.tokens ?? 0) + call.total_tokens,
          model: call.model,
          failed: (n.ai?.failed ?? 0) + (call.error === null ? 0 : 1),
        },
      }));
    }
    case 'run_finish':
      return { ...run, status: event.status, durationMs: event.duration_ms };
    default:
      return run;
  }
}

/** The run once `plan_run` answered (the events may have said it all already). */
export function finishRun(run: SampleRun, response: PlanRunResponse): SampleRun {
  return {
    ...run,
    status: response.status,
    runId: response.run_id,
    planId: response.plan_id,
    runDir: response.run_dir,
    paused: response.paused,
    files: response.files,
  };
}

/**
 * A run read back from its records (`run_get`): the app was closed while it was paused. Its
 * plan text is the one it ran (from `run_start`), its nodes the ones its events name.
 */
export function restoredRun(got: RunGetResponse): SampleRun {
  // The schema leaves the `events.jsonl` lines as free-form JSON; they are the events
  // `plan_run` streams.
  const events = got.events as RunEvent[];
  const start = events.find((e) => e.event === 'run_start');
  let run = startRun(start?.event === 'run_start' ? start.plan_text : '', []);
  for (const event of events) run = applyRunEvent(run, event);
  // `running`: the app was closed during the run, which has no end now.
  const status = got.status === 'running' ? 'cancelled' : got.status;
  return { ...run, status, runId: got.run_id, planId: got.plan_id, paused: got.paused, runDir: null };
}

function findingCount(details: unknown): number | null {
  if (typeof details !== 'object' || details === null) return null;
  const findings = (details as { findings?: unknown }).findings;
  return Array.isArray(findings) ? findings.length : null;
}

/** The run after `plan_run` refused or failed. */
export function failRun(run: SampleRun, err: unknown): SampleRun {
  const error = err instanceof ApiError ? err : new ApiError('INTERNAL', String(err));
  return {
    ...run,
    status: 'error',
    error: { code: error.code, message: error.message, findings: findingCount(error.details) },
  };
}

/** The 1-based line of node `id`'s `id:` in `yaml` (block or flow style), or null. */
function lineOfNode(yaml: string, id: string): number | null {
  const escaped = id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = new RegExp(`(^|[\\s{,-])id:\\s*["']?${escaped}["']?\\s*([,}]|$)`);
  const lines = yaml.split('\n');
  const index = lines.findIndex((line) => pattern.test(line));
  return index < 0 ? null : index + 1;
}

/**
 * The run's failed nodes as findings (code, message, the node's YAML line), for the findings
 * list and the graph — only while the editor holds the text that ran.
 */
export function runFailureFindings(run: SampleRun, yaml: string, lang: 'ja' | 'en'): ShownFinding[] {
  if (run.yaml !== yaml) return [];
  return run.nodes
    .filter((n) => n.state === 'failed')
    .map((n) => ({
      code: n.code ?? 'BLOCK_FAILED',
      severity: 'error' as const,
      node_id: n.id,
      path: '',
      message: (lang === 'ja' ? n.messageJa : n.messageEn) ?? '',
      hint: null,
      line: lineOfNode(yaml, n.id),
      column: null,
    }));
}

/** Node id → state, for the graph. */
export function runStates(run: SampleRun): ReadonlyMap<string, NodeRunState> {
  return new Map(run.nodes.map((n) => [n.id, n.state]));
}

/** The sample run of the Design tab: start it, follow it, cancel it. */
/** What a run is given besides its plan: files by var (`inputs`) and other vars' values. */
export interface RunGiven {
  inputs?: Record<string, string>;
  vars?: Record<string, unknown>;
}

export function useSampleRun() {
  const [run, setRun] = useState<SampleRun>(IDLE);
  const current = useRef<SampleRun>(IDLE);
  const update = useCallback((next: (r: SampleRun) => SampleRun) => {
    current.current = next(current.current);
    setRun(current.current);
  }, []);

  const start = useCallback(
    async (yaml: string, nodeIds: readonly string[], lang: 'ja' | 'en', given: RunGiven = {}) => {
      if (current.current.status === 'running') return;
      update(() => startRun(yaml, nodeIds));
      try {
        const response = await planRun({ yaml, lang, ...given }, { onEvent: (event) => update((r) => applyRunEvent(r, event)) });
        update((r) => finishRun(r, response));
      } catch (err) {
        update((r) => failRun(r, err));
      }
    },
    [update],
  );

  /** Answers the paused nodes and continues the same run. */
  const resume = useCallback(
    async (answers: Record<string, unknown>, lang: 'ja' | 'en') => {
      const { runId, planId } = current.current;
      if (current.current.status !== 'paused' || runId === null || planId === null) return;
      update((r) => ({ ...r, status: 'running', paused: [], error: null }));
      try {
        const response = await runResume({ run_id: runId, plan_id: planId, answers, lang }, { onEvent: (event) => update((r) => applyRunEvent(r, event)) });
        update((r) => finishRun(r, response));
      } catch (err) {
        update((r) => failRun(r, err));
      }
    },
    [update],
  );

  /**
   * Shows a run left waiting for an answer (the app was closed while it was paused): the newest
   * paused run of `planId`, else the newest paused run of any plan. Its state is on disk and
   * answering continues it with the plan text it ran.
   */
  const restore = useCallback(
    async (planId: string | null) => {
      if (current.current.status !== 'idle') return;
      try {
        const list = await runList({});
        const paused = list.runs.filter((r) => r.status === 'paused');
        const chosen = paused.find((r) => r.plan_id === planId) ?? paused[0];
        if (chosen === undefined) return;
        const got = await runGet({ plan_id: chosen.plan_id, run_id: chosen.run_id });
        if (current.current.status !== 'idle') return;
        update(() => restoredRun(got));
      } catch {
        // Nothing to restore: the panel starts empty.
      }
    },
    [update],
  );

  /** Opens a past run (any status) from its records: its nodes, outputs and workbooks. */
  const open = useCallback(
    async (planId: string, runId: string) => {
      if (current.current.status === 'running') return;
      try {
        const got = await runGet({ plan_id: planId, run_id: runId });
        update(() => restoredRun(got));
      } catch (err) {
        update((r) => failRun(r, err));
      }
    },
    [update],
  );

  const cancel = useCallback(async () => {
    const runId = current.current.runId;
    if (current.current.status !== 'running' || runId === null) return;
    try {
      await runCancel({ run_id: runId });
    } catch {
      // The run may have just ended; its own result says how.
    }
  }, []);

  return { run, start, resume, restore, open, cancel };
}
