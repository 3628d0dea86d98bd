//! What a generation is given and gives back — how templates are used ([`ApplyMode`]), the
//! options, the [`Context`] of catalogs, files and hooks, the stages reported, the questions'
//! and findings' shapes and the [`GeneratedPlan`] — and the one structured LLM call of a
//! planner stage ([`ask`]). Below the pipeline (`generate/mod.rs`) and its stages, so each
//! stage depends on these and not on the pipeline.

use keiri_llm::{CallOptions, Event, EventLog, Llm, StructuredRequest, Usage};
use keiri_plan::{Catalog, Finding, Lang, Plan, Requirement, Templates};
use keiri_search::Retriever;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::mpsc::UnboundedSender;

use crate::Error;
use crate::schema::{self, ContractProblem};

/// How templates are used.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ApplyMode {
    /// Merge templates by their contracts, no LLM (works offline).
    Compose,
    /// Templates' summaries and snippets go into the prompt as constraints.
    #[default]
    Hint,
    /// The LLM alone, from the retrieved candidates.
    LlmOnly,
}

impl ApplyMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ApplyMode::Compose => "compose",
            ApplyMode::Hint => "hint",
            ApplyMode::LlmOnly => "llm-only",
        }
    }
}

impl std::str::FromStr for ApplyMode {
    type Err = Error;
    fn from_str(s: &str) -> Result<ApplyMode, Error> {
        match s.trim().to_ascii_lowercase().as_str() {
            "compose" => Ok(ApplyMode::Compose),
            "hint" => Ok(ApplyMode::Hint),
            "llm-only" | "llm_only" => Ok(ApplyMode::LlmOnly),
            other => Err(Error::InvalidArgument(format!(
                "unknown apply mode {other:?} (expected compose, hint or llm-only)"
            ))),
        }
    }
}

/// Whether a `KEIRI_AGENT_LLM_FALLBACK` value allows the fallback plan (`1`, `true`, `yes`).
/// The library never reads the process environment; front-ends pass the value in.
pub fn fallback_allowed(value: Option<&str>) -> bool {
    value.is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
}

/// Default number of repair rounds after the first wiring.
pub const DEFAULT_MAX_REPAIR_ATTEMPTS: u32 = 2;
/// Default size of the document digest in the prompt.
pub const DEFAULT_MAX_DOCS_CHARS: usize = 4_000;

/// Options of one generation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenerateOptions {
    /// The id of the generated plan.
    pub plan_id: String,
    /// Candidates per category (5 to 8; retrieval's default when absent).
    pub topk_per_category: Option<usize>,
    pub max_docs_chars: usize,
    pub max_repair_attempts: u32,
    pub apply_mode: ApplyMode,
    /// Template ids to use; empty = chosen by retrieval.
    pub templates: Vec<String>,
    /// Blocks that must be candidates.
    pub pinned_blocks: Vec<String>,
    /// `KEIRI_AGENT_LLM_FALLBACK`: a safe fallback plan when repair fails or the LLM cannot
    /// be used (unreachable, timeout, 5xx, a bad key, none configured).
    pub allow_fallback: bool,
    /// Answers to requirements (by requirement id), from an earlier round.
    pub answers: Map<String, Value>,
    pub lang: Lang,
    /// Whether the model may put `when` conditions on nodes.
    pub suggest_when: bool,
    /// Whether the model may make loop nodes (foreach / while).
    pub suggest_foreach: bool,
    /// The loop variable's name the model is asked to use (read as `${vars.<name>}`).
    pub foreach_var_name: String,
}

impl Default for GenerateOptions {
    fn default() -> Self {
        GenerateOptions {
            plan_id: "generated_plan".into(),
            topk_per_category: None,
            max_docs_chars: DEFAULT_MAX_DOCS_CHARS,
            max_repair_attempts: DEFAULT_MAX_REPAIR_ATTEMPTS,
            apply_mode: ApplyMode::default(),
            templates: Vec::new(),
            pinned_blocks: Vec::new(),
            allow_fallback: false,
            answers: Map::new(),
            lang: Lang::default(),
            suggest_when: true,
            suggest_foreach: true,
            foreach_var_name: keiri_plan::validate::DEFAULT_LOOP_VAR.to_string(),
        }
    }
}

/// What a generation works with besides its options.
pub struct Context<'a> {
    pub catalog: &'a Catalog,
    pub templates: &'a Templates,
    /// None = no provider configured (only compose works).
    pub llm: Option<&'a Llm>,
    /// Cancellation for the model calls.
    pub call_options: CallOptions,
    /// Stage events (validation counts, repair iterations, block distribution, usage).
    pub log: Option<EventLog>,
    /// Progress for the UI / CLI; a closed receiver is ignored.
    pub progress: Option<UnboundedSender<Progress>>,
    /// The registered plans (`designs/`) a generated plan may call as subflows.
    pub subflow_plans: Vec<schema::PlanCandidate>,
    /// The workspace's shared retriever ([`keiri_search::retriever::shared`]), so the planner
    /// offers the model the candidates the Candidates panel shows. None: a BM25-only one of
    /// `catalog` and `templates` is built for the generation.
    pub retriever: Option<&'a Retriever>,
    /// Runs a plan that validates (and asks nothing more) on the user's sample files and
    /// returns what failed at run time, as issues the repair loop sends back like static ones
    /// (keiri-api wires the runtime in; the planner knows no runtime).
    pub verify: Option<Verifier<'a>>,
    /// The tables of the attached CSV/Excel files (headers and types): offered to the
    /// wiring stage, checked by validation (`column.unknown`), fitted by compose.
    pub file_schemas: Vec<keiri_plan::FileSchema>,
    /// Every attached file (workspace-relative, as attached), tables or not: a file question
    /// exactly one of them fits is answered with it (an evidence ZIP, not only a CSV).
    pub attached: Vec<String>,
}

/// See [`Context::verify`]. The run is blocking work on the caller's side, so the verifier
/// hands back a future (keiri-api runs the plan on its runtime's blocking pool) and the
/// generation's task never blocks on it.
pub type Verifier<'a> = &'a (dyn Fn(Plan) -> VerifyRun + Sync);

/// What a [`Verifier`] returns: the run's repairable failures, as issues.
pub type VerifyRun = std::pin::Pin<Box<dyn std::future::Future<Output = Vec<Finding>> + Send>>;

impl<'a> Context<'a> {
    pub fn new(catalog: &'a Catalog, templates: &'a Templates) -> Context<'a> {
        Context {
            catalog,
            templates,
            llm: None,
            call_options: CallOptions::new(),
            log: None,
            progress: None,
            subflow_plans: Vec::new(),
            retriever: None,
            verify: None,
            file_schemas: Vec::new(),
            attached: Vec::new(),
        }
    }

    /// The attached files' tables (see [`Context::file_schemas`]).
    pub fn with_file_schemas(mut self, files: Vec<keiri_plan::FileSchema>) -> Context<'a> {
        self.file_schemas = files;
        self
    }

    /// The attached files (see [`Context::attached`]).
    pub fn with_attached(mut self, paths: Vec<String>) -> Context<'a> {
        self.attached = paths;
        self
    }

    /// Retrieves candidates and templates with `retriever` (see [`Context::retriever`]).
    pub fn with_retriever(mut self, retriever: &'a Retriever) -> Context<'a> {
        self.retriever = Some(retriever);
        self
    }

    /// Verifies each plan that validates by running it (see [`Context::verify`]).
    pub fn with_verifier(mut self, verify: Verifier<'a>) -> Context<'a> {
        self.verify = Some(verify);
        self
    }

    /// The registered plans a generated plan may call as subflows.
    pub fn with_subflow_plans(mut self, plans: Vec<schema::PlanCandidate>) -> Context<'a> {
        self.subflow_plans = plans;
        self
    }

    pub fn with_llm(mut self, llm: &'a Llm) -> Context<'a> {
        self.llm = Some(llm);
        self
    }

    pub fn with_progress(mut self, tx: UnboundedSender<Progress>) -> Context<'a> {
        self.progress = Some(tx);
        self
    }

    pub fn with_log(mut self, log: EventLog) -> Context<'a> {
        self.call_options = self.call_options.with_log(log.clone());
        self.log = Some(log);
        self
    }

    pub(super) fn report(
        &self,
        stage: Stage,
        repair: Option<(u32, u32)>,
        message: impl Into<String>,
    ) {
        if let Some(tx) = &self.progress {
            // A UI that went away must not stop the generation.
            let _ = tx.send(Progress {
                stage,
                repair: repair.map(|(n, of)| RepairRound { n, of }),
                message: message.into(),
            });
        }
    }

    pub(super) fn record(&self, event: Event) {
        if let Some(log) = &self.log {
            log.record_lossy(event);
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Extracting,
    Retrieving,
    Composing,
    Skeleton,
    Questions,
    Wiring,
    Validating,
    Repair,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RepairRound {
    pub n: u32,
    pub of: u32,
}

/// One progress event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Progress {
    pub stage: Stage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<RepairRound>,
    pub message: String,
}

/// The outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Zero validation errors.
    Valid,
    /// Only the user can fill what is missing: answer `requirements` and generate again.
    NeedsAnswers,
    /// Errors remain after every repair; see `errors` and `suggestions`.
    Invalid,
    /// Repair failed and the fallback was allowed: `plan` is the safe fallback plan.
    Fallback,
    /// The offline composer found no template that does the job: `plan` has no steps,
    /// `reasoning` says why and `suggestions` lists the nearest templates and blocks. Nothing
    /// unrelated is composed instead.
    NoFit,
}

impl ContractProblem {
    /// The problem as the finding it is: an error of its node (a `design.*` code).
    pub fn finding(&self) -> Finding {
        Finding::error(
            self.code,
            Some(self.node_id.clone()),
            self.path.clone(),
            self.message.clone(),
        )
    }
}

/// One wiring or repair attempt, kept whatever its outcome.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Attempt {
    pub n: u32,
    /// `wiring` or `repair`.
    pub stage: String,
    pub plan: Plan,
    /// The validator's findings and the wiring check's (`design.*`) on this attempt's plan.
    pub issues: Vec<Finding>,
    pub errors: usize,
    /// How the structured output was obtained (`json_schema`, `function_call`, `free_form`).
    pub strategy: String,
    pub usage: Usage,
}

/// The result of [`generate_plan`].
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct GeneratedPlan {
    pub plan: Plan,
    pub status: Status,
    pub mode: ApplyMode,
    /// True when `plan` is the fallback plan, not what was asked for.
    pub fallback: bool,
    pub reasoning: String,
    /// Candidate block ids offered to the model (or used by the composition).
    pub candidates: Vec<String>,
    /// Template ids used.
    pub templates: Vec<String>,
    /// The composition in one line, in the request's language (「請求書の重複検出」＋
    /// 「例外レポートの作成と通知」を使います), shown before the questions; `None` when no
    /// template was used.
    pub composition: Option<String>,
    pub attempts: Vec<Attempt>,
    /// Questions for the user; answer them through `GenerateOptions::answers`.
    pub requirements: Vec<Requirement>,
    /// Remaining errors of the final plan.
    pub errors: Vec<Finding>,
    pub suggestions: Vec<String>,
    pub notes: Vec<String>,
    pub usage: Usage,
}

/// One structured LLM call of a planner stage, with the stage's call options and error.
pub(super) async fn ask<T: serde::de::DeserializeOwned>(
    llm: &Llm,
    ctx: &Context<'_>,
    stage: &'static str,
    request: &StructuredRequest,
) -> Result<keiri_llm::Structured<T>, Error> {
    llm.structured::<T>(request, &ctx.call_options.clone().with_stage(stage))
        .await
        .map_err(|source| Error::Llm { stage, source })
}
