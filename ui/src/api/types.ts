// Transport DTOs of the Keiri API (docs/api.md). They mirror `keiri_api::json` field for
// field; the UI never sees the core Rust types.

/** The language the API writes its messages in. */
export type Lang = 'ja' | 'en';

export type { ApiFunction, FindingCode, StreamingFunction } from './functions';

export interface Port {
  name: string;
  /** `string`, `number`, … or several joined with `|`. */
  type: string;
  required: boolean;
  description: string;
  description_en: string;
  enum: unknown[] | null;
  default: unknown;
}

export interface BlockSummary {
  id: string;
  version: string;
  category: string;
  title_ja: string;
  title_en: string;
  description_ja: string;
  description_en: string;
  tags: string[];
  inputs: Port[];
  outputs: Port[];
  source: string;
}

export interface CatalogIssue {
  file: string;
  line: number | null;
  column: number | null;
  message: string;
}

export interface CatalogListRequest {
  query?: string;
  lang?: Lang;
}

export interface CatalogListResponse {
  blocks: BlockSummary[];
  issues: CatalogIssue[];
}

export type Severity = 'error' | 'warning';

export interface Finding {
  /**
   * A plan rule ({@link FindingCode}); the sample run also shows its failed nodes as findings,
   * with the run's error code.
   */
  code: string;
  severity: Severity;
  node_id: string | null;
  /** A JSON pointer into the plan, e.g. `/graph/2/in/rows`. */
  path: string;
  message: string;
  hint: string | null;
  /** The values that would fix it, when there is a closed set (a file's real columns). */
  choices?: string[];
  /** 1-based, when the validator could locate the finding in the YAML text. */
  line: number | null;
  column: number | null;
}

export interface PlanValidateRequest {
  yaml: string;
  lang?: Lang;
}

export interface PlanValidateResponse {
  valid: boolean;
  error_count: number;
  warning_count: number;
  findings: Finding[];
}

export interface DryRunNode {
  id: string;
  kind: 'block' | 'loop' | 'subflow';
  block: string | null;
  depends_on: string[];
  inputs: Record<string, unknown>;
  outputs: Record<string, unknown>;
  when: string | null;
  children: DryRunNode[];
  /** For a workbook patch node (`excel.patch_workbook`): the per-cell preview of its ops. */
  workbook?: WorkbookPreview | null;
}

export interface PlanDryRunRequest {
  yaml: string;
  lang?: Lang;
}

export interface PlanDryRunResponse {
  plan_id: string;
  order: string[];
  nodes: DryRunNode[];
  findings: Finding[];
}

export interface PlanRegisterRequest {
  yaml: string;
  lang?: Lang;
  /** The `yyyymmddHHMM` of the file name the person was shown; the server saves under it. */
  stamp?: string;
}

export interface PlanRegisterResponse {
  plan_id: string;
  path: string;
  file_name: string;
}

// ---- Design tab: templates, generation, requirements, retrieval, documents ----

export interface TemplateSummary {
  id: string;
  version: string;
  category: string;
  title: string;
  title_en: string;
  description: string;
  description_en: string;
  tags: string[];
  imports: string[];
  exports: string[];
}

export interface TemplatesListRequest {
  query?: string;
}

export interface TemplatesListResponse {
  templates: TemplateSummary[];
  issues: CatalogIssue[];
}

/** The control a requirement wants (`ui.interactive_input`'s item types). */
export type RequirementKind = 'text' | 'select' | 'boolean' | 'number' | 'file' | 'table' | 'enum';

/** One question about a plan (keiri_plan::Requirement). */
export interface Requirement {
  id: string;
  type: RequirementKind;
  label: string;
  label_en?: string;
  description: string;
  description_en?: string;
  options?: unknown[];
  required: boolean;
  /** Accepted extensions for `file`, e.g. `.xlsx,.xlsm`. */
  accept?: string;
  hint?: string;
  hint_en?: string;
  validation?: { regex?: string };
  default?: unknown;
  /** The JSON type a `text` answer becomes (`object`, `array`), or `integer` for a number. */
  value_type?: string;
  answer_use?: 'value' | 'schema_template';
  target: { var?: string; node_id?: string; input?: string };
}

export interface RequirementsAnswerRequest {
  yaml: string;
  answers: Record<string, unknown>;
  lang?: Lang;
}

export interface RequirementsAnswerResponse {
  yaml: string;
  valid: boolean;
  findings: Finding[];
  requirements: Requirement[];
}

export type ApplyMode = 'compose' | 'hint' | 'llm-only';

export interface PlanGenerateRequest {
  instruction: string;
  /**
   * Run each plan that validates on the workspace's files first; what fails at run time goes
   * back to the repair loop. The window sets it when documents are attached.
   */
  verify_by_running?: boolean;
  /** Reference documents: paths inside the workspace. */
  docs?: string[];
  /** Template ids; empty = chosen by retrieval. */
  templates?: string[];
  apply_mode?: ApplyMode;
  fallback?: boolean;
  max_repair?: number;
  /** Answers to earlier requirements, by requirement id. */
  answers?: Record<string, unknown>;
  plan_id?: string;
  pinned_blocks?: string[];
  lang?: Lang;
  /** Candidates per category, 5 to 8 (default: retrieval's). */
  topk_per_category?: number;
  /** Characters of the document digest in the prompt (default 4,000). */
  max_docs_chars?: number;
  /** Whether the model may put `when` conditions on nodes (default true). */
  suggest_when?: boolean;
  /** Whether the model may make loop nodes (default true). */
  suggest_foreach?: boolean;
  /** The loop variable's name the model is asked to use (default `item`). */
  foreach_var_name?: string;
}

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

export type GenerationStatus = 'valid' | 'needs_answers' | 'invalid' | 'fallback';

/** A finding or a planner contract problem, as the planner returns it. */
export interface GenerationIssue {
  code: string;
  severity: Severity;
  node_id: string | null;
  path: string;
  message: string;
  hint: string | null;
}

/** A plan as JSON (the same fields as the YAML). */
export interface PlanJson {
  id: string;
  vars?: Record<string, unknown>;
  graph?: PlanNodeJson[];
  [key: string]: unknown;
}

export interface PlanNodeJson {
  id: string;
  block?: string;
  type?: string;
  in?: Record<string, unknown>;
  out?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface TokenUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  [key: string]: unknown;
}

/** One wiring or repair attempt, kept whatever its outcome. */
export interface GenerationAttempt {
  n: number;
  /** `wiring` or `repair`. */
  stage: string;
  plan: PlanJson;
  issues: GenerationIssue[];
  errors: number;
  strategy: string;
  usage: TokenUsage;
}

export interface PlanGenerateResponse {
  plan: PlanJson;
  status: GenerationStatus;
  mode: ApplyMode;
  fallback: boolean;
  reasoning: string;
  candidates: string[];
  templates: string[];
  attempts: GenerationAttempt[];
  requirements: Requirement[];
  errors: GenerationIssue[];
  suggestions: string[];
  notes: string[];
  usage: TokenUsage;
  /** The plan as YAML, ready for the editor. */
  yaml: string;
  unreadable_docs: string[];
}

export interface RetrieveRequest {
  instruction: string;
  docs?: string[];
  k?: number;
  mode?: 'bm25' | 'dense' | 'hybrid';
  pinned?: string[];
  category?: string;
}

export interface RetrieveCandidate {
  id: string;
  /** `block` or `template`. */
  kind: string;
  category: string;
  title: string;
  score: number;
  bm25: number;
  vocabulary: number;
  dense: number | null;
  matched: string[];
  pinned: boolean;
}

export interface RetrieveResponse {
  candidates: RetrieveCandidate[];
  mode: string;
  embedder: string | null;
  notes: string[];
  /** Present while the workspace's own blocks are embedded in the background: the
   * candidates are keyword-only until then; ask again to get the hybrid ranking. */
  embedding_progress?: { done: number; total: number };
}

export type DocumentFormat = 'txt' | 'md' | 'csv' | 'pdf' | 'docx' | 'xlsx' | 'xlsm' | 'code';

export interface DocumentCut {
  /** The limit that cut: `max_pages`, `max_chars_per_file`, `max_total_chars`, `sheet_window`. */
  limit: string;
  message: string;
}

export interface DocumentItemError {
  file_path?: string;
  code: string;
  message: string;
  limit?: string;
}

export interface DocumentText {
  file_path: string;
  resolved_path: string;
  format: DocumentFormat;
  encoding?: string;
  pages_total?: number;
  pages_extracted?: number;
  sheet?: string;
  sheet_names?: string[];
  range?: string;
  unmapped_glyphs?: number;
  characters: number;
  lines: number;
  text: string;
  cuts: DocumentCut[];
}

export interface DocumentsExtractRequest {
  file_paths: string[];
  output_format?: 'json';
}

export interface DocumentsExtractResponse {
  success: boolean;
  files: DocumentText[];
  errors: DocumentItemError[];
  total_characters: number;
  truncated: boolean;
}

export interface DocumentMetrics {
  file_path: string;
  size_bytes: number;
  lines: number;
  characters: number;
  estimated_tokens: number;
  content_hash: string;
  format: DocumentFormat;
  encoding: string | null;
  pages: number | null;
  sheets: number | null;
}

export interface DocumentsMetricsRequest {
  file_paths: string[];
  output_format?: 'json';
}

export interface DocumentsMetricsResponse {
  success: boolean;
  files: DocumentMetrics[];
  errors: DocumentItemError[];
}

export interface DocumentsUploadRequest {
  name: string;
  content_base64: string;
}

export interface DocumentsUploadResponse {
  /** Relative to the workspace, e.g. `inputs/invoices.csv`. */
  path: string;
  size_bytes: number;
}

// ---- Workbook patch (keiri-xlsx, the exstruct_patch contract) and its dry-run preview ----

/** A scalar a cell holds: text, number or boolean (`null` is an empty cell). */
export type CellValue = string | number | boolean;

export type PatchOpKind =
  | 'set_value'
  | 'set_formula'
  | 'add_sheet'
  | 'set_range_values'
  | 'fill_formula'
  | 'set_value_if'
  | 'set_formula_if'
  | 'delete_sheet'
  // Styling and structure (ExStruct's design ops): their diff items carry a `style` or
  // `dimension` summary such as `bold=true` or `width=12`, not a cell value.
  | 'draw_grid_border'
  | 'set_bold'
  | 'set_font_size'
  | 'set_font_color'
  | 'set_fill_color'
  | 'set_dimensions'
  | 'auto_fit_columns'
  | 'merge_cells'
  | 'unmerge_cells'
  | 'set_alignment'
  | 'set_style'
  | 'apply_table_style'
  | 'delete_table'
  | 'restore_design_snapshot';

/** One operation, flat with its `op` tag, e.g. `{op: "set_value", sheet, cell, value}`. */
export interface PatchOp {
  op: PatchOpKind;
  sheet: string;
  cell?: string;
  range?: string;
  base_cell?: string;
  value?: CellValue | null;
  values?: (CellValue | null)[][];
  formula?: string;
  expected?: CellValue | null;
}

export type OnConflict = 'overwrite' | 'skip' | 'rename';

export interface WorkbookPatchRequest {
  xlsx_path: string;
  ops: PatchOp[];
  out_dir?: string | null;
  out_name?: string | null;
  on_conflict?: OnConflict | null;
  auto_formula?: boolean;
  dry_run?: boolean;
  return_inverse_ops?: boolean;
  preflight_formula_check?: boolean;
}

/**
 * A before or after state: a value, a formula (`"=SUM(A1:A3)"`), a sheet name, or for a design
 * op a summary of the style (`bold=true`, `fill=#FFFF00`) or dimension (`width=12`) change.
 */
export interface PatchValue {
  kind: 'value' | 'formula' | 'sheet' | 'style' | 'dimension';
  value: CellValue | null;
}

export interface PatchDiffItem {
  op: PatchOpKind;
  op_index: number;
  sheet: string;
  cell: string | null;
  before: PatchValue | null;
  after: PatchValue | null;
  status: 'applied' | 'skipped';
}

export interface PatchErrorDetail {
  /** `-1` when a formula check failed on a cell no op wrote. */
  op_index: number;
  op: PatchOpKind;
  sheet: string;
  cell: string | null;
  message: string;
}

export type FormulaIssueCode =
  | 'invalid_token'
  | 'ref_error'
  | 'name_error'
  | 'div0_error'
  | 'value_error'
  | 'na_error'
  | 'circular_ref_suspected';

export interface FormulaIssue {
  sheet: string;
  cell: string;
  level: 'warning' | 'error';
  code: FormulaIssueCode;
  message: string;
}

export interface WorkbookPatchResponse {
  /** Where the workbook was (or, for a dry run or a skip, would be) saved. */
  out_path: string;
  patch_diff: PatchDiffItem[];
  warnings: string[];
  /** An op that could not apply; nothing was saved. */
  error: PatchErrorDetail | null;
  inverse_ops: PatchOp[];
  formula_issues: FormulaIssue[];
}

export type WorkbookPreviewStatus = 'ready' | 'unresolved' | 'failed';

/** The dry-run of a workbook patch node (plan_dry_run). */
export interface WorkbookPreview {
  status: WorkbookPreviewStatus;
  /** Why there is no preview (`unresolved`, `failed`). */
  message: string | null;
  /** The API error code of a `failed` preview. */
  code: string | null;
  /** The request that applies the node for real (not a dry run, inverse ops and formula check on). */
  request: WorkbookPatchRequest | null;
  response: WorkbookPatchResponse | null;
  /** The workbook's cells around the changes as they are now (the grid's neighbours). */
  context?: SheetContext[];
}

/** A cell around a change as the workbook holds it: its value (a formula's cached value) and formula. */
export interface ContextCell {
  cell: string;
  value: CellValue | null;
  /** `=B2-B3`, or null for a plain value. */
  formula: string | null;
}

export interface SheetContext {
  sheet: string;
  cells: ContextCell[];
}

// --- settings (crates/keiri-api/src/settings.rs) ----------------------------------------

/** The LLM provider the settings select; `none` leaves it to the environment. */
export type SettingsProvider = 'none' | 'openai' | 'azure' | 'compatible';

/** Where retrieval's embeddings come from (`KEIRI_EMBEDDER`). */
export type EmbeddingSource = 'local' | 'openai' | 'azure' | 'bm25-only';

/** The saved, non-secret settings. Absent text fields are unset. */
export interface Settings {
  provider: SettingsProvider;
  model?: string;
  base_url?: string;
  azure_endpoint?: string;
  azure_deployment?: string;
  azure_api_version?: string;
  /** Unset: the local model when installed, else keyword search; cloud only when chosen. */
  embedding?: EmbeddingSource;
  lang: Lang;
  /** The folder the desktop app opens at its next start. */
  workspace?: string;
  /** Hosts a run's network blocks may reach (host names, IPs, `*.example.com`); none: no network. */
  allow_hosts?: string[];
}

export type SettingsGetRequest = Record<string, never>;

/** Where the key is kept: the OS keychain, or this session's memory only (gone at exit). */
export type KeyStorage = 'keychain' | 'session';

/** The kind of LLM provider in effect (keiri-llm's `ProviderKind`). */
export type LlmProviderKind = 'openai' | 'azure' | 'openai_compatible';

/** Where an effective value came from, highest precedence first. */
export type SettingSource = 'environment' | 'env_file' | 'settings' | 'session' | 'default';

/** A value and where it came from. */
export interface Sourced<T> {
  value: T;
  source: SettingSource;
}

/** The provider, model and URL in effect (environment over saved settings), with sources. */
export interface EffectiveSettings {
  configured: boolean;
  provider: Sourced<LlmProviderKind> | null;
  model: Sourced<string>;
  base_url: Sourced<string> | null;
  deployment: Sourced<string> | null;
  /** Where the key comes from; null: no key is sent. */
  api_key: SettingSource | null;
  /** `auto` (the local model when installed) or an `EmbeddingSource`. */
  embedding: Sourced<'auto' | EmbeddingSource>;
  /** Retrieval sends texts to a cloud embeddings endpoint. */
  cloud_embeddings: boolean;
  /** The environment or `.env` configures another provider than the saved one, and wins. */
  settings_overridden: boolean;
  /** Names (never values) of the LLM variables set in the environment or `.env`. */
  variables: string[];
  problem: { code: string; message: string } | null;
}

/** The saved settings and whether a key is stored. The key itself is never sent back. */
export interface SettingsResponse extends Settings {
  api_key_set: boolean;
  /** Where the key is kept; null without one. */
  api_key_storage: KeyStorage | null;
  /** False when the OS keychain cannot be reached: a key can only be kept for the session. */
  keychain_available: boolean;
  /** The settings file. */
  path: string;
  effective: EffectiveSettings;
}

export interface SettingsSaveRequest extends Settings {
  /** Absent or null keeps the stored key; `''` deletes it; anything else replaces it. */
  api_key?: string | null;
  /** Where a new key goes (default `keychain`; `KEYCHAIN_UNAVAILABLE` when there is none). */
  key_storage?: KeyStorage;
}

export interface LlmConnectionTestRequest {
  lang?: Lang;
}

/** One tiny real request to the model in effect: ok, or the LLM_* code and a message. */
export interface LlmConnectionTestResponse {
  ok: boolean;
  provider: LlmProviderKind | null;
  model: string;
  base_url: string | null;
  elapsed_ms: number;
  code: string | null;
  /** The outcome in the requested language. */
  message: string;
  /** The provider's own words on a failure (English; no keys). */
  detail: string | null;
}

/** What the desktop file dialog offers (`pick_files`). */
export interface PickFilesRequest {
  title?: string;
  /** Extensions without the dot, e.g. `['pdf', 'xlsx']`; every file when absent. */
  extensions?: string[];
  filter_name?: string;
}

// --- chat (keiri-agent; crates/keiri-agent/README.md) -------------------------------------

/** One step of a chat turn, streamed as it happens (in this order per tool call). */
export type ChatEvent =
  | { type: 'route'; skill: string; reason: 'explicit' | 'command' | 'score' | 'fallback'; score: number; allowed_tools: string[] }
  | { type: 'tool_call_start'; call_id: string; tool: string; arguments: unknown }
  | { type: 'tool_call_end'; call_id: string; tool: string; ok: boolean; error_code?: string; result: unknown }
  | { type: 'approval_required'; change_id: string; file: string; tool: string; diff: string }
  | { type: 'reply'; text: string }
  | { type: 'error'; code: string; message: string };

export interface ChatSendRequest {
  /** Continue this session; a new one starts when absent. */
  session_id?: string;
  message: string;
  /** Use this skill; else the router chooses (`/skill-name` in the message also works). */
  skill?: string;
  /** The editor's plan text: the agent edits a working copy of it. */
  plan_yaml?: string;
  plan_path?: string;
  files?: string[];
  lang?: Lang;
}

/** A change proposed by a tool: written only after `chat_approve`. */
export interface ChatPendingChange {
  change_id: string;
  file: string;
  /** Unified diff. */
  diff: string;
  tool: string;
}

export interface ChatSendResponse {
  session_id: string;
  skill: string;
  reply: string;
  events: ChatEvent[];
  pending: ChatPendingChange[];
  /** `TOOL_FAILURE_LIMIT` or `MAX_ITERATIONS` when the turn stopped early. */
  stopped?: string;
  undo_available: boolean;
}

export interface ChatApproveRequest {
  session_id: string;
  change_id: string;
  /** false rejects the change. */
  approve: boolean;
}

export interface ChatApproveResponse {
  applied: boolean;
  file: string;
  /** The new plan text when the change was to the chat's plan. */
  plan_yaml?: string;
  undo_available: boolean;
  pending: ChatPendingChange[];
}

export interface ChatUndoRequest {
  session_id: string;
}

export interface ChatUndoResponse {
  change_id: string;
  file: string;
  plan_yaml?: string;
  undo_available: boolean;
}

export type SkillsListRequest = Record<string, never>;

export interface SkillSummary {
  name: string;
  description: string;
  triggers: string[];
  file_patterns: string[];
  allowed_tools: string[];
  priority: number;
  version: string;
}

export interface SkillsListResponse {
  skills: SkillSummary[];
  issues: { file: string; line?: number; message: string }[];
}

// --- runs (crates/keiri-api/src/run.rs) ---------------------------------------------------

/** Start a run of a plan (`plan_run`, streamed). Every file the run writes stays in its run directory. */
export interface PlanRunRequest {
  yaml?: string;
  plan_path?: string;
  vars?: Record<string, unknown>;
  /** `NAME → path`: sets `vars.NAME` to the file's path. */
  inputs?: Record<string, string>;
  allow_env?: string[];
  lang?: Lang;
}

export type RunStatus = 'finished' | 'failed' | 'cancelled' | 'paused';

export interface RunFailure {
  node: string;
  code: string;
  message: string;
}

export interface RunNodeStatus {
  id: string;
  /** `finished`, `failed` or `skipped`. */
  status: string;
}

/**
 * What a paused node asks (crates/keiri-run/src/blocks/ui.rs). `kind` picks the controls:
 * `confirmation` {message, details, confirm_label, cancel_label}; `input` {message, fields[{id,
 * label, type, options, required}]}; `table_review` {title, message, rows, row_count, columns,
 * editable_columns, allow_exclude}; `diff` {title, patch_diff}; `approval` {subject, amount, route}.
 */
export type RunQuestion = { kind: string } & Record<string, unknown>;

export interface RunPaused {
  node: string;
  question: RunQuestion;
  message: string;
}

export interface PlanRunResponse {
  run_id: string;
  plan_id: string;
  /** The run directory, relative to the workspace. */
  run_dir: string;
  status: RunStatus;
  failures: RunFailure[];
  nodes: RunNodeStatus[];
  /** The nodes waiting for a person's answer (status `paused`). */
  paused: RunPaused[];
}

export interface RunResumeRequest {
  run_id: string;
  plan_id?: string;
  yaml?: string;
  /** Answers to the paused nodes, by node id. */
  answers?: Record<string, unknown>;
  lang?: Lang;
}

export interface RunListRequest {
  plan_id?: string;
}

/** A file written to the workspace from a run (「書き込む」), who applied it and when. */
export interface AppliedWrite {
  node: string;
  to: string;
  /** The machine's user name ('' in records from before it was kept). */
  by: string;
  at: string;
}

export interface RunSummary {
  plan_id: string;
  run_id: string;
  status: RunStatus | 'running';
  started_at: string;
  /** How long its last attempt took (absent while running). */
  duration_ms?: number;
  applied: AppliedWrite[];
}

export interface RunListResponse {
  runs: RunSummary[];
}

export interface RunGetRequest {
  plan_id: string;
  run_id: string;
}

export interface RunGetResponse {
  run_id: string;
  plan_id: string;
  status: RunStatus | 'running';
  started_at: string;
  nodes: RunNodeStatus[];
  failures: RunFailure[];
  paused: RunPaused[];
  events: RunEvent[];
}

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

/** One line of the run's `events.jsonl`, as `plan_run` streams it. */
export type RunEvent =
  | { event: 'run_start'; run_id: string; plan_id: string; plan_text: string; started_at: string; resumed: boolean }
  | { event: 'node_start'; node: string; attempt: number }
  | { event: 'node_finish'; node: string; duration_ms: number; rows: number | null; outputs: Record<string, unknown> }
  | { event: 'node_error'; node: string; code: string; message_ja: string; message_en: string; attempt: number; retrying: boolean }
  | { event: 'node_skipped'; node: string; reason: string }
  | { event: 'node_reused'; node: string }
  | { event: 'llm_call'; node: string; call: LlmCall }
  | { event: 'node_paused'; node: string; question: RunQuestion; message_ja: string; message_en: string }
  | { event: 'run_finish'; status: RunStatus; duration_ms: number; failed: string[] };

export interface RunOutputRequest {
  plan_id: string;
  run_id: string;
  node: string;
  /** Rows of each table (default 200, at most 1,000). */
  limit?: number;
}

export interface OutputColumn {
  name: string;
  /** The table's column type (`str`, `f64`, …) or the JSON type of a list's values. */
  type: string;
}

export type OutputPreview =
  | { kind: 'table'; row_count: number; columns: OutputColumn[]; rows: Record<string, unknown>[]; truncated: boolean }
  | { kind: 'json'; value: unknown };

export interface WorkbookCompareResponse {
  before: string | null;
  after: string;
  patch_diff: PatchDiffItem[];
  truncated: boolean;
  /** The cells of `after` around the changes (the grid's neighbours). */
  context?: SheetContext[];
}

export interface RunOutputResponse {
  node: string;
  outputs: Record<string, OutputPreview>;
  /** The workbook the node wrote, cell by cell (against the workbook it would replace). */
  workbook: WorkbookCompareResponse | null;
  /** Where 「この結果で書き込む」 writes the node's file; null: it stays in the run folder. */
  apply_to: string | null;
  /** The node's file is written to `apply_to` now. */
  applied: boolean;
}

export interface RunApplyRequest {
  plan_id: string;
  run_id: string;
  node: string;
}

export interface RunApplyResponse {
  node: string;
  from: string;
  to: string;
  existed: boolean;
}

export interface RunUndoApplyResponse {
  node: string;
  to: string;
  restored: boolean;
}

export interface RunCancelRequest {
  run_id: string;
}

export interface RunCancelResponse {
  cancelled: boolean;
}
