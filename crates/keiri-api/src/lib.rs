//! The one crate every front-end calls: the Tauri commands, the `keiri` CLI, `keiri serve`
//! and `keiri mcp`.
//!
//! Each use case is one function taking a [`Context`] and a request DTO from [`json`] and
//! returning a response DTO or an [`ApiError`] carrying a stable [`ErrorCode`]. Front-ends
//! convert their arguments, call the function and convert the result; they never reach into
//! the lower crates. Lower crates never depend on this one, and only this crate and the
//! front-ends know the transport (JSON DTO) types.
//!
//! The API surface is defined once: each function registers itself in its module
//! (`surface::function!`), and [`FUNCTIONS`], [`dispatch`], [`dispatch_stream`], the UI's
//! generated function list and the [`schema`] its types are generated from all come from
//! those registrations, so the HTTP server, the desktop shell and the UI expose exactly one
//! set of functions.

mod apply;
mod chat;
mod connection;
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
mod surface;
pub mod tools;
mod upload;
mod workbook;

pub use apply::{
    RunApplyRequest, RunApplyResponse, RunUndoApplyRequest, RunUndoApplyResponse, run_apply,
    run_undo_apply,
};
pub use chat::{
    ChatApproveRequest, ChatApproveResponse, ChatSendRequest, ChatSendResponse, ChatUndoRequest,
    ChatUndoResponse, PendingChangeSummary, SkillIssue, SkillSummary, SkillsListRequest,
    SkillsListResponse, chat_approve, chat_send, chat_undo, load_skills, skills_list,
};
pub use connection::{LlmConnectionTestRequest, LlmConnectionTestResponse, llm_connection_test};
pub use context::{Context, DEFAULT_DENY, Lang, ProgressHook};
pub use diff::{apply_patch, patches};
pub use documents::{
    docs, documents_digest, documents_extract, documents_extract_sections, documents_metrics,
};
pub use error::{ApiError, ErrorCode};
pub use eval::{
    EvalProgress, PlanEvalRequest, PlanEvalResponse, offline_eval_report, planner_eval,
    planner_eval_report,
};
pub use generate::{
    ApplyMode, GeneratedPlan, GenerationEvent, PlanGenerateRequest, PlanGenerateResponse, Progress,
    RequirementsAnswerRequest, RequirementsAnswerResponse, Stage, Status, TemplatesListRequest,
    TemplatesListResponse, plan_generate, requirements_answer, templates_list,
};
/// What a chat turn reports as it goes (`chat_send`'s events).
pub use keiri_agent::Event as ChatEvent;
pub use keiri_llm::CancellationToken;
/// The id of the node a run inserts to ask a plan's open questions (runtime chat).
pub use keiri_plan::run_chat::RUN_INPUTS;
/// The typed questions a generation asks (`GeneratedPlan::requirements`), for front-ends that
/// ask them themselves (the CLI's terminal prompts).
pub use keiri_plan::{AnswerProblem, Requirement, RequirementKind, ValueType, check_answer};
/// How a run ended and what happened to each node: keiri-run's own types, serialised as they
/// are (`finished`, `paused`, …).
pub use keiri_run::block::ProgressUnit;
pub use keiri_run::{Event as RunEvent, NodeStatus, RunStatus};
pub use llm::{LlmProviderKind, LlmStatusProblem, LlmStatusRequest, LlmStatusResponse, llm_status};
pub use plan::{
    catalog_list, load_catalog, plan_dry_run, plan_import_v0, plan_register, plan_register_at,
    plan_validate,
};
pub use retrieve::{
    EmbeddingsPrewarmRequest, EmbeddingsPrewarmResponse, blocks_retrieve, blocks_retrieve_eval,
    embeddings_prewarm, prewarm, retrieval,
};
pub use run::{
    PlanRunRequest, PlanRunResponse, RunCancelRequest, RunCancelResponse, RunFailure, RunFile,
    RunGetRequest, RunGetResponse, RunListRequest, RunListResponse, RunNode, RunOutputRequest,
    RunOutputResponse, RunPaused, RunResumeRequest, RunSummary, RunWarning, Running, parse_vars,
    plan_run, run_cancel, run_get, run_list, run_output, run_resume,
};
pub use settings::{
    SettingsGetRequest, SettingsGetResponse, SettingsSaveRequest, llm_env, settings_get,
    settings_save,
};
pub use stream::{EventSink, Events, Frame, events};
pub use surface::{FUNCTIONS, STREAMING_FUNCTIONS, dispatch, dispatch_stream, schema, typescript};
pub use upload::{
    DocumentsImportRequest, DocumentsImportResponse, DocumentsUploadRequest,
    DocumentsUploadResponse, ImportedFile, MAX_UPLOAD_BYTES, documents_import, documents_upload,
};
pub use workbook::{
    ContextCell, DescribeOpRequest, ListOpsRequest, ListOpsResponse, MAX_COMPARE_CELLS, OpSummary,
    PathExamples, RuntimeInfo, RuntimeInfoRequest, SheetContext, WorkbookCompareRequest,
    WorkbookCompareResponse, runtime_info, workbook_compare, workbook_describe_op,
    workbook_extract, workbook_list_ops, workbook_make, workbook_patch, workbook_read_cells,
    workbook_read_formulas, workbook_read_range, workbook_validate_input, xlsx,
};
