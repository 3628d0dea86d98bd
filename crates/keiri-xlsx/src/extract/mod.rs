//! `workbook_extract` (the MCP tool `exstruct_extract`): a workbook's structure read straight
//! from its OOXML parts — cell values, merged ranges, print areas, Excel tables, hyperlinks and
//! formulas, charts with their series, shapes with their text, connectors with the shapes they
//! join, SmartArt node text — with no Excel, on any OS. The result is ExStruct's
//! `WorkbookData`, written as JSON or TOON to a file; the response is ExStruct's
//! (`out_path`, `workbook_meta`, `warnings`, `engine`).
//!
//! Modes follow ExStruct: `light` (cells, tables, print areas), `standard` (+ shapes with
//! text, connectors, SmartArt, charts, merged ranges), `verbose` (+ every shape with its size,
//! hyperlinks, `formulas_map`).
//!
//! Work is bounded: parts are size-limited by the package reader, cells stop at `max_cells`
//! (with a warning), drawings at 10,000 objects, XML trees in nodes and depth.

mod drawing;
pub mod model;
mod tables;
mod tree;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use quick_xml::events::Event;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::a1::{Area, column_name};
use crate::book::{Book, Origin, SheetKind};
use crate::contract::OnConflict;
use crate::error::Error;
use crate::package::{self, Package};
use crate::patch::PatchEnv;
use crate::patch::{check_extension, io_error, resolve_input};
use crate::sheet::{Cached, Content};
use crate::xml;

pub use model::WorkbookData;
use model::{CellRow, MergedCells, PrintArea, SheetData};

/// Cells read from one workbook unless `options.max_cells` says otherwise.
pub const DEFAULT_MAX_CELLS: u64 = 1_000_000;
/// How much detail an extraction gives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExtractMode {
    /// Cells, table candidates and print areas.
    Light,
    /// Also shapes with text, connectors, SmartArt, charts and merged ranges.
    #[default]
    Standard,
    /// Also shapes without text and every shape's size, hyperlinks and `formulas_map`.
    Verbose,
}

/// The output file's format. `yaml`/`yml` are ExStruct's too but are refused here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExtractFormat {
    #[default]
    Json,
    Toon,
    Yaml,
    Yml,
}

/// `options` of the request (ExStruct's names). Options ExStruct has that are not supported
/// here (`sheets_dir`, `print_areas_dir`, `auto_page_breaks_dir`, …) give a warning.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExtractOptions {
    /// Indent the JSON (2 spaces unless `indent` says otherwise).
    #[serde(default)]
    pub pretty: bool,
    #[serde(default)]
    pub indent: Option<u8>,
    /// Column keys as letters (`A`, `B`, …; the default) or 0-based numbers (`"0"`, `"1"`).
    #[serde(default)]
    pub alpha_col: Option<bool>,
    /// **Extension**: cells read before the rest are left out with a warning (default
    /// 1,000,000).
    #[serde(default)]
    pub max_cells: Option<u64>,
    #[serde(flatten)]
    pub other: serde_json::Map<String, Value>,
}

/// An extraction request (`exstruct_extract` input).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtractRequest {
    /// The workbook (.xlsx or .xlsm).
    pub xlsx_path: String,
    #[serde(default)]
    pub mode: ExtractMode,
    #[serde(default)]
    pub format: ExtractFormat,
    /// Where the output goes (default: the workbook's directory; created if missing).
    #[serde(default)]
    pub out_dir: Option<String>,
    /// The output file name (default `{stem}.json` / `{stem}.toon`; the suffix is added when
    /// the name has none).
    #[serde(default)]
    pub out_name: Option<String>,
    #[serde(default)]
    pub on_conflict: Option<OnConflict>,
    #[serde(default)]
    pub options: ExtractOptions,
}

/// Sheet names of the workbook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkbookMeta {
    pub sheet_names: Vec<String>,
    pub sheet_count: usize,
}

/// An extraction response (`exstruct_extract` output).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExtractResponse {
    pub out_path: String,
    pub workbook_meta: Option<WorkbookMeta>,
    pub warnings: Vec<String>,
    /// `internal_api` (ExStruct's value for an in-process extraction).
    pub engine: String,
}

/// Reads a workbook's structure from its bytes (`display` names it in errors).
pub fn read_workbook(
    display: &str,
    bytes: Arc<[u8]>,
    mode: ExtractMode,
    options: &ExtractOptions,
) -> Result<(WorkbookData, Vec<String>), Error> {
    crate::guard::guarded(display, || read(display, bytes, mode, options))
}

fn read(
    display: &str,
    bytes: Arc<[u8]>,
    mode: ExtractMode,
    options: &ExtractOptions,
) -> Result<(WorkbookData, Vec<String>), Error> {
    let pkg = Package::open(display, bytes)?;
    let mut book = Book::open(pkg)?;
    let mut warnings = Vec::new();
    let alpha = options.alpha_col.unwrap_or(true);
    let mut budget = options.max_cells.unwrap_or(DEFAULT_MAX_CELLS);
    let book_name = Path::new(display)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| display.to_string());
    let formats = match tables::format_facts(&book.pkg) {
        Ok(f) => f,
        Err(e) => {
            warnings.push(format!(
                "cell formats not read (no dates, no bordered tables): {e}"
            ));
            tables::FormatFacts::default()
        }
    };
    let date1904 = book.wb.date1904;
    let mut sheets = Vec::new();
    for index in 0..book.sheets.len() {
        let (name, kind, part, original) = match book.sheets.get(index) {
            Some(s) => match &s.origin {
                Origin::Existing {
                    original_index,
                    part,
                } => (s.name.clone(), s.kind, part.clone(), *original_index),
                Origin::Added { .. } => continue,
            },
            None => continue,
        };
        let mut data = SheetData::default();
        if kind != SheetKind::Worksheet {
            // Chart sheets and the like have no cells; ExStruct lists worksheets only.
            continue;
        }
        let Some(part) = part else { continue };
        let positions = read_cells(
            &mut book,
            index,
            mode,
            alpha,
            &mut budget,
            &name,
            &mut data,
            &mut warnings,
            (&formats.date, date1904),
        )?;
        data.print_areas = print_areas(&book, original);
        let sheet_rels = sheet_relationships(&book.pkg, &part, &mut warnings)?;
        for (kind, target) in &sheet_rels {
            if kind == "table"
                && let Some(text) = book.pkg.read_text(target)?
                && let Some(range) = table_ref(&text)
            {
                data.table_candidates.push(range);
            }
        }
        {
            let values: std::collections::BTreeSet<(u32, u32)> = positions.into_iter().collect();
            let (doc, _) = book.doc_mut(index)?;
            match tables::border_candidates(doc, &formats.bordered, &values, budget.max(1)) {
                Some(found) => {
                    for area in found {
                        let range = area.to_a1();
                        if !data.table_candidates.contains(&range) {
                            data.table_candidates.push(range);
                        }
                    }
                }
                None => warnings.push(format!(
                    "{name}: too many bordered cells or blocks to look for bordered tables"
                )),
            }
        }
        if mode == ExtractMode::Verbose {
            let (doc, _) = book.doc_mut(index)?;
            let links = hyperlinks(doc.xml(), &sheet_rels);
            attach_links(&mut data.rows, links, alpha);
        }
        if mode != ExtractMode::Light
            && let Some((_, drawing_part)) = sheet_rels.iter().find(|(k, _)| k == "drawing")
        {
            // Column widths and row heights are only needed to place drawing objects.
            let mut metrics = {
                let (doc, _) = book.doc_mut(index)?;
                Metrics::of(doc)
            };
            let found = drawing::read(&book.pkg, drawing_part, &mut metrics, mode, &mut warnings)?;
            data.shapes = found.shapes;
            data.charts = found.charts;
        }
        sheets.push((name, data));
    }
    Ok((WorkbookData { book_name, sheets }, warnings))
}

fn col_key(col: u32, alpha: bool) -> String {
    if alpha {
        column_name(col)
    } else {
        (col - 1).to_string()
    }
}

fn number_value(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

fn cached_value(c: &Cached) -> Value {
    match c.t.as_deref() {
        Some("str" | "s" | "inlineStr" | "e") => Value::from(c.v.clone()),
        Some("b") => Value::from(c.v == "1" || c.v == "true"),
        _ => {
            c.v.trim()
                .parse::<f64>()
                .map(number_value)
                .unwrap_or_else(|_| Value::from(c.v.clone()))
        }
    }
}

/// The value a cell shows as Excel last calculated it (formulas: their cached result).
fn cell_value(content: &Content) -> Option<Value> {
    match content {
        Content::Empty => None,
        Content::Number(n) => Some(number_value(*n)),
        Content::Text(t) if t.is_empty() => None,
        Content::Text(t) => Some(Value::from(t.clone())),
        Content::Bool(b) => Some(Value::from(*b)),
        Content::Error(e) | Content::Date(e) => Some(Value::from(e.clone())),
        Content::Formula { cached, .. } => cached
            .as_ref()
            .map(cached_value)
            .filter(|v| v.as_str() != Some("")),
    }
}

/// A date serial as ISO 8601: `2025-01-01` for a whole day, `2025-01-01T09:30:00` with a
/// time (`09:30:00` alone below one day). Excel's 1900 system counts the nonexistent
/// 1900-02-29 as day 60; the 1904 system counts from 1904-01-01.
fn serial_date(serial: f64, date1904: bool) -> Option<String> {
    if !serial.is_finite() || !(0.0..2_958_466.0).contains(&serial) {
        return None;
    }
    let mut days = serial.floor() as i64;
    let mut seconds = ((serial - serial.floor()) * 86_400.0).round() as i64;
    if seconds >= 86_400 {
        days += 1;
        seconds -= 86_400;
    }
    let time = format!(
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    );
    if days == 0 && !date1904 {
        return Some(time);
    }
    // Days since 1970-01-01.
    let epoch_days = if date1904 {
        days - 24_107
    } else if days < 60 {
        days - 25_568
    } else {
        days - 25_569
    };
    // Civil date from days (Howard Hinnant's algorithm).
    let z = epoch_days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let date = format!("{year:04}-{month:02}-{day:02}");
    Some(if seconds == 0 {
        date
    } else {
        format!("{date}T{time}")
    })
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[allow(clippy::too_many_arguments)]
fn read_cells(
    book: &mut Book,
    index: usize,
    mode: ExtractMode,
    alpha: bool,
    budget: &mut u64,
    name: &str,
    data: &mut SheetData,
    warnings: &mut Vec<String>,
    (date_formats, date1904): (&[bool], bool),
) -> Result<Vec<(u32, u32)>, Error> {
    let (doc, sst) = book.doc_mut(index)?;
    let mut positions = Vec::new();
    let mut formulas: Vec<(String, Vec<(u32, u32)>)> = Vec::new();
    let mut formula_index: HashMap<String, usize> = HashMap::new();
    let mut top_left: HashMap<(u32, u32), String> = HashMap::new();
    let merges: Vec<Area> = doc.merges().to_vec();
    let firsts: std::collections::HashSet<(u32, u32)> =
        merges.iter().map(|m| (m.first.row, m.first.col)).collect();
    let mut truncated = false;
    doc.visit_cells(sst, |at, content| {
        if *budget == 0 {
            truncated = true;
            return false;
        }
        *budget -= 1;
        if mode == ExtractMode::Verbose
            && let Content::Formula { text, .. } = &content
        {
            let key = format!("={text}");
            let i = *formula_index.entry(key.clone()).or_insert_with(|| {
                formulas.push((key, Vec::new()));
                formulas.len() - 1
            });
            if let Some((_, list)) = formulas.get_mut(i) {
                list.push((at.row, at.col - 1));
            }
        }
        let Some(mut value) = cell_value(&content) else {
            return true;
        };
        if let Some(serial) = value.as_f64()
            && !matches!(value, Value::Bool(_))
            && date_formats
                .get(doc.style_id(at) as usize)
                .copied()
                .unwrap_or(false)
            && let Some(text) = serial_date(serial, date1904)
        {
            value = Value::from(text);
        }
        positions.push((at.row, at.col));
        if firsts.contains(&(at.row, at.col)) {
            top_left.insert((at.row, at.col), value_text(&value));
        }
        let key = col_key(at.col, alpha);
        match data.rows.last_mut() {
            Some(row) if row.r == at.row => row.c.push((key, value)),
            _ => data.rows.push(CellRow {
                r: at.row,
                c: vec![(key, value)],
                links: Vec::new(),
            }),
        }
        true
    });
    if truncated {
        warnings.push(format!(
            "{name}: cells past the limit of the request (max_cells) were left out"
        ));
    }
    data.formulas_map = formulas;
    if mode != ExtractMode::Light && !merges.is_empty() {
        let mut items: Vec<(u32, u32, u32, u32, String)> = merges
            .iter()
            .map(|m| {
                (
                    m.first.row,
                    m.first.col - 1,
                    m.last.row,
                    m.last.col - 1,
                    top_left
                        .get(&(m.first.row, m.first.col))
                        .cloned()
                        .unwrap_or_default(),
                )
            })
            .collect();
        items.sort_by_key(|i| (i.0, i.1));
        data.merged_cells = Some(MergedCells {
            schema: ["r1", "c1", "r2", "c2", "v"],
            items,
        });
    }
    Ok(positions)
}

/// `_xlnm.Print_Area` of the sheet: each area of its (comma-separated) reference.
fn print_areas(book: &Book, original_index: usize) -> Vec<PrintArea> {
    let mut out = Vec::new();
    for dn in &book.wb.defined_names {
        if !dn.name.eq_ignore_ascii_case("_xlnm.Print_Area")
            || dn.local_sheet.map(|s| s as usize) != Some(original_index)
        {
            continue;
        }
        for part in split_outside_quotes(&dn.formula) {
            let reference = part.rsplit_once('!').map_or(part.as_str(), |(_, r)| r);
            if let Some(area) = Area::parse(&reference.replace('$', "")) {
                out.push(PrintArea {
                    r1: area.first.row,
                    c1: area.first.col - 1,
                    r2: area.last.row,
                    c2: area.last.col - 1,
                });
            }
        }
    }
    out
}

fn split_outside_quotes(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in s.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                current.push(c);
            }
            ',' if !quoted => out.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    out.push(current);
    out.into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// The worksheet's relationships as `(kind, target part or external URL)`.
fn sheet_relationships(
    pkg: &Package,
    sheet_part: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<(String, String)>, Error> {
    let rels_part = package::rels_part_of(sheet_part);
    let Some(text) = pkg.read_text(&rels_part)? else {
        return Ok(Vec::new());
    };
    let rels = match package::parse_rels(&pkg.display, &rels_part, text) {
        Ok(r) => r,
        Err(e) => {
            warnings.push(format!("{rels_part} skipped: {e}"));
            return Ok(Vec::new());
        }
    };
    Ok(rels
        .rels
        .iter()
        .map(|r| {
            let target = if r.external {
                format!("external:{}:{}", r.id, r.target)
            } else {
                package::resolve_target(sheet_part, &r.target)
            };
            let kind = if r.external {
                format!("external-{}", r.kind())
            } else {
                r.kind().to_string()
            };
            (kind, target)
        })
        .collect())
}

fn table_ref(text: &str) -> Option<String> {
    let mut r = xml::reader(text);
    loop {
        match r.read_event().ok()? {
            Event::Start(e) | Event::Empty(e) if xml::local(&e) == b"table" => {
                return xml::attr(&e, b"ref");
            }
            Event::Eof => return None,
            _ => {}
        }
    }
}

/// `(cell, target)` of each `<hyperlink>`: the external address, else `#location`.
fn hyperlinks(sheet_xml: &str, rels: &[(String, String)]) -> Vec<((u32, u32), String)> {
    let external: HashMap<&str, &str> = rels
        .iter()
        .filter_map(|(_, t)| {
            let rest = t.strip_prefix("external:")?;
            let (id, url) = rest.split_once(':')?;
            Some((id, url))
        })
        .collect();
    let mut out = Vec::new();
    let mut r = xml::reader(sheet_xml);
    loop {
        match r.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) if xml::local(&e) == b"hyperlink" => {
                let Some(cell) = xml::attr(&e, b"ref")
                    .and_then(|a| Area::parse(&a))
                    .map(|a| (a.first.row, a.first.col))
                else {
                    continue;
                };
                let target = xml::attr(&e, b"id")
                    .and_then(|id| external.get(id.as_str()).map(|u| u.to_string()))
                    .or_else(|| xml::attr(&e, b"location").map(|l| format!("#{l}")));
                if let Some(t) = target {
                    out.push((cell, t));
                }
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    out
}

fn attach_links(rows: &mut [CellRow], links: Vec<((u32, u32), String)>, alpha: bool) {
    for ((row, col), target) in links {
        let key = col_key(col, alpha);
        if let Ok(i) = rows.binary_search_by_key(&row, |r| r.r)
            && let Some(r) = rows.get_mut(i)
            && r.c.iter().any(|(k, _)| *k == key)
        {
            r.links.push((key, target));
        }
    }
}

/// Column widths and row heights in points, to turn anchors (cell + offset) into positions.
pub(crate) struct Metrics {
    widths: Vec<f64>,
    heights: Vec<f64>,
    default_width: f64,
    default_height: f64,
    column_offsets: Vec<f64>,
    row_offsets: Vec<f64>,
}

impl Metrics {
    fn of(doc: &crate::sheet::SheetDoc) -> Metrics {
        let (default_col, default_row) = sheet_defaults(doc.xml());
        let default_width = default_col.map_or(48.0, width_points);
        let default_height = default_row.unwrap_or(15.0);
        // Sizes of the first 16,384 columns are known from <cols>; rows are looked up as the
        // anchors need them.
        let widths = (1..=crate::a1::MAX_COL)
            .map(|c| doc.column_width(c).map_or(default_width, width_points))
            .collect();
        let heights = Vec::new();
        let mut m = Metrics {
            widths,
            heights,
            default_width,
            default_height,
            column_offsets: vec![0.0],
            row_offsets: vec![0.0],
        };
        m.heights = row_heights(doc, default_height);
        m
    }

    /// Points before 0-based column `col`.
    pub fn column_offset(&mut self, col: u32) -> f64 {
        let col = (col as usize).min(self.widths.len());
        while self.column_offsets.len() <= col {
            let i = self.column_offsets.len() - 1;
            let w = self.widths.get(i).copied().unwrap_or(self.default_width);
            let last = self.column_offsets.last().copied().unwrap_or(0.0);
            self.column_offsets.push(last + w);
        }
        self.column_offsets.get(col).copied().unwrap_or(0.0)
    }

    /// Points before 0-based row `row`.
    pub fn row_offset(&mut self, row: u32) -> f64 {
        let row = (row as usize).min(crate::a1::MAX_ROW as usize);
        while self.row_offsets.len() <= row {
            let i = self.row_offsets.len() - 1;
            let h = self.heights.get(i).copied().unwrap_or(self.default_height);
            let last = self.row_offsets.last().copied().unwrap_or(0.0);
            self.row_offsets.push(last + h);
        }
        self.row_offsets.get(row).copied().unwrap_or(0.0)
    }
}

/// Heights of rows 1.. up to the last row with a custom height (index 0 = row 1).
fn row_heights(doc: &crate::sheet::SheetDoc, default: f64) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    let mut r = xml::reader(doc.xml());
    loop {
        match r.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) if xml::local(&e) == b"row" => {
                let (Some(row), Some(ht)) = (
                    xml::attr(&e, b"r").and_then(|v| v.parse::<usize>().ok()),
                    xml::attr(&e, b"ht").and_then(|v| v.parse::<f64>().ok()),
                ) else {
                    continue;
                };
                if row == 0 || row > crate::a1::MAX_ROW as usize || !ht.is_finite() {
                    continue;
                }
                if out.len() < row {
                    out.resize(row, default);
                }
                if let Some(slot) = out.get_mut(row - 1) {
                    *slot = ht;
                }
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    out
}

/// `defaultColWidth` and `defaultRowHeight` of `<sheetFormatPr>`.
fn sheet_defaults(sheet_xml: &str) -> (Option<f64>, Option<f64>) {
    let mut r = xml::reader(sheet_xml);
    loop {
        match r.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) if xml::local(&e) == b"sheetFormatPr" => {
                let get = |n: &[u8]| {
                    xml::attr(&e, n)
                        .and_then(|v| v.parse::<f64>().ok())
                        .filter(|v| v.is_finite() && *v > 0.0)
                };
                return (get(b"defaultColWidth"), get(b"defaultRowHeight"));
            }
            Ok(Event::Start(e)) if xml::local(&e) == b"sheetData" => return (None, None),
            Ok(Event::Eof) | Err(_) => return (None, None),
            _ => {}
        }
    }
}

/// A `<col width>` (characters of the default font) in points, as Excel lays it out at 96 dpi.
fn width_points(width: f64) -> f64 {
    if width <= 0.0 {
        0.0
    } else {
        (width * 7.0 + 5.0) * 72.0 / 96.0
    }
}

/// Serialises the workbook data in the requested format.
pub fn render(
    data: &WorkbookData,
    format: ExtractFormat,
    options: &ExtractOptions,
) -> Result<String, Error> {
    match format {
        ExtractFormat::Json => {
            let indent = options
                .indent
                .map(usize::from)
                .or(options.pretty.then_some(2));
            match indent {
                Some(n) => {
                    let spaces = " ".repeat(n);
                    let mut out = Vec::new();
                    let formatter =
                        serde_json::ser::PrettyFormatter::with_indent(spaces.as_bytes());
                    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
                    data.serialize(&mut ser)
                        .map_err(|e| Error::Backend(format!("writing JSON: {e}")))?;
                    String::from_utf8(out).map_err(|e| Error::Backend(e.to_string()))
                }
                None => serde_json::to_string(data)
                    .map_err(|e| Error::Backend(format!("writing JSON: {e}"))),
            }
        }
        ExtractFormat::Toon => {
            let value = serde_json::to_value(data)
                .map_err(|e| Error::Backend(format!("writing TOON: {e}")))?;
            toon_format::encode(&value, &toon_format::EncodeOptions::default())
                .map_err(|e| Error::Backend(format!("writing TOON: {e}")))
        }
        ExtractFormat::Yaml | ExtractFormat::Yml => Err(Error::InvalidRequest(
            "format yaml is not supported; use json or toon".to_string(),
        )),
    }
}

/// Runs an extraction request: reads the workbook, writes the output file, reports where.
pub fn extract(req: &ExtractRequest, env: &PatchEnv) -> Result<ExtractResponse, Error> {
    let suffix = match req.format {
        ExtractFormat::Json => ".json",
        ExtractFormat::Toon => ".toon",
        ExtractFormat::Yaml | ExtractFormat::Yml => {
            return Err(Error::InvalidRequest(
                "format yaml is not supported; use json or toon".to_string(),
            ));
        }
    };
    check_extension(&req.xlsx_path)?;
    let input = resolve_input(&req.xlsx_path, &env.policy)?;
    let bytes: Arc<[u8]> = std::fs::read(&input)
        .map_err(io_error("reading", &input))?
        .into();
    let mut warnings: Vec<String> = req
        .options
        .other
        .keys()
        .map(|k| format!("option {k} is not supported here and was ignored"))
        .collect();
    let (data, read_warnings) =
        read_workbook(&input.display().to_string(), bytes, req.mode, &req.options)?;
    warnings.extend(read_warnings);
    let text = render(&data, req.format, &req.options)?;

    let stem = input
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "workbook".to_string());
    let name = match req.out_name.as_deref().map(str::trim) {
        Some(n) if !n.is_empty() => {
            let file = Path::new(n)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .ok_or_else(|| {
                    Error::InvalidRequest(format!("out_name {n:?} is not a file name"))
                })?;
            if Path::new(&file).extension().is_some() {
                file
            } else {
                format!("{file}{suffix}")
            }
        }
        _ => format!("{stem}{suffix}"),
    };
    let dir = match req.out_dir.as_deref() {
        Some(d) => env.policy.resolve_new(d)?,
        None => input.parent().map(Path::to_path_buf).unwrap_or_default(),
    };
    std::fs::create_dir_all(&dir).map_err(io_error("creating", &dir))?;
    let target = dir.join(&name);
    env.policy.check(&target)?;
    let conflict = req
        .on_conflict
        .or(env.on_conflict_default)
        .unwrap_or(OnConflict::FALLBACK);
    let meta = WorkbookMeta {
        sheet_count: data.sheets.len(),
        sheet_names: data.sheets.iter().map(|(n, _)| n.clone()).collect(),
    };
    // Written by the one rule for an existing file; a skip (the file exists, or appeared
    // meanwhile) writes nothing and says so.
    let saved = match keiri_fs::save(&dir, &name, text.as_bytes(), conflict.into())? {
        None => {
            warnings.push(format!("Output exists; skipping write: {name}"));
            return Ok(ExtractResponse {
                out_path: target.display().to_string(),
                workbook_meta: None,
                warnings,
                engine: "internal_api".to_string(),
            });
        }
        Some(path) => {
            if path != target {
                let shown = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                warnings.push(format!("Output exists; renamed to: {shown}"));
            }
            path
        }
    };
    Ok(ExtractResponse {
        out_path: saved.display().to_string(),
        workbook_meta: Some(meta),
        warnings,
        engine: "internal_api".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_serials_follow_excel() {
        for (serial, date1904, want) in [
            (45658.0, false, "2025-01-01"),
            (1.0, false, "1900-01-01"),
            (59.0, false, "1900-02-28"),
            (61.0, false, "1900-03-01"),
            (45658.5, false, "2025-01-01T12:00:00"),
            (0.25, false, "06:00:00"),
            (0.0, true, "1904-01-01"),
            (44196.0, false, "2020-12-31"),
        ] {
            assert_eq!(
                serial_date(serial, date1904).as_deref(),
                Some(want),
                "{serial}"
            );
        }
        assert_eq!(serial_date(-1.0, false), None);
        assert_eq!(serial_date(f64::NAN, false), None);
    }

    #[test]
    fn date_codes() {
        for (code, want) in [
            ("yyyy/mm/dd", true),
            ("[$-411]ggge\"年\"m\"月\"d\"日\"", true),
            ("h:mm AM/PM", true),
            ("[h]:mm", true),
            ("#,##0\"円\"", false),
            ("0.00E+00", false),
            ("[Red]#,##0;[Blue]-#,##0", false),
            ("General", false),
            ("\\d0", false),
        ] {
            assert_eq!(tables::is_date_code(code), want, "{code}");
        }
    }
}
