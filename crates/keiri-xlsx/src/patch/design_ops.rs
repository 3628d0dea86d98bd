//! Applying the design ops (styling, dimensions, merges, tables) and building their inverse
//! ops. Diff entries follow ExStruct's: one entry per op, `before: null`, `after` a style or
//! dimension summary.

use std::collections::BTreeMap;

use super::*;
use crate::design::{self, CellStyleSnapshot, ColumnDimensionSnapshot, DesignSnapshot};
use crate::design::{MergeStateSnapshot, RowDimensionSnapshot};
use crate::styles::StyleChange;

/// Python's spelling of a bool, which ExStruct's summaries use.
fn py_bool(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}

fn py_opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("None".to_string(), |v| v.to_string())
}

/// Whether a character takes two columns (East Asian wide or fullwidth).
pub(crate) fn is_wide(c: char) -> bool {
    matches!(u32::from(c),
        0x1100..=0x115F
        | 0x2E80..=0x303E
        | 0x3041..=0x33FF
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F
        | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6
        | 0x1F300..=0x1F64F
        | 0x20000..=0x3FFFD)
}

/// The display width of a text: wide characters count two, as Excel's column width unit (the
/// width of one `0` of the default font) roughly measures them.
pub(crate) fn display_width(text: &str) -> usize {
    text.lines()
        .map(|line| line.chars().map(|c| if is_wide(c) { 2 } else { 1 }).sum())
        .max()
        .unwrap_or(0)
}

fn intersects(a: &Area, b: &Area) -> bool {
    a.first.row <= b.last.row
        && b.first.row <= a.last.row
        && a.first.col <= b.last.col
        && b.first.col <= a.last.col
}

impl Run<'_> {
    pub(super) fn design_op(
        &mut self,
        i: usize,
        op: &PatchOp,
        si: usize,
    ) -> Result<OpResult, Error> {
        let target = |cell: &Option<String>, range: &Option<String>| {
            design::style_target(op.kind().as_str(), cell.as_deref(), range.as_deref())
        };
        let color = |c: &str, field: &str| design::argb(c, field);
        let shown = |c: &str| format!("#{}", c.trim().trim_start_matches('#').to_uppercase());
        let result = match op {
            PatchOp::SetBold(o) => target(&o.cell, &o.range).map(|area| {
                let change = StyleChange {
                    bold: Some(o.bold),
                    ..Default::default()
                };
                (area, change, format!("bold={}", py_bool(o.bold)))
            }),
            PatchOp::SetFontSize(o) => target(&o.cell, &o.range).map(|area| {
                let change = StyleChange {
                    size: Some(o.font_size),
                    ..Default::default()
                };
                (area, change, format!("font_size={:?}", o.font_size))
            }),
            PatchOp::SetFontColor(o) => target(&o.cell, &o.range).and_then(|area| {
                let change = StyleChange {
                    font_color: Some(color(&o.color, "color")?),
                    ..Default::default()
                };
                Ok((area, change, format!("font_color={}", shown(&o.color))))
            }),
            PatchOp::SetFillColor(o) => target(&o.cell, &o.range).and_then(|area| {
                let change = StyleChange {
                    fill_color: Some(color(&o.fill_color, "fill_color")?),
                    ..Default::default()
                };
                Ok((area, change, format!("fill={}", shown(&o.fill_color))))
            }),
            PatchOp::SetAlignment(o) => target(&o.cell, &o.range).map(|area| {
                let change = StyleChange {
                    horizontal: o.horizontal_align.map(|h| h.as_str()),
                    vertical: o.vertical_align.map(|v| v.as_str()),
                    wrap: o.wrap_text,
                    ..Default::default()
                };
                let summary = format!(
                    "horizontal={},vertical={},wrap_text={}",
                    py_opt(o.horizontal_align.map(|h| h.as_str())),
                    py_opt(o.vertical_align.map(|v| v.as_str())),
                    py_opt(o.wrap_text.map(py_bool)),
                );
                (area, change, summary)
            }),
            PatchOp::SetStyle(o) => o.validate().and_then(|area| {
                let mut parts = Vec::new();
                if let Some(b) = o.bold {
                    parts.push(format!("bold={}", py_bool(b)));
                }
                if let Some(s) = o.font_size {
                    parts.push(format!("font_size={s:?}"));
                }
                if let Some(c) = &o.color {
                    parts.push(format!("font_color={}", shown(c)));
                }
                if let Some(c) = &o.fill_color {
                    parts.push(format!("fill={}", shown(c)));
                }
                if let Some(h) = o.horizontal_align {
                    parts.push(format!("horizontal={}", h.as_str()));
                }
                if let Some(v) = o.vertical_align {
                    parts.push(format!("vertical={}", v.as_str()));
                }
                if let Some(w) = o.wrap_text {
                    parts.push(format!("wrap_text={}", py_bool(w)));
                }
                let change = StyleChange {
                    bold: o.bold,
                    size: o.font_size,
                    font_color: o.color.as_deref().map(|c| color(c, "color")).transpose()?,
                    fill_color: o
                        .fill_color
                        .as_deref()
                        .map(|c| color(c, "fill_color"))
                        .transpose()?,
                    horizontal: o.horizontal_align.map(|h| h.as_str()),
                    vertical: o.vertical_align.map(|v| v.as_str()),
                    wrap: o.wrap_text,
                    grid_border: false,
                    number_format: None,
                };
                Ok((area, change, parts.join(";")))
            }),
            PatchOp::DrawGridBorder(o) => o.validate().map(|area| {
                let change = StyleChange {
                    grid_border: true,
                    ..Default::default()
                };
                (area, change, "grid_border(thin,black)".to_string())
            }),
            PatchOp::SetDimensions(o) => return self.set_dimensions(i, op, si, o),
            PatchOp::AutoFitColumns(o) => return self.auto_fit(i, op, si, o),
            PatchOp::MergeCells(o) => return self.merge(i, op, si, &o.range),
            PatchOp::UnmergeCells(o) => return self.unmerge(i, op, si, &o.range),
            PatchOp::ApplyTableStyle(o) => return self.apply_table(i, op, si, o),
            PatchOp::DeleteTable(o) => {
                let name = o.table_name.trim();
                if let Err(e) = self.book.delete_table(si, name)? {
                    return Ok(Err(e));
                }
                self.inverse.push(Vec::new());
                self.push_design_diff(
                    i,
                    op,
                    si,
                    None,
                    ValueKind::Style,
                    format!("table_deleted={name}"),
                );
                return Ok(Ok(()));
            }
            PatchOp::RestoreDesignSnapshot(o) => {
                return self.restore(i, op, si, &o.design_snapshot);
            }
            _ => return Ok(Ok(())),
        };
        match result {
            Ok((area, change, summary)) => self.restyle(i, op, si, area, &change, summary),
            Err(e) => Err(request_error(i, op, e)),
        }
    }

    fn push_design_diff(
        &mut self,
        i: usize,
        op: &PatchOp,
        si: usize,
        cell: Option<String>,
        kind: ValueKind,
        summary: String,
    ) {
        let sheet = self.sheet_name(si);
        self.diff.push(PatchDiffItem {
            op: op.kind(),
            op_index: i,
            sheet,
            cell,
            before: None,
            after: Some(PatchValue {
                kind,
                value: Some(CellValue::Text(summary)),
            }),
            status: DiffStatus::Applied,
            computed: None,
        });
    }

    fn push_snapshot(&mut self, si: usize, snapshot: DesignSnapshot) {
        if !self.req.return_inverse_ops {
            self.inverse.push(Vec::new());
            return;
        }
        let sheet = self.sheet_name(si);
        self.inverse.push(vec![PatchOp::RestoreDesignSnapshot(
            design::RestoreDesignSnapshot {
                sheet,
                design_snapshot: snapshot,
            },
        )]);
    }

    /// Points every cell of `area` at its current format with `change` applied.
    fn restyle(
        &mut self,
        i: usize,
        op: &PatchOp,
        si: usize,
        area: Area,
        change: &StyleChange,
        summary: String,
    ) -> Result<OpResult, Error> {
        let before: Vec<(CellRef, u32)> = {
            let (doc, _) = self.book.doc_mut(si)?;
            area.cells().map(|c| (c, doc.style_id(c))).collect()
        };
        let styles = match self.book.styles_mut()? {
            Ok(s) => s,
            Err(e) => return Ok(Err(e)),
        };
        let mut after = Vec::with_capacity(before.len());
        for (_, old) in &before {
            match styles.derive(*old as usize, change) {
                Ok(new) => after.push(u32::try_from(new).unwrap_or(u32::MAX)),
                Err(e) => return Ok(Err(e)),
            }
        }
        let (doc, _) = self.book.doc_mut(si)?;
        for ((cell, _), new) in before.iter().zip(&after) {
            doc.restyle(*cell, *new);
        }
        self.book.changed = true;
        let location = op.cell().or(op.range()).map(str::to_string);
        let location = match op {
            PatchOp::DrawGridBorder(_) => Some(area.to_a1()),
            _ => location,
        };
        self.push_design_diff(i, op, si, location, ValueKind::Style, summary);
        let snapshot = DesignSnapshot {
            cell_styles: before
                .into_iter()
                .map(|(cell, style_id)| CellStyleSnapshot {
                    cell: cell.to_a1(),
                    style_id,
                })
                .collect(),
            ..Default::default()
        };
        self.push_snapshot(si, snapshot);
        Ok(Ok(()))
    }

    fn set_dimensions(
        &mut self,
        i: usize,
        op: &PatchOp,
        si: usize,
        o: &design::SetDimensions,
    ) -> Result<OpResult, Error> {
        o.validate().map_err(|e| request_error(i, op, e))?;
        let columns = match &o.columns {
            Some(c) => design::column_numbers(c).map_err(|e| request_error(i, op, e))?,
            None => Vec::new(),
        };
        let (doc, _) = self.book.doc_mut(si)?;
        let mut snapshot = DesignSnapshot::default();
        let mut parts = Vec::new();
        if let (Some(rows), Some(height)) = (&o.rows, o.row_height) {
            for row in rows {
                snapshot.row_dimensions.push(RowDimensionSnapshot {
                    row: *row,
                    height: doc.row_height(*row),
                });
                doc.set_row_height(*row, Some(height));
            }
            parts.push(format!(
                "rows={}",
                rows.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            ));
        }
        if let Some(width) = o.column_width {
            for col in &columns {
                snapshot.column_dimensions.push(ColumnDimensionSnapshot {
                    column: design::letters(*col),
                    width: doc.column_width(*col),
                });
                doc.set_column_width(*col, Some(width));
            }
            parts.push(format!(
                "columns={}",
                columns
                    .iter()
                    .map(|c| design::letters(*c))
                    .collect::<Vec<_>>()
                    .join(",")
            ));
        }
        self.book.changed = true;
        self.push_design_diff(i, op, si, None, ValueKind::Dimension, parts.join(", "));
        self.push_snapshot(si, snapshot);
        Ok(Ok(()))
    }

    fn auto_fit(
        &mut self,
        i: usize,
        op: &PatchOp,
        si: usize,
        o: &design::AutoFitColumns,
    ) -> Result<OpResult, Error> {
        o.validate().map_err(|e| request_error(i, op, e))?;
        let named = match &o.columns {
            Some(c) => Some(design::column_numbers(c).map_err(|e| request_error(i, op, e))?),
            None => None,
        };
        let (doc, sst) = self.book.doc_mut(si)?;
        let mut longest: BTreeMap<u32, usize> = BTreeMap::new();
        for (at, content) in doc.cells(sst, true) {
            let text = match &content {
                Content::Empty => continue,
                Content::Number(n) => crate::sheet::format_number(*n),
                Content::Bool(b) => py_bool(*b).to_string(),
                Content::Text(t) | Content::Error(t) | Content::Date(t) => t.clone(),
                // The value Excel showed last time, else the formula itself.
                Content::Formula { text, cached, .. } => match cached {
                    Some(c) if !c.v.is_empty() => c.v.clone(),
                    _ => format!("={text}"),
                },
            };
            let width = display_width(&text);
            let entry = longest.entry(at.col).or_default();
            *entry = (*entry).max(width);
        }
        let columns: Vec<u32> = match named {
            Some(cols) => cols,
            None if longest.is_empty() => vec![1],
            None => longest.keys().copied().collect(),
        };
        let mut snapshot = DesignSnapshot::default();
        for col in &columns {
            let current = doc.column_width(*col);
            let max_len = longest.get(col).copied().unwrap_or(0);
            let mut width = if max_len == 0 {
                current.filter(|w| *w > 0.0).unwrap_or(8.43)
            } else {
                max_len as f64 + 2.0
            };
            if let Some(min) = o.min_width {
                width = width.max(min);
            }
            if let Some(max) = o.max_width {
                width = width.min(max);
            }
            // Excel's own limit on a column's width.
            width = width.min(255.0);
            snapshot.column_dimensions.push(ColumnDimensionSnapshot {
                column: design::letters(*col),
                width: current,
            });
            doc.set_column_width(*col, Some(width));
        }
        self.book.changed = true;
        let mut parts = vec![format!(
            "columns={}",
            columns
                .iter()
                .map(|c| design::letters(*c))
                .collect::<Vec<_>>()
                .join(",")
        )];
        if let Some(min) = o.min_width {
            parts.push(format!("min_width={min:?}"));
        }
        if let Some(max) = o.max_width {
            parts.push(format!("max_width={max:?}"));
        }
        self.push_design_diff(i, op, si, None, ValueKind::Dimension, parts.join(", "));
        self.push_snapshot(si, snapshot);
        Ok(Ok(()))
    }

    fn merge(&mut self, i: usize, op: &PatchOp, si: usize, range: &str) -> Result<OpResult, Error> {
        let area = design::strict_area(range).map_err(|e| request_error(i, op, e))?;
        if area.is_single_cell() {
            return Err(request_error(
                i,
                op,
                "merge_cells requires a multi-cell range.",
            ));
        }
        let sheet = self.sheet_name(si);
        let (doc, sst) = self.book.doc_mut(si)?;
        let overlapped: Vec<String> = doc
            .merges()
            .iter()
            .filter(|m| intersects(m, &area))
            .map(Area::to_a1)
            .collect();
        if !overlapped.is_empty() {
            return Ok(Err(format!(
                "merge_cells range overlaps existing merged ranges: {}.",
                overlapped.join(", ")
            )));
        }
        if let Some(locked) = doc.first_locked_in(&area) {
            return Ok(Err(format!(
                "{area} overlaps {} at {}; it cannot be merged",
                locked.what, locked.area
            )));
        }
        // The cells with content, not every cell of the range (a whole sheet is 17 billion).
        let risky: Vec<String> = doc
            .cells(sst, true)
            .into_iter()
            .filter(|(c, _)| area.contains(*c) && *c != area.first)
            .map(|(c, _)| c.to_a1())
            .collect();
        let mut merges = doc.merges().to_vec();
        merges.push(area);
        doc.set_merges(merges);
        if !risky.is_empty() {
            self.warnings.push(format!(
                "merge_cells may clear non-top-left values at {sheet}!{}: {}",
                area.to_a1(),
                risky.join(", ")
            ));
        }
        self.book.changed = true;
        self.push_design_diff(
            i,
            op,
            si,
            Some(area.to_a1()),
            ValueKind::Style,
            format!("merged={}", area.to_a1()),
        );
        self.push_snapshot(
            si,
            DesignSnapshot {
                merge_state: Some(MergeStateSnapshot {
                    scope: area.to_a1(),
                    ranges: Vec::new(),
                }),
                ..Default::default()
            },
        );
        Ok(Ok(()))
    }

    fn unmerge(
        &mut self,
        i: usize,
        op: &PatchOp,
        si: usize,
        range: &str,
    ) -> Result<OpResult, Error> {
        let area = design::strict_area(range).map_err(|e| request_error(i, op, e))?;
        let (doc, _) = self.book.doc_mut(si)?;
        let (hit, kept): (Vec<Area>, Vec<Area>) =
            doc.merges().iter().partition(|m| intersects(m, &area));
        doc.set_merges(kept);
        if !hit.is_empty() {
            self.book.changed = true;
        }
        self.push_design_diff(
            i,
            op,
            si,
            Some(area.to_a1()),
            ValueKind::Style,
            format!("unmerged={}", hit.len()),
        );
        self.push_snapshot(
            si,
            DesignSnapshot {
                merge_state: Some(MergeStateSnapshot {
                    scope: area.to_a1(),
                    ranges: hit.iter().map(Area::to_a1).collect(),
                }),
                ..Default::default()
            },
        );
        Ok(Ok(()))
    }

    fn apply_table(
        &mut self,
        i: usize,
        op: &PatchOp,
        si: usize,
        o: &design::ApplyTableStyle,
    ) -> Result<OpResult, Error> {
        let area = o.validate().map_err(|e| request_error(i, op, e))?;
        let sheet = self.sheet_name(si);
        let (doc, sst) = self.book.doc_mut(si)?;
        if let Some(m) = doc.merges().iter().find(|m| intersects(m, &area)) {
            return Ok(Err(format!(
                "apply_table_style range {area} intersects the merged range {m}; a table cannot \
                 hold merged cells"
            )));
        }
        // Column names are the header row's texts, as Excel requires them to match.
        let mut headers: Vec<String> = Vec::new();
        for col in area.first.col..=area.last.col {
            let at = CellRef {
                row: area.first.row,
                col,
            };
            let name = match doc.get(at, sst) {
                Content::Text(t) => t,
                Content::Number(n) => {
                    self.warnings.push(format!(
                        "apply_table_style: the header {sheet}!{at} is a number; Excel expects \
                         text headers"
                    ));
                    crate::sheet::format_number(n)
                }
                Content::Empty => {
                    return Ok(Err(format!(
                        "apply_table_style needs a header row: {sheet}!{at} is empty"
                    )));
                }
                other => {
                    return Ok(Err(format!(
                        "apply_table_style needs text headers: {sheet}!{at} holds {}",
                        describe(&other)
                    )));
                }
            };
            if headers
                .iter()
                .any(|h| h.to_lowercase() == name.to_lowercase())
            {
                return Ok(Err(format!(
                    "apply_table_style needs unique headers: {name:?} appears twice"
                )));
            }
            headers.push(name);
        }
        let name = match self.book.add_table(
            si,
            area,
            o.table_name.as_deref(),
            o.style.trim(),
            &headers,
        )? {
            Ok(name) => name,
            Err(e) => return Ok(Err(e)),
        };
        // ExStruct gives no inverse here; ours removes the table again (once it is saved).
        let sheet = self.sheet_name(si);
        self.inverse.push(if self.req.return_inverse_ops {
            vec![PatchOp::DeleteTable(design::DeleteTable {
                sheet,
                table_name: name.clone(),
            })]
        } else {
            Vec::new()
        });
        self.push_design_diff(
            i,
            op,
            si,
            Some(area.to_a1()),
            ValueKind::Style,
            format!("table={name};table_style={}", o.style.trim()),
        );
        Ok(Ok(()))
    }

    fn restore(
        &mut self,
        i: usize,
        op: &PatchOp,
        si: usize,
        snapshot: &DesignSnapshot,
    ) -> Result<OpResult, Error> {
        let mut cells = Vec::with_capacity(snapshot.cell_styles.len());
        for c in &snapshot.cell_styles {
            let cell = design::strict_cell(&c.cell, "cell").map_err(|e| request_error(i, op, e))?;
            cells.push((cell, c.style_id));
        }
        if let Some(max) = cells.iter().map(|(_, s)| *s).max() {
            let count = match self.book.styles_mut()? {
                Ok(s) => s.xf_count(),
                Err(e) => return Ok(Err(e)),
            };
            if max as usize >= count {
                return Ok(Err(format!(
                    "style_id {max} does not exist: the workbook has {count} cell formats"
                )));
            }
        }
        let merge = match &snapshot.merge_state {
            Some(m) => {
                let scope = design::strict_area(&m.scope).map_err(|e| request_error(i, op, e))?;
                let mut ranges = Vec::new();
                for r in &m.ranges {
                    ranges.push(Area::parse(r).ok_or_else(|| {
                        request_error(i, op, format!("Invalid range reference: {r}"))
                    })?);
                }
                Some((scope, ranges))
            }
            None => None,
        };
        let mut widths = Vec::new();
        for c in &snapshot.column_dimensions {
            let col = design::ColumnId::Letters(c.column.clone())
                .number()
                .map_err(|e| request_error(i, op, e))?;
            widths.push((col, c.width));
        }
        let (doc, _) = self.book.doc_mut(si)?;
        // Undo the snapshot's current state first, so the inverse of this restore is the state
        // it replaces.
        let mut undo = DesignSnapshot::default();
        for (cell, style) in &cells {
            undo.cell_styles.push(CellStyleSnapshot {
                cell: cell.to_a1(),
                style_id: doc.style_id(*cell),
            });
            doc.restyle(*cell, *style);
        }
        if let Some((scope, ranges)) = merge {
            let (hit, mut kept): (Vec<Area>, Vec<Area>) =
                doc.merges().iter().partition(|m| intersects(m, &scope));
            kept.extend(ranges);
            doc.set_merges(kept);
            undo.merge_state = Some(MergeStateSnapshot {
                scope: scope.to_a1(),
                ranges: hit.iter().map(Area::to_a1).collect(),
            });
        }
        for r in &snapshot.row_dimensions {
            undo.row_dimensions.push(RowDimensionSnapshot {
                row: r.row,
                height: doc.row_height(r.row),
            });
            doc.set_row_height(r.row, r.height);
        }
        for (col, width) in widths {
            undo.column_dimensions.push(ColumnDimensionSnapshot {
                column: design::letters(col),
                width: doc.column_width(col),
            });
            doc.set_column_width(col, width);
        }
        self.book.changed = true;
        self.push_design_diff(
            i,
            op,
            si,
            None,
            ValueKind::Style,
            "design_snapshot_restored".to_string(),
        );
        self.push_snapshot(si, undo);
        Ok(Ok(()))
    }
}
