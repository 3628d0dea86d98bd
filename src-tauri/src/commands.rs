//! One Tauri command per keiri-api function, named like it, so the UI's
//! `invoke("<function>", { request })` mirrors `POST /api/<function>` exactly.
//!
//! Each command only hands its request to keiri-api; `ApiError` serialises to
//! `{code, message, details?}`, which the UI's transport turns into its `ApiError`.
//! The commands are `async` so Tauri runs them off the main thread: reading the catalog or
//! writing a design never stalls the window's event loop.
//!
//! They live in this module rather than at the crate root because `#[tauri::command]`
//! generates a macro with the function's name, which collides at the root (E0255).

use keiri_api::{ApiError, Context, docs, json, patches, retrieval, xlsx};
use tauri::State;

#[tauri::command(async)]
pub fn catalog_list(
    ctx: State<'_, Context>,
    request: json::CatalogListRequest,
) -> Result<json::CatalogListResponse, ApiError> {
    keiri_api::catalog_list(&ctx, request)
}

#[tauri::command(async)]
pub fn plan_validate(
    ctx: State<'_, Context>,
    request: json::PlanValidateRequest,
) -> Result<json::PlanValidateResponse, ApiError> {
    keiri_api::plan_validate(&ctx, request)
}

#[tauri::command(async)]
pub fn plan_dry_run(
    ctx: State<'_, Context>,
    request: json::PlanDryRunRequest,
) -> Result<json::PlanDryRunResponse, ApiError> {
    keiri_api::plan_dry_run(&ctx, request)
}

#[tauri::command(async)]
pub fn plan_register(
    ctx: State<'_, Context>,
    request: json::PlanRegisterRequest,
) -> Result<json::PlanRegisterResponse, ApiError> {
    keiri_api::plan_register(&ctx, request)
}

#[tauri::command(async)]
pub fn documents_extract(
    ctx: State<'_, Context>,
    request: docs::ExtractRequest,
) -> Result<docs::Output<docs::ExtractResponse>, ApiError> {
    keiri_api::documents_extract(&ctx, request)
}

#[tauri::command(async)]
pub fn documents_digest(
    ctx: State<'_, Context>,
    request: docs::DigestRequest,
) -> Result<docs::Output<docs::DigestResponse>, ApiError> {
    keiri_api::documents_digest(&ctx, request)
}

#[tauri::command(async)]
pub fn documents_extract_sections(
    ctx: State<'_, Context>,
    request: docs::SectionsRequest,
) -> Result<docs::Output<docs::SectionsResponse>, ApiError> {
    keiri_api::documents_extract_sections(&ctx, request)
}

#[tauri::command(async)]
pub fn documents_metrics(
    ctx: State<'_, Context>,
    request: docs::MetricsRequest,
) -> Result<docs::Output<docs::MetricsResponse>, ApiError> {
    keiri_api::documents_metrics(&ctx, request)
}

#[tauri::command(async)]
pub fn workbook_patch(
    ctx: State<'_, Context>,
    request: xlsx::PatchRequest,
) -> Result<xlsx::PatchResponse, ApiError> {
    keiri_api::workbook_patch(&ctx, request)
}

#[tauri::command(async)]
pub fn blocks_retrieve(
    ctx: State<'_, Context>,
    request: retrieval::RetrieveRequest,
) -> Result<retrieval::RetrieveResponse, ApiError> {
    keiri_api::blocks_retrieve(&ctx, request)
}

#[tauri::command(async)]
pub fn blocks_retrieve_eval(
    ctx: State<'_, Context>,
    request: retrieval::RetrieveEvalRequest,
) -> Result<retrieval::EvalReport, ApiError> {
    keiri_api::blocks_retrieve_eval(&ctx, request)
}

#[tauri::command(async)]
pub fn llm_status(
    ctx: State<'_, Context>,
    request: keiri_api::LlmStatusRequest,
) -> Result<keiri_api::LlmStatusResponse, ApiError> {
    keiri_api::llm_status(&ctx, request)
}

#[tauri::command(async)]
pub fn apply_patch(
    ctx: State<'_, Context>,
    request: patches::ApplyPatchRequest,
) -> Result<patches::ApplyPatchResult, ApiError> {
    keiri_api::apply_patch(&ctx, request)
}

#[tauri::command(async)]
pub fn templates_list(
    ctx: State<'_, Context>,
    request: keiri_api::TemplatesListRequest,
) -> Result<keiri_api::TemplatesListResponse, ApiError> {
    keiri_api::templates_list(&ctx, request)
}

#[tauri::command(async)]
pub fn plan_generate(
    ctx: State<'_, Context>,
    request: keiri_api::PlanGenerateRequest,
) -> Result<keiri_api::PlanGenerateResponse, ApiError> {
    keiri_api::plan_generate(&ctx, request)
}

#[tauri::command(async)]
pub fn requirements_answer(
    ctx: State<'_, Context>,
    request: keiri_api::RequirementsAnswerRequest,
) -> Result<keiri_api::RequirementsAnswerResponse, ApiError> {
    keiri_api::requirements_answer(&ctx, request)
}

#[tauri::command(async)]
pub fn documents_upload(
    ctx: State<'_, Context>,
    request: keiri_api::DocumentsUploadRequest,
) -> Result<keiri_api::DocumentsUploadResponse, ApiError> {
    keiri_api::documents_upload(&ctx, request)
}

#[tauri::command(async)]
pub fn planner_eval(
    ctx: State<'_, Context>,
    request: keiri_api::PlanEvalRequest,
) -> Result<keiri_api::PlanEvalResponse, ApiError> {
    keiri_api::planner_eval(&ctx, request)
}

#[tauri::command(async)]
pub fn settings_get(
    ctx: State<'_, Context>,
    request: keiri_api::SettingsGetRequest,
) -> Result<keiri_api::SettingsGetResponse, ApiError> {
    keiri_api::settings_get(&ctx, request)
}

#[tauri::command(async)]
pub fn settings_save(
    ctx: State<'_, Context>,
    request: keiri_api::SettingsSaveRequest,
) -> Result<keiri_api::SettingsGetResponse, ApiError> {
    keiri_api::settings_save(&ctx, request)
}

#[tauri::command(async)]
pub fn chat_send(
    ctx: State<'_, Context>,
    request: keiri_api::ChatSendRequest,
) -> Result<keiri_api::ChatSendResponse, ApiError> {
    keiri_api::chat_send(&ctx, request)
}

#[tauri::command(async)]
pub fn chat_approve(
    ctx: State<'_, Context>,
    request: keiri_api::ChatApproveRequest,
) -> Result<keiri_api::ChatApproveResponse, ApiError> {
    keiri_api::chat_approve(&ctx, request)
}

#[tauri::command(async)]
pub fn chat_undo(
    ctx: State<'_, Context>,
    request: keiri_api::ChatUndoRequest,
) -> Result<keiri_api::ChatUndoResponse, ApiError> {
    keiri_api::chat_undo(&ctx, request)
}

#[tauri::command(async)]
pub fn skills_list(
    ctx: State<'_, Context>,
    request: keiri_api::SkillsListRequest,
) -> Result<keiri_api::SkillsListResponse, ApiError> {
    keiri_api::skills_list(&ctx, request)
}
