//! `transforms/*` blocks: one table of cases per block, Japanese inputs, expected outputs
//! written by hand (the arithmetic is in the comments).

use keiri_run::block::{BlockError, ErrorCode};
use serde_json::{Value as Json, json};

/// Runs builtin `id` on `inputs` (a JSON object) and returns its outputs as JSON.
pub(crate) fn run(id: &str, dir: &std::path::Path, inputs: Json) -> Result<Json, BlockError> {
    crate::matching::run_block(id, dir, inputs)
}

fn check(id: &str, inputs: Json, expect: Json) {
    let dir = tempfile::tempdir().unwrap();
    let got = run(id, dir.path(), inputs.clone())
        .unwrap_or_else(|e| panic!("{id} failed: {e:?}\ninputs: {inputs}"));
    for (key, want) in expect.as_object().unwrap() {
        assert_eq!(
            &got[key], want,
            "{id} output {key}\ninputs: {inputs}\ngot: {:#}",
            got[key]
        );
    }
}

fn check_error(id: &str, inputs: Json, code: ErrorCode, message_has: &str) -> BlockError {
    let dir = tempfile::tempdir().unwrap();
    match run(id, dir.path(), inputs.clone()) {
        Err(e) => {
            assert_eq!(e.code, code, "{id}: {e:?}");
            assert!(
                e.message_en.contains(message_has),
                "{id}: {:?} should mention {message_has}",
                e.message_en
            );
            e
        }
        Ok(out) => panic!("{id} should fail with {code:?}, got {out}"),
    }
}

#[test]
fn coerce_types() {
    let rows = json!([
        {"請求日": "令和6年4月1日", "金額": "1,200", "数量": "3", "承認": "はい"},
        {"請求日": "2024/4/15", "金額": "△300", "数量": "x", "承認": "いいえ"}
    ]);
    let columns = json!([
        {"field": "請求日", "to": "date"}, {"field": "金額", "to": "number"},
        {"field": "数量", "to": "integer"}, {"field": "承認", "to": "boolean"}
    ]);
    check(
        "transforms.coerce_types",
        json!({"rows": rows, "columns": columns}),
        json!({
            "rows": [
                {"請求日": "2024-04-01", "金額": 1200.0, "数量": 3, "承認": true},
                {"請求日": "2024-04-15", "金額": -300.0, "数量": null, "承認": false}
            ],
            "errors": [{"row_index": 1, "field": "数量", "value": "x", "message": "cannot convert to integer"}]
        }),
    );
    // keep: the unreadable "x" stays, so the column is mixed and becomes text.
    check(
        "transforms.coerce_types",
        json!({"rows": rows, "columns": [{"field": "数量", "to": "integer"}], "on_error": "keep"}),
        json!({"rows": [
            {"請求日": "令和6年4月1日", "金額": "1,200", "数量": "3", "承認": "はい"},
            {"請求日": "2024/4/15", "金額": "△300", "数量": "x", "承認": "いいえ"}
        ]}),
    );
    // A date format names the layout exactly.
    check(
        "transforms.coerce_types",
        json!({"rows": [{"d": "01.04.2024"}], "columns": [{"field": "d", "to": "date", "format": "%d.%m.%Y"}]}),
        json!({"rows": [{"d": "2024-04-01"}]}),
    );
    check_error(
        "transforms.coerce_types",
        json!({"rows": rows, "columns": columns, "on_error": "error"}),
        ErrorCode::BlockFailed,
        "integer",
    );
    check_error(
        "transforms.coerce_types",
        json!({"rows": rows, "columns": [{"field": "単価", "to": "number"}]}),
        ErrorCode::ColumnNotFound,
        "単価",
    );
}

#[test]
fn compute_columns() {
    check(
        "transforms.compute_columns",
        json!({
            "rows": [
                {"請求額": "1,100", "入金額": 1000, "請求日": "2024-04-01", "入金日": "R6.4.30"},
                {"請求額": "2,000", "入金額": 2000, "請求日": "2024-05-01", "入金日": "令和6年5月1日"}
            ],
            "columns": [
                {"name": "差額", "expr": "請求額 - 入金額"},
                {"name": "状態", "expr": "if(差額 > 0, '未収', '消込済')"},
                {"name": "日数", "expr": "days_between(請求日, 入金日)"},
                {"name": "税", "expr": "floor(入金額 * 0.1)"}
            ]
        }),
        json!({
            "rows": [
                // 1,100 - 1,000 = 100; April 1 → April 30 is 29 days.
                {"請求額": "1,100", "入金額": 1000, "請求日": "2024-04-01", "入金日": "R6.4.30", "差額": 100, "状態": "未収", "日数": 29, "税": 100},
                {"請求額": "2,000", "入金額": 2000, "請求日": "2024-05-01", "入金日": "令和6年5月1日", "差額": 0, "状態": "消込済", "日数": 0, "税": 200}
            ],
            "errors": []
        }),
    );
    check(
        "transforms.compute_columns",
        json!({"rows": [{"a": 1, "b": 0}, {"a": 4, "b": 2}], "columns": [{"name": "c", "expr": "a / b"}]}),
        json!({
            "rows": [{"a": 1, "b": 0, "c": null}, {"a": 4, "b": 2, "c": 2}],
            "errors": [{"row_index": 0, "field": "c", "expr": "a / b", "message": "division by zero"}]
        }),
    );
    check_error(
        "transforms.compute_columns",
        json!({"rows": [{"a": 1, "b": 0}], "columns": [{"name": "c", "expr": "a / b"}], "on_error": "error"}),
        ErrorCode::BlockFailed,
        "division by zero",
    );
    check_error(
        "transforms.compute_columns",
        json!({"rows": [{"a": 1}], "columns": [{"name": "c", "expr": "a +"}]}),
        ErrorCode::InputInvalid,
        "cannot parse",
    );
}

#[test]
fn compute_tax_per_line_with_reduced_flags() {
    // 弁当 1,080 tax-included at 8 %: 1,080 × 8/108 = 80. 文具 1,100 at 10 %: 1,100 × 10/110 = 100.
    check(
        "transforms.compute_tax",
        json!({
            "rows": [{"品名": "弁当", "金額": "1,080", "軽減": "※"}, {"品名": "文具", "金額": 1100, "軽減": ""}],
            "amount_field": "金額", "amount_basis": "tax_included", "reduced_flag_field": "軽減"
        }),
        json!({
            "rows": [
                {"品名": "弁当", "金額": "1,080", "軽減": "※", "tax_rate": 0.08, "tax_amount": 80, "net_amount": 1000, "gross_amount": 1080},
                {"品名": "文具", "金額": 1100, "軽減": "", "tax_rate": 0.1, "tax_amount": 100, "net_amount": 1000, "gross_amount": 1100}
            ],
            "totals_by_rate": [
                {"tax_rate": 0.1, "net_amount": 1000, "tax_amount": 100, "gross_amount": 1100},
                {"tax_rate": 0.08, "net_amount": 1000, "tax_amount": 80, "gross_amount": 1080}
            ]
        }),
    );
}

#[test]
fn compute_tax_rounds_once_per_invoice_and_rate() {
    // Invoice A: three 105-yen lines at 8 % → 315 × 8 % = 25.2 → 25 once (per line would be
    // 8 + 8 + 8 = 24); spread 9/8/8. One 999-yen line at 10 % → 99.9 → 99.
    // Invoice B: 1,000 at "10%" → 100.
    let rows = json!([
        {"請求書番号": "A", "金額": 105, "税率": "8%"},
        {"請求書番号": "A", "金額": 105, "税率": "8%"},
        {"請求書番号": "A", "金額": 105, "税率": "８％"},
        {"請求書番号": "A", "金額": 999, "税率": 0.1},
        {"請求書番号": "B", "金額": 1000, "税率": "10%"}
    ]);
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        "transforms.compute_tax",
        dir.path(),
        json!({"rows": rows, "amount_field": "金額", "rate_field": "税率", "rounding_unit": "invoice", "invoice_key": "請求書番号"}),
    )
    .unwrap();
    let taxes: Vec<&Json> = out["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["tax_amount"])
        .collect();
    assert_eq!(
        taxes,
        [&json!(9), &json!(8), &json!(8), &json!(99), &json!(100)]
    );
    assert_eq!(
        out["totals_by_rate"],
        json!([
            {"tax_rate": 0.1, "net_amount": 1999, "tax_amount": 199, "gross_amount": 2198},
            {"tax_rate": 0.08, "net_amount": 315, "tax_amount": 25, "gross_amount": 340}
        ])
    );
    // 切り上げ per line: 105 × 8 % = 8.4 → 9 each.
    let out = run(
        "transforms.compute_tax",
        dir.path(),
        json!({"rows": [{"金額": 105}], "amount_field": "金額", "default_rate": 0.08, "rounding": "ceil"}),
    )
    .unwrap();
    assert_eq!(out["rows"][0]["tax_amount"], json!(9));
    check_error(
        "transforms.compute_tax",
        json!({"rows": rows, "amount_field": "金額", "rounding_unit": "invoice"}),
        ErrorCode::InputInvalid,
        "invoice",
    );
    check_error(
        "transforms.compute_tax",
        json!({"rows": [{"金額": "不明"}], "amount_field": "金額"}),
        ErrorCode::BlockFailed,
        "not an amount",
    );
}

#[test]
fn concat_rows() {
    check(
        "transforms.concat_rows",
        json!({
            "tables": [[{"科目": "旅費交通費", "金額": 100}], [{"科目": "会議費", "金額": 200, "部門": "営業部"}]],
            "source_labels": ["本社", "大阪支店"],
            "source_field": "拠点"
        }),
        json!({
            "rows": [
                {"科目": "旅費交通費", "金額": 100, "拠点": "本社", "部門": null},
                {"科目": "会議費", "金額": 200, "拠点": "大阪支店", "部門": "営業部"}
            ],
            "columns": ["科目", "金額", "拠点", "部門"]
        }),
    );
    check_error(
        "transforms.concat_rows",
        json!({"tables": [[{"a": 1}]], "source_labels": ["x", "y"]}),
        ErrorCode::InputInvalid,
        "labels",
    );
}

#[test]
fn deduplicate() {
    let rows = json!([
        {"請求書番号": "INV-001", "取引先": "株式会社あさひ", "金額": 1000},
        {"請求書番号": "INV-002", "取引先": "株式会社あさひ", "金額": 500},
        {"請求書番号": "INV-001", "取引先": "株式会社あさひ", "金額": 1200}
    ]);
    check(
        "transforms.deduplicate",
        json!({"rows": rows, "keys": ["請求書番号", "取引先"]}),
        json!({
            "rows": [rows[0], rows[1]],
            "duplicates": [rows[2]],
            "duplicate_count": 1
        }),
    );
    check(
        "transforms.deduplicate",
        json!({"rows": rows, "keys": ["請求書番号"], "keep": "last"}),
        json!({"rows": [rows[1], rows[2]], "duplicates": [rows[0]], "duplicate_count": 1}),
    );
    // Without keys every column counts: no two rows are equal.
    check(
        "transforms.deduplicate",
        json!({"rows": rows}),
        json!({"duplicate_count": 0}),
    );
    let e = check_error(
        "transforms.deduplicate",
        json!({"rows": rows, "keys": ["伝票番号"]}),
        ErrorCode::ColumnNotFound,
        "伝票番号",
    );
    assert_eq!(
        e.hint.unwrap().1,
        "existing columns: 請求書番号, 取引先, 金額"
    );
}

#[test]
fn filter_rows() {
    let rows = json!([
        {"勘定科目": "交際費", "金額": "120,000", "取引先": "料亭さくら"},
        {"勘定科目": "交際費", "金額": "8,000", "取引先": ""},
        {"勘定科目": "会議費", "金額": "150,000", "取引先": "ホテル"}
    ]);
    let cases = [
        (
            "金額 >= 100000 and 勘定科目 == \"交際費\"",
            "keep",
            vec![0],
            vec![1, 2],
        ),
        (
            "金額 >= 100000 and 勘定科目 == \"交際費\"",
            "drop",
            vec![1, 2],
            vec![0],
        ),
        ("取引先 != \"\"", "keep", vec![0, 2], vec![1]),
        (
            "is_empty(取引先) or 勘定科目 in ['会議費']",
            "keep",
            vec![1, 2],
            vec![0],
        ),
        ("contains(取引先, 'さくら')", "keep", vec![0], vec![1, 2]),
        ("not 金額 < 10000", "keep", vec![0, 2], vec![1]),
    ];
    for (condition, mode, kept, excluded) in cases {
        let pick = |idx: &[usize]| Json::Array(idx.iter().map(|&i| rows[i].clone()).collect());
        check(
            "transforms.filter_rows",
            json!({"rows": rows, "condition": condition, "mode": mode}),
            json!({"rows": pick(&kept), "excluded": pick(&excluded), "count": kept.len()}),
        );
    }
    check_error(
        "transforms.filter_rows",
        json!({"rows": rows, "condition": "部門 == '営業'"}),
        ErrorCode::ColumnNotFound,
        "部門",
    );
}

/// A condition on one text column is a function of that cell: a statement's 区分 column of
/// repeated values (and an empty cell, read as null) is filtered as the rows say, and the
/// first row whose value cannot be evaluated (the 0-based row 3's 「不明」, not row 4's
/// second one) is the row the error names — also when it is compared with a number (it
/// sorted after "1000" as text, and such rows were kept).
#[test]
fn filter_rows_on_one_text_column_of_repeated_values() {
    let rows = json!([
        {"区分": "入金", "金額": "1,000"},
        {"区分": "出金", "金額": "2,500"},
        {"区分": "入金", "金額": "1,000"},
        {"区分": null, "金額": "不明"},
        {"区分": "入金", "金額": "不明"},
        {"区分": "振替", "金額": "300"},
    ]);
    let pick = |idx: &[usize]| Json::Array(idx.iter().map(|&i| rows[i].clone()).collect());
    for (condition, kept, excluded) in [
        ("区分 == '入金'", vec![0, 2, 4], vec![1, 3, 5]),
        ("区分 != '入金'", vec![1, 3, 5], vec![0, 2, 4]),
        (
            "is_empty(区分) or 区分 == '振替'",
            vec![3, 5],
            vec![0, 1, 2, 4],
        ),
        ("金額 == 1000", vec![0, 2], vec![1, 3, 4, 5]),
    ] {
        check(
            "transforms.filter_rows",
            json!({"rows": rows, "condition": condition}),
            json!({"rows": pick(&kept), "excluded": pick(&excluded), "count": kept.len()}),
        );
    }
    for condition in ["金額 * 2 > 1000", "金額 >= 1000"] {
        check_error(
            "transforms.filter_rows",
            json!({"rows": rows, "condition": condition}),
            ErrorCode::BlockFailed,
            "row 3: cannot evaluate",
        );
    }
}

#[test]
fn fiscal_period() {
    check(
        "transforms.fiscal_period",
        json!({
            "rows": [{"計上日": "2025-03-31"}, {"計上日": "令和6年4月1日"}, {"計上日": ""}],
            "date_field": "計上日",
            "date": "2024-10-15"
        }),
        json!({
            "rows": [
                {"計上日": "2025-03-31", "fiscal_year": 2024, "fiscal_quarter": 4, "fiscal_month": 12, "year_month": "2025-03"},
                {"計上日": "令和6年4月1日", "fiscal_year": 2024, "fiscal_quarter": 1, "fiscal_month": 1, "year_month": "2024-04"},
                {"計上日": "", "fiscal_year": null, "fiscal_quarter": null, "fiscal_month": null, "year_month": null}
            ],
            "period": {
                "fiscal_year": 2024, "fiscal_quarter": 3, "fiscal_month": 7,
                "year_start": "2024-04-01", "year_end": "2025-03-31",
                "quarter_start": "2024-10-01", "quarter_end": "2024-12-31",
                "month_start": "2024-10-01", "month_end": "2024-10-31"
            }
        }),
    );
    // December year end, labelled by the end year.
    check(
        "transforms.fiscal_period",
        json!({"date": "2024/2/10", "fiscal_year_start_month": 1, "fiscal_year_label": "end_year"}),
        json!({"period": {
            "fiscal_year": 2024, "fiscal_quarter": 1, "fiscal_month": 2,
            "year_start": "2024-01-01", "year_end": "2024-12-31",
            "quarter_start": "2024-01-01", "quarter_end": "2024-03-31",
            "month_start": "2024-02-01", "month_end": "2024-02-29"
        }, "rows": []}),
    );
    check_error(
        "transforms.fiscal_period",
        json!({"date": "2024-01-01", "fiscal_year_start_month": 13}),
        ErrorCode::InputInvalid,
        "1 to 12",
    );
    check_error(
        "transforms.fiscal_period",
        json!({}),
        ErrorCode::InputInvalid,
        "rows or date",
    );
}

#[test]
fn group_aggregate() {
    let rows = json!([
        {"勘定科目": "旅費交通費", "月": "2024-04", "金額": "1,000"},
        {"勘定科目": "旅費交通費", "月": "2024-04", "金額": "2,500"},
        {"勘定科目": "会議費", "月": "2024-04", "金額": "3,000"},
        {"勘定科目": "旅費交通費", "月": "2024-05", "金額": "△500"}
    ]);
    check(
        "transforms.group_aggregate",
        json!({"rows": rows, "by": ["勘定科目", "月"], "aggregations": [
            {"field": "金額", "op": "sum", "as": "金額合計"}, {"field": "金額", "op": "count", "as": "件数"}
        ]}),
        json!({
            "rows": [
                {"勘定科目": "旅費交通費", "月": "2024-04", "金額合計": 3500, "件数": 2},
                {"勘定科目": "会議費", "月": "2024-04", "金額合計": 3000, "件数": 1},
                {"勘定科目": "旅費交通費", "月": "2024-05", "金額合計": -500, "件数": 1}
            ],
            "group_count": 3
        }),
    );
    // Every pairing of two text keys is its own group, in order of first appearance; a
    // missing key is a group of its own; an integer key groups as well.
    check(
        "transforms.group_aggregate",
        json!({"rows": [
            {"部門": "営業", "科目": "会議費", "期": 1, "金額": 1},
            {"部門": "総務", "科目": "交際費", "期": 1, "金額": 2},
            {"部門": "営業", "科目": "交際費", "期": 2, "金額": 4},
            {"部門": "総務", "科目": "会議費", "期": 2, "金額": 8},
            {"部門": null, "科目": "会議費", "期": 1, "金額": 16},
            {"部門": "営業", "科目": "会議費", "期": 1, "金額": 32},
            {"部門": "総務", "科目": "交際費", "期": 1, "金額": 64}
        ], "by": ["部門", "科目", "期"], "aggregations": [{"field": "金額", "op": "sum", "as": "計"}]}),
        json!({
            "rows": [
                {"部門": "営業", "科目": "会議費", "期": 1, "計": 33},
                {"部門": "総務", "科目": "交際費", "期": 1, "計": 66},
                {"部門": "営業", "科目": "交際費", "期": 2, "計": 4},
                {"部門": "総務", "科目": "会議費", "期": 2, "計": 8},
                {"部門": null, "科目": "会議費", "期": 1, "計": 16}
            ],
            "group_count": 5
        }),
    );
    // A decimal key takes Polars' own grouping, with the same result shape.
    check(
        "transforms.group_aggregate",
        json!({"rows": [{"税率": 0.1, "金額": 100}, {"税率": 0.08, "金額": 50}, {"税率": 0.1, "金額": 200}],
               "by": ["税率"], "aggregations": [{"field": "金額", "op": "sum", "as": "計"}]}),
        json!({"rows": [{"税率": 0.1, "計": 300}, {"税率": 0.08, "計": 50}], "group_count": 2}),
    );
    // No keys: one group. (1,000 + 2,500 + 3,000 - 500) / 4 = 1,500.
    check(
        "transforms.group_aggregate",
        json!({"rows": rows, "by": [], "aggregations": [
            {"field": "金額", "op": "mean", "as": "平均"}, {"field": "月", "op": "max", "as": "最終月"}, {"field": "勘定科目", "op": "first"}
        ]}),
        json!({"rows": [{"平均": 1500.0, "最終月": "2024-05", "勘定科目_first": "旅費交通費"}], "group_count": 1}),
    );
    check_error(
        "transforms.group_aggregate",
        json!({"rows": rows, "by": ["部門"], "aggregations": [{"field": "金額", "op": "sum"}]}),
        ErrorCode::ColumnNotFound,
        "部門",
    );
    check_error(
        "transforms.group_aggregate",
        json!({"rows": rows, "by": [], "aggregations": [{"field": "金額", "op": "median"}]}),
        ErrorCode::InputInvalid,
        "median",
    );
}

#[test]
fn join() {
    let left = json!([
        {"取引先コード": "C001", "金額": 1000},
        {"取引先コード": "C002", "金額": 2000},
        {"取引先コード": "C003", "金額": 500}
    ]);
    let right = json!([
        {"仕入先コード": "C001", "取引先名": "株式会社あさひ", "金額": 9},
        {"仕入先コード": "C002", "取引先名": "いろは商事", "金額": 8},
        {"仕入先コード": "C009", "取引先名": "未使用", "金額": 7}
    ]);
    check(
        "transforms.join",
        json!({"left": left, "right": right, "keys": [{"left": "取引先コード", "right": "仕入先コード"}]}),
        json!({
            "rows": [
                {"取引先コード": "C001", "金額_left": 1000, "取引先名": "株式会社あさひ", "金額_right": 9},
                {"取引先コード": "C002", "金額_left": 2000, "取引先名": "いろは商事", "金額_right": 8},
                {"取引先コード": "C003", "金額_left": 500, "取引先名": null, "金額_right": null}
            ],
            "summary": {"left_rows": 3, "right_rows": 3, "rows": 3, "matched_left_rows": 2, "unmatched_left_rows": 1,
                        "matched_right_rows": 2, "unmatched_right_rows": 1}
        }),
    );
    // Same key name, number against text: joined as text; inner keeps matches only.
    check(
        "transforms.join",
        json!({"left": [{"社員番号": 101, "氏名": "山田"}, {"社員番号": 102, "氏名": "佐藤"}],
               "right": [{"社員番号": "101", "支給額": 300000}], "keys": "社員番号", "how": "inner"}),
        json!({"rows": [{"社員番号": "101", "氏名": "山田", "支給額": 300000}]}),
    );
    check_error(
        "transforms.join",
        json!({"left": left, "right": right, "keys": ["取引先コード"]}),
        ErrorCode::ColumnNotFound,
        "取引先コード",
    );
}

/// The summary counts what the join pairs, by two keys at once: a day and an amount repeated
/// on both sides multiply, a row with a null in either key pairs with nothing, and the same
/// day with another amount is no match.
#[test]
fn join_summary_counts_pairs_by_every_key() {
    let bank = json!([
        {"日付": "2025-04-01", "金額": 1000, "摘要": "a"},
        {"日付": "2025-04-01", "金額": 1000, "摘要": "b"},
        {"日付": "2025-04-01", "金額": 2000, "摘要": "c"},
        {"日付": null, "金額": 1000, "摘要": "d"},
        {"日付": "2025-04-02", "金額": 3000, "摘要": "e"}
    ]);
    let ledger = json!([
        {"伝票日付": "2025-04-01", "金額": 1000, "伝票": 1},
        {"伝票日付": "2025-04-01", "金額": 1000, "伝票": 2},
        {"伝票日付": "2025-04-01", "金額": 1000, "伝票": 3},
        {"伝票日付": "2025-04-02", "金額": 2000, "伝票": 4},
        {"伝票日付": "2025-04-02", "金額": null, "伝票": 5}
    ]);
    let keys = json!([{"left": "日付", "right": "伝票日付"}, "金額"]);
    // By hand: (04-01, 1000) is 2 rows × 3 rows = 6 pairs; nothing else pairs (04-01 2000,
    // 04-02 3000 and 04-02 2000 have no partner; the nulls never match). Matched: 2 bank rows,
    // 3 ledger rows.
    let out = crate::matching::run_block(
        "transforms.join",
        tempfile::tempdir().unwrap().path(),
        json!({"left": bank, "right": ledger, "keys": keys, "how": "inner"}),
    )
    .unwrap();
    assert_eq!(
        out["summary"],
        json!({"left_rows": 5, "right_rows": 5, "rows": 6, "matched_left_rows": 2,
               "unmatched_left_rows": 3, "matched_right_rows": 3, "unmatched_right_rows": 2})
    );
    let pairs: Vec<(String, i64)> = out["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["摘要"].as_str().unwrap().to_string(),
                r["伝票"].as_i64().unwrap(),
            )
        })
        .collect();
    let expected = [("a", 1), ("a", 2), ("a", 3), ("b", 1), ("b", 2), ("b", 3)];
    assert_eq!(pairs, expected.map(|(a, b)| (a.to_string(), b)));
}

#[test]
fn normalize_amounts() {
    check(
        "transforms.normalize_amounts",
        json!({
            "rows": [{"借方": "¥1,234", "貸方": "△500"}, {"借方": "（１，０００）", "貸方": "不明"}, {"借方": "1,000円", "貸方": ""}],
            "fields": ["借方", "貸方"], "on_error": "empty"
        }),
        json!({
            "rows": [{"借方": 1234, "貸方": -500}, {"借方": -1000, "貸方": null}, {"借方": 1000, "貸方": null}],
            "errors": [{"row_index": 1, "field": "貸方", "value": "不明", "message": "not an amount"}]
        }),
    );
    // 千円 tables: 1,234 thousand yen = 1,234,000 yen; ▲ is negative; 0.5 thousand = 500.
    check(
        "transforms.normalize_amounts",
        json!({"rows": [{"金額": "1,234"}, {"金額": "▲12"}, {"金額": "0.5"}], "fields": ["金額"], "unit": "thousand"}),
        json!({"rows": [{"金額": 1234000}, {"金額": -12000}, {"金額": 500}], "errors": []}),
    );
    // keep (the default) leaves unreadable text, so the column stays text.
    check(
        "transforms.normalize_amounts",
        json!({"rows": [{"金額": "1,000"}, {"金額": "要確認"}], "fields": ["金額"]}),
        json!({"rows": [{"金額": "1000"}, {"金額": "要確認"}]}),
    );
    check_error(
        "transforms.normalize_amounts",
        json!({"rows": [{"金額": "x"}], "fields": ["金額"], "on_error": "error"}),
        ErrorCode::BlockFailed,
        "not an amount",
    );
}

#[test]
fn normalize_dates() {
    check(
        "transforms.normalize_dates",
        json!({
            "rows": [{"請求日": "令和6年4月1日"}, {"請求日": "H31/4/30"}, {"請求日": "２０２４年５月１０日"}, {"請求日": "45383"}],
            "fields": ["請求日"]
        }),
        json!({"rows": [{"請求日": "2024-04-01"}, {"請求日": "2019-04-30"}, {"請求日": "2024-05-10"}, {"請求日": "2024-04-01"}], "errors": []}),
    );
    check(
        "transforms.normalize_dates",
        json!({"rows": [{"日付": 45383}, {"日付": 20240501}], "fields": ["日付"], "output_format": "%Y年%m月%d日"}),
        json!({"rows": [{"日付": "2024年04月01日"}, {"日付": "2024年05月01日"}]}),
    );
    check(
        "transforms.normalize_dates",
        json!({"rows": [{"入社日": "R6.4.1"}, {"入社日": "不明"}], "fields": ["入社日"]}),
        json!({
            "rows": [{"入社日": "2024-04-01"}, {"入社日": "不明"}],
            "errors": [{"row_index": 1, "field": "入社日", "value": "不明", "message": "not a date"}]
        }),
    );
    check(
        "transforms.normalize_dates",
        json!({"rows": [{"入社日": "R6.4.1"}, {"入社日": "不明"}], "fields": ["入社日"], "on_error": "empty"}),
        json!({"rows": [{"入社日": "2024-04-01"}, {"入社日": null}]}),
    );
}

#[test]
fn pick_value() {
    let source =
        json!({"collected_data": {"invoice_csv": "data/請求書.csv"}, "rows": [{"金額": 1200}]});
    check(
        "transforms.pick_value",
        json!({"source": source, "path": "collected_data.invoice_csv"}),
        json!({"value": "data/請求書.csv", "found": true}),
    );
    check(
        "transforms.pick_value",
        json!({"source": source, "path": "rows.0.金額"}),
        json!({"value": 1200, "found": true}),
    );
    check(
        "transforms.pick_value",
        json!({"source": source, "path": "rows.5.金額", "default": 0}),
        json!({"value": 0, "found": false}),
    );
    check_error(
        "transforms.pick_value",
        json!({"source": source, "path": "summary.total"}),
        ErrorCode::BlockFailed,
        "summary.total",
    );
}

#[test]
fn pivot() {
    check(
        "transforms.pivot",
        json!({
            "rows": [
                {"科目": "旅費交通費", "年月": "2024-04", "金額": 100},
                {"科目": "旅費交通費", "年月": "2024-05", "金額": 200},
                {"科目": "会議費", "年月": "2024-04", "金額": 300},
                {"科目": "旅費交通費", "年月": "2024-04", "金額": 50}
            ],
            "index": ["科目"], "columns": "年月", "values": "金額"
        }),
        json!({
            "rows": [
                {"科目": "旅費交通費", "2024-04": 150, "2024-05": 200},
                {"科目": "会議費", "2024-04": 300, "2024-05": null}
            ],
            "columns": ["科目", "2024-04", "2024-05"]
        }),
    );
    // A missing cell stays empty by default: never a 0 that looks like a date or an amount.
    check(
        "transforms.pivot",
        json!({
            "rows": [
                {"取引先": "東京商事", "区分": "請求", "日付": "2025-03-31"},
                {"取引先": "東京商事", "区分": "入金", "日付": "2025-04-30"},
                {"取引先": "大阪物産", "区分": "請求", "日付": "2025-03-15"}
            ],
            "index": ["取引先"], "columns": "区分", "values": "日付", "aggfunc": "first"
        }),
        json!({
            "rows": [
                {"取引先": "東京商事", "請求": "2025-03-31", "入金": "2025-04-30"},
                {"取引先": "大阪物産", "請求": "2025-03-15", "入金": null}
            ]
        }),
    );
    check(
        "transforms.pivot",
        json!({
            "rows": [
                {"科目": "会議費", "年月": "2024-04", "金額": 300},
                {"科目": "旅費交通費", "年月": "2024-05", "金額": 200}
            ],
            "index": ["科目"], "columns": "年月", "values": "金額", "fill_value": 0
        }),
        json!({
            "rows": [
                {"科目": "会議費", "2024-04": 300, "2024-05": 0},
                {"科目": "旅費交通費", "2024-04": 0, "2024-05": 200}
            ]
        }),
    );
    check(
        "transforms.pivot",
        json!({
            "rows": [{"部門": "営業", "科目": "交際費", "金額": "1,000"}, {"部門": "営業", "科目": "交際費", "金額": "3,000"}, {"部門": "総務", "科目": "会議費", "金額": "500"}],
            "index": ["部門"], "columns": "科目", "values": "金額", "aggfunc": "mean", "fill_value": "-"
        }),
        json!({"rows": [{"部門": "営業", "交際費": 2000.0, "会議費": "-"}, {"部門": "総務", "交際費": "-", "会議費": 500.0}]}),
    );
}

#[test]
fn rename_and_select_columns() {
    let rows = json!([{"得意先名": "株式会社あさひ", "請求金額": 1000, "担当": "山田"}]);
    check(
        "transforms.rename_columns",
        json!({"rows": rows, "mapping": {"得意先名": "取引先", "請求金額": "金額"}}),
        json!({"rows": [{"取引先": "株式会社あさひ", "金額": 1000, "担当": "山田"}], "columns": ["取引先", "金額", "担当"]}),
    );
    check(
        "transforms.rename_columns",
        json!({"rows": rows, "mapping": {"請求金額": "金額"}, "drop_unmapped": true}),
        json!({"rows": [{"金額": 1000}], "columns": ["金額"]}),
    );
    check_error(
        "transforms.rename_columns",
        json!({"rows": rows, "mapping": {"得意先名": "担当"}}),
        ErrorCode::BlockFailed,
        "two columns",
    );
    check_error(
        "transforms.rename_columns",
        json!({"rows": rows, "mapping": {"取引先名": "取引先"}}),
        ErrorCode::ColumnNotFound,
        "取引先名",
    );
    check(
        "transforms.select_columns",
        json!({"rows": rows, "columns": ["請求金額", "得意先名"]}),
        json!({"rows": [{"請求金額": 1000, "得意先名": "株式会社あさひ"}]}),
    );
    check(
        "transforms.select_columns",
        json!({"rows": rows, "columns": ["担当"], "mode": "exclude"}),
        json!({"rows": [{"得意先名": "株式会社あさひ", "請求金額": 1000}]}),
    );
    check_error(
        "transforms.select_columns",
        json!({"rows": rows, "columns": ["口座番号"]}),
        ErrorCode::ColumnNotFound,
        "口座番号",
    );
}

#[test]
fn sort_rows() {
    let rows = json!([
        {"取引先": "B社", "金額": "9,000", "日付": "2024/4/1"},
        {"取引先": "A社", "金額": "10,000", "日付": "2024/10/1"},
        {"取引先": "A社", "金額": "500", "日付": null},
        {"取引先": "B社", "金額": "", "日付": "2024/4/15"}
    ]);
    let order = |by: Json, nulls: &str| -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let out = run(
            "transforms.sort_rows",
            dir.path(),
            json!({"rows": rows, "by": by, "nulls": nulls}),
        )
        .unwrap();
        out["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                format!(
                    "{}{}",
                    r["取引先"].as_str().unwrap(),
                    r["金額"].as_str().unwrap()
                )
            })
            .collect()
    };
    // Dates as dates: 2024/4/1 < 2024/4/15 < 2024/10/1 (as text, "2024/10/1" would come first).
    assert_eq!(
        order(
            json!([{"field": "取引先"}, {"field": "日付", "order": "desc"}]),
            "last"
        ),
        ["A社10,000", "A社500", "B社", "B社9,000"]
    );
    assert_eq!(
        order(json!([{"field": "日付"}]), "first"),
        ["A社500", "B社9,000", "B社", "A社10,000"]
    );
    assert_eq!(
        order(json!([{"field": "日付"}]), "last"),
        ["B社9,000", "B社", "A社10,000", "A社500"]
    );
    check_error(
        "transforms.sort_rows",
        json!({"rows": rows, "by": [{"field": "部門"}]}),
        ErrorCode::ColumnNotFound,
        "部門",
    );
    check_error(
        "transforms.sort_rows",
        json!({"rows": rows, "by": [{"field": "取引先", "order": "up"}]}),
        ErrorCode::InputInvalid,
        "up",
    );
}

#[test]
fn sort_rows_reads_text_amounts_as_numbers() {
    let rows = json!([{"金額": "9,000"}, {"金額": "10,000"}, {"金額": "△500"}]);
    check(
        "transforms.sort_rows",
        json!({"rows": rows, "by": [{"field": "金額", "order": "desc"}]}),
        json!({"rows": [{"金額": "10,000"}, {"金額": "9,000"}, {"金額": "△500"}]}),
    );
}

#[test]
fn unpivot() {
    check(
        "transforms.unpivot",
        json!({"rows": [
            {"科目コード": "100", "科目": "現金", "4月": 100, "5月": 200},
            {"科目コード": "200", "科目": "預金", "4月": 300, "5月": 400}
        ], "id_fields": ["科目コード", "科目"]}),
        json!({"rows": [
            {"科目コード": "100", "科目": "現金", "項目": "4月", "値": 100},
            {"科目コード": "100", "科目": "現金", "項目": "5月", "値": 200},
            {"科目コード": "200", "科目": "預金", "項目": "4月", "値": 300},
            {"科目コード": "200", "科目": "預金", "項目": "5月", "値": 400}
        ]}),
    );
    check(
        "transforms.unpivot",
        json!({"rows": [{"社員": "山田", "基本給": 300000, "通勤手当": 12000, "備考": "x"}],
               "id_fields": ["社員"], "value_fields": ["基本給", "通勤手当"], "variable_name": "支給項目", "value_name": "金額"}),
        json!({"rows": [
            {"社員": "山田", "支給項目": "基本給", "金額": 300000},
            {"社員": "山田", "支給項目": "通勤手当", "金額": 12000}
        ]}),
    );
    check_error(
        "transforms.unpivot",
        json!({"rows": [{"a": 1}], "id_fields": ["b"]}),
        ErrorCode::ColumnNotFound,
        "b",
    );
}
