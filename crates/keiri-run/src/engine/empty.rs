//! Empty tables keep their columns (#30.3). A block that passes some of its input rows on
//! (`columns_from: <input>` in its spec: the rows that passed a policy, the unmatched side of
//! a match, a filter's excluded rows) answers `[]` when none qualify, and `[]` has no columns:
//! a later join or select on such a table would fail with "column k does not exist" nodes
//! after the real cause — an empty quarter. The engine gives such an empty output the columns
//! of the input it came from (with its types when the input is a table), plus the columns
//! the spec says the block adds (`adds_columns`, as text), so empty periods run through.
//!
//! Rows that reach a block empty and without columns (a loop's list of tables that were all
//! empty, a loop that ran 0 times: JSON rows, which cannot say their columns) still make a
//! block that reads a column fail; [`explain_missing`] makes that failure name the node whose
//! output came out empty, not the column alone.

use indexmap::IndexMap;
use keiri_plan::catalog::BlockSpec;
use keiri_plan::columns::{
    ADDS_COLUMNS, ADDS_COLUMNS_FROM, COLUMNS_FROM, KEEPS_COLUMNS_FROM, RENAMES_COLUMNS_FROM,
};
use polars::prelude::{Column, DataFrame, DataType};
use serde_json::Value as Json;

use crate::block::{BlockError, ErrorCode, Outputs};
use crate::value::{Row, Value, rows_to_table};

/// Rows of a JSON input looked at for the column types of an empty output.
const SAMPLE_ROWS: usize = 100;

/// The empty table each `columns_from` output becomes when it comes out empty, by output key:
/// taken from the inputs before the block runs (a table's schema is kept for free; a list of
/// objects gives the columns and types of its first rows).
pub(super) fn shapes(
    spec: &BlockSpec,
    inputs: &IndexMap<String, Value>,
) -> Vec<(String, DataFrame)> {
    let mut shapes = Vec::new();
    for (key, port) in &spec.outputs {
        let Some(Json::String(source)) = port.extra.get(COLUMNS_FROM) else {
            continue;
        };
        // Outputs that keep, rename or compute columns produce their own schema.
        if [KEEPS_COLUMNS_FROM, RENAMES_COLUMNS_FROM, ADDS_COLUMNS_FROM]
            .iter()
            .any(|p| port.extra.contains_key(*p))
        {
            continue;
        }
        let Some(mut empty) = inputs.get(source).and_then(empty_like) else {
            continue;
        };
        let added = port
            .extra
            .get(ADDS_COLUMNS)
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter_map(Json::as_str);
        for name in added {
            if empty.column(name).is_err() {
                let column = Column::full_null(name.into(), 0, &DataType::String);
                if empty.with_column(column).is_err() {
                    continue;
                }
            }
        }
        shapes.push((key.clone(), empty));
    }
    shapes
}

/// An input's columns as an empty table; `None` when it is not rows or has no columns.
fn empty_like(value: &Value) -> Option<DataFrame> {
    let table = match value {
        Value::Table(df) => df.clear(),
        Value::Json(Json::Array(items)) => {
            let rows: Vec<Row> = items
                .iter()
                .take(SAMPLE_ROWS)
                .map(|item| item.as_object().cloned())
                .collect::<Option<_>>()?;
            rows_to_table(&rows).ok()?.clear()
        }
        Value::Json(_) => return None,
    };
    (table.width() > 0).then_some(table)
}

/// Replaces each output that came out empty and without columns by its shape.
pub(super) fn keep_columns(outputs: &mut Outputs, shapes: Vec<(String, DataFrame)>) {
    for (key, shape) in shapes {
        let Some(value) = outputs.0.get_mut(&key) else {
            continue;
        };
        let empty = match value {
            Value::Json(Json::Array(items)) => items.is_empty(),
            Value::Table(df) => df.height() == 0 && df.width() == 0,
            Value::Json(_) => false,
        };
        if empty {
            *value = Value::Table(shape);
        }
    }
}

/// The rows inputs of a node that are empty and have no columns, with the plan's reference
/// to the node output they are (`left` ← `${all.quarter}`: `("left", "all")`).
pub(super) fn columnless(
    node: &keiri_plan::model::Node,
    inputs: &IndexMap<String, Value>,
) -> Vec<(String, String)> {
    inputs
        .iter()
        .filter(|(_, value)| match value {
            Value::Table(df) => df.width() == 0,
            Value::Json(Json::Array(items)) => items.is_empty(),
            Value::Json(_) => false,
        })
        .filter_map(|(key, _)| {
            let raw = node.inputs.get(key)?.as_str()?;
            let reference = keiri_plan::resolve::whole_reference(raw)?;
            match keiri_plan::refs::parse_target(reference).ok()? {
                keiri_plan::refs::Target::Node { node, .. } => Some((key.clone(), node)),
                _ => None,
            }
        })
        .collect()
}

/// A `COLUMN_NOT_FOUND` on rows that came empty and without columns says so: the column is
/// not misspelled, the rows before it came out empty (an empty period, a loop run 0 times).
pub(super) fn explain_missing(error: BlockError, columnless: &[(String, String)]) -> BlockError {
    if error.code != ErrorCode::ColumnNotFound || columnless.is_empty() {
        return error;
    }
    let (ja, en): (Vec<String>, Vec<String>) = columnless
        .iter()
        .map(|(input, from)| {
            (
                format!("{input}（{from} の出力）"),
                format!("{input} (the output of {from})"),
            )
        })
        .unzip();
    let (ja, en) = (ja.join("、"), en.join(", "));
    let mut error = error;
    error.message_ja = format!(
        "{}。{ja} は 0 行で列もありません",
        error.message_ja.trim_end_matches('。')
    );
    error.message_en = format!("{}; {en} has no rows and no columns", error.message_en);
    error.with_hint(
        format!("列名の誤りではなく、{ja} が空でした（該当する行のない期間、0 回のループ、すべての行を除いた条件など）。その前のノードの結果を確認してください"),
        format!("the column name is not the problem: {en} came out empty (a period with no rows, a loop that ran 0 times, a condition that left no rows); check the nodes before it"),
    )
}
