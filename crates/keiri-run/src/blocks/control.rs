//! `control/*`: the checks and the evidence of internal control — input data quality,
//! journal checks, policy rules and variance thresholds (here), audit sampling
//! ([`sampling`]), segregation of duties ([`sod`]) and the hash-chained audit trail
//! ([`audit_log`]). (`control.approval` needs a person and belongs to the interactive
//! runtime.)
//!
//! Policy conditions are row expressions in the one language the transforms use
//! ([`super::transforms::expr`]), so `amount >= 100000` means the same in
//! `transforms.filter_rows` and `control.policy_enforce`. Regular expressions are the
//! `regex` crate's (linear time: a rule from a plan cannot hang the run).

mod audit_log;
mod sampling;
mod sod;

use std::collections::BTreeMap;

use chrono::{Datelike, NaiveDate, Weekday};
use indexmap::IndexMap;
use serde_json::{Value as Json, json};

use super::transforms::expr;
use super::{cancelled, invalid};
use crate::block::{BlockContext, BlockError, Inputs, Outputs, Registry};
use crate::blocks::matching::num_json;
use crate::jp::{NegativeMarkers, parse_amount, parse_date};
use crate::value::Row;

/// Adds the `control/*` builtins (all but `control.approval`).
pub fn register(registry: &mut Registry) {
    registry.insert("control.audit_log", audit_log::audit_log);
    registry.insert("control.sampling", sampling::sampling);
    registry.insert("control.sod_check", sod::sod_check);
    registry.insert("control.data_quality", data_quality);
    registry.insert("control.journal_check", journal_check);
    registry.insert("control.policy_enforce", policy_enforce);
    registry.insert("control.variance_check", variance_check);
}

fn objects(inputs: &Inputs, key: &str) -> Result<Vec<serde_json::Map<String, Json>>, BlockError> {
    match inputs.json(key) {
        None => Ok(Vec::new()),
        Some(Json::Array(items)) => items
            .into_iter()
            .map(|i| match i {
                Json::Object(m) => Ok(m),
                _ => Err(BlockError::input_invalid(
                    key,
                    "オブジェクトの配列が必要です",
                    "expected an array of objects",
                )),
            })
            .collect(),
        Some(_) => Err(BlockError::input_invalid(
            key,
            "オブジェクトの配列が必要です",
            "expected an array of objects",
        )),
    }
}

fn is_blank(v: Option<&Json>) -> bool {
    match v {
        None | Some(Json::Null) => true,
        Some(Json::String(s)) => s.trim().is_empty(),
        _ => false,
    }
}

pub(crate) fn number(v: Option<&Json>) -> Option<f64> {
    match v? {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => parse_amount(s, &NegativeMarkers::default()).ok().flatten(),
        _ => None,
    }
}

fn date(v: Option<&Json>) -> Option<NaiveDate> {
    match v? {
        Json::String(s) => parse_date(s),
        Json::Number(n) => parse_date(&n.to_string()),
        _ => None,
    }
}

pub(crate) fn text(v: Option<&Json>) -> String {
    match v {
        None | Some(Json::Null) => String::new(),
        Some(Json::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn severity(rule: &serde_json::Map<String, Json>, default: &str) -> Result<String, BlockError> {
    match rule
        .get("severity")
        .and_then(Json::as_str)
        .unwrap_or(default)
    {
        s @ ("info" | "warning" | "error") => Ok(s.to_string()),
        other => Err(invalid(
            format!("severity {other:?} は info・warning・error のどれかです"),
            format!("severity {other:?} must be info, warning or error"),
        )),
    }
}

fn count_by(map: &mut BTreeMap<String, usize>, key: &str) {
    *map.entry(key.to_string()).or_default() += 1;
}

// ---------------------------------------------------------------------------------------
// control.data_quality

fn data_quality(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let rows = inputs.rows("rows")?;
    let rules = objects(inputs, "rules")?;
    if rules.is_empty() {
        return Err(BlockError::input_invalid(
            "rules",
            "ルールを1つ以上指定してください",
            "at least one rule is needed",
        ));
    }
    let mut issues = Vec::new();
    let mut error_rows = vec![false; rows.len()];
    let mut flagged_rows = vec![false; rows.len()];
    let (mut by_rule, mut by_field) = (BTreeMap::new(), BTreeMap::new());
    for rule in &rules {
        cancelled(ctx)?;
        let field = rule.get("field").and_then(Json::as_str).ok_or_else(|| {
            invalid(
                "rules の各要素に field が必要です",
                "each rule needs a field",
            )
        })?;
        let kind = rule.get("rule").and_then(Json::as_str).ok_or_else(|| {
            invalid(
                "rules の各要素に rule が必要です",
                "each rule needs a rule kind",
            )
        })?;
        let sev = severity(rule, "error")?;
        let custom = rule.get("message").and_then(Json::as_str);
        let regex = match kind {
            "regex" => {
                let pattern = rule.get("pattern").and_then(Json::as_str).ok_or_else(|| {
                    invalid(
                        "regex には pattern が必要です",
                        "a regex rule needs a pattern",
                    )
                })?;
                Some(regex::Regex::new(pattern).map_err(|e| {
                    invalid(
                        format!("pattern {pattern:?} が正規表現として不正です: {e}"),
                        format!("pattern {pattern:?} is not a valid regex: {e}"),
                    )
                })?)
            }
            "required" | "unique" | "range" | "allowed_values" | "type" => None,
            other => {
                return Err(invalid(
                    format!(
                        "rule {other:?} は required・unique・range・regex・allowed_values・type のどれかです"
                    ),
                    format!(
                        "rule {other:?} must be required, unique, range, regex, allowed_values or type"
                    ),
                ));
            }
        };
        let mut seen: IndexMap<String, usize> = IndexMap::new();
        for (i, row) in rows.iter().enumerate() {
            let v = row.get(field);
            let problem: Option<(String, String)> = match kind {
                "required" => {
                    is_blank(v).then(|| ("値がありません".into(), "value is missing".into()))
                }
                _ if is_blank(v) => None,
                "unique" => {
                    let key = text(v).trim().to_string();
                    match seen.get(&key) {
                        Some(first) => Some((
                            format!("{first}行目（0始まり）と重複しています"),
                            format!("duplicates row {first} (0-based)"),
                        )),
                        None => {
                            seen.insert(key, i);
                            None
                        }
                    }
                }
                "range" => range_problem(rule, v),
                "regex" => {
                    let t = text(v);
                    regex.as_ref().filter(|r| !r.is_match(&t)).map(|_| {
                        (
                            "形式が合いません".into(),
                            "does not match the pattern".into(),
                        )
                    })
                }
                "allowed_values" => {
                    let allowed = rule
                        .get("values")
                        .and_then(Json::as_array)
                        .cloned()
                        .unwrap_or_default();
                    let t = text(v);
                    (!allowed.iter().any(|a| text(Some(a)) == t)).then(|| {
                        (
                            "許可されていない値です".into(),
                            "value is not allowed".into(),
                        )
                    })
                }
                _ => type_problem(rule, v),
            };
            if let Some((ja, en)) = problem {
                let message =
                    custom.map_or_else(|| format!("{field}: {ja} / {en}"), str::to_string);
                issues.push(
                    json!({"field": field, "rule": kind, "severity": sev, "message": message,
                                   "row_index": i, "value": v.cloned().unwrap_or(Json::Null)}),
                );
                count_by(&mut by_rule, kind);
                count_by(&mut by_field, field);
                flagged_rows[i] = true;
                if sev == "error" {
                    error_rows[i] = true;
                }
            }
        }
    }
    let valid: Vec<Json> = rows
        .iter()
        .zip(&error_rows)
        .filter(|(_, e)| !**e)
        .map(|(r, _)| Json::Object(r.clone()))
        .collect();
    let summary = json!({
        "issue_count": issues.len(),
        "rows_with_issues": flagged_rows.iter().filter(|f| **f).count(),
        "by_rule": by_rule,
        "by_field": by_field,
    });
    Ok(Outputs::new()
        .with("issues", Json::Array(issues))
        .with("valid_rows", Json::Array(valid))
        .with("summary", summary))
}

/// `range`: numbers against numeric bounds, dates against date bounds.
fn range_problem(
    rule: &serde_json::Map<String, Json>,
    v: Option<&Json>,
) -> Option<(String, String)> {
    let (min, max) = (rule.get("min"), rule.get("max"));
    let bound_is_date = |b: Option<&Json>| matches!(b, Some(Json::String(s)) if parse_date(s).is_some() && parse_amount(s, &NegativeMarkers::default()).is_err());
    if bound_is_date(min) || bound_is_date(max) {
        let Some(d) = date(v) else {
            return Some(("日付として読めません".into(), "not a date".into()));
        };
        if min.and_then(|m| date(Some(m))).is_some_and(|m| d < m)
            || max.and_then(|m| date(Some(m))).is_some_and(|m| d > m)
        {
            return Some(("範囲外の日付です".into(), "date out of range".into()));
        }
        return None;
    }
    let Some(x) = number(v) else {
        return Some(("数値として読めません".into(), "not a number".into()));
    };
    if number(min).is_some_and(|m| x < m) || number(max).is_some_and(|m| x > m) {
        return Some(("範囲外の値です".into(), "value out of range".into()));
    }
    None
}

fn type_problem(
    rule: &serde_json::Map<String, Json>,
    v: Option<&Json>,
) -> Option<(String, String)> {
    let want = rule.get("type").and_then(Json::as_str).unwrap_or("string");
    let ok = match want {
        "number" => number(v).is_some(),
        "integer" => number(v).is_some_and(|x| x.fract() == 0.0),
        "date" => date(v).is_some(),
        "boolean" => {
            matches!(v, Some(Json::Bool(_)))
                || matches!(text(v).to_lowercase().as_str(), "true" | "false")
        }
        _ => true,
    };
    (!ok).then(|| (format!("{want} として読めません"), format!("not a {want}")))
}

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
    let mut balanced = true;
    let (mut debit_total, mut credit_total) = (0.0, 0.0);
    let mut push = |voucher: &str,
                    check: &str,
                    sev: &str,
                    message: String,
                    idx: &[usize],
                    issues: &mut Vec<Json>| {
        count_by(&mut by_check, check);
        let rows: Vec<Json> = idx
            .iter()
            .map(|&i| Json::Object(entries[i].clone()))
            .collect();
        issues.push(json!({"voucher": voucher, "check": check, "severity": sev, "message": message, "rows": rows}));
    };
    for (voucher, idx) in &vouchers {
        cancelled(ctx)?;
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
                format!(
                    "借方 {} と貸方 {} が一致しません（差額 {}） / debits and credits differ",
                    num_json(debit),
                    num_json(credit),
                    num_json(debit - credit)
                ),
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
                    "勘定科目が科目一覧にありません / account not in the chart of accounts".into(),
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
                    "金額が0の明細があります / a line has zero amounts".into(),
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
                    "マイナスの金額があります / a line has a negative amount".into(),
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
                push(voucher, "period", "error", "計上日が会計期間の外です（または日付が読めません） / date outside the period (or unreadable)".into(), &bad, &mut issues);
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
                    "税区分がありません / tax category missing".into(),
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
                    "摘要がありません / description missing".into(),
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
                    "土日の日付で計上されています / dated on a weekend".into(),
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
                    "大きな端数のない金額です / large round amount".into(),
                    &bad,
                    &mut issues,
                );
            }
        }
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

// ---------------------------------------------------------------------------------------
// control.policy_enforce

fn policy_enforce(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let rows = inputs.rows("rows")?;
    let specs = objects(inputs, "rules")?;
    let stop_on_error = inputs.bool("stop_on_error")?.unwrap_or(false);
    struct Rule {
        id: String,
        message: String,
        severity: String,
        condition: expr::Expr,
        when: Option<expr::Expr>,
    }
    let parse = |src: &str, id: &str| {
        expr::parse(src).map_err(|e| {
            invalid(
                format!("ルール {id} の式「{src}」を解釈できません: {e}"),
                format!("rule {id}: cannot parse {src:?}: {e}"),
            )
        })
    };
    let mut rules = Vec::new();
    for (n, s) in specs.iter().enumerate() {
        let id = s
            .get("id")
            .and_then(Json::as_str)
            .map_or_else(|| format!("R{}", n + 1), str::to_string);
        let condition = s.get("condition").and_then(Json::as_str).ok_or_else(|| {
            invalid(
                format!("ルール {id} に condition がありません"),
                format!("rule {id} has no condition"),
            )
        })?;
        rules.push(Rule {
            message: s
                .get("description")
                .and_then(Json::as_str)
                .map_or_else(|| format!("{condition} を満たしていません"), str::to_string),
            severity: severity(s, "error")?,
            condition: parse(condition, &id)?,
            when: s
                .get("when")
                .and_then(Json::as_str)
                .map(|w| parse(w, &id))
                .transpose()?,
            id,
        });
    }
    let mut violations = Vec::new();
    let mut passed = Vec::new();
    let (mut by_rule, mut by_severity) = (BTreeMap::new(), BTreeMap::new());
    for (i, row) in rows.iter().enumerate() {
        cancelled(ctx)?;
        let get = |c: &str| row.get(c).cloned().unwrap_or(Json::Null);
        let eval = |e: &expr::Expr, id: &str| {
            expr::eval(e, &get).map_err(|m| {
                BlockError::failed(
                    format!("{i}行目（0始まり）でルール {id} を評価できません: {m}"),
                    format!("row {i}: cannot evaluate rule {id}: {m}"),
                )
            })
        };
        let mut clean = true;
        for r in &rules {
            if let Some(w) = &r.when
                && eval(w, &r.id)? != Json::Bool(true)
            {
                continue;
            }
            if eval(&r.condition, &r.id)? == Json::Bool(true) {
                continue;
            }
            clean = false;
            count_by(&mut by_rule, &r.id);
            count_by(&mut by_severity, &r.severity);
            violations.push(json!({"rule_id": r.id, "severity": r.severity, "message": r.message, "row_index": i, "row": row}));
        }
        if clean {
            passed.push(Json::Object(row.clone()));
        }
    }
    if stop_on_error && by_severity.contains_key("error") {
        return Err(BlockError::failed(
            format!(
                "重要度 error の規程違反が {} 件あります",
                by_severity["error"]
            ),
            format!(
                "{} policy violations of severity error",
                by_severity["error"]
            ),
        ));
    }
    let summary = json!({"violation_count": violations.len(), "passed_count": passed.len(), "by_rule": by_rule, "by_severity": by_severity});
    Ok(Outputs::new()
        .with("violations", Json::Array(violations))
        .with("passed", Json::Array(passed))
        .with("summary", summary))
}

// ---------------------------------------------------------------------------------------
// control.variance_check

fn variance_check(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let rows = inputs.rows("rows")?;
    let key_field = inputs.str("key_field")?.unwrap_or("account").to_string();
    let current_field = inputs
        .str("current_field")?
        .unwrap_or("current")
        .to_string();
    let comparison_field = inputs
        .str("comparison_field")?
        .unwrap_or("prior")
        .to_string();
    let rate_limit = inputs.f64("threshold_rate")?.unwrap_or(0.2);
    let amount_limit = inputs.f64("threshold_amount")?.unwrap_or(0.0);
    let combine_and = match inputs.str("combine")?.unwrap_or("and") {
        "and" => true,
        "or" => false,
        _ => {
            return Err(BlockError::input_invalid(
                "combine",
                "and か or です",
                "expected and or or",
            ));
        }
    };
    let mut out = Vec::with_capacity(rows.len());
    let mut issues = Vec::new();
    let (mut current_total, mut comparison_total) = (0.0, 0.0);
    for row in &rows {
        cancelled(ctx)?;
        // A row missing on one side (a new account, a leaver) counts as 0 there.
        let current = number(row.get(&current_field)).unwrap_or(0.0);
        let comparison = number(row.get(&comparison_field)).unwrap_or(0.0);
        current_total += current;
        comparison_total += comparison;
        let change = current - comparison;
        let rate = (comparison != 0.0).then(|| change / comparison.abs());
        // Without a base the rate is unbounded: any change exceeds it.
        let rate_over = rate.map_or(change != 0.0, |r| r.abs() > rate_limit + 1e-12);
        let amount_over = change.abs() > amount_limit + 1e-9;
        let flagged = if combine_and {
            rate_over && amount_over
        } else {
            rate_over || amount_over
        };
        let mut r = row.clone();
        r.insert("change_amount".into(), num_json(change));
        r.insert(
            "change_rate".into(),
            rate.map_or(Json::Null, |x| num_json((x * 10_000.0).round() / 10_000.0)),
        );
        r.insert("flagged".into(), json!(flagged));
        if flagged {
            let mut issue = r.clone();
            issue.insert("rule".into(), json!("variance"));
            issue.insert("severity".into(), json!("warning"));
            issue.insert(
                "message".into(),
                json!(format!(
                    "{} の増減 {} がしきい値を超えています / change over the threshold",
                    text(row.get(&key_field)),
                    num_json(change)
                )),
            );
            issues.push(Json::Object(issue));
        }
        out.push(Json::Object(r));
    }
    let summary = json!({
        "row_count": rows.len(),
        "issue_count": issues.len(),
        "current_total": num_json(current_total),
        "comparison_total": num_json(comparison_total),
    });
    Ok(Outputs::new()
        .with("rows", Json::Array(out))
        .with("issues", Json::Array(issues))
        .with("summary", summary))
}
