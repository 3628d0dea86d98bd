//! The workbook patch use case (`keiri-xlsx`): apply `exstruct_patch` operations to an
//! .xlsx/.xlsm workbook with a per-cell diff, inverse ops and an optional formula check.
//!
//! The request and response types are the tool contract and live in `keiri-xlsx`, so the MCP
//! server derives its schemas from the same types; front-ends reach them through [`xlsx`].
//! A request error (bad path, cell, range or formula, unreadable workbook) is an [`ApiError`];
//! an op that cannot apply is data: `PatchResponse.error` with its `op_index`.
//!
//! An overwrite is a compare-and-swap (see `keiri-xlsx`): concurrent patches of one workbook
//! queue on its write lock and each applies to the current content; a save by a writer outside
//! keiri while patching in place is `CHANGE_CONFLICT`, never a reported write that is lost.

use crate::{ApiError, Context, ErrorCode};

/// Request and response types of `workbook_patch` and the workbook tools beside it.
pub mod xlsx {
    pub use keiri_xlsx::{
        CellReadItem, CellValue, DiffStatus, FormulaIssue, FormulaReadItem, IssueCode, IssueLevel,
        Limits, OnConflict, OpKind, OpSchema, PatchDiffItem, PatchErrorDetail, PatchOp,
        PatchRequest, PatchResponse, PatchValue, ReadCellsRequest, ReadCellsResponse,
        ReadFormulasRequest, ReadFormulasResponse, ReadRangeRequest, ReadRangeResponse,
        ValidateInputRequest, ValidateInputResponse, ValueKind,
    };
    pub use keiri_xlsx::{
        ExtractFormat, ExtractMode, ExtractOptions, ExtractRequest, ExtractResponse, MakeRequest,
        WorkbookMeta,
    };
}

use xlsx::{PatchRequest, PatchResponse};

/// The cells around a change a preview grid draws (keiri-docs builds them).
pub use keiri_docs::{ContextCell, SheetContext};

/// Where a workbook call runs: the request's paths inside the context's roots, its
/// `--on-conflict` default, and stopped (writing nothing) when the caller goes away.
fn patch_env(ctx: &Context) -> keiri_xlsx::PatchEnv {
    let mut env = keiri_xlsx::PatchEnv::new(ctx.path_policy());
    env.on_conflict_default = ctx.on_conflict_default;
    let cancel = ctx.cancel.clone();
    env.stop = keiri_xlsx::Stop::when(move || cancel.is_cancelled());
    env
}

fn api_error(err: keiri_xlsx::Error) -> ApiError {
    ApiError::lower(&err)
}

/// Applies the ops of `req` to its workbook (or, with `dry_run`, only reports what would
/// change). `ctx.on_conflict_default` applies when the request leaves `on_conflict` out.
pub fn workbook_patch(ctx: &Context, req: PatchRequest) -> Result<PatchResponse, ApiError> {
    let env = patch_env(ctx);
    keiri_xlsx::patch(&req, &env).map_err(api_error)
}
crate::surface::function!(plain workbook_patch(crate::xlsx::PatchRequest) -> crate::xlsx::PatchResponse);

/// `workbook_list_ops` takes no arguments.
#[derive(Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListOpsRequest {}

/// One op in the list: its name and what it does (ExStruct's `OpSummary`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct OpSummary {
    pub op: String,
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct ListOpsResponse {
    pub ops: Vec<OpSummary>,
}

/// Every patch op with a one-line description, generated from the op definitions.
pub fn workbook_list_ops(
    _ctx: &Context,
    _req: ListOpsRequest,
) -> Result<ListOpsResponse, ApiError> {
    Ok(ListOpsResponse {
        ops: keiri_xlsx::list_ops()
            .into_iter()
            .map(|o| OpSummary {
                op: o.op,
                description: o.description,
            })
            .collect(),
    })
}
crate::surface::tool!(plain workbook_list_ops(ListOpsRequest) -> ListOpsResponse {
    name: "exstruct_list_ops",
    title: "List the workbook patch ops",
    read_only: true,
    fronts: keiri_agent::Fronts::MCP,
    output_schema: true,
    description: EXSTRUCT_LIST_OPS,
});

const EXSTRUCT_LIST_OPS: &str = "\
List every exstruct_patch op with a one-line description: {ops: [{op, description}]}. The list \
is generated from the op definitions the patch parser uses.";

#[derive(Debug, Clone, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DescribeOpRequest {
    /// An op name from `workbook_list_ops`, e.g. `set_fill_color`.
    pub op: String,
}

/// One op's required and optional fields, constraints, example and aliases (plus its JSON
/// Schema); an unknown op is `INVALID_REQUEST` naming the known ones.
pub fn workbook_describe_op(
    _ctx: &Context,
    req: DescribeOpRequest,
) -> Result<xlsx::OpSchema, ApiError> {
    keiri_xlsx::describe_op(req.op.trim()).ok_or_else(|| {
        let known: Vec<&str> = xlsx::OpKind::ALL.iter().map(|k| k.as_str()).collect();
        ApiError::new(
            ErrorCode::InvalidRequest,
            format!("unknown op {:?}; the ops are: {}", req.op, known.join(", ")),
        )
    })
}
crate::surface::tool!(plain workbook_describe_op(DescribeOpRequest) -> xlsx::OpSchema {
    name: "exstruct_describe_op",
    title: "Describe a workbook patch op",
    read_only: true,
    fronts: keiri_agent::Fronts::MCP,
    output_schema: true,
    description: EXSTRUCT_DESCRIBE_OP,
});

const EXSTRUCT_DESCRIBE_OP: &str = "\
Describe one exstruct_patch op (op: its name): required and optional fields (sheet may come \
from the request's top-level sheet), constraints, a minimal example that passes the request \
checks, field aliases (e.g. color -> fill_color), and the op's JSON Schema. An unknown op is an \
INVALID_REQUEST error naming the known ones.";

/// Whether a workbook can be read and, with `ops`, whether they would apply — a dry run that
/// writes nothing. Problems are listed in the answer; a path outside the roots is an error.
pub fn workbook_validate_input(
    ctx: &Context,
    req: xlsx::ValidateInputRequest,
) -> Result<xlsx::ValidateInputResponse, ApiError> {
    let env = patch_env(ctx);
    keiri_xlsx::validate_input(&req, &env).map_err(api_error)
}
crate::surface::tool!(plain workbook_validate_input(xlsx::ValidateInputRequest) -> xlsx::ValidateInputResponse {
    name: "exstruct_validate_input",
    title: "Check a workbook and patch ops",
    read_only: true,
    fronts: keiri_agent::Fronts::MCP,
    output_schema: true,
    description: EXSTRUCT_VALIDATE_INPUT,
});

const EXSTRUCT_VALIDATE_INPUT: &str = "\
Check that a workbook (xlsx_path) can be read: is_readable, warnings, errors, plus its \
sheet_names. Give ops (and optionally the top-level sheet and auto_formula) to also check a \
patch request against the workbook exactly as exstruct_patch would, as a dry run: nothing is \
written. valid is true when the file is readable and every op would apply; error_codes gives \
each error's stable code and patch_error the op that would fail.";

/// Reads a rectangle of a workbook's cells (values, cached results, formulas).
pub fn workbook_read_range(
    ctx: &Context,
    req: xlsx::ReadRangeRequest,
) -> Result<xlsx::ReadRangeResponse, ApiError> {
    keiri_xlsx::read_range(&req, &ctx.path_policy()).map_err(api_error)
}
crate::surface::tool!(plain workbook_read_range(xlsx::ReadRangeRequest) -> xlsx::ReadRangeResponse {
    name: "exstruct_read_range",
    title: "Read a range of workbook cells",
    read_only: true,
    fronts: keiri_agent::Fronts::MCP,
    output_schema: true,
    description: EXSTRUCT_READ_RANGE,
});

const EXSTRUCT_READ_RANGE: &str = "\
Read a rectangle of cells straight from a workbook (xlsx_path, sheet, range such as A1:G10): \
each cell's value (for a formula, the value cached in the file) and, with include_formulas, \
its formula. include_empty (default true) lists empty cells too. A range larger than \
max_cells (default 10000) is a LIMIT_EXCEEDED error; an unknown sheet SHEET_NOT_FOUND; a bad \
range INVALID_REQUEST. sheet may be left out when the workbook has one worksheet.";

/// Reads a workbook's cells by address.
pub fn workbook_read_cells(
    ctx: &Context,
    req: xlsx::ReadCellsRequest,
) -> Result<xlsx::ReadCellsResponse, ApiError> {
    keiri_xlsx::read_cells(&req, &ctx.path_policy()).map_err(api_error)
}
crate::surface::tool!(plain workbook_read_cells(xlsx::ReadCellsRequest) -> xlsx::ReadCellsResponse {
    name: "exstruct_read_cells",
    title: "Read workbook cells by address",
    read_only: true,
    fronts: keiri_agent::Fronts::MCP,
    output_schema: true,
    description: EXSTRUCT_READ_CELLS,
});

const EXSTRUCT_READ_CELLS: &str = "\
Read specific cells straight from a workbook (xlsx_path, sheet, addresses such as [\"J98\", \
\"J124\"]): each one's value and (by default) its formula, in the order given; missing_cells \
lists the addresses that hold nothing.";

/// Lists a sheet's formulas.
pub fn workbook_read_formulas(
    ctx: &Context,
    req: xlsx::ReadFormulasRequest,
) -> Result<xlsx::ReadFormulasResponse, ApiError> {
    keiri_xlsx::read_formulas(&req, &ctx.path_policy()).map_err(api_error)
}
crate::surface::tool!(plain workbook_read_formulas(xlsx::ReadFormulasRequest) -> xlsx::ReadFormulasResponse {
    name: "exstruct_read_formulas",
    title: "List a sheet's formulas",
    read_only: true,
    fronts: keiri_agent::Fronts::MCP,
    output_schema: true,
    description: EXSTRUCT_READ_FORMULAS,
});

const EXSTRUCT_READ_FORMULAS: &str = "\
List the formulas of a sheet straight from a workbook (xlsx_path, sheet, optional range), row \
by row, each with its cell and, with include_values, the value cached in the file. At most \
max_cells (default 10000) formulas are listed; truncated says when more matched.";

/// `runtime_info` takes no arguments.
#[derive(Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuntimeInfoRequest {}

/// How a relative and an absolute path are written for this server.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct PathExamples {
    pub relative: String,
    pub absolute: String,
}

/// ExStruct's runtime fields (`root`, `cwd`, `platform`, `path_examples`), then ours.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct RuntimeInfo {
    /// The first allowed root: relative paths resolve against it.
    pub root: String,
    pub cwd: String,
    /// `linux`, `macos`, `windows`, …
    pub platform: String,
    pub path_examples: PathExamples,
    /// Every allowed root.
    pub roots: Vec<String>,
    /// This build's version.
    pub version: String,
    /// The patch ops this build applies, in `workbook_list_ops` order.
    pub supported_ops: Vec<String>,
    /// `on_conflict` for a patch request that gives none (`rename` unless configured).
    pub on_conflict_default: xlsx::OnConflict,
    pub limits: xlsx::Limits,
}

/// Where paths resolve, the version, the supported ops and the limits.
pub fn runtime_info(ctx: &Context, _req: RuntimeInfoRequest) -> Result<RuntimeInfo, ApiError> {
    let policy = ctx.path_policy();
    let roots: Vec<String> = policy
        .roots()
        .iter()
        .map(|r| r.display().to_string())
        .collect();
    let root = roots.first().cloned().unwrap_or_default();
    let absolute = std::path::Path::new(&root)
        .join("book.xlsx")
        .display()
        .to_string();
    Ok(RuntimeInfo {
        cwd: std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
        platform: std::env::consts::OS.to_string(),
        path_examples: PathExamples {
            relative: "book.xlsx".to_string(),
            absolute,
        },
        root,
        roots,
        version: env!("CARGO_PKG_VERSION").to_string(),
        supported_ops: xlsx::OpKind::ALL
            .iter()
            .map(|k| k.as_str().to_string())
            .collect(),
        on_conflict_default: ctx
            .on_conflict_default
            .unwrap_or(xlsx::OnConflict::FALLBACK),
        limits: keiri_xlsx::limits(),
    })
}
crate::surface::tool!(plain runtime_info(RuntimeInfoRequest) -> RuntimeInfo {
    name: "exstruct_get_runtime_info",
    title: "Show the server's roots, version, ops and limits",
    read_only: true,
    fronts: keiri_agent::Fronts::MCP,
    output_schema: true,
    description: EXSTRUCT_GET_RUNTIME_INFO,
});

const EXSTRUCT_GET_RUNTIME_INFO: &str = "\
Show how this server resolves paths and what it supports: root (relative paths resolve \
against it), cwd, platform, path_examples, every allowed root, the version, the supported \
patch ops, the default on_conflict and the limits (recommended ops per request, cells per \
request and per styling op, workbook size, read max_cells).";

/// Extracts a workbook's structure (`exstruct_extract`): cells, merged ranges, print areas,
/// tables, charts, shapes, connectors and SmartArt read from its OOXML parts, written as JSON or
/// TOON next to it (or to `out_dir`/`out_name`). `ctx.on_conflict_default` applies when the
/// request leaves `on_conflict` out.
pub fn workbook_extract(
    ctx: &Context,
    req: xlsx::ExtractRequest,
) -> Result<xlsx::ExtractResponse, ApiError> {
    let env = patch_env(ctx);
    keiri_xlsx::workbook_extract(&req, &env).map_err(api_error)
}
crate::surface::tool!(plain workbook_extract(xlsx::ExtractRequest) -> xlsx::ExtractResponse {
    name: "exstruct_extract",
    title: "Extract an Excel workbook's structure",
    read_only: false,
    fronts: keiri_agent::Fronts::MCP,
    output_schema: true,
    description: EXSTRUCT_EXTRACT,
});

const EXSTRUCT_EXTRACT: &str = "\
Read an Excel workbook's structure (.xlsx/.xlsm) straight from its file, no Excel needed, and \
write it as JSON or TOON (format: json | toon) next to the workbook ({stem}.json) unless \
out_dir/out_name say otherwise. mode: light (cells, table candidates, print areas), standard \
(the default: also shapes with text, connectors with begin_id/end_id, SmartArt node trees, \
charts with type, title and series ranges, merged ranges), verbose (also every shape with its \
size, hyperlinks, formulas_map). Per sheet: rows [{r, c: {A: value}}] (options.alpha_col=false \
for 0-based numeric keys), print_areas and merged_cells with 0-based columns. options: pretty, \
indent, alpha_col, max_cells (cells read, 1,000,000 by default). on_conflict (overwrite | skip \
| rename) decides what happens when the output exists; when left out, the server's \
--on-conflict default applies. Returns out_path, workbook_meta {sheet_names, sheet_count}, \
warnings and engine.";

/// Creates a workbook and applies `req.ops` to it in one call (`exstruct_make`); the response
/// is a patch's. `ctx.on_conflict_default` applies when the request leaves `on_conflict` out.
pub fn workbook_make(ctx: &Context, req: xlsx::MakeRequest) -> Result<PatchResponse, ApiError> {
    let env = patch_env(ctx);
    keiri_xlsx::workbook_make(&req, &env).map_err(api_error)
}
crate::surface::tool!(plain workbook_make(xlsx::MakeRequest) -> PatchResponse {
    name: "exstruct_make",
    title: "Create an Excel workbook",
    read_only: false,
    fronts: keiri_agent::Fronts::MCP,
    output_schema: true,
    description: EXSTRUCT_MAKE,
});

const EXSTRUCT_MAKE: &str = "\
Create a new Excel workbook (.xlsx/.xlsm) at out_path and apply ops to it in one call; ops \
are exstruct_patch's (add_sheet, set_value, set_formula, set_range_values, styling, tables, \
…) and may be left out. The first sheet is Sheet1, or the top-level sheet's name unless an \
add_sheet op creates that sheet; sheet is also the default of ops that name none. Takes \
on_conflict, auto_formula, dry_run, return_inverse_ops and preflight_formula_check like \
exstruct_patch and returns the same fields (out_path, patch_diff, warnings, error, \
inverse_ops, formula_issues).";

/// Compare two workbooks cell by cell (or list every cell of a new one).
#[derive(Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkbookCompareRequest {
    /// The workbook as it was; left out for a workbook that did not exist.
    #[serde(default)]
    pub before: Option<String>,
    /// The workbook as it is now.
    pub after: String,
}

/// The cells that differ, in the shape of a patch's diff (`set_value` per changed cell,
/// `add_sheet`/`delete_sheet` per sheet), so the UI shows it in the same before/after grid.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct WorkbookCompareResponse {
    pub before: Option<String>,
    pub after: String,
    pub patch_diff: Vec<xlsx::PatchDiffItem>,
    /// A workbook had more cells than are compared ([`MAX_COMPARE_CELLS`]).
    pub truncated: bool,
    /// The cells of `after` around the changes (`grid_context`), for the grid's neighbours.
    #[serde(default)]
    pub context: Vec<SheetContext>,
}

/// Cells read from each workbook of a comparison.
pub const MAX_COMPARE_CELLS: usize = 200_000;

/// Reads a workbook's cells for a comparison.
fn cells(path: &std::path::Path) -> Result<keiri_docs::WorkbookCells, ApiError> {
    let bytes = std::fs::read(path).map_err(|e| {
        let code = if e.kind() == std::io::ErrorKind::NotFound {
            ErrorCode::NotFound
        } else {
            ErrorCode::IoError
        };
        ApiError::new(code, format!("reading {}: {e}", path.display()))
    })?;
    keiri_docs::workbook_cells(&bytes, MAX_COMPARE_CELLS)
        .map_err(|e| ApiError::new(ErrorCode::WorkbookUnreadable, e.to_string()))
}

/// Compares two workbooks inside the allowed roots cell by cell (values; formulas by the values
/// their writer cached).
pub fn workbook_compare(
    ctx: &Context,
    req: WorkbookCompareRequest,
) -> Result<WorkbookCompareResponse, ApiError> {
    let policy = ctx.path_policy();
    let resolve = |raw: &str| {
        policy
            .resolve_existing(raw)
            .map_err(|e| ApiError::lower(&e))
    };
    let after_path = resolve(&req.after)?;
    let before = match &req.before {
        Some(raw) => Some(cells(&resolve(raw)?)?),
        None => None,
    };
    let after = cells(&after_path)?;
    let truncated = after.truncated || before.as_ref().is_some_and(|b| b.truncated);
    let patch_diff = keiri_docs::compare_cells(before.as_ref(), &after);
    Ok(WorkbookCompareResponse {
        context: keiri_docs::grid_context(&after_path, &patch_diff),
        patch_diff,
        before: req.before,
        after: req.after,
        truncated,
    })
}
crate::surface::function!(plain workbook_compare(crate::WorkbookCompareRequest) -> crate::WorkbookCompareResponse);
