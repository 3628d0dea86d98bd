//! `integration/*`: the blocks that reach outside the run — HTTP calls ([`http`]),
//! notifications ([`notify`]), evidence archives ([`archive`]) and schedule triggers
//! ([`schedule`]).
//!
//! What they must not do:
//! * reach a host the user has not allowed. The allowlist is the run's
//!   ([`BlockContext::allow_hosts`], from the user's settings), never the plan's, so a plan —
//!   written by a person or a model — cannot send data anywhere the user did not approve;
//!   redirects to another host are refused too. A refusal is `HOST_NOT_ALLOWED`.
//! * write outside the node's folder without `--write` (the output blocks' rule,
//!   [`crate::blocks::kit::outputs::write_path`]), or write anything non-atomically.
//! * read the clock: times come from [`BlockContext::now`].
//!
//! Dependencies and why: `reqwest`'s blocking client (the one keiri-search already builds,
//! same version and features), because blocks are synchronous functions on their own
//! threads; `zip` (the workspace's, pure-Rust deflate) for evidence archives.

mod evidence_archive;
mod http_request;
mod notify_send;
mod schedule_trigger;

use super::cancelled;
