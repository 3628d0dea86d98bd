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

// ---------------------------------------------------------------------------------------
// control.sampling

/// Ten March invoices: three of 1,000,000 yen or more, one credit note written with △.
fn invoices() -> Json {
    let inv = |no: &str, who: &str, amount: Json| json!({"請求書番号": no, "取引先": who, "amount": amount});
    json!([
        inv("INV-001", "山田商事", json!(120000)),
        inv("INV-002", "佐藤工業", json!(45000)),
        inv("INV-003", "田中商店", json!(2400000)),
        inv("INV-004", "鈴木建設", json!(88000)),
        inv("INV-005", "高橋物産", json!("¥310,000")),
        inv("INV-006", "伊藤製作所", json!("△50,000")),
        inv("INV-007", "渡辺運輸", json!(1500000)),
        inv("INV-008", "山本電機", json!(64000)),
        inv("INV-009", "中村食品", json!(230000)),
        inv("INV-010", "小林印刷", json!("1,200,000")),
    ])
}

fn numbers(items: &Json) -> Vec<String> {
    items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["請求書番号"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn sampling_systematic_takes_key_items_then_every_kth_row() {
    let out = run(
        "control.sampling",
        json!({"population": invoices(), "method": "systematic", "size": 3, "key_item_threshold": 1000000}),
    );
    // Key items (≥ 1,000,000): INV-003, INV-007, INV-010. The other seven rows are sampled:
    // interval ⌊7 / 3⌋ = 2, start r ∈ {1, 2}; seed 42 draws r = 1, so rows 1, 3, 5 of the
    // seven (INV-001, INV-004, INV-006) — r = 2 would have been INV-002, INV-005, INV-008.
    assert_eq!(out["summary"]["interval"], 2);
    assert_eq!(out["summary"]["random_start"], 1);
    assert_eq!(
        pick(
            &out["samples"],
            &["請求書番号", "sample_no", "selection_reason"]
        ),
        vec![
            vec![json!("INV-001"), json!(1), json!("systematic")],
            vec![json!("INV-003"), json!(2), json!("key_item")],
            vec![json!("INV-004"), json!(3), json!("systematic")],
            vec![json!("INV-006"), json!(4), json!("systematic")],
            vec![json!("INV-007"), json!(5), json!("key_item")],
            vec![json!("INV-010"), json!(6), json!("key_item")],
        ]
    );
    assert_eq!(
        numbers(&out["not_selected"]),
        ["INV-002", "INV-005", "INV-008", "INV-009"]
    );
    // Population 120,000 + 45,000 + 2,400,000 + 88,000 + 310,000 − 50,000 + 1,500,000
    // + 64,000 + 230,000 + 1,200,000 = 5,907,000. Sample 120,000 + 2,400,000 + 88,000
    // − 50,000 + 1,500,000 + 1,200,000 = 5,258,000.
    assert_eq!(
        out["summary"],
        json!({"method": "systematic", "seed": 42, "size": 3, "population_count": 10,
               "population_amount": 5907000, "key_item_count": 3, "sample_count": 6,
               "sample_amount": 5258000, "interval": 2, "random_start": 1})
    );
}

#[test]
fn sampling_monetary_unit_walks_the_cumulative_absolute_amounts() {
    let out = run(
        "control.sampling",
        json!({"population": invoices(), "method": "monetary_unit", "size": 4}),
    );
    // Σ|amount| = 6,007,000 (the credit note counts 50,000), J = 6,007,000 / 4 = 1,501,750.
    // Cumulative ranges: 001 [0, 120,000) 002 [.., 165,000) 003 [.., 2,565,000)
    // 004 [.., 2,653,000) 005 [.., 2,963,000) 006 [.., 3,013,000) 007 [.., 4,513,000)
    // 008 [.., 4,577,000) 009 [.., 4,807,000) 010 [.., 6,007,000).
    // Seed 42 draws s = 771,973.5299: points 771,973.53 (003), 2,273,723.53 (003 again: it
    // is larger than J), 3,775,473.53 (007) and 5,277,223.53 (010). Three distinct invoices.
    assert_eq!(out["summary"]["interval"], 1501750);
    assert_eq!(out["summary"]["random_start"], 771973.5299);
    assert_eq!(numbers(&out["samples"]), ["INV-003", "INV-007", "INV-010"]);
    assert_eq!(out["samples"][0]["selection_reason"], "monetary_unit");
    assert_eq!(out["summary"]["sample_count"], 3);
    // 2,400,000 + 1,500,000 + 1,200,000.
    assert_eq!(out["summary"]["sample_amount"], 5100000);

    // Every row at least J is always hit, whatever the start: four rows of exactly
    // 250,000 = 1,000,000 / 4 each hold one point; the zero row is never selected.
    for seed in [1, 42, 2025, -7] {
        let rows = json!([
            {"伝票": "A", "amount": 250000}, {"伝票": "B", "amount": 0},
            {"伝票": "C", "amount": "250,000円"}, {"伝票": "D", "amount": -250000},
            {"伝票": "E", "amount": 250000},
        ]);
        let out = run(
            "control.sampling",
            json!({"population": rows, "method": "monetary_unit", "size": 4, "seed": seed}),
        );
        assert_eq!(
            pick(&out["samples"], &["伝票"]),
            vec![
                vec![json!("A")],
                vec![json!("C")],
                vec![json!("D")],
                vec![json!("E")]
            ],
            "seed {seed}"
        );
        assert_eq!(out["not_selected"], json!([rows[1]]));
    }
    // A size far above the rows does not walk a trillion points: every invoice (the credit
    // note too) is many intervals wide, so all ten are selected.
    let out = run(
        "control.sampling",
        json!({"population": invoices(), "method": "monetary_unit", "size": 1_000_000_000_000_i64}),
    );
    assert_eq!(out["summary"]["sample_count"], 10);
}

#[test]
fn sampling_the_same_seed_draws_the_same_sample() {
    let draw = |seed: i64| {
        let out = run(
            "control.sampling",
            json!({"population": invoices(), "size": 3, "seed": seed}),
        );
        numbers(&out["samples"])
    };
    // Pinned: a later version must redraw exactly these, or old working papers cannot be
    // reproduced (ChaCha20 from seed_from_u64, partial Fisher–Yates, rejection sampling).
    assert_eq!(draw(42), ["INV-007", "INV-008", "INV-010"]);
    assert_eq!(draw(42), draw(42));
    assert_eq!(draw(20250331), ["INV-001", "INV-004", "INV-005"]);
    let out = run(
        "control.sampling",
        json!({"population": invoices(), "size": 3}),
    );
    assert_eq!(out["samples"][0]["selection_reason"], "random");
    assert_eq!(out["not_selected"].as_array().unwrap().len(), 7);
    assert_eq!(out["summary"]["interval"], Json::Null);
    // A size above the population selects every row.
    let out = run(
        "control.sampling",
        json!({"population": invoices(), "size": 50}),
    );
    assert_eq!(out["summary"]["sample_count"], 10);
}

#[test]
fn sampling_refuses_bad_sizes_and_unreadable_amounts() {
    let cases = [
        (
            json!({"population": invoices(), "size": -1}),
            ErrorCode::InputInvalid,
        ),
        (
            json!({"population": invoices(), "size": 2, "method": "judgmental"}),
            ErrorCode::InputInvalid,
        ),
        (
            json!({"population": invoices(), "size": 2, "key_item_threshold": -5}),
            ErrorCode::InputInvalid,
        ),
        // MUS needs every amount: 未定 is not one.
        (
            json!({"population": [{"amount": 1000}, {"amount": "未定"}], "size": 1, "method": "monetary_unit"}),
            ErrorCode::BlockFailed,
        ),
        // Nothing to weigh: all amounts are zero.
        (
            json!({"population": [{"amount": 0}, {"amount": "0円"}], "size": 1, "method": "monetary_unit"}),
            ErrorCode::BlockFailed,
        ),
    ];
    for (inputs, want) in cases {
        assert_eq!(code("control.sampling", inputs.clone()), want, "{inputs}");
    }
}

// ---------------------------------------------------------------------------------------
// control.sod_check

#[test]
fn sod_check_finds_role_conflicts_and_self_approved_vouchers() {
    let assignments = json!([
        {"user": "佐藤", "roles": ["発注", "検収"]},
        {"user": "鈴木", "roles": "仕訳入力、仕訳承認"},
        {"user": "高橋", "role": "支払データ作成"},
        {"user": "田中", "roles": ["発注"]},
        {"user": "高橋", "role": "振込承認"},
        {"user": "伊藤", "roles": ["取引先マスタ登録", "支払データ作成"]},
    ]);
    let conflicts = json!([
        {"roles": ["発注", "検収"], "reason": "発注と検収を同じ人が行うと架空発注を隠せる", "severity": "error"},
        {"roles": ["仕訳入力", "仕訳承認"], "reason": "自分の仕訳を自分で承認できる"},
        {"roles": ["支払データ作成", "振込承認"], "reason": "不正な振込を単独で実行できる"},
        {"roles": ["取引先マスタ登録", "支払データ作成"], "severity": "warning"},
        {"roles": ["経費申請", "経費承認"]},
    ]);
    let vouchers = json!([
        {"voucher_no": "J-0301", "preparer": "山田", "approver": "佐藤"},
        {"voucher_no": "J-0302", "preparer": "鈴木", "approver": "鈴木"},
        {"voucher_no": "J-0303", "preparer": "経理　花子", "approver": "経理 花子"},
        {"voucher_no": "J-0304", "preparer": "田中", "approver": ""},
    ]);
    let out = run(
        "control.sod_check",
        json!({"assignments": assignments, "conflicts": conflicts, "transactions": vouchers}),
    );
    // 高橋's two rows merge into a conflict; 田中 holds only 発注. J-0303's names differ only by
    // a full-width space; J-0304 has no approver (not a SoD matter).
    assert_eq!(
        pick(&out["violations"], &["user", "kind", "roles", "severity"]),
        vec![
            vec![
                json!("佐藤"),
                json!("role_conflict"),
                json!(["発注", "検収"]),
                json!("error")
            ],
            vec![
                json!("鈴木"),
                json!("role_conflict"),
                json!(["仕訳入力", "仕訳承認"]),
                json!("error")
            ],
            vec![
                json!("高橋"),
                json!("role_conflict"),
                json!(["支払データ作成", "振込承認"]),
                json!("error")
            ],
            vec![
                json!("伊藤"),
                json!("role_conflict"),
                json!(["取引先マスタ登録", "支払データ作成"]),
                json!("warning")
            ],
            vec![
                json!("鈴木"),
                json!("self_approval"),
                json!(["preparer", "approver"]),
                json!("error")
            ],
            vec![
                json!("経理　花子"),
                json!("self_approval"),
                json!(["preparer", "approver"]),
                json!("error")
            ],
        ]
    );
    assert_eq!(
        out["violations"][0]["reason"],
        "発注と検収を同じ人が行うと架空発注を隠せる"
    );
    assert_eq!(
        out["violations"][3]["reason"],
        "取引先マスタ登録・支払データ作成 は同じ人が兼務してはいけません"
    );
    assert_eq!(out["violations"][0]["transaction"], Json::Null);
    assert_eq!(out["violations"][4]["transaction"], vouchers[1]);
    // Users 佐藤, 鈴木, 高橋, 田中, 伊藤 = 5; in violation 佐藤, 鈴木, 高橋, 伊藤 and 経理 花子 = 5.
    assert_eq!(
        out["summary"],
        json!({"user_count": 5, "violating_user_count": 5, "role_conflict_count": 4,
               "self_approval_count": 2, "transaction_count": 4,
               "unassigned_roles": ["経費申請", "経費承認"]})
    );

    // Other column names for the preparer and the approver.
    let out = run(
        "control.sod_check",
        json!({"assignments": [], "conflicts": conflicts,
               "transactions": [{"起票者": "ＡＢＣ", "承認者": "ABC"}],
               "preparer_field": "起票者", "approver_field": "承認者"}),
    );
    assert_eq!(out["summary"]["self_approval_count"], 1);
}

#[test]
fn sod_check_refuses_a_matrix_it_cannot_apply() {
    let assignments = json!([{"user": "佐藤", "roles": ["発注"]}]);
    let cases = [
        (
            json!({"assignments": assignments, "conflicts": []}),
            ErrorCode::InputInvalid,
        ),
        (
            json!({"assignments": assignments, "conflicts": [{"roles": ["発注"]}]}),
            ErrorCode::InputInvalid,
        ),
        (
            json!({"assignments": assignments, "conflicts": [{"roles": ["発注", "発注"]}]}),
            ErrorCode::InputInvalid,
        ),
        (
            json!({"assignments": [{"roles": ["発注"]}], "conflicts": [{"roles": ["発注", "検収"]}]}),
            ErrorCode::InputInvalid,
        ),
        (
            json!({"assignments": assignments, "conflicts": [{"roles": ["発注", "検収"], "severity": "fatal"}]}),
            ErrorCode::InputInvalid,
        ),
        // The approver column is not in the transactions at all.
        (
            json!({"assignments": assignments, "conflicts": [{"roles": ["発注", "検収"]}],
                   "transactions": [{"preparer": "佐藤", "承認者": "佐藤"}]}),
            ErrorCode::ColumnNotFound,
        ),
    ];
    for (inputs, want) in cases {
        assert_eq!(code("control.sod_check", inputs.clone()), want, "{inputs}");
    }
    // The columns the error lists are every row's, not the first row's: an export whose later
    // rows carry more columns names them all, so the right one can be picked.
    let dir = tempfile::tempdir().unwrap();
    let err = crate::matching::run_block(
        "control.sod_check",
        dir.path(),
        json!({"assignments": assignments, "conflicts": [{"roles": ["発注", "検収"]}],
               "transactions": [{"preparer": "佐藤"}, {"preparer": "鈴木", "承認者": "高橋"}]}),
    )
    .expect_err("no approver column");
    assert_eq!(err.code, ErrorCode::ColumnNotFound);
    assert!(
        err.hint
            .as_ref()
            .is_some_and(|h| h.0.contains("preparer, 承認者")),
        "{err:?}"
    );
}

// ---------------------------------------------------------------------------------------
// control.audit_log

fn sha256(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn audit_log_chains_each_line_to_the_one_before() {
    let dir = tempfile::tempdir().unwrap();
    keiri_fs::write_atomic(&dir.path().join("入金消込_3月.csv"), b"abc").unwrap();
    let first = run_block(
        "control.audit_log",
        dir.path(),
        json!({"event": "3月分入金消込の承認", "actor": "経理 花子",
               "details": {"消込件数": 42, "差額合計": 0}, "evidence_files": ["入金消込_3月.csv"]}),
    )
    .unwrap();
    // SHA-256("abc") is the FIPS 180-2 test vector.
    assert_eq!(
        first["entry"],
        json!({"seq": 1, "time": "2025-03-31T09:30:00+09:00", "node": "node", "actor": "経理 花子",
               "event": "3月分入金消込の承認", "details": {"消込件数": 42, "差額合計": 0},
               "evidence": [{"path": "入金消込_3月.csv",
                             "sha256": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                             "size": 3}],
               "prev_hash": null, "entry_hash": first["entry_hash"]})
    );
    let second = run_block(
        "control.audit_log",
        dir.path(),
        json!({"event": "仕訳CSVの出力", "details": "弥生会計形式 128行"}),
    )
    .unwrap();
    // Without --write the log is inside the node's folder; both entries went to one file.
    let log = dir.path().join("out/audit/audit_log.jsonl");
    assert_eq!(second["log_path"], json!(log.display().to_string()));
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(first["entry_hash"], json!(sha256(lines[0].as_bytes())));
    assert_eq!(second["entry_hash"], json!(sha256(lines[1].as_bytes())));
    assert_eq!(second["entry"]["seq"], 2);
    assert_eq!(second["entry"]["actor"], Json::Null);
    assert_eq!(second["entry"]["prev_hash"], first["entry_hash"]);
    assert_eq!(second["entry"]["evidence"], json!([]));
}

#[test]
fn audit_log_refuses_to_append_to_a_tampered_chain() {
    let append = |dir: &std::path::Path, event: &str| {
        run_block(
            "control.audit_log",
            dir,
            json!({"event": event, "log_path": "監査/証跡.jsonl"}),
        )
    };
    let log_of = |dir: &std::path::Path| dir.join("out/監査/証跡.jsonl");
    // (what is done to a three-line log, the line the break is reported at)
    type Tamper = fn(Vec<String>) -> Vec<String>;
    let cases: [(&str, Tamper, &str); 4] = [
        (
            "a changed amount in line 1",
            |mut l| {
                l[0] = l[0].replace("承認 1", "承認 9");
                l
            },
            "line 2",
        ),
        ("line 1 removed", |l| l[1..].to_vec(), "line 1"),
        (
            "lines 2 and 3 swapped",
            |l| vec![l[0].clone(), l[2].clone(), l[1].clone()],
            "line 2",
        ),
        (
            "a line that is not JSON",
            |mut l| {
                l.insert(1, "改ざん".to_string());
                l
            },
            "line 2",
        ),
    ];
    for (what, tamper, at) in cases {
        let dir = tempfile::tempdir().unwrap();
        for n in 1..=3 {
            append(dir.path(), &format!("承認 {n}")).unwrap();
        }
        let lines: Vec<String> = std::fs::read_to_string(log_of(dir.path()))
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        let tampered = tamper(lines).join("\n") + "\n";
        keiri_fs::write_atomic(&log_of(dir.path()), tampered.as_bytes()).unwrap();
        let err = append(dir.path(), "承認 4").unwrap_err();
        assert_eq!(err.code, ErrorCode::AuditChainBroken, "{what}: {err}");
        assert!(err.message_en.contains(at), "{what}: {}", err.message_en);
        assert!(err.hint.is_some());
        // Nothing was appended.
        assert_eq!(
            std::fs::read_to_string(log_of(dir.path())).unwrap(),
            tampered,
            "{what}"
        );
    }
}

#[test]
fn audit_log_writes_to_the_workspace_only_with_write() {
    let dir = tempfile::tempdir().unwrap();
    let out = crate::matching::run_block_with(
        "control.audit_log",
        dir.path(),
        json!({"event": "月次締めの完了", "log_path": "監査/audit.jsonl"}),
        true,
    )
    .unwrap();
    let path = dir.path().join("監査/audit.jsonl");
    assert_eq!(out["log_path"], json!(path.display().to_string()));
    assert!(path.exists());
    let cases = [
        (
            json!({"event": "x", "log_path": "../外/audit.jsonl"}),
            ErrorCode::InputInvalid,
        ),
        (json!({"event": "  "}), ErrorCode::InputInvalid),
        (
            json!({"event": "x", "evidence_files": ["ない.pdf"]}),
            ErrorCode::FileNotFound,
        ),
    ];
    for (inputs, want) in cases {
        assert_eq!(code("control.audit_log", inputs.clone()), want, "{inputs}");
    }
}

/// The words a check writes into its rows are in the run's language, one language per report
/// (before: 「売上高 の増減 … / change over the threshold」 in every run).
#[test]
fn a_checks_messages_are_in_the_runs_language() {
    use keiri_run::records::RunDir;
    let csv = "勘定科目,当月,前月\n仕入高,560000,400000\n売上高,1000000,1100000\n";
    let yaml = "id: lang\ngraph:\n  - {id: read, block: csv.read, in: {path: pl.csv}, out: {rows: rows}}\n  - {id: var, block: control.variance_check, in: {rows: \"${read.rows}\", key_field: 勘定科目, current_field: 当月, comparison_field: 前月}, out: {issues: issues}}\n";
    for (lang, want) in [
        (
            keiri_plan::Lang::Ja,
            "仕入高 の増減 160000 がしきい値を超えています",
        ),
        (
            keiri_plan::Lang::En,
            "the change of 仕入高, 160000, is over the threshold",
        ),
    ] {
        let (outcome, _, ws) =
            crate::support::run_builtins(&[("pl.csv", csv)], yaml, |o| o.lang = lang);
        let dir = RunDir::open(&ws.path().join("runs"), "lang", &outcome.run_id).unwrap();
        let issues = dir.load_outputs("var").unwrap().0["issues"].to_json();
        // 仕入高 rose 40 % (160,000); 売上高 fell 9 %, under the 20 % threshold.
        assert_eq!(issues.as_array().unwrap().len(), 1, "{issues}");
        assert_eq!(issues[0]["message"], want);
    }
}
