//! Calling a block: on its own thread, with the run's context, returning early on timeout,
//! cancellation or past the memory budget, and recording what the block reports while it runs
//! (model calls, redirects, warnings) as it happens, and how far a long block has got.
//!
//! The memory budget ([`crate::limits::Limits::memory_bytes`]) is how much the process's
//! resident memory grows from the **run's** start, so the tables a run keeps from node to node
//! add up against one budget (a plan of twenty nodes each just under it cannot take twenty
//! times the budget). It is read every 100 ms while a block runs (a one-line read of
//! `/proc/self/statm` on Linux), and once more when it returns, so a node that built an
//! oversized table fails even when it was quicker than the poll. Past it the node's token is
//! cancelled, so the block's loops, Polars queries and workbook patches stop at their next
//! check. The measure is the whole process: two runs at once in one server share it, and
//! memory the allocator keeps after a node freed it still counts.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::projection::Used;
use super::{Runner, cancelled};
use crate::block::{
    BlockContext, BlockError, BlockFn, CallSink, ErrorCode, Inputs, Note, Outputs, Progress,
};
use crate::limits;
use crate::records::Event;

impl Runner<'_> {
    /// Calls a block on its own thread, returning early on timeout or cancellation.
    pub(super) fn invoke(
        &self,
        f: BlockFn,
        qid: &str,
        inputs: Inputs,
        out_dir: PathBuf,
        timeout_ms: Option<u64>,
        used: Used,
    ) -> Result<Outputs, BlockError> {
        std::fs::create_dir_all(&out_dir).map_err(|e| {
            BlockError::new(
                ErrorCode::BlockFailed,
                format!("ノード {qid}: 出力フォルダを作れません: {e}"),
                format!("node {qid}: cannot create its output folder: {e}"),
            )
        })?;
        let token = self.options.cancel.child_token();
        let (tx, rx) = mpsc::channel();
        let thread_token = token.clone();
        let node_id = qid.to_string();
        let base_dir = self.options.base_dir.clone();
        let paths = self.options.paths.clone();
        let write = self.options.write;
        let answer = self.options.answers.get(qid).cloned();
        let answered = answer.is_some();
        let allow_hosts = self.options.allow_hosts.clone();
        let limits = self.limits;
        let llm = self.options.llm.clone();
        let lang = self.options.lang;
        let taken = used.outputs.clone();
        let (calls, call_rx) = CallSink::channel();
        let progress = calls.clone();
        // The run's clock: the start time the caller passed in, advanced by real elapsed time,
        // so tests stay deterministic and a long run still records when each block ran.
        let now = self.options.now
            + chrono::Duration::from_std(self.started.elapsed()).unwrap_or_default();
        let spawned = std::thread::Builder::new()
            .name(format!("block {qid}"))
            .spawn(move || {
                let ctx = BlockContext {
                    node_id: &node_id,
                    base_dir: &base_dir,
                    paths: &paths,
                    out_dir: &out_dir,
                    cancel: &thread_token,
                    write,
                    answer: answer.as_ref(),
                    allow_hosts: &allow_hosts,
                    limits: &limits,
                    now,
                    llm: llm.as_ref(),
                    calls: &calls,
                    lang,
                    columns_used: used.columns.as_deref(),
                    outputs_taken: used.outputs.as_deref(),
                    pieces: used.pieces.as_deref(),
                };
                let _ = tx.send(f(&ctx, &inputs));
            });
        if let Err(e) = spawned {
            return Err(BlockError::new(
                ErrorCode::BlockFailed,
                format!("ノード {qid}: スレッドを開始できません: {e}"),
                format!("node {qid}: cannot start a thread: {e}"),
            ));
        }
        let started = Instant::now();
        let deadline = timeout_ms.map(Duration::from_millis);
        let memory_check = || match (self.memory_at_start, limits::resident_bytes()) {
            (Some(start), Some(now)) => {
                limits::check_memory(qid, now.saturating_sub(start), limits.memory_bytes)
            }
            _ => Ok(()),
        };
        // The block's model calls, recorded as they happen (a long extraction shows progress).
        let record_calls = || {
            while let Ok(note) = call_rx.try_recv() {
                match note {
                    Note::Llm(call) => self.emit(Event::LlmCall {
                        node: qid.to_string(),
                        call,
                    }),
                    Note::Redirect(redirect) => self.emit(Event::Redirect {
                        node: qid.to_string(),
                        redirect,
                    }),
                    Note::Warning(warning) => self.warn(qid, warning),
                }
            }
        };
        // The block's latest progress, once it has run `progress_every`, then that often.
        let mut progress_shown: (Instant, Option<Progress>) = (started, None);
        let mut show_progress = || {
            let latest = progress.latest_progress();
            if latest.is_some()
                && latest != progress_shown.1
                && progress_shown.0.elapsed() >= self.options.progress_every
                && let Some(latest) = latest
            {
                progress_shown = (Instant::now(), Some(latest));
                self.emit(Event::NodeProgress {
                    node: qid.to_string(),
                    done: latest.done,
                    total: latest.total,
                    unit: latest.unit,
                });
            }
        };
        let mut poll: u64 = 0;
        loop {
            poll += 1;
            let received = rx.recv_timeout(Duration::from_millis(10));
            record_calls();
            if received.is_err() {
                show_progress();
            }
            match received {
                Ok(result) => {
                    let result = result
                        .and_then(|outputs| built_whole(qid, taken.as_deref(), outputs))
                        .and_then(|outputs| memory_check().map(|()| outputs));
                    if answered && result.is_ok() {
                        self.record_answer(qid, now);
                    }
                    return result.map_err(|mut e| {
                        if !e.message_en.contains(qid) {
                            e.message_ja = format!("ノード {qid}: {}", e.message_ja);
                            e.message_en = format!("node {qid}: {}", e.message_en);
                        }
                        e
                    });
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(BlockError::new(
                        ErrorCode::BlockFailed,
                        format!("ノード {qid}: ブロックが異常終了しました"),
                        format!("node {qid}: the block crashed"),
                    ));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if self.options.cancel.is_cancelled() {
                token.cancel();
                return Err(cancelled(qid));
            }
            if poll.is_multiple_of(10)
                && let Err(e) = memory_check()
            {
                token.cancel();
                return Err(e);
            }
            if let Some(limit) = deadline
                && started.elapsed() >= limit
            {
                token.cancel();
                return Err(BlockError::new(
                    ErrorCode::Timeout,
                    format!(
                        "ノード {qid}: {} ms 以内に終わりませんでした",
                        limit.as_millis()
                    ),
                    format!("node {qid}: did not finish within {} ms", limit.as_millis()),
                )
                .with_hint(
                    "policy.timeout_ms を増やすか、入力を小さくしてください",
                    "raise policy.timeout_ms or make the input smaller",
                ));
            }
        }
    }
}

/// A block may build in part only an output the plan does not take: one built in part that a
/// later node reads would give it a wrong answer, so that is the block's bug, and fails it.
fn built_whole(
    qid: &str,
    taken: Option<&[String]>,
    outputs: Outputs,
) -> Result<Outputs, BlockError> {
    let Some(key) = outputs
        .in_part()
        .keys()
        .find(|k| taken.is_none_or(|t| t.contains(k)))
    else {
        return Ok(outputs);
    };
    Err(BlockError::new(
        ErrorCode::BlockFailed,
        format!("ノード {qid}: 出力 {key} を一部しか作りませんでしたが、計画はこの出力を使います"),
        format!("node {qid}: built its output {key} only in part, but the plan takes it"),
    ))
}
