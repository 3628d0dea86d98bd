//! Human-in-the-loop blocks: `ui.confirmation`, `ui.interactive_input`, `ui.table_review`,
//! `ui.diff_viewer` and `control.approval`.
//!
//! Without an answer a block returns [`BlockError::awaiting`] with a question — a JSON object
//! whose `kind` tells the front-end which controls to show — and the engine pauses the run there
//! (`state.json` keeps it; status `paused`). The window, `keiri run` on a terminal (or
//! `--answers FILE`) and `run_resume` over the API answer it; the run is then resumed and the
//! block is called again with [`BlockContext::answer`], which it checks against the question
//! (a malformed answer is `INPUT_INVALID`, and the run stays resumable).
//!
//! Answers, by `kind`:
//! - `confirmation`, `diff`: `{approved: bool, comment?: string}`
//! - `input`: `{values: {id: value}, approved?: bool, response?: string}`; every required
//!   field needs a value of its type
//! - `table_review`: `{approved: bool, excluded?: [row index], changes?: [{row_index, field,
//!   after}]}`; only `editable_columns` may change, only when `allow_exclude` rows go
//! - `approval`: `{decisions: [{approver, decision: approved|rejected, comment?}]}`; approved
//!   when every approver on the route approved

use serde_json::{Map, Value as Json, json};

use crate::block::{BlockContext, BlockError, Inputs, Outputs, Registry};

/// Rows of a table a question carries (the person reviews these; the block keeps them all).
const QUESTION_ROWS: usize = 500;

pub fn register(registry: &mut Registry) {
    registry.insert("ui.confirmation", confirmation);
    registry.insert("ui.interactive_input", interactive_input);
    registry.insert("ui.table_review", table_review);
    registry.insert("ui.diff_viewer", diff_viewer);
    registry.insert("control.approval", approval);
}

fn bad_answer(ja: impl Into<String>, en: impl Into<String>) -> BlockError {
    BlockError::input_invalid(
        "answer",
        &format!("回答の形が違います（{}）", ja.into()),
        &format!("the answer does not fit the question ({})", en.into()),
    )
}

fn answer_object(answer: &Json) -> Result<&Map<String, Json>, BlockError> {
    answer
        .as_object()
        .ok_or_else(|| bad_answer("オブジェクトが必要です", "expected an object"))
}

fn approved(answer: &Map<String, Json>) -> Result<bool, BlockError> {
    match answer.get("approved") {
        Some(Json::Bool(b)) => Ok(*b),
        _ => Err(bad_answer(
            "approved に true か false が必要です",
            "approved must be true or false",
        )),
    }
}

fn comment(answer: &Map<String, Json>) -> Result<String, BlockError> {
    match answer.get("comment") {
        None | Some(Json::Null) => Ok(String::new()),
        Some(Json::String(s)) => Ok(s.clone()),
        Some(_) => Err(bad_answer(
            "comment は文字列です",
            "comment must be a string",
        )),
    }
}

fn text_input(inputs: &Inputs, key: &str) -> Result<String, BlockError> {
    Ok(inputs.str(key)?.unwrap_or_default().to_string())
}

fn confirmation(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let message = inputs.require_str("message")?.to_string();
    let Some(answer) = ctx.answer else {
        return Err(BlockError::awaiting(
            json!({
                "kind": "confirmation",
                "message": message,
                "details": inputs.json("details"),
                "confirm_label": text_input(inputs, "confirm_label")?,
                "cancel_label": text_input(inputs, "cancel_label")?,
            }),
            format!("確認待ち: {message}"),
            format!("waiting for a confirmation: {message}"),
        ));
    };
    let answer = answer_object(answer)?;
    Ok(Outputs::new()
        .with("approved", json!(approved(answer)?))
        .with("comment", json!(comment(answer)?)))
}

fn diff_viewer(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let title = text_input(inputs, "title")?;
    let diffs = match inputs.json("patch_diff") {
        Some(Json::Array(items)) => items,
        Some(_) => {
            return Err(BlockError::input_invalid(
                "patch_diff",
                "配列が必要です",
                "expected an array",
            ));
        }
        None => Vec::new(),
    };
    let Some(answer) = ctx.answer else {
        return Err(BlockError::awaiting(
            json!({
                "kind": "diff",
                "title": title,
                "before": inputs.json("before"),
                "after": inputs.json("after"),
                "patch_diff": diffs,
                "key_fields": inputs.strings("key_fields")?.unwrap_or_default(),
            }),
            format!("変更内容の確認待ち: {title}"),
            format!("waiting for the changes to be reviewed: {title}"),
        ));
    };
    let answer = answer_object(answer)?;
    Ok(Outputs::new()
        .with("approved", json!(approved(answer)?))
        .with("comment", json!(comment(answer)?))
        .with("diffs", Json::Array(diffs)))
}

/// The type of a value, as the question's field types name them.
fn fits(kind: &str, value: &Json, options: &[Json]) -> bool {
    match kind {
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "select" | "enum" => options.is_empty() || options.contains(value),
        "table" => value.is_array(),
        // text, file and anything newer: a string.
        _ => value.is_string(),
    }
}

fn interactive_input(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let mode = inputs.str("mode")?.unwrap_or("collect").to_string();
    let message = text_input(inputs, "message")?;
    let fields = match inputs.json("requirements") {
        Some(Json::Array(items)) => items,
        None => Vec::new(),
        Some(_) => {
            return Err(BlockError::input_invalid(
                "requirements",
                "項目の配列が必要です",
                "expected a list of fields",
            ));
        }
    };
    for (i, field) in fields.iter().enumerate() {
        if field.get("id").and_then(Json::as_str).is_none() {
            return Err(BlockError::input_invalid(
                "requirements",
                &format!("{i} 番目の項目に id がありません"),
                &format!("field {i} has no id"),
            ));
        }
    }
    let Some(answer) = ctx.answer else {
        return Err(BlockError::awaiting(
            json!({
                "kind": "input",
                "mode": mode,
                "message": message,
                "fields": fields,
                "context": inputs.json("context"),
            }),
            format!("入力待ち: {message}"),
            format!("waiting for input: {message}"),
        ));
    };
    let answer = answer_object(answer)?;
    let empty = Map::new();
    let values = match answer.get("values") {
        None | Some(Json::Null) => &empty,
        Some(Json::Object(map)) => map,
        Some(_) => {
            return Err(bad_answer(
                "values は項目 id と値の対応です",
                "values must map field ids to values",
            ));
        }
    };
    let mut collected = Map::new();
    for field in &fields {
        let id = field.get("id").and_then(Json::as_str).unwrap_or_default();
        let kind = field.get("type").and_then(Json::as_str).unwrap_or("text");
        let required = field
            .get("required")
            .and_then(Json::as_bool)
            .unwrap_or(true);
        let options = field
            .get("options")
            .and_then(Json::as_array)
            .cloned()
            .unwrap_or_default();
        match values.get(id) {
            None | Some(Json::Null) if required => {
                return Err(bad_answer(
                    format!("{id} が未入力です"),
                    format!("{id} is required"),
                ));
            }
            None | Some(Json::Null) => {}
            Some(value) if !fits(kind, value, &options) => {
                return Err(bad_answer(
                    format!("{id} は {kind} の値が必要です"),
                    format!("{id} needs a {kind} value"),
                ));
            }
            Some(value) => {
                collected.insert(id.to_string(), value.clone());
            }
        }
    }
    if let Some(extra) = values.keys().find(|k| {
        !fields
            .iter()
            .any(|f| f.get("id").and_then(Json::as_str) == Some(k.as_str()))
    }) {
        return Err(bad_answer(
            format!("{extra} という項目はありません"),
            format!("there is no field {extra}"),
        ));
    }
    let approved = match answer.get("approved") {
        None | Some(Json::Null) => true,
        Some(Json::Bool(b)) => *b,
        Some(_) => {
            return Err(bad_answer(
                "approved は true か false です",
                "approved must be true or false",
            ));
        }
    };
    let response = match answer.get("response") {
        None | Some(Json::Null) => String::new(),
        Some(Json::String(s)) => s.clone(),
        Some(_) => {
            return Err(bad_answer(
                "response は文字列です",
                "response must be a string",
            ));
        }
    };
    Ok(Outputs::new()
        .with("collected_data", Json::Object(collected))
        .with("approved", json!(approved))
        .with("response", json!(response))
        .with("metadata", json!({"mode": mode, "fields": fields.len()})))
}

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
    let answer = answer_object(answer)?;
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

fn approval(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let subject = inputs.require_str("subject")?.to_string();
    let amount = inputs.f64("amount")?.unwrap_or(0.0);
    let threshold = inputs.f64("threshold_amount")?.unwrap_or(0.0);
    let approvers = match inputs.json("approvers") {
        Some(Json::Array(items)) => items,
        None => Vec::new(),
        Some(_) => {
            return Err(BlockError::input_invalid(
                "approvers",
                "承認者の配列が必要です",
                "expected a list of approvers",
            ));
        }
    };
    // The route: every approver whose limit does not already cover the amount, up to the
    // first whose limit does (a limit of 0 or none means no limit). Under the threshold,
    // nobody needs to approve.
    let mut route: Vec<String> = Vec::new();
    if amount.abs() >= threshold {
        for a in &approvers {
            let name = a
                .get("name")
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_string();
            if name.is_empty() {
                return Err(BlockError::input_invalid(
                    "approvers",
                    "承認者に name が必要です",
                    "every approver needs a name",
                ));
            }
            route.push(name);
            let limit = a.get("limit").and_then(Json::as_f64).unwrap_or(0.0);
            if limit <= 0.0 || amount.abs() <= limit {
                break;
            }
        }
    }
    if route.is_empty() {
        return Ok(Outputs::new()
            .with("approved", json!(true))
            .with("decisions", json!([]))
            .with("route", json!([])));
    }
    let Some(answer) = ctx.answer else {
        return Err(BlockError::awaiting(
            json!({
                "kind": "approval",
                "subject": subject,
                "amount": amount,
                "route": route,
                "approvers": approvers,
                "details": inputs.json("details"),
                "attachments": inputs.strings("attachments")?.unwrap_or_default(),
            }),
            format!("承認待ち: {subject}（{}）", route.join(" → ")),
            format!("waiting for approval: {subject} ({})", route.join(" → ")),
        ));
    };
    let answer = answer_object(answer)?;
    let Some(Json::Array(given)) = answer.get("decisions") else {
        return Err(bad_answer(
            "decisions に承認者ごとの判断が必要です",
            "decisions must list each approver's decision",
        ));
    };
    let now = ctx.now.to_rfc3339();
    let mut decisions = Vec::new();
    let mut all_approved = true;
    for name in &route {
        let Some(d) = given
            .iter()
            .find(|d| d.get("approver").and_then(Json::as_str) == Some(name.as_str()))
        else {
            return Err(bad_answer(
                format!("{name} の判断がありません"),
                format!("no decision from {name}"),
            ));
        };
        let decision = d.get("decision").and_then(Json::as_str).unwrap_or_default();
        if decision != "approved" && decision != "rejected" {
            return Err(bad_answer(
                format!("{name} の判断は approved か rejected です"),
                format!("{name}'s decision must be approved or rejected"),
            ));
        }
        all_approved &= decision == "approved";
        let role = approvers
            .iter()
            .find(|a| a.get("name").and_then(Json::as_str) == Some(name.as_str()))
            .and_then(|a| a.get("role"))
            .and_then(Json::as_str)
            .unwrap_or_default();
        decisions.push(json!({
            "approver": name,
            "role": role,
            "decision": decision,
            "comment": d.get("comment").and_then(Json::as_str).unwrap_or_default(),
            "decided_at": now,
        }));
    }
    Ok(Outputs::new()
        .with("approved", json!(all_approved))
        .with("decisions", Json::Array(decisions))
        .with("route", json!(route)))
}
