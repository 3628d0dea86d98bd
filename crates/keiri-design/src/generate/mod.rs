//! The generation pipeline: extracting → retrieving → skeleton → questions → wiring →
//! validating → repair n/N, or the offline compose path.

use std::collections::HashSet;

use indexmap::IndexMap;
use keiri_llm::{
    CallOptions, Event, EventLog, Llm, Message, OutputSchema, StructuredRequest, Usage,
};
use keiri_plan::model::{Policy, When};
use keiri_plan::{
    Catalog, ComposeOptions, Finding, Lang, Node, Plan, Requirement, RequirementKind,
    RequirementTarget, Severity, TemplateSpec, Templates, apply_answers, build_requirements,
    compose, validate,
};
use keiri_search::Retriever;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::mpsc::UnboundedSender;

use crate::Error;
use crate::prompt::{self, RepairFinding};
use crate::schema::{self, ContractProblem, Skeleton, Wiring, check_wiring, parse_value};

mod offline;
mod repair;
mod retrieve;
mod sniff;
mod wiring;

use self::{offline::*, repair::*, retrieve::*, wiring::*};
pub use offline::{compose_plan, offline_note};
pub(crate) use repair::all_nodes;
pub use repair::node_diff;
pub use retrieve::select_templates;
pub use wiring::to_plan;

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
pub type VerifyRun = std::pin::Pin<Box<dyn std::future::Future<Output = Vec<Issue>> + Send>>;

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

    fn report(&self, stage: Stage, repair: Option<(u32, u32)>, message: impl Into<String>) {
        if let Some(tx) = &self.progress {
            // A UI that went away must not stop the generation.
            let _ = tx.send(Progress {
                stage,
                repair: repair.map(|(n, of)| RepairRound { n, of }),
                message: message.into(),
            });
        }
    }

    fn record(&self, event: Event) {
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

/// A finding or a contract problem, as returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Issue {
    pub code: String,
    /// `error` or `warning`.
    pub severity: String,
    pub node_id: Option<String>,
    pub path: String,
    pub message: String,
    pub hint: Option<String>,
}

impl Issue {
    fn is_error(&self) -> bool {
        self.severity == "error"
    }
}

impl From<&Finding> for Issue {
    fn from(f: &Finding) -> Self {
        Issue {
            code: f.code.to_string(),
            severity: match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            }
            .into(),
            node_id: f.node_id.clone(),
            path: f.path.clone(),
            message: f.message.clone(),
            hint: f.hint.clone(),
        }
    }
}

impl From<&ContractProblem> for Issue {
    fn from(p: &ContractProblem) -> Self {
        Issue {
            code: p.code.clone(),
            severity: "error".into(),
            node_id: Some(p.node_id.clone()),
            path: p.path.clone(),
            message: p.message.clone(),
            hint: None,
        }
    }
}

/// One wiring or repair attempt, kept whatever its outcome.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Attempt {
    pub n: u32,
    /// `wiring` or `repair`.
    pub stage: String,
    pub plan: Plan,
    pub issues: Vec<Issue>,
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
    pub errors: Vec<Issue>,
    pub suggestions: Vec<String>,
    pub notes: Vec<String>,
    pub usage: Usage,
}

/// Generates a plan for `instruction`. `digest` is the document digest
/// ([`crate::digest_documents`]), or empty.
pub async fn generate_plan(
    instruction: &str,
    digest: &str,
    options: &GenerateOptions,
    ctx: &Context<'_>,
) -> Result<GeneratedPlan, Error> {
    if instruction.trim().is_empty() {
        return Err(Error::InvalidArgument("the instruction is empty".into()));
    }
    if options.plan_id.trim().is_empty() {
        return Err(Error::InvalidArgument("the plan id is empty".into()));
    }
    ctx.report(Stage::Extracting, None, "reading the document digest");
    let digest = truncate_chars(digest, options.max_docs_chars);

    if options.apply_mode == ApplyMode::Compose {
        return compose_plan(instruction, options, ctx, Vec::new());
    }
    match generate_with_llm(instruction, &digest, options, ctx).await {
        // The fallback flag covers a model that cannot be reached or answers nothing usable
        // (timeout, 5xx, a bad key, no provider), not only a plan that failed repair. A
        // cancellation is the user's decision and stays one.
        Err(error) if options.allow_fallback && fallback_covers(&error) => {
            let why = format!(
                "FALLBACK PLAN: the LLM could not be used ({}: {error}); this plan is composed \
                 from templates (KEIRI_AGENT_LLM_FALLBACK is set)",
                error.code()
            );
            match compose_plan(instruction, options, ctx, Vec::new()) {
                Ok(mut plan) if !matches!(plan.status, Status::Invalid | Status::NoFit) => {
                    plan.status = Status::Fallback;
                    plan.fallback = true;
                    plan.mode = options.apply_mode;
                    plan.notes.insert(0, why);
                    Ok(plan)
                }
                // No template composition serves the instruction either: the model's error
                // is the one the user can act on.
                _ => Err(error),
            }
        }
        other => other,
    }
}

/// Whether a failed LLM generation may fall back to composed templates.
fn fallback_covers(error: &Error) -> bool {
    match error {
        Error::LlmRequired { .. } => true,
        Error::Llm { source, .. } => !matches!(source, keiri_llm::Error::Cancelled),
        _ => false,
    }
}

/// The hint / llm-only path: retrieve, skeleton, questions, wiring, validate and repair.
async fn generate_with_llm(
    instruction: &str,
    digest: &str,
    options: &GenerateOptions,
    ctx: &Context<'_>,
) -> Result<GeneratedPlan, Error> {
    let digest = digest.to_string();
    let Some(llm) = ctx.llm else {
        return Err(Error::LlmRequired {
            mode: options.apply_mode.as_str(),
        });
    };

    ctx.report(Stage::Retrieving, None, "retrieving candidate blocks");
    let (mut candidate_ids, templates) = with_retriever(ctx, |retriever| {
        let ids = retrieve_blocks(instruction, &digest, options, retriever)?;
        let templates: Vec<&TemplateSpec> = if options.apply_mode == ApplyMode::Hint {
            select_templates(instruction, options, ctx.templates, retriever)?
        } else {
            Vec::new()
        };
        Ok((ids, templates))
    })?;
    for t in &templates {
        for n in &t.graph_snippet {
            if let Some(b) = &n.block
                && !candidate_ids.contains(b)
            {
                candidate_ids.push(b.clone());
            }
        }
    }
    let candidates = schema::candidate_blocks(ctx.catalog, &candidate_ids);
    if candidates.is_empty() {
        return Err(Error::NoCandidates);
    }
    let candidate_ids: Vec<String> = candidates.iter().map(|c| c.id.clone()).collect();
    let rows = prompt::catalog_rows(ctx.catalog, &candidate_ids);
    let mut context = prompt::context(
        instruction,
        &digest,
        &prompt::encode_catalog(&rows),
        &templates,
    );
    if !ctx.subflow_plans.is_empty() {
        context.push_str("\n\n## Registered plans (a node may call one as a subflow)");
        for plan in &ctx.subflow_plans {
            context.push_str(&format!(
                "\n- {} (inputs: {}; outputs: {})",
                plan.id,
                plan.inputs.join(", "),
                plan.outputs.join(", ")
            ));
        }
    }
    let mut usage = Usage::default();

    let shapes = schema::Shapes {
        plans: &ctx.subflow_plans,
        loops: options.suggest_foreach,
        conditions: options.suggest_when,
    };

    // Stage 1: skeleton.
    ctx.report(Stage::Skeleton, None, "asking for the skeleton");
    let base = vec![
        Message::system(prompt::SYSTEM_RULES),
        Message::user(format!("{context}\n\n{}", prompt::skeleton_task())),
    ];
    let request = StructuredRequest::new(
        base.clone(),
        OutputSchema::new(
            "plan_skeleton",
            schema::skeleton_schema(&candidates, &shapes),
        ),
    );
    let out = ask::<Skeleton>(llm, ctx, "skeleton", &request).await?;
    usage += out.usage;
    let mut skeleton = out.value;
    // The schema already forbids unknown blocks and plans; this guards providers that ignore
    // it.
    skeleton.nodes.retain(|n| match (&n.block, &n.calls_plan) {
        (_, Some(plan)) => ctx.subflow_plans.iter().any(|p| &p.id == plan),
        (Some(block), None) => candidate_ids.contains(block),
        (None, None) => false,
    });
    let skeleton_json = serde_json::to_string(&skeleton).unwrap_or_default();

    // Questions: the skeleton's open points, answered now or asked later.
    ctx.report(
        Stage::Questions,
        None,
        format!("{} open question(s)", skeleton.questions.len()),
    );
    let question_reqs: Vec<Requirement> = skeleton
        .questions
        .iter()
        .map(question_requirement)
        .collect();
    let answered: Vec<(String, String)> = skeleton
        .questions
        .iter()
        .filter_map(|q| {
            options
                .answers
                .get(&q.var)
                .map(|v| (q.var.clone(), v.to_string()))
        })
        .collect();

    // Stage 2: wiring, then validate / repair.
    ctx.report(Stage::Wiring, None, "asking for the wiring");
    let wiring_messages = vec![
        Message::system(prompt::SYSTEM_RULES),
        Message::user(context.clone()),
        Message::assistant(skeleton_json),
        Message::user(format!(
            "{}{}",
            prompt::wiring_task(&skeleton, &answered, options),
            prompt::file_columns(&ctx.file_schemas)
        )),
    ];
    let wiring_schema =
        OutputSchema::new("plan_wiring", schema::wiring_schema(&candidates, &shapes));
    let request = StructuredRequest::new(wiring_messages.clone(), wiring_schema.clone());
    let out = ask::<Wiring>(llm, ctx, "wiring", &request).await?;
    usage += out.usage;
    let mut reasoning = format!("{}\n{}", skeleton.reasoning, out.value.reasoning)
        .trim()
        .to_string();
    let mut wiring = out.value;
    let mut strategy = out.strategy.as_str().to_string();
    let mut attempt_usage = out.usage;
    let mut previous = skeleton_plan(&skeleton, &options.plan_id);
    let mut attempts: Vec<Attempt> = Vec::new();
    let max = options.max_repair_attempts;
    let mut repairs = 0u32;

    loop {
        let n = attempts.len() as u32 + 1;
        ctx.report(Stage::Validating, None, format!("validating attempt {n}"));
        let (checked, problems) = check_wiring(&wiring, &candidates, &ctx.subflow_plans);
        let mut plan = to_plan(&checked, &options.plan_id, instruction);
        define_open_vars(&mut plan, &skeleton, options, ctx);
        // An answer to an open point of the skeleton replaces whatever the wiring put in
        // the var (its default, or the null of a value only the user can give).
        for q in &skeleton.questions {
            if let Some(answer) = options.answers.get(&q.var) {
                plan.vars.insert(q.var.clone(), answer.clone());
            }
        }
        let evaluated = evaluate(plan, &problems, options, ctx, &question_reqs).await?;
        ctx.record(
            Event::new("validating", "validation")
                .attempt(n)
                .validation_errors(evaluated.errors().count() as u32)
                .repair_iteration(repairs)
                .block_distribution(
                    evaluated
                        .plan
                        .graph
                        .iter()
                        .filter_map(|g| g.block.as_deref()),
                )
                .usage(attempt_usage),
        );
        attempts.push(Attempt {
            n,
            stage: if n == 1 { "wiring" } else { "repair" }.into(),
            plan: evaluated.plan.clone(),
            issues: evaluated.issues.clone(),
            errors: evaluated.errors().count(),
            strategy: strategy.clone(),
            usage: attempt_usage,
        });
        let json = plan_json(&evaluated.plan);
        let repairable: Vec<&Issue> = evaluated
            .errors()
            .filter(|i| !answerable(i, &json, &evaluated.plan, &evaluated.requirements))
            .collect();
        let done = evaluated.errors().count() == 0 || repairable.is_empty();
        if done || repairs >= max {
            let unanswered = evaluated.requirements.iter().any(|r| {
                r.required
                    && r.target
                        .var
                        .as_deref()
                        .is_some_and(|v| evaluated.plan.vars.get(v).is_none_or(Value::is_null))
            });
            let status = if evaluated.errors().count() == 0 && !unanswered {
                Status::Valid
            } else if evaluated.errors().count() == 0 || repairable.is_empty() {
                Status::NeedsAnswers
            } else {
                Status::Invalid
            };
            record_dry_run(ctx, &evaluated.plan);
            let mut result = GeneratedPlan {
                plan: evaluated.plan.clone(),
                status,
                mode: options.apply_mode,
                fallback: false,
                reasoning,
                candidates: candidate_ids,
                templates: templates.iter().map(|t| t.id.clone()).collect(),
                composition: composition_line(&templates, options.lang),
                attempts,
                requirements: evaluated.requirements.clone(),
                errors: evaluated.errors().cloned().collect(),
                suggestions: Vec::new(),
                notes: Vec::new(),
                usage,
            };
            if status == Status::Invalid {
                result.suggestions = suggestions(
                    &result.errors,
                    &result.plan,
                    &result.requirements,
                    ctx.templates,
                );
                if options.allow_fallback {
                    return fallback(result, instruction, options, ctx);
                }
                result.notes.push(format!(
                    "the plan still has errors after {repairs} repair attempt(s); no fallback \
                     plan was made (set KEIRI_AGENT_LLM_FALLBACK=1 to allow one)"
                ));
            }
            return Ok(result);
        }

        // Repair n/N.
        repairs += 1;
        ctx.report(
            Stage::Repair,
            Some((repairs, max)),
            format!("repair {repairs}/{max}: {} error(s)", repairable.len()),
        );
        let findings: Vec<RepairFinding> = repairable
            .iter()
            .map(|i| RepairFinding {
                code: i.code.clone(),
                node: i.node_id.clone(),
                path: i.path.clone(),
                message: i.message.clone(),
            })
            .collect();
        let involved = involved_blocks(&repairable, &evaluated.plan, &wiring);
        let excerpts = prompt::catalog_rows(ctx.catalog, &involved);
        let diff = node_diff(&previous, &evaluated.plan);
        let contracts: Vec<String> = templates
            .iter()
            .filter(|t| {
                t.graph_snippet
                    .iter()
                    .any(|n| n.block.as_ref().is_some_and(|b| involved.contains(b)))
            })
            .map(|t| prompt::template_summary(t))
            .collect();
        let mut messages = wiring_messages.clone();
        messages.push(Message::assistant(
            serde_json::to_string(&wiring).unwrap_or_default(),
        ));
        messages.push(Message::user(prompt::repair_message(
            repairs, max, &findings, &excerpts, &diff, &contracts,
        )));
        previous = evaluated.plan;
        let request = StructuredRequest::new(messages, wiring_schema.clone());
        let out = ask::<Wiring>(llm, ctx, "repair", &request).await?;
        usage += out.usage;
        attempt_usage = out.usage;
        strategy = out.strategy.as_str().to_string();
        if !out.value.reasoning.trim().is_empty() {
            reasoning = format!("{reasoning}\n{}", out.value.reasoning);
        }
        wiring = out.value;
    }
}

/// One structured LLM call of a planner stage, with the stage's call options and error.
async fn ask<T: serde::de::DeserializeOwned>(
    llm: &Llm,
    ctx: &Context<'_>,
    stage: &'static str,
    request: &StructuredRequest,
) -> Result<keiri_llm::Structured<T>, Error> {
    llm.structured::<T>(request, &ctx.call_options.clone().with_stage(stage))
        .await
        .map_err(|source| Error::Llm { stage, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../block_specs");
        Catalog::load(&[dir]).0
    }

    /// Whether the first `ref.undefined_var` finding of `yaml` is answerable, in both
    /// message languages (the decision must not depend on the message text).
    fn check(yaml: &str, expect: bool) {
        let plan = keiri_plan::load_plan(yaml).unwrap().plan;
        let catalog = catalog();
        for lang in [Lang::Ja, Lang::En] {
            let findings = validate(
                &plan,
                &catalog,
                &keiri_plan::Options {
                    lang,
                    ..Default::default()
                },
            );
            let requirements = build_requirements(&plan, &findings, &catalog);
            let issue = findings
                .iter()
                .find(|f| f.code == keiri_plan::FindingCode::RefUndefinedVar)
                .map(Issue::from)
                .unwrap();
            assert_eq!(
                answerable(&issue, &plan_json(&plan), &plan, &requirements),
                expect,
                "{lang:?}: {yaml}"
            );
            // A message that names the var but is not at its pointer changes nothing.
            let mut moved = issue.clone();
            moved.path = "/graph/0/out/rows".into();
            assert!(!answerable(&moved, &plan_json(&plan), &plan, &requirements));
        }
    }

    #[test]
    fn an_undefined_var_with_a_question_is_answerable() {
        check(
            "id: p\ngraph:\n  - id: read\n    block: csv.read\n    in: {path: '${vars.src}'}\n    out: {rows: rows}\n",
            true,
        );
        // Inside a longer string too.
        check(
            "id: p\ngraph:\n  - id: read\n    block: csv.read\n    in: {path: 'data/${vars.month}.csv'}\n    out: {rows: rows}\n",
            true,
        );
    }

    #[test]
    fn other_errors_are_not_answerable() {
        let plan = keiri_plan::load_plan(
            "id: p\ngraph:\n  - id: read\n    block: csv.read\n    in: {path: '${vars.src}'}\n",
        )
        .unwrap()
        .plan;
        let issue = Issue {
            code: "ref.unknown_node".into(),
            severity: "error".into(),
            node_id: Some("read".into()),
            path: "/graph/0/in/path".into(),
            message: "src".into(),
            hint: None,
        };
        let catalog = catalog();
        let findings = validate(&plan, &catalog, &keiri_plan::Options::default());
        let requirements = build_requirements(&plan, &findings, &catalog);
        assert!(!answerable(&issue, &plan_json(&plan), &plan, &requirements));
    }
}
