//! `report.markdown`: its inputs and outputs are in `block_specs/output/report.markdown.yaml`.

use super::{md_table, out_file, path_text, save, target_dir, text};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::invalid;
use crate::value::Row;
use keiri_xlsx::OnConflict;
use serde_json::{Value as Json, json};

fn report_markdown(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let title = inputs.require_str("title")?;
    let sections = match inputs.json("sections") {
        Some(Json::Array(s)) => s,
        _ => {
            return Err(BlockError::input_invalid(
                "sections",
                "セクションの配列が必要です",
                "expected an array of sections",
            ));
        }
    };
    let mut md = format!("# {title}\n");
    for (i, s) in sections.iter().enumerate() {
        let Json::Object(s) = s else {
            return Err(invalid(
                format!("sections[{i}] はオブジェクトです"),
                format!("sections[{i}] must be an object"),
            ));
        };
        if let Some(h) = s.get("heading").and_then(Json::as_str) {
            md.push_str(&format!("\n## {h}\n"));
        }
        if let Some(b) = s.get("body") {
            let b = text(Some(b));
            if !b.is_empty() {
                md.push_str(&format!("\n{b}\n"));
            }
        }
        if let Some(Json::Array(bullets)) = s.get("bullets") {
            md.push('\n');
            for b in bullets {
                md.push_str(&format!("- {}\n", text(Some(b))));
            }
        }
        match s.get("rows") {
            None | Some(Json::Null) => {}
            Some(Json::Array(items)) => {
                let rows: Vec<Row> = items
                    .iter()
                    .map(|v| match v {
                        Json::Object(m) => m.clone(),
                        other => {
                            let mut m = Row::new();
                            m.insert("value".into(), other.clone());
                            m
                        }
                    })
                    .collect();
                let max = s
                    .get("max_rows")
                    .and_then(Json::as_u64)
                    .map_or(usize::MAX, |m| usize::try_from(m).unwrap_or(usize::MAX));
                md.push('\n');
                md.push_str(&md_table(ctx, &rows, max));
            }
            Some(_) => {
                return Err(invalid(
                    format!("sections[{i}].rows は行の配列です"),
                    format!("sections[{i}].rows must be an array of rows"),
                ));
            }
        }
    }
    // Asked for by naming a folder or a file (the spec gives out_name no default, so a name
    // here is the plan's): a name alone saves in the node's folder.
    let saved = if inputs.has("out_dir") || inputs.has("out_name") {
        let dir = target_dir(ctx, inputs, None)?;
        let name = out_file(ctx, inputs, &dir, "report.md")?;
        save(&dir, &name, md.as_bytes(), OnConflict::Rename)?
    } else {
        None
    };
    Ok(Outputs::new()
        .with("markdown", json!(md))
        .with("out_path", path_text(&saved)))
}

builtin!("report.markdown", report_markdown);
