//! `docx.extract_text`: its inputs and outputs are in `block_specs/input/docx.extract_text.yaml`.

use super::{docs_error, read_bytes};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use serde_json::{Value as J, json};

fn docx_extract_text(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let path = inputs.require_str("path")?;
    let include_tables = inputs.bool("include_tables")?.unwrap_or(true);
    let table_header = inputs.bool("table_header")?.unwrap_or(true);
    let (_, bytes) = read_bytes(ctx, path)?;
    let extracted = keiri_docs::extract_bytes(
        &bytes,
        keiri_docs::Format::Docx,
        &keiri_docs::ExtractOptions::default(),
    )
    .map_err(|e| docs_error(&e))?;
    let text = extracted.normalized();
    // keiri-docs writes a table row as one tab-separated line and a paragraph as one line;
    // runs of tab-separated lines are the tables.
    let mut paragraphs = Vec::new();
    let mut tables: Vec<Vec<Vec<String>>> = Vec::new();
    let mut in_table = false;
    for line in text.lines() {
        if line.contains('\t') {
            let cells: Vec<String> = line.split('\t').map(|c| c.trim().to_owned()).collect();
            if !in_table {
                tables.push(Vec::new());
                in_table = true;
            }
            if let Some(t) = tables.last_mut() {
                t.push(cells);
            }
        } else {
            in_table = false;
            if !line.trim().is_empty() {
                paragraphs.push(line.to_owned());
            }
        }
    }
    let tables_json: Vec<J> = if include_tables {
        tables
            .iter()
            .enumerate()
            .map(|(index, table)| {
                let width = table.iter().map(Vec::len).max().unwrap_or(0);
                let (names, body): (Vec<String>, &[Vec<String>]) =
                    match (table_header, table.split_first()) {
                        (true, Some((head, rest))) => (
                            (0..width)
                                .map(|i| {
                                    head.get(i)
                                        .filter(|s| !s.is_empty())
                                        .cloned()
                                        .unwrap_or_else(|| format!("col{}", i + 1))
                                })
                                .collect(),
                            rest,
                        ),
                        _ => (
                            (1..=width).map(|i| format!("col{i}")).collect(),
                            table.as_slice(),
                        ),
                    };
                let rows: Vec<J> = body
                    .iter()
                    .map(|cells| {
                        J::Object(
                            names
                                .iter()
                                .enumerate()
                                .map(|(i, n)| {
                                    (
                                        n.clone(),
                                        J::String(cells.get(i).cloned().unwrap_or_default()),
                                    )
                                })
                                .collect(),
                        )
                    })
                    .collect();
                json!({"index": index, "rows": rows})
            })
            .collect()
    } else {
        Vec::new()
    };
    let text = if include_tables {
        text
    } else {
        paragraphs.join("\n")
    };
    Ok(Outputs::new()
        .with("text", J::String(text))
        .with("paragraphs", json!(paragraphs))
        .with("tables", J::Array(tables_json)))
}

builtin!("docx.extract_text", docx_extract_text);
