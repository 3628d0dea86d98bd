//! `transforms.join`: its inputs and outputs are in `block_specs/transforms/transforms.join.yaml`.

use super::{R, field, one_of, pe, require_columns, set_column};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::limits;
use crate::value::column_names;
use polars::prelude::*;
use serde_json::{Value as J, json};
use std::collections::HashSet;

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
    let counts = KeyCounts::of(&left, &right, &keys, ctx)?;
    let (matched_left, matched_right) = (counts.matched_left, counts.matched_right);
    check_size(
        &how,
        counts.pairs,
        (left_rows, right_rows),
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

/// What the join will pair, counted by key before Polars builds its rows: the pairs (the
/// rows an inner join gives) and the rows of each side that find a partner. Each side's keys
/// are grouped and counted by Polars, and the two counts joined, so the keys match exactly as
/// the join itself matches them; a row with a null key never matches (as in SQL and Polars).
struct KeyCounts {
    pairs: u128,
    matched_left: usize,
    matched_right: usize,
}

impl KeyCounts {
    fn of(
        left: &DataFrame,
        right: &DataFrame,
        keys: &[(String, String)],
        ctx: &BlockContext<'_>,
    ) -> R<KeyCounts> {
        let key_names: Vec<String> = (0..keys.len()).map(|i| format!("__key{i}")).collect();
        let counted = |df: &DataFrame, side: fn(&(String, String)) -> &String, n: &str| {
            let renamed: Vec<Expr> = keys
                .iter()
                .zip(&key_names)
                .map(|(k, name)| col(side(k).as_str()).alias(name.as_str()))
                .collect();
            let by: Vec<Expr> = key_names.iter().map(|k| col(k.as_str())).collect();
            df.clone()
                .lazy()
                .select(renamed)
                .drop_nulls(None)
                .group_by(by)
                .agg([len().cast(DataType::UInt64).alias(n)])
        };
        let on: Vec<Expr> = key_names.iter().map(|k| col(k.as_str())).collect();
        let query = counted(left, |k| &k.0, "__left").join(
            counted(right, |k| &k.1, "__right"),
            on.clone(),
            on,
            JoinArgs::new(JoinType::Inner),
        );
        let totals = query.select([
            (col("__left") * col("__right")).sum().alias("pairs"),
            col("__left").sum().alias("left"),
            col("__right").sum().alias("right"),
        ]);
        let totals = crate::blocks::collect(totals, ctx.cancel).map_err(pe)?;
        let total = |name: &str| -> R<u64> {
            let column = totals.column(name).map_err(pe)?;
            let values = column.cast(&DataType::UInt64).map_err(pe)?;
            Ok(values.u64().map_err(pe)?.get(0).unwrap_or(0))
        };
        Ok(KeyCounts {
            pairs: u128::from(total("pairs")?),
            matched_left: total("left")? as usize,
            matched_right: total("right")? as usize,
        })
    }
}

/// Past [`crate::limits::Limits::join_rows`] rows the node stops with `LIMIT_EXCEEDED` instead
/// of taking the machine's memory: a key repeated on both sides multiplies (a join on 部門
/// where 伝票番号 was meant, or on a column that is nearly always the same).
fn check_size(
    how: &JoinType,
    pairs: u128,
    (left_rows, right_rows): (usize, usize),
    keys: &[(String, String)],
    (unmatched_left, unmatched_right): (usize, usize),
    max: u128,
) -> R<()> {
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
                left_rows, right_rows
            ),
            format!(
                "joining on {names} would give {rows} rows, past the limit of {max} (left {} rows, right {} rows)",
                left_rows, right_rows
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
