//! Structured output: strict JSON schema first, function calling second, free-form last.

use serde::Deserialize;
use serde_json::{Value, json};

use keiri_llm::testkit::{FakeServer, Reply};
use keiri_llm::{
    CallOptions, Error, Message, OutputSchema, Strategy, Structured, StructuredRequest, Usage,
};

use super::llm;

/// A small plan-like output with a block enum, in the strict-mode shape.
fn plan_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["nodes", "reasoning"],
        "properties": {
            "reasoning": {"type": "string"},
            "nodes": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["id", "block"],
                    "properties": {
                        "id": {"type": "string"},
                        "block": {"type": "string", "enum": ["csv.read", "excel.write_table"]}
                    }
                }
            }
        }
    })
}

#[derive(Debug, Deserialize, PartialEq)]
struct Plan {
    reasoning: String,
    nodes: Vec<Node>,
}

#[derive(Debug, Deserialize, PartialEq)]
struct Node {
    id: String,
    block: String,
}

fn good_plan() -> Value {
    json!({"reasoning": "読む→書く", "nodes": [{"id": "read", "block": "csv.read"}, {"id": "write", "block": "excel.write_table"}]})
}

fn request() -> StructuredRequest {
    StructuredRequest::new(
        vec![
            Message::system("You design plans."),
            Message::user("請求書CSVをExcelに"),
        ],
        OutputSchema::new("plan", plan_schema()).with_description("a plan"),
    )
}

async fn run(replies: Vec<Reply>) -> (Result<Structured<Plan>, Error>, Vec<Value>) {
    let (url, server) = FakeServer::start(replies).await.unwrap();
    let (llm, _) = llm(&url);
    let r = llm
        .structured::<Plan>(&request(), &CallOptions::new())
        .await;
    let bodies = server.requests().into_iter().map(|r| r.body).collect();
    (r, bodies)
}

#[tokio::test]
async fn strict_schema_is_sent_in_response_format() {
    let (r, bodies) = run(vec![Reply::json_content(&good_plan())]).await;
    let out = r.unwrap();
    assert_eq!(out.strategy, Strategy::JsonSchema);
    assert!(out.fallbacks.is_empty());
    assert_eq!(out.value.nodes[1].block, "excel.write_table");
    assert_eq!(bodies.len(), 1);
    let body = &bodies[0];
    assert_eq!(body["response_format"]["type"], "json_schema");
    let js = &body["response_format"]["json_schema"];
    assert_eq!(js["name"], "plan");
    assert_eq!(js["strict"], true);
    assert_eq!(js["schema"], plan_schema());
    assert_eq!(
        js["schema"]["properties"]["nodes"]["items"]["properties"]["block"]["enum"],
        json!(["csv.read", "excel.write_table"])
    );
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["temperature"], 0.0);
    assert!(body.get("tools").is_none());
    assert_eq!(body["messages"][1]["content"], "請求書CSVをExcelに");
}

#[tokio::test]
async fn function_calling_when_response_format_is_rejected() {
    let (url, server) = FakeServer::start(vec![
        Reply::error(400, "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.")
            .with_error_fields(Some("response_format"), None),
        Reply::tool_calls(&[("call_1", "plan", &good_plan().to_string())]),
        // A second call in the same session goes straight to function calling.
        Reply::tool_calls(&[("call_2", "plan", &good_plan().to_string())]),
    ])
    .await
    .unwrap();
    let (llm, _) = llm(&url);
    let out = llm
        .structured::<Plan>(&request(), &CallOptions::new())
        .await
        .unwrap();
    assert_eq!(out.strategy, Strategy::FunctionCall);
    assert_eq!(out.fallbacks.len(), 1);
    assert_eq!(out.fallbacks[0].strategy, Strategy::JsonSchema);
    assert_eq!(out.fallbacks[0].code, "LLM_REQUEST_REJECTED");
    assert_eq!(out.requests, 2);

    let reqs = server.requests();
    assert!(reqs[0].body.get("response_format").is_some());
    let second = &reqs[1].body;
    assert!(second.get("response_format").is_none());
    assert_eq!(second["tools"][0]["type"], "function");
    assert_eq!(second["tools"][0]["function"]["name"], "plan");
    assert_eq!(second["tools"][0]["function"]["strict"], true);
    assert_eq!(second["tools"][0]["function"]["parameters"], plan_schema());
    assert_eq!(
        second["tool_choice"],
        json!({"type": "function", "function": {"name": "plan"}})
    );

    let again = llm
        .structured::<Plan>(&request(), &CallOptions::new())
        .await
        .unwrap();
    assert_eq!(again.strategy, Strategy::FunctionCall);
    assert!(again.fallbacks[0].skipped);
    assert_eq!(server.request_count(), 3);
    assert!(server.requests()[2].body.get("response_format").is_none());
}

#[tokio::test]
async fn free_form_extraction_from_a_fenced_block() {
    let answer = format!(
        "Here is the plan you asked for:\n\n```json\n{}\n```\nLet me know if you need changes.",
        serde_json::to_string_pretty(&good_plan()).unwrap()
    );
    let (r, bodies) = run(vec![
        Reply::error(400, "response_format json_schema is not supported"),
        Reply::error(400, "tools are not supported by this server"),
        Reply::content(answer),
    ])
    .await;
    let out = r.unwrap();
    assert_eq!(out.strategy, Strategy::FreeForm);
    assert_eq!(
        out.fallbacks.iter().map(|f| f.strategy).collect::<Vec<_>>(),
        [Strategy::JsonSchema, Strategy::FunctionCall]
    );
    assert_eq!(out.value.reasoning, "読む→書く");
    let last = &bodies[2];
    assert!(last.get("response_format").is_none() && last.get("tools").is_none());
    // The schema is in the (single, leading) system message.
    let system = last["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("You design plans."), "{system}");
    assert!(system.contains("\"excel.write_table\""), "{system}");
    assert_eq!(last["messages"][1]["role"], "user");
}

#[tokio::test]
async fn usage_is_summed_over_every_request() {
    // The first answer breaks the schema (an unknown block), the second is good.
    let bad = json!({"reasoning": "x", "nodes": [{"id": "a", "block": "made.up"}]});
    let (r, _) = run(vec![
        Reply::json_content(&bad).with_usage(100, 20),
        Reply::tool_calls(&[("c", "plan", &good_plan().to_string())]).with_usage(50, 10),
    ])
    .await;
    let out = r.unwrap();
    assert_eq!(out.usage, Usage::new(150, 30));
    assert_eq!(out.usage.total_tokens, 180);
    assert_eq!(out.strategy, Strategy::FunctionCall);
    let v = &out.fallbacks[0].violations;
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].path, "/nodes/0/block");
    assert!(
        v[0].message
            .contains("\"made.up\" is not one of the allowed values")
    );
}

#[tokio::test]
async fn unknown_block_under_free_form_is_rejected_with_a_clear_error() {
    let bad = json!({"reasoning": "x", "nodes": [{"id": "a", "block": "made.up", "extra": 1}]});
    let (r, _) = run(vec![
        Reply::content(format!("```json\n{bad}\n```")),
        Reply::tool_calls(&[("c", "plan", &bad.to_string())]),
        Reply::content(format!("Sure: {bad}")),
    ])
    .await;
    let err = r.unwrap_err();
    assert_eq!(err.code(), "LLM_OUTPUT_INVALID");
    let Error::StructuredOutput { failures } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(failures.len(), 3);
    let last = &failures[2];
    assert_eq!(last.strategy, Strategy::FreeForm);
    let paths: Vec<(&str, &str)> = last
        .violations
        .iter()
        .map(|v| (v.path.as_str(), v.message.as_str()))
        .collect();
    assert!(
        paths
            .iter()
            .any(|(p, m)| *p == "/nodes/0/block" && m.contains("not one of the allowed values")),
        "{paths:?}"
    );
    assert!(
        paths
            .iter()
            .any(|(p, m)| *p == "/nodes/0/extra" && m.contains("unknown property")),
        "{paths:?}"
    );
    assert!(err.to_string().contains("free_form"), "{err}");
}

#[tokio::test]
async fn no_json_at_all_fails_every_strategy() {
    let (r, bodies) = run(vec![
        Reply::content("I cannot produce JSON today."),
        Reply::content("still no function call"),
        Reply::content("nothing here either"),
    ])
    .await;
    let Error::StructuredOutput { failures } = r.unwrap_err() else {
        panic!()
    };
    let messages: Vec<&str> = failures.iter().map(|f| f.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "the answer holds no JSON value",
            "the model did not call the function",
            "the answer holds no JSON value"
        ]
    );
    assert_eq!(bodies.len(), 3);
}

#[tokio::test]
async fn a_truncated_answer_stops_the_fallbacks() {
    let (r, bodies) = run(vec![
        Reply::content("{\"reasoning\": \"cut off her").with_finish_reason("length"),
    ])
    .await;
    let Error::StructuredOutput { failures } = r.unwrap_err() else {
        panic!()
    };
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].code, "LLM_OUTPUT_TRUNCATED");
    assert_eq!(bodies.len(), 1);
}

#[tokio::test]
async fn a_refusal_is_typed() {
    let (r, _) = run(vec![Reply::refusal("I can't help with that.")]).await;
    let err = r.unwrap_err();
    assert_eq!(err.code(), "LLM_REFUSED");
    assert!(err.to_string().contains("I can't help with that."));
}

#[tokio::test]
async fn errors_that_are_not_about_the_mode_end_the_call() {
    for (reply, code) in [
        (
            Reply::error(400, "This model's maximum context length is 128000 tokens")
                .with_error_fields(Some("messages"), Some("context_length_exceeded")),
            "LLM_REQUEST_REJECTED",
        ),
        (Reply::error(401, "bad key"), "LLM_UNAUTHORIZED"),
    ] {
        let (r, bodies) = run(vec![reply]).await;
        assert_eq!(r.unwrap_err().code(), code);
        assert_eq!(bodies.len(), 1);
    }
}

#[tokio::test]
async fn a_schema_that_strict_mode_would_refuse_fails_before_sending() {
    let (url, server) = FakeServer::start(vec![]).await.unwrap();
    let (llm, _) = llm(&url);
    let loose = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    let req = StructuredRequest::new(
        vec![Message::user("x")],
        OutputSchema::new("bad name!", loose),
    );
    let err = llm
        .structured::<Value>(&req, &CallOptions::new())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "LLM_SCHEMA_INVALID");
    let msg = err.to_string();
    assert!(msg.contains("\"bad name!\""), "{msg}");
    assert!(
        msg.contains("\"additionalProperties\" must be false"),
        "{msg}"
    );
    assert!(
        msg.contains("property \"a\" must be listed in \"required\""),
        "{msg}"
    );
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn a_wrong_type_for_the_caller_falls_back_and_reports() {
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Other {
        missing_field: u32,
    }
    let (url, _server) = FakeServer::start(vec![Reply::json_content(&good_plan())])
        .await
        .unwrap();
    let (llm, _) = llm(&url);
    let req = request().with_strategies(vec![Strategy::JsonSchema]);
    let err = llm
        .structured::<Other>(&req, &CallOptions::new())
        .await
        .unwrap_err();
    let Error::StructuredOutput { failures } = err else {
        panic!()
    };
    assert!(
        failures[0]
            .message
            .contains("does not fit the expected type"),
        "{failures:?}"
    );
}
