//! Values that flow between nodes.

use polars::prelude::DataFrame;

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

/// One table row as JSON (column name → cell), the row form of a table.
pub type Row = serde_json::Map<String, serde_json::Value>;

// Conversions between the two forms (`Value::to_rows`, `Value::to_table`,
// `Value::to_json`, `rows_to_table`, `table_to_rows`) live here; see the task notes of the
// block helpers: JSON arrays of objects become tables with one column per key seen (in first
// appearance order), and tables become arrays of objects with JSON scalars (dates as
// `YYYY-MM-DD` strings).
