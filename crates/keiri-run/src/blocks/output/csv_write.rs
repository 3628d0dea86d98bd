//! `csv.write`: its inputs and outputs are in `block_specs/output/csv.write.yaml`.

use super::{CsvText, columns, csv_encoding, encode, on_conflict, out_file, path_text, text};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::kit::outputs::{DEFAULT_OUT_DIR, save, target_dir};
use crate::value::{Value, column_to_json, table_error};
use polars::prelude::{DataFrame, DataType, StringChunked};
use serde_json::json;

/// Rows of a table turned into text at a time: bounds the text held besides the CSV itself.
const CHUNK_ROWS: usize = 65_536;

fn csv_write(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
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
    let mut csv = CsvText::new(&delimiter);
    // A table is written column by column, never turned into JSON rows (a million rows as
    // maps took seconds); JSON rows are written as they are. The cells' text is the same.
    let row_count = match inputs.get("rows") {
        Some(Value::Table(df)) => {
            let cols = match inputs.strings("columns")? {
                Some(c) if !c.is_empty() => c,
                _ => crate::value::column_names(df),
            };
            if header {
                csv.line(cols.iter().map(String::as_str));
            }
            write_table(&mut csv, df, &cols)?;
            df.height()
        }
        _ => {
            let rows = inputs.rows("rows")?;
            let cols = columns(inputs, &rows)?;
            if header {
                csv.line(cols.iter().map(String::as_str));
            }
            for r in &rows {
                let cells: Vec<String> = cols.iter().map(|c| text(r.get(c))).collect();
                csv.line(cells.iter().map(String::as_str));
            }
            rows.len()
        }
    };
    let body = csv.out;
    let mut warnings = Vec::new();
    let bytes = encode(body, encoding, &mut warnings, ctx.lang);
    let saved = save(&dir, &name, &bytes, conflict)?;
    if saved.is_none() {
        warnings.push(format!("{name} は既にあり on_conflict が skip のため書きませんでした / {name} exists and on_conflict is skip; nothing was written"));
    }
    Ok(Outputs::new()
        .with("out_path", path_text(&saved))
        .with(
            "row_count",
            json!(if saved.is_some() { row_count } else { 0 }),
        )
        .with("warnings", json!(warnings)))
}

/// Writes the lines of `df`'s `cols` (a column it lacks is written empty, as a JSON row's
/// missing key is; the run-time input check refuses an unknown column before this runs).
/// Text columns are written as they are; other cells as their JSON text ([`column_to_json`]).
/// One column of a chunk, as its cells are written.
enum Cells {
    /// A text column, read in place (one chunk, so that reading cell `i` is an index, not a
    /// search).
    Text(StringChunked),
    /// Any other column, each cell already rendered as its text.
    Rendered(Vec<String>),
    /// A column the table does not have: empty cells.
    Missing,
}

impl Cells {
    fn get(&self, i: usize) -> &str {
        match self {
            Cells::Text(column) => column.get(i).unwrap_or(""),
            Cells::Rendered(texts) => &texts[i],
            Cells::Missing => "",
        }
    }
}

fn write_table(csv: &mut CsvText<'_>, df: &DataFrame, cols: &[String]) -> Result<(), BlockError> {
    let mut offset = 0;
    while offset < df.height() {
        let part = df.slice(offset as i64, CHUNK_ROWS);
        let mut columns = Vec::with_capacity(cols.len());
        for name in cols {
            columns.push(match part.column(name) {
                Ok(c) if c.dtype() == &DataType::String => {
                    let column = c.str().map_err(|e| table_error(&e))?;
                    Cells::Text(column.rechunk().into_owned())
                }
                Ok(c) => {
                    let cells = column_to_json(c)?;
                    Cells::Rendered(cells.iter().map(|v| text(Some(v))).collect())
                }
                Err(_) => Cells::Missing,
            });
        }
        for i in 0..part.height() {
            csv.line(columns.iter().map(|c| c.get(i)));
        }
        offset += part.height();
    }
    Ok(())
}

builtin!("csv.write", csv_write);
