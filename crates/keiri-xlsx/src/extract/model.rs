//! The extraction result, field for field ExStruct's `WorkbookData` as it is serialised: empty
//! lists, maps and absent values are left out, sheets keep workbook order.

use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A workbook's structure: its file name and each sheet's data, in workbook order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkbookData {
    pub book_name: String,
    #[serde(serialize_with = "ordered_map")]
    pub sheets: Vec<(String, SheetData)>,
}

impl WorkbookData {
    /// The sheet with this exact name.
    pub fn sheet(&self, name: &str) -> Option<&SheetData> {
        self.sheets.iter().find(|(n, _)| n == name).map(|(_, s)| s)
    }
}

fn ordered_map<S: Serializer, V: Serialize>(
    entries: &[(String, V)],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let mut map = serializer.serialize_map(Some(entries.len()))?;
    for (k, v) in entries {
        map.serialize_entry(k, v)?;
    }
    map.end()
}

/// One sheet. Columns in `c1`/`c2` and map positions are 0-based, rows 1-based (ExStruct's
/// convention), while the keys of `rows[].c` are letters (`A`) by default.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SheetData {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<CellRow>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shapes: Vec<ShapeItem>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub charts: Vec<Chart>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub table_candidates: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub print_areas: Vec<PrintArea>,
    /// `=FORMULA` → `[row, col0]` cells (verbose).
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "ordered_map")]
    pub formulas_map: Vec<(String, Vec<(u32, u32)>)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merged_cells: Option<MergedCells>,
}

/// One row's non-empty cells (values as Excel last calculated them) and, in verbose mode, the
/// hyperlinks of those cells.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellRow {
    pub r: u32,
    #[serde(serialize_with = "ordered_map")]
    pub c: Vec<(String, Value)>,
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "ordered_map")]
    pub links: Vec<(String, String)>,
}

/// Merged ranges as `schema` + `items` rows `[r1, c1, r2, c2, v]` (v: the top-left value as
/// text, empty when none).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MergedCells {
    pub schema: [&'static str; 5],
    pub items: Vec<(u32, u32, u32, u32, String)>,
}

/// A print area: rows 1-based, columns 0-based, inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrintArea {
    pub r1: u32,
    pub c1: u32,
    pub r2: u32,
    pub c2: u32,
}

/// A chart: its type (`Column`, `Bar`, `Line`, `Pie`, …), title, value-axis title and range,
/// series references and position in points.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Chart {
    pub name: String,
    pub chart_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub y_axis_title: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub y_axis_range: Vec<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub w: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub h: Option<i64>,
    pub series: Vec<ChartSeries>,
    pub l: i64,
    pub t: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A chart series: its name (the cached text, else the reference) and the references of its
/// name, categories / x values and values / y values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChartSeries {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_range: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub x_range: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub y_range: Option<String>,
}

/// A shape, connector or SmartArt, told apart by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ShapeItem {
    Shape(Shape),
    Arrow(Arrow),
    SmartArt(SmartArt),
}

/// A drawn shape: `id` is its sequence number on the sheet (what connectors refer to), `type`
/// ExStruct's label (`AutoShape-Rectangle`, `TextBox-Rectangle`, …). Positions are points.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shape {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<u32>,
    pub text: String,
    pub l: i64,
    pub t: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub w: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub h: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotation: Option<f64>,
    pub kind: &'static str,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub shape_type: Option<String>,
}

/// A connector or line: the shapes it joins (`begin_id`/`end_id`, the `id`s of shapes on the
/// same sheet), its arrowheads and its compass direction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Arrow {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<u32>,
    pub text: String,
    pub l: i64,
    pub t: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub w: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub h: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotation: Option<f64>,
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub begin_arrow_style: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_arrow_style: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub begin_id: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_id: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direction: Option<&'static str>,
}

/// A SmartArt diagram: its layout and its node tree, read from the diagram data part.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SmartArt {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<u32>,
    pub text: String,
    pub l: i64,
    pub t: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub w: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub h: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotation: Option<f64>,
    pub kind: &'static str,
    pub layout: String,
    pub nodes: Vec<SmartArtNode>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SmartArtNode {
    pub text: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kids: Vec<SmartArtNode>,
}
