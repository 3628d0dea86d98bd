//! `keiri validate | dry-run | register | catalog | import-v0`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use keiri_api::{Context, json};

use crate::output::{print_error, print_findings, print_json};

#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// The plan YAML file (`-` reads standard input).
    #[arg(value_name = "PLAN")]
    pub plan: PathBuf,
}

/// `keiri validate`: the plan, and optionally what a run would give it.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    /// Check the plan as a run with these vars and input files would be: the columns checked
    /// are those of the files they name.
    #[command(flatten)]
    pub given: crate::cmd::run::RunVars,
}

/// `keiri import-v0`: a v0 plan and where its rewrite goes.
#[derive(Debug, clap::Args)]
pub struct ImportV0Args {
    #[command(flatten)]
    pub plan: PlanArgs,
    /// Write the rewritten plan here (never over an existing file); default: standard output.
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct CatalogArgs {
    /// Only blocks whose id, title or description contains this text.
    #[arg(long, short)]
    pub query: Option<String>,
}

fn read_plan(args: &PlanArgs) -> anyhow::Result<(String, String)> {
    if args.plan.as_os_str() == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .context("reading the plan from standard input")?;
        return Ok((text, "<stdin>".into()));
    }
    let meta = std::fs::metadata(&args.plan)
        .with_context(|| format!("reading {}", args.plan.display()))?;
    anyhow::ensure!(
        meta.len() <= keiri_plan_limit(),
        "{} is {} bytes, over the plan size limit",
        args.plan.display(),
        meta.len()
    );
    let text = std::fs::read_to_string(&args.plan)
        .with_context(|| format!("reading {}", args.plan.display()))?;
    Ok((text, args.plan.display().to_string()))
}

/// Plans larger than the YAML loader accepts are refused before reading them whole.
fn keiri_plan_limit() -> u64 {
    4 * 1024 * 1024
}

fn request(ctx: &Context, text: String) -> json::PlanRequest {
    json::PlanRequest {
        yaml: text,
        lang: Some(ctx.lang),
    }
}

pub fn validate(ctx: &Context, args: &ValidateArgs, json: bool) -> anyhow::Result<ExitCode> {
    let (text, source) = read_plan(&args.plan)?;
    let req = json::PlanValidateRequest {
        yaml: text,
        lang: Some(ctx.lang),
        vars: crate::cmd::run::vars(&args.given)?,
        inputs: crate::cmd::run::inputs(&args.given)?,
    };
    let res = match keiri_api::plan_validate(ctx, req) {
        Ok(r) => r,
        Err(e) => return print_error(&e, json),
    };
    if json {
        print_json(&res)?;
    } else {
        print_findings(&res.findings, &source);
        if res.valid {
            println!("ok: {source} ({} warning(s))", res.warning_count);
        } else {
            println!(
                "{} error(s), {} warning(s)",
                res.error_count, res.warning_count
            );
        }
    }
    Ok(if res.valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Exit codes: 0 the rewritten plan validates, 1 it is written but still has errors (what
/// did not map, and the findings, are listed), 2 usage or I/O error.
pub fn import_v0(ctx: &Context, args: &ImportV0Args, json: bool) -> anyhow::Result<ExitCode> {
    let (text, source) = read_plan(&args.plan)?;
    let req = json::PlanImportV0Request {
        yaml: text,
        lang: Some(ctx.lang),
    };
    let res = match keiri_api::plan_import_v0(ctx, req) {
        Ok(r) => r,
        Err(e) => return print_error(&e, json),
    };
    if let Some(out) = &args.out {
        keiri_fs::write_new(out, res.yaml.as_bytes())
            .with_context(|| format!("writing {}", out.display()))?;
    }
    let code = if res.validation.valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    if json {
        print_json(&res)?;
        return Ok(code);
    }
    if args.out.is_none() {
        print!("{}", res.yaml);
    }
    let target = args
        .out
        .as_ref()
        .map_or_else(|| "<stdout>".to_string(), |p| p.display().to_string());
    for item in &res.rewritten {
        eprintln!("rewritten [{}]: {}", item.node_id, item.detail);
    }
    for item in &res.unmapped {
        eprintln!("not mapped [{}]: {}", item.node_id, item.detail);
    }
    print_findings(&res.validation.findings, &target);
    eprintln!(
        "{source}: {} rewritten, {} not mapped; the result has {} error(s), {} warning(s){}",
        res.rewritten.len(),
        res.unmapped.len(),
        res.validation.error_count,
        res.validation.warning_count,
        args.out
            .as_ref()
            .map_or_else(String::new, |p| format!("; wrote {}", p.display()))
    );
    Ok(code)
}

pub fn dry_run(ctx: &Context, args: &PlanArgs, json: bool) -> anyhow::Result<ExitCode> {
    let (text, source) = read_plan(args)?;
    let res = match keiri_api::plan_dry_run(ctx, request(ctx, text)) {
        Ok(r) => r,
        Err(e) => return findings_or_error(e, &source, json),
    };
    if json {
        print_json(&res)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("plan {}: {} node(s)", res.plan_id, res.order.len());
    print_nodes(&res.nodes, 0)?;
    Ok(ExitCode::SUCCESS)
}

fn print_nodes(nodes: &[json::DryRunNode], depth: usize) -> anyhow::Result<()> {
    let pad = "  ".repeat(depth);
    for (i, n) in nodes.iter().enumerate() {
        let what = n.block.as_deref().unwrap_or(n.kind.as_str());
        println!("{pad}{}. {} ({what})", i + 1, n.id);
        if !n.depends_on.is_empty() {
            println!("{pad}   after: {}", n.depends_on.join(", "));
        }
        if let Some(w) = &n.when {
            println!("{pad}   when: {w}");
        }
        if n.inputs.as_object().is_some_and(|m| !m.is_empty()) {
            println!("{pad}   in: {}", serde_json::to_string(&n.inputs)?);
        }
        if !n.children.is_empty() {
            print_nodes(&n.children, depth + 2)?;
        }
    }
    Ok(())
}

/// The findings of an invalid plan, printed like `keiri validate` prints them (text mode; the
/// JSON error carries them in `details`), then the error itself.
pub(crate) fn findings_or_error(
    err: keiri_api::ApiError,
    source: &str,
    json: bool,
) -> anyhow::Result<ExitCode> {
    if !json
        && let Some(findings) = err.details.as_ref().and_then(|d| d.get("findings"))
        && let Ok(findings) = serde_json::from_value::<Vec<json::Finding>>(findings.clone())
    {
        print_findings(&findings, source);
    }
    print_error(&err, json)
}

pub fn register(ctx: &Context, args: &PlanArgs, json: bool) -> anyhow::Result<ExitCode> {
    // Temp files of a register that was killed mid-save; a failed sweep must not stop this one.
    let _ = keiri_fs::sweep(&ctx.designs_dir);
    let (text, source) = read_plan(args)?;
    match keiri_api::plan_register(ctx, request(ctx, text)) {
        Ok(res) => {
            if json {
                print_json(&res)?;
            } else {
                println!("registered: {}", res.path);
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => findings_or_error(e, &source, json),
    }
}

pub fn catalog(ctx: &Context, args: &CatalogArgs, json: bool) -> anyhow::Result<ExitCode> {
    let req = json::CatalogListRequest {
        query: args.query.clone(),
        lang: Some(ctx.lang),
    };
    let res = match keiri_api::catalog_list(ctx, req) {
        Ok(r) => r,
        Err(e) => return print_error(&e, json),
    };
    if json {
        print_json(&res)?;
    } else {
        for b in &res.blocks {
            let title = match ctx.lang {
                keiri_api::Lang::Ja => &b.title_ja,
                keiri_api::Lang::En => &b.title_en,
            };
            println!("{:<12} {:<36} {}", b.category, b.id, title);
        }
        for i in &res.issues {
            let at = i.line.map(|l| format!(":{l}")).unwrap_or_default();
            eprintln!("warning: {}{at}: {}", i.file, i.message);
        }
        println!("{} block(s)", res.blocks.len());
    }
    Ok(ExitCode::SUCCESS)
}
