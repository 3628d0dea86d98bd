//! `keiri llm status`: whether an LLM provider is configured (from the environment and the
//! workspace's `.env`), which one, the model and the base URL. Keys are never printed.
//!
//! Exit codes: 0 configured, 1 not configured (the message names the variables to set),
//! 2 usage or I/O error.

use std::process::ExitCode;

use keiri_api::{Context, LlmStatusRequest, LlmStatusResponse};

use crate::output::{print_error, print_json};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Show whether an LLM provider is configured (exit 1 when not); never prints a key.
    Status,
}

pub fn run(ctx: &Context, args: &Args, json: bool) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Status => status(ctx, json),
    }
}

fn status(ctx: &Context, json: bool) -> anyhow::Result<ExitCode> {
    let st = match keiri_api::llm_status(ctx, LlmStatusRequest::default()) {
        Ok(st) => st,
        Err(e) => return print_error(&e, json),
    };
    if json {
        print_json(&st)?;
    } else {
        print_text(&st);
    }
    Ok(if st.configured {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print_text(st: &LlmStatusResponse) {
    if !st.configured {
        println!("configured: no");
        if let Some(p) = &st.problem {
            println!("{}: {}", p.code, p.message);
        }
        println!("(without an LLM, `compose` mode still builds plans from templates)");
        return;
    }
    println!("configured: yes");
    if let Some(p) = st.provider {
        println!("provider:   {}", p.as_str());
    }
    println!("model:      {}", st.model);
    if let Some(url) = &st.base_url {
        println!("base_url:   {url}");
    }
    if let Some(d) = &st.deployment {
        println!("deployment: {d}");
    }
    if let Some(v) = &st.api_version {
        println!("api_version: {v}");
    }
    println!(
        "api_key:    {}",
        if st.api_key_set { "set" } else { "not set" }
    );
}
