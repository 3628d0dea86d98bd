//! `transforms/*` blocks: reshaping and normalising tables.
//!
//! Tables stay Polars frames from block to block; column-wise work (grouping, joining,
//! sorting, de-duplicating) goes through Polars' lazy engine, and cell-wise parsing of
//! Japanese values goes through [`crate::jp`], the one place those formats are read.
//! Row expressions (`filter_rows`, `compute_columns`) are evaluated by [`expr`] on the
//! columns they name only, so a wide table is never turned into JSON.

mod coerce_types;
mod compute_columns;
mod compute_tax;
mod concat_rows;
mod deduplicate;
pub(crate) mod expr;
mod filter_rows;
mod fiscal_period;
pub(crate) mod group_aggregate;
mod join;
mod normalize_amounts;
mod normalize_dates;
mod pick_value;
mod pivot;
mod rename_columns;
mod select_columns;
mod sort_rows;
mod unpivot;

use std::collections::HashMap;

use chrono::NaiveDate;
use polars::prelude::*;
use serde_json::{Value as J, json};

use crate::block::{BlockError, Inputs};
use crate::blocks::kit::memo::Memo;
use crate::jp;
use crate::value::{column_names, column_to_json, table_error};

type R<T> = Result<T, BlockError>;

fn pe(e: PolarsError) -> BlockError {
    table_error(&e)
}

/// Fails with the column and the real columns when one of `names` is not in `df`.
fn require_columns<'a>(df: &DataFrame, names: impl IntoIterator<Item = &'a String>) -> R<()> {
    let existing = column_names(df);
    for n in names {
        if !existing.contains(n) {
            return Err(BlockError::missing_column(n, &existing));
        }
    }
    Ok(())
}

fn cells(df: &DataFrame, name: &str) -> R<Vec<J>> {
    let column = df
        .column(name)
        .map_err(|_| BlockError::missing_column(name, &column_names(df)))?;
    column_to_json(column)
}

fn set_column(df: &mut DataFrame, column: Column) -> R<()> {
    df.with_column(column).map_err(pe)?;
    Ok(())
}

fn one_of<'a>(inputs: &'a Inputs, key: &str, allowed: &[&'a str], default: &'a str) -> R<&'a str> {
    let v = inputs.str(key)?.unwrap_or(default);
    if allowed.contains(&v) {
        Ok(v)
    } else {
        let list = allowed.join(", ");
        Err(BlockError::input_invalid(
            key,
            &format!("{v} は使えません（{list}）"),
            &format!("{v} is not one of {list}"),
        ))
    }
}

/// A list input of objects (`columns: [{field, to}]`, `by: [{field, order}]`, …).
fn objects(inputs: &Inputs, key: &str, required: bool) -> R<Vec<serde_json::Map<String, J>>> {
    match inputs.json(key) {
        None if required => Err(BlockError::input_invalid(key, "必須です", "it is required")),
        None => Ok(Vec::new()),
        Some(J::Array(items)) => items
            .into_iter()
            .map(|i| match i {
                J::Object(o) => Ok(o),
                _ => Err(BlockError::input_invalid(
                    key,
                    "オブジェクトの配列が必要です",
                    "expected a list of objects",
                )),
            })
            .collect(),
        Some(_) => Err(BlockError::input_invalid(
            key,
            "オブジェクトの配列が必要です",
            "expected a list of objects",
        )),
    }
}

fn field<'a>(o: &'a serde_json::Map<String, J>, key: &str, input: &str) -> R<&'a str> {
    o.get(key).and_then(J::as_str).ok_or_else(|| {
        BlockError::input_invalid(
            input,
            &format!("各要素に {key}（文字列）が必要です"),
            &format!("each item needs a string {key}"),
        )
    })
}

/// Warns `VALUES_UNREADABLE` for the values of column `field` a normalising block could not
/// read (`errors[from..]`, as [`error_entry`] made them) out of `total` rows, with the first
/// one as an example and what `on_error` did with them (`keep` or `empty`).
fn warn_unreadable(
    ctx: &crate::block::BlockContext<'_>,
    errors: &[J],
    field: &str,
    total: usize,
    on_error: &str,
    what: (&str, &str),
) {
    let Some(first) = errors.first() else {
        return;
    };
    let example = match first.get("value") {
        Some(J::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    let n = errors.len();
    let (done_ja, done_en) = if on_error == "empty" {
        ("空にしました", "they were left empty")
    } else {
        ("元の値のまま残しています", "they were kept as they were")
    };
    ctx.calls.warn(crate::block::Warning::new(
        "VALUES_UNREADABLE",
        format!(
            "列 {field} の {total} 行中 {n} 件を{}として読めませんでした（例: {example}）。{done_ja}",
            what.0
        ),
        format!(
            "{n} of {total} values of {field} are not {} (e.g. {example}): {done_en}",
            what.1
        ),
    ));
}

fn error_entry(row_index: usize, field: &str, value: &J, message: &str) -> J {
    json!({"row_index": row_index, "field": field, "value": value, "message": message})
}

fn fail_at(
    row_index: usize,
    field: &str,
    value: &J,
    message_ja: &str,
    message_en: &str,
) -> BlockError {
    BlockError::failed(
        format!(
            "{}行目（0始まり）の列 {field} の値 {value} を{message_ja}",
            row_index
        ),
        format!("row {row_index}, column {field}: {value} {message_en}"),
    )
}

/// A cell as a date: text in any Japanese or western form, a `format` if given, an Excel
/// serial number, or an 8-digit `YYYYMMDD` number.
fn cell_date(v: &J, format: Option<&str>) -> Option<NaiveDate> {
    match v {
        J::String(s) => text_date(s, format),
        J::Number(n) => {
            let x = n.as_f64()?;
            if (10_000_101.0..=99_991_231.0).contains(&x) && x.fract() == 0.0 {
                jp::parse_date(&(x as i64).to_string())
            } else {
                jp::excel_serial_date(x)
            }
        }
        _ => None,
    }
}

/// A text cell as a date (see [`cell_date`]).
fn text_date(s: &str, format: Option<&str>) -> Option<NaiveDate> {
    match format {
        Some(f) => NaiveDate::parse_from_str(jp::fold_width(s).trim(), f).ok(),
        // An Excel serial number exported as text (45383) is five digits.
        None => jp::parse_date(s).or_else(|| {
            let t = s.trim();
            (t.len() == 5 && t.bytes().all(|b| b.is_ascii_digit()))
                .then(|| t.parse().ok())
                .flatten()
                .and_then(jp::excel_serial_date)
        }),
    }
}

fn date_column(name: &str, dates: &[Option<NaiveDate>]) -> R<Column> {
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default();
    let days: Vec<Option<i32>> = dates
        .iter()
        .map(|d| d.map(|d| (d - epoch).num_days() as i32))
        .collect();
    Column::new(name.into(), days)
        .cast(&DataType::Date)
        .map_err(pe)
}

fn is_blank(v: &J) -> bool {
    match v {
        J::Null => true,
        J::String(s) => s.trim().is_empty(),
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------
// compute_columns, filter_rows

fn parse_expr(key: &str, src: &str) -> R<expr::Expr> {
    expr::parse(src).map_err(|e| {
        BlockError::input_invalid(
            key,
            &format!("式「{src}」を解釈できません: {e}"),
            &format!("cannot parse {src:?}: {e}"),
        )
    })
}

/// The cells of the columns an expression reads, checked against the table.
fn expr_columns(df: &DataFrame, e: &expr::Expr) -> R<HashMap<String, Vec<J>>> {
    let mut names = Vec::new();
    expr::columns(e, &mut names);
    require_columns(df, &names)?;
    names
        .into_iter()
        .map(|n| cells(df, &n).map(|c| (n, c)))
        .collect()
}

fn num(x: f64) -> J {
    expr::number(x)
}

const ROW_INDEX: &str = "__keiri_row_index";

/// Whole-yen columns are integers, anything with a fraction is a float.
fn number_column(name: &str, values: &[Option<f64>]) -> R<Column> {
    if values
        .iter()
        .flatten()
        .all(|x| x.fract() == 0.0 && x.abs() < 9e15)
    {
        Ok(Column::new(
            name.into(),
            values
                .iter()
                .map(|v| v.map(|x| x as i64))
                .collect::<Vec<_>>(),
        ))
    } else {
        Ok(Column::new(name.into(), values.to_vec()))
    }
}

/// The dates of a column: Date columns as they are, text and numbers parsed.
fn column_dates(column: &Column, format: Option<&str>) -> R<Vec<(Option<NaiveDate>, bool)>> {
    // (date, whether the cell held something)
    match column.dtype() {
        DataType::Date => {
            let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default();
            let phys = column.cast(&DataType::Int32).map_err(pe)?;
            Ok(phys
                .i32()
                .map_err(pe)?
                .iter()
                .map(|d| {
                    (
                        d.and_then(|d| {
                            epoch.checked_add_signed(chrono::Duration::days(i64::from(d)))
                        }),
                        d.is_some(),
                    )
                })
                .collect())
        }
        DataType::String => {
            // Each distinct text is read once: a journal of a million rows holds a few
            // thousand distinct dates. The memo stops growing at its bound (a column of
            // timestamps would be all distinct); texts past that are read each time.
            let mut memo: Memo<&str, Option<NaiveDate>> = Memo::default();
            Ok(column
                .str()
                .map_err(pe)?
                .iter()
                .map(|t| match t {
                    Some(t) if !t.trim().is_empty() => {
                        (memo.get_or(t, || text_date(t, format)), true)
                    }
                    _ => (None, false),
                })
                .collect())
        }
        _ => Ok(column_to_json(column)?
            .iter()
            .map(|v| (cell_date(v, format), !is_blank(v)))
            .collect()),
    }
}

// ---------------------------------------------------------------------------------------
// group_aggregate, pivot

/// Makes text columns that `ops` must add up numeric (CSV amounts arrive as text).
fn numeric_for(df: &mut DataFrame, name: &str) -> R<()> {
    let column = df.column(name).map_err(pe)?;
    if column.dtype() != &DataType::String {
        return Ok(());
    }
    let markers = jp::NegativeMarkers::default();
    let mut values = Vec::with_capacity(column.len());
    for (i, t) in column.str().map_err(pe)?.iter().enumerate() {
        values.push(match t {
            None => None,
            Some(t) => jp::parse_amount(t, &markers).map_err(|_| {
                fail_at(
                    i,
                    name,
                    &J::String(t.to_owned()),
                    "数値として読めません",
                    "is not a number",
                )
            })?,
        });
    }
    let column = number_column(name, &values)?;
    set_column(df, column)
}

fn agg_expr(name: &str, op: &str, alias: &str) -> R<Expr> {
    let c = col(name);
    let e = match op {
        "sum" => c.sum(),
        "count" => c.count().cast(DataType::Int64),
        "mean" => c.mean(),
        "min" => c.min(),
        "max" => c.max(),
        "first" => c.first(),
        "last" => c.last(),
        other => {
            return Err(BlockError::input_invalid(
                "aggregations",
                &format!("op={other} は使えません（sum, count, mean, min, max, first, last）"),
                &format!("op={other} is not sum, count, mean, min, max, first or last"),
            ));
        }
    };
    Ok(e.alias(alias))
}

/// The name of the compact key column [`group_stable`] adds while it groups.
const GROUP_KEY: &str = "__keiri_group_key";

/// `df` grouped by the columns `by` (groups in order of first appearance, keys first, then
/// `aggs`), as `group_by_stable` does, but on one compact key where it can: each key column's
/// values are numbered in order of first appearance and the numbers are combined into one
/// `UInt64` column. Polars groups several text keys by encoding every row's keys as bytes
/// first, which on a million-row journal cost more memory than the rest of the pipeline
/// (see the crate README); one integer key costs 8 bytes a row. A key column that is neither
/// text nor an integer, or numbers too many to combine, takes Polars' own path.
fn group_stable(
    mut df: DataFrame,
    by: &[String],
    aggs: Vec<Expr>,
    cancel: &tokio_util::sync::CancellationToken,
) -> R<DataFrame> {
    let Some(key) = compact_key(&df, by)? else {
        let keys: Vec<Expr> = by.iter().map(|b| col(b.as_str())).collect();
        let query = df.lazy().group_by_stable(keys).agg(aggs);
        return super::collect(query, cancel).map_err(pe);
    };
    df.with_column(key).map_err(pe)?;
    let mut exprs: Vec<Expr> = by.iter().map(|b| col(b.as_str()).first()).collect();
    exprs.extend(aggs);
    let query = df.lazy().group_by_stable([col(GROUP_KEY)]).agg(exprs);
    let out = super::collect(query, cancel).map_err(pe)?;
    out.drop(GROUP_KEY).map_err(pe)
}

/// The compact key of [`group_stable`], or `None` when the columns `by` cannot have one.
fn compact_key(df: &DataFrame, by: &[String]) -> R<Option<Column>> {
    let mut combined: Vec<u64> = vec![0; df.height()];
    let mut stride: u64 = 1;
    for name in by {
        let column = df.column(name).map_err(pe)?;
        let (codes, distinct) = match column.dtype() {
            DataType::String => number_values(column.str().map_err(pe)?.iter()),
            dt if dt.is_integer() => {
                let ints = column.cast(&DataType::Int64).map_err(pe)?;
                number_values(ints.i64().map_err(pe)?.iter())
            }
            _ => return Ok(None),
        };
        // Every combined number stays below the product of the distinct counts so far.
        let Some(next) = stride.checked_mul(distinct) else {
            return Ok(None);
        };
        for (c, code) in combined.iter_mut().zip(codes) {
            *c += u64::from(code) * stride;
        }
        stride = next;
    }
    Ok(Some(Column::new(GROUP_KEY.into(), combined)))
}

/// Each value's number in order of first appearance (a null is a value of its own), and how
/// many distinct values there are.
fn number_values<T: std::hash::Hash + Eq>(values: impl Iterator<Item = T>) -> (Vec<u32>, u64) {
    let mut seen: PlHashMap<T, u32> = PlHashMap::default();
    let codes = values
        .map(|v| {
            let next = seen.len() as u32;
            *seen.entry(v).or_insert(next)
        })
        .collect();
    (codes, seen.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text dates read through the memo are the dates each text reads as, repeats included.
    #[test]
    fn repeated_text_dates_read_as_each_text_reads() {
        let texts = [
            Some("令和6年4月5日"),
            Some("2024/4/5"),
            None,
            Some("  "),
            Some("R6.4.5"),
            Some("2024/4/5"),
            Some("不明"),
            Some("令和6年4月5日"),
        ];
        let column = Column::new("伝票日付".into(), texts.to_vec());
        let april_5 = NaiveDate::from_ymd_opt(2024, 4, 5);
        let read = column_dates(&column, None).unwrap();
        assert_eq!(
            read,
            vec![
                (april_5, true),
                (april_5, true),
                (None, false),
                (None, false),
                (april_5, true),
                (april_5, true),
                (None, true),
                (april_5, true),
            ]
        );
    }
}
