//! The one crate every front-end calls: the Tauri commands, the `keiri` CLI, `keiri serve`
//! and `keiri mcp`.
//!
//! Each use case is one function taking a [`Context`] and a request DTO from [`json`] and
//! returning a response DTO or an [`ApiError`] carrying a stable [`ErrorCode`]. Front-ends
//! convert their arguments, call the function and convert the result; they never reach into
//! the lower crates. Lower crates never depend on this one, and only this crate and the
//! front-ends know the transport (JSON DTO) types.
//!
//! [`dispatch`] maps a function name and a JSON body to the same functions, so the HTTP
//! server and the Tauri shell expose exactly one set of functions.

mod chat;
mod context;
mod diff;
mod documents;
mod error;
mod eval;
mod generate;
pub mod json;
mod llm;
mod plan;
mod retrieve;
mod run;
pub mod settings;
mod stream;
mod upload;
mod workbook;

pub use chat::{
    ChatApproveRequest, ChatApproveResponse, ChatSendRequest, ChatSendResponse, ChatUndoRequest,
    ChatUndoResponse, PendingChangeSummary, SkillIssue, SkillSummary, SkillsListRequest,
    SkillsListResponse, chat_approve, chat_send, chat_send_stream, chat_undo, load_skills,
    skills_list,
};
pub use context::{Context, DEFAULT_DENY, Lang};
pub use diff::{apply_patch, patches};
pub use documents::{
    docs, documents_digest, documents_extract, documents_extract_sections, documents_metrics,
};
pub use error::{ApiError, ErrorCode};
pub use eval::{
    EvalProgress, PlanEvalRequest, PlanEvalResponse, planner_eval, planner_eval_report,
    planner_eval_with_progress,
};
pub use generate::{
    ApplyMode, GeneratedPlan, PlanGenerateRequest, PlanGenerateResponse, Progress,
    RequirementsAnswerRequest, RequirementsAnswerResponse, Stage, Status, TemplatesListRequest,
    TemplatesListResponse, plan_generate, plan_generate_cancellable, plan_generate_with_progress,
    requirements_answer, templates_list,
};
pub use keiri_llm::CancellationToken;
/// The typed questions a generation asks (`GeneratedPlan::requirements`), for front-ends that
/// ask them themselves (the CLI's terminal prompts).
pub use keiri_plan::{Requirement, RequirementKind, ValueType};
pub use llm::{LlmProviderKind, LlmStatusProblem, LlmStatusRequest, LlmStatusResponse, llm_status};
pub use plan::{
    catalog_list, load_catalog, plan_dry_run, plan_register, plan_register_at, plan_validate,
};
pub use retrieve::{blocks_retrieve, blocks_retrieve_eval, retrieval};
pub use run::{
    PlanRunRequest, PlanRunResponse, RunEventSink, RunFailure, RunGetRequest, RunGetResponse,
    RunListRequest, RunListResponse, RunNode, RunResumeRequest, RunSummary, parse_vars, plan_run,
    run_get, run_list, run_resume,
};
pub use settings::{
    SettingsGetRequest, SettingsGetResponse, SettingsSaveRequest, llm_env, settings_get,
    settings_save,
};
pub use stream::{Frame, STREAMING_FUNCTIONS, dispatch_stream};
pub use upload::{
    DocumentsImportRequest, DocumentsImportResponse, DocumentsUploadRequest,
    DocumentsUploadResponse, ImportedFile, MAX_UPLOAD_BYTES, documents_import, documents_upload,
};
pub use workbook::{workbook_patch, xlsx};

/// Names of the functions [`dispatch`] accepts, in a stable order.
pub const FUNCTIONS: &[&str] = &[
    "catalog_list",
    "plan_validate",
    "plan_dry_run",
    "plan_register",
    "documents_extract",
    "documents_digest",
    "documents_extract_sections",
    "documents_metrics",
    "workbook_patch",
    "blocks_retrieve",
    "blocks_retrieve_eval",
    "llm_status",
    "apply_patch",
    "templates_list",
    "plan_generate",
    "requirements_answer",
    "planner_eval",
    "documents_upload",
    "settings_get",
    "settings_save",
    "chat_send",
    "chat_approve",
    "chat_undo",
    "skills_list",
];

/// Calls the function `name` with a JSON `body` and returns its JSON result.
///
/// This is the single entry point of the loopback HTTP API (`POST /api/<name>`); the request
/// body is untrusted, so a body that does not match the request type is an
/// [`ErrorCode::InvalidRequest`], never a panic.
pub fn dispatch(
    ctx: &Context,
    name: &str,
    body: serde_json::Value,
) -> Result<serde_json::Value, ApiError> {
    fn run<Req, Res>(
        body: serde_json::Value,
        f: impl FnOnce(Req) -> Result<Res, ApiError>,
    ) -> Result<serde_json::Value, ApiError>
    where
        Req: serde::de::DeserializeOwned,
        Res: serde::Serialize,
    {
        let body = if body.is_null() {
            serde_json::json!({})
        } else {
            body
        };
        let req: Req = serde_json::from_value(body).map_err(|e| {
            ApiError::new(
                ErrorCode::InvalidRequest,
                format!("invalid request body: {e}"),
            )
        })?;
        let res = f(req)?;
        serde_json::to_value(res)
            .map_err(|e| ApiError::new(ErrorCode::Internal, format!("serialising result: {e}")))
    }
    match name {
        "catalog_list" => run(body, |r| catalog_list(ctx, r)),
        "plan_validate" => run(body, |r| plan_validate(ctx, r)),
        "plan_dry_run" => run(body, |r| plan_dry_run(ctx, r)),
        "plan_register" => run(body, |r| plan_register(ctx, r)),
        "documents_extract" => run(body, |r| documents_extract(ctx, r)),
        "documents_digest" => run(body, |r| documents_digest(ctx, r)),
        "documents_extract_sections" => run(body, |r| documents_extract_sections(ctx, r)),
        "documents_metrics" => run(body, |r| documents_metrics(ctx, r)),
        "workbook_patch" => run(body, |r| workbook_patch(ctx, r)),
        "blocks_retrieve" => run(body, |r| blocks_retrieve(ctx, r)),
        "blocks_retrieve_eval" => run(body, |r| blocks_retrieve_eval(ctx, r)),
        "llm_status" => run(body, |r| llm_status(ctx, r)),
        "apply_patch" => run(body, |r| apply_patch(ctx, r)),
        "templates_list" => run(body, |r| templates_list(ctx, r)),
        "plan_generate" => run(body, |r| plan_generate(ctx, r)),
        "requirements_answer" => run(body, |r| requirements_answer(ctx, r)),
        "planner_eval" => run(body, |r| planner_eval(ctx, r)),
        "documents_upload" => run(body, |r| documents_upload(ctx, r)),
        "settings_get" => run(body, |r| settings_get(ctx, r)),
        "settings_save" => run(body, |r| settings_save(ctx, r)),
        "chat_send" => run(body, |r| chat_send(ctx, r)),
        "chat_approve" => run(body, |r| chat_approve(ctx, r)),
        "chat_undo" => run(body, |r| chat_undo(ctx, r)),
        "skills_list" => run(body, |r| skills_list(ctx, r)),
        _ => Err(ApiError::new(
            ErrorCode::NotFound,
            format!("unknown function: {name}"),
        )),
    }
}
