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

use crate::a1::{Area, CellRef, column_name, parse_area_list};
use crate::formula;
use crate::xml::{self, TextBuf};

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
    fn cols_after(&self) -> Vec<ColEntry> {
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
                if c.implicit || style.is_some() {
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

/// A `<row>` for a row number the sheet did not have (empty when no cell needs writing).
fn new_row(p: &str, number: u32, edits: &[(CellRef, &Edit)], height: Option<f64>) -> String {
    let cells: String = edits
        .iter()
        .filter_map(|(at, e)| render_cell(p, *at, e.style.as_deref(), &e.content))
        .collect();
    let ht = height
        .map(|h| format!(" ht=\"{}\" customHeight=\"1\"", format_number(h)))
        .unwrap_or_default();
    if cells.is_empty() {
        if ht.is_empty() {
            return String::new();
        }
        return format!("<{p}row r=\"{number}\"{ht}/>");
    }
    format!("<{p}row r=\"{number}\"{ht}>{cells}</{p}row>")
}

/// Whether a row start tag has no attribute but its number and spans.
fn only_row_number(tag: &str) -> bool {
    let mut r = xml::reader(tag);
    match r.read_event() {
        Ok(quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e)) => e
            .attributes()
            .with_checks(false)
            .all(|a| a.is_ok_and(|a| matches!(a.key.local_name().into_inner(), "r" | "spans"))),
        _ => false,
    }
}

fn tag_attr(tag: &str, name: &[u8]) -> Option<String> {
    let mut r = xml::reader(tag);
    match r.read_event().ok()? {
        Event::Start(e) | Event::Empty(e) => xml::attr(&e, name),
        _ => None,
    }
}

/// A `<c>` with its start tag rewritten: `r` added for an implicit cell, `s` set (0 removes it).
fn rewrite_cell_tag(cell_xml: &str, at: CellRef, implicit: bool, style: Option<u32>) -> String {
    let Some(tag_end) = cell_xml.find('>') else {
        return cell_xml.to_string();
    };
    let empty = cell_xml.get(..tag_end).is_some_and(|t| t.ends_with('/'));
    let tag = cell_xml.get(..=tag_end).unwrap_or("");
    let r = at.to_a1();
    let s = style.map(|s| s.to_string());
    let mut set: Vec<(&str, &str)> = Vec::new();
    let mut remove: Vec<&str> = Vec::new();
    if implicit {
        set.push(("r", &r));
    }
    match (style, &s) {
        (Some(0), _) => remove.push("s"),
        (Some(_), Some(text)) => set.push(("s", text)),
        _ => {}
    }
    match xml::rewrite_start_tag(tag, &set, &remove, empty) {
        Some(new) => format!("{new}{}", cell_xml.get(tag_end + 1..).unwrap_or("")),
        None => cell_xml.to_string(),
    }
}

/// A number as SpreadsheetML stores it: the shortest text that reads back to the same double.
pub(crate) fn format_number(n: f64) -> String {
    let a = n.abs();
    if n == 0.0 {
        "0".to_string()
    } else if (1e-6..1e15).contains(&a) {
        format!("{n}")
    } else {
        format!("{n:E}")
    }
}

/// The `<c>` element for a content, or `None` for an empty unstyled cell (it is left out).
fn render_cell(p: &str, at: CellRef, style: Option<&str>, content: &Content) -> Option<String> {
    let r = format!("{}{}", column_name(at.col), at.row);
    let s = style
        .map(|s| format!(" s=\"{}\"", xml::escape_attr(s)))
        .unwrap_or_default();
    Some(match content {
        Content::Empty => {
            style?;
            format!("<{p}c r=\"{r}\"{s}/>")
        }
        Content::Number(n) => format!(
            "<{p}c r=\"{r}\"{s}><{p}v>{}</{p}v></{p}c>",
            format_number(*n)
        ),
        Content::Bool(b) => format!(
            "<{p}c r=\"{r}\"{s} t=\"b\"><{p}v>{}</{p}v></{p}c>",
            u8::from(*b)
        ),
        Content::Text(t) => {
            let space = if t.trim() != t || t.contains('\n') {
                " xml:space=\"preserve\""
            } else {
                ""
            };
            let body = xml::escape_text(&xml::encode_xstring(t));
            format!(
                "<{p}c r=\"{r}\"{s} t=\"inlineStr\"><{p}is><{p}t{space}>{body}</{p}t></{p}is></{p}c>"
            )
        }
        Content::Error(e) => format!(
            "<{p}c r=\"{r}\"{s} t=\"e\"><{p}v>{}</{p}v></{p}c>",
            xml::escape_text(e)
        ),
        Content::Date(d) => format!(
            "<{p}c r=\"{r}\"{s} t=\"d\"><{p}v>{}</{p}v></{p}c>",
            xml::escape_text(d)
        ),
        Content::Formula {
            text,
            array,
            cached,
        } => {
            let t = cached
                .as_ref()
                .and_then(|c| c.t.as_deref())
                .map(|t| format!(" t=\"{}\"", xml::escape_attr(t)))
                .unwrap_or_default();
            let f = match array {
                Some(a) => format!(
                    "<{p}f t=\"array\" ref=\"{}\">{}</{p}f>",
                    a.to_a1(),
                    xml::escape_text(text)
                ),
                None => format!("<{p}f>{}</{p}f>", xml::escape_text(text)),
            };
            let v = cached
                .as_ref()
                .map(|c| format!("<{p}v>{}</{p}v>", xml::escape_text(&c.v)))
                .unwrap_or_default();
            format!("<{p}c r=\"{r}\"{s}{t}>{f}{v}</{p}c>")
        }
    })
}

/// Parses one `<c>` element.
fn parse_cell(text: &str) -> Option<CellXml> {
    let mut r = xml::reader(text);
    let mut out = CellXml::default();
    let mut depth = 0usize;
    let mut buf: Option<TextBuf> = None;
    let mut target = "";
    let mut in_phonetic = 0usize;
    loop {
        let event = r.read_event().ok()?;
        if in_phonetic == 0
            && let Some(b) = buf.as_mut()
            && b.push(&event)
        {
            continue;
        }
        match &event {
            Event::Start(e) | Event::Empty(e) => {
                let empty = matches!(event, Event::Empty(_));
                match (depth, xml::local(e)) {
                    (0, b"c") => {
                        out.style = xml::attr(e, b"s");
                        out.t = xml::attr(e, b"t");
                    }
                    (1, b"v") if !empty => {
                        buf = Some(TextBuf::default());
                        target = "v";
                    }
                    (1, b"v") => out.v = Some(String::new()),
                    (1, b"f") => {
                        out.f = Some(FormulaXml {
                            t: xml::attr(e, b"t"),
                            si: xml::attr(e, b"si").and_then(|v| v.parse().ok()),
                            range: xml::attr(e, b"ref"),
                            text: String::new(),
                        });
                        if !empty {
                            buf = Some(TextBuf::default());
                            target = "f";
                        }
                    }
                    (1, b"is") => out.inline = Some(String::new()),
                    (_, b"rPh") if !empty => in_phonetic += 1,
                    (_, b"t") if !empty && in_phonetic == 0 && out.inline.is_some() => {
                        buf = Some(TextBuf::default());
                        target = "t";
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
                if name == b"rPh" {
                    in_phonetic = in_phonetic.saturating_sub(1);
                }
                if let Some(b) = buf.take() {
                    match target {
                        "v" => out.v = Some(b.text),
                        "f" => {
                            if let Some(f) = out.f.as_mut() {
                                f.text = b.text;
                            }
                        }
                        _ => {
                            if let Some(s) = out.inline.as_mut() {
                                s.push_str(&xml::decode_xstring(&b.text));
                            }
                        }
                    }
                }
                if depth == 0 {
                    return Some(out);
                }
            }
            Event::Eof => return Some(out),
            _ => {}
        }
    }
}

/// The shared string table: the plain text of every `<si>` (phonetic runs left out).
pub(crate) fn parse_shared_strings(text: &str) -> Result<Vec<String>, String> {
    let mut r = xml::reader(text);
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    let mut buf: Option<TextBuf> = None;
    let mut in_phonetic = 0usize;
    loop {
        let event = r.read_event().map_err(|e| e.to_string())?;
        if let Some(b) = buf.as_mut()
            && b.push(&event)
        {
            continue;
        }
        match &event {
            Event::Start(e) => match xml::local(e) {
                b"si" => current = Some(String::new()),
                b"rPh" => in_phonetic += 1,
                b"t" if in_phonetic == 0 && current.is_some() => buf = Some(TextBuf::default()),
                _ => {}
            },
            Event::Empty(e) if xml::local(e) == b"si" => out.push(String::new()),
            Event::End(e) => match e.local_name().into_inner().as_bytes() {
                b"t" => {
                    if let (Some(b), Some(s)) = (buf.take(), current.as_mut()) {
                        s.push_str(&xml::decode_xstring(&b.text));
                    }
                }
                b"rPh" => in_phonetic = in_phonetic.saturating_sub(1),
                b"si" => out.push(current.take().unwrap_or_default()),
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHEET: &str = r#"<?xml version="1.0"?><worksheet xmlns="m"><dimension ref="A1:C3"/><cols><col min="4" max="4" style="9"/></cols><sheetData><row r="1" spans="1:3"><c r="A1" s="1" t="s"><v>0</v></c><c r="B1"><v>2.5</v></c><c r="C1" t="inlineStr"><is><t>インライン</t></is></c></row><row r="3" spans="1:3"><c r="A3"><f t="shared" ref="A3:C3" si="0">A1*2</f><v>0</v></c><c r="B3"><f t="shared" si="0"/><v>5</v></c><c r="C3"><f t="array" ref="C3">SUM(A1:B1)</f><v>2.5</v></c></row></sheetData><mergeCells count="1"><mergeCell ref="A5:B6"/></mergeCells></worksheet>"#;

    fn doc() -> SheetDoc {
        SheetDoc::parse(SHEET.to_string()).unwrap()
    }

    fn at(a1: &str) -> CellRef {
        CellRef::parse(a1).unwrap()
    }

    #[test]
    fn reads_cells() {
        let d = doc();
        let sst = vec!["共有".to_string()];
        assert_eq!(d.get(at("A1"), &sst), Content::Text("共有".into()));
        assert_eq!(d.get(at("B1"), &sst), Content::Number(2.5));
        assert_eq!(d.get(at("C1"), &sst), Content::Text("インライン".into()));
        assert!(
            matches!(d.get(at("B3"), &sst), Content::Formula { ref text, .. } if text == "B1*2")
        );
        assert_eq!(d.get(at("Z9"), &sst), Content::Empty);
        assert!(d.locked_at(at("C3")).is_some());
        assert_eq!(
            d.merged_cover(at("B6")).map(|a| a.to_a1()),
            Some("A5:B6".into())
        );
        assert_eq!(d.merged_cover(at("A5")), None);
    }

    #[test]
    fn writes_only_touched_rows() {
        let mut d = doc();
        let sst = vec!["共有".to_string()];
        d.set(at("B2"), Content::Number(7.0), &sst);
        d.set(at("D1"), Content::Text(" x ".into()), &sst);
        let out = d.to_xml();
        assert!(
            out.contains(r#"<row r="2"><c r="B2"><v>7</v></c></row>"#),
            "{out}"
        );
        assert!(out.contains(r#"<row r="1" spans="1:4">"#), "{out}");
        assert!(out.contains(r#"<c r="D1" s="9" t="inlineStr"><is><t xml:space="preserve"> x </t></is></c></row>"#), "{out}");
        assert!(out.contains(r#"<dimension ref="A1:D3"/>"#), "{out}");
        let row3 =
            &SHEET[SHEET.find(r#"<row r="3""#).unwrap()..SHEET.find("</sheetData>").unwrap()];
        assert!(
            out.contains(row3),
            "untouched row 3 must stay byte-identical"
        );
    }

    #[test]
    fn overwriting_a_shared_master_keeps_the_group_working() {
        let mut d = doc();
        d.set(at("A3"), Content::Number(1.0), &[]);
        let out = d.to_xml();
        assert!(
            out.contains(r#"<c r="B3"><f>B1*2</f><v>5</v></c>"#),
            "{out}"
        );
        assert!(out.contains(r#"<c r="A3"><v>1</v></c>"#), "{out}");
    }

    #[test]
    fn clearing_keeps_style_and_drops_unstyled_cells() {
        let mut d = doc();
        d.set(at("A1"), Content::Empty, &[]);
        d.set(at("B1"), Content::Empty, &[]);
        let out = d.to_xml();
        assert!(
            out.contains(r#"<row r="1" spans="1:3"><c r="A1" s="1"/><c r="C1""#),
            "{out}"
        );
    }

    #[test]
    fn empty_sheet_data_and_implicit_rows() {
        let mut d = SheetDoc::parse(SheetDoc::empty_xml("m")).unwrap();
        d.set(at("B2"), Content::Bool(true), &[]);
        let out = d.to_xml();
        assert!(
            out.contains(r#"<sheetData><row r="2"><c r="B2" t="b"><v>1</v></c></row></sheetData>"#),
            "{out}"
        );
        assert!(out.contains(r#"<dimension ref="B2"/>"#), "{out}");

        let xml = r#"<worksheet><sheetData><row><c><v>1</v></c></row><row><c><v>2</v></c></row></sheetData></worksheet>"#;
        let mut d = SheetDoc::parse(xml.to_string()).unwrap();
        assert_eq!(d.get(at("A2"), &[]), Content::Number(2.0));
        d.set(at("B1"), Content::Number(3.0), &[]);
        let out = d.to_xml();
        assert_eq!(
            out,
            r#"<worksheet><sheetData><row r="1"><c r="A1"><v>1</v></c><c r="B1"><v>3</v></c></row><row r="2"><c><v>2</v></c></row></sheetData></worksheet>"#
        );
    }

    #[test]
    fn refuses_disordered_rows() {
        let xml = r#"<worksheet><sheetData><row r="2"/><row r="1"/></sheetData></worksheet>"#;
        assert!(SheetDoc::parse(xml.to_string()).is_err());
        assert!(SheetDoc::parse("<worksheet></worksheet>".to_string()).is_err());
        assert!(SheetDoc::parse("<worksheet><sheetData>".to_string()).is_err());
    }

    #[test]
    fn shared_strings_skip_phonetic_runs() {
        let sst = r#"<sst><si><t>漢字</t><rPh sb="0" eb="2"><t>カンジ</t></rPh></si><si><r><t>a</t></r><r><t xml:space="preserve"> b</t></r></si><si/><si><t>x_x000D_y&amp;</t></si></sst>"#;
        assert_eq!(
            parse_shared_strings(sst).unwrap(),
            ["漢字", "a b", "", "x\ry&"]
        );
    }

    #[test]
    fn numbers_format_for_the_file() {
        for (n, s) in [
            (7.0, "7"),
            (0.1, "0.1"),
            (-2.5, "-2.5"),
            (1e20, "1E20"),
            (1.5e-9, "1.5E-9"),
            (0.0, "0"),
        ] {
            assert_eq!(format_number(n), s);
            assert_eq!(s.parse::<f64>().unwrap(), n);
        }
    }
}
