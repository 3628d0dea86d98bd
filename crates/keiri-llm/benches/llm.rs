//! Benchmarks of the local work around an LLM call (no real model): JSON extraction, schema
//! validation, log redaction, and a full chat / structured round trip against the fake server
//! on loopback (HTTP, serialisation, lenient parsing, validation).
//!
//! Run: `cargo bench -p keiri-llm`. Numbers are in the crate README.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

use keiri_llm::testkit::{FakeServer, Reply, Script, TestClock};
use keiri_llm::{
    CallOptions, ChatRequest, Env, Llm, Message, NoJitter, OutputSchema, Redactor,
    StructuredRequest,
};

/// A plan-shaped schema with a 60-block enum.
fn plan_schema() -> Value {
    let blocks: Vec<String> = (0..60).map(|i| format!("category.block_{i}")).collect();
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["reasoning", "graph"],
        "properties": {
            "reasoning": {"type": "string"},
            "graph": {"type": "array", "items": {
                "type": "object",
                "additionalProperties": false,
                "required": ["id", "block", "in", "out"],
                "properties": {
                    "id": {"type": "string"},
                    "block": {"type": "string", "enum": blocks},
                    "in": {"type": "object", "additionalProperties": false, "required": ["path", "rows"],
                           "properties": {"path": {"type": ["string", "null"]}, "rows": {"type": ["string", "null"]}}},
                    "out": {"type": "object", "additionalProperties": false, "required": ["rows"],
                            "properties": {"rows": {"type": ["string", "null"]}}}
                }
            }}
        }
    })
}

/// A plan of `n` nodes (about 130 bytes of JSON each).
fn plan(n: usize) -> Value {
    let graph: Vec<Value> = (0..n)
        .map(|i| {
            json!({"id": format!("node_{i}"), "block": format!("category.block_{}", i % 60),
                   "in": {"path": null, "rows": format!("${{node_{}.rows}}", i.saturating_sub(1))},
                   "out": {"rows": format!("rows_{i}")}})
        })
        .collect();
    json!({"reasoning": "請求書を読み込み、重複を検出し、Excelに出力する。", "graph": graph})
}

fn local(c: &mut Criterion) {
    let big = plan(200);
    let answer = format!(
        "以下が計画です。\n\n```json\n{}\n```\n\nご確認ください。",
        serde_json::to_string_pretty(&big).unwrap()
    );
    c.bench_function("extract_json/fenced_200_nodes", |b| {
        b.iter(|| keiri_llm::extract::extract_json(black_box(&answer)).unwrap())
    });
    let embedded = format!("Plan: {} — done.", big);
    c.bench_function("extract_json/embedded_200_nodes", |b| {
        b.iter(|| keiri_llm::extract::extract_json(black_box(&embedded)).unwrap())
    });
    let schema = plan_schema();
    c.bench_function("schema_validate/200_nodes", |b| {
        b.iter(|| {
            let v = keiri_llm::schema::validate(black_box(&schema), black_box(&big));
            assert!(v.is_empty());
        })
    });
    c.bench_function("strict_problems/plan_schema", |b| {
        b.iter(|| keiri_llm::schema::strict_problems(black_box(&schema)))
    });
    let redactor = Redactor::new([
        "kEy-7f3a9c21-SECRET-value",
        "another-secret-123",
        "third-secret-xyz",
    ]);
    let line = serde_json::to_string(&json!({
        "ts": "2025-01-01T00:00:00.000Z", "run_id": "r", "stage": "wiring", "event": "llm.attempt",
        "status": "error", "message": "upstream rejected credential kEy-7f3a9c21-SECRET-value ".repeat(8)
    }))
    .unwrap();
    c.bench_function("redact/1kb_log_line", |b| {
        b.iter(|| redactor.redact(black_box(&line)))
    });
}

fn round_trip(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let small = Reply::content("ok");
    let big = Reply::json_content(&plan(200));
    let (url, _server) = rt
        .block_on(FakeServer::start(
            Script::new(vec![small.clone()]).then_repeat(small),
        ))
        .unwrap();
    let (big_url, _big_server) = rt
        .block_on(FakeServer::start(Script::new(vec![]).then_repeat(big)))
        .unwrap();
    let make = |url: &str| {
        Llm::from_env(&Env::from_pairs([("KEIRI_LLM_BASE_URL", url)]))
            .unwrap()
            .with_clock(Arc::new(TestClock::fixed()))
            .with_jitter(Arc::new(NoJitter))
            .with_timeout(Duration::from_secs(10))
    };
    let llm = make(&url);
    let big_llm = make(&big_url);
    let request = ChatRequest::new(vec![
        Message::system("You design plans."),
        Message::user("請求書CSVから重複を検出してExcelレポートにする"),
    ]);
    c.bench_function("chat/round_trip_small", |b| {
        b.iter(|| {
            rt.block_on(llm.chat(&request, &CallOptions::new()))
                .unwrap()
        })
    });
    let structured = StructuredRequest::new(
        request.messages.clone(),
        OutputSchema::new("plan", plan_schema()),
    );
    c.bench_function("structured/round_trip_200_nodes", |b| {
        b.iter(|| {
            rt.block_on(big_llm.structured::<Value>(&structured, &CallOptions::new()))
                .unwrap()
        })
    });
}

criterion_group!(benches, local, round_trip);
criterion_main!(benches);
