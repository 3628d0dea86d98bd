//! Row heights and column widths of a worksheet: read, edited, and the `<cols>` list as it is
//! written back.

use super::{ColEntry, Content, SheetDoc, format_number, tag_attr};
use crate::a1::CellRef;

impl SheetDoc {
    /// The last row and the last column that hold content (a value or a formula), this
    /// patch's edits included; `None` for a sheet with none. Styled empty cells do not count.
    pub fn content_extent(&self, sst: &[String]) -> Option<(u32, u32)> {
        let mut extent: Option<(u32, u32)> = None;
        let mut grow = |at: CellRef| {
            let e = extent.get_or_insert((at.row, at.col));
            *e = (e.0.max(at.row), e.1.max(at.col));
        };
        let mut original = Vec::new();
        self.visit_cells(sst, |at, _| {
            original.push(at);
            true
        });
        for at in original
            .into_iter()
            .filter(|at| !self.edits.contains_key(at))
        {
            grow(at);
        }
        for (at, edit) in &self.edits {
            if edit.content != Content::Empty {
                grow(*at);
            }
        }
        extent
    }

    /// The custom height of a row, if it has one.
    pub fn row_height(&self, row: u32) -> Option<f64> {
        if let Some(h) = self.heights.get(&row) {
            return *h;
        }
        let r = self.rows.binary_search_by_key(&row, |r| r.row).ok()?;
        let row = self.rows.get(r)?;
        let tag = self.xml.get(row.start as usize..row.tag_end as usize)?;
        tag_attr(tag, b"ht")?.parse().ok()
    }

    pub fn set_row_height(&mut self, row: u32, height: Option<f64>) {
        self.heights.insert(row, height);
    }

    /// The width of a column, if the sheet sets one.
    pub fn column_width(&self, col: u32) -> Option<f64> {
        if let Some(w) = self.widths.get(&col) {
            return *w;
        }
        self.cols
            .iter()
            .find(|c| (c.min..=c.max).contains(&col))
            .and_then(|c| c.attrs.iter().find(|(k, _)| k == "width"))
            .and_then(|(_, v)| v.parse().ok())
    }

    pub fn set_column_width(&mut self, col: u32, width: Option<f64>) {
        self.widths.insert(col, width);
    }

    /// The `<cols>` entries with the width edits applied: a range covering an edited column is
    /// split so only that column changes.
    pub(super) fn cols_after(&self) -> Vec<ColEntry> {
        let mut out: Vec<ColEntry> = Vec::new();
        for entry in &self.cols {
            let mut start = entry.min;
            for (&col, _) in self.widths.range(entry.min..=entry.max) {
                if col > start {
                    out.push(ColEntry {
                        min: start,
                        max: col - 1,
                        attrs: entry.attrs.clone(),
                    });
                }
                out.push(ColEntry {
                    min: col,
                    max: col,
                    attrs: entry.attrs.clone(),
                });
                start = col + 1;
            }
            if start <= entry.max {
                out.push(ColEntry {
                    min: start,
                    max: entry.max,
                    attrs: entry.attrs.clone(),
                });
            }
        }
        for (&col, width) in &self.widths {
            let at = out.iter().position(|c| c.min == col && c.max == col);
            let entry = match at {
                Some(i) => out.get_mut(i),
                None => {
                    out.push(ColEntry {
                        min: col,
                        max: col,
                        attrs: Vec::new(),
                    });
                    out.last_mut()
                }
            };
            let Some(entry) = entry else { continue };
            entry
                .attrs
                .retain(|(k, _)| k != "width" && k != "customWidth" && k != "bestFit");
            if let Some(w) = width {
                entry.attrs.push(("width".into(), format_number(*w)));
                entry.attrs.push(("customWidth".into(), "1".into()));
            }
        }
        out.retain(|c| !c.attrs.is_empty());
        out.sort_by_key(|c| c.min);
        out
    }
}
