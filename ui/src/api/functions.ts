// Generated from crates/keiri-api/src/surface.rs — do not edit; `make generated` rewrites it.

/** The functions every transport exposes (`POST /api/<name>`, the desktop `call` command). */
export type ApiFunction =
  | 'catalog_list'
  | 'plan_validate'
  | 'plan_dry_run'
  | 'plan_register'
  | 'plan_list'
  | 'documents_extract'
  | 'documents_digest'
  | 'documents_extract_sections'
  | 'documents_metrics'
  | 'workbook_patch'
  | 'workbook_compare'
  | 'blocks_retrieve'
  | 'blocks_retrieve_eval'
  | 'embeddings_prewarm'
  | 'llm_status'
  | 'apply_patch'
  | 'templates_list'
  | 'requirements_answer'
  | 'documents_upload'
  | 'settings_get'
  | 'settings_save'
  | 'chat_approve'
  | 'chat_undo'
  | 'skills_list'
  | 'run_get'
  | 'run_list'
  | 'run_cancel'
  | 'run_output'
  | 'run_apply'
  | 'run_undo_apply'
  | 'llm_connection_test'
  | 'plan_generate'
  | 'chat_send'
  | 'plan_run'
  | 'run_resume'
  | 'planner_eval';

/** The functions that also stream events (`POST /api/<name>/stream`, `call_stream`). */
export type StreamingFunction =
  | 'plan_generate'
  | 'chat_send'
  | 'plan_run'
  | 'run_resume'
  | 'planner_eval';

export const FUNCTIONS: readonly ApiFunction[] = [
  'catalog_list',
  'plan_validate',
  'plan_dry_run',
  'plan_register',
  'plan_list',
  'documents_extract',
  'documents_digest',
  'documents_extract_sections',
  'documents_metrics',
  'workbook_patch',
  'workbook_compare',
  'blocks_retrieve',
  'blocks_retrieve_eval',
  'embeddings_prewarm',
  'llm_status',
  'apply_patch',
  'templates_list',
  'requirements_answer',
  'documents_upload',
  'settings_get',
  'settings_save',
  'chat_approve',
  'chat_undo',
  'skills_list',
  'run_get',
  'run_list',
  'run_cancel',
  'run_output',
  'run_apply',
  'run_undo_apply',
  'llm_connection_test',
  'plan_generate',
  'chat_send',
  'plan_run',
  'run_resume',
  'planner_eval',
];

export const STREAMING_FUNCTIONS: readonly StreamingFunction[] = [
  'plan_generate',
  'chat_send',
  'plan_run',
  'run_resume',
  'planner_eval',
];
