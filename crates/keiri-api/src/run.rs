//! Running plans: `plan_run`, `run_resume`, `run_get`, `run_list`.
//!
//! These are plain Rust functions for now (the `keiri run` CLI uses them). They are not yet in
//! [`crate::FUNCTIONS`], the dispatcher, Tauri or the TypeScript types: the API surface is
//! being defined once (issue #14), and these join it there.
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

use crate::plan::{check, invalid, load_catalog};
use crate::{ApiError, Context, ErrorCode, Lang};

/// Receives each run event (one `events.jsonl` line as JSON) as it happens.
pub type RunEventSink<'a> = &'a (dyn Fn(&Json) + Sync);

/// Start a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
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
    pub lang: Option<Lang>,
}

/// Continue a run after its last finished node.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
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
    /// The `runs_dir` the run was started with.
    #[serde(default)]
    pub runs_dir: Option<String>,
    #[serde(default)]
    pub lang: Option<Lang>,
}

/// One failed node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFailure {
    pub node: String,
    pub code: String,
    pub message: String,
}

/// One top-level node's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunNode {
    pub id: String,
    /// `finished`, `failed` or `skipped`.
    pub status: String,
}

/// What a run (or resume) did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanRunResponse {
    pub run_id: String,
    pub plan_id: String,
    /// The run directory, relative to the workspace when inside it.
    pub run_dir: String,
    /// `finished`, `failed` or `cancelled`.
    pub status: String,
    pub failures: Vec<RunFailure>,
    pub nodes: Vec<RunNode>,
}

/// Read one run's state and events.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunGetRequest {
    pub plan_id: String,
    pub run_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunGetResponse {
    pub run_id: String,
    pub plan_id: String,
    pub status: String,
    pub started_at: String,
    pub nodes: Vec<RunNode>,
    pub failures: Vec<RunFailure>,
    /// The `events.jsonl` lines.
    pub events: Vec<Json>,
}

/// List runs, newest first.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunListRequest {
    /// Only this plan's runs.
    #[serde(default)]
    pub plan_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub plan_id: String,
    pub run_id: String,
    pub status: String,
    pub started_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunListResponse {
    pub runs: Vec<RunSummary>,
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
            resolved.map_err(|e| ApiError::new(ErrorCode::from_lower(e.code()), e.to_string()))
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

fn snake<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn pick(lang: Lang, ja: &str, en: &str) -> String {
    match lang {
        Lang::Ja => ja.to_string(),
        Lang::En => en.to_string(),
    }
}

/// Reads the plan text from a path or the request.
fn plan_text(ctx: &Context, path: Option<&str>, yaml: Option<&str>) -> Result<String, ApiError> {
    match (path, yaml) {
        (Some(p), _) => {
            let path = ctx
                .path_policy()
                .resolve_existing(p)
                .map_err(|e| ApiError::new(ErrorCode::from_lower(e.code()), e.to_string()))?;
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
fn input_vars(
    ctx: &Context,
    inputs: &IndexMap<String, String>,
) -> Result<IndexMap<String, Json>, ApiError> {
    let policy = ctx.path_policy();
    inputs
        .iter()
        .map(|(name, raw)| {
            let path = policy.resolve_existing(raw).map_err(|e| {
                ApiError::new(
                    ErrorCode::from_lower(e.code()),
                    format!("input {name}: {e}"),
                )
            })?;
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
    catalog: keiri_plan::Catalog,
}

fn prepare(ctx: &Context, text: String, lang: Lang) -> Result<Prepared, ApiError> {
    let checked = check(ctx, &text, lang);
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

#[allow(clippy::too_many_arguments)]
fn execute(
    ctx: &Context,
    prepared: &Prepared,
    vars: IndexMap<String, Json>,
    allow_env: &[String],
    write: bool,
    resume: Option<String>,
    runs_dir: PathBuf,
    lang: Lang,
    sink: RunEventSink<'_>,
    cancel: CancellationToken,
) -> Result<PlanRunResponse, ApiError> {
    let (now, random) = now_and_random();
    let mut options = RunOptions::new(&ctx.workspace, now, random);
    options.designs_dir = ctx.designs_dir.clone();
    options.runs_dir = runs_dir;
    options.vars = vars;
    options.env_allow = allow_env.iter().cloned().collect();
    options.env = allow_env
        .iter()
        .filter_map(|name| std::env::var(name).ok().map(|v| (name.clone(), v)))
        .collect();
    options.write = write;
    options.resume = resume;
    options.cancel = cancel;
    let registry = keiri_run::block::Registry::builtins();
    let forward = |event: &keiri_run::Event| {
        if let Ok(json) = serde_json::to_value(event) {
            sink(&json);
        }
    };
    let outcome = keiri_run::run(
        &prepared.plan,
        &prepared.text,
        &prepared.catalog,
        &registry,
        &options,
        &forward,
    )
    .map_err(|e| run_error(&e))?;
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
        status: snake(&outcome.status),
        failures: outcome
            .failures
            .iter()
            .map(|f| RunFailure {
                node: f.node.clone(),
                code: f.code.clone(),
                message: pick(lang, &f.message_ja, &f.message_en),
            })
            .collect(),
        nodes: outcome
            .nodes
            .iter()
            .map(|(id, s)| RunNode {
                id: id.clone(),
                status: snake(s),
            })
            .collect(),
    })
}

/// Validates and runs a plan; events go to `sink` as they happen; `cancel` stops the run.
pub fn plan_run(
    ctx: &Context,
    req: PlanRunRequest,
    sink: RunEventSink<'_>,
    cancel: CancellationToken,
) -> Result<PlanRunResponse, ApiError> {
    let lang = req.lang.unwrap_or(ctx.lang);
    let text = plan_text(ctx, req.plan_path.as_deref(), req.yaml.as_deref())?;
    let prepared = prepare(ctx, text, lang)?;
    let mut vars = req.vars;
    vars.extend(input_vars(ctx, &req.inputs)?);
    let runs = chosen_runs_dir(ctx, req.runs_dir.as_deref())?;
    execute(
        ctx,
        &prepared,
        vars,
        &req.allow_env,
        req.write,
        None,
        runs,
        lang,
        sink,
        cancel,
    )
}

/// Continues a run: finished nodes are reloaded from its records, the rest run.
pub fn run_resume(
    ctx: &Context,
    req: RunResumeRequest,
    sink: RunEventSink<'_>,
    cancel: CancellationToken,
) -> Result<PlanRunResponse, ApiError> {
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
    let prepared = prepare(ctx, text, lang)?;
    let mut vars = req.vars;
    vars.extend(input_vars(ctx, &req.inputs)?);
    execute(
        ctx,
        &prepared,
        vars,
        &req.allow_env,
        req.write,
        Some(req.run_id),
        runs,
        lang,
        sink,
        cancel,
    )
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
        status: snake(&state.status),
        started_at: state.started_at.clone(),
        nodes: state
            .nodes
            .iter()
            .map(|(id, n)| RunNode {
                id: id.clone(),
                status: snake(&n.status),
            })
            .collect(),
        failures: state
            .failures()
            .into_iter()
            .map(|f| RunFailure {
                node: f.node,
                code: f.code,
                message: pick(ctx.lang, &f.message_ja, &f.message_en),
            })
            .collect(),
        events,
    })
}

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
                runs.push(RunSummary {
                    plan_id: state.plan_id,
                    run_id: state.run_id,
                    status: snake(&state.status),
                    started_at: state.started_at,
                });
            }
        }
    }
    runs.sort_by(|a, b| b.run_id.cmp(&a.run_id));
    Ok(RunListResponse { runs })
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn ctx(dir: &Path) -> Context {
        let catalog = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../block_specs");
        Context::new(dir).with_catalog_dirs(vec![catalog])
    }

    /// `ui.confirmation` has a spec but no implementation in this wave, so the run records a
    /// failed node without needing any builtin.
    const PLAN: &str = "id: api_run\nvars: {m: ok}\ngraph:\n  - {id: ask, block: ui.confirmation, in: {message: \"${vars.m}\"}}\n";

    #[test]
    fn run_list_get_and_resume() {
        let ws = tempfile::tempdir().unwrap();
        let ctx = ctx(ws.path());
        let seen = Mutex::new(Vec::new());
        let sink = |e: &Json| {
            seen.lock()
                .unwrap()
                .push(e["event"].as_str().unwrap_or("").to_string())
        };
        let req = PlanRunRequest {
            yaml: Some(PLAN.into()),
            ..Default::default()
        };
        let res = plan_run(&ctx, req, &sink, CancellationToken::new()).unwrap();
        assert_eq!(res.status, "failed", "{res:?}");
        assert_eq!(res.failures[0].node, "ask");
        assert_eq!(res.failures[0].code, "UNKNOWN_BLOCK");
        assert!(res.run_dir.starts_with("runs/api_run/"), "{}", res.run_dir);
        assert_eq!(
            seen.lock().unwrap().as_slice(),
            ["run_start", "node_start", "node_error", "run_finish"]
        );

        let list = run_list(&ctx, RunListRequest::default()).unwrap();
        assert_eq!(list.runs.len(), 1);
        assert_eq!(list.runs[0].run_id, res.run_id);
        let got = run_get(
            &ctx,
            RunGetRequest {
                plan_id: "api_run".into(),
                run_id: res.run_id.clone(),
            },
        )
        .unwrap();
        assert_eq!(got.status, "failed");
        assert_eq!(got.failures[0].code, "UNKNOWN_BLOCK");
        assert_eq!(
            got.events.first().map(|e| e["event"].clone()),
            Some(Json::from("run_start"))
        );

        // Resume from the run's own plan.yaml: the failed node runs again in the same run.
        let resumed = run_resume(
            &ctx,
            RunResumeRequest {
                run_id: res.run_id.clone(),
                plan_id: Some("api_run".into()),
                ..Default::default()
            },
            &|_| {},
            CancellationToken::new(),
        )
        .unwrap();
        assert_eq!(resumed.run_id, res.run_id);
        assert_eq!(resumed.status, "failed");
        let got = run_get(
            &ctx,
            RunGetRequest {
                plan_id: "api_run".into(),
                run_id: res.run_id,
            },
        )
        .unwrap();
        let starts: Vec<&Json> = got
            .events
            .iter()
            .filter(|e| e["event"] == "run_start")
            .map(|e| &e["resumed"])
            .collect();
        assert_eq!(starts, [&Json::Bool(false), &Json::Bool(true)]);
    }

    #[test]
    fn errors_have_codes() {
        let ws = tempfile::tempdir().unwrap();
        let ctx = ctx(ws.path());
        let err = run_get(
            &ctx,
            RunGetRequest {
                plan_id: "x".into(),
                run_id: "20990101T000000000Z-000000".into(),
            },
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::RunNotFound);
        let err = run_get(
            &ctx,
            RunGetRequest {
                plan_id: "x".into(),
                run_id: "../x".into(),
            },
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidRequest);
        let invalid = PlanRunRequest {
            yaml: Some("id: bad\ngraph:\n  - {id: a, block: no.such_block}\n".into()),
            ..Default::default()
        };
        let err = plan_run(&ctx, invalid, &|_| {}, CancellationToken::new()).unwrap_err();
        assert_eq!(err.code, ErrorCode::PlanInvalid);
        assert_eq!(
            parse_vars("a: 1\nb: [x]\n").unwrap()["b"],
            serde_json::json!(["x"])
        );
        assert_eq!(
            parse_vars("- 1\n").unwrap_err().code,
            ErrorCode::InvalidRequest
        );
    }
}
