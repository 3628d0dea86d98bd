//! `input/*` blocks: reading files into rows and text.
//!
//! Every path is resolved against `ctx.base_dir`; these blocks only read, except
//! `file.unzip_evidence`, which extracts into `ctx.out_dir` (never beside the archive).
//!
//! * CSV text is decoded with keiri-docs' decoder and laid out by its csv rules (delimiter
//!   detection, blank records skipped, trailing empty columns dropped), the ones design time
//!   uses, so a file is read the same way when a plan is checked and when it runs; Polars' CSV
//!   reader parses it (multi-threaded, all columns as text as the spec promises). The file
//!   is streamed: decoded block by block and parsed in pieces of a few MiB cut at record
//!   ends, so a large export never sits in memory as raw bytes or as one decoded string.
//! * Bank statements are small, so they go through the `csv` crate row by row.
//! * Workbooks are opened through keiri-docs' checked open (`open_workbook`: zip bombs,
//!   impossible shared-string counts and references outside Excel's grid are refused before
//!   calamine reads them) and read with calamine's streaming cell reader (a sparse sheet
//!   never becomes a dense grid) behind `catch_unwind`, so a hostile file is `BLOCK_FAILED`
//!   with `CORRUPT_FILE` in the message, not the end of the run.
//! * PDF and Word text comes from keiri-docs, which has its own limits and panic guard.

mod bank_read_statement;
mod csv_decode;
mod csv_read;
mod docx_extract_text;
mod excel_lookup_rows;
mod excel_read_workbook;
mod file_list_folder;
mod file_unzip_evidence;
mod pdf_extract_text;

use std::path::Path;

use serde_json::Value as J;

use crate::block::BlockError;
use crate::blocks::kit::decode::decode;
use crate::blocks::kit::files::{read_bytes, resolve};
use crate::blocks::kit::text::excerpt;

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

/// A whole-yen float as a JSON integer, other floats as floats.
pub(crate) fn number(x: f64) -> J {
    if x.fract() == 0.0 && x.abs() < 9e15 {
        J::from(x as i64)
    } else {
        crate::value::float_json(x)
    }
}
