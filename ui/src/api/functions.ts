// Generated from crates/keiri-api/src/surface.rs — do not edit; `make generated` rewrites it.

/** The functions every transport exposes (`POST /api/<name>`, the desktop `call` command). */
export type ApiFunction =
  | 'catalog_list'
  | 'plan_validate'
  | 'plan_dry_run'
  | 'plan_register'
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
  | 'llm_connection_test'
  | 'apply_patch'
  | 'templates_list'
  | 'requirements_answer'
  | 'planner_eval'
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
  | 'plan_generate'
  | 'chat_send'
  | 'plan_run'
  | 'run_resume';

/** The functions that also stream events (`POST /api/<name>/stream`, `call_stream`). */
export type StreamingFunction =
  | 'plan_generate'
  | 'chat_send'
  | 'plan_run'
  | 'run_resume';

export const FUNCTIONS: readonly ApiFunction[] = [
  'catalog_list',
  'plan_validate',
  'plan_dry_run',
  'plan_register',
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
  'llm_connection_test',
  'apply_patch',
  'templates_list',
  'requirements_answer',
  'planner_eval',
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
  'plan_generate',
  'chat_send',
  'plan_run',
  'run_resume',
];

export const STREAMING_FUNCTIONS: readonly StreamingFunction[] = [
  'plan_generate',
  'chat_send',
  'plan_run',
  'run_resume',
];

/** The rule a plan finding names (keiri-plan's `FindingCode`). */
export type FindingCode =
  | 'yaml.parse'
  | 'plan.shape'
  | 'plan.missing_id'
  | 'node.missing_id'
  | 'node.duplicate_id'
  | 'node.unknown_type'
  | 'node.missing_block'
  | 'node.loop_key_on_non_loop'
  | 'node.feeds_nothing'
  | 'block.unknown'
  | 'input.unknown_key'
  | 'input.enum_mismatch'
  | 'input.missing_required'
  | 'input.type_mismatch'
  | 'output.unknown_key'
  | 'output.unused'
  | 'out.alias_invalid'
  | 'ref.malformed'
  | 'ref.undefined_var'
  | 'ref.unknown_node'
  | 'ref.unknown_alias'
  | 'ref.type_mismatch'
  | 'when.invalid_expr'
  | 'loop.foreach_and_while'
  | 'loop.while_max_iterations'
  | 'loop.max_concurrency'
  | 'loop.missing_iteration'
  | 'loop.foreach_not_iterable'
  | 'loop.missing_body'
  | 'subflow.missing_plan_id'
  | 'subflow.unknown_plan'
  | 'ai.process_llm'
  | 'ai.output_schema_required'
  | 'ai.prompt_required'
  | 'ui.layout_unknown_node'
  | 'column.unknown'
  | 'graph.cycle';
