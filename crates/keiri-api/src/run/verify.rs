//! The planner's verifier: a generated plan run on the files the user attached in a throwaway
//! run folder, its repairable failures turned into design issues for the repair loop.
//!
//! A sample run is the user's, not the model's: the plan may read only the attached files (a
//! plan that reads `.env`, another workspace file or anything outside is refused with
//! `PATH_DENIED`, which is not sent back), writes only under its run folder, reads no
//! `${env.*}` and reaches no network. The run, its budget and bounds are keiri-run's
//! ([`keiri_run::verify`]); what goes back to the model is keiri-design's
//! ([`keiri_design::sample_run_issues`]: findings, never the data).

use std::path::PathBuf;

use keiri_llm::CancellationToken;
use keiri_run::RunOptions;

use super::{confined_path_policy, now_and_random};
use crate::plan::load_catalog;
use crate::{Context, Lang};

/// How long one verification run may take before it is stopped (and counts as passed: a plan
/// is not sent back for being slow on large files).
pub(crate) const VERIFY_BUDGET: std::time::Duration = std::time::Duration::from_secs(60);

/// The planner's verifier (`plan_generate` with `verify_by_running`): runs `plan` on the
/// attached files `samples` (resolved paths) in a throwaway run folder
/// (`.keiri/verify-runs/`, removed after) and returns each repairable run-time failure as an
/// issue, with the columns of the tables the failed node read. The run stops when the
/// generation is cancelled or after `budget`.
pub(crate) fn verify_plan(
    ctx: &Context,
    plan: &keiri_plan::Plan,
    samples: &[PathBuf],
    lang: Lang,
    cancel: &CancellationToken,
    budget: std::time::Duration,
) -> Vec<keiri_plan::Finding> {
    let Ok(text) = keiri_plan::save_plan(plan) else {
        return Vec::new();
    };
    let (catalog, _) = load_catalog(ctx);
    let (now, random) = now_and_random();
    let runs = ctx.workspace.join(".keiri").join("verify-runs");
    let mut options = RunOptions::new(&ctx.workspace, now, random);
    // Only the attached files and the run's own folder; no env, hosts or model (the
    // options' defaults).
    options.paths = confined_path_policy(ctx, samples.iter().cloned(), &runs);
    options.runs_dir = runs.clone();
    options.designs_dir = ctx.designs_dir.clone();
    options.cancel = cancel.child_token();
    options.lang = lang;
    let registry = keiri_run::block::Registry::builtins();
    let verified = keiri_run::verify(plan, &text, &catalog, &registry, options, budget);
    let _ = std::fs::remove_dir_all(&runs);
    let Ok(verified) = verified else {
        return Vec::new();
    };
    let failures = verified
        .failures
        .iter()
        .map(|f| (f.node.as_str(), f.code.as_str()));
    keiri_design::sample_run_issues(plan, &catalog, failures, &verified.columns, lang)
}
