//! `transforms.deduplicate`: its inputs and outputs are in `block_specs/transforms/transforms.deduplicate.yaml`.

use super::{R, ROW_INDEX, one_of, pe, require_columns};
use crate::block::{BlockContext, Inputs, Outputs};
use crate::value::column_names;
use polars::prelude::*;
use serde_json::json;
use std::collections::HashSet;

fn deduplicate(ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let df = inputs.table("rows")?;
    let keys = inputs
        .strings("keys")?
        .filter(|k| !k.is_empty())
        .unwrap_or_else(|| column_names(&df));
    require_columns(&df, &keys)?;
    let keep = match one_of(inputs, "keep", &["first", "last"], "first")? {
        "last" => UniqueKeepStrategy::Last,
        _ => UniqueKeepStrategy::First,
    };
    let query = df
        .clone()
        .lazy()
        .with_row_index(ROW_INDEX, None)
        .unique_stable_generic(Some(keys.iter().map(|k| col(k.as_str())).collect()), keep)
        .select([col(ROW_INDEX)]);
    let kept = crate::blocks::collect(query, ctx.cancel).map_err(pe)?;
    let index = kept
        .column(ROW_INDEX)
        .map_err(pe)?
        .cast(&DataType::UInt64)
        .map_err(pe)?;
    let keep_set: HashSet<u64> = index.u64().map_err(pe)?.iter().flatten().collect();
    let mask = BooleanChunked::new(
        "mask".into(),
        (0..df.height() as u64)
            .map(|i| keep_set.contains(&i))
            .collect::<Vec<_>>(),
    );
    let rows = df.filter(&mask).map_err(pe)?;
    let duplicates = df.filter(&!&mask).map_err(pe)?;
    let count = duplicates.height();
    Ok(Outputs::new()
        .with("rows", rows)
        .with("duplicates", duplicates)
        .with("duplicate_count", json!(count)))
}

builtin!("transforms.deduplicate", deduplicate);
