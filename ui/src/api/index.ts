// Typed wrappers, one per API function. Components import these and never the transport.

import { call, callStream } from './transport';
import type {
  CatalogListRequest,
  CatalogListResponse,
  PlanDryRunRequest,
  PlanDryRunResponse,
  PlanRegisterRequest,
  PlanRegisterResponse,
  PlanValidateRequest,
  PlanValidateResponse,
  DocumentsExtractRequest,
  DocumentsExtractResponse,
  DocumentsMetricsRequest,
  DocumentsMetricsResponse,
  DocumentsUploadRequest,
  DocumentsUploadResponse,
  RequirementsAnswerRequest,
  RequirementsAnswerResponse,
  RetrieveRequest,
  RetrieveResponse,
  TemplatesListRequest,
  TemplatesListResponse,
  GenerationProgress,
  PlanGenerateRequest,
  PlanGenerateResponse,
  WorkbookPatchRequest,
  WorkbookPatchResponse,
} from './types';

export { ApiError, INVALID_RESPONSE, TRANSPORT_ERROR, isTauri } from './transport';
export type * from './types';

export function catalogList(request: CatalogListRequest = {}): Promise<CatalogListResponse> {
  return call<CatalogListResponse>('catalog_list', request);
}

export function planValidate(request: PlanValidateRequest): Promise<PlanValidateResponse> {
  return call<PlanValidateResponse>('plan_validate', request);
}

export function planDryRun(request: PlanDryRunRequest): Promise<PlanDryRunResponse> {
  return call<PlanDryRunResponse>('plan_dry_run', request);
}

export function planRegister(request: PlanRegisterRequest): Promise<PlanRegisterResponse> {
  return call<PlanRegisterResponse>('plan_register', request);
}

export function templatesList(request: TemplatesListRequest = {}): Promise<TemplatesListResponse> {
  return call<TemplatesListResponse>('templates_list', request);
}

export function requirementsAnswer(request: RequirementsAnswerRequest): Promise<RequirementsAnswerResponse> {
  return call<RequirementsAnswerResponse>('requirements_answer', request);
}

/**
 * Starts loading the embedding model in the background, so the first candidate search does not
 * wait for it; the window calls it once it is interactive (loading earlier would slow the
 * start on a small machine). Answers at once.
 */
export function embeddingsPrewarm(): Promise<{ started: boolean }> {
  return call<{ started: boolean }>('embeddings_prewarm', {});
}

export function blocksRetrieve(request: RetrieveRequest): Promise<RetrieveResponse> {
  return call<RetrieveResponse>('blocks_retrieve', request);
}

/** Always the JSON form (`output_format: json`): the UI shows each file's status. */
export function documentsExtract(request: DocumentsExtractRequest): Promise<DocumentsExtractResponse> {
  return call<DocumentsExtractResponse>('documents_extract', { ...request, output_format: 'json' });
}

export function documentsMetrics(request: DocumentsMetricsRequest): Promise<DocumentsMetricsResponse> {
  return call<DocumentsMetricsResponse>('documents_metrics', { ...request, output_format: 'json' });
}

/** Stores a file the browser holds as bytes under `<workspace>/inputs/` (browser mode). */
export function documentsUpload(request: DocumentsUploadRequest): Promise<DocumentsUploadResponse> {
  return call<DocumentsUploadResponse>('documents_upload', request);
}

export interface PlanGenerateOptions {
  /** Each stage event as it happens (`{stage, repair, message, elapsed_ms}`). */
  onProgress?: (progress: GenerationProgress) => void;
  /** Aborting cancels the generation; the promise rejects with code `CANCELLED`. */
  signal?: AbortSignal;
}

/** Generates a plan, streaming the planner's progress (docs/api.md, "Streaming"). */
export function planGenerate(request: PlanGenerateRequest, options: PlanGenerateOptions = {}): Promise<PlanGenerateResponse> {
  return callStream<PlanGenerateResponse>(
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
export function workbookPatch(request: WorkbookPatchRequest): Promise<WorkbookPatchResponse> {
  return call<WorkbookPatchResponse>('workbook_patch', request);
}

// --- settings ------------------------------------------------------------------------------

import { invoke } from '@tauri-apps/api/core';
import { ApiError as DesktopError, TRANSPORT_ERROR as DESKTOP_TRANSPORT_ERROR, isTauri as inDesktop, parseApiError } from './transport';
import type {
  LlmConnectionTestRequest,
  LlmConnectionTestResponse,
  PickFilesRequest,
  SettingsGetRequest,
  SettingsResponse,
  SettingsSaveRequest,
} from './types';

/** The saved settings (`api_key_set` says whether a key is stored; the key never comes back). */
export function settingsGet(request: SettingsGetRequest = {}): Promise<SettingsResponse> {
  return call<SettingsResponse>('settings_get', request);
}

/**
 * Saves the settings; the API key goes to the OS keychain (`KEYCHAIN_UNAVAILABLE` when none),
 * or with `key_storage: 'session'` into this session's memory only.
 */
export function settingsSave(request: SettingsSaveRequest): Promise<SettingsResponse> {
  return call<SettingsResponse>('settings_save', request);
}

/** One tiny real request to the model in effect: `ok`, or the LLM_* code with a message. */
export function llmConnectionTest(request: LlmConnectionTestRequest = {}): Promise<LlmConnectionTestResponse> {
  return call<LlmConnectionTestResponse>('llm_connection_test', request);
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

import type {
  ChatApproveRequest,
  ChatApproveResponse,
  ChatEvent,
  ChatSendRequest,
  ChatSendResponse,
  ChatUndoRequest,
  ChatUndoResponse,
  SkillsListRequest,
  SkillsListResponse,
} from './types';

export interface ChatSendOptions {
  /** Each event of the turn as it happens (route, tool calls, proposed changes, reply). */
  onEvent?: (event: ChatEvent) => void;
  /** Aborting cancels the turn; the promise rejects with code `CANCELLED`. */
  signal?: AbortSignal;
}

/** One chat turn, streaming its events. Proposed edits come back in `pending`, unwritten. */
export function chatSend(request: ChatSendRequest, options: ChatSendOptions = {}): Promise<ChatSendResponse> {
  return callStream<ChatSendResponse>('chat_send', request, (event) => options.onEvent?.(event as ChatEvent), options.signal);
}

/** Writes (`approve: true`) or rejects a pending change. */
export function chatApprove(request: ChatApproveRequest): Promise<ChatApproveResponse> {
  return call<ChatApproveResponse>('chat_approve', request);
}

/** Restores the file of the last approved change. */
export function chatUndo(request: ChatUndoRequest): Promise<ChatUndoResponse> {
  return call<ChatUndoResponse>('chat_undo', request);
}

export function skillsList(request: SkillsListRequest = {}): Promise<SkillsListResponse> {
  return call<SkillsListResponse>('skills_list', request);
}

// --- runs ----------------------------------------------------------------------------------

import type {
  PlanRunRequest,
  PlanRunResponse,
  RunGetRequest,
  RunGetResponse,
  RunListRequest,
  RunListResponse,
  RunResumeRequest,
  RunApplyRequest,
  RunApplyResponse,
  RunUndoApplyResponse,
  RunCancelRequest,
  RunCancelResponse,
  RunEvent,
  RunOutputRequest,
  RunOutputResponse,
} from './types';

export interface PlanRunOptions {
  /** Each run event as it happens (`events.jsonl` lines). */
  onEvent?: (event: RunEvent) => void;
  /** Aborting stops the stream; use `runCancel` to stop the run itself. */
  signal?: AbortSignal;
}

/** Runs a plan on the workspace's files; every file it writes stays in its run directory. */
export function planRun(request: PlanRunRequest, options: PlanRunOptions = {}): Promise<PlanRunResponse> {
  return callStream<PlanRunResponse>('plan_run', request, (event) => options.onEvent?.(event as RunEvent), options.signal);
}

/** One node's saved outputs (tables as their first rows) and the workbook it wrote. */
export function runOutput(request: RunOutputRequest): Promise<RunOutputResponse> {
  return call<RunOutputResponse>('run_output', request);
}

/** Stops a run in progress; it then finishes with status `cancelled`. */
export function runCancel(request: RunCancelRequest): Promise<RunCancelResponse> {
  return call<RunCancelResponse>('run_cancel', request);
}

/** Continues a paused or failed run (with `answers` for the paused nodes), streaming its events. */
export function runResume(request: RunResumeRequest, options: PlanRunOptions = {}): Promise<PlanRunResponse> {
  return callStream<PlanRunResponse>('run_resume', request, (event) => options.onEvent?.(event as RunEvent), options.signal);
}

/** The runs under `runs/`, newest first. */
export function runList(request: RunListRequest = {}): Promise<RunListResponse> {
  return call<RunListResponse>('run_list', request);
}

/** One run's state and events. */
export function runGet(request: RunGetRequest): Promise<RunGetResponse> {
  return call<RunGetResponse>('run_get', request);
}

/** Writes a node's file from the run folder to its place in the workspace (kept for undo). */
export function runApply(request: RunApplyRequest): Promise<RunApplyResponse> {
  return call<RunApplyResponse>('run_apply', request);
}

/** Puts back what was there before `runApply` (byte for byte), if nobody changed it since. */
export function runUndoApply(request: RunApplyRequest): Promise<RunUndoApplyResponse> {
  return call<RunUndoApplyResponse>('run_undo_apply', request);
}
