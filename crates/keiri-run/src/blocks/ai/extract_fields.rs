//! `ai.extract_fields`: one row per document with the fields of `output_schema`.

use serde_json::{Value as Json, json};

use super::{Model, OutputShape, documents, no_text};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::value::Row;

const SYSTEM: &str = "You read Japanese business documents (invoices, receipts, delivery notes, \
purchase orders, contracts) for an accounting team and extract the requested fields. Use only \
what the document itself says. When a field is not in the document or cannot be read, answer \
null for it: never guess, never compute a value the document does not show. Amounts are plain \
numbers (no thousands separators, no currency symbols). Dates are YYYY-MM-DD (convert Japanese \
eras such as 令和7年 to the Western year). A registration number of a qualified invoice issuer \
is T followed by 13 digits.";

pub(super) fn extract_fields(
    ctx: &BlockContext<'_>,
    inputs: &Inputs,
) -> Result<Outputs, BlockError> {
    let mut model = Model::new(ctx, inputs)?;
    let schema = inputs
        .json("output_schema")
        .ok_or_else(|| BlockError::input_invalid("output_schema", "必須です", "it is required"))?;
    let shape = OutputShape::from_user("extract_fields", "output_schema", &schema, true)?;
    let fields = shape.fields();
    let docs = documents(ctx, inputs, "documents")?;
    let system = match inputs.str("instruction")? {
        Some(extra) if !extra.trim().is_empty() => {
            format!("{SYSTEM}\n\nAdditional instructions from the user:\n{extra}")
        }
        _ => SYSTEM.to_string(),
    };
    let answers = model.ask_documents(&docs, &system, &shape)?;
    let mut failures = Vec::new();
    let mut rows: Vec<Row> = Vec::with_capacity(docs.len());
    for (doc, answer) in docs.iter().zip(answers) {
        let Some(answer) = answer else {
            failures
                .push(json!({"name": doc.name, "missing_fields": fields, "message": no_text(ctx)}));
            continue;
        };
        match answer {
            Ok(Json::Object(values)) => {
                let missing: Vec<&String> = fields
                    .iter()
                    .filter(|f| values.get(*f).is_none_or(is_empty))
                    .collect();
                if !missing.is_empty() {
                    failures.push(json!({
                        "name": doc.name,
                        "missing_fields": missing,
                        "message": ctx.say("文書から読み取れなかった項目があります", "some fields are not in the document"),
                    }));
                }
                let mut row = Row::new();
                for f in &fields {
                    row.insert(f.clone(), values.get(f).cloned().unwrap_or(Json::Null));
                }
                row.insert("source_name".into(), json!(doc.name));
                rows.push(row);
            }
            Ok(_) => failures.push(json!({
                "name": doc.name,
                "missing_fields": fields,
                "message": "the answer is not an object",
            })),
            Err(f) => failures.push(json!({
                "name": doc.name,
                "missing_fields": fields,
                "message": format!("{}: {}", f.code, f.message),
            })),
        }
    }
    Ok(Outputs::new()
        .with("rows", rows)
        .with("failures", Json::Array(failures)))
}

builtin!("ai.extract_fields", extract_fields);

fn is_empty(v: &Json) -> bool {
    match v {
        Json::Null => true,
        Json::String(s) => s.trim().is_empty(),
        _ => false,
    }
}
