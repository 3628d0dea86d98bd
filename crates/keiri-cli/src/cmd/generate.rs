//! `keiri generate`: an instruction (+ documents, templates) → a plan that validates.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use keiri_api::{ApplyMode, Context, PlanGenerateRequest, Progress, Stage, Status};

use crate::output::{print_error, print_json};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What the plan should do, in plain Japanese or English.
    #[arg(long, short)]
    pub instruction: String,
    /// Reference documents (comma-separated paths inside the workspace).
    #[arg(long, value_delimiter = ',')]
    pub docs: Vec<String>,
    /// Template ids to use (comma-separated); default: chosen by retrieval.
    #[arg(long, value_delimiter = ',')]
    pub templates: Vec<String>,
    /// compose (offline, from templates), hint (LLM with templates as constraints) or
    /// llm-only.
    #[arg(long, value_parser = parse_mode)]
    pub apply_mode: Option<ApplyMode>,
    /// 1 allows a marked fallback plan when repair fails (default: KEIRI_AGENT_LLM_FALLBACK).
    #[arg(long, value_parser = parse_flag)]
    pub fallback: Option<bool>,
    /// How many repair rounds after the first wiring (default 2).
    #[arg(long)]
    pub max_repair: Option<u32>,
    /// A JSON object of answers to the questions of an earlier run, by requirement id.
    #[arg(long, value_name = "FILE")]
    pub answers: Option<PathBuf>,
    /// The plan id (default: generated_plan).
    #[arg(long)]
    pub plan_id: Option<String>,
    /// Write the plan here (never over an existing file); default: standard output.
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Register the plan to designs/ when it validates.
    #[arg(long)]
    pub register: bool,
}

fn parse_mode(s: &str) -> Result<ApplyMode, String> {
    s.parse::<ApplyMode>().map_err(|e| e.to_string())
}

fn parse_flag(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" => Ok(true),
        "0" | "false" | "no" => Ok(false),
        other => Err(format!("expected 0 or 1, got {other:?}")),
    }
}

fn describe(p: &Progress) -> String {
    let stage = match p.stage {
        Stage::Extracting => "extracting",
        Stage::Retrieving => "retrieving",
        Stage::Composing => "composing",
        Stage::Skeleton => "skeleton",
        Stage::Questions => "questions",
        Stage::Wiring => "wiring",
        Stage::Validating => "validating",
        Stage::Repair => "repair",
    };
    match p.repair {
        Some(r) => format!("[{stage} {}/{}] {}", r.n, r.of, p.message),
        None => format!("[{stage}] {}", p.message),
    }
}

pub fn run(ctx: &Context, args: &Args, json: bool) -> anyhow::Result<ExitCode> {
    let answers = match &args.answers {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            serde_json::from_str(&text)
                .with_context(|| format!("{} is not a JSON object of answers", path.display()))?
        }
        None => serde_json::Map::new(),
    };
    let req = PlanGenerateRequest {
        instruction: args.instruction.clone(),
        docs: args.docs.clone(),
        templates: args.templates.clone(),
        apply_mode: args.apply_mode,
        fallback: args.fallback,
        max_repair: args.max_repair,
        answers,
        plan_id: args.plan_id.clone(),
        pinned_blocks: Vec::new(),
        lang: Some(ctx.lang),
    };
    // Progress goes to stderr so stdout stays the plan (or the JSON result).
    let show = std::io::stderr().is_terminal() || !json;
    let res = match keiri_api::plan_generate_with_progress(ctx, req, &mut |p| {
        if show {
            eprintln!("{}", describe(p));
        }
    }) {
        Ok(r) => r,
        Err(e) => return print_error(&e, json),
    };
    let generated = &res.generated;
    let valid = matches!(generated.status, Status::Valid);
    if valid && let Some(out) = &args.out {
        keiri_fs::write_new(out, res.yaml.as_bytes())
            .with_context(|| format!("writing {}", out.display()))?;
    }
    let registered = if valid && args.register {
        let r = keiri_api::plan_register(
            ctx,
            keiri_api::json::PlanRequest {
                yaml: res.yaml.clone(),
                lang: Some(ctx.lang),
            },
        );
        match r {
            Ok(r) => Some(r),
            Err(e) => return print_error(&e, json),
        }
    } else {
        None
    };
    if json {
        print_json(&serde_json::json!({"result": res, "registered": registered}))?;
    } else {
        for note in &generated.notes {
            eprintln!("note: {note}");
        }
        for doc in &res.unreadable_docs {
            eprintln!("warning: not read: {doc}");
        }
        match generated.status {
            Status::Valid | Status::Fallback => {
                if args.out.is_none() && registered.is_none() {
                    print!("{}", res.yaml);
                }
                if let Some(out) = &args.out {
                    eprintln!("wrote {}", out.display());
                }
                if let Some(r) = &registered {
                    eprintln!("registered: {}", r.path);
                }
            }
            Status::NeedsAnswers => {
                eprintln!(
                    "the plan needs answers; write them to a JSON file and pass --answers FILE:"
                );
                for q in &generated.requirements {
                    let options = if q.options.is_empty() {
                        String::new()
                    } else {
                        format!(" options: {}", serde_json::to_string(&q.options)?)
                    };
                    println!("- {} ({:?}): {}{options}", q.id, q.kind, q.label);
                }
            }
            Status::Invalid => {
                for e in &generated.errors {
                    println!("error: {}", serde_json::to_string(e)?);
                }
                for s in &generated.suggestions {
                    println!("suggestion: {s}");
                }
            }
        }
    }
    Ok(match generated.status {
        Status::Valid => ExitCode::SUCCESS,
        Status::Fallback => ExitCode::SUCCESS,
        Status::NeedsAnswers | Status::Invalid => ExitCode::from(1),
    })
}
