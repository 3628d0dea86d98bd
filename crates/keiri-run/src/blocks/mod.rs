//! The builtin blocks: `blocks/<category>/<block>.rs`, one file per block, where the category
//! is the block's directory under `block_specs/` and the file name is the block id with dots
//! turned into underscores (`csv.read` → `input/csv_read.rs`; a leading category is dropped:
//! `matching.fuzzy_match` → `matching/fuzzy_match.rs`). Each file registers its block with
//! `builtin!` (in `lib.rs`) under the block's function, so adding a block touches that one
//! file, its `mod` line in `<category>.rs` and its spec. `<category>.rs` holds what several
//! blocks of the category share; what blocks of several categories share is in [`kit`].

use crate::block::{BlockContext, BlockError, ErrorCode};

mod ai;
mod control;
mod input;
mod integration;
pub(crate) mod kit;
mod matching;
pub mod output;
pub(crate) mod transforms;
mod ui;

pub use kit::outputs::DEFAULT_OUT_DIR;

/// `INPUT_INVALID` with a message in both languages.
pub(crate) fn invalid(ja: impl Into<String>, en: impl Into<String>) -> BlockError {
    BlockError::new(ErrorCode::InputInvalid, ja, en)
}

/// `CANCELLED` once the run is cancelled or the node timed out: long loops call it.
pub(crate) fn cancelled(ctx: &BlockContext<'_>) -> Result<(), BlockError> {
    if ctx.cancel.is_cancelled() {
        return Err(BlockError::new(
            ErrorCode::Cancelled,
            "実行が取り消されました",
            "the run was cancelled",
        ));
    }
    Ok(())
}

/// The cancellation check of a parallel loop's items: [`StopCheck::now`] reads the token (which
/// takes a lock) once every [`StopCheck::EVERY`] items, and once one item has seen the run
/// cancelled every later item sees it without the lock. A check of the token itself on every
/// item of a million-item loop on every core was 2 % of a reconciliation's samples.
pub(crate) struct StopCheck<'a> {
    token: &'a tokio_util::sync::CancellationToken,
    seen: std::sync::atomic::AtomicBool,
}

impl<'a> StopCheck<'a> {
    /// Items between two reads of the token: a few hundred microseconds of the loops that
    /// use it.
    pub(crate) const EVERY: usize = 1024;

    /// The check of the run's (the node's) token, `ctx.cancel`.
    pub(crate) fn new(token: &'a tokio_util::sync::CancellationToken) -> StopCheck<'a> {
        StopCheck {
            token,
            seen: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Whether the loop should stop at its item `i` (the run was cancelled).
    pub(crate) fn now(&self, i: usize) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        if self.seen.load(Relaxed) {
            return true;
        }
        if i.is_multiple_of(Self::EVERY) && self.token.is_cancelled() {
            self.seen.store(true, Relaxed);
            return true;
        }
        false
    }
}

/// Runs a lazy query so that a cancelled run, a timed-out node or a node past its memory
/// budget stops it: Polars checks the token between the steps of a query (before a join,
/// after each sort, grouping or projection) and the block stops waiting at once. A single
/// step (one join's kernel) runs to its end, which is why a join is bounded by counting its
/// rows before it is built ([`crate::limits::Limits::join_rows`]).
pub(crate) fn collect(
    query: polars::prelude::LazyFrame,
    cancel: &tokio_util::sync::CancellationToken,
) -> polars::prelude::PolarsResult<polars::prelude::DataFrame> {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let interrupted = || polars::prelude::polars_err!(ComputeError: "the run was cancelled");
    if cancel.is_cancelled() {
        return Err(interrupted());
    }
    let running = query.collect_concurrently()?;
    let done = Arc::new(AtomicBool::new(false));
    {
        // The watcher holds a handle of the query, whose drop would cancel it: it lets go only
        // once the query is done or cancelled.
        let (running, done, cancel) = (running.clone(), done.clone(), cancel.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                if cancel.is_cancelled() {
                    running.cancel();
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        });
    }
    let result = running.fetch_blocking();
    done.store(true, Ordering::Relaxed);
    match result {
        Err(_) if cancel.is_cancelled() => Err(interrupted()),
        result => result,
    }
}

#[cfg(test)]
mod tests {
    use polars::prelude::*;
    use tokio_util::sync::CancellationToken;

    /// A query of many steps (sort, shift the values, sort the other way, …) over a million
    /// rows: about a second of work, with a check between each two steps. (Twenty steps, not
    /// more: what Polars does before the first step grows with their number, and no token
    /// shortens it; in a debug build, where Polars is unoptimised, 200 steps took nine seconds
    /// to stop when cancelled after a tenth of a second.)
    fn long_query() -> LazyFrame {
        let n: i64 = 1_000_000;
        let values: Vec<i64> = (0..n).map(|i| (i * 7919) % n).collect();
        let mut query = DataFrame::new_infer_height(vec![Column::new("a".into(), values)])
            .unwrap()
            .lazy();
        for step in 0..20 {
            query = query
                .with_column((col("a") * lit(31) + lit(step)) % lit(n))
                .sort(
                    ["a"],
                    SortMultipleOptions::default().with_order_descending(step % 2 == 0),
                );
        }
        query
    }

    /// A loop's check reads the token at every 1024th item, and an item after one that saw
    /// it cancelled stops without reading it.
    #[test]
    fn a_loop_stops_at_the_next_read_of_the_token_and_then_at_every_item() {
        let cancel = CancellationToken::new();
        let stop = super::StopCheck::new(&cancel);
        assert!((0..3000).all(|i| !stop.now(i)));
        cancel.cancel();
        assert!(!stop.now(1025));
        assert!(stop.now(2048));
        assert!(stop.now(2049) && stop.now(1));
    }

    #[test]
    fn a_query_stops_between_its_steps_once_the_token_is_cancelled() {
        let cancel = CancellationToken::new();
        let stop = cancel.clone();
        let stopper = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            stop.cancel();
        });
        let result = super::collect(long_query(), &cancel);
        stopper.join().unwrap();
        let err = result.expect_err("the query must stop, not finish");
        assert!(err.to_string().contains("the run was cancelled"), "{err}");
        // A token cancelled before the start runs nothing.
        let err = super::collect(long_query(), &cancel).expect_err("cancelled before");
        assert!(err.to_string().contains("the run was cancelled"), "{err}");
    }

    #[test]
    fn an_uncancelled_query_gives_what_collect_gives() {
        let query = || {
            df!("部門" => ["営業", "経理", "営業"], "金額" => [100i64, 200, 300])
                .unwrap()
                .lazy()
                .group_by_stable([col("部門")])
                .agg([col("金額").sum()])
        };
        let cancel = CancellationToken::new();
        let ours = super::collect(query(), &cancel).unwrap();
        assert_eq!(ours, query().collect().unwrap());
        assert_eq!(ours.height(), 2);
    }
}
