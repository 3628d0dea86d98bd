//! `csv.write`: its inputs and outputs are in `block_specs/output/csv.write.yaml`.

use super::journal_export::{csv_text, encode};
use super::{columns, csv_encoding, on_conflict, out_file, path_text, text};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::kit::outputs::{DEFAULT_OUT_DIR, save, target_dir};
use serde_json::json;

fn csv_write(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let rows = inputs.rows("rows")?;
    let cols = columns(inputs, &rows)?;
    let encoding = csv_encoding(inputs.str("encoding")?.unwrap_or("utf-8-sig"))?;
    let delimiter = match inputs.str("delimiter")?.unwrap_or(",") {
        "\\t" | "tab" | "\t" => "\t".to_string(),
        d if !d.is_empty() && !d.contains(['"', '\n', '\r']) => d.to_string(),
        _ => {
            return Err(BlockError::input_invalid(
                "delimiter",
                "引用符・改行以外の区切り文字です",
                "expected a delimiter other than a quote or line break",
            ));
        }
    };
    let header = inputs.bool("include_header")?.unwrap_or(true);
    let dir = target_dir(ctx, inputs, Some(DEFAULT_OUT_DIR))?;
    let name = out_file(ctx, inputs, &dir, "output.csv")?;
    let conflict = on_conflict(inputs)?;
    let lines: Vec<Vec<String>> = rows
        .iter()
        .map(|r| cols.iter().map(|c| text(r.get(c))).collect())
        .collect();
    let body = csv_text(header.then_some(cols.as_slice()), &lines, &delimiter);
    let mut warnings = Vec::new();
    let bytes = encode(&body, encoding, &mut warnings, ctx.lang);
    let saved = save(&dir, &name, &bytes, conflict)?;
    if saved.is_none() {
        warnings.push(format!("{name} は既にあり on_conflict が skip のため書きませんでした / {name} exists and on_conflict is skip; nothing was written"));
    }
    Ok(Outputs::new()
        .with("out_path", path_text(&saved))
        .with(
            "row_count",
            json!(if saved.is_some() { rows.len() } else { 0 }),
        )
        .with("warnings", json!(warnings)))
}

builtin!("csv.write", csv_write);
