//! `transforms.concat_rows`: its inputs and outputs are in `block_specs/transforms/transforms.concat_rows.yaml`.

use super::R;
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::value::{Row, column_names, rows_to_table};
use serde_json::{Value as J, json};

// ---------------------------------------------------------------------------------------
// concat_rows, deduplicate, select/rename/sort

fn concat_rows(_ctx: &BlockContext<'_>, inputs: &Inputs) -> R<Outputs> {
    let tables = match inputs.get("tables") {
        Some(crate::value::Value::Json(J::Array(items))) => items.clone(),
        // A single table is a list of one.
        Some(crate::value::Value::Table(df)) => {
            vec![crate::value::Value::Table(df.clone()).to_json()]
        }
        _ => {
            return Err(BlockError::input_invalid(
                "tables",
                "表（行データの配列）の配列が必要です",
                "expected a list of tables",
            ));
        }
    };
    let labels = inputs.strings("source_labels")?;
    let source_field = inputs.str("source_field")?;
    if let Some(l) = &labels
        && l.len() != tables.len()
    {
        return Err(BlockError::input_invalid(
            "source_labels",
            &format!(
                "表が {} 個ありますが、名前は {} 個です",
                tables.len(),
                l.len()
            ),
            &format!("{} tables but {} labels", tables.len(), l.len()),
        ));
    }
    let mut all: Vec<Row> = Vec::new();
    for (i, table) in tables.into_iter().enumerate() {
        let rows = crate::value::Value::Json(table).to_rows().map_err(|e| {
            BlockError::input_invalid(
                "tables",
                &format!("{i}番目: {}", e.message_ja),
                &format!("table {i}: {}", e.message_en),
            )
        })?;
        for mut row in rows {
            if let Some(f) = source_field {
                let label = labels
                    .as_ref()
                    .and_then(|l| l.get(i))
                    .cloned()
                    .unwrap_or_else(|| format!("table{}", i + 1));
                row.insert(f.to_owned(), J::String(label));
            }
            all.push(row);
        }
    }
    let df = rows_to_table(&all)?;
    let columns = column_names(&df);
    Ok(Outputs::new()
        .with("rows", df)
        .with("columns", json!(columns)))
}

builtin!("transforms.concat_rows", concat_rows);
