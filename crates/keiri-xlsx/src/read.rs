//! Reading cells straight from a workbook: the `exstruct_read_range`, `exstruct_read_cells`
//! and `exstruct_read_formulas` tools. ExStruct's tools read the JSON its `exstruct_extract`
//! wrote (`out_path`); these read the `.xlsx`/`.xlsm` itself (`xlsx_path`), with the same
//! result shapes: a formula cell shows its formula (with `=`) and the value its writer cached.
//!
//! Nothing is written. A bad range or address is `INVALID_REQUEST`, an unknown sheet
//! `SHEET_NOT_FOUND`, a range larger than `max_cells` `LIMIT_EXCEEDED`.

use keiri_fs::PathPolicy;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::a1::{Area, CellRef};
use crate::book::{Book, SheetKind};
use crate::contract::CellValue;
use crate::error::Error;
use crate::formula;
use crate::guard;
use crate::patch::open_for_reading;
use crate::sheet::{Cached, Content};

/// `max_cells` when a request gives none (ExStruct's default).
pub const DEFAULT_MAX_CELLS: u64 = 10_000;
/// The most cells one read may return, whatever `max_cells` says.
pub const MAX_CELLS_CEILING: u64 = 1_000_000;
/// The most addresses one `read_cells` call may name.
pub const MAX_ADDRESSES: usize = 10_000;

fn default_max_cells() -> u64 {
    DEFAULT_MAX_CELLS
}

fn yes() -> bool {
    true
}

/// `exstruct_read_range` arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadRangeRequest {
    /// The workbook (.xlsx or .xlsm), absolute or relative to the workspace.
    pub xlsx_path: String,
    /// The sheet; may be left out when the workbook has one worksheet.
    #[serde(default)]
    pub sheet: Option<String>,
    /// An A1 range such as `A1:G10` (or one cell).
    pub range: String,
    /// Give each cell's formula too.
    #[serde(default)]
    pub include_formulas: bool,
    /// List empty cells (with a `null` value) too.
    #[serde(default = "yes")]
    pub include_empty: bool,
    /// The most cells the range may cover (10,000 by default; at most 1,000,000).
    #[serde(default = "default_max_cells")]
    pub max_cells: u64,
}

/// `exstruct_read_cells` arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadCellsRequest {
    pub xlsx_path: String,
    #[serde(default)]
    pub sheet: Option<String>,
    /// A1 cell addresses such as `J98` (at least one, at most 10,000).
    pub addresses: Vec<String>,
    /// Give each cell's formula too (the default).
    #[serde(default = "yes")]
    pub include_formulas: bool,
}

/// `exstruct_read_formulas` arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFormulasRequest {
    pub xlsx_path: String,
    #[serde(default)]
    pub sheet: Option<String>,
    /// Only formulas inside this A1 range; the whole sheet when left out.
    #[serde(default)]
    pub range: Option<String>,
    /// Give the value each formula's writer cached.
    #[serde(default)]
    pub include_values: bool,
    /// The most formulas listed (10,000 by default; at most 1,000,000); the rest are left out
    /// with a warning and `truncated: true`.
    #[serde(default = "default_max_cells")]
    pub max_cells: u64,
}

/// One cell as read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CellReadItem {
    pub cell: String,
    /// The value, or for a formula the value cached in the file (`null` when none).
    pub value: Option<CellValue>,
    /// `=SUM(A1:A3)`, when asked for and the cell has one.
    pub formula: Option<String>,
}

/// One formula as read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FormulaReadItem {
    pub cell: String,
    pub formula: String,
    /// The cached value, with `include_values`.
    pub value: Option<CellValue>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReadRangeResponse {
    /// The workbook's file name.
    pub book_name: Option<String>,
    pub sheet_name: String,
    /// The range read, normalised (`A1:G10`, or `A1` for one cell).
    pub range: String,
    pub cells: Vec<CellReadItem>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReadCellsResponse {
    pub book_name: Option<String>,
    pub sheet_name: String,
    pub cells: Vec<CellReadItem>,
    /// The addresses with neither a value nor a formula.
    pub missing_cells: Vec<String>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReadFormulasResponse {
    pub book_name: Option<String>,
    pub sheet_name: String,
    pub range: Option<String>,
    pub formulas: Vec<FormulaReadItem>,
    pub warnings: Vec<String>,
    /// More formulas than `max_cells` matched; only the first are listed.
    pub truncated: bool,
}

/// Reads a rectangle of cells.
pub fn read_range(req: &ReadRangeRequest, policy: &PathPolicy) -> Result<ReadRangeResponse, Error> {
    let area = parse_range(&req.range)?;
    let max = max_cells(req.max_cells)?;
    if area.len() > max {
        return Err(Error::LimitExceeded(format!(
            "the range {} covers {} cells, more than max_cells {max}; read a smaller range or \
             raise max_cells",
            area.to_a1(),
            area.len()
        )));
    }
    guard::guarded(&req.xlsx_path, || {
        let mut opened = Opened::new(&req.xlsx_path, req.sheet.as_deref(), policy)?;
        let mut cells = Vec::new();
        for at in area.cells() {
            let content = opened.get(at)?;
            if !req.include_empty && content == Content::Empty {
                continue;
            }
            cells.push(item(at, &content, req.include_formulas));
        }
        Ok(ReadRangeResponse {
            book_name: opened.book_name,
            sheet_name: opened.sheet_name,
            range: area.to_a1(),
            cells,
            warnings: opened.warnings,
        })
    })
}

/// Reads the cells at the given addresses, in their order.
pub fn read_cells(req: &ReadCellsRequest, policy: &PathPolicy) -> Result<ReadCellsResponse, Error> {
    if req.addresses.is_empty() {
        return Err(Error::InvalidRequest(
            "addresses must name at least one cell".into(),
        ));
    }
    if req.addresses.len() > MAX_ADDRESSES {
        return Err(Error::LimitExceeded(format!(
            "{} addresses given; at most {MAX_ADDRESSES} per call",
            req.addresses.len()
        )));
    }
    let cells: Vec<CellRef> = req
        .addresses
        .iter()
        .map(|a| {
            CellRef::parse(a.trim()).ok_or_else(|| {
                Error::InvalidRequest(format!(
                    "address {a:?} is not an A1 cell reference such as J98"
                ))
            })
        })
        .collect::<Result<_, _>>()?;
    guard::guarded(&req.xlsx_path, || {
        let mut opened = Opened::new(&req.xlsx_path, req.sheet.as_deref(), policy)?;
        let mut items = Vec::with_capacity(cells.len());
        let mut missing_cells = Vec::new();
        for at in cells {
            let content = opened.get(at)?;
            if content == Content::Empty {
                missing_cells.push(at.to_a1());
            }
            items.push(item(at, &content, req.include_formulas));
        }
        Ok(ReadCellsResponse {
            book_name: opened.book_name,
            sheet_name: opened.sheet_name,
            cells: items,
            missing_cells,
            warnings: opened.warnings,
        })
    })
}

/// Lists the formulas of a sheet (or of a range of it), row by row.
pub fn read_formulas(
    req: &ReadFormulasRequest,
    policy: &PathPolicy,
) -> Result<ReadFormulasResponse, Error> {
    let area = req.range.as_deref().map(parse_range).transpose()?;
    let max = max_cells(req.max_cells)?;
    guard::guarded(&req.xlsx_path, || {
        let mut opened = Opened::new(&req.xlsx_path, req.sheet.as_deref(), policy)?;
        let (doc, sst) = opened.book.doc_mut(opened.index)?;
        let mut formulas = Vec::new();
        let mut truncated = false;
        for (at, content) in doc.cells(sst, false) {
            if area.is_some_and(|a| !a.contains(at)) {
                continue;
            }
            let Content::Formula { text, cached, .. } = &content else {
                continue;
            };
            if formulas.len() as u64 >= max {
                truncated = true;
                break;
            }
            formulas.push(FormulaReadItem {
                cell: at.to_a1(),
                formula: format!("={}", formula::strip_file_prefixes(text)),
                value: if req.include_values {
                    cached.as_ref().and_then(cached_value)
                } else {
                    None
                },
            });
        }
        if truncated {
            opened.warnings.push(format!(
                "more than max_cells {max} formulas; only the first {max} are listed (narrow \
                 the range or raise max_cells)"
            ));
        }
        Ok(ReadFormulasResponse {
            book_name: opened.book_name,
            sheet_name: opened.sheet_name,
            range: area.map(|a| a.to_a1()),
            formulas,
            warnings: opened.warnings,
            truncated,
        })
    })
}

fn parse_range(text: &str) -> Result<Area, Error> {
    Area::parse(text.trim()).ok_or_else(|| {
        Error::InvalidRequest(format!("range {text:?} is not an A1 range such as A1:G10"))
    })
}

fn max_cells(max: u64) -> Result<u64, Error> {
    if max == 0 || max > MAX_CELLS_CEILING {
        return Err(Error::InvalidRequest(format!(
            "max_cells must be between 1 and {MAX_CELLS_CEILING}"
        )));
    }
    Ok(max)
}

/// The workbook opened with the sheet a read names (or its only worksheet).
/// `find_rows` arguments: which rows of `sheet` hold each key in `key_column` (below
/// `header_row`), compared as `update_rows_by_key` compares them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindRowsRequest {
    pub xlsx_path: String,
    #[serde(default)]
    pub sheet: Option<String>,
    #[serde(default = "first_row")]
    pub header_row: u32,
    /// The key column: its header text, or its letter.
    pub key_column: String,
    pub keys: Vec<CellValue>,
}

fn first_row() -> u32 {
    1
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FindRowsResponse {
    pub sheet_name: String,
    /// The key column's letter.
    pub key_column: String,
    /// For each key, in order: the rows (1-based) whose key cell matches it; none, one, or
    /// several when the sheet has the key twice.
    pub rows: Vec<Vec<u32>>,
}

/// Finds the rows of each key (see [`FindRowsRequest`]); a column the header row does not
/// have is `INVALID_REQUEST` naming the headers.
pub fn find_rows(req: &FindRowsRequest, policy: &PathPolicy) -> Result<FindRowsResponse, Error> {
    if req.header_row == 0 || req.header_row >= crate::a1::MAX_ROW {
        return Err(Error::InvalidRequest(format!(
            "header_row {} is outside the sheet's rows",
            req.header_row
        )));
    }
    guard::guarded(&req.xlsx_path, || {
        let mut opened = Opened::new(&req.xlsx_path, req.sheet.as_deref(), policy)?;
        let (doc, sst) = opened.book.doc_mut(opened.index)?;
        let headers = crate::row_ops::Headers::read(doc, sst, req.header_row);
        let col = headers
            .column(&opened.sheet_name, &req.key_column)
            .map_err(Error::InvalidRequest)?;
        let mut index: std::collections::HashMap<String, Vec<u32>> = Default::default();
        for (row, content) in doc.column_cells(col, sst) {
            if row <= req.header_row {
                continue;
            }
            if let Some(key) = crate::row_ops::cell_text(&content) {
                index.entry(key).or_default().push(row);
            }
        }
        let rows = req
            .keys
            .iter()
            .map(|k| {
                crate::row_ops::key_of(k)
                    .and_then(|k| index.get(&k).cloned())
                    .unwrap_or_default()
            })
            .collect();
        Ok(FindRowsResponse {
            sheet_name: opened.sheet_name.clone(),
            key_column: crate::a1::column_name(col),
            rows,
        })
    })
}

struct Opened {
    book: Book,
    index: usize,
    book_name: Option<String>,
    sheet_name: String,
    warnings: Vec<String>,
}

impl Opened {
    fn new(xlsx_path: &str, sheet: Option<&str>, policy: &PathPolicy) -> Result<Opened, Error> {
        let (path, book) = open_for_reading(xlsx_path, policy)?;
        let worksheets: Vec<usize> = (0..book.sheets.len())
            .filter(|&i| book.sheets[i].kind == SheetKind::Worksheet)
            .collect();
        let names = || -> Vec<String> { book.sheets.iter().map(|s| s.name.clone()).collect() };
        let index = match sheet.map(str::trim).filter(|s| !s.is_empty()) {
            Some(name) => book.find_sheet(name).ok_or_else(|| Error::SheetNotFound {
                sheet: name.to_string(),
                available: names(),
            })?,
            None => match worksheets.as_slice() {
                [only] => *only,
                _ => {
                    return Err(Error::InvalidRequest(format!(
                        "sheet is required when the workbook has several sheets; its sheets \
                         are: {}",
                        names().join(", ")
                    )));
                }
            },
        };
        let found = &book.sheets[index];
        if found.kind != SheetKind::Worksheet {
            return Err(Error::InvalidRequest(format!(
                "{:?} is {}, not a worksheet: it has no cells to read",
                found.name,
                found.kind.describe()
            )));
        }
        Ok(Opened {
            sheet_name: found.name.clone(),
            index,
            book_name: path.file_name().map(|n| n.to_string_lossy().into_owned()),
            book,
            warnings: Vec::new(),
        })
    }

    fn get(&mut self, at: CellRef) -> Result<Content, Error> {
        let (doc, sst) = self.book.doc_mut(self.index)?;
        Ok(doc.get(at, sst))
    }
}

fn item(at: CellRef, content: &Content, with_formula: bool) -> CellReadItem {
    let (value, formula) = match content {
        Content::Empty => (None, None),
        Content::Number(n) => (Some(CellValue::number(*n)), None),
        Content::Bool(b) => (Some(CellValue::Bool(*b)), None),
        Content::Text(t) | Content::Error(t) | Content::Date(t) => {
            (Some(CellValue::Text(t.clone())), None)
        }
        Content::Formula { text, cached, .. } => (
            cached.as_ref().and_then(cached_value),
            Some(format!("={}", formula::strip_file_prefixes(text))),
        ),
    };
    CellReadItem {
        cell: at.to_a1(),
        value,
        formula: formula.filter(|_| with_formula),
    }
}

/// A formula's cached result as a value: a number unless its type says text (`str`), a
/// boolean (`b`) or an error (`e`, shown as its text such as `#N/A`).
fn cached_value(cached: &Cached) -> Option<CellValue> {
    match cached.t.as_deref() {
        Some("str" | "inlineStr" | "e" | "s") => Some(CellValue::Text(cached.v.clone())),
        Some("b") => Some(CellValue::Bool(cached.v.trim() == "1")),
        _ => cached
            .v
            .trim()
            .parse::<f64>()
            .ok()
            .map(CellValue::number)
            .or_else(|| Some(CellValue::Text(cached.v.clone()))),
    }
}
