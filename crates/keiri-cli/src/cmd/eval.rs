//! `keiri eval planner`: runs a case file of instructions against the configured LLM and
//! prints how good the planner is (first-pass validity, validity after repair, unknown ids /
//! keys, consistency over the runs).
//!
//! Exit codes: 0 when no unknown block id or key reached a plan, 1 when one did (the schema
//! constraints promise zero), 2 for usage errors, an unusable case file or no provider.
//!
//! `keiri eval offline`: composes every case of an offline case file without a model, as a
//! user's request would be (`plan_generate` in compose mode, with the case's attached files),
//! and prints whether each chose the right templates or said honestly that none fits, and the
//! pass rate. Exit codes: 0 when it ran (the rate is the result), 2 for an unusable case file.

use std::process::ExitCode;

use keiri_api::planner_eval_report::format_report;
use keiri_api::{Context, EvalProgress, PlanEvalRequest};

use crate::output::{print_error, print_json};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: EvalCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum EvalCommand {
    /// Evaluate the planner on a case file (needs an LLM provider).
    Planner(PlannerArgs),
    /// Evaluate the offline composer (no LLM) on a case file: template choice or no_fit.
    Offline(OfflineArgs),
}

#[derive(Debug, clap::Args)]
pub struct OfflineArgs {
    /// The case file (YAML; e.g. evals/offline_cases.yaml), relative to the workspace.
    #[arg(long, value_name = "FILE")]
    pub cases: String,
    /// Only these case ids (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub struct PlannerArgs {
    /// The case file (YAML; e.g. evals/planner_cases.yaml), inside the workspace.
    #[arg(long, value_name = "FILE")]
    pub cases: String,
    /// Runs per case (consistency is measured over them).
    #[arg(long, default_value_t = 3)]
    pub runs: u32,
    /// Repair rounds after the first wiring (default 2).
    #[arg(long)]
    pub max_repair: Option<u32>,
    /// Only these case ids (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
}

/// One progress line (stderr, so stdout stays the report).
fn describe(p: &EvalProgress) -> String {
    match p {
        EvalProgress::Case {
            index,
            of,
            id,
            runs,
        } => format!("[{index}/{of}] {id}: {runs} run(s)"),
        EvalProgress::Run { case, outcome } => {
            let result = match (&outcome.error, outcome.valid) {
                (Some(e), _) => format!("error {}", e.code),
                (None, true) if outcome.first_pass_valid => "valid on the first pass".into(),
                (None, true) => format!("valid after {} repair(s)", outcome.repairs),
                (None, false) => format!(
                    "{} after {} repair(s)",
                    outcome
                        .status
                        .map(|s| serde_json::to_value(s)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default())
                        .unwrap_or_default(),
                    outcome.repairs
                ),
            };
            format!("  {case} run {}: {result}", outcome.run)
        }
    }
}

pub fn run(
    ctx: &Context,
    args: &Args,
    json: bool,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<ExitCode> {
    match &args.command {
        EvalCommand::Planner(a) => planner(ctx, a, json, runtime),
        EvalCommand::Offline(a) => offline(ctx, a, json, runtime),
    }
}

fn offline(
    ctx: &Context,
    args: &OfflineArgs,
    json: bool,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<ExitCode> {
    use keiri_api::offline_eval_report::{
        format_offline_report, judge, load_offline_cases, summarize,
    };
    let path = ctx.workspace.join(&args.cases);
    let cases = match load_offline_cases(&path) {
        Ok(cases) => cases,
        Err(e) => {
            eprintln!("keiri: {}: {e}", e.code());
            return Ok(ExitCode::from(2));
        }
    };
    let unknown: Vec<&String> = args
        .only
        .iter()
        .filter(|id| !cases.iter().any(|c| &c.id == *id))
        .collect();
    if !unknown.is_empty() {
        eprintln!(
            "keiri: no case with the id(s) {unknown:?} in {}",
            args.cases
        );
        return Ok(ExitCode::from(2));
    }
    let chosen: Vec<_> = cases
        .iter()
        .filter(|c| args.only.is_empty() || args.only.contains(&c.id))
        .collect();
    let mut outcomes = Vec::new();
    for (i, case) in chosen.iter().enumerate() {
        let req = keiri_api::PlanGenerateRequest {
            instruction: case.instruction.clone(),
            docs: case.docs.clone(),
            apply_mode: Some(keiri_api::ApplyMode::Compose),
            plan_id: Some(case.id.clone()),
            lang: Some(ctx.lang),
            ..Default::default()
        };
        let (sink, events) = keiri_api::events();
        let cancel = keiri_api::CancellationToken::new();
        let call = keiri_api::plan_generate(ctx, req, &sink, &cancel);
        let result = runtime.block_on(events.drive(call, |_| {}));
        let outcome = match &result {
            Ok(res) => judge(case, Ok(&res.generated)),
            Err(e) => judge(case, Err(e.code.as_str())),
        };
        eprintln!(
            "[{}/{}] {}: {}",
            i + 1,
            chosen.len(),
            case.id,
            if outcome.passed { "pass" } else { "FAIL" }
        );
        outcomes.push(outcome);
    }
    let report = summarize(outcomes);
    if json {
        print_json(&report)?;
    } else {
        print!("{}", format_offline_report(&report));
    }
    Ok(ExitCode::SUCCESS)
}

fn planner(
    ctx: &Context,
    args: &PlannerArgs,
    json: bool,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<ExitCode> {
    let req = PlanEvalRequest {
        cases: args.cases.clone(),
        runs: Some(args.runs),
        max_repair: args.max_repair,
        only: args.only.clone(),
        lang: Some(ctx.lang),
    };
    let (sink, events) = keiri_api::events();
    let cancel = keiri_api::CancellationToken::new();
    let call = keiri_api::planner_eval(ctx, req, &sink, &cancel);
    let res = match runtime.block_on(events.drive(call, |p| eprintln!("{}", describe(&p)))) {
        Ok(r) => r,
        Err(e) => return print_error(&e, json),
    };
    if json {
        print_json(&res)?;
    } else {
        println!("provider: {} ({})", res.provider, res.model);
        for note in &res.notes {
            println!("note: {note}");
        }
        print!("{}", format_report(&res.report));
    }
    Ok(if res.has_unknown() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
