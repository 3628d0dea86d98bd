//! Writing one cell: the locked and merged checks, the record of which op wrote it, and the
//! diff item of a value or a formula — the path every op that writes cells goes through.

use super::*;

impl Run<'_> {
    /// Writes one cell and returns what it held before.
    pub(super) fn write_cell(
        &mut self,
        i: usize,
        si: usize,
        cell: CellRef,
        content: Content,
    ) -> Result<Result<Content, String>, Error> {
        self.cells_written += 1;
        if self.cells_written.is_multiple_of(CELLS_PER_CHECK) {
            self.stop.check()?;
        }
        let (doc, sst) = self.book.doc_mut(si)?;
        if let Some(locked) = doc.locked_at(cell) {
            return Ok(Err(format!(
                "{cell} is part of {} at {} (anchored at {}); patch ops cannot edit it",
                locked.what, locked.area, locked.anchor
            )));
        }
        if content != Content::Empty
            && let Some(merge) = doc.merged_cover(cell)
        {
            return Ok(Err(format!(
                "{cell} is inside the merged range {merge}; write to its top-left cell {}",
                merge.first
            )));
        }
        let before = doc.get(cell, sst);
        doc.set(cell, content, sst);
        self.book.changed = true;
        self.book.recalc = true;
        let sheet = self.sheet_name(si);
        if self.req.preflight_formula_check {
            self.written.insert((normalise(&sheet), cell.to_a1()), i);
        }
        Ok(Ok(before))
    }

    /// Writes one value as `set_value` writes it (a date becomes a serial and gets a date
    /// format unless the cell has one) and records its diff item. Returns what the cell held;
    /// a cell whose style changed goes to `restyled` with its old style.
    pub(super) fn write_value(
        &mut self,
        i: usize,
        op: &PatchOp,
        si: usize,
        cell: CellRef,
        value: &Option<CellValue>,
        restyled: &mut Vec<(CellRef, u32)>,
    ) -> Result<Result<Content, String>, Error> {
        let sheet = self.sheet_name(si);
        let write = Write::Value(value.clone());
        let prepared = match self.content_for(i, &format!("{sheet}!{cell}"), &write) {
            Ok(c) => c,
            Err(e) => return Ok(Err(format!("{cell}: {e}"))),
        };
        let before = match self.write_cell(i, si, cell, prepared.content)? {
            Ok(b) => b,
            Err(e) => return Ok(Err(e)),
        };
        if let Some(format) = prepared.number_format {
            match self.date_format(si, cell, format)? {
                Ok(old) => restyled.extend(old.map(|o| (cell, o))),
                Err(e) => return Ok(Err(format!("{cell}: {e}"))),
            }
        }
        self.push_applied(i, op, sheet, cell, &before, prepared.after);
        Ok(Ok(before))
    }

    /// Writes a formula (`body` as the user spells it, without `=`) and records its diff item.
    /// Returns what the cell held.
    pub(super) fn write_formula(
        &mut self,
        i: usize,
        op: &PatchOp,
        si: usize,
        cell: CellRef,
        body: &str,
    ) -> Result<Result<Content, String>, Error> {
        let content = Content::Formula {
            text: formula::to_file_spelling(body),
            array: None,
            cached: None,
        };
        let before = match self.write_cell(i, si, cell, content)? {
            Ok(b) => b,
            Err(e) => return Ok(Err(e)),
        };
        let after = PatchValue {
            kind: ValueKind::Formula,
            value: Some(CellValue::Text(format!("={body}"))),
        };
        let sheet = self.sheet_name(si);
        self.push_applied(i, op, sheet, cell, &before, after);
        Ok(Ok(before))
    }

    fn push_applied(
        &mut self,
        i: usize,
        op: &PatchOp,
        sheet: String,
        cell: CellRef,
        before: &Content,
        after: PatchValue,
    ) {
        self.diff.push(PatchDiffItem {
            op: op.kind(),
            op_index: i,
            sheet,
            cell: Some(cell.to_a1()),
            before: patch_value(before),
            after: Some(after),
            status: DiffStatus::Applied,
            computed: None,
        });
    }
}
