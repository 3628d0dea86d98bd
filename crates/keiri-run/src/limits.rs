//! The runtime's bounds on work (#37.4): a plan, often written by a model, cannot make a run
//! grow without limit. Each bound is checked before the work it bounds (the memory budget
//! while a node runs and when it ends) and ends the node with `LIMIT_EXCEEDED`, naming the
//! size, the limit and how to raise it.
//!
//! Three layers decide a run's bounds ([`Limits::for_plan`]): the defaults below, sized for a
//! desktop with 24 GB (a foreach iteration keeps its body's outputs for the loop's result, a
//! joined row of a typical journal is a few hundred bytes); the plan's `policy.limits`, which
//! may lower or raise them; and the ceiling from the user's settings (`run_limits`), which no
//! plan passes. A sample run of the planner has its own, smaller ceiling.

use keiri_plan::model::PolicyLimits;

use crate::block::{BlockError, ErrorCode};

const MIB: u64 = 1024 * 1024;

/// The bounds of one run ([`crate::RunOptions::limits`], held at
/// [`crate::RunOptions::ceiling`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Items one `foreach` may run its body for.
    pub foreach_items: usize,
    /// Iterations one `while` may run, whatever its `max_iterations` says.
    pub while_iterations: usize,
    /// Rows one `transforms.join` may produce.
    pub join_rows: u128,
    /// Bytes the process's resident memory may grow by from the run's start (the tables it
    /// keeps and the work of the node running). Measured for the whole process, so two runs at
    /// once in one server share it.
    pub memory_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            foreach_items: 100_000,
            while_iterations: 100_000,
            join_rows: 20_000_000,
            // A 5M-row journal's grouping peaks near 2.6 GB; a third of a 24 GB machine leaves
            // the window, the model and the OS theirs.
            memory_bytes: 8 * 1024 * MIB,
        }
    }
}

impl Limits {
    /// The highest bounds a plan may ask for when the user's settings name none.
    pub fn ceiling() -> Limits {
        Limits {
            foreach_items: 1_000_000,
            while_iterations: 1_000_000,
            join_rows: 200_000_000,
            memory_bytes: 16 * 1024 * MIB,
        }
    }

    /// No bound at all: the cap of a list of bounds nothing is above (the user's ceiling).
    pub fn unbounded() -> Limits {
        Limits {
            foreach_items: usize::MAX,
            while_iterations: usize::MAX,
            join_rows: u128::MAX,
            memory_bytes: u64::MAX,
        }
    }

    /// The planner's sample runs (verify-by-running): a model's plan on the user's sample
    /// files, inside a server that must stay up. These are their defaults and their ceiling.
    pub fn sample_run() -> Limits {
        Limits {
            foreach_items: 10_000,
            while_iterations: 10_000,
            join_rows: 5_000_000,
            memory_bytes: 2 * 1024 * MIB,
        }
    }

    /// The bounds of a run of a plan whose `policy.limits` is `plan`: each the plan's value,
    /// else the default, and never above the ceiling.
    pub fn for_plan(plan: Option<&PolicyLimits>, defaults: Limits, ceiling: Limits) -> Limits {
        let plan = plan.copied().unwrap_or_default();
        let size = |v: Option<u64>| v.map(|v| usize::try_from(v).unwrap_or(usize::MAX));
        Limits {
            foreach_items: size(plan.foreach_items)
                .unwrap_or(defaults.foreach_items)
                .min(ceiling.foreach_items),
            while_iterations: size(plan.while_iterations)
                .unwrap_or(defaults.while_iterations)
                .min(ceiling.while_iterations),
            join_rows: plan
                .join_rows
                .map_or(defaults.join_rows, u128::from)
                .min(ceiling.join_rows),
            memory_bytes: plan
                .memory_mb
                .map_or(defaults.memory_bytes, |mb| mb.saturating_mul(MIB))
                .min(ceiling.memory_bytes),
        }
    }
}

/// The process's resident memory in bytes, where the OS tells it.
pub(crate) fn resident_bytes() -> Option<u64> {
    memory_stats::memory_stats().map(|m| m.physical_mem as u64)
}

/// A `LIMIT_EXCEEDED` error with its message and what to do.
/// A `LIMIT_EXCEEDED` error with its message and what to do: `hint`, then how to raise the
/// bound (`policy.limits.<bound>`, up to the settings' ceiling).
pub(crate) fn exceeded(message: (String, String), hint: (&str, &str), bound: &str) -> BlockError {
    BlockError::new(ErrorCode::LimitExceeded, message.0, message.1).with_hint(
        format!(
            "{}。本当に必要なら、プランの policy.limits.{bound} で上限を上げられます（設定の run_limits.{bound} まで）",
            hint.0
        ),
        format!(
            "{}; if the work really needs it, raise policy.limits.{bound} in the plan (up to run_limits.{bound} in the settings)",
            hint.1
        ),
    )
}

/// A `foreach` over more items than [`Limits::foreach_items`] is refused before its
/// first iteration (and before a table is turned into items).
pub(crate) fn check_foreach(qid: &str, items: usize, max: usize) -> Result<(), BlockError> {
    if items <= max {
        return Ok(());
    }
    Err(exceeded(
        (
            format!("ノード {qid}: foreach の対象が {items} 件あり、上限の {max} 件を超えています"),
            format!("node {qid}: foreach over {items} items is past the limit of {max}"),
        ),
        (
            "行ごとの処理は foreach ではなく表のまま変換ブロック（transforms.*）で行うか、対象を分けてください",
            "work on the rows as a table with the transforms.* blocks instead of one iteration per row, or split the list",
        ),
        "foreach_items",
    ))
}

/// A `while` whose condition still holds after [`Limits::while_iterations`]
/// iterations stops there, whatever its `max_iterations`.
pub(crate) fn check_while(qid: &str, done: usize, max: usize) -> Result<(), BlockError> {
    if done < max {
        return Ok(());
    }
    Err(exceeded(
        (
            format!("ノード {qid}: while が {max} 回を超えて続こうとしました（上限 {max} 回）"),
            format!("node {qid}: the while loop would run past {max} iterations (the limit)"),
        ),
        (
            "終了条件が満たされるか確認してください（max_iterations をこれより大きくしても上限は変わりません）",
            "check that the condition ends the loop (a larger max_iterations does not raise this limit)",
        ),
        "while_iterations",
    ))
}

/// A node during which the run's memory passed [`Limits::memory_bytes`] of growth since the
/// run started (`grown` bytes) ends with `LIMIT_EXCEEDED`; its outputs are dropped.
pub(crate) fn check_memory(qid: &str, grown: u64, max: u64) -> Result<(), BlockError> {
    if grown <= max {
        return Ok(());
    }
    let (grown, max) = (grown / MIB, max / MIB);
    Err(exceeded(
        (
            format!(
                "ノード {qid}: 実行開始からメモリが {grown} MB 増え、上限の {max} MB を超えたため止めました"
            ),
            format!(
                "node {qid}: stopped after the run's memory grew by {grown} MB since it started, past the limit of {max} MB"
            ),
        ),
        (
            "先に行を絞り込むか（transforms.filter_rows、transforms.select_columns）、入力を期間などで分けてください",
            "narrow the rows or columns first (transforms.filter_rows, transforms.select_columns), or split the input by period",
        ),
        "memory_mb",
    ))
}
