//! `transforms.join`: its inputs and outputs are in `block_specs/transforms/transforms.join.yaml`.

use super::{R, field, one_of, pe, require_columns, set_column};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::limits;
use crate::value::column_names;
use polars::prelude::*;
use rayon::prelude::*;
use serde_json::{Value as J, json};
use std::collections::HashSet;
use tokio_util::sync::CancellationToken;

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
    // Two or more keys that are whole numbers in a narrow range (a day and a yen amount) are
    // joined as one packed number, paired by keiri ([`Packed::pairing`]): the same pairs,
    // counted and found without Polars encoding each row's keys into bytes, grouping them to
    // count and hashing them again to join (the bench's 5M bank join: its join node 3.8 s
    // -> 2.9 s when Polars joined on the packed number, -> 1.65 s paired here).
    let pairing = match how {
        JoinType::Inner | JoinType::Left if keys.len() > 1 => {
            match Packed::of(&left, &right, &keys)? {
                Some(packed) => Some(packed.pairing(ctx.cancel)?),
                None => None,
            }
        }
        _ => None,
    };
    let counts = match &pairing {
        Some(pairing) => pairing.counts,
        None => KeyCounts::of(&left, &right, &keys, ctx.cancel)?,
    };
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
    let out = match pairing {
        Some(pairing) => joined_packed(pairing, (left, right), &keys, how, &suffixes[1])?,
        None => joined(left, right, &keys, how, &suffixes[1], ctx.cancel)?,
    };
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

/// The join itself, on `keys`. Rows come out in the order of the side that keeps all its
/// rows, and a row's several partners in the order of their own side (`LeftRight`; `Left`
/// alone promises only the left rows' order), so a report built from the join is the same
/// run to run.
fn joined(
    left: DataFrame,
    right: DataFrame,
    keys: &[(String, String)],
    how: JoinType,
    suffix: &str,
    cancel: &CancellationToken,
) -> R<DataFrame> {
    let left_on: Vec<Expr> = keys.iter().map(|k| col(k.0.as_str())).collect();
    let right_on: Vec<Expr> = keys.iter().map(|k| col(k.1.as_str())).collect();
    let order = match how {
        JoinType::Right => MaintainOrderJoin::RightLeft,
        _ => MaintainOrderJoin::LeftRight,
    };
    let mut args = JoinArgs::new(how)
        .with_coalesce(JoinCoalesce::CoalesceColumns)
        .with_suffix(Some(suffix.into()));
    args.maintain_order = order;
    let query = left.lazy().join(right.lazy(), left_on, right_on, args);
    crate::blocks::collect(query, cancel).map_err(pe)
}

/// One key of [`Packed`]: its values on the left and on the right, its smallest value and
/// the bit its field starts at.
type Part = (Int64Chunked, Int64Chunked, i64, u32);

/// Keys packed into one number per row: each key, a whole number (an integer, a date or a
/// time, a float with no fraction), less its smallest value on either side, shifted into a
/// field of its own of a `u64`. Two rows have the same packed number exactly when every key
/// is equal, and a row with a null key gets a null (which never matches, as before).
struct Packed {
    left: UInt64Chunked,
    right: UInt64Chunked,
}

impl Packed {
    /// The packed keys, or `None` when a key is not a whole number (text, a fraction, NaN, a
    /// float past 2^53), a key has no value at all, or the keys' ranges need more than 64 bits.
    fn of(left: &DataFrame, right: &DataFrame, keys: &[(String, String)]) -> R<Option<Packed>> {
        let mut parts: Vec<Part> = Vec::with_capacity(keys.len());
        let mut bits = 0u32;
        for (l, r) in keys {
            let (Some(lv), Some(rv)) = (
                whole_numbers(left.column(l).map_err(pe)?)?,
                whole_numbers(right.column(r).map_err(pe)?)?,
            ) else {
                return Ok(None);
            };
            let min = [lv.min(), rv.min()].into_iter().flatten().min();
            let max = [lv.max(), rv.max()].into_iter().flatten().max();
            let (Some(min), Some(max)) = (min, max) else {
                return Ok(None);
            };
            let width = 128
                - (i128::from(max) - i128::from(min))
                    .unsigned_abs()
                    .leading_zeros();
            // At most 63 bits each, so a value less the smallest fits an i64.
            if width > 63 {
                return Ok(None);
            }
            parts.push((lv, rv, min, bits));
            bits += width;
        }
        if bits > 64 {
            return Ok(None);
        }
        let pack = |side: fn(&Part) -> &Int64Chunked| -> R<UInt64Chunked> {
            let mut packed = UInt64Chunked::full(PlSmallStr::EMPTY, 0, side(&parts[0]).len());
            // Each key's field added in: a row with a null key gets a null.
            for part in &parts {
                let (values, min, shift) = (side(part), part.2, part.3);
                let field = (values - min).cast(&DataType::UInt64).map_err(pe)?;
                // A key of one value (no bits) after 64 bits of others: its field is 0.
                let field = field.u64().map_err(pe)? * 1u64.checked_shl(shift).unwrap_or(0);
                packed = &packed + &field;
            }
            Ok(packed)
        };
        Ok(Some(Packed {
            left: pack(|p| &p.0)?,
            right: pack(|p| &p.1)?,
        }))
    }

    /// The join's pairing of the rows: each side's rows sorted by their number (on every
    /// core) and the two lists walked together once, which gives each left row its run of
    /// partners (the right rows of the same number) and counts what they pair. (A binary
    /// search of the sorted right side for each left row took twice Polars' time at 5M rows,
    /// waiting on memory.) A row with a null key never pairs, as in SQL and Polars.
    fn pairing(self, cancel: &CancellationToken) -> R<Pairing> {
        let interrupted = || pe(polars_err!(ComputeError: "the run was cancelled"));
        // A side's rows with a key, by key and then row.
        let sorted = |keys: &UInt64Chunked| {
            let numbered = keys.iter().zip(0 as IdxSize..);
            let mut rows: Vec<(u64, IdxSize)> =
                numbered.filter_map(|(k, j)| Some((k?, j))).collect();
            rows.par_sort_unstable();
            rows
        };
        let (left, right) = rayon::join(|| sorted(&self.left), || sorted(&self.right));
        let rows = self.left.len();
        drop(self);
        if cancel.is_cancelled() {
            return Err(interrupted());
        }
        let mut partners: Vec<(IdxSize, IdxSize)> = vec![(0, 0); rows];
        let mut counts = KeyCounts::default();
        // Both lists ascend, so the walk only moves forward through `right`, and meets each
        // key once.
        let (mut next, mut last, mut run) = (0, None, (0, 0));
        for &(key, i) in &left {
            if last != Some(key) {
                while right.get(next).is_some_and(|e| e.0 < key) {
                    next += 1;
                }
                let start = next;
                while right.get(next).is_some_and(|e| e.0 == key) {
                    next += 1;
                }
                (last, run) = (Some(key), (start as IdxSize, (next - start) as IdxSize));
                counts.matched_right += next - start;
            }
            partners[i as usize] = run;
            counts.pairs += u128::from(run.1);
            counts.matched_left += usize::from(run.1 > 0);
        }
        Ok(Pairing {
            right,
            partners,
            counts,
        })
    }
}

/// [`Packed::pairing`]: the right side's rows by packed number, each left row's run of them
/// (where it starts in `right`, and its length), and the counts.
struct Pairing {
    right: Vec<(u64, IdxSize)>,
    partners: Vec<(IdxSize, IdxSize)>,
    counts: KeyCounts,
}

impl Pairing {
    /// The rows the join pairs, as two lists of row numbers, one per side: the left rows in
    /// their order, each beside its partners in theirs, the order [`joined`] gives. With
    /// `keep_unpaired` (a left join) a left row without a partner, or with a null key, comes
    /// once beside a null. Written a run of left rows at a time on every core.
    fn pairs(self, keep_unpaired: bool) -> (IdxCa, IdxCa) {
        let Pairing {
            right, partners, ..
        } = self;
        // A null partner: past every row, turned into a null below.
        const NONE: IdxSize = IdxSize::MAX;
        const RUN: usize = 1 << 16;
        let runs: Vec<(Vec<IdxSize>, Vec<IdxSize>)> = partners
            .par_chunks(RUN)
            .enumerate()
            .map(|(run, found)| {
                let (mut lefts, mut rights) = (Vec::new(), Vec::new());
                for (i, &(start, len)) in (run * RUN..).zip(found) {
                    let (start, len) = (start as usize, len as usize);
                    if len == 0 && keep_unpaired {
                        lefts.push(i as IdxSize);
                        rights.push(NONE);
                    }
                    lefts.extend(std::iter::repeat_n(i as IdxSize, len));
                    rights.extend(right[start..start + len].iter().map(|e| e.1));
                }
                (lefts, rights)
            })
            .collect();
        drop((partners, right));
        let total = runs.iter().map(|r| r.0.len()).sum();
        let (mut lefts, mut rights) = (Vec::with_capacity(total), Vec::with_capacity(total));
        for (l, r) in runs {
            lefts.extend(l);
            rights.extend(r);
        }
        let lefts = IdxCa::from_vec(PlSmallStr::EMPTY, lefts);
        let rights = if keep_unpaired {
            let partner = rights.into_iter().map(|j| (j != NONE).then_some(j));
            IdxCa::from_iter_options(PlSmallStr::EMPTY, partner)
        } else {
            IdxCa::from_vec(PlSmallStr::EMPTY, rights)
        };
        (lefts, rights)
    }
}

/// [`joined`] on packed keys: the pairs of [`Pairing::pairs`], and each side's columns
/// gathered at them, the right side's key columns left out (the join would have coalesced
/// them into the left's). The same rows and columns in the same order as [`joined`] (the
/// proptest below). Polars' join on the packed number held both sides with it added as a
/// column and gathered it into the joined rows, to be dropped after: at the 5M bank join the
/// node's peak, the run's, held about 120 MB more.
fn joined_packed(
    pairing: Pairing,
    (left, right): (DataFrame, DataFrame),
    keys: &[(String, String)],
    how: JoinType,
    suffix: &str,
) -> R<DataFrame> {
    let right = right.drop_many(keys.iter().map(|k| k.1.as_str()));
    let (left_rows, right_rows) = pairing.pairs(matches!(how, JoinType::Left));
    let mut out = gather(&left, &left_rows)?;
    drop(left_rows);
    let right = gather(&right, &right_rows)?;
    drop(right_rows);
    // A right column named like a left one (a left key's name: the others were suffixed on
    // both sides above) takes the suffix, as the join gives it; a name still taken is
    // Polars' duplicate error, as the join's.
    let taken: HashSet<String> = column_names(&out).into_iter().collect();
    let columns: Vec<Column> = right
        .into_columns()
        .into_iter()
        .map(|c| match taken.contains(c.name().as_str()) {
            true => {
                let name = format!("{}{suffix}", c.name());
                c.with_name(name.into())
            }
            false => c,
        })
        .collect();
    out.hstack_mut(&columns).map_err(pe)?;
    Ok(out)
}

/// The rows of `df` at `rows` (a null row number: a row of nulls), its columns gathered on
/// every core. A text column in several pieces (as `csv.read` gives one) is made one piece
/// first: Polars gathers a one-piece column's texts as references into its buffers, but
/// copies each text, one at a time, out of a column in pieces (at the 1M bank join the
/// copies made the join node 1.4x slower than Polars' own join).
fn gather(df: &DataFrame, rows: &IdxCa) -> R<DataFrame> {
    let columns = df
        .columns()
        .par_iter()
        .map(|column| {
            let text = matches!(column.dtype(), DataType::String | DataType::Binary);
            match text && column.n_chunks() > 1 {
                true => column.rechunk().take(rows),
                false => column.take(rows),
            }
        })
        .collect::<PolarsResult<Vec<Column>>>()
        .map_err(pe)?;
    DataFrame::new(rows.len(), columns).map_err(pe)
}

/// A key column's values as `i64` when every one is a whole number: integers (a `u64` past
/// `i64::MAX` is not), dates and times (their day or tick counts), booleans, and floats with
/// no fraction within ±2^53 (`-0.0` is 0, as the join takes it equal to `0.0`).
fn whole_numbers(column: &Column) -> R<Option<Int64Chunked>> {
    let dtype = column.dtype();
    let physical = if dtype.is_float() {
        let floats = column.cast(&DataType::Float64).map_err(pe)?;
        const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
        let whole = floats
            .f64()
            .map_err(pe)?
            .iter()
            .flatten()
            .all(|v| v.is_finite() && v.fract() == 0.0 && v.abs() <= EXACT);
        if !whole {
            return Ok(None);
        }
        floats
    } else if dtype.is_integer() || dtype.is_temporal() || dtype.is_bool() {
        column.to_physical_repr()
    } else {
        return Ok(None);
    };
    match physical.strict_cast(&DataType::Int64) {
        Ok(values) => Ok(Some(values.i64().map_err(pe)?.clone())),
        Err(_) => Ok(None),
    }
}

/// What the join will pair, counted by key before Polars builds its rows: the pairs (the
/// rows an inner join gives) and the rows of each side that find a partner. Each side's keys
/// are grouped and counted by Polars, and the two counts joined, so the keys match exactly as
/// the join itself matches them; a row with a null key never matches (as in SQL and Polars).
/// (Keys packed into one number are counted by [`Packed::pairing`].)
#[derive(Debug, Default, Clone, Copy, PartialEq)]
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
        cancel: &CancellationToken,
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
        let totals = crate::blocks::collect(totals, cancel).map_err(pe)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn frame(columns: Vec<Column>) -> DataFrame {
        DataFrame::new_infer_height(columns).unwrap()
    }

    fn keys() -> Vec<(String, String)> {
        vec![
            ("日付".to_string(), "伝票日付".to_string()),
            ("金額".to_string(), "金額".to_string()),
            ("部門".to_string(), "部門".to_string()),
        ]
    }

    /// The join on packed keys next to the join on the keys themselves.
    /// `None` when the keys do not pack, which must be because a key has no value at all.
    fn both(left: &DataFrame, right: &DataFrame, how: JoinType) -> Option<(DataFrame, DataFrame)> {
        let cancel = CancellationToken::new();
        let Some(packed) = Packed::of(left, right, &keys()).unwrap() else {
            let valueless = |df: &DataFrame, name: &str| {
                let column = df.column(name).unwrap();
                column.null_count() == column.len()
            };
            assert!(
                keys()
                    .iter()
                    .any(|(l, r)| valueless(left, l) && valueless(right, r))
            );
            return None;
        };
        // Counted as Polars counts the keys themselves.
        let pairing = packed.pairing(&cancel).unwrap();
        let counted = KeyCounts::of(left, right, &keys(), &cancel).unwrap();
        assert_eq!(pairing.counts, counted);
        let sides = (left.clone(), right.clone());
        let by_packed = joined_packed(pairing, sides, &keys(), how.clone(), "_right").unwrap();
        let plain = joined(left.clone(), right.clone(), &keys(), how, "_right", &cancel).unwrap();
        Some((by_packed, plain))
    }

    /// Rows of a side: a day (a few days, sometimes none), an amount (a few yen values, 0.0
    /// and -0.0 among them, sometimes none), a department number, and the row's number. The
    /// values are close together, so keys packed into overlapping fields would collide.
    fn side(rows: &[(Option<i32>, Option<f64>, i64)], date: &str, id: &str) -> DataFrame {
        let days: Vec<Option<i32>> = rows.iter().map(|r| r.0).collect();
        let amounts: Vec<Option<f64>> = rows.iter().map(|r| r.1).collect();
        let departments: Vec<i64> = rows.iter().map(|r| r.2).collect();
        let ids: Vec<i64> = (0..rows.len() as i64).collect();
        frame(vec![
            Column::new(date.into(), days)
                .cast(&DataType::Date)
                .unwrap(),
            Column::new("金額".into(), amounts),
            Column::new("部門".into(), departments),
            Column::new(id.into(), ids),
            // A column of the same name on both sides: suffixed on the right. Texts past 12
            // bytes, which Polars keeps in buffers, not beside each row.
            Column::new(
                "摘要".into(),
                (0..rows.len())
                    .map(|i| format!("{id} {i} の摘要"))
                    .collect::<Vec<_>>(),
            ),
        ])
    }

    fn row() -> impl Strategy<Value = (Option<i32>, Option<f64>, i64)> {
        (
            prop::option::weighted(0.9, 19_800..19_804i32),
            prop::option::weighted(
                0.9,
                prop::sample::select(vec![0.0, -0.0, 1.0, 2.0, -1.0, 110.0, -1_000.0]),
            ),
            -2..2i64,
        )
    }

    proptest! {
        /// Packed or not, the join gives the same rows in the same order, with the same
        /// columns: inner and left, with repeated keys, nulls and both zeros.
        #[test]
        fn packed_keys_join_as_the_keys_do(
            left in prop::collection::vec(row(), 0..40),
            right in prop::collection::vec(row(), 0..40),
        ) {
            let (left, right) = (side(&left, "日付", "行"), side(&right, "伝票日付", "伝票"));
            // Each side also in two pieces (as `csv.read` gives a table), their texts
            // gathered from both.
            let twice = |df: &DataFrame| df.vstack(df).unwrap();
            let (left_twice, right_twice) = (twice(&left), twice(&right));
            prop_assume!(left_twice.first_col_n_chunks() == 2 || left.height() == 0);
            for how in [JoinType::Inner, JoinType::Left] {
                if let Some((by_packed, plain)) = both(&left_twice, &right_twice, how.clone()) {
                    prop_assert!(by_packed.equals_missing(&plain), "{by_packed}\n{plain}");
                }
                let Some((by_packed, plain)) = both(&left, &right, how) else {
                    continue;
                };
                prop_assert_eq!(column_names(&by_packed), column_names(&plain));
                prop_assert!(by_packed.equals_missing(&plain), "{by_packed}\n{plain}");
            }
        }
    }

    /// By hand: the left's 2024-03-31 / 110 / 0 pairs with the right's rows 0 and 2 (row 1 is
    /// another department, row 3 another amount); its -0.0 row pairs with the right's 0.0.
    #[test]
    fn packed_keys_pair_equal_keys_only() {
        let left = side(
            &[
                (Some(19_813), Some(110.0), 0),
                (Some(19_813), Some(-0.0), 1),
            ],
            "日付",
            "行",
        );
        let right = side(
            &[
                (Some(19_813), Some(110.0), 0),
                (Some(19_813), Some(110.0), 1),
                (Some(19_813), Some(110.0), 0),
                (Some(19_813), Some(0.0), 1),
            ],
            "伝票日付",
            "伝票",
        );
        let (by_packed, _) = both(&left, &right, JoinType::Inner).unwrap();
        let pairs: Vec<(i64, i64)> = by_packed
            .column("行")
            .unwrap()
            .i64()
            .unwrap()
            .into_no_null_iter()
            .zip(
                by_packed
                    .column("伝票")
                    .unwrap()
                    .i64()
                    .unwrap()
                    .into_no_null_iter(),
            )
            .collect();
        assert_eq!(pairs, [(0, 0), (0, 2), (1, 3)]);
    }

    /// A right column named as a left key (the right's own key has another name) takes the
    /// suffix, packed or not; the left join keeps the unpaired left row beside nulls.
    #[test]
    fn a_right_column_named_as_a_left_key_takes_the_suffix() {
        let left = frame(vec![
            Column::new("日付".into(), [19_813i32, 19_814])
                .cast(&DataType::Date)
                .unwrap(),
            Column::new("金額".into(), [110i64, 220]),
        ]);
        let right = frame(vec![
            Column::new("伝票日付".into(), [19_813i32])
                .cast(&DataType::Date)
                .unwrap(),
            Column::new("金額".into(), [110i64]),
            Column::new("日付".into(), ["4月1日入力"]),
        ]);
        let keys = [
            ("日付".to_string(), "伝票日付".to_string()),
            ("金額".to_string(), "金額".to_string()),
        ];
        let cancel = CancellationToken::new();
        let packed = Packed::of(&left, &right, &keys).unwrap().unwrap();
        let pairing = packed.pairing(&cancel).unwrap();
        let sides = (left.clone(), right.clone());
        let by_packed = joined_packed(pairing, sides, &keys, JoinType::Left, "_right").unwrap();
        let plain = joined(left, right, &keys, JoinType::Left, "_right", &cancel).unwrap();
        assert_eq!(column_names(&by_packed), ["日付", "金額", "日付_right"]);
        assert_eq!(column_names(&plain), column_names(&by_packed));
        assert!(by_packed.equals_missing(&plain), "{by_packed}\n{plain}");
        let notes: Vec<Option<&str>> = by_packed
            .column("日付_right")
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .collect();
        assert_eq!(notes, [Some("4月1日入力"), None]);
    }

    /// Keys that are not whole numbers, or too wide together, are joined as they are.
    #[test]
    fn keys_that_do_not_pack_are_left_alone() {
        let whole = |values: Column| whole_numbers(&values).unwrap().is_some();
        assert!(whole(Column::new(
            "a".into(),
            [1.0, -0.0, 9_007_199_254_740_992.0]
        )));
        assert!(!whole(Column::new("a".into(), [1.0, 0.5])));
        assert!(!whole(Column::new("a".into(), [1.0, f64::NAN])));
        assert!(!whole(Column::new("a".into(), [9_007_199_254_740_994.0])));
        assert!(!whole(Column::new("a".into(), [u64::MAX])));
        assert!(!whole(Column::new("a".into(), ["1"])));
        assert!(whole(Column::new("a".into(), [true, false])));
        // Two keys of 2^40 values each need 82 bits.
        let wide = |id: &str| {
            frame(vec![
                Column::new("a".into(), [0i64, 1 << 40]),
                Column::new("b".into(), [0i64, 1 << 40]),
                Column::new(id.into(), [1i64, 2]),
            ])
        };
        let ab = [
            ("a".to_string(), "a".to_string()),
            ("b".to_string(), "b".to_string()),
        ];
        assert!(Packed::of(&wide("l"), &wide("r"), &ab).unwrap().is_none());
        // A key with no value on either side.
        let empty = frame(vec![
            Column::new("a".into(), [None::<i64>]),
            Column::new("b".into(), [1i64]),
        ]);
        assert!(Packed::of(&empty, &empty, &ab).unwrap().is_none());
    }

    /// A row's several partners come in the right side's order (the order the block
    /// promises; with `Left` alone Polars promises only the left rows' order), with the keys
    /// packed or not.
    #[test]
    fn partners_come_in_the_right_sides_order() {
        let n = 200_000i64;
        // A day and an amount drawn for each row number (a fixed mix of its bits); the right
        // side holds the same rows shuffled (row j is the left's row j × 7,777,777 mod n, a
        // permutation as the two are coprime).
        let key = |i: i64| {
            let mixed = (i as u64 + 1)
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .rotate_left(29);
            (
                (mixed % 365) as i64,
                ((mixed >> 20) % (n as u64 / 2)) as i64,
            )
        };
        let side = |id: &str, source: &dyn Fn(i64) -> i64| {
            frame(vec![
                Column::new(
                    "日".into(),
                    (0..n).map(|j| key(source(j)).0).collect::<Vec<_>>(),
                ),
                Column::new(
                    "金額".into(),
                    (0..n).map(|j| key(source(j)).1).collect::<Vec<_>>(),
                ),
                Column::new(id.into(), (0..n).collect::<Vec<_>>()),
            ])
        };
        let (left, right) = (side("行", &|i| i), side("伝票", &|j| (j * 7_777_777) % n));
        let keys = [
            ("日".to_string(), "日".to_string()),
            ("金額".to_string(), "金額".to_string()),
        ];
        // Each day and amount's rows on one side times those on the other.
        let mut rows_of = std::collections::HashMap::new();
        for i in 0..n {
            *rows_of.entry(key(i)).or_insert(0usize) += 1;
        }
        let pairs = rows_of.values().map(|c| c * c).sum::<usize>();
        let cancel = CancellationToken::new();
        let packed = |how: JoinType| {
            let packed = Packed::of(&left, &right, &keys).unwrap().unwrap();
            let pairing = packed.pairing(&cancel).unwrap();
            let sides = (left.clone(), right.clone());
            joined_packed(pairing, sides, &keys, how, "_right").unwrap()
        };
        for how in [JoinType::Inner, JoinType::Left] {
            let plain = joined(
                left.clone(),
                right.clone(),
                &keys,
                how.clone(),
                "_right",
                &cancel,
            );
            for out in [plain.unwrap(), packed(how)] {
                assert_eq!(out.height(), pairs);
                let rows = out.column("行").unwrap().i64().unwrap().clone();
                let partners = out.column("伝票").unwrap().i64().unwrap().clone();
                let order: Vec<(i64, i64)> = rows
                    .into_no_null_iter()
                    .zip(partners.into_no_null_iter())
                    .collect();
                let out_of_order = order.windows(2).filter(|w| w[0] >= w[1]).count();
                assert_eq!(out_of_order, 0, "pairs out of the sides' order");
            }
        }
    }
}
