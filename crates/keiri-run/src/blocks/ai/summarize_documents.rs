//! `ai.summarize_documents`: a summary and key points per document, then one across them.

use serde_json::{Value as Json, json};

use super::{Ask, Model, OutputShape, documents, failure_error, language_instruction, no_text};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};

const SYSTEM: &str = "You summarise business documents (contracts, approval requests, minutes, \
accounting policies, audit reports) for a Japanese accounting team. Keep to what the document \
says: amounts, dates, parties, payment terms, periods, termination and any accounting issue. Do \
not add facts or advice the document does not contain.";

pub(super) fn summarize_documents(
    ctx: &BlockContext<'_>,
    inputs: &Inputs,
) -> Result<Outputs, BlockError> {
    let mut model = Model::new(ctx, inputs)?;
    let docs = documents(ctx, inputs, "documents")?;
    let language = language_instruction(inputs)?;
    let max_chars = inputs.i64("max_chars")?.unwrap_or(400);
    if !(20..=20_000).contains(&max_chars) {
        return Err(BlockError::input_invalid(
            "max_chars",
            "20〜20000 の整数です",
            "expected an integer from 20 to 20000",
        ));
    }
    let focus = match inputs.str("instruction")? {
        Some(s) if !s.trim().is_empty() => format!("\nFocus: {s}"),
        _ => String::new(),
    };
    let system = format!(
        "{SYSTEM}\n{language} Keep each summary to about {max_chars} characters and give 3 to 7 \
         key points.{focus}"
    );
    let per_document = OutputShape::fixed(
        "document_summary",
        json!({
            "type": "object",
            "properties": {
                "summary": {"type": "string"},
                "key_points": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["summary", "key_points"],
            "additionalProperties": false,
        }),
    );
    let answers = model.ask_documents(&docs, &system, &per_document)?;
    let mut summaries = Vec::with_capacity(docs.len());
    let mut written = Vec::new();
    for (doc, answer) in docs.iter().zip(answers) {
        let Some(answer) = answer else {
            summaries.push(json!({"name": doc.name, "summary": "", "key_points": [no_text(ctx)]}));
            continue;
        };
        let name = &doc.name;
        let answer = answer.map_err(|f| failure_error(&format!("document {name}"), &f))?;
        let entry = json!({
            "name": name,
            "summary": answer["summary"],
            "key_points": answer["key_points"],
        });
        written.push(entry.clone());
        summaries.push(entry);
    }
    let overall = match written.as_slice() {
        [] => String::new(),
        [only] => only["summary"].as_str().unwrap_or_default().to_string(),
        _ => {
            let shape = OutputShape::fixed(
                "overall_summary",
                json!({
                    "type": "object",
                    "properties": {"overall_summary": {"type": "string"}},
                    "required": ["overall_summary"],
                    "additionalProperties": false,
                }),
            );
            let mut user = String::from(
                "Summaries of the documents, one per line. Write one summary across all of \
                 them: what they have in common, how they differ, and what needs attention.\n",
            );
            for s in &written {
                user.push_str(&s.to_string());
                user.push('\n');
            }
            let answer = model.ask_one(
                Ask {
                    purpose: "overall summary".into(),
                    system: system.clone(),
                    user,
                },
                &shape,
            )?;
            answer["overall_summary"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        }
    };
    Ok(Outputs::new()
        .with("summaries", Json::Array(summaries))
        .with("overall_summary", json!(overall)))
}

builtin!("ai.summarize_documents", summarize_documents);
