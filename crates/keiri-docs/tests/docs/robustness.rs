//! Random bytes and mutated documents into every parser entry point: an error or text,
//! never a panic or a hang. (Coverage-guided fuzz targets for the same entry points live in
//! `fuzz/`; this runs in CI.)

use std::sync::OnceLock;

use keiri_docs::{ExtractOptions, Format, extract_bytes};
use proptest::prelude::*;

use super::generate::{self, para, t, table};

const ALL: [Format; 7] = [
    Format::Txt,
    Format::Md,
    Format::Csv,
    Format::Pdf,
    Format::Docx,
    Format::Xlsx,
    Format::Xlsm,
];

fn small_opts() -> ExtractOptions {
    ExtractOptions {
        max_pages: 5,
        max_chars: Some(10_000),
        ..ExtractOptions::default()
    }
}

/// Valid documents to mutate, one per parser.
fn seeds() -> &'static [(Format, Vec<u8>)] {
    static SEEDS: OnceLock<Vec<(Format, Vec<u8>)>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        vec![
            (
                Format::Pdf,
                generate::pdf(
                    &[
                        vec!["Hello (world)".into(), "second".into()],
                        vec!["p2".into()],
                    ],
                    false,
                ),
            ),
            (
                Format::Pdf,
                generate::pdf_cjk(&[vec!["請求書 合計".into()]]),
            ),
            (
                Format::Docx,
                generate::docx(&format!("{}{}", para("a"), table(&[&["b", "c"]]))),
            ),
            (
                Format::Xlsx,
                generate::xlsx(&[("S", vec![vec![t("a"), generate::n(1.0)]])]),
            ),
            (Format::Csv, generate::shift_jis(generate::INVOICE_CSV)),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..4096), which in 0usize..7) {
        let _ = extract_bytes(&bytes, ALL[which], &small_opts());
    }

    #[test]
    fn random_bytes_behind_a_valid_header_never_panic(
        body in proptest::collection::vec(any::<u8>(), 0..4096),
        header in prop::sample::select(vec![&b"%PDF-1.7\n"[..], &b"PK\x03\x04"[..], &b"\xEF\xBB\xBF"[..], &b"\xFF\xFE"[..]]),
        which in 0usize..7,
    ) {
        let bytes = [header, &body[..]].concat();
        let _ = extract_bytes(&bytes, ALL[which], &small_opts());
    }

    #[test]
    fn mutated_documents_never_panic(
        seed in 0usize..5,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..16),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let (format, original) = &seeds()[seed];
        let mut bytes = original.clone();
        for (at, value) in edits {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        if truncate {
            bytes.truncate(cut.index(bytes.len()));
        }
        let _ = extract_bytes(&bytes, *format, &small_opts());
    }

    #[test]
    fn pdf_syntax_soup_never_panics(tokens in proptest::collection::vec(prop::sample::select(vec![
        "obj", "endobj", "stream", "endstream", "xref", "trailer", "startxref", "<<", ">>", "[", "]",
        "(", ")", "<", ">", "/Type", "/Page", "/Pages", "/Kids", "/Root", "/Contents", "/Length",
        "/Filter", "/FlateDecode", "/ObjStm", "/XRef", "/Prev", "1 0 R", "2 0 R", "0", "7", "-1",
        "99999999999", "BT", "ET", "Tj", "TJ", "Tf", "/F1", "Do", "q", "Q", "cm", "BI", "ID", "EI",
        "%comment\n", "\n", " ",
    ]), 0..400)) {
        let body = tokens.concat();
        let bytes = format!("%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n{body}\nstartxref\n0\n%%EOF");
        let _ = extract_bytes(bytes.as_bytes(), Format::Pdf, &small_opts());
    }
}
