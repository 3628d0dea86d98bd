// Typed wrappers, one per API function. Components import these and never the transport.
// Each function's request and response types are the ones keiri-api's schema gives it
// (`ApiFunctions` in generated.ts), so a wrapper names only its function.

import { call, callStream, type ApiRequest } from './transport';
import type { ExtractResponse, GenerationProgress, MetricsResponse } from './types';

export { ApiError, INVALID_RESPONSE, TRANSPORT_ERROR, asApiError, isTauri } from './transport';
export type * from './types';

export function catalogList(request: ApiRequest<'catalog_list'> = {}) {
  return call('catalog_list', request);
}

export function planValidate(request: ApiRequest<'plan_validate'>) {
  return call('plan_validate', request);
}

export function planDryRun(request: ApiRequest<'plan_dry_run'>) {
  return call('plan_dry_run', request);
}

export function planRegister(request: ApiRequest<'plan_register'>) {
  return call('plan_register', request);
}

export function templatesList(request: ApiRequest<'templates_list'> = {}) {
  return call('templates_list', request);
}

export function requirementsAnswer(request: ApiRequest<'requirements_answer'>) {
  return call('requirements_answer', request);
}

/**
 * Starts loading the embedding model in the background, so the first candidate search does not
 * wait for it; the window calls it once it is interactive (loading earlier would slow the
 * start on a small machine). Answers at once.
 */
export function embeddingsPrewarm() {
  return call('embeddings_prewarm', {});
}

export function blocksRetrieve(request: ApiRequest<'blocks_retrieve'>) {
  return call('blocks_retrieve', request);
}

// The documents functions answer `ToonResponse | <JSON response>` by the request's
// `output_format`. These two always ask for `json`, so their answer is the JSON form: the casts
// narrow to it on purpose.

/** Always the JSON form (`output_format: json`): the UI shows each file's status. */
export function documentsExtract(request: Omit<ApiRequest<'documents_extract'>, 'output_format'>): Promise<ExtractResponse> {
  return call('documents_extract', { ...request, output_format: 'json' }) as Promise<ExtractResponse>;
}

/** Always the JSON form (`output_format: json`). */
export function documentsMetrics(request: Omit<ApiRequest<'documents_metrics'>, 'output_format'>): Promise<MetricsResponse> {
  return call('documents_metrics', { ...request, output_format: 'json' }) as Promise<MetricsResponse>;
}

/** Stores a file the browser holds as bytes under `<workspace>/inputs/` (browser mode). */
export function documentsUpload(request: ApiRequest<'documents_upload'>) {
  return call('documents_upload', request);
}

export interface PlanGenerateOptions {
  /** Each stage event as it happens (`{stage, repair, message, elapsed_ms}`). */
  onProgress?: (progress: GenerationProgress) => void;
  /** Aborting cancels the generation; the promise rejects with code `CANCELLED`. */
  signal?: AbortSignal;
}

/** Generates a plan, streaming the planner's progress (docs/api.md, "Streaming"). */
export function planGenerate(request: ApiRequest<'plan_generate'>, options: PlanGenerateOptions = {}) {
  return callStream(
    'plan_generate',
    request,
    (event) => options.onProgress?.(event as GenerationProgress),
    options.signal,
  );
}

/**
 * Applies (or, with `dry_run`, previews) workbook patch ops (crates/keiri-xlsx/README.md).
 * An op that cannot apply is data (`error` in the response), not a rejection.
 */
export function workbookPatch(request: ApiRequest<'workbook_patch'>) {
  return call('workbook_patch', request);
}

// --- settings ------------------------------------------------------------------------------

import { invoke } from '@tauri-apps/api/core';
import { ApiError as DesktopError, TRANSPORT_ERROR as DESKTOP_TRANSPORT_ERROR, isTauri as inDesktop, parseApiError } from './transport';
import type { PickFilesRequest } from './types';

/** The saved settings (`api_key_set` says whether a key is stored; the key never comes back). */
export function settingsGet(request: ApiRequest<'settings_get'> = {}) {
  return call('settings_get', request);
}

/**
 * Saves the settings; the API key goes to the OS keychain (`KEYCHAIN_UNAVAILABLE` when none),
 * or with `key_storage: 'session'` into this session's memory only.
 */
export function settingsSave(request: ApiRequest<'settings_save'>) {
  return call('settings_save', request);
}

/** One tiny real request to the model in effect: `ok`, or the LLM_* code with a message. */
export function llmConnectionTest(request: ApiRequest<'llm_connection_test'> = {}) {
  return call('llm_connection_test', request);
}

/**
 * Opens the desktop app's native file dialog; the chosen files are copied into the workspace's
 * `inputs/` and the promise resolves to their workspace paths (empty when cancelled). Desktop
 * only: in a browser use `<input type=file>` and `documentsUpload`.
 */
export async function pickFiles(request: PickFilesRequest = {}): Promise<string[]> {
  if (!inDesktop()) throw new DesktopError(DESKTOP_TRANSPORT_ERROR, 'the file dialog is only available in the desktop app');
  try {
    return await invoke<string[]>('pick_files', { request });
  } catch (err) {
    throw parseApiError(err) ?? new DesktopError(DESKTOP_TRANSPORT_ERROR, String(err));
  }
}

// --- chat ----------------------------------------------------------------------------------

import type { ChatEvent } from './types';

export interface ChatSendOptions {
  /** Each event of the turn as it happens (route, tool calls, proposed changes, reply). */
  onEvent?: (event: ChatEvent) => void;
  /** Aborting cancels the turn; the promise rejects with code `CANCELLED`. */
  signal?: AbortSignal;
}

/** One chat turn, streaming its events. Proposed edits come back in `pending`, unwritten. */
export function chatSend(request: ApiRequest<'chat_send'>, options: ChatSendOptions = {}) {
  return callStream('chat_send', request, (event) => options.onEvent?.(event as ChatEvent), options.signal);
}

/** Writes (`approve: true`) or rejects a pending change. */
export function chatApprove(request: ApiRequest<'chat_approve'>) {
  return call('chat_approve', request);
}

/** Restores the file of the last approved change. */
export function chatUndo(request: ApiRequest<'chat_undo'>) {
  return call('chat_undo', request);
}

export function skillsList(request: ApiRequest<'skills_list'> = {}) {
  return call('skills_list', request);
}

// --- runs ----------------------------------------------------------------------------------

import type { RunEvent } from './types';

export interface PlanRunOptions {
  /** Each run event as it happens (`events.jsonl` lines). */
  onEvent?: (event: RunEvent) => void;
  /** Aborting stops the stream; use `runCancel` to stop the run itself. */
  signal?: AbortSignal;
}

/** Runs a plan on the workspace's files; every file it writes stays in its run directory. */
export function planRun(request: ApiRequest<'plan_run'>, options: PlanRunOptions = {}) {
  return callStream('plan_run', request, (event) => options.onEvent?.(event as RunEvent), options.signal);
}

/** One node's saved outputs (tables as their first rows) and the workbook it wrote. */
export function runOutput(request: ApiRequest<'run_output'>) {
  return call('run_output', request);
}

/** Stops a run in progress; it then finishes with status `cancelled`. */
export function runCancel(request: ApiRequest<'run_cancel'>) {
  return call('run_cancel', request);
}

/** Continues a paused or failed run (with `answers` for the paused nodes), streaming its events. */
export function runResume(request: ApiRequest<'run_resume'>, options: PlanRunOptions = {}) {
  return callStream('run_resume', request, (event) => options.onEvent?.(event as RunEvent), options.signal);
}

/** The plans registered in `designs/`, newest registration per id. */
export function planList() {
  return call('plan_list', {});
}

/** A registered plan's text, and what a rerun of it takes. */
export function planGet(request: ApiRequest<'plan_get'>) {
  return call('plan_get', request);
}

/** The runs under `runs/`, newest first. */
export function runList(request: ApiRequest<'run_list'> = {}) {
  return call('run_list', request);
}

/** One run's state and events. */
export function runGet(request: ApiRequest<'run_get'>) {
  return call('run_get', request);
}

/** Writes a node's file from the run folder to its place in the workspace (kept for undo). */
export function runApply(request: ApiRequest<'run_apply'>) {
  return call('run_apply', request);
}

/** Puts back what was there before `runApply` (byte for byte), if nobody changed it since. */
export function runUndoApply(request: ApiRequest<'run_undo_apply'>) {
  return call('run_undo_apply', request);
}
