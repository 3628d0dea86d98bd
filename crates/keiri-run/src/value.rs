//! Values that flow between nodes.
//!
//! A node output is JSON or a table. Blocks convert on demand: a table block that gets JSON
//! rows builds a table ([`rows_to_table`]); a JSON consumer that gets a table reads its rows
//! ([`table_to_rows`]). Two table blocks in a row never go through JSON.

use polars::prelude::{Column, DataFrame, DataType};

use crate::block::{BlockError, ErrorCode};

/// A node output or a resolved node input.
#[derive(Debug, Clone)]
pub enum Value {
    /// Anything that is not a table: scalars, objects, lists, null.
    Json(serde_json::Value),
    /// A table. Blocks that take `rows` accept either form; see [`crate::block::Inputs`].
    Table(DataFrame),
}

impl From<serde_json::Value> for Value {
    fn from(v: serde_json::Value) -> Value {
        Value::Json(v)
    }
}

impl From<DataFrame> for Value {
    fn from(df: DataFrame) -> Value {
        Value::Table(df)
    }
}

impl From<Vec<Row>> for Value {
    fn from(rows: Vec<Row>) -> Value {
        Value::Json(serde_json::Value::Array(
            rows.into_iter().map(serde_json::Value::Object).collect(),
        ))
    }
}

/// One table row as JSON (column name → cell), the row form of a table.
pub type Row = serde_json::Map<String, serde_json::Value>;

/// The columns of JSON rows: every key of every row, in first-appearance order (rows from a
/// file may differ in their keys, and an error naming "the columns" must name them all).
pub fn columns_of(rows: &[Row]) -> Vec<String> {
    let mut seen = indexmap::IndexSet::new();
    for row in rows {
        for key in row.keys() {
            if !seen.contains(key.as_str()) {
                seen.insert(key.clone());
            }
        }
    }
    seen.into_iter().collect()
}

/// `COLUMN_NOT_FOUND` naming every column the rows have when no row of `rows` has one of
/// `names` (a column the plan names that the file lacks); rows that are none lack nothing.
pub fn require_columns<'a>(
    rows: &[Row],
    names: impl IntoIterator<Item = &'a str>,
) -> Result<(), BlockError> {
    if rows.is_empty() {
        return Ok(());
    }
    for name in names {
        if rows.iter().all(|r| !r.contains_key(name)) {
            return Err(BlockError::missing_column(name, &columns_of(rows)));
        }
    }
    Ok(())
}

impl Value {
    /// The value as rows: a table's rows, or a JSON array whose items are all objects.
    pub fn to_rows(&self) -> Result<Vec<Row>, BlockError> {
        match self {
            Value::Table(df) => table_to_rows(df),
            Value::Json(serde_json::Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    serde_json::Value::Object(map) => Ok(map.clone()),
                    other => Err(not_rows(&format!("item {i} is {}", json_type(other)))),
                })
                .collect(),
            Value::Json(other) => Err(not_rows(&format!("got {}", json_type(other)))),
        }
    }

    /// The value as a table (a JSON array of objects becomes one; see [`rows_to_table`]).
    pub fn to_table(&self) -> Result<DataFrame, BlockError> {
        match self {
            Value::Table(df) => Ok(df.clone()),
            Value::Json(_) => rows_to_table(&self.to_rows()?),
        }
    }

    /// The value as JSON (a table becomes an array of row objects).
    ///
    /// A table cell that cannot be represented becomes its display text, so this never fails.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Json(v) => v.clone(),
            Value::Table(df) => match table_to_rows(df) {
                Ok(rows) => serde_json::Value::Array(
                    rows.into_iter().map(serde_json::Value::Object).collect(),
                ),
                Err(e) => serde_json::Value::String(e.message_en),
            },
        }
    }

    /// Whether the value is JSON null (an absent optional input).
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Json(serde_json::Value::Null))
    }
}

fn not_rows(detail: &str) -> BlockError {
    BlockError::new(
        ErrorCode::InputInvalid,
        format!("行データ（オブジェクトの配列）ではありません（{detail}）"),
        format!("expected rows (an array of objects), {detail}"),
    )
}

pub(crate) fn json_type(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// The JSON type all non-null cells of one key share, if they share one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bool,
    Int,
    Float,
    Str,
    Mixed,
}

fn kind_of(v: &serde_json::Value) -> Option<Kind> {
    match v {
        serde_json::Value::Null => None,
        serde_json::Value::Bool(_) => Some(Kind::Bool),
        serde_json::Value::Number(n) if n.is_i64() => Some(Kind::Int),
        serde_json::Value::Number(_) => Some(Kind::Float),
        serde_json::Value::String(_) => Some(Kind::Str),
        serde_json::Value::Array(_) | serde_json::Value::Object(_) => Some(Kind::Mixed),
    }
}

fn merge(a: Option<Kind>, b: Option<Kind>) -> Option<Kind> {
    match (a, b) {
        (None, k) | (k, None) => k,
        (Some(x), Some(y)) if x == y => Some(x),
        // Integers and floats together are numbers; anything else mixed becomes text.
        (Some(Kind::Int), Some(Kind::Float)) | (Some(Kind::Float), Some(Kind::Int)) => {
            Some(Kind::Float)
        }
        _ => Some(Kind::Mixed),
    }
}

/// The text of a cell in a text column (strings as they are, other JSON as JSON text).
fn cell_text(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::Null => None,
        serde_json::Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// Rows → table: one column per key in first-appearance order. A column is typed (boolean,
/// integer, float, string) when all its non-null values share a JSON type, text otherwise;
/// a missing key is null. A column with no value at all is a null string column.
pub fn rows_to_table(rows: &[Row]) -> Result<DataFrame, BlockError> {
    let mut keys: indexmap::IndexMap<&str, Option<Kind>> = indexmap::IndexMap::new();
    for row in rows {
        for (k, v) in row {
            let kind = kind_of(v);
            let entry = keys.entry(k.as_str()).or_insert(None);
            *entry = merge(*entry, kind);
        }
    }
    let columns: Vec<Column> = keys
        .iter()
        .map(|(&key, kind)| {
            let cells = rows
                .iter()
                .map(|r| r.get(key).unwrap_or(&serde_json::Value::Null));
            typed_column(key, *kind, cells)
        })
        .collect();
    DataFrame::new(rows.len(), columns).map_err(|e| table_error(&e))
}

fn typed_column<'a>(
    name: &str,
    kind: Option<Kind>,
    cells: impl Iterator<Item = &'a serde_json::Value>,
) -> Column {
    match kind {
        Some(Kind::Bool) => {
            Column::new(name.into(), cells.map(|v| v.as_bool()).collect::<Vec<_>>())
        }
        Some(Kind::Int) => Column::new(name.into(), cells.map(|v| v.as_i64()).collect::<Vec<_>>()),
        Some(Kind::Float) => {
            Column::new(name.into(), cells.map(|v| v.as_f64()).collect::<Vec<_>>())
        }
        Some(Kind::Str) | Some(Kind::Mixed) | None => {
            Column::new(name.into(), cells.map(cell_text).collect::<Vec<_>>())
        }
    }
}

/// One column from JSON cells, typed by the same rule as [`rows_to_table`].
pub(crate) fn json_column(name: &str, cells: &[serde_json::Value]) -> Column {
    let kind = cells.iter().fold(None, |acc, v| merge(acc, kind_of(v)));
    typed_column(name, kind, cells.iter())
}

pub(crate) fn table_error(e: &polars::prelude::PolarsError) -> BlockError {
    BlockError::new(
        ErrorCode::BlockFailed,
        format!("表の処理に失敗しました: {e}"),
        format!("table operation failed: {e}"),
    )
}

/// What a column's cells are as JSON, by its type: one list shared by [`column_to_json`] and
/// `csv.write`'s rendering (whose text must be the cells' JSON text), so the two cannot drift.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonCells {
    Bool,
    /// Integers that fit in `i64`, read widened to it.
    Int,
    UInt64,
    /// Floats, read widened to `f64`; NaN and the infinities are null ([`float_json`]).
    Float,
    Text,
    Null,
    /// Dates: their text, `YYYY-MM-DD` in years 0–9999.
    Date,
    /// Datetimes and anything else: their text.
    Other,
}

impl JsonCells {
    pub(crate) fn of(dtype: &DataType) -> Self {
        match dtype {
            DataType::Boolean => JsonCells::Bool,
            DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32 => JsonCells::Int,
            DataType::UInt64 => JsonCells::UInt64,
            DataType::Float32 | DataType::Float64 => JsonCells::Float,
            DataType::String => JsonCells::Text,
            DataType::Null => JsonCells::Null,
            DataType::Date => JsonCells::Date,
            _ => JsonCells::Other,
        }
    }
}

/// The cells of one column as JSON scalars (dates as `YYYY-MM-DD`, other types as text).
pub(crate) fn column_to_json(column: &Column) -> Result<Vec<serde_json::Value>, BlockError> {
    use serde_json::Value as J;
    let err = |e: polars::prelude::PolarsError| table_error(&e);
    let cells: Vec<J> = match JsonCells::of(column.dtype()) {
        JsonCells::Bool => column
            .bool()
            .map_err(err)?
            .iter()
            .map(|v| v.map_or(J::Null, J::Bool))
            .collect(),
        JsonCells::Int => {
            let c = column.cast(&DataType::Int64).map_err(err)?;
            c.i64()
                .map_err(err)?
                .iter()
                .map(|v| v.map_or(J::Null, J::from))
                .collect()
        }
        JsonCells::UInt64 => column
            .u64()
            .map_err(err)?
            .iter()
            .map(|v| v.map_or(J::Null, J::from))
            .collect(),
        JsonCells::Float => {
            let c = column.cast(&DataType::Float64).map_err(err)?;
            c.f64()
                .map_err(err)?
                .iter()
                .map(|v| v.map_or(J::Null, float_json))
                .collect()
        }
        JsonCells::Text => column
            .str()
            .map_err(err)?
            .iter()
            .map(|v| v.map_or(J::Null, J::from))
            .collect(),
        JsonCells::Null => vec![J::Null; column.len()],
        // Dates cast to ISO text (`YYYY-MM-DD`); datetimes and anything else to their text.
        JsonCells::Date | JsonCells::Other => {
            let c = column.cast(&DataType::String).map_err(err)?;
            c.str()
                .map_err(err)?
                .iter()
                .map(|v| v.map_or(J::Null, J::from))
                .collect()
        }
    };
    Ok(cells)
}

/// A float as JSON; NaN and infinities become null because JSON has no such numbers.
pub(crate) fn float_json(f: f64) -> serde_json::Value {
    if !f.is_finite() {
        return serde_json::Value::Null;
    }
    serde_json::Number::from_f64(f).map_or(serde_json::Value::Null, serde_json::Value::Number)
}

/// Table → rows: one object per row, columns in table order, JSON scalars (dates as
/// `YYYY-MM-DD`, NaN as null).
pub fn table_to_rows(df: &DataFrame) -> Result<Vec<Row>, BlockError> {
    let names: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    let columns: Vec<Vec<serde_json::Value>> = df
        .columns()
        .iter()
        .map(column_to_json)
        .collect::<Result<_, _>>()?;
    let mut rows: Vec<Row> = (0..df.height())
        .map(|_| Row::with_capacity(names.len()))
        .collect();
    for (name, cells) in names.iter().zip(columns) {
        for (row, cell) in rows.iter_mut().zip(cells) {
            row.insert(name.clone(), cell);
        }
    }
    Ok(rows)
}

/// The column names of a table.
pub fn column_names(df: &DataFrame) -> Vec<String> {
    df.get_column_names()
        .iter()
        .map(|n| n.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rows(v: serde_json::Value) -> Vec<Row> {
        Value::Json(v).to_rows().unwrap()
    }

    #[test]
    fn rows_round_trip_through_a_table_keep_types_and_key_order() {
        let input = json!([
            {"取引先": "株式会社あ", "金額": 1000, "率": 0.1, "済": true},
            {"取引先": "株式会社い", "金額": null, "率": 1, "済": false, "備考": "追加"}
        ]);
        let df = rows_to_table(&rows(input)).unwrap();
        assert_eq!(column_names(&df), ["取引先", "金額", "率", "済", "備考"]);
        assert_eq!(df.column("金額").unwrap().dtype(), &DataType::Int64);
        assert_eq!(df.column("率").unwrap().dtype(), &DataType::Float64);
        let back = Value::Table(df).to_json();
        assert_eq!(
            back,
            json!([
                {"取引先": "株式会社あ", "金額": 1000, "率": 0.1, "済": true, "備考": null},
                {"取引先": "株式会社い", "金額": null, "率": 1.0, "済": false, "備考": "追加"}
            ])
        );
    }

    #[test]
    fn mixed_types_become_text() {
        let df = rows_to_table(&rows(json!([{"a": 1}, {"a": "x"}, {"a": {"k": 1}}]))).unwrap();
        assert_eq!(
            Value::Table(df).to_json(),
            json!([{"a": "1"}, {"a": "x"}, {"a": "{\"k\":1}"}])
        );
    }

    #[test]
    fn non_rows_are_input_invalid() {
        let err = Value::Json(json!([1, 2])).to_rows().unwrap_err();
        assert_eq!(err.code, ErrorCode::InputInvalid);
        assert!(Value::Json(json!("x")).to_table().is_err());
    }

    #[test]
    fn dates_become_iso_text() {
        let c = Column::new("d".into(), [19814i32])
            .cast(&DataType::Date)
            .unwrap();
        let df = DataFrame::new(1, vec![c]).unwrap();
        assert_eq!(Value::Table(df).to_json(), json!([{"d": "2024-04-01"}]));
    }
}
