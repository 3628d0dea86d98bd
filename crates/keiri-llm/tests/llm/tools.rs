//! Tool-calling chat: tools and tool_choice sent, tool calls returned, results sent back.

use serde_json::json;

use keiri_llm::testkit::{FakeServer, Reply};
use keiri_llm::{CallOptions, ChatRequest, FinishReason, Message, ToolChoice, ToolSpec};

use super::llm;

fn read_file_tool() -> ToolSpec {
    ToolSpec {
        name: "read_file".into(),
        description: Some("Read a workspace file".into()),
        parameters: json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["path"],
            "properties": {"path": {"type": "string"}}
        }),
        strict: true,
    }
}

#[tokio::test]
async fn tool_call_round_trip() {
    let (url, server) = FakeServer::start(vec![
        Reply::tool_calls(&[
            ("call_a", "read_file", r#"{"path":"invoices.csv"}"#),
            ("call_b", "read_file", r#"{"path":"po.csv"}"#),
        ])
        .with_usage(30, 8),
        Reply::content("2 files read.").with_usage(60, 4),
    ])
    .await
    .unwrap();
    let (llm, _) = llm(&url);
    let mut messages = vec![
        Message::system("You are the Keiri assistant."),
        Message::user("請求書と発注書を読んで"),
    ];
    let request = ChatRequest::new(messages.clone())
        .with_tools(vec![read_file_tool()])
        .with_tool_choice(ToolChoice::Auto);
    let first = llm.chat(&request, &CallOptions::new()).await.unwrap();
    assert_eq!(first.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(first.tool_calls.len(), 2);
    assert_eq!(first.tool_calls[0].id, "call_a");
    assert_eq!(
        first.tool_calls[1].arguments_json().unwrap(),
        json!({"path": "po.csv"})
    );
    assert_eq!(first.content, None);

    messages.push(first.message());
    for call in &first.tool_calls {
        messages.push(Message::tool_result(
            &call.id,
            format!("contents of {}", call.name),
        ));
    }
    let request = ChatRequest::new(messages).with_tools(vec![read_file_tool()]);
    let second = llm.chat(&request, &CallOptions::new()).await.unwrap();
    assert_eq!(second.content.as_deref(), Some("2 files read."));
    assert_eq!((first.usage + second.usage).total_tokens, 102);

    let reqs = server.requests();
    let b0 = &reqs[0].body;
    assert_eq!(b0["tools"][0]["type"], "function");
    assert_eq!(b0["tools"][0]["function"]["name"], "read_file");
    assert_eq!(b0["tools"][0]["function"]["strict"], true);
    assert_eq!(b0["tool_choice"], "auto");
    let sent = &reqs[1].body["messages"];
    assert_eq!(sent[2]["role"], "assistant");
    assert_eq!(sent[2]["tool_calls"][0]["id"], "call_a");
    assert_eq!(sent[2]["tool_calls"][0]["type"], "function");
    assert_eq!(
        sent[2]["tool_calls"][1]["function"]["arguments"],
        r#"{"path":"po.csv"}"#
    );
    assert_eq!(sent[3]["role"], "tool");
    assert_eq!(sent[3]["tool_call_id"], "call_a");
    assert_eq!(sent[4]["tool_call_id"], "call_b");
    assert_eq!(sent[4]["content"], "contents of read_file");
}

#[track_caller]
fn check_choice(choice: ToolChoice, expect: serde_json::Value) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (url, server) = FakeServer::start(vec![Reply::content("ok")]).await.unwrap();
        let (llm, _) = llm(&url);
        let request = ChatRequest::new(vec![Message::user("x")])
            .with_tools(vec![read_file_tool()])
            .with_tool_choice(choice);
        llm.chat(&request, &CallOptions::new()).await.unwrap();
        assert_eq!(server.requests()[0].body["tool_choice"], expect);
    });
}

#[test]
fn tool_choice_on_the_wire() {
    check_choice(ToolChoice::Auto, json!("auto"));
    check_choice(ToolChoice::None, json!("none"));
    check_choice(ToolChoice::Required, json!("required"));
    check_choice(
        ToolChoice::Function {
            name: "read_file".into(),
        },
        json!({"type": "function", "function": {"name": "read_file"}}),
    );
}

#[tokio::test]
async fn lenient_parsing_of_compatible_servers() {
    // No id/object/created/usage, content as parts, arguments as an object, no call id.
    let body = json!({
        "choices": [{
            "message": {
                "content": [{"type": "text", "text": "part one, "}, {"type": "text", "text": "part two"}],
                "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": "a.csv"}}}]
            },
            "finish_reason": "tool_calls"
        }]
    });
    let (url, _server) = FakeServer::start(vec![Reply::raw(200, body)])
        .await
        .unwrap();
    let (llm, _) = llm(&url);
    let r = llm
        .chat(
            &ChatRequest::new(vec![Message::user("x")]),
            &CallOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(r.content.as_deref(), Some("part one, part two"));
    assert_eq!(r.tool_calls[0].id, "call_0");
    assert_eq!(
        r.tool_calls[0].arguments_json().unwrap(),
        json!({"path": "a.csv"})
    );
    assert!(r.usage.is_zero());
    assert_eq!(r.model, "");
}
