//! Run records: `runs/<plan_id>/<run_id>/` holds
//!
//! * `plan.yaml` — the plan text as it was run (a resume without the plan file uses it);
//! * `events.jsonl` — one [`Event`] per line, appended as the run goes;
//! * `outputs/<node_id>/<key>.arrow|.json` — every finished top-level node's outputs by the
//!   block's output key: tables as Arrow IPC, everything else as JSON;
//! * `files/<node_id>/…` — the files blocks write ([`crate::block::BlockContext::out_dir`]);
//! * `state.json` — see [`crate::state`].
//!
//! A node's outputs are written into `staging/` first and the finished directory is renamed
//! into `outputs/` in one step, so a run killed at any moment leaves either all of a node's
//! outputs or none of them in `outputs/` — never a partial file.

use std::fs::{File, OpenOptions};
use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use polars::prelude::{IpcReader, IpcWriter, SerReader, SerWriter};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::block::Outputs;
use crate::value::Value;

/// Why a run could not be started, recorded or resumed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    #[error("{action} {path}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("writing {0}")]
    Write(PathBuf, #[source] keiri_fs::Error),
    #[error("run {0} not found")]
    RunNotFound(String),
    #[error("run id {0:?} is not a valid run id")]
    BadRunId(String),
    #[error("the run's state or outputs are unreadable: {0}")]
    StateInvalid(String),
}

impl RunError {
    /// A stable code for callers that branch on it.
    pub fn code(&self) -> &'static str {
        match self {
            RunError::Io { .. } | RunError::Write(..) => "IO_ERROR",
            RunError::RunNotFound(_) => "RUN_NOT_FOUND",
            RunError::BadRunId(_) => "INVALID_REQUEST",
            RunError::StateInvalid(_) => "STATE_INVALID",
        }
    }
}

fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> RunError + 'a {
    move |source| RunError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// One line of `events.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
#[schemars(rename = "RunEvent")]
pub enum Event {
    RunStart {
        run_id: String,
        plan_id: String,
        plan_sha256: String,
        plan_text: String,
        started_at: String,
        /// True when this start continues an earlier run (`--resume`).
        #[serde(default)]
        resumed: bool,
    },
    NodeStart {
        node: String,
        attempt: u32,
    },
    NodeFinish {
        node: String,
        duration_ms: u64,
        /// Rows of the first table (or list) output, when there is one.
        rows: Option<usize>,
        /// Output key → a short description (`{kind, rows, columns}` or `{kind, type}`).
        outputs: serde_json::Map<String, Json>,
    },
    NodeError {
        node: String,
        code: String,
        message_ja: String,
        message_en: String,
        /// The block's hint (what to do about it), when it gave one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hint_ja: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hint_en: Option<String>,
        attempt: u32,
        /// Another attempt follows (`policy.retries`).
        retrying: bool,
    },
    NodeSkipped {
        node: String,
        reason: String,
    },
    /// Something a person must see about the node's result (it still ran): a file with no
    /// data rows, a check that flagged nearly every row, rows left out and why
    /// ([`crate::block::Warning`] lists the codes).
    NodeWarning {
        node: String,
        code: String,
        message_ja: String,
        message_en: String,
    },
    /// A human-in-the-loop node waits for a person's answer; the run pauses after this level.
    NodePaused {
        node: String,
        question: Json,
        message_ja: String,
        message_en: String,
    },
    /// A person's answer to a paused node was accepted: who gave it, and when.
    NodeAnswered {
        node: String,
        by: String,
        at: String,
    },
    /// A node finished in an earlier attempt of this run; its outputs were reloaded.
    NodeReused {
        node: String,
    },
    /// An `ai.*` node called the model (one event per call: model, tokens, duration).
    LlmCall {
        node: String,
        call: crate::block::LlmCall,
    },
    /// A network block was answered with a redirect: where to, and whether it was followed.
    Redirect {
        node: String,
        redirect: crate::block::Redirect,
    },
    RunFinish {
        status: crate::state::RunStatus,
        duration_ms: u64,
        failed: Vec<String>,
    },
}

/// A new sortable run id: UTC time to the millisecond, then six hex digits of `random`.
pub fn new_run_id(now: DateTime<Utc>, random: u64) -> String {
    format!(
        "{}-{:06x}",
        now.format("%Y%m%dT%H%M%S%3fZ"),
        random & 0xff_ffff
    )
}

/// Run ids come from outside on resume; only the characters [`new_run_id`] uses pass, so an
/// id can never name a path outside the runs directory.
pub fn check_run_id(id: &str) -> Result<(), RunError> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(RunError::BadRunId(id.to_string()))
    }
}

/// A file-name-safe form of a node id or output key.
pub fn file_stem(name: &str) -> String {
    keiri_plan::register::file_stem(name)
}

/// The directory of one run.
#[derive(Debug)]
pub struct RunDir {
    root: PathBuf,
    events: Mutex<()>,
    /// Held while a run works in this directory ([`RunDir::claim`]), so that another run can
    /// tell a live run's `staging/` from a killed one's ([`clean_killed_runs`]).
    live: Mutex<Option<keiri_fs::Lock>>,
}

/// The name whose keiri-fs lock marks a run as live (`.live.keiri-lock` in its directory).
const LIVE: &str = "live";

/// Removes the `staging/` folders that killed runs of `plan_id` left in `runs_dir`: a run
/// whose live lock can be taken is not running, so its staging is debris. Called when a run
/// starts; a resume cleans its own run ([`RunDir::clean_staging`]).
pub fn clean_killed_runs(runs_dir: &Path, plan_id: &str) {
    let Ok(entries) = std::fs::read_dir(runs_dir.join(file_stem(plan_id))) else {
        return;
    };
    for entry in entries.flatten() {
        let dir = entry.path();
        let staging = dir.join("staging");
        if !staging.is_dir() {
            continue;
        }
        if let Ok(Some(_idle)) = keiri_fs::try_lock(&dir.join(LIVE)) {
            let _ = std::fs::remove_dir_all(&staging);
        }
    }
}

impl RunDir {
    /// `runs_dir/<plan_id>/<run_id>`, created (with its parents) if missing.
    pub fn create(runs_dir: &Path, plan_id: &str, run_id: &str) -> Result<RunDir, RunError> {
        check_run_id(run_id)?;
        let root = runs_dir.join(file_stem(plan_id)).join(run_id);
        std::fs::create_dir_all(root.join("outputs")).map_err(io("creating", &root))?;
        Ok(RunDir {
            root,
            events: Mutex::new(()),
            live: Mutex::new(None),
        })
    }

    /// An existing run's directory.
    pub fn open(runs_dir: &Path, plan_id: &str, run_id: &str) -> Result<RunDir, RunError> {
        check_run_id(run_id)?;
        let root = runs_dir.join(file_stem(plan_id)).join(run_id);
        if !root.join("state.json").is_file() {
            return Err(RunError::RunNotFound(run_id.to_string()));
        }
        Ok(RunDir {
            root,
            events: Mutex::new(()),
            live: Mutex::new(None),
        })
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Marks the run as live for as long as this `RunDir` exists (see [`clean_killed_runs`]).
    /// Best effort: where the file system has no advisory locks, nothing is marked and only
    /// the run's own resume cleans its staging.
    pub fn claim(&self) {
        if let Ok(Some(lock)) = keiri_fs::try_lock(&self.root.join(LIVE)) {
            *self.live.lock().unwrap_or_else(|p| p.into_inner()) = Some(lock);
        }
    }

    /// Where the files of a node's block go (`files/<node>`; nested nodes below their loop).
    pub fn files_dir(&self, parts: &[String]) -> PathBuf {
        let mut dir = self.root.join("files");
        for p in parts {
            dir.push(file_stem(p));
        }
        dir
    }

    /// Writes `plan.yaml` (atomically).
    pub fn save_plan(&self, text: &str) -> Result<(), RunError> {
        let path = self.root.join("plan.yaml");
        keiri_fs::write_atomic(&path, text.as_bytes()).map_err(|e| RunError::Write(path, e))
    }

    /// Appends one event as one line. A kill mid-write can leave only a torn last line,
    /// which [`read_events`] skips.
    pub fn append_event(&self, event: &Event) -> Result<(), RunError> {
        let path = self.root.join("events.jsonl");
        let mut line = serde_json::to_vec(event)
            .map_err(|e| RunError::StateInvalid(format!("serialising an event: {e}")))?;
        line.push(b'\n');
        let _guard = self.events.lock().unwrap_or_else(|p| p.into_inner());
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io("opening", &path))?;
        file.write_all(&line).map_err(io("appending to", &path))
    }

    /// Saves a node's outputs: all files into a staging directory, then one rename.
    /// Returns the file names written.
    pub fn save_outputs(&self, node: &str, outputs: &Outputs) -> Result<Vec<String>, RunError> {
        let staging_root = self.root.join("staging");
        std::fs::create_dir_all(&staging_root).map_err(io("creating", &staging_root))?;
        let staging = staging_root.join(file_stem(node));
        if staging.exists() {
            std::fs::remove_dir_all(&staging).map_err(io("removing", &staging))?;
        }
        std::fs::create_dir_all(&staging).map_err(io("creating", &staging))?;
        let mut names = Vec::new();
        for (key, value) in &outputs.0 {
            let (ext, bytes) = encode(value)?;
            let name = format!("{}.{ext}", file_stem(key));
            let path = staging.join(&name);
            let mut file = File::create(&path).map_err(io("creating", &path))?;
            file.write_all(&bytes).map_err(io("writing", &path))?;
            file.sync_all().map_err(io("syncing", &path))?;
            names.push(name);
        }
        let target = self.root.join("outputs").join(file_stem(node));
        if target.exists() {
            std::fs::remove_dir_all(&target).map_err(io("removing", &target))?;
        }
        std::fs::rename(&staging, &target).map_err(io("moving outputs to", &target))?;
        if let Ok(d) = File::open(self.root.join("outputs")) {
            let _ = d.sync_all();
        }
        Ok(names)
    }

    /// Loads a node's outputs saved by [`RunDir::save_outputs`].
    pub fn load_outputs(&self, node: &str) -> Result<Outputs, RunError> {
        let dir = self.root.join("outputs").join(file_stem(node));
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(io("reading", &dir))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .collect();
        files.sort();
        let mut out = Outputs::default();
        for path in files {
            let (Some(stem), Some(ext)) = (
                path.file_stem().and_then(|s| s.to_str()),
                path.extension().and_then(|s| s.to_str()),
            ) else {
                continue;
            };
            let bytes = std::fs::read(&path).map_err(io("reading", &path))?;
            let value = match ext {
                "arrow" => IpcReader::new(Cursor::new(bytes))
                    .finish()
                    .map(Value::Table)
                    .map_err(|e| RunError::StateInvalid(format!("{}: {e}", path.display())))?,
                "json" => serde_json::from_slice(&bytes)
                    .map(Value::Json)
                    .map_err(|e| RunError::StateInvalid(format!("{}: {e}", path.display())))?,
                _ => continue,
            };
            out.0.insert(stem.to_string(), value);
        }
        Ok(out)
    }

    /// Removes what a killed run may have left half-done: `staging/`, and the temp files of
    /// atomic writes (`state.json`'s, and those of files blocks wrote under `files/`).
    pub fn clean_staging(&self) -> Result<(), RunError> {
        let staging = self.root.join("staging");
        if staging.exists() {
            std::fs::remove_dir_all(&staging).map_err(io("removing", &staging))?;
        }
        let mut dirs = vec![self.root.clone()];
        while let Some(dir) = dirs.pop() {
            keiri_fs::sweep(&dir).map_err(|e| RunError::Write(dir.clone(), e))?;
            if let Ok(entries) = std::fs::read_dir(&dir) {
                for entry in entries.flatten() {
                    let path = entry.path();
                    // Only the files blocks wrote nest deeper; outputs/ is renamed in whole.
                    let nested = path.starts_with(self.root.join("files"))
                        || path == self.root.join("files");
                    if nested && entry.file_type().is_ok_and(|t| t.is_dir()) {
                        dirs.push(path);
                    }
                }
            }
        }
        Ok(())
    }
}

fn encode(value: &Value) -> Result<(&'static str, Vec<u8>), RunError> {
    match value {
        Value::Table(df) => {
            let mut bytes = Vec::new();
            let mut df = df.clone();
            IpcWriter::new(&mut bytes)
                .finish(&mut df)
                .map_err(|e| RunError::StateInvalid(format!("encoding a table: {e}")))?;
            Ok(("arrow", bytes))
        }
        Value::Json(json) => serde_json::to_vec_pretty(json)
            .map(|b| ("json", b))
            .map_err(|e| RunError::StateInvalid(format!("encoding JSON: {e}"))),
    }
}

/// A short description of one output for `node_finish`.
pub fn summarize(value: &Value) -> Json {
    match value {
        Value::Table(df) => serde_json::json!({
            "kind": "table",
            "rows": df.height(),
            "columns": df.get_column_names().iter().map(|c| c.to_string()).collect::<Vec<_>>(),
        }),
        // Rows as JSON (a pivot's, a match's): their columns too, as a table's, so what reads
        // `node_finish` (the planner's verify-by-running) can name them.
        Value::Json(Json::Array(items)) => {
            let mut summary =
                serde_json::json!({"kind": "json", "type": "array", "rows": items.len()});
            if !items.is_empty() && items.iter().all(Json::is_object) {
                let mut columns = indexmap::IndexSet::new();
                for key in items
                    .iter()
                    .filter_map(Json::as_object)
                    .flat_map(|row| row.keys())
                {
                    if !columns.contains(key.as_str()) {
                        columns.insert(key.clone());
                    }
                }
                summary["columns"] = serde_json::json!(columns.into_iter().collect::<Vec<_>>());
            }
            summary
        }
        Value::Json(other) => {
            let ty = keiri_plan::ValueType::of(other).as_str();
            serde_json::json!({"kind": "json", "type": ty})
        }
    }
}

/// What a person sees of one output: a table (or a list of objects) as its first `limit` rows
/// with the column names and types and the full row count; any other value as it is.
///
/// `{"kind": "table", "row_count", "columns": [{"name", "type"}], "rows": [...], "truncated",
/// "labels"?}` or `{"kind": "json", "value"}`. `labels` (`codes::labels_for` over the rows
/// shown) names the columns the catalog knows, the codes in its code columns and which columns
/// hold yen amounts, so the window shows 理由 「同じ請求書（完全一致）」 for `reason
/// exact_duplicate`; it is left out when nothing is known.
pub fn preview(value: &Value, limit: usize) -> Json {
    let mut shown = preview_rows(value, limit);
    if shown["kind"] == "table" {
        let labels = crate::codes::labels_for(shown.get("rows"));
        if !labels.is_null() {
            shown["labels"] = labels;
        }
    }
    shown
}

fn preview_rows(value: &Value, limit: usize) -> Json {
    match value {
        Value::Table(df) => {
            let columns: Vec<Json> = df
                .columns()
                .iter()
                .map(|c| serde_json::json!({"name": c.name().to_string(), "type": c.dtype().to_string()}))
                .collect();
            let rows = crate::value::table_to_rows(&df.head(Some(limit))).unwrap_or_default();
            serde_json::json!({
                "kind": "table",
                "row_count": df.height(),
                "columns": columns,
                "rows": rows,
                "truncated": df.height() > limit,
            })
        }
        Value::Json(Json::Array(items))
            if !items.is_empty() && items.iter().all(Json::is_object) =>
        {
            let mut names: Vec<String> = Vec::new();
            let mut kinds: Vec<&'static str> = Vec::new();
            for item in items {
                for (k, v) in item.as_object().into_iter().flatten() {
                    let ty = keiri_plan::ValueType::of(v).as_str();
                    match names.iter().position(|n| n == k) {
                        Some(i) if kinds[i] == "null" => kinds[i] = ty,
                        Some(i) if kinds[i] != ty && ty != "null" => kinds[i] = "mixed",
                        Some(_) => {}
                        None => {
                            names.push(k.clone());
                            kinds.push(ty);
                        }
                    }
                }
            }
            let columns: Vec<Json> = names
                .iter()
                .zip(&kinds)
                .map(|(n, t)| serde_json::json!({"name": n, "type": t}))
                .collect();
            serde_json::json!({
                "kind": "table",
                "row_count": items.len(),
                "columns": columns,
                "rows": items.iter().take(limit).collect::<Vec<_>>(),
                "truncated": items.len() > limit,
            })
        }
        Value::Json(other) => serde_json::json!({"kind": "json", "value": other}),
    }
}

/// The number of rows of the first table or list among `outputs`.
pub fn rows(outputs: &Outputs) -> Option<usize> {
    outputs.0.values().find_map(|v| match v {
        Value::Table(df) => Some(df.height()),
        Value::Json(Json::Array(items)) => Some(items.len()),
        Value::Json(_) => None,
    })
}

/// The events of a run; a torn last line (a killed run) is skipped.
pub fn read_events(run_dir: &Path) -> Result<Vec<Event>, RunError> {
    let path = run_dir.join("events.jsonl");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io("reading", &path)(e)),
    };
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A table of findings carries what the window needs to show it in words; a table of the
    /// user's own columns carries nothing extra.
    #[test]
    fn a_preview_names_known_columns_codes_and_amounts() {
        let findings = Value::Json(json!([
            {"invoice_no": "INV-1", "amount": 110000, "reason": "exact_duplicate"},
            {"invoice_no": "INV-1", "amount": 110000, "reason": "exact_duplicate"},
        ]));
        let shown = preview(&findings, 200);
        assert_eq!(shown["kind"], "table");
        assert_eq!(shown["labels"]["columns"]["reason"]["ja"], "理由");
        assert_eq!(shown["labels"]["columns"]["invoice_no"]["ja"], "請求書番号");
        assert_eq!(
            shown["labels"]["values"]["reason"]["exact_duplicate"]["ja"],
            "同じ請求書（完全一致）"
        );
        assert_eq!(shown["labels"]["amounts"], json!(["amount"]));
        let own = Value::Json(json!([{"取引先": "山田商事", "金額": 10000}]));
        // The data's own headers need no words; its 金額 is shown as yen.
        assert_eq!(
            preview(&own, 200)["labels"],
            json!({"columns": {}, "values": {}, "amounts": ["金額"]})
        );
        assert_eq!(
            preview(&Value::Json(json!(3)), 200),
            json!({"kind": "json", "value": 3})
        );
    }
}
