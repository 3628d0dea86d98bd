//! `excel.lookup_rows`: its inputs and outputs are in `block_specs/input/excel.lookup_rows.yaml`.
//!
//! The rows of a workbook's sheet that hold each key of a table, found by keiri-xlsx's
//! `find_rows` (keys compared as `update_rows_by_key` compares them: case, full-width forms
//! and stray spaces ignored, a number matching its text). For what the row ops do not cover:
//! a plan takes the row numbers into its own ops. A key in two rows of the sheet is an error;
//! a key in none goes to `missing` with a warning, never to a null row number.

use serde_json::{Value as J, json};

use crate::block::{BlockContext, BlockError, ErrorCode, Inputs, Outputs, Warning};
use crate::value::Row;

/// The column added to each row found.
const ROW_COLUMN: &str = "row";

fn excel_lookup_rows(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let path = inputs.require_str("path")?;
    let key_column = inputs.require_str("key_column")?;
    let header_row = inputs.i64("header_row")?.unwrap_or(1);
    let header_row = u32::try_from(header_row)
        .ok()
        .filter(|r| *r >= 1)
        .ok_or_else(|| {
            BlockError::input_invalid("header_row", "1以上の整数が必要です", "expected 1 or more")
        })?;
    let rows = inputs.rows("rows")?;
    let key_field = inputs.str("key_field")?.unwrap_or(key_column).to_string();
    let columns = crate::value::columns_of(&rows);
    if !rows.is_empty() && !columns.contains(&key_field) {
        return Err(BlockError::missing_column(&key_field, &columns));
    }
    let keys: Vec<keiri_xlsx::CellValue> = rows
        .iter()
        .map(|r| match r.get(&key_field) {
            Some(J::Number(n)) => n
                .as_i64()
                .map(keiri_xlsx::CellValue::Int)
                .unwrap_or_else(|| keiri_xlsx::CellValue::Float(n.as_f64().unwrap_or(0.0))),
            Some(J::String(s)) => keiri_xlsx::CellValue::Text(s.clone()),
            Some(J::Bool(b)) => keiri_xlsx::CellValue::Bool(*b),
            _ => keiri_xlsx::CellValue::Text(String::new()),
        })
        .collect();
    let source = crate::paths::resolve_read(ctx, path)?;
    let req = keiri_xlsx::FindRowsRequest {
        xlsx_path: source.display().to_string(),
        sheet: inputs.str("sheet")?.map(str::to_string),
        header_row,
        key_column: key_column.to_string(),
        keys,
    };
    let policy = keiri_fs::PathPolicy::trusted(ctx.base_dir);
    let found = keiri_xlsx::find_rows(&req, &policy).map_err(|e| {
        let code = if e.code() == "FILE_NOT_FOUND" {
            ErrorCode::FileNotFound
        } else {
            ErrorCode::BlockFailed
        };
        BlockError::new(
            code,
            format!("ブック {path} から行を探せませんでした: {e}"),
            format!("could not look rows up in {path}: {e}"),
        )
    })?;
    let mut out: Vec<Row> = Vec::new();
    let mut missing: Vec<Row> = Vec::new();
    for (row, hits) in rows.into_iter().zip(&found.rows) {
        let shown = row.get(&key_field).map(J::to_string).unwrap_or_default();
        match hits.as_slice() {
            [] => missing.push(row),
            [one] => {
                let mut row = row;
                row.insert(ROW_COLUMN.to_string(), json!(one));
                out.push(row);
            }
            many => {
                let list = many
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(BlockError::failed(
                    format!(
                        "キー {shown} が {} の {} 列の {list} 行目にあります。どの行か決められません",
                        found.sheet_name, found.key_column
                    ),
                    format!(
                        "the key {shown} is in rows {list} of {} (column {}); a key must find one row",
                        found.sheet_name, found.key_column
                    ),
                ));
            }
        }
    }
    if !missing.is_empty() {
        let keys: Vec<String> = missing
            .iter()
            .take(5)
            .map(|r| r.get(&key_field).map(J::to_string).unwrap_or_default())
            .collect();
        let (more, more_en) = crate::blocks::kit::text::and_more(missing.len(), 5);
        ctx.calls.warn(Warning::new(
            "KEYS_NOT_FOUND",
            format!(
                "{} 件のキーが {} の {} 列にありません（missing に出力）: {}{more}",
                missing.len(),
                found.sheet_name,
                found.key_column,
                keys.join(", ")
            ),
            format!(
                "{} keys are not in column {} of {} (listed in missing): {}{more_en}",
                missing.len(),
                found.key_column,
                found.sheet_name,
                keys.join(", ")
            ),
        ));
    }
    let count = out.len();
    Ok(Outputs::new()
        .with("rows", out)
        .with("missing", missing)
        .with("count", json!(count))
        .with("key_column", json!(found.key_column)))
}

builtin!("excel.lookup_rows", excel_lookup_rows);
