//! The plan runtime: executes a validated plan, node by node, with the builtin block
//! implementations that every `entrypoint: builtin:<id>` in `block_specs/` names.
//!
//! * [`value`]: what flows between nodes — a [`value::Value`] is either JSON or a table
//!   (a Polars `DataFrame`), converted on demand so a 1,000,000-row table never becomes
//!   JSON between two table blocks.
//! * [`block`]: the block interface ([`block::BlockFn`]), its inputs/outputs, the
//!   [`block::Registry`] of builtins and the typed [`block::BlockError`].
//! * [`blocks`]: the builtin implementations, one file per block
//!   (`blocks/<category>/<block>.rs`), each registering itself with `builtin!`.
//! * [`engine`]: runs a plan (levels, policy, conditions, loops, subflows, cancellation);
//!   [`records`] and [`state`]: what a run leaves under `runs/<plan_id>/<run_id>/` and how
//!   it is resumed. See the crate README for the layout and the error codes.
//! * [`verify()`]: a sample run of a drafted plan (the planner's verify-by-running), within a
//!   budget and bounds the plan cannot raise, keeping the failures and the column names of
//!   the tables the nodes produced.
//!
//! This crate must not know about transport (JSON DTOs, serving HTTP, Tauri) and must never
//! modify a run's inputs: everything a run writes goes under its run directory unless the
//! user passed `--write`. The only network it touches is what `http.request` and
//! `notify.send` webhooks call, and only on hosts the user allowlisted
//! ([`block::BlockContext::allow_hosts`]), and the model the caller configured for the `ai.*`
//! blocks ([`engine::RunOptions::llm`], through keiri-llm only).
//!
//! Why Polars: it is the table engine the field uses for this job (columnar, lazy,
//! multi-threaded) and what beats keiri_agent v0's pandas; only the features the blocks
//! use are enabled to keep the build small.

/// Registers a builtin block: `builtin!("csv.read", csv_read);`, written under the block's
/// function in the block's own file (`blocks/<category>/<block>.rs`), so the registry needs no
/// list of blocks. [`block::Registry::builtins`] collects them. Crate-internal (textual scope:
/// defined before `mod blocks`).
macro_rules! builtin {
    ($id:literal, $block:path) => {
        inventory::submit! {
            $crate::block::Builtin { id: $id, block: $block }
        }
    };
}

pub mod allow_hosts;
pub mod block;
pub mod blocks;
pub mod codes;
pub mod engine;
pub mod jp;
pub mod limits;
pub mod paths;
pub mod records;
pub mod secrets;
pub mod state;
pub mod value;
pub mod verify;

pub use engine::{EventSink, RunOptions, RunOutcome, plan_sha256, run};
pub use records::{Event, RunDir, RunError};
pub use state::{NodeFailure, NodeStatus, NodeWarning, RunState, RunStatus};
pub use verify::{Verification, verify};
