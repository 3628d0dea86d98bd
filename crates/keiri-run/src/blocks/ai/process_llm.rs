//! `ai.process_llm`: an instruction, data and an `output_schema`; results in that shape.

use serde_json::{Value as Json, json};

use super::{Ask, Model, OutputShape, cut};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};

const SYSTEM: &str = "You assist an accounting team in Japan. Follow the instruction exactly, \
using only the data given. When the data does not support an answer, say so in the answer \
(or answer null where the schema allows it) instead of guessing.";

pub(super) fn process_llm(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let mut model = Model::new(ctx, inputs)?;
    let instruction = [inputs.str("prompt")?, inputs.str("instruction")?]
        .into_iter()
        .flatten()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    if instruction.is_empty() {
        return Err(BlockError::input_invalid(
            "prompt",
            "prompt か instruction のどちらかが必要です",
            "prompt or instruction is required",
        ));
    }
    let schema = inputs
        .json("output_schema")
        .ok_or_else(|| BlockError::input_invalid("output_schema", "必須です", "it is required"))?;
    let shape = OutputShape::from_user("process_llm", "output_schema", &schema, false)?;
    let system = match inputs.str("system_prompt")? {
        Some(s) if !s.trim().is_empty() => s.to_string(),
        _ => SYSTEM.to_string(),
    };
    let per_item = inputs.bool("per_item")?.unwrap_or(false);
    let max_chars = inputs.i64("max_input_chars")?.unwrap_or(20_000);
    let max_chars = usize::try_from(max_chars)
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| {
            BlockError::input_invalid(
                "max_input_chars",
                "1 以上の整数です",
                "expected a positive integer",
            )
        })?;
    let data = inputs.json("input_data");
    let items: Vec<Option<Json>> = match (&data, per_item) {
        (Some(Json::Array(items)), true) => items.iter().cloned().map(Some).collect(),
        _ => vec![data],
    };
    let mut truncated = Vec::new();
    let mut input_chars = 0;
    let asks: Vec<Ask> = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let (text, was_cut) = match item {
                None => (String::new(), false),
                Some(Json::String(s)) => cut(s, max_chars),
                Some(v) => cut(&v.to_string(), max_chars),
            };
            input_chars += text.chars().count();
            if was_cut {
                truncated.push(i);
            }
            let note = if was_cut {
                format!("\n(The data was cut after {max_chars} characters.)")
            } else {
                String::new()
            };
            let user = if item.is_none() {
                format!("Instruction:\n{instruction}")
            } else {
                format!("Instruction:\n{instruction}\n\nData:\n<data>\n{text}\n</data>{note}")
            };
            Ask {
                purpose: if per_item {
                    format!("item {}", i + 1)
                } else {
                    "input".into()
                },
                system: system.clone(),
                user,
            }
        })
        .collect();
    // Results are passed on only when every one matches the schema.
    let results = model.ask_each(asks, &shape)?;
    let mut summary = model.tally.to_json(model.name());
    summary.insert(
        "temperature".into(),
        json!((f64::from(model.temperature()) * 100.0).round() / 100.0),
    );
    summary.insert("per_item".into(), json!(per_item));
    summary.insert("input_chars".into(), json!(input_chars));
    summary.insert("truncated".into(), json!(!truncated.is_empty()));
    if per_item && !truncated.is_empty() {
        summary.insert(
            "truncated_items".into(),
            json!(truncated.iter().map(|i| i + 1).collect::<Vec<_>>()),
        );
    }
    summary.insert("schema_strict".into(), json!(shape.is_strict()));
    Ok(Outputs::new()
        .with("results", Json::Array(results))
        .with("summary", Json::Object(summary)))
}

builtin!("ai.process_llm", process_llm);
