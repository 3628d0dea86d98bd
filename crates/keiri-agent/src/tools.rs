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
//! so a model can edit a plan in several steps. No tool writes a file: `apply_patch` and
//! `exstruct_patch` record a [`PendingChange`] for the approval gate.
//!
//! A tool that does what an MCP tool does has its name and its arguments (`keiri mcp`'s names
//! are the seed contract); only the write differs: MCP writes, the chat proposes.

use keiri_diff::{Backend, NativeBackend, Run, TargetFile};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::approval::{ChangeKind, PendingChange, sha256, unified_diff};
use crate::tool::{Tool, ToolContext, ToolError, ToolRegistry, TypedTool};

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
    const DESCRIPTION: &'static str = "Reads a text file of the workspace (UTF-8, Shift_JIS, …), optionally only lines start_line..end_line. Shows a pending change's text when the file has one.";
    const READ_ONLY: bool = true;
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
    const DESCRIPTION: &'static str = "Reads line ranges from documents (text, PDF, Word, Excel) in one call: file_path + start_line/end_line, or requests[] of files with sections. Output TOON by default; output_format json for JSON.";
    const READ_ONLY: bool = true;
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

/// `check_code_scale`: size, lines, characters, estimated tokens, hash and format of files.
#[derive(Debug, Clone, Copy)]
pub struct FileMetrics;

impl TypedTool for FileMetrics {
    const NAME: &'static str = "check_code_scale";
    const DESCRIPTION: &'static str = "Measures files: size, lines, characters, estimated tokens, content hash, format, pages or sheets. Use before reading large documents.";
    const READ_ONLY: bool = true;
    type Args = keiri_docs::MetricsRequest;

    fn run(&self, req: keiri_docs::MetricsRequest, ctx: &ToolContext) -> Result<Value, ToolError> {
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
    const DESCRIPTION: &'static str = "Finds the catalog blocks that fit a task described in Japanese or English (Top-K per category, with scores and matched terms).";
    const READ_ONLY: bool = true;
    type Args = keiri_search::RetrieveRequest;

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
    const DESCRIPTION: &'static str = "Returns one block of the catalog by id: titles, description, inputs and outputs with types.";
    const READ_ONLY: bool = true;
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

/// The arguments of `validate_plan` and `dry_run_plan`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanArgs {
    /// The plan file, relative to the workspace (default: the current plan).
    #[serde(default)]
    pub path: Option<String>,
    /// Plan YAML text instead of a file.
    #[serde(default)]
    pub yaml: Option<String>,
}

fn plan_text(ctx: &ToolContext, args: &PlanArgs) -> Result<(Option<String>, String), ToolError> {
    if let Some(yaml) = &args.yaml {
        return Ok((None, yaml.clone()));
    }
    let Some(path) = args.path.as_ref().or(ctx.plan_path.as_ref()) else {
        return Err(ToolError::invalid(
            "give path or yaml: there is no current plan in this chat",
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
) -> (keiri_plan::Checked, std::sync::Arc<keiri_plan::Catalog>) {
    let catalog = ctx.catalog();
    let checked = keiri_design::check_plan(text, ctx.lang, &catalog, &ctx.policy, &ctx.designs_dir);
    (checked, catalog)
}

/// `validate_plan`: the validator's findings for the current plan (or a path / YAML text).
#[derive(Debug, Clone, Copy)]
pub struct ValidatePlan;

impl TypedTool for ValidatePlan {
    const NAME: &'static str = "validate_plan";
    const DESCRIPTION: &'static str = "Validates a plan against the block catalog (unknown blocks or keys, types, references, cycles) and against the columns of the CSV/Excel files it reads, and returns the findings with codes and lines. Defaults to the current plan, including a pending change.";
    const READ_ONLY: bool = true;
    type Args = PlanArgs;

    fn run(&self, args: PlanArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
        let (path, text) = plan_text(ctx, &args)?;
        let (checked, _) = check_plan(ctx, &text);
        let errors = checked.error_count();
        Ok(json!({
            "path": path,
            "valid": errors == 0,
            "error_count": errors,
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
    const DESCRIPTION: &'static str = "Dry-runs a valid plan: the execution order and each node's resolved inputs, without running anything. Defaults to the current plan.";
    const READ_ONLY: bool = true;
    type Args = PlanArgs;

    fn run(&self, args: PlanArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
        let (_, text) = plan_text(ctx, &args)?;
        if let Some(dry_run) = &ctx.dry_run {
            return (dry_run.0)(&text);
        }
        let (checked, catalog) = check_plan(ctx, &text);
        let errors = checked.error_count();
        let Some(loaded) = checked.loaded.filter(|_| errors == 0) else {
            return Err(ToolError::failed(
                "PLAN_INVALID",
                format!(
                    "the plan has {errors} error(s); fix them first: {}",
                    serde_json::to_value(&checked.findings).unwrap_or(Value::Null)
                ),
            ));
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

/// `exstruct_patch`, MCP's workbook patch with the same arguments: the patch runs as a dry run
/// and, unless the model asked for `dry_run: true`, is proposed with its per-cell diff and
/// written only when the user approves (MCP's tool writes at once).
#[derive(Debug, Clone, Copy)]
pub struct ExstructPatch;

impl TypedTool for ExstructPatch {
    const NAME: &'static str = "exstruct_patch";
    const DESCRIPTION: &'static str = "Patches an .xlsx/.xlsm workbook (set_value, set_formula, fill_formula, add_sheet, …) and returns the per-cell before/after diff. Nothing is written by this call: the patch is proposed to the user and written only after approval. dry_run: true only previews (nothing proposed).";
    const READ_ONLY: bool = false;
    type Args = keiri_xlsx::PatchRequest;

    fn run(
        &self,
        mut req: keiri_xlsx::PatchRequest,
        ctx: &ToolContext,
    ) -> Result<Value, ToolError> {
        let apply = !req.dry_run;
        req.dry_run = true;
        let env = keiri_xlsx::PatchEnv::new(ctx.policy.clone());
        let res = keiri_xlsx::patch(&req, &env)
            .map_err(|e| ToolError::from_code(e.code(), e.to_string()))?;
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

/// `apply_patch` (keiri-diff's definition, word for word): computes the patched file in
/// memory with the native applier and proposes it; nothing is written before approval.
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
    fn read_only(&self) -> bool {
        false
    }
    fn call(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let input = keiri_diff::ApplyPatchInput::from_json(args)
            .map_err(|e| ToolError::from_code(e.code(), e.to_string()))?;
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
