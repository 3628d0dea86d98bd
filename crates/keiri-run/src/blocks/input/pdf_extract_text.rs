//! `pdf.extract_text`: its inputs and outputs are in `block_specs/input/pdf.extract_text.yaml`.

use super::{docs_error, read_bytes};
use crate::block::{BlockContext, BlockError, ErrorCode, Inputs, Outputs};
use serde_json::{Value as J, json};

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

builtin!("pdf.extract_text", pdf_extract_text);
