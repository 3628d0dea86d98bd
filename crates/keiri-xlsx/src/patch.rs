//! Running a request: validation, output path and conflict policy, applying ops in order with
//! per-cell diffs and inverse ops, the preflight check, and the atomic save.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use unicode_normalization::UnicodeNormalization;

use crate::a1::{self, Area, CellRef};
use crate::book::{self, Book, SheetKind};
use crate::contract::{
    CellValue, DiffStatus, FormulaIssue, IssueLevel, OnConflict, OpKind, PatchDiffItem,
    PatchErrorDetail, PatchOp, PatchOutcome, PatchRequest, PatchResponse, PatchValue, Patched,
    TypedValue, ValueKind,
};
use crate::error::Error;
use crate::formula;
use crate::package::Package;
use crate::sheet::Content;
use crate::stop::{CELLS_PER_CHECK, Stop};
use crate::styles::StyleChange;

mod copy;
mod design_ops;
mod fill;
mod paths;
mod preflight;
mod rows;
mod values;
mod writes;

pub use paths::output_name;
pub(crate) use paths::{check_extension, io_error, open_for_reading, resolve_input};

use preflight::preflight;
use values::{describe, inverse_value, matches_expected, patch_value, show};

/// ExStruct's soft limit: above it a request gets a warning suggesting batches.
pub(crate) const SOFT_MAX_OPS: usize = 200;

/// Excel's limit on the characters of a formula.
const MAX_FORMULA_CHARS: usize = 8_192;
/// Excel's limit on the characters of a cell's text.
const MAX_TEXT_CHARS: usize = 32_767;
/// Cells one request may write; keeps a single request from building an unbounded diff.
pub(crate) const MAX_CELLS_PER_REQUEST: u64 = 2_000_000;
/// Largest input file read into memory.
pub(crate) const MAX_INPUT_BYTES: u64 = 2 << 30;
/// At most this many formula issues are listed.
const MAX_ISSUES: usize = 1_000;

/// Where a patch runs: which paths it may touch and the configured defaults.
#[derive(Debug, Clone)]
pub struct PatchEnv {
    /// Paths from the request must resolve inside these roots.
    pub policy: keiri_fs::PathPolicy,
    /// Applies when the request leaves `on_conflict` out (the `--on-conflict` flag).
    pub on_conflict_default: Option<OnConflict>,
    /// How long the formula engine may run for a preflight check.
    pub engine_timeout: Duration,
    /// Set when the caller goes away: the patch ends with `CANCELLED` and writes nothing
    /// (see [`Stop`]).
    pub stop: Stop,
}

impl PatchEnv {
    pub fn new(policy: keiri_fs::PathPolicy) -> PatchEnv {
        PatchEnv {
            policy,
            on_conflict_default: None,
            engine_timeout: Duration::from_secs(60),
            stop: Stop::default(),
        }
    }
}

/// An op after request validation: references parsed, formulas checked for `=`.
enum Planned {
    Cell {
        cell: CellRef,
        write: Write,
        expected: Option<Option<CellValue>>,
    },
    AddSheet,
    DeleteSheet,
    Range {
        area: Area,
        values: Vec<Vec<Option<CellValue>>>,
    },
    Fill {
        area: Area,
        base: CellRef,
        /// The formula as written for `base`; `None`: read from `base` when the op applies.
        body: Option<String>,
    },
    /// A styling or structure op; checked by `PatchOp::validate`, applied by `design_ops`.
    Design,
    /// `update_rows_by_key` or `append_rows`, applied by `rows`.
    Rows,
    /// `copy_sheet`, applied by `copy`.
    CopySheet,
}

/// What writing a value puts in the cell, what the diff shows, and the number format a date
/// needs.
struct Prepared {
    content: Content,
    after: PatchValue,
    number_format: Option<&'static str>,
}

enum Write {
    Value(Option<CellValue>),
    /// A formula body without the `=`, as the user wrote it.
    Formula(String),
}

fn request_error(i: usize, op: &PatchOp, message: impl std::fmt::Display) -> Error {
    Error::InvalidRequest(format!("ops[{i}] ({}): {message}", op.kind().as_str()))
}

fn parse_cell(i: usize, op: &PatchOp, field: &str, text: &str) -> Result<CellRef, Error> {
    CellRef::parse(text.trim()).ok_or_else(|| {
        request_error(
            i,
            op,
            format!("{field} {text:?} is not an A1 cell reference such as B3"),
        )
    })
}

fn parse_area(i: usize, op: &PatchOp, text: &str) -> Result<Area, Error> {
    Area::parse(text.trim()).ok_or_else(|| {
        request_error(
            i,
            op,
            format!("range {text:?} is not an A1 range such as A1:C3"),
        )
    })
}

fn formula_body(i: usize, op: &PatchOp, formula: &str) -> Result<String, Error> {
    let Some(body) = formula.strip_prefix('=') else {
        return Err(request_error(
            i,
            op,
            format!("formula {formula:?} must start with '='"),
        ));
    };
    if body.trim().is_empty() {
        return Err(request_error(i, op, "formula is empty after '='"));
    }
    if formula.chars().count() > MAX_FORMULA_CHARS {
        return Err(request_error(
            i,
            op,
            format!("formula is longer than Excel's {MAX_FORMULA_CHARS} characters"),
        ));
    }
    Ok(body.to_string())
}

/// The request checks of `ops` that need no workbook (references, formulas, shapes, design op
/// fields): what a patch refuses before opening the file.
pub(crate) fn check_ops(ops: &[PatchOp]) -> Result<(), Error> {
    plan(ops).map(|_| ())
}

fn plan(ops: &[PatchOp]) -> Result<Vec<Planned>, Error> {
    let mut cells: u64 = 0;
    let mut out = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        if op.sheet().trim().is_empty() {
            return Err(request_error(i, op, "sheet must not be empty"));
        }
        let planned = match op {
            PatchOp::UpdateRowsByKey(_) | PatchOp::AppendRows(_) | PatchOp::CopySheet(_) => {
                op.validate().map_err(|e| request_error(i, op, e))?;
                match op {
                    PatchOp::CopySheet(_) => Planned::CopySheet,
                    _ => Planned::Rows,
                }
            }
            _ if op.kind().is_design() => {
                op.validate().map_err(|e| request_error(i, op, e))?;
                Planned::Design
            }
            PatchOp::SetValue { cell, value, .. } => Planned::Cell {
                cell: parse_cell(i, op, "cell", cell)?,
                write: Write::Value(value.clone()),
                expected: None,
            },
            PatchOp::SetValueIf {
                cell,
                expected,
                value,
                ..
            } => Planned::Cell {
                cell: parse_cell(i, op, "cell", cell)?,
                write: Write::Value(value.clone()),
                expected: Some(expected.clone()),
            },
            PatchOp::SetFormula { cell, formula, .. } => Planned::Cell {
                cell: parse_cell(i, op, "cell", cell)?,
                write: Write::Formula(formula_body(i, op, formula)?),
                expected: None,
            },
            PatchOp::SetFormulaIf {
                cell,
                expected,
                formula,
                ..
            } => Planned::Cell {
                cell: parse_cell(i, op, "cell", cell)?,
                write: Write::Formula(formula_body(i, op, formula)?),
                expected: Some(expected.clone()),
            },
            PatchOp::AddSheet { .. } => Planned::AddSheet,
            PatchOp::DeleteSheet { .. } => Planned::DeleteSheet,
            PatchOp::SetRangeValues { range, values, .. } => {
                let area = parse_area(i, op, range)?;
                if values.is_empty() || values.iter().any(Vec::is_empty) {
                    return Err(request_error(
                        i,
                        op,
                        "values must be a non-empty list of non-empty rows",
                    ));
                }
                let width = values[0].len();
                if values.iter().any(|r| r.len() != width) {
                    return Err(request_error(
                        i,
                        op,
                        "values must be rectangular (every row the same length)",
                    ));
                }
                // The contract makes a shape that differs from the range a request error (the
                // request cannot be right for any workbook), not an op that failed to apply.
                if values.len() as u64 != u64::from(area.rows())
                    || width as u64 != u64::from(area.cols())
                {
                    return Err(request_error(
                        i,
                        op,
                        format!(
                            "values are {}×{width} (rows×columns) but the range {area} is {}×{}",
                            values.len(),
                            area.rows(),
                            area.cols()
                        ),
                    ));
                }
                Planned::Range {
                    area,
                    values: values.clone(),
                }
            }
            PatchOp::FillFormula {
                range,
                base_cell,
                formula,
                ..
            } => {
                let area = parse_area(i, op, range)?;
                Planned::Fill {
                    area,
                    base: parse_cell(i, op, "base_cell", base_cell)?,
                    body: match formula {
                        Some(f) => Some(formula_body(i, op, f)?),
                        None => None,
                    },
                }
            }
            _ => Planned::Design,
        };
        check_dates(i, op, &planned)?;
        cells += match &planned {
            // A fill to the sheet's edge is clipped to the content when it is applied
            // (`clip_to_content`), which checks what is left; its first row or column counts.
            Planned::Fill { area, .. } if to_last_row(area) || to_last_col(area) => {
                let mut first = *area;
                if to_last_row(area) {
                    first.last.row = first.first.row;
                }
                if to_last_col(area) {
                    first.last.col = first.first.col;
                }
                first.len()
            }
            Planned::Range { area, .. } | Planned::Fill { area, .. } => area.len(),
            Planned::Rows => match op {
                PatchOp::UpdateRowsByKey(o) => o.rows.iter().map(|r| r.len() as u64).sum(),
                PatchOp::AppendRows(o) => o.rows.iter().map(|r| r.len() as u64).sum(),
                _ => 1,
            },
            _ => 1,
        };
        if cells > MAX_CELLS_PER_REQUEST {
            return Err(Error::LimitExceeded(format!(
                "the ops write more than {MAX_CELLS_PER_REQUEST} cells; split the request"
            )));
        }
        out.push(planned);
    }
    Ok(out)
}

/// Whether a fill goes down to the sheet's last row (and is clipped there when applied).
fn to_last_row(area: &Area) -> bool {
    area.last.row == a1::MAX_ROW && area.first.row < a1::MAX_ROW
}

/// Whether a fill goes across to the sheet's last column (and is clipped there when applied).
fn to_last_col(area: &Area) -> bool {
    area.last.col == a1::MAX_COL && area.first.col < a1::MAX_COL
}

/// Refuses a `date`/`datetime` value whose text is not one (a request error: no workbook can
/// make it right). Whether the date exists in the workbook's date system is checked on apply.
fn check_dates(i: usize, op: &PatchOp, planned: &Planned) -> Result<(), Error> {
    let check = |v: &Option<CellValue>| match v.as_ref().and_then(values::date_write) {
        Some(Err(e)) => Err(request_error(i, op, e)),
        _ => Ok(()),
    };
    match planned {
        Planned::Cell {
            write, expected, ..
        } => {
            if let Write::Value(v) = write {
                check(v)?;
            }
            expected.as_ref().map_or(Ok(()), check)
        }
        Planned::Range { values, .. } => values.iter().flatten().try_for_each(check),
        _ => Ok(()),
    }
}

/// Applies a patch request. See the crate documentation for the semantics.
pub fn patch(req: &PatchRequest, env: &PatchEnv) -> Result<Patched, Error> {
    env.stop.check()?;
    check_extension(&req.xlsx_path)?;
    let resolved = req.with_default_sheet().map_err(Error::InvalidRequest)?;
    let req: &PatchRequest = &resolved;
    let planned = plan(&req.ops)?;
    let input = resolve_input(&req.xlsx_path, &env.policy)?;

    // Where the result goes.
    let name = output_name(&input, req.out_name.as_deref())?;
    let dir = match req.out_dir.as_deref() {
        Some(d) => env.policy.resolve_new(d)?,
        None => input.parent().map(Path::to_path_buf).unwrap_or_default(),
    };
    if dir.exists() && !dir.is_dir() {
        return Err(Error::InvalidRequest(format!(
            "out_dir {} is not a directory",
            dir.display()
        )));
    }
    let target = dir.join(&name);
    env.policy.check(&target)?;
    let conflict = req
        .on_conflict
        .or(env.on_conflict_default)
        .unwrap_or(OnConflict::FALLBACK);
    let exists = target.symlink_metadata().is_ok();
    let (stem, ext) = keiri_fs::stem_and_ext(Path::new(&name));
    let mut warnings = Vec::new();
    if req.ops.len() > SOFT_MAX_OPS {
        warnings.push(format!(
            "Large patch request: {} ops. Recommended maximum is {SOFT_MAX_OPS}; consider \
             splitting into batches.",
            req.ops.len()
        ));
    }
    let mut out_path = target.clone();
    if exists {
        match conflict {
            // A dry run answers what the real run would do: a skip writes nothing, so its
            // preview is the same empty diff and warning (the contract's `skip`).
            OnConflict::Skip => {
                warnings.push(format!(
                    "{} already exists and on_conflict is skip; nothing {} written",
                    target.display(),
                    if req.dry_run { "would be" } else { "was" }
                ));
                return Ok(Patched::unchanged(
                    PatchOutcome::Skipped,
                    &target,
                    warnings,
                    None,
                    Vec::new(),
                ));
            }
            OnConflict::Rename => {
                out_path = keiri_fs::first_free(&dir, &stem, &ext, 1);
                warnings.push(format!(
                    "{} already exists; the result goes to {}",
                    target.display(),
                    out_path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default()
                ));
            }
            OnConflict::Overwrite => {}
        }
    }

    // A real run first removes the temp files a killed writer left in the output directory.
    // An overwrite holds the target's write lock from this read to the rename, so concurrent
    // patches of one workbook queue up and each applies to what the previous one saved (the
    // directory must exist for the lock file; a new one is locked once it is created).
    let mut guard = None;
    if !req.dry_run {
        let _ = keiri_fs::sweep(&dir);
        if conflict == OnConflict::Overwrite && dir.is_dir() {
            guard = Some(keiri_fs::lock(&target)?);
        }
    }
    let bytes: std::sync::Arc<[u8]> = std::fs::read(&input)
        .map_err(io_error("reading", &input))?
        .into();
    let display = input.display().to_string();
    let mut book = Book::open(Package::open(&display, bytes.clone())?)?;
    let mut run = Run {
        book: &mut book,
        req,
        diff: Vec::new(),
        inverse: Vec::new(),
        warnings,
        written: HashMap::new(),
        stop: &env.stop,
        cells_written: 0,
    };
    for (i, (op, p)) in req.ops.iter().zip(&planned).enumerate() {
        env.stop.check()?;
        if let Err(message) = run.apply(i, op, p)? {
            let Run { warnings, .. } = run;
            let error = PatchErrorDetail {
                op_index: i as i64,
                op: op.kind(),
                sheet: op.sheet().to_string(),
                cell: op.cell().or(op.range()).map(str::to_string),
                message,
            };
            return Ok(Patched::unchanged(
                PatchOutcome::Failed,
                &out_path,
                warnings,
                Some(error),
                Vec::new(),
            ));
        }
    }
    let Run {
        mut diff,
        inverse,
        mut warnings,
        written,
        ..
    } = run;
    let inverse_ops: Vec<PatchOp> = if req.return_inverse_ops {
        inverse.into_iter().rev().flatten().collect()
    } else {
        Vec::new()
    };

    let mut formula_issues = Vec::new();
    if req.preflight_formula_check {
        let (issues, notes, computed) = preflight(&mut book, env.engine_timeout, &env.stop)?;
        warnings.extend(notes);
        preflight::fill_computed(&mut diff, &computed);
        formula_issues = issues;
        let first_error = formula_issues.iter().find(|i| i.level == IssueLevel::Error);
        if let Some(issue) = first_error.filter(|_| !req.dry_run) {
            let key = (normalise(&issue.sheet), issue.cell.clone());
            let (op_index, op) = match written.get(&key) {
                Some(&i) => (
                    i as i64,
                    req.ops.get(i).map_or(OpKind::SetValue, PatchOp::kind),
                ),
                None => (-1, req.ops.last().map_or(OpKind::SetValue, PatchOp::kind)),
            };
            let error = PatchErrorDetail {
                op_index,
                op,
                sheet: issue.sheet.clone(),
                cell: Some(issue.cell.clone()),
                message: format!(
                    "formula check failed at {}!{}: {}",
                    issue.sheet, issue.cell, issue.message
                ),
            };
            return Ok(Patched::unchanged(
                PatchOutcome::Failed,
                &out_path,
                warnings,
                Some(error),
                formula_issues,
            ));
        }
    }

    let writes_formulas = diff.iter().any(|item| {
        item.after
            .as_ref()
            .is_some_and(|a| a.kind == ValueKind::Formula)
    });
    if !req.preflight_formula_check && writes_formulas {
        // The values beside the formulas of the preview, from the check's engine.
        let computed = preflight::computed_values(&mut book, env.engine_timeout, &env.stop)?;
        preflight::fill_computed(&mut diff, &computed);
    }

    if req.dry_run {
        return Ok(Patched::changed(
            PatchOutcome::DryRun,
            &out_path,
            diff,
            warnings,
            inverse_ops,
            formula_issues,
        ));
    }

    // The last look at the stop: past it the save is one atomic rename.
    env.stop.check()?;
    // An unchanged workbook (every op skipped) is saved as an exact copy.
    let changes = book.changes()?;
    let new_bytes: std::sync::Arc<[u8]> = if book.changed {
        book.pkg.write(&changes)?.into()
    } else {
        // The original stays for the compare-and-swap below (an Arc: no copy).
        bytes.clone()
    };
    drop(changes);
    std::fs::create_dir_all(&dir).map_err(io_error("creating", &dir))?;
    let saved = match conflict {
        OnConflict::Overwrite => {
            let guard = match guard {
                Some(guard) => guard,
                None => keiri_fs::lock(&target)?,
            };
            // Patching in place is a compare-and-swap: the workbook must still be the one the
            // ops were applied to, or the save is refused with CHANGE_CONFLICT.
            let written = if target == input {
                guard.write_if_unchanged(&bytes, &new_bytes)
            } else {
                guard.write(&new_bytes)
            };
            written.map(|()| target.clone())
        }
        other => match keiri_fs::save(&dir, &name, &new_bytes, other.into()) {
            Ok(Some(saved)) => Ok(saved),
            // Skip: the target appeared while the patch ran.
            Ok(None) => {
                let warning = format!(
                    "{} appeared while the patch ran and on_conflict is skip; nothing was written",
                    target.display()
                );
                return Ok(Patched::unchanged(
                    PatchOutcome::Skipped,
                    &target,
                    vec![warning],
                    None,
                    formula_issues,
                ));
            }
            Err(e) => Err(e),
        },
    }?;
    Ok(Patched::changed(
        PatchOutcome::Written,
        &saved,
        diff,
        warnings,
        inverse_ops,
        formula_issues,
    ))
}

impl Patched {
    /// Nothing written and no diff to show: a skip, or a failed op or formula check (`error`).
    fn unchanged(
        outcome: PatchOutcome,
        out_path: &Path,
        warnings: Vec<String>,
        error: Option<PatchErrorDetail>,
        formula_issues: Vec<FormulaIssue>,
    ) -> Patched {
        let mut patched = Patched::changed(
            outcome,
            out_path,
            Vec::new(),
            warnings,
            Vec::new(),
            formula_issues,
        );
        patched.response.error = error;
        patched
    }

    /// A dry run's preview or a saved patch: the diff and the ops that undo it.
    fn changed(
        outcome: PatchOutcome,
        out_path: &Path,
        patch_diff: Vec<PatchDiffItem>,
        warnings: Vec<String>,
        inverse_ops: Vec<PatchOp>,
        formula_issues: Vec<FormulaIssue>,
    ) -> Patched {
        Patched {
            outcome,
            response: PatchResponse {
                out_path: out_path.display().to_string(),
                patch_diff,
                warnings,
                error: None,
                inverse_ops,
                formula_issues,
            },
        }
    }
}

fn normalise(name: &str) -> String {
    name.nfc().collect::<String>().to_lowercase()
}

/// The state of one request while its ops are applied.
struct Run<'a> {
    book: &'a mut Book,
    req: &'a PatchRequest,
    diff: Vec<PatchDiffItem>,
    /// Inverse ops per applied op, in application order.
    inverse: Vec<Vec<PatchOp>>,
    warnings: Vec<String>,
    /// (sheet, cell) → the last op that wrote it, to attribute formula check failures.
    written: HashMap<(String, String), usize>,
    /// The caller's stop, looked at every [`CELLS_PER_CHECK`] cells written.
    stop: &'a Stop,
    cells_written: u64,
}

/// The outcome of one op: `Err` is an op failure reported as `PatchErrorDetail`.
type OpResult = Result<(), String>;

impl Run<'_> {
    fn apply(&mut self, i: usize, op: &PatchOp, planned: &Planned) -> Result<OpResult, Error> {
        let requested = op.sheet();
        match planned {
            Planned::AddSheet => return self.add_sheet(i, requested),
            Planned::DeleteSheet => {
                let copy_of = match op {
                    PatchOp::DeleteSheet { copy_of, .. } => copy_of.as_deref(),
                    _ => None,
                };
                return self.delete_sheet(i, requested, copy_of);
            }
            _ => {}
        }
        let Some(si) = self.book.find_sheet(requested) else {
            return Ok(Err(format!(
                "sheet {requested:?} does not exist (sheets: {})",
                self.sheet_list()
            )));
        };
        let kind = self
            .book
            .sheets
            .get(si)
            .map_or(SheetKind::Unknown, |s| s.kind);
        if kind != SheetKind::Worksheet {
            return Ok(Err(format!(
                "sheet {requested:?} is {}; only worksheet cells can be written",
                kind.describe()
            )));
        }
        match planned {
            Planned::Cell {
                cell,
                write,
                expected,
            } => self.cell_op(i, op, si, *cell, write, expected.as_ref()),
            Planned::Range { area, values } => self.range_op(i, op, si, *area, values),
            Planned::Fill { area, base, body } => {
                self.fill_op(i, op, si, *area, *base, body.as_deref())
            }
            Planned::Design => self.design_op(i, op, si),
            Planned::Rows => self.rows_op(i, op, si),
            Planned::CopySheet => self.copy_sheet(i, op, si),
            Planned::AddSheet | Planned::DeleteSheet => Ok(Ok(())),
        }
    }

    fn sheet_list(&self) -> String {
        self.book
            .sheets
            .iter()
            .map(|s| format!("{:?}", s.name))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn sheet_name(&self, si: usize) -> String {
        self.book
            .sheets
            .get(si)
            .map(|s| s.name.clone())
            .unwrap_or_default()
    }

    fn add_sheet(&mut self, i: usize, name: &str) -> Result<OpResult, Error> {
        if let Err(e) = book::check_sheet_name(name) {
            return Ok(Err(e));
        }
        if let Some(existing) = self.book.find_sheet(name) {
            return Ok(Err(format!(
                "a sheet named {:?} already exists",
                self.sheet_name(existing)
            )));
        }
        self.book.add_sheet(name)?;
        self.diff.push(PatchDiffItem {
            op: OpKind::AddSheet,
            op_index: i,
            sheet: name.to_string(),
            cell: None,
            before: None,
            after: Some(PatchValue {
                kind: ValueKind::Sheet,
                value: Some(CellValue::Text(name.to_string())),
            }),
            status: DiffStatus::Applied,
            computed: None,
        });
        self.inverse.push(vec![PatchOp::DeleteSheet {
            sheet: name.to_string(),
            copy_of: None,
        }]);
        Ok(Ok(()))
    }

    fn delete_sheet(
        &mut self,
        i: usize,
        name: &str,
        copy_of: Option<&str>,
    ) -> Result<OpResult, Error> {
        let Some(si) = self.book.find_sheet(name) else {
            return Ok(Err(format!(
                "sheet {name:?} does not exist (sheets: {})",
                self.sheet_list()
            )));
        };
        let actual = self.sheet_name(si);
        let kind = self
            .book
            .sheets
            .get(si)
            .map_or(SheetKind::Unknown, |s| s.kind);
        if kind != SheetKind::Worksheet {
            return Ok(Err(format!(
                "sheet {actual:?} is {}; only empty worksheets can be deleted",
                kind.describe()
            )));
        }
        if self.book.sheets.len() <= 1 {
            return Ok(Err("a workbook must keep at least one sheet".to_string()));
        }
        if self.book.has_related_parts(si) {
            return Ok(Err(format!(
                "sheet {actual:?} has related parts (drawings, comments, tables or printer settings); \
                 deleting it would leave them behind, so only sheets without them can be deleted"
            )));
        }
        if let Some(source) = copy_of {
            if let Err(e) = self.still_a_copy(si, source)? {
                return Ok(Err(e));
            }
        } else {
            let (doc, sst) = self.book.doc_mut(si)?;
            if doc.has_content(sst) {
                return Ok(Err(format!(
                    "sheet {actual:?} still has values or formulas; clear them first"
                )));
            }
        }
        let last = si + 1 == self.book.sheets.len();
        self.book.delete_sheet(si);
        if self.req.return_inverse_ops && !last {
            self.warnings.push(format!(
                "op[{i}] delete_sheet: the inverse add_sheet appends {actual:?} at the end, not at its old position {}",
                si + 1
            ));
        }
        self.diff.push(PatchDiffItem {
            op: OpKind::DeleteSheet,
            op_index: i,
            sheet: actual.clone(),
            cell: None,
            before: Some(PatchValue {
                kind: ValueKind::Sheet,
                value: Some(CellValue::Text(actual.clone())),
            }),
            after: None,
            status: DiffStatus::Applied,
            computed: None,
        });
        if let Some(source) = copy_of {
            let position = u32::try_from(si + 1).ok();
            self.inverse
                .push(vec![PatchOp::CopySheet(crate::row_ops::CopySheet {
                    sheet: source.to_string(),
                    new_sheet: actual,
                    position,
                })]);
        } else {
            self.inverse.push(vec![PatchOp::AddSheet { sheet: actual }]);
        }
        Ok(Ok(()))
    }

    /// The content a write produces, or why it cannot be written.
    fn content_for(&mut self, i: usize, at: &str, write: &Write) -> Result<Prepared, String> {
        let plain = |content, after: PatchValue| Prepared {
            content,
            after,
            number_format: None,
        };
        let value = |v: &CellValue| PatchValue {
            kind: ValueKind::Value,
            value: Some(v.clone()),
        };
        let empty = PatchValue {
            kind: ValueKind::Value,
            value: None,
        };
        match write {
            Write::Formula(body) => {
                let (content, after) = self.formula_content(i, at, body);
                Ok(plain(content, after))
            }
            Write::Value(None) => Ok(plain(Content::Empty, empty)),
            Write::Value(Some(v)) => {
                if let Some(date) = values::date_write(v) {
                    let date = date?;
                    let serial = crate::dates::serial(date.date, self.book.wb.date1904)?;
                    return Ok(Prepared {
                        content: Content::Number(serial),
                        after: PatchValue {
                            kind: date.kind,
                            value: Some(CellValue::Text(date.text)),
                        },
                        number_format: Some(date.format),
                    });
                }
                match v {
                    CellValue::Text(s) if s.starts_with('=') => {
                        if self.req.auto_formula {
                            let (content, after) = self.formula_content(i, at, &s[1..]);
                            Ok(plain(content, after))
                        } else {
                            Err(format!(
                                "the value {s:?} starts with '='; use set_formula, or set \
                                 auto_formula to write it as a formula"
                            ))
                        }
                    }
                    CellValue::Text(s) | CellValue::Typed(TypedValue::Text(s))
                        if s.chars().count() > MAX_TEXT_CHARS =>
                    {
                        Err(format!(
                            "the text is longer than Excel's {MAX_TEXT_CHARS} characters per cell"
                        ))
                    }
                    CellValue::Text(s) | CellValue::Typed(TypedValue::Text(s)) if s.is_empty() => {
                        Ok(plain(Content::Empty, empty))
                    }
                    CellValue::Text(s) => Ok(plain(Content::Text(s.clone()), value(v))),
                    // Forced text is shown in the diff as the text it is.
                    CellValue::Typed(TypedValue::Text(s)) => Ok(plain(
                        Content::Text(s.clone()),
                        value(&CellValue::Text(s.clone())),
                    )),
                    CellValue::Int(n) => Ok(plain(Content::Number(*n as f64), value(v))),
                    CellValue::Float(f) if f.is_finite() => {
                        Ok(plain(Content::Number(*f), value(v)))
                    }
                    CellValue::Float(_) => Err("numbers must be finite".to_string()),
                    CellValue::Bool(b) => Ok(plain(Content::Bool(*b), value(v))),
                    // `date_write` took both date kinds.
                    CellValue::Typed(TypedValue::Date(_) | TypedValue::Datetime(_)) => {
                        Err("the date could not be read".to_string())
                    }
                }
            }
        }
    }

    /// Gives a cell just written with a date the date's number format, unless its format
    /// already has one (a template's own date format is kept). Returns the cell's old style
    /// when it changed, for the inverse op.
    fn date_format(
        &mut self,
        si: usize,
        cell: CellRef,
        format: &'static str,
    ) -> Result<Result<Option<u32>, String>, Error> {
        let old = {
            let (doc, _) = self.book.doc_mut(si)?;
            doc.style_id(cell)
        };
        let styles = match self.book.styles_mut()? {
            Ok(s) => s,
            Err(e) => return Ok(Err(e)),
        };
        if styles.number_format_id(old as usize) != 0 {
            return Ok(Ok(None));
        }
        let change = StyleChange {
            number_format: Some(format),
            ..Default::default()
        };
        let new = match styles.derive(old as usize, &change) {
            Ok(n) => u32::try_from(n).unwrap_or(u32::MAX),
            Err(e) => return Ok(Err(e)),
        };
        let (doc, _) = self.book.doc_mut(si)?;
        doc.restyle(cell, new);
        Ok(Ok(Some(old)))
    }

    /// The inverse op that gives cells their old styles back (none when no style changed).
    fn restore_styles(sheet: &str, old: Vec<(CellRef, u32)>) -> Option<PatchOp> {
        (!old.is_empty()).then(|| {
            PatchOp::RestoreDesignSnapshot(crate::design::RestoreDesignSnapshot {
                sheet: sheet.to_string(),
                design_snapshot: crate::design::DesignSnapshot {
                    cell_styles: old
                        .into_iter()
                        .map(|(cell, style_id)| crate::design::CellStyleSnapshot {
                            cell: cell.to_a1(),
                            style_id,
                        })
                        .collect(),
                    ..Default::default()
                },
            })
        })
    }

    fn formula_content(&mut self, i: usize, at: &str, body: &str) -> (Content, PatchValue) {
        if let Err(e) = formula::check(body) {
            self.warnings.push(format!(
                "op[{i}]: the formula at {at} does not parse ({e}); Excel will refuse it"
            ));
        }
        let content = Content::Formula {
            text: formula::to_file_spelling(body),
            array: None,
            cached: None,
        };
        (
            content,
            PatchValue {
                kind: ValueKind::Formula,
                value: Some(CellValue::Text(format!("={body}"))),
            },
        )
    }

    fn cell_op(
        &mut self,
        i: usize,
        op: &PatchOp,
        si: usize,
        cell: CellRef,
        write: &Write,
        expected: Option<&Option<CellValue>>,
    ) -> Result<OpResult, Error> {
        let sheet = self.sheet_name(si);
        if let Some(expected) = expected {
            let (doc, sst) = self.book.doc_mut(si)?;
            let current = doc.get(cell, sst);
            if !matches_expected(&current, expected.as_ref(), self.book.wb.date1904) {
                let found = describe(&current);
                let wanted = expected.as_ref().map_or("an empty cell".to_string(), show);
                self.warnings.push(format!(
                    "op[{i}] {} skipped at {sheet}!{cell}: expected {wanted} but found {found}",
                    op.kind().as_str()
                ));
                let now = patch_value(&current);
                self.diff.push(PatchDiffItem {
                    op: op.kind(),
                    op_index: i,
                    sheet,
                    cell: Some(cell.to_a1()),
                    before: now.clone(),
                    after: now,
                    status: DiffStatus::Skipped,
                    computed: None,
                });
                self.inverse.push(Vec::new());
                return Ok(Ok(()));
            }
        }
        let prepared = match self.content_for(i, &format!("{sheet}!{cell}"), write) {
            Ok(c) => c,
            Err(e) => return Ok(Err(e)),
        };
        let before = match self.write_cell(i, si, cell, prepared.content)? {
            Ok(b) => b,
            Err(e) => return Ok(Err(e)),
        };
        let mut restyled = Vec::new();
        if let Some(format) = prepared.number_format {
            match self.date_format(si, cell, format)? {
                Ok(old) => restyled.extend(old.map(|o| (cell, o))),
                Err(e) => return Ok(Err(e)),
            }
        }
        let mut inverse = Vec::new();
        if self.req.return_inverse_ops {
            inverse.push(self.inverse_for(&sheet, cell, &before));
            inverse.extend(Self::restore_styles(&sheet, restyled));
        }
        self.diff.push(PatchDiffItem {
            op: op.kind(),
            op_index: i,
            sheet,
            cell: Some(cell.to_a1()),
            before: patch_value(&before),
            after: Some(prepared.after),
            status: DiffStatus::Applied,
            computed: None,
        });
        self.inverse.push(inverse);
        Ok(Ok(()))
    }

    fn range_op(
        &mut self,
        i: usize,
        op: &PatchOp,
        si: usize,
        area: Area,
        values: &[Vec<Option<CellValue>>],
    ) -> Result<OpResult, Error> {
        // `plan` has checked that `values` has the range's shape.
        let cols = values.first().map_or(0, Vec::len);
        let sheet = self.sheet_name(si);
        let mut befores = Vec::with_capacity(values.len() * cols);
        let mut restyled = Vec::new();
        for (cell, value) in area.cells().zip(values.iter().flatten()) {
            let before = match self.write_value(i, op, si, cell, value, &mut restyled)? {
                Ok(b) => b,
                Err(e) => return Ok(Err(e)),
            };
            if self.req.return_inverse_ops {
                befores.push((cell, before));
            }
        }
        let mut inverse = self.inverse_for_area(&sheet, area, &befores);
        if self.req.return_inverse_ops {
            inverse.extend(Self::restore_styles(&sheet, restyled));
        }
        self.inverse.push(inverse);
        Ok(Ok(()))
    }

    fn inverse_for(&mut self, sheet: &str, cell: CellRef, before: &Content) -> PatchOp {
        let cell_a1 = cell.to_a1();
        match before {
            Content::Formula { text, array, .. } => {
                if array.is_some() {
                    self.warnings.push(format!(
                        "the inverse op for {sheet}!{cell_a1} restores its array formula as a regular formula"
                    ));
                }
                PatchOp::SetFormula {
                    sheet: sheet.to_string(),
                    cell: cell_a1,
                    formula: format!("={text}"),
                }
            }
            other => {
                let value = inverse_value(other);
                match (&value, other) {
                    (Some(CellValue::Text(t)), Content::Text(_)) if t.starts_with('=') => self.warnings.push(format!(
                        "the inverse op for {sheet}!{cell_a1} restores text starting with '=', which set_value \
                         refuses unless auto_formula is off and the text is re-entered by hand"
                    )),
                    (_, Content::Error(e)) => self.warnings.push(format!(
                        "the inverse op for {sheet}!{cell_a1} restores the error value {e} as text"
                    )),
                    (_, Content::Date(d)) => self.warnings.push(format!(
                        "the inverse op for {sheet}!{cell_a1} restores the date {d} as text"
                    )),
                    _ => {}
                }
                PatchOp::SetValue {
                    sheet: sheet.to_string(),
                    cell: cell_a1,
                    value,
                }
            }
        }
    }

    /// One `set_range_values` when the range held only values, else one op per cell (nothing
    /// when inverse ops were not asked for).
    fn inverse_for_area(
        &mut self,
        sheet: &str,
        area: Area,
        befores: &[(CellRef, Content)],
    ) -> Vec<PatchOp> {
        if !self.req.return_inverse_ops {
            return Vec::new();
        }
        let plain = befores.iter().all(|(_, c)| match c {
            Content::Formula { .. } | Content::Error(_) | Content::Date(_) => false,
            Content::Text(t) => !t.starts_with('='),
            _ => true,
        });
        if plain {
            let width = area.cols() as usize;
            let values: Vec<Vec<Option<CellValue>>> = befores
                .chunks(width.max(1))
                .map(|row| row.iter().map(|(_, c)| inverse_value(c)).collect())
                .collect();
            return vec![PatchOp::SetRangeValues {
                sheet: sheet.to_string(),
                range: area.to_a1(),
                values,
            }];
        }
        befores
            .iter()
            .map(|(cell, c)| self.inverse_for(sheet, *cell, c))
            .collect()
    }
}
