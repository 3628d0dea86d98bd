//! The design ops of the `exstruct_patch` contract: styling (`set_bold`, `set_font_size`,
//! `set_font_color`, `set_fill_color`, `set_alignment`, `set_style`, `draw_grid_border`),
//! structure (`set_dimensions`, `auto_fit_columns`, `merge_cells`, `unmerge_cells`) and the
//! inverse op that undoes any of them (`restore_design_snapshot`), and `apply_table_style`
//! (a new table part) with its inverse, the extension `delete_table`. ExStruct's `create_chart` (COM only there) is not implemented (an
//! unknown op here).
//!
//! Names, fields, aliases and validation follow ExStruct's patch op models, so a request that
//! ExStruct accepts is accepted here and one it refuses is refused with the same reason. Each op
//! is a struct of its own (serialised flat under the op's `op` tag), which is what lets the op
//! list and each op's schema be generated from these definitions.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::a1::{Area, CellRef, column_name, column_number};

/// ExStruct's cap on the cells one styling op may touch, against accidental huge targets.
pub const MAX_STYLE_TARGET_CELLS: u64 = 10_000;

/// A column given by its letters (`"C"`, `"AA"`) or its 1-based number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ColumnId {
    Number(u32),
    Letters(String),
}

impl ColumnId {
    /// The 1-based column number, or why the identifier is not a column.
    pub fn number(&self) -> Result<u32, String> {
        match self {
            ColumnId::Number(n) if (1..=crate::a1::MAX_COL).contains(n) => Ok(*n),
            ColumnId::Number(n) => Err(format!("column index {n} must be between 1 and 16384")),
            ColumnId::Letters(s) => {
                let t = s.trim();
                if t.is_empty() || t.len() > 3 || !t.bytes().all(|b| b.is_ascii_alphabetic()) {
                    return Err(format!("Invalid column identifier: {s}"));
                }
                column_number(t).ok_or_else(|| format!("Invalid column identifier: {s}"))
            }
        }
    }
}

/// Horizontal alignment values, as Excel (and ExStruct) names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum HorizontalAlign {
    #[serde(rename = "general")]
    General,
    #[serde(rename = "left")]
    Left,
    #[serde(rename = "center")]
    Center,
    #[serde(rename = "right")]
    Right,
    #[serde(rename = "fill")]
    Fill,
    #[serde(rename = "justify")]
    Justify,
    #[serde(rename = "centerContinuous")]
    CenterContinuous,
    #[serde(rename = "distributed")]
    Distributed,
}

impl HorizontalAlign {
    pub fn as_str(self) -> &'static str {
        match self {
            HorizontalAlign::General => "general",
            HorizontalAlign::Left => "left",
            HorizontalAlign::Center => "center",
            HorizontalAlign::Right => "right",
            HorizontalAlign::Fill => "fill",
            HorizontalAlign::Justify => "justify",
            HorizontalAlign::CenterContinuous => "centerContinuous",
            HorizontalAlign::Distributed => "distributed",
        }
    }
}

/// Vertical alignment values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum VerticalAlign {
    Top,
    Center,
    Bottom,
    Justify,
    Distributed,
}

impl VerticalAlign {
    pub fn as_str(self) -> &'static str {
        match self {
            VerticalAlign::Top => "top",
            VerticalAlign::Center => "center",
            VerticalAlign::Bottom => "bottom",
            VerticalAlign::Justify => "justify",
            VerticalAlign::Distributed => "distributed",
        }
    }
}

/// `draw_grid_border`: thin black borders on every cell of a rectangle. `range` (`"A1:C3"`)
/// is accepted as shorthand for `base_cell` + `row_count` + `col_count`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DrawGridBorder {
    #[serde(default)]
    pub sheet: String,
    pub base_cell: String,
    pub row_count: u32,
    pub col_count: u32,
}

/// The fields every cell-or-range styling op shares: exactly one of `cell` and `range`.
macro_rules! style_target_op {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident : $ty:ty),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            #[serde(default)]
            pub sheet: String,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub cell: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub range: Option<String>,
            $($(#[$fdoc])* pub $field: $ty,)*
        }
    };
}

style_target_op!(
    /// `set_bold`: bold on (the default) or off for one cell or a range.
    SetBold {
        #[serde(default = "yes")]
        bold: bool,
    }
);
style_target_op!(
    /// `set_font_size`: font size (points, > 0).
    SetFontSize { font_size: f64 }
);
style_target_op!(
    /// `set_font_color`: font colour as `RRGGBB`/`AARRGGBB`, optionally with `#`.
    SetFontColor { color: String }
);
style_target_op!(
    /// `set_fill_color`: solid fill colour (`color` is accepted as an alias of `fill_color`).
    SetFillColor { fill_color: String }
);
style_target_op!(
    /// `set_alignment`: any of horizontal/vertical alignment and wrap text (aliases
    /// `horizontal`, `vertical`).
    SetAlignment {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        horizontal_align: Option<HorizontalAlign>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        vertical_align: Option<VerticalAlign>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        wrap_text: Option<bool>,
    }
);
style_target_op!(
    /// `set_style`: several style attributes in one op; at least one is required.
    SetStyle {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bold: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        font_size: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        color: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fill_color: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        horizontal_align: Option<HorizontalAlign>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        vertical_align: Option<VerticalAlign>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        wrap_text: Option<bool>,
    }
);

fn yes() -> bool {
    true
}

/// `set_dimensions`: row heights and/or column widths (aliases `row`, `col`, `height`,
/// `width`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetDimensions {
    #[serde(default)]
    pub sheet: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<Vec<u32>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub columns: Option<Vec<ColumnId>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_height: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column_width: Option<f64>,
}

/// `auto_fit_columns`: widths from the longest text of each column (East Asian wide
/// characters count two), clamped to `min_width`/`max_width`; every used column when
/// `columns` is left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AutoFitColumns {
    #[serde(default)]
    pub sheet: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub columns: Option<Vec<ColumnId>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_width: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_width: Option<f64>,
}

/// `merge_cells` / `unmerge_cells`: a multi-cell range to merge, or the range whose
/// intersecting merged ranges are unmerged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeRange {
    #[serde(default)]
    pub sheet: String,
    pub range: String,
}

/// `apply_table_style`: makes the range an Excel table (its first row the header) with a
/// table style such as `TableStyleMedium9`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyTableStyle {
    #[serde(default)]
    pub sheet: String,
    pub range: String,
    pub style: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_name: Option<String>,
}

impl ApplyTableStyle {
    pub(crate) fn validate(&self) -> Result<Area, String> {
        if self.style.trim().is_empty() {
            return Err("style/table_name must not be empty when provided.".to_string());
        }
        if let Some(name) = &self.table_name {
            if name.trim().is_empty() {
                return Err("style/table_name must not be empty when provided.".to_string());
            }
            check_table_name(name.trim())?;
        }
        strict_area(&self.range)
    }
}

/// `delete_table` (extension, the inverse of `apply_table_style`): removes a table saved in
/// the workbook, its part and its references; the cells keep their values and styles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteTable {
    #[serde(default)]
    pub sheet: String,
    pub table_name: String,
}

/// Excel's rules for a table name: a letter, `_` or `\` first, then letters, digits, `_` and
/// `.`; not a cell reference; at most 255 characters.
pub(crate) fn check_table_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '\\');
    let rest_ok = chars.all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    let looks_like_cell =
        CellRef::parse(name).is_some() || matches!(name.to_ascii_uppercase().as_str(), "R" | "C");
    if !first_ok || !rest_ok || looks_like_cell || name.chars().count() > 255 {
        return Err(format!(
            "table_name {name:?} is not a valid Excel table name (a letter or _ first, then \
             letters, digits, _ or .; not a cell reference)"
        ));
    }
    Ok(())
}

/// One cell's style index in `cellXfs` (0 is the workbook's default style).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CellStyleSnapshot {
    pub cell: String,
    pub style_id: u32,
}

/// The merged ranges that intersected `scope` before an op.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeStateSnapshot {
    pub scope: String,
    #[serde(default)]
    pub ranges: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RowDimensionSnapshot {
    pub row: u32,
    pub height: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ColumnDimensionSnapshot {
    pub column: String,
    pub width: Option<f64>,
}

/// What a design op changed, as it was before. ExStruct's snapshot lists font, fill, border
/// and alignment attributes; ours records each cell's style index instead (`cell_styles`),
/// because the original `xf` stays in `styles.xml` (styles are only ever appended) and pointing
/// the cell back at it restores every attribute exactly, theme colours included.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DesignSnapshot {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cell_styles: Vec<CellStyleSnapshot>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_state: Option<MergeStateSnapshot>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub row_dimensions: Vec<RowDimensionSnapshot>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub column_dimensions: Vec<ColumnDimensionSnapshot>,
}

/// `restore_design_snapshot`: the inverse op of the design ops.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestoreDesignSnapshot {
    #[serde(default)]
    pub sheet: String,
    pub design_snapshot: DesignSnapshot,
}

/// Field aliases per op, exactly ExStruct's (`alias → canonical`).
pub fn aliases(op: &str) -> &'static [(&'static str, &'static str)] {
    match op {
        "add_sheet" => &[("name", "sheet")],
        "copy_sheet" => &[
            ("source", "sheet"),
            ("name", "new_sheet"),
            ("target", "new_sheet"),
        ],
        "set_fill_color" => &[("color", "fill_color")],
        "set_dimensions" => &[
            ("row", "rows"),
            ("col", "columns"),
            ("height", "row_height"),
            ("width", "column_width"),
        ],
        "set_alignment" => &[
            ("horizontal", "horizontal_align"),
            ("vertical", "vertical_align"),
        ],
        _ => &[],
    }
}

/// Every field name some op takes: a field outside this list is unknown, one inside it that
/// this op does not take is "does not accept".
pub(crate) const KNOWN_FIELDS: &[&str] = &[
    "sheet",
    "cell",
    "range",
    "base_cell",
    "expected",
    "value",
    "values",
    "formula",
    "row_count",
    "col_count",
    "bold",
    "font_size",
    "color",
    "fill_color",
    "rows",
    "columns",
    "row_height",
    "column_width",
    "min_width",
    "max_width",
    "horizontal_align",
    "vertical_align",
    "wrap_text",
    "style",
    "table_name",
    "design_snapshot",
    "header_row",
    "key_column",
    "on_missing",
    "copy_style_from",
    "new_sheet",
    "position",
    "copy_of",
    "fill_columns",
    "extend_ranges",
];

/// Rewrites aliases to their canonical fields (refusing an alias that contradicts its
/// canonical field) and `draw_grid_border`'s `range` to `base_cell`/`row_count`/`col_count`.
pub(crate) fn normalise_aliases(
    op: &str,
    map: &mut serde_json::Map<String, serde_json::Value>,
) -> Result<(), String> {
    for (alias, canonical) in aliases(op) {
        let Some(value) = map.remove(*alias) else {
            continue;
        };
        match map.get(*canonical) {
            Some(existing) if *existing != value => {
                return Err(format!(
                    "conflicting fields: '{canonical}' and alias '{alias}'"
                ));
            }
            Some(_) => {}
            None => {
                map.insert((*canonical).to_string(), value);
            }
        }
    }
    if op == "draw_grid_border"
        && let Some(range) = map.remove("range").filter(|v| !v.is_null())
    {
        if ["base_cell", "row_count", "col_count"]
            .iter()
            .any(|k| map.get(*k).is_some_and(|v| !v.is_null()))
        {
            return Err("draw_grid_border does not allow mixing 'range' with \
                 'base_cell/row_count/col_count'"
                .to_string());
        }
        let area = range
            .as_str()
            .and_then(|t| strict_area(t).ok())
            .ok_or_else(|| "draw_grid_border range must be like 'A1:C3'".to_string())?;
        map.insert("base_cell".into(), area.first.to_a1().into());
        map.insert("row_count".into(), area.rows().into());
        map.insert("col_count".into(), area.cols().into());
    }
    Ok(())
}

/// A cell in ExStruct's strict form: letters then a row number (no `$`).
pub(crate) fn strict_cell(text: &str, field: &str) -> Result<CellRef, String> {
    let t = text.trim();
    let letters = t.bytes().take_while(u8::is_ascii_alphabetic).count();
    let digits = &t[letters..];
    if !(1..=3).contains(&letters)
        || digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || digits.starts_with('0')
    {
        return Err(format!("Invalid {field} reference: {text}"));
    }
    CellRef::parse(t).ok_or_else(|| format!("Invalid {field} reference: {text}"))
}

/// A range in ExStruct's strict form `A1:C3`.
pub(crate) fn strict_area(text: &str) -> Result<Area, String> {
    let bad = || format!("Invalid range reference: {text}");
    let (a, b) = text.trim().split_once(':').ok_or_else(bad)?;
    let a = strict_cell(a, "range").map_err(|_| bad())?;
    let b = strict_cell(b, "range").map_err(|_| bad())?;
    Ok(Area::spanning(a, b))
}

/// A colour as `RRGGBB`/`AARRGGBB` (optional `#`), returned as the ARGB text styles.xml
/// stores (`FF` alpha added to six digits).
pub(crate) fn argb(value: &str, field: &str) -> Result<String, String> {
    let t = value.trim().to_ascii_uppercase();
    let hex = t.strip_prefix('#').unwrap_or(&t);
    if !(hex.len() == 6 || hex.len() == 8) || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!(
            "Invalid {field} format. Use 'RRGGBB', 'AARRGGBB', '#RRGGBB', or '#AARRGGBB'."
        ));
    }
    Ok(if hex.len() == 6 {
        format!("FF{hex}")
    } else {
        hex.to_string()
    })
}

/// Exactly one of `cell` and `range`, parsed, within the styling cap.
pub(crate) fn style_target(
    op: &str,
    cell: Option<&str>,
    range: Option<&str>,
) -> Result<Area, String> {
    let area = match (cell, range) {
        (Some(c), None) => Area::cell(strict_cell(c, "cell")?),
        (None, Some(r)) => strict_area(r)?,
        _ => return Err(format!("{op} requires exactly one of cell or range.")),
    };
    if area.len() > MAX_STYLE_TARGET_CELLS {
        return Err(format!(
            "{op} target exceeds max cells: {MAX_STYLE_TARGET_CELLS}."
        ));
    }
    Ok(area)
}

fn positive(op: &str, field: &str, v: Option<f64>) -> Result<(), String> {
    match v {
        Some(x) if !(x.is_finite() && x > 0.0) => Err(format!("{op} {field} must be > 0.")),
        _ => Ok(()),
    }
}

fn columns_ok(columns: Option<&Vec<ColumnId>>) -> Result<(), String> {
    match columns {
        Some(c) if c.is_empty() => Err("columns must not be empty.".to_string()),
        Some(c) => c.iter().try_for_each(|c| c.number().map(|_| ())),
        None => Ok(()),
    }
}

impl DrawGridBorder {
    pub(crate) fn validate(&self) -> Result<Area, String> {
        let base = strict_cell(&self.base_cell, "base_cell")?;
        if self.row_count < 1 || self.col_count < 1 {
            return Err("draw_grid_border requires row_count >= 1 and col_count >= 1.".to_string());
        }
        if u64::from(self.row_count) * u64::from(self.col_count) > MAX_STYLE_TARGET_CELLS {
            return Err(format!(
                "draw_grid_border target exceeds max cells: {MAX_STYLE_TARGET_CELLS}."
            ));
        }
        let last = base
            .offset(i64::from(self.row_count) - 1, i64::from(self.col_count) - 1)
            .ok_or_else(|| "draw_grid_border target leaves the sheet.".to_string())?;
        Ok(Area::spanning(base, last))
    }
}

impl SetStyle {
    pub(crate) fn validate(&self) -> Result<Area, String> {
        let area = style_target("set_style", self.cell.as_deref(), self.range.as_deref())?;
        if self.bold.is_none()
            && self.font_size.is_none()
            && self.color.is_none()
            && self.fill_color.is_none()
            && self.horizontal_align.is_none()
            && self.vertical_align.is_none()
            && self.wrap_text.is_none()
        {
            return Err(
                "set_style requires at least one style field from: bold, font_size, \
                 color, fill_color, horizontal_align, vertical_align, wrap_text."
                    .to_string(),
            );
        }
        positive("set_style", "font_size", self.font_size)?;
        if let Some(c) = &self.color {
            argb(c, "color")?;
        }
        if let Some(c) = &self.fill_color {
            argb(c, "fill_color")?;
        }
        Ok(area)
    }
}

impl SetDimensions {
    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.rows.is_none() && self.columns.is_none() {
            return Err("set_dimensions requires rows and/or columns.".to_string());
        }
        if let Some(rows) = &self.rows {
            if rows.is_empty() {
                return Err("rows must not be empty.".to_string());
            }
            if rows.iter().any(|r| *r < 1 || *r > crate::a1::MAX_ROW) {
                return Err("rows must contain positive integers.".to_string());
            }
            if self.row_height.is_none() {
                return Err("set_dimensions requires row_height when rows is provided.".to_string());
            }
        }
        columns_ok(self.columns.as_ref())?;
        if self.columns.is_some() && self.column_width.is_none() {
            return Err(
                "set_dimensions requires column_width when columns is provided.".to_string(),
            );
        }
        positive("set_dimensions", "row_height", self.row_height)?;
        positive("set_dimensions", "column_width", self.column_width)?;
        if self.row_height.is_some_and(|h| h > 409.0) {
            return Err("set_dimensions row_height must be at most 409 (Excel's limit).".into());
        }
        if self.column_width.is_some_and(|w| w > 255.0) {
            return Err("set_dimensions column_width must be at most 255 (Excel's limit).".into());
        }
        Ok(())
    }
}

impl AutoFitColumns {
    pub(crate) fn validate(&self) -> Result<(), String> {
        columns_ok(self.columns.as_ref())?;
        for (name, v) in [("min_width", self.min_width), ("max_width", self.max_width)] {
            if v.is_some_and(|x| !(x.is_finite() && x > 0.0)) {
                return Err(format!(
                    "{name}: min_width/max_width/width/height must be > 0."
                ));
            }
        }
        if let (Some(a), Some(b)) = (self.min_width, self.max_width)
            && a > b
        {
            return Err("auto_fit_columns requires min_width <= max_width.".to_string());
        }
        Ok(())
    }
}

/// The columns an op names, as numbers.
pub(crate) fn column_numbers(columns: &[ColumnId]) -> Result<Vec<u32>, String> {
    columns.iter().map(ColumnId::number).collect()
}

/// A column number as its letters (for snapshots and diffs).
pub(crate) fn letters(col: u32) -> String {
    column_name(col)
}
