//! `keiri eval planner`: a whole eval against the fake OpenAI-compatible server, and its
//! errors (no provider, a bad case file).

use keiri_llm::testkit::{FakeServer, Reply};
use serde_json::{Value, json};

use super::{
    assert_llm_not_configured, keiri_with_llm, put, stderr_text, stdout_json, stdout_text,
};

const CASES: &str = "cases:
  - id: dup
    instruction: 請求書一覧のCSVを読み込んで、重複している請求書を検出してください
    apply_mode: llm-only
    expect_blocks: [csv.read, matching.duplicate_invoices]
  - id: magic
    instruction: 請求書一覧のCSVを読み込んで、重複している請求書を検出してください
    apply_mode: llm-only
    expect_blocks: [matching.duplicate_invoices]
";

fn skeleton() -> Value {
    json!({
        "reasoning": "read the CSV, then find duplicates",
        "nodes": [
            {"id": "read", "block": "csv.read", "purpose": "read the invoice list", "repeat": null, "calls_plan": null},
            {"id": "detect", "block": "matching.duplicate_invoices", "purpose": "find duplicates", "repeat": null, "calls_plan": null}
        ],
        "questions": []
    })
}

fn wiring(detect_block: &str) -> Value {
    json!({
        "reasoning": "wired by type",
        "policy": null,
        "node_policies": [],
        "ui_layout": [],
        "vars": [],
        "nodes": [
            {"id": "read", "block": "csv.read",
             "inputs": [{"key": "path", "value_json": "\"invoices.csv\""}],
             "outputs": [{"key": "rows", "alias": "rows"}], "when": null},
            {"id": "detect", "block": detect_block,
             "inputs": [{"key": "rows", "value_json": "\"${read.rows}\""}],
             "outputs": [{"key": "duplicates", "alias": "duplicates"}], "when": null}
        ]
    })
}

/// A workspace holding [`CASES`] as cases.yaml.
fn workspace_with_cases() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    put(&ws.path().join("cases.yaml"), CASES);
    ws
}

#[test]
fn eval_planner_prints_validity_unknowns_and_consistency() {
    let good = wiring("matching.duplicate_invoices");
    // An unknown block id: no schema accepts it, so every strategy (json_schema,
    // function_call, free_form) fails and the run is rejected before a plan exists.
    let magic = wiring("matching.magic_dedupe");
    let mut replies = Vec::new();
    for _ in 0..2 {
        replies.push(Reply::json_content(&skeleton()));
        replies.push(Reply::json_content(&good));
    }
    for _ in 0..2 {
        replies.push(Reply::json_content(&skeleton()));
        for _ in 0..3 {
            replies.push(Reply::content(magic.to_string()));
        }
    }
    let (url, server) = FakeServer::start_background(replies).unwrap();
    let ws = workspace_with_cases();

    let out = keiri_with_llm(ws.path(), Some(&url))
        .args(["eval", "planner", "--cases", "cases.yaml", "--runs", "2"])
        .assert()
        .success();
    let (stdout, stderr) = (stdout_text(&out), stderr_text(&out));
    assert_eq!(server.remaining(), 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("first-pass validity:   2/4 (50%)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("validity after repair: 2/4 (50%)"),
        "{stdout}"
    );
    assert!(stdout.contains("unknown ids/keys:      0 "), "{stdout}");
    assert!(stdout.contains("rejected by the guards: 2"), "{stdout}");
    assert!(stdout.contains("run 1: LLM_OUTPUT_INVALID"), "{stdout}");
    // dup: the same plan twice; magic: no plan at all.
    let dup = stdout.lines().find(|l| l.starts_with("dup ")).unwrap();
    assert!(dup.contains("100%") && dup.contains("1.00"), "{dup}");
    // Progress goes to stderr, one line per case and per run.
    assert!(stderr.contains("[1/2] dup: 2 run(s)"), "{stderr}");
    assert!(
        stderr.contains("magic run 2: error LLM_OUTPUT_INVALID"),
        "{stderr}"
    );
    // The model saw the schema-constrained requests.
    let first = &server.requests()[1];
    assert_eq!(first.body["response_format"]["type"], "json_schema");
}

#[test]
fn eval_planner_json_reports_per_case_numbers() {
    let good = wiring("matching.duplicate_invoices");
    let (url, _server) = FakeServer::start_background(vec![
        Reply::json_content(&skeleton()),
        Reply::json_content(&good),
    ])
    .unwrap();
    let ws = workspace_with_cases();
    let out = keiri_with_llm(ws.path(), Some(&url))
        .args([
            "--json",
            "eval",
            "planner",
            "--cases",
            "cases.yaml",
            "--runs",
            "1",
            "--only",
            "dup",
        ])
        .assert()
        .success();
    let v = stdout_json(&out);
    assert_eq!(v["total"]["runs"], 1);
    assert_eq!(v["total"]["first_pass_valid"], 1);
    assert_eq!(
        v["total"]["unknown"],
        json!({"blocks": 0, "inputs": 0, "outputs": 0})
    );
    assert_eq!(v["cases"][0]["id"], "dup");
    assert_eq!(v["cases"][0]["expected_found"], 1.0);
    assert_eq!(v["model"], "test-model");
}

#[test]
fn eval_planner_without_a_provider_names_the_env_vars() {
    let ws = workspace_with_cases();
    let out = keiri_with_llm(ws.path(), None)
        .args(["--json", "eval", "planner", "--cases", "cases.yaml"])
        .assert()
        .code(2);
    assert_llm_not_configured(
        &out,
        &[
            "OPENAI_API_KEY",
            "AZURE_OPENAI_API_KEY",
            "KEIRI_LLM_BASE_URL",
        ],
    );
}

#[test]
fn a_bad_case_file_is_reported_with_its_line() {
    let ws = tempfile::tempdir().unwrap();
    put(
        &ws.path().join("cases.yaml"),
        "cases:\n  - id: a\n    instruction: x\n    expect_blokcs: [csv.read]\n",
    );
    let out = keiri_with_llm(ws.path(), Some("http://127.0.0.1:9/v1"))
        .args(["eval", "planner", "--cases", "cases.yaml"])
        .assert()
        .code(2);
    let stderr = stderr_text(&out);
    assert!(stderr.contains("cases.yaml:4"), "{stderr}");
    assert!(stderr.contains("expect_blokcs"), "{stderr}");
}

#[test]
fn a_subflow_case_offers_its_plans_as_registered_and_counts_the_shape() {
    let ws = tempfile::tempdir().unwrap();
    put(
        &ws.path().join("cases.yaml"),
        "cases:
  - id: calls_check
    instruction: 登録済みの請求書重複チェックのプランを呼び出す
    apply_mode: llm-only
    expect_blocks: [excel.write_table]
    expect_shapes: [subflow]
    plans: [check_plan.yaml]
",
    );
    put(
        &ws.path().join("check_plan.yaml"),
        "id: invoice_duplicate_check\ngraph:\n  - id: read\n    block: csv.read\n    in: {path: invoices.csv}\n    out: {rows: rows}\n",
    );
    let skeleton = json!({
        "reasoning": "call the registered check, then write its result",
        "nodes": [
            {"id": "check", "block": null, "purpose": "the registered duplicate check",
             "repeat": null, "calls_plan": "invoice_duplicate_check"},
            {"id": "write", "block": "excel.write_table", "purpose": "write the duplicates",
             "repeat": null, "calls_plan": null}
        ],
        "questions": []
    });
    let wiring = json!({
        "reasoning": "wired", "policy": null, "node_policies": [], "ui_layout": [], "vars": [],
        "nodes": [
            {"id": "check", "type": "subflow", "plan_id": "invoice_duplicate_check",
             "inputs": [], "outputs": [{"key": "rows", "alias": "rows"}], "when": null},
            {"id": "write", "block": "excel.write_table",
             "inputs": [{"key": "rows", "value_json": "\"${check.rows}\""},
                        {"key": "out_name", "value_json": "\"dups.xlsx\""}],
             "outputs": [], "when": null}
        ]
    });
    let (url, server) = FakeServer::start_background(vec![
        Reply::json_content(&skeleton),
        Reply::json_content(&wiring),
    ])
    .unwrap();
    let out = keiri_with_llm(ws.path(), Some(&url))
        .args([
            "--json",
            "eval",
            "planner",
            "--cases",
            "cases.yaml",
            "--runs",
            "1",
        ])
        .assert()
        .success();
    let v = stdout_json(&out);
    let requests = server.requests();
    let schema = &requests[0].body["response_format"]["json_schema"]["schema"];
    assert_eq!(
        schema["properties"]["nodes"]["items"]["properties"]["calls_plan"]["enum"],
        json!(["invoice_duplicate_check", null]),
        "the case's plan is offered as registered"
    );
    assert_eq!(v["total"]["first_pass_valid"], 1, "{v:#}");
    assert_eq!(v["cases"][0]["expected_found"], 1.0, "{v:#}");

    // A plan file that is not there is the case file's error, named.
    put(
        &ws.path().join("cases.yaml"),
        "cases:\n  - id: c\n    instruction: 呼び出す\n    expect_blocks: [csv.read]\n    plans: [missing.yaml]\n",
    );
    let out = keiri_with_llm(ws.path(), Some(&url))
        .args(["eval", "planner", "--cases", "cases.yaml", "--runs", "1"])
        .assert()
        .code(2);
    let stderr = stderr_text(&out);
    assert!(stderr.contains("case c: plan missing.yaml"), "{stderr}");
}

/// The eval is a streaming function like generation: `keiri serve` sends an event as each
/// case starts and each run ends, then the report.
#[tokio::test]
async fn keiri_serve_streams_the_eval_case_by_case() {
    let good = wiring("matching.duplicate_invoices");
    let (url, model) = FakeServer::start_background(vec![
        Reply::json_content(&skeleton()),
        Reply::json_content(&good),
    ])
    .unwrap();
    let ws = workspace_with_cases();
    let server = super::serve::start_with_env(
        ws.path(),
        None,
        &[
            ("KEIRI_LLM_BASE_URL", url.as_str()),
            ("KEIRI_LLM_MODEL", "test-model"),
            ("KEIRI_LLM_MAX_RETRIES", "0"),
        ],
    );
    let res = server
        .api("planner_eval/stream")
        .json(&json!({"cases": "cases.yaml", "runs": 1, "only": ["dup"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let frames = super::serve::frames(&res.text().await.unwrap());
    let (last, events) = frames.split_last().unwrap();
    assert_eq!(last["result"]["total"]["runs"], 1, "{last}");
    assert_eq!(last["result"]["total"]["first_pass_valid"], 1, "{last}");
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"]["event"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(kinds, ["case", "run"], "{events:?}");
    assert_eq!(events[0]["event"]["id"], "dup");
    assert_eq!(events[1]["event"]["case"], "dup");
    assert_eq!(model.remaining(), 0);
}
