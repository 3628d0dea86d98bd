//! What the engine checks on a node's resolved inputs just before its block runs: each value
//! against its spec type and enum (`check_inputs`), and every column the block will read
//! against the rows it gets (`check_columns`, `COLUMN_NOT_FOUND`).

use std::collections::HashMap;

use indexmap::IndexMap;
use keiri_plan::ValueType;
use keiri_plan::model::Node;
use serde_json::Value as Json;

use super::invalid;
use crate::block::{BlockError, ErrorCode};
use crate::value::Value;

/// `COLUMN_NOT_FOUND` when a column the block will read (keiri-plan's
/// [`keiri_plan::column_reads`]: named by the plan or by a default, in a rule, a condition, an
/// expression or a mapping) is not in the rows it gets. The same function lists the columns
/// before a run, so the validator and the runtime cannot disagree on what a block reads.
/// Rows with no columns to look at (an empty list) are left to the block.
pub(super) fn check_columns(
    spec: &keiri_plan::BlockSpec,
    node: &Node,
    inputs: &IndexMap<String, Value>,
    qid: &str,
) -> Result<(), BlockError> {
    let get = |key: &str| match inputs.get(key) {
        Some(Value::Json(j)) => Some(j),
        _ => None,
    };
    let mut known: HashMap<String, Option<Vec<String>>> = HashMap::new();
    for read in keiri_plan::column_reads(spec, &get) {
        let columns = known
            .entry(read.rows.clone())
            .or_insert_with(|| inputs.get(&read.rows).and_then(column_names));
        let Some(columns) = columns else {
            continue;
        };
        if columns.contains(&read.column) {
            continue;
        }
        let (column, rows) = (&read.column, &read.rows);
        let input =
            &keiri_plan::columns::read_place(&read.input, &read.pointer, column, read.from_default);
        // The inputs here have their defaults filled in; the plan's own tell which were set.
        // A mapping's key left out (`field_map` without `po_no`) reads its own default.
        let defaulted =
            read.from_default || node.inputs.get(&read.input).is_none_or(|v| v.is_null());
        let if_present = spec
            .inputs
            .get(&read.input)
            .and_then(|p| p.extra.get(keiri_plan::DEFAULT_IF_PRESENT))
            == Some(&serde_json::Value::Bool(true));
        if defaulted && if_present {
            continue;
        }
        let list = columns.join(", ");
        let (by_ja, by_en) = if defaulted {
            ("（既定値）", " (its default)")
        } else {
            ("", "")
        };
        return Err(BlockError::new(
            ErrorCode::ColumnNotFound,
            format!(
                "ノード {qid}: 入力 {input}{by_ja} が読む列「{column}」は {rows} の行にありません（ある列: {list}）"
            ),
            format!(
                "node {qid}: input {input}{by_en} reads the column {column:?}, which the rows of {rows} do not have (columns: {list})"
            ),
        )
        .with_hint(
            format!("{rows} の列: {list}。{input} に実在する列名を指定してください"),
            format!("columns of {rows}: {list}; set {input} to one of them"),
        ));
    }
    Ok(())
}

/// The columns of a table, or of JSON rows (every key of every row, in order of first
/// appearance); `None` when there is nothing to look at.
fn column_names(value: &Value) -> Option<Vec<String>> {
    match value {
        Value::Table(df) if df.width() > 0 => Some(
            df.get_column_names()
                .iter()
                .map(|n| n.to_string())
                .collect(),
        ),
        Value::Json(Json::Array(items)) => {
            let mut names: Vec<String> = Vec::new();
            for item in items {
                let Json::Object(row) = item else {
                    return None;
                };
                for key in row.keys() {
                    if !names.contains(key) {
                        names.push(key.clone());
                    }
                }
            }
            (!names.is_empty()).then_some(names)
        }
        _ => None,
    }
}

/// Applies spec defaults and checks every input against the spec.
pub(super) fn check_inputs(
    spec: &keiri_plan::BlockSpec,
    inputs: &mut IndexMap<String, Value>,
    qid: &str,
) -> Result<(), BlockError> {
    let block = &spec.id;
    if let Some(key) = inputs.keys().find(|k| !spec.inputs.contains_key(*k)) {
        let known: Vec<&str> = spec.inputs.keys().map(String::as_str).collect();
        return Err(invalid(
            qid,
            &format!("{block} に入力 {key} はありません"),
            &format!("{block} has no input {key}"),
        )
        .with_hint(
            format!("使える入力: {}", known.join(", ")),
            format!("inputs: {}", known.join(", ")),
        ));
    }
    for (key, port) in &spec.inputs {
        let missing = matches!(inputs.get(key), None | Some(Value::Json(Json::Null)));
        if missing {
            if let Some(default) = &port.default {
                inputs.insert(key.clone(), Value::Json(default.clone()));
                continue;
            }
            if port.required {
                return Err(invalid(
                    qid,
                    &format!("{block} の必須入力 {key} がありません"),
                    &format!("{block} needs input {key}"),
                ));
            }
            continue;
        }
        let Some(value) = inputs.get(key) else {
            continue;
        };
        let actual = match value {
            Value::Table(_) => ValueType::Array,
            Value::Json(j) => ValueType::of(j),
        };
        if !port.ty.accepts(actual) {
            return Err(invalid(
                qid,
                &format!(
                    "{block} の入力 {key} は {} 型ですが {} が渡されました",
                    port.ty.display(),
                    actual.as_str()
                ),
                &format!(
                    "input {key} of {block} expects {} but got {}",
                    port.ty.display(),
                    actual.as_str()
                ),
            ));
        }
        if let (Some(allowed), Value::Json(j)) = (&port.enum_values, value)
            && !allowed.contains(j)
        {
            let list: Vec<String> = allowed.iter().map(Json::to_string).collect();
            return Err(invalid(
                qid,
                &format!(
                    "{block} の入力 {key} の値 {j} は {} のどれでもありません",
                    list.join(", ")
                ),
                &format!(
                    "input {key} of {block}: {j} is not one of {}",
                    list.join(", ")
                ),
            ));
        }
    }
    Ok(())
}
