//! `ai.summarize_documents`: a summary and key points per document, then one across them.

use serde_json::{Value as Json, json};

use super::{
    Ask, Model, OutputShape, document_message, documents, failure_error, language_instruction,
};
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
    // One slot per document, in the documents' order.
    let mut summaries = vec![Json::Null; docs.len()];
    let mut asks = Vec::new();
    let mut asked = Vec::new();
    for (i, doc) in docs.iter().enumerate() {
        if doc.text.trim().is_empty() {
            summaries[i] = json!({
                "name": doc.name,
                "summary": "",
                "key_points": ["文書にテキストがありません（画像だけのPDFなど） / the document has no text"],
            });
            continue;
        }
        asks.push(Ask {
            purpose: format!("document {}", doc.name),
            system: system.clone(),
            user: document_message(doc),
        });
        asked.push(i);
    }
    let answers = model.ask_all(asks, &per_document)?;
    let mut written = Vec::new();
    for (i, answer) in asked.into_iter().zip(answers) {
        let name = &docs[i].name;
        let answer = answer.map_err(|f| failure_error(&format!("document {name}"), &f))?;
        let entry = json!({
            "name": name,
            "summary": answer["summary"],
            "key_points": answer["key_points"],
        });
        written.push(entry.clone());
        summaries[i] = entry;
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
