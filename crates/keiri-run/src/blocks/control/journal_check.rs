//! `control.journal_check`: its inputs and outputs are in `block_specs/control/control.journal_check.yaml`.

use super::{count_by, date, is_blank, number, text};
use crate::block::ProgressUnit;
use crate::block::{BlockContext, BlockError, Inputs, Outputs, Warning};
use crate::blocks::kit::numbers::num_json;
use crate::blocks::kit::steps::Steps;
use crate::jp::parse_date;
use crate::value::Row;
use chrono::{Datelike, NaiveDate, Weekday};
use indexmap::IndexMap;
use serde_json::{Value as Json, json};
use std::collections::BTreeMap;

// ---------------------------------------------------------------------------------------
// control.journal_check

const ALL_CHECKS: &[&str] = &[
    "balance",
    "account_exists",
    "zero_amount",
    "negative_amount",
    "period",
    "tax_category",
    "description",
    "weekend",
    "round_amount",
];

/// A round amount this large is worth a look (manual, estimated or fictitious entries).
const ROUND_AMOUNT_MIN: f64 = 1_000_000.0;

fn journal_check(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let entries = inputs.rows("entries")?;
    let voucher_field = inputs
        .str("voucher_field")?
        .unwrap_or("voucher_no")
        .to_string();
    let debit_field = inputs
        .str("debit_field")?
        .unwrap_or("debit_amount")
        .to_string();
    let credit_field = inputs
        .str("credit_field")?
        .unwrap_or("credit_amount")
        .to_string();
    let account_fields = inputs
        .strings("account_fields")?
        .unwrap_or_else(|| vec!["debit_account".into(), "credit_account".into()]);
    let date_field = inputs.str("date_field")?.unwrap_or("date").to_string();
    let tolerance = inputs.f64("tolerance")?.unwrap_or(0.0);
    let period = |key: &str| -> Result<Option<NaiveDate>, BlockError> {
        match inputs.str(key)? {
            None => Ok(None),
            Some(s) => parse_date(s).map(Some).ok_or_else(|| {
                BlockError::input_invalid(
                    key,
                    "日付（YYYY-MM-DD）が必要です",
                    "expected a date (YYYY-MM-DD)",
                )
            }),
        }
    };
    let (start, end) = (period("period_start")?, period("period_end")?);
    let checks: Vec<String> = match inputs.strings("checks")? {
        Some(c) if !c.is_empty() => c,
        _ => ALL_CHECKS.iter().map(|c| c.to_string()).collect(),
    };
    if let Some(bad) = checks.iter().find(|c| !ALL_CHECKS.contains(&c.as_str())) {
        return Err(BlockError::input_invalid(
            "checks",
            &format!("{bad:?} は知らないチェックです"),
            &format!("{bad:?} is not a known check"),
        ));
    }
    let chart: Option<Vec<String>> = inputs
        .json("chart_of_accounts")
        .and_then(|v| v.as_array().cloned())
        .map(|items| {
            items
                .iter()
                .map(|i| match i {
                    Json::Object(m) => text(m.get("code").or_else(|| m.get("name"))),
                    other => text(Some(other)),
                })
                .collect()
        });
    let on = |c: &str| checks.iter().any(|x| x == c);

    // Vouchers in first-appearance order.
    let mut vouchers: IndexMap<String, Vec<usize>> = IndexMap::new();
    for (i, r) in entries.iter().enumerate() {
        let key = text(r.get(&voucher_field));
        let key = if key.is_empty() {
            format!("(行{})", i + 1)
        } else {
            key
        };
        vouchers.entry(key).or_default().push(i);
    }
    let mut issues = Vec::new();
    let mut by_check: BTreeMap<String, usize> = BTreeMap::new();
    // Lines each check flagged, for the warning when one flags nearly every line.
    let mut lines_by_check: BTreeMap<String, usize> = BTreeMap::new();
    let mut balanced = true;
    let (mut debit_total, mut credit_total) = (0.0, 0.0);
    let mut push = |voucher: &str,
                    check: &str,
                    sev: &str,
                    message: String,
                    idx: &[usize],
                    issues: &mut Vec<Json>| {
        count_by(&mut by_check, check);
        *lines_by_check.entry(check.to_string()).or_default() += idx.len();
        let rows: Vec<Json> = idx
            .iter()
            .map(|&i| Json::Object(entries[i].clone()))
            .collect();
        issues.push(json!({"voucher": voucher, "check": check, "severity": sev, "message": message, "rows": rows}));
    };
    let mut steps = Steps::new(ctx, ProgressUnit::Rows, Some(entries.len()));
    let mut checked = 0;
    for (voucher, idx) in &vouchers {
        steps.advance_to(checked)?;
        checked += idx.len() as u64;
        let debit: f64 = idx
            .iter()
            .filter_map(|&i| number(entries[i].get(&debit_field)))
            .sum();
        let credit: f64 = idx
            .iter()
            .filter_map(|&i| number(entries[i].get(&credit_field)))
            .sum();
        debit_total += debit;
        credit_total += credit;
        if on("balance") && (debit - credit).abs() > tolerance + 1e-9 {
            balanced = false;
            push(
                voucher,
                "balance",
                "error",
                {
                    let (d, c, diff) =
                        (num_json(debit), num_json(credit), num_json(debit - credit));
                    ctx.say(
                        format!("借方 {d} と貸方 {c} が一致しません（差額 {diff}）"),
                        format!("debits {d} and credits {c} differ by {diff}"),
                    )
                },
                idx,
                &mut issues,
            );
        }
        let rows_where = |f: &dyn Fn(&Row) -> bool| -> Vec<usize> {
            idx.iter().copied().filter(|&i| f(&entries[i])).collect()
        };
        if on("account_exists")
            && let Some(chart) = &chart
        {
            let bad = rows_where(&|r| {
                account_fields
                    .iter()
                    .any(|f| !is_blank(r.get(f)) && !chart.contains(&text(r.get(f))))
            });
            if !bad.is_empty() {
                push(
                    voucher,
                    "account_exists",
                    "error",
                    ctx.say(
                        "勘定科目が科目一覧にありません",
                        "account not in the chart of accounts",
                    )
                    .into(),
                    &bad,
                    &mut issues,
                );
            }
        }
        if on("zero_amount") {
            let bad = rows_where(&|r| {
                number(r.get(&debit_field)).unwrap_or(0.0) == 0.0
                    && number(r.get(&credit_field)).unwrap_or(0.0) == 0.0
            });
            if !bad.is_empty() {
                push(
                    voucher,
                    "zero_amount",
                    "warning",
                    ctx.say("金額が0の明細があります", "a line has zero amounts")
                        .into(),
                    &bad,
                    &mut issues,
                );
            }
        }
        if on("negative_amount") {
            let bad = rows_where(&|r| {
                number(r.get(&debit_field)).is_some_and(|x| x < 0.0)
                    || number(r.get(&credit_field)).is_some_and(|x| x < 0.0)
            });
            if !bad.is_empty() {
                push(
                    voucher,
                    "negative_amount",
                    "warning",
                    ctx.say("マイナスの金額があります", "a line has a negative amount")
                        .into(),
                    &bad,
                    &mut issues,
                );
            }
        }
        if on("period") && (start.is_some() || end.is_some()) {
            let bad = rows_where(&|r| match date(r.get(&date_field)) {
                Some(d) => start.is_some_and(|s| d < s) || end.is_some_and(|e| d > e),
                None => true,
            });
            if !bad.is_empty() {
                push(
                    voucher,
                    "period",
                    "error",
                    ctx.say(
                        "計上日が会計期間の外です（または日付が読めません）",
                        "date outside the period (or unreadable)",
                    )
                    .into(),
                    &bad,
                    &mut issues,
                );
            }
        }
        if on("tax_category") {
            let tax_fields = ["tax_category", "debit_tax_category", "credit_tax_category"];
            let bad = rows_where(&|r| {
                tax_fields.iter().any(|f| r.contains_key(*f))
                    && tax_fields.iter().all(|f| is_blank(r.get(*f)))
            });
            if !bad.is_empty() {
                push(
                    voucher,
                    "tax_category",
                    "warning",
                    ctx.say("税区分がありません", "tax category missing").into(),
                    &bad,
                    &mut issues,
                );
            }
        }
        if on("description") {
            let bad = rows_where(&|r| is_blank(r.get("description")));
            if !bad.is_empty() {
                push(
                    voucher,
                    "description",
                    "info",
                    ctx.say("摘要がありません", "description missing").into(),
                    &bad,
                    &mut issues,
                );
            }
        }
        if on("weekend") {
            let bad = rows_where(&|r| {
                date(r.get(&date_field))
                    .is_some_and(|d| matches!(d.weekday(), Weekday::Sat | Weekday::Sun))
            });
            if !bad.is_empty() {
                push(
                    voucher,
                    "weekend",
                    "warning",
                    ctx.say("土日の日付で計上されています", "dated on a weekend")
                        .into(),
                    &bad,
                    &mut issues,
                );
            }
        }
        if on("round_amount") {
            let round = |v: Option<f64>| {
                v.is_some_and(|x| x.abs() >= ROUND_AMOUNT_MIN && x % 100_000.0 == 0.0)
            };
            let bad = rows_where(&|r| {
                round(number(r.get(&debit_field))) || round(number(r.get(&credit_field)))
            });
            if !bad.is_empty() {
                push(
                    voucher,
                    "round_amount",
                    "info",
                    ctx.say("大きな端数のない金額です", "large round amount")
                        .into(),
                    &bad,
                    &mut issues,
                );
            }
        }
    }
    if entries.is_empty() {
        ctx.calls.warn(Warning::new(
            "NO_ROWS",
            "仕訳が 0 行のため、何もチェックしていません（balanced は意味を持ちません）",
            "there are no journal lines: nothing was checked (balanced means nothing here)",
        ));
    }
    // A check that flags nearly every line reads the wrong columns (a 弥生 export's 借方金額
    // read as debit_amount's default: every line "zero").
    for (check, lines) in &lines_by_check {
        ctx.calls.warn_if_mostly_flagged(
            *lines,
            entries.len(),
            (
                &format!("チェック {check} の問題"),
                &format!("issues of the {check} check"),
            ),
        );
    }
    let summary = json!({
        "voucher_count": vouchers.len(),
        "row_count": entries.len(),
        "debit_total": num_json(debit_total),
        "credit_total": num_json(credit_total),
        "by_check": by_check,
    });
    Ok(Outputs::new()
        .with("issues", Json::Array(issues))
        .with("balanced", json!(balanced))
        .with("summary", summary))
}

builtin!("control.journal_check", journal_check);

#[cfg(test)]
mod tests {
    #[test]
    fn every_check_has_a_label_for_reports() {
        for check in super::ALL_CHECKS {
            assert!(
                crate::codes::value_label("check", check, crate::codes::Lang::Ja).is_some(),
                "{check} has no label in codes.rs"
            );
        }
    }
}
