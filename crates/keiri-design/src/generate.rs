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

/// How templates are used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
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
}

/// See [`Context::verify`].
pub type Verifier<'a> = &'a (dyn Fn(&Plan) -> Vec<Issue> + Sync);

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
        }
    }

    /// The attached files' tables (see [`Context::file_schemas`]).
    pub fn with_file_schemas(mut self, files: Vec<keiri_plan::FileSchema>) -> Context<'a> {
        self.file_schemas = files;
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepairRound {
    pub n: u32,
    pub of: u32,
}

/// One progress event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    pub stage: Stage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<RepairRound>,
    pub message: String,
}

/// The outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
}

/// A finding or a contract problem, as returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    pub attempts: Vec<Attempt>,
    /// Questions for the user; answer them through `GenerateOptions::answers`.
    pub requirements: Vec<Requirement>,
    /// Remaining errors of the final plan.
    pub errors: Vec<Issue>,
    pub suggestions: Vec<String>,
    pub notes: Vec<String>,
    pub usage: Usage,
}

const OFFLINE_NOTE: &str = "composed offline from templates without an LLM; configuring an LLM \
(OPENAI_API_KEY, AZURE_OPENAI_API_KEY + AZURE_OPENAI_ENDPOINT + AZURE_OPENAI_DEPLOYMENT, or \
KEIRI_LLM_BASE_URL) gives better plans";

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
        return compose_plan(instruction, &digest, options, ctx, Vec::new());
    }
    match generate_with_llm(instruction, &digest, options, ctx).await {
        // The fallback flag covers a model that cannot be reached or answers nothing usable
        // (timeout, 5xx, a bad key, no provider), not only a plan that failed repair. A
        // cancellation is the user's decision and stays one.
        Err(error) if options.allow_fallback && fallback_covers(&error) => {
            let why = format!(
                "FALLBACK PLAN: the LLM could not be used ({}: {error}); this plan is composed                  from templates (KEIRI_AGENT_LLM_FALLBACK is set)",
                error.code()
            );
            match compose_plan(instruction, &digest, options, ctx, Vec::new()) {
                Ok(mut plan) if plan.status != Status::Invalid => {
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
            select_templates(instruction, &digest, options, ctx.templates, retriever)?
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
        let evaluated = evaluate(plan, &problems, options, ctx, &question_reqs)?;
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
                    return fallback(result, instruction, &digest, options, ctx);
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

fn truncate_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    text.chars().take(max).collect()
}

/// The candidate block ids of the shared retriever for the instruction and the digest: the
/// same request, and so the same candidates, as the Candidates panel's `blocks_retrieve`.
fn retrieve_blocks(
    instruction: &str,
    digest: &str,
    options: &GenerateOptions,
    retriever: &Retriever,
) -> Result<Vec<String>, Error> {
    let request = keiri_search::RetrieveRequest {
        instruction: instruction.to_string(),
        k: options.topk_per_category,
        pinned: options.pinned_blocks.clone(),
        ..Default::default()
    };
    let response = retriever
        .retrieve(&request, &doc_texts(digest))
        .map_err(Error::Search)?;
    Ok(response.candidates.into_iter().map(|c| c.id).collect())
}

fn doc_texts(digest: &str) -> Vec<String> {
    if digest.trim().is_empty() {
        Vec::new()
    } else {
        vec![digest.to_string()]
    }
}

/// `ctx`'s retriever, or a BM25-only one of its catalog and templates for a caller that
/// passed none (a library use without a workspace).
fn with_retriever<T>(
    ctx: &Context<'_>,
    f: impl FnOnce(&Retriever) -> Result<T, Error>,
) -> Result<T, Error> {
    match ctx.retriever {
        Some(retriever) => f(retriever),
        None => f(&Retriever::build(ctx.catalog, ctx.templates, None).map_err(Error::Search)?),
    }
}

/// A runner-up template is chosen too when its BM25 score is at least this share of the best.
const RUNNER_UP_SHARE: f32 = 0.6;

/// The templates named in the options, or those the retriever finds
/// ([`Retriever::rank_templates`]: BM25 over the templates' ids, titles, descriptions and
/// tags, with the block retrieval's tokenizer): the best match, plus the runner-up when it
/// scores at least 60 % of it (two related flows, e.g. read + report).
pub fn select_templates<'t>(
    instruction: &str,
    digest: &str,
    options: &GenerateOptions,
    templates: &'t Templates,
    retriever: &Retriever,
) -> Result<Vec<&'t TemplateSpec>, Error> {
    if !options.templates.is_empty() {
        return options
            .templates
            .iter()
            .map(|id| {
                templates
                    .get(id)
                    .ok_or_else(|| Error::InvalidArgument(format!("unknown template {id:?}")))
            })
            .collect();
    }
    // The raw BM25 score, not the min-max normalised one: the runner-up rule compares the two
    // best matches with each other, and normalising by the weakest template would distort it.
    let scored = retriever
        .matching_templates(instruction, &doc_texts(digest), templates)
        .map_err(Error::Search)?;
    let mut chosen = Vec::new();
    if let Some(&(top, first)) = scored.first() {
        chosen.push(first);
        if let Some(&(second, t)) = scored.get(1)
            && second >= top * RUNNER_UP_SHARE
        {
            chosen.push(t);
        }
    }
    Ok(chosen)
}

fn question_requirement(q: &schema::Question) -> Requirement {
    let kind = match q.kind.as_str() {
        "file" => RequirementKind::File,
        "select" => RequirementKind::Select,
        "number" => RequirementKind::Number,
        "boolean" => RequirementKind::Boolean,
        _ => RequirementKind::Text,
    };
    Requirement {
        id: q.var.clone(),
        kind,
        label: q.label.clone(),
        label_en: None,
        description: q.label.clone(),
        description_en: None,
        options: q.options.iter().cloned().map(Value::String).collect(),
        required: true,
        accept: None,
        hint: None,
        hint_en: None,
        validation: None,
        default: None,
        value_type: None,
        answer_use: Default::default(),
        target: RequirementTarget {
            var: Some(q.var.clone()),
            node_id: None,
            input: None,
            ..Default::default()
        },
    }
}

/// The skeleton as a plan without wiring: the baseline of the first repair's diff.
fn skeleton_plan(skeleton: &Skeleton, plan_id: &str) -> Plan {
    let mut plan = empty_plan(plan_id, "");
    plan.graph = skeleton
        .nodes
        .iter()
        .map(|n| Node {
            id: n.id.clone(),
            block: n.block.clone(),
            kind: n.calls_plan.as_ref().map(|_| "subflow".to_string()),
            call: n
                .calls_plan
                .as_ref()
                .map(|plan_id| keiri_plan::model::Call {
                    plan_id: plan_id.clone(),
                    ..Default::default()
                }),
            ..Node::default()
        })
        .collect();
    plan
}

fn empty_plan(plan_id: &str, description: &str) -> Plan {
    Plan {
        api_version: None,
        id: plan_id.to_string(),
        description: (!description.trim().is_empty()).then(|| description.trim().to_string()),
        version: Some("0.1.0".into()),
        vars: IndexMap::new(),
        policy: None,
        ui: None,
        graph: Vec::new(),
        extra: IndexMap::new(),
    }
}

/// The plan of a (checked) wiring. Vars whose value is `null` are left out here: the
/// generation defines, as `null`, those the plan reads (and only those), so a var nobody
/// reads does not linger in the plan.
pub fn to_plan(wiring: &Wiring, plan_id: &str, instruction: &str) -> Plan {
    let mut plan = empty_plan(plan_id, instruction);
    for v in &wiring.vars {
        let value = parse_value(&v.value_json);
        if !value.is_null() && !v.name.trim().is_empty() {
            plan.vars.insert(v.name.clone(), value);
        }
    }
    plan.graph = wiring.nodes.iter().map(wired_node).collect();
    plan.policy = wiring
        .policy
        .as_ref()
        .map(to_policy)
        .filter(|p| *p != Policy::default());
    for np in &wiring.node_policies {
        let policy = to_policy(&schema::WiredPolicy {
            on_error: np.on_error.clone(),
            retries: np.retries,
            timeout_ms: np.timeout_ms,
            concurrency: None,
        });
        if policy == Policy::default() {
            continue;
        }
        if let Some(node) = plan.graph.iter_mut().find(|n| n.id == np.node_id) {
            node.policy = Some(policy);
        }
    }
    let layout: Vec<String> = wiring
        .ui_layout
        .iter()
        .filter(|id| !id.trim().is_empty())
        .cloned()
        .collect();
    if !layout.is_empty() {
        plan.ui = Some(keiri_plan::model::Ui {
            layout,
            extra: IndexMap::new(),
        });
    }
    plan
}

fn to_policy(p: &schema::WiredPolicy) -> Policy {
    Policy {
        on_error: p.on_error.clone().filter(|s| !s.trim().is_empty()),
        retries: p.retries,
        timeout_ms: p.timeout_ms,
        concurrency: p.concurrency,
        extra: IndexMap::new(),
    }
}

fn wired_when(when: &Option<String>) -> Option<When> {
    when.as_ref()
        .filter(|w| !w.trim().is_empty())
        .map(|w| When::Expr {
            expr: Value::String(w.clone()),
        })
}

fn wired_outputs(n: &schema::WiredNode) -> IndexMap<String, Value> {
    n.outputs
        .iter()
        .map(|o| (o.key.clone(), Value::String(o.alias.clone())))
        .collect()
}

fn wired_inputs(n: &schema::WiredNode) -> IndexMap<String, Value> {
    n.inputs
        .iter()
        .map(|i| (i.key.clone(), parse_value(&i.value_json)))
        .collect()
}

/// One wired node as a plan node: a block call, a loop with its body plan, or a subflow.
fn wired_node(n: &schema::WiredNode) -> Node {
    match n.kind.as_deref() {
        Some("loop") => Node {
            id: n.id.clone(),
            kind: Some("loop".into()),
            out: wired_outputs(n),
            when: wired_when(&n.when),
            foreach: n.foreach.as_ref().map(|f| keiri_plan::model::Foreach {
                input: Some(parse_value(&f.input_json)),
                var: Some(f.var.clone()).filter(|v| !v.trim().is_empty()),
                max_concurrency: f.max_concurrency,
                ..Default::default()
            }),
            while_loop: n.while_loop.as_ref().map(|w| keiri_plan::model::While {
                condition: Some(When::Expr {
                    expr: Value::String(w.condition.clone()),
                }),
                max_iterations: Some(w.max_iterations),
                ..Default::default()
            }),
            body: Some(keiri_plan::model::Body {
                plan: Box::new(Plan {
                    graph: n.body.iter().map(wired_node).collect(),
                    ..empty_plan(&format!("{}_body", n.id), "")
                }),
                extra: IndexMap::new(),
            }),
            ..Node::default()
        },
        Some("subflow") => Node {
            id: n.id.clone(),
            kind: Some("subflow".into()),
            out: wired_outputs(n),
            when: wired_when(&n.when),
            call: Some(keiri_plan::model::Call {
                plan_id: n.plan_id.clone().unwrap_or_default(),
                inputs: wired_inputs(n),
                extra: IndexMap::new(),
            }),
            ..Node::default()
        },
        _ => Node {
            id: n.id.clone(),
            block: Some(n.block.clone()),
            inputs: wired_inputs(n),
            out: wired_outputs(n),
            when: wired_when(&n.when),
            ..Node::default()
        },
    }
}

struct Evaluated {
    plan: Plan,
    issues: Vec<Issue>,
    requirements: Vec<Requirement>,
}

impl Evaluated {
    fn errors(&self) -> impl Iterator<Item = &Issue> {
        self.issues.iter().filter(|i| i.is_error())
    }
}

/// Validates, builds the requirements, applies the answers that fit them, and validates again.
fn evaluate(
    plan: Plan,
    problems: &[ContractProblem],
    options: &GenerateOptions,
    ctx: &Context<'_>,
    extra_requirements: &[Requirement],
) -> Result<Evaluated, Error> {
    let catalog = ctx.catalog;
    let validate_options = validate_options(options, ctx);
    let mut plan = plan;
    let mut findings = validate(&plan, catalog, &validate_options);
    let mut requirements = build_requirements(&plan, &findings, catalog);
    let to_apply: Vec<Requirement> = requirements
        .iter()
        .filter(|r| options.answers.contains_key(&r.id))
        .cloned()
        .collect();
    if !to_apply.is_empty() {
        plan = apply_answers(&plan, &to_apply, &options.answers).map_err(Error::Answers)?;
        findings = validate(&plan, catalog, &validate_options);
        requirements = build_requirements(&plan, &findings, catalog);
    }
    for r in extra_requirements {
        let var = r.target.var.as_deref();
        let asked = requirements
            .iter()
            .any(|x| x.id == r.id || x.target.var.as_deref() == var);
        let answered = var.is_some_and(|v| options.answers.contains_key(v));
        if !asked && !answered && !options.answers.contains_key(&r.id) {
            let mut r = r.clone();
            // What the plan holds until answered is the pre-filled answer.
            if let Some(default) = var.and_then(|v| plan.vars.get(v)).filter(|d| !d.is_null()) {
                r.default = Some(default.clone());
            }
            requirements.push(r);
        }
    }
    let mut issues: Vec<Issue> = problems.iter().map(Issue::from).collect();
    issues.extend(findings.iter().map(Issue::from));
    // A plan with no static error and nothing left to ask is run on the sample files: what
    // fails there is an error like any other.
    let open = requirements.iter().any(|r| {
        r.required
            && r.target
                .var
                .as_deref()
                .is_some_and(|v| plan.vars.get(v).is_none_or(Value::is_null))
    });
    if let Some(verify) = ctx.verify
        && !open
        && !issues.iter().any(Issue::is_error)
    {
        ctx.report(
            Stage::Validating,
            None,
            "running the plan on the sample files".to_string(),
        );
        issues.extend(verify(&plan));
    }
    Ok(Evaluated {
        plan,
        issues,
        requirements,
    })
}

/// An error that an answer fixes (an undefined var someone must supply): repairing it with
/// the model would only make a value up. Decided on the finding's stable code and JSON
/// pointer, never its (translated) message: the value at `issue.path` is scanned for its
/// `${vars.*}` references, and one of them that is undefined must be asked by a requirement.
fn answerable(issue: &Issue, plan_json: &Value, plan: &Plan, requirements: &[Requirement]) -> bool {
    // A column the attached file lacks is answered by picking one of its headers.
    if issue.code == keiri_plan::FindingCode::ColumnUnknown.as_str() {
        return requirements.iter().any(|q| {
            q.answer_use == keiri_plan::AnswerUse::Column
                && q.target.node_id.is_some()
                && q.target.node_id == issue.node_id
        });
    }
    if issue.code != "ref.undefined_var" {
        return false;
    }
    let Some(value) = plan_json.pointer(&issue.path) else {
        return false;
    };
    let (mut refs, mut malformed) = (Vec::new(), Vec::new());
    keiri_plan::refs::scan(value, "", &mut refs, &mut malformed);
    refs.iter().any(|r| match &r.target {
        keiri_plan::refs::Target::Var { name, .. } => {
            !plan.vars.contains_key(name)
                && requirements
                    .iter()
                    .any(|q| q.target.var.as_deref() == Some(name.as_str()))
        }
        _ => false,
    })
}

/// Every node of `graph`, loop bodies included, depth first.
pub(crate) fn all_nodes(graph: &[Node]) -> Vec<&Node> {
    let mut out = Vec::new();
    for node in graph {
        out.push(node);
        if let Some(body) = &node.body {
            out.extend(all_nodes(&body.plan.graph));
        }
    }
    out
}

/// Dry-runs the final plan and records how long that took (the `dry_run` event of the
/// metrics log), so the log shows every stage's cost, not only the model calls.
fn record_dry_run(ctx: &Context<'_>, plan: &Plan) {
    if ctx.log.is_none() {
        return;
    }
    let started = std::time::Instant::now();
    let run = keiri_plan::dry_run(plan, ctx.catalog, &Default::default());
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    ctx.record(
        Event::new("validating", "dry_run")
            .with("duration_ms", duration_ms)
            .with("nodes", run.nodes.len()),
    );
}

/// The plan as JSON, for looking findings up by their pointer.
fn validate_options(options: &GenerateOptions, ctx: &Context<'_>) -> keiri_plan::Options {
    keiri_plan::Options {
        lang: options.lang,
        known_plans: schema::plan_ids(&ctx.subflow_plans).into_iter().collect(),
        file_schemas: ctx.file_schemas.clone(),
    }
}

/// Defines in `vars`, as `null`, every var the wiring reads but left undefined: those read by
/// the plan's own nodes, and the skeleton's open points wherever they are read. The plan then
/// validates, and the value is still asked: a var without a value is a requirement
/// ([`build_requirements`]) and keeps the status at `needs_answers` until answered. A var
/// read only inside a loop body and unknown to the skeleton (usually a misnamed loop
/// variable) stays undefined: that is the model's mistake to repair, not a question.
fn define_open_vars(
    plan: &mut Plan,
    skeleton: &Skeleton,
    options: &GenerateOptions,
    ctx: &Context<'_>,
) {
    let findings = validate(plan, ctx.catalog, &validate_options(options, ctx));
    let json = plan_json(plan);
    for f in findings
        .iter()
        .filter(|f| f.code == keiri_plan::FindingCode::RefUndefinedVar)
    {
        let Some(value) = json.pointer(&f.path) else {
            continue;
        };
        let (mut refs, mut malformed) = (Vec::new(), Vec::new());
        keiri_plan::refs::scan(value, "", &mut refs, &mut malformed);
        let top_level = !f.path.contains("/body/");
        for r in refs {
            if let keiri_plan::refs::Target::Var { name, .. } = r.target
                && (top_level || skeleton.questions.iter().any(|q| q.var == name))
            {
                plan.vars.entry(name).or_insert(Value::Null);
            }
        }
    }
}

fn plan_json(plan: &Plan) -> Value {
    serde_json::to_value(plan).unwrap_or(Value::Null)
}

fn involved_blocks(issues: &[&Issue], plan: &Plan, wiring: &Wiring) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for issue in issues {
        let Some(node_id) = &issue.node_id else {
            continue;
        };
        let block = plan
            .graph
            .iter()
            .find(|n| &n.id == node_id)
            .and_then(|n| n.block.clone())
            .or_else(|| {
                wiring
                    .nodes
                    .iter()
                    .find(|n| &n.id == node_id)
                    .map(|n| n.block.clone())
            });
        if let Some(b) = block
            && !out.contains(&b)
        {
            out.push(b);
        }
    }
    out
}

/// Appends `prefix.key added/changed/removed` lines for the differences of two maps.
fn map_changes(
    prefix: &str,
    old: &indexmap::IndexMap<String, Value>,
    new: &indexmap::IndexMap<String, Value>,
    changes: &mut Vec<String>,
) {
    for (k, v) in new {
        match old.get(k) {
            None => changes.push(format!("{prefix}.{k} added = {v}")),
            Some(o) if o != v => changes.push(format!("{prefix}.{k} {o} -> {v}")),
            _ => {}
        }
    }
    for k in old.keys().filter(|k| !new.contains_key(*k)) {
        changes.push(format!("{prefix}.{k} removed"));
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

/// Node-level diff, one line per node: `+ id (block)`, `- id (block)`, or `~ id: ...` listing
/// what changed (block, inputs added / removed / changed, outputs).
pub fn node_diff(before: &Plan, after: &Plan) -> Vec<String> {
    let mut lines = Vec::new();
    let find = |plan: &Plan, id: &str| plan.graph.iter().find(|n| n.id == id).cloned();
    for old in &before.graph {
        if find(after, &old.id).is_none() {
            lines.push(format!(
                "- {} ({})",
                old.id,
                old.block.as_deref().unwrap_or("-")
            ));
        }
    }
    for new in &after.graph {
        let Some(old) = find(before, &new.id) else {
            lines.push(format!(
                "+ {} ({})",
                new.id,
                new.block.as_deref().unwrap_or("-")
            ));
            continue;
        };
        let mut changes = Vec::new();
        if old.block != new.block {
            changes.push(format!(
                "block {} -> {}",
                old.block.as_deref().unwrap_or("-"),
                new.block.as_deref().unwrap_or("-")
            ));
        }
        map_changes("in", &old.inputs, &new.inputs, &mut changes);
        map_changes("out", &old.out, &new.out, &mut changes);
        if !changes.is_empty() {
            lines.push(format!("~ {}: {}", new.id, changes.join("; ")));
        }
    }
    lines
}

fn suggestions(
    errors: &[Issue],
    plan: &Plan,
    requirements: &[Requirement],
    templates: &Templates,
) -> Vec<String> {
    let mut out = Vec::new();
    for r in requirements {
        out.push(format!("answer the question {:?}: {}", r.id, r.label));
    }
    let failing: HashSet<&str> = errors
        .iter()
        .filter_map(|e| e.node_id.as_deref())
        .filter_map(|id| plan.graph.iter().find(|n| n.id == id))
        .filter_map(|n| n.block.as_deref())
        .collect();
    for t in templates.iter() {
        let covers: Vec<&str> = t
            .graph_snippet
            .iter()
            .filter_map(|n| n.block.as_deref())
            .filter(|b| failing.contains(b))
            .collect();
        if !covers.is_empty() {
            out.push(format!(
                "the template {} ({}) wires {} already: try --templates {} (hint or compose)",
                t.id,
                t.title,
                covers.join(", "),
                t.id
            ));
        }
    }
    out
}

/// Repair failed and the fallback is allowed: the offline composition, marked as such. It is
/// "safe" because it is built only from our templates' reviewed wiring; if it does not
/// validate either, the invalid result stands.
fn fallback(
    failed: GeneratedPlan,
    instruction: &str,
    digest: &str,
    options: &GenerateOptions,
    ctx: &Context<'_>,
) -> Result<GeneratedPlan, Error> {
    let composed = compose_plan(instruction, digest, options, ctx, Vec::new());
    match composed {
        Ok(mut plan) if plan.status != Status::Invalid => {
            plan.status = Status::Fallback;
            plan.fallback = true;
            plan.mode = failed.mode;
            plan.attempts = failed.attempts;
            plan.usage = failed.usage;
            plan.candidates = failed.candidates;
            plan.notes.insert(
                0,
                "FALLBACK PLAN: the LLM's plan did not validate after repair; this plan is \
                 composed from templates (KEIRI_AGENT_LLM_FALLBACK is set)"
                    .into(),
            );
            plan.suggestions.extend(failed.suggestions);
            Ok(plan)
        }
        _ => {
            let mut failed = failed;
            failed.notes.push(
                "the fallback was allowed, but no template composition validates either".into(),
            );
            Ok(failed)
        }
    }
}

/// Rewrites the columns a composed plan names to the attached file's header when they are the
/// same after normalising (case, full-width/half-width, spaces, `_`), with a note for each;
/// any other difference stays a `column.unknown` finding and becomes a question.
fn fit_columns(plan: &mut Plan, ctx: &Context<'_>, lang: Lang, notes: &mut Vec<String>) {
    if ctx.file_schemas.is_empty() {
        return;
    }
    let (fitted, done) = keiri_plan::fit_columns(plan, ctx.catalog, &ctx.file_schemas);
    *plan = fitted;
    for (node, input, from, to) in done {
        notes.push(match lang {
            Lang::Ja => format!(
                "{node} の {input} の列「{from}」を、ファイルの見出し「{to}」に合わせました"
            ),
            Lang::En => {
                format!("{node}.{input}: column {from:?} matched to the file's header {to:?}")
            }
        });
    }
}

/// The offline path: templates (named or retrieved) composed by their contracts, validated,
/// with questions for what they import and nobody supplied.
pub fn compose_plan(
    instruction: &str,
    digest: &str,
    options: &GenerateOptions,
    ctx: &Context<'_>,
    mut notes: Vec<String>,
) -> Result<GeneratedPlan, Error> {
    ctx.report(Stage::Retrieving, None, "choosing templates");
    let templates = with_retriever(ctx, |retriever| {
        select_templates(instruction, digest, options, ctx.templates, retriever)
    })?;
    // Retrieval picks the flows that match best; a part the instruction also asks for (an
    // Excel report, a notification) is then added by a template that serves it, so it is not
    // dropped. Templates the user named are kept as named: what they lack becomes a note.
    let templates = if options.templates.is_empty() && !templates.is_empty() {
        crate::intent::complete(instruction, templates, ctx.templates)
    } else {
        templates
    };
    if templates.is_empty() {
        return Err(Error::InvalidArgument(
            "no template matches the instruction: name templates explicitly, or configure an \
             LLM (OPENAI_API_KEY, AZURE_OPENAI_*, KEIRI_LLM_BASE_URL)"
                .into(),
        ));
    }
    ctx.report(
        Stage::Composing,
        None,
        format!(
            "composing {}",
            templates
                .iter()
                .map(|t| t.id.as_str())
                .collect::<Vec<_>>()
                .join(" + ")
        ),
    );
    let composition = compose(
        &templates,
        &ComposeOptions {
            plan_id: options.plan_id.clone(),
            ..Default::default()
        },
    )
    .map_err(Error::Compose)?;
    for c in &composition.conflicts {
        notes.push(format!("{}: {}", c.code(), c.message(options.lang)));
    }
    ctx.report(Stage::Validating, None, "validating the composition");
    let validate_options = keiri_plan::Options {
        lang: options.lang,
        file_schemas: ctx.file_schemas.clone(),
        ..Default::default()
    };
    let mut plan = composition.plan.clone();
    plan.description = Some(instruction.trim().to_string());
    fit_columns(&mut plan, ctx, options.lang, &mut notes);
    let mut findings = validate(&plan, ctx.catalog, &validate_options);
    let mut requirements = composition.requirements(&findings, ctx.catalog);
    // Answers are applied in rounds: an answered file path makes the file's columns known,
    // and the column questions that raises may already be answered too. Each round applies
    // at least one answer, so there are at most as many rounds as answers.
    let mut applied: HashSet<String> = HashSet::new();
    loop {
        let to_apply: Vec<Requirement> = requirements
            .iter()
            .filter(|r| options.answers.contains_key(&r.id) && !applied.contains(&r.id))
            .cloned()
            .collect();
        if to_apply.is_empty() {
            break;
        }
        ctx.report(Stage::Questions, None, "applying the answers");
        applied.extend(to_apply.iter().map(|r| r.id.clone()));
        plan = apply_answers(&plan, &to_apply, &options.answers).map_err(Error::Answers)?;
        // Fit the columns that differ only in how they are written.
        fit_columns(&mut plan, ctx, options.lang, &mut notes);
        findings = validate(&plan, ctx.catalog, &validate_options);
        requirements = build_requirements(&plan, &findings, ctx.catalog);
    }
    notes.extend(crate::intent::unserved_notes(
        instruction,
        &plan,
        options.lang,
    ));
    let issues: Vec<Issue> = findings.iter().map(Issue::from).collect();
    let errors: Vec<Issue> = issues.iter().filter(|i| i.is_error()).cloned().collect();
    let json = plan_json(&plan);
    let status = if errors.is_empty() {
        Status::Valid
    } else if errors
        .iter()
        .all(|e| answerable(e, &json, &plan, &requirements))
    {
        Status::NeedsAnswers
    } else {
        Status::Invalid
    };
    notes.push(OFFLINE_NOTE.into());
    let mut candidates: Vec<String> = Vec::new();
    for n in &plan.graph {
        if let Some(b) = &n.block
            && !candidates.contains(b)
        {
            candidates.push(b.clone());
        }
    }
    let suggestions = if status == Status::Invalid {
        suggestions(&errors, &plan, &requirements, ctx.templates)
    } else {
        Vec::new()
    };
    ctx.record(
        Event::new("validating", "compose")
            .validation_errors(errors.len() as u32)
            .block_distribution(plan.graph.iter().filter_map(|g| g.block.as_deref())),
    );
    Ok(GeneratedPlan {
        plan,
        status,
        mode: ApplyMode::Compose,
        fallback: false,
        reasoning: format!(
            "composed from templates {} by their import/export contracts",
            templates
                .iter()
                .map(|t| t.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        candidates,
        templates: templates.iter().map(|t| t.id.clone()).collect(),
        attempts: Vec::new(),
        requirements,
        errors,
        suggestions,
        notes,
        usage: Usage::default(),
    })
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
