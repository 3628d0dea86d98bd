//! One row or one column of a worksheet, and the last row holding a value: what the row ops
//! (`update_rows_by_key`, `append_rows`) read. Each looks up only the cells it needs (a binary
//! search per row), so finding keys in a 100,000-row sheet does not decode every cell.

use super::{Content, SheetDoc};
use crate::a1::CellRef;

impl SheetDoc {
    /// The cells of one row that hold content (after this patch's edits), by column.
    pub fn row_cells(&self, row: u32, sst: &[String]) -> Vec<(u32, Content)> {
        let mut out: Vec<(u32, Content)> = Vec::new();
        if let Ok(r) = self.rows.binary_search_by_key(&row, |r| r.row)
            && let Some(original) = self.rows.get(r)
        {
            for c in &original.cells {
                let at = CellRef {
                    row,
                    col: u32::from(c.col),
                };
                if self.edits.contains_key(&at) {
                    continue;
                }
                let content = self.get(at, sst);
                if content != Content::Empty {
                    out.push((at.col, content));
                }
            }
        }
        let edited = self
            .edits
            .range(CellRef { row, col: 0 }..=CellRef { row, col: u32::MAX });
        for (at, edit) in edited {
            if edit.content != Content::Empty {
                out.push((at.col, edit.content.clone()));
            }
        }
        out.sort_by_key(|(col, _)| *col);
        out
    }

    /// The columns of a row that have a `<c>` element or an edit (content or only a style).
    pub fn row_columns(&self, row: u32) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        if let Ok(r) = self.rows.binary_search_by_key(&row, |r| r.row)
            && let Some(original) = self.rows.get(r)
        {
            out.extend(original.cells.iter().map(|c| u32::from(c.col)));
        }
        let edited = self
            .edits
            .range(CellRef { row, col: 0 }..=CellRef { row, col: u32::MAX });
        out.extend(edited.map(|(at, _)| at.col));
        out.extend(
            self.restyles
                .keys()
                .filter(|at| at.row == row)
                .map(|at| at.col),
        );
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The cells of one column that hold content (after edits), by row.
    pub fn column_cells(&self, col: u32, sst: &[String]) -> Vec<(u32, Content)> {
        let mut out: Vec<(u32, Content)> = Vec::new();
        for original in &self.rows {
            let at = CellRef {
                row: original.row,
                col,
            };
            if self.edits.contains_key(&at) {
                continue;
            }
            let found = original
                .cells
                .binary_search_by_key(&col, |c| u32::from(c.col))
                .is_ok();
            if found {
                let content = self.get(at, sst);
                if content != Content::Empty {
                    out.push((at.row, content));
                }
            }
        }
        for (at, edit) in &self.edits {
            if at.col == col && edit.content != Content::Empty {
                out.push((at.row, edit.content.clone()));
            }
        }
        out.sort_by_key(|(row, _)| *row);
        out
    }

    /// The last row with a value (text, number, boolean, date, error) after edits: rows that
    /// hold only formulas — a template's prepared rows — do not count. `None` for a sheet
    /// without values.
    pub fn last_value_row(&self, sst: &[String]) -> Option<u32> {
        let is_value = |c: &Content| !matches!(c, Content::Empty | Content::Formula { .. });
        let edited = self
            .edits
            .iter()
            .filter(|(_, e)| is_value(&e.content))
            .map(|(at, _)| at.row)
            .max();
        let original = self.rows.iter().rev().find_map(|row| {
            row.cells
                .iter()
                .map(|c| CellRef {
                    row: row.row,
                    col: u32::from(c.col),
                })
                .filter(|at| !self.edits.contains_key(at))
                .any(|at| is_value(&self.get(at, sst)))
                .then_some(row.row)
        });
        edited.max(original)
    }
}
