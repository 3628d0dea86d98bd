//! The runtime's bounds on work (#37.4): a plan, often written by a model, cannot make a run
//! grow without limit. Each bound is checked before the work it bounds and ends the node with
//! `LIMIT_EXCEEDED`, naming the size, the limit and what to change in the plan.
//!
//! The limits are sized for a desktop with 24 GB: a foreach iteration keeps its body's outputs
//! for the loop's result, and a joined row of a typical journal is a few hundred bytes.

use crate::block::{BlockError, ErrorCode};

/// The bounds of one run ([`crate::RunOptions::limits`]); [`Limits::default`] is what every
/// surface uses today.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Items one `foreach` may run its body for.
    pub foreach_items: usize,
    /// Iterations one `while` may run, whatever its `max_iterations` says.
    pub while_iterations: usize,
    /// Rows one `transforms.join` may produce.
    pub join_rows: u128,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            foreach_items: 100_000,
            while_iterations: 100_000,
            join_rows: 20_000_000,
        }
    }
}

/// A `LIMIT_EXCEEDED` error with its message and what to do.
pub(crate) fn exceeded(message: (String, String), hint: (&str, &str)) -> BlockError {
    BlockError::new(ErrorCode::LimitExceeded, message.0, message.1).with_hint(hint.0, hint.1)
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
    ))
}
