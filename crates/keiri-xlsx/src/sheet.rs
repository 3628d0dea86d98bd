//! One worksheet part: an index of its rows and cells by byte offset, the edits a patch makes,
//! and the new XML with only the touched rows rewritten.
//!
//! The part is scanned once with quick-xml to record where each `<row>` and `<c>` starts and
//! ends, plus what edits must respect (merged cells, array formulas, shared formula groups,
//! row and column styles). Cell details are parsed on demand from their byte range. Writing
//! splices rebuilt rows into the original text; every byte outside a touched row (and the
//! `<dimension>`) is kept.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;

use quick_xml::events::Event;

use crate::a1::{Area, CellRef, parse_area_list};
use crate::formula;
use crate::xml::{self, TextBuf};

mod cell_xml;
mod dimensions;
mod lines;
#[cfg(test)]
mod tests;

pub(crate) use cell_xml::{format_number, parse_shared_strings};
use cell_xml::{new_row, only_row_number, parse_cell, render_cell, rewrite_cell_tag, tag_attr};

/// What a cell holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Content {
    Empty,
    Number(f64),
    Text(String),
    Bool(bool),
    /// An error value such as `#N/A` stored as a constant.
    Error(String),
    /// An ISO 8601 date stored with `t="d"`.
    Date(String),
    /// A formula body (no `=`), the array range if it is an array formula, and the cached
    /// result as stored (kept when we rewrite a cell without changing its formula).
    Formula {
        text: String,
        array: Option<Area>,
        cached: Option<Cached>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Cached {
    pub t: Option<String>,
    pub v: String,
}

/// A pending change to one cell.
#[derive(Debug, Clone)]
pub(crate) struct Edit {
    pub style: Option<String>,
    pub content: Content,
}

/// Where a `<c>` is. Offsets are u32 (parts are at most 1 GiB) to keep the index of a large
/// sheet small: 12 bytes per cell.
#[derive(Debug, Clone)]
struct CellPos {
    start: u32,
    end: u32,
    col: u16,
    implicit: bool,
}

impl CellPos {
    fn range(&self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

#[derive(Debug, Clone)]
struct Row {
    row: u32,
    start: u32,
    tag_end: u32,
    /// Start of `</row>`, or `end` for a self-closing row.
    close: u32,
    end: u32,
    empty: bool,
    implicit: bool,
    style: Option<String>,
    cells: Vec<CellPos>,
}

#[derive(Debug, Clone)]
struct Shared {
    master: CellRef,
    text: String,
}

/// A range whose cells a patch may not write: an array formula or a data table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Locked {
    pub area: Area,
    pub anchor: CellRef,
    pub what: &'static str,
}

pub(crate) struct SheetDoc {
    xml: String,
    prefix: String,
    dimension: Option<(usize, usize, Option<Area>)>,
    data_start: usize,
    data_end: usize,
    data_empty: bool,
    rows: Vec<Row>,
    implicit_rows: bool,
    merges: Vec<Area>,
    locked: Vec<Locked>,
    shared: HashMap<u32, Shared>,
    shared_members: HashMap<CellRef, u32>,
    col_styles: Vec<(u32, u32, String)>,
    edits: BTreeMap<CellRef, Edit>,
    materialised: HashSet<u32>,
    /// New style indexes of original cells whose content stays (only the `s` attribute of
    /// their `<c>` is rewritten).
    restyles: BTreeMap<CellRef, u32>,
    /// New row heights (`None` removes a custom height).
    heights: BTreeMap<u32, Option<f64>>,
    /// New column widths (`None` removes a width).
    widths: BTreeMap<u32, Option<f64>>,
    /// The `<col>` entries: min, max and every other attribute as written.
    cols: Vec<ColEntry>,
    merges_changed: bool,
    /// Depth-1 elements: local name and span, for replacing or inserting whole elements.
    top: Vec<(Vec<u8>, usize, usize)>,
    /// Where `</worksheet>` starts.
    root_close: usize,
    /// New `<tablePart>` elements, added to `<tableParts>` (created when missing).
    table_parts: Vec<String>,
    /// Relationship ids of `<tablePart>`s to remove.
    removed_table_parts: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
struct ColEntry {
    min: u32,
    max: u32,
    attrs: Vec<(String, String)>,
}

/// The worksheet's elements in schema order (CT_Worksheet); new elements go after the last
/// present element that precedes them.
const WORKSHEET_ORDER: &[&[u8]] = &[
    b"sheetPr",
    b"dimension",
    b"sheetViews",
    b"sheetFormatPr",
    b"cols",
    b"sheetData",
    b"sheetCalcPr",
    b"sheetProtection",
    b"protectedRanges",
    b"scenarios",
    b"autoFilter",
    b"sortState",
    b"dataConsolidate",
    b"customSheetViews",
    b"mergeCells",
    b"phoneticPr",
    b"conditionalFormatting",
    b"dataValidations",
    b"hyperlinks",
    b"printOptions",
    b"pageMargins",
    b"pageSetup",
    b"headerFooter",
    b"rowBreaks",
    b"colBreaks",
    b"customProperties",
    b"cellWatches",
    b"ignoredErrors",
    b"smartTags",
    b"drawing",
    b"legacyDrawing",
    b"legacyDrawingHF",
    b"drawingHF",
    b"picture",
    b"oleObjects",
    b"controls",
    b"webPublishItems",
    b"tableParts",
    b"extLst",
];

/// The details of one `<c>` element.
#[derive(Debug, Default)]
struct CellXml {
    style: Option<String>,
    t: Option<String>,
    v: Option<String>,
    f: Option<FormulaXml>,
    inline: Option<String>,
}

#[derive(Debug, Default)]
struct FormulaXml {
    t: Option<String>,
    si: Option<u32>,
    range: Option<String>,
    text: String,
}

fn truthy(v: Option<String>) -> bool {
    v.is_some_and(|v| v == "1" || v == "true")
}

impl SheetDoc {
    /// The XML of a new, empty worksheet in the given main namespace.
    pub fn empty_xml(main_ns: &str) -> String {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\r\n<worksheet xmlns=\"{main_ns}\">\
             <dimension ref=\"A1\"/><sheetViews><sheetView workbookViewId=\"0\"/></sheetViews>\
             <sheetFormatPr defaultRowHeight=\"15\"/><sheetData/>\
             <pageMargins left=\"0.7\" right=\"0.7\" top=\"0.75\" bottom=\"0.75\" header=\"0.3\" footer=\"0.3\"/>\
             </worksheet>"
        )
    }

    /// Scans a worksheet part. `Err` carries a reason for an unreadable part.
    pub fn parse(xml: String) -> Result<SheetDoc, String> {
        if u32::try_from(xml.len()).is_err() {
            return Err("the worksheet part is larger than 4 GiB".to_string());
        }
        let mut doc = SheetDoc {
            xml: String::new(),
            prefix: String::new(),
            dimension: None,
            data_start: 0,
            data_end: 0,
            data_empty: false,
            rows: Vec::new(),
            implicit_rows: false,
            merges: Vec::new(),
            locked: Vec::new(),
            shared: HashMap::new(),
            shared_members: HashMap::new(),
            col_styles: Vec::new(),
            edits: BTreeMap::new(),
            materialised: HashSet::new(),
            restyles: BTreeMap::new(),
            heights: BTreeMap::new(),
            widths: BTreeMap::new(),
            cols: Vec::new(),
            merges_changed: false,
            top: Vec::new(),
            root_close: 0,
            table_parts: Vec::new(),
            removed_table_parts: Vec::new(),
        };
        let mut r = xml::reader(&xml);
        let mut depth = 0usize;
        let mut parent1: Vec<u8> = Vec::new();
        let mut saw_data = false;
        let mut in_data = false;
        let mut row: Option<Row> = None;
        let mut cell: Option<(CellPos, Option<FormulaXml>)> = None;
        let mut f_text: Option<TextBuf> = None;
        let mut last_row = 0u32;
        loop {
            let start = r.buffer_position() as usize;
            let event = r
                .read_event()
                .map_err(|e| format!("{e} near byte {start}"))?;
            let end = r.buffer_position() as usize;
            if let Some(buf) = f_text.as_mut()
                && buf.push(&event)
            {
                continue;
            }
            match &event {
                Event::Start(e) | Event::Empty(e) => {
                    let empty = matches!(event, Event::Empty(_));
                    let name = xml::local(e);
                    match depth {
                        0 => doc.prefix = xml::prefix_of(e),
                        1 => {
                            parent1 = name.to_vec();
                            doc.top.push((name.to_vec(), start, end));
                            match name {
                                b"dimension" => {
                                    let area = xml::attr(e, b"ref").and_then(|v| Area::parse(&v));
                                    doc.dimension = Some((start, end, area));
                                }
                                b"sheetData" => {
                                    saw_data = true;
                                    if empty {
                                        doc.data_empty = true;
                                        doc.data_start = start;
                                        doc.data_end = end;
                                    } else {
                                        doc.data_start = end;
                                        in_data = true;
                                    }
                                }
                                _ => {}
                            }
                        }
                        2 if parent1 == b"mergeCells" && name == b"mergeCell" => {
                            doc.merges.extend(
                                xml::attr(e, b"ref")
                                    .map(|v| parse_area_list(&v))
                                    .unwrap_or_default(),
                            );
                        }
                        2 if parent1 == b"cols" && name == b"col" => {
                            let min = xml::attr(e, b"min").and_then(|v| v.parse().ok());
                            let max = xml::attr(e, b"max").and_then(|v| v.parse().ok());
                            if let (Some(min), Some(max)) = (min, max) {
                                let attrs = e
                                    .attributes()
                                    .with_checks(false)
                                    .flatten()
                                    .map(|a| (a.key.into_inner().to_string(), a.value.to_string()))
                                    .filter(|(k, _)| k != "min" && k != "max")
                                    .collect();
                                doc.cols.push(ColEntry { min, max, attrs });
                            }
                            if let (Some(min), Some(max), Some(style)) =
                                (min, max, xml::attr(e, b"style"))
                            {
                                doc.col_styles.push((min, max, style));
                            }
                        }
                        2 if in_data && name == b"row" => {
                            let explicit = xml::attr(e, b"r").and_then(|v| v.parse::<u32>().ok());
                            let number = explicit.unwrap_or(last_row + 1);
                            if number <= last_row || number == 0 || number > crate::a1::MAX_ROW {
                                return Err(format!(
                                    "row {number} is out of order or off the sheet"
                                ));
                            }
                            last_row = number;
                            let style = if truthy(xml::attr(e, b"customFormat")) {
                                xml::attr(e, b"s")
                            } else {
                                None
                            };
                            let new_row = Row {
                                row: number,
                                start: start as u32,
                                tag_end: end as u32,
                                close: end as u32,
                                end: end as u32,
                                empty,
                                implicit: explicit.is_none(),
                                style,
                                cells: Vec::new(),
                            };
                            doc.implicit_rows |= explicit.is_none();
                            if empty {
                                doc.rows.push(new_row);
                            } else {
                                row = Some(new_row);
                            }
                        }
                        3 if name == b"c" => {
                            if let Some(current) = row.as_mut() {
                                let prev = current.cells.last().map_or(0, |c| u32::from(c.col));
                                let explicit = xml::attr(e, b"r").and_then(|v| CellRef::parse(&v));
                                let col = explicit.map_or(prev + 1, |c| c.col);
                                if explicit.is_some_and(|c| c.row != current.row) {
                                    return Err(format!(
                                        "cell {} is inside row {}",
                                        explicit.map(|c| c.to_a1()).unwrap_or_default(),
                                        current.row
                                    ));
                                }
                                if col <= prev || col > crate::a1::MAX_COL {
                                    return Err(format!(
                                        "cells of row {} are out of order",
                                        current.row
                                    ));
                                }
                                let pos = CellPos {
                                    col: col as u16,
                                    start: start as u32,
                                    end: end as u32,
                                    implicit: explicit.is_none(),
                                };
                                if empty {
                                    current.cells.push(pos);
                                } else {
                                    cell = Some((pos, None));
                                }
                            }
                        }
                        4 if name == b"f" => {
                            if let Some((_, f)) = cell.as_mut() {
                                *f = Some(FormulaXml {
                                    t: xml::attr(e, b"t"),
                                    si: xml::attr(e, b"si").and_then(|v| v.parse().ok()),
                                    range: xml::attr(e, b"ref"),
                                    text: String::new(),
                                });
                                if !empty {
                                    f_text = Some(TextBuf::default());
                                }
                            }
                        }
                        _ => {}
                    }
                    if !empty {
                        depth += 1;
                    }
                }
                Event::End(e) => {
                    depth = depth.saturating_sub(1);
                    let name = e.local_name().into_inner().as_bytes();
                    if depth == 1
                        && let Some(last) = doc.top.last_mut()
                    {
                        last.2 = end;
                    }
                    if depth == 0 {
                        doc.root_close = start;
                    }
                    match (depth, name) {
                        (4, b"f") => {
                            if let (Some((_, Some(f))), Some(buf)) = (cell.as_mut(), f_text.take())
                            {
                                f.text = buf.text;
                            }
                        }
                        (3, b"c") => {
                            if let (Some(current), Some((mut pos, f))) = (row.as_mut(), cell.take())
                            {
                                pos.end = end as u32;
                                let at = CellRef {
                                    row: current.row,
                                    col: u32::from(pos.col),
                                };
                                if let Some(f) = f {
                                    doc.note_formula(at, f);
                                }
                                current.cells.push(pos);
                            }
                        }
                        (2, b"row") => {
                            if let Some(mut done) = row.take() {
                                done.close = start as u32;
                                done.end = end as u32;
                                done.cells.shrink_to_fit();
                                doc.rows.push(done);
                            }
                        }
                        (1, b"sheetData") => {
                            doc.data_end = start;
                            in_data = false;
                        }
                        _ => {}
                    }
                }
                Event::Eof => {
                    if depth != 0 {
                        return Err(
                            "the worksheet XML ends before its elements are closed".to_string()
                        );
                    }
                    break;
                }
                _ => {}
            }
        }
        if !saw_data {
            return Err("no <sheetData> in the worksheet".to_string());
        }
        doc.xml = xml;
        Ok(doc)
    }

    fn note_formula(&mut self, at: CellRef, f: FormulaXml) {
        match f.t.as_deref() {
            Some("shared") => {
                let Some(si) = f.si else { return };
                if f.range.is_some() && !f.text.is_empty() {
                    self.shared.insert(
                        si,
                        Shared {
                            master: at,
                            text: f.text,
                        },
                    );
                }
                self.shared_members.insert(at, si);
            }
            Some(kind @ ("array" | "dataTable")) => {
                if let Some(area) = f.range.as_deref().and_then(Area::parse) {
                    let what = if kind == "array" {
                        "an array formula"
                    } else {
                        "a data table"
                    };
                    self.locked.push(Locked {
                        area,
                        anchor: at,
                        what,
                    });
                }
            }
            _ => {}
        }
    }

    /// The array formula or data table covering a cell, if any.
    pub fn locked_at(&self, cell: CellRef) -> Option<Locked> {
        self.locked.iter().find(|l| l.area.contains(cell)).copied()
    }

    /// [`Self::locked_at`] of the first cell of `area` (row by row) that a locked part covers,
    /// found from the locked parts' corners, not by visiting every cell of the area: a merge
    /// over a whole sheet (`A1:XFD1048576`) is 17 billion cells.
    pub fn first_locked_in(&self, area: &Area) -> Option<Locked> {
        let first = self
            .locked
            .iter()
            .filter(|l| {
                l.area.first.row <= area.last.row
                    && area.first.row <= l.area.last.row
                    && l.area.first.col <= area.last.col
                    && area.first.col <= l.area.last.col
            })
            .map(|l| CellRef {
                row: l.area.first.row.max(area.first.row),
                col: l.area.first.col.max(area.first.col),
            })
            .min()?;
        self.locked_at(first)
    }

    /// The merged range covering a cell when the cell is not its top-left cell.
    pub fn merged_cover(&self, cell: CellRef) -> Option<Area> {
        self.merges
            .iter()
            .find(|m| m.contains(cell) && m.first != cell)
            .copied()
    }

    fn find_original(&self, cell: CellRef) -> Option<&CellPos> {
        let r = self.rows.binary_search_by_key(&cell.row, |r| r.row).ok()?;
        let row = self.rows.get(r)?;
        let c = row
            .cells
            .binary_search_by_key(&cell.col, |c| u32::from(c.col))
            .ok()?;
        row.cells.get(c)
    }

    fn original_xml(&self, cell: CellRef) -> Option<CellXml> {
        let pos = self.find_original(cell)?;
        parse_cell(self.xml.get(pos.range())?)
    }

    /// What the cell holds now (after earlier edits of this patch).
    pub fn get(&self, cell: CellRef, sst: &[String]) -> Content {
        if let Some(edit) = self.edits.get(&cell) {
            return edit.content.clone();
        }
        match self.original_xml(cell) {
            Some(x) => self.content_of(cell, x, sst),
            None => Content::Empty,
        }
    }

    /// Whether the sheet has a value or formula anywhere (after edits).
    pub fn has_content(&self, sst: &[String]) -> bool {
        self.cells(sst, true)
            .iter()
            .any(|(_, c)| *c != Content::Empty)
    }

    fn content_of(&self, cell: CellRef, x: CellXml, sst: &[String]) -> Content {
        let cached = x.v.clone().map(|v| Cached { t: x.t.clone(), v });
        if let Some(f) = x.f {
            let text = if f.t.as_deref() == Some("shared") && f.text.is_empty() {
                self.shared_text(cell, f.si)
            } else {
                f.text
            };
            let array = match f.t.as_deref() {
                Some("array") => f.range.as_deref().and_then(Area::parse),
                _ => None,
            };
            return Content::Formula {
                text,
                array,
                cached,
            };
        }
        let v = x.v.unwrap_or_default();
        match x.t.as_deref() {
            Some("s") => match v.trim().parse::<usize>().ok().and_then(|i| sst.get(i)) {
                Some(s) if !s.is_empty() => Content::Text(s.clone()),
                _ => Content::Empty,
            },
            Some("inlineStr") => match x.inline {
                Some(s) if !s.is_empty() => Content::Text(s),
                _ => Content::Empty,
            },
            Some("str") if v.is_empty() => Content::Empty,
            Some("str") => Content::Text(xml::decode_xstring(&v)),
            Some("b") => Content::Bool(v.trim() == "1" || v.trim().eq_ignore_ascii_case("true")),
            Some("e") => Content::Error(v),
            Some("d") if !v.is_empty() => Content::Date(v),
            _ if v.trim().is_empty() => Content::Empty,
            _ => match v.trim().parse::<f64>() {
                Ok(n) if n.is_finite() => Content::Number(n),
                _ => Content::Text(v),
            },
        }
    }

    /// The formula of a shared-formula member: the master's text moved to this cell.
    fn shared_text(&self, cell: CellRef, si: Option<u32>) -> String {
        let Some(group) = si.and_then(|si| self.shared.get(&si)) else {
            return String::new();
        };
        let rows = i64::from(cell.row) - i64::from(group.master.row);
        let cols = i64::from(cell.col) - i64::from(group.master.col);
        match formula::shift(&group.text, rows, cols) {
            Ok(s) => s.text,
            Err(_) => group.text.clone(),
        }
    }

    /// The style a cell written here gets: its own, else its row's, else its column's.
    fn style_for(&self, cell: CellRef) -> Option<String> {
        if let Some(edit) = self.edits.get(&cell) {
            return edit.style.clone();
        }
        if let Some(style) = self.restyles.get(&cell) {
            return (*style != 0).then(|| style.to_string());
        }
        if let Some(x) = self.original_xml(cell) {
            return x.style;
        }
        if let Ok(r) = self.rows.binary_search_by_key(&cell.row, |r| r.row)
            && let Some(style) = self.rows.get(r).and_then(|r| r.style.clone())
        {
            return Some(style);
        }
        self.col_styles
            .iter()
            .find(|(min, max, _)| (*min..=*max).contains(&cell.col))
            .map(|(_, _, s)| s.clone())
    }

    /// Records a new content for a cell. If the cell is the master of a shared formula, the
    /// other cells of the group first get their own explicit formulas, so they keep working.
    pub fn set(&mut self, cell: CellRef, content: Content, sst: &[String]) {
        if !self.edits.contains_key(&cell)
            && let Some(&si) = self.shared_members.get(&cell)
            && self.shared.get(&si).is_some_and(|g| g.master == cell)
            && self.materialised.insert(si)
        {
            let members: Vec<CellRef> = self
                .shared_members
                .iter()
                .filter(|(c, s)| **s == si && **c != cell)
                .map(|(c, _)| *c)
                .collect();
            for member in members {
                if self.edits.contains_key(&member) {
                    continue;
                }
                let current = self.get(member, sst);
                let style = self.style_for(member);
                self.edits.insert(
                    member,
                    Edit {
                        style,
                        content: current,
                    },
                );
            }
        }
        let style = self.style_for(cell);
        self.restyles.remove(&cell);
        self.edits.insert(cell, Edit { style, content });
    }

    pub fn is_touched(&self) -> bool {
        !self.edits.is_empty()
            || !self.restyles.is_empty()
            || !self.heights.is_empty()
            || !self.widths.is_empty()
            || self.merges_changed
            || !self.table_parts.is_empty()
            || !self.removed_table_parts.is_empty()
    }

    /// The style index a cell shows now (its own, else its row's or column's; 0 by default).
    pub fn style_id(&self, cell: CellRef) -> u32 {
        self.style_for(cell)
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Points a cell at another style index, keeping its content. 0 removes the `s` attribute.
    pub fn restyle(&mut self, cell: CellRef, style: u32) {
        let text = (style != 0).then(|| style.to_string());
        if let Some(edit) = self.edits.get_mut(&cell) {
            edit.style = text;
        } else if self.find_original(cell).is_some() {
            self.restyles.insert(cell, style);
        } else {
            self.edits.insert(
                cell,
                Edit {
                    style: text,
                    content: Content::Empty,
                },
            );
        }
    }

    /// Adds a `<tablePart>` element (already rendered) to the sheet's `<tableParts>`.
    pub fn add_table_part(&mut self, xml: String) {
        self.table_parts.push(xml);
    }

    /// Removes the `<tablePart>` with this relationship id.
    pub fn remove_table_part(&mut self, rid: &str) {
        self.removed_table_parts.push(rid.to_string());
    }

    /// The element prefix of the worksheet (`x:` or empty).
    /// Calls `f` with each original cell's content in row order (empty cells skipped) until it
    /// returns false; nothing is collected, so a caller with a cell budget stops early.
    pub fn visit_cells(&self, sst: &[String], mut f: impl FnMut(CellRef, Content) -> bool) {
        for row in &self.rows {
            for c in &row.cells {
                let at = CellRef {
                    row: row.row,
                    col: u32::from(c.col),
                };
                if let Some(x) = self.xml.get(c.range()).and_then(parse_cell) {
                    let content = self.content_of(at, x, sst);
                    if content != Content::Empty && !f(at, content) {
                        return;
                    }
                }
            }
        }
    }

    /// Every cell the part writes a `<c>` for, with or without a value, row by row.
    pub fn written_cells(&self) -> impl Iterator<Item = CellRef> + '_ {
        self.rows.iter().flat_map(|row| {
            row.cells.iter().map(move |c| CellRef {
                row: row.row,
                col: u32::from(c.col),
            })
        })
    }

    /// The part's text as read (extraction scans it for what the index does not keep).
    pub fn xml(&self) -> &str {
        &self.xml
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The merged ranges (after this patch's edits).
    pub fn merges(&self) -> &[Area] {
        &self.merges
    }

    /// Replaces the merged ranges.
    pub fn set_merges(&mut self, merges: Vec<Area>) {
        if merges != self.merges {
            self.merges = merges;
            self.merges_changed = true;
        }
    }

    /// Where a new depth-1 element goes: after the last present element that precedes it in
    /// the schema.
    fn insertion_point(&self, name: &[u8]) -> usize {
        let rank = |n: &[u8]| {
            WORKSHEET_ORDER
                .iter()
                .position(|o| *o == n)
                .unwrap_or(WORKSHEET_ORDER.len())
        };
        let mine = rank(name);
        self.top
            .iter()
            .filter(|(n, _, _)| rank(n) < mine)
            .map(|(_, _, end)| *end)
            .max()
            .unwrap_or_else(|| {
                self.top
                    .first()
                    .map_or(self.root_close, |(_, start, _)| *start)
            })
    }

    /// Where a top-level element of the worksheet (`drawing`, `pageSetup`, …) is in its text.
    pub fn element_span(&self, name: &[u8]) -> Option<(usize, usize)> {
        self.top_span(name)
    }

    fn top_span(&self, name: &[u8]) -> Option<(usize, usize)> {
        self.top
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, a, b)| (*a, *b))
    }

    /// Replacement of a whole depth-1 element (or its insertion, or removal when `new` is empty).
    fn element_piece(&self, name: &[u8], new: String) -> Option<(usize, usize, String)> {
        match self.top_span(name) {
            Some((a, b)) => Some((a, b, new)),
            None if new.is_empty() => None,
            None => {
                let at = self.insertion_point(name);
                Some((at, at, new))
            }
        }
    }

    /// Every cell with its content (after edits), row by row.
    pub fn cells(&self, sst: &[String], with_edits: bool) -> Vec<(CellRef, Content)> {
        let mut out: BTreeMap<CellRef, Content> = BTreeMap::new();
        for row in &self.rows {
            for c in &row.cells {
                let at = CellRef {
                    row: row.row,
                    col: u32::from(c.col),
                };
                if with_edits && self.edits.contains_key(&at) {
                    continue;
                }
                if let Some(x) = self.xml.get(c.range()).and_then(parse_cell) {
                    let content = self.content_of(at, x, sst);
                    if content != Content::Empty {
                        out.insert(at, content);
                    }
                }
            }
        }
        if with_edits {
            for (at, edit) in &self.edits {
                if edit.content != Content::Empty {
                    out.insert(*at, edit.content.clone());
                }
            }
        }
        out.into_iter().collect()
    }

    /// The new part as a string (tests and new sheets; saves stream with [`Self::write_xml`]).
    pub fn to_xml(&self) -> String {
        let mut out = Vec::with_capacity(self.xml.len() + 256);
        // Writing into a Vec cannot fail.
        let _ = self.write_xml(&mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    /// Writes the new part: the original text with touched rows (and the dimension) replaced.
    /// Rows are rebuilt one at a time as the output reaches them, so a large patch never holds
    /// a second copy of the sheet.
    pub fn write_xml(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let p = &self.prefix;
        let mut by_row: BTreeMap<u32, Vec<(CellRef, &Edit)>> = BTreeMap::new();
        for (at, edit) in &self.edits {
            by_row.entry(at.row).or_default().push((*at, edit));
        }
        for at in self.restyles.keys() {
            by_row.entry(at.row).or_default();
        }
        for row in self.heights.keys() {
            by_row.entry(*row).or_default();
        }
        let mut plan: Vec<(usize, usize, Piece<'_>)> = Vec::new();
        let mut wrapped: Vec<(u32, Vec<(CellRef, &Edit)>)> = Vec::new();
        for (number, edits) in by_row.iter() {
            match self.rows.binary_search_by_key(number, |r| r.row) {
                Ok(i) => {
                    if let Some(row) = self.rows.get(i) {
                        plan.push((
                            row.start as usize,
                            row.end as usize,
                            Piece::Row(row, edits.clone()),
                        ));
                    }
                }
                Err(_) if self.data_empty => wrapped.push((*number, edits.clone())),
                Err(i) => {
                    let at = self.rows.get(i).map_or(self.data_end, |r| r.start as usize);
                    plan.push((at, at, Piece::NewRow(*number, edits.clone())));
                }
            }
        }
        if !wrapped.is_empty() {
            plan.push((self.data_start, self.data_end, Piece::NewSheetData(wrapped)));
        }
        if self.implicit_rows {
            for row in &self.rows {
                if row.implicit && !by_row.contains_key(&row.row) {
                    let tag = self
                        .xml
                        .get(row.start as usize..row.tag_end as usize)
                        .unwrap_or("");
                    if let Some(new) =
                        xml::rewrite_start_tag(tag, &[("r", &row.row.to_string())], &[], row.empty)
                    {
                        plan.push((row.start as usize, row.tag_end as usize, Piece::Text(new)));
                    }
                }
            }
        }
        if let Some((start, end, old)) = self.dimension {
            let written = self
                .edits
                .iter()
                .filter(|(_, e)| e.content != Content::Empty)
                .map(|(at, _)| Area::cell(*at))
                .reduce(|a, b| a.union(&b));
            if let Some(written) = written {
                let new = match old {
                    Some(old)
                        if !(old.is_single_cell()
                            && old.first == CellRef { row: 1, col: 1 }
                            && self.rows.is_empty()) =>
                    {
                        old.union(&written)
                    }
                    _ => written,
                };
                if Some(new) != old {
                    let text = format!("<{p}dimension ref=\"{}\"/>", new.to_a1());
                    plan.push((start, end, Piece::Text(text)));
                }
            }
        }
        if !self.widths.is_empty() {
            let cols = self.cols_after();
            let text = if cols.is_empty() {
                String::new()
            } else {
                let mut t = format!("<{p}cols>");
                for c in &cols {
                    t.push_str(&format!("<{p}col min=\"{}\" max=\"{}\"", c.min, c.max));
                    for (k, v) in &c.attrs {
                        t.push_str(&format!(" {k}=\"{v}\""));
                    }
                    t.push_str("/>");
                }
                t.push_str(&format!("</{p}cols>"));
                t
            };
            if let Some((a, b, t)) = self.element_piece(b"cols", text) {
                plan.push((a, b, Piece::Text(t)));
            }
        }
        if self.merges_changed {
            let text = if self.merges.is_empty() {
                String::new()
            } else {
                let mut t = format!("<{p}mergeCells count=\"{}\">", self.merges.len());
                for m in &self.merges {
                    t.push_str(&format!("<{p}mergeCell ref=\"{}\"/>", m.to_a1()));
                }
                t.push_str(&format!("</{p}mergeCells>"));
                t
            };
            if let Some((a, b, t)) = self.element_piece(b"mergeCells", text) {
                plan.push((a, b, Piece::Text(t)));
            }
        }
        if !self.table_parts.is_empty() || !self.removed_table_parts.is_empty() {
            let existing = self
                .top_span(b"tableParts")
                .and_then(|(a, b)| self.xml.get(a..b));
            // The old parts stay as written; the new ones follow them.
            let old_inner = existing
                .filter(|t| !t.trim_end().ends_with("/>"))
                .and_then(|t| Some(t.get(t.find('>')? + 1..t.rfind("</")?)?.to_string()))
                .unwrap_or_default();
            // Each old `<tablePart .../>`, kept unless its relationship is removed.
            let kept: Vec<&str> = old_inner
                .split_inclusive("/>")
                .filter(|e| {
                    !self
                        .removed_table_parts
                        .iter()
                        .any(|rid| e.contains(&format!(":id=\"{rid}\"")))
                })
                .collect();
            let count =
                kept.iter().filter(|e| e.contains("tablePart")).count() + self.table_parts.len();
            let text = if count == 0 {
                String::new()
            } else {
                format!(
                    "<{p}tableParts count=\"{count}\">{}{}</{p}tableParts>",
                    kept.concat(),
                    self.table_parts.concat()
                )
            };
            if let Some((a, b, t)) = self.element_piece(b"tableParts", text) {
                plan.push((a, b, Piece::Text(t)));
            }
        }
        plan.sort_by_key(|(start, end, _)| (*start, *end));
        let mut last = 0;
        for (start, end, piece) in plan {
            if start < last {
                continue;
            }
            out.write_all(self.xml.get(last..start).unwrap_or("").as_bytes())?;
            match piece {
                Piece::Text(t) => out.write_all(t.as_bytes())?,
                Piece::Row(row, edits) => {
                    out.write_all(self.rebuild_row(row, &edits).as_bytes())?
                }
                Piece::NewRow(number, edits) => out.write_all(
                    new_row(
                        p,
                        number,
                        &edits,
                        self.heights.get(&number).copied().flatten(),
                    )
                    .as_bytes(),
                )?,
                Piece::NewSheetData(rows) => {
                    out.write_all(format!("<{p}sheetData>").as_bytes())?;
                    for (number, edits) in rows {
                        let height = self.heights.get(&number).copied().flatten();
                        out.write_all(new_row(p, number, &edits, height).as_bytes())?;
                    }
                    out.write_all(format!("</{p}sheetData>").as_bytes())?;
                }
            }
            last = end;
        }
        out.write_all(self.xml.get(last..).unwrap_or("").as_bytes())
    }

    fn rebuild_row(&self, row: &Row, edits: &[(CellRef, &Edit)]) -> String {
        let p = &self.prefix;
        let mut cols: Vec<u32> = row.cells.iter().map(|c| u32::from(c.col)).collect();
        cols.extend(
            edits
                .iter()
                .filter(|(_, e)| e.content != Content::Empty || e.style.is_some())
                .map(|(c, _)| c.col),
        );
        let min = cols.iter().min().copied();
        let max = cols.iter().max().copied();
        let (row_start, tag_end, close) =
            (row.start as usize, row.tag_end as usize, row.close as usize);
        let tag = self.xml.get(row_start..tag_end).unwrap_or("");
        let mut set: Vec<(&str, String)> = Vec::new();
        let mut remove: Vec<&str> = Vec::new();
        if row.implicit {
            set.push(("r", row.row.to_string()));
        }
        match self.heights.get(&row.row) {
            Some(Some(h)) => {
                set.push(("ht", format_number(*h)));
                set.push(("customHeight", "1".to_string()));
            }
            Some(None) => remove.extend(["ht", "customHeight"]),
            None => {}
        }
        if let (Some(min), Some(max)) = (min, max)
            && let Some(spans) = tag_attr(tag, b"spans")
        {
            let (old_min, old_max) = spans
                .split_once(':')
                .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
                .unwrap_or((min, max));
            if min < old_min || max > old_max {
                set.push((
                    "spans",
                    format!("{}:{}", min.min(old_min), max.max(old_max)),
                ));
            }
        }
        let mut out = String::new();
        if set.is_empty() && remove.is_empty() && !row.empty {
            out.push_str(tag);
        } else {
            let pairs: Vec<(&str, &str)> = set.iter().map(|(k, v)| (*k, v.as_str())).collect();
            out.push_str(
                &xml::rewrite_start_tag(tag, &pairs, &remove, false)
                    .unwrap_or_else(|| tag.to_string()),
            );
        }
        let mut pending = edits.iter().peekable();
        let mut last = tag_end;
        let content_end = if row.empty { tag_end } else { close };
        let start_len = out.len();
        for c in &row.cells {
            out.push_str(self.xml.get(last..c.start as usize).unwrap_or(""));
            while let Some((at, e)) = pending.peek() {
                if at.col >= u32::from(c.col) {
                    break;
                }
                out.push_str(
                    &render_cell(p, *at, e.style.as_deref(), &e.content).unwrap_or_default(),
                );
                pending.next();
            }
            let at = CellRef {
                row: row.row,
                col: u32::from(c.col),
            };
            if pending
                .peek()
                .is_some_and(|(a, _)| a.col == u32::from(c.col))
            {
                if let Some((_, e)) = pending.next() {
                    out.push_str(
                        &render_cell(p, at, e.style.as_deref(), &e.content).unwrap_or_default(),
                    );
                }
            } else {
                let original = self.xml.get(c.range()).unwrap_or("");
                let style = self.restyles.get(&at).copied();
                if style == Some(0) && original.trim_end().ends_with("/>") {
                    // A blank cell whose style is taken away says nothing: it is left out, so
                    // undoing a fill of blank cells gives back the part as it was.
                } else if c.implicit || style.is_some() {
                    out.push_str(&rewrite_cell_tag(original, at, c.implicit, style));
                } else {
                    out.push_str(original);
                }
            }
            last = c.end as usize;
        }
        for (at, e) in pending {
            out.push_str(&render_cell(p, *at, e.style.as_deref(), &e.content).unwrap_or_default());
        }
        out.push_str(self.xml.get(last.max(tag_end)..content_end).unwrap_or(""));
        // A row whose cells were all cleared and that says nothing else (no style, height or
        // other attribute, no other content) is left out, as a new row would be: undoing a
        // write into a new row then gives back the sheet as it was.
        if out
            .get(start_len..)
            .is_some_and(|inner| inner.trim().is_empty())
            && only_row_number(&out[..start_len])
        {
            return String::new();
        }
        out.push_str(&format!("</{p}row>"));
        out
    }
}

/// One replacement in the written part.
enum Piece<'a> {
    Text(String),
    Row(&'a Row, Vec<(CellRef, &'a Edit)>),
    NewRow(u32, Vec<(CellRef, &'a Edit)>),
    /// New rows for a sheet whose `<sheetData/>` was empty.
    NewSheetData(Vec<(u32, Vec<(CellRef, &'a Edit)>)>),
}
