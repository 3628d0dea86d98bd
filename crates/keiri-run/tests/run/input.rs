//! `input/*` blocks on fixtures built in the test (Shift_JIS bytes through encoding_rs,
//! workbooks, Word files and zips through the zip crate, a PDF written by hand), with
//! expected outputs written by hand.

use std::io::Write;
use std::path::Path;

use keiri_run::block::ErrorCode;
use serde_json::{Value as Json, json};

use super::transforms::run;

fn sjis(text: &str) -> Vec<u8> {
    let (bytes, _, had_errors) = encoding_rs::SHIFT_JIS.encode(text);
    assert!(!had_errors, "{text} is not encodable in Shift_JIS");
    bytes.into_owned()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    keiri_fs::write_atomic(&path, bytes).unwrap();
}

fn zip_bytes(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, content) in entries {
        w.start_file(*name, zip::write::SimpleFileOptions::default())
            .unwrap();
        w.write_all(content).unwrap();
    }
    w.finish().unwrap().into_inner()
}

const JOURNAL: &str = "伝票日付,勘定科目,金額,摘要\r\n令和6年4月1日,旅費交通費,\"1,200\",新幹線 東京－大阪\r\n2024/04/02,会議費,800,\r\n";

#[test]
fn csv_read_detects_encodings_and_keeps_text() {
    let expected_rows = json!([
        {"伝票日付": "令和6年4月1日", "勘定科目": "旅費交通費", "金額": "1,200", "摘要": "新幹線 東京－大阪"},
        {"伝票日付": "2024/04/02", "勘定科目": "会議費", "金額": "800", "摘要": ""}
    ]);
    let bom: Vec<u8> = [b"\xEF\xBB\xBF".as_slice(), JOURNAL.as_bytes()].concat();
    let cases: Vec<(&str, Vec<u8>, &str, &str)> = vec![
        ("sjis.csv", sjis(JOURNAL), "auto", "cp932"),
        ("sjis_named.csv", sjis(JOURNAL), "shift_jis", "cp932"),
        ("bom.csv", bom, "auto", "utf-8-sig"),
        ("plain.csv", JOURNAL.as_bytes().to_vec(), "auto", "utf-8"),
        (
            "plain_named.csv",
            JOURNAL.as_bytes().to_vec(),
            "utf-8",
            "utf-8",
        ),
    ];
    for (name, bytes, encoding, used) in cases {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), name, &bytes);
        let out = run(
            "csv.read",
            dir.path(),
            json!({"path": name, "encoding": encoding}),
        )
        .unwrap();
        assert_eq!(out["rows"], expected_rows, "{name}");
        assert_eq!(
            out["columns"],
            json!(["伝票日付", "勘定科目", "金額", "摘要"]),
            "{name}"
        );
        assert_eq!(out["encoding"], json!(used), "{name}");
        assert_eq!(out["summary"]["rows"], json!(2), "{name}");
    }
}

#[test]
fn csv_read_options() {
    let dir = tempfile::tempdir().unwrap();
    // Title and export-date lines before the header.
    write(
        dir.path(),
        "skip.csv",
        &sjis("売上明細\r\n出力日 2024/05/01\r\n得意先,金額\r\nあさひ商事,1000\r\n"),
    );
    let out = run(
        "csv.read",
        dir.path(),
        json!({"path": "skip.csv", "skip_rows": 2}),
    )
    .unwrap();
    assert_eq!(
        out["rows"],
        json!([{"得意先": "あさひ商事", "金額": "1000"}])
    );
    assert_eq!(out["summary"]["skipped_rows"], json!(2));

    write(
        dir.path(),
        "noheader.tsv",
        "A001\t山田\t300000\nA002\t佐藤\t280000\n".as_bytes(),
    );
    let out = run("csv.read", dir.path(), json!({"path": "noheader.tsv", "delimiter": "\t", "header": false, "columns": ["社員番号", "氏名", "支給額"]})).unwrap();
    assert_eq!(
        out["rows"],
        json!([{"社員番号": "A001", "氏名": "山田", "支給額": "300000"}, {"社員番号": "A002", "氏名": "佐藤", "支給額": "280000"}])
    );
    let out = run(
        "csv.read",
        dir.path(),
        json!({"path": "noheader.tsv", "delimiter": "\\t", "header": false}),
    )
    .unwrap();
    assert_eq!(out["columns"], json!(["col1", "col2", "col3"]));

    // With a header, columns picks and orders.
    write(
        dir.path(),
        "semi.csv",
        "科目;金額;部門\n旅費;100;営業\n".as_bytes(),
    );
    let out = run(
        "csv.read",
        dir.path(),
        json!({"path": "semi.csv", "delimiter": ";", "columns": ["金額", "科目"]}),
    )
    .unwrap();
    assert_eq!(out["rows"], json!([{"金額": "100", "科目": "旅費"}]));
}

#[test]
fn csv_read_errors() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "sjis.csv", &sjis(JOURNAL));
    let e = run(
        "csv.read",
        dir.path(),
        json!({"path": "sjis.csv", "encoding": "utf-8"}),
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::BlockFailed);
    assert!(e.message_en.contains("UTF-8"), "{e:?}");
    let e = run("csv.read", dir.path(), json!({"path": "ない.csv"})).unwrap_err();
    assert_eq!(e.code, ErrorCode::FileNotFound);
    let e = run(
        "csv.read",
        dir.path(),
        json!({"path": "sjis.csv", "encoding": "latin1"}),
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::InputInvalid);
    let e = run(
        "csv.read",
        dir.path(),
        json!({"path": "sjis.csv", "columns": ["部門"]}),
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::ColumnNotFound);
    assert_eq!(
        e.hint.unwrap().1,
        "existing columns: 伝票日付, 勘定科目, 金額, 摘要"
    );
}

fn xlsx() -> Vec<u8> {
    let ns = r#"xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main""#;
    let rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
    let content_types = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/worksheets/sheet2.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#;
    let root_rels = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>"#
    );
    let workbook = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><workbook {ns} xmlns:r="{rel}"><sheets><sheet name="表紙" sheetId="1" r:id="rId1"/><sheet name="試算表" sheetId="2" r:id="rId2"/></sheets></workbook>"#
    );
    let workbook_rels = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="{rel}/worksheet" Target="worksheets/sheet2.xml"/></Relationships>"#
    );
    let s = |r: &str, t: &str| format!(r#"<c r="{r}" t="inlineStr"><is><t>{t}</t></is></c>"#);
    let sheet1 = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><worksheet {ns}><sheetData><row r="1">{}</row></sheetData></worksheet>"#,
        s("A1", "表紙")
    );
    let sheet2 = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><worksheet {ns}><sheetData><row r="1">{}</row><row r="3">{}{}{}</row><row r="4">{}<c r="B4"><v>120000</v></c><c r="C4"><v>0</v></c></row><row r="5">{}<c r="C5"><v>98765.5</v></c></row><row r="7">{}<c r="B7"><f>SUM(B4:B5)</f><v>120000</v></c></row></sheetData></worksheet>"#,
        s("A1", "試算表 2024年3月期"),
        s("A3", "勘定科目"),
        s("B3", "借方"),
        s("C3", "貸方"),
        s("A4", "現金"),
        s("A5", "売上高"),
        s("A7", "合計"),
    );
    zip_bytes(&[
        ("[Content_Types].xml", content_types.as_bytes()),
        ("_rels/.rels", root_rels.as_bytes()),
        ("xl/workbook.xml", workbook.as_bytes()),
        ("xl/_rels/workbook.xml.rels", workbook_rels.as_bytes()),
        ("xl/worksheets/sheet1.xml", sheet1.as_bytes()),
        ("xl/worksheets/sheet2.xml", sheet2.as_bytes()),
    ])
}

#[test]
fn excel_read_workbook() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "試算表.xlsx", &xlsx());
    let out = run(
        "excel.read_workbook",
        dir.path(),
        json!({"path": "試算表.xlsx", "sheet": "試算表", "header_row": 3}),
    )
    .unwrap();
    assert_eq!(
        out["rows"],
        json!([
            {"勘定科目": "現金", "借方": 120000, "貸方": 0},
            {"勘定科目": "売上高", "借方": null, "貸方": 98765.5},
            {"勘定科目": "合計", "借方": 120000, "貸方": null}
        ])
    );
    assert_eq!(out["columns"], json!(["勘定科目", "借方", "貸方"]));
    assert_eq!(out["sheet_names"], json!(["表紙", "試算表"]));
    assert_eq!(out["summary"]["range"], json!("A1:C7"));

    // By index, a range, formulas, and the empty row kept.
    let out = run(
        "excel.read_workbook",
        dir.path(),
        json!({"path": "試算表.xlsx", "sheet": 1, "header_row": 3, "range": "A3:B7", "value_mode": "formula", "skip_empty_rows": false}),
    )
    .unwrap();
    assert_eq!(
        out["rows"],
        json!([
            {"勘定科目": "現金", "借方": 120000},
            {"勘定科目": "売上高", "借方": null},
            {"勘定科目": null, "借方": null},
            {"勘定科目": "合計", "借方": "=SUM(B4:B5)"}
        ])
    );
    // No header: column letters.
    let out = run(
        "excel.read_workbook",
        dir.path(),
        json!({"path": "試算表.xlsx", "header_row": 0}),
    )
    .unwrap();
    assert_eq!(out["rows"], json!([{"A": "表紙"}]));

    let e = run(
        "excel.read_workbook",
        dir.path(),
        json!({"path": "試算表.xlsx", "sheet": "残高"}),
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::BlockFailed);
    // The message names the file, the sheet asked for and the sheets there are.
    assert_eq!(
        e.message_en,
        "試算表.xlsx has no sheet \"残高\" (its sheets: 表紙, 試算表)"
    );
    assert_eq!(
        e.message_ja,
        "試算表.xlsx にシート「残高」がありません（あるシート: 表紙, 試算表）"
    );
    assert_eq!(e.hint.unwrap().1, "set sheet to one of: 表紙, 試算表");
    write(
        dir.path(),
        "壊れた.xlsx",
        b"PK\x03\x04 this is not a workbook",
    );
    let e = run(
        "excel.read_workbook",
        dir.path(),
        json!({"path": "壊れた.xlsx"}),
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::BlockFailed);
    assert!(e.message_en.contains("CORRUPT_FILE"), "{e:?}");
}

/// The crafted workbooks of the fuzz corpus (impossible shared-string counts, cell references
/// past Excel's grid where calamine's arithmetic overflows) are refused by the checked open
/// before calamine reads them, not by the panic guard after it panicked (debug builds) or read
/// wrapped coordinates (release builds).
#[test]
fn excel_read_workbook_refuses_crafted_workbooks_before_calamine() {
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/xlsx");
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "unique-count-2147483647.xlsx",
        "unique-count-in-a-first-sst.xlsx",
        "calamine-overflow-dimension.xlsx",
        "calamine-overflow-after-stray-end-tag.xlsx",
        "calamine-overflow-sheet-not-named-xml.xlsx",
    ] {
        write(dir.path(), name, &std::fs::read(corpus.join(name)).unwrap());
        let e = run("excel.read_workbook", dir.path(), json!({"path": name})).unwrap_err();
        assert_eq!(e.code, ErrorCode::BlockFailed, "{name}");
        assert!(e.message_en.contains("CORRUPT_FILE"), "{name}: {e:?}");
        assert!(!e.message_en.contains("panicked"), "{name}: {e:?}");
    }
    write(
        dir.path(),
        "invoice.xlsx",
        &std::fs::read(corpus.join("invoice.xlsx")).unwrap(),
    );
    let out = run(
        "excel.read_workbook",
        dir.path(),
        json!({"path": "invoice.xlsx"}),
    )
    .unwrap();
    assert_eq!(out["columns"][0], json!("品目"));
}

/// A two-page PDF with a standard font, xref offsets computed.
fn pdf() -> Vec<u8> {
    let page = |contents: u32| {
        format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 7 0 R >> >> /Contents {contents} 0 R >>"
        )
    };
    let stream = |text: &str| {
        let body = format!("BT /F1 12 Tf 72 720 Td ({text}) Tj ET");
        format!("<< /Length {} >>\nstream\n{body}\nendstream", body.len())
    };
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R 5 0 R] /Count 2 >>".to_owned(),
        page(4),
        stream("Invoice No. 123"),
        page(6),
        stream("Total 5000 JPY"),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_owned(),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{o}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for o in offsets {
        out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

#[test]
fn pdf_extract_text() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "請求書.pdf", &pdf());
    let cases = [
        (
            json!({"path": "請求書.pdf"}),
            json!({"text": "Invoice No. 123\nTotal 5000 JPY", "pages": [{"page": 1, "text": "Invoice No. 123"}, {"page": 2, "text": "Total 5000 JPY"}], "page_count": 2, "truncated": false}),
        ),
        (
            json!({"path": "請求書.pdf", "max_pages": 1}),
            json!({"text": "Invoice No. 123", "pages": [{"page": 1, "text": "Invoice No. 123"}], "page_count": 2, "truncated": true}),
        ),
        (
            json!({"path": "請求書.pdf", "max_chars": 7}),
            json!({"text": "Invoice", "page_count": 2, "truncated": true}),
        ),
    ];
    for (inputs, expect) in cases {
        let out = run("pdf.extract_text", dir.path(), inputs.clone()).unwrap();
        for (k, v) in expect.as_object().unwrap() {
            assert_eq!(&out[k], v, "{k} for {inputs}");
        }
    }
    write(dir.path(), "偽物.pdf", b"not a pdf at all");
    let e = run("pdf.extract_text", dir.path(), json!({"path": "偽物.pdf"})).unwrap_err();
    assert_eq!(e.code, ErrorCode::BlockFailed);
}

#[test]
fn docx_extract_text() {
    let w = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main""#;
    let p = |t: &str| format!("<w:p><w:r><w:t>{t}</w:t></w:r></w:p>");
    let cell = |t: &str| format!("<w:tc>{}</w:tc>", p(t));
    let doc = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><w:document {w}><w:body>{}{}<w:tbl><w:tr>{}{}</w:tr><w:tr>{}{}</w:tr></w:tbl>{}</w:body></w:document>"#,
        p("経費精算規程"),
        p("第1条 交通費は実費精算とする。"),
        cell("区分"),
        cell("上限"),
        cell("宿泊"),
        cell("10,000円"),
        p("附則"),
    );
    let content_types = r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#;
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "規程.docx",
        &zip_bytes(&[
            ("[Content_Types].xml", content_types.as_bytes()),
            ("word/document.xml", doc.as_bytes()),
        ]),
    );
    let out = run(
        "docx.extract_text",
        dir.path(),
        json!({"path": "規程.docx"}),
    )
    .unwrap();
    assert_eq!(
        out["paragraphs"],
        json!(["経費精算規程", "第1条 交通費は実費精算とする。", "附則"])
    );
    assert_eq!(
        out["tables"],
        json!([{"index": 0, "rows": [{"区分": "宿泊", "上限": "10,000円"}]}])
    );
    assert_eq!(
        out["text"],
        json!("経費精算規程\n第1条 交通費は実費精算とする。\n区分\t上限\n宿泊\t10,000円\n附則")
    );
    let out = run(
        "docx.extract_text",
        dir.path(),
        json!({"path": "規程.docx", "table_header": false}),
    )
    .unwrap();
    assert_eq!(
        out["tables"][0]["rows"],
        json!([{"col1": "区分", "col2": "上限"}, {"col1": "宿泊", "col2": "10,000円"}])
    );
    let out = run(
        "docx.extract_text",
        dir.path(),
        json!({"path": "規程.docx", "include_tables": false}),
    )
    .unwrap();
    assert_eq!(out["tables"], json!([]));
    assert_eq!(
        out["text"],
        json!("経費精算規程\n第1条 交通費は実費精算とする。\n附則")
    );
}

#[test]
fn file_list_folder() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "請求書/請求書_001.pdf", b"abc");
    write(dir.path(), "請求書/請求書_002.PDF", b"abcdefghij");
    write(dir.path(), "請求書/領収書.pdf", b"x");
    write(dir.path(), "請求書/請求書_メモ.txt", b"x");
    write(dir.path(), "請求書/4月/請求書_003.pdf", b"abcde");
    let listing = |inputs: Json| -> Vec<(String, String, u64)> {
        let out = run("file.list_folder", dir.path(), inputs).unwrap();
        let files = out["files"].as_array().unwrap();
        assert_eq!(out["count"], json!(files.len()));
        files
            .iter()
            .map(|f| {
                (
                    f["path"].as_str().unwrap().to_owned(),
                    f["ext"].as_str().unwrap().to_owned(),
                    f["size"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let s = |p: &str, e: &str, n: u64| (p.to_owned(), e.to_owned(), n);
    assert_eq!(
        listing(json!({"folder": "請求書", "pattern": "請求書_*", "extensions": [".pdf"]})),
        [
            s("請求書/請求書_001.pdf", ".pdf", 3),
            s("請求書/請求書_002.PDF", ".pdf", 10)
        ]
    );
    assert_eq!(
        listing(
            json!({"folder": "請求書", "pattern": "請求書_*", "extensions": ["pdf"], "recursive": true, "sort_by": "size"})
        ),
        [
            s("請求書/請求書_001.pdf", ".pdf", 3),
            s("請求書/4月/請求書_003.pdf", ".pdf", 5),
            s("請求書/請求書_002.PDF", ".pdf", 10)
        ]
    );
    assert_eq!(listing(json!({"folder": "請求書"})).len(), 4);
    let e = run("file.list_folder", dir.path(), json!({"folder": "ない"})).unwrap_err();
    assert_eq!(e.code, ErrorCode::FileNotFound);
}

#[test]
fn file_unzip_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let archive = zip_bytes(&[
        ("サンプル1/請求書.txt", "請求金額 10,000円".as_bytes()),
        (
            "サンプル1/検収書.csv",
            "品目,数量\nコピー用紙,5\n".as_bytes(),
        ),
        ("サンプル2/請求書.txt", "請求金額 5,500円".as_bytes()),
        ("../evil.txt", b"escape"),
    ]);
    write(dir.path(), "証憑.zip", &archive);
    let out = run(
        "file.unzip_evidence",
        dir.path(),
        json!({"path": "証憑.zip", "group_level": "top_folder", "max_chars_per_file": 4}),
    )
    .unwrap();
    let files = out["files"].as_array().unwrap();
    let summary: Vec<(String, String, String, u64, String)> = files
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_owned(),
                f["folder"].as_str().unwrap().to_owned(),
                f["ext"].as_str().unwrap().to_owned(),
                f["size"].as_u64().unwrap(),
                f["text_excerpt"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let f = |n: &str, d: &str, e: &str, s: u64, t: &str| {
        (n.to_owned(), d.to_owned(), e.to_owned(), s, t.to_owned())
    };
    assert_eq!(
        summary,
        [
            f(
                "請求書.txt",
                "サンプル1",
                ".txt",
                "請求金額 10,000円".len() as u64,
                "請求金額"
            ),
            f(
                "検収書.csv",
                "サンプル1",
                ".csv",
                "品目,数量\nコピー用紙,5\n".len() as u64,
                "品目,数"
            ),
            f(
                "請求書.txt",
                "サンプル2",
                ".txt",
                "請求金額 5,500円".len() as u64,
                "請求金額"
            ),
        ]
    );
    // Extracted under the node's output directory, never beside the archive or outside it.
    let extracted = dir.path().join("out/evidence/サンプル1/請求書.txt");
    assert_eq!(
        std::fs::read_to_string(&extracted).unwrap(),
        "請求金額 10,000円"
    );
    assert_eq!(files[0]["path"], json!(extracted.to_string_lossy()));
    assert!(!dir.path().join("out/evil.txt").exists() && !dir.path().join("evil.txt").exists());
    assert_eq!(
        out["summary"]["skipped_unsafe_paths"],
        json!(["../evil.txt"])
    );
    let groups: Vec<(String, usize)> = out["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["key"].as_str().unwrap().to_owned(),
                g["files"].as_array().unwrap().len(),
            )
        })
        .collect();
    assert_eq!(
        groups,
        [("サンプル1".to_owned(), 2), ("サンプル2".to_owned(), 1)]
    );
    let out = run(
        "file.unzip_evidence",
        dir.path(),
        json!({"path": "証憑.zip", "extensions": [".csv"], "include_text": false}),
    )
    .unwrap();
    assert_eq!(out["files"].as_array().unwrap().len(), 1);
    assert_eq!(out["files"][0]["text_excerpt"], json!(""));
    assert_eq!(out["groups"], json!([]));
    write(dir.path(), "壊れた.zip", b"not a zip");
    assert_eq!(
        run(
            "file.unzip_evidence",
            dir.path(),
            json!({"path": "壊れた.zip"})
        )
        .unwrap_err()
        .code,
        ErrorCode::BlockFailed
    );
}

#[test]
fn bank_statement_csv_layouts() {
    let dir = tempfile::tempdir().unwrap();
    // A typical internet-banking download: account lines, then 日付/摘要/お引出し/お預入れ/残高.
    let statement = "口座番号,普通 1234567\r\n照会期間,2024/04/01～2024/04/30\r\n日付,摘要,お引出し,お預入れ,残高\r\n2024/04/01,振込 カ）アサヒ,,\"110,000\",\"1,110,000\"\r\n2024/04/05,電気料金,\"12,345\",,\"1,097,655\"\r\nR6.4.10,ＡＴＭ,\"10,000\",,\"1,087,655\"\r\n";
    write(dir.path(), "明細.csv", &sjis(statement));
    let out = run(
        "bank.read_statement",
        dir.path(),
        json!({"path": "明細.csv"}),
    )
    .unwrap();
    assert_eq!(
        out["rows"],
        json!([
            {"date": "2024-04-01", "amount": 110000, "direction": "deposit", "description": "振込 カ）アサヒ", "balance": 1110000},
            {"date": "2024-04-05", "amount": 12345, "direction": "withdrawal", "description": "電気料金", "balance": 1097655},
            {"date": "2024-04-10", "amount": 10000, "direction": "withdrawal", "description": "ＡＴＭ", "balance": 1087655}
        ])
    );
    // Opening balance: 1,110,000 - 110,000 = 1,000,000; withdrawals 12,345 + 10,000 = 22,345.
    assert_eq!(
        out["summary"],
        json!({"layout": "csv", "period_start": "2024-04-01", "period_end": "2024-04-10", "count": 3, "deposit_count": 1,
               "withdrawal_count": 2, "deposit_total": 110000, "withdrawal_total": 22345,
               "opening_balance": 1000000, "closing_balance": 1087655})
    );
    // One signed amount column, mapped by hand, with skip_rows.
    write(dir.path(), "signed.csv", "三井テスト銀行\n取引日,内容,金額\n2024-05-01,振込入金 イロハ,50000\n2024-05-02,振込手数料,-440\n".as_bytes());
    let out = run(
        "bank.read_statement",
        dir.path(),
        json!({"path": "signed.csv", "skip_rows": 1, "mapping": {"date": "取引日", "amount": "金額", "description": "内容"}}),
    )
    .unwrap();
    assert_eq!(
        out["rows"],
        json!([
            {"date": "2024-05-01", "amount": 50000, "direction": "deposit", "description": "振込入金 イロハ", "balance": null},
            {"date": "2024-05-02", "amount": 440, "direction": "withdrawal", "description": "振込手数料", "balance": null}
        ])
    );
    let e = run(
        "bank.read_statement",
        dir.path(),
        json!({"path": "signed.csv", "mapping": {"date": "日付", "amount": "金額"}}),
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::ColumnNotFound);
    assert!(e.message_en.contains("日付"));
}

/// A statement downloaded empty (0 bytes) or as blank lines only, read with a mapping: the
/// column is missing, and the hint says there are no columns at all instead of listing none.
#[test]
fn an_empty_statement_says_it_has_no_columns() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [("空.csv", &b""[..]), ("空行.csv", &b"\r\n\r\n  \r\n"[..])] {
        write(dir.path(), name, bytes);
        let e = run(
            "bank.read_statement",
            dir.path(),
            json!({"path": name, "mapping": {"date": "取引日", "amount": "金額"}}),
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::ColumnNotFound, "{name}: {e:?}");
        assert_eq!(
            e.hint.unwrap().1,
            "there are no columns at all: check that the file read is not empty and has a header row",
            "{name}"
        );
    }
}

/// The error `bank.read_statement` gives for `statement`, written in Shift_JIS.
fn statement_error(dir: &Path, statement: &str) -> keiri_run::block::BlockError {
    write(dir, "誤り.csv", &sjis(statement));
    run("bank.read_statement", dir, json!({"path": "誤り.csv"})).unwrap_err()
}

/// A month's statement repeats its days: each line gets its own day however the bank wrote
/// it (`2024/04/01`, `2024/4/1`, `R6.4.1`), a footer without a date is left out, and a date
/// that cannot be read stops the read at its line even after the same day read well.
#[test]
fn bank_statement_days_repeated_and_written_several_ways() {
    let dir = tempfile::tempdir().unwrap();
    let statement = "日付,摘要,お引出し,お預入れ,残高\r\n\
        2024/04/01,振込 カ）アサヒ,,\"1,000\",\"101,000\"\r\n\
        2024/4/1,振込 カ）イロハ,,\"2,000\",\"103,000\"\r\n\
        R6.4.1,手数料,440,,\"102,560\"\r\n\
        2024/04/01,振込 カ）アサヒ,,\"1,000\",\"103,560\"\r\n\
        2024/04/02,振込 ユ）ニホ,,\"3,000\",\"106,560\"\r\n\
        合計,,440,\"7,000\",\r\n";
    write(dir.path(), "月次.csv", &sjis(statement));
    let out = run(
        "bank.read_statement",
        dir.path(),
        json!({"path": "月次.csv"}),
    )
    .unwrap();
    let days: Vec<&str> = out["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["date"].as_str().unwrap())
        .collect();
    assert_eq!(
        days,
        [
            "2024-04-01",
            "2024-04-01",
            "2024-04-01",
            "2024-04-01",
            "2024-04-02"
        ]
    );
    // By hand: deposits 1,000 + 2,000 + 1,000 + 3,000 = 7,000, the fee 440.
    assert_eq!(out["summary"]["deposit_total"], json!(7000));
    assert_eq!(out["summary"]["withdrawal_total"], json!(440));
    let e = statement_error(
        dir.path(),
        &statement.replacen("2024/04/02", "2024/04/32", 1),
    );
    assert!(e.message_en.contains("line 6"), "{}", e.message_en);
}

/// A statement large enough to be read in pieces (one per core) gives every line once, in
/// order, with the sums worked out below; quoted descriptions hold commas and line breaks (a
/// piece is never cut inside one), blank lines and the totals line are left out. A date that
/// cannot be read in the second half stops the read at its line as an editor counts lines.
///
/// 50,000 lines: line i is a 440-yen fee withdrawal when i % 4 == 3, else a deposit of
/// (i % 7 + 1) × 1,000 whose description is over two lines; the day is 2024-04-01 plus
/// i / 1,000 days; a blank line follows every 8,000th.
#[test]
fn bank_statement_read_in_pieces_gives_every_line_in_order() {
    let count = 50_000;
    let mut statement =
        String::from("口座番号,普通 7654321\r\n日付,摘要,お引出し,お預入れ,残高\r\n");
    let day = |i: usize| {
        let d = chrono::NaiveDate::from_ymd_opt(2024, 4, 1).unwrap()
            + chrono::Duration::days((i / 1_000) as i64);
        d.format("%Y/%m/%d").to_string()
    };
    let line = |i: usize, date: &str| {
        let description = if i % 4 == 3 {
            format!("振込手数料 {i}")
        } else {
            format!("\"振込 カ）アサヒ,{i}\r\n本店\"")
        };
        if i % 4 == 3 {
            format!("{date},{description},440,,\r\n")
        } else {
            format!("{date},{description},,\"{},000\",\r\n", i % 7 + 1)
        }
    };
    for i in 0..count {
        statement.push_str(&line(i, &day(i)));
        if (i + 1) % 8_000 == 0 {
            statement.push_str("\r\n");
        }
    }
    statement.push_str("合計,,\"5,500,000\",,\r\n");
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "大きな明細.csv", &sjis(&statement));
    // Over the 1 MiB under which a statement is read on one core.
    assert!(statement.len() > 3 << 19, "{} bytes", statement.len());
    let out = run(
        "bank.read_statement",
        dir.path(),
        json!({"path": "大きな明細.csv"}),
    )
    .unwrap();
    let rows = out["rows"].as_array().unwrap();
    assert_eq!(rows.len(), count);
    // 12,500 fees of 440; the deposits' (i % 7 + 1) × 1,000 summed over the other lines.
    let deposits: u64 = (0..count)
        .filter(|i| i % 4 != 3)
        .map(|i| (i as u64 % 7 + 1) * 1_000)
        .sum();
    assert_eq!(out["summary"]["withdrawal_total"], json!(5_500_000));
    assert_eq!(out["summary"]["deposit_total"], json!(deposits));
    assert_eq!(out["summary"]["withdrawal_count"], json!(12_500));
    assert_eq!(out["summary"]["period_end"], json!("2024-05-20"));
    for i in [0, 1, 3, 24_990, 25_000, 25_001, 49_999] {
        let (amount, direction) = if i % 4 == 3 {
            (440, "withdrawal")
        } else {
            ((i % 7 + 1) * 1_000, "deposit")
        };
        let description = if i % 4 == 3 {
            format!("振込手数料 {i}")
        } else {
            format!("振込 カ）アサヒ,{i}\r\n本店")
        };
        assert_eq!(
            rows[i],
            json!({"date": day(i).replace('/', "-"), "amount": amount, "direction": direction,
                   "description": description, "balance": null}),
            "line {i}"
        );
    }
    // Line 35,001 is on line 3 + 35,001 of the file, plus the 26,251 descriptions over two
    // lines before it (35,001 lines less the 8,750 fees i = 3, 7, …, 34,999) and the 4 blank
    // lines: line 61,259.
    let bad = statement.replacen(&line(35_001, &day(35_001)), &line(35_001, "2024/05/32"), 1);
    let e = statement_error(dir.path(), &bad);
    assert!(e.message_en.contains("line 61259:"), "{}", e.message_en);
    assert!(e.message_en.contains("2024/05/32"), "{}", e.message_en);
}

/// A foreign-currency account's statement has cents: its amounts are one float column (the
/// whole fee reads 500.0, as every block after the reader saw it when the rows were made a
/// table), and a statement without balances has an empty balance column.
#[test]
fn bank_statement_amounts_with_cents_are_one_float_column() {
    let dir = tempfile::tempdir().unwrap();
    let statement =
        "日付,摘要,お引出し,お預入れ\r\n2024/04/01,利息,,12.34\r\n2024/04/02,送金手数料,500,\r\n";
    write(dir.path(), "外貨.csv", &sjis(statement));
    let out = run(
        "bank.read_statement",
        dir.path(),
        json!({"path": "外貨.csv"}),
    )
    .unwrap();
    assert_eq!(
        out["rows"],
        json!([
            {"date": "2024-04-01", "amount": 12.34, "direction": "deposit", "description": "利息", "balance": null},
            {"date": "2024-04-02", "amount": 500.0, "direction": "withdrawal", "description": "送金手数料", "balance": null}
        ])
    );
    assert_eq!(out["summary"]["deposit_total"], json!(12.34));
    assert_eq!(out["summary"]["withdrawal_total"], json!(500));
}

fn field(text: &str, width: usize) -> Vec<u8> {
    let mut b = sjis(text);
    assert!(b.len() <= width, "{text} is longer than {width}");
    b.resize(width, b' ');
    b
}

#[test]
fn bank_statement_zengin_fixed_width() {
    // 入出金取引明細 (kind 03): header, two data records, trailer, end; 200 bytes each, CRLF.
    let header = [field("1030", 4), field("", 196)].concat();
    let data = |date: &str, direction: &str, amount: &str, payer: &str, memo: &str| {
        [
            field("2", 1),
            field("00000001", 8),
            field(date, 6),
            field(date, 6),
            field(direction, 1),
            field("11", 2),
            field(amount, 12),
            field("000000000000", 12),
            field("000000", 6),
            field("000000", 6),
            field("0", 1),
            field("0000000", 7),
            field("000", 3),
            field("0000000000", 10),
            field(payer, 48),
            field("", 15),
            field("", 15),
            field(memo, 20),
            field("", 21),
        ]
        .concat()
    };
    let records = [
        header,
        data("060401", "1", "000000110000", "ｶ)ｱｻﾋ", ""),
        data("060405", "2", "000000000440", "", "ﾃｽｳﾘｮｳ"),
        [field("8", 1), field("", 199)].concat(),
        [field("9", 1), field("", 199)].concat(),
    ];
    assert!(records.iter().all(|r| r.len() == 200));
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "zengin.txt", &records.join(&b"\r\n"[..]));
    let out = run(
        "bank.read_statement",
        dir.path(),
        json!({"path": "zengin.txt"}),
    )
    .unwrap();
    assert_eq!(
        out["rows"],
        json!([
            {"date": "2024-04-01", "amount": 110000, "direction": "deposit", "description": "ｶ)ｱｻﾋ", "balance": null},
            {"date": "2024-04-05", "amount": 440, "direction": "withdrawal", "description": "ﾃｽｳﾘｮｳ", "balance": null}
        ])
    );
    assert_eq!(out["summary"]["layout"], json!("zengin"));
    // The same records without line breaks.
    write(dir.path(), "zengin_flat.txt", &records.concat());
    let flat = run(
        "bank.read_statement",
        dir.path(),
        json!({"path": "zengin_flat.txt"}),
    )
    .unwrap();
    assert_eq!(flat["rows"], out["rows"]);
}

/// A 仕訳日記帳 exported by accounting software in CP932, with a formatted empty row
/// (`,,,,,,`), three blank lines at the end and two trailing columns with neither header nor
/// values: exactly the real rows and columns.
#[test]
fn csv_read_skips_blank_rows_and_drops_trailing_empty_columns() {
    let journal = "日付,伝票番号,借方勘定科目,借方金額,貸方勘定科目,貸方金額,摘要,,\r\n\
        2024/04/01,1,旅費交通費,1200,現金,1200,新幹線,,\r\n\
        ,,,,,,,,\r\n\
        2024/04/02,2,会議費,800,普通預金,800,打合せ,,\r\n\
        \r\n\r\n\r\n";
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "journal.csv", &sjis(journal));
    let out = run("csv.read", dir.path(), json!({"path": "journal.csv"})).unwrap();
    assert_eq!(
        out["columns"],
        json!([
            "日付",
            "伝票番号",
            "借方勘定科目",
            "借方金額",
            "貸方勘定科目",
            "貸方金額",
            "摘要"
        ])
    );
    assert_eq!(
        out["rows"],
        json!([
            {"日付": "2024/04/01", "伝票番号": "1", "借方勘定科目": "旅費交通費", "借方金額": "1200", "貸方勘定科目": "現金", "貸方金額": "1200", "摘要": "新幹線"},
            {"日付": "2024/04/02", "伝票番号": "2", "借方勘定科目": "会議費", "借方金額": "800", "貸方勘定科目": "普通預金", "貸方金額": "800", "摘要": "打合せ"}
        ])
    );
    assert_eq!(out["encoding"], json!("cp932"));
    assert_eq!(out["summary"]["rows"], json!(2));
    assert_eq!(out["summary"]["dropped_columns"], json!(2));
    assert!(out["summary"]["blank_rows"].as_u64().unwrap() >= 1, "{out}");
}

/// Excel's 「Unicode テキスト」 (UTF-16LE with a BOM, tab-separated), UTF-8 with and without a
/// BOM and a semicolon file, all with the delimiter detected.
#[test]
fn csv_read_detects_utf16_and_the_delimiter() {
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(
            "取引先\t金額\r\nあさひ商事\t1,000\r\n"
                .encode_utf16()
                .flat_map(u16::to_le_bytes),
        )
        .collect();
    let expected = json!([{"取引先": "あさひ商事", "金額": "1,000"}]);
    let cases: Vec<(&str, Vec<u8>, &str, &str)> = vec![
        ("unicode.txt", utf16.clone(), "auto", "utf-16le"),
        ("unicode_named.txt", utf16, "utf-16", "utf-16le"),
        (
            "bom.csv",
            [
                b"\xEF\xBB\xBF".as_slice(),
                "取引先,金額\n\"あさひ商事\",\"1,000\"\n".as_bytes(),
            ]
            .concat(),
            "auto",
            "utf-8-sig",
        ),
        (
            "plain.csv",
            "取引先,金額\nあさひ商事,\"1,000\"\n".as_bytes().to_vec(),
            "auto",
            "utf-8",
        ),
        (
            "semi.csv",
            "取引先;金額\nあさひ商事;1,000\n".as_bytes().to_vec(),
            "auto",
            "utf-8",
        ),
    ];
    for (name, bytes, encoding, used) in cases {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), name, &bytes);
        let out = run(
            "csv.read",
            dir.path(),
            json!({"path": name, "encoding": encoding}),
        )
        .unwrap();
        assert_eq!(out["rows"], expected, "{name}");
        assert_eq!(out["encoding"], json!(used), "{name}");
    }
}

/// A named encoding that does not fit: the hint names the one that does.
#[test]
fn csv_read_names_the_encoding_that_works() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "sjis.csv", &sjis(JOURNAL));
    let e = run(
        "csv.read",
        dir.path(),
        json!({"path": "sjis.csv", "encoding": "utf-8"}),
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::BlockFailed);
    let (ja, en) = *e.hint.unwrap();
    assert!(ja.contains("cp932"), "{ja}");
    assert!(en.contains("cp932"), "{en}");
}

/// #36's acceptance: bytes valid in both CP932 and EUC-JP, on which the old design-time rule
/// (CP932) and `csv.read`'s (EUC-JP) disagreed. `ﾄﾘﾋｷｻｷ,ﾒｲ` in CP932 is `椿坊桟,匆` in EUC-JP;
/// the design-time schema and `csv.read` now read the same columns.
#[test]
fn design_time_and_csv_read_read_an_ambiguous_file_alike() {
    let bytes = b"\xC4\xD8\xCB\xB7\xBB\xB7,\xD2\xB2\r\n1,2\r\n";
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "kana.csv", bytes);
    let out = run("csv.read", dir.path(), json!({"path": "kana.csv"})).unwrap();
    let design = keiri_docs::schema::tables(bytes, keiri_docs::Format::Csv).unwrap();
    let design: Vec<&str> = design[0].columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(design, ["ﾄﾘﾋｷｻｷ", "ﾒｲ"]);
    assert_eq!(out["columns"], json!(design));
    assert_eq!(out["encoding"], json!("cp932"));
}
