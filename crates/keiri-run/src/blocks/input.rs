//! `input/*` blocks: reading files into rows and text.
//!
//! Every path is resolved against `ctx.base_dir`; these blocks only read, except
//! `file.unzip_evidence`, which extracts into `ctx.out_dir` (never beside the archive).
//!
//! * CSV text is decoded with keiri-docs' decoder and laid out by its csv rules (delimiter
//!   detection, blank records skipped, trailing empty columns dropped, a quote inside an
//!   unquoted field read as text), the ones design time uses, so a file is read the same way
//!   when a plan is checked and when it runs; records with such a quote are requoted
//!   ([`Requoting`]) before Polars' CSV reader parses the text (multi-threaded, all columns
//!   as text as the spec promises). The file is streamed: decoded block by block and parsed
//!   in pieces of a few MiB cut at record ends, so a large export never sits in memory as raw
//!   bytes or as one decoded string.
//! * Bank statements go through the `csv` crate row by row; a large one is read in pieces,
//!   one per core, cut at record ends found as CSV reading finds them ([`record_end`]), unless
//!   a quote inside an unquoted field makes counting quotes wrong (then on one core).
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

/// The byte offset just after the first line end at or past `from` that closes a non-blank
/// record (a `\n` outside double quotes) before another non-blank line, once at least
/// `records` non-blank records have ended, if `text` has one. `text` starts at a record
/// boundary, so the quote state starts closed.
///
/// For one record or none (every piece after the first), the scan starts at the last line
/// before `from` that starts outside quotes: the quotes before it are counted (a count the
/// compiler vectorises, where the scan reads a byte at a time), and the records ended before
/// it need not be: a cut closes a record, which is then one ended. A line that starts
/// inside quotes, and more records, are scanned from the start.
fn record_end(text: &[u8], from: usize, records: usize) -> Option<usize> {
    let from_line = if records <= 1 {
        line_outside_quotes(text, from)
    } else {
        None
    };
    match from_line {
        Some(start) => scan_record_end(text, start, from, records).map(|cut| start + cut),
        None => scan_record_end(text, 0, from, records),
    }
}

/// The start of the last line that begins before `from - 1`, when it begins outside double
/// quotes (its line feed has an even count of quotes before it); none when it begins inside
/// quotes or no line feed comes before. A line feed at `from - 1` itself could be the end
/// [`record_end`] looks for, so the line must begin before it.
fn line_outside_quotes(text: &[u8], from: usize) -> Option<usize> {
    let before = from.checked_sub(1)?.min(text.len());
    let feed = text[..before].iter().rposition(|&b| b == b'\n')?;
    count_byte(&text[..feed], b'"')
        .is_multiple_of(2)
        .then_some(feed + 1)
}

/// How many of `bytes` are `byte`. Counted in runs of 255 into a byte each (which cannot
/// overflow), a loop the compiler vectorises 16 bytes at a time, where a count straight into
/// a `usize` widens each byte to 64 bits and reads 4 at a time: 8x faster on a bank
/// statement, whose halves it reads to cut the statement between the cores.
fn count_byte(bytes: &[u8], byte: u8) -> usize {
    bytes
        .chunks(255)
        .map(|run| usize::from(run.iter().fold(0u8, |n, &b| n + u8::from(b == byte))))
        .sum()
}

/// [`record_end`]'s scan of `text` from `start` (a line's start outside quotes), the offset
/// from `start`.
fn scan_record_end(text: &[u8], start: usize, from: usize, records: usize) -> Option<usize> {
    let text_from = &text[start..];
    let from = from.saturating_sub(start);
    let mut quoted = false;
    let mut content = false;
    let mut ended = 0;
    for (i, &b) in text_from.iter().enumerate() {
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
                let next_has_content = text_from
                    .get(i + 1)
                    .is_some_and(|&c| c != b'\n' && c != b'\r');
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

/// The quotes of `csv.read`'s decoded text, checked as it comes (keiri-docs' `QuoteCheck`): a
/// record with a quote inside an unquoted field (`1/2" 特注`) is requoted from `floor`, a
/// record's start, before any cut, so Polars and [`record_end`] read the text as design
/// time's `records` does.
struct Requoting {
    check: keiri_docs::csv::QuoteCheck,
    delimiter: u8,
    /// A record's start at or before every quote not checked yet.
    floor: usize,
    /// A requoted record that was not all here: tried again once a line end comes after this
    /// (a record of megabytes is not read again for each block that adds to it).
    waiting: Option<usize>,
    /// The times the text was requoted.
    passes: usize,
}

impl Requoting {
    fn new(delimiter: u8) -> Requoting {
        Requoting {
            check: keiri_docs::csv::QuoteCheck::new(delimiter),
            delimiter,
            floor: 0,
            waiting: None,
            passes: 0,
        }
    }

    /// How much of `text` (the same text, grown; it begins at a record's start) Polars and
    /// [`record_end`] may read, once the records that need it are requoted. `last`: `text`
    /// is all there is, and all of it is then returned.
    fn clean_end(&mut self, text: &mut String, last: bool) -> usize {
        loop {
            match self.check.advance(text.as_bytes(), last) {
                Ok(end) => return end,
                Err(_) if !last && self.waiting.is_some_and(|w| !text[w..].contains('\n')) => {
                    return self.floor;
                }
                Err(at) => {
                    let floor = self.floor;
                    let (fixed, used) =
                        keiri_docs::csv::requote(&text[floor..], self.delimiter, last);
                    self.passes += 1;
                    let complete = floor + used;
                    text.replace_range(floor..complete, &fixed);
                    self.floor += fixed.len();
                    self.check.restart(self.floor);
                    self.waiting = None;
                    // The record of that quote is not all here yet.
                    if at >= complete {
                        self.waiting = Some(text.len());
                        return self.floor;
                    }
                }
            }
        }
    }

    /// The first `cut` bytes of the text, at most its clean end, were taken away.
    fn drained(&mut self, cut: usize) {
        self.floor = self.floor.saturating_sub(cut);
        self.waiting = self.waiting.map(|w| w - cut);
        self.check.drained(cut);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `record_end` finds the cut a scan from the start finds, whatever the quotes, blank
        /// lines and line breaks inside quotes before it.
        #[test]
        fn record_end_cuts_where_a_scan_from_the_start_cuts(
            bytes in proptest::collection::vec(
                prop_oneof![Just(b'"'), Just(b'\n'), Just(b'\r'), Just(b' '), Just(b','), Just(b'a')],
                0..200,
            ),
            from in 0usize..220,
            records in 0usize..4,
        ) {
            prop_assert_eq!(
                record_end(&bytes, from, records),
                scan_record_end(&bytes, 0, from, records)
            );
        }
    }

    proptest! {
        /// `count_byte` counts what a count byte by byte counts, across runs of 255 and at
        /// every length (runs of only the byte are the most one run's count holds).
        #[test]
        fn count_byte_counts_every_byte(
            bytes in proptest::collection::vec(prop_oneof![Just(b'"'), Just(b'a')], 0..1200),
        ) {
            prop_assert_eq!(
                count_byte(&bytes, b'"'),
                bytes.iter().filter(|&&b| b == b'"').count()
            );
            prop_assert_eq!(count_byte(&vec![b'"'; bytes.len()], b'"'), bytes.len());
        }
    }

    /// A record with an inch mark that grows block by block without a line end is requoted
    /// once, not once per block, and the records before it are left for a cut; once its line
    /// end comes, it is requoted whole.
    #[test]
    fn a_record_not_all_here_waits_for_a_line_end() {
        let mut requoting = Requoting::new(b',');
        let mut text = String::from("a,b\n1,\"x\"\nP2,5\" ");
        assert_eq!(requoting.clean_end(&mut text, false), 10);
        for _ in 0..100 {
            text.push_str("yyyy");
            assert_eq!(requoting.clean_end(&mut text, false), 10);
        }
        assert_eq!(requoting.passes, 1);
        text.push_str(",7\nP3,8\n");
        let end = requoting.clean_end(&mut text, false);
        assert_eq!(requoting.passes, 2);
        assert_eq!(end, text.len());
        let rows: Vec<Vec<String>> = keiri_docs::csv::records(&text, b',').collect();
        assert_eq!(rows[2], ["P2", &format!("5\" {}", "y".repeat(400)), "7"]);
        assert_eq!(rows[3], ["P3", "8"]);
        assert!(
            text.starts_with("a,b\n1,\"x\"\n\"P2\",\"5\"\" yyyy"),
            "{}",
            &text[..30]
        );
        // A cut up to the clean end, then the same from the text left.
        requoting.drained(10);
        text.drain(..10);
        text.push_str("P4,9\" x\n");
        assert_eq!(requoting.clean_end(&mut text, true), text.len());
        assert!(text.ends_with("\"P4\",\"9\"\" x\"\n"), "{text}");
    }
}
