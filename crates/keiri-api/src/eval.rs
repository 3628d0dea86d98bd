//! The planner eval use case: `planner_eval` runs a case file (see
//! `keiri_design::eval`) against whatever provider is configured (process environment over
//! `<workspace>/.env`), each case `runs` times, and returns the metrics per case and in
//! total: first-pass validity, validity after repair, unknown ids / keys (must be zero),
//! what the guards rejected, and consistency over the runs.
//!
//! Unlike `plan_generate`, a missing provider is an error here (`LLM_NOT_CONFIGURED`, naming
//! the variables): there is nothing to evaluate offline.

use serde::{Deserialize, Serialize};

use crate::{ApiError, Context, ErrorCode, Lang};

/// The report types and the text formatter of the planner eval.
pub mod planner_eval_report {
    pub use keiri_design::eval::{
        CaseReport, EvalCase, EvalReport, RunError, RunOutcome, Totals, UnknownCounts,
        format_report,
    };
}

/// The offline composer's eval (`keiri eval offline`): the case file, the judging and the
/// report. Its cases run through [`crate::plan_generate`] in compose mode, as a user's request.
pub mod offline_eval_report {
    pub use keiri_design::offline_eval::{
        OfflineCase, OfflineOutcome, OfflineReport, format_offline_report, judge,
        load_offline_cases, summarize,
    };
}

use keiri_design::eval::{DEFAULT_RUNS, EvalReport, RunOutcome};

/// Most runs per case one call may ask for (each run is two model calls or more).
pub const MAX_RUNS: u32 = 20;

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanEvalRequest {
    /// The case file (YAML, see `evals/planner_cases.yaml`), inside the workspace.
    pub cases: String,
    /// Runs per case (default 3, at most 20).
    #[serde(default)]
    pub runs: Option<u32>,
    /// Repair rounds after the first wiring (default 2).
    #[serde(default)]
    pub max_repair: Option<u32>,
    /// Only the cases with these ids (default: all).
    #[serde(default)]
    pub only: Vec<String>,
    /// Message language, `ja` or `en`; the server's default when left out.
    #[serde(default)]
    #[schemars(schema_with = "crate::json::lang_schema")]
    pub lang: Option<Lang>,
}

/// One progress event of an eval.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EvalProgress {
    /// Case `index` (1-based) of `of` starts.
    Case {
        index: usize,
        of: usize,
        id: String,
        runs: u32,
    },
    /// A run of the current case ended.
    Run { case: String, outcome: RunOutcome },
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PlanEvalResponse {
    #[serde(flatten)]
    pub report: EvalReport,
    /// The provider and model the cases ran against (secrets redacted).
    pub provider: String,
    pub model: String,
    /// Documents of a case that could not be read, as `case: path: CODE message`.
    pub notes: Vec<String>,
}

impl PlanEvalResponse {
    /// True when an unknown block id or key reached a plan: the eval fails.
    pub fn has_unknown(&self) -> bool {
        self.report.total.unknown.total() > 0
    }
}

fn cases_error(e: keiri_design::eval::CaseFileError) -> ApiError {
    let code = match e.code() {
        "NOT_FOUND" => ErrorCode::NotFound,
        "IO_ERROR" => ErrorCode::IoError,
        "EVAL_CASES_TOO_LARGE" => ErrorCode::FileTooLarge,
        _ => ErrorCode::InvalidRequest,
    };
    let line = e.line();
    ApiError::new(code, e.to_string())
        .with_details(serde_json::json!({"code": e.code(), "line": line}))
}

/// What an eval reads before its first model call: all of it blocking work (the case file,
/// documents, catalog, templates, the embedding model), done once on the blocking pool.
struct Prepared {
    cases: Vec<keiri_design::eval::EvalCase>,
    runs: u32,
    llm: keiri_llm::Llm,
    status: keiri_llm::StatusResponse,
    catalog: std::sync::Arc<keiri_plan::Catalog>,
    templates: std::sync::Arc<keiri_plan::Templates>,
    retriever: std::sync::Arc<keiri_search::Retriever>,
    subflow_plans: Vec<Vec<keiri_design::schema::PlanCandidate>>,
    digests: Vec<String>,
    notes: Vec<String>,
    base: keiri_design::GenerateOptions,
    log: Option<keiri_llm::EventLog>,
}

/// Runs the case file (see the module docs), sending an event as each case starts and each
/// run ends; `cancel` stops it between model calls (the result is then `CANCELLED`).
pub async fn planner_eval(
    ctx: &Context,
    req: PlanEvalRequest,
    events: &crate::EventSink<EvalProgress>,
    cancel: &keiri_llm::CancellationToken,
) -> Result<PlanEvalResponse, ApiError> {
    let prepared = tokio::select! {
        prepared = crate::stream::blocking(ctx, move |ctx| prepare(ctx, req)) => prepared?,
        () = cancel.cancelled() => return Err(cancelled()),
    };
    let mut dctx = keiri_design::Context::new(&prepared.catalog, &prepared.templates)
        .with_llm(&prepared.llm)
        .with_retriever(&prepared.retriever);
    dctx.call_options = dctx.call_options.clone().with_cancel(cancel.clone());
    if let Some(log) = prepared.log {
        dctx = dctx.with_log(log);
    }
    let mut reports = Vec::new();
    for (i, ((case, digest), plans)) in prepared
        .cases
        .iter()
        .zip(&prepared.digests)
        .zip(&prepared.subflow_plans)
        .enumerate()
    {
        if cancel.is_cancelled() {
            return Err(cancelled());
        }
        dctx.subflow_plans = plans.clone();
        events.send(EvalProgress::Case {
            index: i + 1,
            of: prepared.cases.len(),
            id: case.id.clone(),
            runs: prepared.runs,
        });
        let mut on_run = |o: &RunOutcome| {
            events.send(EvalProgress::Run {
                case: case.id.clone(),
                outcome: o.clone(),
            });
        };
        let outcomes = tokio::select! {
            out = keiri_design::eval::run_case(case, digest, prepared.runs, &prepared.base, &dctx, &mut on_run) => out,
            () = cancel.cancelled() => return Err(cancelled()),
        }
        .map_err(|e| {
            ApiError::new(ErrorCode::LlmNotConfigured, e.to_string())
                .with_details(serde_json::json!({"code": e.code()}))
        })?;
        reports.push(keiri_design::eval::case_report(case, outcomes));
    }
    Ok(PlanEvalResponse {
        report: keiri_design::eval::summarize(reports),
        provider: prepared
            .status
            .provider
            .map(|p| p.as_str().to_string())
            .unwrap_or_default(),
        model: prepared.status.model,
        notes: prepared.notes,
    })
}
crate::surface::function!(streaming planner_eval(crate::PlanEvalRequest) -> crate::PlanEvalResponse, events crate::EvalProgress);

fn cancelled() -> ApiError {
    ApiError::new(ErrorCode::Cancelled, "the eval was cancelled")
}

fn prepare(ctx: &Context, req: PlanEvalRequest) -> Result<Prepared, ApiError> {
    let runs = req.runs.unwrap_or(DEFAULT_RUNS);
    if runs == 0 || runs > MAX_RUNS {
        return Err(ApiError::new(
            ErrorCode::InvalidRequest,
            format!("runs must be 1 to {MAX_RUNS}, got {runs}"),
        ));
    }
    let path = ctx.path_policy().resolve_existing(&req.cases)?;
    let mut cases = keiri_design::eval::load_cases(&path).map_err(cases_error)?;
    if !req.only.is_empty() {
        if let Some(missing) = req
            .only
            .iter()
            .find(|id| !cases.iter().any(|c| &c.id == *id))
        {
            return Err(ApiError::new(
                ErrorCode::InvalidRequest,
                format!("no case {missing:?} in {}", req.cases),
            ));
        }
        cases.retain(|c| req.only.contains(&c.id));
    }
    // The process environment over `<workspace>/.env` over the saved settings and keychain.
    let env = crate::settings::llm_env(ctx)?;
    let llm = keiri_llm::Llm::from_env(&env).map_err(|e| {
        let code = if matches!(e, keiri_llm::Error::NotConfigured) {
            ErrorCode::LlmNotConfigured
        } else {
            ErrorCode::InvalidRequest
        };
        ApiError::new(code, format!("the planner eval needs an LLM: {e}"))
            .with_details(serde_json::json!({"code": e.code()}))
    })?;
    let status = keiri_llm::status(&env);
    let (catalog, _) = crate::load_catalog(ctx);
    let unknown = keiri_design::eval::unknown_expected_blocks(&cases, &catalog);
    if !unknown.is_empty() {
        let list: Vec<String> = unknown.iter().map(|(c, b)| format!("{c}: {b}")).collect();
        return Err(ApiError::new(
            ErrorCode::InvalidRequest,
            format!(
                "expect_blocks names blocks the catalog does not have: {}",
                list.join(", ")
            ),
        ));
    }
    let (templates, _) = crate::plan::load_templates(ctx);
    let mut notes = Vec::new();
    // The retriever the window, the chat and MCP search, as in `plan_generate`.
    let (retriever, _) =
        crate::retrieve::shared_retriever(ctx, crate::retrieve::Embedding::Wait, &mut notes)?;
    let registered = crate::generate::registered_plans(ctx);
    let mut subflow_plans = Vec::new();
    for case in &cases {
        let mut plans = registered.clone();
        for file in &case.plans {
            let plan = case_plan(ctx, file).map_err(|e| {
                ApiError::new(
                    e.code,
                    format!("case {}: plan {file}: {}", case.id, e.message),
                )
            })?;
            plans.retain(|p| p.id != plan.id);
            plans.push(plan);
        }
        subflow_plans.push(plans);
    }
    let mut digests = Vec::new();
    for case in &cases {
        let digest = keiri_design::digest_documents(
            &ctx.path_policy(),
            &case.docs,
            keiri_design::DEFAULT_MAX_DOCS_CHARS,
        )
        .map_err(|e| ApiError::lower(&e))?;
        notes.extend(
            digest
                .unreadable
                .iter()
                .map(|u| format!("{}: {u}", case.id)),
        );
        digests.push(digest.digest);
    }
    let base = keiri_design::GenerateOptions {
        max_repair_attempts: req
            .max_repair
            .unwrap_or(keiri_design::DEFAULT_MAX_REPAIR_ATTEMPTS),
        lang: req.lang.unwrap_or(ctx.lang),
        ..keiri_design::GenerateOptions::default()
    };
    // One JSONL event log for the whole eval; a log that cannot be opened must not stop it.
    let log = crate::llm::event_log(ctx, &env, None);
    Ok(Prepared {
        cases,
        runs,
        llm,
        status,
        catalog,
        templates,
        retriever,
        subflow_plans,
        digests,
        notes,
        base,
        log,
    })
}

/// The plan in `file` (a path inside the workspace) that a case may call.
fn case_plan(ctx: &Context, file: &str) -> Result<keiri_design::schema::PlanCandidate, ApiError> {
    let path = ctx.path_policy().resolve_existing(file)?;
    let text = std::fs::read_to_string(&path)
        .map_err(|e| ApiError::new(ErrorCode::InvalidRequest, format!("cannot be read: {e}")))?;
    let loaded = keiri_plan::load_plan(&text)
        .map_err(|e| ApiError::new(ErrorCode::InvalidRequest, e.to_string()))?;
    Ok(keiri_design::schema::PlanCandidate::from_plan(&loaded.plan))
}
