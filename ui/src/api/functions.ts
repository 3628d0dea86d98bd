// Generated from crates/keiri-api/src/surface.rs — do not edit; `make generated` rewrites it.

/** The functions every transport exposes (`POST /api/<name>`, the desktop `call` command). */
export type ApiFunction =
  | 'apply_patch'
  | 'blocks_retrieve'
  | 'blocks_retrieve_eval'
  | 'catalog_list'
  | 'chat_approve'
  | 'chat_undo'
  | 'documents_digest'
  | 'documents_extract'
  | 'documents_extract_sections'
  | 'documents_metrics'
  | 'documents_upload'
  | 'embeddings_prewarm'
  | 'llm_status'
  | 'plan_dry_run'
  | 'plan_get'
  | 'plan_import_v0'
  | 'plan_list'
  | 'plan_register'
  | 'plan_validate'
  | 'requirements_answer'
  | 'run_apply'
  | 'run_cancel'
  | 'run_get'
  | 'run_list'
  | 'run_output'
  | 'run_undo_apply'
  | 'settings_get'
  | 'settings_save'
  | 'skills_list'
  | 'templates_list'
  | 'workbook_compare'
  | 'workbook_patch'
  | 'llm_connection_test'
  | 'chat_send'
  | 'plan_generate'
  | 'plan_run'
  | 'planner_eval'
  | 'run_resume';

/** The functions that also stream events (`POST /api/<name>/stream`, `call_stream`). */
export type StreamingFunction =
  | 'chat_send'
  | 'plan_generate'
  | 'plan_run'
  | 'planner_eval'
  | 'run_resume';

export const FUNCTIONS: readonly ApiFunction[] = [
  'apply_patch',
  'blocks_retrieve',
  'blocks_retrieve_eval',
  'catalog_list',
  'chat_approve',
  'chat_undo',
  'documents_digest',
  'documents_extract',
  'documents_extract_sections',
  'documents_metrics',
  'documents_upload',
  'embeddings_prewarm',
  'llm_status',
  'plan_dry_run',
  'plan_get',
  'plan_import_v0',
  'plan_list',
  'plan_register',
  'plan_validate',
  'requirements_answer',
  'run_apply',
  'run_cancel',
  'run_get',
  'run_list',
  'run_output',
  'run_undo_apply',
  'settings_get',
  'settings_save',
  'skills_list',
  'templates_list',
  'workbook_compare',
  'workbook_patch',
  'llm_connection_test',
  'chat_send',
  'plan_generate',
  'plan_run',
  'planner_eval',
  'run_resume',
];

export const STREAMING_FUNCTIONS: readonly StreamingFunction[] = [
  'chat_send',
  'plan_generate',
  'plan_run',
  'planner_eval',
  'run_resume',
];
