//! Fuzz harnesses (stable Rust, proptest) over document bytes: `.xlsx`/`.docx` seeds from
//! `fuzz/corpus/{xlsx,docx}` mutated inside the package (the XML of their parts), `.pdf` seeds
//! from `fuzz/corpus/pdf` mutated as bytes, and arbitrary bytes, through [`extract_bytes`].
//! Every input gives text or an error with a stable code; nothing panics (the parsers also run
//! behind the crate's panic guard, so a panic would show as `CORRUPT_FILE` with "reader failed",
//! which these harnesses count as a finding), inputs are at most 64 KiB. The case budget is
//! `KEIRI_FUZZ_CASES` (`make fuzz`), else a small fixed one.

#[path = "../../../../fuzz/support.rs"]
mod fuzz_support;
#[path = "../../../../fuzz/ooxml.rs"]
mod ooxml;

use keiri_docs::{ExtractOptions, Format, extract_bytes};
use proptest::prelude::*;

const MAX_BYTES: usize = 64 * 1024;

/// PDF syntax the mutator inserts.
const PDF_TOKENS: &[&[u8]] = &[
    b" obj ",
    b"endobj",
    b"stream\n",
    b"endstream",
    b"xref\n",
    b"trailer",
    b"startxref\n",
    b"<<",
    b">>",
    b"[",
    b"]",
    b"(",
    b")",
    b"<",
    b">",
    b"/Type /Page ",
    b"/Kids [3 0 R 3 0 R]",
    b"/Length 99999999999",
    b"/Filter /FlateDecode",
    b"/Filter [/LZWDecode /ASCII85Decode]",
    b"/Prev 0",
    b"/ObjStm",
    b"/XRef",
    b"1 0 R",
    b"-1",
    b"BT",
    b"ET",
    b"Tj",
    b"TJ",
    b"Tf",
    b"Do",
    b"BI",
    b"ID",
    b"EI",
    b"/ToUnicode",
    b"beginbfrange",
    b"<0000> <FFFF> <0000>",
    b"%%EOF",
];

fn opts() -> ExtractOptions {
    ExtractOptions {
        max_pages: 5,
        max_chars: Some(20_000),
        ..ExtractOptions::default()
    }
}

fn check(bytes: &[u8], format: Format) -> Result<(), TestCaseError> {
    match extract_bytes(bytes, format, &opts()) {
        Ok(_) => {}
        Err(e) => {
            prop_assert!(!e.code().is_empty());
            prop_assert!(
                !e.to_string().contains("reader failed"),
                "a parser panicked (caught by the guard): {e}"
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(fuzz_support::config())]

    #[test]
    fn fuzz_xlsx_extract(bytes in ooxml::input(fuzz_support::corpus("xlsx"), MAX_BYTES)) {
        check(&bytes, Format::Xlsx)?;
    }

    #[test]
    fn fuzz_docx_extract(bytes in ooxml::input(fuzz_support::corpus("docx"), MAX_BYTES)) {
        check(&bytes, Format::Docx)?;
    }

    #[test]
    fn fuzz_pdf_extract(
        bytes in fuzz_support::input(fuzz_support::corpus("pdf"), PDF_TOKENS, MAX_BYTES),
    ) {
        check(&bytes, Format::Pdf)?;
    }
}
