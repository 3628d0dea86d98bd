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

/// Whether a workbook can be read and, with `ops`, whether they would apply — a dry run that
/// writes nothing. Problems are listed in the answer; a path outside the roots is an error.
pub fn workbook_validate_input(
    ctx: &Context,
    req: xlsx::ValidateInputRequest,
) -> Result<xlsx::ValidateInputResponse, ApiError> {
    let env = patch_env(ctx);
    keiri_xlsx::validate_input(&req, &env).map_err(api_error)
}

/// Reads a rectangle of a workbook's cells (values, cached results, formulas).
pub fn workbook_read_range(
    ctx: &Context,
    req: xlsx::ReadRangeRequest,
) -> Result<xlsx::ReadRangeResponse, ApiError> {
    keiri_xlsx::read_range(&req, &ctx.path_policy()).map_err(api_error)
}

/// Reads a workbook's cells by address.
pub fn workbook_read_cells(
    ctx: &Context,
    req: xlsx::ReadCellsRequest,
) -> Result<xlsx::ReadCellsResponse, ApiError> {
    keiri_xlsx::read_cells(&req, &ctx.path_policy()).map_err(api_error)
}

/// Lists a sheet's formulas.
pub fn workbook_read_formulas(
    ctx: &Context,
    req: xlsx::ReadFormulasRequest,
) -> Result<xlsx::ReadFormulasResponse, ApiError> {
    keiri_xlsx::read_formulas(&req, &ctx.path_policy()).map_err(api_error)
}

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

/// Creates a workbook and applies `req.ops` to it in one call (`exstruct_make`); the response
/// is a patch's. `ctx.on_conflict_default` applies when the request leaves `on_conflict` out.
pub fn workbook_make(ctx: &Context, req: xlsx::MakeRequest) -> Result<PatchResponse, ApiError> {
    let env = patch_env(ctx);
    keiri_xlsx::workbook_make(&req, &env).map_err(api_error)
}

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

/// A cell around a change as the workbook holds it, so a preview grid draws the real header
/// labels and neighbouring amounts instead of blanks: its value (for a formula, the value its
/// writer cached, `None` when none was cached) and its formula (`=B2-B3`), if any.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ContextCell {
    /// `B4`.
    pub cell: String,
    pub value: Option<xlsx::CellValue>,
    pub formula: Option<String>,
}

/// The non-empty cells of one sheet inside the window a preview grid draws around its changes.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SheetContext {
    pub sheet: String,
    pub cells: Vec<ContextCell>,
}

/// The window a preview grid draws around a sheet's changed cells: this many rows and columns
/// either side, at most [`GRID_MAX_ROWS`] × [`GRID_MAX_COLS`] from the first change. The UI
/// (`ui/src/workbookGrid.ts`, `DEFAULT_GRID`) draws the same window, so every cell it shows
/// that the workbook has is here.
pub const GRID_CONTEXT: u32 = 1;
pub const GRID_MAX_ROWS: u32 = 40;
pub const GRID_MAX_COLS: u32 = 16;

/// The windows (0-based, inclusive) around the changed cells of `diff`, one per sheet, in the
/// order sheets first appear.
fn grid_windows(diff: &[xlsx::PatchDiffItem]) -> Vec<keiri_docs::CellWindow> {
    let mut spans: Vec<(String, keiri_xlsx::CellRef, keiri_xlsx::CellRef)> = Vec::new();
    for item in diff {
        let Some(cell) = item.cell.as_deref().and_then(keiri_xlsx::CellRef::parse) else {
            continue;
        };
        match spans.iter_mut().find(|(sheet, _, _)| *sheet == item.sheet) {
            Some((_, low, high)) => {
                low.row = low.row.min(cell.row);
                low.col = low.col.min(cell.col);
                high.row = high.row.max(cell.row);
                high.col = high.col.max(cell.col);
            }
            None => spans.push((item.sheet.clone(), cell, cell)),
        }
    }
    spans
        .into_iter()
        .map(|(sheet, low, high)| {
            // 1-based bounds as the UI computes them, then 0-based for the reader.
            let first_row = low.row.saturating_sub(GRID_CONTEXT).max(1);
            let first_col = low.col.saturating_sub(GRID_CONTEXT).max(1);
            let last_row = (high.row + GRID_CONTEXT)
                .min(first_row + GRID_MAX_ROWS - 1)
                .min(keiri_xlsx::MAX_ROW);
            let last_col = (high.col + GRID_CONTEXT)
                .min(first_col + GRID_MAX_COLS - 1)
                .min(keiri_xlsx::MAX_COL);
            keiri_docs::CellWindow {
                sheet,
                rows: (first_row - 1, last_row - 1),
                cols: (first_col - 1, last_col - 1),
            }
        })
        .collect()
}

fn cell_value(value: &keiri_docs::CellData) -> xlsx::CellValue {
    match value {
        keiri_docs::CellData::Int(i) => xlsx::CellValue::Int(*i),
        keiri_docs::CellData::Float(f) => xlsx::CellValue::Float(*f),
        keiri_docs::CellData::Bool(b) => xlsx::CellValue::Bool(*b),
        keiri_docs::CellData::Text(t) => xlsx::CellValue::Text(t.clone()),
    }
}

/// The cells of the workbook at `path` inside the windows a preview grid draws around the
/// changes of `diff`. The context only decorates a preview, so a workbook that cannot be read
/// (a new one, or one the patch itself reported) gives none rather than failing the preview.
pub(crate) fn grid_context(
    path: &std::path::Path,
    diff: &[xlsx::PatchDiffItem],
) -> Vec<SheetContext> {
    let windows = grid_windows(diff);
    if windows.is_empty() {
        return Vec::new();
    }
    let Ok(bytes) = std::fs::read(path) else {
        return Vec::new();
    };
    let Ok(sheets) = keiri_docs::workbook_window(&bytes, &windows) else {
        return Vec::new();
    };
    sheets
        .into_iter()
        .filter(|(_, cells)| !cells.is_empty())
        .map(|(sheet, cells)| SheetContext {
            sheet,
            cells: cells
                .into_iter()
                .map(|c| ContextCell {
                    cell: format!("{}{}", keiri_xlsx::column_name(c.col + 1), c.row + 1),
                    value: c.value.as_ref().map(cell_value),
                    formula: c.formula.map(|f| format!("={f}")),
                })
                .collect(),
        })
        .collect()
}

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

fn patch_value(value: &keiri_docs::CellData) -> xlsx::PatchValue {
    xlsx::PatchValue {
        kind: xlsx::ValueKind::Value,
        value: Some(cell_value(value)),
    }
}

fn sheet_value(name: &str) -> Option<xlsx::PatchValue> {
    Some(xlsx::PatchValue {
        kind: xlsx::ValueKind::Sheet,
        value: Some(xlsx::CellValue::Text(name.to_string())),
    })
}

/// A cell's value before and after (`None`: empty).
type BeforeAfter<'a> = (
    Option<&'a keiri_docs::CellData>,
    Option<&'a keiri_docs::CellData>,
);

/// The cell-level difference between two workbooks' cells; `before: None` is a new workbook.
pub(crate) fn compare_cells(
    before: Option<&keiri_docs::WorkbookCells>,
    after: &keiri_docs::WorkbookCells,
) -> Vec<xlsx::PatchDiffItem> {
    use std::collections::BTreeMap;
    let empty = keiri_docs::WorkbookCells::default();
    let before_book = before.unwrap_or(&empty);
    let item = |op, sheet: &str, cell: Option<String>, before, after| xlsx::PatchDiffItem {
        op,
        op_index: 0,
        sheet: sheet.to_string(),
        cell,
        before,
        after,
        status: xlsx::DiffStatus::Applied,
        // A comparison of two files has no formula engine; a patch's own diff has the values.
        computed: None,
    };
    let mut diff = Vec::new();
    for (name, _) in &before_book.sheets {
        if !after.sheets.iter().any(|(n, _)| n == name) {
            diff.push(item(
                xlsx::OpKind::DeleteSheet,
                name,
                None,
                sheet_value(name),
                None,
            ));
        }
    }
    for (name, cells) in &after.sheets {
        let old = before_book.sheets.iter().find(|(n, _)| n == name);
        if old.is_none() {
            diff.push(item(
                xlsx::OpKind::AddSheet,
                name,
                None,
                None,
                sheet_value(name),
            ));
        }
        // Row-major order, so the grid and any list read top to bottom.
        let mut by_cell: BTreeMap<(u32, u32), BeforeAfter<'_>> = BTreeMap::new();
        for (r, c, v) in old.map(|(_, cells)| cells.as_slice()).unwrap_or_default() {
            by_cell.entry((*r, *c)).or_default().0 = Some(v);
        }
        for (r, c, v) in cells {
            by_cell.entry((*r, *c)).or_default().1 = Some(v);
        }
        for ((r, c), (was, now)) in by_cell {
            if was == now {
                continue;
            }
            let a1 = format!("{}{}", keiri_xlsx::column_name(c + 1), r + 1);
            diff.push(item(
                xlsx::OpKind::SetValue,
                name,
                Some(a1),
                was.map(patch_value),
                now.map(patch_value),
            ));
        }
    }
    diff
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
    let patch_diff = compare_cells(before.as_ref(), &after);
    Ok(WorkbookCompareResponse {
        context: grid_context(&after_path, &patch_diff),
        patch_diff,
        before: req.before,
        after: req.after,
        truncated,
    })
}
crate::surface::function!(plain workbook_compare(crate::WorkbookCompareRequest) -> crate::WorkbookCompareResponse);
