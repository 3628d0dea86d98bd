//! `update_rows_by_key` and `append_rows`: rows found by their key cell, rows added after the
//! last one. Both resolve to cell writes through the same path as `set_value` (dates become
//! serials with a date format, `=` text needs `auto_formula`, merged and locked cells are
//! refused), so their diffs and inverse ops are the cell ops' own.

use std::collections::HashMap;

use super::*;
use crate::formula::{Kind, RefArea};
use crate::row_ops::{
    CopyStyleFrom, Headers, OnMissing, RowValues, UpdateRowsByKey, cell_text, key_of, normalise_key,
};

/// How many keys or formulas a message lists before "and N more".
const LISTED: usize = 5;

fn listed(items: &[String]) -> String {
    let mut text = items
        .iter()
        .take(LISTED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > LISTED {
        text.push_str(&format!(" and {} more", items.len() - LISTED));
    }
    text
}

impl Run<'_> {
    pub(super) fn rows_op(&mut self, i: usize, op: &PatchOp, si: usize) -> Result<OpResult, Error> {
        // No rows (a quarter without leavers) is nothing to do, said in a warning.
        let given = match op {
            PatchOp::UpdateRowsByKey(o) => o.rows.len(),
            PatchOp::AppendRows(o) => o.rows.len(),
            _ => 1,
        };
        if given == 0 {
            self.warnings.push(format!(
                "op[{i}] {}: no rows were given; {} is unchanged",
                op.kind().as_str(),
                self.sheet_name(si)
            ));
            self.inverse.push(Vec::new());
            return Ok(Ok(()));
        }
        match op {
            PatchOp::UpdateRowsByKey(o) => self.update_rows(i, op, si, o),
            PatchOp::AppendRows(o) => {
                let headers = match o.header_row {
                    Some(row) => self.headers(si, row)?,
                    None => Headers::letters_only(),
                };
                let mut befores = Vec::new();
                let mut restyled = Vec::new();
                let result = self.append(
                    i,
                    op,
                    si,
                    &headers,
                    &o.rows,
                    (o.copy_style_from, o.extend_ranges),
                    &mut befores,
                    &mut restyled,
                )?;
                self.finish(si, result, befores, restyled)
            }
            _ => Ok(Ok(())),
        }
    }

    fn headers(&mut self, si: usize, row: u32) -> Result<Headers, Error> {
        let (doc, sst) = self.book.doc_mut(si)?;
        Ok(Headers::read(doc, sst, row))
    }

    /// Records the op's inverse (the cells' old contents, then their old styles) and returns
    /// its outcome.
    fn finish(
        &mut self,
        si: usize,
        result: OpResult,
        befores: Vec<(CellRef, Content)>,
        restyled: Vec<(CellRef, u32)>,
    ) -> Result<OpResult, Error> {
        if result.is_err() {
            return Ok(result);
        }
        let sheet = self.sheet_name(si);
        let mut inverse = Vec::new();
        if self.req.return_inverse_ops {
            for (cell, before) in &befores {
                inverse.push(self.inverse_for(&sheet, *cell, before));
            }
            // A cell restyled twice (a date format, then a fill) goes back to its first style.
            let mut seen = std::collections::HashSet::new();
            let first: Vec<(CellRef, u32)> = restyled
                .into_iter()
                .filter(|(cell, _)| seen.insert(*cell))
                .collect();
            inverse.extend(Self::restore_styles(&sheet, first));
        }
        self.inverse.push(inverse);
        Ok(result)
    }

    fn update_rows(
        &mut self,
        i: usize,
        op: &PatchOp,
        si: usize,
        o: &UpdateRowsByKey,
    ) -> Result<OpResult, Error> {
        let sheet = self.sheet_name(si);
        let headers = self.headers(si, o.header_row)?;
        let key_col = match headers.column(&sheet, &o.key_column) {
            Ok(c) => c,
            Err(e) => return Ok(Err(format!("key_column: {e}"))),
        };
        // Every key below the header, and the rows that hold it.
        let mut index: HashMap<String, Vec<u32>> = HashMap::new();
        {
            let (doc, sst) = self.book.doc_mut(si)?;
            for (row, content) in doc.column_cells(key_col, sst) {
                if row <= o.header_row {
                    continue;
                }
                if let Some(key) = cell_text(&content) {
                    index.entry(key).or_default().push(row);
                }
            }
        }
        let key_name = normalise_key(&o.key_column);
        let mut found: Vec<(u32, &RowValues)> = Vec::new();
        let mut missing: Vec<(String, &RowValues)> = Vec::new();
        for (n, row) in o.rows.iter().enumerate() {
            // `validate` has checked that every row has a non-empty key.
            let given = row
                .iter()
                .find(|(k, _)| normalise_key(k) == key_name)
                .and_then(|(_, v)| v.as_ref());
            let key = given.and_then(key_of).unwrap_or_default();
            let shown = given.map(show).unwrap_or_default();
            match index.get(&key).map(Vec::as_slice) {
                Some([one]) => found.push((*one, row)),
                Some(many) => {
                    return Ok(Err(format!(
                        "rows[{n}]: the key {shown} is in rows {} of {sheet} (column {}); a key \
                         must find one row",
                        many.iter()
                            .map(u32::to_string)
                            .collect::<Vec<_>>()
                            .join(", "),
                        a1::column_name(key_col)
                    )));
                }
                None => missing.push((shown, row)),
            }
        }
        if !missing.is_empty() {
            let keys: Vec<String> = missing.iter().map(|(k, _)| k.clone()).collect();
            match o.on_missing {
                OnMissing::Error => {
                    return Ok(Err(format!(
                        "{} of {} keys are not in {sheet}!{} below row {}: {} (on_missing: \
                         append adds them, skip leaves them out)",
                        keys.len(),
                        o.rows.len(),
                        a1::column_name(key_col),
                        o.header_row,
                        listed(&keys)
                    )));
                }
                OnMissing::Skip => self.warnings.push(format!(
                    "op[{i}] update_rows_by_key: {} keys are not in {sheet} and were skipped: {}",
                    keys.len(),
                    listed(&keys)
                )),
                OnMissing::Append => {}
            }
        }
        let mut befores = Vec::new();
        let mut restyled = Vec::new();
        for (row, values) in &found {
            let mut cells: Vec<(u32, &Option<CellValue>)> = Vec::new();
            for (name, value) in values.iter() {
                if normalise_key(name) == key_name {
                    continue;
                }
                match headers.column(&sheet, name) {
                    Ok(col) => cells.push((col, value)),
                    Err(e) => return Ok(Err(e)),
                }
            }
            cells.sort_by_key(|(col, _)| *col);
            for (col, value) in cells {
                let Some(cell) = CellRef::new(*row, col) else {
                    continue;
                };
                match self.write_value(i, op, si, cell, value, &mut restyled)? {
                    Ok(before) => befores.push((cell, before)),
                    Err(e) => return Ok(Err(e)),
                }
            }
        }
        if let Some(color) = &o.fill_color {
            let span = match &o.fill_columns {
                Some(text) => crate::row_ops::column_span(text).ok(),
                None => headers.span(),
            };
            let rows: Vec<u32> = found.iter().map(|(r, _)| *r).collect();
            if let (Some(span), false) = (span, rows.is_empty())
                && let Err(e) = self.fill_rows(si, &rows, span, color, &mut restyled)?
            {
                return Ok(Err(e));
            }
        }
        let mut result = Ok(());
        if o.on_missing == OnMissing::Append && !missing.is_empty() {
            let rows: Vec<RowValues> = missing.into_iter().map(|(_, r)| r.clone()).collect();
            result = self.append(
                i,
                op,
                si,
                &headers,
                &rows,
                (CopyStyleFrom::Last, o.extend_ranges),
                &mut befores,
                &mut restyled,
            )?;
        }
        self.finish(si, result, befores, restyled)
    }

    /// Gives columns `span` of each of `rows` a solid fill (each cell keeps the rest of its
    /// format), recording the old styles.
    fn fill_rows(
        &mut self,
        si: usize,
        rows: &[u32],
        span: (u32, u32),
        color: &str,
        restyled: &mut Vec<(CellRef, u32)>,
    ) -> Result<OpResult, Error> {
        let change = StyleChange {
            fill_color: match crate::design::argb(color, "fill_color") {
                Ok(c) => Some(c),
                Err(e) => return Ok(Err(e)),
            },
            ..Default::default()
        };
        let cells: Vec<CellRef> = rows
            .iter()
            .flat_map(|r| (span.0..=span.1).filter_map(move |c| CellRef::new(*r, c)))
            .collect();
        let before: Vec<u32> = {
            let (doc, _) = self.book.doc_mut(si)?;
            cells.iter().map(|c| doc.style_id(*c)).collect()
        };
        let styles = match self.book.styles_mut()? {
            Ok(s) => s,
            Err(e) => return Ok(Err(e)),
        };
        let mut derived: HashMap<u32, u32> = HashMap::new();
        let mut after = Vec::with_capacity(before.len());
        for old in &before {
            let new = match derived.get(old) {
                Some(n) => *n,
                None => match styles.derive(*old as usize, &change) {
                    Ok(n) => {
                        let n = u32::try_from(n).unwrap_or(u32::MAX);
                        derived.insert(*old, n);
                        n
                    }
                    Err(e) => return Ok(Err(e)),
                },
            };
            after.push(new);
        }
        let (doc, _) = self.book.doc_mut(si)?;
        for ((cell, old), new) in cells.iter().zip(before).zip(after) {
            doc.restyle(*cell, new);
            restyled.push((*cell, old));
        }
        self.book.changed = true;
        Ok(Ok(()))
    }

    /// Appends `rows` after the last row holding a value (at least below the header row).
    #[allow(clippy::too_many_arguments)]
    fn append(
        &mut self,
        i: usize,
        op: &PatchOp,
        si: usize,
        headers: &Headers,
        rows: &[RowValues],
        (copy, extend): (CopyStyleFrom, bool),
        befores: &mut Vec<(CellRef, Content)>,
        restyled: &mut Vec<(CellRef, u32)>,
    ) -> Result<OpResult, Error> {
        let sheet = self.sheet_name(si);
        // Every column first, so a wrong name writes nothing.
        let mut resolved: Vec<Vec<(u32, &Option<CellValue>)>> = Vec::with_capacity(rows.len());
        for row in rows {
            let mut cells = Vec::with_capacity(row.len());
            for (name, value) in row {
                match headers.column(&sheet, name) {
                    Ok(col) => cells.push((col, value)),
                    Err(e) => return Ok(Err(e)),
                }
            }
            cells.sort_by_key(|(col, _)| *col);
            resolved.push(cells);
        }
        let header = headers.row.unwrap_or(0);
        let last = {
            let (doc, sst) = self.book.doc_mut(si)?;
            doc.last_value_row(sst).unwrap_or(0).max(header)
        };
        let first = last + 1;
        let end = u64::from(last) + rows.len() as u64;
        if end >= u64::from(a1::MAX_ROW) {
            return Ok(Err(format!(
                "{} rows after row {last} would pass the sheet's last row {}",
                rows.len(),
                a1::MAX_ROW
            )));
        }
        if last > header
            && let Some(total) = self.totals_in(si, last)?
        {
            return Ok(Err(format!(
                "row {last} of {sheet} looks like a totals row ({total}); rows appended below \
                 it would be left out of its total. Make room above it in Excel, or write the \
                 rows with set_range_values"
            )));
        }
        let final_row = last + rows.len() as u32;
        // A merged block below the table (a form's notes box) is not a row to write into,
        // not even at its top-left cell.
        {
            let (doc, _) = self.book.doc_mut(si)?;
            for (n, cells) in resolved.iter().enumerate() {
                let row = first + n as u32;
                let merged = cells.iter().find_map(|(col, _)| {
                    let cell = CellRef::new(row, *col)?;
                    doc.merges()
                        .iter()
                        .find(|m| m.contains(cell) && !m.is_single_cell())
                        .map(|m| (cell, *m))
                });
                if let Some((cell, merge)) = merged {
                    return Ok(Err(format!(
                        "row {row} of {sheet}, where the rows would be appended, is part of \
                         the merged range {merge} at {cell}; append_rows writes plain rows below \
                         the last row with a value ({last})"
                    )));
                }
            }
        }
        let short = self.ranges_short_of(si, last, header, final_row)?;
        for (n, cells) in resolved.iter().enumerate() {
            let row = first + n as u32;
            // Styles and formulas of the row above, into cells the row does not have yet (a
            // template's prepared row keeps its own). The header row carries nothing.
            if copy == CopyStyleFrom::Last && row - 1 > header {
                let given: Vec<u32> = cells.iter().map(|(c, _)| *c).collect();
                if let Err(e) = self.carry_row(i, op, si, row, &given, befores, restyled)? {
                    return Ok(Err(e));
                }
            }
            for (col, value) in cells {
                let Some(cell) = CellRef::new(row, *col) else {
                    continue;
                };
                match self.write_value(i, op, si, cell, value, restyled)? {
                    Ok(before) => befores.push((cell, before)),
                    Err(e) => return Ok(Err(e)),
                }
            }
        }
        if short.is_empty() {
            return Ok(Ok(()));
        }
        let listed_cells: Vec<String> = short
            .iter()
            .map(|s| format!("{} ={} → ={}", s.cell, s.body, s.extended))
            .collect();
        if !extend {
            let outside: Vec<String> = short
                .iter()
                .map(|s| format!("{} ={}", s.cell, s.body))
                .collect();
            self.warnings.push(format!(
                "op[{i}] {}: {} formula(s) of {sheet} add up the table's rows but stop before \
                 the appended ones (rows up to {final_row}); extend their ranges: {}",
                op.kind().as_str(),
                short.len(),
                listed(&outside)
            ));
            return Ok(Ok(()));
        }
        for s in short {
            match self.write_formula(i, op, si, s.cell, &s.extended)? {
                Ok(before) => befores.push((s.cell, before)),
                Err(e) => return Ok(Err(e)),
            }
        }
        self.warnings.push(format!(
            "op[{i}] {}: extended {} total(s) of {sheet} to the appended rows: {}",
            op.kind().as_str(),
            listed_cells.len(),
            listed(&listed_cells)
        ));
        Ok(Ok(()))
    }

    /// Gives the empty cells of `row` the styles of the row above and its formulas shifted one
    /// row down (except in the columns in `given`).
    #[allow(clippy::too_many_arguments)]
    fn carry_row(
        &mut self,
        i: usize,
        op: &PatchOp,
        si: usize,
        row: u32,
        given: &[u32],
        befores: &mut Vec<(CellRef, Content)>,
        restyled: &mut Vec<(CellRef, u32)>,
    ) -> Result<OpResult, Error> {
        let sheet = self.sheet_name(si);
        let (styles, formulas) = {
            let (doc, sst) = self.book.doc_mut(si)?;
            let own: Vec<u32> = doc.row_columns(row);
            let styles: Vec<(u32, u32)> = doc
                .row_columns(row - 1)
                .into_iter()
                .filter(|c| !own.contains(c))
                .filter_map(|c| {
                    let style = doc.style_id(CellRef {
                        row: row - 1,
                        col: c,
                    });
                    (style != 0).then_some((c, style))
                })
                .collect();
            let formulas: Vec<(u32, String, bool)> = doc
                .row_cells(row - 1, sst)
                .into_iter()
                .filter(|(c, _)| !own.contains(c) && !given.contains(c))
                .filter_map(|(c, content)| match content {
                    Content::Formula { text, array, .. } => Some((c, text, array.is_some())),
                    _ => None,
                })
                .collect();
            (styles, formulas)
        };
        for (col, style) in styles {
            let Some(cell) = CellRef::new(row, col) else {
                continue;
            };
            let (doc, _) = self.book.doc_mut(si)?;
            let old = doc.style_id(cell);
            doc.restyle(cell, style);
            restyled.push((cell, old));
            self.book.changed = true;
        }
        for (col, text, array) in formulas {
            let Some(cell) = CellRef::new(row, col) else {
                continue;
            };
            if array {
                self.warnings.push(format!(
                    "op[{i}] {}: {sheet}!{} above holds an array formula, which is not carried \
                     to {cell}",
                    op.kind().as_str(),
                    CellRef { row: row - 1, col }
                ));
                continue;
            }
            let body = formula::strip_file_prefixes(&text);
            let shifted = match formula::shift(&body, 1, 0) {
                Ok(s) => s,
                Err(e) => {
                    return Ok(Err(format!(
                        "the formula above {cell} cannot be carried down because it does not \
                         parse: {e}"
                    )));
                }
            };
            match self.write_formula(i, op, si, cell, &shifted.text)? {
                Ok(before) => befores.push((cell, before)),
                Err(e) => return Ok(Err(e)),
            }
        }
        Ok(Ok(()))
    }

    /// A totals row: its only values are text (a label such as 合計) and one of its formulas
    /// takes a range of this sheet that ends right above it. Returns `cell =formula`.
    fn totals_in(&mut self, si: usize, row: u32) -> Result<Option<String>, Error> {
        let (doc, sst) = self.book.doc_mut(si)?;
        let cells = doc.row_cells(row, sst);
        let only_labels = cells
            .iter()
            .all(|(_, c)| matches!(c, Content::Text(_) | Content::Formula { .. }));
        if !only_labels {
            return Ok(None);
        }
        Ok(cells.into_iter().find_map(|(col, content)| {
            let Content::Formula { text, .. } = content else {
                return None;
            };
            let body = formula::strip_file_prefixes(&text);
            ranges_of(&body)
                .any(|(first, last)| last + 1 == row && first < last)
                .then(|| format!("{}{row} ={body}", a1::column_name(col)))
        }))
    }

    /// Formulas outside the table that take a range of its rows reaching the old last row but
    /// not the last appended one (`SUM(H6:H12)` with rows appended to 13): the new rows would
    /// not be in them, and the total would be short without a sign. Each comes with its
    /// ranges extended to `final_row`.
    fn ranges_short_of(
        &mut self,
        si: usize,
        last: u32,
        header: u32,
        final_row: u32,
    ) -> Result<Vec<ShortRange>, Error> {
        if last <= header {
            return Ok(Vec::new());
        }
        let (doc, sst) = self.book.doc_mut(si)?;
        let short = |first: u32, end: u32| {
            first <= last && first >= header && end >= last && end < final_row && first < end
        };
        let mut out = Vec::new();
        doc.visit_cells(sst, |at, content| {
            if let Content::Formula { text, .. } = content
                && !(header < at.row && at.row <= final_row)
            {
                let body = formula::strip_file_prefixes(&text);
                if ranges_of(&body).any(|(first, end)| short(first, end)) {
                    let extended =
                        extend_ranges(&body, |first, end| short(first, end).then_some(final_row));
                    out.push(ShortRange {
                        cell: at,
                        body,
                        extended,
                    });
                }
            }
            true
        });
        Ok(out)
    }
}

/// A formula whose ranges stop short of the appended rows, and the same formula reaching them.
struct ShortRange {
    cell: CellRef,
    body: String,
    extended: String,
}

/// The formula with the last row of each own-sheet range `new_end` picks for it replaced.
fn extend_ranges(body: &str, new_end: impl Fn(u32, u32) -> Option<u32>) -> String {
    let Ok(tokens) = formula::tokenize(body) else {
        return body.to_string();
    };
    formula::render(body, &tokens, |_, t| {
        let Kind::Reference(r) = &t.kind else {
            return None;
        };
        let RefArea::Range(a, b) = r.area else {
            return None;
        };
        if r.prefix.is_some() {
            return None;
        }
        let (top, bottom) = if a.row <= b.row { (a, b) } else { (b, a) };
        let end = new_end(top.row, bottom.row)?;
        let mut bottom = bottom;
        bottom.row = end;
        Some(format!(
            "{}:{}",
            formula::render_pos(top),
            formula::render_pos(bottom)
        ))
    })
}

/// The row spans (first, last) of the ranges a formula takes on its own sheet (references
/// without a sheet prefix).
fn ranges_of(body: &str) -> impl Iterator<Item = (u32, u32)> {
    let tokens = formula::tokenize(body).unwrap_or_default();
    tokens.into_iter().filter_map(|t| match t.kind {
        Kind::Reference(r) if r.prefix.is_none() => match r.area {
            RefArea::Range(a, b) => Some((a.row.min(b.row), a.row.max(b.row))),
            _ => None,
        },
        _ => None,
    })
}
