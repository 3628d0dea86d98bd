//! `keiri patch`: apply `exstruct_patch` operations to an .xlsx/.xlsm workbook.
//!
//! The request comes either whole from `--request req.json` or from flags (`--xlsx-path`,
//! `--ops ops.json`, `--dry-run`, …); flags given together with `--request` override its
//! fields. `--on-conflict` sets the default for a request that leaves `on_conflict` out, so a
//! value inside the request always wins. The response JSON is printed on stdout.
//!
//! Exit codes: 0 applied (or dry run ok), 1 the response has `error` set (an op failed or the
//! formula check blocked the save), 2 a request error (printed as `{code, message}`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use keiri_api::Context;
use keiri_api::xlsx::{OnConflict, PatchRequest};

use crate::output::{print_error, print_json};

/// Largest request or ops file read (they are JSON written by people or tools).
const MAX_REQUEST_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ConflictArg {
    Overwrite,
    Skip,
    Rename,
}

impl From<ConflictArg> for OnConflict {
    fn from(c: ConflictArg) -> OnConflict {
        match c {
            ConflictArg::Overwrite => OnConflict::Overwrite,
            ConflictArg::Skip => OnConflict::Skip,
            ConflictArg::Rename => OnConflict::Rename,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The whole request as a JSON file (the exstruct_patch input).
    #[arg(long, value_name = "FILE")]
    pub request: Option<PathBuf>,
    /// The workbook to patch (relative paths resolve against the workspace).
    #[arg(long, value_name = "PATH")]
    pub xlsx_path: Option<String>,
    /// A JSON file holding the list of ops.
    #[arg(long, value_name = "FILE")]
    pub ops: Option<PathBuf>,
    /// Directory to save into (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<String>,
    /// File name to save as (default `{stem}_patched{suffix}`).
    #[arg(long, value_name = "NAME")]
    pub out_name: Option<String>,
    /// What to do when the output exists, unless the request says.
    #[arg(long, value_enum, value_name = "POLICY")]
    pub on_conflict: Option<ConflictArg>,
    /// Treat set_value strings starting with `=` as formulas.
    #[arg(long)]
    pub auto_formula: bool,
    /// Report the diff without writing anything.
    #[arg(long)]
    pub dry_run: bool,
    /// Include the ops that undo the patch.
    #[arg(long)]
    pub return_inverse_ops: bool,
    /// Evaluate the patched workbook and refuse to save when the patch introduces formula errors.
    #[arg(long)]
    pub preflight_formula_check: bool,
}

fn read_json(path: &PathBuf, what: &str) -> anyhow::Result<serde_json::Value> {
    let meta = std::fs::metadata(path)
        .with_context(|| format!("reading the {what} {}", path.display()))?;
    if meta.len() > MAX_REQUEST_BYTES {
        bail!(
            "the {what} {} is larger than {MAX_REQUEST_BYTES} bytes",
            path.display()
        );
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the {what} {}", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("the {what} {} is not valid JSON", path.display()))
}

/// Builds the request JSON from `--request` and the flags (flags win).
fn request_json(args: &Args) -> anyhow::Result<serde_json::Value> {
    let mut body = match &args.request {
        Some(path) => read_json(path, "request")?,
        None => serde_json::json!({}),
    };
    let Some(obj) = body.as_object_mut() else {
        bail!("the request file must hold a JSON object");
    };
    if let Some(p) = &args.xlsx_path {
        obj.insert("xlsx_path".into(), p.clone().into());
    }
    if let Some(path) = &args.ops {
        obj.insert("ops".into(), read_json(path, "ops file")?);
    }
    if let Some(d) = &args.out_dir {
        obj.insert("out_dir".into(), d.clone().into());
    }
    if let Some(n) = &args.out_name {
        obj.insert("out_name".into(), n.clone().into());
    }
    for (flag, key) in [
        (args.auto_formula, "auto_formula"),
        (args.dry_run, "dry_run"),
        (args.return_inverse_ops, "return_inverse_ops"),
        (args.preflight_formula_check, "preflight_formula_check"),
    ] {
        if flag {
            obj.insert(key.into(), true.into());
        }
    }
    if !obj.contains_key("xlsx_path") {
        bail!("give --xlsx-path (or a --request file with xlsx_path)");
    }
    if !obj.contains_key("ops") {
        bail!("give --ops ops.json (or a --request file with ops)");
    }
    Ok(body)
}

pub fn run(ctx: &Context, args: &Args) -> anyhow::Result<ExitCode> {
    let body = request_json(args)?;
    let req: PatchRequest = match serde_json::from_value(body) {
        Ok(r) => r,
        Err(e) => {
            let err = keiri_api::ApiError::new(
                keiri_api::ErrorCode::InvalidRequest,
                format!("invalid request: {e}"),
            );
            print_error(&err, true)?;
            return Ok(ExitCode::from(2));
        }
    };
    let mut ctx = ctx.clone();
    if let Some(c) = args.on_conflict {
        ctx.on_conflict_default = Some(c.into());
    }
    match keiri_api::workbook_patch(&ctx, req) {
        Ok(res) => {
            print_json(&res)?;
            Ok(if res.error.is_some() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Err(err) => {
            print_error(&err, true)?;
            Ok(ExitCode::from(2))
        }
    }
}
