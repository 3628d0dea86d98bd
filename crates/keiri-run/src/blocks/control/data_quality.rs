//! `control.data_quality`: its inputs and outputs are in `block_specs/control/control.data_quality.yaml`.

use super::{count_by, date, is_blank, number, objects, severity, text};
use crate::block::{BlockContext, BlockError, Inputs, Outputs, Warning};
use crate::blocks::{cancelled, invalid};
use crate::jp::{NegativeMarkers, parse_amount, parse_date};
use indexmap::IndexMap;
use serde_json::{Value as Json, json};
use std::collections::BTreeMap;

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
        let (mut flagged, mut blank) = (0usize, 0usize);
        for (i, row) in rows.iter().enumerate() {
            let v = row.get(field);
            blank += usize::from(is_blank(v));
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
                flagged += 1;
                flagged_rows[i] = true;
                if sev == "error" {
                    error_rows[i] = true;
                }
            }
        }
        warn_rule(ctx, field, kind, flagged, blank, rows.len());
    }
    let valid: Vec<Json> = rows
        .iter()
        .zip(&error_rows)
        .filter(|(_, e)| !**e)
        .map(|(r, _)| Json::Object(r.clone()))
        .collect();
    // Rows with an error leave valid_rows: a later step's totals are then short of them, so it
    // is said, not only listed in issues.
    ctx.calls.warn_rows_skipped(
        rows.len() - valid.len(),
        rows.len(),
        (
            "エラーがあるため valid_rows から除きました（理由は issues にあります）",
            "were left out of valid_rows for errors (the reasons are in issues)",
        ),
    );
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

builtin!("control.data_quality", data_quality);

/// Warns when a rule flagged nearly every row (a misread column), or checked almost none
/// because the column is empty there (only `required` looks at empty values).
fn warn_rule(
    ctx: &BlockContext<'_>,
    field: &str,
    kind: &str,
    flagged: usize,
    blank: usize,
    total: usize,
) {
    ctx.calls.warn_if_mostly_flagged(
        flagged,
        total,
        (
            &format!("列 {field} の {kind} チェックの問題"),
            &format!("issues of the {kind} check on {field}"),
        ),
    );
    if kind != "required" && total > 0 && blank * 10 >= total * 9 {
        ctx.calls.warn(Warning::new(
            "ROWS_SKIPPED",
            format!(
                "{total} 行中 {blank} 行は列 {field} が空のため、{kind} チェックをしていません"
            ),
            format!("{blank} of {total} rows were not checked by {kind}: {field} is empty there"),
        ));
    }
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
