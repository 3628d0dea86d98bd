//! 「この結果で書き込む」: applying a sample run's writes for real, and undoing that.
//!
//! A run never writes outside its run directory (see `run.rs`): a file a block wrote to the
//! `out_dir` the plan names lands at `runs/<plan>/<run>/files/<node>/<out_dir>/<name>`, where
//! `keiri run --write` would have written `<workspace>/<out_dir>/<name>`. Applying copies that
//! file to its place in the workspace — after the person saw it, cell by cell — under the
//! target's keiri-fs lock as a compare-and-swap (a new file is created only if none appeared;
//! an existing one is replaced only if it still holds what was read). What was there before is
//! kept in `runs/<plan>/<run>/applied/<node>.bak`, so undo puts back the exact bytes (or removes
//! a file that did not exist), again only if nobody changed the file since.
//!
//! A file written straight into the node's folder (no `out_dir`) has no place in the workspace:
//! it is not applicable.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::{ApiError, Context, ErrorCode};

/// Apply (or undo) one node's written file.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunApplyRequest {
    pub plan_id: String,
    pub run_id: String,
    pub node: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunApplyResponse {
    pub node: String,
    /// The run's file (relative to the workspace).
    pub from: String,
    /// Where it was written (relative to the workspace).
    pub to: String,
    /// A file was there before (it is kept for undo).
    pub existed: bool,
}

pub type RunUndoApplyRequest = RunApplyRequest;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunUndoApplyResponse {
    pub node: String,
    pub to: String,
    /// True: the earlier content is back; false: the file did not exist and was removed.
    pub restored: bool,
}

/// What `applied/<node>.json` records.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Applied {
    to: String,
    existed: bool,
    /// Who applied it: the signed-in user of the machine (`USER`, `USERNAME` on Windows).
    #[serde(default)]
    by: String,
    /// When (RFC 3339, UTC).
    #[serde(default)]
    at: String,
}

/// One applied write of a run, as `run_list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AppliedWrite {
    pub node: String,
    /// Where it was written (relative to the workspace).
    pub to: String,
    /// Who applied it (the machine's user name; empty in records from before it was kept).
    pub by: String,
    pub at: String,
}

/// The user applying a write: the OS account, which is what a desktop app and a loopback
/// server can vouch for.
pub(crate) fn current_user() -> String {
    ["USER", "USERNAME", "LOGNAME"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
        .unwrap_or_else(|| "unknown".into())
}

/// The writes of the run in `run_dir` that are applied now, by node.
pub(crate) fn applied_writes(run_dir: &Path) -> Vec<AppliedWrite> {
    let Ok(entries) = std::fs::read_dir(run_dir.join("applied")) else {
        return Vec::new();
    };
    let mut out: Vec<AppliedWrite> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|p| {
            let applied: Applied = serde_json::from_slice(&std::fs::read(&p).ok()?).ok()?;
            Some(AppliedWrite {
                node: p.file_stem()?.to_string_lossy().into_owned(),
                to: applied.to,
                by: applied.by,
                at: applied.at,
            })
        })
        .collect();
    out.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.node.cmp(&b.node)));
    out
}

fn io_error(action: &str, path: &Path, e: &std::io::Error) -> ApiError {
    ApiError::new(
        crate::error::io_code(e),
        format!("{action} {}: {e}", path.display()),
    )
}

fn shown(ctx: &Context, path: &Path) -> String {
    path.strip_prefix(&ctx.workspace)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// The run directory and the file node `node` wrote (its `out_path` output).
fn written_file(ctx: &Context, req: &RunApplyRequest) -> Result<(PathBuf, PathBuf), ApiError> {
    let runs = ctx.workspace.join("runs");
    let dir = keiri_run::RunDir::open(&runs, &req.plan_id, &req.run_id)
        .map_err(|e| ApiError::new(ErrorCode::RunNotFound, e.to_string()))?;
    let outputs = dir.load_shown(&req.node).map_err(|_| {
        ApiError::new(
            ErrorCode::NotFound,
            format!("node {} of run {} saved no outputs", req.node, req.run_id),
        )
    })?;
    let Some(keiri_run::value::Value::Json(Json::String(out))) = outputs.get("out_path") else {
        return Err(ApiError::new(
            ErrorCode::InvalidRequest,
            format!("node {} wrote no file", req.node),
        ));
    };
    Ok((dir.path().to_path_buf(), PathBuf::from(out)))
}

/// Where `out_path` (written by `node` in `run_dir`) belongs in the workspace, relative to it;
/// `None` when the file is not under an `out_dir` of the node's folder.
pub(crate) fn target_of(run_dir: &Path, node: &str, out_path: &Path) -> Option<PathBuf> {
    let node_dir = run_dir
        .join("files")
        .join(keiri_run::records::file_stem(node));
    let rel = out_path.strip_prefix(&node_dir).ok()?;
    let plain = rel
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    (plain && rel.components().count() >= 2).then(|| rel.to_path_buf())
}

fn records(run_dir: &Path, node: &str) -> (PathBuf, PathBuf) {
    let dir = run_dir.join("applied");
    let stem = keiri_run::records::file_stem(node);
    (
        dir.join(format!("{stem}.json")),
        dir.join(format!("{stem}.bak")),
    )
}

/// Writes the file `node` wrote in the run to its place in the workspace.
pub fn run_apply(ctx: &Context, req: RunApplyRequest) -> Result<RunApplyResponse, ApiError> {
    let (run_dir, out) = written_file(ctx, &req)?;
    let rel = target_of(&run_dir, &req.node, &out).ok_or_else(|| {
        ApiError::new(
            ErrorCode::InvalidRequest,
            format!(
                "{} stays in the run folder: the plan names no output folder for it",
                shown(ctx, &out)
            ),
        )
    })?;
    let (record, backup) = records(&run_dir, &req.node);
    if record.exists() {
        return Err(ApiError::new(
            ErrorCode::AlreadyExists,
            format!("node {} of this run is already applied", req.node),
        ));
    }
    let target = ctx.path_policy().resolve_new(&rel.to_string_lossy())?;
    let bytes = std::fs::read(&out).map_err(|e| io_error("reading", &out, &e))?;
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io_error("creating", parent, &e))?;
    }
    let lock = keiri_fs::lock(&target)?;
    let before = match std::fs::read(&target) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_error("reading", &target, &e)),
    };
    // The records first: a crash after them and before the write leaves an undo that finds
    // the file unchanged and says so, never a write without its undo.
    if let Some(dir) = record.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io_error("creating", dir, &e))?;
    }
    if let Some(before) = &before {
        keiri_fs::write_atomic(&backup, before)?;
    }
    let applied = Applied {
        to: shown(ctx, &target),
        existed: before.is_some(),
        by: current_user(),
        at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    };
    let record_json = serde_json::to_vec_pretty(&applied)
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
    keiri_fs::write_atomic(&record, &record_json)?;
    let written = match &before {
        Some(before) => lock.write_if_unchanged(before, &bytes),
        None => lock.write_new(&bytes),
    };
    if let Err(e) = written {
        let _ = std::fs::remove_file(&record);
        let _ = std::fs::remove_file(&backup);
        return Err(e.into());
    }
    Ok(RunApplyResponse {
        node: req.node,
        from: shown(ctx, &out),
        to: applied.to,
        existed: applied.existed,
    })
}
crate::surface::function!(plain run_apply(crate::RunApplyRequest) -> crate::RunApplyResponse);

/// Puts back what was at the applied file's place before (or removes a file that was new),
/// if the file still holds exactly what the run wrote.
pub fn run_undo_apply(
    ctx: &Context,
    req: RunUndoApplyRequest,
) -> Result<RunUndoApplyResponse, ApiError> {
    let (run_dir, out) = written_file(ctx, &req)?;
    let (record, backup) = records(&run_dir, &req.node);
    let text = std::fs::read(&record).map_err(|_| {
        ApiError::new(
            ErrorCode::NotFound,
            format!("node {} of this run was not applied", req.node),
        )
    })?;
    let applied: Applied = serde_json::from_slice(&text)
        .map_err(|e| ApiError::new(ErrorCode::RunStateInvalid, e.to_string()))?;
    let target = ctx.path_policy().resolve_existing(&applied.to)?;
    let ours = std::fs::read(&out).map_err(|e| io_error("reading", &out, &e))?;
    let lock = keiri_fs::lock(&target)?;
    let current = std::fs::read(&target).map_err(|e| io_error("reading", &target, &e))?;
    if current != ours {
        return Err(ApiError::new(
            ErrorCode::ChangeConflict,
            format!(
                "{} changed since it was written; nothing was undone",
                applied.to
            ),
        ));
    }
    if applied.existed {
        let earlier = std::fs::read(&backup).map_err(|e| io_error("reading", &backup, &e))?;
        lock.write_if_unchanged(&current, &earlier)?;
    } else {
        std::fs::remove_file(&target).map_err(|e| io_error("removing", &target, &e))?;
    }
    drop(lock);
    let _ = std::fs::remove_file(&backup);
    std::fs::remove_file(&record).map_err(|e| io_error("removing", &record, &e))?;
    Ok(RunUndoApplyResponse {
        node: req.node,
        to: applied.to,
        restored: applied.existed,
    })
}
crate::surface::function!(plain run_undo_apply(crate::RunUndoApplyRequest) -> crate::RunUndoApplyResponse);

/// Whether node `node` of the run in `run_dir` is applied now.
pub(crate) fn is_applied(run_dir: &Path, node: &str) -> bool {
    records(run_dir, node).0.is_file()
}
