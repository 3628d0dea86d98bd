//! `ui.table_review`: its inputs and outputs are in `block_specs/ui/ui.table_review.yaml`.

use super::{answer_object, approved, bad_answer, text_input};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use serde_json::{Value as Json, json};

/// Rows of a table a question carries (the person reviews these; the block keeps them all).
const QUESTION_ROWS: usize = 500;

fn table_review(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let rows = inputs.rows("rows")?;
    let columns = inputs.strings("columns")?;
    let editable = inputs.strings("editable_columns")?.unwrap_or_default();
    let allow_exclude = inputs.bool("allow_exclude")?.unwrap_or(true);
    let title = text_input(inputs, "title")?;
    let Some(answer) = ctx.answer else {
        let shown: Vec<Json> = rows
            .iter()
            .take(QUESTION_ROWS)
            .cloned()
            .map(Json::Object)
            .collect();
        return Err(BlockError::awaiting(
            json!({
                "kind": "table_review",
                "title": title,
                "message": text_input(inputs, "message")?,
                "columns": columns,
                "editable_columns": editable,
                "allow_exclude": allow_exclude,
                "labels": crate::codes::labels_for(Some(&Json::Array(shown.clone()))),
                "rows": shown,
                "row_count": rows.len(),
            }),
            format!("表の確認待ち: {title}（{} 行）", rows.len()),
            format!(
                "waiting for the table to be reviewed: {title} ({} rows)",
                rows.len()
            ),
        ));
    };
    let answer = &answer_object(answer)?;
    let approved = approved(answer)?;
    let mut excluded_idx: Vec<usize> = Vec::new();
    match answer.get("excluded") {
        None | Some(Json::Null) => {}
        Some(Json::Array(items)) => {
            if !allow_exclude && !items.is_empty() {
                return Err(bad_answer(
                    "この表では行を除外できません",
                    "rows cannot be excluded from this table",
                ));
            }
            for item in items {
                match item.as_u64().map(|i| i as usize) {
                    Some(i) if i < rows.len() => excluded_idx.push(i),
                    _ => {
                        return Err(bad_answer(
                            format!("除外する行番号 {item} がありません"),
                            format!("there is no row {item} to exclude"),
                        ));
                    }
                }
            }
        }
        Some(_) => {
            return Err(bad_answer(
                "excluded は行番号の配列です",
                "excluded must be a list of row indexes",
            ));
        }
    }
    let mut rows = rows;
    let mut changes = Vec::new();
    match answer.get("changes") {
        None | Some(Json::Null) => {}
        Some(Json::Array(items)) => {
            for item in items {
                let row_index = item.get("row_index").and_then(Json::as_u64);
                let field = item.get("field").and_then(Json::as_str);
                let (Some(row_index), Some(field), Some(after)) =
                    (row_index, field, item.get("after"))
                else {
                    return Err(bad_answer(
                        "変更には row_index, field, after が必要です",
                        "a change needs row_index, field and after",
                    ));
                };
                if !editable.iter().any(|c| c == field) {
                    return Err(bad_answer(
                        format!("列 {field} は編集できません"),
                        format!("column {field} is not editable"),
                    ));
                }
                let Some(row) = rows.get_mut(row_index as usize) else {
                    return Err(bad_answer(
                        format!("行 {row_index} がありません"),
                        format!("there is no row {row_index}"),
                    ));
                };
                let before = row.get(field).cloned().unwrap_or(Json::Null);
                row.insert(field.to_string(), after.clone());
                changes.push(json!({"row_index": row_index, "field": field, "before": before, "after": after}));
            }
        }
        Some(_) => {
            return Err(bad_answer(
                "changes は変更の配列です",
                "changes must be a list",
            ));
        }
    }
    excluded_idx.sort_unstable();
    excluded_idx.dedup();
    let mut kept = Vec::new();
    let mut excluded = Vec::new();
    for (i, row) in rows.into_iter().enumerate() {
        if excluded_idx.binary_search(&i).is_ok() {
            excluded.push(Json::Object(row));
        } else {
            kept.push(Json::Object(row));
        }
    }
    Ok(Outputs::new()
        .with("rows", Json::Array(kept))
        .with("excluded", Json::Array(excluded))
        .with("changes", Json::Array(changes))
        .with("approved", json!(approved)))
}

builtin!("ui.table_review", table_review);
