//! `transforms.group_aggregate`: its inputs and outputs are in `block_specs/transforms/transforms.group_aggregate.yaml`.

use super::{R, agg_expr, field, group_stable, numeric_for, objects, pe, require_columns};
use crate::block::{BlockContext, Inputs, Outputs};
use polars::prelude::*;
use serde_json::{Value as J, json};

fn group_aggregate(ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let mut df = inputs.table("rows")?;
    let by = inputs.strings("by")?.unwrap_or_default();
    let specs = objects(inputs, "aggregations", true)?;
    require_columns(&df, &by)?;
    let mut exprs = Vec::new();
    for spec in &specs {
        let name = field(spec, "field", "aggregations")?;
        let op = field(spec, "op", "aggregations")?;
        require_columns(&df, &[name.to_owned()])?;
        if matches!(op, "sum" | "mean") {
            numeric_for(&mut df, name)?;
        }
        let default_alias = format!("{name}_{op}");
        let alias = spec.get("as").and_then(J::as_str).unwrap_or(&default_alias);
        exprs.push(agg_expr(name, op, alias)?);
    }
    let out = if by.is_empty() {
        crate::blocks::collect(df.lazy().select(exprs), ctx.cancel).map_err(pe)?
    } else {
        group_stable(df, &by, exprs, ctx.cancel)?
    };
    let count = out.height();
    Ok(Outputs::new()
        .with("rows", out)
        .with("group_count", json!(count)))
}

builtin!("transforms.group_aggregate", group_aggregate);
