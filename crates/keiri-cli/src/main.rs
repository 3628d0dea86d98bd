//! `keiri` — Keiri Studio without the window: validate, dry-run and register plans, list the
//! catalog, and serve the studio UI and API on loopback (`keiri serve`).
//!
//! Every subcommand converts its arguments, calls one `keiri-api` function and prints the
//! result: human-readable by default, the API's JSON with `--json`. Exit codes: 0 ok,
//! 1 findings (the plan has errors), 2 usage or I/O error.
//!
//! `clap` parses the command line (derive API); `axum` + `tower-http` serve HTTP.

mod cmd;
mod output;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Keiri Studio: design, validate and register accounting job plans.
#[derive(Debug, Parser)]
#[command(name = "keiri", version, about, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every subcommand takes.
#[derive(Debug, clap::Args)]
pub struct GlobalArgs {
    /// Workspace root (designs/, block_specs/, .env). Default: the current directory.
    #[arg(long, global = true, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Catalog directory (repeatable, lowest precedence first). Default: the bundled
    /// catalog, then <workspace>/block_specs.
    #[arg(long = "catalog", global = true, value_name = "DIR")]
    pub catalogs: Vec<PathBuf>,
    /// Message language.
    #[arg(long, global = true, default_value = "ja", value_parser = parse_lang)]
    pub lang: keiri_api::Lang,
    /// Print machine-readable JSON (the API's response) instead of text.
    #[arg(long, global = true)]
    pub json: bool,
}

fn parse_lang(s: &str) -> Result<keiri_api::Lang, String> {
    s.parse()
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate a plan against the catalog.
    Validate(cmd::plan::PlanArgs),
    /// Show the execution order and resolved inputs of a plan without running it.
    DryRun(cmd::plan::PlanArgs),
    /// Save a valid plan to designs/<plan_id>_<yyyymmddHHMM>.yaml (never overwrites).
    Register(cmd::plan::PlanArgs),
    /// List the block catalog.
    Catalog(cmd::plan::CatalogArgs),
    /// Serve the studio UI and API on 127.0.0.1.
    Serve(cmd::serve::ServeArgs),
    /// Extract document text, a prompt digest, line ranges of many files, or file metrics.
    Extract(Box<cmd::extract::Args>),
}

impl GlobalArgs {
    /// Builds the API context from the global options.
    pub fn context(&self) -> anyhow::Result<keiri_api::Context> {
        let workspace = match &self.workspace {
            Some(w) => w.clone(),
            None => std::env::current_dir()?,
        };
        let workspace = workspace.canonicalize().map_err(|e| {
            anyhow::anyhow!(
                "workspace {} is not a readable directory: {e}",
                workspace.display()
            )
        })?;
        let mut ctx = keiri_api::Context::new(workspace).with_lang(self.lang);
        if !self.catalogs.is_empty() {
            ctx = ctx.with_catalog_dirs(self.catalogs.clone());
        }
        Ok(ctx)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(code) => code,
        Err(err) => {
            if cli.global.json {
                let body = serde_json::json!({"code": "IO_ERROR", "message": format!("{err:#}")});
                eprintln!("{body}");
            } else {
                eprintln!("keiri: {err:#}");
            }
            ExitCode::from(2)
        }
    }
}

fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    let ctx = cli.global.context()?;
    let json = cli.global.json;
    match &cli.command {
        Command::Validate(args) => cmd::plan::validate(&ctx, args, json),
        Command::DryRun(args) => cmd::plan::dry_run(&ctx, args, json),
        Command::Register(args) => cmd::plan::register(&ctx, args, json),
        Command::Catalog(args) => cmd::plan::catalog(&ctx, args, json),
        Command::Serve(args) => cmd::serve::run(ctx, args),
        Command::Extract(args) => cmd::extract::run(&ctx, args, json),
    }
}
