//! `csv.read`: its inputs and outputs are in `block_specs/input/csv.read.yaml`.

use super::csv_decode::{DecodeError, Decoded, DecodedBlocks, Decoding};
use super::{Requoting, record_end};
use crate::block::{
    BlockContext, BlockError, ErrorCode, FirstRows, Inputs, Outputs, Pieces, ProgressUnit, Warning,
    shown_part,
};
use crate::blocks::kit::decode::{encoding_choice, undecodable, undetectable};
use crate::blocks::kit::files::{MAX_FILE_BYTES, not_found, resolve};
use crate::blocks::kit::steps::Steps;
use crate::value::{column_names, table_error};
use polars::prelude::*;
use serde_json::json;
use std::io::{Cursor, Read};
use std::sync::Arc;

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
    delimiter: keiri_docs::csv::Delimiter,
    header: bool,
    skip_rows: usize,
}

/// Why one decoding of the file did not give a table.
enum PieceError {
    /// The bytes are not in this encoding: the next decoding is tried.
    Undecodable,
    Failed(BlockError),
}

/// A CSV read into a table: the encoding and delimiter used, the header's blank names at its
/// end (see `keiri_docs::csv::blank_header_suffix`), and its rows shorter than the header.
struct CsvRead {
    table: DataFrame,
    encoding: &'static str,
    delimiter: u8,
    blank_header_suffix: usize,
    /// The values of a full row, and the rows with fewer.
    width: usize,
    short: ShortRows,
    /// The data records of the text that are not blank (see [`count_short`]).
    records: usize,
    /// The columns left out when only the `wanted` ones were parsed; `None` when all were.
    unread: Option<Vec<String>>,
    /// The table went to the steps after the read piece by piece (`BlockContext::pieces`):
    /// `table` holds its first rows only ([`FirstRows`]: a table a run record keeps whole is
    /// whole).
    handed: Option<Handed>,
}

/// What a read handed to the steps after it (`BlockContext::pieces`): how many rows it handed
/// in all (blank rows dropped, names trimmed, as its output holds them),
/// and the blank ones it dropped. Each piece is shaped as the whole table would be: its
/// columns were projected (a projected read drops no empty trailing columns) and blank rows
/// are dropped row by row, so the pieces put together are the table a whole read builds.
struct Handed {
    rows: usize,
    blank: usize,
    /// The pass stopped before the end: the steps run one by one on a whole read.
    stopped: bool,
}

/// A read handing its rows over piece by piece: what it keeps of them.
struct Handing<'p> {
    pass: &'p dyn Pieces,
    first: FirstRows,
    blank: usize,
    stopped: bool,
}

impl Handing<'_> {
    /// Shapes `piece` as the read's output holds its rows, keeps its first rows, and hands it.
    fn hand(&mut self, ctx: &BlockContext<'_>, mut piece: DataFrame) -> Result<(), PieceError> {
        self.blank += drop_blank_rows(&mut piece).map_err(PieceError::Failed)?;
        trim_names(&mut piece).map_err(PieceError::Failed)?;
        self.first
            .add(&piece)
            .map_err(|e| PieceError::Failed(csv_error(&e)))?;
        if piece.height() > 0 && !self.stopped {
            self.stopped = !self.pass.take(ctx, piece).map_err(PieceError::Failed)?;
        }
        Ok(())
    }
}

/// Header names keep their text, but a BOM-less file written by Excel may pad them.
fn trim_names(df: &mut DataFrame) -> Result<(), BlockError> {
    let trimmed: Vec<String> = column_names(df)
        .iter()
        .map(|n| n.trim().to_owned())
        .collect();
    df.set_column_names(&trimmed).map_err(|e| table_error(&e))
}

/// Reads the CSV at `path` into a table of text columns, decoding and parsing it in pieces
/// of about `sizes.piece` bytes of text. The encodings tried are keiri-docs' candidates (the
/// rule design time uses), each over the whole file from its start. With `wanted` (header
/// names, as the header spells them), only those columns are parsed after the first piece
/// when the header has every one of them, once each (see [`Projection`]).
fn read_csv_table(
    ctx: &BlockContext<'_>,
    path: &str,
    encoding: &str,
    shape: CsvShape,
    sizes: PieceSizes,
    wanted: Option<Wanted<'_>>,
    pieces: Option<&dyn Pieces>,
) -> Result<CsvRead, BlockError> {
    use std::io::{Seek, SeekFrom};
    let choice = encoding_choice(encoding)?;
    let full = resolve(ctx, path)?;
    let mut file = std::fs::File::open(&full).map_err(|e| not_found(&full, &e))?;
    let size = file.metadata().map_err(|e| not_found(&full, &e))?.len();
    if size > MAX_FILE_BYTES {
        return Err(BlockError::failed(
            format!("ファイルが大きすぎます（{size} バイト）"),
            format!("file is {size} bytes, over the limit of {MAX_FILE_BYTES}"),
        ));
    }
    let detect = keiri_docs::text::DETECT_BYTES as u64;
    let mut head = Vec::new();
    (&mut file)
        .take(detect + 1)
        .read_to_end(&mut head)
        .map_err(|e| not_found(&full, &e))?;
    let whole = head.len() as u64 <= detect;
    head.truncate(keiri_docs::text::DETECT_BYTES);
    let list = keiri_docs::text::candidates(&head, whole, choice);
    drop(head);
    for &candidate in &list {
        file.seek(SeekFrom::Start(0))
            .map_err(|e| not_found(&full, &e))?;
        let read = (&mut file, size);
        match parse_pieces(ctx, read, candidate, shape, sizes, (wanted, pieces)) {
            Ok(parsed) => {
                return Ok(CsvRead {
                    table: parsed.table,
                    encoding: candidate.name(),
                    delimiter: parsed.delimiter,
                    blank_header_suffix: parsed.blank_suffix,
                    width: parsed.width,
                    short: parsed.short,
                    records: parsed.records,
                    unread: parsed.unread,
                    handed: parsed.handed,
                });
            }
            Err(PieceError::Undecodable) => continue,
            Err(PieceError::Failed(e)) => return Err(e),
        }
    }
    match (choice, list.first()) {
        (keiri_docs::EncodingChoice::Auto, _) | (_, None) => Err(undetectable()),
        (_, Some(&named)) => {
            let detected =
                keiri_docs::text::detect_stream(&mut file).map_err(|e| not_found(&full, &e))?;
            Err(undecodable(named, detected))
        }
    }
}

/// Decodes `file` block by block and hands Polars a piece of text each time about
/// `sizes.piece` bytes have accumulated, cut after the first complete record past that size;
/// the pieces' tables are stacked (their chunks are kept, not copied). Returns the table, the
/// delimiter (detected on the first piece when `auto`) and the header's trailing blank names.
/// The bytes read of the file's `size` are the node's progress. The first piece is parsed
/// whole; with `wanted`, the later ones only in the columns it picks (see [`Projection`]).
fn parse_pieces<R: Read + Send>(
    ctx: &BlockContext<'_>,
    (file, size): (&mut R, u64),
    encoding: keiri_docs::TextEncoding,
    shape: CsvShape,
    sizes: PieceSizes,
    (wanted, pieces): (Option<Wanted<'_>>, Option<&dyn Pieces>),
) -> Result<Parsed, PieceError> {
    if let Some(pass) = pieces {
        pass.restart();
    }
    let decoding = Decoding {
        file,
        decoder: keiri_docs::text::StreamDecoder::new(encoding),
        block: vec![0u8; sizes.block.max(1)],
    };
    std::thread::scope(|scope| {
        let mut blocks = DecodedBlocks::start(scope, decoding);
        parse_decoded(ctx, &mut blocks, size, shape, sizes, (wanted, pieces))
    })
}

/// [`parse_pieces`] of the decoded blocks `blocks` gives, `size` being the file's.
fn parse_decoded<R: Read>(
    ctx: &BlockContext<'_>,
    blocks: &mut DecodedBlocks<'_, R>,
    size: u64,
    shape: CsvShape,
    sizes: PieceSizes,
    (wanted, pieces): (Option<Wanted<'_>>, Option<&dyn Pieces>),
) -> Result<Parsed, PieceError> {
    let mut text = String::new();
    let mut table: Option<DataFrame> = None;
    // The rows parsed so far (blank ones too): where the next piece's rows start.
    let mut parsed_rows = 0;
    let mut delimiter = b',';
    let mut blank_suffix = 0;
    // The values a full row has (the header's named columns), the data records seen so far
    // and those with fewer values.
    let mut width = 0;
    let mut seen = 0;
    let mut short = ShortRows::default();
    let mut projection: Option<Projection> = None;
    let mut steps = Steps::new(ctx, ProgressUnit::Bytes, usize::try_from(size).ok());
    let mut read = 0;
    let mut quotes: Option<Requoting> = None;
    // Handing the rows to the steps after the read, once the first piece shows the read can.
    let mut handing: Option<Handing<'_>> = None;
    'read: loop {
        let Decoded {
            text: decoded,
            bytes,
            last,
        } = blocks.next().map_err(|e| match e {
            DecodeError::Undecodable => PieceError::Undecodable,
            DecodeError::Read(e) => PieceError::Failed(BlockError::failed(
                format!("ファイルを読めません: {e}"),
                format!("cannot read the file: {e}"),
            )),
        })?;
        read += bytes as u64;
        steps.advance_to(read).map_err(PieceError::Failed)?;
        text.push_str(&decoded);
        drop(decoded);
        while last || text.len() >= sizes.piece {
            crate::blocks::cancelled(ctx).map_err(PieceError::Failed)?;
            // The first piece must hold the skipped rows and the header, or the later pieces
            // would be parsed without knowing the columns.
            let records = if table.is_none() {
                shape.skip_rows + 2
            } else {
                1
            };
            if quotes.is_none() {
                // The layout rules design time applies (keiri-docs' csv module).
                delimiter = shape.delimiter.resolve(&text, shape.skip_rows);
            }
            let requoting = quotes.get_or_insert_with(|| Requoting::new(delimiter));
            let clean = requoting.clean_end(&mut text, last);
            let cut = if last {
                text.len()
            } else {
                match record_end(&text.as_bytes()[..clean], sizes.piece, records) {
                    Some(cut) => cut,
                    None => break,
                }
            };
            let chunk = &text[..cut];
            match &mut table {
                None if chunk.trim().is_empty() => {}
                None => {
                    let first = keiri_docs::csv::records(chunk, delimiter)
                        .skip(shape.skip_rows)
                        .find(|r| !keiri_docs::csv::is_blank_record(r))
                        .unwrap_or_default();
                    if shape.header {
                        blank_suffix = keiri_docs::csv::blank_header_suffix(&first);
                    }
                    width = first.len() - blank_suffix;
                    count_short(
                        chunk,
                        delimiter,
                        shape.skip_rows,
                        shape.header,
                        width,
                        &mut seen,
                        &mut short,
                    );
                    let whole = parse_checked(chunk, shape, delimiter, None, None, 0)?;
                    projection = wanted.and_then(|w| Projection::of(&whole, &w));
                    let first = match &projection {
                        Some(p) => p.pick(&whole)?,
                        None => whole,
                    };
                    parsed_rows = first.height();
                    match (pieces, &projection) {
                        // A read of every column may drop empty trailing columns, which only
                        // its whole table tells: it is built whole.
                        (Some(pass), None) => pass.refuse(),
                        (Some(pass), Some(_)) => {
                            let handing = handing.insert(Handing {
                                pass,
                                first: FirstRows::default(),
                                blank: 0,
                                stopped: false,
                            });
                            handing.hand(ctx, first.clone())?;
                        }
                        (None, _) => {}
                    }
                    // Handing over, the read keeps of its pieces only their first rows.
                    table = Some(if handing.is_some() {
                        first.clear()
                    } else {
                        first
                    });
                }
                Some(df) => {
                    count_short(chunk, delimiter, 0, false, width, &mut seen, &mut short);
                    let (schema, picked) = match &projection {
                        Some(p) => (p.schema.clone(), Some(p.indices.clone())),
                        None => (df.schema().clone(), None),
                    };
                    let more =
                        parse_checked(chunk, shape, delimiter, Some(schema), picked, parsed_rows)?;
                    parsed_rows += more.height();
                    match &mut handing {
                        Some(handing) => {
                            handing.hand(ctx, more)?;
                            if handing.stopped {
                                break 'read;
                            }
                        }
                        None => {
                            df.vstack_mut_owned(more)
                                .map_err(|e| PieceError::Failed(csv_error(&e)))?;
                        }
                    }
                }
            }
            text.drain(..cut);
            requoting.drained(cut);
            if last {
                break;
            }
        }
        if last {
            break;
        }
    }
    // A file of nothing but blank lines is an empty table, not a parse error.
    let (table, handed) = match handing {
        Some(handing) => {
            let handed = Handed {
                rows: handing.first.rows(),
                blank: handing.blank,
                stopped: handing.stopped,
            };
            (handing.first.into_head(), Some(handed))
        }
        None => (table, None),
    };
    Ok(Parsed {
        handed,
        table: table.unwrap_or_else(DataFrame::empty),
        delimiter,
        blank_suffix,
        width,
        short,
        records: seen,
        unread: projection.map(|p| p.unread()),
    })
}

/// What [`parse_pieces`] read: the table, the delimiter (detected on the first piece when
/// `auto`), the header's trailing blank names, the values of a full row, the short rows, the
/// non-blank data records and the columns left out, if any were.
struct Parsed {
    table: DataFrame,
    delimiter: u8,
    blank_suffix: usize,
    width: usize,
    short: ShortRows,
    records: usize,
    unread: Option<Vec<String>>,
    handed: Option<Handed>,
}

/// The names a read is asked to keep: `csv.read`'s `columns` (all must be in the header), or
/// the columns the rest of the plan reads (`BlockContext::columns_used`, some may not be).
#[derive(Clone, Copy)]
struct Wanted<'a> {
    names: &'a [String],
    all_there: bool,
}

/// The columns a read keeps when it is given names to keep (`csv.read`'s `columns` with a
/// header): the first piece is parsed whole, and the later pieces parse only these columns
/// of the file's full schema, so the text of the others is never stored. Polars returns
/// projected columns in file order; the caller orders them as asked.
struct Projection {
    /// The file's columns, as the first piece was parsed.
    schema: SchemaRef,
    /// The positions of the wanted columns, ascending.
    indices: Arc<Vec<usize>>,
}

impl Projection {
    /// The projection of `wanted` on the first piece's columns, or `None` (read every column)
    /// when a name is blank or named twice, or missing from the header when the names must
    /// all be there (`columns`: the read then keeps every column and reports it as before).
    /// The engine's list of used names may hold names the file lacks (a column a later block
    /// adds): those are passed over, and a list naming none of the file's reads them all.
    fn of(first: &DataFrame, wanted: &Wanted<'_>) -> Option<Projection> {
        let header = column_names(first);
        let mut indices = Vec::with_capacity(wanted.names.len());
        for name in wanted.names {
            if name.trim().is_empty() {
                return None;
            }
            let Some(i) = header.iter().position(|h| h == name) else {
                if wanted.all_there {
                    return None;
                }
                continue;
            };
            if indices.contains(&i) {
                return None;
            }
            indices.push(i);
        }
        if indices.is_empty() {
            return None;
        }
        indices.sort_unstable();
        Some(Projection {
            schema: first.schema().clone(),
            indices: Arc::new(indices),
        })
    }

    /// The file's columns left out, in file order.
    fn unread(&self) -> Vec<String> {
        self.schema
            .iter_names()
            .enumerate()
            .filter(|(i, _)| !self.indices.contains(i))
            .map(|(_, name)| name.to_string())
            .collect()
    }

    /// The wanted columns of the first piece, in file order.
    fn pick(&self, whole: &DataFrame) -> Result<DataFrame, PieceError> {
        let columns = self.indices.iter().map(|&i| whole.columns()[i].clone());
        DataFrame::new_infer_height(columns.collect())
            .map_err(|e| PieceError::Failed(csv_error(&e)))
    }
}

/// Drops blank records (every field empty or whitespace, e.g. Excel's `,,,,` rows), as
/// keiri-docs' `csv::is_blank_field` defines them; returns how many were dropped. The first
/// column is read whole; each later one only at the rows blank so far, which are few (it
/// read every field of every row, on one core: 0.4 s of a 5M-row file).
fn drop_blank_rows(df: &mut DataFrame) -> Result<usize, BlockError> {
    let blank_at = |value: Option<&str>| value.is_none_or(keiri_docs::csv::is_blank_field);
    let mut blank: Option<Vec<usize>> = None;
    for column in df.columns() {
        let values = column.str().map_err(|e| table_error(&e))?;
        let still: Vec<usize> = match blank {
            None => values
                .iter()
                .enumerate()
                .filter(|&(_, v)| blank_at(v))
                .map(|(i, _)| i)
                .collect(),
            Some(rows) => rows
                .into_iter()
                .filter(|&i| blank_at(values.get(i)))
                .collect(),
        };
        let none_left = still.is_empty();
        blank = Some(still);
        if none_left {
            break;
        }
    }
    // A table without columns: every row is blank.
    let blank = blank.unwrap_or_else(|| (0..df.height()).collect());
    if !blank.is_empty() {
        let mut keep = vec![true; df.height()];
        for &i in &blank {
            keep[i] = false;
        }
        let mask = BooleanChunked::from_slice("keep".into(), &keep);
        *df = df.filter(&mask).map_err(|e| table_error(&e))?;
    }
    Ok(blank.len())
}

/// Drops the last `suffix` columns (their header is blank) from the end while every value in
/// them is blank; returns how many were dropped.
fn drop_empty_trailing_columns(df: &mut DataFrame, suffix: usize) -> Result<usize, BlockError> {
    let mut dropped = 0;
    while dropped < suffix && df.width() > 0 {
        let last = &df.columns()[df.width() - 1];
        let blank = last
            .str()
            .map_err(|e| table_error(&e))?
            .iter()
            .all(|v| v.is_none_or(keiri_docs::csv::is_blank_field));
        if !blank {
            break;
        }
        let name = last.name().clone();
        *df = df.drop(name.as_str()).map_err(|e| table_error(&e))?;
        dropped += 1;
    }
    Ok(dropped)
}

/// Rows with fewer values than the header, found while the pieces are parsed: how many, and
/// the first one's data row (from 1, blank records not counted), value count and text.
#[derive(Default)]
struct ShortRows {
    count: usize,
    first: Option<(usize, usize, String)>,
}

/// Counts the data records of one piece and those with fewer values than `width` (blank ones
/// are neither), after skipping `skip` records (blank or not, as `skip_rows` counts them) and
/// then, with `header`, the first non-blank one (as the header is found). A piece without a double quote is
/// counted line by line, one delimiter count per line; one with quotes (fields that may hold
/// the delimiter or a line break) is read record by record by the csv crate, in place with one
/// reused record. Either way the pass is light beside the parse.
fn count_short(
    text: &str,
    delimiter: u8,
    skip: usize,
    header: bool,
    width: usize,
    seen: &mut usize,
    short: &mut ShortRows,
) {
    let (mut skipped, mut header) = (0, header);
    let mut one = |fields: usize, blank: bool, shown: &dyn Fn() -> String| {
        if skipped < skip {
            skipped += 1;
            return;
        }
        if blank {
            return;
        }
        if header {
            header = false;
            return;
        }
        *seen += 1;
        if fields < width {
            short.count += 1;
            if short.first.is_none() {
                short.first = Some((*seen, fields, shown()));
            }
        }
    };
    if !text.contains('"') {
        for line in text.split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            let fields = line.bytes().filter(|&b| b == delimiter).count() + 1;
            one(fields, blank_bytes(line.as_bytes(), delimiter), &|| {
                line.to_string()
            });
        }
        return;
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .from_reader(text.as_bytes());
    let mut record = csv::ByteRecord::new();
    while let Ok(true) = reader.read_byte_record(&mut record) {
        let blank = record.iter().all(|f| blank_bytes(f, delimiter));
        let shown = || {
            let fields: Vec<String> = record
                .iter()
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .collect();
            fields.join(",")
        };
        one(record.len(), blank, &shown);
    }
}

/// Whether `bytes` (a line, or a field) holds nothing but delimiters and blanks, as
/// `keiri_docs::csv::is_blank_field` reads each field. Decided at the first byte that is
/// neither, which in a data line is nearly always the first.
fn blank_bytes(bytes: &[u8], delimiter: u8) -> bool {
    match bytes
        .iter()
        .position(|&b| b != delimiter && !b.is_ascii_whitespace())
    {
        None => true,
        Some(i) if bytes[i].is_ascii() => false,
        // Full-width spaces and other Unicode blanks: read the text.
        Some(_) => std::str::from_utf8(bytes).is_ok_and(|t| {
            t.split(char::from(delimiter))
                .all(keiri_docs::csv::is_blank_field)
        }),
    }
}

/// Warns `ROWS_SHORT` when rows had fewer values than the header: their last columns were
/// read as empty, and a value left out mid-line shifts the rest.
fn warn_short_rows(ctx: &BlockContext<'_>, short: &ShortRows, width: usize) {
    let Some((row, values, text)) = &short.first else {
        return;
    };
    let count = short.count;
    let shown: String = text.chars().take(80).collect();
    ctx.calls.warn(Warning::new(
        "ROWS_SHORT",
        format!(
            "見出し（{width} 列）より値の少ない行が {count} 行あり、足りない列を空として読みました。最初はデータ {row} 行目（値 {values} 個）:「{shown}」。値が列からずれていないか確認してください"
        ),
        format!(
            "{count} rows have fewer values than the header's {width} columns; their missing columns were read as empty. First: data row {row} ({values} values): {shown:?}. Check that no value shifted columns"
        ),
    ));
}

/// Parses one piece as [`parse_piece`] does, refusing a record with more values than the
/// header: its values would sit under the wrong columns (an amount written `1,000` without
/// quotes reads as 1, and the next column gets `000`). Polars is asked to refuse such lines;
/// only then is the piece scanned for the record, so a well-formed file costs no extra pass.
/// A record whose extra values are all blank (`旅費,100,,` under two names, as some exports
/// pad their lines) is read without them. `rows_before` is how many rows earlier pieces gave.
fn parse_checked(
    text: &str,
    shape: CsvShape,
    delimiter: u8,
    schema: Option<SchemaRef>,
    projection: Option<Arc<Vec<usize>>>,
    rows_before: usize,
) -> Result<DataFrame, PieceError> {
    let first = schema.is_none();
    let width = schema.as_ref().map(|s| s.len());
    match parse_piece(
        text,
        shape,
        delimiter,
        schema.clone(),
        projection.clone(),
        false,
    ) {
        Ok(df) => Ok(df),
        Err(refused) => {
            let mut records = keiri_docs::csv::records(text, delimiter)
                .skip(if first { shape.skip_rows } else { 0 })
                .filter(|r| !keiri_docs::csv::is_blank_record(r));
            // The header (or the first row, without one) sets the width of the first piece.
            let width = match width {
                Some(w) => w,
                None => match records.next() {
                    Some(r) => r.len(),
                    None => return Err(refused),
                },
            };
            let data_before = rows_before + usize::from(first && !shape.header);
            for (i, record) in records.enumerate() {
                let extra = record.get(width..).unwrap_or_default();
                if extra.iter().any(|v| !keiri_docs::csv::is_blank_field(v)) {
                    return Err(PieceError::Failed(row_too_long(
                        data_before + i + 1,
                        &record,
                        width,
                    )));
                }
            }
            parse_piece(text, shape, delimiter, schema, projection, true)
        }
    }
}

/// A record with more values than the header has names: what it holds, and where.
fn row_too_long(row: usize, record: &[String], width: usize) -> BlockError {
    let shown: String = record.join(",").chars().take(80).collect();
    let count = record.len();
    BlockError::new(
        ErrorCode::InputInvalid,
        format!(
            "CSVのデータ {row} 行目に値が {count} 個あり、見出しの {width} 列より多いため、値が列からずれます: 「{shown}」"
        ),
        format!(
            "data row {row} of the CSV has {count} values, more than the header's {width} columns, so its values would shift columns: {shown:?}"
        ),
    )
    .with_hint(
        "カンマを含む値（1,000 など）が引用符で囲まれていないか、区切り文字が違います。ファイルを直すか、delimiter を指定してください",
        "a value holding a comma (such as 1,000) is not quoted, or the delimiter is another: fix the file or set delimiter",
    )
}

/// Parses one piece of CSV text with every column as text. The first piece (`schema` None)
/// carries the skipped rows and the header; later pieces are rows only, parsed with the
/// first piece's columns, all of them or those at `projection`. `truncate` lets Polars drop
/// values past the last column.
fn parse_piece(
    text: &str,
    shape: CsvShape,
    delimiter: u8,
    schema: Option<SchemaRef>,
    projection: Option<Arc<Vec<usize>>>,
    truncate: bool,
) -> Result<DataFrame, PieceError> {
    let first = schema.is_none();
    CsvReadOptions::default()
        .with_has_header(first && shape.header)
        .with_skip_rows(if first { shape.skip_rows } else { 0 })
        // Every column stays text (the spec says so; coerce_types converts).
        .with_infer_schema_length(Some(0))
        .with_schema(schema)
        .with_projection(projection)
        .with_raise_if_empty(false)
        .map_parse_options(|o| {
            o.with_separator(delimiter)
                .with_missing_is_null(false)
                .with_truncate_ragged_lines(truncate)
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

/// A read (`read_table`: [`read_csv_table`] of one file) with its blank records dropped;
/// returns how many were. A projected read drops the rows blank in its columns; when it
/// keeps fewer rows than the non-blank records the text pass counted — a row with values
/// only in columns left out looked blank — the file is read again with every column, so that
/// row is kept as a whole read keeps it (rare; the file is then read twice).
///
/// A read that handed its rows to the steps after it (`pieces`) stands when it handed them all
/// and as many as the text pass counted; else the pass is void (`Pieces::refuse`) and the
/// file is read again whole, as without the pass.
fn read_without_blank_rows<'w>(
    wanted: Option<Wanted<'w>>,
    pieces: Option<&dyn Pieces>,
    read_table: impl Fn(Option<Wanted<'w>>, Option<&dyn Pieces>) -> Result<CsvRead, BlockError>,
) -> Result<(CsvRead, usize), BlockError> {
    let mut read = read_table(wanted, pieces)?;
    if let Some(handed) = &read.handed {
        if !handed.stopped && handed.rows == read.records && pieces.is_some_and(|p| p.stands()) {
            let blank = handed.blank;
            return Ok((read, blank));
        }
        if let Some(pass) = pieces {
            pass.refuse();
        }
        read = read_table(wanted, None)?;
    }
    let mut blank_rows = drop_blank_rows(&mut read.table)?;
    if read.unread.is_some() && read.table.height() != read.records {
        read = read_table(None, None)?;
        blank_rows = drop_blank_rows(&mut read.table)?;
    }
    Ok((read, blank_rows))
}

fn csv_read(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let path = inputs.require_str("path")?;
    let encoding = inputs.str("encoding")?.unwrap_or("auto");
    let delimiter = inputs.str("delimiter")?.unwrap_or("auto");
    let delimiter = keiri_docs::csv::Delimiter::parse(delimiter).ok_or_else(|| {
        BlockError::input_invalid(
            "delimiter",
            "auto か1文字の区切り文字（, ; \\t など）が必要です",
            "expected auto or a one-character ASCII delimiter (, ; \\t …)",
        )
    })?;
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
    // With a header, `columns` is a projection: the other columns' text is never stored. So
    // are the columns the rest of the plan reads, when the engine knows them all (the table
    // then keeps the file's order; `summary.unread_columns` names the others).
    let wanted = match names.as_deref() {
        Some(names) => Some(Wanted {
            names,
            all_there: true,
        }),
        None => ctx.columns_used.map(|names| Wanted {
            names,
            all_there: false,
        }),
    }
    .filter(|_| header);
    // The steps after the read take its rows piece by piece only when it parses the named
    // columns of a file with a header (`engine/fused.rs` asks only then).
    let pieces = ctx.pieces.filter(|_| header && names.is_none());
    if let (Some(pass), None) = (ctx.pieces, pieces) {
        pass.refuse();
    }
    let (read, blank_rows) = read_without_blank_rows(wanted, pieces, |w, p| {
        read_csv_table(ctx, path, encoding, shape, sizes, w, p)
    })?;
    let handed = read.handed.as_ref().map(|h| h.rows);
    let (mut df, used) = (read.table, read.encoding);
    // Blank records and trailing empty columns are left out, as design time reads the file.
    // A projection holds only named columns, so it has no trailing unnamed ones to drop.
    let dropped_columns = if read.unread.is_some() {
        0
    } else {
        drop_empty_trailing_columns(&mut df, read.blank_header_suffix)?
    };
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
    trim_names(&mut df)?;
    warn_short_rows(ctx, &read.short, read.width);
    let columns = column_names(&df);
    let mut summary = json!({
        "rows": handed.unwrap_or(df.height()),
        "columns": columns.len(),
        "skipped_rows": skip_rows,
        "blank_rows": blank_rows,
        "dropped_columns": dropped_columns,
        "delimiter": char::from(read.delimiter).to_string(),
        "encoding": used,
        "header": header,
    });
    if let Some(unread) = &read.unread {
        summary["unread_columns"] = json!(unread);
    }
    // A table of more rows than a run record keeps whole: its first rows, of this many (the
    // rest went to the steps after it). One the record keeps whole is whole, and the steps
    // run one by one on it (the engine lets the pass go), so its record is as before.
    let in_part = match handed {
        Some(rows) => {
            let (head, in_part) = shown_part(df, rows);
            df = head;
            in_part
        }
        None => None,
    };
    let mut outputs = Outputs::new()
        .with("rows", df)
        .with("columns", json!(columns))
        .with("encoding", json!(used))
        .with("summary", summary);
    if let Some(rows) = in_part {
        outputs.1.insert("rows".to_owned(), rows);
    }
    Ok(outputs)
}

builtin!("csv.read", csv_read);

#[cfg(test)]
mod tests;
