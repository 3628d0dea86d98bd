//! `bank.zengin_transfer`: the file is compared byte for byte with records written out by
//! hand from the 全銀協 総合振込 layout (field by field, widths counted), encoded with
//! encoding_rs's Shift_JIS, not with the block's own table.

use serde_json::{Value as Json, json};

use crate::matching::run_block;

fn inputs(rows: Json) -> Json {
    json!({
        "rows": rows,
        "bank_code_field": "銀行コード",
        "branch_code_field": "支店コード",
        "account_type_field": "預金種目",
        "account_no_field": "口座番号",
        "payee_kana_field": "口座名義カナ",
        "amount_field": "支払額",
        "customer_code_field": "仕入先コード",
        "company_code": "1234567890",
        "company_name_kana": "ケイリショウジ（カ",
        "transfer_date": "2025-04-25",
        "bank_code": "0001",
        "bank_name_kana": "ミズホ",
        "branch_code": "100",
        "branch_name_kana": "トウキヨウ",
        "account_type": "普通",
        "account_no": "7654321",
    })
}

fn sp(n: usize) -> String {
    " ".repeat(n)
}

#[test]
fn approved_payments_become_the_records_of_a_transfer_file() {
    // A spreadsheet dropped the bank code's and branch's leading zeros in the first row; the
    // names come in full-width katakana with a small ョ, and in half-width.
    let rows = json!([
        {"仕入先コード": "V001", "銀行コード": 5, "支店コード": "1", "預金種目": "普通",
         "口座番号": "1234567", "口座名義カナ": "ヤマダショウジ（カ", "支払額": "1,100,000"},
        {"仕入先コード": "V014", "銀行コード": "0009", "支店コード": "210", "預金種目": "当座",
         "口座番号": "765432", "口座名義カナ": "ｽｽﾞｷｾｲｻｸｼﾖ", "支払額": 55000},
    ]);
    let dir = tempfile::tempdir().unwrap();
    let out = run_block("bank.zengin_transfer", dir.path(), inputs(rows)).unwrap();
    assert_eq!(out["payment_count"], 2);
    assert_eq!(out["total_amount"], 1_155_000);
    let bytes = std::fs::read(out["out_path"].as_str().unwrap()).unwrap();

    let records: [String; 5] = [
        // 1, 21 総合振込, 0 JIS, 委託者コード, 委託者名 (40), 取組日 MMDD, 仕向銀行 (4 + 15),
        // 支店 (3 + 15), 預金種目, 口座番号, dummy (17).
        [
            "1210",
            "1234567890",
            "ｹｲﾘｼﾖｳｼﾞ(ｶ",
            &sp(30),
            "0425",
            "0001",
            "ﾐｽﾞﾎ",
            &sp(11),
            "100",
            "ﾄｳｷﾖｳ",
            &sp(10),
            "1",
            "7654321",
            &sp(17),
        ]
        .concat(),
        // 2, 被仕向銀行 (4 + 15), 支店 (3 + 15), 手形交換所 (4), 預金種目, 口座番号,
        // 受取人名 (30), 金額 (10), 新規コード 0, 顧客コード (20), 振込指定区分 7, 識別表示,
        // dummy (7).
        [
            "2",
            "0005",
            &sp(15),
            "001",
            &sp(15),
            &sp(4),
            "1",
            "1234567",
            "ﾔﾏﾀﾞｼﾖｳｼﾞ(ｶ",
            &sp(19),
            "0001100000",
            "0",
            "V001",
            &sp(16),
            "7 ",
            &sp(7),
        ]
        .concat(),
        [
            "2",
            "0009",
            &sp(15),
            "210",
            &sp(15),
            &sp(4),
            "2",
            "0765432",
            "ｽｽﾞｷｾｲｻｸｼﾖ",
            &sp(20),
            "0000055000",
            "0",
            "V014",
            &sp(16),
            "7 ",
            &sp(7),
        ]
        .concat(),
        // 8, 合計件数 (6), 合計金額 (12), dummy (101).
        ["8", "000002", "000001155000", &sp(101)].concat(),
        ["9", &sp(119)].concat(),
    ];
    let mut want = Vec::new();
    for record in &records {
        let (encoded, _, unmappable) = encoding_rs::SHIFT_JIS.encode(record);
        assert!(!unmappable, "{record}");
        assert_eq!(encoded.len(), 120, "{record:?}");
        want.extend_from_slice(&encoded);
        want.extend_from_slice(b"\r\n");
    }
    assert_eq!(bytes, want);
}

#[test]
fn a_payment_the_format_cannot_carry_writes_no_file() {
    // A name in kanji, an amount of 0 and one with sen, a bank code of five digits: every row
    // is named, and nothing is written.
    let rows = json!([
        {"仕入先コード": "V001", "銀行コード": "0005", "支店コード": "001", "預金種目": "普通",
         "口座番号": "1234567", "口座名義カナ": "山田商事", "支払額": 1000},
        {"仕入先コード": "V002", "銀行コード": "0005", "支店コード": "001", "預金種目": "普通",
         "口座番号": "1234567", "口座名義カナ": "ﾄｳｷﾖｳｼﾞﾑｷ", "支払額": 0},
        {"仕入先コード": "V003", "銀行コード": "0005", "支店コード": "001", "預金種目": "普通",
         "口座番号": "1234567", "口座名義カナ": "ｵｵｻｶｳﾝﾕ", "支払額": 1000.5},
        {"仕入先コード": "V004", "銀行コード": "00051", "支店コード": "001", "預金種目": "普通",
         "口座番号": "1234567", "口座名義カナ": "ｸﾘｰﾝｻｰﾋﾞｽ", "支払額": 1000},
        {"仕入先コード": "V005", "銀行コード": "0005", "支店コード": "001", "預金種目": "普通",
         "口座番号": "1234567", "口座名義カナ": "ﾎﾂｶｲﾄﾞｳﾌｰｽﾞ", "支払額": 1000},
    ]);
    let dir = tempfile::tempdir().unwrap();
    let err = run_block("bank.zengin_transfer", dir.path(), inputs(rows)).unwrap_err();
    assert_eq!(err.code, keiri_run::block::ErrorCode::InputInvalid);
    let message = err.message_ja.clone();
    for part in [
        "4 件の振込を全銀フォーマットにできません",
        "1 行目 「山田商事」の「山」は全銀フォーマットで使えない文字です",
        "2 行目 振込金額「0」は1円以上の整数",
        "3 行目 振込金額「1000.5」",
        "4 行目 銀行番号「00051」は4桁以内の数字です",
    ] {
        assert!(message.contains(part), "{part}: {message}");
    }
    assert!(!message.contains("5 行目"), "{message}");
    let written: Vec<_> = walk(dir.path());
    assert!(written.is_empty(), "{written:?}");

    // No payments at all is no file either.
    let err = run_block("bank.zengin_transfer", dir.path(), inputs(json!([]))).unwrap_err();
    assert_eq!(err.code, keiri_run::block::ErrorCode::InputInvalid);
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn the_customer_code_is_blank_without_a_column_and_a_column_named_must_exist() {
    let rows = json!([
        {"銀行コード": "0005", "支店コード": "001", "預金種目": "普通",
         "口座番号": "1234567", "口座名義カナ": "ﾔﾏﾀﾞ", "支払額": 1000},
    ]);
    let dir = tempfile::tempdir().unwrap();
    // "" is the answer "the file has no such column": the 20 bytes are blank.
    let mut without = inputs(rows.clone());
    without["customer_code_field"] = json!("");
    let out = run_block("bank.zengin_transfer", dir.path(), without).unwrap();
    let bytes = std::fs::read(out["out_path"].as_str().unwrap()).unwrap();
    let data = &bytes[122..242];
    assert_eq!(data[0], b'2');
    assert_eq!(&data[90..112], b"0                    7");
    // A column the plan names that the rows lack is an error, not blanks.
    let err = run_block("bank.zengin_transfer", dir.path(), inputs(rows)).unwrap_err();
    assert_eq!(err.code, keiri_run::block::ErrorCode::ColumnNotFound);
    assert!(
        err.message_ja.contains("仕入先コード"),
        "{}",
        err.message_ja
    );
}
