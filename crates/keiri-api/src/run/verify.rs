//! The planner's verifier: a generated plan run on the workspace's files in a throwaway run
//! folder, its repairable failures turned into design issues for the repair loop.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use keiri_llm::CancellationToken;
use keiri_run::RunOptions;
use serde_json::Value as Json;

use super::{now_and_random, pick, run_path_policy};
use crate::plan::load_catalog;
use crate::{Context, Lang};

/// Run-time errors the model can act on (a wrong column, an input a block cannot use, a
/// condition that does not evaluate); not a missing implementation, a missing sample file, a
/// cancellation or the network.
const REPAIRABLE_AT_RUN_TIME: &[&str] = &[
    "BLOCK_FAILED",
    "INPUT_INVALID",
    "COLUMN_NOT_FOUND",
    "REF_UNRESOLVED",
    "EXPR_INVALID",
];

/// How long one verification run may take before it is stopped (and counts as passed: a plan
/// is not sent back for being slow on large files).
pub(crate) const VERIFY_BUDGET: std::time::Duration = std::time::Duration::from_secs(60);

/// The planner's verifier (`plan_generate` with `verify_by_running`): runs `plan` on the
/// workspace's files in a throwaway run folder (`.keiri/verify-runs/`, removed after; no
/// network, nothing written elsewhere) and returns each repairable run-time failure as an
/// issue, with the columns of the tables the failed node read. The run stops when the
/// generation is cancelled or after `budget`.
pub(crate) fn verify_plan(
    ctx: &Context,
    plan: &keiri_plan::Plan,
    lang: Lang,
    cancel: &CancellationToken,
    budget: std::time::Duration,
) -> Vec<keiri_design::Issue> {
    let Ok(text) = keiri_plan::save_plan(plan) else {
        return Vec::new();
    };
    let (catalog, _) = load_catalog(ctx);
    let (now, random) = now_and_random();
    let runs = ctx.workspace.join(".keiri").join("verify-runs");
    let mut options = RunOptions::new(&ctx.workspace, now, random);
    options.paths = run_path_policy(ctx, &[], &runs);
    options.runs_dir = runs.clone();
    options.designs_dir = ctx.designs_dir.clone();
    options.cancel = cancel.child_token();
    // The budget: a timer that ends early when the run does (its sender is dropped).
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let stop = options.cancel.clone();
    let timer = std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(budget) {
            stop.cancel();
        }
    });
    // What each finished node produced: table columns by `node.alias`.
    let columns: Mutex<HashMap<String, Vec<String>>> = Mutex::new(HashMap::new());
    let sink = |event: &keiri_run::Event| {
        if let keiri_run::Event::NodeFinish { node, outputs, .. } = event {
            let mut columns = columns.lock().unwrap_or_else(PoisonError::into_inner);
            for (key, summary) in outputs {
                if let Some(cols) = summary.get("columns").and_then(Json::as_array) {
                    let names = cols.iter().filter_map(Json::as_str).map(str::to_string);
                    columns.insert(format!("{node}.{key}"), names.collect());
                }
            }
        }
    };
    let registry = keiri_run::block::Registry::builtins();
    let outcome = keiri_run::run(plan, &text, &catalog, &registry, &options, &sink);
    drop(done);
    let _ = timer.join();
    let _ = std::fs::remove_dir_all(&runs);
    let Ok(outcome) = outcome else {
        return Vec::new();
    };
    let columns = columns.into_inner().unwrap_or_else(PoisonError::into_inner);
    outcome
        .failures
        .iter()
        .filter(|f| REPAIRABLE_AT_RUN_TIME.contains(&f.code.as_str()))
        .filter_map(|f| {
            let index = plan.graph.iter().position(|n| n.id == f.node)?;
            let node = &plan.graph[index];
            // The tables the node read, as `dep.alias: [columns]`.
            let (mut refs, mut bad) = (Vec::new(), Vec::new());
            for value in node.inputs.values() {
                keiri_plan::refs::scan(value, "", &mut refs, &mut bad);
            }
            let mut read: Vec<String> = Vec::new();
            for r in refs {
                let keiri_plan::refs::Target::Node {
                    node: dep, alias, ..
                } = &r.target
                else {
                    continue;
                };
                // `out: {key: alias}`: the event names the output by its key.
                let key = plan
                    .graph
                    .iter()
                    .find(|n| &n.id == dep)
                    .and_then(|n| {
                        n.out
                            .iter()
                            .find(|(_, a)| a.as_str() == Some(alias.as_str()))
                            .map(|(k, _)| k.clone())
                    })
                    .unwrap_or_else(|| alias.clone());
                if let Some(cols) = columns.get(&format!("{dep}.{key}")) {
                    let entry = format!("{dep}.{alias}: [{}]", cols.join(", "));
                    if !read.contains(&entry) {
                        read.push(entry);
                    }
                }
            }
            let message = pick(lang, &f.message_ja, &f.message_en);
            let message = if read.is_empty() {
                message
            } else {
                format!("{message} — input columns {}", read.join("; "))
            };
            Some(keiri_design::Issue {
                code: format!("run.{}", f.code.to_ascii_lowercase()),
                severity: "error".into(),
                node_id: Some(f.node.clone()),
                path: format!("/graph/{index}"),
                message: pick(
                    lang,
                    &format!("試行実行で失敗しました: {message}"),
                    &format!("failed when run on the sample files: {message}"),
                ),
                hint: None,
            })
        })
        .collect()
}
