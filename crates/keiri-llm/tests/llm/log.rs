//! The JSONL event log: both files, the fields the planner records, and no secrets.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use keiri_llm::testkit::{FakeServer, Reply, TestClock};
use keiri_llm::{
    CallOptions, ChatRequest, Env, Event, EventLog, LlmConfig, Message, OutputSchema, Redactor,
    Strategy, StructuredRequest, Usage, check_run_id, new_run_id,
};

use super::llm_for;

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn open(logs: &Path, run_id: &str) -> EventLog {
    EventLog::create(
        logs,
        run_id,
        Redactor::default(),
        Arc::new(TestClock::fixed()),
    )
    .unwrap()
}

#[test]
fn events_go_to_the_agent_log_and_the_run_file() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let a = open(&logs, "run-a");
    a.record(Event::new("skeleton", "stage.start")).unwrap();
    a.record(
        Event::new("validating", "stage.end")
            .ok()
            .attempt(2)
            .duration(std::time::Duration::from_millis(1234))
            .validation_errors(3)
            .repair_iteration(1)
            .block_distribution(["csv.read", "excel.write_table", "csv.read"])
            .usage(Usage::new(1000, 200))
            .strategy(Strategy::FunctionCall)
            .with("candidates", 12),
    )
    .unwrap();
    let b = open(&logs, "run-b");
    b.record(Event::new("skeleton", "stage.start")).unwrap();

    let run_a = lines(&logs.join("runs/run-a.jsonl"));
    assert_eq!(run_a.len(), 2);
    assert_eq!(
        run_a[1],
        json!({
            "ts": "2025-01-01T00:00:00.000Z",
            "run_id": "run-a",
            "stage": "validating",
            "event": "stage.end",
            "status": "ok",
            "attempt": 2,
            "duration_ms": 1234,
            "validation_errors": 3,
            "repair_iteration": 1,
            "block_distribution": {"csv.read": 2, "excel.write_table": 1},
            "usage": {"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200},
            "strategy": "function_call",
            "candidates": 12
        })
    );
    assert_eq!(lines(&logs.join("runs/run-b.jsonl")).len(), 1);
    let all = lines(&logs.join("keiri_agent.log"));
    let runs: Vec<&str> = all.iter().map(|l| l["run_id"].as_str().unwrap()).collect();
    assert_eq!(runs, ["run-a", "run-a", "run-b"]);
    // Reopening a run appends.
    open(&logs, "run-a")
        .record(Event::new("repair", "stage.start"))
        .unwrap();
    assert_eq!(lines(&logs.join("runs/run-a.jsonl")).len(), 3);
    // Lines deserialize back into events.
    let e: Event = serde_json::from_value(run_a[1].clone()).unwrap();
    assert_eq!(e.block_distribution.unwrap()["csv.read"], 2);
}

#[track_caller]
fn check_run(run_id: &str, ok: bool) {
    assert_eq!(check_run_id(run_id).is_ok(), ok, "{run_id:?}");
}

#[test]
fn run_ids_are_safe_file_names() {
    check_run("20250101T000000Z-abc123", true);
    check_run("run_1.retry-2", true);
    check_run("", false);
    check_run(".hidden", false);
    check_run("../escape", false);
    check_run("a/b", false);
    check_run("a\\b", false);
    check_run("請求書", false);
    check_run(&"x".repeat(129), false);
    let dir = tempfile::tempdir().unwrap();
    let err = EventLog::create(
        dir.path(),
        "../../etc/x",
        Redactor::default(),
        Arc::new(TestClock::fixed()),
    )
    .unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    let id = new_run_id(&TestClock::fixed());
    assert!(id.starts_with("20250101T000000Z-"), "{id}");
    check_run(&id, true);
}

#[tokio::test]
async fn llm_calls_log_attempts_and_the_strategy() {
    let (url, _server) = FakeServer::start(vec![
        Reply::error(503, "busy"),
        Reply::content("hello").with_usage(7, 2),
        Reply::error(400, "response_format is not supported"),
        Reply::tool_calls(&[("c1", "answer", r#"{"ok":true}"#)]),
    ])
    .await
    .unwrap();
    let (llm, clock) = llm_for(&super::compatible_env(&url));
    let dir = tempfile::tempdir().unwrap();
    let log = EventLog::create(dir.path(), "r1", Redactor::default(), clock).unwrap();
    let options = CallOptions::new()
        .with_stage("skeleton")
        .with_log(log.clone());
    llm.chat(&ChatRequest::new(vec![Message::user("x")]), &options)
        .await
        .unwrap();
    let schema = json!({"type": "object", "additionalProperties": false, "required": ["ok"], "properties": {"ok": {"type": "boolean"}}});
    let req = StructuredRequest::new(
        vec![Message::user("y")],
        OutputSchema::new("answer", schema),
    );
    llm.structured::<Value>(&req, &options.clone().with_stage("wiring"))
        .await
        .unwrap();

    let got: Vec<(String, String, String, Option<u64>)> = lines(log.run_path())
        .iter()
        .map(|l| {
            (
                l["stage"].as_str().unwrap().to_string(),
                l["event"].as_str().unwrap().to_string(),
                format!(
                    "{}{}",
                    l["status"].as_str().unwrap(),
                    l["error_code"]
                        .as_str()
                        .map(|c| format!(" {c}"))
                        .unwrap_or_default()
                ),
                l["attempt"].as_u64(),
            )
        })
        .collect();
    let expect = [
        ("skeleton", "llm.attempt", "error LLM_SERVER_ERROR", Some(1)),
        ("skeleton", "llm.attempt", "ok", Some(2)),
        (
            "wiring",
            "llm.attempt",
            "error LLM_REQUEST_REJECTED",
            Some(1),
        ),
        ("wiring", "llm.attempt", "ok", Some(1)),
        ("wiring", "llm.structured", "ok", None),
    ];
    let expect: Vec<(String, String, String, Option<u64>)> = expect
        .iter()
        .map(|(a, b, c, d)| (a.to_string(), b.to_string(), c.to_string(), *d))
        .collect();
    assert_eq!(got, expect);
    let all = lines(log.run_path());
    assert_eq!(all[0]["http_status"], 503);
    assert_eq!(all[0]["retryable"], true);
    assert_eq!(all[1]["usage"]["total_tokens"], 9);
    assert_eq!(all[1]["provider"], "openai_compatible");
    assert_eq!(all[1]["model"], "test-model");
    assert_eq!(all[4]["strategy"], "function_call");
    assert_eq!(all[4]["fallbacks"], 1);
    assert_eq!(all[4]["requests"], 2);
}

#[tokio::test]
async fn secrets_never_appear_in_logs() {
    // A key that does not look like an OpenAI key, so only knowing it can redact it.
    let key = "kEy-7f3a9c21-SECRET-value";
    let (url, server) = FakeServer::start(vec![
        // Providers echo keys in error messages.
        Reply::error(500, format!("upstream rejected credential {key}")),
        Reply::rate_limited("1"),
        Reply::content("fine"),
        Reply::error(400, format!("response_format unsupported for key {key}")),
        Reply::content(format!("```json\n{{\"note\": \"{key}\"}}\n```")),
    ])
    .await
    .unwrap();
    let env = Env::from_pairs([
        ("KEIRI_LLM_BASE_URL", url.as_str()),
        ("KEIRI_LLM_API_KEY", key),
        ("UNRELATED_SERVICE_TOKEN", "tok-998877665544"),
    ]);
    let config = LlmConfig::from_env(&env).unwrap();
    let (llm, clock) = llm_for(&env);
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let redactor = Redactor::from_env(&env).merged(&config.redactor());
    let log = EventLog::create(&logs, "secret-run", redactor, clock).unwrap();
    let options = CallOptions::new()
        .with_stage("skeleton")
        .with_log(log.clone());

    llm.chat(&ChatRequest::new(vec![Message::user("x")]), &options)
        .await
        .unwrap();
    let schema = json!({"type": "object", "additionalProperties": false, "required": ["note"], "properties": {"note": {"type": "string"}}});
    let req = StructuredRequest::new(vec![Message::user("y")], OutputSchema::new("n", schema))
        .with_strategies(vec![Strategy::JsonSchema, Strategy::FreeForm]);
    let out = llm.structured::<Value>(&req, &options).await.unwrap();
    // A careless caller logs the output, the configuration and a header.
    log.record(
        Event::new("wiring", "debug")
            .message(format!("output {} config {config:?}", out.json))
            .with("authorization", format!("Bearer {key}"))
            .with("token", "tok-998877665544")
            .with("quoted", json!({"k": key})),
    )
    .unwrap();

    // The key really was in play.
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some(format!("Bearer {key}").as_str())
    );
    let mut redactions = 0;
    for path in [
        logs.join("keiri_agent.log"),
        logs.join("runs/secret-run.jsonl"),
    ] {
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.lines().count() >= 6, "{text}");
        for line in text.lines() {
            assert!(!line.contains(key), "{}: {line}", path.display());
            assert!(!line.contains("SECRET"), "{}: {line}", path.display());
            assert!(
                !line.contains("tok-998877665544"),
                "{}: {line}",
                path.display()
            );
            serde_json::from_str::<Value>(line).unwrap();
            redactions += line.matches("[REDACTED]").count();
        }
    }
    // Echoed in two error messages, the output, the header and the JSON field, in both files.
    assert!(redactions >= 10, "{redactions}");
}
