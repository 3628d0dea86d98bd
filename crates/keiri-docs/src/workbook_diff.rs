//! What changed in a workbook, cell by cell, and the cells around it: the comparison of two
//! workbooks' cells as a patch's per-cell diff ([`compare_cells`]: a run's written workbook
//! against its source), and the window a preview grid draws around a diff's changes, read from
//! the workbook as it is ([`grid_context`]: header labels, neighbouring amounts, formulas with
//! their cached values). The studio's dry-run, sample run and run output all show these.

/// A cell around a change as the workbook holds it, so a preview grid draws the real header
/// labels and neighbouring amounts instead of blanks: its value (for a formula, the value its
/// writer cached, `None` when none was cached) and its formula (`=B2-B3`), if any.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ContextCell {
    /// `B4`.
    pub cell: String,
    pub value: Option<keiri_xlsx::CellValue>,
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
/// (`ui/src/features/workbook/workbookGrid.ts`, `DEFAULT_GRID`) draws the same window, so
/// every cell it shows that the workbook has is here.
pub const GRID_CONTEXT: u32 = 1;
pub const GRID_MAX_ROWS: u32 = 40;
pub const GRID_MAX_COLS: u32 = 16;

/// The windows (0-based, inclusive) around the changed cells of `diff`, one per sheet, in the
/// order sheets first appear.
fn grid_windows(diff: &[keiri_xlsx::PatchDiffItem]) -> Vec<crate::CellWindow> {
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
            crate::CellWindow {
                sheet,
                rows: (first_row - 1, last_row - 1),
                cols: (first_col - 1, last_col - 1),
            }
        })
        .collect()
}

fn cell_value(value: &crate::CellData) -> keiri_xlsx::CellValue {
    match value {
        crate::CellData::Int(i) => keiri_xlsx::CellValue::Int(*i),
        crate::CellData::Float(f) => keiri_xlsx::CellValue::Float(*f),
        crate::CellData::Bool(b) => keiri_xlsx::CellValue::Bool(*b),
        crate::CellData::Text(t) => keiri_xlsx::CellValue::Text(t.clone()),
    }
}

/// The cells of the workbook at `path` inside the windows a preview grid draws around the
/// changes of `diff`. The context only decorates a preview, so a workbook that cannot be read
/// (a new one, or one the patch itself reported) gives none rather than failing the preview.
pub fn grid_context(
    path: &std::path::Path,
    diff: &[keiri_xlsx::PatchDiffItem],
) -> Vec<SheetContext> {
    let windows = grid_windows(diff);
    if windows.is_empty() {
        return Vec::new();
    }
    let Ok(bytes) = std::fs::read(path) else {
        return Vec::new();
    };
    let Ok(sheets) = crate::workbook_window(&bytes, &windows) else {
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

fn patch_value(value: &crate::CellData) -> keiri_xlsx::PatchValue {
    keiri_xlsx::PatchValue {
        kind: keiri_xlsx::ValueKind::Value,
        value: Some(cell_value(value)),
    }
}

fn sheet_value(name: &str) -> Option<keiri_xlsx::PatchValue> {
    Some(keiri_xlsx::PatchValue {
        kind: keiri_xlsx::ValueKind::Sheet,
        value: Some(keiri_xlsx::CellValue::Text(name.to_string())),
    })
}

/// A cell's value before and after (`None`: empty).
type BeforeAfter<'a> = (Option<&'a crate::CellData>, Option<&'a crate::CellData>);

/// The cell-level difference between two workbooks' cells; `before: None` is a new workbook.
pub fn compare_cells(
    before: Option<&crate::WorkbookCells>,
    after: &crate::WorkbookCells,
) -> Vec<keiri_xlsx::PatchDiffItem> {
    use std::collections::BTreeMap;
    let empty = crate::WorkbookCells::default();
    let before_book = before.unwrap_or(&empty);
    let item = |op, sheet: &str, cell: Option<String>, before, after| keiri_xlsx::PatchDiffItem {
        op,
        op_index: 0,
        sheet: sheet.to_string(),
        cell,
        before,
        after,
        status: keiri_xlsx::DiffStatus::Applied,
        // A comparison of two files has no formula engine; a patch's own diff has the values.
        computed: None,
    };
    let mut diff = Vec::new();
    for (name, _) in &before_book.sheets {
        if !after.sheets.iter().any(|(n, _)| n == name) {
            diff.push(item(
                keiri_xlsx::OpKind::DeleteSheet,
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
                keiri_xlsx::OpKind::AddSheet,
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
                keiri_xlsx::OpKind::SetValue,
                name,
                Some(a1),
                was.map(patch_value),
                now.map(patch_value),
            ));
        }
    }
    diff
}
