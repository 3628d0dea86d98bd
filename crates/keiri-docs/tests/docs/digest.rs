//! The prompt digest over real extractions.

use keiri_docs::{DigestRequest, DigestResponse, NO_DOCUMENTS};

use super::generate::{self, para, t, table};
use super::{Workspace, lines};

fn run(ws: &Workspace, files: &[&str], max_chars: usize) -> DigestResponse {
    let req = DigestRequest {
        file_paths: files.iter().map(|s| s.to_string()).collect(),
        max_chars,
        ..DigestRequest::default()
    };
    keiri_docs::digest(&ws.policy, &req, &ws.cache)
        .unwrap()
        .json()
        .unwrap()
        .clone()
}

#[test]
fn compresses_dedupes_and_heads_each_file() {
    let ws = Workspace::new();
    // A PDF whose three pages repeat a header and a footer line.
    let pages: Vec<Vec<String>> = (1..=3)
        .map(|i| lines(&["株式会社サンプル 経理部", &format!("本文 {i}"), "社外秘"]))
        .collect();
    ws.put("rules.pdf", &generate::pdf_cjk(&pages));
    ws.put(
        "quote.docx",
        &generate::docx(&format!(
            "{}{}",
            para("見積    条件"),
            table(&[&["品目", "金額"], &["保守", "10,000"]])
        )),
    );
    ws.put(
        "book.xlsx",
        &generate::xlsx(&[(
            "S",
            vec![
                vec![t("勘定科目"), t("金額")],
                vec![t("旅費交通費"), generate::n(1200.0)],
            ],
        )]),
    );
    let res = run(&ws, &["rules.pdf", "quote.docx", "book.xlsx"], 4000);
    assert_eq!(
        res.digest,
        "## rules.pdf\n株式会社サンプル 経理部\n本文 1\n社外秘\n本文 2\n本文 3\n\n\
         ## quote.docx\n見積 条件\n品目 金額\n保守 10,000\n\n\
         ## book.xlsx\n勘定科目 金額\n旅費交通費 1200"
    );
    assert!(!res.empty);
    assert!(res.success);
    assert!(
        res.files
            .iter()
            .all(|f| !f.cut && f.characters_in_digest == f.characters_compressed)
    );
    assert_eq!(res.characters, res.digest.chars().count());
}

#[test]
fn fair_share_keeps_short_files_whole() {
    let ws = Workspace::new();
    let long: Vec<String> = (0..400)
        .map(|i| format!("規程 第{i}条 経費は所定の様式で申請する。"))
        .collect();
    ws.put("manual.txt", long.join("\n").as_bytes());
    ws.put("invoice.csv", &generate::shift_jis(generate::INVOICE_CSV));
    let res = run(&ws, &["manual.txt", "invoice.csv"], 1000);
    assert!(res.characters <= 1000, "{}", res.characters);
    assert!(
        res.characters >= 950,
        "the budget is used: {}",
        res.characters
    );
    let invoice = &res.files[1];
    assert!(!invoice.cut, "the short file keeps all of its text");
    assert!(
        res.digest
            .ends_with(&generate::INVOICE_CSV.trim_end().replace("\r\n", "\n"))
    );
    assert!(res.files[0].cut);
}

#[test]
fn nothing_extracted_says_no_documents_provided() {
    let ws = Workspace::new();
    ws.put("blank.txt", b"  \n\n\t\n");
    ws.put("bad.pdf", b"%PDF-1.4 broken");
    for files in [
        &[][..],
        &["blank.txt"][..],
        &["blank.txt", "bad.pdf", "missing.txt"][..],
    ] {
        let res = run(&ws, files, 4000);
        assert_eq!(res.digest, NO_DOCUMENTS, "{files:?}");
        assert!(res.empty);
    }
    let res = run(&ws, &["blank.txt", "bad.pdf"], 4000);
    assert!(!res.success);
    assert_eq!(res.errors.len(), 1);
}
