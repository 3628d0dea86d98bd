//! The preflight formula check of a patched workbook.

use std::time::Duration;

use crate::a1::CellRef;
use crate::book::{self, Book, SheetKind};
use crate::contract::{CellValue, FormulaIssue, IssueLevel};
use crate::engine;
use crate::error::Error;
use crate::stop::Stop;

use super::{MAX_ISSUES, normalise};

/// What the patched workbook's formulas come to, by (normalised sheet name, A1 cell).
pub(super) type Computed = std::collections::HashMap<(String, String), CellValue>;

/// Runs the formula check on the original and the patched workbook; issues present before the
/// patch are reported as warnings, so only problems the patch introduces block a save. Also
/// returns what the patched workbook's formulas evaluate to.
pub(super) fn preflight(
    book: &mut Book,
    timeout: Duration,
    stop: &Stop,
) -> Result<(Vec<FormulaIssue>, Vec<String>, Computed), Error> {
    let (patched, mut original) = engine_sheets(book, true)?;
    // Sheets deleted by the patch were empty worksheets; the original evaluation keeps the
    // remaining sheets in their original order.
    original.sort_by_key(|(i, _)| *i);
    let names = defined_names(book);
    let iterate = book.wb.calc_pr.is_some_and(|(_, _, iterate)| iterate);
    let date1904 = book.wb.date1904;
    // One time budget for both evaluations; running out of it is a coded error, not a wait.
    let deadline = std::time::Instant::now() + timeout;
    let out_of_time = |halted: engine::Halted| match halted {
        engine::Halted::OutOfTime(limit) => Error::Budget(format!(
            "the formula check did not finish within {:.1} s; patch without \
             preflight_formula_check, or check a smaller workbook",
            limit.as_secs_f64()
        )),
        engine::Halted::Cancelled => Error::Cancelled,
    };
    let after = engine::check(
        &engine::Workbook {
            sheets: patched,
            names: names.clone(),
            date1904,
        },
        timeout,
        stop,
    )
    .map_err(out_of_time)?;
    let before_book = engine::Workbook {
        sheets: original.into_iter().map(|(_, s)| s).collect(),
        names,
        date1904,
    };
    let remaining = deadline.saturating_duration_since(std::time::Instant::now());
    let before = engine::check(&before_book, remaining, stop).map_err(out_of_time)?;
    let existed: std::collections::HashSet<(String, CellRef, crate::contract::IssueCode)> = before
        .findings
        .iter()
        .filter_map(|f| {
            before_book
                .sheets
                .get(f.sheet)
                .map(|s| (normalise(&s.name), f.cell, f.code))
        })
        .collect();
    let sheet_names: Vec<String> = book.sheets.iter().map(|s| s.name.clone()).collect();
    let mut issues = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for f in &after.findings {
        let sheet = sheet_names.get(f.sheet).cloned().unwrap_or_default();
        if !seen.insert((f.sheet, f.cell, f.code)) {
            continue;
        }
        let pre_existing = existed.contains(&(normalise(&sheet), f.cell, f.code));
        let deliberate_cycle =
            iterate && f.code == crate::contract::IssueCode::CircularRefSuspected;
        let level = if pre_existing || f.mild || deliberate_cycle {
            IssueLevel::Warning
        } else {
            IssueLevel::Error
        };
        let mut message = f.message.clone();
        if pre_existing {
            message = format!("already present before this patch: {message}");
        } else if deliberate_cycle {
            message = format!("{message}; the workbook enables iterative calculation");
        }
        issues.push(FormulaIssue {
            sheet,
            cell: f.cell.to_a1(),
            level,
            code: f.code,
            message,
        });
    }
    // Errors first, so a capped list still shows what blocks the save.
    issues.sort_by_key(|i| std::cmp::Reverse(i.level));
    let computed = computed_by_name(&after.values, &sheet_names);
    let mut notes = after.notes;
    if issues.len() > MAX_ISSUES {
        notes.push(format!(
            "{} more formula issues are not listed",
            issues.len() - MAX_ISSUES
        ));
        issues.truncate(MAX_ISSUES);
    }
    Ok((issues, notes, computed))
}

/// What the patched workbook's formulas evaluate to, without the before/after check: for a
/// preview that shows a formula's value beside its text when `preflight_formula_check` is off.
/// An evaluation that does not finish in time gives no values (the preview shows formulas
/// only), never an error; a stop is [`Error::Cancelled`].
pub(super) fn computed_values(
    book: &mut Book,
    timeout: Duration,
    stop: &Stop,
) -> Result<Computed, Error> {
    let (sheets, _) = engine_sheets(book, false)?;
    let sheet_names: Vec<String> = book.sheets.iter().map(|s| s.name.clone()).collect();
    let workbook = engine::Workbook {
        sheets,
        names: defined_names(book),
        date1904: book.wb.date1904,
    };
    match engine::check(&workbook, timeout, stop) {
        Ok(report) => Ok(computed_by_name(&report.values, &sheet_names)),
        Err(engine::Halted::Cancelled) => Err(Error::Cancelled),
        Err(engine::Halted::OutOfTime(_)) => Ok(Computed::default()),
    }
}

/// The patched workbook's sheets as the engine reads them (a chart sheet has no cells), and,
/// with `with_original`, the cells each sheet that existed before the patch had then, by its
/// original index.
#[allow(clippy::type_complexity)]
fn engine_sheets(
    book: &mut Book,
    with_original: bool,
) -> Result<(Vec<engine::SheetCells>, Vec<(usize, engine::SheetCells)>), Error> {
    let mut patched = Vec::new();
    let mut original = Vec::new();
    for si in 0..book.sheets.len() {
        let Some(sheet) = book.sheets.get(si) else {
            continue;
        };
        let name = sheet.name.clone();
        if sheet.kind != SheetKind::Worksheet {
            patched.push(engine::SheetCells {
                name,
                cells: Vec::new(),
            });
            continue;
        }
        let existing = match &sheet.origin {
            book::Origin::Existing { original_index, .. } if with_original => Some(*original_index),
            _ => None,
        };
        let (doc, sst) = book.doc_mut(si)?;
        let cells = doc.cells(sst, true);
        if let Some(idx) = existing {
            original.push((
                idx,
                engine::SheetCells {
                    name: name.clone(),
                    cells: doc.cells(sst, false),
                },
            ));
        }
        patched.push(engine::SheetCells { name, cells });
    }
    Ok((patched, original))
}

/// The workbook's defined names as the engine takes them: name, local sheet, formula.
fn defined_names(book: &Book) -> Vec<(String, Option<u32>, String)> {
    book.wb
        .defined_names
        .iter()
        .map(|d| (d.name.clone(), d.local_sheet, d.formula.clone()))
        .collect()
}

fn computed_by_name(
    values: &std::collections::HashMap<(usize, CellRef), engine::Computed>,
    sheet_names: &[String],
) -> Computed {
    values
        .iter()
        .filter_map(|((si, cell), value)| {
            let sheet = normalise(sheet_names.get(*si)?);
            let value = match value {
                engine::Computed::Number(n) => CellValue::number(*n),
                engine::Computed::Text(t) => CellValue::Text(t.clone()),
                engine::Computed::Bool(b) => CellValue::Bool(*b),
            };
            Some(((sheet, cell.to_a1()), value))
        })
        .collect()
}

/// Puts each written formula's value beside it in the diff.
pub(super) fn fill_computed(diff: &mut [crate::contract::PatchDiffItem], computed: &Computed) {
    for item in diff {
        let is_formula = item
            .after
            .as_ref()
            .is_some_and(|a| a.kind == crate::contract::ValueKind::Formula);
        if let (true, Some(cell)) = (is_formula, &item.cell) {
            item.computed = computed
                .get(&(normalise(&item.sheet), cell.clone()))
                .cloned();
        }
    }
}
