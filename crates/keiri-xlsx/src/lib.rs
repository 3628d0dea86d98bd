//! The workbook patch engine: applies an ordered list of cell and sheet operations to an
//! `.xlsx`/`.xlsm` workbook, atomically, and returns a per-cell before/after diff, the inverse
//! operations that undo it, and the formula problems found by evaluating the result. The
//! request and response are the `exstruct_patch` tool contract ([`PatchRequest`],
//! [`PatchResponse`]), so existing clients of that tool work unchanged.
//!
//! # How a patch works
//!
//! The workbook is edited *inside its zip package*, not loaded into an object model and
//! re-serialised. Only these parts are ever rewritten:
//!
//! * the worksheets an op writes to — and inside them only the touched `<row>` elements and the
//!   `<dimension>`; every other byte of the part is kept;
//! * `workbook.xml` (full calculation on load, and the sheet list when sheets are added or
//!   deleted), `workbook.xml.rels` and `[Content_Types].xml`;
//! * `calcChain.xml` is dropped, because it would list stale formula cells (only when values,
//!   formulas or sheets change: styling and structure ops leave it and `workbook.xml` alone);
//! * `styles.xml`, only by the styling ops and by date writes, and only by appending a number
//!   format, cell format, font, fill or border when no identical one exists (see the `styles`
//!   module and [`design`]).
//! * for `apply_table_style`, the sheet's relationship part (spliced, or created) and a new
//!   `tables/tableN.xml` part with its content-type override.
//!
//! Every other entry — charts, drawings and shapes, pivot caches, images, VBA projects, custom
//! XML, themes, comments, printer settings, `sharedStrings.xml`, `docProps` — is copied
//! with its compressed bytes untouched. New text is written as inline strings so the shared
//! string table never changes. Defined names, data validation and conditional formats live in
//! parts or elements we do not rewrite, and array and shared formulas keep working: array
//! ranges cannot be written into, and when the master cell of a shared formula is overwritten
//! the other cells of the group get their own explicit formulas first.
//!
//! This approach was chosen over re-serialising libraries because those change or lose parts
//! the patch never touched: umya-spreadsheet re-writes the whole package and is known to drop
//! array formulas, pivot caches and some charts (and needs about 1 GB for a 110k-cell sheet);
//! openpyxl (ExStruct's non-COM backend) lost 31 of 88 untouched parts in our measurement of 13
//! real workbooks. The cost of editing XML directly is that this crate handles SpreadsheetML
//! details itself (shared formulas, inline strings, `_xHHHH_` escapes, implicit row and cell
//! numbers, strict-conformance namespaces).
//!
//! # Semantics
//!
//! Ops apply in order; the file is saved only if all succeed, with a temp file in the target
//! directory (`.<name>.keiri-tmp-<random>`), fsync and rename ([`keiri_fs`]); a real run first
//! sweeps that directory of temp files a killed writer left. An overwrite is a compare-and-swap:
//! the target's write lock ([`keiri_fs::lock`]: per path in this process, a lock file across
//! keiri processes) is held from reading the workbook to the rename, so concurrent patches of
//! one workbook queue up and each applies to the current content; patching in place re-reads
//! the workbook just before the rename and refuses with `CHANGE_CONFLICT` (nothing written) when
//! a writer that takes no lock (Excel) saved it meanwhile. An overwritten file keeps its
//! permissions. A bad path, cell, range or formula is an
//! [`Error`] (nothing touched); a missing sheet or an op that cannot apply is reported in
//! [`PatchResponse::error`] with its `op_index`. `dry_run` reads only. See [`patch`] for the
//! output path and conflict rules and [`PatchOp`] for each op. In process, [`apply`] also says
//! what became of the output file ([`PatchOutcome`]: written, skipped, a dry run, failed).
//!
//! The preflight check evaluates the patched workbook with IronCalc (see the `engine` module)
//! and compares it with the original: only problems the patch introduces are errors (which
//! block the save); problems already present are warnings.
//!
//! Dates are dates: a value `{"kind": "date", "value": "2025-03-31"}` (or `datetime`, or text
//! that is exactly a real `YYYY-MM-DD` date) is written as an Excel date serial in the
//! workbook's date system (1900 with its phantom 1900-02-29, or 1904), and a cell whose format
//! has no number format gets `yyyy/mm/dd` (`yyyy/mm/dd hh:mm:ss`); a cell that has one keeps
//! it. `{"kind": "text", ...}` keeps a date-like string text. The inverse ops restore the
//! cell's old style (`restore_design_snapshot`) and write date-like text back as text; the
//! number and cell formats appended to `styles.xml` stay (unused), like those of the styling
//! ops. See [`CellValue`] and [`TypedValue`].
//!
//! # Beside the patch
//!
//! The tools an `exstruct_patch` client uses around it: [`list_ops`] / [`describe_op`] (each
//! op's fields, constraints, example and aliases, generated from the op definitions),
//! [`patch_workbook_items_yaml`] (the same, as the `operations` items of the
//! `excel.patch_workbook` block spec; a test keeps the spec current),
//! [`validate_input`] (can the workbook be read, and would these ops apply — a dry run), the
//! [`limits`], three reads of a workbook's cells ([`read_range`], [`read_cells`],
//! [`read_formulas`]) that open the package read-only, and [`free_sheet_name`] (the name a new
//! sheet can take: `name`, `name_2`, …).
//!
//! # What this crate must not do
//!
//! It never writes outside the path policy's roots, never writes anything on a dry run, never
//! leaves a partial file, never changes a part an op did not need, and never panics or hangs on
//! untrusted input (parts are size-limited, formulas depth-limited, the engine time-limited).
//! It does not know about plans, the API or transports.
//!
//! # Dependencies
//!
//! * `zip` — reads the package and copies unchanged entries raw (`raw_copy_file`); built with
//!   the pure-Rust zlib-rs deflate so no C toolchain is needed.
//! * `quick-xml` — a streaming reader that reports byte positions, which is what splicing needs.
//! * `ironcalc_base` — a pure-Rust spreadsheet engine for the preflight evaluation; it builds
//!   from crates.io without native code and evaluates Excel's functions, array formulas and
//!   circular-reference detection.
//! * `unicode-normalization` — NFC for `*_if` comparisons and sheet-name matching.
//! * `schemars` — JSON Schemas of the contract types for the MCP server.
//! * `keiri-fs` — atomic writes and the path policy shared by the workspace.

mod a1;
mod block_spec;
mod book;
mod contract;
mod dates;
pub mod design;
mod engine;
mod error;
pub mod extract;
mod formula;
mod guard;
mod make;
mod op_schema;
mod package;
mod patch;
mod read;
mod row_ops;
mod sheet;
mod stop;
mod styles;
mod validate;
mod xml;

pub use a1::{Area, CellRef, MAX_COL, MAX_ROW, column_name, column_number};
pub use block_spec::{GENERATED_BEGIN, GENERATED_END, patch_workbook_items_yaml};
pub use contract::{
    CellValue, DiffStatus, FormulaIssue, IssueCode, IssueLevel, OnConflict, OpKind, PatchDiffItem,
    PatchErrorDetail, PatchOp, PatchOutcome, PatchRequest, PatchResponse, PatchValue, Patched,
    TypedValue, ValueKind,
};
pub use error::Error;
pub use extract::{
    ExtractFormat, ExtractMode, ExtractOptions, ExtractRequest, ExtractResponse, WorkbookData,
    WorkbookMeta, read_workbook,
};
pub use formula::{Shifted, SyntaxError, shift as shift_formula};
pub use make::MakeRequest;
pub use op_schema::{OpSchema, SHEET_OR_TOP_LEVEL, describe_op, list_ops};
pub use patch::{PatchEnv, output_name};
pub use read::{
    CellReadItem, DEFAULT_MAX_CELLS, FindRowsRequest, FindRowsResponse, FormulaReadItem,
    MAX_ADDRESSES, MAX_CELLS_CEILING, ReadCellsRequest, ReadCellsResponse, ReadFormulasRequest,
    ReadFormulasResponse, ReadRangeRequest, ReadRangeResponse,
};
pub use row_ops::{AppendRows, CopySheet, CopyStyleFrom, OnMissing, RowValues, UpdateRowsByKey};
pub use stop::Stop;
pub use validate::{ValidateInputRequest, ValidateInputResponse};

/// The limits a caller may need to know (`exstruct_get_runtime_info`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Limits {
    /// Above this many ops a request gets ExStruct's warning suggesting batches.
    pub recommended_max_ops: usize,
    /// Cells one patch request may write.
    pub max_cells_per_request: u64,
    /// Cells one styling op may touch (ExStruct's cap).
    pub max_style_target_cells: u64,
    /// The largest workbook read, in bytes.
    pub max_workbook_bytes: u64,
    /// `max_cells` of the read tools when a request gives none, and its ceiling.
    pub read_default_max_cells: u64,
    pub read_max_cells_ceiling: u64,
    /// Addresses one `read_cells` call may name.
    pub read_max_addresses: usize,
}

/// This build's limits.
pub fn limits() -> Limits {
    Limits {
        recommended_max_ops: patch::SOFT_MAX_OPS,
        max_cells_per_request: patch::MAX_CELLS_PER_REQUEST,
        max_style_target_cells: design::MAX_STYLE_TARGET_CELLS,
        max_workbook_bytes: patch::MAX_INPUT_BYTES,
        read_default_max_cells: DEFAULT_MAX_CELLS,
        read_max_cells_ceiling: MAX_CELLS_CEILING,
        read_max_addresses: MAX_ADDRESSES,
    }
}

/// Checks a workbook and optionally a patch's ops against it, writing nothing
/// (`exstruct_validate_input`); a panic on a hostile workbook is `WORKBOOK_UNREADABLE`.
pub fn validate_input(
    req: &ValidateInputRequest,
    env: &PatchEnv,
) -> Result<ValidateInputResponse, Error> {
    guard::guarded(&req.xlsx_path, || validate::validate_input(req, env))
}

/// The rows of a sheet that hold each of a list of keys (`excel.lookup_rows`); read only.
pub fn find_rows(
    req: &FindRowsRequest,
    policy: &keiri_fs::PathPolicy,
) -> Result<FindRowsResponse, Error> {
    read::find_rows(req, policy)
}

/// Reads a rectangle of cells (`exstruct_read_range`).
pub fn read_range(
    req: &ReadRangeRequest,
    policy: &keiri_fs::PathPolicy,
) -> Result<ReadRangeResponse, Error> {
    read::read_range(req, policy)
}

/// Reads cells by address (`exstruct_read_cells`).
pub fn read_cells(
    req: &ReadCellsRequest,
    policy: &keiri_fs::PathPolicy,
) -> Result<ReadCellsResponse, Error> {
    read::read_cells(req, policy)
}

/// Lists a sheet's formulas (`exstruct_read_formulas`).
pub fn read_formulas(
    req: &ReadFormulasRequest,
    policy: &keiri_fs::PathPolicy,
) -> Result<ReadFormulasResponse, Error> {
    read::read_formulas(req, policy)
}

/// The first name a new sheet can take in the workbook at `xlsx_path`: `wanted`, else
/// `wanted_2`, `wanted_3`, … `wanted_99` — the first that Excel accepts as a name and that no
/// sheet of the workbook has (ignoring case, as Excel does); `None` when none is free. Reads
/// the workbook's sheet list only, with a patch's path, extension and size checks.
pub fn free_sheet_name(
    xlsx_path: &str,
    wanted: &str,
    policy: &keiri_fs::PathPolicy,
) -> Result<Option<String>, Error> {
    guard::guarded(xlsx_path, || {
        let (_, book) = patch::open_for_reading(xlsx_path, policy)?;
        Ok((1..100)
            .map(|n| match n {
                1 => wanted.to_string(),
                n => format!("{wanted}_{n}"),
            })
            .find(|name| book::check_sheet_name(name).is_ok() && book.find_sheet(name).is_none()))
    })
}

/// Applies a patch request; see the crate documentation for the semantics and
/// [`PatchEnv`] for the roots and defaults. A panic while processing the workbook is
/// `WORKBOOK_UNREADABLE`, never the end of the process.
pub fn patch(req: &PatchRequest, env: &PatchEnv) -> Result<PatchResponse, Error> {
    apply(req, env).map(|patched| patched.response)
}

/// [`patch`], saying what it did with the output file ([`PatchOutcome`]): the in-process
/// callers (the run's output blocks) branch on it instead of guessing from the file system.
pub fn apply(req: &PatchRequest, env: &PatchEnv) -> Result<Patched, Error> {
    guard::guarded(&req.xlsx_path, || patch::patch(req, env))
}

/// Creates a workbook and applies the request's ops to it in one call (`exstruct_make`): a
/// minimal generated workbook patched into `out_path` by [`patch`], so the response and the
/// rules are a patch's. A panic is `WORKBOOK_UNREADABLE`, never the end of the process.
pub fn workbook_make(req: &MakeRequest, env: &PatchEnv) -> Result<PatchResponse, Error> {
    guard::guarded(&req.out_path, || make::make(req, env))
}

/// Runs an extraction request (`exstruct_extract`): reads the workbook's structure from its
/// OOXML parts and writes it as JSON or TOON; see the [`extract`] module.
pub fn workbook_extract(req: &ExtractRequest, env: &PatchEnv) -> Result<ExtractResponse, Error> {
    extract::extract(req, env)
}
