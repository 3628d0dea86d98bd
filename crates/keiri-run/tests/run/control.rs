//! `control/*` pure-data checks on the sample data's exceptions, expected values by hand.

use keiri_run::block::ErrorCode;
use serde_json::{Value as Json, json};

use crate::matching::run_block;

fn run(id: &str, inputs: Json) -> Json {
    let dir = tempfile::tempdir().unwrap();
    run_block(id, dir.path(), inputs.clone())
        .unwrap_or_else(|e| panic!("{id} failed: {e}\ninputs: {inputs}"))
}

fn code(id: &str, inputs: Json) -> ErrorCode {
    let dir = tempfile::tempdir().unwrap();
    match run_block(id, dir.path(), inputs) {
        Err(e) => e.code,
        Ok(out) => panic!("{id} should fail, got {out}"),
    }
}

fn pick(items: &Json, keys: &[&str]) -> Vec<Vec<Json>> {
    items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| keys.iter().map(|k| i[*k].clone()).collect())
        .collect()
}

#[test]
fn data_quality_reports_missing_duplicate_and_out_of_range_values() {
    let rows = json!([
        {"po_no": "P-006", "amount": 2200000},
        {"po_no": "P-007", "amount": "45,000", "登録番号": "T123"},
        {"po_no": "P-007", "amount": "45,000"},
        {"po_no": "", "amount": "30,000"},
        {"po_no": "P-009", "amount": "△20,000"},
        {"po_no": "P-010", "amount": "¥120,000", "登録番号": "T1234567890123"},
    ]);
    let rules = json!([
        {"field": "po_no", "rule": "required", "severity": "error", "message": "発注番号がありません"},
        {"field": "po_no", "rule": "unique", "severity": "error", "message": "発注番号が重複しています"},
        {"field": "amount", "rule": "range", "min": 0, "severity": "error", "message": "金額がマイナスです"},
        {"field": "登録番号", "rule": "regex", "pattern": "^T\\d{13}$", "severity": "warning"},
    ]);
    let out = run(
        "control.data_quality",
        json!({"rows": rows, "rules": rules}),
    );
    // The second P-007 is the duplicate; blank po_no is not checked for uniqueness;
    // △20,000 is −20,000 < 0; T123 is not T + 13 digits (a warning keeps the row valid).
    assert_eq!(
        pick(
            &out["issues"],
            &["field", "rule", "severity", "message", "row_index", "value"]
        ),
        vec![
            vec![
                json!("po_no"),
                json!("required"),
                json!("error"),
                json!("発注番号がありません"),
                json!(3),
                json!("")
            ],
            vec![
                json!("po_no"),
                json!("unique"),
                json!("error"),
                json!("発注番号が重複しています"),
                json!(2),
                json!("P-007")
            ],
            vec![
                json!("amount"),
                json!("range"),
                json!("error"),
                json!("金額がマイナスです"),
                json!(4),
                json!("△20,000")
            ],
            vec![
                json!("登録番号"),
                json!("regex"),
                json!("warning"),
                json!("登録番号: 形式が合いません / does not match the pattern"),
                json!(1),
                json!("T123")
            ],
        ]
    );
    assert_eq!(out["valid_rows"], json!([rows[0], rows[1], rows[5]]));
    assert_eq!(
        out["summary"],
        json!({"issue_count": 4, "rows_with_issues": 4, "by_rule": {"range": 1, "regex": 1, "required": 1, "unique": 1},
               "by_field": {"amount": 1, "po_no": 2, "登録番号": 1}})
    );
    // Dates against date bounds, allowed values, types.
    let out = run(
        "control.data_quality",
        json!({"rows": [{"d": "2025/03/31", "区分": "課税", "n": "12"}, {"d": "令和7年4月1日", "区分": "不明", "n": "1.5"}],
               "rules": [{"field": "d", "rule": "range", "min": "2025-03-01", "max": "2025-03-31"},
                         {"field": "区分", "rule": "allowed_values", "values": ["課税", "非課税", "不課税"]},
                         {"field": "n", "rule": "type", "type": "integer", "severity": "info"}]}),
    );
    assert_eq!(
        pick(&out["issues"], &["rule", "row_index"]),
        vec![
            vec![json!("range"), json!(1)],
            vec![json!("allowed_values"), json!(1)],
            vec![json!("type"), json!(1)]
        ]
    );
    assert_eq!(
        code(
            "control.data_quality",
            json!({"rows": rows, "rules": [{"field": "a", "rule": "regex", "pattern": "("}]})
        ),
        ErrorCode::InputInvalid
    );
    assert_eq!(
        code(
            "control.data_quality",
            json!({"rows": rows, "rules": [{"field": "a", "rule": "spell"}]})
        ),
        ErrorCode::InputInvalid
    );
}

fn journal() -> Json {
    let line = |v: &str, d: &str, dr: &str, cr: &str, da: &str, ca: &str, desc: &str| json!({"voucher_no": v, "date": d, "debit_account": dr, "credit_account": cr, "debit_amount": da, "credit_amount": ca, "description": desc});
    json!([
        line(
            "J-0301",
            "2025-03-03",
            "旅費交通費",
            "現金",
            "3,480",
            "3,480",
            "出張交通費 大阪"
        ),
        line(
            "J-0302",
            "2025-03-05",
            "普通預金",
            "売掛金",
            "330,000",
            "330,000",
            "山田商事 入金"
        ),
        line(
            "J-0303",
            "2025-03-10",
            "水道光熱費",
            "普通預金",
            "45,210",
            "45,210",
            "電気料金 3月"
        ),
        line(
            "J-0304",
            "2025-03-14",
            "消耗品費",
            "未払金",
            "12,000",
            "12,100",
            "文具購入"
        ),
        line(
            "J-0305",
            "2025-03-16",
            "通信費",
            "普通預金",
            "8,800",
            "8,800",
            "インターネット回線"
        ),
        line(
            "J-0306",
            "2025-03-20",
            "広告宣伝費",
            "未払金",
            "0",
            "0",
            "Web広告（取消）"
        ),
        line(
            "J-0307",
            "2025-04-02",
            "支払手数料",
            "普通預金",
            "660",
            "660",
            "振込手数料"
        ),
        line(
            "J-0308",
            "2025-03-25",
            "給料手当",
            "普通預金",
            "820,000",
            "820,000",
            "3月分給与"
        ),
    ])
}

#[test]
fn journal_check_finds_the_sample_journal_exceptions() {
    let out = run(
        "control.journal_check",
        json!({"entries": journal(), "period_start": "2025-03-01", "period_end": "2025-03-31",
               "checks": ["balance", "period", "zero_amount", "negative_amount", "weekend"]}),
    );
    // J-0304 12,000 ≠ 12,100; 2025-03-16 is a Sunday; J-0306 is all zero; 04-02 is in April.
    assert_eq!(
        pick(&out["issues"], &["voucher", "check", "severity"]),
        vec![
            vec![json!("J-0304"), json!("balance"), json!("error")],
            vec![json!("J-0305"), json!("weekend"), json!("warning")],
            vec![json!("J-0306"), json!("zero_amount"), json!("warning")],
            vec![json!("J-0307"), json!("period"), json!("error")],
        ]
    );
    assert_eq!(out["issues"][0]["rows"], json!([journal()[3]]));
    assert_eq!(out["balanced"], false);
    // Debits 3,480 + 330,000 + 45,210 + 12,000 + 8,800 + 0 + 660 + 820,000 = 1,220,150; credits 100 more.
    assert_eq!(
        out["summary"],
        json!({"voucher_count": 8, "row_count": 8, "debit_total": 1220150, "credit_total": 1220250,
               "by_check": {"balance": 1, "period": 1, "weekend": 1, "zero_amount": 1}})
    );
    // A two-line voucher: balanced, but 仮払金 is not in the chart, 1,000,000 is round, and
    // neither line has a description.
    let two = json!([
        {"voucher_no": "J-1", "date": "2025-03-31", "debit_account": "仮払金", "credit_account": "", "debit_amount": 1000000, "credit_amount": 0},
        {"voucher_no": "J-1", "date": "2025-03-31", "debit_account": "", "credit_account": "普通預金", "debit_amount": 0, "credit_amount": 1000000, "description": ""},
    ]);
    let out = run(
        "control.journal_check",
        json!({"entries": two, "chart_of_accounts": ["普通預金", {"code": "現金"}],
               "checks": ["balance", "account_exists", "description", "round_amount"]}),
    );
    assert_eq!(
        pick(&out["issues"], &["check", "severity"]),
        vec![
            vec![json!("account_exists"), json!("error")],
            vec![json!("description"), json!("info")],
            vec![json!("round_amount"), json!("info")]
        ]
    );
    assert_eq!(out["issues"][0]["rows"], json!([two[0]]));
    assert_eq!(out["balanced"], true);
    assert_eq!(
        code(
            "control.journal_check",
            json!({"entries": two, "checks": ["spelling"]})
        ),
        ErrorCode::InputInvalid
    );
}

#[test]
fn policy_enforce_applies_the_purchasing_rules() {
    let po = |no: &str, od: &str, dd: &str, amount: u64, req: &str, appr: &str, quotes: &str| json!({"po_no": no, "order_date": od, "delivery_date": dd, "amount": amount, "requester": req, "approver": appr, "quote_count": quotes});
    let rows = json!([
        po("P-001", "2025/03/01", "2025/03/10", 85000, "佐藤", "", "1"),
        po(
            "P-002",
            "2025/03/02",
            "2025/03/20",
            250000,
            "鈴木",
            "高橋",
            "1"
        ),
        po("P-003", "2025/03/03", "2025/03/15", 180000, "田中", "", "1"),
        po(
            "P-004",
            "2025/03/05",
            "2025/03/25",
            1500000,
            "伊藤",
            "伊藤",
            "1"
        ),
        po("P-005", "2025/03/06", "2025/03/04", 60000, "渡辺", "", "1"),
        po(
            "P-006",
            "2025/03/07",
            "2025/04/07",
            2200000,
            "山本",
            "高橋",
            "3"
        ),
        po("P-007", "2025/03/10", "2025/03/20", 45000, "中村", "", "1"),
        po(
            "P-010",
            "2025/03/14",
            "2025/03/28",
            120000,
            "吉田",
            "佐々木",
            "1"
        ),
    ]);
    let rules = json!([
        {"id": "PO-01", "description": "しきい値以上の発注には承認者が必要", "when": "amount >= 100000", "condition": "not is_empty(approver)", "severity": "error"},
        {"id": "PO-02", "description": "発注者と承認者は別の人でなければならない", "when": "not is_empty(approver)", "condition": "requester != approver", "severity": "error"},
        {"id": "PO-03", "description": "相見積もりが必要な金額では見積が2件以上必要", "when": "amount >= 1000000", "condition": "quote_count >= 2", "severity": "warning"},
        {"id": "PO-04", "description": "発注日は納期より前", "condition": "order_date <= delivery_date", "severity": "warning"},
    ]);
    let out = run(
        "control.policy_enforce",
        json!({"rows": rows, "rules": rules}),
    );
    assert_eq!(
        pick(
            &out["violations"],
            &["rule_id", "severity", "message", "row_index"]
        ),
        vec![
            vec![
                json!("PO-01"),
                json!("error"),
                json!("しきい値以上の発注には承認者が必要"),
                json!(2)
            ],
            vec![
                json!("PO-02"),
                json!("error"),
                json!("発注者と承認者は別の人でなければならない"),
                json!(3)
            ],
            vec![
                json!("PO-03"),
                json!("warning"),
                json!("相見積もりが必要な金額では見積が2件以上必要"),
                json!(3)
            ],
            vec![
                json!("PO-04"),
                json!("warning"),
                json!("発注日は納期より前"),
                json!(4)
            ],
        ]
    );
    assert_eq!(out["violations"][0]["row"], rows[2]);
    assert_eq!(
        out["passed"],
        json!([rows[0], rows[1], rows[5], rows[6], rows[7]])
    );
    assert_eq!(
        out["summary"],
        json!({"violation_count": 4, "passed_count": 5, "by_rule": {"PO-01": 1, "PO-02": 1, "PO-03": 1, "PO-04": 1},
               "by_severity": {"error": 2, "warning": 2}})
    );
    assert_eq!(
        code(
            "control.policy_enforce",
            json!({"rows": rows, "rules": rules, "stop_on_error": true})
        ),
        ErrorCode::BlockFailed
    );
    assert_eq!(
        code(
            "control.policy_enforce",
            json!({"rows": rows, "rules": [{"id": "X", "condition": "amount >="}]})
        ),
        ErrorCode::InputInvalid
    );
}

#[test]
fn variance_check_flags_changes_over_both_thresholds() {
    let tb = |a: &str, c: u64, p: u64| json!({"account": a, "current": c, "prior": p});
    let rows = json!([
        tb("現金", 520000, 480000),
        tb("普通預金", 12800000, 11900000),
        tb("売掛金", 4620000, 3850000),
        tb("商品", 2100000, 2050000),
        tb("未払金", 1450000, 1180000),
        tb("売上高", 9800000, 9200000),
        tb("給料手当", 3200000, 3150000),
        tb("広告宣伝費", 680000, 250000),
        tb("旅費交通費", 95000, 60000),
        tb("通信費", 88000, 85000),
    ]);
    let out = run(
        "control.variance_check",
        json!({"rows": rows, "threshold_rate": 0.1, "threshold_amount": 100000, "combine": "and"}),
    );
    // 売掛金 +770,000 / 3,850,000 = 0.2; 未払金 +270,000 / 1,180,000 = 0.2288; 広告宣伝費
    // +430,000 / 250,000 = 1.72. 普通預金 is 7.6 % and 旅費交通費 only 35,000.
    assert_eq!(
        pick(
            &out["issues"],
            &[
                "account",
                "change_amount",
                "change_rate",
                "flagged",
                "severity"
            ]
        ),
        vec![
            vec![
                json!("売掛金"),
                json!(770000),
                json!(0.2),
                json!(true),
                json!("warning")
            ],
            vec![
                json!("未払金"),
                json!(270000),
                json!(0.2288),
                json!(true),
                json!("warning")
            ],
            vec![
                json!("広告宣伝費"),
                json!(430000),
                json!(1.72),
                json!(true),
                json!("warning")
            ],
        ]
    );
    assert_eq!(out["rows"][1]["flagged"], false);
    assert_eq!(out["rows"][1]["change_rate"], 0.0756);
    assert_eq!(
        out["summary"],
        json!({"row_count": 10, "issue_count": 3, "current_total": 35353000, "comparison_total": 32205000})
    );

    // Payroll after an outer join: a new hire has no prior pay, a leaver no current pay.
    let pay = json!([
        {"employee_no": "E001", "current": 352000, "prior": 350000},
        {"employee_no": "E003", "current": 385000, "prior": 285000},
        {"employee_no": "E007", "current": 240000, "prior": null},
        {"employee_no": "E006", "current": null, "prior": 265000},
    ]);
    let out = run(
        "control.variance_check",
        json!({"rows": pay, "key_field": "employee_no", "threshold_rate": 0.2, "threshold_amount": 30000}),
    );
    // E003: 100,000 / 285,000 = 0.3509. E007: no base, any change counts. E006: −265,000, −100 %.
    assert_eq!(
        pick(
            &out["issues"],
            &["employee_no", "change_amount", "change_rate"]
        ),
        vec![
            vec![json!("E003"), json!(100000), json!(0.3509)],
            vec![json!("E007"), json!(240000), Json::Null],
            vec![json!("E006"), json!(-265000), json!(-1)],
        ]
    );
    // With "or" and 1,000 yen, E001's +2,000 counts too.
    let out = run(
        "control.variance_check",
        json!({"rows": pay, "threshold_rate": 0.2, "threshold_amount": 1000, "combine": "or"}),
    );
    assert_eq!(out["summary"]["issue_count"], 4);
}
