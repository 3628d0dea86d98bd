//! `ai/*` blocks against keiri-llm's fake OpenAI-compatible server: what is sent (the strict
//! schema, only the rows that need the model), what comes back (answers in input order,
//! unusable answers reported, never passed on), the calls reported for the run's events, and
//! `LLM_NOT_CONFIGURED` without a model.

use std::sync::Arc;
use std::time::Duration;

use keiri_llm::testkit::{FakeHandle, FakeServer, Reply, TestClock};
use keiri_llm::{Env, Llm, NoJitter};
use keiri_run::block::{ErrorCode, LlmCall};
use serde_json::{Value as Json, json};

use crate::matching::run_block_llm;

pub(crate) const API_KEY: &str = "sk-test-ai-blocks-0123456789abcdef";

/// A model on a fake server answering `replies`; no retries, a fixed clock.
pub(crate) fn fake_llm(replies: Vec<Reply>) -> (Llm, FakeHandle) {
    let (base_url, handle) = FakeServer::start_background(replies).unwrap();
    let env = Env::from_pairs([
        ("KEIRI_LLM_BASE_URL", base_url.as_str()),
        ("KEIRI_LLM_API_KEY", API_KEY),
        ("KEIRI_LLM_MODEL", "test-model"),
        ("KEIRI_LLM_MAX_RETRIES", "0"),
    ]);
    let llm = Llm::from_env(&env)
        .unwrap()
        .with_clock(Arc::new(TestClock::fixed()))
        .with_jitter(Arc::new(NoJitter))
        .with_timeout(Duration::from_secs(20));
    (llm, handle)
}

fn run(
    id: &str,
    inputs: Json,
    llm: &Llm,
) -> (Result<Json, keiri_run::block::BlockError>, Vec<LlmCall>) {
    let dir = tempfile::tempdir().unwrap();
    run_block_llm(id, dir.path(), inputs, Some(llm))
}

fn ok(id: &str, inputs: Json, llm: &Llm) -> (Json, Vec<LlmCall>) {
    let (result, calls) = run(id, inputs, llm);
    (result.unwrap_or_else(|e| panic!("{id} failed: {e}")), calls)
}

/// The `json_schema` response format of a recorded request.
fn sent_schema(body: &Json) -> &Json {
    &body["response_format"]["json_schema"]["schema"]
}

/// The user message of a recorded request.
fn user_message(body: &Json) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap()
        .to_string()
}

#[test]
fn without_a_model_every_ai_block_fails_with_llm_not_configured() {
    let cases = [
        (
            "ai.classify_account",
            json!({"rows": [{"摘要": "タクシー代"}]}),
        ),
        (
            "ai.explain_variances",
            json!({"rows": [{"account": "売上高", "current": 2, "prior": 1}]}),
        ),
        (
            "ai.extract_fields",
            json!({"documents": ["請求書"], "output_schema": {"請求書番号": "string"}}),
        ),
        (
            "ai.process_llm",
            json!({"prompt": "判定して", "output_schema": {"判定": "string"}}),
        ),
        ("ai.summarize_documents", json!({"documents": ["契約書"]})),
    ];
    for (id, inputs) in cases {
        let dir = tempfile::tempdir().unwrap();
        let (result, calls) = run_block_llm(id, dir.path(), inputs, None);
        let err = result.expect_err(id);
        assert_eq!(err.code, ErrorCode::Llm("LLM_NOT_CONFIGURED"), "{id}");
        assert_eq!(err.code.as_str(), "LLM_NOT_CONFIGURED");
        assert!(err.hint.is_some(), "{id}: a hint says how to configure one");
        assert!(calls.is_empty());
    }
}

const INVOICE_A: &str = "請求書\n株式会社さくら商事 御中\n請求書番号 INV-001\n請求日 令和7年3月10日\n登録番号 T1234567890123\n合計金額 ¥110,000（うち消費税 ¥10,000）";
const INVOICE_B: &str = "請求書\n請求書番号 INV-002\n請求日 2025/03/15\n合計金額 55,000円";

#[test]
fn extract_fields_sends_a_strict_schema_and_reports_what_a_document_lacks() {
    let (llm, server) = fake_llm(vec![
        // The documents are sent at once; each answer goes to the request that asked for it.
        Reply::json_content(&json!({"請求書番号": "INV-002", "請求日": "2025-03-15", "合計金額": 55000, "登録番号": null}))
            .when_body_contains("INV-002")
            .with_delay(Duration::from_millis(50)),
        Reply::json_content(&json!({"請求書番号": "INV-001", "請求日": "2025-03-10", "合計金額": 110000, "登録番号": "T1234567890123"}))
            .when_body_contains("INV-001"),
    ]);
    let (out, calls) = ok(
        "ai.extract_fields",
        json!({
            "documents": [
                {"name": "a.pdf", "text": INVOICE_A},
                {"name": "b.pdf", "text": INVOICE_B},
                {"name": "scan.pdf", "text": "  "},
            ],
            "output_schema": {"請求書番号": "string", "請求日": "string", "合計金額": "number", "登録番号": "string"},
            "instruction": "金額は税込で",
        }),
        &llm,
    );
    assert_eq!(
        out["rows"],
        json!([
            {"請求書番号": "INV-001", "請求日": "2025-03-10", "合計金額": 110000, "登録番号": "T1234567890123", "source_name": "a.pdf"},
            {"請求書番号": "INV-002", "請求日": "2025-03-15", "合計金額": 55000, "登録番号": null, "source_name": "b.pdf"},
        ])
    );
    let failures = out["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 2, "{failures:?}");
    // In the documents' order.
    assert_eq!(failures[0]["name"], "b.pdf");
    assert_eq!(failures[0]["missing_fields"], json!(["登録番号"]));
    assert_eq!(failures[1]["name"], "scan.pdf");
    assert_eq!(failures[1]["missing_fields"].as_array().unwrap().len(), 4);
    // Two calls: the empty document is not sent.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let schema = sent_schema(&requests[0].body);
    assert_eq!(
        requests[0].body["response_format"]["json_schema"]["strict"],
        true
    );
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(
        schema["required"],
        json!(["請求書番号", "請求日", "合計金額", "登録番号"])
    );
    // Fields the user did not mark required may be null: "not in the document", not a guess.
    assert_eq!(
        schema["properties"]["合計金額"]["type"],
        json!(["number", "null"])
    );
    let system = requests[0].body["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("金額は税込で"), "the instruction is sent");
    assert!(system.contains("never guess"));
    assert_eq!(calls.len(), 2);
    for call in &calls {
        assert_eq!(call.model, "test-model");
        assert_eq!(call.provider, "openai_compatible");
        assert_eq!(call.strategy.as_deref(), Some("json_schema"));
        assert_eq!(
            (
                call.prompt_tokens,
                call.completion_tokens,
                call.total_tokens
            ),
            (10, 5, 15)
        );
        assert_eq!(call.requests, 1);
        assert!(call.error.is_none());
    }
    let mut purposes: Vec<&str> = calls.iter().map(|c| c.purpose.as_str()).collect();
    purposes.sort_unstable();
    assert_eq!(purposes, ["document a.pdf", "document b.pdf"]);
}

#[test]
fn an_answer_outside_the_schema_is_a_failure_of_that_document_only() {
    // a.pdf: every output mode answers with a key the schema does not have (json_schema,
    // then function calling, then free-form); b.pdf answers well.
    let bad = json!({"請求書番号": "INV-001", "発明した項目": "x"});
    let (llm, server) = fake_llm(vec![
        Reply::json_content(&bad).when_body_contains("INV-001"),
        Reply::tool_calls(&[("c1", "extract_fields", &bad.to_string())])
            .when_body_contains("INV-001"),
        Reply::json_content(&bad).when_body_contains("INV-001"),
        Reply::json_content(&json!({"請求書番号": "INV-002"})).when_body_contains("INV-002"),
    ]);
    let (out, calls) = ok(
        "ai.extract_fields",
        json!({
            "documents": [{"name": "a.pdf", "text": INVOICE_A}, {"name": "b.pdf", "text": INVOICE_B}],
            "output_schema": {"type": "object", "properties": {"請求書番号": {"type": "string"}}, "required": ["請求書番号"]},
        }),
        &llm,
    );
    assert_eq!(
        out["rows"],
        json!([{"請求書番号": "INV-002", "source_name": "b.pdf"}])
    );
    let failures = out["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0]["name"], "a.pdf");
    assert!(
        failures[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("LLM_OUTPUT_INVALID"),
        "{failures:?}"
    );
    assert_eq!(server.requests().len(), 4);
    let a = calls
        .iter()
        .find(|c| c.purpose == "document a.pdf")
        .unwrap();
    assert_eq!(a.error.as_deref(), Some("LLM_OUTPUT_INVALID"));
    // A required field is not nullable.
    let schema = sent_schema(&server.requests()[0].body).clone();
    assert_eq!(schema["properties"]["請求書番号"]["type"], "string");
}

#[test]
fn process_llm_per_item_keeps_the_input_order_and_reports_its_usage() {
    let (llm, server) = fake_llm(vec![
        Reply::json_content(&json!({"判定": "不一致", "理由": "金額が違う"}))
            .when_body_contains("R-2")
            .with_usage(100, 20),
        Reply::json_content(&json!({"判定": "一致", "理由": "同じ"}))
            .when_body_contains("R-1")
            .with_delay(Duration::from_millis(50))
            .with_usage(100, 20),
    ]);
    let (out, calls) = ok(
        "ai.process_llm",
        json!({
            "prompt": "稟議書と請求書の金額が一致しているか判定してください",
            "output_schema": {"判定": {"type": "string", "enum": ["一致", "不一致"]}, "理由": "string"},
            "input_data": [{"稟議": "R-1", "金額": 1000, "請求": 1000}, {"稟議": "R-2", "金額": 1000, "請求": 1200}],
            "per_item": true,
        }),
        &llm,
    );
    assert_eq!(
        out["results"],
        json!([{"判定": "一致", "理由": "同じ"}, {"判定": "不一致", "理由": "金額が違う"}])
    );
    let summary = &out["summary"];
    assert_eq!(summary["calls"], 2);
    assert_eq!(summary["total_tokens"], 240);
    assert_eq!(summary["model"], "test-model");
    assert_eq!(summary["truncated"], false);
    assert_eq!(summary["schema_strict"], true);
    assert_eq!(calls.len(), 2);
    // Not marked optional: the enum stays as given, not nullable.
    let schema = sent_schema(&server.requests()[0].body).clone();
    assert_eq!(
        schema["properties"]["判定"]["enum"],
        json!(["一致", "不一致"])
    );
    assert_eq!(schema["properties"]["判定"]["type"], "string");
}

#[test]
fn process_llm_cuts_long_input_and_refuses_what_it_cannot_send() {
    let (llm, server) = fake_llm(vec![Reply::json_content(&json!({"value": ["a", "b"]}))]);
    let (out, _) = ok(
        "ai.process_llm",
        json!({
            "instruction": "重要な語を挙げて",
            // A non-object root is wrapped for the provider and unwrapped again.
            "output_schema": {"type": "array", "items": {"type": "string"}},
            "input_data": "あ".repeat(50),
            "max_input_chars": 10,
            "model": "other-model",
            "temperature": 0.5,
        }),
        &llm,
    );
    assert_eq!(out["results"], json!([["a", "b"]]));
    assert_eq!(out["summary"]["truncated"], true);
    assert_eq!(out["summary"]["model"], "other-model");
    assert_eq!(out["summary"]["temperature"], 0.5);
    let body = &server.requests()[0].body;
    assert_eq!(body["model"], "other-model");
    let user = user_message(body);
    assert!(
        user.contains(&"あ".repeat(10)) && !user.contains(&"あ".repeat(11)),
        "{user}"
    );

    for (inputs, key) in [
        (json!({"output_schema": {"a": "string"}}), "prompt"),
        (json!({"prompt": "x", "output_schema": {}}), "output_schema"),
        (
            json!({"prompt": "x", "output_schema": {"type": "object", "properties": {}}}),
            "output_schema",
        ),
        (json!({"prompt": "x", "output_schema": 3}), "output_schema"),
        (
            json!({"prompt": "x", "output_schema": {"a": "string"}, "temperature": 3}),
            "temperature",
        ),
        (
            json!({"prompt": "x", "output_schema": {"a": "string"}, "max_input_chars": 0}),
            "max_input_chars",
        ),
    ] {
        let (result, calls) = run("ai.process_llm", inputs.clone(), &llm);
        let err = result.expect_err(&inputs.to_string());
        assert_eq!(err.code, ErrorCode::InputInvalid, "{inputs}");
        assert!(err.message_en.contains(key), "{inputs}: {}", err.message_en);
        assert!(calls.is_empty());
    }
    assert_eq!(server.requests().len(), 1, "nothing is sent for bad inputs");
}

#[test]
fn process_llm_never_passes_on_an_answer_outside_the_schema() {
    let wrong = json!({"判定": "たぶん"});
    let (llm, _server) = fake_llm(vec![
        Reply::json_content(&wrong),
        Reply::tool_calls(&[("c1", "process_llm", &wrong.to_string())]),
        Reply::json_content(&wrong),
    ]);
    let (result, calls) = run(
        "ai.process_llm",
        json!({"prompt": "判定", "output_schema": {"判定": {"type": "string", "enum": ["一致", "不一致"]}}}),
        &llm,
    );
    let err = result.unwrap_err();
    assert_eq!(err.code.as_str(), "LLM_OUTPUT_INVALID");
    assert_eq!(calls[0].error.as_deref(), Some("LLM_OUTPUT_INVALID"));
}

#[test]
fn a_provider_failure_ends_the_block_with_its_code() {
    let (llm, _server) = fake_llm(vec![Reply::error(401, "invalid api key")]);
    let (result, calls) = run(
        "ai.summarize_documents",
        json!({"documents": [{"name": "契約書.pdf", "text": "賃貸借契約書"}]}),
        &llm,
    );
    let err = result.unwrap_err();
    assert_eq!(err.code.as_str(), "LLM_UNAUTHORIZED");
    assert!(err.hint.is_some());
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].error.as_deref(), Some("LLM_UNAUTHORIZED"));
    let text = serde_json::to_string(&calls).unwrap();
    assert!(!text.contains(API_KEY));
}

#[test]
fn classify_account_answers_only_from_the_chart_and_routes_doubtful_rows_to_review() {
    let chart = json!([
        {"code": "5210", "name": "旅費交通費", "description": "電車・タクシー"},
        {"code": "5220", "name": "消耗品費"},
        {"code": "1530", "name": "工具器具備品"},
    ]);
    let (llm, server) = fake_llm(vec![Reply::json_content(&json!({"items": [
        {"row": 1, "account_code": "5210", "confidence": 0.97, "reason": "タクシー利用"},
        {"row": 3, "account_code": "1530", "confidence": 0.55, "reason": "10万円以上のPCだが用途が不明"},
        {"row": 3, "account_code": "5220", "confidence": 0.9, "reason": "a second answer for row 3 is ignored"},
    ]}))]);
    let (out, calls) = ok(
        "ai.classify_account",
        json!({
            "rows": [
                {"日付": "2025-03-03", "摘要": "タクシー代 渋谷→新宿", "取引先": "日本交通", "金額": "2,340"},
                {"日付": "2025-03-05", "摘要": "Amazon", "取引先": "アマゾンジャパン", "金額": "3,980"},
                {"日付": "2025-03-09", "摘要": "ノートPC", "取引先": "ビックカメラ", "金額": "148,000"},
            ],
            "chart_of_accounts": chart,
            // The spec's default (English columns) is what the engine passes when the plan
            // names none: the Japanese columns are found instead.
            "text_fields": ["description", "vendor", "amount"],
            "min_confidence": 0.7,
        }),
        &llm,
    );
    let rows = out["rows"].as_array().unwrap();
    assert_eq!(rows[0]["suggested_account_code"], "5210");
    assert_eq!(rows[0]["suggested_account"], "旅費交通費");
    assert_eq!(rows[0]["confidence"], 0.97);
    assert_eq!(
        rows[0]["日付"], "2025-03-03",
        "the row's own columns are kept"
    );
    assert_eq!(
        rows[1]["suggested_account_code"],
        Json::Null,
        "row 2 was not answered"
    );
    assert_eq!(rows[1]["confidence"], 0.0);
    assert_eq!(rows[2]["suggested_account"], "工具器具備品");
    let low: Vec<&Json> = out["low_confidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["摘要"])
        .collect();
    assert_eq!(low, [&json!("Amazon"), &json!("ノートPC")]);
    let summary = &out["summary"];
    assert_eq!(
        summary["per_account"],
        json!({"工具器具備品": 1, "旅費交通費": 1})
    );
    assert_eq!(summary["confidence"]["high"], 1);
    assert_eq!(summary["confidence"]["low"], 2);
    assert_eq!(summary["text_fields"], json!(["摘要", "取引先", "金額"]));
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].purpose, "rows 1-3");
    let body = &server.requests()[0].body;
    // The model can only answer with the chart's codes.
    assert_eq!(
        sent_schema(body)["properties"]["items"]["items"]["properties"]["account_code"]["enum"],
        json!(["5210", "5220", "1530"])
    );
    let user = user_message(body);
    assert!(
        user.contains("タクシー代 渋谷→新宿") && !user.contains("2025-03-03"),
        "only the text fields are sent"
    );
}

#[test]
fn classify_account_uses_the_common_chart_when_none_is_given_and_batches_rows() {
    let answer = |from: usize, to: usize| {
        let items: Vec<Json> = (from..=to)
            .map(|r| json!({"row": r, "account_code": "消耗品費", "confidence": 0.8, "reason": "備品"}))
            .collect();
        Reply::json_content(&json!({"items": items}))
    };
    let (llm, server) = fake_llm(vec![
        // The user message is a JSON string in the body: its quotes are escaped there.
        answer(1, 25).when_body_contains(r#"\"row\":1,"#),
        answer(26, 30).when_body_contains(r#"\"row\":26,"#),
    ]);
    let rows: Vec<Json> = (1..=30)
        .map(|i| json!({"description": format!("文房具 {i}"), "amount": 500}))
        .collect();
    let (out, calls) = ok("ai.classify_account", json!({"rows": rows}), &llm);
    assert_eq!(out["summary"]["per_account"], json!({"消耗品費": 30}));
    assert_eq!(out["low_confidence"], json!([]));
    assert_eq!(calls.len(), 2);
    let enum_values = sent_schema(&server.requests()[0].body)["properties"]["items"]["items"]
        ["properties"]["account_code"]["enum"]
        .as_array()
        .unwrap()
        .clone();
    assert!(enum_values.contains(&json!("旅費交通費")) && enum_values.contains(&json!("地代家賃")));
}

#[test]
fn explain_variances_asks_only_about_flagged_accounts() {
    let (llm, server) = fake_llm(vec![Reply::json_content(&json!({"comments": [
        {"row": 1, "comment": "3月に大口の掛売上があったため増加"},
        {"row": 3, "comment": "新規の広告出稿（前月は計上なし）"},
    ]}))]);
    let (out, calls) = ok(
        "ai.explain_variances",
        json!({
            "rows": [
                // +50%, +500,000: flagged.
                {"account": "売掛金", "current": "1,500,000", "prior": "1,000,000"},
                // +2%: under the rate.
                {"account": "地代家賃", "current": 510000, "prior": 500000},
                // No prior amount: any change is over the rate.
                {"account": "広告宣伝費", "current": 300000, "prior": 0},
            ],
            "threshold_rate": 0.1,
            "threshold_amount": 100000,
            "context": "3月 A社へ大口販売 500,000円",
        }),
        &llm,
    );
    let rows = out["rows"].as_array().unwrap();
    assert_eq!(rows[0]["change_amount"], 500000);
    assert_eq!(rows[0]["change_rate"], 0.5);
    assert_eq!(rows[0]["flagged"], true);
    assert_eq!(rows[0]["comment"], "3月に大口の掛売上があったため増加");
    assert_eq!(rows[1]["flagged"], false);
    assert_eq!(rows[1]["comment"], Json::Null);
    assert_eq!(rows[2]["change_rate"], Json::Null);
    assert_eq!(rows[2]["comment"], "新規の広告出稿（前月は計上なし）");
    assert_eq!(out["summary"]["flagged"], 2);
    assert_eq!(out["summary"]["commented"], 2);
    assert_eq!(calls.len(), 1);
    let user = user_message(&server.requests()[0].body);
    assert!(user.contains("売掛金") && user.contains("広告宣伝費") && !user.contains("地代家賃"));
    assert!(user.contains("A社へ大口販売"), "the context is sent");
    assert!(user.contains("Japanese"));
}

#[test]
fn explain_variances_without_flagged_rows_calls_nothing() {
    let (llm, server) = fake_llm(vec![]);
    let (out, calls) = ok(
        "ai.explain_variances",
        json!({"rows": [{"account": "地代家賃", "current": 500000, "prior": 500000}]}),
        &llm,
    );
    assert_eq!(out["summary"]["commented"], 0);
    assert!(calls.is_empty());
    assert!(server.requests().is_empty());
    let (result, _) = run(
        "ai.explain_variances",
        json!({"rows": [{"科目": "地代家賃", "当月": 1, "前月": 2}]}),
        &llm,
    );
    assert_eq!(
        result.unwrap_err().code,
        ErrorCode::ColumnNotFound,
        "a missing column is named"
    );
}

#[test]
fn summarize_documents_summarises_each_then_all() {
    let (llm, server) = fake_llm(vec![
        Reply::json_content(&json!({"summary": "事務所の賃貸借契約。月額30万円、2年。", "key_points": ["月額30万円", "契約期間2年"]}))
            .when_body_contains("賃貸借契約書"),
        Reply::json_content(&json!({"summary": "保守契約。年額12万円。", "key_points": ["年額12万円"]}))
            .when_body_contains("保守契約書"),
        Reply::json_content(&json!({"overall_summary": "固定費の契約が2件。"}))
            .when_body_contains("Summaries of the documents"),
    ]);
    let (out, calls) = ok(
        "ai.summarize_documents",
        json!({
            "documents": [
                {"name": "lease.pdf", "text": "賃貸借契約書 月額300,000円 期間2年"},
                {"name": "empty.pdf", "text": ""},
                {"name": "maint.pdf", "text": "保守契約書 年額120,000円"},
            ],
            "instruction": "支払条件と契約期間を中心に",
            "max_chars": 200,
        }),
        &llm,
    );
    let names: Vec<&Json> = out["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["name"])
        .collect();
    assert_eq!(
        names,
        [
            &json!("lease.pdf"),
            &json!("empty.pdf"),
            &json!("maint.pdf")
        ]
    );
    assert_eq!(
        out["summaries"][0]["key_points"],
        json!(["月額30万円", "契約期間2年"])
    );
    assert_eq!(out["overall_summary"], "固定費の契約が2件。");
    assert_eq!(calls.len(), 3);
    assert_eq!(server.requests().len(), 3);
    let system = server.requests()[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.contains("支払条件と契約期間を中心に") && system.contains("about 200 characters")
    );
}

#[test]
fn a_document_given_by_path_is_read_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    keiri_fs::write_atomic(
        &dir.path().join("memo.txt"),
        "議事録 3月度 予算の見直し".as_bytes(),
    )
    .unwrap();
    let (llm, server) = fake_llm(vec![Reply::json_content(
        &json!({"summary": "予算の見直し", "key_points": []}),
    )]);
    let (result, _) = run_block_llm(
        "ai.summarize_documents",
        dir.path(),
        json!({"documents": [{"path": "memo.txt"}]}),
        Some(&llm),
    );
    let out = result.unwrap();
    assert_eq!(out["summaries"][0]["name"], "memo.txt");
    assert!(user_message(&server.requests()[0].body).contains("予算の見直し"));
    let (result, _) = run_block_llm(
        "ai.summarize_documents",
        dir.path(),
        json!({"documents": [{"path": "missing.pdf"}]}),
        Some(&llm),
    );
    assert_eq!(result.unwrap_err().code, ErrorCode::FileNotFound);
}

#[test]
fn one_model_serves_node_after_node() {
    // Each node drives the model on a runtime of its own; the model (and its HTTP client) is
    // the run's, shared by every node: a connection kept from the first node must not break
    // the second's call.
    let (llm, server) = fake_llm(vec![
        Reply::json_content(&json!({"summary": "一つ目", "key_points": []})),
        Reply::json_content(&json!({"summary": "二つ目", "key_points": []})),
        Reply::json_content(&json!({"summary": "三つ目", "key_points": []})),
    ]);
    for expected in ["一つ目", "二つ目", "三つ目"] {
        let (out, _) = ok(
            "ai.summarize_documents",
            json!({"documents": ["契約書の本文"]}),
            &llm,
        );
        assert_eq!(out["overall_summary"], expected);
    }
    assert_eq!(server.requests().len(), 3);
}
