//! `transforms.compute_columns`: its inputs and outputs are in `block_specs/transforms/transforms.compute_columns.yaml`.

use super::expr;
use super::{R, expr_columns, field, objects, one_of, parse_expr, set_column};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::cancelled;
use crate::value::json_column;
use serde_json::{Value as J, json};

fn compute_columns(ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let mut df = inputs.table("rows")?;
    let specs = objects(inputs, "columns", true)?;
    let on_error = one_of(inputs, "on_error", &["empty", "error"], "empty")?;
    let mut errors = Vec::new();
    for spec in &specs {
        cancelled(ctx)?;
        let name = field(spec, "name", "columns")?;
        let src = field(spec, "expr", "columns")?;
        let e = parse_expr("columns", src)?;
        let data = expr_columns(&df, &e)?;
        let mut out = Vec::with_capacity(df.height());
        for i in 0..df.height() {
            let get = |c: &str| {
                data.get(c)
                    .and_then(|v| v.get(i))
                    .cloned()
                    .unwrap_or(J::Null)
            };
            match expr::eval(&e, &get) {
                Ok(v) => out.push(v),
                Err(message) => {
                    if on_error == "error" {
                        return Err(BlockError::failed(
                            format!(
                                "{i}行目（0始まり）で列 {name} の式「{src}」を計算できません: {message}"
                            ),
                            format!("row {i}: cannot compute {name} = {src}: {message}"),
                        ));
                    }
                    errors.push(
                        json!({"row_index": i, "field": name, "expr": src, "message": message}),
                    );
                    out.push(J::Null);
                }
            }
        }
        set_column(&mut df, json_column(name, &out))?;
    }
    Ok(Outputs::new()
        .with("rows", df)
        .with("errors", J::Array(errors)))
}

builtin!("transforms.compute_columns", compute_columns);
