//! `keiri retrieve`: the Top-K block candidates for an instruction, or the retrieval eval.
//!
//! * `keiri retrieve "INSTRUCTION" [--docs FILE...] [--k N] [--mode bm25|dense|hybrid]
//!   [--pin ID]... [--category CAT] [--fusion convex|rrf] [--dense-weight W]` calls
//!   `blocks_retrieve` and prints the candidates (the API's JSON with `--json`);
//! * `keiri retrieve --eval FILE` calls `blocks_retrieve_eval` and prints recall@5,
//!   recall@10, MRR and nDCG@10 for BM25-only, dense-only and hybrid retrieval.
//!
//! Exit codes: 0 ok, 2 usage or I/O error.

use std::process::ExitCode;

use anyhow::bail;
use keiri_api::Context;
use keiri_api::retrieval::{FusionKind, Mode, RetrieveEvalRequest, RetrieveRequest, format_report};

use crate::output::{print_error, print_json};

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ModeArg {
    Bm25,
    Dense,
    Hybrid,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum FusionArg {
    Convex,
    Rrf,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What the job should do, in Japanese or English.
    #[arg(value_name = "INSTRUCTION", required_unless_present = "eval")]
    pub instruction: Option<String>,
    /// Attached documents whose text widens the query.
    #[arg(long, num_args = 1.., value_name = "FILE")]
    pub docs: Vec<String>,
    /// Candidates per category (5 to 8).
    #[arg(long, value_name = "N")]
    pub k: Option<usize>,
    /// Which scores rank the candidates (hybrid runs as bm25 without an embedding model).
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// A block that must be among the candidates (repeatable).
    #[arg(long = "pin", value_name = "ID")]
    pub pinned: Vec<String>,
    /// Only candidates of this category.
    #[arg(long, value_name = "CATEGORY")]
    pub category: Option<String>,
    /// How hybrid mode combines the scores.
    #[arg(long, value_enum)]
    pub fusion: Option<FusionArg>,
    /// Weight of the dense side in convex fusion (0 to 1).
    #[arg(long, value_name = "W")]
    pub dense_weight: Option<f32>,
    /// Evaluate retrieval on a labelled set instead (e.g. crates/keiri-search/eval/dev.yaml).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["instruction", "docs", "k", "mode", "pinned", "category"])]
    pub eval: Option<String>,
}

fn fusion(arg: Option<FusionArg>) -> Option<FusionKind> {
    arg.map(|f| match f {
        FusionArg::Convex => FusionKind::Convex,
        FusionArg::Rrf => FusionKind::Rrf,
    })
}

/// `ctx` with a progress bar on stderr for the embedding of the workspace's own blocks, when
/// stderr is a terminal (the bar is cleared once they are embedded).
fn with_progress_bar(ctx: &Context) -> Context {
    use std::io::IsTerminal;
    let mut ctx = ctx.clone();
    if !std::io::stderr().is_terminal() {
        return ctx;
    }
    let style =
        indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {elapsed:.dim}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    let bar = indicatif::ProgressBar::hidden()
        .with_style(style.progress_chars("=> "))
        .with_message("embedding the workspace's blocks");
    ctx.embedding_progress = Some(keiri_api::ProgressHook(std::sync::Arc::new(
        move |p: keiri_api::retrieval::Progress| {
            if bar.is_hidden() {
                bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                bar.reset_elapsed();
            }
            bar.set_length(p.total as u64);
            bar.set_position(p.done as u64);
            if p.done >= p.total {
                bar.finish_and_clear();
            }
        },
    )));
    ctx
}

pub fn run(ctx: &Context, args: &Args, json: bool) -> anyhow::Result<ExitCode> {
    let ctx = &with_progress_bar(ctx);
    if let Some(file) = &args.eval {
        let req = RetrieveEvalRequest {
            file: file.clone(),
            fusion: fusion(args.fusion),
            dense_weight: args.dense_weight,
        };
        return match keiri_api::blocks_retrieve_eval(ctx, req) {
            Ok(report) if json => print_json(&report).map(|()| ExitCode::SUCCESS),
            Ok(report) => {
                print!("{}", format_report(&report));
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => print_error(&e, json),
        };
    }
    let Some(instruction) = args.instruction.clone() else {
        bail!("an INSTRUCTION (or --eval FILE) is required");
    };
    let req = RetrieveRequest {
        instruction,
        docs: args.docs.clone(),
        k: args.k,
        mode: args.mode.map(|m| match m {
            ModeArg::Bm25 => Mode::Bm25,
            ModeArg::Dense => Mode::Dense,
            ModeArg::Hybrid => Mode::Hybrid,
        }),
        pinned: args.pinned.clone(),
        category: args.category.clone(),
        fusion: fusion(args.fusion),
        dense_weight: args.dense_weight,
    };
    let response = match keiri_api::blocks_retrieve(ctx, req) {
        Ok(r) => r,
        Err(e) => return print_error(&e, json),
    };
    if json {
        print_json(&response)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "mode: {}   embedder: {}   candidates: {}",
        response.mode.as_str(),
        response.embedder.as_deref().unwrap_or("none"),
        response.candidates.len()
    );
    println!(
        "{:>3} {:>6} {:>7} {:>6}  {:<12} {:<30} matched",
        "#", "score", "bm25", "dense", "category", "id"
    );
    for (i, c) in response.candidates.iter().enumerate() {
        let dense = c
            .dense
            .map_or_else(|| "-".to_string(), |d| format!("{d:.3}"));
        let pin = if c.pinned { " (pinned)" } else { "" };
        println!(
            "{:>3} {:>6.3} {:>7.2} {:>6}  {:<12} {:<30} {}{pin}",
            i + 1,
            c.score,
            c.bm25 + c.vocabulary,
            dense,
            c.category,
            c.id,
            c.matched.join(" ")
        );
    }
    for note in &response.notes {
        eprintln!("note: {note}");
    }
    Ok(ExitCode::SUCCESS)
}
