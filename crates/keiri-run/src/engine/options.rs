//! [`RunOptions`]: what the caller of [`super::run`] decides — where the run reads and
//! records, its vars, secrets, answers and hosts, and its bounds.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use indexmap::IndexMap;
use serde_json::Value as Json;
use tokio_util::sync::CancellationToken;

use crate::limits;

/// How a run is started.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Where `runs/<plan_id>/<run_id>/` go (usually `<workspace>/runs`).
    pub runs_dir: PathBuf,
    /// Where relative input paths resolve (the workspace).
    pub base_dir: PathBuf,
    /// Registered plans for subflow calls (`<workspace>/designs`).
    pub designs_dir: PathBuf,
    /// Where the paths a plan names may lead: the roots and deny globs of the surface that
    /// started the run ([`crate::paths`]). [`RunOptions::new`] trusts any path (a program
    /// embedding the runtime); keiri-api always sets the surface's policy.
    pub paths: keiri_fs::PathPolicy,
    /// Vars that override the plan's `vars` (`--var`, `--vars-file`, `--input`).
    pub vars: IndexMap<String, Json>,
    /// Environment variable names `${env.X}` may read.
    pub env_allow: BTreeSet<String>,
    /// The values of those variables (the caller reads the environment; tests pass their own).
    pub env: HashMap<String, String>,
    /// `${config.x}` values.
    pub config: serde_json::Map<String, Json>,
    /// The start time (run id, `run_start`), passed in so tests are deterministic.
    pub now: DateTime<Utc>,
    /// Randomness for the run id suffix.
    pub random: u64,
    /// Continue this earlier run instead of starting a new one.
    pub resume: Option<String>,
    /// Blocks may write to output paths the plan names (`--write`).
    pub write: bool,
    /// A person's answers to paused nodes, by node id (`--answers`, `run_resume`).
    pub answers: IndexMap<String, Json>,
    /// Who gives `answers` (the API and the CLI pass the user the process runs as): recorded
    /// with each answer a node accepts (`node_answered`, [`crate::state::RunState::answered`]),
    /// so a run says who approved what, and when.
    pub answered_by: Option<String>,
    /// Hosts that network blocks (`http.request`, `notify.send` webhooks) may reach. The
    /// allowlist is the user's, from their settings, never the plan's: a plan cannot widen it.
    pub allow_hosts: Vec<String>,
    /// The model the `ai.*` blocks call (the caller resolves the user's LLM settings);
    /// without one those nodes fail with `LLM_NOT_CONFIGURED` and the rest of the plan runs.
    pub llm: Option<keiri_llm::Llm>,
    pub cancel: CancellationToken,
    /// The bounds on the run's work when the plan's `policy.limits` sets none
    /// (`LIMIT_EXCEEDED` past them).
    pub limits: limits::Limits,
    /// The highest bounds the plan's `policy.limits` may ask for (the user's settings).
    pub ceiling: limits::Limits,
    /// The language of the words blocks write into their rows (a check's message, a
    /// match's reason): the user's, so a report handed to a manager reads in one language.
    pub lang: keiri_plan::Lang,
    /// How often a long node's progress becomes a `node_progress` event (the first one only
    /// once the node has run this long, so quick nodes have none): one second.
    pub progress_every: std::time::Duration,
    /// The run reads and builds only what the plan uses. A `csv.read` whose later uses are all
    /// known parses only the columns they read (`engine/projection.rs`), and a top-level block
    /// builds an output the plan does not take (not in the node's `out`, so no node can read
    /// it) only as far as the window shows it (`BlockContext::outputs_taken`: a million
    /// reconciliation matches nobody reads are not built as JSON). Off, every read keeps every
    /// column and every output is built whole (the planner's sample runs, [`crate::verify`],
    /// whose failure reports list the file's columns). On by default.
    pub only_what_is_used: bool,
    /// A `csv.read` and the row-by-row steps after it that alone take its rows run as one
    /// pass over the file, building only the last step's table whole, or only the groups of
    /// a `group_aggregate` that ends the pass (`engine/fused.rs`); the record and every
    /// answer are those of running them one by one. Needs
    /// [`RunOptions::only_what_is_used`]. Off, each node builds its table whole (the tests
    /// that hold the pass to node-by-node execution). On by default.
    pub fused: bool,
}

impl RunOptions {
    /// Options for `workspace` with its `runs/` and `designs/`; the rest empty.
    pub fn new(workspace: &Path, now: DateTime<Utc>, random: u64) -> RunOptions {
        RunOptions {
            runs_dir: workspace.join("runs"),
            base_dir: workspace.to_path_buf(),
            designs_dir: workspace.join("designs"),
            paths: keiri_fs::PathPolicy::trusted(workspace),
            vars: IndexMap::new(),
            env_allow: BTreeSet::new(),
            env: HashMap::new(),
            config: serde_json::Map::new(),
            now,
            random,
            resume: None,
            write: false,
            answers: IndexMap::new(),
            answered_by: None,
            allow_hosts: Vec::new(),
            llm: None,
            cancel: CancellationToken::new(),
            limits: limits::Limits::default(),
            ceiling: limits::Limits::ceiling(),
            lang: keiri_plan::Lang::Ja,
            progress_every: std::time::Duration::from_secs(1),
            only_what_is_used: true,
            fused: true,
        }
    }
}
