//! `fill_formula`: a formula written into every cell of a range, shifted as Excel's fill
//! handle shifts it, and a range to the sheet's edge clipped to the sheet's content.

use super::*;

impl Run<'_> {
    pub(super) fn fill_op(
        &mut self,
        i: usize,
        op: &PatchOp,
        si: usize,
        area: Area,
        base: CellRef,
        body: Option<&str>,
    ) -> Result<OpResult, Error> {
        let sheet = self.sheet_name(si);
        // Without a formula in the op, the base cell's own formula is filled (read before any
        // cell of the range, which may include the base cell, is written).
        let body = match body {
            Some(b) => b.to_string(),
            None => {
                let (doc, sst) = self.book.doc_mut(si)?;
                match doc.get(base, sst) {
                    Content::Formula {
                        array: Some(area), ..
                    } => {
                        return Ok(Err(format!(
                            "base_cell {sheet}!{base} is part of the array formula at {area}, \
                             which cannot be filled cell by cell"
                        )));
                    }
                    Content::Formula { text, .. } => formula::strip_file_prefixes(&text),
                    other => {
                        return Ok(Err(format!(
                            "base_cell {sheet}!{base} holds {} and no formula; give the op a \
                             formula or point base_cell at a formula cell",
                            describe(&other)
                        )));
                    }
                }
            }
        };
        let body = body.as_str();
        let area = match self.clip_to_content(i, si, area)? {
            Ok(area) => area,
            Err(e) => return Ok(Err(e)),
        };
        let mut befores = Vec::new();
        for cell in area.cells() {
            let rows = i64::from(cell.row) - i64::from(base.row);
            let cols = i64::from(cell.col) - i64::from(base.col);
            let shifted = match formula::shift(body, rows, cols) {
                Ok(s) => s,
                Err(e) => {
                    return Ok(Err(format!(
                        "the formula cannot be filled because it does not parse: {e}"
                    )));
                }
            };
            for lost in &shifted.lost {
                self.warnings.push(format!(
                    "op[{i}] fill_formula: at {sheet}!{cell} the reference {lost} would leave the sheet and became #REF!"
                ));
            }
            let before = match self.write_formula(i, op, si, cell, &shifted.text)? {
                Ok(b) => b,
                Err(e) => return Ok(Err(e)),
            };
            if self.req.return_inverse_ops {
                befores.push((cell, before));
            }
        }
        let inverse = self.inverse_for_area(&sheet, area, &befores);
        self.inverse.push(inverse);
        Ok(Ok(()))
    }

    /// A fill to the sheet's last row (`C2:C1048576`) or last column (`A5:XFD5`) means "as far
    /// as the data goes", as in Excel: it is clipped to the last row (column) holding content,
    /// never less than its first, with a warning naming both ranges. A million formula cells
    /// below the data would cost seconds and a gigabyte, and make every later recalculation
    /// slow. What is left past the request's cell cap is `LIMIT_EXCEEDED`'s message.
    fn clip_to_content(
        &mut self,
        i: usize,
        si: usize,
        area: Area,
    ) -> Result<Result<Area, String>, Error> {
        let (down, across) = (to_last_row(&area), to_last_col(&area));
        if !down && !across {
            return Ok(Ok(area));
        }
        let sheet = self.sheet_name(si);
        let (doc, sst) = self.book.doc_mut(si)?;
        let (last_row, last_col) = doc.content_extent(sst).unwrap_or((0, 0));
        let mut clipped = area;
        if down {
            clipped.last.row = last_row.max(area.first.row);
        }
        if across {
            clipped.last.col = last_col.max(area.first.col);
        }
        if clipped.len() > MAX_CELLS_PER_REQUEST {
            return Ok(Err(format!(
                "fill_formula {sheet}!{area} covers {} cells with content, more than \
                 {MAX_CELLS_PER_REQUEST}; fill it in parts",
                clipped.len()
            )));
        }
        self.warnings.push(format!(
            "op[{i}] fill_formula: {sheet}!{area} reaches the end of the sheet; filled \
             {sheet}!{clipped}, as far as the sheet's content goes"
        ));
        Ok(Ok(clipped))
    }
}
