//! `csv.write`: its inputs and outputs are in `block_specs/output/csv.write.yaml`.

use super::{
    BOM, CsvEncoding, CsvText, Replaced, columns, csv_encoding, encode_piece, on_conflict,
    out_file, path_text, text, warn_replaced,
};
use crate::block::ProgressUnit;
use crate::block::{BlockContext, BlockError, ErrorCode, Inputs, Outputs};
use crate::blocks::kit::outputs::{DEFAULT_OUT_DIR, Filling, save_with, target_dir};
use crate::blocks::kit::steps::Steps;
use crate::value::{JsonCells, Value, table_error};
use polars::prelude::{ChunkAgg, Column, DataFrame, DataType};
use serde_json::json;
use std::io::Write;

/// Rows turned into text and written to the file at a time: bounds the text held.
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
    // A table is written column by column, never turned into JSON rows (a million rows as
    // maps took seconds); JSON rows are written as they are. The cells' text is the same.
    let rows = match inputs.get("rows") {
        Some(Value::Table(df)) => {
            let cols = match inputs.strings("columns")? {
                Some(c) if !c.is_empty() => c,
                _ => crate::value::column_names(df),
            };
            Source::Table(df, cols)
        }
        _ => {
            let rows = inputs.rows("rows")?;
            let cols = columns(inputs, &rows)?;
            Source::Rows(rows, cols)
        }
    };
    let row_count = match &rows {
        Source::Table(df, _) => df.height(),
        Source::Rows(rows, _) => rows.len(),
    };
    // Written to the file a chunk of rows at a time, each encoded and written by a thread of
    // its own while the next is rendered: the CSV of five million rows (790 MB) is never
    // whole in memory, and the kernel's copy of each piece into the file (half the node's
    // time at that size) runs beside the rendering of the next.
    let mut replaced = Vec::new();
    let saved = save_with(&dir, &name, conflict, |file| {
        let (pieces, to_write) = std::sync::mpsc::sync_channel::<String>(1);
        let (give_back, spare) = std::sync::mpsc::channel::<String>();
        std::thread::scope(|scope| {
            let writer = std::thread::Builder::new()
                .name("keiri-csv-write".into())
                .spawn_scoped(scope, move || {
                    write_pieces(file, encoding, to_write, give_back)
                })?;
            let mut sink = Sink {
                csv: CsvText::new(&delimiter),
                pieces,
                spare,
                steps: Steps::new(ctx, ProgressUnit::Rows, Some(row_count)),
            };
            let rendered = render_rows(&mut sink, &rows, header);
            // The pieces end here: the writer writes what it holds and returns.
            drop(sink);
            let written = writer
                .join()
                .map_err(|_| std::io::Error::other("the thread writing the CSV stopped"))?;
            // A disk that failed is why the rendering stopped, if it did: its error first.
            replaced = written?;
            rendered
        })
    })?;
    let mut warnings: Vec<String> = replaced.iter().map(|r| r.warning(ctx.lang)).collect();
    if let Some(path) = &saved {
        // The name it was saved under (`on_conflict: rename` may have numbered it).
        let file = path
            .file_name()
            .map_or_else(|| name.clone(), |n| n.to_string_lossy().into_owned());
        warn_replaced(ctx, &file, &replaced);
    } else {
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

/// The rows to write and the columns to write of them.
enum Source<'a> {
    Table(&'a DataFrame, Vec<String>),
    Rows(Vec<crate::value::Row>, Vec<String>),
}

/// The header and the rows' lines, a chunk at a time, into `sink`.
fn render_rows(sink: &mut Sink<'_, '_>, rows: &Source<'_>, header: bool) -> Result<(), Filling> {
    let (Source::Table(_, cols) | Source::Rows(_, cols)) = rows;
    if header {
        sink.csv.line(cols.iter().map(String::as_str));
    }
    match rows {
        Source::Table(df, cols) => write_table(sink, df, cols)?,
        Source::Rows(rows, cols) => {
            for (k, chunk) in rows.chunks(CHUNK_ROWS).enumerate() {
                for r in chunk {
                    let cells: Vec<String> = cols.iter().map(|c| text(r.get(c))).collect();
                    sink.csv.line(cells.iter().map(String::as_str));
                }
                sink.written(k * CHUNK_ROWS + chunk.len())?;
            }
        }
    }
    // The header of a table without rows.
    sink.flush()
}

/// CSV text on its way to the file: lines gather in `csv` and go to the writer at each
/// [`Sink::flush`], which hands back emptied texts to fill again (no new memory per chunk).
struct Sink<'s, 'd> {
    csv: CsvText<'d>,
    pieces: std::sync::mpsc::SyncSender<String>,
    spare: std::sync::mpsc::Receiver<String>,
    /// The rows written so far, for the node's progress; a cancelled run stops the write
    /// between two chunks (and no file is left).
    steps: Steps<'s, 's>,
}

impl Sink<'_, '_> {
    /// The lines so far go to the writer, and `rows` rows are written.
    fn written(&mut self, rows: usize) -> Result<(), Filling> {
        self.flush()?;
        self.steps.advance_to(rows as u64)?;
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Filling> {
        let next = self.spare.try_recv().unwrap_or_default();
        let text = std::mem::replace(&mut self.csv.out, next);
        // The writer is gone only after a failure, which it returns.
        self.pieces
            .send(text)
            .map_err(|_| Filling::Io(std::io::Error::other("the CSV writer stopped")))
    }
}

/// The writer's side of [`Sink`]: each piece of text encoded and written to `file`, in order
/// (after the byte order mark of `utf-8-sig`), then handed back. The characters CP932 could
/// not hold, with each one's line in the file.
fn write_pieces(
    file: &mut std::fs::File,
    encoding: CsvEncoding,
    pieces: std::sync::mpsc::Receiver<String>,
    give_back: std::sync::mpsc::Sender<String>,
) -> std::io::Result<Vec<Replaced>> {
    let mut replaced = Vec::new();
    if encoding == CsvEncoding::Utf8Bom {
        file.write_all(&BOM)?;
    }
    let mut next_line = 1;
    for mut text in pieces {
        let bytes = encode_piece(&text, encoding, next_line, &mut replaced);
        file.write_all(&bytes)?;
        if encoding == CsvEncoding::ShiftJis {
            next_line += text.bytes().filter(|&b| b == b'\n').count();
        }
        text.clear();
        // The renderer may be done and gone: the text is then simply dropped.
        let _ = give_back.send(text);
    }
    Ok(replaced)
}

/// One column of a chunk, as its cells are written.
enum Cells<'a> {
    /// A text column's cells, read in place.
    Text(Vec<&'a str>),
    /// Any other column's cells, rendered one after another into one text: cell `i` ends at
    /// `ends[i]` and begins where cell `i - 1` ended.
    Rendered { text: String, ends: Vec<usize> },
    /// A column the table does not have: empty cells.
    Missing,
}

impl Cells<'_> {
    fn get(&self, i: usize) -> &str {
        match self {
            Cells::Text(cells) => cells[i],
            Cells::Rendered { text, ends } => {
                let start = if i == 0 { 0 } else { ends[i - 1] };
                &text[start..ends[i]]
            }
            Cells::Missing => "",
        }
    }
}

/// Writes the lines of `df`'s `cols` (a column it lacks is written empty, as a JSON row's
/// missing key is; the run-time input check refuses an unknown column before this runs),
/// [`CHUNK_ROWS`] rows at a time, each chunk to the file before the next. Text columns are
/// written as they are; other cells as their JSON text would be
/// ([`crate::value::column_to_json`]), rendered column by column without building JSON values
/// ([`render`]).
fn write_table(sink: &mut Sink<'_, '_>, df: &DataFrame, cols: &[String]) -> Result<(), Filling> {
    let mut offset = 0;
    while offset < df.height() {
        let part = df.slice(offset as i64, CHUNK_ROWS);
        let mut columns = Vec::with_capacity(cols.len());
        for name in cols {
            columns.push(match part.column(name) {
                Ok(c) if c.dtype() == &DataType::String => {
                    let cells = c.str().map_err(|e| table_error(&e))?;
                    Cells::Text(cells.iter().map(|v| v.unwrap_or("")).collect())
                }
                Ok(c) => render(c)?,
                Err(_) => Cells::Missing,
            });
        }
        for i in 0..part.height() {
            sink.csv.line(columns.iter().map(|c| c.get(i)));
        }
        offset += part.height();
        sink.written(offset)?;
    }
    Ok(())
}

/// A column that is not text, each cell as [`crate::value::column_to_json`] and `text` would
/// write it (serde_json's number text; dates as `YYYY-MM-DD`; an empty cell for a null, a NaN
/// or an infinity), rendered into one text instead of a JSON value and a string per cell.
fn render(column: &Column) -> Result<Cells<'static>, BlockError> {
    let err = |e: polars::prelude::PolarsError| table_error(&e);
    let mut text: Vec<u8> = Vec::with_capacity(column.len() * 8);
    let mut ends = Vec::with_capacity(column.len());
    match JsonCells::of(column.dtype()) {
        JsonCells::Bool => {
            for v in column.bool().map_err(err)?.iter() {
                match v {
                    Some(true) => text.extend_from_slice(b"true"),
                    Some(false) => text.extend_from_slice(b"false"),
                    None => {}
                }
                ends.push(text.len());
            }
        }
        JsonCells::Int => {
            let c = column.cast(&DataType::Int64).map_err(err)?;
            for v in c.i64().map_err(err)?.iter() {
                if let Some(v) = v {
                    json_number(&mut text, &v)?;
                }
                ends.push(text.len());
            }
        }
        JsonCells::UInt64 => {
            for v in column.u64().map_err(err)?.iter() {
                if let Some(v) = v {
                    json_number(&mut text, &v)?;
                }
                ends.push(text.len());
            }
        }
        JsonCells::Float => {
            let c = column.cast(&DataType::Float64).map_err(err)?;
            for v in c.f64().map_err(err)?.iter() {
                // NaN and the infinities are JSON's null: an empty cell (`float_json`).
                if let Some(v) = v.filter(|v| v.is_finite()) {
                    json_number(&mut text, &v)?;
                }
                ends.push(text.len());
            }
        }
        JsonCells::Date if iso_dates(column)? => {
            let days = column.cast(&DataType::Int32).map_err(err)?;
            for v in days.i32().map_err(err)?.iter() {
                if let Some(date) = v.and_then(date_of) {
                    iso_date(&mut text, date);
                }
                ends.push(text.len());
            }
        }
        // Text (the table's own cells, when not read in place), nulls, dates outside years
        // 0–9999, datetimes and anything else: their text (Polars').
        JsonCells::Text | JsonCells::Null | JsonCells::Date | JsonCells::Other => {
            let c = column.cast(&DataType::String).map_err(err)?;
            for v in c.str().map_err(err)?.iter() {
                text.extend_from_slice(v.unwrap_or("").as_bytes());
                ends.push(text.len());
            }
        }
    }
    let text = String::from_utf8(text).map_err(|e| {
        BlockError::new(
            ErrorCode::BlockFailed,
            format!("表の値を文字にできませんでした（{e}）"),
            format!("could not turn the table's values into text ({e})"),
        )
    })?;
    Ok(Cells::Rendered { text, ends })
}

/// A number as serde_json writes it, so that a cell reads as its JSON text would.
fn json_number<T: serde::Serialize>(out: &mut Vec<u8>, n: &T) -> Result<(), BlockError> {
    serde_json::to_writer(out, n).map_err(|e| {
        BlockError::new(
            ErrorCode::BlockFailed,
            format!("数値を文字にできませんでした（{e}）"),
            format!("could not write a number ({e})"),
        )
    })
}

/// Days from 1970-01-01 to 0001-01-01's day number in chrono's count (`from_num_days_from_ce`).
const UNIX_EPOCH_DAYS_FROM_CE: i32 = 719_163;

fn date_of(days: i32) -> Option<chrono::NaiveDate> {
    chrono::NaiveDate::from_num_days_from_ce_opt(days.checked_add(UNIX_EPOCH_DAYS_FROM_CE)?)
}

/// Whether every date of a date column is in years 0–9999, which Polars writes as
/// `YYYY-MM-DD` and [`iso_date`] writes the same way without a format string per cell.
fn iso_dates(column: &Column) -> Result<bool, BlockError> {
    use chrono::Datelike;
    let days = column.cast(&DataType::Int32).map_err(|e| table_error(&e))?;
    let days = days.i32().map_err(|e| table_error(&e))?;
    let in_range = |d: Option<i32>| {
        d.and_then(date_of)
            .is_some_and(|d| (0..=9999).contains(&d.year()))
    };
    Ok(days.null_count() == days.len() || (in_range(days.min()) && in_range(days.max())))
}

/// `YYYY-MM-DD` of a date in years 0–9999.
fn iso_date(out: &mut Vec<u8>, date: chrono::NaiveDate) {
    use chrono::Datelike;
    let (y, m, d) = (date.year() as u32, date.month(), date.day());
    out.extend_from_slice(&[
        b'0' + (y / 1000) as u8,
        b'0' + (y / 100 % 10) as u8,
        b'0' + (y / 10 % 10) as u8,
        b'0' + (y % 10) as u8,
        b'-',
        b'0' + (m / 10) as u8,
        b'0' + (m % 10) as u8,
        b'-',
        b'0' + (d / 10) as u8,
        b'0' + (d % 10) as u8,
    ]);
}

builtin!("csv.write", csv_write);
