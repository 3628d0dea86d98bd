//! The built-in tools.
//!
//! | tool | reads / proposes | backed by |
//! |---|---|---|
//! | `read_file` | reads a workspace text file (line range) | `keiri-fs`, `keiri-docs` decoding |
//! | `extract_code_section` | reads line ranges of many documents | `keiri-docs` |
//! | `check_code_scale` | sizes, lines, tokens of files | `keiri-docs` |
//! | `retrieve_blocks` | Top-K catalog blocks for a task (the front-end's shared retriever) | `keiri-search` |
//! | `describe_block` | one block spec of the catalog | `keiri-plan` |
//! | `validate_plan` | findings of a plan, its columns checked against the files it reads | `keiri-plan`, `keiri-design` |
//! | `dry_run_plan` | execution order and inputs (the front-end's dry-run, with workbook previews) | `keiri-plan` |
//! | `exstruct_patch` | proposes a workbook patch with its per-cell diff; `dry_run: true` only previews | `keiri-xlsx` |
//! | `apply_patch` | proposes a unified diff to a file | `keiri-diff` |
//!
//! Tools that read a file see a pending change of it (what the user will get on approval),
//! so a model can edit a plan in several steps. Under [`Writes::Propose`] (the chat) no tool
//! writes a file: `apply_patch` and `exstruct_patch` record a [`PendingChange`] for the
//! approval gate. Under [`Writes::Direct`] (MCP) they write, as MCP's client asked.
//!
//! These tools are also MCP's: keiri-api's registry adds the API-backed tools (workbook reads,
//! the planner, runs) to them, and `keiri mcp` serves that one registry. Their names,
//! arguments, results and error codes are MCP's contract (`keiri mcp`'s names are the seed).

use keiri_diff::{Backend, NativeBackend, Run, TargetFile};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::approval::{ChangeKind, PendingChange, sha256, unified_diff};
use crate::tool::{
    Fronts, Tool, ToolContext, ToolError, ToolFuture, ToolRegistry, TypedTool, Writes, blocking,
    output_schema_of,
};

/// Files no tool may touch, whatever the skill: `.env` files hold API keys, and what a tool
/// reads is sent to the model. Front-ends add these to the tools' path policy
/// (`PathPolicy::with_deny`).
pub const SECRET_GLOBS: &[&str] = &["**/.env", "**/.env.*"];

/// The largest file `read_file` reads.
pub const MAX_READ_BYTES: u64 = 2 * 1024 * 1024;
/// Lines `read_file` returns when no range is given.
pub const DEFAULT_READ_LINES: usize = 400;

/// A registry with every built-in tool.
pub fn builtin_registry() -> ToolRegistry {
    ToolRegistry::new()
        .with(ReadFile)
        .with(ExtractSections)
        .with(FileMetrics)
        .with(RetrieveBlocks)
        .with(DescribeBlock)
        .with(ValidatePlan)
        .with(DryRunPlan)
        .with(ExstructPatch)
        .with(ApplyPatch)
}

fn path_error(e: keiri_fs::Error) -> ToolError {
    ToolError::from_code(e.code(), e.to_string())
}

/// Resolves `raw` and reads it as text: the pending change's text when there is one.
fn read_text(ctx: &ToolContext, raw: &str) -> Result<(String, String, Option<String>), ToolError> {
    let path = ctx.policy.resolve_existing(raw).map_err(path_error)?;
    let rel = ctx.relative(&path);
    if let Some((change_id, text)) = ctx.pending_text(&rel) {
        return Ok((rel, text, Some(change_id)));
    }
    let meta =
        std::fs::metadata(&path).map_err(|e| ToolError::failed("IO_ERROR", e.to_string()))?;
    if !meta.is_file() {
        return Err(ToolError::failed(
            "NOT_FOUND",
            format!("{rel} is not a file"),
        ));
    }
    if meta.len() > MAX_READ_BYTES {
        return Err(ToolError::failed(
            "FILE_TOO_LARGE",
            format!(
                "{rel} is {} bytes, over the {MAX_READ_BYTES}-byte limit of read_file; use extract_code_section",
                meta.len()
            ),
        ));
    }
    let bytes = std::fs::read(&path).map_err(|e| ToolError::failed("IO_ERROR", e.to_string()))?;
    let text = keiri_docs::decode_text(&bytes)
        .map_err(|e| ToolError::failed(e.code(), format!("{rel}: {e}")))?
        .text;
    Ok((rel, text, None))
}

// ---- read_file ----------------------------------------------------------------------------

/// The arguments of `read_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// File path, relative to the workspace.
    pub path: String,
    /// First line to return (1-based, default 1).
    #[serde(default)]
    pub start_line: Option<usize>,
    /// Last line to return (inclusive; default start_line + 399).
    #[serde(default)]
    pub end_line: Option<usize>,
}

/// `read_file`: a text file of the workspace, optionally a line range.
#[derive(Debug, Clone, Copy)]
pub struct ReadFile;

impl TypedTool for ReadFile {
    const NAME: &'static str = "read_file";
    const TITLE: &'static str = "Read a text file";
    const DESCRIPTION: &'static str = "Reads a text file of the workspace (UTF-8, Shift_JIS, …), optionally only lines start_line..end_line. Shows a pending change's text when the file has one.";
    const READ_ONLY: bool = true;
    const FRONTS: Fronts = Fronts::CHAT;
    type Args = ReadFileArgs;

    fn run(&self, args: ReadFileArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
        let start = args.start_line.unwrap_or(1);
        if start == 0 {
            return Err(ToolError::invalid("start_line is 1-based"));
        }
        let end = args.end_line.unwrap_or(start + DEFAULT_READ_LINES - 1);
        if end < start {
            return Err(ToolError::invalid("end_line is before start_line"));
        }
        let (rel, text, pending) = read_text(ctx, &args.path)?;
        let lines: Vec<&str> = text.lines().collect();
        let total = lines.len();
        let content: String = lines
            .iter()
            .skip(start - 1)
            .take(end - start + 1)
            .map(|l| format!("{l}\n"))
            .collect();
        let mut out = json!({
            "path": rel,
            "start_line": start,
            "end_line": end.min(total),
            "total_lines": total,
            "content": content,
        });
        if let Some(id) = pending {
            out["pending_change"] = json!(id);
        }
        Ok(out)
    }
}

// ---- documents ----------------------------------------------------------------------------

fn docs_output<T: serde::Serialize>(
    out: keiri_docs::Result<keiri_docs::Output<T>>,
) -> Result<Value, ToolError> {
    let out = out.map_err(|e| match &e {
        keiri_docs::Error::InvalidRequest(_) => ToolError::invalid(e.to_string()),
        keiri_docs::Error::Path(p) => path_error_ref(p, &e),
        keiri_docs::Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            ToolError::failed("NOT_FOUND", e.to_string())
        }
        keiri_docs::Error::Io { .. } => ToolError::failed("IO_ERROR", e.to_string()),
        _ => ToolError::failed("INTERNAL", e.to_string()),
    })?;
    serde_json::to_value(out).map_err(|e| ToolError::failed("INTERNAL", e.to_string()))
}

fn path_error_ref(p: &keiri_fs::Error, whole: &keiri_docs::Error) -> ToolError {
    ToolError::from_code(p.code(), whole.to_string())
}

/// `extract_code_section`: line ranges of many documents in one call.
#[derive(Debug, Clone, Copy)]
pub struct ExtractSections;

impl TypedTool for ExtractSections {
    const NAME: &'static str = "extract_code_section";
    const TITLE: &'static str = "Read line ranges of files";
    /// The limits are [`keiri_docs::BatchLimits::default`]'s (a test keeps them in step).
    const DESCRIPTION: &'static str = "Read line ranges (1-based, inclusive) from text, code and \
documents (PDF, Word, Excel) in one call. Single-range form: file_path, start_line and optional \
end_line (the end of the file when left out). Batch form: requests: [{file_path, sections: \
[{start_line, end_line, label}]}]; give one form, not both. Limits per call: 20 files, 50 \
sections per file, 200 sections in all, 1048576 bytes and 5000 lines of content, files up to \
5242880 bytes; allow_truncate returns what fits instead of failing, fail_fast stops at the first \
failing file. format: text | json (numbered lines) | raw (original line endings). output_format: \
toon (the default, compact) or json. A file that cannot be read is reported in errors[] with a \
stable code.";
    const READ_ONLY: bool = true;
    const FRONTS: Fronts = Fronts::BOTH;
    type Args = keiri_docs::SectionsRequest;

    fn run(&self, req: keiri_docs::SectionsRequest, ctx: &ToolContext) -> Result<Value, ToolError> {
        docs_output(keiri_docs::extract_sections(
            &ctx.policy,
            &req,
            &keiri_docs::BatchLimits::default(),
            keiri_docs::Cache::shared(),
        ))
    }
}

/// `check_code_scale` arguments: the batch metrics form of the tool (`file_paths` with
/// `metrics_only: true`). This tool measures files; it does not parse code structure, so
/// `metrics_only: false` is refused rather than silently answered with metrics.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckCodeScaleArgs {
    /// Files to measure (at most 200), absolute or relative to the first root.
    pub file_paths: Vec<String>,
    /// Must be `true` (the default): only file metrics are offered.
    #[serde(default = "yes")]
    pub metrics_only: bool,
    /// `toon` (the default: compact, for models) or `json`.
    #[serde(default = "toon")]
    pub output_format: keiri_docs::OutputFormat,
}

fn yes() -> bool {
    true
}

fn toon() -> keiri_docs::OutputFormat {
    keiri_docs::OutputFormat::Toon
}

/// `check_code_scale`: size, lines, characters, estimated tokens, hash and format of files.
#[derive(Debug, Clone, Copy)]
pub struct FileMetrics;

impl TypedTool for FileMetrics {
    const NAME: &'static str = "check_code_scale";
    const TITLE: &'static str = "Measure files";
    const DESCRIPTION: &'static str = "Measure files before reading them: size in bytes, lines, \
characters, estimated tokens, a sha256 content hash, the detected format and encoding, PDF pages \
and workbook sheets. Give file_paths (at most 200) with metrics_only: true. output_format: toon \
(the default) or json. A file that cannot be measured is reported in errors[] with a stable code \
(e.g. PATH_DENIED, NOT_FOUND).";
    const READ_ONLY: bool = true;
    const FRONTS: Fronts = Fronts::BOTH;
    type Args = CheckCodeScaleArgs;

    fn run(&self, args: CheckCodeScaleArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
        if !args.metrics_only {
            return Err(ToolError::invalid(
                "only metrics_only: true is supported (code structure analysis is not offered)",
            ));
        }
        let req = keiri_docs::MetricsRequest {
            file_paths: args.file_paths,
            output_format: args.output_format,
        };
        docs_output(keiri_docs::file_metrics(
            &ctx.policy,
            &req,
            &keiri_docs::BatchLimits::default(),
            keiri_docs::Cache::shared(),
        ))
    }
}

// ---- catalog ------------------------------------------------------------------------------

/// `retrieve_blocks`: the catalog blocks that fit a task, from the front-end's shared
/// retriever ([`crate::tool::Retrieve`]); without one, BM25 over the catalog.
#[derive(Debug, Clone, Copy)]
pub struct RetrieveBlocks;

impl TypedTool for RetrieveBlocks {
    const NAME: &'static str = "retrieve_blocks";
    const TITLE: &'static str = "Find catalog blocks for a job";
    const DESCRIPTION: &'static str = "Find the catalog blocks and templates that fit a job \
described in Japanese or English (and optionally attached documents, given as paths): the top \
candidates per category, ranked by BM25 with Japanese-aware tokenisation fused with embedding \
similarity when an embedder is configured (mode: bm25 | dense | hybrid; without embeddings it \
runs as bm25 and says so in notes). Each candidate has its id, kind, category, title, scores and \
matched terms; pinned ids are always included. k: 5 to 8 per category (default 6).";
    const READ_ONLY: bool = true;
    const FRONTS: Fronts = Fronts::BOTH;
    type Args = keiri_search::RetrieveRequest;

    fn output_schema() -> Option<Value> {
        Some(output_schema_of::<keiri_search::RetrieveResponse>())
    }

    fn run(
        &self,
        mut req: keiri_search::RetrieveRequest,
        ctx: &ToolContext,
    ) -> Result<Value, ToolError> {
        let res = match &ctx.retrieve {
            Some(retrieve) => (retrieve.0)(req)?,
            None => {
                // Documents need the front-end's reader; without it the text is the query.
                req.docs.clear();
                let index = keiri_search::Index::from_catalog(&ctx.catalog(), None)
                    .map_err(|e| ToolError::from_code(e.code(), e.to_string()))?;
                keiri_search::top_k(&index, &req, &[])
                    .map_err(|e| ToolError::from_code(e.code(), e.to_string()))?
            }
        };
        serde_json::to_value(res).map_err(|e| ToolError::failed("INTERNAL", e.to_string()))
    }
}

/// The arguments of `describe_block`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DescribeBlockArgs {
    /// The block id, e.g. csv.read.
    pub id: String,
}

/// `describe_block`: one block spec (inputs, outputs, descriptions).
#[derive(Debug, Clone, Copy)]
pub struct DescribeBlock;

impl TypedTool for DescribeBlock {
    const NAME: &'static str = "describe_block";
    const TITLE: &'static str = "Describe a catalog block";
    const DESCRIPTION: &'static str = "Returns one block of the catalog by id: titles, description, inputs and outputs with types.";
    const READ_ONLY: bool = true;
    const FRONTS: Fronts = Fronts::CHAT;
    type Args = DescribeBlockArgs;

    fn run(&self, args: DescribeBlockArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
        let catalog = ctx.catalog();
        let Some(spec) = catalog.get(&args.id) else {
            return Err(ToolError::failed(
                "NOT_FOUND",
                format!(
                    "no block {:?} in the catalog; use retrieve_blocks to find ids",
                    args.id
                ),
            ));
        };
        let mut v =
            serde_json::to_value(spec).map_err(|e| ToolError::failed("INTERNAL", e.to_string()))?;
        v["category"] = json!(spec.category);
        Ok(v)
    }
}

// ---- plans --------------------------------------------------------------------------------

/// The arguments of `validate_plan` and `dry_run_plan`: the plan as YAML text or as a file
/// (in the studio's chat, the current plan when neither is given).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanArgs {
    /// The plan YAML text (keiri_agent v0 format).
    #[serde(default)]
    pub yaml: Option<String>,
    /// The plan file instead of the text, relative to the workspace.
    #[serde(default)]
    pub path: Option<String>,
    /// Message language, `ja` or `en`; the front-end's default when left out.
    #[serde(default)]
    #[schemars(schema_with = "lang_schema")]
    pub lang: Option<keiri_plan::Lang>,
}

/// The schema of [`keiri_plan::Lang`] (a crate that knows no schemas).
fn lang_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": ["string", "null"], "enum": ["ja", "en", null]})
}

fn plan_text(ctx: &ToolContext, args: &PlanArgs) -> Result<(Option<String>, String), ToolError> {
    if let Some(yaml) = &args.yaml {
        return Ok((None, yaml.clone()));
    }
    let Some(path) = args.path.as_ref().or(ctx.plan_path.as_ref()) else {
        return Err(ToolError::invalid(
            "give yaml or path: there is no current plan",
        ));
    };
    let (rel, text, _) = read_text(ctx, path)?;
    Ok((Some(rel), text))
}

/// Loads and validates plan text as the studio does ([`keiri_design::check_plan`]): the plan
/// (when it parses), the findings with their lines and columns, and the catalog.
fn check_plan(
    ctx: &ToolContext,
    text: &str,
    lang: keiri_plan::Lang,
) -> (keiri_plan::Checked, std::sync::Arc<keiri_plan::Catalog>) {
    let catalog = ctx.catalog();
    let checked = keiri_design::check_plan(text, lang, &catalog, &ctx.policy, &ctx.designs_dir);
    (checked, catalog)
}

/// `validate_plan`: the validator's findings for the current plan (or a path / YAML text).
#[derive(Debug, Clone, Copy)]
pub struct ValidatePlan;

impl TypedTool for ValidatePlan {
    const NAME: &'static str = "validate_plan";
    const TITLE: &'static str = "Validate a plan";
    const DESCRIPTION: &'static str = "Validate a Keiri Studio plan (a YAML DAG of typed blocks, \
given as yaml or as a file path) against the block catalog (unknown blocks or keys, types, \
references, cycles) and against the columns of the CSV/Excel files it reads. Returns valid, \
error_count, warning_count, graph and findings, each with a stable code, severity, node_id, JSON \
path, line/column, message and hint. A YAML syntax error is a finding, not a tool error. In the \
studio's chat it defaults to the current plan, including a pending change.";
    const READ_ONLY: bool = true;
    const FRONTS: Fronts = Fronts::BOTH;
    type Args = PlanArgs;

    fn run(&self, args: PlanArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
        let (path, text) = plan_text(ctx, &args)?;
        let (checked, _) = check_plan(ctx, &text, args.lang.unwrap_or(ctx.lang));
        let errors = checked.error_count();
        Ok(json!({
            "path": path,
            "valid": errors == 0,
            "error_count": errors,
            "warning_count": checked.findings.len() - errors,
            "graph": checked.loaded.as_ref().map(|l| keiri_plan::plan_graph(&l.plan)),
            "findings": checked.findings,
        }))
    }
}

/// `dry_run_plan`: execution order and resolved inputs of a valid plan — the front-end's own
/// dry-run when it gives one ([`crate::tool::DryRun`]: the studio's, with workbook previews).
#[derive(Debug, Clone, Copy)]
pub struct DryRunPlan;

impl TypedTool for DryRunPlan {
    const NAME: &'static str = "dry_run_plan";
    const TITLE: &'static str = "Dry-run a plan";
    const DESCRIPTION: &'static str = "Dry-run a Keiri Studio plan (yaml, or a file path) without \
executing any block: returns the execution order and, per node, its kind, block, dependencies \
and resolved inputs and outputs (references such as ${node.alias} shown symbolically). A plan \
with errors is a tool error with code PLAN_INVALID (or YAML_PARSE) whose details carry the \
findings. In the studio's chat it defaults to the current plan.";
    const READ_ONLY: bool = true;
    const FRONTS: Fronts = Fronts::BOTH;
    type Args = PlanArgs;

    fn run(&self, args: PlanArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
        let (_, text) = plan_text(ctx, &args)?;
        let lang = args.lang.unwrap_or(ctx.lang);
        if let Some(dry_run) = &ctx.dry_run {
            return (dry_run.0)(&text, lang);
        }
        let (checked, catalog) = check_plan(ctx, &text, lang);
        let errors = checked.error_count();
        let Some(loaded) = checked.loaded.filter(|_| errors == 0) else {
            return Err(ToolError::failed(
                "PLAN_INVALID",
                format!("the plan has {errors} error(s); fix them first (details.findings)"),
            )
            .with_details(json!({ "findings": checked.findings })));
        };
        let subflows = keiri_plan::designs_index(&ctx.designs_dir)
            .into_iter()
            .map(|(id, (_, plan))| (id, plan))
            .collect();
        let run = keiri_plan::dry_run(&loaded.plan, &catalog, &subflows);
        serde_json::to_value(run).map_err(|e| ToolError::failed("INTERNAL", e.to_string()))
    }
}

// ---- exstruct_patch -----------------------------------------------------------------------

/// `exstruct_patch`, the workbook patch. Under [`Writes::Direct`] (MCP) it writes the result;
/// under [`Writes::Propose`] (the chat) the patch runs as a dry run and, unless the model asked
/// for `dry_run: true`, is proposed with its per-cell diff and written only when the user
/// approves.
#[derive(Debug, Clone, Copy)]
pub struct ExstructPatch;

impl TypedTool for ExstructPatch {
    const NAME: &'static str = "exstruct_patch";
    const TITLE: &'static str = "Patch an Excel workbook";
    const DESCRIPTION: &'static str = "\
Edit an Excel workbook (.xlsx/.xlsm) with cell, sheet, styling and structure operations \
(exstruct_list_ops lists them, exstruct_describe_op shows one's fields, constraints, example \
and aliases; exstruct_validate_input checks ops without writing). Ops apply in order; a \
top-level sheet serves every op that names none. A values shape that differs from its range \
is an INVALID_REQUEST error. fill_formula fills a row, a column or a rectangle with base_cell's \
formula (or the op's formula, written for base_cell), shifting relative references. Dates: \
{\"kind\":\"date\",\"value\":\"2025-03-31\"} (or datetime), and text that is exactly YYYY-MM-DD, \
are written as Excel dates; {\"kind\":\"text\",\"value\":...} keeps text. The result is saved atomically to a new file, \
{stem}_patched{suffix} next to the workbook unless out_dir/out_name say otherwise; the \
original is never modified. on_conflict (overwrite | skip | rename) decides what happens when \
the output exists; when left out, the server's --on-conflict default applies. dry_run computes \
everything and writes nothing. Returns out_path, patch_diff (per-cell before/after), warnings, \
error (the op that could not apply, with op_index; nothing is saved then), inverse_ops (with \
return_inverse_ops) and formula_issues (with preflight_formula_check). Paths are absolute or \
relative to the server's first root and must stay inside its roots. In the studio's chat the \
patch is not saved by the call: it is proposed to the user with its diff (status \
pending_approval, change_id) and saved only after approval.";
    const READ_ONLY: bool = false;
    const FRONTS: Fronts = Fronts::BOTH;
    type Args = keiri_xlsx::PatchRequest;

    fn output_schema() -> Option<Value> {
        Some(output_schema_of::<keiri_xlsx::PatchResponse>())
    }

    fn run(
        &self,
        mut req: keiri_xlsx::PatchRequest,
        ctx: &ToolContext,
    ) -> Result<Value, ToolError> {
        let mut env = keiri_xlsx::PatchEnv::new(ctx.policy.clone());
        env.on_conflict_default = ctx.on_conflict_default;
        // A client's `notifications/cancelled` stops the patch; nothing is written then.
        let cancel = ctx.cancel.clone();
        env.stop = keiri_xlsx::Stop::when(move || cancel.is_cancelled());
        let xlsx_error = |e: keiri_xlsx::Error| ToolError::from_code(e.code(), e.to_string());
        if ctx.writes == Writes::Direct {
            let res = keiri_xlsx::patch(&req, &env).map_err(xlsx_error)?;
            return serde_json::to_value(&res)
                .map_err(|e| ToolError::failed("INTERNAL", e.to_string()));
        }
        let apply = !req.dry_run;
        req.dry_run = true;
        let res = keiri_xlsx::patch(&req, &env).map_err(xlsx_error)?;
        let mut out =
            serde_json::to_value(&res).map_err(|e| ToolError::failed("INTERNAL", e.to_string()))?;
        let applied = res
            .patch_diff
            .iter()
            .any(|d| d.status == keiri_xlsx::DiffStatus::Applied);
        if !apply || res.error.is_some() || !applied {
            out["status"] = json!("preview");
            return Ok(out);
        }
        let source = ctx
            .policy
            .resolve_existing(&req.xlsx_path)
            .map_err(path_error)?;
        let source_bytes =
            std::fs::read(&source).map_err(|e| ToolError::failed("IO_ERROR", e.to_string()))?;
        let out_rel = ctx
            .policy
            .resolve_new(&res.out_path)
            .map(|p| ctx.relative(&p))
            .unwrap_or_else(|_| res.out_path.clone());
        let mut request = req.clone();
        request.dry_run = false;
        // The request as it will run on approval: the arguments the change records.
        let request = serde_json::to_value(&request)
            .map_err(|e| ToolError::failed("INTERNAL", e.to_string()))?;
        let change_id = ctx.propose(PendingChange {
            change_id: String::new(),
            file: out_rel.clone(),
            tool: Self::NAME.into(),
            args: request.clone(),
            diff: workbook_diff(&ctx.relative(&source), &out_rel, &res),
            kind: ChangeKind::Workbook {
                source: ctx.relative(&source),
                source_sha256: sha256(&source_bytes),
                request,
            },
        });
        out["status"] = json!("pending_approval");
        out["change_id"] = json!(change_id);
        Ok(out)
    }
}

/// A unified-diff-like text of a workbook patch: one hunk per changed cell or sheet.
fn workbook_diff(source: &str, out: &str, res: &keiri_xlsx::PatchResponse) -> String {
    let show = |v: &Option<keiri_xlsx::PatchValue>| match v {
        None => String::new(),
        Some(v) => v
            .value
            .as_ref()
            .map(|c| match c {
                keiri_xlsx::CellValue::Text(t) => t.clone(),
                other => serde_json::to_string(other).unwrap_or_default(),
            })
            .unwrap_or_default(),
    };
    let mut text = format!("--- a/{source}\n+++ b/{out}\n");
    for d in res
        .patch_diff
        .iter()
        .filter(|d| d.status == keiri_xlsx::DiffStatus::Applied)
    {
        let place = match &d.cell {
            Some(cell) => format!("{}!{cell}", d.sheet),
            None => d.sheet.clone(),
        };
        text.push_str(&format!("@@ {place} ({}) @@\n", d.op.as_str()));
        if d.before.is_some() {
            text.push_str(&format!("-{}\n", show(&d.before)));
        }
        if d.after.is_some() {
            text.push_str(&format!("+{}\n", show(&d.after)));
        }
    }
    text
}

// ---- apply_patch --------------------------------------------------------------------------

/// `apply_patch` (keiri-diff's definition, word for word). Under [`Writes::Direct`] (MCP) it
/// writes the patched file; under [`Writes::Propose`] (the chat) it computes the patched file in
/// memory with the native applier and proposes it, and nothing is written before approval.
#[derive(Debug, Clone, Copy)]
pub struct ApplyPatch;

/// The native applier run on a file's pending text instead of its saved content, so that a
/// second patch builds on the first. A failed run reports the saved content unchanged, which
/// keiri-diff's decision turns into `APPLY_FAILED`.
struct OnPending<'a> {
    inner: NativeBackend,
    pending: Option<&'a [u8]>,
}

impl Backend for OnPending<'_> {
    fn kind(&self) -> keiri_diff::BackendKind {
        keiri_diff::BackendKind::Native
    }

    fn apply(
        &self,
        file: &TargetFile<'_>,
        patch: &keiri_diff::patch::PreparedPatch,
    ) -> Result<Run, keiri_diff::Error> {
        let Some(pending) = self.pending else {
            return self.inner.apply(file, patch);
        };
        let pending = pending.strip_prefix(b"\xef\xbb\xbf").unwrap_or(pending);
        let run = self.inner.apply(
            &TargetFile {
                path: file.path,
                rel: file.rel,
                content: pending,
                output_limit: file.output_limit,
            },
            patch,
        )?;
        if run.exit_code == 0 {
            Ok(run)
        } else {
            Ok(Run {
                content: file.content.to_vec(),
                ..run
            })
        }
    }
}

/// A keiri-diff error as the tool's, with its details (the backend that failed to apply).
fn diff_error(e: keiri_diff::Error) -> ToolError {
    let err = ToolError::from_code(e.code(), e.to_string());
    match e.details() {
        Some(details) => err.with_details(details),
        None => err,
    }
}

impl ApplyPatch {
    /// Applies the diff (MCP) or proposes it on the file's pending text (the chat).
    fn apply(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let input = keiri_diff::ApplyPatchInput::from_json(args)
            .map_err(|e| ToolError::from_code(e.code(), e.to_string()))?;
        if ctx.writes == Writes::Direct {
            let applied = keiri_diff::apply_patch(
                &ctx.policy,
                &input,
                &NativeBackend::default(),
                &keiri_diff::Sha256Hasher,
                &keiri_diff::Options::default(),
            )
            .map_err(diff_error)?;
            return serde_json::to_value(applied.result)
                .map_err(|e| ToolError::failed("INTERNAL", e.to_string()));
        }
        let resolved = ctx
            .policy
            .resolve_existing(&input.file_path)
            .map_err(path_error)?;
        let pending = ctx.pending_text(&ctx.relative(&resolved));
        let backend = OnPending {
            inner: NativeBackend::default(),
            pending: pending.as_ref().map(|(_, t)| t.as_bytes()),
        };
        let options = keiri_diff::Options {
            mode: keiri_diff::Mode::DryRun,
            ..keiri_diff::Options::default()
        };
        let applied = keiri_diff::apply_patch(
            &ctx.policy,
            &input,
            &backend,
            &keiri_diff::Sha256Hasher,
            &options,
        )
        .map_err(|e| ToolError::from_code(e.code(), e.to_string()))?;
        let rel = applied.result.path.clone();
        if !applied.result.changed {
            return Ok(
                json!({"status": "unchanged", "path": rel, "messages": applied.result.messages}),
            );
        }
        let (Ok(before), Ok(after)) = (
            std::str::from_utf8(&applied.before),
            String::from_utf8(applied.after.clone()),
        ) else {
            return Err(ToolError::failed(
                "INTERNAL",
                "the patched file is not UTF-8",
            ));
        };
        let change_id = ctx.propose(PendingChange {
            change_id: String::new(),
            file: rel.clone(),
            tool: self.name().into(),
            args: args.clone(),
            diff: unified_diff(&rel, before, &after),
            kind: ChangeKind::Text {
                sha256_before: sha256(&applied.before),
                after,
            },
        });
        Ok(json!({
            "status": "pending_approval",
            "change_id": change_id,
            "path": rel,
            "hunks": applied.result.hunks,
            "messages": applied.result.messages,
            "note": "the change is shown to the user as a diff and written only after approval",
        }))
    }
}

impl Tool for ApplyPatch {
    fn name(&self) -> &str {
        keiri_diff::TOOL_NAME
    }
    fn description(&self) -> &str {
        keiri_diff::TOOL_DESCRIPTION
    }
    fn parameters(&self) -> Value {
        keiri_diff::tool_parameters()
    }
    fn title(&self) -> &str {
        "Apply a unified diff to a file"
    }
    fn output_schema(&self) -> Option<Value> {
        Some(output_schema_of::<keiri_diff::ApplyPatchResult>())
    }
    fn read_only(&self) -> bool {
        false
    }
    fn fronts(&self) -> Fronts {
        Fronts::BOTH
    }
    fn call<'a>(&'a self, args: &'a Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move { blocking(|| self.apply(args, ctx)) })
    }
}
