//! `transforms.compute_tax`: its inputs and outputs are in `block_specs/transforms/transforms.compute_tax.yaml`.

use super::expr;
use super::{R, fail_at, is_blank, num, one_of};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::jp;
use crate::value::Row;
use serde_json::{Value as J, json};
use std::collections::BTreeMap;

// ---------------------------------------------------------------------------------------
// compute_tax

fn compute_tax(ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
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
            Some(v) => rate_of(v).ok_or_else(|| {
                fail_at(
                    i,
                    rate_field.unwrap_or(""),
                    v,
                    "税率として読めません",
                    "is not a tax rate",
                )
            })?,
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
    // A column of these names in the input is replaced: how many rows held another value.
    let mut replaced: BTreeMap<&str, usize> = BTreeMap::new();
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
            for (name, value) in [
                ("tax_rate", rate),
                ("tax_amount", tax),
                ("net_amount", net),
                ("gross_amount", gross),
            ] {
                if let Some(old) = row.insert(name.into(), value.clone())
                    && !is_blank(&old)
                    && !same_figure(&old, &value, name == "tax_rate", &markers)
                {
                    *replaced.entry(name).or_default() += 1;
                }
            }
            row
        })
        .collect();
    // The input's own figures under these names are gone from the rows: never in silence,
    // unless the plan kept them under other names and says so.
    if inputs.bool("replace_columns")?.unwrap_or(false) {
        replaced.clear();
    }
    let total = out.len();
    for (name, count) in replaced {
        ctx.calls.warn(crate::block::Warning::new(
            "REPLACED_COLUMN",
            format!("入力の列 {name} を計算した値で置き換えました（{total} 行中 {count} 行で元の値と違います）。元の値を残すには、先に列の名前を変えてください"),
            format!("the input's column {name} was replaced by the computed values ({count} of {total} rows held another value); to keep the input's values, rename the column first"),
        ));
    }
    let totals_by_rate: Vec<J> = totals
        .into_iter()
        .rev()
        .map(|(rate, (net, tax, gross))| json!({"tax_rate": rate_json(rate), "net_amount": num(net), "tax_amount": num(tax), "gross_amount": num(gross)}))
        .collect();
    Ok(Outputs::new()
        .with("rows", out)
        .with("totals_by_rate", J::Array(totals_by_rate)))
}

builtin!("transforms.compute_tax", compute_tax);

/// A rate as the fraction the spec shows (0.1, 0.08).
fn rate_json(rate: jp::TaxRate) -> J {
    crate::value::float_json(f64::from(rate.0) / 10_000.0)
}

/// Whether an input cell holds the figure computed for it: a rate read as a rate (10%, 10 and
/// 0.1 are the same rate), an amount as an amount (1,100 and 1100).
fn same_figure(old: &J, new: &J, rate: bool, markers: &jp::NegativeMarkers) -> bool {
    let read = |v: &J| -> Option<f64> {
        match (v, rate) {
            (J::Number(n), false) => n.as_f64(),
            (J::String(s), false) => jp::parse_amount(s, markers).ok().flatten(),
            (_, true) => rate_of(v).map(|r| f64::from(r.0)),
            _ => None,
        }
    };
    match (read(old), read(new)) {
        (Some(a), Some(b)) => (a - b).abs() < 1e-6,
        _ => false,
    }
}

/// A cell as a tax rate: 0.1, 10 or "10%".
fn rate_of(v: &J) -> Option<jp::TaxRate> {
    match v {
        J::Number(n) => n.as_f64().and_then(jp::TaxRate::from_number),
        J::String(s) => jp::TaxRate::parse(s),
        _ => None,
    }
}
