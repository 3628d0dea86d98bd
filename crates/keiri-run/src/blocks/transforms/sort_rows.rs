//! `transforms.sort_rows`: its inputs and outputs are in `block_specs/transforms/transforms.sort_rows.yaml`.

use super::{R, date_column, field, objects, one_of, pe, require_columns};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::jp;
use crate::value::column_names;
use chrono::NaiveDate;
use polars::prelude::*;
use serde_json::Value as J;

/// A sort key for a column: text columns whose values are all numbers or all dates sort
/// as numbers or dates (so "9,000" sorts below "10,000" and "2024/4/1" below "2024/10/1").
fn sort_key(df: &DataFrame, name: &str) -> R<Option<Column>> {
    let column = df.column(name).map_err(pe)?;
    if column.dtype() != &DataType::String {
        return Ok(None);
    }
    let texts: Vec<Option<&str>> = column.str().map_err(pe)?.iter().collect();
    let present = || texts.iter().flatten().filter(|s| !s.trim().is_empty());
    if present().next().is_none() {
        return Ok(None);
    }
    let markers = jp::NegativeMarkers::default();
    let key = format!("__keiri_sort_{name}");
    if present().all(|s| matches!(jp::parse_amount(s, &markers), Ok(Some(_)))) {
        let nums: Vec<Option<f64>> = texts
            .iter()
            .map(|s| s.and_then(|s| jp::parse_amount(s, &markers).ok().flatten()))
            .collect();
        return Ok(Some(Column::new(key.into(), nums)));
    }
    if present().all(|s| jp::parse_date(s).is_some()) {
        let dates: Vec<Option<NaiveDate>> =
            texts.iter().map(|s| s.and_then(jp::parse_date)).collect();
        return date_column(&key, &dates).map(Some);
    }
    Ok(None)
}

fn sort_rows(_ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let df = inputs.table("rows")?;
    let specs = objects(inputs, "by", true)?;
    let nulls_last = one_of(inputs, "nulls", &["first", "last"], "last")? == "last";
    let mut work = df.clone();
    let mut by = Vec::new();
    let mut descending = Vec::new();
    for spec in &specs {
        let name = field(spec, "field", "by")?;
        require_columns(&df, &[name.to_owned()])?;
        let order = spec.get("order").and_then(J::as_str).unwrap_or("asc");
        descending.push(match order {
            "asc" => false,
            "desc" => true,
            other => {
                return Err(BlockError::input_invalid(
                    "by",
                    &format!("order={other} は使えません（asc, desc）"),
                    &format!("order={other} is not asc or desc"),
                ));
            }
        });
        match sort_key(&df, name)? {
            Some(key) => {
                by.push(key.name().to_string());
                work.with_column(key).map_err(pe)?;
            }
            None => by.push(name.to_owned()),
        }
    }
    if by.is_empty() {
        return Ok(Outputs::new().with("rows", df));
    }
    let n = by.len();
    let options = SortMultipleOptions::default()
        .with_order_descending_multi(descending)
        .with_nulls_last_multi(vec![nulls_last; n])
        .with_maintain_order(true);
    let sorted = work.sort(&by, options).map_err(pe)?;
    let out = sorted
        .select(column_names(&df).iter().map(String::as_str))
        .map_err(pe)?;
    Ok(Outputs::new().with("rows", out))
}

builtin!("transforms.sort_rows", sort_rows);
