//! Tables as JSON where a reference or a condition needs one.

use polars::prelude::DataFrame;
use serde_json::Value as Json;

use crate::block::{BlockError, ErrorCode};
use crate::value::Value;

/// A value as JSON: tables become arrays of row objects.
pub(super) fn value_json(value: &Value) -> Result<Json, BlockError> {
    match value {
        Value::Json(j) => Ok(j.clone()),
        Value::Table(df) => table_json(df),
    }
}

pub(super) fn table_json(df: &DataFrame) -> Result<Json, BlockError> {
    use polars::prelude::AnyValue;
    let columns = df.columns();
    let mut rows = Vec::with_capacity(df.height());
    for i in 0..df.height() {
        let mut row = serde_json::Map::new();
        for column in columns {
            let cell = column.get(i).map_err(|e| {
                BlockError::new(
                    ErrorCode::BlockFailed,
                    format!("表の読み取りに失敗しました: {e}"),
                    format!("reading a table failed: {e}"),
                )
            })?;
            let json = match cell {
                AnyValue::Null => Json::Null,
                AnyValue::Boolean(b) => Json::Bool(b),
                AnyValue::String(s) => Json::String(s.to_string()),
                AnyValue::StringOwned(s) => Json::String(s.to_string()),
                AnyValue::Int8(v) => Json::from(v),
                AnyValue::Int16(v) => Json::from(v),
                AnyValue::Int32(v) => Json::from(v),
                AnyValue::Int64(v) => Json::from(v),
                AnyValue::UInt8(v) => Json::from(v),
                AnyValue::UInt16(v) => Json::from(v),
                AnyValue::UInt32(v) => Json::from(v),
                AnyValue::UInt64(v) => Json::from(v),
                AnyValue::Float32(v) => Json::from(f64::from(v)),
                AnyValue::Float64(v) => Json::from(v),
                other => Json::String(other.to_string()),
            };
            row.insert(column.name().to_string(), json);
        }
        rows.push(Json::Object(row));
    }
    Ok(Json::Array(rows))
}
