//! The engine: runs a validated plan level by level.
//!
//! * **Levels.** Nodes are grouped by dependency depth (keiri-plan's topological order and
//!   dependencies); the nodes of one level run in parallel, at most `policy.concurrency` at
//!   a time (default 1), on scoped threads — blocks are plain synchronous functions.
//! * **Policy.** `on_error` (`stop` default | `continue`), `retries` and `timeout_ms`, per
//!   node, falling back to the plan's, then to the root plan's. After a failure under `stop`,
//!   no further level starts; under `continue`, nodes that depend on a failed or skipped node
//!   are skipped and independent branches go on, and the run ends finished with the failures
//!   listed — unless one is a defect of the plan itself ([`failures::is_plan_defect`]).
//! * **Conditions.** `when {expr}` and `while {condition}` go through keiri-plan's one
//!   evaluator; in conditions a reference to an output that does not exist (a skipped node,
//!   the first `while` iteration) reads as `null`.
//! * **Loops.** `foreach` runs the body plan once per item with `${vars.<var>}` (default
//!   `item`) and `${vars.index}` bound, at most `max_concurrency` items at a time; `while`
//!   runs it while the condition holds (with `${vars.iteration}` and the previous iteration's
//!   outputs visible), at most `max_iterations` times. The loop's `collect` output is the list
//!   of per-iteration objects `{alias: value}`; any other `out` key names a body alias and
//!   gives the list of its values (`foreach`) or its last value (`while`).
//! * **Subflows.** `call {plan_id, inputs}` runs the latest registered plan of that id from
//!   the designs directory with `inputs` as its vars; its `out` keys name the called plan's
//!   aliases. A call back into a plan already on the call stack fails with `SUBFLOW_CYCLE`.
//! * **Inputs.** References are resolved by keiri-plan's one resolver; `${env.X}` only for
//!   allowlisted names. Spec defaults are applied, then every input is checked against its
//!   spec (unknown key, missing required, wrong type, outside `enum` → `INPUT_INVALID`).
//! * **Blocks** run on their own thread so that a timeout (`TIMEOUT`) or a cancellation
//!   (`CANCELLED`) returns at once; the block's cancellation token is cancelled and a block
//!   that keeps running is left to finish on its own, its result discarded.
//! * **Records and resume** ([`crate::records`], [`crate::state`]): every top-level node's
//!   outputs and the state are saved as soon as it finishes; a resume reloads finished nodes
//!   from disk and runs the rest.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use indexmap::IndexMap;
use keiri_plan::model::{Node, NodeKind, Plan, Policy};
use keiri_plan::resolve;
use keiri_plan::{Catalog, ValueType};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use crate::block::{BlockError, ErrorCode, Inputs, Outputs, Registry};
use crate::limits;
use crate::records::{self, Event, RunDir, RunError};
use crate::state::{NodeFailure, NodeState, NodeStatus, NodeWarning, RunState, RunStatus};
use crate::value::Value;

mod checks;
mod empty;
mod failures;
mod fused;
mod invoke;
mod levels;
mod options;
mod passes;
mod policy;
mod projection;
mod recorder;
mod scope;
mod shapes;
mod tables;
mod warnings;
use checks::{check_columns, check_inputs};
use failures::{cancelled, failure, invalid, nested_failure};
use levels::{last_uses, levels, parallel};
use policy::merge;
use scope::{RefLookup, Scope, Shapes, resolve_error};
use tables::{table_json, value_json};

pub use options::RunOptions;

/// What a run did.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub run_id: String,
    pub plan_id: String,
    pub run_dir: PathBuf,
    pub status: RunStatus,
    /// The failures of this attempt (top-level node ids; nested failures are reported at
    /// their loop or subflow node).
    pub failures: Vec<NodeFailure>,
    /// Top-level node id → what happened (nodes that never started are absent).
    pub nodes: IndexMap<String, NodeStatus>,
    /// The nodes waiting for an answer (status `paused`), with their questions.
    pub paused: Vec<NodeFailure>,
    /// What a person must see about the nodes that ran (kept from earlier attempts for the
    /// nodes a resume reused), in the order they were given.
    pub warnings: Vec<NodeWarning>,
}

/// Receives every event as it happens (besides `events.jsonl`).
pub type EventSink<'a> = &'a (dyn Fn(&Event) + Sync);

/// The hex SHA-256 of a plan text (recorded in `run_start` and `state.json`).
pub fn plan_sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Runs `plan` (already validated; `plan_text` is what gets recorded) or, with
/// `options.resume`, continues that run.
pub fn run(
    plan: &Plan,
    plan_text: &str,
    catalog: &Catalog,
    registry: &Registry,
    options: &RunOptions,
    sink: EventSink<'_>,
) -> Result<RunOutcome, RunError> {
    let started = Instant::now();
    let sha = plan_sha256(plan_text);
    let used_columns = if options.only_what_is_used {
        projection::used_columns(plan, catalog)
    } else {
        HashMap::new()
    };
    let (dir, state, resumed) = match &options.resume {
        Some(run_id) => {
            let dir = RunDir::open(&options.runs_dir, &plan.id, run_id)?;
            dir.claim();
            let mut state = RunState::load(dir.path())?;
            dir.clean_staging()?;
            // Only finished nodes are kept; failed and skipped ones run again (and warn again).
            state.nodes.retain(|_, n| n.status == NodeStatus::Finished);
            // A reader that parsed other columns than the plan now reads runs again, and so
            // does every node after it (their tables hold the columns it gave them).
            for id in projection::stale(plan, &state.nodes, &used_columns, &dir) {
                state.nodes.remove(&id);
            }
            let kept = &state.nodes;
            state.warnings.retain(|w| kept.contains_key(w.top_node()));
            for (k, v) in &options.vars {
                state.vars.insert(k.clone(), v.clone());
            }
            state.env_allow.extend(options.env_allow.iter().cloned());
            state.env_allow.sort();
            state.env_allow.dedup();
            state.plan_sha256 = sha.clone();
            state.status = RunStatus::Running;
            state.duration_ms = None;
            state.write = options.write;
            (dir, state, true)
        }
        None => {
            let (run_id, dir) = new_run_dir(options, &plan.id)?;
            dir.claim();
            records::clean_killed_runs(&options.runs_dir, &plan.id);
            let state = RunState {
                run_id,
                plan_id: plan.id.clone(),
                plan_sha256: sha.clone(),
                status: RunStatus::Running,
                started_at: options.now.to_rfc3339(),
                vars: options.vars.clone(),
                env_allow: options.env_allow.iter().cloned().collect(),
                write: options.write,
                nodes: Default::default(),
                warnings: Vec::new(),
                duration_ms: None,
                answered: Vec::new(),
            };
            (dir, state, false)
        }
    };
    dir.save_plan(plan_text)?;
    state.save(dir.path())?;
    let mut env_allow: BTreeSet<String> = state.env_allow.iter().cloned().collect();
    env_allow.extend(options.env_allow.iter().cloned());
    let vars = state.vars.clone();
    let reused: HashMap<String, Vec<String>> = state
        .nodes
        .iter()
        .map(|(k, v)| (k.clone(), v.outputs.clone()))
        .collect();
    let mut chains = HashMap::new();
    if options.fused && options.only_what_is_used {
        chains = fused::chains(plan, catalog, &used_columns);
        // A chain a resume finds begun runs one node at a time.
        chains.retain(|reader, chain| {
            !reused.contains_key(reader) && chain.steps.iter().all(|s| !reused.contains_key(&s.id))
        });
    }
    let runner = Runner {
        started,
        catalog,
        registry,
        options,
        env_allow,
        secrets: crate::secrets::Secrets::new(options.env.values()),
        sink,
        dir: &dir,
        state: Mutex::new(state),
        designs: OnceLock::new(),
        record_error: Mutex::new(None),
        limits: limits::Limits::for_plan(
            plan.policy.as_ref().and_then(|p| p.limits.as_ref()),
            options.limits,
            options.ceiling,
        ),
        loop_shapes: Mutex::new(HashMap::new()),
        memory_at_start: limits::resident_bytes(),
        recorder: Default::default(),
        used_columns,
        chains,
        fused: Mutex::new(HashMap::new()),
    };
    let run_id = runner.lock_state().run_id.clone();
    runner.emit(Event::RunStart {
        run_id: run_id.clone(),
        plan_id: plan.id.clone(),
        plan_sha256: sha,
        plan_text: plan_text.to_string(),
        started_at: options.now.to_rfc3339(),
        resumed,
    });
    let mut root = Scope::root(plan, &vars);
    let frame = Frame {
        prefix: Vec::new(),
        stack: vec![plan.id.clone()],
        top: Some(&reused),
    };
    let policy = plan.policy.clone().unwrap_or_default();
    let (result, writer_failed) = recorder::with_writer(
        &runner.recorder,
        |job| runner.save_finished(job),
        || runner.run_graph(plan, &policy, &mut root, &frame),
    );
    if writer_failed {
        runner.note_record_error(RunError::StateInvalid(
            "saving a node's outputs failed unexpectedly".into(),
        ));
    }
    if let Some(err) = runner.take_record_error() {
        return Err(err);
    }
    let status = if result.cancelled || options.cancel.is_cancelled() {
        RunStatus::Cancelled
    } else if result.fatal {
        RunStatus::Failed
    } else if !result.paused.is_empty() {
        RunStatus::Paused
    } else {
        RunStatus::Finished
    };
    let duration_ms = millis(started.elapsed());
    let state = {
        let mut state = runner.lock_state();
        state.status = status;
        state.duration_ms = Some(duration_ms);
        state.clone()
    };
    // Every node's outputs were renamed out of staging/: the folder itself goes.
    dir.clean_staging()?;
    state.save(dir.path())?;
    runner.emit(Event::RunFinish {
        status,
        duration_ms,
        failed: result.failures.iter().map(|f| f.node.clone()).collect(),
    });
    if let Some(err) = runner.take_record_error() {
        return Err(err);
    }
    Ok(RunOutcome {
        run_id,
        plan_id: plan.id.clone(),
        run_dir: dir.path().to_path_buf(),
        status,
        failures: runner.secrets.redact_failures(result.failures),
        nodes: result.statuses,
        paused: runner.secrets.redact_failures(result.paused),
        warnings: state.warnings,
    })
}

/// A new run's id and folder. Two runs started in the same millisecond with the same random
/// part would get the same id: the second takes the next one instead of writing into the
/// first's folder (at most 256 tries, then the folder's `AlreadyExists` error).
fn new_run_dir(options: &RunOptions, plan_id: &str) -> Result<(String, RunDir), RunError> {
    let mut step = 0u64;
    loop {
        let run_id = records::new_run_id(options.now, options.random.wrapping_add(step));
        match RunDir::create(&options.runs_dir, plan_id, &run_id) {
            Err(RunError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::AlreadyExists && step < 255 =>
            {
                step += 1;
            }
            created => return created.map(|dir| (run_id, dir)),
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Where a graph runs: its node id prefix, the subflow call stack, and (top level only) the
/// finished nodes of the run being resumed.
struct Frame<'f> {
    prefix: Vec<String>,
    stack: Vec<String>,
    top: Option<&'f HashMap<String, Vec<String>>>,
}

impl Frame<'_> {
    fn qualified(&self, node: &str) -> String {
        let mut parts = self.prefix.clone();
        parts.push(node.to_string());
        parts.join("/")
    }
}

/// What one graph run produced.
#[derive(Default)]
struct GraphResult {
    failures: Vec<NodeFailure>,
    /// A failure the run cannot finish with: one under `on_error: stop` (the default), or a
    /// defect of the plan under any policy ([`failures::is_plan_defect`]). A block's failure
    /// on its data under `continue` (bad data, a timeout, a file that is not there) leaves the
    /// run finished, with the failure listed.
    fatal: bool,
    paused: Vec<NodeFailure>,
    cancelled: bool,
    statuses: IndexMap<String, NodeStatus>,
}

enum NodeResult {
    Done(Outputs),
    Failed(BlockError),
    /// Not started: the run was cancelled first.
    NotRun,
}

struct Runner<'a> {
    /// When [`run`] was called; a block's clock is `options.now` plus the time since.
    started: Instant,
    catalog: &'a Catalog,
    registry: &'a Registry,
    options: &'a RunOptions,
    env_allow: BTreeSet<String>,
    /// The `${env.X}` values, redacted from everything recorded or reported.
    secrets: crate::secrets::Secrets,
    sink: EventSink<'a>,
    dir: &'a RunDir,
    state: Mutex<RunState>,
    designs: OnceLock<HashMap<String, (PathBuf, Plan)>>,
    /// The first failure to write the records; the run stops reporting success after it.
    record_error: Mutex<Option<RunError>>,
    /// The run's bounds: the options' defaults, the plan's `policy.limits`, the ceiling.
    limits: limits::Limits,
    /// Each finished loop's shapes (see `Scope::shapes`), by qualified id, until published.
    loop_shapes: Mutex<HashMap<String, Shapes>>,
    /// The process's resident memory when the run started: the memory budget is the run's
    /// growth from here (`invoke.rs`), so tables kept node after node add up.
    memory_at_start: Option<u64>,
    /// Where finished nodes' outputs go to be saved off the critical path (`recorder.rs`).
    recorder: recorder::Recorder,
    /// The columns the rest of the plan reads of each top-level reader's table, where all
    /// are known (`projection.rs`).
    used_columns: HashMap<String, Vec<String>>,
    /// The top-level readers that run the row-by-row steps after them in one pass, by id.
    chains: HashMap<String, fused::Chain>,
    /// The outputs of steps a pass ran and the time each took there, until their turn.
    fused: Mutex<HashMap<String, (Outputs, Duration)>>,
}

/// The effective policy of a node: its own fields, else the plan's.
impl<'a> Runner<'a> {
    /// What the rest of the plan uses of `node`: known for top-level nodes of a run that
    /// reads and builds only what is used, else all.
    fn used(&self, node: &Node, frame: &Frame<'_>) -> projection::Used {
        if !frame.prefix.is_empty() || !self.options.only_what_is_used {
            return projection::Used::default();
        }
        projection::Used {
            columns: self.used_columns.get(&node.id).cloned(),
            outputs: Some(node.aliases().map(|(local, _)| local.to_string()).collect()),
            pieces: None,
        }
    }

    /// The resolver's view of `scope` with this run's `${config.x}` and allowed `${env.X}`;
    /// `lenient` (conditions) reads a missing output or var as null.
    fn lookup<'s>(&'s self, scope: &'s Scope<'s>, lenient: bool) -> RefLookup<'s> {
        RefLookup {
            scope,
            config: &self.options.config,
            env: &self.options.env,
            env_allow: &self.env_allow,
            lenient,
        }
    }

    fn lock_state(&self) -> std::sync::MutexGuard<'_, RunState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn note_record_error(&self, err: RunError) {
        let mut slot = self.record_error.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(err);
        }
    }

    fn take_record_error(&self) -> Option<RunError> {
        self.record_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    fn emit(&self, event: Event) {
        let event = self.secrets.redact_event(&event);
        if let Err(e) = self.dir.append_event(&event) {
            self.note_record_error(e);
        }
        (self.sink)(&event);
    }

    fn designs(&self) -> &HashMap<String, (PathBuf, Plan)> {
        self.designs
            .get_or_init(|| keiri_plan::designs_index(&self.options.designs_dir))
    }

    /// Runs the nodes of one plan level into `scope`.
    fn run_graph(
        &self,
        plan: &Plan,
        inherited: &Policy,
        scope: &mut Scope<'_>,
        frame: &Frame<'_>,
    ) -> GraphResult {
        let policy = merge(plan.policy.as_ref(), inherited);
        let levels = levels(plan);
        // At the top level a node's outputs are dropped once every node that refers to them
        // has run: they are on disk already (or, kept in part, can be computed again), and a long pipeline would otherwise hold every
        // intermediate table to the end. A loop body or a subflow hands its whole scope up
        // (`flatten`), so only the top level releases.
        let releases = frame.top.is_some();
        let last_use = if releases {
            last_uses(plan, &levels)
        } else {
            HashMap::new()
        };
        let not_needed = match frame.top {
            Some(top) if !top.is_empty() => recorder::not_needed(plan, top, self.dir),
            _ => Default::default(),
        };
        let mut result = GraphResult::default();
        let mut stopped = false;
        for (level_index, level) in levels.into_iter().enumerate() {
            if self.options.cancel.is_cancelled() {
                result.cancelled = true;
                break;
            }
            if stopped {
                break;
            }
            // Decide, in file order, which nodes of the level run.
            let mut runnable = Vec::new();
            for &i in &level {
                let node = &plan.graph[i];
                let qid = frame.qualified(&node.id);
                // A node finished in an earlier attempt of this run: reload its outputs. If
                // they cannot be read, or were kept in part and a node still to run needs
                // them, the node runs again; kept in part and needed by none, it stays done.
                if not_needed.contains(&node.id) {
                    self.emit(Event::NodeReused { node: qid });
                    result
                        .statuses
                        .insert(node.id.clone(), NodeStatus::Finished);
                    continue;
                }
                if frame.top.is_some_and(|t| t.contains_key(&node.id))
                    && let Ok(outputs) = self.dir.load_outputs(&node.id)
                {
                    self.emit(Event::NodeReused { node: qid });
                    scope.publish(node, outputs);
                    result
                        .statuses
                        .insert(node.id.clone(), NodeStatus::Finished);
                    continue;
                }
                let blocked = keiri_plan::dry_run::dependencies(node, plan)
                    .into_iter()
                    .find(|d| {
                        matches!(
                            result.statuses.get(d),
                            Some(NodeStatus::Failed | NodeStatus::Skipped | NodeStatus::Paused)
                        )
                    });
                if let Some(dep) = blocked {
                    self.skip(
                        &mut result,
                        node,
                        &qid,
                        format!("dependency {dep} did not finish"),
                        frame,
                    );
                    continue;
                }
                if let Some(when) = &node.when {
                    let lookup = self.lookup(scope, true);
                    match keiri_plan::expr::evaluate(&when.expr(), &lookup) {
                        Ok(true) => {}
                        Ok(false) => {
                            self.skip(&mut result, node, &qid, "when is false".into(), frame);
                            continue;
                        }
                        Err(e) => {
                            let error = BlockError::new(
                                ErrorCode::ExprInvalid,
                                format!("ノード {qid}: when の条件を評価できません（{e}）"),
                                format!("node {qid}: cannot evaluate when ({e})"),
                            );
                            self.fail(&mut result, node, &qid, &error, 1, false, frame);
                            // A condition that cannot be evaluated is the plan's defect.
                            result.fatal = true;
                            if merge(node.policy.as_ref(), &policy).on_error.as_deref()
                                != Some("continue")
                            {
                                stopped = true;
                            }
                            continue;
                        }
                    }
                }
                runnable.push(i);
            }
            let limit = policy.concurrency.unwrap_or(1).max(1) as usize;
            let scope_ref: &Scope<'_> = scope;
            let outcomes = parallel(&runnable, limit, |&i| {
                let node = &plan.graph[i];
                if self.options.cancel.is_cancelled() {
                    return NodeResult::NotRun;
                }
                self.run_node(node, &policy, scope_ref, frame)
            });
            for (&i, outcome) in runnable.iter().zip(outcomes) {
                let node = &plan.graph[i];
                match outcome {
                    NodeResult::Done(outputs) => {
                        scope.publish(node, outputs);
                        let qid = frame.qualified(&node.id);
                        if let Some(shapes) = self.lock_loop_shapes().remove(&qid) {
                            scope.shapes.insert(node.id.clone(), shapes);
                        }
                        result
                            .statuses
                            .insert(node.id.clone(), NodeStatus::Finished);
                    }
                    NodeResult::Failed(error) => {
                        let qid = frame.qualified(&node.id);
                        if error.code == ErrorCode::Cancelled {
                            result.cancelled = true;
                        }
                        if error.code == ErrorCode::AwaitingInput {
                            result.statuses.insert(node.id.clone(), NodeStatus::Paused);
                            result.paused.push(failure(&qid, &error));
                        } else {
                            result.statuses.insert(node.id.clone(), NodeStatus::Failed);
                            result.failures.push(failure(&qid, &error));
                        }
                        let go_on = merge(node.policy.as_ref(), &policy).on_error.as_deref()
                            == Some("continue");
                        if !go_on {
                            stopped = true;
                        }
                        if error.code != ErrorCode::AwaitingInput
                            && (!go_on || failures::is_plan_defect(error.code))
                        {
                            result.fatal = true;
                        }
                    }
                    NodeResult::NotRun => result.cancelled = true,
                }
            }
            if releases {
                scope
                    .outputs
                    .retain(|id, _| last_use.get(id).is_some_and(|&l| l > level_index));
            }
        }
        result
    }

    fn skip(
        &self,
        result: &mut GraphResult,
        node: &Node,
        qid: &str,
        reason: String,
        frame: &Frame<'_>,
    ) {
        self.emit(Event::NodeSkipped {
            node: qid.to_string(),
            reason,
        });
        result.statuses.insert(node.id.clone(), NodeStatus::Skipped);
        if frame.top.is_some() {
            self.record_state(
                &node.id,
                NodeState {
                    status: NodeStatus::Skipped,
                    outputs: Vec::new(),
                    error: None,
                    read_columns: None,
                },
            );
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn fail(
        &self,
        result: &mut GraphResult,
        node: &Node,
        qid: &str,
        error: &BlockError,
        attempt: u32,
        retrying: bool,
        frame: &Frame<'_>,
    ) {
        self.emit_error(qid, error, attempt, retrying);
        result.statuses.insert(node.id.clone(), NodeStatus::Failed);
        result.failures.push(failure(qid, error));
        if frame.top.is_some() {
            self.record_failure(&node.id, qid, error);
        }
    }

    fn emit_error(&self, qid: &str, error: &BlockError, attempt: u32, retrying: bool) {
        self.emit(Event::NodeError {
            node: qid.to_string(),
            code: error.code.as_str().to_string(),
            message_ja: error.message_ja.clone(),
            message_en: error.message_en.clone(),
            hint_ja: error.hint.as_ref().map(|h| h.0.clone()),
            hint_en: error.hint.as_ref().map(|h| h.1.clone()),
            attempt,
            retrying,
        });
    }

    fn record_state(&self, node: &str, mut node_state: NodeState) {
        node_state.error = node_state.error.map(|f| self.secrets.redact_failure(f));
        // Saved under the lock: the record writer (`recorder.rs`) and the nodes of a level
        // record from their own threads, and an older snapshot must not land last.
        let saved = {
            let mut state = self.lock_state();
            state.nodes.insert(node.to_string(), node_state);
            state.save(self.dir.path())
        };
        if let Err(e) = saved {
            self.note_record_error(e);
        }
    }

    /// Saves `node`'s outputs (secrets redacted) and records it finished: on the record
    /// writer's thread while the run goes (`recorder.rs`), else here.
    fn record_finished(&self, node: &Node, outputs: &Outputs) {
        let outputs = match records::ToSave::new(&self.secrets.redact_outputs(outputs)) {
            Ok(outputs) => outputs,
            Err(e) => return self.note_record_error(e),
        };
        if let Some(job) = self.recorder.send(recorder::Job::new(node, outputs)) {
            self.save_finished(job);
        }
    }

    fn save_finished(&self, job: recorder::Job) {
        match self
            .dir
            .save_encoded(&job.node, &job.outputs, job.recomputable)
        {
            Ok(files) => self.record_state(
                &job.node,
                NodeState {
                    status: NodeStatus::Finished,
                    outputs: files,
                    error: None,
                    read_columns: self.used_columns.get(&job.node).cloned(),
                },
            ),
            Err(e) => self.note_record_error(e),
        }
    }

    fn record_failure(&self, node: &str, qid: &str, error: &BlockError) {
        self.record_state(
            node,
            NodeState {
                status: NodeStatus::Failed,
                outputs: Vec::new(),
                error: Some(failure(qid, error)),
                read_columns: None,
            },
        );
    }

    /// Runs one node with its retries; emits its events and (top level) saves its records.
    fn run_node(
        &self,
        node: &Node,
        plan_policy: &Policy,
        scope: &Scope<'_>,
        frame: &Frame<'_>,
    ) -> NodeResult {
        let policy = merge(node.policy.as_ref(), plan_policy);
        let qid = frame.qualified(&node.id);
        let attempts = policy.retries.unwrap_or(0).saturating_add(1);
        // Finished in an earlier attempt but kept in part: its rows must come out the same.
        let kept = match frame.top {
            Some(top) if top.contains_key(&node.id) => {
                self.dir.kept_in_part(&node.id).unwrap_or_default()
            }
            _ => Default::default(),
        };
        let ran = frame.top.and_then(|_| self.lock_fused().remove(&node.id));
        if let Some(ran) = ran {
            return self.finish_fused(node, &qid, frame, ran);
        }
        let mut attempt = 0;
        loop {
            attempt += 1;
            self.emit(Event::NodeStart {
                node: qid.clone(),
                attempt,
            });
            let started = Instant::now();
            let result = match node.kind() {
                NodeKind::Block => self.run_block(node, &qid, &policy, scope, frame),
                NodeKind::Loop => self.run_loop(node, &qid, &policy, scope, frame),
                NodeKind::Subflow => self.run_subflow(node, &qid, &policy, scope, frame),
                NodeKind::Unknown => Err(BlockError::new(
                    ErrorCode::UnknownBlock,
                    format!("ノード {qid}: 不明な type です"),
                    format!("node {qid}: unknown node type"),
                )),
            };
            let result = result.and_then(|outputs| recorder::same_rows(&qid, &kept, outputs));
            let duration_ms = millis(started.elapsed());
            match result {
                Ok(outputs) => return self.done(node, &qid, frame, outputs, duration_ms),
                Err(error) if error.code == ErrorCode::AwaitingInput => {
                    self.emit(Event::NodePaused {
                        node: qid.clone(),
                        question: error.question.as_deref().cloned().unwrap_or(Json::Null),
                        message_ja: error.message_ja.clone(),
                        message_en: error.message_en.clone(),
                    });
                    if frame.top.is_some() {
                        self.record_state(
                            &node.id,
                            NodeState {
                                status: NodeStatus::Paused,
                                outputs: Vec::new(),
                                error: Some(failure(&qid, &error)),
                                read_columns: None,
                            },
                        );
                    }
                    return NodeResult::Failed(error);
                }
                Err(error) => {
                    let retryable =
                        policy::retryable(error.code) && !self.options.cancel.is_cancelled();
                    let retrying = retryable && attempt < attempts;
                    self.emit_error(&qid, &error, attempt, retrying);
                    if retrying {
                        continue;
                    }
                    if frame.top.is_some() {
                        self.record_failure(&node.id, &qid, &error);
                    }
                    return NodeResult::Failed(error);
                }
            }
        }
    }

    /// Records `node` finished (top level) and reports it.
    fn done(
        &self,
        node: &Node,
        qid: &str,
        frame: &Frame<'_>,
        outputs: Outputs,
        duration_ms: u64,
    ) -> NodeResult {
        let summary = outputs
            .0
            .iter()
            .map(|(k, v)| (k.clone(), records::summarize(v, outputs.in_part().get(k))))
            .collect();
        if frame.top.is_some() {
            self.record_finished(node, &outputs);
        }
        self.emit(Event::NodeFinish {
            node: qid.to_string(),
            duration_ms,
            rows: records::rows(&outputs),
            outputs: summary,
        });
        NodeResult::Done(outputs)
    }

    fn resolve_inputs(
        &self,
        entries: &IndexMap<String, Json>,
        qid: &str,
        scope: &Scope<'_>,
    ) -> Result<IndexMap<String, Value>, BlockError> {
        let lookup = self.lookup(scope, false);
        entries
            .iter()
            .map(|(k, v)| {
                resolve::resolve(v, &lookup)
                    .map(|v| (k.clone(), v))
                    .map_err(|e| resolve_error(qid, &e))
            })
            .collect()
    }

    fn run_block(
        &self,
        node: &Node,
        qid: &str,
        policy: &Policy,
        scope: &Scope<'_>,
        frame: &Frame<'_>,
    ) -> Result<Outputs, BlockError> {
        let block_id = node.block.as_deref().unwrap_or_default();
        let unknown = || {
            BlockError::new(
                ErrorCode::UnknownBlock,
                format!("ノード {qid}: ブロック {block_id} の実装がありません"),
                format!("node {qid}: block {block_id} has no implementation"),
            )
        };
        let spec = self.catalog.get(block_id).ok_or_else(unknown)?;
        let entry = spec
            .entrypoint
            .as_deref()
            .and_then(|e| e.strip_prefix("builtin:"))
            .unwrap_or(block_id);
        let f = self
            .registry
            .get(entry)
            .or_else(|| self.registry.get(block_id))
            .ok_or_else(unknown)?;
        let mut inputs = self.resolve_inputs(&node.inputs, qid, scope)?;
        check_inputs(spec, &mut inputs, qid)?;
        check_columns(spec, node, &inputs, qid)?;
        let mut parts = frame.prefix.clone();
        parts.push(node.id.clone());
        let out_dir = self.dir.files_dir(&parts);
        let input_rows = warnings::input_rows(spec, &inputs);
        let shape = |n: &str, a: &str| scope.shape(n, a).cloned();
        let shapes = empty::shapes(spec, &inputs, &|key| empty::loop_shape(node, key, &shape));
        let columnless = empty::columnless(node, &inputs);
        let mut used = self.used(node, frame);
        let pass = self.pass(node, frame, scope, &mut used);
        let mut outputs = self
            .invoke(f, qid, Inputs(inputs), out_dir, policy.timeout_ms, used)
            .map_err(|e| empty::explain_missing(e, &columnless))?;
        if let Some(pass) = pass {
            self.take_pass(qid, &pass, &outputs)?;
        }
        empty::keep_columns(&mut outputs, shapes);
        if let Some(warning) = warnings::empty_result(spec, node, input_rows, &outputs) {
            self.warn(qid, warning);
        }
        Ok(outputs)
    }

    fn run_loop(
        &self,
        node: &Node,
        qid: &str,
        policy: &Policy,
        scope: &Scope<'_>,
        frame: &Frame<'_>,
    ) -> Result<Outputs, BlockError> {
        let Some(body) = &node.body else {
            return Err(invalid(
                qid,
                "loop に body.plan がありません",
                "the loop has no body.plan",
            ));
        };
        let body_plan = &body.plan;
        let mut iterations: Vec<IndexMap<String, Value>> = Vec::new();
        let foreach = node.foreach.is_some();
        if let Some(f) = &node.foreach {
            let source = f
                .input
                .as_ref()
                .or(f.items.as_ref())
                .cloned()
                .unwrap_or(Json::Null);
            let lookup = self.lookup(scope, false);
            let items =
                match resolve::resolve(&source, &lookup).map_err(|e| resolve_error(qid, &e))? {
                    Value::Json(Json::Array(items)) => {
                        limits::check_foreach(qid, items.len(), self.limits.foreach_items)
                            .map(|()| items)?
                    }
                    Value::Table(df) => {
                        match limits::check_foreach(qid, df.height(), self.limits.foreach_items)
                            .and_then(|()| table_json(&df))?
                        {
                            Json::Array(items) => items,
                            _ => Vec::new(),
                        }
                    }
                    Value::Json(other) => {
                        return Err(invalid(
                            qid,
                            &format!(
                                "foreach の対象が配列ではありません（{}）",
                                ValueType::of(&other).as_str()
                            ),
                            &format!(
                                "foreach needs a list, got {}",
                                ValueType::of(&other).as_str()
                            ),
                        ));
                    }
                };
            let var = f
                .var
                .clone()
                .unwrap_or_else(|| keiri_plan::validate::DEFAULT_LOOP_VAR.to_string());
            let limit = f.max_concurrency.unwrap_or(1).max(1) as usize;
            let indexes: Vec<usize> = (0..items.len()).collect();
            let results = parallel(&indexes, limit, |&i| {
                if self.options.cancel.is_cancelled() {
                    return Err(cancelled(qid));
                }
                let mut vars: IndexMap<String, Value> = body_plan
                    .vars
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::Json(v.clone())))
                    .collect();
                vars.insert(var.clone(), Value::Json(items[i].clone()));
                vars.insert("index".into(), Value::Json(Json::from(i)));
                self.iterate(node, qid, i, body_plan, policy, scope, vars, frame)
            });
            for r in results {
                iterations.push(r?);
            }
        } else if let Some(w) = &node.while_loop {
            let max = w.max_iterations.unwrap_or(0).max(0) as usize;
            let condition = w.condition.as_ref().map(|c| c.expr()).unwrap_or_default();
            let mut i = 0usize;
            loop {
                if self.options.cancel.is_cancelled() {
                    return Err(cancelled(qid));
                }
                let mut view = Scope {
                    outputs: HashMap::new(),
                    shapes: HashMap::new(),
                    vars: IndexMap::new(),
                    parent: Some(scope),
                };
                view.vars
                    .insert("iteration".into(), Value::Json(Json::from(i)));
                if let Some(last) = iterations.last() {
                    // The previous iteration's outputs, by alias, under each body node id.
                    for body_node in &body_plan.graph {
                        let aliases: IndexMap<String, Value> = body_node
                            .aliases()
                            .filter_map(|(_, a)| last.get(a).map(|v| (a.to_string(), v.clone())))
                            .collect();
                        view.outputs.insert(body_node.id.clone(), aliases);
                    }
                }
                let lookup = self.lookup(&view, true);
                let go = keiri_plan::expr::evaluate(&condition, &lookup).map_err(|e| {
                    BlockError::new(
                        ErrorCode::ExprInvalid,
                        format!("ノード {qid}: while の条件を評価できません（{e}）"),
                        format!("node {qid}: cannot evaluate the while condition ({e})"),
                    )
                })?;
                if !go {
                    break;
                }
                if i >= max {
                    self.warn_loop_capped(qid, max);
                    break;
                }
                limits::check_while(qid, i, self.limits.while_iterations)?;
                let mut vars: IndexMap<String, Value> = body_plan
                    .vars
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::Json(v.clone())))
                    .collect();
                vars.insert("iteration".into(), Value::Json(Json::from(i)));
                iterations.push(self.iterate(node, qid, i, body_plan, policy, scope, vars, frame)?);
                i += 1;
            }
        }
        if foreach {
            let dry = |inner: &Node, published: &empty::Published| {
                self.dry_inputs(inner, published, scope)
            };
            let shapes = empty::loop_shapes(node, &iterations, || {
                empty::body_shapes(body_plan, self.catalog, &dry)
            });
            if !shapes.is_empty() {
                self.lock_loop_shapes().insert(qid.to_string(), shapes);
            }
        }
        let mut collect = Vec::with_capacity(iterations.len());
        for it in &iterations {
            let mut obj = serde_json::Map::new();
            for (alias, v) in it {
                obj.insert(alias.clone(), value_json(v)?);
            }
            collect.push(Json::Object(obj));
        }
        let mut outputs = Outputs::default();
        outputs
            .0
            .insert("collect".into(), Value::Json(Json::Array(collect)));
        for (local, _) in node.aliases() {
            if local == "collect" {
                continue;
            }
            let value = if foreach {
                let mut list = Vec::new();
                for it in &iterations {
                    list.push(
                        it.get(local)
                            .map(value_json)
                            .transpose()?
                            .unwrap_or(Json::Null),
                    );
                }
                Value::Json(Json::Array(list))
            } else {
                iterations
                    .last()
                    .and_then(|it| it.get(local).cloned())
                    .unwrap_or(Value::Json(Json::Null))
            };
            outputs.0.insert(local.to_string(), value);
        }
        Ok(outputs)
    }

    /// One loop iteration: the body plan in its own scope; returns its aliases.
    #[allow(clippy::too_many_arguments)]
    fn iterate(
        &self,
        node: &Node,
        qid: &str,
        index: usize,
        body: &Plan,
        policy: &Policy,
        scope: &Scope<'_>,
        vars: IndexMap<String, Value>,
        frame: &Frame<'_>,
    ) -> Result<IndexMap<String, Value>, BlockError> {
        let mut inner = Scope {
            outputs: HashMap::new(),
            shapes: HashMap::new(),
            vars,
            parent: Some(scope),
        };
        let mut prefix = frame.prefix.clone();
        prefix.push(format!("{}[{index}]", node.id));
        let inner_frame = Frame {
            prefix,
            stack: frame.stack.clone(),
            top: None,
        };
        let result = self.run_graph(body, policy, &mut inner, &inner_frame);
        if let Some(f) = result.failures.first() {
            return Err(nested_failure(qid, f));
        }
        if result.cancelled {
            return Err(cancelled(qid));
        }
        Ok(flatten(body, inner.outputs))
    }

    fn run_subflow(
        &self,
        node: &Node,
        qid: &str,
        policy: &Policy,
        scope: &Scope<'_>,
        frame: &Frame<'_>,
    ) -> Result<Outputs, BlockError> {
        let Some(call) = &node.call else {
            return Err(invalid(
                qid,
                "subflow に call がありません",
                "the subflow has no call",
            ));
        };
        let plan_id = call.plan_id.trim();
        if frame.stack.iter().any(|p| p == plan_id) {
            let chain = format!("{} → {plan_id}", frame.stack.join(" → "));
            return Err(BlockError::new(
                ErrorCode::SubflowCycle,
                format!("ノード {qid}: サブフローの呼び出しが循環しています: {chain}"),
                format!("node {qid}: subflow calls form a cycle: {chain}"),
            ));
        }
        let Some((_, called)) = self.designs().get(plan_id) else {
            return Err(BlockError::new(
                ErrorCode::SubflowNotFound,
                format!("ノード {qid}: 呼び出すプラン {plan_id} が designs/ にありません"),
                format!("node {qid}: plan {plan_id} is not registered in designs/"),
            )
            .with_hint(
                "呼び出すプランを先に登録してください",
                "register the called plan first",
            ));
        };
        let inputs = self.resolve_inputs(&call.inputs, qid, scope)?;
        let mut vars: IndexMap<String, Value> = called
            .vars
            .iter()
            .map(|(k, v)| (k.clone(), Value::Json(v.clone())))
            .collect();
        vars.extend(inputs);
        let mut inner = Scope {
            outputs: HashMap::new(),
            shapes: HashMap::new(),
            vars,
            parent: None,
        };
        let mut prefix = frame.prefix.clone();
        prefix.push(node.id.clone());
        let mut stack = frame.stack.clone();
        stack.push(plan_id.to_string());
        let inner_frame = Frame {
            prefix,
            stack,
            top: None,
        };
        let inherited = called.policy.clone().unwrap_or_else(|| policy.clone());
        let result = self.run_graph(called, &inherited, &mut inner, &inner_frame);
        if let Some(f) = result.failures.first() {
            return Err(nested_failure(qid, f));
        }
        if result.cancelled {
            return Err(cancelled(qid));
        }
        Ok(Outputs(flatten(called, inner.outputs), BTreeMap::new()))
    }
}

/// Every alias a plan level published, in graph order (a later node's alias wins).
fn flatten(
    plan: &Plan,
    mut outputs: HashMap<String, IndexMap<String, Value>>,
) -> IndexMap<String, Value> {
    let mut out = IndexMap::new();
    for node in &plan.graph {
        if let Some(aliases) = outputs.remove(&node.id) {
            out.extend(aliases);
        }
    }
    out
}
