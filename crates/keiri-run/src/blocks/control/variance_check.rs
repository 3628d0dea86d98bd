//! `control.variance_check`: its inputs and outputs are in `block_specs/control/control.variance_check.yaml`.

use super::{number, text};
use crate::block::ProgressUnit;
use crate::block::{BlockContext, BlockError, Inputs, Outputs, Warning};
use crate::blocks::kit::numbers::num_json;
use crate::blocks::kit::steps::Steps;
use serde_json::{Value as Json, json};

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
    // Values that are there but are not numbers count as 0 like empty ones; say how many.
    let mut unreadable: Vec<(&str, usize, String)> = vec![
        (current_field.as_str(), 0, String::new()),
        (comparison_field.as_str(), 0, String::new()),
    ];
    let mut steps = Steps::new(ctx, ProgressUnit::Rows, Some(rows.len()));
    for row in &rows {
        steps.next()?;
        for (field, count, example) in unreadable.iter_mut() {
            let value = row.get(*field);
            if number(value).is_none() && !text(value).trim().is_empty() {
                if *count == 0 {
                    *example = text(value);
                }
                *count += 1;
            }
        }
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
            issue.insert("message".into(), {
                let (key, change) = (text(row.get(&key_field)), num_json(change));
                json!(ctx.say(
                    format!("{key} の増減 {change} がしきい値を超えています"),
                    format!("the change of {key}, {change}, is over the threshold"),
                ))
            });
            issues.push(Json::Object(issue));
        }
        out.push(Json::Object(r));
    }
    for (field, count, example) in &unreadable {
        if *count > 0 {
            let total = rows.len();
            ctx.calls.warn(Warning::new(
                "VALUES_UNREADABLE",
                format!(
                    "列 {field} の {total} 行中 {count} 件を数値として読めず、0 として比較しました（例: {example}）"
                ),
                format!(
                    "{count} of {total} values of {field} are not numbers (e.g. {example}): they were compared as 0"
                ),
            ));
        }
    }
    ctx.calls.warn_if_mostly_flagged(
        issues.len(),
        rows.len(),
        ("しきい値を超える増減", "changes over the threshold"),
    );
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

builtin!("control.variance_check", variance_check);
