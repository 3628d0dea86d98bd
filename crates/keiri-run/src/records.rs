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

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Cursor, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use polars::prelude::{
    DataFrame, DataType, IpcCompression, IpcReader, IpcWriter, SerReader, SerWriter,
};
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
    /// The node's tables were saved as their first rows only (the checkpoint policy of
    /// [`RunDir::save_outputs`]): it runs again to give them whole.
    #[error("node {0}'s tables were kept as their first rows only")]
    KeptInPart(String),
}

impl RunError {
    /// A stable code for callers that branch on it.
    pub fn code(&self) -> &'static str {
        match self {
            RunError::Io { .. } | RunError::Write(..) => "IO_ERROR",
            RunError::RunNotFound(_) => "RUN_NOT_FOUND",
            RunError::BadRunId(_) => "INVALID_REQUEST",
            RunError::StateInvalid(_) => "STATE_INVALID",
            RunError::KeptInPart(_) => "KEPT_IN_PART",
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
        /// Output key → a short description (`{kind, rows, columns}` or `{kind, type}`; a list
        /// built in part because the plan does not take it also says how many it holds,
        /// `shown`, its `rows` being all of them).
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
    /// How far a long node has got (rows read, deposits matched…): once it has run for
    /// [`crate::RunOptions::progress_every`], then at most that often, while it runs.
    NodeProgress {
        node: String,
        /// Units done so far.
        done: u64,
        /// Units in all, when the block knows it.
        total: Option<u64>,
        unit: crate::block::ProgressUnit,
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
    /// `runs_dir/<plan_id>/<run_id>`, a new folder (its parents are created if missing). Two
    /// runs never share one: when the folder exists already (two runs given the same id),
    /// this fails with an [`RunError::Io`] whose kind is `AlreadyExists`, and nothing of the
    /// other run is touched; the engine then takes the next id ([`new_run_id`]).
    pub fn create(runs_dir: &Path, plan_id: &str, run_id: &str) -> Result<RunDir, RunError> {
        check_run_id(run_id)?;
        let plan_dir = runs_dir.join(file_stem(plan_id));
        std::fs::create_dir_all(&plan_dir).map_err(io("creating", &plan_dir))?;
        let root = plan_dir.join(run_id);
        std::fs::create_dir(&root).map_err(io("creating", &root))?;
        std::fs::create_dir(root.join("outputs")).map_err(io("creating", &root))?;
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
    ///
    /// The checkpoint policy: a node that can run again from what it read (`recomputable`:
    /// `csv.read`, `bank.read_statement` and the `transforms.*` steps) keeps a table of more
    /// than [`WHOLE_ROWS`] rows as its first [`SHOWN_ROWS`] rows, with its row count and a
    /// digest of all its rows in `kept-in-part.json` ([`Kept`]). Everything else — JSON,
    /// small tables, and the tables of blocks that matched, checked, asked a person, called
    /// a model or reached a host — is saved whole. A resume runs such a node again ([`RunDir::load_outputs`] says
    /// [`RunError::KeptInPart`]) and the engine checks that its rows are the ones of the
    /// first attempt (the digest), so a resumed run never mixes rows of two attempts.
    pub fn save_outputs(
        &self,
        node: &str,
        outputs: &Outputs,
        recomputable: bool,
    ) -> Result<Vec<String>, RunError> {
        self.save_encoded(node, &ToSave::new(outputs)?, recomputable)
    }

    /// [`RunDir::save_outputs`] of outputs whose JSON is already encoded ([`ToSave`]).
    pub fn save_encoded(
        &self,
        node: &str,
        outputs: &ToSave,
        recomputable: bool,
    ) -> Result<Vec<String>, RunError> {
        let staging_root = self.root.join("staging");
        std::fs::create_dir_all(&staging_root).map_err(io("creating", &staging_root))?;
        let staging = staging_root.join(file_stem(node));
        if staging.exists() {
            std::fs::remove_dir_all(&staging).map_err(io("removing", &staging))?;
        }
        std::fs::create_dir_all(&staging).map_err(io("creating", &staging))?;
        let mut names = Vec::new();
        // Built in part: a list the plan does not take, or the first rows of a table a pass
        // handed on piece by piece (`engine/fused.rs`), which a resume needs whole.
        let mut kept: BTreeMap<String, Kept> = outputs
            .1
            .iter()
            .map(|(key, &rows)| {
                let table = outputs
                    .0
                    .iter()
                    .any(|(k, part)| k == key && matches!(part, Part::Table(_)));
                let kept = Kept {
                    rows,
                    digest: String::new(),
                    untaken: !table,
                };
                (key.clone(), kept)
            })
            .collect();
        for (key, part) in &outputs.0 {
            let head;
            let part = match part {
                Part::Table(df)
                    if recomputable && df.height() > WHOLE_ROWS && !outputs.1.contains_key(key) =>
                {
                    kept.insert(
                        key.clone(),
                        Kept {
                            rows: df.height(),
                            digest: table_digest(df),
                            untaken: false,
                        },
                    );
                    head = Part::Table(df.head(Some(SHOWN_ROWS)));
                    &head
                }
                _ => part,
            };
            let ext = match part {
                Part::Table(_) => "arrow",
                Part::Json(_) => "json",
            };
            let name = format!("{}.{ext}", file_stem(key));
            let path = staging.join(&name);
            let file = File::create(&path).map_err(io("creating", &path))?;
            let mut out = BufWriter::new(file);
            match part {
                Part::Table(df) => encode_table(df, &mut out)?,
                Part::Json(chunks) => {
                    for piece in chunks.pieces() {
                        out.write_all(piece).map_err(io("writing", &path))?;
                    }
                }
            }
            let file = out.into_inner().map_err(|e| RunError::Io {
                action: "writing",
                path: path.clone(),
                source: e.into_error(),
            })?;
            file.sync_all().map_err(io("syncing", &path))?;
            names.push(name);
        }
        if !kept.is_empty() {
            let path = staging.join(KEPT);
            let bytes = serde_json::to_vec_pretty(&kept)
                .map_err(|e| RunError::StateInvalid(format!("encoding {KEPT}: {e}")))?;
            let mut file = File::create(&path).map_err(io("creating", &path))?;
            file.write_all(&bytes).map_err(io("writing", &path))?;
            file.sync_all().map_err(io("syncing", &path))?;
            names.push(KEPT.to_string());
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

    /// Loads a node's outputs saved by [`RunDir::save_outputs`], whole:
    /// [`RunError::KeptInPart`] when a table was kept as its first rows only. An output the
    /// plan did not take, built in part, is loaded as it is (no node reads it; a resume whose
    /// plan takes it now runs the node again, `engine/projection.rs`).
    pub fn load_outputs(&self, node: &str) -> Result<Outputs, RunError> {
        if self.kept_in_part(node)?.values().any(Kept::needed) {
            return Err(RunError::KeptInPart(node.to_string()));
        }
        self.load_shown(node)
    }

    /// Whether a node's outputs were saved (its folder under `outputs/` exists).
    pub fn has_outputs(&self, node: &str) -> bool {
        self.root.join("outputs").join(file_stem(node)).is_dir()
    }

    /// The tables of a node kept as their first rows only, by output key (empty when all
    /// were saved whole, or the node saved nothing).
    pub fn kept_in_part(&self, node: &str) -> Result<BTreeMap<String, Kept>, RunError> {
        let path = self.root.join("outputs").join(file_stem(node)).join(KEPT);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| RunError::StateInvalid(format!("{}: {e}", path.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(e) => Err(io("reading", &path)(e)),
        }
    }

    /// What was saved of a node's outputs, to show: tables kept in part as their first rows,
    /// with [`RunDir::kept_in_part`] telling which and their real row counts.
    pub fn load_shown(&self, node: &str) -> Result<Outputs, RunError> {
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
                "json" if stem == KEPT_STEM => continue,
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

/// The file of a node's outputs that lists the tables kept in part ([`RunDir::save_outputs`]).
const KEPT: &str = "kept-in-part.json";
const KEPT_STEM: &str = "kept-in-part";
/// The rows kept of a table saved in part (what `run_output` shows at most), and the rows up
/// to which a table is always saved whole.
pub use crate::block::{SHOWN_ROWS, WHOLE_ROWS};

/// An output kept as its first rows only: how many rows it had and, for a table of a step that
/// can run again, a digest of all of them; or a list the block built only that far because
/// the plan does not take it (`untaken`, no digest). A table a pass handed on piece by piece
/// (`engine/fused.rs`) has no digest: a resume that runs its node again (one by one, from the
/// file) compares its row count, and the digest of what the pass built whole (the last
/// step's table, or the groups) covers the rows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kept {
    pub rows: usize,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub digest: String,
    /// Built in part because the plan does not take it ([`BlockContext::items_to_build`]):
    /// no later node reads it, so a resume never needs it whole.
    ///
    /// [`BlockContext::items_to_build`]: crate::block::BlockContext::items_to_build
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub untaken: bool,
}

impl Kept {
    /// Whether a resume needs the node to run again to have this output whole: a table kept
    /// in part, not an output no node takes.
    pub fn needed(&self) -> bool {
        !self.untaken
    }
}

/// An XXH3-128 of a table's column names, types and every value in order: equal for tables
/// with the same rows however Polars chunked or laid them out in memory. Each value is framed
/// (a tag telling an empty cell from a value, a length before each text) into a buffer
/// hashed a megabyte at a time: a million-row table takes milliseconds, on the writer
/// thread. It detects a change (a resume's file edited), it is no seal against tampering.
pub fn table_digest(df: &DataFrame) -> String {
    use xxhash_rust::xxh3::Xxh3;
    /// One cell: `0` for an empty one, else `1` and its bytes (texts with their length).
    fn cell(buf: &mut Vec<u8>, value: Option<&[u8]>, sized: bool) {
        match value {
            None => buf.push(0),
            Some(bytes) => {
                buf.push(1);
                if sized {
                    buf.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
                }
                buf.extend_from_slice(bytes);
            }
        }
    }
    let mut hash = Xxh3::new();
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 20);
    let flush = |buf: &mut Vec<u8>, hash: &mut Xxh3, force: bool| {
        if force || buf.len() >= 1 << 20 {
            hash.update(&buf[..]);
            buf.clear();
        }
    };
    for column in df.columns() {
        for label in [column.name().to_string(), column.dtype().to_string()] {
            cell(&mut buf, Some(label.as_bytes()), true);
        }
        let series = column.as_materialized_series().to_physical_repr();
        let dtype = series.dtype().clone();
        // Numbers as their 8 bytes; a cast that fails falls through to the text of each value.
        let floats = dtype
            .is_float()
            .then(|| series.cast(&DataType::Float64).ok())
            .flatten();
        let integers = (dtype.is_integer() || dtype == DataType::Boolean)
            .then(|| series.cast(&DataType::Int64).ok())
            .flatten();
        if let Ok(values) = series.str() {
            for value in values.iter() {
                cell(&mut buf, value.map(str::as_bytes), true);
                flush(&mut buf, &mut hash, false);
            }
        } else if let Some(values) = floats.as_ref().and_then(|s| s.f64().ok()) {
            for value in values.iter() {
                cell(
                    &mut buf,
                    value
                        .map(|v| v.to_bits().to_le_bytes())
                        .as_ref()
                        .map(|b| &b[..]),
                    false,
                );
                flush(&mut buf, &mut hash, false);
            }
        } else if let Some(values) = integers.as_ref().and_then(|s| s.i64().ok()) {
            for value in values.iter() {
                cell(
                    &mut buf,
                    value.map(i64::to_le_bytes).as_ref().map(|b| &b[..]),
                    false,
                );
                flush(&mut buf, &mut hash, false);
            }
        } else {
            for i in 0..series.len() {
                let value = series.get(i).map(|v| format!("{v:?}")).unwrap_or_default();
                cell(&mut buf, Some(value.as_bytes()), true);
                flush(&mut buf, &mut hash, false);
            }
        }
    }
    flush(&mut buf, &mut hash, true);
    format!("{:032x}", hash.digest128())
}

/// A node's outputs as [`RunDir::save_encoded`] writes them: tables as they are (Polars
/// shares their memory, so holding one costs nothing), anything else already encoded as
/// compact JSON. The record writer (`engine/recorder.rs`) gets these, made where the node
/// finished: encoding the JSON there costs about what a deep copy of it did, and the bytes
/// (33 MB for 80,000 reconciliation matches) are a sixth of the memory of a second tree of
/// `serde_json` values beside the one the run keeps.
pub struct ToSave(Vec<(String, Part)>, BTreeMap<String, usize>);

enum Part {
    Table(DataFrame),
    Json(Chunks),
}

/// Bytes written in pieces of at most [`Chunks::SIZE`]: JSON encoded into one `Vec` grows by
/// doubling, and each doubling copies what it holds into a new buffer while the old one is
/// still there (at a million reconciliation matches, 338 MB of JSON: a 256 MB buffer copied
/// into a 512 MB one, beside the tree being encoded).
#[derive(Default)]
struct Chunks(Vec<Vec<u8>>);

impl Chunks {
    const SIZE: usize = 4 << 20;

    fn encode(json: &Json) -> Result<Chunks, RunError> {
        let mut chunks = Chunks::default();
        serde_json::to_writer(&mut chunks, json)
            .map_err(|e| RunError::StateInvalid(format!("encoding JSON: {e}")))?;
        Ok(chunks)
    }

    fn pieces(&self) -> impl Iterator<Item = &[u8]> {
        self.0.iter().map(Vec::as_slice)
    }
}

impl Write for Chunks {
    fn write(&mut self, mut buf: &[u8]) -> std::io::Result<usize> {
        let written = buf.len();
        while !buf.is_empty() {
            if self.0.last().is_none_or(|last| last.len() >= Chunks::SIZE) {
                // A small output takes a small first piece, which grows by doubling up to
                // SIZE; the pieces after it are made at SIZE.
                let size = if self.0.is_empty() {
                    buf.len().clamp(64, Chunks::SIZE)
                } else {
                    Chunks::SIZE
                };
                self.0.push(Vec::with_capacity(size));
            }
            let Some(last) = self.0.last_mut() else {
                break;
            };
            let take = (Chunks::SIZE - last.len()).min(buf.len());
            last.extend_from_slice(&buf[..take]);
            buf = &buf[take..];
        }
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl ToSave {
    /// The outputs to save, each JSON value encoded (compact: a match's hundred thousand rows
    /// pretty-printed were twice the bytes and the time, for a file that is read back by
    /// programs, not people).
    pub fn new(outputs: &Outputs) -> Result<ToSave, RunError> {
        let parts = outputs
            .0
            .iter()
            .map(|(key, value)| {
                let part = match value {
                    Value::Table(df) => Part::Table(df.clone()),
                    Value::Json(json) => Part::Json(Chunks::encode(json)?),
                };
                Ok((key.clone(), part))
            })
            .collect::<Result<_, RunError>>()?;
        Ok(ToSave(parts, outputs.1.clone()))
    }
}

/// Writes a table as Arrow IPC, LZ4-compressed (run records of million-row tables are a
/// third of their plain size, and LZ4 writes faster than a disk takes the difference;
/// [`RunDir::load_outputs`] reads both). Written straight to `out`: no second copy of the
/// table in memory.
fn encode_table(df: &DataFrame, out: &mut impl Write) -> Result<(), RunError> {
    let mut df = df.clone();
    IpcWriter::new(out)
        .with_compression(Some(IpcCompression::LZ4))
        .finish(&mut df)
        .map_err(|e| RunError::StateInvalid(format!("encoding a table: {e}")))
}

/// A short description of one output for `node_finish`.
/// `in_part`: the output is built only in part (a list the plan does not take, or the first
/// rows of a table a pass handed on) of this many items in full, which its `rows` say; a
/// list's `shown` says how many it holds.
pub fn summarize(value: &Value, in_part: Option<&usize>) -> Json {
    let mut summary = summarize_whole(value);
    if let Some(&rows) = in_part {
        // A table a pass handed on reads as any table of a step kept in part: its rows.
        if matches!(value, Value::Json(_)) {
            summary["shown"] = summary["rows"].clone();
        }
        summary["rows"] = rows.into();
    }
    summary
}

fn summarize_whole(value: &Value) -> Json {
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

/// The number of rows a node gave, as its finish line shows them: for a writer, the
/// `row_count` it wrote (only writers give one at the top level; checks nest theirs in a
/// summary); else those of its first table or list of rows (objects). A list of text (such as
/// a writer's `warnings`) is not rows: counted, it made a million-row CSV read "0 行".
pub fn rows(outputs: &Outputs) -> Option<usize> {
    let written = match outputs.0.get("row_count") {
        Some(Value::Json(n)) => n.as_u64().and_then(|n| usize::try_from(n).ok()),
        _ => None,
    };
    written.or_else(|| {
        outputs.0.iter().find_map(|(key, v)| match v {
            Value::Table(df) => Some(outputs.in_part().get(key).copied().unwrap_or(df.height())),
            Value::Json(Json::Array(items)) if items.iter().all(Json::is_object) => {
                Some(outputs.in_part().get(key).copied().unwrap_or(items.len()))
            }
            Value::Json(_) => None,
        })
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

    /// JSON encoded in pieces is the JSON encoded at once: a small value in one small piece,
    /// a large one (strings that straddle the pieces' ends, multi-byte text) in pieces of at
    /// most `Chunks::SIZE`, all full but the last.
    #[test]
    fn json_encoded_in_pieces_is_the_json_encoded_at_once() {
        let small = json!({"a": 1, "b": "山田商事"});
        let chunks = Chunks::encode(&small).unwrap();
        assert_eq!(chunks.0.len(), 1);
        assert!(chunks.0[0].capacity() < 4096, "{}", chunks.0[0].capacity());
        assert_eq!(chunks.0.concat(), serde_json::to_vec(&small).unwrap());

        let rows: Vec<Json> = (0..120_000)
            .map(|i| json!({"no": i, "customer": format!("株式会社ヤマダショウジ{i}"), "amount": i * 7}))
            .collect();
        let large = Json::Array(rows);
        let chunks = Chunks::encode(&large).unwrap();
        let whole = serde_json::to_vec(&large).unwrap();
        assert!(whole.len() > 2 * Chunks::SIZE, "{}", whole.len());
        assert_eq!(chunks.0.len(), whole.len().div_ceil(Chunks::SIZE));
        let (last, full) = chunks.0.split_last().unwrap();
        assert!(full.iter().all(|piece| piece.len() == Chunks::SIZE));
        assert!(!last.is_empty() && last.len() <= Chunks::SIZE);
        assert_eq!(chunks.0.concat(), whole);
    }

    /// A writer's finish line counts the rows it wrote, not its empty list of warnings; a
    /// check's empty findings are zero rows; a list of text is no rows at all.
    #[test]
    fn rows_are_what_a_node_gave_or_wrote() {
        let outputs = |pairs: Vec<(&str, Value)>| {
            Outputs(
                pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
                Default::default(),
            )
        };
        let written = outputs(vec![
            ("out_path", Value::Json(json!("outputs/pairs.csv"))),
            ("row_count", Value::Json(json!(1_000_000))),
            ("warnings", Value::Json(json!([]))),
        ]);
        assert_eq!(rows(&written), Some(1_000_000));
        let found = outputs(vec![
            ("warnings", Value::Json(json!(["a note"]))),
            ("findings", Value::Json(json!([]))),
        ]);
        assert_eq!(rows(&found), Some(0));
        let listed = outputs(vec![(
            "rows",
            Value::Json(json!([{"科目": "現金"}, {"科目": "売掛金"}])),
        )]);
        assert_eq!(rows(&listed), Some(2));
        let names = outputs(vec![("sheets", Value::Json(json!(["月次", "年次"])))]);
        assert_eq!(rows(&names), None);
        let table = polars::prelude::df!("金額" => [1i64, 2, 3]).unwrap();
        assert_eq!(rows(&outputs(vec![("rows", Value::Table(table))])), Some(3));
    }

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

    /// A node's table is saved compressed (a journal's repeated accounts and months shrink
    /// to a fraction) and reads back the same, beside its JSON outputs.
    #[test]
    fn saved_tables_are_compressed_and_read_back_the_same() {
        use polars::prelude::{DataFrame, IntoColumn, NamedFrom, Series};
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::create(dir.path(), "plan", "20261201T000000000Z-000001").unwrap();
        let n = 20_000;
        let accounts: Vec<&str> = (0..n)
            .map(|i| ["旅費交通費", "消耗品費", "売上高"][i % 3])
            .collect();
        let months: Vec<String> = (0..n).map(|i| format!("2024-{:02}", i % 12 + 1)).collect();
        let amounts: Vec<f64> = (0..n).map(|i| (i % 977) as f64 * 110.0).collect();
        let table = DataFrame::new(
            n,
            vec![
                Series::new("勘定科目".into(), accounts).into_column(),
                Series::new("year_month".into(), months).into_column(),
                Series::new("金額".into(), amounts).into_column(),
            ],
        )
        .unwrap();
        let outputs = Outputs::new()
            .with("rows", table.clone())
            .with("errors", json!([]));
        let names = run.save_outputs("totals", &outputs, false).unwrap();
        assert_eq!(names, vec!["rows.arrow", "errors.json"]);

        let mut plain = Vec::new();
        IpcWriter::new(&mut plain)
            .finish(&mut table.clone())
            .unwrap();
        let saved = std::fs::metadata(run.path().join("outputs/totals/rows.arrow"))
            .unwrap()
            .len();
        assert!(
            saved * 2 < plain.len() as u64,
            "saved {saved} bytes, plain Arrow is {}",
            plain.len()
        );
        // The digest a resume compares: the same rows in other chunks agree, one value does not.
        let (top, bottom) = table.split_at(7_000);
        let mut chunked = top.clone();
        chunked.vstack_mut(&bottom).unwrap();
        assert!(chunked.first_col_n_chunks() > 1);
        assert_eq!(table_digest(&chunked), table_digest(&table));
        let mut one_off = table.clone();
        let amounts: Vec<f64> = (0..n)
            .map(|i| (i % 977) as f64 * 110.0 + if i == 12_345 { 1.0 } else { 0.0 })
            .collect();
        one_off
            .with_column(Series::new("金額".into(), amounts).into_column())
            .unwrap();
        assert_ne!(table_digest(&one_off), table_digest(&table));
        // An empty cell is not the number −1 (whose eight bytes are all ones).
        let with = |v: Option<i64>| {
            DataFrame::new(1, vec![Series::new("金額".into(), [v]).into_column()]).unwrap()
        };
        assert_ne!(table_digest(&with(None)), table_digest(&with(Some(-1))));
        let loaded = run.load_outputs("totals").unwrap();
        match loaded.get("rows") {
            Some(Value::Table(back)) => assert!(back.equals(&table)),
            other => panic!("rows came back as {other:?}"),
        }
        assert_eq!(loaded.get("errors").map(Value::to_json), Some(json!([])));
    }
}
