//! Saving each finished top-level node's outputs off the run's critical path.
//!
//! A node's outputs go to a writer thread through a queue of one, and the nodes after it
//! start at once; the writer saves them ([`RunDir::save_outputs`](crate::RunDir): staging,
//! then one rename) and only then records the node as finished in `state.json`. So a run
//! killed at any moment resumes as before: a node whose outputs were not saved yet is not
//! finished there, and runs again. The run ends (its final state, `run_finish`) only after
//! the writer has saved everything queued. A full queue makes the engine wait: at most one
//! node's outputs are held for saving beyond what the plan still needs.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;
use std::sync::mpsc::{SendError, SyncSender, sync_channel};

use keiri_plan::model::{Node, NodeKind, Plan};

use crate::block::{BlockError, ErrorCode, Outputs};
use crate::records::{Kept, RunDir, ToSave, table_digest};
use crate::value::Value;

/// A finished node's outputs to save, their secrets redacted and their JSON encoded where
/// the node finished ([`ToSave`]): the writer never holds a second copy of a JSON tree.
pub(super) struct Job {
    pub node: String,
    pub outputs: ToSave,
    /// Whether the node can run again from what it read ([`recomputable`]).
    pub recomputable: bool,
}

impl Job {
    pub fn new(node: &Node, outputs: ToSave) -> Job {
        Job {
            node: node.id.clone(),
            outputs,
            recomputable: recomputable(node),
        }
    }
}

/// The writer's queue while a run is going; empty before and after (then saving is inline).
#[derive(Default)]
pub(super) struct Recorder {
    queue: Mutex<Option<SyncSender<Job>>>,
}

impl Recorder {
    fn queue(&self) -> std::sync::MutexGuard<'_, Option<SyncSender<Job>>> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hands `job` to the writer; gives it back when there is none (or it is gone) for the
    /// caller to save itself.
    pub fn send(&self, job: Job) -> Option<Job> {
        let queue = self.queue().clone();
        match queue {
            Some(queue) => match queue.send(job) {
                Ok(()) => None,
                Err(SendError(job)) => Some(job),
            },
            None => Some(job),
        }
    }
}

/// Whether a node can run again from what it read, giving the same rows: reading a CSV or a
/// bank statement, and the table transforms. Its big tables are then kept in part
/// ([`RunDir::save_outputs`]); a resume that needs them reads the file again, and a file
/// that changed stops it (`DATA_CHANGED`). Matching, checks, people's answers, model calls,
/// hosts and written files are kept whole.
fn recomputable(node: &Node) -> bool {
    node.kind() == NodeKind::Block
        && node.block.as_deref().is_some_and(|b| {
            matches!(b, "csv.read" | "bank.read_statement") || b.starts_with("transforms.")
        })
}

/// Runs `work` with a writer thread (`keiri-recorder`, so a profile names its work) that gives
/// what [`Recorder::send`] queues to `save`; returns once the writer has saved all of it,
/// with whether the writer failed (panicked). When no thread can be started, nothing is
/// queued and each node's outputs are saved where it finished, as before the writer existed.
pub(super) fn with_writer<R>(
    recorder: &Recorder,
    save: impl Fn(Job) + Sync,
    work: impl FnOnce() -> R,
) -> (R, bool) {
    std::thread::scope(|s| {
        let (queue, jobs) = sync_channel::<Job>(1);
        let save = &save;
        let spawned = std::thread::Builder::new()
            .name("keiri-recorder".into())
            .spawn_scoped(s, move || {
                for job in jobs {
                    save(job);
                }
            });
        let Ok(writer) = spawned else {
            return (work(), false);
        };
        *recorder.queue() = Some(queue);
        let result = work();
        // Dropping the last sender ends the writer's loop once the queue is empty.
        recorder.queue().take();
        let failed = writer.join().is_err();
        (result, failed)
    })
}

/// A node an earlier attempt kept in part ran again for a resume: each such table must have
/// the rows it had then (count and digest), else the resumed run would mix the rows of two
/// attempts: [`ErrorCode::DataChanged`].
pub(super) fn same_rows(
    qid: &str,
    kept: &BTreeMap<String, Kept>,
    outputs: Outputs,
) -> Result<Outputs, BlockError> {
    for (key, was) in kept.iter().filter(|(_, k)| k.needed()) {
        let now = match outputs.get(key) {
            Some(Value::Table(df)) => Some((df.height(), table_digest(df))),
            _ => None,
        };
        // A table a pass handed on has no digest (see `Kept`): its row count is compared.
        if now.as_ref().is_some_and(|(rows, digest)| {
            *rows == was.rows && (was.digest.is_empty() || *digest == was.digest)
        }) {
            continue;
        }
        let rows = now.map_or(0, |(rows, _)| rows);
        return Err(BlockError::new(
            ErrorCode::DataChanged,
            format!(
                "ノード {qid} を再開のためにもう一度実行したところ、{key} が最初の実行と違う行になりました（{} 行 → {rows} 行）。読んだファイルか変数が変わっています。2 回の実行の行が混ざるため止めました",
                was.rows
            ),
            format!(
                "node {qid} ran again for the resume and its {key} has other rows than in the first attempt ({} rows, now {rows}): a file it read or a var changed. Stopped rather than mix the rows of two attempts",
                was.rows
            ),
        )
        .with_hint(
            "再開ではなく、新しく実行してください",
            "start a new run instead of resuming this one",
        ));
    }
    Ok(outputs)
}

/// The nodes a resume need not run again: finished in an earlier attempt with their tables
/// kept in part, and needed by no node that still runs (one that never finished, or one
/// whose outputs are not on disk, or another such node that is needed). They count as
/// finished; their rows are not read again, so a file they read may have changed since.
pub(super) fn not_needed(
    plan: &Plan,
    top: &HashMap<String, Vec<String>>,
    dir: &RunDir,
) -> HashSet<String> {
    let mut in_part: HashSet<&str> = HashSet::new();
    let mut runs: HashSet<&str> = HashSet::new();
    for node in &plan.graph {
        if !top.contains_key(&node.id) || !dir.has_outputs(&node.id) {
            runs.insert(&node.id);
        } else if dir
            .kept_in_part(&node.id)
            .map_or(true, |k| k.values().any(Kept::needed))
        {
            in_part.insert(&node.id);
        }
    }
    let needs: Vec<(&str, Vec<String>)> = plan
        .graph
        .iter()
        .map(|n| (n.id.as_str(), keiri_plan::dry_run::dependencies(n, plan)))
        .collect();
    // Needed by a node that runs: runs too, and so on up the graph.
    loop {
        let wanted: Vec<&str> = needs
            .iter()
            .filter(|(node, _)| runs.contains(node))
            .flat_map(|(_, deps)| deps.iter())
            .filter_map(|dep| in_part.get(dep.as_str()).copied())
            .collect();
        if wanted.is_empty() {
            break;
        }
        for node in wanted {
            in_part.remove(node);
            runs.insert(node);
        }
    }
    in_part.into_iter().map(str::to_string).collect()
}
