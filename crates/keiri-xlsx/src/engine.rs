//! The preflight formula check: every formula is parsed with our own grammar, then the whole
//! workbook is evaluated with IronCalc and error results are reported.
//!
//! IronCalc (`ironcalc_base`) is a pure-Rust spreadsheet engine that builds from crates.io with
//! no native code. It computes `#REF!`, `#NAME?`, `#DIV/0!`, `#VALUE!`, `#N/A` and detects
//! circular references (`#CIRC!`). Where it cannot judge a cell — a construct it does not
//! implement (other workbooks, 3-D and table references, the intersection operator), a function
//! it lacks, or the evaluation did not finish in time — the cell falls back to static checks:
//! references to missing sheets, error literals written in the formula, and division by a
//! literal zero. The engine runs on its own thread with a time limit, a large stack and a
//! panic guard, so an untrusted workbook can neither hang nor crash the caller. Whole-column
//! references are bounded for the engine (it materialises ranges cell by cell) by the data of
//! their own sheet and columns, so one far-away cell (`XFD1048576`) does not stretch every
//! `A:K` in the workbook to a million rows.
//!
//! Two budgets keep the check in proportion to the workbook's cells rather than its extent:
//! a work estimate (the cells every formula's references cover, after bounding) above
//! [`MAX_ENGINE_WORK`] leaves the engine out and only the static checks run, with a note; and
//! the engine's time limit, which ends the check with [`Halted::OutOfTime`] (the caller turns it
//! into a coded error) instead of a long wait. The caller's [`Stop`] ends the wait the same
//! way ([`Halted::Cancelled`]); the detached engine thread finishes on its own.

use std::collections::{BTreeMap, HashMap};
use std::sync::mpsc;
use std::time::Duration;

use ironcalc_base::Model;
use ironcalc_base::types::CellType;

use crate::a1::CellRef;
use crate::contract::IssueCode;
use crate::formula;
use crate::sheet::Content;
use crate::stop::Stop;

/// Cells beyond this are not handed to the engine (static checks still run).
const MAX_ENGINE_CELLS: usize = 3_000_000;
/// Cells the formulas' references may cover together (after whole-column bounding) for the
/// engine to run; past it only the static checks run. IronCalc visits every cell of a range,
/// so this is its work; see the `preflight` bench in README.md for the measured rate.
pub(crate) const MAX_ENGINE_WORK: u64 = 20_000_000;
/// Whole-column references keep at least this many rows, and whole-row references this many
/// columns, so `INDEX`/`OFFSET` a little past the data still finds empty cells, not `#REF!`.
const MIN_BOUND_ROWS: u32 = 10_000;
const MIN_BOUND_COLS: u32 = 256;

/// Why the check ended before the engine answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Halted {
    /// The engine did not finish within its time limit.
    OutOfTime(Duration),
    /// The caller asked to stop.
    Cancelled,
}

pub(crate) struct SheetCells {
    pub name: String,
    pub cells: Vec<(CellRef, Content)>,
}

pub(crate) struct Workbook {
    pub sheets: Vec<SheetCells>,
    /// `(name, sheet scope index, formula)` of defined names.
    pub names: Vec<(String, Option<u32>, String)>,
    pub date1904: bool,
}

/// A problem found in one cell, before levels are assigned.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Finding {
    pub sheet: usize,
    pub cell: CellRef,
    pub code: IssueCode,
    /// Findings that are usually deliberate (`#N/A`) or may be engine-specific (`#NUM!`).
    pub mild: bool,
    pub message: String,
}

pub(crate) struct Report {
    pub findings: Vec<Finding>,
    pub notes: Vec<String>,
    /// What each formula the engine evaluated without an error came to, by (sheet, cell):
    /// the number, text or truth value a person sees in Excel.
    pub values: HashMap<(usize, CellRef), Computed>,
}

/// A formula's result as the engine computed it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Computed {
    Number(f64),
    Text(String),
    Bool(bool),
}

/// Checks every formula of the workbook.
/// Fails only when the engine ran out of time or the caller stopped it.
pub(crate) fn check(book: &Workbook, timeout: Duration, stop: &Stop) -> Result<Report, Halted> {
    let mut notes = Vec::new();
    let total: usize = book.sheets.iter().map(|s| s.cells.len()).sum();
    let engine = if total > MAX_ENGINE_CELLS {
        notes.push(format!(
            "the workbook has {total} non-empty cells, more than the {MAX_ENGINE_CELLS} the \
             formula engine is given; only static formula checks ran"
        ));
        None
    } else {
        let input = EngineInput::new(book);
        if input.work > MAX_ENGINE_WORK {
            notes.push(format!(
                "the formulas' references cover about {} cells, more than the {MAX_ENGINE_WORK} \
                 the formula engine is given; only static formula checks ran",
                input.work
            ));
            None
        } else {
            match evaluate(input, timeout, stop) {
                Ok(values) => Some(values),
                Err(Failure::OutOfTime) => return Err(Halted::OutOfTime(timeout)),
                Err(Failure::Cancelled) => return Err(Halted::Cancelled),
                Err(Failure::Other(reason)) => {
                    notes.push(format!("the formula engine could not evaluate the workbook ({reason}); only static formula checks ran"));
                    None
                }
            }
        }
    };
    let sheet_names: Vec<&str> = book.sheets.iter().map(|s| s.name.as_str()).collect();
    let mut findings = Vec::new();
    let mut not_evaluated: HashMap<&'static str, usize> = HashMap::new();
    for (si, sheet) in book.sheets.iter().enumerate() {
        for (cell, content) in &sheet.cells {
            let Content::Formula { text, .. } = content else {
                continue;
            };
            let facts = match formula::check(text) {
                Ok(facts) => facts,
                Err(e) => {
                    findings.push(Finding {
                        sheet: si,
                        cell: *cell,
                        code: IssueCode::InvalidToken,
                        mild: false,
                        message: format!("the formula does not parse: {e}"),
                    });
                    continue;
                }
            };
            let result = engine.as_ref().and_then(|e| e.get(&(si, *cell)));
            let judged = match (facts.unsupported, result) {
                (None, Some(EngineValue::Ok(_))) => true,
                (None, Some(EngineValue::Error(err))) => match classify(err) {
                    Classified::Issue(code, mild, what) => {
                        findings.push(Finding {
                            sheet: si,
                            cell: *cell,
                            code,
                            mild,
                            message: format!("evaluates to {err} ({what})"),
                        });
                        true
                    }
                    Classified::Unjudged(why) => {
                        *not_evaluated.entry(why).or_default() += 1;
                        false
                    }
                },
                (None, Some(EngineValue::Refused)) => {
                    *not_evaluated
                        .entry("formulas the engine could not read")
                        .or_default() += 1;
                    false
                }
                (Some(why), _) => {
                    *not_evaluated.entry(why).or_default() += 1;
                    false
                }
                (None, None) => false,
            };
            if !judged {
                findings.extend(static_findings(si, *cell, &facts, &sheet_names));
            }
        }
    }
    let mut reasons: Vec<(&str, usize)> = not_evaluated.into_iter().collect();
    reasons.sort();
    for (why, n) in reasons {
        notes.push(format!(
            "{n} formula cell(s) were checked statically only: the engine does not evaluate {why}"
        ));
    }
    let values = engine
        .into_iter()
        .flatten()
        .filter_map(|(key, value)| match value {
            EngineValue::Ok(Some(computed)) => Some((key, computed)),
            _ => None,
        })
        .collect();
    Ok(Report {
        findings,
        notes,
        values,
    })
}

enum Classified {
    Issue(IssueCode, bool, &'static str),
    Unjudged(&'static str),
}

fn classify(error: &str) -> Classified {
    match error {
        "#REF!" => Classified::Issue(
            IssueCode::RefError,
            false,
            "a reference that does not exist",
        ),
        "#NAME?" => Classified::Issue(IssueCode::NameError, false, "an unknown function or name"),
        "#DIV/0!" => Classified::Issue(IssueCode::Div0Error, false, "division by zero"),
        "#VALUE!" => Classified::Issue(IssueCode::ValueError, false, "a value of the wrong type"),
        "#N/A" => Classified::Issue(IssueCode::NaError, true, "a value that is not available"),
        "#CIRC!" => Classified::Issue(
            IssueCode::CircularRefSuspected,
            false,
            "a circular reference",
        ),
        "#NUM!" => Classified::Issue(IssueCode::ValueError, true, "an invalid number"),
        "#NULL!" => Classified::Issue(IssueCode::ValueError, true, "ranges that do not intersect"),
        "#N/IMPL" | "#N/IMPL!" => Classified::Unjudged("some functions it does not implement"),
        "#SPILL!" | "#CALC!" => Classified::Unjudged("dynamic array results"),
        _ => Classified::Unjudged("formulas whose result depends on the cells above"),
    }
}

fn static_findings(
    sheet: usize,
    cell: CellRef,
    facts: &formula::Facts,
    sheet_names: &[&str],
) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut push = |code, mild, message: String| {
        out.push(Finding {
            sheet,
            cell,
            code,
            mild,
            message,
        })
    };
    for name in &facts.sheets {
        if !name.is_empty()
            && !sheet_names
                .iter()
                .any(|s| crate::book::same_sheet_name(s, name))
        {
            push(
                IssueCode::RefError,
                false,
                format!("refers to the sheet {name:?}, which does not exist"),
            );
        }
    }
    for literal in &facts.error_literals {
        let code = match literal.as_str() {
            "#REF!" => Some((IssueCode::RefError, false)),
            "#NAME?" => Some((IssueCode::NameError, false)),
            "#DIV/0!" => Some((IssueCode::Div0Error, false)),
            "#VALUE!" => Some((IssueCode::ValueError, false)),
            "#N/A" => Some((IssueCode::NaError, true)),
            _ => None,
        };
        if let Some((code, mild)) = code {
            push(code, mild, format!("the formula contains {literal}"));
        }
    }
    if facts.divides_by_zero {
        push(
            IssueCode::Div0Error,
            false,
            "the formula divides by a literal zero".to_string(),
        );
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
enum EngineValue {
    /// Evaluated; its value (`None`: empty).
    Ok(Option<Computed>),
    Error(String),
    /// The engine did not accept the formula.
    Refused,
}

type Values = HashMap<(usize, CellRef), EngineValue>;

/// Where each sheet has data: the last row of each column and the last column of each row.
#[derive(Default)]
struct Extent {
    last_row_of_col: BTreeMap<u32, u32>,
    last_col_of_row: BTreeMap<u32, u32>,
}

impl Extent {
    fn of(cells: &[(CellRef, Content)]) -> Extent {
        let mut extent = Extent::default();
        for (at, _) in cells {
            let row = extent.last_row_of_col.entry(at.col).or_default();
            *row = (*row).max(at.row);
            let col = extent.last_col_of_row.entry(at.row).or_default();
            *col = (*col).max(at.col);
        }
        extent
    }

    /// The last row with data in columns `a..=b`, or 0.
    fn rows_in(&self, a: u32, b: u32) -> u32 {
        self.last_row_of_col
            .range(a..=b)
            .map(|(_, r)| *r)
            .max()
            .unwrap_or(0)
    }

    /// The last column with data in rows `a..=b`, or 0.
    fn cols_in(&self, a: u32, b: u32) -> u32 {
        self.last_col_of_row
            .range(a..=b)
            .map(|(_, c)| *c)
            .max()
            .unwrap_or(0)
    }
}

/// What the engine thread gets: its own copy of the cells, the formula texts it evaluates
/// (file prefixes stripped, whole references bounded) and the work they stand for.
struct EngineInput {
    sheets: Vec<(String, Vec<(CellRef, Content)>)>,
    /// The engine text of every formula cell, parallel to `sheets[i].1`.
    texts: Vec<Vec<Option<String>>>,
    names: Vec<(String, Option<u32>, String)>,
    date1904: bool,
    /// Cells the references of all formulas and names cover.
    work: u64,
}

impl EngineInput {
    fn new(book: &Workbook) -> EngineInput {
        let extents: Vec<Extent> = book.sheets.iter().map(|s| Extent::of(&s.cells)).collect();
        let sheet_index = |name: &str| {
            book.sheets
                .iter()
                .position(|s| crate::book::same_sheet_name(&s.name, name))
        };
        // The last row (or column) with data that a whole reference from `own` can see.
        let bound = |own: Option<usize>,
                     prefix: Option<&formula::Prefix>,
                     area: formula::WholeArea| {
            let target = match prefix {
                None => own,
                Some(p) if p.external.is_none() && p.last_sheet.is_none() => sheet_index(&p.sheet),
                Some(_) => None,
            };
            let chosen: Vec<&Extent> = match target {
                Some(i) => extents.get(i).into_iter().collect(),
                None => extents.iter().collect(),
            };
            match area {
                formula::WholeArea::Columns(a, b) => chosen
                    .iter()
                    .map(|e| e.rows_in(a, b))
                    .max()
                    .unwrap_or(0)
                    .saturating_add(1)
                    .max(MIN_BOUND_ROWS),
                formula::WholeArea::Rows(a, b) => chosen
                    .iter()
                    .map(|e| e.cols_in(a, b))
                    .max()
                    .unwrap_or(0)
                    .saturating_add(1)
                    .max(MIN_BOUND_COLS),
            }
        };
        let engine_text = |own: Option<usize>, text: &str| {
            formula::bound_whole_references_with(&formula::strip_file_prefixes(text), |p, a| {
                bound(own, p, a)
            })
        };
        let mut work: u64 = 0;
        let mut texts = Vec::with_capacity(book.sheets.len());
        for (si, sheet) in book.sheets.iter().enumerate() {
            let sheet_texts: Vec<Option<String>> = sheet
                .cells
                .iter()
                .map(|(_, content)| match content {
                    Content::Formula { text, .. } => {
                        let t = engine_text(Some(si), text);
                        work = work.saturating_add(formula::referenced_cells(&t));
                        Some(t)
                    }
                    _ => None,
                })
                .collect();
            texts.push(sheet_texts);
        }
        let names = book
            .names
            .iter()
            .map(|(name, scope, text)| {
                let own = scope.and_then(|s| usize::try_from(s).ok());
                let t = engine_text(own, text);
                work = work.saturating_add(formula::referenced_cells(&t));
                (name.clone(), *scope, t)
            })
            .collect();
        EngineInput {
            sheets: book
                .sheets
                .iter()
                .map(|s| (s.name.clone(), s.cells.clone()))
                .collect(),
            texts,
            names,
            date1904: book.date1904,
            work,
        }
    }
}

enum Failure {
    OutOfTime,
    Cancelled,
    Other(String),
}

/// How often the wait for the engine looks at the caller's stop.
const STOP_POLL: Duration = Duration::from_millis(20);

fn evaluate(input: EngineInput, timeout: Duration, stop: &Stop) -> Result<Values, Failure> {
    // The engine gets its own copy of the input so it can run detached: if it does not finish
    // in time we stop waiting and the thread ends on its own.
    let (tx, rx) = mpsc::channel();
    // A generous stack: evaluation may recurse through long dependency chains, and running
    // out of stack would abort the whole process rather than unwind. The reservation is
    // virtual; only the pages used are committed.
    std::thread::Builder::new()
        .name("keiri-xlsx-engine".to_string())
        .stack_size(256 << 20)
        .spawn(move || {
            let result = keiri_fs::catch_panic(|| run(&input))
                .unwrap_or_else(|panic| Err(format!("the engine panicked ({panic})")));
            let _ = tx.send(result);
        })
        .map_err(|e| Failure::Other(format!("cannot start the engine thread: {e}")))?;
    let deadline = std::time::Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left.min(STOP_POLL)) {
            Ok(result) => return result.map_err(Failure::Other),
            Err(mpsc::RecvTimeoutError::Timeout) if left <= STOP_POLL => {
                return Err(Failure::OutOfTime);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if stop.is_set() {
                    return Err(Failure::Cancelled);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(Failure::Other(
                    "the engine stopped unexpectedly".to_string(),
                ));
            }
        }
    }
}

fn run(input: &EngineInput) -> Result<Values, String> {
    let EngineInput {
        sheets,
        texts,
        names,
        date1904,
        ..
    } = input;
    let date1904 = *date1904;
    let mut model = Model::new_empty("preflight", "en", "UTC", "en")?;
    for (i, (name, _)) in sheets.iter().enumerate() {
        if i == 0 {
            model.rename_sheet_by_index(0, name)?;
        } else {
            model.add_sheet(name)?;
        }
    }
    for (name, scope, text) in names {
        if name.starts_with("_xlnm.") || name.starts_with("_xlnm") {
            continue;
        }
        // A name the engine refuses simply stays undefined; formulas using it then report
        // #NAME?, which the before/after comparison treats as pre-existing.
        let _ = model.new_defined_name(name, *scope, text);
    }
    let mut formulas: Vec<(usize, CellRef)> = Vec::new();
    let mut refused: Vec<(usize, CellRef)> = Vec::new();
    for (si, (_, cells)) in sheets.iter().enumerate() {
        let sheet = si as u32;
        let sheet_texts = texts.get(si).map_or(&[][..], Vec::as_slice);
        for (ci, (cell, content)) in cells.iter().enumerate() {
            let (row, col) = (cell.row as i32, cell.col as i32);
            let result = match content {
                Content::Empty => Ok(()),
                Content::Number(n) => model.update_cell_with_number(sheet, row, col, *n),
                Content::Text(t) => model.update_cell_with_text(sheet, row, col, t),
                Content::Bool(b) => model.update_cell_with_bool(sheet, row, col, *b),
                Content::Error(e) => model.set_user_input(sheet, row, col, e.clone()),
                Content::Date(d) => match date_serial(d, date1904) {
                    Some(n) => model.update_cell_with_number(sheet, row, col, n),
                    None => model.update_cell_with_text(sheet, row, col, d),
                },
                Content::Formula {
                    text,
                    array,
                    cached,
                } => {
                    let unsupported = formula::check(text)
                        .map(|f| f.unsupported.is_some())
                        .unwrap_or(true);
                    if unsupported {
                        // Give dependents the value Excel computed last time instead.
                        match cached.as_ref().map(|c| (c.t.as_deref(), c.v.as_str())) {
                            Some((None | Some("n"), v)) => match v.parse::<f64>() {
                                Ok(n) => model.update_cell_with_number(sheet, row, col, n),
                                Err(_) => Ok(()),
                            },
                            Some((Some("str"), v)) => {
                                model.update_cell_with_text(sheet, row, col, v)
                            }
                            Some((Some("b"), v)) => {
                                model.update_cell_with_bool(sheet, row, col, v == "1")
                            }
                            _ => Ok(()),
                        }
                    } else {
                        let engine_text = sheet_texts.get(ci).cloned().flatten();
                        let body = format!("={}", engine_text.as_deref().unwrap_or(text));
                        let set = match array {
                            Some(a) if !a.is_single_cell() => model.set_user_array_formula(
                                sheet,
                                row,
                                col,
                                a.cols() as i32,
                                a.rows() as i32,
                                &body,
                            ),
                            _ => model.update_cell_with_formula(sheet, row, col, body),
                        };
                        match set {
                            Ok(()) => formulas.push((si, *cell)),
                            Err(_) => refused.push((si, *cell)),
                        }
                        Ok(())
                    }
                }
            };
            // A value the engine does not take leaves the cell empty; this only matters for
            // formulas that read it, whose results are then judged against the original.
            let _ = result;
        }
    }
    model.evaluate();
    let mut out: Values = HashMap::with_capacity(formulas.len() + refused.len());
    for (si, cell) in formulas {
        let (row, col) = (cell.row as i32, cell.col as i32);
        let value = match model.get_cell_type(si as u32, row, col) {
            Ok(CellType::ErrorValue) => match model.get_cell_value_by_index(si as u32, row, col) {
                Ok(ironcalc_base::cell::CellValue::String(s)) => EngineValue::Error(s),
                _ => EngineValue::Error("#ERROR!".to_string()),
            },
            Ok(_) => EngineValue::Ok(match model.get_cell_value_by_index(si as u32, row, col) {
                Ok(ironcalc_base::cell::CellValue::Number(n)) => Some(Computed::Number(n)),
                Ok(ironcalc_base::cell::CellValue::String(s)) => Some(Computed::Text(s)),
                Ok(ironcalc_base::cell::CellValue::Boolean(b)) => Some(Computed::Bool(b)),
                _ => None,
            }),
            Err(_) => EngineValue::Refused,
        };
        out.insert((si, cell), value);
    }
    for key in refused {
        out.insert(key, EngineValue::Refused);
    }
    Ok(out)
}

/// `2023-03-31` or `2023-03-31T12:00:00` as an Excel serial date.
pub(crate) fn date_serial(text: &str, date1904: bool) -> Option<f64> {
    let (date, time) = match text.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (text, None),
    };
    let mut parts = date.splitn(3, '-');
    let y: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next()?.parse().ok()?;
    let d: i64 = parts.next()?.parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let days = days_from_civil(y, m, d) - days_from_civil(1899, 12, 30);
    let mut serial = days as f64;
    if let Some(t) = time {
        let t = t.trim_end_matches('Z');
        let mut hms = t.split(':');
        let h: f64 = hms.next()?.parse().ok()?;
        let mi: f64 = hms.next().unwrap_or("0").parse().ok()?;
        let s: f64 = hms.next().unwrap_or("0").parse().ok()?;
        serial += (h * 3600.0 + mi * 60.0 + s) / 86_400.0;
    }
    if date1904 {
        serial -= 1462.0;
    }
    Some(serial)
}

/// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(a1: &str) -> CellRef {
        CellRef::parse(a1).unwrap()
    }

    fn f(text: &str) -> Content {
        Content::Formula {
            text: text.to_string(),
            array: None,
            cached: None,
        }
    }

    fn check_cells(cells: Vec<(&str, Content)>, expect: &[(&str, IssueCode)]) {
        let book = Workbook {
            sheets: vec![
                SheetCells {
                    name: "入力".into(),
                    cells: cells.into_iter().map(|(a, c)| (cell(a), c)).collect(),
                },
                SheetCells {
                    name: "Other".into(),
                    cells: vec![(cell("A1"), Content::Number(4.0))],
                },
            ],
            names: vec![("Rate".into(), None, "Other!$A$1".into())],
            date1904: false,
        };
        let report = check(&book, Duration::from_secs(30), &Stop::default()).unwrap();
        let got: Vec<(String, IssueCode)> = report
            .findings
            .iter()
            .map(|f| (f.cell.to_a1(), f.code))
            .collect();
        let want: Vec<(String, IssueCode)> =
            expect.iter().map(|(a, c)| (a.to_string(), *c)).collect();
        assert_eq!(got, want, "notes: {:?}", report.notes);
    }

    #[test]
    fn finds_errors_by_evaluating() {
        check_cells(
            vec![
                ("A1", Content::Number(0.0)),
                ("B1", f("10/A1")),
                ("B2", f("Missing!A1")),
                ("B3", f("NOSUCHFN(1)")),
                ("B4", f("\"x\"+1")),
                ("B5", f("NA()")),
                ("B6", f("B7")),
                ("B7", f("B6")),
                ("B8", f("SUM(1,")),
                ("B9", f("Other!A1*Rate")),
                ("B10", f("_xlfn.IFS(A1=0,\"zero\",TRUE,\"other\")")),
                ("B11", f("'Other'!A1/2")),
            ],
            &[
                ("B1", IssueCode::Div0Error),
                ("B2", IssueCode::RefError),
                ("B3", IssueCode::NameError),
                ("B4", IssueCode::ValueError),
                ("B5", IssueCode::NaError),
                ("B6", IssueCode::CircularRefSuspected),
                ("B7", IssueCode::CircularRefSuspected),
                ("B8", IssueCode::InvalidToken),
            ],
        );
    }

    #[test]
    fn falls_back_to_static_checks_for_unsupported_formulas() {
        check_cells(
            vec![
                ("C1", f("[1]Sheet1!A1/0")),
                ("C2", f("SUM(Missing:Other!A1)")),
                ("C3", f("Table1[Col]+#REF!")),
            ],
            &[
                ("C1", IssueCode::Div0Error),
                ("C2", IssueCode::RefError),
                ("C3", IssueCode::RefError),
            ],
        );
    }

    /// A chain of `n` formulas, each adding one to the next: seconds of engine work at 50,000.
    fn chain(n: u32) -> Workbook {
        let mut cells = vec![(CellRef { row: n + 1, col: 1 }, Content::Number(1.0))];
        for row in 1..=n {
            cells.push((CellRef { row, col: 1 }, f(&format!("A{}+1", row + 1))));
        }
        Workbook {
            sheets: vec![SheetCells {
                name: "S".into(),
                cells,
            }],
            names: Vec::new(),
            date1904: false,
        }
    }

    #[test]
    fn a_stop_ends_the_wait_for_the_engine() {
        // The engine is not interrupted (its thread ends on its own); the caller stops waiting
        // at its next look at the stop, long before the 120 s limit.
        let stop = Stop::when(|| true);
        assert_eq!(
            check(&chain(50_000), Duration::from_secs(120), &stop).err(),
            Some(Halted::Cancelled)
        );
    }

    #[test]
    fn long_dependency_chains_do_not_overflow_the_stack() {
        let n = 50_000u32;
        let mut cells = vec![(CellRef { row: n + 1, col: 1 }, Content::Number(1.0))];
        for row in 1..=n {
            cells.push((CellRef { row, col: 1 }, f(&format!("A{}+1", row + 1))));
        }
        let book = Workbook {
            sheets: vec![SheetCells {
                name: "S".into(),
                cells,
            }],
            names: Vec::new(),
            date1904: false,
        };
        let report = check(&book, Duration::from_secs(120), &Stop::default()).unwrap();
        assert!(report.findings.is_empty(), "{:?}", report.findings.first());
        assert!(report.notes.is_empty(), "{:?}", report.notes);
    }

    #[test]
    fn serial_dates() {
        assert_eq!(date_serial("1900-03-01", false), Some(61.0));
        assert_eq!(date_serial("2023-03-31", false), Some(45016.0));
        assert_eq!(date_serial("2023-03-31T12:00:00", false), Some(45016.5));
        assert_eq!(date_serial("2023-03-31", true), Some(43554.0));
        assert_eq!(date_serial("2023-13-01", false), None);
    }
}
