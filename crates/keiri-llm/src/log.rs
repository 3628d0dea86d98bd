//! The JSONL event log of generation runs.
//!
//! Every event goes to two files under the workspace's `logs/` directory: `keiri_agent.log`
//! (all runs, appended) and `runs/<run_id>.jsonl` (one run). One event is one JSON line:
//! timestamp, run id, stage, event name, and the measurements the planner tracks (attempt,
//! duration, validation error count, repair iteration, block distribution, token usage, the
//! structured-output strategy used).
//!
//! Lines are appended, not rewritten with `keiri_fs::write_atomic`: a log only grows, each line
//! is written with one `write` call on a file opened for appending, and a crash can at worst
//! cut the last line, which readers skip. Every line passes through a [`Redactor`] before it is
//! written, so a key that reached a message (for example a provider echoing it in an error)
//! never reaches the disk.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::Error;
use crate::chat::Usage;
use crate::config::ProviderKind;
use crate::redact::Redactor;
use crate::strategy::Strategy;
use crate::time::{Clock, random_hex6};

/// The log of all runs, inside the logs directory.
pub const AGENT_LOG: &str = "keiri_agent.log";
/// The directory of per-run logs, inside the logs directory.
pub const RUNS_DIR: &str = "runs";
/// Messages longer than this are cut: a log line is a record, not a transcript.
const MAX_MESSAGE_CHARS: usize = 2000;

/// One line of the log. `ts` and `run_id` are filled in by [`EventLog::record`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Event {
    /// RFC 3339 UTC with milliseconds.
    #[serde(default)]
    pub ts: String,
    #[serde(default)]
    pub run_id: String,
    /// The generation stage (extracting, retrieving, skeleton, wiring, validating, repair, …).
    pub stage: String,
    /// What happened (e.g. `stage.start`, `stage.end`, `llm.attempt`, `llm.structured`).
    pub event: String,
    /// `ok` or `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation_errors: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair_iteration: Option<u32>,
    /// Nodes per block id in the plan at this point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_distribution: Option<BTreeMap<String, u32>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The structured-output strategy that produced the result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<Strategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<ProviderKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Anything else worth keeping, flattened into the line.
    #[serde(flatten, default, skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

impl Event {
    pub fn new(stage: impl Into<String>, event: impl Into<String>) -> Event {
        Event {
            stage: stage.into(),
            event: event.into(),
            ..Event::default()
        }
    }

    pub fn ok(mut self) -> Event {
        self.status = Some("ok".into());
        self
    }

    /// Marks the event as failed with `err`'s code and message.
    pub fn failed(mut self, err: &Error) -> Event {
        self.status = Some("error".into());
        self.error_code = Some(err.code().into());
        self.message = Some(err.to_string());
        self
    }

    pub fn attempt(mut self, n: u32) -> Event {
        self.attempt = Some(n);
        self
    }

    pub fn duration(mut self, d: Duration) -> Event {
        self.duration_ms = Some(u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        self
    }

    pub fn validation_errors(mut self, n: u32) -> Event {
        self.validation_errors = Some(n);
        self
    }

    pub fn repair_iteration(mut self, n: u32) -> Event {
        self.repair_iteration = Some(n);
        self
    }

    /// Counts nodes per block id.
    pub fn block_distribution<'a>(mut self, blocks: impl IntoIterator<Item = &'a str>) -> Event {
        let mut map = BTreeMap::new();
        for b in blocks {
            *map.entry(b.to_string()).or_insert(0u32) += 1;
        }
        self.block_distribution = Some(map);
        self
    }

    pub fn usage(mut self, usage: Usage) -> Event {
        self.usage = Some(usage);
        self
    }

    pub fn strategy(mut self, strategy: Strategy) -> Event {
        self.strategy = Some(strategy);
        self
    }

    pub fn message(mut self, message: impl Into<String>) -> Event {
        self.message = Some(message.into());
        self
    }

    /// Adds a field of its own.
    pub fn with(mut self, key: impl Into<String>, value: impl Into<Value>) -> Event {
        self.extra.insert(key.into(), value.into());
        self
    }
}

/// Appends events of one run to `keiri_agent.log` and `runs/<run_id>.jsonl`. Cheap to clone;
/// clones write to the same files.
#[derive(Clone, Debug)]
pub struct EventLog {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    run_id: String,
    agent_path: PathBuf,
    run_path: PathBuf,
    files: Mutex<(File, File)>,
    redactor: Redactor,
    clock: Arc<dyn Clock>,
    failures: AtomicU64,
}

impl EventLog {
    /// Opens (creating as needed) the logs of run `run_id` under `logs_dir`
    /// (`<workspace>/logs`). Lines are redacted with `redactor`, which should know every
    /// secret of the session (see [`Redactor::from_env`] and [`crate::LlmConfig::redactor`]).
    pub fn create(
        logs_dir: &Path,
        run_id: &str,
        redactor: Redactor,
        clock: Arc<dyn Clock>,
    ) -> Result<EventLog, Error> {
        check_run_id(run_id)?;
        let runs = logs_dir.join(RUNS_DIR);
        std::fs::create_dir_all(&runs).map_err(|source| Error::Log {
            action: "creating",
            path: runs.clone(),
            source,
        })?;
        let agent_path = logs_dir.join(AGENT_LOG);
        let run_path = runs.join(format!("{run_id}.jsonl"));
        let open = |path: &Path| {
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|source| Error::Log {
                    action: "opening",
                    path: path.to_path_buf(),
                    source,
                })
        };
        let files = (open(&agent_path)?, open(&run_path)?);
        Ok(EventLog {
            inner: Arc::new(Inner {
                run_id: run_id.to_string(),
                agent_path,
                run_path,
                files: Mutex::new(files),
                redactor,
                clock,
                failures: AtomicU64::new(0),
            }),
        })
    }

    pub fn run_id(&self) -> &str {
        &self.inner.run_id
    }

    /// `logs/keiri_agent.log`.
    pub fn agent_path(&self) -> &Path {
        &self.inner.agent_path
    }

    /// `logs/runs/<run_id>.jsonl`.
    pub fn run_path(&self) -> &Path {
        &self.inner.run_path
    }

    /// Appends `event` to both files.
    pub fn record(&self, mut event: Event) -> Result<(), Error> {
        event.ts = self
            .inner
            .clock
            .now()
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        event.run_id = self.inner.run_id.clone();
        if let Some(m) = &mut event.message
            && m.chars().count() > MAX_MESSAGE_CHARS
        {
            *m = m.chars().take(MAX_MESSAGE_CHARS).collect::<String>() + "…";
        }
        let line = serde_json::to_string(&event).map_err(|e| Error::Log {
            action: "serialising an event for",
            path: self.inner.run_path.clone(),
            source: std::io::Error::other(e),
        })?;
        let mut line = self.inner.redactor.redact(&line);
        line.push('\n');
        let mut files = self
            .inner
            .files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (agent, run) = &mut *files;
        for (file, path) in [(run, &self.inner.run_path), (agent, &self.inner.agent_path)] {
            file.write_all(line.as_bytes())
                .map_err(|source| Error::Log {
                    action: "appending to",
                    path: path.clone(),
                    source,
                })?;
        }
        Ok(())
    }

    /// Records `event`, counting a failure instead of returning it: for call sites where a
    /// full disk must not abort the generation itself.
    pub fn record_lossy(&self, event: Event) {
        if self.record(event).is_err() {
            self.inner.failures.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// How many [`EventLog::record_lossy`] writes failed.
    pub fn write_failures(&self) -> u64 {
        self.inner.failures.load(Ordering::Relaxed)
    }
}

/// A run id is a file name: letters, digits, `.`, `_`, `-`, at most 128, not starting with `.`.
pub fn check_run_id(run_id: &str) -> Result<(), Error> {
    let ok = !run_id.is_empty()
        && run_id.len() <= 128
        && !run_id.starts_with('.')
        && run_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidRunId {
            run_id: run_id.chars().take(200).collect(),
        })
    }
}

/// A new run id: `<UTC time>-<6 hex digits>`, e.g. `20250101T093000Z-3fa9c1`; sorts by time.
pub fn new_run_id(clock: &dyn Clock) -> String {
    format!("{}-{}", clock.now().format("%Y%m%dT%H%M%SZ"), random_hex6())
}
