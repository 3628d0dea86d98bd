//! `input/*` blocks: reading files into rows and text.
//!
//! Every path is resolved against `ctx.base_dir`; these blocks only read, except
//! `file.unzip_evidence`, which extracts into `ctx.out_dir` (never beside the archive).
//!
//! * CSV text is decoded with `encoding_rs` (strict: a wrong guess is an error, never
//!   mojibake) and `chardetng` breaks ties between legacy Japanese encodings; Polars' CSV
//!   reader parses it (multi-threaded, all columns as text as the spec promises). The file
//!   is streamed: decoded block by block and parsed in pieces of a few MiB cut at record
//!   ends, so a large export never sits in memory as raw bytes or as one decoded string.
//! * Bank statements are small, so they go through the `csv` crate row by row.
//! * Workbooks are read with calamine's streaming cell reader (a sparse sheet never
//!   becomes a dense grid) behind `catch_unwind`, so a parser panic on a hostile file is
//!   `BLOCK_FAILED` with `CORRUPT_FILE` in the message, not the end of the run.
//! * PDF and Word text comes from keiri-docs, which has its own limits and panic guard.

use std::collections::BTreeMap;
use std::io::{Cursor, Read};
use std::path::{Component, Path, PathBuf};

use chrono::NaiveDate;
use polars::prelude::*;
use serde_json::{Value as J, json};

use crate::block::{BlockContext, BlockError, ErrorCode, Inputs, Outputs, Registry};
use crate::jp;
use crate::value::{Row, column_names, table_error};

pub fn register(registry: &mut Registry) {
    registry.insert("csv.read", csv_read);
    registry.insert("excel.read_workbook", excel_read_workbook);
    registry.insert("pdf.extract_text", pdf_extract_text);
    registry.insert("docx.extract_text", docx_extract_text);
    registry.insert("file.list_folder", file_list_folder);
    registry.insert("file.unzip_evidence", file_unzip_evidence);
    registry.insert("bank.read_statement", bank_read_statement);
}

/// Files larger than this are refused before reading (1 GiB: a 1,000,000-row journal is
/// about 100 MB).
const MAX_FILE_BYTES: u64 = 1 << 30;

/// `path` against the workspace (absolute paths stay as they are), through the run's path
/// policy ([`crate::paths::resolve_read`]): `PATH_DENIED` outside its roots.
pub(crate) fn resolve(ctx: &BlockContext<'_>, path: &str) -> Result<PathBuf, BlockError> {
    crate::paths::resolve_read(ctx, path)
}

fn not_found(path: &Path, e: &std::io::Error) -> BlockError {
    let shown = path.display();
    BlockError::new(
        ErrorCode::FileNotFound,
        format!("ファイル {shown} を読めません: {e}"),
        format!("cannot read {shown}: {e}"),
    )
}

/// Reads a whole file (capped), mapping a missing file to `FILE_NOT_FOUND`.
pub(crate) fn read_bytes(
    ctx: &BlockContext<'_>,
    path: &str,
) -> Result<(PathBuf, Vec<u8>), BlockError> {
    let full = resolve(ctx, path)?;
    let file = std::fs::File::open(&full).map_err(|e| not_found(&full, &e))?;
    let size = file.metadata().map_err(|e| not_found(&full, &e))?.len();
    if size > MAX_FILE_BYTES {
        return Err(BlockError::failed(
            format!("ファイルが大きすぎます（{size} バイト）"),
            format!("file is {size} bytes, over the limit of {MAX_FILE_BYTES}"),
        ));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| not_found(&full, &e))?;
    Ok((full, bytes))
}

/// Decodes text in the encoding the spec's `encoding` input names (`auto`, `utf-8`,
/// `utf-8-sig`, `shift_jis`, `cp932`). Returns the text and the encoding used (`utf-8`,
/// `utf-8-sig`, `euc-jp` or `cp932`; Shift_JIS is decoded as its superset CP932, which is
/// what Japanese Windows software writes). The choice is [`decodings`]'s, which `csv.read`
/// uses on its streamed file too.
pub(crate) fn decode(bytes: &[u8], encoding: &str) -> Result<(String, &'static str), BlockError> {
    const SAMPLE: usize = 1 << 20;
    let sample = &bytes[..bytes.len().min(SAMPLE)];
    let (list, undecodable) = decodings(sample, sample.len() == bytes.len(), encoding)?;
    for decoding in list {
        let b = if decoding.skip_bom {
            bytes.strip_prefix(BOM).unwrap_or(bytes)
        } else {
            bytes
        };
        let (text, had_errors) = decoding.encoding.decode_without_bom_handling(b);
        if !had_errors {
            return Ok((text.into_owned(), decoding.name));
        }
    }
    Err(undecodable)
}

fn delimiter_byte(s: &str) -> Result<u8, BlockError> {
    match s {
        "\t" | "\\t" | "tab" | "TAB" => Ok(b'\t'),
        s if s.len() == 1 => Ok(s.as_bytes()[0]),
        _ => Err(BlockError::input_invalid(
            "delimiter",
            "1文字の区切り文字（, ; \\t など）が必要です",
            "expected a one-character ASCII delimiter (, ; \\t …)",
        )),
    }
}

/// How much decoded text one Polars parse of `csv.read` gets. The file is decoded and parsed
/// piece by piece, so neither the raw bytes nor the whole decoded text of a large export is
/// ever held: at most one piece of text beside the table being built. 4 MiB keeps Polars'
/// per-parse overhead negligible (a 45 MB journal is a dozen pieces).
const CSV_PIECE_BYTES: usize = 4 << 20;

/// How the file is read from disk and decoded: in blocks of this size.
const CSV_READ_BLOCK: usize = 1 << 20;

/// The block and piece sizes of one read (the constants above, smaller in tests).
#[derive(Clone, Copy)]
struct PieceSizes {
    block: usize,
    piece: usize,
}

/// The layout options of `csv.read` that the parser needs.
#[derive(Clone, Copy)]
struct CsvShape {
    delimiter: u8,
    header: bool,
    skip_rows: usize,
}

/// One way to decode the file: the encoding, the name `csv.read` reports, whether a UTF-8
/// BOM is skipped, and the error when the bytes do not decode.
struct Decoding {
    encoding: &'static encoding_rs::Encoding,
    name: &'static str,
    skip_bom: bool,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The decodings to try, in order, for the `encoding` input, judged from the first bytes of
/// the file (`sample`; `whole` when that is the entire file), and the error when none of
/// them decodes the file. The rules are [`decode`]'s: a named encoding is the only one
/// tried; `auto` takes a BOM as UTF-8, text that is UTF-8 as UTF-8, and otherwise lets
/// chardetng choose between EUC-JP and CP932 on the first MiB, CP932 being the last resort.
fn decodings(
    sample: &[u8],
    whole: bool,
    encoding: &str,
) -> Result<(Vec<Decoding>, BlockError), BlockError> {
    let undecodable = |name: &str| {
        BlockError::failed(
            format!("文字コード {name} として読めません"),
            format!("the file is not valid {name}"),
        )
        .with_hint(
            "encoding を auto にするか、正しい文字コードを指定してください",
            "set encoding to auto or to the file's real encoding",
        )
    };
    let utf8 = |name: &'static str| Decoding {
        encoding: encoding_rs::UTF_8,
        name,
        skip_bom: true,
    };
    let cp932 = Decoding {
        encoding: encoding_rs::SHIFT_JIS,
        name: "cp932",
        skip_bom: false,
    };
    match encoding.trim().to_ascii_lowercase().as_str() {
        "utf-8" | "utf8" => Ok((vec![utf8("utf-8")], undecodable("UTF-8"))),
        "utf-8-sig" => Ok((vec![utf8("utf-8-sig")], undecodable("UTF-8"))),
        "shift_jis" | "shift-jis" | "sjis" | "cp932" | "windows-31j" => {
            Ok((vec![cp932], undecodable("Shift_JIS/CP932")))
        }
        "auto" | "" => {
            if sample.starts_with(BOM) {
                return Ok((vec![utf8("utf-8-sig")], undecodable("UTF-8")));
            }
            let mut list = Vec::new();
            // A sample cut inside a character is still UTF-8 so far (`error_len` is None).
            let utf8_so_far = match std::str::from_utf8(sample) {
                Ok(_) => true,
                Err(e) => !whole && e.error_len().is_none(),
            };
            if utf8_so_far {
                list.push(Decoding {
                    encoding: encoding_rs::UTF_8,
                    name: "utf-8",
                    skip_bom: false,
                });
            }
            // Not UTF-8: Japanese files are then CP932 nearly always, EUC-JP sometimes;
            // chardetng decides between the legacy encodings by byte-pair statistics, which
            // settle long before the first MiB ends.
            let mut detector = chardetng::EncodingDetector::new();
            detector.feed(sample, whole);
            if detector.guess(Some(b"jp"), true) == encoding_rs::EUC_JP {
                list.push(Decoding {
                    encoding: encoding_rs::EUC_JP,
                    name: "euc-jp",
                    skip_bom: false,
                });
            }
            list.push(cp932);
            Ok((
                list,
                BlockError::failed(
                    "文字コードを判定できません",
                    "the text encoding could not be detected",
                )
                .with_hint("encoding を指定してください", "set the encoding input"),
            ))
        }
        other => Err(BlockError::input_invalid(
            "encoding",
            &format!("{other} は使えません（auto, utf-8, utf-8-sig, shift_jis, cp932）"),
            &format!("{other} is not one of auto, utf-8, utf-8-sig, shift_jis, cp932"),
        )),
    }
}

/// Why one decoding of the file did not give a table.
enum PieceError {
    /// The bytes are not in this encoding: the next decoding is tried.
    Undecodable,
    Failed(BlockError),
}

/// Reads the CSV at `path` into a table of text columns, decoding and parsing it in pieces
/// of about `sizes.piece` bytes of text. Returns the table and the encoding used.
fn read_csv_table(
    ctx: &BlockContext<'_>,
    path: &str,
    encoding: &str,
    shape: CsvShape,
    sizes: PieceSizes,
) -> Result<(DataFrame, &'static str), BlockError> {
    use std::io::{Seek, SeekFrom};
    let full = resolve(ctx, path)?;
    let mut file = std::fs::File::open(&full).map_err(|e| not_found(&full, &e))?;
    let size = file.metadata().map_err(|e| not_found(&full, &e))?.len();
    if size > MAX_FILE_BYTES {
        return Err(BlockError::failed(
            format!("ファイルが大きすぎます（{size} バイト）"),
            format!("file is {size} bytes, over the limit of {MAX_FILE_BYTES}"),
        ));
    }
    const SAMPLE: u64 = 1 << 20;
    let mut sample = Vec::new();
    (&mut file)
        .take(SAMPLE)
        .read_to_end(&mut sample)
        .map_err(|e| not_found(&full, &e))?;
    let whole = (sample.len() as u64) < SAMPLE || size == SAMPLE;
    let (list, undecodable) = decodings(&sample, whole, encoding)?;
    drop(sample);
    for decoding in list {
        file.seek(SeekFrom::Start(0))
            .map_err(|e| not_found(&full, &e))?;
        match parse_pieces(ctx, &mut file, &decoding, shape, sizes) {
            Ok(df) => return Ok((df, decoding.name)),
            Err(PieceError::Undecodable) => continue,
            Err(PieceError::Failed(e)) => return Err(e),
        }
    }
    Err(undecodable)
}

/// Decodes `file` block by block and hands Polars a piece of text each time about
/// `sizes.piece` bytes have accumulated, cut after the first complete record past that size;
/// the pieces' tables are stacked (their chunks are kept, not copied).
fn parse_pieces(
    ctx: &BlockContext<'_>,
    file: &mut impl Read,
    decoding: &Decoding,
    shape: CsvShape,
    sizes: PieceSizes,
) -> Result<DataFrame, PieceError> {
    // A BOM of the encoding is removed by the decoder, even when a block ends inside it.
    let mut decoder = if decoding.skip_bom {
        decoding.encoding.new_decoder_with_bom_removal()
    } else {
        decoding.encoding.new_decoder_without_bom_handling()
    };
    let mut block = vec![0u8; sizes.block.max(1)];
    let mut text = String::new();
    let mut table: Option<DataFrame> = None;
    loop {
        let n = read_block(file, &mut block).map_err(|e| {
            PieceError::Failed(BlockError::failed(
                format!("ファイルを読めません: {e}"),
                format!("cannot read the file: {e}"),
            ))
        })?;
        let last = n == 0;
        decode_into(&mut decoder, &block[..n], last, &mut text)?;
        while last || text.len() >= sizes.piece {
            super::cancelled(ctx).map_err(PieceError::Failed)?;
            // The first piece must hold the skipped rows and the header, or the later pieces
            // would be parsed without knowing the columns.
            let records = if table.is_none() {
                shape.skip_rows + 2
            } else {
                1
            };
            let cut = if last {
                text.len()
            } else {
                match record_end(text.as_bytes(), sizes.piece, records) {
                    Some(cut) => cut,
                    None => break,
                }
            };
            let chunk = &text[..cut];
            match &mut table {
                None if chunk.trim().is_empty() => {}
                None => table = Some(parse_piece(chunk, shape, None)?),
                Some(df) => {
                    let more = parse_piece(chunk, shape, Some(df.schema().clone()))?;
                    df.vstack_mut_owned(more)
                        .map_err(|e| PieceError::Failed(csv_error(&e)))?;
                }
            }
            text.drain(..cut);
            if last {
                break;
            }
        }
        if last {
            break;
        }
    }
    // A file of nothing but blank lines is an empty table, not a parse error.
    Ok(table.unwrap_or_else(DataFrame::empty))
}

fn read_block(file: &mut impl Read, block: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < block.len() {
        match file.read(&mut block[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Appends the decoded `src` to `text`; malformed bytes end this decoding (strict: a wrong
/// guess is an error, never mojibake).
fn decode_into(
    decoder: &mut encoding_rs::Decoder,
    mut src: &[u8],
    last: bool,
    text: &mut String,
) -> Result<(), PieceError> {
    loop {
        let room = decoder
            .max_utf8_buffer_length_without_replacement(src.len())
            .unwrap_or(src.len().saturating_mul(3))
            .max(16);
        text.reserve(room);
        let (result, read) = decoder.decode_to_string_without_replacement(src, text, last);
        src = &src[read..];
        match result {
            encoding_rs::DecoderResult::InputEmpty => return Ok(()),
            encoding_rs::DecoderResult::OutputFull => {}
            encoding_rs::DecoderResult::Malformed(_, _) => return Err(PieceError::Undecodable),
        }
    }
}

/// The byte offset just after the first line end at or past `from` that closes a non-blank
/// record (a `\n` outside double quotes) before another non-blank line, once at least
/// `records` non-blank records have ended, if `text` has one. `text` starts at a record
/// boundary, so the quote state starts closed.
fn record_end(text: &[u8], from: usize, records: usize) -> Option<usize> {
    let mut quoted = false;
    let mut content = false;
    let mut ended = 0;
    for (i, &b) in text.iter().enumerate() {
        match b {
            b'"' => {
                quoted = !quoted;
                content = true;
            }
            b'\n' if !quoted => {
                let closes_content = content;
                if content {
                    ended += 1;
                }
                content = false;
                // Cut only between two lines with content: a blank line then never sits at
                // the edge of a piece, where Polars might treat it unlike one mid-file.
                let next_has_content = text.get(i + 1).is_some_and(|&c| c != b'\n' && c != b'\r');
                if closes_content && next_has_content && i + 1 >= from && ended >= records {
                    return Some(i + 1);
                }
            }
            b' ' | b'\t' | b'\r' => {}
            _ => content = true,
        }
    }
    None
}

/// Parses one piece of CSV text with every column as text. The first piece (`schema` None)
/// carries the skipped rows and the header; later pieces are rows only, parsed with the
/// first piece's columns.
fn parse_piece(
    text: &str,
    shape: CsvShape,
    schema: Option<SchemaRef>,
) -> Result<DataFrame, PieceError> {
    let first = schema.is_none();
    CsvReadOptions::default()
        .with_has_header(first && shape.header)
        .with_skip_rows(if first { shape.skip_rows } else { 0 })
        // Every column stays text (the spec says so; coerce_types converts).
        .with_infer_schema_length(Some(0))
        .with_schema(schema)
        .with_raise_if_empty(false)
        .map_parse_options(|o| {
            o.with_separator(shape.delimiter)
                .with_missing_is_null(false)
                .with_truncate_ragged_lines(true)
        })
        .into_reader_with_file_handle(Cursor::new(text.as_bytes()))
        .finish()
        .map_err(|e| PieceError::Failed(csv_error(&e)))
}

fn csv_error(e: &PolarsError) -> BlockError {
    BlockError::failed(
        format!("CSVを解析できません: {e}"),
        format!("cannot parse the CSV: {e}"),
    )
}

fn csv_read(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let path = inputs.require_str("path")?;
    let encoding = inputs.str("encoding")?.unwrap_or("auto");
    let delimiter = delimiter_byte(inputs.str("delimiter")?.unwrap_or(","))?;
    let header = inputs.bool("header")?.unwrap_or(true);
    let skip_rows = usize::try_from(inputs.i64("skip_rows")?.unwrap_or(0)).map_err(|_| {
        BlockError::input_invalid("skip_rows", "0以上の整数が必要です", "expected 0 or more")
    })?;
    let names = inputs.strings("columns")?;
    let shape = CsvShape {
        delimiter,
        header,
        skip_rows,
    };
    let sizes = PieceSizes {
        block: CSV_READ_BLOCK,
        piece: CSV_PIECE_BYTES,
    };
    let (mut df, used) = read_csv_table(ctx, path, encoding, shape, sizes)?;
    let width = df.width();
    match (&names, header) {
        (Some(names), false) => {
            if names.len() != width {
                return Err(BlockError::input_invalid(
                    "columns",
                    &format!(
                        "列名が {} 個ありますが、CSVの列は {width} 個です",
                        names.len()
                    ),
                    &format!(
                        "{} names given but the CSV has {width} columns",
                        names.len()
                    ),
                ));
            }
            df.set_column_names(names.as_slice())
                .map_err(|e| table_error(&e))?;
        }
        (None, false) => {
            let generated: Vec<String> = (1..=width).map(|i| format!("col{i}")).collect();
            df.set_column_names(&generated)
                .map_err(|e| table_error(&e))?;
        }
        // With a header, `columns` picks and orders the columns to keep.
        (Some(names), true) => {
            let existing = column_names(&df);
            if let Some(missing) = names.iter().find(|n| !existing.contains(n)) {
                return Err(BlockError::missing_column(missing, &existing));
            }
            df = df
                .select(names.iter().map(|s| s.as_str()))
                .map_err(|e| table_error(&e))?;
        }
        (None, true) => {}
    }
    // Header names keep their text, but a BOM-less file written by Excel may pad them.
    let trimmed: Vec<String> = column_names(&df)
        .iter()
        .map(|n| n.trim().to_owned())
        .collect();
    df.set_column_names(&trimmed).map_err(|e| table_error(&e))?;
    let columns = column_names(&df);
    let summary = json!({
        "rows": df.height(),
        "columns": columns.len(),
        "skipped_rows": skip_rows,
        "encoding": used,
        "header": header,
    });
    Ok(Outputs::new()
        .with("rows", df)
        .with("columns", json!(columns))
        .with("encoding", json!(used))
        .with("summary", summary))
}

/// Zero-based (row, column) of an A1 cell, by keiri-xlsx's parser.
fn parse_cell(s: &str) -> Option<(u32, u32)> {
    let cell = keiri_xlsx::CellRef::parse(s.trim())?;
    Some((cell.row - 1, cell.col - 1))
}

/// Zero-based column index to letters (`0` → `A`).
pub(crate) fn column_letter(col: u32) -> String {
    keiri_xlsx::column_name(col.saturating_add(1))
}

/// Cells a sheet may hold before we refuse it (a hostile file could declare millions).
const MAX_CELLS: usize = 20_000_000;

fn excel_read_workbook(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let path = inputs.require_str("path")?;
    let header_row = inputs.i64("header_row")?.unwrap_or(1);
    let header_row = u32::try_from(header_row).map_err(|_| {
        BlockError::input_invalid("header_row", "0以上の整数が必要です", "expected 0 or more")
    })?;
    let skip_empty = inputs.bool("skip_empty_rows")?.unwrap_or(true);
    let formula_mode = match inputs.str("value_mode")?.unwrap_or("value") {
        "value" => false,
        "formula" => true,
        other => {
            return Err(BlockError::input_invalid(
                "value_mode",
                &format!("{other} は使えません（value, formula）"),
                &format!("{other} is not value or formula"),
            ));
        }
    };
    let range = match inputs.str("range")? {
        None => None,
        Some(r) => {
            let (a, b) = r.split_once(':').unwrap_or((r, r));
            match (parse_cell(a), parse_cell(b)) {
                (Some(start), Some(end)) => Some((start, end)),
                _ => {
                    return Err(BlockError::input_invalid(
                        "range",
                        "A1形式の範囲（例 A3:K500）が必要です",
                        "expected an A1 range such as A3:K500",
                    ));
                }
            }
        }
    };
    let sheet_wanted = inputs.get("sheet").map(|v| v.to_json());
    let (_, bytes) = read_bytes(ctx, path)?;
    let corrupt = |detail: String| {
        BlockError::failed(
            format!("Excelファイルを読めません（CORRUPT_FILE）: {detail}"),
            format!("cannot read the workbook (CORRUPT_FILE): {detail}"),
        )
    };
    // calamine parses untrusted XML; a panic in it must not end the run.
    let read = keiri_fs::catch_panic(|| read_sheet(&bytes, sheet_wanted.as_ref(), formula_mode));
    let (sheet, sheet_names, cells) = match read {
        Ok(Ok(found)) => found,
        Ok(Err(SheetError::NotFound(names))) => {
            let list = names.join(", ");
            return Err(BlockError::failed(
                "指定したシートがありません",
                "the sheet does not exist",
            )
            .with_hint(format!("シート: {list}"), format!("sheets: {list}")));
        }
        Ok(Err(SheetError::Corrupt(e))) => return Err(corrupt(e)),
        Err(panic) => return Err(corrupt(format!("the parser panicked ({panic})"))),
    };
    let ((r0, c0), (r1, c1)) = match range {
        Some(r) => r,
        None => cells
            .keys()
            .fold(None, |acc: Option<((u32, u32), (u32, u32))>, &(r, c)| {
                Some(match acc {
                    None => ((r, c), (r, c)),
                    Some(((a, b), (x, y))) => ((a.min(r), b.min(c)), (x.max(r), y.max(c))),
                })
            })
            .unwrap_or_default(),
    };
    // The header row is one-based in the sheet; with a range it still names a sheet row.
    let header_index = if header_row == 0 {
        None
    } else {
        Some(header_row - 1)
    };
    let mut columns: Vec<String> = Vec::new();
    for c in c0..=c1 {
        let name = header_index
            .and_then(|h| cells.get(&(h, c)))
            .map(|v| match v {
                J::String(s) => s.trim().to_owned(),
                other => other.to_string(),
            })
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| column_letter(c));
        // Two columns with one header name would overwrite each other's cells.
        let mut unique = name.clone();
        let mut n = 2;
        while columns.contains(&unique) {
            unique = format!("{name}_{n}");
            n += 1;
        }
        columns.push(unique);
    }
    let first_data = match header_index {
        Some(h) => (h + 1).max(r0),
        None => r0,
    };
    let mut rows: Vec<Row> = Vec::new();
    if !cells.is_empty() {
        for r in first_data..=r1 {
            if ctx.cancel.is_cancelled() {
                return Err(BlockError::new(
                    ErrorCode::Cancelled,
                    "取り消されました",
                    "cancelled",
                ));
            }
            let mut row = Row::new();
            let mut any = false;
            for (i, c) in (c0..=c1).enumerate() {
                let v = cells.get(&(r, c)).cloned().unwrap_or(J::Null);
                any |= !v.is_null();
                row.insert(columns[i].clone(), v);
            }
            if any || !skip_empty {
                rows.push(row);
            }
        }
    }
    let range_text = format!(
        "{}{}:{}{}",
        column_letter(c0),
        r0 + 1,
        column_letter(c1),
        r1 + 1
    );
    let summary =
        json!({"sheet": sheet, "rows": rows.len(), "columns": columns.len(), "range": range_text});
    Ok(Outputs::new()
        .with("rows", rows)
        .with("columns", json!(columns))
        .with("sheet_names", json!(sheet_names))
        .with("summary", summary))
}

enum SheetError {
    NotFound(Vec<String>),
    Corrupt(String),
}

type SheetCells = (String, Vec<String>, BTreeMap<(u32, u32), J>);

fn read_sheet(
    bytes: &[u8],
    wanted: Option<&J>,
    formula_mode: bool,
) -> Result<SheetCells, SheetError> {
    use calamine::{DataRef, Reader, Xlsx};
    let corrupt = |e: calamine::XlsxError| SheetError::Corrupt(e.to_string());
    let mut workbook: Xlsx<_> = Xlsx::new(Cursor::new(bytes)).map_err(corrupt)?;
    let names = workbook.sheet_names();
    let sheet = match wanted {
        None => names.first().cloned(),
        Some(J::Number(n)) => n.as_u64().and_then(|i| names.get(i as usize).cloned()),
        Some(J::String(s)) => names
            .iter()
            .find(|n| n.as_str() == s)
            .cloned()
            .or_else(|| s.parse::<usize>().ok().and_then(|i| names.get(i).cloned())),
        Some(_) => None,
    }
    .ok_or_else(|| SheetError::NotFound(names.clone()))?;
    let is_1904 = workbook.has_1904_epoch();
    let mut reader = workbook.worksheet_cells_reader(&sheet).map_err(corrupt)?;
    let mut cells = BTreeMap::new();
    while let Some(cell) = reader.next_cell_with_formula().map_err(corrupt)? {
        if cells.len() >= MAX_CELLS {
            return Err(SheetError::Corrupt(format!("more than {MAX_CELLS} cells")));
        }
        let value = match (&cell.formula, formula_mode) {
            (Some(f), true) if !f.is_empty() => J::String(format!("={f}")),
            _ => match &cell.value {
                DataRef::Empty => continue,
                DataRef::String(s) => J::String(s.clone()),
                DataRef::SharedString(s) => J::String((*s).to_owned()),
                DataRef::Int(i) => J::from(*i),
                DataRef::Float(f) if f.fract() == 0.0 && f.abs() < 9e15 => J::from(*f as i64),
                DataRef::Float(f) => crate::value::float_json(*f),
                DataRef::Bool(b) => J::Bool(*b),
                DataRef::DateTime(dt) if !dt.is_duration() => {
                    let serial = dt.as_f64() + if is_1904 { 1462.0 } else { 0.0 };
                    match jp::excel_serial_date(serial) {
                        Some(d) if serial.fract() == 0.0 => {
                            J::String(d.format("%Y-%m-%d").to_string())
                        }
                        Some(d) => {
                            let secs = (serial.fract() * 86_400.0).round() as u32;
                            J::String(format!(
                                "{} {:02}:{:02}:{:02}",
                                d.format("%Y-%m-%d"),
                                secs / 3600,
                                secs / 60 % 60,
                                secs % 60
                            ))
                        }
                        None => crate::value::float_json(dt.as_f64()),
                    }
                }
                DataRef::DateTime(dt) => crate::value::float_json(dt.as_f64()),
                DataRef::DateTimeIso(s) | DataRef::DurationIso(s) => J::String(s.clone()),
                DataRef::Error(e) => J::String(format!("#{e:?}")),
            },
        };
        if matches!(&value, J::String(s) if s.is_empty()) {
            continue;
        }
        cells.insert(cell.pos, value);
    }
    Ok((sheet, names, cells))
}

fn docs_error(e: &keiri_docs::Error) -> BlockError {
    BlockError::failed(
        format!("文書を読めません（{}）: {e}", e.code()),
        format!("cannot read the document ({}): {e}", e.code()),
    )
}

fn pdf_extract_text(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let path = inputs.require_str("path")?;
    let max_pages = usize::try_from(inputs.i64("max_pages")?.unwrap_or(50).max(1)).unwrap_or(1);
    let max_chars = usize::try_from(inputs.i64("max_chars")?.unwrap_or(0).max(0)).unwrap_or(0);
    let (_, bytes) = read_bytes(ctx, path)?;
    let extract = |pages: usize| {
        let opts = keiri_docs::ExtractOptions {
            max_pages: pages,
            ..keiri_docs::ExtractOptions::default()
        };
        keiri_docs::extract_bytes(&bytes, keiri_docs::Format::Pdf, &opts)
            .map_err(|e| docs_error(&e))
    };
    let whole = extract(max_pages)?;
    let page_count = whole.pages_total.unwrap_or(0);
    let extracted = whole.pages_extracted.unwrap_or(0);
    // keiri-docs returns the text of the first n pages; a page's text is what page n adds
    // to the first n-1 (each page ends its last line), so the pages are the differences.
    let mut pages = Vec::with_capacity(extracted);
    let mut previous = String::new();
    for n in 1..=extracted {
        if ctx.cancel.is_cancelled() {
            return Err(BlockError::new(
                ErrorCode::Cancelled,
                "取り消されました",
                "cancelled",
            ));
        }
        let text = if n == extracted {
            whole.text.clone()
        } else {
            extract(n)?.text
        };
        let page_text = text
            .get(previous.len()..)
            .unwrap_or("")
            .trim_start_matches('\n')
            .to_owned();
        pages.push(json!({"page": n, "text": page_text}));
        previous = text;
    }
    let mut text = whole.text;
    let mut truncated = extracted < page_count;
    if max_chars > 0 && text.chars().count() > max_chars {
        text = text.chars().take(max_chars).collect();
        truncated = true;
    }
    Ok(Outputs::new()
        .with("text", J::String(text))
        .with("pages", J::Array(pages))
        .with("page_count", json!(page_count))
        .with("truncated", J::Bool(truncated)))
}

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

/// Normalises an extension filter entry: `.PDF`, `pdf` and `*.pdf` all mean `pdf`.
fn normalize_ext(e: &str) -> String {
    e.trim()
        .trim_start_matches('*')
        .trim_start_matches('.')
        .to_lowercase()
}

fn ext_of(path: &Path) -> String {
    path.extension()
        .and_then(|e| e.to_str())
        .map(|e| format!(".{}", e.to_lowercase()))
        .unwrap_or_default()
}

fn modified_iso(meta: &std::fs::Metadata) -> String {
    meta.modified()
        .ok()
        .map(|t| {
            chrono::DateTime::<chrono::Utc>::from(t)
                .format("%Y-%m-%dT%H:%M:%SZ")
                .to_string()
        })
        .unwrap_or_default()
}

fn file_list_folder(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let folder = inputs.require_str("folder")?;
    let pattern = inputs.str("pattern")?.unwrap_or("*");
    let extensions: Option<Vec<String>> = inputs
        .strings("extensions")?
        .map(|v| v.iter().map(|e| normalize_ext(e)).collect());
    let recursive = inputs.bool("recursive")?.unwrap_or(false);
    let sort_by = inputs.str("sort_by")?.unwrap_or("name");
    let glob = globset::GlobBuilder::new(pattern)
        .case_insensitive(true)
        .literal_separator(false)
        .build()
        .map_err(|e| {
            BlockError::input_invalid(
                "pattern",
                &format!("globパターンが不正です: {e}"),
                &format!("bad glob: {e}"),
            )
        })?
        .compile_matcher();
    let root = resolve(ctx, folder)?;
    if !root.is_dir() {
        let shown = root.display();
        return Err(BlockError::new(
            ErrorCode::FileNotFound,
            format!("フォルダ {shown} がありません"),
            format!("folder {shown} does not exist"),
        ));
    }
    let walker = walkdir::WalkDir::new(&root)
        .min_depth(1)
        .max_depth(if recursive { usize::MAX } else { 1 })
        .sort_by_file_name();
    let mut files: Vec<(J, String, std::time::SystemTime, u64)> = Vec::new();
    for entry in walker {
        if ctx.cancel.is_cancelled() {
            return Err(BlockError::new(
                ErrorCode::Cancelled,
                "取り消されました",
                "cancelled",
            ));
        }
        let Ok(entry) = entry else { continue };
        // A file the run's policy denies (`.env`, key files) is not listed either.
        if !entry.file_type().is_file() || ctx.paths.check(entry.path()).is_err() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        if !glob.is_match(&name) {
            continue;
        }
        let ext = ext_of(entry.path());
        if let Some(exts) = &extensions
            && !exts.contains(&normalize_ext(&ext))
        {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        let relative = entry
            .path()
            .strip_prefix(ctx.base_dir)
            .unwrap_or(entry.path());
        let path = relative.to_string_lossy().replace('\\', "/");
        let modified = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
        files.push((
            json!({"name": name, "path": path, "ext": ext, "size": meta.len(), "modified": modified_iso(&meta)}),
            path,
            modified,
            meta.len(),
        ));
    }
    match sort_by {
        "name" => files.sort_by(|a, b| a.1.cmp(&b.1)),
        "modified" => files.sort_by(|a, b| a.2.cmp(&b.2).then(a.1.cmp(&b.1))),
        "size" => files.sort_by(|a, b| a.3.cmp(&b.3).then(a.1.cmp(&b.1))),
        other => {
            return Err(BlockError::input_invalid(
                "sort_by",
                &format!("{other} は使えません（name, modified, size）"),
                &format!("{other} is not name, modified or size"),
            ));
        }
    }
    let count = files.len();
    Ok(Outputs::new()
        .with("files", J::Array(files.into_iter().map(|f| f.0).collect()))
        .with("count", json!(count)))
}

/// Caps for one evidence archive: a zip bomb stops at these, not at the disk's end.
const ZIP_MAX_ENTRIES: usize = 10_000;
const ZIP_MAX_ENTRY_BYTES: u64 = 256 * 1024 * 1024;
const ZIP_MAX_TOTAL_BYTES: u64 = 1024 * 1024 * 1024;

/// A zip entry name as a safe relative path (no absolute paths, no `..`), or `None`.
fn safe_entry_path(name: &str) -> Option<PathBuf> {
    let p = Path::new(name);
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

/// The text excerpt of an extracted evidence file, or the reason it has none.
pub(crate) fn excerpt(
    path: &Path,
    bytes: &[u8],
    max_chars: usize,
) -> Result<Option<String>, String> {
    let Ok(format) = keiri_docs::Format::from_path(path) else {
        return Ok(None);
    };
    let opts = keiri_docs::ExtractOptions {
        max_chars: Some(max_chars),
        ..keiri_docs::ExtractOptions::default()
    };
    keiri_docs::extract_bytes(bytes, format, &opts)
        .map(|e| Some(e.normalized()))
        .map_err(|e| e.code().to_owned())
}

fn file_unzip_evidence(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let path = inputs.require_str("path")?;
    let include_text = inputs.bool("include_text")?.unwrap_or(true);
    let max_chars =
        usize::try_from(inputs.i64("max_chars_per_file")?.unwrap_or(2000).max(0)).unwrap_or(0);
    let extensions: Option<Vec<String>> = inputs
        .strings("extensions")?
        .map(|v| v.iter().map(|e| normalize_ext(e)).collect());
    let group_level = inputs.str("group_level")?.unwrap_or("none");
    let level = match group_level {
        "none" => None,
        "top_folder" => Some(0),
        "second_folder" => Some(1),
        other => {
            return Err(BlockError::input_invalid(
                "group_level",
                &format!("{other} は使えません（none, top_folder, second_folder）"),
                &format!("{other} is not none, top_folder or second_folder"),
            ));
        }
    };
    let (_, bytes) = read_bytes(ctx, path)?;
    let bad_zip = |detail: String| {
        BlockError::failed(
            format!("ZIPファイルを読めません: {detail}"),
            format!("cannot read the zip file: {detail}"),
        )
    };
    let mut archive = ::zip::ZipArchive::new(Cursor::new(bytes.as_slice()))
        .map_err(|e| bad_zip(e.to_string()))?;
    if archive.len() > ZIP_MAX_ENTRIES {
        return Err(bad_zip(format!(
            "{} entries (limit {ZIP_MAX_ENTRIES})",
            archive.len()
        )));
    }
    let dest = ctx.out_dir.join("evidence");
    let mut files: Vec<J> = Vec::new();
    let mut per_ext: BTreeMap<String, usize> = BTreeMap::new();
    let mut unreadable: Vec<J> = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    let mut total: u64 = 0;
    for i in 0..archive.len() {
        if ctx.cancel.is_cancelled() {
            return Err(BlockError::new(
                ErrorCode::Cancelled,
                "取り消されました",
                "cancelled",
            ));
        }
        let mut entry = archive.by_index(i).map_err(|e| bad_zip(e.to_string()))?;
        if entry.is_dir() {
            continue;
        }
        // Names written by Japanese Windows tools are CP932 without the UTF-8 flag; the
        // zip crate gives them as raw bytes we decode ourselves.
        let raw = entry.name_raw().to_vec();
        let name = match std::str::from_utf8(&raw) {
            Ok(s) => s.to_owned(),
            Err(_) => encoding_rs::SHIFT_JIS.decode(&raw).0.into_owned(),
        };
        let Some(relative) = safe_entry_path(&name) else {
            skipped.push(name);
            continue;
        };
        let ext = ext_of(&relative);
        if let Some(exts) = &extensions
            && !exts.contains(&normalize_ext(&ext))
        {
            continue;
        }
        let mut content = Vec::new();
        let read = (&mut entry)
            .take(ZIP_MAX_ENTRY_BYTES + 1)
            .read_to_end(&mut content);
        if let Err(e) = read {
            unreadable.push(json!({"path": name, "reason": e.to_string()}));
            continue;
        }
        if content.len() as u64 > ZIP_MAX_ENTRY_BYTES {
            return Err(bad_zip(format!(
                "{name} inflates past {ZIP_MAX_ENTRY_BYTES} bytes"
            )));
        }
        total += content.len() as u64;
        if total > ZIP_MAX_TOTAL_BYTES {
            return Err(bad_zip(format!(
                "contents inflate past {ZIP_MAX_TOTAL_BYTES} bytes"
            )));
        }
        let target = dest.join(&relative);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| {
                BlockError::failed(
                    format!("展開先を作れません: {e}"),
                    format!("cannot create the output folder: {e}"),
                )
            })?;
        }
        keiri_fs::write_atomic(&target, &content).map_err(|e| {
            BlockError::failed(
                format!("展開したファイルを書けません: {e}"),
                format!("cannot write an extracted file: {e}"),
            )
        })?;
        let folders: Vec<String> = relative
            .parent()
            .map(|p| {
                p.components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        let text_excerpt = if include_text {
            match excerpt(&relative, &content, max_chars) {
                Ok(t) => t.unwrap_or_default(),
                Err(code) => {
                    unreadable.push(json!({"path": name, "reason": code}));
                    String::new()
                }
            }
        } else {
            String::new()
        };
        *per_ext.entry(ext.clone()).or_default() += 1;
        let relative_text = relative.to_string_lossy().replace('\\', "/");
        files.push(json!({
            "name": relative.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            "path": target.to_string_lossy(),
            "entry": relative_text,
            "folder": folders.join("/"),
            "ext": ext,
            "size": content.len(),
            "text_excerpt": text_excerpt,
        }));
    }
    let mut groups: Vec<J> = Vec::new();
    if let Some(level) = level {
        let mut by_key: indexmap::IndexMap<String, Vec<J>> = indexmap::IndexMap::new();
        for f in &files {
            let folder = f["folder"].as_str().unwrap_or("");
            let key = folder
                .split('/')
                .filter(|s| !s.is_empty())
                .nth(level)
                .unwrap_or("")
                .to_owned();
            by_key.entry(key).or_default().push(f.clone());
        }
        groups = by_key
            .into_iter()
            .map(|(key, files)| json!({"key": key, "files": files}))
            .collect();
    }
    let summary = json!({
        "files": files.len(),
        "by_extension": per_ext,
        "unreadable": unreadable,
        "skipped_unsafe_paths": skipped,
        "extracted_to": dest.to_string_lossy(),
    });
    Ok(Outputs::new()
        .with("files", J::Array(files))
        .with("groups", J::Array(groups))
        .with("summary", summary))
}

/// One normalised statement line.
struct StatementLine {
    date: NaiveDate,
    amount: f64,
    deposit: bool,
    description: String,
    balance: Option<f64>,
}

/// Header names Japanese banks use, by the field they mean (first match wins).
const BANK_HEADERS: &[(&str, &[&str])] = &[
    (
        "date",
        &[
            "日付",
            "取引日",
            "お取引日",
            "年月日",
            "勘定日",
            "取扱日",
            "取扱日付",
            "入出金日",
            "取引年月日",
        ],
    ),
    (
        "withdrawal",
        &[
            "お引出し",
            "お引出",
            "お引出金額",
            "お引き出し",
            "出金",
            "出金金額",
            "出金額",
            "お支払金額",
            "支払金額",
            "引出額",
        ],
    ),
    (
        "deposit",
        &[
            "お預入れ",
            "お預入",
            "お預入金額",
            "お預け入れ",
            "入金",
            "入金金額",
            "入金額",
            "お預り金額",
            "預入額",
        ],
    ),
    ("amount", &["金額", "取引金額", "入出金額"]),
    (
        "description",
        &[
            "摘要",
            "お取引内容",
            "取引内容",
            "摘要内容",
            "内容",
            "お取引先",
            "取引先",
            "備考",
        ],
    ),
    (
        "balance",
        &["残高", "差引残高", "取引後残高", "お取引後残高", "現在高"],
    ),
];

/// The mapping for a header line, when its names are a known layout.
fn detect_mapping(header: &[String]) -> Option<BTreeMap<String, String>> {
    let mut mapping = BTreeMap::new();
    for (field, names) in BANK_HEADERS {
        let found = names.iter().find_map(|n| {
            header
                .iter()
                .find(|h| h.trim().trim_end_matches("（円）").trim_end_matches("(円)") == *n)
        });
        if let Some(h) = found {
            mapping.insert((*field).to_owned(), h.clone());
        }
    }
    let has_amount = mapping.contains_key("amount")
        || (mapping.contains_key("deposit") && mapping.contains_key("withdrawal"));
    (mapping.contains_key("date") && has_amount).then_some(mapping)
}

fn bank_read_statement(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let path = inputs.require_str("path")?;
    let encoding = inputs.str("encoding")?.unwrap_or("auto");
    let date_format = inputs.str("date_format")?;
    let skip_rows = usize::try_from(inputs.i64("skip_rows")?.unwrap_or(0)).map_err(|_| {
        BlockError::input_invalid("skip_rows", "0以上の整数が必要です", "expected 0 or more")
    })?;
    let mapping: Option<BTreeMap<String, String>> = match inputs.json("mapping") {
        None => None,
        Some(J::Object(m)) => Some(
            m.into_iter()
                .filter_map(|(k, v)| {
                    v.as_str()
                        .filter(|s| !s.is_empty())
                        .map(|s| (k, s.to_owned()))
                })
                .collect(),
        ),
        Some(_) => {
            return Err(BlockError::input_invalid(
                "mapping",
                "オブジェクトが必要です",
                "expected an object",
            ));
        }
    };
    let (_, bytes) = read_bytes(ctx, path)?;
    let (lines, layout) = match zengin_records(&bytes) {
        Some(records) => (parse_zengin(&records)?, "zengin"),
        None => {
            let (text, _) = decode(&bytes, encoding)?;
            (
                parse_bank_csv(&text, skip_rows, mapping, date_format)?,
                "csv",
            )
        }
    };
    let deposits: f64 = lines.iter().filter(|l| l.deposit).map(|l| l.amount).sum();
    let withdrawals: f64 = lines.iter().filter(|l| !l.deposit).map(|l| l.amount).sum();
    let first = lines.iter().map(|l| l.date).min();
    let last = lines.iter().map(|l| l.date).max();
    let opening = lines.first().and_then(|l| {
        l.balance.map(|b| {
            if l.deposit {
                b - l.amount
            } else {
                b + l.amount
            }
        })
    });
    let closing = lines.last().and_then(|l| l.balance);
    let iso = |d: Option<NaiveDate>| d.map(|d| d.format("%Y-%m-%d").to_string());
    let summary = json!({
        "layout": layout,
        "period_start": iso(first),
        "period_end": iso(last),
        "count": lines.len(),
        "deposit_count": lines.iter().filter(|l| l.deposit).count(),
        "withdrawal_count": lines.iter().filter(|l| !l.deposit).count(),
        "deposit_total": number(deposits),
        "withdrawal_total": number(withdrawals),
        "opening_balance": opening.map(number),
        "closing_balance": closing.map(number),
    });
    let rows: Vec<Row> = lines
        .into_iter()
        .map(|l| {
            let mut row = Row::new();
            row.insert(
                "date".into(),
                J::String(l.date.format("%Y-%m-%d").to_string()),
            );
            row.insert("amount".into(), number(l.amount));
            row.insert(
                "direction".into(),
                J::String(if l.deposit { "deposit" } else { "withdrawal" }.into()),
            );
            row.insert("description".into(), J::String(l.description));
            row.insert("balance".into(), l.balance.map_or(J::Null, number));
            row
        })
        .collect();
    Ok(Outputs::new().with("rows", rows).with("summary", summary))
}

/// A whole-yen float as a JSON integer, other floats as floats.
pub(crate) fn number(x: f64) -> J {
    if x.fract() == 0.0 && x.abs() < 9e15 {
        J::from(x as i64)
    } else {
        crate::value::float_json(x)
    }
}

fn parse_bank_csv(
    text: &str,
    skip_rows: usize,
    mapping: Option<BTreeMap<String, String>>,
    date_format: Option<&str>,
) -> Result<Vec<StatementLine>, BlockError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let records: Vec<Vec<String>> = reader
        .records()
        .map(|r| r.map(|rec| rec.iter().map(str::to_owned).collect()))
        .collect::<Result<_, _>>()
        .map_err(|e| {
            BlockError::failed(
                format!("CSVを解析できません: {e}"),
                format!("cannot parse the CSV: {e}"),
            )
        })?;
    let records = records.get(skip_rows..).unwrap_or(&[]);
    // Statements often start with account lines; without a mapping the header is the first
    // line whose names are a known layout.
    let (header_at, mapping) = match mapping {
        Some(m) => (0, m),
        None => records
            .iter()
            .enumerate()
            .take(30)
            .find_map(|(i, r)| detect_mapping(r).map(|m| (i, m)))
            .ok_or_else(|| {
                BlockError::failed("明細の見出し行を判別できません", "cannot recognise the statement's header line").with_hint(
                    "mapping で列名を指定してください（例 {date: 取引日, deposit: お預入金額, withdrawal: お引出金額, description: 摘要}）",
                    "give the column names in mapping",
                )
            })?,
    };
    let header: Vec<String> = records
        .get(header_at)
        .map(|r| r.iter().map(|h| h.trim().to_owned()).collect())
        .unwrap_or_default();
    let index = |field: &str| -> Result<Option<usize>, BlockError> {
        match mapping.get(field) {
            None => Ok(None),
            Some(name) => header
                .iter()
                .position(|h| h == name.trim())
                .map(Some)
                .ok_or_else(|| BlockError::missing_column(name, &header)),
        }
    };
    let date_i = index("date")?.ok_or_else(|| {
        BlockError::input_invalid("mapping", "date が必要です", "date is required")
    })?;
    let (amount_i, deposit_i, withdrawal_i) =
        (index("amount")?, index("deposit")?, index("withdrawal")?);
    if amount_i.is_none() && (deposit_i.is_none() || withdrawal_i.is_none()) {
        return Err(BlockError::input_invalid(
            "mapping",
            "amount か deposit と withdrawal の両方が必要です",
            "either amount or both deposit and withdrawal are required",
        ));
    }
    let description_i = index("description")?;
    let balance_i = index("balance")?;
    let markers = jp::NegativeMarkers::default();
    let mut out = Vec::new();
    for (n, record) in records.iter().enumerate().skip(header_at + 1) {
        let cell = |i: Option<usize>| {
            i.and_then(|i| record.get(i))
                .map(|s| s.trim())
                .unwrap_or("")
        };
        let date_text = cell(Some(date_i));
        if date_text.is_empty() {
            continue;
        }
        let line_no = n + skip_rows + 1;
        let date = match date_format {
            Some(f) => NaiveDate::parse_from_str(&jp::fold_width(date_text), f).ok(),
            None => jp::parse_date(date_text),
        };
        let Some(date) = date else {
            // Totals and footers (「合計」) have no date; anything else is a real error.
            if date_text.contains("合計") || date_text.contains('計') {
                continue;
            }
            return Err(BlockError::failed(
                format!("{line_no}行目の日付「{date_text}」を解釈できません"),
                format!("line {line_no}: cannot parse the date {date_text:?}"),
            ));
        };
        let amount = |i: Option<usize>| -> Result<Option<f64>, BlockError> {
            jp::parse_amount(cell(i), &markers).map_err(|e| {
                BlockError::failed(
                    format!("{line_no}行目の金額「{}」を解釈できません", e.text),
                    format!("line {line_no}: cannot parse the amount {:?}", e.text),
                )
            })
        };
        let (value, deposit) = match amount_i {
            Some(i) => match amount(Some(i))? {
                Some(a) => (a.abs(), a >= 0.0),
                None => continue,
            },
            None => match (
                amount(deposit_i)?.filter(|a| *a != 0.0),
                amount(withdrawal_i)?.filter(|a| *a != 0.0),
            ) {
                (Some(d), _) => (d, true),
                (None, Some(w)) => (w, false),
                (None, None) => continue,
            },
        };
        out.push(StatementLine {
            date,
            amount: value,
            deposit,
            description: cell(description_i).to_owned(),
            balance: amount(balance_i)?,
        });
    }
    Ok(out)
}

/// The 200-byte records of a Zengin (全銀協) fixed-width file, if `bytes` is one: every
/// record starts with its kind (1 header, 2 data, 8 trailer, 9 end), with or without line
/// breaks between records.
fn zengin_records(bytes: &[u8]) -> Option<Vec<&[u8]>> {
    const LEN: usize = 200;
    let lines: Vec<&[u8]> = bytes
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.is_empty() && *l != b"\x1a")
        .collect();
    let records: Vec<&[u8]> = if lines.len() > 1 && lines.iter().all(|l| l.len() == LEN) {
        lines
    } else if bytes.len() >= LEN && bytes.len().is_multiple_of(LEN) && !bytes.contains(&b'\n') {
        bytes.chunks(LEN).collect()
    } else {
        return None;
    };
    let kinds_ok = records
        .iter()
        .all(|r| matches!(r[0], b'1' | b'2' | b'8' | b'9'));
    (kinds_ok && records[0][0] == b'1').then_some(records)
}

/// A 和暦 YYMMDD field of a Zengin record. The era is not in the data: 31 and later are
/// 平成 (平成31年 is 2019, the last 平成 year), earlier years 令和, which holds for
/// statements from 2019 until 令和31 (2049).
fn zengin_date(field: &[u8]) -> Option<NaiveDate> {
    let s = std::str::from_utf8(field).ok()?;
    if s.len() != 6 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let yy: i32 = s[0..2].parse().ok()?;
    let (mm, dd): (u32, u32) = (s[2..4].parse().ok()?, s[4..6].parse().ok()?);
    let year = if yy >= 31 { 1988 + yy } else { 2018 + yy };
    NaiveDate::from_ymd_opt(year, mm, dd)
}

fn zengin_text(field: &[u8]) -> String {
    encoding_rs::SHIFT_JIS
        .decode_without_bom_handling(field)
        .0
        .trim()
        .to_owned()
}

fn zengin_number(field: &[u8]) -> Option<f64> {
    std::str::from_utf8(field).ok()?.trim().parse().ok()
}

/// Data records of the two Zengin statement kinds (kind code in the header, bytes 2–3):
/// `01` 振込入金通知 (deposits only) and `03` 入出金取引明細 (both directions).
fn parse_zengin(records: &[&[u8]]) -> Result<Vec<StatementLine>, BlockError> {
    let kind = &records[0][1..3];
    let bad = |n: usize, what: &str| {
        BlockError::failed(
            format!("全銀データの{n}件目のレコードを解釈できません（{what}）"),
            format!("Zengin record {n}: cannot read the {what}"),
        )
    };
    let mut out = Vec::new();
    for (n, r) in records.iter().enumerate().filter(|(_, r)| r[0] == b'2') {
        let n = n + 1;
        let line = match kind {
            // 1 区分, 6 照会番号, 6 勘定日, 6 起算日, 10 金額, 10 他店券, 10 依頼人コード,
            // 48 振込依頼人名, 15 仕向銀行名, 15 仕向支店名, …
            b"01" => StatementLine {
                date: zengin_date(&r[7..13]).ok_or_else(|| bad(n, "勘定日"))?,
                amount: zengin_number(&r[19..29]).ok_or_else(|| bad(n, "金額"))?,
                deposit: true,
                description: zengin_text(&r[49..97]),
                balance: None,
            },
            // 1 区分, 8 照会番号, 6 勘定日, 6 預入払出日, 1 入払区分 (1 入金 2 出金),
            // 2 取引区分, 12 取引金額, 12 他店券, 6 交換呈示日, 6 不渡返還日, 1 手形区分,
            // 7 手形番号, 3 僚店番号, 10 依頼人コード, 48 振込依頼人名, 15, 15, 20 摘要内容, …
            b"03" => {
                let payer = zengin_text(&r[81..129]);
                let memo = zengin_text(&r[159..179]);
                StatementLine {
                    date: zengin_date(&r[9..15]).ok_or_else(|| bad(n, "勘定日"))?,
                    amount: zengin_number(&r[24..36]).ok_or_else(|| bad(n, "取引金額"))?,
                    deposit: r[21] == b'1',
                    description: if payer.is_empty() { memo } else { payer },
                    balance: None,
                }
            }
            other => {
                let code = String::from_utf8_lossy(other);
                return Err(BlockError::failed(
                    format!(
                        "全銀データの種別コード {code} には対応していません（01 振込入金通知、03 入出金取引明細）"
                    ),
                    format!(
                        "Zengin kind {code} is not supported (01 transfer notices, 03 statements)"
                    ),
                ));
            }
        };
        out.push(line);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::CallSink;
    use crate::value::table_to_rows;
    use tokio_util::sync::CancellationToken;

    type Read = (Vec<Row>, Vec<String>, &'static str);

    /// `bytes` read as `csv.read` reads a file, decoded in blocks and parsed in pieces of the
    /// given sizes.
    fn read(
        bytes: &[u8],
        encoding: &str,
        shape: CsvShape,
        sizes: PieceSizes,
    ) -> Result<Read, BlockError> {
        let dir = tempfile::tempdir().unwrap();
        // Test setup only; product writes go through keiri-fs.
        #[allow(clippy::disallowed_methods)]
        std::fs::write(dir.path().join("t.csv"), bytes).unwrap();
        let cancel = CancellationToken::new();
        let ctx = BlockContext {
            node_id: "read",
            base_dir: dir.path(),
            paths: &keiri_fs::PathPolicy::trusted(dir.path()),
            out_dir: dir.path(),
            cancel: &cancel,
            write: false,
            answer: None,
            allow_hosts: &[],
            now: chrono::Utc::now(),
            llm: None,
            calls: &CallSink::none(),
        };
        let (df, used) = read_csv_table(&ctx, "t.csv", encoding, shape, sizes)?;
        Ok((table_to_rows(&df)?, column_names(&df), used))
    }

    /// The whole test file in one block and one piece.
    const WHOLE: PieceSizes = PieceSizes {
        block: 4 << 20,
        piece: usize::MAX,
    };

    fn shape(header: bool, skip_rows: usize) -> CsvShape {
        CsvShape {
            delimiter: b',',
            header,
            skip_rows,
        }
    }

    fn sjis(text: &str) -> Vec<u8> {
        encoding_rs::SHIFT_JIS.encode(text).0.into_owned()
    }

    /// Quoted line ends, commas and doubled quotes, CRLF, multi-byte text split across blocks,
    /// no line end at the end of the file.
    const JOURNAL: &str = "伝票日付,勘定科目,摘要\r\n令和6年4月1日,旅費交通費,\"新幹線\r\n東京－大阪\"\r\n2024/04/02,会議費,\"打合せ, \"\"A社\"\"\"\r\nR6.4.3,通信費,電話";

    #[test]
    fn a_csv_read_in_small_pieces_gives_the_rows_written_in_it() {
        let expected = serde_json::json!([
            {"伝票日付": "令和6年4月1日", "勘定科目": "旅費交通費", "摘要": "新幹線\r\n東京－大阪"},
            {"伝票日付": "2024/04/02", "勘定科目": "会議費", "摘要": "打合せ, \"A社\""},
            {"伝票日付": "R6.4.3", "勘定科目": "通信費", "摘要": "電話"}
        ]);
        for block in [1, 2, 3, 7, 64] {
            for piece in [1, 10, 40] {
                let sizes = PieceSizes { block, piece };
                let (rows, columns, used) =
                    read(&sjis(JOURNAL), "auto", shape(true, 0), sizes).unwrap();
                let rows = serde_json::Value::Array(
                    rows.into_iter().map(serde_json::Value::Object).collect(),
                );
                assert_eq!(rows, expected, "block {block}, piece {piece}");
                assert_eq!(columns, ["伝票日付", "勘定科目", "摘要"]);
                assert_eq!(used, "cp932");
            }
        }
    }

    #[test]
    fn a_csv_read_in_pieces_is_the_table_read_in_one_piece() {
        let with_bom = |t: &str| [b"\xEF\xBB\xBF".as_slice(), t.as_bytes()].concat();
        let cases: Vec<(&str, Vec<u8>, CsvShape)> = vec![
            ("journal, Shift_JIS", sjis(JOURNAL), shape(true, 0)),
            ("journal, UTF-8 with BOM", with_bom(JOURNAL), shape(true, 0)),
            (
                "title lines skipped",
                sjis(
                    "売上明細\r\n出力日 2024/05/01\r\n得意先,金額\r\nあさひ商事,1000\r\nみなと物産,2000\r\n",
                ),
                shape(true, 2),
            ),
            (
                "no header",
                "A001,山田,300000\nA002,佐藤,280000\nA003,鈴木,250000\n"
                    .as_bytes()
                    .to_vec(),
                shape(false, 0),
            ),
            (
                "ragged lines",
                "科目,金額,部門\n旅費,100\n会議費,200,営業,余分\n通信費,300,総務\n"
                    .as_bytes()
                    .to_vec(),
                shape(true, 0),
            ),
            (
                "blank lines",
                "科目,金額\n旅費,100\n\n会議費,200\n\r\n通信費,300\n\n\n"
                    .as_bytes()
                    .to_vec(),
                shape(true, 0),
            ),
        ];
        for (name, bytes, shape) in cases {
            let whole = read(&bytes, "auto", shape, WHOLE).unwrap();
            assert!(!whole.0.is_empty(), "{name}: no rows");
            for block in [1, 2, 5, 16] {
                for piece in [1, 9, 30] {
                    let pieces = read(&bytes, "auto", shape, PieceSizes { block, piece }).unwrap();
                    assert_eq!(pieces, whole, "{name}: block {block}, piece {piece}");
                }
            }
        }
    }

    #[test]
    fn a_file_utf8_in_its_first_mib_and_shift_jis_later_is_read_as_cp932() {
        let mut text = String::from("番号,科目\r\n");
        let mut i = 0;
        while text.len() < (1 << 20) + 1000 {
            text.push_str(&format!("{i},a\r\n"));
            i += 1;
        }
        text.push_str("最終,旅費交通費\r\n");
        let (rows, _, used) = read(&sjis(&text), "auto", shape(true, 0), WHOLE).unwrap();
        assert_eq!(used, "cp932");
        assert_eq!(rows.len(), i + 1);
        assert_eq!(rows[i]["科目"], serde_json::json!("旅費交通費"));
    }

    #[test]
    fn a_file_of_blank_lines_is_an_empty_table() {
        let (rows, columns, _) = read(b"\r\n\r\n", "auto", shape(true, 0), WHOLE).unwrap();
        assert!(rows.is_empty());
        assert!(columns.is_empty());
    }
}
