//! PDF text extraction, written for untrusted files.
//!
//! Why not an existing crate: the PDF readers on crates.io that extract text (`pdf-extract`
//! on `lopdf`) inflate object streams without a size cap, recurse without a depth bound on
//! nested arrays, and panic on malformed input; one hostile file could take the whole process
//! down. This module reads only what text extraction needs — cross-reference data, object
//! streams, the page tree, fonts, `ToUnicode` CMaps and content streams — with a budget on
//! every decompression, a depth bound on every nesting, a visited set on every walk and a cap
//! on interpreted operators. Images, annotations and everything else are never decoded.
//! Encrypted files are reported as [`crate::Error::Encrypted`] instead of being decrypted.

mod cmap;
mod content;
mod file;
mod filters;
mod font;
mod lexer;

use crate::error::Result;
use content::{Interpreter, Sink};
use file::Document;
use filters::Budget;

/// Bytes one stream may inflate to.
const STREAM_BUDGET: usize = 64 * 1024 * 1024;
/// Bytes all streams of one document may inflate to.
const DOCUMENT_BUDGET: usize = 256 * 1024 * 1024;

/// Text of a PDF and what was left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PdfText {
    pub text: String,
    pub pages_total: usize,
    pub pages_extracted: usize,
    /// Glyphs whose font gives no Unicode mapping (dropped, not guessed).
    pub unmapped_glyphs: usize,
    /// `max_chars` was reached.
    pub truncated_chars: bool,
}

/// Extracts the text of the first `max_pages` pages, stopping at `max_chars` characters.
pub(crate) fn extract(bytes: &[u8], max_pages: usize, max_chars: Option<usize>) -> Result<PdfText> {
    let doc = Document::load(bytes, Budget::new(STREAM_BUDGET, DOCUMENT_BUDGET))?;
    let pages = doc.pages()?;
    let mut interpreter = Interpreter::new(&doc);
    let mut sink = Sink::new(max_chars);
    let mut extracted = 0;
    for page in pages.iter().take(max_pages) {
        if sink.truncated {
            break;
        }
        interpreter.page(page, &mut sink)?;
        extracted += 1;
    }
    let mut text = sink.out;
    while text.ends_with('\n') {
        text.pop();
    }
    Ok(PdfText {
        text,
        pages_total: pages.len(),
        pages_extracted: extracted,
        unmapped_glyphs: interpreter.unmapped,
        truncated_chars: sink.truncated,
    })
}
