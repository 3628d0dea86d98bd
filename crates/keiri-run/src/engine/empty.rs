//! Empty tables keep their columns (#30.3). A block that passes some of its input rows on
//! (`columns_from: <input>` in its spec: the rows that passed a policy, the unmatched side of
//! a match, a filter's excluded rows) answers `[]` when none qualify, and `[]` has no columns:
//! a later join or select on such a table would fail with "column k does not exist" nodes
//! after the real cause — an empty quarter. The engine gives such an empty output the columns
//! of the input it came from (with its types when the input is a table), plus the columns
//! the spec says the block adds (`adds_columns`, as text), so empty periods run through.
//!
//! A loop's output list of tables is JSON (one list of rows per item), which cannot say its
//! columns once every item is empty. The engine keeps them beside it instead: when a foreach
//! ends, each output whose items are all tables gets the union of their columns as its shape
//! (when the loop ran 0 times, the shape its body's blocks would give, worked out from the
//! rows they read outside the loop); a block whose `columns_from` input is such a list
//! (`transforms.concat_rows`' `tables`) gives that shape to its empty output. So a quarter
//! whose months have no rows joins and reports as an empty table.
//!
//! Rows that still reach a block empty and without columns (a loop's body reading a file
//! named by the item) make a block that reads a column fail; [`explain_missing`] makes that
//! failure name the node whose output came out empty, not the column alone.

use indexmap::IndexMap;
use keiri_plan::catalog::BlockSpec;
use keiri_plan::columns::{
    ADDS_COLUMNS, ADDS_COLUMNS_FROM, COLUMNS_FROM, KEEPS_COLUMNS_FROM, RENAMES_COLUMNS_FROM,
};
use polars::prelude::{Column, DataFrame, DataType};
use serde_json::Value as Json;

use std::collections::HashMap;

use keiri_plan::Catalog;
use keiri_plan::model::{Node, Plan};
use keiri_plan::refs::Target;
use keiri_plan::resolve;

use crate::block::{BlockError, ErrorCode, Outputs};
use crate::value::{Row, Value, rows_to_table};

/// Rows of a JSON input looked at for the column types of an empty output.
const SAMPLE_ROWS: usize = 100;

/// The empty table each `columns_from` output becomes when it comes out empty, by output key:
/// taken from the inputs before the block runs (a table's schema is kept for free; a list of
/// objects gives the columns and types of its first rows; a loop's list of tables, the shape
/// `from_loop` knows for that input).
pub(super) fn shapes(
    spec: &BlockSpec,
    inputs: &IndexMap<String, Value>,
    from_loop: &dyn Fn(&str) -> Option<DataFrame>,
) -> Vec<(String, DataFrame)> {
    let mut shapes = Vec::new();
    for (key, port) in &spec.outputs {
        let Some(Json::String(source)) = port.extra.get(COLUMNS_FROM) else {
            continue;
        };
        // Outputs that keep or rename columns produce their own schema.
        if [KEEPS_COLUMNS_FROM, RENAMES_COLUMNS_FROM]
            .iter()
            .any(|p| port.extra.contains_key(*p))
        {
            continue;
        }
        let Some(mut empty) = inputs
            .get(source)
            .and_then(empty_like)
            .or_else(|| from_loop(source))
        else {
            continue;
        };
        let mut added: Vec<String> = port
            .extra
            .get(ADDS_COLUMNS)
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .map(str::to_string)
            .collect();
        if let Some(from) = port.extra.get(ADDS_COLUMNS_FROM) {
            // Names given by inputs (`source_field: 月`); a name known only from the data
            // leaves the output to the block.
            let Some(names) = added_names(from, inputs) else {
                continue;
            };
            added.extend(names);
        }
        for name in &added {
            let name = name.as_str();
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
        .filter_map(|(key, _)| Some((key.clone(), output_of(node, key)?.0)))
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

/// The column names the inputs `from` names (`adds_columns_from`: one input or a list) give:
/// a name, a list of names, or a list of objects' `name` (or `as`); `None` when one is not
/// a plain name.
fn added_names(from: &Json, inputs: &IndexMap<String, Value>) -> Option<Vec<String>> {
    let keys: Vec<&str> = match from {
        Json::String(one) => vec![one.as_str()],
        Json::Array(many) => many.iter().filter_map(Json::as_str).collect(),
        _ => return None,
    };
    let mut names = Vec::new();
    for key in keys {
        match inputs.get(key) {
            None | Some(Value::Json(Json::Null)) => {}
            Some(Value::Json(Json::String(name))) => names.push(name.clone()),
            Some(Value::Json(Json::Array(items))) => {
                for item in items {
                    let name = match item {
                        Json::String(name) => name,
                        Json::Object(o) => o.get("name").or_else(|| o.get("as"))?.as_str()?,
                        _ => return None,
                    };
                    names.push(name.to_string());
                }
            }
            Some(_) => return None,
        }
    }
    Some(names)
}

/// The node output (node, alias) that `node`'s input `key` wholly references
/// (`${all.quarter}`), if it does.
fn output_of(node: &Node, key: &str) -> Option<(String, String)> {
    let raw = node.inputs.get(key)?.as_str()?;
    match keiri_plan::refs::parse_target(resolve::whole_reference(raw)?).ok()? {
        Target::Node {
            node,
            alias,
            path: None,
        } => Some((node, alias)),
        _ => None,
    }
}

/// The shape of the loop output list that `node`'s input `key` wholly references, if the
/// loop kept one (`shape(node, alias)`: the scope's).
pub(super) fn loop_shape(
    node: &Node,
    key: &str,
    shape: &dyn Fn(&str, &str) -> Option<DataFrame>,
) -> Option<DataFrame> {
    let (node, alias) = output_of(node, key)?;
    shape(&node, &alias)
}

/// The union of the columns of `tables` (each table's own types; a column first seen in a
/// later table is added with its type there); `None` when any is not rows with columns.
fn union(tables: impl Iterator<Item = Option<DataFrame>>) -> Option<DataFrame> {
    let mut shape: Option<DataFrame> = None;
    for table in tables {
        let table = table?;
        match &mut shape {
            None => shape = Some(table),
            Some(shape) => {
                for column in table.columns() {
                    if shape.column(column.name()).is_err() {
                        shape.with_column(column.clone()).ok()?;
                    }
                }
            }
        }
    }
    shape
}

/// The shape of each output list of the foreach `node` whose items are all tables, by alias
/// (see the module docs); `dry` gives the body's shapes, by body alias, when it ran 0 times.
pub(super) fn loop_shapes(
    node: &Node,
    iterations: &[IndexMap<String, Value>],
    dry: impl FnOnce() -> IndexMap<String, DataFrame>,
) -> IndexMap<String, DataFrame> {
    let dry = if iterations.is_empty() {
        dry()
    } else {
        IndexMap::new()
    };
    let mut shapes = IndexMap::new();
    for (local, alias) in node.aliases() {
        let shape = if iterations.is_empty() {
            dry.get(local).cloned()
        } else {
            union(
                iterations
                    .iter()
                    .map(|it| it.get(local).and_then(empty_like)),
            )
        };
        if let Some(shape) = shape {
            shapes.insert(alias.to_string(), shape);
        }
    }
    shapes
}

/// Body node outputs by node id, then alias: what a body's earlier nodes gave.
pub(super) type Published = HashMap<String, IndexMap<String, Value>>;

/// For a loop that ran 0 times: the empty table each alias of `body` would hold, by alias,
/// as far as its blocks' `columns_from` outputs tell from the rows they read outside the
/// loop. Nothing runs: `inputs(node, published)` resolves a body node's inputs leniently
/// (the item itself reads as null), the earlier body nodes' outputs being their shapes.
pub(super) fn body_shapes(
    body: &Plan,
    catalog: &Catalog,
    inputs: &dyn Fn(&Node, &Published) -> IndexMap<String, Value>,
) -> IndexMap<String, DataFrame> {
    let mut published = Published::new();
    for inner in &body.graph {
        let Some(spec) = inner.block.as_deref().and_then(|b| catalog.get(b)) else {
            continue;
        };
        let resolved = inputs(inner, &published);
        let shapes = shapes(spec, &resolved, &|_| None);
        let aliases: IndexMap<String, Value> = inner
            .aliases()
            .filter_map(|(local, alias)| {
                let (_, shape) = shapes.iter().find(|(k, _)| k == local)?;
                Some((alias.to_string(), Value::Table(shape.clone())))
            })
            .collect();
        published.insert(inner.id.clone(), aliases);
    }
    published
        .into_values()
        .flatten()
        .filter_map(|(alias, value)| match value {
            Value::Table(df) => Some((alias, df)),
            Value::Json(_) => None,
        })
        .collect()
}
