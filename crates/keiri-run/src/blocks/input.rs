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

mod bank_read_statement;
mod csv_read;
mod docx_extract_text;
mod excel_read_workbook;
mod file_list_folder;
mod file_unzip_evidence;
mod pdf_extract_text;

use std::collections::BTreeMap;
use std::io::{Cursor, Read};
use std::path::{Component, Path, PathBuf};

use chrono::NaiveDate;
use polars::prelude::*;
use serde_json::{Value as J, json};

use crate::block::{BlockContext, BlockError, ErrorCode, Inputs, Outputs, Registry};
use crate::jp;
use crate::value::{Row, column_names, table_error};

/// Files larger than this are refused before reading (1 GiB: a 1,000,000-row journal is
/// about 100 MB).
const MAX_FILE_BYTES: u64 = 1 << 30;

/// `path` against the workspace (absolute paths stay as they are).
pub(crate) fn resolve(ctx: &BlockContext<'_>, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        ctx.base_dir.join(p)
    }
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
    let full = resolve(ctx, path);
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

/// Zero-based column index to letters (`0` → `A`).
pub(crate) fn column_letter(col: u32) -> String {
    keiri_xlsx::column_name(col.saturating_add(1))
}

fn docs_error(e: &keiri_docs::Error) -> BlockError {
    BlockError::failed(
        format!("文書を読めません（{}）: {e}", e.code()),
        format!("cannot read the document ({}): {e}", e.code()),
    )
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

/// A whole-yen float as a JSON integer, other floats as floats.
pub(crate) fn number(x: f64) -> J {
    if x.fract() == 0.0 && x.abs() < 9e15 {
        J::from(x as i64)
    } else {
        crate::value::float_json(x)
    }
}
