//! A sample run: the planner's verifier runs a plan a model drafted on the user's sample files,
//! inside a process that must stay up, within a time budget, and keeps what the repair loop
//! may be told of each failure — the node, the code and the column names of the tables the
//! nodes produced, never a cell of the data.
//!
//! What the plan may read, write and reach is the caller's (the options' path policy, runs
//! folder and env allow-list); the bounds and the budget are set here, and the plan's own
//! `policy.limits` cannot raise them.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use keiri_plan::{Catalog, Plan};
use serde_json::Value as Json;

use crate::block::Registry;
use crate::limits::Limits;
use crate::{Event, NodeFailure, RunError, RunOptions, RunStatus};

/// What a sample run leaves for the repair loop.
#[derive(Debug)]
pub struct Verification {
    /// How the run ended: `Cancelled` when the budget (or the caller) stopped it.
    pub status: RunStatus,
    /// The failures of the run (top-level node ids, codes; their messages may quote data).
    pub failures: Vec<NodeFailure>,
    /// The columns of every table a finished node produced, by `node.key` (the output's key,
    /// not its alias).
    pub columns: HashMap<String, Vec<String>>,
}

/// Runs `plan` (whose text is `text`) as a sample run: with the sample run's bounds as both
/// defaults and ceiling ([`Limits::sample_run`]), stopped when `options.cancel` is or after
/// `budget`, whichever comes first. A run stopped by the budget ends `Cancelled` with no
/// failure to report: a plan is not sent back for being slow on large files.
pub fn verify(
    plan: &Plan,
    text: &str,
    catalog: &Catalog,
    registry: &Registry,
    mut options: RunOptions,
    budget: Duration,
) -> Result<Verification, RunError> {
    options.limits = Limits::sample_run();
    options.ceiling = Limits::sample_run();
    // Every column read, so a failure's report lists the file's columns for the repair.
    options.only_what_is_used = false;
    // The budget: a timer that ends early when the run does (its sender is dropped).
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let stop = options.cancel.clone();
    let timer = std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(budget) {
            stop.cancel();
        }
    });
    let columns: Mutex<HashMap<String, Vec<String>>> = Mutex::new(HashMap::new());
    let sink = |event: &Event| {
        if let Event::NodeFinish { node, outputs, .. } = event {
            let mut columns = columns.lock().unwrap_or_else(PoisonError::into_inner);
            for (key, summary) in outputs {
                if let Some(cols) = summary.get("columns").and_then(Json::as_array) {
                    let names = cols.iter().filter_map(Json::as_str).map(str::to_string);
                    columns.insert(format!("{node}.{key}"), names.collect());
                }
            }
        }
    };
    let outcome = crate::run(plan, text, catalog, registry, &options, &sink);
    drop(done);
    let _ = timer.join();
    let outcome = outcome?;
    Ok(Verification {
        status: outcome.status,
        failures: outcome.failures,
        columns: columns.into_inner().unwrap_or_else(PoisonError::into_inner),
    })
}
