//! Running plans: `plan_run` and `run_resume` (streamed: every `events.jsonl` line is an
//! event), `run_get`, `run_list`, `run_output` (a node's outputs for a grid) and `run_cancel`.
//!
//! A run validates the plan first (`PLAN_INVALID` with the findings), then hands it to
//! keiri-run. A node that fails is not an API error: the response says `status: failed` and
//! lists each failed node with its code. Events are passed to the caller's sink as the JSON
//! lines of `events.jsonl`.

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use keiri_llm::CancellationToken;
use keiri_run::{RunError, RunOptions, RunState};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::plan::{invalid, load_catalog};
use crate::{ApiError, Context, ErrorCode, Lang};

mod files;
mod running;

pub use running::Running;
pub(crate) mod verify;

pub use files::RunFile;

/// Start a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlanRunRequest {
    /// The plan file (inside the workspace unless the front-end trusts its arguments).
    #[serde(default)]
    pub plan_path: Option<String>,
    /// The plan text, when there is no file.
    #[serde(default)]
    pub yaml: Option<String>,
    /// Vars that override the plan's.
    #[serde(default)]
    pub vars: IndexMap<String, Json>,
    /// `NAME → path`: sets `vars.NAME` to the file's path (checked to exist and to pass the
    /// path policy). Inputs are only read, never modified.
    #[serde(default)]
    pub inputs: IndexMap<String, String>,
    /// Environment variable names `${env.X}` may read.
    #[serde(default)]
    pub allow_env: Vec<String>,
    /// Let blocks write to output paths the plan names; otherwise every write stays under
    /// the run directory.
    #[serde(default)]
    pub write: bool,
    /// Where runs go instead of `<workspace>/runs` (`--out-dir`).
    #[serde(default)]
    pub runs_dir: Option<String>,
    #[serde(default)]
    #[schemars(schema_with = "crate::json::lang_schema")]
    pub lang: Option<Lang>,
}

/// Continue a run after its last finished node.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunResumeRequest {
    pub run_id: String,
    /// The plan, when it changed since the run (else the run's own `plan.yaml` is used and
    /// `plan_id` is required).
    #[serde(default)]
    pub plan_path: Option<String>,
    #[serde(default)]
    pub yaml: Option<String>,
    #[serde(default)]
    pub plan_id: Option<String>,
    #[serde(default)]
    pub vars: IndexMap<String, Json>,
    #[serde(default)]
    pub inputs: IndexMap<String, String>,
    #[serde(default)]
    pub allow_env: Vec<String>,
    #[serde(default)]
    pub write: bool,
    /// A person's answers to the paused nodes, by node id (see crates/keiri-run/README.md,
    /// "Human in the loop", for each question's answer shape).
    #[serde(default)]
    pub answers: IndexMap<String, Json>,
    /// The `runs_dir` the run was started with.
    #[serde(default)]
    pub runs_dir: Option<String>,
    #[serde(default)]
    pub lang: Option<Lang>,
}

/// One failed node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunFailure {
    pub node: String,
    pub code: String,
    pub message: String,
    /// What to do about it, when the block said (the sheets the workbook has, the encoding
    /// that reads the file, the columns the rows have).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl RunFailure {
    fn new(lang: Lang, f: &keiri_run::state::NodeFailure) -> RunFailure {
        RunFailure {
            node: f.node.clone(),
            code: f.code.clone(),
            message: lang.pick(&f.message_ja, &f.message_en).to_string(),
            hint: match lang {
                Lang::Ja => f.hint_ja.clone(),
                Lang::En => f.hint_en.clone(),
            },
        }
    }
}

/// Something a person must see about a node that ran (the run still finished): a file with
/// no data rows (`NO_ROWS`), a check that flagged nearly every row (`MOSTLY_FLAGGED`), rows
/// left out and why (`ROWS_SKIPPED`), values that could not be read (`VALUES_UNREADABLE`), a
/// weaker method used than the one asked for (`FALLBACK`), a file written with characters its
/// encoding cannot hold replaced (`CHARACTERS_REPLACED`). `code` is stable; the keiri-run
/// crate README lists every code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunWarning {
    /// The node (`loop/child` inside a loop body or subflow).
    pub node: String,
    pub code: String,
    pub message: String,
}

impl RunWarning {
    fn new(lang: Lang, w: &keiri_run::state::NodeWarning) -> RunWarning {
        RunWarning {
            node: w.node.clone(),
            code: w.code.clone(),
            message: lang.pick(&w.message_ja, &w.message_en).to_string(),
        }
    }
}

/// A node waiting for a person's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunPaused {
    pub node: String,
    /// What to ask: an object whose `kind` (`confirmation`, `input`, `table_review`, `diff`,
    /// `approval`) says which controls to show (empty when the node asked nothing in
    /// particular).
    pub question: serde_json::Map<String, Json>,
    pub message: String,
}

/// One top-level node's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunNode {
    pub id: String,
    pub status: keiri_run::NodeStatus,
}

/// What a run (or resume) did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlanRunResponse {
    pub run_id: String,
    pub plan_id: String,
    /// The run directory, relative to the workspace when inside it.
    pub run_dir: String,
    /// `finished`, `failed`, `cancelled` or `paused` (waiting for answers: `run_resume` with
    /// `answers` continues).
    pub status: keiri_run::RunStatus,
    pub failures: Vec<RunFailure>,
    pub nodes: Vec<RunNode>,
    /// The nodes waiting for an answer.
    pub paused: Vec<RunPaused>,
    /// What a person must see about the nodes that ran, in the order they were given.
    #[serde(default)]
    pub warnings: Vec<RunWarning>,
    /// Every file the run wrote: in its run folder, or with `write` where the plan named.
    #[serde(default)]
    pub files: Vec<RunFile>,
}

/// Read one run's state and events.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunGetRequest {
    pub plan_id: String,
    pub run_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunGetResponse {
    pub run_id: String,
    pub plan_id: String,
    /// `running` when the run has no end (still going, or the app was closed during it).
    pub status: keiri_run::RunStatus,
    pub started_at: String,
    pub nodes: Vec<RunNode>,
    pub failures: Vec<RunFailure>,
    pub paused: Vec<RunPaused>,
    /// What a person must see about the nodes that ran, in the order they were given.
    #[serde(default)]
    pub warnings: Vec<RunWarning>,
    /// The `events.jsonl` lines.
    pub events: Vec<Json>,
}

/// List runs, newest first.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunListRequest {
    /// Only this plan's runs.
    #[serde(default)]
    pub plan_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunSummary {
    pub plan_id: String,
    pub run_id: String,
    pub status: keiri_run::RunStatus,
    pub started_at: String,
    /// How long its last attempt took (absent while running, or when its events are unreadable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The files written to the workspace from this run (「書き込む」), who applied each, when.
    #[serde(default)]
    pub applied: Vec<crate::apply::AppliedWrite>,
    /// The questions answered in this run (approvals, confirmations, reviews): who answered
    /// each, when.
    #[serde(default)]
    pub answered: Vec<keiri_run::state::Answered>,
    /// The run's vars after its overrides (`--var`, `--input`, the window's inputs): the files
    /// it read, so a rerun can start from them.
    #[serde(default)]
    pub vars: IndexMap<String, Json>,
    /// The files the run wrote in its run folder (what 「書き込む」 copies out), by node, then
    /// path.
    #[serde(default)]
    pub files: Vec<RunFile>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunListResponse {
    pub runs: Vec<RunSummary>,
}

/// Stop a run in progress (started by this process: the studio or `keiri serve`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunCancelRequest {
    pub run_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunCancelResponse {
    /// False when no such run is in progress here (it may have just finished).
    pub cancelled: bool,
}

/// Read one node's saved outputs, for a person to look at.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunOutputRequest {
    pub plan_id: String,
    pub run_id: String,
    /// A top-level node id of the plan.
    pub node: String,
    /// Rows of each table to send (default 200, at most 1,000).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunOutputResponse {
    pub node: String,
    /// Output alias → `{"kind": "table", "row_count", "columns": [{name, type}], "rows",
    /// "truncated", "labels"?}` or `{"kind": "json", "value"}`; `labels` as a question's
    /// (headers, code labels and amount columns the catalog knows; absent when none).
    pub outputs: IndexMap<String, Json>,
    /// The workbook the node wrote (its `out_path` output, an .xlsx in the run directory),
    /// cell by cell: the patch's own diff for `excel.patch_workbook`, every written cell for a
    /// new workbook. `after` is relative to the workspace.
    pub workbook: Option<crate::WorkbookCompareResponse>,
    /// Where 「この結果で書き込む」 (`run_apply`) would write the node's file in the workspace;
    /// `null` when it stays in the run folder.
    pub apply_to: Option<String>,
    /// A file is at `apply_to` now, so applying replaces it (what is there is kept, and
    /// `run_undo_apply` puts it back); `false`: applying creates the file (undo removes it).
    pub apply_replaces: bool,
    /// The node's file is applied now (`run_undo_apply` puts back what was there).
    pub applied: bool,
}

fn runs_dir(ctx: &Context) -> PathBuf {
    ctx.workspace.join("runs")
}

/// The runs directory of a request: `<workspace>/runs`, or a folder the path policy allows.
fn chosen_runs_dir(ctx: &Context, raw: Option<&str>) -> Result<PathBuf, ApiError> {
    match raw {
        None => Ok(runs_dir(ctx)),
        Some(raw) => {
            let policy = ctx.path_policy();
            let resolved = if Path::new(raw).exists() {
                policy.resolve_existing(raw)
            } else {
                policy.resolve_new(raw)
            };
            resolved.map_err(|e| ApiError::lower(&e))
        }
    }
}

/// Parses a vars file (YAML or JSON, a mapping at the top) for `--vars-file`.
pub fn parse_vars(text: &str) -> Result<IndexMap<String, Json>, ApiError> {
    let doc = keiri_plan::yaml::parse(text)
        .map_err(|e| ApiError::new(ErrorCode::YamlParse, format!("the vars file: {e}")))?;
    match doc.value {
        Json::Object(map) => Ok(map.into_iter().collect()),
        Json::Null => Ok(IndexMap::new()),
        _ => Err(ApiError::new(
            ErrorCode::InvalidRequest,
            "the vars file must be a mapping of names to values",
        )),
    }
}

fn run_error(err: &RunError) -> ApiError {
    let code = match err {
        RunError::RunNotFound(_) => ErrorCode::RunNotFound,
        RunError::BadRunId(_) => ErrorCode::InvalidRequest,
        RunError::StateInvalid(_) => ErrorCode::RunStateInvalid,
        _ => ErrorCode::IoError,
    };
    ApiError::new(code, format!("{err}"))
}

/// Reads the plan text from a path or the request.
fn plan_text(ctx: &Context, path: Option<&str>, yaml: Option<&str>) -> Result<String, ApiError> {
    match (path, yaml) {
        (Some(p), _) => {
            let path = ctx
                .path_policy()
                .resolve_existing(p)
                .map_err(|e| ApiError::lower(&e))?;
            std::fs::read_to_string(&path).map_err(|e| {
                ApiError::new(
                    ErrorCode::IoError,
                    format!("reading {}: {e}", path.display()),
                )
            })
        }
        (None, Some(y)) => Ok(y.to_string()),
        (None, None) => Err(ApiError::new(
            ErrorCode::InvalidRequest,
            "give plan_path or yaml",
        )),
    }
}

/// `--input NAME=PATH`: each path must exist and pass the path policy; it becomes a var.
pub(crate) fn input_vars(
    ctx: &Context,
    inputs: &IndexMap<String, String>,
) -> Result<IndexMap<String, Json>, ApiError> {
    let policy = ctx.path_policy();
    inputs
        .iter()
        .map(|(name, raw)| {
            let path = policy
                .resolve_existing(raw)
                .map_err(|e| ApiError::new((&e).into(), format!("input {name}: {e}")))?;
            Ok((
                name.clone(),
                Json::String(path.to_string_lossy().into_owned()),
            ))
        })
        .collect()
}

fn now_and_random() -> (chrono::DateTime<chrono::Utc>, u64) {
    let now = chrono::Utc::now();
    // The run id only needs to differ between two runs started in the same millisecond.
    let nanos = u64::from(now.timestamp_subsec_nanos());
    let random = nanos ^ (u64::from(std::process::id()) << 20);
    (now, random)
}

struct Prepared {
    text: String,
    plan: keiri_plan::Plan,
    catalog: std::sync::Arc<keiri_plan::Catalog>,
}

/// The plan text checked as the run will see it, with the run's `vars` (its `--var`,
/// `--input` and the window's inputs) over the plan's own.
fn prepare(
    ctx: &Context,
    text: String,
    lang: Lang,
    vars: &IndexMap<String, Json>,
) -> Result<Prepared, ApiError> {
    let checked = crate::plan::check_as_run(ctx, &text, lang, vars);
    if checked.error_count() > 0 {
        return Err(invalid(&checked));
    }
    let Some(loaded) = checked.loaded else {
        return Err(invalid(&checked));
    };
    let (catalog, _) = load_catalog(ctx);
    Ok(Prepared {
        text,
        plan: loaded.plan,
        catalog,
    })
}

/// Runtime chat (実行チャット): a plan that still has open questions (a var the nodes read that
/// is defined without a value, how a generated plan marks what only the user can say, and
/// that the run does not set) asks them at its start ([`keiri_plan::ask_at_run_start`]): the
/// run pauses at the inserted `run_inputs` node with the same typed questions as at design
/// time, and its answers go to the nodes that read those vars. The plan the run records is
/// the one it ran; the registered plan is not touched. A resumed run is given the same
/// plan, so it finds the same node.
fn ask_open_vars(
    prepared: &mut Prepared,
    run_vars: &IndexMap<String, Json>,
    lang: Lang,
) -> Result<(), ApiError> {
    let open: Vec<keiri_plan::Requirement> =
        keiri_plan::build_requirements(&prepared.plan, &[], &prepared.catalog)
            .into_iter()
            .filter(|r| {
                r.required
                    && r.target.var.as_deref().is_some_and(|v| {
                        !run_vars.contains_key(v)
                            && prepared.plan.vars.get(v).is_some_and(|x| {
                                x.is_null() || x.as_str().is_some_and(|s| s.trim().is_empty())
                            })
                    })
            })
            .collect();
    let message = |vars: &[&str]| {
        lang.pick(
            &format!("この実行に必要な値を入力してください: {}", vars.join(", ")),
            &format!("Values this run needs: {}", vars.join(", ")),
        )
        .to_string()
    };
    let Some(asked) = keiri_plan::ask_at_run_start(&prepared.plan, &open, message) else {
        return Ok(());
    };
    prepared.text = keiri_plan::save_plan(&asked)
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
    prepared.plan = asked;
    Ok(())
}

/// The paths a run's blocks may read and write ([`keiri_run::paths`]): inside the context's
/// roots (the workspace, or `--root`), the files the request named as `inputs` (already
/// checked against the surface's own policy), and the run folder; never a `.env` file, a
/// `--deny` match or the settings folder. The same on every surface: a command-line run is
/// confined too, to the workspace and the files the user named.
pub(crate) fn run_path_policy(
    ctx: &Context,
    named_files: &[PathBuf],
    runs_dir: &Path,
) -> keiri_fs::PathPolicy {
    let roots = ctx
        .allowed_roots
        .iter()
        .cloned()
        .chain(named_files.iter().cloned());
    confined_path_policy(ctx, roots, runs_dir)
}

/// The paths a run may use: `roots` and its own run folder, less the surface's deny globs,
/// the default ones (`.env`, key files) and the settings folder.
pub(crate) fn confined_path_policy(
    ctx: &Context,
    roots: impl Iterator<Item = PathBuf>,
    runs_dir: &Path,
) -> keiri_fs::PathPolicy {
    // The run folder may not exist yet: it is created before any block runs.
    let _ = std::fs::create_dir_all(runs_dir);
    let roots = roots.chain(std::iter::once(runs_dir.to_path_buf()));
    let policy = keiri_fs::PathPolicy::new(roots)
        .with_deny(
            crate::context::DEFAULT_DENY
                .iter()
                .map(|s| s.to_string())
                .chain(ctx.deny.iter().cloned()),
        )
        .unwrap_or_else(|_| keiri_fs::PathPolicy::new(Vec::<PathBuf>::new()));
    match &ctx.config_dir {
        Some(dir) => policy.with_denied_dir(dir),
        None => policy,
    }
}

/// The environment variable names a run may read: the user's own list (the command line's
/// `--allow-env`, then the saved settings' `allow_env`), narrowed to `requested` when the
/// request names some. A request naming a variable the user did not allow is refused with
/// `ENV_NOT_ALLOWED`: the caller (an HTTP client, an MCP tool call, a model) never decides
/// which secrets a run sees.
fn allowed_env(
    ctx: &Context,
    requested: &[String],
    lang: Lang,
) -> Result<std::collections::BTreeSet<String>, ApiError> {
    let users: std::collections::BTreeSet<String> = user_allowed_env(ctx).into_iter().collect();
    if requested.is_empty() {
        return Ok(users);
    }
    let refused: Vec<&str> = requested
        .iter()
        .filter(|name| !users.contains(name.as_str()))
        .map(String::as_str)
        .collect();
    if !refused.is_empty() {
        let list = refused.join(", ");
        return Err(ApiError::new(
            ErrorCode::EnvNotAllowed,
            lang.pick(&format!(
                    "環境変数 {list} は利用者が許可していません。設定の allow_env か、コマンドラインの --allow-env で許可してください"
                ),
                &format!(
                    "environment variable {list} is not allowed by the user: allow it in the settings' allow_env or with --allow-env on the command line"
                ),
            ).to_string(),
        )
        .with_details(serde_json::json!({ "names": refused })));
    }
    Ok(requested.iter().cloned().collect())
}

/// The names the user allowed `${env.X}` to read: the command line's, then the settings'.
pub(crate) fn user_allowed_env(ctx: &Context) -> Vec<String> {
    let mut names = ctx.allow_env.clone();
    if let Ok(settings) = crate::settings::load_settings(ctx) {
        names.extend(settings.allow_env);
    }
    names
}

/// What a new run and a resumed one both need besides the plan text.
struct Launch {
    vars: IndexMap<String, Json>,
    inputs: IndexMap<String, String>,
    allow_env: Vec<String>,
    write: bool,
    /// The run to continue (`run_resume`); `None` starts a new one.
    resume: Option<String>,
    answers: IndexMap<String, Json>,
    runs_dir: PathBuf,
    lang: Lang,
}

/// Validates `text`, then runs it as `launch` says.
fn execute(
    ctx: &Context,
    text: String,
    launch: Launch,
    events: &crate::EventSink<keiri_run::Event>,
    cancel: CancellationToken,
) -> Result<PlanRunResponse, ApiError> {
    let Launch {
        mut vars,
        inputs,
        allow_env,
        write,
        resume,
        answers,
        runs_dir,
        lang,
    } = launch;
    let named = input_vars(ctx, &inputs)?;
    let named_files: Vec<PathBuf> = named
        .values()
        .filter_map(Json::as_str)
        .map(PathBuf::from)
        .collect();
    vars.extend(named);
    let mut prepared = prepare(ctx, text, lang, &vars)?;
    // A resumed run keeps the vars its earlier attempts were given (the engine sets the ones
    // given now over them): those are not asked again. A resume of a run killed mid-way,
    // without its inputs named again, paused to ask for the files it was already reading.
    let mut known = vars.clone();
    if let Some(run_id) = &resume {
        let earlier = keiri_run::RunDir::open(&runs_dir, &prepared.plan.id, run_id)
            .and_then(|dir| keiri_run::RunState::load(dir.path()));
        for (name, value) in earlier.map(|state| state.vars).unwrap_or_default() {
            if !value.is_null() {
                known.entry(name).or_insert(value);
            }
        }
    }
    ask_open_vars(&mut prepared, &known, lang)?;
    let (now, random) = now_and_random();
    let mut options = RunOptions::new(&ctx.workspace, now, random);
    options.designs_dir = ctx.designs_dir.clone();
    options.paths = run_path_policy(ctx, &named_files, &runs_dir);
    options.runs_dir = runs_dir;
    options.vars = vars;
    let allow_env = allowed_env(ctx, &allow_env, lang)?;
    options.env = allow_env
        .iter()
        .filter_map(|name| std::env::var(name).ok().map(|v| (name.clone(), v)))
        .collect();
    options.env_allow = allow_env;
    options.write = write;
    options.answers = answers;
    options.lang = lang;
    // Who answers: the user the studio (or the CLI, or the server) runs as.
    options.answered_by = Some(crate::apply::current_user());
    // The user's allowlist for network blocks and the ceiling of the run's bounds, from their
    // settings; never the plan's (a plan's `policy.limits` is held at the ceiling).
    let settings = crate::settings::load_settings(ctx).ok();
    options.ceiling =
        crate::settings::run_ceiling(settings.as_ref().and_then(|s| s.run_limits.as_ref()));
    options.allow_hosts = settings.map(|s| s.allow_hosts).unwrap_or_default();
    // The `ai.*` blocks' model, from the planner's settings (the process environment over
    // `.env` over the saved settings and keychain); without one those nodes fail with
    // `LLM_NOT_CONFIGURED` and the rest of the plan runs.
    options.llm = crate::settings::llm_env(ctx)
        .ok()
        .and_then(|env| keiri_llm::Llm::from_env(&env).ok());
    let run_id = resume
        .clone()
        .unwrap_or_else(|| keiri_run::records::new_run_id(now, random));
    options.resume = resume;
    options.cancel = cancel.clone();
    ctx.running.start(&run_id, cancel);
    let finished = Finished(ctx, run_id);
    let registry = keiri_run::block::Registry::builtins();
    let forward = |event: &keiri_run::Event| events.send(event.clone());
    let outcome = keiri_run::run(
        &prepared.plan,
        &prepared.text,
        &prepared.catalog,
        &registry,
        &options,
        &forward,
    )
    .map_err(|e| run_error(&e));
    drop(finished);
    let outcome = outcome?;
    let files = files::written_files(&ctx.workspace, &prepared.plan, &prepared.catalog, &outcome);
    let run_dir = outcome
        .run_dir
        .strip_prefix(&ctx.workspace)
        .unwrap_or(&outcome.run_dir)
        .to_string_lossy()
        .into_owned();
    Ok(PlanRunResponse {
        run_id: outcome.run_id,
        plan_id: outcome.plan_id,
        run_dir,
        status: outcome.status,
        failures: outcome
            .failures
            .iter()
            .map(|f| RunFailure::new(lang, f))
            .collect(),
        nodes: outcome
            .nodes
            .iter()
            .map(|(id, s)| RunNode {
                id: id.clone(),
                status: *s,
            })
            .collect(),
        paused: outcome.paused.iter().map(|p| paused(lang, p)).collect(),
        warnings: outcome
            .warnings
            .iter()
            .map(|w| RunWarning::new(lang, w))
            .collect(),
        files,
    })
}

fn paused(lang: Lang, p: &keiri_run::NodeFailure) -> RunPaused {
    RunPaused {
        node: p.node.clone(),
        question: match &p.question {
            Some(Json::Object(question)) => question.clone(),
            _ => serde_json::Map::new(),
        },
        message: lang.pick(&p.message_ja, &p.message_en).to_string(),
    }
}

/// Takes a run off [`Running`] however `execute` ends.
struct Finished<'a>(&'a Context, String);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.0.running.finish(&self.1);
    }
}

/// `write: true` lets blocks write where the plan says; only a front-end whose paths are the
/// user's own arguments (the CLI) may ask for it.
fn check_write(ctx: &Context, write: bool) -> Result<(), ApiError> {
    if write && !ctx.trust_arguments {
        return Err(ApiError::new(
            ErrorCode::PathDenied,
            "write: true is only for `keiri run --write`; here every file a run writes stays in its run directory",
        ));
    }
    Ok(())
}

/// Stops a run this process started; its stream then ends with status `cancelled`.
pub fn run_cancel(ctx: &Context, req: RunCancelRequest) -> Result<RunCancelResponse, ApiError> {
    keiri_run::records::check_run_id(&req.run_id).map_err(|e| run_error(&e))?;
    Ok(RunCancelResponse {
        cancelled: ctx.running.cancel(&req.run_id),
    })
}
crate::surface::function!(plain run_cancel(crate::RunCancelRequest) -> crate::RunCancelResponse);

/// One node's saved outputs: tables as their first rows with column types, the rest as JSON.
pub fn run_output(ctx: &Context, req: RunOutputRequest) -> Result<RunOutputResponse, ApiError> {
    const MAX_ROWS: usize = keiri_run::records::SHOWN_ROWS;
    let limit = req.limit.unwrap_or(200).min(MAX_ROWS);
    let dir = keiri_run::RunDir::open(&runs_dir(ctx), &req.plan_id, &req.run_id)
        .map_err(|e| run_error(&e))?;
    let state = RunState::load(dir.path()).map_err(|e| run_error(&e))?;
    if !state.nodes.contains_key(&req.node) {
        return Err(ApiError::new(
            ErrorCode::NotFound,
            format!("run {} has no node {}", req.run_id, req.node),
        ));
    }
    // A big table of a step that can run again was kept as its first rows (the checkpoint
    // policy, keiri-run's `RunDir::save_outputs`): shown with its real row count.
    let kept = dir.kept_in_part(&req.node).map_err(|e| run_error(&e))?;
    let outputs = match dir.load_shown(&req.node) {
        Ok(outputs) => outputs,
        // A node that failed or was skipped saved nothing.
        Err(RunError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            keiri_run::block::Outputs::default()
        }
        Err(e) => return Err(run_error(&e)),
    };
    let apply_to = match outputs.get("out_path") {
        Some(keiri_run::value::Value::Json(Json::String(out))) => {
            crate::apply::target_of(dir.path(), &req.node, Path::new(out))
        }
        _ => None,
    };
    Ok(RunOutputResponse {
        workbook: written_workbook(ctx, &outputs, apply_to.as_deref())?,
        applied: crate::apply::is_applied(dir.path(), &req.node),
        apply_replaces: apply_to
            .as_deref()
            .is_some_and(|rel| ctx.workspace.join(rel).is_file()),
        apply_to: apply_to.map(|p| p.to_string_lossy().into_owned()),
        node: req.node,
        outputs: outputs
            .0
            .iter()
            .map(|(k, v)| {
                let mut shown = keiri_run::records::preview(v, limit);
                if let Some(kept) = kept.get(k) {
                    shown["row_count"] = kept.rows.into();
                    shown["truncated"] = (kept.rows > limit).into();
                }
                (k.clone(), shown)
            })
            .collect(),
    })
}
crate::surface::function!(plain run_output(crate::RunOutputRequest) -> crate::RunOutputResponse);

/// The workbook a node wrote, as a cell diff (see [`RunOutputResponse::workbook`]).
fn written_workbook(
    ctx: &Context,
    outputs: &keiri_run::block::Outputs,
    apply_to: Option<&Path>,
) -> Result<Option<crate::WorkbookCompareResponse>, ApiError> {
    let Some(keiri_run::value::Value::Json(Json::String(out_path))) = outputs.0.get("out_path")
    else {
        return Ok(None);
    };
    let path = Path::new(out_path);
    let is_workbook = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("xlsx") || e.eq_ignore_ascii_case("xlsm"));
    if !is_workbook || !path.is_file() {
        return Ok(None);
    }
    let shown = path
        .strip_prefix(&ctx.workspace)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned();
    // `excel.patch_workbook`'s own diff: each item's `detail` is keiri-xlsx's diff item (the
    // plain before/after beside it is what plans read). Records without it are compared.
    let own_diff = match outputs.0.get("patch_diff") {
        Some(keiri_run::value::Value::Json(Json::Array(items))) => items
            .iter()
            .map(|item| {
                serde_json::from_value::<crate::xlsx::PatchDiffItem>(item.get("detail")?.clone())
                    .ok()
            })
            .collect::<Option<Vec<_>>>(),
        _ => None,
    };
    // Against the workbook it would replace, when there is one: what applying would change.
    let before = apply_to
        .filter(|rel| ctx.workspace.join(rel).is_file())
        .map(|rel| rel.to_string_lossy().into_owned());
    let (patch_diff, truncated) = match own_diff {
        Some(diff) => (diff, false),
        None => {
            let response = crate::workbook_compare(
                ctx,
                crate::WorkbookCompareRequest {
                    before: before.clone(),
                    after: out_path.clone(),
                },
            )?;
            (response.patch_diff, response.truncated)
        }
    };
    Ok(Some(crate::WorkbookCompareResponse {
        context: keiri_docs::grid_context(path, &patch_diff),
        before,
        after: shown,
        patch_diff,
        truncated,
    }))
}

/// Validates and runs a plan; each `events.jsonl` line goes to `events` as it happens;
/// `cancel` stops the run. The blocks run on the runtime's blocking pool.
pub async fn plan_run(
    ctx: &Context,
    req: PlanRunRequest,
    events: &crate::EventSink<keiri_run::Event>,
    cancel: &CancellationToken,
) -> Result<PlanRunResponse, ApiError> {
    start(ctx, req.write, events, cancel, move |ctx| {
        let text = plan_text(ctx, req.plan_path.as_deref(), req.yaml.as_deref())?;
        let launch = Launch {
            runs_dir: chosen_runs_dir(ctx, req.runs_dir.as_deref())?,
            lang: req.lang.unwrap_or(ctx.lang),
            vars: req.vars,
            inputs: req.inputs,
            allow_env: req.allow_env,
            write: req.write,
            resume: None,
            answers: IndexMap::new(),
        };
        Ok((text, launch))
    })
    .await
}
crate::surface::function!(streaming plan_run(crate::PlanRunRequest) -> crate::PlanRunResponse, events keiri_run::Event);
// A run writes only its own records under runs/ (`write: true` is refused there), and its
// result is the run's status, failures and node states.
crate::surface::tool!(streaming plan_run(crate::PlanRunRequest) -> crate::PlanRunResponse {
    name: "run_plan",
    title: "Run a plan",
    read_only: false,
    fronts: keiri_agent::Fronts::MCP,
    output_schema: false,
    description: RUN_PLAN,
});

const RUN_PLAN: &str = "\
Run a Keiri Studio plan (yaml, or plan_path inside the workspace) on the workspace's files: \
every node executes its builtin block. vars override the plan's vars; inputs maps a name to a \
file path and sets vars.<name> to it. Input files are only read; every file the run writes \
goes under runs/<plan_id>/<run_id>/ (write: true is refused). Returns run_id, status \
(finished | failed | cancelled), failures (node, code, message, hint), warnings (node, code, \
message: a file with no data rows, a check that flagged nearly every row, rows left out: read \
them before trusting a finished run) and each node's status. PLAN_INVALID with the findings when the plan does not validate.";

/// A run of the plan text and launch `prepare` reads, on the blocking pool. The run stops
/// when `cancel` fires or when this call is dropped (a client gone).
async fn start(
    ctx: &Context,
    write: bool,
    events: &crate::EventSink<keiri_run::Event>,
    cancel: &CancellationToken,
    prepare: impl FnOnce(&Context) -> Result<(String, Launch), ApiError> + Send + 'static,
) -> Result<PlanRunResponse, ApiError> {
    check_write(ctx, write)?;
    let cancel = cancel.child_token();
    let _stop = cancel.clone().drop_guard();
    let events = events.clone();
    crate::stream::blocking(ctx, move |ctx| {
        let (text, launch) = prepare(ctx)?;
        execute(ctx, text, launch, &events, cancel)
    })
    .await
}

/// Continues a run: finished nodes are reloaded from its records, the rest run.
pub async fn run_resume(
    ctx: &Context,
    req: RunResumeRequest,
    events: &crate::EventSink<keiri_run::Event>,
    cancel: &CancellationToken,
) -> Result<PlanRunResponse, ApiError> {
    start(ctx, req.write, events, cancel, move |ctx| {
        resume_launch(ctx, req)
    })
    .await
}
crate::surface::function!(streaming run_resume(crate::RunResumeRequest) -> crate::PlanRunResponse, events keiri_run::Event);

/// The plan text and launch of a resumed run: the run's own `plan.yaml` when only its ids are
/// given.
fn resume_launch(ctx: &Context, req: RunResumeRequest) -> Result<(String, Launch), ApiError> {
    let lang = req.lang.unwrap_or(ctx.lang);
    keiri_run::records::check_run_id(&req.run_id).map_err(|e| run_error(&e))?;
    let runs = chosen_runs_dir(ctx, req.runs_dir.as_deref())?;
    let text = match (&req.plan_path, &req.yaml, &req.plan_id) {
        (None, None, Some(plan_id)) => {
            let dir = run_path(&runs, plan_id, &req.run_id)?;
            std::fs::read_to_string(dir.join("plan.yaml")).map_err(|_| {
                ApiError::new(
                    ErrorCode::RunNotFound,
                    format!("run {} not found", req.run_id),
                )
            })?
        }
        _ => plan_text(ctx, req.plan_path.as_deref(), req.yaml.as_deref())?,
    };
    let launch = Launch {
        runs_dir: runs,
        lang,
        vars: req.vars,
        inputs: req.inputs,
        allow_env: req.allow_env,
        write: req.write,
        resume: Some(req.run_id),
        answers: req.answers,
    };
    Ok((text, launch))
}

fn run_path(runs: &Path, plan_id: &str, run_id: &str) -> Result<PathBuf, ApiError> {
    let dir = keiri_run::RunDir::open(runs, plan_id, run_id).map_err(|e| run_error(&e))?;
    Ok(dir.path().to_path_buf())
}

/// One run's state and events.
pub fn run_get(ctx: &Context, req: RunGetRequest) -> Result<RunGetResponse, ApiError> {
    let dir = run_path(&runs_dir(ctx), &req.plan_id, &req.run_id)?;
    let state = RunState::load(&dir).map_err(|e| run_error(&e))?;
    let events = keiri_run::records::read_events(&dir)
        .map_err(|e| run_error(&e))?
        .iter()
        .filter_map(|e| serde_json::to_value(e).ok())
        .collect();
    Ok(RunGetResponse {
        run_id: state.run_id.clone(),
        plan_id: state.plan_id.clone(),
        status: state.status,
        started_at: state.started_at.clone(),
        nodes: state
            .nodes
            .iter()
            .map(|(id, n)| RunNode {
                id: id.clone(),
                status: n.status,
            })
            .collect(),
        failures: state
            .failures()
            .into_iter()
            .map(|f| RunFailure::new(ctx.lang, &f))
            .collect(),
        paused: state.paused().iter().map(|p| paused(ctx.lang, p)).collect(),
        warnings: state
            .warnings
            .iter()
            .map(|w| RunWarning::new(ctx.lang, w))
            .collect(),
        events,
    })
}
crate::surface::function!(plain run_get(crate::RunGetRequest) -> crate::RunGetResponse);

/// Runs under `<workspace>/runs`, newest first (run ids sort by time).
pub fn run_list(ctx: &Context, req: RunListRequest) -> Result<RunListResponse, ApiError> {
    let root = runs_dir(ctx);
    let mut runs = Vec::new();
    let plan_dirs: Vec<PathBuf> = match &req.plan_id {
        Some(id) => vec![root.join(keiri_run::records::file_stem(id))],
        None => read_dirs(&root),
    };
    for plan_dir in plan_dirs {
        for run_dir in read_dirs(&plan_dir) {
            if let Ok(state) = RunState::load(&run_dir) {
                let mut files = files::run_folder_files(
                    &ctx.workspace,
                    &run_dir,
                    state.nodes.keys().map(String::as_str),
                );
                files.sort_by(|a, b| (&a.node, &a.path).cmp(&(&b.node, &b.path)));
                runs.push(RunSummary {
                    plan_id: state.plan_id,
                    run_id: state.run_id,
                    status: state.status,
                    started_at: state.started_at,
                    duration_ms: state.duration_ms,
                    applied: crate::apply::applied_writes(&run_dir),
                    answered: state.answered,
                    vars: state.vars,
                    files,
                });
            }
        }
    }
    runs.sort_by(|a, b| b.run_id.cmp(&a.run_id));
    Ok(RunListResponse { runs })
}
crate::surface::function!(plain run_list(crate::RunListRequest) -> crate::RunListResponse);

fn read_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}
