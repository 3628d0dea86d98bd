//! `ui.interactive_input`: its inputs and outputs are in `block_specs/ui/ui.interactive_input.yaml`.

use super::{answer_object, bad_answer, text_input};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use serde_json::{Map, Value as Json, json};

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
    let answer = &answer_object(answer)?;
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
        Some(value) => super::yes_no(value).ok_or_else(|| {
            bad_answer(
                "approved は はい（true）か いいえ（false）です",
                "approved must be yes (true) or no (false)",
            )
        })?,
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

builtin!("ui.interactive_input", interactive_input);
