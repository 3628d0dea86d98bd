//! `matching.exact_match`: its inputs and outputs are in `block_specs/matching/matching.exact_match.yaml`.

use super::{column_pairs, key_text, num_json, number, outputs, rows_json};
use crate::block::ProgressUnit;
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::invalid;
use crate::blocks::kit::steps::Steps;
use crate::value::Row;
use serde_json::{Value as Json, json};
use std::collections::HashMap;

// ---------------------------------------------------------------------------------------
// matching.exact_match

fn exact_match(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let left = inputs.rows("left")?;
    let right = inputs.rows("right")?;
    let keys = column_pairs(inputs, "keys")?;
    if keys.is_empty() {
        return Err(invalid(
            "照合キー keys を1つ以上指定してください",
            "keys needs at least one column",
        ));
    }
    let compare = column_pairs(inputs, "compare")?;
    let normalize = inputs.bool("normalize_keys")?.unwrap_or(true);

    let key_of = |row: &Row, left_side: bool| -> Option<Vec<String>> {
        keys.iter()
            .map(|(l, r, _)| key_text(row.get(if left_side { l } else { r }), normalize))
            .collect()
    };
    let mut by_key: HashMap<Vec<String>, Vec<usize>> = HashMap::new();
    for (j, row) in right.iter().enumerate() {
        if let Some(k) = key_of(row, false) {
            by_key.entry(k).or_default().push(j);
        }
    }
    // Right rows are consumed in order, so two left rows with one key meet two right rows.
    let mut used_right = vec![false; right.len()];
    let mut matches = Vec::new();
    let mut unmatched_left = Vec::new();
    let mut difference_count = 0usize;
    let mut amount_difference = 0.0;
    let mut steps = Steps::new(ctx, ProgressUnit::Rows, Some(left.len()));
    for row in &left {
        steps.next()?;
        let found = key_of(row, true).and_then(|k| {
            by_key
                .get(&k)
                .and_then(|js| js.iter().copied().find(|&j| !used_right[j]))
        });
        let Some(j) = found else {
            unmatched_left.push(row.clone());
            continue;
        };
        used_right[j] = true;
        let other = &right[j];
        let mut differences = Vec::new();
        for (l, r, options) in &compare {
            let tolerance = options
                .get("tolerance")
                .and_then(Json::as_f64)
                .unwrap_or(0.0);
            let (lv, rv) = (row.get(l), other.get(r));
            match (number(lv), number(rv)) {
                (Some(a), Some(b)) => {
                    let d = a - b;
                    if d.abs() > tolerance + 1e-9 {
                        amount_difference += d;
                        differences.push(json!({
                            "field": l, "left": num_json(a), "right": num_json(b),
                            "difference": num_json(d),
                        }));
                    }
                }
                _ => {
                    if key_text(lv, normalize) != key_text(rv, normalize) {
                        differences.push(json!({
                            "field": l,
                            "left": lv.cloned().unwrap_or(Json::Null),
                            "right": rv.cloned().unwrap_or(Json::Null),
                        }));
                    }
                }
            }
        }
        if !differences.is_empty() {
            difference_count += 1;
        }
        matches.push(json!({"left": row, "right": other, "differences": differences}));
    }
    let unmatched_right: Vec<Row> = right
        .iter()
        .zip(&used_right)
        .filter(|(_, used)| !**used)
        .map(|(r, _)| r.clone())
        .collect();
    // Nearly nothing matching, or nearly every match differing, is a key or column misread
    // far more often than a real result.
    ctx.calls.warn_if_mostly_flagged(
        unmatched_left.len(),
        left.len(),
        ("突合できない行", "unmatched"),
    );
    ctx.calls.warn_if_mostly_flagged(
        difference_count,
        matches.len(),
        ("差異のある突合", "matches with differences"),
    );
    let summary = json!({
        "match_count": matches.len(),
        "difference_count": difference_count,
        "unmatched_left_count": unmatched_left.len(),
        "unmatched_right_count": unmatched_right.len(),
        "amount_difference_total": num_json(amount_difference),
    });
    Ok(outputs(vec![
        ("matches", Json::Array(matches)),
        ("unmatched_left", rows_json(unmatched_left)),
        ("unmatched_right", rows_json(unmatched_right)),
        ("summary", summary),
    ]))
}

builtin!("matching.exact_match", exact_match);
