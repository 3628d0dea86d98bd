//! How a node's policy applies: the policy it runs under (its own, else its plan's) and which
//! failures a retry may help.

use crate::block::ErrorCode;
use keiri_plan::model::Policy;

/// A node's policy, else its plan's, field by field.
pub(super) fn merge(node: Option<&Policy>, plan: &Policy) -> Policy {
    let node = node.cloned().unwrap_or_default();
    Policy {
        on_error: node.on_error.or_else(|| plan.on_error.clone()),
        retries: node.retries.or(plan.retries),
        timeout_ms: node.timeout_ms.or(plan.timeout_ms),
        concurrency: node.concurrency.or(plan.concurrency),
        // The run's bounds are the plan's alone (`limits::for_plan`), never a node's.
        limits: None,
        extra: node.extra,
    }
}

/// Whether another attempt may succeed: not for a cancellation, a defect of the plan, a
/// path, host or secret the run may not use, a broken audit log, a bound of the runtime or data that changed under a resume.
pub(super) fn retryable(code: ErrorCode) -> bool {
    !matches!(
        code,
        ErrorCode::Cancelled
            | ErrorCode::InputInvalid
            | ErrorCode::ColumnNotFound
            | ErrorCode::UnknownBlock
            | ErrorCode::RefUnresolved
            | ErrorCode::EnvNotAllowed
            | ErrorCode::SubflowCycle
            | ErrorCode::SubflowNotFound
            | ErrorCode::HostNotAllowed
            | ErrorCode::PathDenied
            | ErrorCode::AuditChainBroken
            | ErrorCode::LimitExceeded
            | ErrorCode::DataChanged
    )
}
