//! Plan generation use cases: `templates_list` and `plan_generate`.
//!
//! `plan_generate` runs the two-stage planner of `keiri-design` with the workspace's
//! catalog, templates and LLM configuration (process environment over `<workspace>/.env`).
//! With no LLM configured, `compose` mode still works offline. `plan_generate` is async: the
//! front-ends await it on their runtime, and what blocks (documents, the embedding model, a
//! verification run) goes to that runtime's blocking pool.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{ApiError, Context, ErrorCode, Lang};

pub use keiri_design::{ApplyMode, GeneratedPlan, Progress, Stage, Status};

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TemplatesListRequest {
    /// Only templates whose id, titles, descriptions or tags contain this text.
    #[serde(default)]
    pub query: Option<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TemplatesListResponse {
    pub templates: Vec<TemplateSummary>,
    pub issues: Vec<crate::json::CatalogIssue>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TemplateSummary {
    pub id: String,
    pub version: String,
    pub category: String,
    pub title: String,
    pub title_en: String,
    pub description: String,
    pub description_en: String,
    pub tags: Vec<String>,
    pub imports: Vec<String>,
    pub exports: Vec<String>,
}

/// Lists the templates, optionally filtered by a query over id, titles, descriptions and tags.
pub fn templates_list(
    ctx: &Context,
    req: TemplatesListRequest,
) -> Result<TemplatesListResponse, ApiError> {
    let (templates, issues) = crate::plan::load_templates(ctx);
    let query = req.query.unwrap_or_default().trim().to_lowercase();
    let templates = templates
        .iter()
        .filter(|t| {
            query.is_empty()
                || [
                    Some(t.id.as_str()),
                    Some(t.title.as_str()),
                    t.title_en.as_deref(),
                    Some(t.description.as_str()),
                    t.description_en.as_deref(),
                ]
                .into_iter()
                .flatten()
                .chain(t.tags.iter().map(String::as_str))
                .any(|s| s.to_lowercase().contains(&query))
        })
        .map(|t| TemplateSummary {
            id: t.id.clone(),
            version: t.version.clone(),
            category: t.category.clone(),
            title: t.title.clone(),
            title_en: t.title_en.clone().unwrap_or_default(),
            description: t.description.clone(),
            description_en: t.description_en.clone().unwrap_or_default(),
            tags: t.tags.clone(),
            imports: t.imports.keys().cloned().collect(),
            exports: t.exports.keys().cloned().collect(),
        })
        .collect();
    let issues = issues
        .into_iter()
        .map(|i| crate::json::CatalogIssue {
            file: i.file.display().to_string(),
            line: i.line,
            column: i.column,
            message: i.message,
        })
        .collect();
    Ok(TemplatesListResponse { templates, issues })
}
crate::surface::function!(plain templates_list(crate::TemplatesListRequest) -> crate::TemplatesListResponse);
// The planner tools return the plan as YAML plus the planner's own types, which have no
// schema: no output schema. Nothing is written (a plan is registered only by the user), so
// they are read-only.
crate::surface::tool!(plain templates_list(crate::TemplatesListRequest) -> crate::TemplatesListResponse {
    name: "templates_list",
    title: "List plan templates",
    read_only: true,
    fronts: keiri_agent::Fronts::MCP,
    output_schema: false,
    description: TEMPLATES_LIST,
});

const TEMPLATES_LIST: &str = "\
List the plan templates (reusable accounting subflows: invoice duplicate detection, bank \
reconciliation, PO policy compliance, 3-way match, payroll anomalies, monthly close, exception \
report, ...) with id, category, titles, descriptions, tags and their import/export names. \
query filters by text.";

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanGenerateRequest {
    /// What the plan should do, in plain Japanese or English.
    pub instruction: String,
    /// Reference documents (paths inside the workspace) whose digest goes into the prompt.
    #[serde(default)]
    pub docs: Vec<String>,
    /// Template ids to use (see templates_list); empty: chosen by retrieval.
    #[serde(default)]
    pub templates: Vec<String>,
    /// compose (offline, from templates), hint (an LLM with templates as constraints) or
    /// llm-only. Left out: hint when a model is configured, else compose (and a note says so),
    /// so a first generation without a key composes a plan instead of failing.
    #[serde(default)]
    #[schemars(schema_with = "crate::json::apply_mode_schema")]
    pub apply_mode: Option<ApplyMode>,
    /// Allow a marked fallback plan when repair fails or the LLM cannot be used (default:
    /// KEIRI_AGENT_LLM_FALLBACK).
    #[serde(default)]
    pub fallback: Option<bool>,
    /// Repair rounds after the first wiring (default 2).
    #[serde(default)]
    pub max_repair: Option<u32>,
    /// Answers to the requirements of an earlier call, by requirement id.
    #[serde(default)]
    pub answers: Map<String, Value>,
    /// The plan id (default generated_plan).
    #[serde(default)]
    pub plan_id: Option<String>,
    /// Block ids that must be candidates.
    #[serde(default)]
    pub pinned_blocks: Vec<String>,
    /// Message language, `ja` or `en`; the server's default when left out.
    #[serde(default)]
    #[schemars(schema_with = "crate::json::lang_schema")]
    pub lang: Option<Lang>,
    /// Candidates per category, 5 to 8 (default: retrieval's).
    #[serde(default)]
    pub topk_per_category: Option<usize>,
    /// Characters of the document digest in the prompt (default 4,000).
    #[serde(default)]
    pub max_docs_chars: Option<usize>,
    /// Whether the model may put `when` conditions on nodes (default true).
    #[serde(default)]
    pub suggest_when: Option<bool>,
    /// Whether the model may make loop nodes, foreach / while (default true).
    #[serde(default)]
    pub suggest_foreach: Option<bool>,
    /// The loop variable's name the model is asked to use (default `item`).
    #[serde(default)]
    pub foreach_var_name: Option<String>,
    /// Run each plan that validates (and asks nothing more) on the attached files (`docs`)
    /// before accepting it: a node that fails at run time (a missing column, an input it
    /// cannot use) goes back to the repair loop as a finding (its code, the input and column
    /// names, its inputs' columns; never the data), within `max_repair`. The runs read only
    /// the attached files, write only under `.keiri/verify-runs/` (removed after), read no
    /// `${env.*}` and reach no network. The window turns it on when documents are attached.
    #[serde(default)]
    pub verify_by_running: bool,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PlanGenerateResponse {
    #[serde(flatten)]
    pub generated: GeneratedPlan,
    /// The plan as YAML, ready for the editor, `keiri validate` or `plan_register`.
    pub yaml: String,
    /// Documents that could not be read (the plan was made without them).
    pub unreadable_docs: Vec<String>,
}

/// One streamed event of `plan_generate`: a stage's progress and the time since the call
/// began, for "skeleton… 3.2 s".
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct GenerationEvent {
    #[serde(flatten)]
    pub progress: Progress,
    /// Milliseconds since the generation started.
    pub elapsed_ms: u64,
}

/// What a generation reads before the planner starts: all of it blocking work (documents,
/// catalog, templates, the embedding model), done once on the blocking pool.
struct Prepared {
    env: keiri_llm::Env,
    digest: keiri_design::DocumentDigest,
    file_schemas: Vec<keiri_plan::FileSchema>,
    /// The attached files and the files named in answers, as given.
    attached: Vec<String>,
    /// The attached files, resolved: all a verification run may read.
    samples: Vec<std::path::PathBuf>,
    catalog: std::sync::Arc<keiri_plan::Catalog>,
    templates: std::sync::Arc<keiri_plan::Templates>,
    retriever: std::sync::Arc<keiri_search::Retriever>,
    retrieval_notes: Vec<String>,
    subflow_plans: Vec<keiri_design::schema::PlanCandidate>,
    /// The mode the request asked for, or the one chosen for it.
    apply_mode: ApplyMode,
    /// Compose was chosen because no model is configured (the request named no mode).
    composed_without_model: bool,
}

fn prepare(ctx: &Context, req: &PlanGenerateRequest) -> Result<Prepared, ApiError> {
    // The process environment over `<workspace>/.env` over the saved settings and keychain.
    let env = crate::settings::llm_env(ctx)?;
    let (apply_mode, composed_without_model) = match req.apply_mode {
        Some(mode) => (mode, false),
        None if keiri_llm::Llm::from_env(&env).is_ok() => (ApplyMode::default(), false),
        None => (ApplyMode::Compose, true),
    };
    let max_docs_chars = req
        .max_docs_chars
        .unwrap_or(keiri_design::DEFAULT_MAX_DOCS_CHARS);
    let policy = ctx.path_policy();
    // A file the user named in an answer (a file question answered with a path) is read like
    // an attached one: its columns are checked and fitted the same way, so generate and
    // `keiri validate` on the written plan give one verdict.
    let mut attached = req.docs.clone();
    for named in req.answers.values().filter_map(Value::as_str) {
        let is_file = policy
            .resolve_existing(named)
            .is_ok_and(|path| path.is_file());
        if is_file && !attached.iter().any(|a| a.trim() == named.trim()) {
            attached.push(named.trim().to_string());
        }
    }
    let digest =
        keiri_design::digest_documents(&policy, &attached, max_docs_chars).map_err(design_error)?;
    // The attached CSV/Excel files' tables: the wiring is told their headers, validation
    // checks the columns nodes name, compose fits them.
    let file_schemas = keiri_design::file_schemas(&policy, &attached);
    // What a verification run may read: the attached files and those named in answers.
    let samples = attached
        .iter()
        .filter_map(|path| policy.resolve_existing(path).ok())
        .filter(|path| path.is_file())
        .collect();
    let (catalog, catalog_issues) = crate::load_catalog(ctx);
    let (templates, template_issues) = crate::plan::load_templates(ctx);
    // A block spec or template that does not load is left out of the plan: said, so that a
    // team's own template with a typo is not a silent "no template fits".
    let lang = req.lang.unwrap_or(ctx.lang);
    let mut retrieval_notes: Vec<String> = catalog_issues
        .iter()
        .chain(&template_issues)
        .map(|i| unloaded_note(i, &ctx.workspace, lang))
        .collect();
    // The retriever the Candidates panel, the chat and MCP search too, so the model gets the
    // candidates the user sees. Compose ranks only templates, lexically: it loads the
    // embedding model only to propose the attached files' columns by meaning, and a window
    // does not wait for it (until it has loaded, those proposals come from the dictionary and
    // the values alone).
    let embedding = if apply_mode == ApplyMode::Compose {
        if file_schemas.is_empty() {
            crate::retrieve::Embedding::Off
        } else {
            crate::retrieve::Embedding::Background
        }
    } else {
        crate::retrieve::Embedding::Wait
    };
    let (retriever, _) = crate::retrieve::shared_retriever(ctx, embedding, &mut retrieval_notes)?;
    Ok(Prepared {
        env,
        digest,
        file_schemas,
        attached,
        samples,
        catalog,
        templates,
        retriever,
        retrieval_notes,
        subflow_plans: registered_plans(ctx),
        apply_mode,
        composed_without_model,
    })
}

/// The note for a block spec or template file that did not load.
fn unloaded_note(
    issue: &keiri_plan::CatalogIssue,
    workspace: &std::path::Path,
    lang: Lang,
) -> String {
    let file = issue
        .file
        .strip_prefix(workspace)
        .unwrap_or(&issue.file)
        .display();
    let at = issue.line.map(|l| format!(":{l}")).unwrap_or_default();
    match lang {
        Lang::Ja => format!(
            "{file}{at} を読めないため、このファイルのブロックやテンプレートは使っていません: {}",
            issue.message
        ),
        Lang::En => format!(
            "{file}{at} did not load, so its block or template is not used: {}",
            issue.message
        ),
    }
}

/// Generates a plan (see the module docs), sending each stage to `events` as it happens.
///
/// `cancel` stops it as soon as it fires: the model call in flight is aborted and the result
/// is [`ErrorCode::Cancelled`]. Nothing is written by a generation, so a cancelled one leaves
/// nothing behind but its event log.
pub async fn plan_generate(
    ctx: &Context,
    req: PlanGenerateRequest,
    events: &crate::EventSink<GenerationEvent>,
    cancel: &keiri_llm::CancellationToken,
) -> Result<PlanGenerateResponse, ApiError> {
    if req.instruction.trim().is_empty() {
        return Err(ApiError::new(
            ErrorCode::InvalidRequest,
            "the instruction is empty",
        ));
    }
    let started = std::time::Instant::now();
    let req = std::sync::Arc::new(req);
    let prepared = {
        let req = req.clone();
        let prepare = crate::stream::blocking(ctx, move |ctx| prepare(ctx, &req));
        tokio::select! {
            prepared = prepare => prepared?,
            () = cancel.cancelled() => return Err(cancelled()),
        }
    };
    let defaults = keiri_design::GenerateOptions::default();
    let options = keiri_design::GenerateOptions {
        topk_per_category: req.topk_per_category,
        max_docs_chars: req
            .max_docs_chars
            .unwrap_or(keiri_design::DEFAULT_MAX_DOCS_CHARS),
        suggest_when: req.suggest_when.unwrap_or(defaults.suggest_when),
        suggest_foreach: req.suggest_foreach.unwrap_or(defaults.suggest_foreach),
        foreach_var_name: req
            .foreach_var_name
            .clone()
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| defaults.foreach_var_name.clone()),
        plan_id: req
            .plan_id
            .clone()
            .unwrap_or_else(|| "generated_plan".into()),
        max_repair_attempts: req
            .max_repair
            .unwrap_or(keiri_design::DEFAULT_MAX_REPAIR_ATTEMPTS),
        apply_mode: prepared.apply_mode,
        templates: req.templates.clone(),
        pinned_blocks: req.pinned_blocks.clone(),
        allow_fallback: req.fallback.unwrap_or_else(|| {
            keiri_design::fallback_allowed(prepared.env.get("KEIRI_AGENT_LLM_FALLBACK"))
        }),
        answers: req.answers.clone(),
        lang: req.lang.unwrap_or(ctx.lang),
    };
    // No provider is not an error here: compose mode works without one, and the planner
    // says clearly when a mode needs one.
    let llm = keiri_llm::Llm::from_env(&prepared.env).ok();
    // The JSONL event log of this run; a log that cannot be opened must not stop the work.
    let log = crate::llm::event_log(ctx, &prepared.env, None);
    let verify_lang = req.lang.unwrap_or(ctx.lang);
    // A verification run executes blocks: blocking work, on the blocking pool.
    let samples = std::sync::Arc::new(prepared.samples.clone());
    let verify = |plan: keiri_plan::Plan| -> keiri_design::VerifyRun {
        let ctx = ctx.clone();
        let samples = samples.clone();
        let cancel = cancel.child_token();
        Box::pin(async move {
            // The run stops with the generation, and when the generation is dropped.
            let _stop = cancel.clone().drop_guard();
            crate::stream::blocking(&ctx, move |ctx| {
                Ok(crate::run::verify::verify_plan(
                    ctx,
                    &plan,
                    &samples,
                    verify_lang,
                    &cancel,
                    crate::run::verify::VERIFY_BUDGET,
                ))
            })
            .await
            .unwrap_or_default()
        })
    };
    let (ptx, mut prx) = tokio::sync::mpsc::unbounded_channel::<Progress>();
    let mut dctx = keiri_design::Context::new(&prepared.catalog, &prepared.templates)
        .with_retriever(&prepared.retriever)
        .with_progress(ptx)
        .with_subflow_plans(prepared.subflow_plans)
        .with_file_schemas(prepared.file_schemas)
        .with_attached(prepared.attached);
    if req.verify_by_running {
        dctx = dctx.with_verifier(&verify);
    }
    dctx.call_options = dctx.call_options.clone().with_cancel(cancel.clone());
    if let Some(llm) = &llm {
        dctx = dctx.with_llm(llm);
    }
    if let Some(log) = log {
        dctx = dctx.with_log(log);
    }
    let forward = async {
        while let Some(progress) = prx.recv().await {
            events.send(GenerationEvent {
                progress,
                elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            });
        }
    };
    let generate = async {
        // Stages without a model call (retrieval, compose, validation) do not look at the
        // token, so the whole generation races it.
        let out = tokio::select! {
            out = keiri_design::generate_plan(
                &req.instruction, &prepared.digest.digest, &options, &dctx,
            ) => Some(out),
            () = cancel.cancelled() => None,
        };
        // Dropping the context drops the progress sender, ending `forward`.
        drop(dctx);
        out
    };
    let (out, ()) = tokio::join!(generate, forward);
    let mut result = match out {
        Some(Err(e)) if ErrorCode::from(&e) == ErrorCode::Cancelled => return Err(cancelled()),
        Some(out) => out.map_err(design_error)?,
        None => return Err(cancelled()),
    };
    // How the candidates were ranked (BM25 only without a model, specs that did not load).
    result.notes.extend(prepared.retrieval_notes);
    if prepared.composed_without_model {
        // Said once, with the reason: the composer's own offline note gives way to this one.
        let offline = keiri_design::offline_note(verify_lang);
        result.notes.retain(|n| *n != offline);
        result.notes.insert(
            0,
            verify_lang.pick("AIが設定されていないため、テンプレート合成で作りました。設定でAIをつなぐと、指示に合わせてAIが組み立てます",
                "no AI model is configured, so the plan was composed from templates; connect a model in the settings to have it built for your instruction",
            ).to_string(),
        );
    }
    if req.verify_by_running && prepared.samples.is_empty() {
        result.notes.push(verify_lang.pick("試行実行による確認は行っていません: 添付されたファイルがありません（確認の実行は添付ファイルだけを読みます）",
            "verify-by-running ran nothing: no file is attached (a verification run reads only the attached files)",
        ).to_string());
    }
    let yaml = keiri_plan::save_plan(&result.plan)
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
    Ok(PlanGenerateResponse {
        generated: result,
        yaml,
        unreadable_docs: prepared.digest.unreadable,
    })
}
crate::surface::function!(streaming plan_generate(crate::PlanGenerateRequest) -> crate::PlanGenerateResponse, events crate::GenerationEvent);
crate::surface::tool!(streaming plan_generate(crate::PlanGenerateRequest) -> crate::PlanGenerateResponse {
    name: "plan_generate",
    title: "Generate a plan",
    read_only: true,
    fronts: keiri_agent::Fronts::MCP,
    output_schema: false,
    description: PLAN_GENERATE,
});

const PLAN_GENERATE: &str = "\
Generate a Keiri Studio plan (a YAML DAG of catalog blocks) from an instruction in Japanese or \
English, optionally with reference documents (paths) and templates. apply_mode compose merges \
templates offline without an LLM (only templates whose job the instruction names; no_fit when \
none does); hint and llm-only need an LLM provider configured on the server (else \
LLM_NOT_CONFIGURED naming the variables). Left out, apply_mode is hint when a provider is \
configured and compose (with a note saying so) when none is. Returns status (valid | needs_answers | invalid | \
fallback | no_fit), composition (the templates used, in one line), yaml, requirements (typed \
questions: answer them with answers in a new call or with requirements_answer), errors, \
suggestions (with no_fit: the nearest templates and blocks), attempts and usage. \
Nothing is written; the plan is not registered.";

fn cancelled() -> ApiError {
    ApiError::new(ErrorCode::Cancelled, "the generation was cancelled")
}

fn design_error(e: keiri_design::Error) -> ApiError {
    ApiError::with_lower_code(&e, e.code())
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequirementsAnswerRequest {
    /// The plan YAML the questions were asked about.
    pub yaml: String,
    /// Answers by requirement id.
    #[serde(default)]
    pub answers: Map<String, Value>,
    /// Message language, `ja` or `en`; the server's default when left out.
    #[serde(default)]
    #[schemars(schema_with = "crate::json::lang_schema")]
    pub lang: Option<Lang>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RequirementsAnswerResponse {
    /// The plan with the answers filled into `vars` and wired into the nodes that needed
    /// them (re-serialised, so comments of the input are not kept).
    pub yaml: String,
    pub valid: bool,
    pub findings: Vec<crate::json::Finding>,
    /// Questions still open after these answers.
    pub requirements: Vec<keiri_plan::Requirement>,
}

/// Applies answers to the questions a plan raises (its open `${vars.*}`, Excel reads without
/// a path or sheet, an `ai.process_llm` without an output schema): each answer is checked
/// against its requirement, then the plan is validated again.
pub fn requirements_answer(
    ctx: &Context,
    req: RequirementsAnswerRequest,
) -> Result<RequirementsAnswerResponse, ApiError> {
    let lang = req.lang.unwrap_or(ctx.lang);
    let loaded = keiri_plan::load_plan(&req.yaml)
        .map_err(|e| ApiError::new(ErrorCode::YamlParse, e.to_string()))?;
    let (catalog, _) = crate::load_catalog(ctx);
    let mut options = keiri_plan::Options {
        lang,
        known_plans: keiri_plan::designs_index(&ctx.designs_dir)
            .into_keys()
            .collect(),
        file_schemas: crate::plan::plan_file_schemas(ctx, &loaded.plan),
    };
    let findings = keiri_plan::validate(&loaded.plan, &catalog, &options);
    let requirements = keiri_plan::build_requirements(&loaded.plan, &findings, &catalog);
    // Questions are answered one at a time in the Design chat: apply the answers given and
    // leave the other questions open.
    let given: Vec<keiri_plan::Requirement> = requirements
        .into_iter()
        .filter(|r| req.answers.contains_key(&r.id))
        .collect();
    let answered = keiri_plan::apply_answers(&loaded.plan, &given, &req.answers)
        .map_err(|e| ApiError::new(ErrorCode::InvalidRequest, e.to_string()))?;
    let yaml = keiri_plan::save_plan(&answered)
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
    // An answer may name a file (a CSV path): its columns are checked from now on, and the
    // columns it lacks become questions.
    options.file_schemas = crate::plan::plan_file_schemas(ctx, &answered);
    let after = keiri_plan::validate(&answered, &catalog, &options);
    let remaining = keiri_plan::build_requirements(&answered, &after, &catalog);
    let checked = crate::plan_validate(
        ctx,
        crate::json::PlanValidateRequest {
            yaml: yaml.clone(),
            lang: Some(lang),
            ..Default::default()
        },
    )?;
    Ok(RequirementsAnswerResponse {
        yaml,
        valid: checked.valid,
        findings: checked.findings,
        requirements: remaining,
    })
}
crate::surface::function!(plain requirements_answer(crate::RequirementsAnswerRequest) -> crate::RequirementsAnswerResponse);
crate::surface::tool!(plain requirements_answer(crate::RequirementsAnswerRequest) -> crate::RequirementsAnswerResponse {
    name: "requirements_answer",
    title: "Answer a plan's questions",
    read_only: true,
    fronts: keiri_agent::Fronts::MCP,
    output_schema: false,
    description: REQUIREMENTS_ANSWER,
});

const REQUIREMENTS_ANSWER: &str = "\
Apply answers (by requirement id) to the open questions of a plan's YAML: undefined \
${vars.*}, Excel reads without path or sheet, an ai.process_llm without an output schema. Each \
answer is checked against its requirement (type, options, pattern); returns the updated yaml, \
valid, findings and the requirements still open. A bad answer is an INVALID_REQUEST tool error.";

/// Ids of the plans registered in `designs/`, sorted: what a generated plan may call.
/// The registered plans (the latest of each id in `designs/`) a generated plan may call, with
/// the vars they take and the aliases they publish, sorted by id.
pub(crate) fn registered_plans(ctx: &Context) -> Vec<keiri_design::schema::PlanCandidate> {
    let mut plans: Vec<keiri_design::schema::PlanCandidate> =
        keiri_plan::designs_index(&ctx.designs_dir)
            .values()
            .map(|(_, plan)| keiri_design::schema::PlanCandidate::from_plan(plan))
            .collect();
    plans.sort_by(|a, b| a.id.cmp(&b.id));
    plans
}
