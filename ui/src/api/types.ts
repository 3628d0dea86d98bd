// The API's request and response types come from generated.ts, which json-schema-to-typescript
// writes from keiri-api's JSON Schema (`make generated`; a unit test fails while it is stale),
// so a type can only change in Rust. This file re-exports them under their Rust names for the
// UI to import, and keeps only what the schema does not describe: the events a streamed call
// sends, the shapes the UI reads out of the API's free-form JSON values, the desktop shell's own
// command, and the findings list's widening of `Finding`.

import type { Finding, RunPaused, RunStatus } from './generated';

export type { ApiFunction, StreamingFunction } from './functions';
export type * from './generated';

/**
 * A line of the findings list, and a mark in the editor and the graph: a validator `Finding`, or
 * a node the sample run saw fail, shown the same way under the run's error code (`BLOCK_FAILED`,
 * …) where a finding has its plan rule.
 */
export type ShownFinding = Omit<Finding, 'code'> & { code: string };

// ---- Streamed events: the schema describes a call's request and result, not its events ----

export type GenerationStage =
  | 'extracting'
  | 'retrieving'
  | 'composing'
  | 'skeleton'
  | 'questions'
  | 'wiring'
  | 'validating'
  | 'repair';

/** One streamed progress event of `plan_generate`. */
export interface GenerationProgress {
  stage: GenerationStage;
  repair?: { n: number; of: number } | null;
  message: string;
  /** Time since the generation started. */
  elapsed_ms?: number;
}

/** One step of a chat turn, streamed as it happens (in this order per tool call). */
export type ChatEvent =
  | { type: 'route'; skill: string; reason: 'explicit' | 'command' | 'score' | 'fallback'; score: number; allowed_tools: string[] }
  | { type: 'tool_call_start'; call_id: string; tool: string; arguments: unknown }
  | { type: 'tool_call_end'; call_id: string; tool: string; ok: boolean; error_code?: string; result: unknown }
  | { type: 'approval_required'; change_id: string; file: string; tool: string; diff: string }
  | { type: 'reply'; text: string }
  | { type: 'error'; code: string; message: string };

/** A run's state once it has ended (keiri-run's `RunStatus` but `running`). */
export type EndedRunStatus = Exclude<RunStatus, 'running'>;

/** One model call of an `ai.*` node (never a prompt, an answer or a key). */
export interface LlmCall {
  purpose: string;
  provider: string;
  model: string;
  strategy: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  requests: number;
  duration_ms: number;
  /** The keiri-llm error code when the call failed. */
  error: string | null;
}

/** One line of the run's `events.jsonl`, as `plan_run` streams it and `run_get` returns it. */
export type RunEvent =
  | { event: 'run_start'; run_id: string; plan_id: string; plan_text: string; started_at: string; resumed: boolean }
  | { event: 'node_start'; node: string; attempt: number }
  | { event: 'node_finish'; node: string; duration_ms: number; rows: number | null; outputs: Record<string, unknown> }
  | { event: 'node_error'; node: string; code: string; message_ja: string; message_en: string; attempt: number; retrying: boolean }
  | { event: 'node_skipped'; node: string; reason: string }
  | { event: 'node_reused'; node: string }
  | { event: 'llm_call'; node: string; call: LlmCall }
  | { event: 'node_paused'; node: string; question: RunPaused['question']; message_ja: string; message_en: string }
  | { event: 'run_finish'; status: EndedRunStatus; duration_ms: number; failed: string[] };

// ---- Shapes inside the API's free-form JSON values ----

export interface OutputColumn {
  name: string;
  /** The table's column type (`str`, `f64`, …) or the JSON type of a list's values. */
  type: string;
}

/** One output of a node as `run_output` sends it (`RunOutputResponse.outputs`). */
export type OutputPreview =
  | { kind: 'table'; row_count: number; columns: OutputColumn[]; rows: Record<string, unknown>[]; truncated: boolean }
  | { kind: 'json'; value: unknown };

// ---- The desktop shell's own command (not an API function) ----

/** What the desktop file dialog offers (`pick_files`). */
export interface PickFilesRequest {
  title?: string;
  /** Extensions without the dot, e.g. `['pdf', 'xlsx']`; every file when absent. */
  extensions?: string[];
  filter_name?: string;
}
