//! `matching/*` blocks: table-driven cases with Japanese inputs and expected outputs worked
//! out by hand (the arithmetic is in the comments).

use keiri_run::block::{BlockContext, CallSink, ErrorCode, Inputs, Registry};
use keiri_run::value::Value;
use serde_json::{Value as Json, json};
use tokio_util::sync::CancellationToken;

/// Runs builtin `id` with `inputs` (a JSON object) in `dir` (node folder `dir/out`) and
/// returns its outputs as JSON.
pub(crate) fn run_block(
    id: &str,
    dir: &std::path::Path,
    inputs: Json,
) -> Result<Json, keiri_run::block::BlockError> {
    run_block_with(id, dir, inputs, false)
}

/// [`run_block`] with `--write` on or off.
pub(crate) fn run_block_with(
    id: &str,
    dir: &std::path::Path,
    inputs: Json,
    write: bool,
) -> Result<Json, keiri_run::block::BlockError> {
    run_block_full(id, dir, inputs, write, None, &[], None).0
}

/// The clock every block test runs at: 2025-03-31 09:30 JST (00:30 UTC), the last day of a
/// March fiscal year.
pub(crate) fn test_now() -> chrono::DateTime<chrono::Utc> {
    use chrono::TimeZone;
    chrono::Utc
        .with_ymd_and_hms(2025, 3, 31, 0, 30, 0)
        .single()
        .unwrap()
}

/// [`run_block_with`] with the hosts network blocks may reach.
pub(crate) fn run_block_in(
    id: &str,
    dir: &std::path::Path,
    inputs: Json,
    write: bool,
    allow_hosts: &[String],
) -> Result<Json, keiri_run::block::BlockError> {
    run_block_full(id, dir, inputs, write, None, allow_hosts, None).0
}

/// [`run_block_with`] with a person's answer (human-in-the-loop blocks).
pub(crate) fn run_block_answered(
    id: &str,
    dir: &std::path::Path,
    inputs: Json,
    write: bool,
    answer: Option<&Json>,
) -> Result<Json, keiri_run::block::BlockError> {
    run_block_full(id, dir, inputs, write, answer, &[], None).0
}

/// [`run_block`] with a model (`ai.*` blocks): the outputs and the calls the block reported.
pub(crate) fn run_block_llm(
    id: &str,
    dir: &std::path::Path,
    inputs: Json,
    llm: Option<&keiri_llm::Llm>,
) -> (
    Result<Json, keiri_run::block::BlockError>,
    Vec<keiri_run::block::LlmCall>,
) {
    let (result, notes) = run_block_full(id, dir, inputs, false, None, &[], llm);
    let calls = notes
        .into_iter()
        .filter_map(|n| match n {
            keiri_run::block::Note::Llm(call) => Some(call),
            keiri_run::block::Note::Redirect(_) | keiri_run::block::Note::Warning(_) => None,
        })
        .collect();
    (result, calls)
}

/// [`run_block_in`] with what the block reported besides its result (redirect decisions).
pub(crate) fn run_block_noted(
    id: &str,
    dir: &std::path::Path,
    inputs: Json,
    allow_hosts: &[String],
) -> (
    Result<Json, keiri_run::block::BlockError>,
    Vec<keiri_run::block::Note>,
) {
    run_block_full(id, dir, inputs, false, None, allow_hosts, None)
}

/// The warnings among a block's notes, in order.
pub(crate) fn warnings_of(notes: Vec<keiri_run::block::Note>) -> Vec<keiri_run::block::Warning> {
    notes
        .into_iter()
        .filter_map(|n| match n {
            keiri_run::block::Note::Warning(w) => Some(w),
            _ => None,
        })
        .collect()
}

#[allow(clippy::type_complexity)]
fn run_block_full(
    id: &str,
    dir: &std::path::Path,
    inputs: Json,
    write: bool,
    answer: Option<&Json>,
    allow_hosts: &[String],
    llm: Option<&keiri_llm::Llm>,
) -> (
    Result<Json, keiri_run::block::BlockError>,
    Vec<keiri_run::block::Note>,
) {
    let Json::Object(map) = inputs else {
        panic!("inputs must be an object")
    };
    let inputs = Inputs::from_pairs(map.into_iter().map(|(k, v)| (k, Value::Json(v))));
    run_inputs(id, dir, inputs, write, answer, allow_hosts, llm)
}

/// [`run_block`] with inputs given as values (a table as a table).
pub(crate) fn run_block_values(
    id: &str,
    dir: &std::path::Path,
    inputs: Vec<(&str, Value)>,
) -> Result<Json, keiri_run::block::BlockError> {
    let inputs = Inputs::from_pairs(inputs);
    run_inputs(id, dir, inputs, false, None, &[], None).0
}

#[allow(clippy::type_complexity)]
fn run_inputs(
    id: &str,
    dir: &std::path::Path,
    inputs: Inputs,
    write: bool,
    answer: Option<&Json>,
    allow_hosts: &[String],
    llm: Option<&keiri_llm::Llm>,
) -> (
    Result<Json, keiri_run::block::BlockError>,
    Vec<keiri_run::block::Note>,
) {
    let (result, notes) = run_outputs(id, dir, inputs, write, answer, allow_hosts, llm, false);
    let json = result.map(|outputs| {
        Json::Object(
            outputs
                .0
                .into_iter()
                .map(|(k, v)| (k, v.to_json()))
                .collect(),
        )
    });
    (json, notes)
}

/// Builtin `id`'s outputs as it gives them (a table as a table), for inputs given as
/// values; the block must succeed.
fn outputs_of(id: &str, dir: &std::path::Path, inputs: Inputs) -> keiri_run::block::Outputs {
    let (out, _) = run_outputs(id, dir, inputs, false, None, &[], None, false);
    out.unwrap_or_else(|e| panic!("{id} failed: {e:?}"))
}

/// [`run_block_values`] in a run cancelled before the block starts.
pub(crate) fn run_block_cancelled(
    id: &str,
    dir: &std::path::Path,
    inputs: Vec<(&str, Value)>,
) -> Result<keiri_run::block::Outputs, keiri_run::block::BlockError> {
    let inputs = Inputs::from_pairs(inputs);
    run_outputs(id, dir, inputs, false, None, &[], None, true).0
}

/// The block's outputs as it gives them (a table as a table).
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn run_outputs(
    id: &str,
    dir: &std::path::Path,
    inputs: Inputs,
    write: bool,
    answer: Option<&Json>,
    allow_hosts: &[String],
    llm: Option<&keiri_llm::Llm>,
    cancelled: bool,
) -> (
    Result<keiri_run::block::Outputs, keiri_run::block::BlockError>,
    Vec<keiri_run::block::Note>,
) {
    let registry = Registry::builtins();
    let block = registry
        .get(id)
        .unwrap_or_else(|| panic!("{id} is not registered"));
    let cancel = CancellationToken::new();
    if cancelled {
        cancel.cancel();
    }
    let out_dir = dir.join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let (calls, call_rx) = CallSink::channel();
    let ctx = BlockContext {
        node_id: "node",
        base_dir: dir,
        paths: &keiri_fs::PathPolicy::trusted(dir),
        out_dir: &out_dir,
        cancel: &cancel,
        write,
        answer,
        allow_hosts,
        limits: &Default::default(),
        now: test_now(),
        llm,
        calls: &calls,
        lang: keiri_plan::Lang::Ja,
        columns_used: None,
        outputs_taken: None,
        pieces: None,
    };
    let result = block(&ctx, &inputs);
    drop(calls);
    (result, call_rx.into_iter().collect())
}

fn check(id: &str, inputs: Json, expect: Json) {
    let dir = tempfile::tempdir().unwrap();
    let got = run_block(id, dir.path(), inputs.clone())
        .unwrap_or_else(|e| panic!("{id} failed: {e}\ninputs: {inputs}"));
    for (key, want) in expect.as_object().unwrap() {
        assert_eq!(
            &got[key], want,
            "{id} output {key}\ninputs: {inputs}\ngot: {:#}",
            got[key]
        );
    }
}

fn check_error(id: &str, inputs: Json, code: ErrorCode) {
    let dir = tempfile::tempdir().unwrap();
    match run_block(id, dir.path(), inputs.clone()) {
        Err(e) => assert_eq!(e.code, code, "{id}: {e}"),
        Ok(out) => panic!("{id} should fail with {code:?}, got {out}"),
    }
}

#[test]
fn exact_match_pairs_on_normalised_keys_and_reports_amount_differences() {
    let left = json!([
        {"請求書番号": "INV-001", "金額": "¥10,000"},
        {"請求書番号": "ＩＮＶ－００２", "金額": 5000},
        {"請求書番号": "INV-003", "金額": 1000},
    ]);
    let right = json!([
        {"伝票番号": "inv-002", "金額": 5500},
        {"伝票番号": "INV-001", "金額": "10,000円"},
        {"伝票番号": "INV-009", "金額": 700},
    ]);
    let keys = json!([{"left": "請求書番号", "right": "伝票番号"}]);
    // 全角 ＩＮＶ－００２ folds to inv-002; 5,000 − 5,500 = −500 is the one difference.
    check(
        "matching.exact_match",
        json!({"left": left, "right": right, "keys": keys, "compare": ["金額"]}),
        json!({
            "matches": [
                {"left": left[0], "right": right[1], "differences": []},
                {"left": left[1], "right": right[0], "differences": [
                    {"field": "金額", "left": 5000, "right": 5500, "difference": -500}
                ]},
            ],
            "unmatched_left": [left[2]],
            "unmatched_right": [right[2]],
            "summary": {"match_count": 2, "difference_count": 1, "unmatched_left_count": 1,
                        "unmatched_right_count": 1, "amount_difference_total": -500},
        }),
    );
    // A 500-yen tolerance accepts the difference.
    check(
        "matching.exact_match",
        json!({"left": left, "right": right, "keys": keys,
               "compare": [{"left": "金額", "right": "金額", "tolerance": 500}]}),
        json!({"summary": {"match_count": 2, "difference_count": 0, "unmatched_left_count": 1,
                           "unmatched_right_count": 1, "amount_difference_total": 0}}),
    );
    // Without normalisation the full-width key does not meet inv-002.
    check(
        "matching.exact_match",
        json!({"left": left, "right": right, "keys": keys, "normalize_keys": false}),
        json!({"unmatched_left": [left[1], left[2]], "unmatched_right": [right[0], right[2]]}),
    );
    check_error(
        "matching.exact_match",
        json!({"left": left, "right": right, "keys": []}),
        ErrorCode::InputInvalid,
    );
    check_error(
        "matching.exact_match",
        json!({"left": "請求書", "right": right, "keys": ["a"]}),
        ErrorCode::InputInvalid,
    );
}

#[test]
fn fuzzy_match_scores_weighted_fields_with_tolerances() {
    let left = json!([
        {"取引先": "株式会社山田商事", "金額": 110000, "日付": "2025-03-05"},
        {"取引先": "佐藤工業", "金額": 50000, "日付": "2025-03-10"},
    ]);
    let right = json!([
        {"支払先": "(株)山田商事", "支払額": "109,340", "支払日": "2025/03/07"},
        {"支払先": "佐藤工業(有)", "支払額": 50000, "支払日": "令和7年3月10日"},
        {"支払先": "田中商店", "支払額": 50000, "支払日": "2025-03-10"},
    ]);
    let fields = json!([
        {"left": "取引先", "right": "支払先", "kind": "text", "weight": 2},
        {"left": "金額", "right": "支払額", "kind": "amount", "weight": 1},
        {"left": "日付", "right": "支払日", "kind": "date", "weight": 1},
    ]);
    let base = json!({"left": left, "right": right, "fields": fields,
                      "amount_tolerance": 880, "date_tolerance_days": 3});
    // 山田: names equal after removing 株式会社/(株), 660 yen short (≤ 880), 2 days → 1.
    // 佐藤: equal names after (有), same amount and date → 1. 佐藤 vs 田中商店: (0·2+1+1)/4 = 0.5.
    let mut one_to_one = base.clone();
    one_to_one["threshold"] = json!(0.85);
    check(
        "matching.fuzzy_match",
        one_to_one,
        json!({
            "matches": [
                {"left": left[0], "right": right[0], "score": 1, "field_scores": {"取引先": 1, "金額": 1, "日付": 1}},
                {"left": left[1], "right": right[1], "score": 1, "field_scores": {"取引先": 1, "金額": 1, "日付": 1}},
            ],
            "unmatched_left": [],
            "unmatched_right": [right[2]],
            "summary": {"match_count": 2, "unmatched_left_count": 0, "unmatched_right_count": 1,
                        "score_distribution": {"min": 1, "mean": 1, "max": 1}},
        }),
    );
    let mut all = base.clone();
    all["threshold"] = json!(0.5);
    all["one_to_one"] = json!(false);
    // Mean of 1, 1 and 0.5 is 0.8333.
    check(
        "matching.fuzzy_match",
        all,
        json!({
            "matches": [
                {"left": left[0], "right": right[0], "score": 1, "field_scores": {"取引先": 1, "金額": 1, "日付": 1}},
                {"left": left[1], "right": right[1], "score": 1, "field_scores": {"取引先": 1, "金額": 1, "日付": 1}},
                {"left": left[1], "right": right[2], "score": 0.5, "field_scores": {"取引先": 0, "金額": 1, "日付": 1}},
            ],
            "unmatched_right": [],
            "summary": {"match_count": 3, "unmatched_left_count": 0, "unmatched_right_count": 0,
                        "score_distribution": {"min": 0.5, "mean": 0.8333, "max": 1}},
        }),
    );
    // Blocking on currency: the JPY row of 山田 never meets a USD payment.
    check(
        "matching.fuzzy_match",
        json!({"left": [{"取引先": "山田商事", "通貨": "JPY"}], "right": [{"支払先": "山田商事", "通貨": "USD"}],
               "fields": [{"left": "取引先", "right": "支払先", "kind": "text"}], "block_on": ["通貨"]}),
        json!({"matches": [], "summary": {"match_count": 0, "unmatched_left_count": 1, "unmatched_right_count": 1,
                                          "score_distribution": {"min": null, "mean": null, "max": null}}}),
    );
    check_error(
        "matching.fuzzy_match",
        json!({"left": left, "right": right, "fields": [{"left": "取引先", "right": "支払先", "kind": "音"}]}),
        ErrorCode::InputInvalid,
    );
}

#[test]
fn duplicate_invoices_clusters_vendor_variants_and_mistyped_numbers() {
    let rows = json!([
        {"invoice_no": "INV-2025-0301", "vendor": "株式会社山田商事", "invoice_date": "2025/03/05", "amount": "¥110,000"},
        {"invoice_no": "A-55012", "vendor": "北海道物産株式会社", "invoice_date": "2025/03/03", "amount": "33,000"},
        {"invoice_no": "INV-2025-0301", "vendor": "(株)山田商事", "invoice_date": "2025-03-05", "amount": 110000},
        {"invoice_no": "TJ-2025-08812", "vendor": "東京事務機株式会社", "invoice_date": "2025/03/10", "amount": "48,400"},
        {"invoice_no": "KY-3391", "vendor": "九州食品有限会社", "invoice_date": "2025/03/03", "amount": "33,000"},
        {"invoice_no": "INV-2025-0301", "vendor": "ﾔﾏﾀﾞ商事", "invoice_date": "令和7年3月12日", "amount": "110000円"},
        {"invoice_no": "TJ-2025-08821", "vendor": "東京事務機(株)", "invoice_date": "R7.3.14", "amount": "48,400"},
        {"invoice_no": "CL-2025-031", "vendor": "クリーンサービス有限会社", "invoice_date": "2025/03/20", "amount": "22,000"},
        {"invoice_no": "CL-2025-021", "vendor": "クリーンサービス有限会社", "invoice_date": "2025/02/20", "amount": "22,000"},
    ]);
    let with = |row: &Json, id: u64, reason: &str| {
        let mut r = row.clone();
        r["cluster_id"] = json!(id);
        r["reason"] = json!(reason);
        r
    };
    // Cluster 1: rows 0 and 2 are one invoice keyed twice (same number, amount, date, and
    // 株式会社/(株) fold away) — exact_duplicate, score 1; row 5 (ﾔﾏﾀﾞ商事) has the same
    // number and amount 7 days later and joins it.
    // Cluster 2: 08812/08821 is a swap: Levenshtein 2 of 11 → 0.8182; 4 days of 30 → 0.8667;
    // score (1 + 1 + 0.8667 + 0.8182) / 4 = 0.9212.
    // Not duplicates: 33,000 from two vendors; CL-031/CL-021 are two months of one contract.
    // At risk: 110,000 × 2 + 48,400 = 268,400.
    check(
        "matching.duplicate_invoices",
        json!({"rows": rows, "invoice_no_field": "invoice_no"}),
        json!({
            "clusters": [
                {"cluster_id": 1, "reason": "exact_duplicate", "score": 1, "rows": [rows[0], rows[2], rows[5]]},
                {"cluster_id": 2, "reason": "similar_invoice_no", "score": 0.9212, "rows": [rows[3], rows[6]]},
            ],
            "duplicates": [
                with(&rows[0], 1, "exact_duplicate"),
                with(&rows[2], 1, "exact_duplicate"),
                with(&rows[3], 2, "similar_invoice_no"),
                with(&rows[5], 1, "exact_duplicate"),
                with(&rows[6], 2, "similar_invoice_no"),
            ],
            "summary": {"cluster_count": 2, "row_count": 5, "amount_at_risk": 268400},
        }),
    );
    // Without invoice numbers: same vendor and amount within the window. 20 days of 30 →
    // (1 + 1 + 0.3333) / 3 = 0.7778; the May invoice is 63 and 43 days away.
    let ads = json!([
        {"vendor": "株式会社広告企画", "amount": 198000, "invoice_date": "2025-03-08"},
        {"vendor": "㈱広告企画", "amount": "198,000", "invoice_date": "2025-03-28"},
        {"vendor": "広告企画", "amount": 198000, "invoice_date": "2025-05-10"},
    ]);
    check(
        "matching.duplicate_invoices",
        json!({"rows": ads}),
        json!({
            "clusters": [{"cluster_id": 1, "reason": "same_vendor_amount", "score": 0.7778, "rows": [ads[0], ads[1]]}],
            "summary": {"cluster_count": 1, "row_count": 2, "amount_at_risk": 198000},
        }),
    );
    // A 10-day window leaves nothing.
    check(
        "matching.duplicate_invoices",
        json!({"rows": ads, "date_window_days": 10}),
        json!({"clusters": [], "duplicates": [], "summary": {"cluster_count": 0, "row_count": 0, "amount_at_risk": 0}}),
    );
}

/// An invoice list as `csv.read` or a workbook hands it on: a table with typed columns —
/// numbers, a date column, text with gaps. The block reads such a table column by column
/// (each distinct text once) and turns only the flagged rows into JSON; what it finds must be
/// exactly what it found when it first turned the whole table into rows.
fn invoice_table(dates_as_text: bool) -> polars::prelude::DataFrame {
    use polars::prelude::{Column, DataFrame, DataType};
    let day = |d: u32| {
        let date = chrono::NaiveDate::from_ymd_opt(2025, 3, d).unwrap();
        (date - chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap()).num_days() as i32
    };
    let numbers = [
        Some("INV-2025-0301"),
        Some("INV-2025-0301"),
        None,
        Some("H-77"),
        Some("K-12"),
        Some("TJ-2025-08812"),
        Some("TJ-2025-08821"),
        None,
    ];
    let vendors = [
        Some("株式会社山田商事"),
        Some("(株)山田商事"),
        Some("北海道物産"),
        Some("北海道物産"),
        Some("九州食品"),
        Some("東京事務機株式会社"),
        Some("東京事務機(株)"),
        None,
    ];
    let days = [
        Some(5),
        Some(5),
        Some(3),
        Some(3),
        Some(3),
        Some(10),
        Some(14),
        None,
    ];
    let amounts = [
        Some(110_000i64),
        Some(110_000),
        None,
        Some(33_000),
        Some(33_000),
        Some(48_400),
        Some(48_400),
        Some(5_000),
    ];
    let dates = if dates_as_text {
        // The same days as a 弥生 export writes them, 和暦 and all.
        let text = [
            Some("2025/03/05"),
            Some("令和7年3月5日"),
            Some("2025/3/3"),
            Some("R7.3.3"),
            Some("2025-03-03"),
            Some("2025/03/10"),
            Some("２０２５/０３/１４"),
            None,
        ];
        Column::new("請求日".into(), text.to_vec())
    } else {
        Column::new("請求日".into(), days.map(|d| d.map(day)).to_vec())
            .cast(&DataType::Date)
            .unwrap()
    };
    let amounts = if dates_as_text {
        let text = [
            Some("¥110,000"),
            Some("110,000円"),
            None,
            Some("33,000"),
            Some("３３，０００"),
            Some("￥48,400"),
            Some("48400"),
            Some("5,000"),
        ];
        Column::new("金額".into(), text.to_vec())
    } else {
        Column::new("金額".into(), amounts.to_vec())
    };
    DataFrame::new(
        8,
        vec![
            Column::new("請求番号".into(), numbers.to_vec()),
            Column::new("取引先".into(), vendors.to_vec()),
            dates,
            amounts,
        ],
    )
    .unwrap()
}

/// `matching.duplicate_invoices` on an invoice table keyed by its Japanese columns: the
/// `duplicates` table it gives (a table in must give a table out) and all its outputs.
fn duplicates_of_table(
    table: polars::prelude::DataFrame,
    label: &str,
) -> (polars::prelude::DataFrame, keiri_run::block::Outputs) {
    let dir = tempfile::tempdir().unwrap();
    let inputs = Inputs::from_pairs(vec![
        ("rows".to_string(), Value::Table(table)),
        ("vendor_field".to_string(), Value::Json(json!("取引先"))),
        ("amount_field".to_string(), Value::Json(json!("金額"))),
        ("date_field".to_string(), Value::Json(json!("請求日"))),
        (
            "invoice_no_field".to_string(),
            Value::Json(json!("請求番号")),
        ),
    ]);
    let out = outputs_of("matching.duplicate_invoices", dir.path(), inputs);
    let Some(Value::Table(duplicates)) = out.0.get("duplicates") else {
        panic!(
            "{label}: a table in, a table out: {:?}",
            out.0.get("duplicates")
        );
    };
    (duplicates.clone(), out)
}

#[test]
fn duplicate_invoices_from_a_table_give_a_table_with_the_input_types() {
    let (duplicates, _) = duplicates_of_table(invoice_table(false), "typed");
    // The four rows worked out by hand in the test below, with their cluster and reason
    // added after the input's columns, which keep their types (a date stays a date).
    let names: Vec<&str> = duplicates
        .get_column_names()
        .into_iter()
        .map(|n| n.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "請求番号",
            "取引先",
            "請求日",
            "金額",
            "cluster_id",
            "reason"
        ]
    );
    assert_eq!(duplicates.height(), 4);
    assert_eq!(
        duplicates.column("請求日").unwrap().dtype(),
        &polars::prelude::DataType::Date
    );
    let ids: Vec<Option<i64>> = duplicates
        .column("cluster_id")
        .unwrap()
        .i64()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(ids, [Some(1), Some(1), Some(2), Some(2)]);
}

#[test]
fn duplicate_invoices_from_an_empty_or_clean_table_give_an_empty_table_and_say_so() {
    let full = invoice_table(false);
    // No rows at all, and two rows that are no one's duplicate (rows 0 and 3 of the table:
    // 山田商事 and 東京事務機, different vendors and amounts).
    for (label, table) in [
        ("empty", full.slice(0, 0)),
        (
            "clean",
            full.take(&polars::prelude::IdxCa::from_vec("at".into(), vec![0, 3]))
                .unwrap(),
        ),
    ] {
        let (duplicates, out) = duplicates_of_table(table, label);
        assert_eq!(duplicates.height(), 0, "{label}");
        assert!(duplicates.column("cluster_id").is_ok(), "{label}");
        assert!(duplicates.column("reason").is_ok(), "{label}");
        assert_eq!(
            out.0.get("summary").map(Value::to_json),
            Some(json!({"cluster_count": 0, "row_count": 0, "amount_at_risk": 0})),
            "{label}"
        );
    }
}

#[test]
fn duplicate_invoices_read_from_a_table_find_what_its_rows_find() {
    for dates_as_text in [false, true] {
        let table = invoice_table(dates_as_text);
        let rows = Value::Table(table.clone()).to_json();
        for number_field in ["請求番号", "伝票番号"] {
            let options = [
                ("vendor_field", json!("取引先")),
                ("amount_field", json!("金額")),
                ("date_field", json!("請求日")),
                ("invoice_no_field", json!(number_field)),
            ];
            let dir = tempfile::tempdir().unwrap();
            let with = |rows: Value| {
                let mut inputs: Vec<(&str, Value)> = vec![("rows", rows)];
                inputs.extend(options.iter().map(|(k, v)| (*k, Value::Json(v.clone()))));
                run_block_values("matching.duplicate_invoices", dir.path(), inputs).unwrap()
            };
            let from_table = with(Value::Table(table.clone()));
            let from_rows = with(Value::Json(rows.clone()));
            assert_eq!(
                from_table, from_rows,
                "dates as text: {dates_as_text}, numbers in {number_field}"
            );
            // By hand: 山田商事's invoice keyed twice (株式会社/(株) fold away, the same day) and
            // 東京事務機's 08812/08821 four days apart; 北海道物産 and 九州食品 share an amount and
            // a day but not a vendor; a row without an amount or a date is never paired.
            // At risk: 110,000 + 48,400.
            assert_eq!(
                from_table["summary"],
                json!({"cluster_count": 2, "row_count": 4, "amount_at_risk": 158400}),
                "dates as text: {dates_as_text}, numbers in {number_field}"
            );
            let flagged: Vec<(&Json, &Json, &Json)> = from_table["duplicates"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| (&r["取引先"], &r["cluster_id"], &r["reason"]))
                .collect();
            let (first, second, scores) = if number_field == "請求番号" {
                // (1 + 1 + 26/30 + 9/11) / 4 = 0.9212
                ("exact_duplicate", "similar_invoice_no", json!([1, 0.9212]))
            } else {
                // No such column: no numbers to compare; (1 + 1 + 26/30) / 3 = 0.9556
                (
                    "same_vendor_amount",
                    "same_vendor_amount",
                    json!([1, 0.9556]),
                )
            };
            let (one, two) = (json!(1), json!(2));
            let (first, second) = (json!(first), json!(second));
            let vendors = [
                json!("株式会社山田商事"),
                json!("(株)山田商事"),
                json!("東京事務機株式会社"),
                json!("東京事務機(株)"),
            ];
            assert_eq!(
                flagged,
                vec![
                    (&vendors[0], &one, &first),
                    (&vendors[1], &one, &first),
                    (&vendors[2], &two, &second),
                    (&vendors[3], &two, &second),
                ],
                "dates as text: {dates_as_text}, numbers in {number_field}"
            );
            let got: Vec<&Json> = from_table["clusters"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| &c["score"])
                .collect();
            assert_eq!(json!(got), scores);
        }
    }
}

fn deposit(date: &str, amount: u64, description: &str) -> Json {
    json!({"date": date, "amount": amount, "direction": "deposit", "description": description, "balance": null})
}

fn receivable(no: &str, customer: &str, kana: &str, amount: u64, due: &str) -> Json {
    json!({"invoice_no": no, "customer": customer, "customer_kana": kana, "amount": amount, "due_date": due})
}

/// An invoice of 株式会社山田商事 (ヤマダショウジ: the payer ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ once normalised).
fn yamada(no: &str, amount: u64, due: &str) -> Json {
    receivable(no, "株式会社山田商事", "ヤマダショウジ", amount, due)
}

/// An invoice of 株式会社伊藤電機 (イトウデンキ), a name near none of the tests' payers.
fn ito(no: &str, amount: u64, due: &str) -> Json {
    receivable(no, "株式会社伊藤電機", "イトウデンキ", amount, due)
}

/// Five March deposits and seven open receivables: 山田 paid exactly, 佐藤 short by a 660-yen
/// fee, 鈴木's two invoices in one transfer, 田中 paid 200,000 of 220,000, and 松本 with no
/// receivable at all.
fn march_statement() -> (Json, Json) {
    let deposits = json!([
        deposit("2025-03-05", 330000, "振込 ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ"),
        deposit("2025-03-25", 131340, "振込 ﾕ)ｻﾄｳｺｳｷﾞﾖｳ"),
        deposit("2025-03-28", 132000, "振込 ｶ)ｽｽﾞｷｾｲｻｸｼﾖ"),
        deposit("2025-03-31", 200000, "振込 ﾄﾞ)ﾀﾅｶﾃﾞｻﾞｲﾝ"),
        deposit("2025-03-31", 50000, "振込 ﾏﾂﾓﾄｼﾖｳｶｲ"),
    ]);
    let receivables = json!([
        yamada("AR-1001", 330000, "2025-03-31"),
        receivable(
            "AR-1002",
            "有限会社佐藤工業",
            "サトウコウギョウ",
            132000,
            "2025-03-31"
        ),
        receivable(
            "AR-1003",
            "株式会社鈴木製作所",
            "スズキセイサクショ",
            88000,
            "2025-03-25"
        ),
        receivable(
            "AR-1004",
            "株式会社鈴木製作所",
            "スズキセイサクショ",
            44000,
            "2025-03-31"
        ),
        receivable(
            "AR-1005",
            "合同会社田中デザイン",
            "タナカデザイン",
            220000,
            "2025-03-31"
        ),
        receivable(
            "AR-1006",
            "株式会社高橋物流",
            "タカハシブツリュウ",
            550000,
            "2025-04-30"
        ),
        ito("AR-1007", 77000, "2025-03-31"),
    ]);
    (deposits, receivables)
}

#[test]
fn bank_reconciliation_clears_exact_fee_short_and_combined_payments() {
    let (deposits, receivables) = march_statement();
    // ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ = ヤマダショウジ once ｶ) and small kana fold: exact, confidence 1.
    // 佐藤: 132,000 − 131,340 = 660 ≤ 880 → transfer fee, confidence 0.9.
    // 鈴木: 88,000 + 44,000 = 132,000 in one deposit → combined, confidence 1 × 0.9.
    // 田中 paid 200,000 of 220,000 (20,000 is no fee) and 松本 has no receivable.
    check(
        "matching.bank_reconciliation",
        json!({"deposits": deposits, "receivables": receivables}),
        json!({
            "matches": [
                {"deposit": deposits[0], "receivables": [receivables[0]], "difference": 0, "difference_reason": "none", "confidence": 1},
                {"deposit": deposits[1], "receivables": [receivables[1]], "difference": 660, "difference_reason": "transfer_fee", "confidence": 0.9},
                {"deposit": deposits[2], "receivables": [receivables[2], receivables[3]], "difference": 0, "difference_reason": "none", "confidence": 0.9},
            ],
            "unmatched_deposits": [deposits[3], deposits[4]],
            "open_receivables": [receivables[4], receivables[5], receivables[6]],
            "summary": {
                "deposit_count": 5, "deposit_amount": 843340,
                "cleared_count": 3, "cleared_amount": 593340,
                "unmatched_deposit_count": 2, "unmatched_deposit_amount": 250000,
                "open_receivable_count": 3, "open_receivable_amount": 847000,
                "fee_difference_total": 660,
            },
        }),
    );
    // Combined payments off: 鈴木's deposit stays unmatched.
    check(
        "matching.bank_reconciliation",
        json!({"deposits": [deposits[2]], "receivables": receivables, "allow_combined": false}),
        json!({"matches": [], "unmatched_deposits": [deposits[2]]}),
    );
    // The date window: 高橋's invoice is due 2025-04-30, 56 days after a 03-05 deposit.
    let early = json!([deposit("2025-03-05", 550000, "ﾌﾘｺﾐ ｶ)ﾀｶﾊｼﾌﾞﾂﾘﾕｳ")]);
    check(
        "matching.bank_reconciliation",
        json!({"deposits": early, "receivables": receivables, "date_window_days": 30}),
        json!({"matches": [], "unmatched_deposits": early}),
    );
    check(
        "matching.bank_reconciliation",
        json!({"deposits": early, "receivables": receivables, "date_window_days": 60}),
        json!({"matches": [{"deposit": early[0], "receivables": [receivables[5]], "difference": 0,
                            "difference_reason": "none", "confidence": 1}]}),
    );
    // A stricter fee tolerance turns 佐藤's 660 yen into an unmatched deposit.
    check(
        "matching.bank_reconciliation",
        json!({"deposits": [deposits[1]], "receivables": receivables, "fee_tolerance": 440}),
        json!({"matches": [], "unmatched_deposits": [deposits[1]]}),
    );
}

/// Three transfers of 110,000 from ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ and two open invoices of 110,000 of 山田商事,
/// due 04-30 and 05-31. The first transfer, on 05-30, takes the one due 05-31 (1 day away,
/// against 30). The second, on 05-31, would take that one too (0 days) were it open: it
/// takes the one due 04-30 (31 days, within the 60). The third, on 06-01, finds both
/// cleared and no other invoice: unmatched.
#[test]
fn bank_reconciliation_passes_over_an_invoice_an_earlier_deposit_cleared() {
    let deposits = json!([
        deposit("2025-05-30", 110000, "振込 ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ"),
        deposit("2025-05-31", 110000, "振込 ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ"),
        deposit("2025-06-01", 110000, "振込 ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ"),
    ]);
    let receivables = json!([
        yamada("AR-2001", 110000, "2025-04-30"),
        yamada("AR-2002", 110000, "2025-05-31"),
    ]);
    check(
        "matching.bank_reconciliation",
        json!({"deposits": deposits, "receivables": receivables}),
        json!({
            "matches": [
                {"deposit": deposits[0], "receivables": [receivables[1]], "difference": 0, "difference_reason": "none", "confidence": 1},
                {"deposit": deposits[1], "receivables": [receivables[0]], "difference": 0, "difference_reason": "none", "confidence": 1},
            ],
            "unmatched_deposits": [deposits[2]],
            "open_receivables": [],
            "summary": {
                "deposit_count": 3, "deposit_amount": 330000,
                "cleared_count": 2, "cleared_amount": 220000,
                "unmatched_deposit_count": 1, "unmatched_deposit_amount": 110000,
                "open_receivable_count": 0, "open_receivable_amount": 0,
                "fee_difference_total": 0,
            },
        }),
    );
}

/// One invoice per deposit, among several of the same amount: the closest due date of those
/// whose name is at the threshold, passing over a closer invoice of another customer. Two
/// deposits of 110,000 from ﾀﾅｶﾃﾞｻﾞｲﾝ; open at 110,000 each: 伊藤電機 due 03-31, 田中デザイン
/// due 03-20 and the same customer with its kana mistyped (タナカデザイソ) due 03-10.
#[test]
fn bank_reconciliation_takes_the_closest_invoice_whose_name_is_at_the_threshold() {
    let deposits = json!([
        deposit("2025-03-31", 110000, "振込 ﾀﾅｶﾃﾞｻﾞｲﾝ"),
        deposit("2025-04-30", 110000, "振込 ﾀﾅｶﾃﾞｻﾞｲﾝ"),
    ]);
    let receivables = json!([
        ito("AR-2001", 110000, "2025-03-31"),
        receivable(
            "AR-2002",
            "合同会社田中デザイン",
            "タナカデザイン",
            110000,
            "2025-03-20"
        ),
        receivable(
            "AR-2003",
            "合同会社田中デザイン",
            "タナカデザイソ",
            110000,
            "2025-03-10"
        ),
    ]);
    // 03-31: 伊藤 is 0 days off but another name; 田中デザイン, 11 days off, is the same
    // name (confidence 1). 04-30: 伊藤 (30 days) again not; AR-2003 (51 days, inside the
    // 60-day window) by its kana: 6 of 7 characters in place, Jaro (6/7 + 6/7 + 1) / 3 =
    // 0.904762, a 4-character prefix: 0.904762 + 0.4 × 0.095238 = 0.942857 → 0.9429.
    check(
        "matching.bank_reconciliation",
        json!({"deposits": deposits, "receivables": receivables}),
        json!({
            "matches": [
                {"deposit": deposits[0], "receivables": [receivables[1]], "difference": 0, "difference_reason": "none", "confidence": 1},
                {"deposit": deposits[1], "receivables": [receivables[2]], "difference": 0, "difference_reason": "none", "confidence": 0.9429},
            ],
            "unmatched_deposits": [],
            "open_receivables": [receivables[0]],
        }),
    );
    // At 0.95 the mistyped kana is under the threshold: the second deposit stays unmatched
    // and 伊藤's invoice, still the closest, is not taken for it.
    check(
        "matching.bank_reconciliation",
        json!({"deposits": deposits, "receivables": receivables, "name_threshold": 0.95}),
        json!({
            "unmatched_deposits": [deposits[1]],
            "open_receivables": [receivables[0], receivables[2]],
        }),
    );
}

/// A payer with no invoice under its own name (its customer's kana was keyed タナカデザイソ):
/// each of its deposits is cleared by that near name alone, one invoice or two together, and
/// a payer near no customer stays unmatched. 伊藤電機's invoice fits the first deposit's
/// amount and date but not its name. タナカデザイン / タナカデザイソ: 6 of 7 characters in place,
/// Jaro (6/7 + 6/7 + 1) / 3 = 0.904762, a 4-character prefix: 0.942857; two invoices paid
/// together: 0.942857 × 0.9 = 0.848571 → 0.8486.
#[test]
fn bank_reconciliation_clears_a_payer_without_invoices_of_its_own_by_a_near_name() {
    let deposits = json!([
        deposit("2025-04-25", 121000, "振込 ﾀﾅｶﾃﾞｻﾞｲﾝ"),
        deposit("2025-05-30", 77000, "振込 ﾀﾅｶﾃﾞｻﾞｲﾝ"),
        deposit("2025-06-20", 143000, "振込 ﾀﾅｶﾃﾞｻﾞｲﾝ"),
        deposit("2025-04-01", 33000, "振込 ﾜﾀﾅﾍﾞｺｳｷﾞﾖｳ"),
    ]);
    let tanaka = |no: &str, amount: u64, due: &str| {
        receivable(no, "株式会社田中デザイン", "タナカデザイソ", amount, due)
    };
    let receivables = json!([
        tanaka("AR-3001", 55000, "2025-03-31"),
        tanaka("AR-3002", 66000, "2025-04-30"),
        tanaka("AR-3003", 77000, "2025-05-31"),
        ito("AR-3004", 121000, "2025-03-31"),
        tanaka("AR-3005", 66000, "2025-06-30"),
        tanaka("AR-3006", 77000, "2025-07-31"),
    ]);
    // 04-25, 121,000: no single invoice of a near name fits (伊藤's is another name); AR-3001
    // and AR-3002 (55,000 + 66,000) do, the first two in due order. 05-30, 77,000: AR-3003
    // alone. 06-20, 143,000: AR-3005 and AR-3006 (66,000 + 77,000; 41 days, in the window).
    check(
        "matching.bank_reconciliation",
        json!({"deposits": deposits, "receivables": receivables}),
        json!({
            "matches": [
                {"deposit": deposits[0], "receivables": [receivables[0], receivables[1]], "difference": 0, "difference_reason": "none", "confidence": 0.8486},
                {"deposit": deposits[1], "receivables": [receivables[2]], "difference": 0, "difference_reason": "none", "confidence": 0.9429},
                {"deposit": deposits[2], "receivables": [receivables[4], receivables[5]], "difference": 0, "difference_reason": "none", "confidence": 0.8486},
            ],
            "unmatched_deposits": [deposits[3]],
            "open_receivables": [receivables[3]],
            "summary": {
                "deposit_count": 4, "deposit_amount": 374000,
                "cleared_count": 3, "cleared_amount": 341000,
                "unmatched_deposit_count": 1, "unmatched_deposit_amount": 33000,
                "open_receivable_count": 1, "open_receivable_amount": 121000,
                "fee_difference_total": 0,
            },
        }),
    );
    // Without combined payments only the single invoice clears.
    check(
        "matching.bank_reconciliation",
        json!({"deposits": deposits, "receivables": receivables, "allow_combined": false}),
        json!({
            "matches": [
                {"deposit": deposits[1], "receivables": [receivables[2]], "difference": 0, "difference_reason": "none", "confidence": 0.9429},
            ],
            "unmatched_deposits": [deposits[0], deposits[2], deposits[3]],
        }),
    );
}

/// A near name's single invoice, in order, among many of the deposit's amount: ﾀﾅｶﾃﾞｻﾞｲﾝ
/// (タナカデザイン once normalised) has no invoice of its own; its customer's kana was keyed
/// タナカデザイソ (Jaro (6/7 + 6/7 + 1) / 3 = 0.904762, a 4-character prefix: 0.942857 →
/// 0.9429; fee-short: × 0.9 = 0.848571 → 0.8486). Ten invoices of 伊藤電機 at 110,000 due on
/// the deposit's day are another name. Four deposits of 110,000, 04-25 to 04-28:
/// - 04-25: AR-4002 (exact, 03-31, 25 days) and AR-4003 (exact, 05-20, 25 days) before
///   AR-4001 (110,660 due 04-25: short by a 660-yen fee); the earlier row, AR-4002.
/// - 04-26: AR-4003 (exact, 24 days).
/// - 04-27: AR-4001 (fee-short, 2 days); AR-4004 (01-31) is 86 days off, outside the window.
/// - 04-28: nothing left in the window: unmatched.
///
/// The same when the payer has an invoice of its own (500,000, due in September, outside
/// the window) and a first deposit (990 on 04-01) that nothing pays: its names at the
/// threshold are then found by the search for a combined payment and kept, and the next
/// deposits search the invoices under them instead of those of their amount.
#[test]
fn bank_reconciliation_takes_a_near_names_invoice_in_order_among_many_of_its_amount() {
    let payer = "振込 ﾀﾅｶﾃﾞｻﾞｲﾝ";
    let tanaka = |no: &str, amount: u64, due: &str| {
        receivable(no, "株式会社田中デザイン", "タナカデザイソ", amount, due)
    };
    let mut receivables: Vec<Json> = (0..10)
        .map(|i| ito(&format!("AR-30{i:02}"), 110000, "2025-04-25"))
        .collect();
    receivables.extend([
        tanaka("AR-4001", 110660, "2025-04-25"),
        tanaka("AR-4002", 110000, "2025-03-31"),
        tanaka("AR-4003", 110000, "2025-05-20"),
        tanaka("AR-4004", 110000, "2025-01-31"),
    ]);
    let april: Vec<Json> = ["2025-04-25", "2025-04-26", "2025-04-27", "2025-04-28"]
        .iter()
        .map(|day| deposit(day, 110000, payer))
        .collect();
    let cleared = |deposit: &Json, receivable: &Json, difference: u64, confidence: f64| {
        json!({
            "deposit": deposit,
            "receivables": [receivable],
            "difference": difference,
            "difference_reason": if difference == 0 { "none" } else { "transfer_fee" },
            "confidence": confidence,
        })
    };
    let ito: Vec<Json> = receivables[..10].to_vec();
    let matches = json!([
        cleared(&april[0], &receivables[11], 0, 0.9429),
        cleared(&april[1], &receivables[12], 0, 0.9429),
        cleared(&april[2], &receivables[10], 660, 0.8486),
    ]);
    let mut open = ito.clone();
    open.push(receivables[13].clone());
    check(
        "matching.bank_reconciliation",
        json!({"deposits": april, "receivables": receivables}),
        json!({
            "matches": matches,
            "unmatched_deposits": [april[3]],
            "open_receivables": open,
        }),
    );

    let mut deposits = vec![deposit("2025-04-01", 990, payer)];
    deposits.extend(april.iter().cloned());
    let own = receivable(
        "AR-4010",
        "田中デザイン事務所",
        "タナカデザイン",
        500000,
        "2025-09-30",
    );
    receivables.push(own.clone());
    open.push(own);
    check(
        "matching.bank_reconciliation",
        json!({"deposits": deposits, "receivables": receivables}),
        json!({
            "matches": matches,
            "unmatched_deposits": [deposits[0], deposits[4]],
            "open_receivables": open,
        }),
    );
}

/// A payer's own invoices before a near name's: among many customers, names near one
/// another are common, and an invoice of the same amount under a near name is another
/// customer's. 山田商事 (ヤマダショウジ, the payer ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ once normalised) and 山田商会
/// (ヤマダショウカイ: 6 of 7 and 8 characters in place, Jaro (6/7 + 6/8 + 1) / 3 = 0.869048, a
/// 4-character prefix: 0.869048 + 0.4 × 0.130952 = 0.921429, over 0.8) each have an invoice
/// that could pay each deposit.
#[test]
fn bank_reconciliation_clears_the_payers_own_invoices_before_a_near_names() {
    let deposits = json!([
        deposit("2025-03-20", 110000, "振込 ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ"),
        deposit("2025-04-30", 220000, "振込 ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ"),
    ]);
    let receivables = json!([
        yamada("AR-3001", 110660, "2025-03-31"),
        receivable(
            "AR-3002",
            "株式会社山田商会",
            "ヤマダショウカイ",
            110000,
            "2025-03-20"
        ),
        yamada("AR-3003", 100000, "2025-03-31"),
        yamada("AR-3004", 120000, "2025-04-30"),
        receivable(
            "AR-3005",
            "株式会社山田商会",
            "ヤマダショウカイ",
            220000,
            "2025-04-30"
        ),
    ]);
    // 03-20, 110,000: 山田商会's AR-3002 is exact and due that day; 山田商事's own AR-3001 is
    // 660 yen more (a transfer fee) and due 11 days later. The payer's own invoice: confidence
    // 1 × 0.9 for the fee. 04-30, 220,000: 山田商会's AR-3005 is exact and due that day; no
    // single invoice of 山田商事 is, but its AR-3003 and AR-3004 are together (100,000 +
    // 120,000): confidence 1 × 0.9 for the combined payment. 山田商会's invoices stay open.
    check(
        "matching.bank_reconciliation",
        json!({"deposits": deposits, "receivables": receivables}),
        json!({
            "matches": [
                {"deposit": deposits[0], "receivables": [receivables[0]], "difference": 660, "difference_reason": "transfer_fee", "confidence": 0.9},
                {"deposit": deposits[1], "receivables": [receivables[2], receivables[3]], "difference": 0, "difference_reason": "none", "confidence": 0.9},
            ],
            "unmatched_deposits": [],
            "open_receivables": [receivables[1], receivables[4]],
        }),
    );
    // Every deposit went to the payer's own invoices: nothing to warn about.
    let reconcile = |receivables: &Json| {
        let dir = tempfile::tempdir().unwrap();
        let (result, notes) = run_block_noted(
            "matching.bank_reconciliation",
            dir.path(),
            json!({"deposits": deposits, "receivables": receivables}),
            &[],
        );
        let warnings = warnings_of(notes);
        (result.unwrap(), warnings)
    };
    assert_eq!(reconcile(&receivables).1, []);
    // Without the payer's own invoices, the near name's are cleared, at its similarity, and
    // the run says so: they may be another customer's.
    let others = json!([receivables[1], receivables[4]]);
    check(
        "matching.bank_reconciliation",
        json!({"deposits": deposits, "receivables": others}),
        json!({
            "matches": [
                {"deposit": deposits[0], "receivables": [others[0]], "difference": 0, "difference_reason": "none", "confidence": 0.9214},
                {"deposit": deposits[1], "receivables": [others[1]], "difference": 0, "difference_reason": "none", "confidence": 0.9214},
            ],
            "unmatched_deposits": [],
        }),
    );
    let (_, warnings) = reconcile(&others);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].code, "NAMES_DIFFER");
    assert_eq!(
        warnings[0].message_en,
        "2 deposits were cleared against invoices of a customer whose name is not the payer's \
         (a near name, similarity 0.8 or more): they may be another customer's invoices, check \
         them by their confidence: 振込 ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ → 株式会社山田商会 (0.9214), \
         振込 ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ → 株式会社山田商会 (0.9214)"
    );
    assert!(
        warnings[0]
            .message_ja
            .starts_with("2 件の入金を、振込依頼人名と名前が一致しない得意先"),
        "{}",
        warnings[0].message_ja
    );
    // One own invoice and one near name's: only the near one is counted.
    let (_, warnings) = reconcile(&json!([receivables[0], receivables[4]]));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].message_en.starts_with("1 deposit was cleared")
            && warnings[0]
                .message_en
                .ends_with("振込 ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ → 株式会社山田商会 (0.9214)"),
        "{}",
        warnings[0].message_en
    );
}

/// The deposits and receivables of the test above as tables, as `bank.read_statement` and
/// `csv.read` hand them on: read column by column, with the customers found by the name
/// join, the block clears what it cleared from the rows — at the default threshold and at
/// 0.5, where every pair of names is scored.
#[test]
fn bank_reconciliation_of_tables_clears_what_the_rows_clear() {
    let (deposits, receivables) = march_statement();
    let table = |rows: &Json| Value::Json(rows.clone()).to_table().unwrap();
    let (deposit_table, receivable_table) = (table(&deposits), table(&receivables));
    let as_rows = |t: &polars::prelude::DataFrame| Value::Table(t.clone()).to_json();
    for threshold in [0.8, 0.5] {
        let dir = tempfile::tempdir().unwrap();
        let run = |deposits: Value, receivables: Value| {
            let inputs = vec![
                ("deposits", deposits),
                ("receivables", receivables),
                ("name_threshold", Value::Json(json!(threshold))),
            ];
            run_block_values("matching.bank_reconciliation", dir.path(), inputs).unwrap()
        };
        let from_tables = run(
            Value::Table(deposit_table.clone()),
            Value::Table(receivable_table.clone()),
        );
        let from_rows = run(
            Value::Json(as_rows(&deposit_table)),
            Value::Json(as_rows(&receivable_table)),
        );
        assert_eq!(from_tables, from_rows, "name_threshold {threshold}");
        if threshold == 0.8 {
            // As worked out in the test above: 山田 exact, 佐藤 660 short, 鈴木 88,000 + 44,000
            // combined; 田中 and 松本 unmatched; 田中, 高橋 and 伊藤 open (847,000).
            assert_eq!(
                from_tables["summary"],
                json!({
                    "deposit_count": 5, "deposit_amount": 843340,
                    "cleared_count": 3, "cleared_amount": 593340,
                    "unmatched_deposit_count": 2, "unmatched_deposit_amount": 250000,
                    "open_receivable_count": 3, "open_receivable_amount": 847000,
                    "fee_difference_total": 660,
                })
            );
            let cleared: Vec<Vec<&Json>> = from_tables["matches"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| {
                    m["receivables"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|r| &r["invoice_no"])
                        .collect()
                })
                .collect();
            assert_eq!(
                json!(cleared),
                json!([["AR-1001"], ["AR-1002"], ["AR-1003", "AR-1004"]])
            );
        }
    }
}

/// Tables in give tables out: the unmatched deposits and the open receivables are the
/// inputs' own rows, their columns and column types kept (an amount stays a whole number),
/// also when no row is left; `matches` nests the cleared rows as JSON.
#[test]
fn bank_reconciliation_of_tables_gives_the_rows_left_as_tables() {
    let (deposits, receivables) = march_statement();
    let table = |rows: &Json| Value::Json(rows.clone()).to_table().unwrap();
    let (deposit_table, receivable_table) = (table(&deposits), table(&receivables));
    let dir = tempfile::tempdir().unwrap();
    let left = |deposits: polars::prelude::DataFrame| {
        let inputs = Inputs::from_pairs(vec![
            ("deposits".to_string(), Value::Table(deposits)),
            (
                "receivables".to_string(),
                Value::Table(receivable_table.clone()),
            ),
        ]);
        let out = outputs_of("matching.bank_reconciliation", dir.path(), inputs);
        let as_table = |key: &str| match out.0.get(key) {
            Some(Value::Table(t)) => t.clone(),
            other => panic!("{key}: a table in, a table out: {other:?}"),
        };
        let matches = out.0.get("matches").cloned();
        (
            as_table("unmatched_deposits"),
            as_table("open_receivables"),
            matches,
        )
    };
    let (unmatched, open, matches) = left(deposit_table.clone());
    // 田中 (200,000) and 松本 (50,000) unmatched; 田中, 高橋 and 伊藤 open.
    assert_eq!(unmatched.schema(), deposit_table.schema());
    assert_eq!(open.schema(), receivable_table.schema());
    let column = |t: &polars::prelude::DataFrame, name: &str| {
        Value::Table(t.select([name]).unwrap()).to_json()
    };
    assert_eq!(
        column(&unmatched, "amount"),
        json!([{"amount": 200000}, {"amount": 50000}])
    );
    assert_eq!(open.height(), 3);
    let Some(Value::Json(Json::Array(matches))) = matches else {
        panic!("matches are JSON")
    };
    assert_eq!(matches[0]["deposit"]["amount"], json!(330000));
    assert_eq!(matches[2]["receivables"][1]["invoice_no"], json!("AR-1004"));
    // No deposit: nothing unmatched, with the deposits' columns; every receivable open.
    let (unmatched, open, _) = left(deposit_table.head(Some(0)));
    assert_eq!(unmatched.height(), 0);
    assert_eq!(unmatched.schema(), deposit_table.schema());
    assert_eq!(open.height(), receivable_table.height());
}

#[test]
fn three_way_match_reports_each_exception_kind_with_its_amount() {
    let po = |no: &str, item: &str, q: &str, p: &str, a: &str| json!({"po_no": no, "item": item, "quantity": q, "unit_price": p, "amount": a});
    let rc = |no: &str, item: &str, q: &str, d: &str| json!({"po_no": no, "item": item, "quantity": q, "date": d});
    let inv = |i: &str, no: &str, item: &str, q: &str, p: &str, a: &str| json!({"invoice_no": i, "po_no": no, "item": item, "quantity": q, "unit_price": p, "amount": a});
    let orders = json!([
        po("PO-2501", "コピー用紙A4", "50", "2500", "125000"),
        po("PO-2501", "トナーカートリッジ", "10", "8800", "88000"),
        po("PO-2502", "ノートPC", "3", "148000", "444000"),
        po("PO-2503", "オフィスチェア", "5", "32000", "160000"),
        po("PO-2504", "名刺印刷", "2", "5500", "11000"),
        po("PO-2505", "会議テーブル", "1", "98000", "98000"),
        po("PO-2506", "液晶ディスプレイ", "4", "30000", "120000"),
        po("PO-2507", "ボールペン", "100", "110", "11000"),
    ]);
    let receipts = json!([
        rc("PO-2501", "コピー用紙A4", "50", "2025-03-03"),
        rc("PO-2501", "トナーカートリッジ", "10", "2025-03-03"),
        rc("PO-2502", "ノートPC", "2", "2025-03-10"),
        rc("PO-2503", "オフィスチェア", "5", "2025-03-12"),
        rc("PO-2505", "会議テーブル", "1", "2025-03-20"),
        rc("PO-2506", "液晶ディスプレイ", "4", "2025-03-21"),
        rc("PO-2507", "ボールペン", "100", "2025-03-24"),
    ]);
    let invoices = json!([
        inv(
            "SI-9001",
            "PO-2501",
            "コピー用紙A4",
            "50",
            "2500",
            "125,000"
        ),
        inv(
            "SI-9001",
            "PO-2501",
            "トナーカートリッジ",
            "10",
            "8850",
            "88,500"
        ),
        inv("SI-9002", "PO-2502", "ノートPC", "3", "148000", "444,000"),
        inv(
            "SI-9003",
            "PO-2503",
            "オフィスチェア",
            "5",
            "35000",
            "175,000"
        ),
        inv("SI-9004", "PO-2504", "名刺印刷", "2", "5500", "11,000"),
        inv("SI-9005", "PO-2599", "USBメモリ", "10", "1200", "12,000"),
        inv(
            "SI-9006",
            "PO-2506",
            "液晶ディスプレイ",
            "6",
            "30000",
            "180,000"
        ),
        inv("SI-9007", "PO-2507", "ボールペン", "100", "110", "11,500"),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let out = run_block(
        "matching.three_way_match",
        dir.path(),
        json!({"purchase_orders": orders, "receipts": receipts, "invoices": invoices,
               "price_tolerance_rate": 0.01, "amount_tolerance": 1}),
    )
    .unwrap();
    // Toner: 8,850 vs 8,800 is 0.57 % (≤ 1 %), 88,500 vs 88,000 is 500 ≤ 880 + 1 → within tolerance.
    assert_eq!(
        out["matches"],
        json!([
            {"po": orders[0], "receipt": receipts[0], "invoice": invoices[0], "status": "matched"},
            {"po": orders[1], "receipt": receipts[1], "invoice": invoices[1], "status": "within_tolerance"},
        ])
    );
    // ノートPC: 3 invoiced, 2 received → 1 × 148,000. Chairs: (35,000 − 32,000) × 5 = 15,000.
    // Business cards: no receipt. USB: no order. Displays: 6 of 4 ordered → 2 × 30,000.
    // Pens: 11,500 vs 110 × 100 = 11,000 → 500 > 110 + 1. Table: received, never invoiced.
    let got: Vec<(Json, Json, Json, Json)> = out["exceptions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["po_no"].clone(),
                e["item"].clone(),
                e["type"].clone(),
                e["amount"].clone(),
            )
        })
        .collect();
    let want: Vec<(Json, Json, Json, Json)> = [
        ("PO-2502", "ノートPC", "quantity_mismatch", 148000),
        ("PO-2503", "オフィスチェア", "price_mismatch", 15000),
        ("PO-2504", "名刺印刷", "missing_receipt", 11000),
        ("PO-2599", "USBメモリ", "missing_po", 12000),
        ("PO-2506", "液晶ディスプレイ", "over_invoiced", 60000),
        ("PO-2507", "ボールペン", "amount_mismatch", 500),
        ("PO-2505", "会議テーブル", "missing_invoice", 98000),
    ]
    .into_iter()
    .map(|(a, b, c, d)| (json!(a), json!(b), json!(c), json!(d)))
    .collect();
    assert_eq!(got, want);
    assert_eq!(
        out["exceptions"][0]["rows"],
        json!({"po": orders[2], "receipt": receipts[2], "invoice": invoices[2]})
    );
    // Differences: 148,000 + 15,000 + 60,000 + 500 = 223,500.
    assert_eq!(
        out["summary"],
        json!({
            "match_count": 2, "matched_count": 1, "within_tolerance_count": 1, "exception_count": 7,
            "exceptions_by_type": {"amount_mismatch": 1, "missing_invoice": 1, "missing_po": 1, "missing_receipt": 1,
                                   "over_invoiced": 1, "price_mismatch": 1, "quantity_mismatch": 1},
            "difference_total": 223500,
        })
    );
    // With no tolerance at all the toner line becomes a price mismatch of 50 × 10 = 500.
    let strict = run_block(
        "matching.three_way_match",
        dir.path(),
        json!({"purchase_orders": [orders[1]], "receipts": [receipts[1]], "invoices": [invoices[1]]}),
    )
    .unwrap();
    assert_eq!(strict["exceptions"][0]["type"], "price_mismatch");
    assert_eq!(strict["exceptions"][0]["amount"], 500);
    assert_eq!(strict["matches"], json!([]));
}

#[test]
fn semantic_topk_ranks_by_shared_words_without_an_embedder() {
    let candidates = json!([
        "コピー用紙 A4 500枚",
        "トナーカートリッジ 黒",
        "ノートパソコン 14インチ",
        "オフィスチェア メッシュ"
    ]);
    check(
        "matching.semantic_topk",
        json!({"queries": ["A4コピー用紙", "黒トナー", "会議室の予約"], "candidates": candidates, "top_k": 1}),
        json!({
            "matches": [
                {"query": "A4コピー用紙", "candidates": [{"item": "コピー用紙 A4 500枚", "score": 1}]},
                {"query": "黒トナー", "candidates": [{"item": "トナーカートリッジ 黒", "score": 1}]},
            ],
            "unmatched": ["会議室の予約"],
        }),
    );
    let accounts = json!([
        {"科目": "旅費交通費", "説明": "電車 バス タクシー代"},
        {"科目": "交際費", "説明": "接待 飲食"},
    ]);
    check(
        "matching.semantic_topk",
        json!({"queries": [{"摘要": "タクシー代 渋谷"}], "candidates": accounts,
               "query_fields": ["摘要"], "candidate_fields": ["科目", "説明"], "min_score": 0.5}),
        json!({"matches": [{"query": {"摘要": "タクシー代 渋谷"}, "candidates": [{"item": accounts[0], "score": 1}]}],
               "unmatched": []}),
    );
}

#[test]
fn evidence_lookup_needs_the_columns_it_is_told_to_read() {
    let dir = tempfile::tempdir().unwrap();
    let rows = json!([{"伝票番号": "J-1", "請求書番号": "INV-0001", "金額": 1000}]);
    let files = json!([{"name": "a.txt", "text_excerpt": "請求書番号 inv 0001 金額 1,000円"}]);
    // Found with case, spaces and the hyphen folded; the amount written with a separator.
    let out = run_block(
        "matching.evidence_lookup",
        dir.path(),
        json!({"rows": rows, "files": files, "number_field": "請求書番号", "amount_field": "金額"}),
    )
    .unwrap();
    assert_eq!(out["found"][0]["evidence_files"], "a.txt");
    assert_eq!(out["found"][0]["amount_agrees"], true);
    // A number column the rows lack is an error, never "no evidence" for every row.
    let err = run_block(
        "matching.evidence_lookup",
        dir.path(),
        json!({"rows": rows, "files": files, "number_field": "invoice_no"}),
    )
    .unwrap_err();
    assert_eq!(err.code, keiri_run::block::ErrorCode::ColumnNotFound);
}
