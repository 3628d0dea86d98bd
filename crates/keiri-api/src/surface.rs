//! The API surface, defined once.
//!
//! The table at the bottom of this file is the only place a function of the API is named.
//! From it come:
//! - [`FUNCTIONS`] and [`STREAMING_FUNCTIONS`], the lists every front-end checks against;
//! - [`dispatch`], the entry point `keiri serve` (`POST /api/<name>`) and the desktop shell's
//!   one `call` command use;
//! - [`dispatch_stream`], the same for the streamed calls (`POST /api/<name>/stream`, the
//!   shell's `call_stream`);
//! - [`typescript`], the UI's `ui/src/api/functions.ts`, with keiri-plan's finding codes too
//!   (a test fails when the checked-in file is stale; `make generated` rewrites it).
//!
//! A streaming function has one shape, `fn(&Context, Req, &mut dyn FnMut(Value),
//! &CancellationToken) -> Result<Res, ApiError>`, and is callable without events through
//! [`dispatch`] too.
//!
//! Adding a function: write it (with its request and response types) in its module, then add
//! one line to the table.

use keiri_llm::CancellationToken;
use serde_json::Value;

use crate::{ApiError, Context, ErrorCode};

/// Parses an untrusted JSON body into a request (a missing body is `{}`).
fn parse<Req: serde::de::DeserializeOwned>(body: Value) -> Result<Req, ApiError> {
    let body = if body.is_null() {
        serde_json::json!({})
    } else {
        body
    };
    serde_json::from_value(body).map_err(|e| {
        ApiError::new(
            ErrorCode::InvalidRequest,
            format!("invalid request body: {e}"),
        )
    })
}

fn to_json<Res: serde::Serialize>(res: Res) -> Result<Value, ApiError> {
    serde_json::to_value(res)
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("serialising result: {e}")))
}

macro_rules! surface {
    (
        plain { $( $name:ident ( $req:ty ) -> $res:ty = $f:path ; )* }
        streaming { $( $sname:ident ( $sreq:ty ) -> $sres:ty = $sf:path ; )* }
    ) => {
        /// Names of the functions [`dispatch`] accepts, in a stable order (the streaming ones
        /// last).
        pub const FUNCTIONS: &[&str] = &[ $( stringify!($name), )* $( stringify!($sname), )* ];

        /// Names of the functions [`dispatch_stream`] accepts (each is also in [`FUNCTIONS`],
        /// callable without events).
        pub const STREAMING_FUNCTIONS: &[&str] = &[ $( stringify!($sname), )* ];

        /// Calls the function `name` with a JSON `body` and returns its JSON result.
        ///
        /// The body is untrusted: one that does not match the request type is
        /// [`ErrorCode::InvalidRequest`], never a panic. A streaming function runs with its
        /// events dropped and no way to cancel it.
        pub fn dispatch(ctx: &Context, name: &str, body: Value) -> Result<Value, ApiError> {
            match name {
                $( stringify!($name) => {
                    let req: $req = parse(body)?;
                    let res: $res = $f(ctx, req)?;
                    to_json(res)
                } )*
                $( stringify!($sname) => {
                    let req: $sreq = parse(body)?;
                    let res: $sres = $sf(ctx, req, &mut |_| {}, &CancellationToken::new())?;
                    to_json(res)
                } )*
                _ => Err(ApiError::new(
                    ErrorCode::NotFound,
                    format!("unknown function: {name}"),
                )),
            }
        }

        /// Calls the streaming function `name` with a JSON `body`, passing each event to
        /// `on_event` as it happens, and returns the function's JSON result.
        ///
        /// `cancel` stops the call as soon as it can; the result is then
        /// [`ErrorCode::Cancelled`]. A name that is not in [`STREAMING_FUNCTIONS`] is
        /// [`ErrorCode::NotFound`]; a body that does not match the request type is
        /// [`ErrorCode::InvalidRequest`].
        pub fn dispatch_stream(
            ctx: &Context,
            name: &str,
            body: Value,
            on_event: &mut dyn FnMut(Value),
            cancel: &CancellationToken,
        ) -> Result<Value, ApiError> {
            if cancel.is_cancelled() {
                return Err(ApiError::new(ErrorCode::Cancelled, "the call was cancelled"));
            }
            match name {
                $( stringify!($sname) => {
                    let req: $sreq = parse(body)?;
                    let res: $sres = $sf(ctx, req, on_event, cancel)?;
                    to_json(res)
                } )*
                _ => Err(ApiError::new(
                    ErrorCode::NotFound,
                    format!("unknown streaming function: {name}"),
                )),
            }
        }
    };
}

surface! {
    plain {
        catalog_list(crate::json::CatalogListRequest) -> crate::json::CatalogListResponse = crate::catalog_list;
        plan_validate(crate::json::PlanValidateRequest) -> crate::json::PlanValidateResponse = crate::plan_validate;
        plan_dry_run(crate::json::PlanDryRunRequest) -> crate::json::PlanDryRunResponse = crate::plan_dry_run;
        plan_register(crate::json::PlanRegisterRequest) -> crate::json::PlanRegisterResponse = crate::plan_register;
        documents_extract(crate::docs::ExtractRequest) -> crate::docs::Output<crate::docs::ExtractResponse> = crate::documents_extract;
        documents_digest(crate::docs::DigestRequest) -> crate::docs::Output<crate::docs::DigestResponse> = crate::documents_digest;
        documents_extract_sections(crate::docs::SectionsRequest) -> crate::docs::Output<crate::docs::SectionsResponse> = crate::documents_extract_sections;
        documents_metrics(crate::docs::MetricsRequest) -> crate::docs::Output<crate::docs::MetricsResponse> = crate::documents_metrics;
        workbook_patch(crate::xlsx::PatchRequest) -> crate::xlsx::PatchResponse = crate::workbook_patch;
        workbook_compare(crate::WorkbookCompareRequest) -> crate::WorkbookCompareResponse = crate::workbook_compare;
        blocks_retrieve(crate::retrieval::RetrieveRequest) -> crate::retrieval::RetrieveResponse = crate::blocks_retrieve;
        blocks_retrieve_eval(crate::retrieval::RetrieveEvalRequest) -> crate::retrieval::EvalReport = crate::blocks_retrieve_eval;
        embeddings_prewarm(crate::EmbeddingsPrewarmRequest) -> crate::EmbeddingsPrewarmResponse = crate::embeddings_prewarm;
        llm_status(crate::LlmStatusRequest) -> crate::LlmStatusResponse = crate::llm_status;
        llm_connection_test(crate::LlmConnectionTestRequest) -> crate::LlmConnectionTestResponse = crate::llm_connection_test;
        apply_patch(crate::patches::ApplyPatchRequest) -> crate::patches::ApplyPatchResult = crate::apply_patch;
        templates_list(crate::TemplatesListRequest) -> crate::TemplatesListResponse = crate::templates_list;
        requirements_answer(crate::RequirementsAnswerRequest) -> crate::RequirementsAnswerResponse = crate::requirements_answer;
        planner_eval(crate::PlanEvalRequest) -> crate::PlanEvalResponse = crate::planner_eval;
        documents_upload(crate::DocumentsUploadRequest) -> crate::DocumentsUploadResponse = crate::documents_upload;
        settings_get(crate::SettingsGetRequest) -> crate::SettingsGetResponse = crate::settings_get;
        settings_save(crate::SettingsSaveRequest) -> crate::SettingsGetResponse = crate::settings_save;
        chat_approve(crate::ChatApproveRequest) -> crate::ChatApproveResponse = crate::chat_approve;
        chat_undo(crate::ChatUndoRequest) -> crate::ChatUndoResponse = crate::chat_undo;
        skills_list(crate::SkillsListRequest) -> crate::SkillsListResponse = crate::skills_list;
        run_get(crate::RunGetRequest) -> crate::RunGetResponse = crate::run_get;
        run_list(crate::RunListRequest) -> crate::RunListResponse = crate::run_list;
        run_cancel(crate::RunCancelRequest) -> crate::RunCancelResponse = crate::run_cancel;
        run_output(crate::RunOutputRequest) -> crate::RunOutputResponse = crate::run_output;
        run_apply(crate::RunApplyRequest) -> crate::RunApplyResponse = crate::run_apply;
        run_undo_apply(crate::RunUndoApplyRequest) -> crate::RunUndoApplyResponse = crate::run_undo_apply;
    }
    streaming {
        plan_generate(crate::PlanGenerateRequest) -> crate::PlanGenerateResponse = crate::generate::plan_generate_stream;
        chat_send(crate::ChatSendRequest) -> crate::ChatSendResponse = crate::chat_send_stream;
        plan_run(crate::PlanRunRequest) -> crate::PlanRunResponse = crate::run::plan_run_stream;
        run_resume(crate::RunResumeRequest) -> crate::PlanRunResponse = crate::run::run_resume_stream;
    }
}

/// The UI's `ui/src/api/functions.ts`: the function names as TypeScript types, generated
/// from the table above so the UI cannot call a function the server does not have.
pub fn typescript() -> String {
    let finding_codes: Vec<&str> = keiri_plan::FindingCode::ALL
        .iter()
        .map(|c| c.as_str())
        .collect();
    let union = |names: &[&str]| -> String {
        names
            .iter()
            .map(|n| format!("\n  | '{n}'"))
            .collect::<String>()
    };
    let list = |names: &[&str]| -> String {
        names
            .iter()
            .map(|n| format!("\n  '{n}',"))
            .collect::<String>()
    };
    format!(
        "// Generated from crates/keiri-api/src/surface.rs — do not edit; `make generated` rewrites it.\n\
         \n\
         /** The functions every transport exposes (`POST /api/<name>`, the desktop `call` command). */\n\
         export type ApiFunction ={};\n\
         \n\
         /** The functions that also stream events (`POST /api/<name>/stream`, `call_stream`). */\n\
         export type StreamingFunction ={};\n\
         \n\
         export const FUNCTIONS: readonly ApiFunction[] = [{}\n];\n\
         \n\
         export const STREAMING_FUNCTIONS: readonly StreamingFunction[] = [{}\n];\n\
         \n\
         /** The rule a plan finding names (keiri-plan's `FindingCode`). */\n\
         export type FindingCode ={};\n",
        union(FUNCTIONS),
        union(STREAMING_FUNCTIONS),
        list(FUNCTIONS),
        list(STREAMING_FUNCTIONS),
        union(&finding_codes),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(dir: &std::path::Path) -> Context {
        crate::context::test_context(dir)
    }

    #[test]
    fn the_generated_typescript_is_current() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/api/functions.ts");
        let want = typescript();
        if std::env::var_os("KEIRI_UPDATE_GENERATED").is_some() {
            keiri_fs::write_atomic(&path, want.as_bytes()).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "ui/src/api/functions.ts is stale: run `make generated`"
        );
    }

    /// docs/api.md is prose, not a definition, but it must not fall behind the table: every
    /// function has its row or section there.
    #[test]
    fn the_api_reference_documents_every_function() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/api.md");
        let doc = std::fs::read_to_string(&path).unwrap();
        let missing: Vec<&str> = FUNCTIONS
            .iter()
            .copied()
            .filter(|name| !doc.contains(&format!("`{name}`")))
            .collect();
        assert!(
            missing.is_empty(),
            "docs/api.md does not document {missing:?}"
        );
    }

    #[test]
    fn names_are_unique_and_streaming_ones_are_functions() {
        let mut names = FUNCTIONS.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), FUNCTIONS.len());
        for name in STREAMING_FUNCTIONS {
            assert!(FUNCTIONS.contains(name), "{name}");
        }
    }

    #[test]
    fn every_function_parses_its_body_before_running() {
        // A body no request type accepts: each function is found, then refuses it.
        let dir = tempfile::tempdir().unwrap();
        let ctx = ctx(dir.path());
        for name in FUNCTIONS {
            let err = dispatch(&ctx, name, serde_json::json!(42)).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidRequest, "{name}: {err:?}");
        }
        let err = dispatch(&ctx, "no_such_function", Value::Null).unwrap_err();
        assert_eq!(err.code, ErrorCode::NotFound);
    }
}
