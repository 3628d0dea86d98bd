//! `report.summary`: its inputs and outputs are in `block_specs/output/report.summary.yaml`.

use super::{md_table, text};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::codes::{Lang, column_label, value_label};
use crate::value::Row;
use serde_json::{Value as Json, json};

/// Columns tried, in order, when none of `group_by` is in the findings: each catalog block
/// names its finding kind differently.
const FALLBACK_GROUPS: &[&str] = &["type", "reason", "rule", "rule_id", "source"];

/// Severity order for the report: the most serious first.
fn severity_rank(s: &str) -> usize {
    match s.to_ascii_lowercase().as_str() {
        "critical" | "重大" => 0,
        "error" | "high" | "エラー" | "高" => 1,
        "warning" | "medium" | "警告" | "中" => 2,
        "info" | "low" | "情報" | "低" => 3,
        _ => 4,
    }
}

fn report_summary(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let findings = inputs.rows("findings")?;
    let requested = inputs
        .strings("group_by")?
        .unwrap_or_else(|| vec!["severity".into(), "rule_id".into()]);
    let amount_field = inputs.str("amount_field")?.map(str::to_string);
    let title = inputs.str("title")?.unwrap_or("例外レポート").to_string();
    let period = inputs.str("period")?.map(str::to_string);
    let max_examples =
        usize::try_from(inputs.i64("max_examples")?.unwrap_or(5).max(0)).unwrap_or(0);

    let present = |c: &str| {
        findings
            .iter()
            .any(|r| r.get(c).is_some_and(|v| !v.is_null()))
    };
    let mut group_by: Vec<String> = requested.iter().filter(|c| present(c)).cloned().collect();
    if group_by.is_empty() {
        group_by.extend(
            FALLBACK_GROUPS
                .iter()
                .find(|c| present(c))
                .map(|c| c.to_string()),
        );
    }
    let amount_of = |r: &Row| -> Option<f64> {
        let f = amount_field.as_deref()?;
        match r.get(f)? {
            Json::Number(n) => n.as_f64(),
            Json::String(s) => crate::jp::parse_amount(s, &Default::default())
                .ok()
                .flatten(),
            _ => None,
        }
    };
    // Groups in first-appearance order, then sorted by severity and count.
    // The columns of the findings that hold codes only: their values are shown as labels.
    let flat: Vec<Row> = findings.iter().map(flatten).collect();
    let code_columns: std::collections::HashSet<String> = crate::value::columns_of(&flat)
        .into_iter()
        .filter(|c| crate::codes::is_code_column(c, flat.iter().filter_map(|r| r.get(c))))
        .collect();
    let mut groups: indexmap::IndexMap<Vec<String>, Vec<usize>> = indexmap::IndexMap::new();
    for (i, r) in findings.iter().enumerate() {
        let key: Vec<String> = group_by.iter().map(|c| text(r.get(c))).collect();
        groups.entry(key).or_default().push(i);
    }
    let sev_pos = group_by.iter().position(|c| c == "severity");
    let mut ordered: Vec<(Vec<String>, Vec<usize>)> = groups.into_iter().collect();
    ordered.sort_by(|a, b| {
        let ra = sev_pos.map_or(0, |p| severity_rank(&a.0[p]));
        let rb = sev_pos.map_or(0, |p| severity_rank(&b.0[p]));
        ra.cmp(&rb).then(b.1.len().cmp(&a.1.len()))
    });
    let mut table = Vec::new();
    let mut total_amount = 0.0;
    let mut by_severity: indexmap::IndexMap<String, usize> = indexmap::IndexMap::new();
    for r in &findings {
        if let Some(s) = r.get("severity").filter(|v| !v.is_null()) {
            *by_severity.entry(text(Some(s))).or_default() += 1;
        }
        total_amount += amount_of(r).unwrap_or(0.0);
    }
    let mut md = format!("# {title}\n\n");
    if let Some(p) = &period {
        md.push_str(&format!("対象期間: {p}\n\n"));
    }
    md.push_str(&format!("総件数: {} 件\n", findings.len()));
    if amount_field.is_some() {
        md.push_str(&format!(
            "金額合計: {} 円\n",
            crate::blocks::kit::numbers::grouped(total_amount)
        ));
    }
    for (key, idx) in &ordered {
        let mut row = Row::new();
        for (c, v) in group_by.iter().zip(key) {
            row.insert(c.clone(), json!(v));
        }
        row.insert("count".into(), json!(idx.len()));
        let label = if key.is_empty() {
            "すべて".to_string()
        } else {
            group_by
                .iter()
                .zip(key)
                .map(|(c, v)| {
                    code_columns
                        .contains(c)
                        .then(|| value_label(c, v, Lang::Ja))
                        .flatten()
                        .unwrap_or(v)
                        .to_string()
                })
                .collect::<Vec<_>>()
                .join(" / ")
        };
        md.push_str(&format!("\n## {label}（{} 件）\n\n", idx.len()));
        if amount_field.is_some() {
            let amount: f64 = idx.iter().filter_map(|&i| amount_of(&findings[i])).sum();
            row.insert(
                "amount".into(),
                crate::blocks::kit::numbers::num_json(amount),
            );
            md.push_str(&format!(
                "金額: {} 円\n\n",
                crate::blocks::kit::numbers::grouped(amount)
            ));
        }
        let examples: Vec<Row> = idx
            .iter()
            .take(max_examples)
            .map(|&i| labelled(&flat[i], &code_columns))
            .collect();
        md.push_str(&md_table(ctx, &examples, max_examples));
        if idx.len() > max_examples && max_examples > 0 {
            // md_table has already said how many rows were left out only when it was given
            // them all; examples are a prefix, so say it here.
            md.push_str(&format!("\n（ほか {} 件）\n", idx.len() - max_examples));
        }
        table.push(row);
    }
    let details: Vec<Json> = ordered
        .iter()
        .flat_map(|(_, idx)| by_cluster(&findings, idx))
        .map(|i| Json::Object(flat[i].clone()))
        .collect();
    let mut summary = json!({"total_count": findings.len(), "by_severity": by_severity});
    if amount_field.is_some() {
        summary["total_amount"] = crate::blocks::kit::numbers::num_json(total_amount);
    }
    Ok(Outputs::new()
        .with(
            "rows",
            Json::Array(table.into_iter().map(Json::Object).collect()),
        )
        .with("details", Json::Array(details))
        .with("markdown", json!(md))
        .with("summary", summary))
}

builtin!("report.summary", report_summary);

/// A group's findings with the members of one cluster together (duplicate invoices carry a
/// `cluster_id`), otherwise in their order.
fn by_cluster(findings: &[Row], idx: &[usize]) -> Vec<usize> {
    let mut idx = idx.to_vec();
    if idx.iter().all(|&i| findings[i].contains_key("cluster_id")) {
        let key = |i: usize| match findings[i].get("cluster_id") {
            Some(Json::Number(n)) => (n.as_f64().unwrap_or(f64::MAX), String::new()),
            other => (f64::MAX, text(other)),
        };
        idx.sort_by(|&a, &b| {
            key(a)
                .partial_cmp(&key(b))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    }
    idx
}

/// A finding as one flat row for a table: the row a finding is about (`row` in
/// control.policy_enforce, `transaction` in control.sod_check) gives its columns beside the
/// finding's own, and other nested values (the source rows a match carries) are left out,
/// because a cell of JSON is not something a person can read.
fn flatten(finding: &Row) -> Row {
    let mut out = Row::new();
    for (k, v) in finding {
        match v {
            Json::Object(inner) if k == "row" || k == "transaction" => {
                for (ik, iv) in inner {
                    if !finding.contains_key(ik) && !iv.is_object() && !iv.is_array() {
                        out.insert(ik.clone(), iv.clone());
                    }
                }
            }
            Json::Object(_) | Json::Array(_) => {}
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

/// A row for the report's text: Japanese headers, and labels for the values of the columns
/// that hold codes only.
fn labelled(row: &Row, code_columns: &std::collections::HashSet<String>) -> Row {
    let mut out = Row::new();
    for (k, v) in row {
        let value = match v {
            Json::String(s) if code_columns.contains(k) => {
                value_label(k, s, Lang::Ja).map_or_else(|| v.clone(), |l| json!(l))
            }
            _ => v.clone(),
        };
        // Two columns with one header (`rule` and `check`) keep their own names.
        let header = column_label(k, Lang::Ja)
            .filter(|h| !out.contains_key(*h) && !row.contains_key(*h))
            .unwrap_or(k);
        out.insert(header.to_string(), value);
    }
    out
}
