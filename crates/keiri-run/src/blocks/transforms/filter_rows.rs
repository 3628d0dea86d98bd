//! `transforms.filter_rows`: its inputs and outputs are in `block_specs/transforms/transforms.filter_rows.yaml`.

use super::expr;
use super::{R, expr_columns, one_of, parse_expr, pe};
use crate::block::ProgressUnit;
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::kit::steps::Steps;
use polars::prelude::*;
use serde_json::{Value as J, json};

fn filter_rows(ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let df = inputs.table("rows")?;
    let src = inputs.require_str("condition")?;
    let keep = one_of(inputs, "mode", &["keep", "drop"], "keep")? == "keep";
    let e = parse_expr("condition", src)?;
    let data = expr_columns(&df, &e)?;
    let mut mask = Vec::with_capacity(df.height());
    let mut steps = Steps::new(ctx, ProgressUnit::Rows, Some(df.height()));
    for i in 0..df.height() {
        if i % 65_536 == 0 {
            steps.advance_to(i as u64)?;
        }
        let get = |c: &str| {
            data.get(c)
                .and_then(|v| v.get(i))
                .cloned()
                .unwrap_or(J::Null)
        };
        let hit = match expr::eval(&e, &get) {
            Ok(v) => matches!(v, J::Bool(true)),
            Err(message) => {
                return Err(BlockError::failed(
                    format!("{i}行目（0始まり）で条件「{src}」を評価できません: {message}"),
                    format!("row {i}: cannot evaluate {src:?}: {message}"),
                ));
            }
        };
        mask.push(hit == keep);
    }
    let mask = BooleanChunked::new("mask".into(), mask);
    let kept = df.filter(&mask).map_err(pe)?;
    let excluded = df.filter(&!&mask).map_err(pe)?;
    let count = kept.height();
    Ok(Outputs::new()
        .with("rows", kept)
        .with("excluded", excluded)
        .with("count", json!(count)))
}

builtin!("transforms.filter_rows", filter_rows);
