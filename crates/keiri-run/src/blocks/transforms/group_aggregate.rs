//! `transforms.group_aggregate`: its inputs and outputs are in `block_specs/transforms/transforms.group_aggregate.yaml`.

use super::{R, agg_expr, field, group_stable, numeric_for, objects, pe, require_columns};
use crate::block::{BlockContext, Inputs, Outputs};
use polars::prelude::*;
use serde_json::{Value as J, json};
use tokio_util::sync::CancellationToken;

fn group_aggregate(ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let mut df = inputs.table("rows")?;
    let asked = Asked::of(inputs)?;
    asked.prepare(&mut df)?;
    let exprs = asked
        .aggs
        .iter()
        .map(|a| agg_expr(&a.field, &a.op, &a.alias))
        .collect::<R<Vec<_>>>()?;
    let out = asked.group(df, exprs, ctx.cancel)?;
    Ok(outputs(out))
}

/// The block's outputs for its table of groups.
fn outputs(out: DataFrame) -> Outputs {
    let count = out.height();
    Outputs::new()
        .with("rows", out)
        .with("group_count", json!(count))
}

/// One aggregation the plan asks for.
#[derive(Debug)]
struct Agg {
    field: String,
    op: String,
    alias: String,
}

/// The groups and aggregations the plan asks for.
#[derive(Debug)]
struct Asked {
    by: Vec<String>,
    aggs: Vec<Agg>,
}

impl Asked {
    fn of(inputs: &Inputs) -> R<Asked> {
        let by = inputs.strings("by")?.unwrap_or_default();
        let mut aggs = Vec::new();
        for spec in &objects(inputs, "aggregations", true)? {
            let name = field(spec, "field", "aggregations")?;
            let op = field(spec, "op", "aggregations")?;
            let default_alias = format!("{name}_{op}");
            let alias = spec.get("as").and_then(J::as_str).unwrap_or(&default_alias);
            // The op is checked here, before any row.
            let _ = agg_expr(name, op, alias)?;
            aggs.push(Agg {
                field: name.to_owned(),
                op: op.to_owned(),
                alias: alias.to_owned(),
            });
        }
        Ok(Asked { by, aggs })
    }

    /// Checks the columns of `df` and reads the text of summed and averaged ones as numbers.
    fn prepare(&self, df: &mut DataFrame) -> R<()> {
        require_columns(df, &self.by)?;
        for agg in &self.aggs {
            require_columns(df, std::slice::from_ref(&agg.field))?;
            if matches!(agg.op.as_str(), "sum" | "mean") {
                numeric_for(df, &agg.field)?;
            }
        }
        Ok(())
    }

    /// `df` grouped (in order of first appearance) with `exprs`, or one row without `by`.
    fn group(&self, df: DataFrame, exprs: Vec<Expr>, cancel: &CancellationToken) -> R<DataFrame> {
        if self.by.is_empty() {
            crate::blocks::collect(df.lazy().select(exprs), cancel).map_err(pe)
        } else {
            group_stable(df, &self.by, exprs, cancel)
        }
    }
}

/// The name of a mean's running sum or count in a piece's groups (never a column of the
/// plan's: it holds a NUL).
fn part_name(alias: &str, what: &str) -> String {
    format!("{alias}\u{0}{what}")
}

/// `transforms.group_aggregate` over a table that comes piece by piece (`engine/fused.rs`):
/// each piece grouped alone, then the pieces' groups grouped again, in order, into what the
/// block gives on the whole table. Sums of sums, counts summed, the least of the least, the
/// first of the firsts; a mean is its sum over its count. Exact only for whole numbers, so a
/// summed or averaged column must be integers in every piece ([`GroupsByPiece::add`] says
/// when one is not: the rows then go to the block whole).
#[derive(Debug)]
pub(crate) struct GroupsByPiece {
    asked: Asked,
    parts: Option<DataFrame>,
}

impl GroupsByPiece {
    pub(crate) fn new(inputs: &Inputs) -> R<GroupsByPiece> {
        Ok(GroupsByPiece {
            asked: Asked::of(inputs)?,
            parts: None,
        })
    }

    /// Groups `piece`; `Ok(false)` when a summed or averaged column is not integers.
    pub(crate) fn add(&mut self, ctx: &BlockContext<'_>, mut piece: DataFrame) -> R<bool> {
        self.asked.prepare(&mut piece)?;
        let mut exprs = Vec::new();
        for agg in &self.asked.aggs {
            let c = col(agg.field.as_str());
            let summed = matches!(agg.op.as_str(), "sum" | "mean");
            if summed && !piece.column(&agg.field).map_err(pe)?.dtype().is_integer() {
                return Ok(false);
            }
            match agg.op.as_str() {
                "mean" => {
                    exprs.push(c.clone().sum().alias(part_name(&agg.alias, "sum")));
                    exprs.push(
                        c.count()
                            .cast(DataType::Int64)
                            .alias(part_name(&agg.alias, "n")),
                    );
                }
                op => exprs.push(agg_expr(&agg.field, op, &agg.alias)?),
            }
        }
        let part = self.asked.group(piece, exprs, ctx.cancel)?;
        match &mut self.parts {
            Some(parts) => {
                parts.vstack_mut_owned(part).map_err(pe)?;
            }
            None => self.parts = Some(part),
        }
        Ok(true)
    }

    /// The block's outputs for all the pieces added.
    pub(crate) fn finish(self, cancel: &CancellationToken) -> R<Outputs> {
        let Some(parts) = self.parts else {
            return Err(crate::blocks::invalid("行がありません", "no rows"));
        };
        let mut exprs = Vec::new();
        for agg in &self.asked.aggs {
            let c = col(agg.alias.as_str());
            exprs.push(match agg.op.as_str() {
                "sum" | "count" => c.sum(),
                "min" => c.min(),
                "max" => c.max(),
                "first" => c.first(),
                "last" => c.last(),
                _ => {
                    let sum = col(part_name(&agg.alias, "sum")).sum();
                    let n = col(part_name(&agg.alias, "n")).sum();
                    when(n.clone().gt(lit(0)))
                        .then(sum.cast(DataType::Float64) / n.cast(DataType::Float64))
                        .otherwise(lit(NULL).cast(DataType::Float64))
                        .alias(agg.alias.as_str())
                }
            });
        }
        let out = self.asked.group(parts, exprs, cancel)?;
        Ok(outputs(out))
    }
}

builtin!("transforms.group_aggregate", group_aggregate);
