//! `transforms.pivot`: its inputs and outputs are in `block_specs/transforms/transforms.pivot.yaml`.

use super::expr;
use super::{R, agg_expr, cells, group_stable, numeric_for, one_of, require_columns};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::value::Row;
use serde_json::{Value as J, json};
use std::collections::HashMap;

fn pivot(ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let mut df = inputs.table("rows")?;
    let index = inputs
        .strings("index")?
        .ok_or_else(|| BlockError::input_invalid("index", "必須です", "it is required"))?;
    let pivot_col = inputs.require_str("columns")?;
    let values = inputs.require_str("values")?;
    let aggfunc = one_of(
        inputs,
        "aggfunc",
        &["sum", "count", "mean", "min", "max", "first", "last"],
        "sum",
    )?;
    // A cell with no value stays empty unless the plan says what to put there: a default 0
    // would turn a missing date or name into a number that looks real.
    let fill = inputs.json("fill_value").unwrap_or(J::Null);
    let mut needed = index.clone();
    needed.push(pivot_col.to_owned());
    needed.push(values.to_owned());
    require_columns(&df, &needed)?;
    if matches!(aggfunc, "sum" | "mean") {
        numeric_for(&mut df, values)?;
    }
    let mut keys = index.clone();
    keys.push(pivot_col.to_owned());
    // Aggregate first (the long table may be large), then reshape the small result.
    let grouped = group_stable(
        df,
        &keys,
        vec![agg_expr(values, aggfunc, "__keiri_value")?],
        ctx.cancel,
    )?;
    let index_cells: Vec<Vec<J>> = index.iter().map(|n| cells(&grouped, n)).collect::<R<_>>()?;
    let pivot_cells = cells(&grouped, pivot_col)?;
    let value_cells = cells(&grouped, "__keiri_value")?;
    let mut pivot_names: Vec<String> = Vec::new();
    let mut out_rows: indexmap::IndexMap<String, (Vec<J>, HashMap<String, J>)> =
        indexmap::IndexMap::new();
    for i in 0..grouped.height() {
        let key_values: Vec<J> = index_cells.iter().map(|c| c[i].clone()).collect();
        let key = serde_json::to_string(&key_values).unwrap_or_default();
        let name = expr::to_text(&pivot_cells[i]);
        if !pivot_names.contains(&name) {
            pivot_names.push(name.clone());
        }
        out_rows
            .entry(key)
            .or_insert_with(|| (key_values, HashMap::new()))
            .1
            .insert(name, value_cells[i].clone());
    }
    if let Some(clash) = pivot_names.iter().find(|n| index.contains(n)) {
        return Err(BlockError::failed(
            format!("ピボットした列名 {clash} が行見出しの列名と重なります"),
            format!("pivoted column {clash} has the name of an index column"),
        ));
    }
    let rows: Vec<Row> = out_rows
        .into_values()
        .map(|(key_values, cells)| {
            let mut row = Row::new();
            for (name, v) in index.iter().zip(key_values) {
                row.insert(name.clone(), v);
            }
            for name in &pivot_names {
                row.insert(
                    name.clone(),
                    cells
                        .get(name)
                        .cloned()
                        .filter(|v| !v.is_null())
                        .unwrap_or_else(|| fill.clone()),
                );
            }
            row
        })
        .collect();
    let mut columns = index.clone();
    columns.extend(pivot_names);
    Ok(Outputs::new()
        .with("rows", rows)
        .with("columns", json!(columns)))
}

builtin!("transforms.pivot", pivot);
