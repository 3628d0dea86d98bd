//! `matching.fuzzy_match`: its inputs and outputs are in `block_specs/matching/matching.fuzzy_match.yaml`.

use super::{
    cell_text, column_pairs, date, key_text, name_similarity, num_json, number, outputs, round4,
    rows_json,
};
use crate::block::ProgressUnit;
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::invalid;
use crate::blocks::kit::steps::Steps;
use crate::value::Row;
use serde_json::{Map, Value as Json, json};

// ---------------------------------------------------------------------------------------
// matching.fuzzy_match

#[derive(Clone, Copy, PartialEq)]
enum FieldKind {
    Text,
    Amount,
    Date,
    Exact,
}

struct FuzzyField {
    left: String,
    right: String,
    kind: FieldKind,
    weight: f64,
}

fn fuzzy_fields(inputs: &Inputs) -> Result<Vec<FuzzyField>, BlockError> {
    let pairs = column_pairs(inputs, "fields")?;
    if pairs.is_empty() {
        return Err(invalid(
            "比べる項目 fields を1つ以上指定してください",
            "fields needs at least one item",
        ));
    }
    pairs
        .into_iter()
        .map(|(left, right, options)| {
            let kind = match options.get("kind").and_then(Json::as_str).unwrap_or("text") {
                "text" => FieldKind::Text,
                "amount" => FieldKind::Amount,
                "date" => FieldKind::Date,
                "exact" => FieldKind::Exact,
                other => {
                    return Err(invalid(
                        format!("fields の kind {other:?} は text/amount/date/exact のどれかです"),
                        format!("fields kind {other:?} must be text, amount, date or exact"),
                    ));
                }
            };
            let weight = options.get("weight").and_then(Json::as_f64).unwrap_or(1.0);
            if !(weight.is_finite() && weight >= 0.0) {
                return Err(invalid(
                    "fields の weight は0以上の数です",
                    "fields weight must be a number of at least 0",
                ));
            }
            Ok(FuzzyField {
                left,
                right,
                kind,
                weight,
            })
        })
        .collect()
}

fn fuzzy_match(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let left = inputs.rows("left")?;
    let right = inputs.rows("right")?;
    let fields = fuzzy_fields(inputs)?;
    let threshold = inputs.f64("threshold")?.unwrap_or(0.85);
    let amount_tolerance = inputs.f64("amount_tolerance")?.unwrap_or(0.0);
    let date_tolerance = inputs.i64("date_tolerance_days")?.unwrap_or(0);
    let one_to_one = inputs.bool("one_to_one")?.unwrap_or(true);
    let block_on = column_pairs(inputs, "block_on")?;
    let total_weight: f64 = fields.iter().map(|f| f.weight).sum();
    if total_weight <= 0.0 {
        return Err(invalid(
            "fields の weight の合計が0です",
            "the weights of fields sum to 0",
        ));
    }

    // Field score: text is the name similarity; amount, date and exact are 1 within the
    // tolerance and 0 outside, so a score reads as "how many weighted fields agree".
    let field_score = |f: &FuzzyField, l: &Row, r: &Row| -> f64 {
        let (lv, rv) = (l.get(&f.left), r.get(&f.right));
        match f.kind {
            FieldKind::Text => name_similarity(&cell_text(lv), &cell_text(rv)),
            FieldKind::Amount => match (number(lv), number(rv)) {
                (Some(a), Some(b)) if (a - b).abs() <= amount_tolerance + 1e-9 => 1.0,
                _ => 0.0,
            },
            FieldKind::Date => match (date(lv), date(rv)) {
                (Some(a), Some(b)) if (a - b).num_days().abs() <= date_tolerance => 1.0,
                _ => 0.0,
            },
            FieldKind::Exact => match (key_text(lv, true), key_text(rv, true)) {
                (Some(a), Some(b)) if a == b => 1.0,
                _ => 0.0,
            },
        }
    };
    let block_key = |row: &Row, left_side: bool| -> Option<Vec<String>> {
        block_on
            .iter()
            .map(|(l, r, _)| key_text(row.get(if left_side { l } else { r }), true))
            .collect()
    };

    let mut candidates: Vec<(usize, usize, f64, Map<String, Json>)> = Vec::new();
    let mut steps = Steps::new(ctx, ProgressUnit::Rows, Some(left.len()));
    for (i, l) in left.iter().enumerate() {
        steps.next()?;
        let lk = block_key(l, true);
        for (j, r) in right.iter().enumerate() {
            if !block_on.is_empty() && (lk.is_none() || lk != block_key(r, false)) {
                continue;
            }
            let mut per_field = Map::new();
            let mut sum = 0.0;
            for f in &fields {
                let s = round4(field_score(f, l, r));
                sum += s * f.weight;
                per_field.insert(f.left.clone(), num_json(s));
            }
            let score = round4(sum / total_weight);
            if score + 1e-9 >= threshold {
                candidates.push((i, j, score, per_field));
            }
        }
    }
    let chosen: Vec<(usize, usize, f64, Map<String, Json>)> = if one_to_one {
        // Greedy on the best score first: the usual assignment for record linkage, and it
        // is deterministic (ties go to the earlier left row, then the earlier right row).
        candidates.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)).then(a.1.cmp(&b.1)));
        let mut used_l = vec![false; left.len()];
        let mut used_r = vec![false; right.len()];
        let mut picked = Vec::new();
        for c in candidates {
            if !used_l[c.0] && !used_r[c.1] {
                used_l[c.0] = true;
                used_r[c.1] = true;
                picked.push(c);
            }
        }
        picked.sort_by_key(|c| c.0);
        picked
    } else {
        candidates.sort_by(|a, b| a.0.cmp(&b.0).then(b.2.total_cmp(&a.2)).then(a.1.cmp(&b.1)));
        candidates
    };
    let mut matched_l = vec![false; left.len()];
    let mut matched_r = vec![false; right.len()];
    let mut scores = Vec::new();
    let matches: Vec<Json> = chosen
        .into_iter()
        .map(|(i, j, score, per_field)| {
            matched_l[i] = true;
            matched_r[j] = true;
            scores.push(score);
            json!({"left": left[i], "right": right[j], "score": num_json(score), "field_scores": per_field})
        })
        .collect();
    let unmatched_left: Vec<Row> = left
        .iter()
        .zip(&matched_l)
        .filter(|(_, m)| !**m)
        .map(|(r, _)| r.clone())
        .collect();
    let unmatched_right: Vec<Row> = right
        .iter()
        .zip(&matched_r)
        .filter(|(_, m)| !**m)
        .map(|(r, _)| r.clone())
        .collect();
    let distribution = if scores.is_empty() {
        json!({"min": null, "mean": null, "max": null})
    } else {
        let min = scores.iter().copied().fold(f64::INFINITY, f64::min);
        let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mean = scores.iter().sum::<f64>() / scores.len() as f64;
        json!({"min": num_json(min), "mean": num_json(mean), "max": num_json(max)})
    };
    // Nearly nothing reaching the threshold is a field or column misread far more often than
    // a real result (as in `exact_match`).
    ctx.calls.warn_if_mostly_flagged(
        unmatched_left.len(),
        left.len(),
        ("突合できない行", "unmatched"),
    );
    let summary = json!({
        "match_count": matches.len(),
        "unmatched_left_count": unmatched_left.len(),
        "unmatched_right_count": unmatched_right.len(),
        "score_distribution": distribution,
    });
    Ok(outputs(vec![
        ("matches", Json::Array(matches)),
        ("unmatched_left", rows_json(unmatched_left)),
        ("unmatched_right", rows_json(unmatched_right)),
        ("summary", summary),
    ]))
}

builtin!("matching.fuzzy_match", fuzzy_match);
