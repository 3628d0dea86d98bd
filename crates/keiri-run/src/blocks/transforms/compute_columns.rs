//! `transforms.compute_columns`: its inputs and outputs are in `block_specs/transforms/transforms.compute_columns.yaml`.

use super::expr;
use super::{R, expr_columns, field, objects, one_of, parse_expr, set_column};
use crate::block::{BlockContext, BlockError, Inputs, Outputs, Warning};
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
        // Rows left empty because a column the expression reads is empty there (`a * b` with
        // no `b`), and the first such row, to say so: an empty result is not a silent one.
        let (mut blank, mut first_blank) = (0usize, None);
        let mut failed = 0usize;
        for i in 0..df.height() {
            let get = |c: &str| {
                data.get(c)
                    .and_then(|v| v.get(i))
                    .cloned()
                    .unwrap_or(J::Null)
            };
            match expr::eval(&e, &get) {
                Ok(v) => {
                    let reads_blank = || {
                        data.values()
                            .any(|column| column.get(i).is_none_or(expr::is_empty))
                    };
                    // A bare column copied keeps its blanks; that is not a missing value.
                    if v.is_null() && !matches!(e, expr::Expr::Column(_)) && reads_blank() {
                        blank += 1;
                        first_blank.get_or_insert(i);
                    }
                    out.push(v)
                }
                Err(message) => {
                    if on_error == "error" {
                        return Err(BlockError::failed(
                            format!(
                                "{i}行目（0始まり）で列 {name} の式「{src}」を計算できません: {message}"
                            ),
                            format!("row {i}: cannot compute {name} = {src}: {message}"),
                        ));
                    }
                    failed += 1;
                    errors.push(
                        json!({"row_index": i, "field": name, "expr": src, "message": message}),
                    );
                    out.push(J::Null);
                }
            }
        }
        warn_not_computed(ctx, name, src, df.height(), &errors, failed);
        if let Some(first) = first_blank {
            let total = df.height();
            let mut read: Vec<&str> = data.keys().map(String::as_str).collect();
            read.sort_unstable();
            let read = read.join(", ");
            ctx.calls.warn(Warning::new(
                "VALUES_MISSING",
                format!(
                    "列 {name} の式「{src}」: {total} 行中 {blank} 行は式が読む列（{read}）が空のため空になりました（最初は {first} 行目、0始まり）"
                ),
                format!(
                    "{name} = {src}: {blank} of {total} rows are empty because a column it reads ({read}) is empty there (first: row {first}, from 0)"
                ),
            ));
        }
        set_column(&mut df, json_column(name, &out))?;
    }
    Ok(Outputs::new()
        .with("rows", df)
        .with("errors", J::Array(errors)))
}

/// Rows whose value could not be computed under `on_error: empty` (the `errors` output lists
/// them): said once per column with the first row's reason, since a plan that does not read
/// `errors` would otherwise show only empty cells.
fn warn_not_computed(
    ctx: &BlockContext<'_>,
    name: &str,
    src: &str,
    total: usize,
    errors: &[J],
    failed: usize,
) {
    if failed == 0 {
        return;
    }
    let Some(first) = errors.len().checked_sub(failed).and_then(|k| errors.get(k)) else {
        return;
    };
    let row = first.get("row_index").and_then(J::as_u64).unwrap_or(0);
    let message = first.get("message").and_then(J::as_str).unwrap_or("");
    ctx.calls.warn(Warning::new(
        "VALUES_NOT_COMPUTED",
        format!(
            "列 {name} の式「{src}」: {total} 行中 {failed} 行は計算できず空にしました（最初は {row} 行目、0始まり: {message}）。errors 出力に全件あります"
        ),
        format!(
            "{name} = {src}: {failed} of {total} rows could not be computed and were left empty (first: row {row}, from 0: {message}); the errors output lists them all"
        ),
    ));
}

builtin!("transforms.compute_columns", compute_columns);
