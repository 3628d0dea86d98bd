//! `copy_sheet` and its inverse check: the copy is made by `Book::copy_sheet`; `delete_sheet`
//! with `copy_of` removes a sheet only while it still holds exactly its source's cells.

use super::*;

impl Run<'_> {
    pub(super) fn copy_sheet(
        &mut self,
        i: usize,
        op: &PatchOp,
        si: usize,
    ) -> Result<OpResult, Error> {
        let PatchOp::CopySheet(o) = op else {
            return Ok(Ok(()));
        };
        if let Some(existing) = self.book.find_sheet(&o.new_sheet) {
            return Ok(Err(format!(
                "a sheet named {:?} already exists",
                self.sheet_name(existing)
            )));
        }
        let count = self.book.sheets.len();
        let position = match o.position {
            None => None,
            Some(p) if (p as usize) <= count + 1 => Some(p as usize - 1),
            Some(p) => {
                return Ok(Err(format!(
                    "position {p} is past the last tab; the workbook has {count} sheets, so the \
                     copy can go at 1 to {}",
                    count + 1
                )));
            }
        };
        let source = self.sheet_name(si);
        let notes = self.book.copy_sheet(si, &o.new_sheet, position)?;
        self.warnings
            .extend(notes.into_iter().map(|n| format!("op[{i}] {n}")));
        self.diff.push(PatchDiffItem {
            op: OpKind::CopySheet,
            op_index: i,
            sheet: o.new_sheet.clone(),
            cell: None,
            before: None,
            after: Some(PatchValue {
                kind: ValueKind::Sheet,
                value: Some(CellValue::Text(o.new_sheet.clone())),
            }),
            status: DiffStatus::Applied,
            computed: None,
        });
        self.inverse.push(vec![PatchOp::DeleteSheet {
            sheet: o.new_sheet.clone(),
            copy_of: Some(source),
        }]);
        Ok(Ok(()))
    }

    /// `Err` unless sheet `si` holds the same values and formulas as sheet `source`.
    pub(super) fn still_a_copy(&mut self, si: usize, source: &str) -> Result<OpResult, Error> {
        let name = self.sheet_name(si);
        let Some(other) = self.book.find_sheet(source) else {
            return Ok(Err(format!(
                "copy_of: sheet {source:?} does not exist (sheets: {})",
                self.sheet_list()
            )));
        };
        if other == si {
            return Ok(Err("copy_of names the sheet itself".to_string()));
        }
        let mine = {
            let (doc, sst) = self.book.doc_mut(si)?;
            doc.cells(sst, true)
        };
        let theirs = {
            let (doc, sst) = self.book.doc_mut(other)?;
            doc.cells(sst, true)
        };
        let same = |a: &Content, b: &Content| match (a, b) {
            // The cached results may differ (one was recalculated); the formulas may not.
            (Content::Formula { text: x, .. }, Content::Formula { text: y, .. }) => x == y,
            _ => a == b,
        };
        let differs = mine
            .iter()
            .zip(&theirs)
            .find(|((ca, a), (cb, b))| ca != cb || !same(a, b))
            .map(|((ca, _), (cb, _))| (*ca).min(*cb))
            .or_else(|| {
                (mine.len() != theirs.len()).then(|| {
                    let n = mine.len().min(theirs.len());
                    mine.get(n)
                        .or(theirs.get(n))
                        .map_or(CellRef { row: 1, col: 1 }, |(c, _)| *c)
                })
            });
        match differs {
            Some(cell) => Ok(Err(format!(
                "sheet {name:?} is no longer a copy of {source:?} (they differ at {cell}); only \
                 an unchanged copy is deleted"
            ))),
            None => Ok(Ok(())),
        }
    }
}
