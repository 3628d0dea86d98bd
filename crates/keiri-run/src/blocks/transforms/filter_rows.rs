//! `transforms.filter_rows`: its inputs and outputs are in `block_specs/transforms/transforms.filter_rows.yaml`.

use super::expr;
use super::{R, expr_columns, one_of, parse_expr, pe, require_columns};
use crate::block::ProgressUnit;
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::kit::memo::Memo;
use crate::blocks::kit::steps::Steps;
use polars::prelude::*;
use serde_json::{Value as J, json};

fn filter_rows(ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let df = inputs.table("rows")?;
    let src = inputs.require_str("condition")?;
    let keep = one_of(inputs, "mode", &["keep", "drop"], "keep")? == "keep";
    let e = parse_expr("condition", src)?;
    let failed = |i: usize, message: String| {
        BlockError::failed(
            format!("{i}行目（0始まり）で条件「{src}」を評価できません: {message}"),
            format!("row {i}: cannot evaluate {src:?}: {message}"),
        )
    };
    let mut steps = Steps::new(ctx, ProgressUnit::Rows, Some(df.height()));
    let mut mask = Vec::with_capacity(df.height());
    if let Some(text) = one_text_column(&df, &e)? {
        // A condition on one text column (`direction == "deposit"`, `区分 != "振替"`) is a
        // function of that cell alone: evaluated once per distinct text (`Memo`), the first
        // error stopping the read at its row as below. The cell is the value the general
        // path below gives it (text, or null).
        let mut answers: Memo<Option<&str>, Result<bool, String>> = Memo::default();
        for (i, cell) in text.iter().enumerate() {
            if i % 65_536 == 0 {
                steps.advance_to(i as u64)?;
            }
            let answer = answers.get_or(cell, || {
                let value = cell.map_or(J::Null, J::from);
                expr::eval(&e, &|_: &str| value.clone()).map(|v| matches!(v, J::Bool(true)))
            });
            mask.push(answer.map_err(|message| failed(i, message))? == keep);
        }
    } else {
        let data = expr_columns(&df, &e)?;
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
                Err(message) => return Err(failed(i, message)),
            };
            mask.push(hit == keep);
        }
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

/// The text column a condition reads, when it reads exactly one and that one is text.
fn one_text_column<'a>(df: &'a DataFrame, e: &expr::Expr) -> R<Option<&'a StringChunked>> {
    let mut names = Vec::new();
    expr::columns(e, &mut names);
    names.sort_unstable();
    names.dedup();
    let [name] = names.as_slice() else {
        return Ok(None);
    };
    require_columns(df, &names)?;
    let column = df.column(name).map_err(pe)?;
    Ok(column.str().ok())
}

builtin!("transforms.filter_rows", filter_rows);
