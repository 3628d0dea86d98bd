//! `transforms/*` blocks: reshaping and normalising tables.
//!
//! Tables stay Polars frames from block to block; column-wise work (grouping, joining,
//! sorting, de-duplicating) goes through Polars' lazy engine, and cell-wise parsing of
//! Japanese values goes through [`crate::jp`], the one place those formats are read.
//! Row expressions (`filter_rows`, `compute_columns`) are evaluated by [`expr`] on the
//! columns they name only, so a wide table is never turned into JSON.

pub(crate) mod expr;

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::NaiveDate;
use polars::prelude::*;
use serde_json::{Value as J, json};

use super::cancelled;
use crate::block::{BlockContext, BlockError, Inputs, Outputs, Registry};
use crate::jp;
use crate::value::{Row, column_names, column_to_json, json_column, rows_to_table, table_error};

pub fn register(registry: &mut Registry) {
    registry.insert("transforms.coerce_types", coerce_types);
    registry.insert("transforms.compute_columns", compute_columns);
    registry.insert("transforms.compute_tax", compute_tax);
    registry.insert("transforms.concat_rows", concat_rows);
    registry.insert("transforms.deduplicate", deduplicate);
    registry.insert("transforms.filter_rows", filter_rows);
    registry.insert("transforms.fiscal_period", fiscal_period);
    registry.insert("transforms.group_aggregate", group_aggregate);
    registry.insert("transforms.join", join);
    registry.insert("transforms.normalize_amounts", normalize_amounts);
    registry.insert("transforms.normalize_dates", normalize_dates);
    registry.insert("transforms.pick_value", pick_value);
    registry.insert("transforms.pivot", pivot);
    registry.insert("transforms.rename_columns", rename_columns);
    registry.insert("transforms.select_columns", select_columns);
    registry.insert("transforms.sort_rows", sort_rows);
    registry.insert("transforms.unpivot", unpivot);
}

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

// ---------------------------------------------------------------------------------------
// coerce_types

fn parse_bool(v: &J) -> Option<bool> {
    match v {
        J::Bool(b) => Some(*b),
        J::Number(n) => n.as_f64().map(|x| x != 0.0),
        J::String(s) => match jp::fold_width(s.trim()).to_lowercase().as_str() {
            "true" | "1" | "yes" | "y" | "はい" | "○" | "〇" | "有" | "あり" | "済" => {
                Some(true)
            }
            "false" | "0" | "no" | "n" | "いいえ" | "×" | "無" | "なし" | "未" => {
                Some(false)
            }
            _ => None,
        },
        _ => None,
    }
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

fn coerce_types(ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let mut df = inputs.table("rows")?;
    let specs = objects(inputs, "columns", true)?;
    let on_error = one_of(inputs, "on_error", &["empty", "keep", "error"], "empty")?;
    let mut errors = Vec::new();
    for spec in &specs {
        cancelled(ctx)?;
        let name = field(spec, "field", "columns")?;
        let to = field(spec, "to", "columns")?;
        let format = spec.get("format").and_then(J::as_str);
        let values = cells(&df, name)?;
        let mut failed = false;
        let mut fail = |i: usize, v: &J, errors: &mut Vec<J>| -> R<()> {
            failed = true;
            if on_error == "error" {
                return Err(fail_at(
                    i,
                    name,
                    v,
                    &format!("{to} に変換できません"),
                    &format!("cannot be converted to {to}"),
                ));
            }
            errors.push(error_entry(i, name, v, &format!("cannot convert to {to}")));
            Ok(())
        };
        let column = match to {
            "date" => {
                let mut dates = Vec::with_capacity(values.len());
                for (i, v) in values.iter().enumerate() {
                    let d = if is_blank(v) {
                        None
                    } else {
                        cell_date(v, format)
                    };
                    if d.is_none() && !is_blank(v) {
                        fail(i, v, &mut errors)?;
                    }
                    dates.push(d);
                }
                if failed && on_error == "keep" {
                    let mixed: Vec<J> = values
                        .iter()
                        .zip(&dates)
                        .map(|(v, d)| {
                            d.map_or_else(
                                || v.clone(),
                                |d| J::String(d.format("%Y-%m-%d").to_string()),
                            )
                        })
                        .collect();
                    json_column(name, &mixed)
                } else {
                    date_column(name, &dates)?
                }
            }
            "number" | "integer" | "string" | "boolean" => {
                let mut out = Vec::with_capacity(values.len());
                for (i, v) in values.iter().enumerate() {
                    if is_blank(v) && to != "string" {
                        out.push(J::Null);
                        continue;
                    }
                    let converted = match to {
                        "string" => Some(if v.is_null() {
                            J::Null
                        } else {
                            J::String(expr::to_text(v))
                        }),
                        "boolean" => parse_bool(v).map(J::Bool),
                        "integer" => expr::to_number(v)
                            .filter(|x| x.fract() == 0.0)
                            .map(|x| J::from(x as i64)),
                        _ => expr::to_number(v)
                            .and_then(|x| serde_json::Number::from_f64(x).map(J::Number)),
                    };
                    match converted {
                        Some(c) => out.push(c),
                        None => {
                            fail(i, v, &mut errors)?;
                            out.push(if on_error == "keep" {
                                v.clone()
                            } else {
                                J::Null
                            });
                        }
                    }
                }
                json_column(name, &out)
            }
            other => {
                return Err(BlockError::input_invalid(
                    "columns",
                    &format!("to={other} は使えません（string, number, integer, date, boolean）"),
                    &format!("to={other} is not string, number, integer, date or boolean"),
                ));
            }
        };
        set_column(&mut df, column)?;
    }
    Ok(Outputs::new()
        .with("rows", df)
        .with("errors", J::Array(errors)))
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

fn filter_rows(ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let df = inputs.table("rows")?;
    let src = inputs.require_str("condition")?;
    let keep = one_of(inputs, "mode", &["keep", "drop"], "keep")? == "keep";
    let e = parse_expr("condition", src)?;
    let data = expr_columns(&df, &e)?;
    let mut mask = Vec::with_capacity(df.height());
    for i in 0..df.height() {
        if i % 65_536 == 0 {
            cancelled(ctx)?;
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

// ---------------------------------------------------------------------------------------
// compute_tax

fn compute_tax(_ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let rows = inputs.rows("rows")?;
    let amount_field = inputs.require_str("amount_field")?;
    let basis = match one_of(
        inputs,
        "amount_basis",
        &["tax_included", "tax_excluded"],
        "tax_excluded",
    )? {
        "tax_included" => jp::AmountBasis::Included,
        _ => jp::AmountBasis::Excluded,
    };
    let rate_field = inputs.str("rate_field")?;
    let reduced_field = inputs.str("reduced_flag_field")?;
    let default_rate = match inputs.f64("default_rate")? {
        None => jp::TaxRate::STANDARD,
        Some(x) => jp::TaxRate::from_number(x).ok_or_else(|| {
            BlockError::input_invalid(
                "default_rate",
                "0.1 や 10 のような税率が必要です",
                "expected a rate such as 0.1 or 10",
            )
        })?,
    };
    let rounding_text = inputs.str("rounding")?.unwrap_or("floor");
    let rounding = jp::Rounding::parse(rounding_text).ok_or_else(|| {
        BlockError::input_invalid(
            "rounding",
            "floor, round, ceil（切り捨て・四捨五入・切り上げ）のいずれかです",
            "expected floor, round or ceil",
        )
    })?;
    let per_invoice = one_of(inputs, "rounding_unit", &["line", "invoice"], "line")? == "invoice";
    let invoice_key = inputs.str("invoice_key")?;
    if per_invoice && invoice_key.is_none() {
        return Err(BlockError::input_invalid(
            "invoice_key",
            "rounding_unit=invoice には請求書番号の列名が必要です",
            "rounding_unit=invoice needs the invoice number column",
        ));
    }
    let columns: Vec<String> = rows
        .first()
        .map(|r| r.keys().cloned().collect())
        .unwrap_or_default();
    for name in [Some(amount_field), rate_field, reduced_field, invoice_key]
        .into_iter()
        .flatten()
    {
        if !rows.is_empty() && !rows.iter().any(|r| r.contains_key(name)) {
            return Err(BlockError::missing_column(name, &columns));
        }
    }
    let markers = jp::NegativeMarkers::default();
    // Amount and rate of each line (None: an empty amount, which gets no tax).
    let mut lines: Vec<Option<(f64, jp::TaxRate)>> = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let raw = row.get(amount_field).cloned().unwrap_or(J::Null);
        let amount = match &raw {
            J::Number(n) => n.as_f64(),
            J::String(s) => jp::parse_amount(s, &markers).map_err(|_| {
                fail_at(
                    i,
                    amount_field,
                    &raw,
                    "金額として読めません",
                    "is not an amount",
                )
            })?,
            J::Null => None,
            _ => {
                return Err(fail_at(
                    i,
                    amount_field,
                    &raw,
                    "金額として読めません",
                    "is not an amount",
                ));
            }
        };
        let rate = match rate_field.and_then(|f| row.get(f)).filter(|v| !is_blank(v)) {
            Some(v) => {
                let parsed = match v {
                    J::Number(n) => n.as_f64().and_then(jp::TaxRate::from_number),
                    J::String(s) => jp::TaxRate::parse(s),
                    _ => None,
                };
                parsed.ok_or_else(|| {
                    fail_at(
                        i,
                        rate_field.unwrap_or(""),
                        v,
                        "税率として読めません",
                        "is not a tax rate",
                    )
                })?
            }
            None => match reduced_field.and_then(|f| row.get(f)) {
                Some(flag) if jp::is_reduced_flag(flag) => jp::TaxRate::REDUCED,
                _ => default_rate,
            },
        };
        lines.push(amount.map(|a| (a, rate)));
    }
    let mut splits: Vec<Option<jp::TaxSplit>> = vec![None; rows.len()];
    // (rate) -> (net, tax, gross), in ascending rate order.
    let mut totals: BTreeMap<jp::TaxRate, (f64, f64, f64)> = BTreeMap::new();
    if per_invoice {
        // インボイス制度: the tax is rounded once per invoice and rate; the per-line values
        // are that tax spread over the lines (largest remainder), so they add up exactly.
        let key = invoice_key.unwrap_or_default();
        let mut groups: indexmap::IndexMap<(String, jp::TaxRate), Vec<usize>> =
            indexmap::IndexMap::new();
        for (i, line) in lines.iter().enumerate() {
            if let Some((_, rate)) = line {
                let invoice = expr::to_text(rows[i].get(key).unwrap_or(&J::Null));
                groups.entry((invoice, *rate)).or_default().push(i);
            }
        }
        for ((_, rate), members) in &groups {
            let amounts: Vec<f64> = members
                .iter()
                .filter_map(|&i| lines[i].map(|l| l.0))
                .collect();
            let total: f64 = amounts.iter().sum();
            let split = jp::tax_of(total, *rate, basis, rounding);
            let shares = jp::allocate(split.tax, &amounts);
            for (&i, (amount, tax)) in members.iter().zip(amounts.iter().zip(shares)) {
                splits[i] = Some(match basis {
                    jp::AmountBasis::Excluded => jp::TaxSplit {
                        net: *amount,
                        tax,
                        gross: amount + tax,
                    },
                    jp::AmountBasis::Included => jp::TaxSplit {
                        net: amount - tax,
                        tax,
                        gross: *amount,
                    },
                });
            }
            let t = totals.entry(*rate).or_default();
            t.0 += split.net;
            t.1 += split.tax;
            t.2 += split.gross;
        }
    } else {
        for (i, line) in lines.iter().enumerate() {
            if let Some((amount, rate)) = line {
                let split = jp::tax_of(*amount, *rate, basis, rounding);
                splits[i] = Some(split);
                let t = totals.entry(*rate).or_default();
                t.0 += split.net;
                t.1 += split.tax;
                t.2 += split.gross;
            }
        }
    }
    let out: Vec<Row> = rows
        .into_iter()
        .zip(lines.iter().zip(&splits))
        .map(|(mut row, (line, split))| {
            let (rate, tax, net, gross) = match (line, split) {
                (Some((_, rate)), Some(s)) => {
                    (rate_json(*rate), num(s.tax), num(s.net), num(s.gross))
                }
                _ => (J::Null, J::Null, J::Null, J::Null),
            };
            row.insert("tax_rate".into(), rate);
            row.insert("tax_amount".into(), tax);
            row.insert("net_amount".into(), net);
            row.insert("gross_amount".into(), gross);
            row
        })
        .collect();
    let totals_by_rate: Vec<J> = totals
        .into_iter()
        .rev()
        .map(|(rate, (net, tax, gross))| json!({"tax_rate": rate_json(rate), "net_amount": num(net), "tax_amount": num(tax), "gross_amount": num(gross)}))
        .collect();
    Ok(Outputs::new()
        .with("rows", out)
        .with("totals_by_rate", J::Array(totals_by_rate)))
}

fn num(x: f64) -> J {
    expr::number(x)
}

/// A rate as the fraction the spec shows (0.1, 0.08).
fn rate_json(rate: jp::TaxRate) -> J {
    crate::value::float_json(f64::from(rate.0) / 10_000.0)
}

// ---------------------------------------------------------------------------------------
// concat_rows, deduplicate, select/rename/sort

fn concat_rows(_ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let tables = match inputs.get("tables") {
        Some(crate::value::Value::Json(J::Array(items))) => items.clone(),
        // A single table is a list of one.
        Some(crate::value::Value::Table(df)) => {
            vec![crate::value::Value::Table(df.clone()).to_json()]
        }
        _ => {
            return Err(BlockError::input_invalid(
                "tables",
                "表（行データの配列）の配列が必要です",
                "expected a list of tables",
            ));
        }
    };
    let labels = inputs.strings("source_labels")?;
    let source_field = inputs.str("source_field")?;
    if let Some(l) = &labels
        && l.len() != tables.len()
    {
        return Err(BlockError::input_invalid(
            "source_labels",
            &format!(
                "表が {} 個ありますが、名前は {} 個です",
                tables.len(),
                l.len()
            ),
            &format!("{} tables but {} labels", tables.len(), l.len()),
        ));
    }
    let mut all: Vec<Row> = Vec::new();
    for (i, table) in tables.into_iter().enumerate() {
        let rows = crate::value::Value::Json(table).to_rows().map_err(|e| {
            BlockError::input_invalid(
                "tables",
                &format!("{i}番目: {}", e.message_ja),
                &format!("table {i}: {}", e.message_en),
            )
        })?;
        for mut row in rows {
            if let Some(f) = source_field {
                let label = labels
                    .as_ref()
                    .and_then(|l| l.get(i))
                    .cloned()
                    .unwrap_or_else(|| format!("table{}", i + 1));
                row.insert(f.to_owned(), J::String(label));
            }
            all.push(row);
        }
    }
    let df = rows_to_table(&all)?;
    let columns = column_names(&df);
    Ok(Outputs::new()
        .with("rows", df)
        .with("columns", json!(columns)))
}

const ROW_INDEX: &str = "__keiri_row_index";

fn deduplicate(_ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let df = inputs.table("rows")?;
    let keys = inputs
        .strings("keys")?
        .filter(|k| !k.is_empty())
        .unwrap_or_else(|| column_names(&df));
    require_columns(&df, &keys)?;
    let keep = match one_of(inputs, "keep", &["first", "last"], "first")? {
        "last" => UniqueKeepStrategy::Last,
        _ => UniqueKeepStrategy::First,
    };
    let kept = df
        .clone()
        .lazy()
        .with_row_index(ROW_INDEX, None)
        .unique_stable_generic(Some(keys.iter().map(|k| col(k.as_str())).collect()), keep)
        .select([col(ROW_INDEX)])
        .collect()
        .map_err(pe)?;
    let index = kept
        .column(ROW_INDEX)
        .map_err(pe)?
        .cast(&DataType::UInt64)
        .map_err(pe)?;
    let keep_set: HashSet<u64> = index.u64().map_err(pe)?.iter().flatten().collect();
    let mask = BooleanChunked::new(
        "mask".into(),
        (0..df.height() as u64)
            .map(|i| keep_set.contains(&i))
            .collect::<Vec<_>>(),
    );
    let rows = df.filter(&mask).map_err(pe)?;
    let duplicates = df.filter(&!&mask).map_err(pe)?;
    let count = duplicates.height();
    Ok(Outputs::new()
        .with("rows", rows)
        .with("duplicates", duplicates)
        .with("duplicate_count", json!(count)))
}

fn select_columns(_ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let df = inputs.table("rows")?;
    let wanted = inputs
        .strings("columns")?
        .ok_or_else(|| BlockError::input_invalid("columns", "必須です", "it is required"))?;
    require_columns(&df, &wanted)?;
    let out = if one_of(inputs, "mode", &["include", "exclude"], "include")? == "include" {
        df.select(wanted.iter().map(String::as_str)).map_err(pe)?
    } else {
        let keep: Vec<String> = column_names(&df)
            .into_iter()
            .filter(|c| !wanted.contains(c))
            .collect();
        df.select(keep.iter().map(String::as_str)).map_err(pe)?
    };
    Ok(Outputs::new().with("rows", out))
}

fn rename_columns(_ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let mut df = inputs.table("rows")?;
    let mapping = match inputs.json("mapping") {
        Some(J::Object(m)) => m,
        _ => {
            return Err(BlockError::input_invalid(
                "mapping",
                "旧列名→新列名のオブジェクトが必要です",
                "expected an object old name → new name",
            ));
        }
    };
    let drop_unmapped = inputs.bool("drop_unmapped")?.unwrap_or(false);
    let existing = column_names(&df);
    let mut renames = Vec::new();
    for (old, new) in &mapping {
        let new = new.as_str().ok_or_else(|| {
            BlockError::input_invalid("mapping", "新列名は文字列です", "new names must be strings")
        })?;
        if !existing.contains(old) {
            return Err(BlockError::missing_column(old, &existing));
        }
        renames.push((old.clone(), new.to_owned()));
    }
    if drop_unmapped {
        df = df
            .select(renames.iter().map(|(o, _)| o.as_str()))
            .map_err(pe)?;
    }
    let final_names: Vec<String> = column_names(&df)
        .into_iter()
        .map(|c| {
            renames
                .iter()
                .find(|(o, _)| *o == c)
                .map_or(c, |(_, n)| n.clone())
        })
        .collect();
    let mut seen = HashSet::new();
    if let Some(dup) = final_names.iter().find(|n| !seen.insert(n.as_str())) {
        return Err(BlockError::failed(
            format!("列名 {dup} が重複します"),
            format!("the renamed table would have two columns named {dup}"),
        ));
    }
    df.set_column_names(&final_names).map_err(pe)?;
    Ok(Outputs::new()
        .with("rows", df)
        .with("columns", json!(final_names)))
}

/// A sort key for a column: text columns whose values are all numbers or all dates sort
/// as numbers or dates (so "9,000" sorts below "10,000" and "2024/4/1" below "2024/10/1").
fn sort_key(df: &DataFrame, name: &str) -> R<Option<Column>> {
    let column = df.column(name).map_err(pe)?;
    if column.dtype() != &DataType::String {
        return Ok(None);
    }
    let texts: Vec<Option<&str>> = column.str().map_err(pe)?.iter().collect();
    let present = || texts.iter().flatten().filter(|s| !s.trim().is_empty());
    if present().next().is_none() {
        return Ok(None);
    }
    let markers = jp::NegativeMarkers::default();
    let key = format!("__keiri_sort_{name}");
    if present().all(|s| matches!(jp::parse_amount(s, &markers), Ok(Some(_)))) {
        let nums: Vec<Option<f64>> = texts
            .iter()
            .map(|s| s.and_then(|s| jp::parse_amount(s, &markers).ok().flatten()))
            .collect();
        return Ok(Some(Column::new(key.into(), nums)));
    }
    if present().all(|s| jp::parse_date(s).is_some()) {
        let dates: Vec<Option<NaiveDate>> =
            texts.iter().map(|s| s.and_then(jp::parse_date)).collect();
        return date_column(&key, &dates).map(Some);
    }
    Ok(None)
}

fn sort_rows(_ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let df = inputs.table("rows")?;
    let specs = objects(inputs, "by", true)?;
    let nulls_last = one_of(inputs, "nulls", &["first", "last"], "last")? == "last";
    let mut work = df.clone();
    let mut by = Vec::new();
    let mut descending = Vec::new();
    for spec in &specs {
        let name = field(spec, "field", "by")?;
        require_columns(&df, &[name.to_owned()])?;
        let order = spec.get("order").and_then(J::as_str).unwrap_or("asc");
        descending.push(match order {
            "asc" => false,
            "desc" => true,
            other => {
                return Err(BlockError::input_invalid(
                    "by",
                    &format!("order={other} は使えません（asc, desc）"),
                    &format!("order={other} is not asc or desc"),
                ));
            }
        });
        match sort_key(&df, name)? {
            Some(key) => {
                by.push(key.name().to_string());
                work.with_column(key).map_err(pe)?;
            }
            None => by.push(name.to_owned()),
        }
    }
    if by.is_empty() {
        return Ok(Outputs::new().with("rows", df));
    }
    let n = by.len();
    let options = SortMultipleOptions::default()
        .with_order_descending_multi(descending)
        .with_nulls_last_multi(vec![nulls_last; n])
        .with_maintain_order(true);
    let sorted = work.sort(&by, options).map_err(pe)?;
    let out = sorted
        .select(column_names(&df).iter().map(String::as_str))
        .map_err(pe)?;
    Ok(Outputs::new().with("rows", out))
}

// ---------------------------------------------------------------------------------------
// normalize_amounts, normalize_dates, fiscal_period

fn normalize_amounts(ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let mut df = inputs.table("rows")?;
    let fields = inputs
        .strings("fields")?
        .ok_or_else(|| BlockError::input_invalid("fields", "必須です", "it is required"))?;
    require_columns(&df, &fields)?;
    let factor = match one_of(inputs, "unit", &["yen", "thousand", "million"], "yen")? {
        "thousand" => 1_000.0,
        "million" => 1_000_000.0,
        _ => 1.0,
    };
    let markers = match inputs.strings("negative_markers")? {
        Some(list) => jp::NegativeMarkers::from_list(&list),
        None => jp::NegativeMarkers::default(),
    };
    let on_error = one_of(inputs, "on_error", &["empty", "keep", "error"], "keep")?;
    let mut errors = Vec::new();
    for name in &fields {
        cancelled(ctx)?;
        let column = df.column(name).map_err(pe)?.clone();
        let new = if column.dtype().is_primitive_numeric() {
            let scaled = column.cast(&DataType::Float64).map_err(pe)?;
            let values: Vec<Option<f64>> = scaled
                .f64()
                .map_err(pe)?
                .iter()
                .map(|v| v.map(|x| x * factor))
                .collect();
            number_column(name, &values)?
        } else {
            let text = column.cast(&DataType::String).map_err(pe)?;
            let texts = text.str().map_err(pe)?;
            let mut values: Vec<Option<f64>> = Vec::with_capacity(texts.len());
            let mut kept: Vec<(usize, String)> = Vec::new();
            for (i, t) in texts.iter().enumerate() {
                let Some(t) = t else {
                    values.push(None);
                    continue;
                };
                match jp::parse_amount(t, &markers) {
                    Ok(v) => values.push(v.map(|x| x * factor)),
                    Err(_) => {
                        let value = J::String(t.to_owned());
                        if on_error == "error" {
                            return Err(fail_at(
                                i,
                                name,
                                &value,
                                "金額として読めません",
                                "is not an amount",
                            ));
                        }
                        errors.push(error_entry(i, name, &value, "not an amount"));
                        values.push(None);
                        if on_error == "keep" {
                            kept.push((i, t.to_owned()));
                        }
                    }
                }
            }
            if kept.is_empty() {
                number_column(name, &values)?
            } else {
                // Keeping unreadable text makes the column mixed; it becomes text like any
                // mixed column (see `rows_to_table`).
                let mut mixed: Vec<J> = values.iter().map(|v| v.map_or(J::Null, num)).collect();
                for (i, t) in kept {
                    mixed[i] = J::String(t);
                }
                json_column(name, &mixed)
            }
        };
        set_column(&mut df, new)?;
    }
    Ok(Outputs::new()
        .with("rows", df)
        .with("errors", J::Array(errors)))
}

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
        DataType::String => Ok(column
            .str()
            .map_err(pe)?
            .iter()
            .map(|t| match t {
                Some(t) if !t.trim().is_empty() => (text_date(t, format), true),
                _ => (None, false),
            })
            .collect()),
        _ => Ok(column_to_json(column)?
            .iter()
            .map(|v| (cell_date(v, format), !is_blank(v)))
            .collect()),
    }
}

fn normalize_dates(ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let mut df = inputs.table("rows")?;
    let fields = inputs
        .strings("fields")?
        .ok_or_else(|| BlockError::input_invalid("fields", "必須です", "it is required"))?;
    require_columns(&df, &fields)?;
    let output_format = inputs.str("output_format")?.unwrap_or("%Y-%m-%d");
    let on_error = one_of(inputs, "on_error", &["empty", "keep", "error"], "keep")?;
    // The format is checked once on a known date so a bad one fails before any row.
    if chrono::format::StrftimeItems::new(output_format)
        .any(|i| matches!(i, chrono::format::Item::Error))
    {
        return Err(BlockError::input_invalid(
            "output_format",
            "日付の書式が不正です",
            "invalid date format",
        ));
    }
    let mut errors = Vec::new();
    for name in &fields {
        cancelled(ctx)?;
        let column = df.column(name).map_err(pe)?.clone();
        let dates = column_dates(&column, None)?;
        let mut kept: Vec<usize> = Vec::new();
        for (i, (d, present)) in dates.iter().enumerate() {
            if d.is_none() && *present {
                let value = column_to_json(&column.slice(i as i64, 1))?
                    .pop()
                    .unwrap_or(J::Null);
                if on_error == "error" {
                    return Err(fail_at(
                        i,
                        name,
                        &value,
                        "日付として読めません",
                        "is not a date",
                    ));
                }
                errors.push(error_entry(i, name, &value, "not a date"));
                if on_error == "keep" {
                    kept.push(i);
                }
            }
        }
        let only_dates: Vec<Option<NaiveDate>> = dates.iter().map(|d| d.0).collect();
        let new = if output_format == "%Y-%m-%d" && kept.is_empty() {
            // The ISO form is a Date column: compact, and it reads back as YYYY-MM-DD.
            date_column(name, &only_dates)?
        } else {
            let mut texts: Vec<Option<String>> = only_dates
                .iter()
                .map(|d| d.map(|d| d.format(output_format).to_string()))
                .collect();
            if !kept.is_empty() {
                let original = column.cast(&DataType::String).map_err(pe)?;
                let original = original.str().map_err(pe)?;
                for i in kept {
                    texts[i] = original.get(i).map(str::to_owned);
                }
            }
            Column::new(name.as_str().into(), texts)
        };
        set_column(&mut df, new)?;
    }
    Ok(Outputs::new()
        .with("rows", df)
        .with("errors", J::Array(errors)))
}

fn iso(d: NaiveDate) -> String {
    d.format("%Y-%m-%d").to_string()
}

fn fiscal_period(_ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let start = inputs.i64("fiscal_year_start_month")?.unwrap_or(4);
    let start = u32::try_from(start)
        .ok()
        .filter(|m| (1..=12).contains(m))
        .ok_or_else(|| {
            BlockError::input_invalid(
                "fiscal_year_start_month",
                "1〜12の整数が必要です",
                "expected 1 to 12",
            )
        })?;
    let label = match one_of(
        inputs,
        "fiscal_year_label",
        &["start_year", "end_year"],
        "start_year",
    )? {
        "end_year" => jp::FiscalYearLabel::EndYear,
        _ => jp::FiscalYearLabel::StartYear,
    };
    let date_field = inputs.str("date_field")?.unwrap_or("date");
    if !inputs.has("rows") && !inputs.has("date") {
        return Err(BlockError::input_invalid(
            "rows",
            "rows か date のどちらかが必要です",
            "either rows or date is required",
        ));
    }
    let period = match inputs.str("date")? {
        None => J::Null,
        Some(text) => {
            let d = jp::parse_date(text).ok_or_else(|| {
                BlockError::input_invalid(
                    "date",
                    &format!("「{text}」は日付として読めません"),
                    &format!("{text:?} is not a date"),
                )
            })?;
            let p = jp::fiscal_period(d, start, label).ok_or_else(|| {
                BlockError::failed("期間を計算できません", "cannot compute the period")
            })?;
            json!({
                "fiscal_year": p.fiscal_year, "fiscal_quarter": p.quarter, "fiscal_month": p.month,
                "year_start": iso(p.year_start), "year_end": iso(p.year_end),
                "quarter_start": iso(p.quarter_start), "quarter_end": iso(p.quarter_end),
                "month_start": iso(p.month_start), "month_end": iso(p.month_end),
            })
        }
    };
    let rows = if inputs.has("rows") {
        let mut df = inputs.table("rows")?;
        require_columns(&df, &[date_field.to_owned()])?;
        let dates = column_dates(df.column(date_field).map_err(pe)?, None)?;
        // One pass straight into the four columns: a million rows would otherwise hold a
        // period struct and a heap string per row beside the table. Years, quarters and
        // months are 32-bit: half the memory of 64-bit columns, and every value fits.
        let mut years: Vec<Option<i32>> = Vec::with_capacity(dates.len());
        let mut quarters: Vec<Option<i32>> = Vec::with_capacity(dates.len());
        let mut months: Vec<Option<i32>> = Vec::with_capacity(dates.len());
        let mut ym = StringChunkedBuilder::new("year_month".into(), dates.len());
        let mut text = String::new();
        for (d, _) in &dates {
            let p = d.and_then(|d| jp::fiscal_period(d, start, label));
            years.push(p.map(|p| p.fiscal_year));
            quarters.push(p.and_then(|p| i32::try_from(p.quarter).ok()));
            months.push(p.and_then(|p| i32::try_from(p.month).ok()));
            match d {
                Some(d) => {
                    use std::fmt::Write;
                    text.clear();
                    let _ = write!(text, "{}", d.format("%Y-%m"));
                    ym.append_value(&text);
                }
                None => ym.append_null(),
            }
        }
        drop(dates);
        set_column(&mut df, Column::new("fiscal_year".into(), years))?;
        set_column(&mut df, Column::new("fiscal_quarter".into(), quarters))?;
        set_column(&mut df, Column::new("fiscal_month".into(), months))?;
        set_column(&mut df, ym.finish().into_column())?;
        crate::value::Value::Table(df)
    } else {
        crate::value::Value::Json(J::Array(Vec::new()))
    };
    Ok(Outputs::new().with("rows", rows).with("period", period))
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
fn group_stable(mut df: DataFrame, by: &[String], aggs: Vec<Expr>) -> R<DataFrame> {
    let Some(key) = compact_key(&df, by)? else {
        let keys: Vec<Expr> = by.iter().map(|b| col(b.as_str())).collect();
        return df
            .lazy()
            .group_by_stable(keys)
            .agg(aggs)
            .collect()
            .map_err(pe);
    };
    df.with_column(key).map_err(pe)?;
    let mut exprs: Vec<Expr> = by.iter().map(|b| col(b.as_str()).first()).collect();
    exprs.extend(aggs);
    let out = df
        .lazy()
        .group_by_stable([col(GROUP_KEY)])
        .agg(exprs)
        .collect()
        .map_err(pe)?;
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

fn group_aggregate(_ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
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
        df.lazy().select(exprs).collect().map_err(pe)?
    } else {
        group_stable(df, &by, exprs)?
    };
    let count = out.height();
    Ok(Outputs::new()
        .with("rows", out)
        .with("group_count", json!(count)))
}

fn pivot(_ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let mut df = inputs.table("rows")?;
    let index = inputs
        .strings("index")?
        .ok_or_else(|| BlockError::input_invalid("index", "必須です", "it is required"))?;
    let pivot_col = inputs.require_str("columns")?;
    let values = inputs.require_str("values")?;
    let aggfunc = one_of(
        inputs,
        "aggfunc",
        &["sum", "count", "mean", "min", "max", "first", "last"],
        "sum",
    )?;
    let fill = inputs.json("fill_value").unwrap_or(json!(0));
    let mut needed = index.clone();
    needed.push(pivot_col.to_owned());
    needed.push(values.to_owned());
    require_columns(&df, &needed)?;
    if matches!(aggfunc, "sum" | "mean") {
        numeric_for(&mut df, values)?;
    }
    let mut keys = index.clone();
    keys.push(pivot_col.to_owned());
    // Aggregate first (the long table may be large), then reshape the small result.
    let grouped = group_stable(df, &keys, vec![agg_expr(values, aggfunc, "__keiri_value")?])?;
    let index_cells: Vec<Vec<J>> = index.iter().map(|n| cells(&grouped, n)).collect::<R<_>>()?;
    let pivot_cells = cells(&grouped, pivot_col)?;
    let value_cells = cells(&grouped, "__keiri_value")?;
    let mut pivot_names: Vec<String> = Vec::new();
    let mut out_rows: indexmap::IndexMap<String, (Vec<J>, HashMap<String, J>)> =
        indexmap::IndexMap::new();
    for i in 0..grouped.height() {
        let key_values: Vec<J> = index_cells.iter().map(|c| c[i].clone()).collect();
        let key = serde_json::to_string(&key_values).unwrap_or_default();
        let name = expr::to_text(&pivot_cells[i]);
        if !pivot_names.contains(&name) {
            pivot_names.push(name.clone());
        }
        out_rows
            .entry(key)
            .or_insert_with(|| (key_values, HashMap::new()))
            .1
            .insert(name, value_cells[i].clone());
    }
    if let Some(clash) = pivot_names.iter().find(|n| index.contains(n)) {
        return Err(BlockError::failed(
            format!("ピボットした列名 {clash} が行見出しの列名と重なります"),
            format!("pivoted column {clash} has the name of an index column"),
        ));
    }
    let rows: Vec<Row> = out_rows
        .into_values()
        .map(|(key_values, cells)| {
            let mut row = Row::new();
            for (name, v) in index.iter().zip(key_values) {
                row.insert(name.clone(), v);
            }
            for name in &pivot_names {
                row.insert(
                    name.clone(),
                    cells
                        .get(name)
                        .cloned()
                        .filter(|v| !v.is_null())
                        .unwrap_or_else(|| fill.clone()),
                );
            }
            row
        })
        .collect();
    let mut columns = index.clone();
    columns.extend(pivot_names);
    Ok(Outputs::new()
        .with("rows", rows)
        .with("columns", json!(columns)))
}

fn unpivot(_ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let df = inputs.table("rows")?;
    let ids = inputs
        .strings("id_fields")?
        .ok_or_else(|| BlockError::input_invalid("id_fields", "必須です", "it is required"))?;
    require_columns(&df, &ids)?;
    let value_fields = match inputs.strings("value_fields")? {
        Some(v) => {
            require_columns(&df, &v)?;
            v
        }
        None => column_names(&df)
            .into_iter()
            .filter(|c| !ids.contains(c))
            .collect(),
    };
    let variable = inputs.str("variable_name")?.unwrap_or("項目").to_owned();
    let value = inputs.str("value_name")?.unwrap_or("値").to_owned();
    if ids.contains(&variable) || ids.contains(&value) || variable == value {
        return Err(BlockError::input_invalid(
            "variable_name",
            "variable_name と value_name は id_fields と別の名前にしてください",
            "variable_name and value_name must differ from each other and from id_fields",
        ));
    }
    // One dtype for the value column: the fields' own when they agree, text otherwise.
    let dtypes: Vec<DataType> = value_fields
        .iter()
        .map(|f| df.column(f).map(|c| c.dtype().clone()))
        .collect::<Result<_, _>>()
        .map_err(pe)?;
    let target = match dtypes.first() {
        Some(first) if dtypes.iter().all(|d| d == first) => first.clone(),
        Some(_) if dtypes.iter().all(|d| d.is_primitive_numeric()) => DataType::Float64,
        _ => DataType::String,
    };
    let mut parts = Vec::new();
    for (k, f) in value_fields.iter().enumerate() {
        let mut exprs: Vec<Expr> = ids.iter().map(|i| col(i.as_str())).collect();
        exprs.push(lit(f.as_str()).alias(variable.as_str()));
        exprs.push(col(f.as_str()).cast(target.clone()).alias(value.as_str()));
        exprs.push(lit(k as u32).alias("__keiri_field"));
        parts.push(
            df.clone().lazy().with_row_index(ROW_INDEX, None).select(
                exprs
                    .into_iter()
                    .chain([col(ROW_INDEX)])
                    .collect::<Vec<_>>(),
            ),
        );
    }
    let mut names: Vec<String> = ids.clone();
    names.push(variable);
    names.push(value);
    let out = if parts.is_empty() {
        DataFrame::empty()
    } else {
        // Row-major order: each source row's values stay together, in field order.
        concat(parts, UnionArgs::default())
            .map_err(pe)?
            .sort(
                [ROW_INDEX, "__keiri_field"],
                SortMultipleOptions::default().with_maintain_order(true),
            )
            .select(names.iter().map(|n| col(n.as_str())).collect::<Vec<_>>())
            .collect()
            .map_err(pe)?
    };
    Ok(Outputs::new().with("rows", out))
}

// ---------------------------------------------------------------------------------------
// join, pick_value

fn join(_ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
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
    let out = left
        .lazy()
        .join(right.lazy(), left_on, right_on, args)
        .collect()
        .map_err(pe)?;
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

fn pick_value(_ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let source = inputs
        .json("source")
        .ok_or_else(|| BlockError::input_invalid("source", "必須です", "it is required"))?;
    let path = inputs.require_str("path")?;
    let mut current = &source;
    let mut found = true;
    for segment in path.split('.').filter(|s| !s.is_empty()) {
        let next = match current {
            J::Object(m) => m.get(segment),
            J::Array(a) => segment.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => None,
        };
        match next {
            Some(v) => current = v,
            None => {
                found = false;
                break;
            }
        }
    }
    if found {
        return Ok(Outputs::new()
            .with("value", current.clone())
            .with("found", J::Bool(true)));
    }
    match inputs.json("default") {
        Some(d) => Ok(Outputs::new()
            .with("value", d)
            .with("found", J::Bool(false))),
        None => {
            let keys = match &source {
                J::Object(m) => m.keys().cloned().collect::<Vec<_>>().join(", "),
                J::Array(a) => format!("0..{}", a.len()),
                _ => String::new(),
            };
            Err(BlockError::failed(
                format!("パス {path} が見つかりません"),
                format!("path {path} was not found"),
            )
            .with_hint(
                format!("先頭のキー: {keys}"),
                format!("top-level keys: {keys}"),
            ))
        }
    }
}
