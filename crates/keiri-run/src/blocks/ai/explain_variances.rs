//! `ai.explain_variances`: draft comments for the accounts whose change exceeds the thresholds.
//!
//! The change and the flag are computed here, as `control.variance_check` does; only the
//! flagged rows go to the model, and each comment comes back under its row number.

use crate::block::ProgressUnit;
use crate::blocks::kit::steps::Steps;
use std::collections::HashMap;

use serde_json::{Value as Json, json};

use super::{Ask, Model, OutputShape, cut, language_instruction};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::kit::numbers::num_json;
use crate::blocks::kit::numbers::number;
use crate::blocks::kit::text::text;

/// Flagged accounts per call.
const BATCH: usize = 20;
/// Characters of `context` sent with each call.
const MAX_CONTEXT_CHARS: usize = 20_000;

const SYSTEM: &str = "You are a Japanese management accountant preparing the monthly variance \
analysis. For each flagged account, draft a short comment (one or two sentences) explaining the \
likely reason for the change, grounded in the supporting information when it is given. Do not \
invent transactions, amounts or facts: when the information does not explain a change, say \
which information would be needed to confirm the reason. These are drafts that staff will check. \
Answer every row number once.";

pub(super) fn explain_variances(
    ctx: &BlockContext<'_>,
    inputs: &Inputs,
) -> Result<Outputs, BlockError> {
    let mut model = Model::new(ctx, inputs)?;
    let rows = inputs.rows("rows")?;
    let account_field = inputs.str("account_field")?.unwrap_or("account");
    let current_field = inputs.str("current_field")?.unwrap_or("current");
    let comparison_field = inputs.str("comparison_field")?.unwrap_or("prior");
    let rate_limit = inputs.f64("threshold_rate")?.unwrap_or(0.1);
    let amount_limit = inputs.f64("threshold_amount")?.unwrap_or(0.0);
    let language = language_instruction(inputs)?;
    crate::value::require_columns(&rows, [account_field, current_field, comparison_field])?;
    let mut out = Vec::with_capacity(rows.len());
    let mut flagged_rows = Vec::new();
    let mut steps = Steps::new(ctx, ProgressUnit::Rows, Some(rows.len()));
    for (i, row) in rows.into_iter().enumerate() {
        steps.next()?;
        // An account missing on one side (new, closed) counts as 0 there.
        let current = number(row.get(current_field)).unwrap_or(0.0);
        let comparison = number(row.get(comparison_field)).unwrap_or(0.0);
        let change = current - comparison;
        let rate = (comparison != 0.0).then(|| change / comparison.abs());
        // Without a base the rate is unbounded: any change exceeds it.
        let rate_over = rate.map_or(change != 0.0, |r| r.abs() > rate_limit + 1e-12);
        let amount_over = change.abs() > amount_limit + 1e-9;
        let flagged = rate_over && amount_over;
        let mut r = row;
        r.insert("change_amount".into(), num_json(change));
        r.insert(
            "change_rate".into(),
            rate.map_or(Json::Null, |x| num_json((x * 10_000.0).round() / 10_000.0)),
        );
        r.insert("flagged".into(), json!(flagged));
        r.insert("comment".into(), Json::Null);
        if flagged {
            flagged_rows.push(i);
        }
        out.push(r);
    }
    let context = match inputs.json("context") {
        None => String::new(),
        Some(Json::String(s)) => cut(&s, MAX_CONTEXT_CHARS).0,
        Some(v) => cut(&v.to_string(), MAX_CONTEXT_CHARS).0,
    };
    let shape = OutputShape::fixed(
        "variance_comments",
        json!({
            "type": "object",
            "properties": {"comments": {"type": "array", "items": {
                "type": "object",
                "properties": {"row": {"type": "integer"}, "comment": {"type": "string"}},
                "required": ["row", "comment"],
                "additionalProperties": false,
            }}},
            "required": ["comments"],
            "additionalProperties": false,
        }),
    );
    let asks: Vec<Ask> = flagged_rows
        .chunks(BATCH)
        .map(|chunk| {
            let mut user = format!("{language}\n\nFlagged accounts (row number, account, current, comparison, change, change rate):\n");
            for &i in chunk {
                let r = &out[i];
                user.push_str(
                    &json!({
                        "row": i + 1,
                        "account": text(r.get(account_field)),
                        "current": r.get(current_field),
                        "comparison": r.get(comparison_field),
                        "change_amount": r["change_amount"],
                        "change_rate": r["change_rate"],
                    })
                    .to_string(),
                );
                user.push('\n');
            }
            if !context.is_empty() {
                user.push_str(&format!("\nSupporting information:\n<context>\n{context}\n</context>\n"));
            }
            let (first, last) = (chunk[0] + 1, chunk[chunk.len() - 1] + 1);
            Ask {
                purpose: format!("rows {first}-{last}"),
                system: SYSTEM.to_string(),
                user,
            }
        })
        .collect();
    let mut comments: HashMap<usize, String> = HashMap::new();
    for answer in model.ask_each(asks, &shape)? {
        for c in answer["comments"].as_array().into_iter().flatten() {
            if let (Some(row), Some(comment)) = (c["row"].as_u64(), c["comment"].as_str()) {
                comments
                    .entry(row as usize)
                    .or_insert_with(|| comment.to_string());
            }
        }
    }
    let mut commented = 0;
    for &i in &flagged_rows {
        // A flagged row the model skipped keeps `comment: null`; only flagged rows get one.
        if let Some(c) = comments.remove(&(i + 1)) {
            out[i].insert("comment".into(), json!(c));
            commented += 1;
        }
    }
    let mut summary = model.tally.to_json(model.name());
    summary.insert("accounts".into(), json!(out.len()));
    summary.insert("flagged".into(), json!(flagged_rows.len()));
    summary.insert("commented".into(), json!(commented));
    Ok(Outputs::new()
        .with("rows", out)
        .with("summary", Json::Object(summary)))
}

builtin!("ai.explain_variances", explain_variances);
