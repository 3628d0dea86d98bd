//! A node's failure as the run records it (`state.json`, `RunOutcome::failures`), with the
//! block's hint, and a failure inside a loop body or subflow as the error of its parent node.

use crate::block::{BlockError, ErrorCode};
use crate::state::NodeFailure;

pub(super) fn failure(qid: &str, error: &BlockError) -> NodeFailure {
    NodeFailure {
        node: qid.to_string(),
        code: error.code.as_str().to_string(),
        message_ja: error.message_ja.clone(),
        message_en: error.message_en.clone(),
        hint_ja: error.hint.as_ref().map(|h| h.0.clone()),
        hint_en: error.hint.as_ref().map(|h| h.1.clone()),
        question: error.question.as_deref().cloned(),
    }
}

/// A failure that says the plan itself is wrong (an input outside its spec, a column the rows
/// do not have, a reference to nothing, a path or variable it may not use): `on_error:
/// continue` goes on past it, but the run cannot count as finished, since every result after
/// it answers a question the plan did not mean to ask. A resume whose data changed under it
/// (`DATA_CHANGED`) is counted with them: its results would mix two attempts' rows.
pub(super) fn is_plan_defect(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::InputInvalid
            | ErrorCode::ColumnNotFound
            | ErrorCode::UnknownBlock
            | ErrorCode::RefUnresolved
            | ErrorCode::EnvNotAllowed
            | ErrorCode::ExprInvalid
            | ErrorCode::SubflowNotFound
            | ErrorCode::SubflowCycle
            | ErrorCode::PathDenied
            | ErrorCode::HostNotAllowed
            | ErrorCode::DataChanged
    )
}

/// A failure inside a loop body or subflow, reported at the loop/subflow node with its code.
pub(super) fn nested_failure(qid: &str, inner: &NodeFailure) -> BlockError {
    let code = [
        ErrorCode::BlockFailed,
        ErrorCode::InputInvalid,
        ErrorCode::ColumnNotFound,
        ErrorCode::FileNotFound,
        ErrorCode::Cancelled,
        ErrorCode::Timeout,
        ErrorCode::UnknownBlock,
        ErrorCode::RefUnresolved,
        ErrorCode::EnvNotAllowed,
        ErrorCode::ExprInvalid,
        ErrorCode::SubflowNotFound,
        ErrorCode::SubflowCycle,
        ErrorCode::HostNotAllowed,
        ErrorCode::PathDenied,
    ]
    .into_iter()
    .find(|c| c.as_str() == inner.code)
    .unwrap_or(ErrorCode::BlockFailed);
    let error = BlockError::new(
        code,
        format!(
            "ノード {qid}: {} で失敗しました: {}",
            inner.node, inner.message_ja
        ),
        format!("node {qid}: {} failed: {}", inner.node, inner.message_en),
    );
    // The inner block's hint stays with the failure reported at the loop or subflow.
    match (&inner.hint_ja, &inner.hint_en) {
        (Some(ja), Some(en)) => error.with_hint(ja, en),
        _ => error,
    }
}

/// The error of a node stopped because the run was cancelled.
pub(super) fn cancelled(qid: &str) -> BlockError {
    BlockError::new(
        ErrorCode::Cancelled,
        format!("ノード {qid}: 実行は取り消されました"),
        format!("node {qid}: the run was cancelled"),
    )
}

/// `INPUT_INVALID` for a node, with its id in front of the message.
pub(super) fn invalid(qid: &str, ja: &str, en: &str) -> BlockError {
    BlockError::new(
        ErrorCode::InputInvalid,
        format!("ノード {qid}: {ja}"),
        format!("node {qid}: {en}"),
    )
}
