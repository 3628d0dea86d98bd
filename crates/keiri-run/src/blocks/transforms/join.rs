//! `transforms.join`: its inputs and outputs are in `block_specs/transforms/transforms.join.yaml`.

use super::expr;
use super::{R, cells, field, one_of, pe, require_columns, set_column};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::limits;
use crate::value::column_names;
use polars::prelude::*;
use serde_json::{Value as J, json};
use std::collections::{HashMap, HashSet};

// ---------------------------------------------------------------------------------------
// join, pick_value

fn join(ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let mut left = inputs.table("left")?;
    let mut right = inputs.table("right")?;
    let keys = match inputs.json("keys") {
        Some(J::String(s)) => vec![(s.clone(), s)],
        Some(J::Array(items)) => items
            .into_iter()
            .map(|k| match k {
                J::String(s) => Ok((s.clone(), s)),
                J::Object(o) => Ok((
                    field(&o, "left", "keys")?.to_owned(),
                    field(&o, "right", "keys")?.to_owned(),
                )),
                _ => Err(BlockError::input_invalid(
                    "keys",
                    "列名か {left, right} が必要です",
                    "expected names or {left, right}",
                )),
            })
            .collect::<R<Vec<_>>>()?,
        _ => {
            return Err(BlockError::input_invalid(
                "keys",
                "必須です",
                "it is required",
            ));
        }
    };
    if keys.is_empty() {
        return Err(BlockError::input_invalid(
            "keys",
            "1つ以上必要です",
            "at least one key is required",
        ));
    }
    let how = match one_of(inputs, "how", &["inner", "left", "right", "outer"], "left")? {
        "inner" => JoinType::Inner,
        "right" => JoinType::Right,
        "outer" => JoinType::Full,
        _ => JoinType::Left,
    };
    let suffixes = inputs
        .strings("suffixes")?
        .unwrap_or_else(|| vec!["_left".into(), "_right".into()]);
    if suffixes.len() != 2 {
        return Err(BlockError::input_invalid(
            "suffixes",
            "2つ（左, 右）必要です",
            "expected two suffixes (left, right)",
        ));
    }
    require_columns(&left, keys.iter().map(|k| &k.0))?;
    require_columns(&right, keys.iter().map(|k| &k.1))?;
    // Keys of different types (a number column against CSV text) are joined as text.
    for (l, r) in &keys {
        let (lt, rt) = (
            left.column(l).map_err(pe)?.dtype().clone(),
            right.column(r).map_err(pe)?.dtype().clone(),
        );
        if lt != rt {
            let lc = left
                .column(l)
                .map_err(pe)?
                .cast(&DataType::String)
                .map_err(pe)?;
            let rc = right
                .column(r)
                .map_err(pe)?
                .cast(&DataType::String)
                .map_err(pe)?;
            set_column(&mut left, lc)?;
            set_column(&mut right, rc)?;
        }
    }
    let (left_rows, right_rows) = (left.height(), right.height());
    let key_text = |df: &DataFrame, names: Vec<&String>| -> R<Vec<Option<String>>> {
        let cols: Vec<Vec<J>> = names.iter().map(|n| cells(df, n)).collect::<R<_>>()?;
        Ok((0..df.height())
            .map(|i| {
                // A null key never matches (as in SQL and Polars).
                if cols.iter().any(|c| c[i].is_null()) {
                    None
                } else {
                    Some(
                        cols.iter()
                            .map(|c| expr::to_text(&c[i]))
                            .collect::<Vec<_>>()
                            .join("\u{1f}"),
                    )
                }
            })
            .collect())
    };
    let lk = key_text(&left, keys.iter().map(|k| &k.0).collect())?;
    let rk = key_text(&right, keys.iter().map(|k| &k.1).collect())?;
    let rset: HashSet<&String> = rk.iter().flatten().collect();
    let lset: HashSet<&String> = lk.iter().flatten().collect();
    let matched_left = lk.iter().flatten().filter(|k| rset.contains(k)).count();
    let matched_right = rk.iter().flatten().filter(|k| lset.contains(k)).count();
    check_size(
        &how,
        &lk,
        &rk,
        &keys,
        (left_rows - matched_left, right_rows - matched_right),
        ctx.limits.join_rows,
    )?;
    // Same-named non-key columns get the suffixes on both sides.
    let same_keys: HashSet<&String> = keys
        .iter()
        .filter(|(l, r)| l == r)
        .map(|(l, _)| l)
        .collect();
    let right_names = column_names(&right);
    let left_key_names: Vec<&String> = keys.iter().map(|k| &k.0).collect();
    let right_key_names: Vec<&String> = keys.iter().map(|k| &k.1).collect();
    for name in column_names(&left) {
        if right_names.contains(&name)
            && !same_keys.contains(&name)
            && !left_key_names.contains(&&name)
            && !right_key_names.contains(&&name)
        {
            left.rename(&name, format!("{name}{}", suffixes[0]).into())
                .map_err(pe)?;
            right
                .rename(&name, format!("{name}{}", suffixes[1]).into())
                .map_err(pe)?;
        }
    }
    let left_on: Vec<Expr> = keys.iter().map(|k| col(k.0.as_str())).collect();
    let right_on: Vec<Expr> = keys.iter().map(|k| col(k.1.as_str())).collect();
    // Rows come out in the order of the side that keeps all its rows (Polars' default
    // order is unspecified), so a report built from the join is stable run to run.
    let order = match how {
        JoinType::Right => MaintainOrderJoin::Right,
        JoinType::Full => MaintainOrderJoin::LeftRight,
        _ => MaintainOrderJoin::Left,
    };
    let mut args = JoinArgs::new(how)
        .with_coalesce(JoinCoalesce::CoalesceColumns)
        .with_suffix(Some(suffixes[1].as_str().into()));
    args.maintain_order = order;
    let query = left.lazy().join(right.lazy(), left_on, right_on, args);
    let out = crate::blocks::collect(query, ctx.cancel).map_err(pe)?;
    let summary = json!({
        "left_rows": left_rows,
        "right_rows": right_rows,
        "rows": out.height(),
        "matched_left_rows": matched_left,
        "unmatched_left_rows": left_rows - matched_left,
        "matched_right_rows": matched_right,
        "unmatched_right_rows": right_rows - matched_right,
    });
    Ok(Outputs::new().with("rows", out).with("summary", summary))
}

/// The rows the join will produce, counted from the keys before Polars builds them: a key
/// repeated on both sides multiplies (a join on 部門 where 伝票番号 was meant, or on a column
/// that is nearly always the same), and past [`crate::limits::Limits::join_rows`] the node stops with
/// `LIMIT_EXCEEDED` instead of taking the machine's memory.
fn check_size(
    how: &JoinType,
    lk: &[Option<String>],
    rk: &[Option<String>],
    keys: &[(String, String)],
    (unmatched_left, unmatched_right): (usize, usize),
    max: u128,
) -> R<()> {
    let mut right_count: HashMap<&str, u128> = HashMap::new();
    for k in rk.iter().flatten() {
        *right_count.entry(k.as_str()).or_insert(0) += 1;
    }
    let pairs: u128 = lk
        .iter()
        .flatten()
        .map(|k| right_count.get(k.as_str()).copied().unwrap_or(0))
        .sum();
    let rows = pairs
        + match how {
            JoinType::Inner => 0,
            JoinType::Right => unmatched_right as u128,
            JoinType::Full => (unmatched_left + unmatched_right) as u128,
            _ => unmatched_left as u128,
        };
    if rows <= max {
        return Ok(());
    }
    let names: Vec<&str> = keys.iter().map(|(l, _)| l.as_str()).collect();
    let names = names.join(", ");
    Err(limits::exceeded(
        (
            format!(
                "キー（{names}）で結合すると {rows} 行になり、上限の {max} 行を超えます（左 {} 行 × 右 {} 行）",
                lk.len(),
                rk.len()
            ),
            format!(
                "joining on {names} would give {rows} rows, past the limit of {max} (left {} rows, right {} rows)",
                lk.len(),
                rk.len()
            ),
        ),
        (
            "キーの値が両側で何度も繰り返されています。一意になるキー（伝票番号など）を使うか、先に transforms.group_aggregate で集計してください",
            "the key values repeat on both sides: join on a key that is unique on one side (a voucher number), or aggregate first with transforms.group_aggregate",
        ),
        "join_rows",
    ))
}

builtin!("transforms.join", join);
