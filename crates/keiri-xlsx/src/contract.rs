//! The request and response types: the `exstruct_patch` tool contract, field for field.
//!
//! These types are the contract shared by the API, the CLI and the MCP server, so they derive
//! `schemars::JsonSchema` and keep the exact field names of the tool. Operations are read
//! leniently where old clients differ (an op may arrive as a JSON string holding the object;
//! irrelevant fields may be sent as `null`) and strictly everywhere else (unknown fields and
//! non-null fields that an op does not take are refused, so a typo cannot silently turn into a
//! different edit).

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use crate::design::{
    self, ApplyTableStyle, AutoFitColumns, DeleteTable, DrawGridBorder, MergeRange,
    RestoreDesignSnapshot, SetAlignment, SetBold, SetDimensions, SetFillColor, SetFontColor,
    SetFontSize, SetStyle,
};
use crate::row_ops::{AppendRows, CopySheet, UpdateRowsByKey};

mod op_kind;
pub use op_kind::OpKind;

/// A scalar a cell holds or a request gives: text, number, boolean, or a value with an explicit
/// kind (`{"kind": "date", "value": "2025-03-31"}`). `null` (an empty cell) is written as
/// `Option<CellValue>::None`.
///
/// Text that is exactly an ISO date (`"2025-03-31"`, a real calendar date) is written as an
/// Excel date, as Excel itself does with a date typed into a cell and as `excel.write_table`
/// does; `{"kind": "text", "value": "2025-03-31"}` keeps it text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum CellValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
    Typed(TypedValue),
}

/// A value whose kind is given, not guessed: `{"kind": "date" | "datetime" | "text", "value":
/// "..."}`. A date is `YYYY-MM-DD`; a datetime is `YYYY-MM-DDTHH:MM[:SS]` (or a plain date).
/// Both are written as Excel date serials in the workbook's date system (1900, or 1904 when the
/// workbook says so); a cell without a number format gets `yyyy/mm/dd` (datetime:
/// `yyyy/mm/dd hh:mm:ss`), a cell with one keeps it. `text` writes the string as text, even
/// when it looks like a date.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", content = "value", rename_all = "lowercase")]
pub enum TypedValue {
    Date(String),
    Datetime(String),
    Text(String),
}

impl CellValue {
    /// The number, for either numeric variant.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            CellValue::Int(i) => Some(*i as f64),
            CellValue::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// A number as the contract shows it: integral values within the exactly representable
    /// range as integers, everything else as a float.
    pub fn number(value: f64) -> CellValue {
        const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
        if value.fract() == 0.0 && value.abs() < EXACT {
            CellValue::Int(value as i64)
        } else {
            CellValue::Float(value)
        }
    }
}

/// What to do when the output file already exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnConflict {
    /// Replace it (atomically).
    Overwrite,
    /// Do not write; the response has an empty diff and a warning saying why.
    Skip,
    /// Write `{name}_1`, `{name}_2`, … — the first free name, reserved atomically.
    Rename,
}

impl OnConflict {
    /// Used when neither the request nor the configuration says: the design forbids silent
    /// overwrites, so an existing output is kept and the new one gets a free name.
    pub const FALLBACK: OnConflict = OnConflict::Rename;

    pub fn as_str(self) -> &'static str {
        match self {
            OnConflict::Overwrite => "overwrite",
            OnConflict::Skip => "skip",
            OnConflict::Rename => "rename",
        }
    }
}

/// The file system's rule for the same choice: every write by keiri-xlsx goes through
/// [`keiri_fs::save`] (or, to overwrite a workbook it read, its compare-and-swap lock).
impl From<OnConflict> for keiri_fs::Existing {
    fn from(c: OnConflict) -> Self {
        match c {
            OnConflict::Overwrite => keiri_fs::Existing::Overwrite,
            OnConflict::Skip => keiri_fs::Existing::Skip,
            OnConflict::Rename => keiri_fs::Existing::Rename,
        }
    }
}

impl std::str::FromStr for OnConflict {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "overwrite" => Ok(OnConflict::Overwrite),
            "skip" => Ok(OnConflict::Skip),
            "rename" => Ok(OnConflict::Rename),
            other => Err(format!(
                "unknown on_conflict {other:?} (expected overwrite, skip or rename)"
            )),
        }
    }
}

/// One operation. Serialised flat with an `op` tag, e.g.
/// `{"op":"set_value","sheet":"Sheet1","cell":"B2","value":42}`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum PatchOp {
    /// Sets a value; `null` clears the cell (its formatting stays).
    SetValue {
        sheet: String,
        cell: String,
        #[schemars(required, schema_with = "nullable_cell")]
        value: Option<CellValue>,
    },
    /// Sets a formula; it must start with `=`.
    SetFormula {
        sheet: String,
        cell: String,
        formula: String,
    },
    /// Appends a new, empty worksheet.
    AddSheet { sheet: String },
    /// Sets every cell of a range; `values` has exactly the range's rows and columns.
    SetRangeValues {
        sheet: String,
        range: String,
        values: Vec<Vec<Option<CellValue>>>,
    },
    /// Fills every cell of `range` (one row, one column or a rectangle) with the formula of
    /// `base_cell`, shifting relative row and column references like Excel's fill (`$`-anchored
    /// parts stay). `formula`, when given, is the formula as written for `base_cell`; without
    /// it the formula is read from `base_cell` in the workbook.
    FillFormula {
        sheet: String,
        range: String,
        base_cell: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        formula: Option<String>,
    },
    /// Like `set_value`, only when the cell currently holds `expected`.
    SetValueIf {
        sheet: String,
        cell: String,
        #[serde(default)]
        expected: Option<CellValue>,
        #[schemars(required, schema_with = "nullable_cell")]
        value: Option<CellValue>,
    },
    /// Like `set_formula`, only when the cell currently holds `expected`.
    SetFormulaIf {
        sheet: String,
        cell: String,
        #[serde(default)]
        expected: Option<CellValue>,
        formula: String,
    },
    /// Removes an empty worksheet that has no drawings, comments or other related parts. This
    /// extension of the tool contract exists so that `add_sheet` has an inverse. With
    /// `copy_of`, it removes a sheet that still holds exactly the cells of that sheet (the
    /// inverse of `copy_sheet`).
    DeleteSheet {
        sheet: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        copy_of: Option<String>,
    },
    /// Thin black borders on every cell of a rectangle.
    DrawGridBorder(DrawGridBorder),
    /// Bold on or off.
    SetBold(SetBold),
    /// Font size.
    SetFontSize(SetFontSize),
    /// Font colour.
    SetFontColor(SetFontColor),
    /// Solid fill colour.
    SetFillColor(SetFillColor),
    /// Row heights and column widths.
    SetDimensions(SetDimensions),
    /// Column widths from their text.
    AutoFitColumns(AutoFitColumns),
    /// Merges a range.
    MergeCells(MergeRange),
    /// Unmerges every merged range intersecting a range.
    UnmergeCells(MergeRange),
    /// Alignment and wrap text.
    SetAlignment(SetAlignment),
    /// Several style attributes at once.
    SetStyle(SetStyle),
    /// Makes a range an Excel table with a table style.
    ApplyTableStyle(ApplyTableStyle),
    /// Removes a table (extension: the inverse of `apply_table_style`).
    DeleteTable(DeleteTable),
    /// Restores what a design op changed (the inverse of the design ops).
    RestoreDesignSnapshot(RestoreDesignSnapshot),
    /// Finds each row by its key in `key_column` (below `header_row`) and writes the named
    /// columns: `rows` is `[{"<key column>": key, "<column>": value, ...}]`, columns by header
    /// text or letter. Keys and headers match ignoring case, full-width forms and extra spaces,
    /// as Excel's lookups do. A key in two rows, a key given twice or an unknown column is an
    /// error; a key no row has follows `on_missing` (`error`, `append`, `skip`). `fill_color`
    /// paints each row found (over `fill_columns`, default the header's columns).
    UpdateRowsByKey(UpdateRowsByKey),
    /// Adds `rows` (`[{"<column>": value, ...}]`) after the last row holding a value, filling a
    /// template's formula-only rows first; past them, each new row gets the styles and the
    /// shifted formulas of the row above. A last row that totals the rows above it is an error;
    /// formulas that sum a range ending at the old last row are named in a warning.
    AppendRows(AppendRows),
    /// Copies worksheet `sheet` (alias `source`) as `new_sheet` at tab `position`: cells,
    /// styles, merges, widths, heights, conditional formats, validations, page setup and its
    /// scoped defined names. Drawings, comments and tables are not copied (a warning names them).
    CopySheet(CopySheet),
}

impl PatchOp {
    pub fn kind(&self) -> OpKind {
        match self {
            PatchOp::SetValue { .. } => OpKind::SetValue,
            PatchOp::SetFormula { .. } => OpKind::SetFormula,
            PatchOp::AddSheet { .. } => OpKind::AddSheet,
            PatchOp::SetRangeValues { .. } => OpKind::SetRangeValues,
            PatchOp::FillFormula { .. } => OpKind::FillFormula,
            PatchOp::SetValueIf { .. } => OpKind::SetValueIf,
            PatchOp::SetFormulaIf { .. } => OpKind::SetFormulaIf,
            PatchOp::DeleteSheet { .. } => OpKind::DeleteSheet,
            PatchOp::DrawGridBorder(_) => OpKind::DrawGridBorder,
            PatchOp::SetBold(_) => OpKind::SetBold,
            PatchOp::SetFontSize(_) => OpKind::SetFontSize,
            PatchOp::SetFontColor(_) => OpKind::SetFontColor,
            PatchOp::SetFillColor(_) => OpKind::SetFillColor,
            PatchOp::SetDimensions(_) => OpKind::SetDimensions,
            PatchOp::AutoFitColumns(_) => OpKind::AutoFitColumns,
            PatchOp::MergeCells(_) => OpKind::MergeCells,
            PatchOp::UnmergeCells(_) => OpKind::UnmergeCells,
            PatchOp::SetAlignment(_) => OpKind::SetAlignment,
            PatchOp::SetStyle(_) => OpKind::SetStyle,
            PatchOp::ApplyTableStyle(_) => OpKind::ApplyTableStyle,
            PatchOp::DeleteTable(_) => OpKind::DeleteTable,
            PatchOp::RestoreDesignSnapshot(_) => OpKind::RestoreDesignSnapshot,
            PatchOp::UpdateRowsByKey(_) => OpKind::UpdateRowsByKey,
            PatchOp::AppendRows(_) => OpKind::AppendRows,
            PatchOp::CopySheet(_) => OpKind::CopySheet,
        }
    }

    pub fn sheet(&self) -> &str {
        match self {
            PatchOp::SetValue { sheet, .. }
            | PatchOp::SetFormula { sheet, .. }
            | PatchOp::AddSheet { sheet }
            | PatchOp::SetRangeValues { sheet, .. }
            | PatchOp::FillFormula { sheet, .. }
            | PatchOp::SetValueIf { sheet, .. }
            | PatchOp::SetFormulaIf { sheet, .. }
            | PatchOp::DeleteSheet { sheet, .. } => sheet,
            PatchOp::DrawGridBorder(o) => &o.sheet,
            PatchOp::SetBold(o) => &o.sheet,
            PatchOp::SetFontSize(o) => &o.sheet,
            PatchOp::SetFontColor(o) => &o.sheet,
            PatchOp::SetFillColor(o) => &o.sheet,
            PatchOp::SetDimensions(o) => &o.sheet,
            PatchOp::AutoFitColumns(o) => &o.sheet,
            PatchOp::MergeCells(o) | PatchOp::UnmergeCells(o) => &o.sheet,
            PatchOp::SetAlignment(o) => &o.sheet,
            PatchOp::SetStyle(o) => &o.sheet,
            PatchOp::ApplyTableStyle(o) => &o.sheet,
            PatchOp::DeleteTable(o) => &o.sheet,
            PatchOp::RestoreDesignSnapshot(o) => &o.sheet,
            PatchOp::UpdateRowsByKey(o) => &o.sheet,
            PatchOp::AppendRows(o) => &o.sheet,
            PatchOp::CopySheet(o) => &o.sheet,
        }
    }

    /// The sheet field, for filling in the request's top-level `sheet`.
    pub(crate) fn sheet_mut(&mut self) -> &mut String {
        match self {
            PatchOp::SetValue { sheet, .. }
            | PatchOp::SetFormula { sheet, .. }
            | PatchOp::AddSheet { sheet }
            | PatchOp::SetRangeValues { sheet, .. }
            | PatchOp::FillFormula { sheet, .. }
            | PatchOp::SetValueIf { sheet, .. }
            | PatchOp::SetFormulaIf { sheet, .. }
            | PatchOp::DeleteSheet { sheet, .. } => sheet,
            PatchOp::DrawGridBorder(o) => &mut o.sheet,
            PatchOp::SetBold(o) => &mut o.sheet,
            PatchOp::SetFontSize(o) => &mut o.sheet,
            PatchOp::SetFontColor(o) => &mut o.sheet,
            PatchOp::SetFillColor(o) => &mut o.sheet,
            PatchOp::SetDimensions(o) => &mut o.sheet,
            PatchOp::AutoFitColumns(o) => &mut o.sheet,
            PatchOp::MergeCells(o) | PatchOp::UnmergeCells(o) => &mut o.sheet,
            PatchOp::SetAlignment(o) => &mut o.sheet,
            PatchOp::SetStyle(o) => &mut o.sheet,
            PatchOp::ApplyTableStyle(o) => &mut o.sheet,
            PatchOp::DeleteTable(o) => &mut o.sheet,
            PatchOp::RestoreDesignSnapshot(o) => &mut o.sheet,
            PatchOp::UpdateRowsByKey(o) => &mut o.sheet,
            PatchOp::AppendRows(o) => &mut o.sheet,
            PatchOp::CopySheet(o) => &mut o.sheet,
        }
    }

    /// The single cell the op targets, if it targets one.
    pub fn cell(&self) -> Option<&str> {
        match self {
            PatchOp::SetValue { cell, .. }
            | PatchOp::SetFormula { cell, .. }
            | PatchOp::SetValueIf { cell, .. }
            | PatchOp::SetFormulaIf { cell, .. } => Some(cell),
            PatchOp::SetBold(o) => o.cell.as_deref(),
            PatchOp::SetFontSize(o) => o.cell.as_deref(),
            PatchOp::SetFontColor(o) => o.cell.as_deref(),
            PatchOp::SetFillColor(o) => o.cell.as_deref(),
            PatchOp::SetAlignment(o) => o.cell.as_deref(),
            PatchOp::SetStyle(o) => o.cell.as_deref(),
            PatchOp::DrawGridBorder(o) => Some(&o.base_cell),
            _ => None,
        }
    }

    /// The range the op targets, if it targets one.
    pub fn range(&self) -> Option<&str> {
        match self {
            PatchOp::SetRangeValues { range, .. } | PatchOp::FillFormula { range, .. } => {
                Some(range)
            }
            PatchOp::SetBold(o) => o.range.as_deref(),
            PatchOp::SetFontSize(o) => o.range.as_deref(),
            PatchOp::SetFontColor(o) => o.range.as_deref(),
            PatchOp::SetFillColor(o) => o.range.as_deref(),
            PatchOp::SetAlignment(o) => o.range.as_deref(),
            PatchOp::SetStyle(o) => o.range.as_deref(),
            PatchOp::MergeCells(o) | PatchOp::UnmergeCells(o) => Some(&o.range),
            PatchOp::ApplyTableStyle(o) => Some(&o.range),
            _ => None,
        }
    }

    /// Checks a design op's references, colours and bounds the way ExStruct's models do (the
    /// value ops are checked when the request is planned). `Err` is the reason.
    pub fn validate(&self) -> Result<(), String> {
        use design::{argb, strict_area, style_target};
        let target = |op: OpKind, cell: &Option<String>, range: &Option<String>| {
            style_target(op.as_str(), cell.as_deref(), range.as_deref()).map(|_| ())
        };
        match self {
            PatchOp::DrawGridBorder(o) => o.validate().map(|_| ()),
            PatchOp::SetBold(o) => target(self.kind(), &o.cell, &o.range),
            PatchOp::SetFontSize(o) => {
                target(self.kind(), &o.cell, &o.range)?;
                if !(o.font_size.is_finite() && o.font_size > 0.0) {
                    return Err("set_font_size font_size must be > 0.".to_string());
                }
                Ok(())
            }
            PatchOp::SetFontColor(o) => {
                target(self.kind(), &o.cell, &o.range)?;
                argb(&o.color, "color").map(|_| ())
            }
            PatchOp::SetFillColor(o) => {
                target(self.kind(), &o.cell, &o.range)?;
                argb(&o.fill_color, "fill_color").map(|_| ())
            }
            PatchOp::SetAlignment(o) => {
                target(self.kind(), &o.cell, &o.range)?;
                if o.horizontal_align.is_none()
                    && o.vertical_align.is_none()
                    && o.wrap_text.is_none()
                {
                    return Err("set_alignment requires at least one of horizontal_align, \
                         vertical_align, or wrap_text."
                        .to_string());
                }
                Ok(())
            }
            PatchOp::SetStyle(o) => o.validate().map(|_| ()),
            PatchOp::SetDimensions(o) => o.validate(),
            PatchOp::AutoFitColumns(o) => o.validate(),
            PatchOp::MergeCells(o) => {
                let area = strict_area(&o.range)?;
                if area.is_single_cell() {
                    return Err("merge_cells requires a multi-cell range.".to_string());
                }
                Ok(())
            }
            PatchOp::UnmergeCells(o) => strict_area(&o.range).map(|_| ()),
            PatchOp::ApplyTableStyle(o) => o.validate().map(|_| ()),
            PatchOp::DeleteTable(o) => design::check_table_name(o.table_name.trim()),
            PatchOp::RestoreDesignSnapshot(o) => {
                for c in &o.design_snapshot.cell_styles {
                    design::strict_cell(&c.cell, "cell")?;
                }
                if let Some(m) = &o.design_snapshot.merge_state {
                    strict_area(&m.scope)?;
                    for r in &m.ranges {
                        crate::a1::Area::parse(r)
                            .ok_or_else(|| format!("Invalid range reference: {r}"))?;
                    }
                }
                for c in &o.design_snapshot.column_dimensions {
                    design::ColumnId::Letters(c.column.clone()).number()?;
                }
                Ok(())
            }
            PatchOp::UpdateRowsByKey(o) => o.validate(),
            PatchOp::AppendRows(o) => o.validate(),
            PatchOp::CopySheet(o) => o.validate(),
            _ => Ok(()),
        }
    }

    /// Reads one op from JSON: an object, or a string holding the object (some MCP clients
    /// send ops that way).
    pub fn from_json(value: serde_json::Value) -> Result<PatchOp, String> {
        let value = match value {
            serde_json::Value::String(text) => serde_json::from_str::<serde_json::Value>(&text)
                .map_err(|e| {
                    format!(
                        "op is a string that is not valid JSON ({e}); send an object such as \
                         {{\"op\":\"set_value\",\"sheet\":\"Sheet1\",\"cell\":\"A1\",\"value\":1}}"
                    )
                })?,
            other => other,
        };
        let serde_json::Value::Object(mut map) = value else {
            return Err("op must be a JSON object".to_string());
        };
        let name = match map.remove("op") {
            Some(serde_json::Value::String(s)) => s,
            Some(_) => return Err("`op` must be a string".to_string()),
            None => return Err("missing field `op`".to_string()),
        };
        let kind = OpKind::parse(&name).ok_or_else(|| {
            let names: Vec<&str> = OpKind::ALL.iter().map(|k| k.as_str()).collect();
            format!("unknown op {name:?} (expected one of {})", names.join(", "))
        })?;
        design::normalise_aliases(&name, &mut map)?;
        if let Some(other) = map
            .keys()
            .find(|k| !design::KNOWN_FIELDS.contains(&k.as_str()))
        {
            return Err(format!("unknown field `{other}`"));
        }
        if kind.is_struct() {
            return struct_op(kind, map);
        }
        let mut fields = OpFields::default();
        for (key, v) in map {
            match key.as_str() {
                "sheet" => fields.sheet = Some(v),
                "cell" => fields.cell = Some(v),
                "range" => fields.range = Some(v),
                "base_cell" => fields.base_cell = Some(v),
                "expected" => fields.expected = Some(v),
                "value" => fields.value = Some(v),
                "values" => fields.values = Some(v),
                "formula" => fields.formula = Some(v),
                "copy_of" => fields.copy_of = Some(v),
                other if v.is_null() => {
                    let _ = other;
                }
                other => return Err(format!("{name} does not accept {other}")),
            }
        }
        fields.build(kind)
    }
}

/// Reads a design or row op: `null` fields count as absent (as in ExStruct), fields of other
/// ops are refused by name, and the op's own struct does the typing.
fn struct_op(
    kind: OpKind,
    mut map: serde_json::Map<String, serde_json::Value>,
) -> Result<PatchOp, String> {
    let op = kind.as_str();
    map.retain(|_, v| !v.is_null());
    let takes = kind.fields();
    if let Some(other) = map.keys().find(|k| !takes.contains(&k.as_str())) {
        return Err(format!("{op} does not accept {other}"));
    }
    let value = serde_json::Value::Object(map);
    fn read<T: serde::de::DeserializeOwned>(op: &str, v: serde_json::Value) -> Result<T, String> {
        serde_json::from_value(v).map_err(|e| format!("{op}: {e}"))
    }
    let parsed = match kind {
        OpKind::DrawGridBorder => PatchOp::DrawGridBorder(read(op, value)?),
        OpKind::SetBold => PatchOp::SetBold(read(op, value)?),
        OpKind::SetFontSize => PatchOp::SetFontSize(read(op, value)?),
        OpKind::SetFontColor => PatchOp::SetFontColor(read(op, value)?),
        OpKind::SetFillColor => PatchOp::SetFillColor(read(op, value)?),
        OpKind::SetDimensions => PatchOp::SetDimensions(read(op, value)?),
        OpKind::AutoFitColumns => PatchOp::AutoFitColumns(read(op, value)?),
        OpKind::MergeCells => PatchOp::MergeCells(read(op, value)?),
        OpKind::UnmergeCells => PatchOp::UnmergeCells(read(op, value)?),
        OpKind::SetAlignment => PatchOp::SetAlignment(read(op, value)?),
        OpKind::SetStyle => PatchOp::SetStyle(read(op, value)?),
        OpKind::ApplyTableStyle => PatchOp::ApplyTableStyle(read(op, value)?),
        OpKind::DeleteTable => PatchOp::DeleteTable(read(op, value)?),
        OpKind::RestoreDesignSnapshot => PatchOp::RestoreDesignSnapshot(read(op, value)?),
        OpKind::UpdateRowsByKey => PatchOp::UpdateRowsByKey(read(op, value)?),
        OpKind::AppendRows => PatchOp::AppendRows(read(op, value)?),
        OpKind::CopySheet => PatchOp::CopySheet(read(op, value)?),
        _ => return Err(format!("{op} is not read by its own struct")),
    };
    parsed.validate()?;
    Ok(parsed)
}

/// The raw fields of an op, before we know which ones the op takes.
#[derive(Default)]
struct OpFields {
    sheet: Option<serde_json::Value>,
    cell: Option<serde_json::Value>,
    range: Option<serde_json::Value>,
    base_cell: Option<serde_json::Value>,
    expected: Option<serde_json::Value>,
    value: Option<serde_json::Value>,
    values: Option<serde_json::Value>,
    formula: Option<serde_json::Value>,
    copy_of: Option<serde_json::Value>,
}

impl OpFields {
    fn build(mut self, kind: OpKind) -> Result<PatchOp, String> {
        let op = kind.as_str();
        // A missing sheet is filled from the request's top-level `sheet` (see
        // `PatchRequest::with_default_sheet`); add_sheet needs its own.
        let sheet = match self.sheet.take() {
            None | Some(serde_json::Value::Null) if kind != OpKind::AddSheet => String::new(),
            other => {
                self.sheet = other;
                take_string(&mut self.sheet, op, "sheet")?
            }
        };
        let op = match kind {
            OpKind::SetValue => PatchOp::SetValue {
                sheet,
                cell: take_string(&mut self.cell, op, "cell")?,
                value: take_value(&mut self.value, op, "value", true)?,
            },
            OpKind::SetFormula => PatchOp::SetFormula {
                sheet,
                cell: take_string(&mut self.cell, op, "cell")?,
                formula: take_string(&mut self.formula, op, "formula")?,
            },
            OpKind::AddSheet => PatchOp::AddSheet { sheet },
            OpKind::DeleteSheet => PatchOp::DeleteSheet {
                sheet,
                copy_of: match self.copy_of.take() {
                    None | Some(serde_json::Value::Null) => None,
                    other => {
                        self.copy_of = other;
                        Some(take_string(&mut self.copy_of, op, "copy_of")?)
                    }
                },
            },
            OpKind::SetRangeValues => {
                let range = take_string(&mut self.range, op, "range")?;
                let raw = self.values.take().filter(|v| !v.is_null());
                let raw = raw.ok_or_else(|| format!("{op} requires values"))?;
                let values: Vec<Vec<Option<CellValue>>> =
                    serde_json::from_value(raw).map_err(|e| {
                        format!(
                            "{op}: values must be rows of text, numbers, booleans, null or \
                             {{\"kind\": \"date\", \"value\": \"YYYY-MM-DD\"}} ({e})"
                        )
                    })?;
                PatchOp::SetRangeValues {
                    sheet,
                    range,
                    values,
                }
            }
            OpKind::FillFormula => PatchOp::FillFormula {
                sheet,
                range: take_string(&mut self.range, op, "range")?,
                base_cell: take_string(&mut self.base_cell, op, "base_cell")?,
                formula: match self.formula.take() {
                    None | Some(serde_json::Value::Null) => None,
                    other => {
                        self.formula = other;
                        Some(take_string(&mut self.formula, op, "formula")?)
                    }
                },
            },
            OpKind::SetValueIf => PatchOp::SetValueIf {
                sheet,
                cell: take_string(&mut self.cell, op, "cell")?,
                expected: take_value(&mut self.expected, op, "expected", false)?,
                value: take_value(&mut self.value, op, "value", true)?,
            },
            OpKind::SetFormulaIf => PatchOp::SetFormulaIf {
                sheet,
                cell: take_string(&mut self.cell, op, "cell")?,
                expected: take_value(&mut self.expected, op, "expected", false)?,
                formula: take_string(&mut self.formula, op, "formula")?,
            },
            _ => return Err(format!("{op} is not a value op")),
        };
        // Whatever is left was not taken by this op: harmless as null, refused otherwise.
        for (name, left) in [
            ("cell", &self.cell),
            ("range", &self.range),
            ("base_cell", &self.base_cell),
            ("expected", &self.expected),
            ("value", &self.value),
            ("values", &self.values),
            ("formula", &self.formula),
            ("copy_of", &self.copy_of),
        ] {
            if left.as_ref().is_some_and(|v| !v.is_null()) {
                return Err(format!("{} does not accept {name}", kind.as_str()));
            }
        }
        Ok(op)
    }
}

fn take_string(
    slot: &mut Option<serde_json::Value>,
    op: &str,
    field: &str,
) -> Result<String, String> {
    match slot.take() {
        Some(serde_json::Value::String(s)) => Ok(s),
        None | Some(serde_json::Value::Null) => Err(format!("{op} requires {field}")),
        Some(_) => Err(format!("{op}: {field} must be a string")),
    }
}

/// Reads a scalar field. `required` fields must be present (`null` is a value: it clears);
/// optional ones default to `null`.
fn take_value(
    slot: &mut Option<serde_json::Value>,
    op: &str,
    field: &str,
    required: bool,
) -> Result<Option<CellValue>, String> {
    match slot.take() {
        None if required => Err(format!(
            "{op} requires {field} (use null to clear the cell)"
        )),
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(v) => serde_json::from_value::<CellValue>(v)
            .map(Some)
            .map_err(|_| {
                format!(
                    "{op}: {field} must be text, a number, a boolean, null or {{\"kind\": \
                     \"date\" | \"datetime\" | \"text\", \"value\": \"...\"}}"
                )
            }),
    }
}

impl<'de> Deserialize<'de> for PatchOp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        PatchOp::from_json(value).map_err(serde::de::Error::custom)
    }
}

/// Reads `ops` one element at a time, so a large request never holds all its ops twice.
pub(crate) fn deserialize_ops<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<PatchOp>, D::Error> {
    struct Ops;
    impl<'de> serde::de::Visitor<'de> for Ops {
        type Value = Vec<PatchOp>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a list of ops")
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Vec<PatchOp>, A::Error> {
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
            while let Some(value) = seq.next_element::<serde_json::Value>()? {
                let op = PatchOp::from_json(value)
                    .map_err(|e| serde::de::Error::custom(format!("ops[{}]: {e}", out.len())))?;
                out.push(op);
            }
            Ok(out)
        }
    }
    deserializer.deserialize_seq(Ops)
}

/// A patch request (`exstruct_patch` input).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchRequest {
    /// The workbook (.xlsx or .xlsm), absolute or relative to the workspace.
    pub xlsx_path: String,
    /// The sheet of every op that names none (`add_sheet` always names its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sheet: Option<String>,
    /// Operations, applied in order.
    #[serde(deserialize_with = "deserialize_ops")]
    #[schemars(with = "Vec<PatchOp>")]
    pub ops: Vec<PatchOp>,
    /// Where to save; the workbook's own directory by default. Created if missing.
    #[serde(default)]
    pub out_dir: Option<String>,
    /// File name to save as; `{stem}_patched{suffix}` by default.
    #[serde(default)]
    pub out_name: Option<String>,
    /// What to do when the output exists; the configured default when left out.
    #[serde(default)]
    pub on_conflict: Option<OnConflict>,
    /// Treat `set_value` strings starting with `=` as formulas instead of refusing them.
    #[serde(default)]
    pub auto_formula: bool,
    /// Compute everything but write nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// Return the operations that undo this patch.
    #[serde(default)]
    pub return_inverse_ops: bool,
    /// Evaluate the patched workbook and report formula errors; errors block the save.
    #[serde(default)]
    pub preflight_formula_check: bool,
}

impl PatchRequest {
    /// A request with the given path and ops and every option at its default.
    pub fn new(xlsx_path: impl Into<String>, ops: Vec<PatchOp>) -> PatchRequest {
        PatchRequest {
            xlsx_path: xlsx_path.into(),
            sheet: None,
            ops,
            out_dir: None,
            out_name: None,
            on_conflict: None,
            auto_formula: false,
            dry_run: false,
            return_inverse_ops: false,
            preflight_formula_check: false,
        }
    }

    /// The request with the top-level `sheet` given to every op that names none; `Err` (with
    /// ExStruct's wording) when an op still has no sheet.
    pub fn with_default_sheet(&self) -> Result<std::borrow::Cow<'_, PatchRequest>, String> {
        let default = self
            .sheet
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty());
        // Only an absent sheet is filled in; a blank one is refused later as empty, as ExStruct
        // does.
        let missing = |op: &PatchOp| op.sheet().is_empty();
        if !self.ops.iter().any(missing) {
            return Ok(std::borrow::Cow::Borrowed(self));
        }
        let mut out = self.clone();
        for (index, op) in out.ops.iter_mut().enumerate() {
            if !missing(op) {
                continue;
            }
            match default {
                Some(sheet) if op.kind() != OpKind::AddSheet => *op.sheet_mut() = sheet.to_string(),
                _ => {
                    return Err(format!(
                        "ops[{index}] ({}) is missing sheet. Set op.sheet, or set top-level sheet \
                         for non-add_sheet ops. For add_sheet, op.sheet (or alias name) is required.",
                        op.kind().as_str()
                    ));
                }
            }
        }
        Ok(std::borrow::Cow::Owned(out))
    }
}

/// What a diff value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ValueKind {
    Value,
    Formula,
    Sheet,
    /// A style change, described as text (`bold=true`, `fill=#FFFF00`, `merged=A1:C1`, …).
    Style,
    /// A row height or column width change.
    Dimension,
    /// A date written as an Excel date; `value` is its ISO text (`2025-03-31`).
    Date,
    /// A date and time written as an Excel date; `value` is its ISO text.
    Datetime,
}

/// A before or after state in the diff: a value, a formula (`"=SUM(A1:A3)"`) or a sheet name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PatchValue {
    pub kind: ValueKind,
    pub value: Option<CellValue>,
}

/// Whether an op changed the cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DiffStatus {
    Applied,
    Skipped,
}

/// One changed (or skipped) cell or sheet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PatchDiffItem {
    pub op: OpKind,
    pub op_index: usize,
    pub sheet: String,
    pub cell: Option<String>,
    pub before: Option<PatchValue>,
    pub after: Option<PatchValue>,
    pub status: DiffStatus,
    /// For a formula written: what it comes to in the patched workbook (the number a person
    /// will see in Excel), computed by the formula check's engine; absent when the engine could
    /// not evaluate it (or it evaluates to an error, which `formula_issues` reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub computed: Option<CellValue>,
}

/// Why the patch was not applied: the failing op (or, for a formula check failure, the op that
/// wrote the cell; `-1` when no op wrote it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PatchErrorDetail {
    pub op_index: i64,
    pub op: OpKind,
    pub sheet: String,
    pub cell: Option<String>,
    pub message: String,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum IssueLevel {
    Warning,
    Error,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum IssueCode {
    InvalidToken,
    RefError,
    NameError,
    Div0Error,
    ValueError,
    NaError,
    CircularRefSuspected,
}

/// A formula problem found by evaluating the patched workbook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FormulaIssue {
    pub sheet: String,
    pub cell: String,
    pub level: IssueLevel,
    pub code: IssueCode,
    pub message: String,
}

/// A patch response (`exstruct_patch` output).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PatchResponse {
    /// Where the workbook was (or, for a dry run or a skip, would be) saved.
    pub out_path: String,
    pub patch_diff: Vec<PatchDiffItem>,
    pub warnings: Vec<String>,
    pub error: Option<PatchErrorDetail>,
    #[serde(default)]
    pub inverse_ops: Vec<PatchOp>,
    #[serde(default)]
    pub formula_issues: Vec<FormulaIssue>,
}

/// What a patch did with its output file. In process only: on the wire a response says the
/// same with `out_path`, `error` and `warnings`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchOutcome {
    /// The patched workbook was saved to `out_path`.
    Written,
    /// The output file existed, or appeared while the patch ran, and `on_conflict` is `skip`:
    /// nothing was written (a dry run answers the same).
    Skipped,
    /// A dry run: nothing was written; the response is what a run would do.
    DryRun,
    /// An op or the formula check failed (`error` says which): nothing was written.
    Failed,
}

/// A patch's response, and what it did with the file ([`crate::apply`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Patched {
    pub outcome: PatchOutcome,
    pub response: PatchResponse,
}

/// The schema of a cell value that may be `null` (clears the cell). `#[schemars(required)]`
/// on an `Option` alone would drop the null branch, and inverse ops carry null.
fn nullable_cell(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"anyOf": [g.subschema_for::<CellValue>(), {"type": "null"}]})
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(input: serde_json::Value, expect: Result<serde_json::Value, &str>) {
        let got = PatchOp::from_json(input.clone());
        match (got, expect) {
            (Ok(op), Ok(want)) => assert_eq!(serde_json::to_value(&op).unwrap(), want, "{input}"),
            (Err(e), Err(want)) => assert!(e.contains(want), "{input}: {e:?} lacks {want:?}"),
            (got, want) => panic!("{input}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn ops_parse_strictly_and_serialise_flat() {
        check(
            json!({"op":"set_value","sheet":"S","cell":"A1","value":1}),
            Ok(json!({"op":"set_value","sheet":"S","cell":"A1","value":1})),
        );
        check(
            json!({"op":"set_value","sheet":"S","cell":"A1","value":null,"formula":null,"range":null}),
            Ok(json!({"op":"set_value","sheet":"S","cell":"A1","value":null})),
        );
        check(
            json!({"op":"set_value","sheet":"S","cell":"A1"}),
            Err("requires value"),
        );
        check(
            json!({"op":"set_value","sheet":"S","cell":"A1","value":1,"formula":"=1"}),
            Err("does not accept formula"),
        );
        check(
            json!({"op":"add_sheet","sheet":"新規"}),
            Ok(json!({"op":"add_sheet","sheet":"新規"})),
        );
        check(
            json!({"op":"add_sheet","sheet":"S","cell":"A1"}),
            Err("add_sheet does not accept cell"),
        );
        check(json!({"op":"rename_sheet","sheet":"S"}), Err("unknown op"));
        check(
            json!({"op":"set_value","sheet":"S","cell":"A1","value":1,"colour":"red"}),
            Err("unknown field `colour`"),
        );
        check(
            json!({"op":"set_value","sheet":"S","cell":"A1","value":[1]}),
            Err("value must be"),
        );
        check(
            json!("{\"op\":\"set_formula\",\"sheet\":\"S\",\"cell\":\"B1\",\"formula\":\"=A1\"}"),
            Ok(json!({"op":"set_formula","sheet":"S","cell":"B1","formula":"=A1"})),
        );
        check(json!("{not json"), Err("not valid JSON"));
        check(json!([1]), Err("must be a JSON object"));
        check(
            json!({"op":"set_value_if","sheet":"S","cell":"A1","value":2.5}),
            Ok(json!({"op":"set_value_if","sheet":"S","cell":"A1","expected":null,"value":2.5})),
        );
        check(
            json!({"op":"set_range_values","sheet":"S","range":"A1:B1","values":[[1,"x"]]}),
            Ok(json!({"op":"set_range_values","sheet":"S","range":"A1:B1","values":[[1,"x"]]})),
        );
        check(
            json!({"op":"set_range_values","sheet":"S","range":"A1:B1","values":[[{}]]}),
            Err("values must be rows"),
        );
    }

    #[test]
    fn request_reports_the_failing_op_index() {
        let body =
            json!({"xlsx_path":"a.xlsx","ops":[{"op":"add_sheet","sheet":"x"},{"op":"nope"}]});
        let err = serde_json::from_value::<PatchRequest>(body)
            .unwrap_err()
            .to_string();
        assert!(err.contains("ops[1]"), "{err}");
        let body = json!({"xlsx_path":"a.xlsx","ops":[],"on_conflict":"rename","dry_run":true});
        let req: PatchRequest = serde_json::from_value(body).unwrap();
        assert_eq!(req.on_conflict, Some(OnConflict::Rename));
        assert!(req.dry_run && !req.auto_formula);
    }

    #[test]
    fn schemas_describe_the_contract() {
        let req = serde_json::to_value(schemars::schema_for!(PatchRequest)).unwrap();
        let text = req.to_string();
        for field in [
            "xlsx_path",
            "ops",
            "on_conflict",
            "preflight_formula_check",
            "set_range_values",
            "base_cell",
        ] {
            assert!(text.contains(field), "request schema lacks {field}");
        }
        assert_eq!(req["required"], json!(["xlsx_path", "ops"]));
        let res = serde_json::to_value(schemars::schema_for!(PatchResponse))
            .unwrap()
            .to_string();
        for field in [
            "patch_diff",
            "inverse_ops",
            "formula_issues",
            "circular_ref_suspected",
            "op_index",
        ] {
            assert!(res.contains(field), "response schema lacks {field}");
        }
    }

    #[test]
    fn numbers_show_as_integers_when_exact() {
        assert_eq!(CellValue::number(3.0), CellValue::Int(3));
        assert_eq!(CellValue::number(-0.5), CellValue::Float(-0.5));
        assert_eq!(CellValue::number(1e300), CellValue::Float(1e300));
    }
}
