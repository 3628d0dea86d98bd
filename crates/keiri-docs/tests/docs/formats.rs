//! Each format's text, from generated documents.

use keiri_docs::{ExtractOptions, Format, extract_bytes};

use super::generate::{self, Cell, n, para, t, table};
use super::{extract, lines};

/// Extracts `bytes` and compares the normalised text (and, for text files, the encoding).
fn check(format: Format, bytes: &[u8], expect_text: &str, expect_encoding: Option<&str>) {
    let got = extract(bytes, format).unwrap_or_else(|e| panic!("{format:?}: {} {e}", e.code()));
    assert_eq!(got.normalized(), expect_text, "{format:?}");
    assert_eq!(got.encoding.as_deref(), expect_encoding, "{format:?}");
}

#[test]
fn text_encodings() {
    check(
        Format::Txt,
        "経理規程\n第1条".as_bytes(),
        "経理規程\n第1条",
        Some("utf-8"),
    );
    check(
        Format::Md,
        b"# Title\r\n\r\n- a\r\n",
        "# Title\n\n- a\n",
        Some("utf-8"),
    );
    let bom: Vec<u8> = [&b"\xEF\xBB\xBF"[..], "請求書,金額\n".as_bytes()].concat();
    check(Format::Csv, &bom, "請求書,金額\n", Some("utf-8-sig"));
    check(
        Format::Csv,
        &generate::shift_jis(generate::INVOICE_CSV),
        &generate::INVOICE_CSV.replace("\r\n", "\n"),
        Some("cp932"),
    );
    let (euc, _, _) = encoding_rs::EUC_JP.encode("経費精算の締め日は毎月二十五日です。");
    check(
        Format::Txt,
        &euc,
        "経費精算の締め日は毎月二十五日です。",
        Some("euc-jp"),
    );
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain("日付\t金額\r\n".encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    check(Format::Txt, &utf16, "日付\t金額\n", Some("utf-16le"));
}

#[test]
fn shift_jis_csv_keeps_original_line_endings_in_raw_text() {
    let got = extract(&generate::shift_jis(generate::INVOICE_CSV), Format::Csv).unwrap();
    assert_eq!(
        got.text,
        generate::INVOICE_CSV,
        "raw text keeps CRLF for raw section reads"
    );
    assert_eq!(keiri_docs::count_lines(&got.text), 3);
}

#[test]
fn pdf_pages_in_order() {
    let pages = vec![
        lines(&["Invoice INV-001", "Total (incl. tax) 110,000"]),
        lines(&["Page two"]),
        lines(&["Page three"]),
    ];
    for compress in [false, true] {
        let bytes = generate::pdf(&pages, compress);
        let got = extract(&bytes, Format::Pdf).unwrap();
        assert_eq!(
            got.text,
            "Invoice INV-001\nTotal (incl. tax) 110,000\nPage two\nPage three"
        );
        assert_eq!((got.pages_total, got.pages_extracted), (Some(3), Some(3)));
        assert!(got.cuts.is_empty());
    }
}

#[test]
fn pdf_japanese_identity_h_with_to_unicode() {
    let pages = vec![
        lines(&["請求書", "株式会社サンプル 御中", "合計金額 ¥110,000"]),
        lines(&["振込先：みずほ銀行"]),
    ];
    let got = extract(&generate::pdf_cjk(&pages), Format::Pdf).unwrap();
    assert_eq!(
        got.text,
        "請求書\n株式会社サンプル 御中\n合計金額 ¥110,000\n振込先：みずほ銀行"
    );
    assert_eq!(got.unmapped_glyphs, 0);
}

#[test]
fn pdf_page_cap_is_reported() {
    let pages: Vec<Vec<String>> = (1..=25).map(|i| vec![format!("page {i}")]).collect();
    let got = extract(&generate::pdf(&pages, true), Format::Pdf).unwrap();
    assert_eq!((got.pages_total, got.pages_extracted), (Some(25), Some(20)));
    assert!(got.text.ends_with("page 20"));
    assert_eq!(got.cuts.len(), 1);
    assert_eq!(got.cuts[0].limit, "max_pages");
    assert_eq!(got.cuts[0].message, "extracted 20 of 25 pages");
}

#[test]
fn docx_paragraphs_and_tables_in_document_order() {
    let body = format!(
        "{}{}{}{}",
        para("見積書"),
        table(&[
            &["品目", "数量", "金額"],
            &["コピー用紙 A4", "10", "5,000"],
            &["トナー & ドラム", "", "12,000"]
        ]),
        para("以上、よろしくお願いいたします。"),
        table(&[&["備考"]]),
    );
    check(
        Format::Docx,
        &generate::docx(&body),
        "見積書\n品目\t数量\t金額\nコピー用紙 A4\t10\t5,000\nトナー & ドラム\t\t12,000\n以上、よろしくお願いいたします。\n備考",
        None,
    );
}

fn workbook() -> Vec<u8> {
    generate::xlsx(&[
        (
            "入力データ",
            vec![
                vec![t("ID"), t("会社名"), t("金額")],
                vec![t("D001"), t("ABC商事"), n(55000.0)],
                vec![t("D002"), Cell::Empty, n(82500.5)],
            ],
        ),
        ("結果", vec![vec![t("合計"), n(137500.5)]]),
        (
            "設定",
            vec![
                vec![Cell::Empty, Cell::Empty],
                vec![Cell::Empty, t("閾値"), n(0.1)],
            ],
        ),
    ])
}

#[test]
fn xlsx_sheets_and_ranges() {
    fn check_sheet(
        sheet: Option<&str>,
        range: Option<&str>,
        expect: Result<(&str, &str, &str), &str>,
    ) {
        let opts = ExtractOptions {
            sheet: sheet.map(String::from),
            range: range.map(String::from),
            ..ExtractOptions::default()
        };
        match (extract_bytes(&workbook(), Format::Xlsx, &opts), expect) {
            (Ok(got), Ok((name, rendered, text))) => {
                assert_eq!(
                    (
                        got.sheet.as_deref(),
                        got.range.as_deref(),
                        got.text.as_str()
                    ),
                    (Some(name), Some(rendered), text)
                );
                assert_eq!(got.sheet_names.unwrap(), ["入力データ", "結果", "設定"]);
            }
            (Err(e), Err(code)) => assert_eq!(e.code(), code),
            (got, want) => panic!("{sheet:?} {range:?}: {got:?} vs {want:?}"),
        }
    }
    check_sheet(
        None,
        None,
        Ok((
            "入力データ",
            "A1:C3",
            "ID\t会社名\t金額\nD001\tABC商事\t55000\nD002\t\t82500.5",
        )),
    );
    check_sheet(Some("結果"), None, Ok(("結果", "A1:B1", "合計\t137500.5")));
    check_sheet(Some("#3"), None, Ok(("設定", "B2:C2", "閾値\t0.1")));
    check_sheet(
        None,
        Some("B2:C3"),
        Ok(("入力データ", "B2:C3", "ABC商事\t55000\n\t82500.5")),
    );
    check_sheet(Some("無い"), None, Err("SHEET_NOT_FOUND"));
    check_sheet(Some("#9"), None, Err("SHEET_NOT_FOUND"));
    check_sheet(None, Some("A1:ZZZZ9"), Err("INVALID_CELL_RANGE"));
}

#[test]
fn xlsx_window_is_cut_and_reported_without_a_dense_grid() {
    // A1 and XFD1048576: a dense range would be 17 billion cells.
    let far = r#"<row r="1048576"><c r="XFD1048576" t="inlineStr"><is><t>far</t></is></c></row>"#;
    let bytes = generate::xlsx_with(&[("S", vec![vec![t("near")]])], far);
    let got = extract(&bytes, Format::Xlsx).unwrap();
    assert_eq!(got.text, "near");
    assert_eq!(got.range.as_deref(), Some("A1:AX500"));
    assert_eq!(got.cuts.len(), 1);
    assert_eq!(got.cuts[0].limit, "sheet_window");
    assert!(
        got.cuts[0].message.contains("used range A1:XFD1048576"),
        "{}",
        got.cuts[0].message
    );
}

#[test]
fn xlsm_reads_like_xlsx() {
    let got = extract(&workbook(), Format::Xlsm).unwrap();
    assert_eq!(got.format, Format::Xlsm);
    assert!(got.text.starts_with("ID\t会社名"));
}

#[test]
fn formats_by_extension() {
    use std::path::Path;
    for (name, expect) in [
        ("a.TXT", Ok(Format::Txt)),
        ("b.markdown", Ok(Format::Md)),
        ("c.tsv", Ok(Format::Csv)),
        ("d.Pdf", Ok(Format::Pdf)),
        ("e.docx", Ok(Format::Docx)),
        ("f.xlsm", Ok(Format::Xlsm)),
        ("src/a.py", Ok(Format::Code)),
        ("lib.RS", Ok(Format::Code)),
        ("settings.json", Ok(Format::Code)),
        ("plan.yaml", Ok(Format::Code)),
        ("Makefile", Ok(Format::Code)),
        ("g.doc", Err("UNSUPPORTED_FORMAT")),
        ("image.png", Err("UNSUPPORTED_FORMAT")),
        ("noext", Err("UNSUPPORTED_FORMAT")),
    ] {
        assert_eq!(
            Format::from_path(Path::new(name)).map_err(|e| e.code()),
            expect,
            "{name}"
        );
    }
}
