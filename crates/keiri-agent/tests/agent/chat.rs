use keiri_agent::{ChatInput, Event, RouteReason, Session, Stop};
use keiri_llm::testkit::Reply;
use serde_json::json;

use super::{input, kinds, offered_tools, tool_ctx, tool_results, turn, workspace};

#[tokio::test]
async fn a_turn_emits_route_tool_calls_and_reply_in_order() {
    let ws = workspace();
    let ctx = tool_ctx(ws.path());
    let mut session = Session::new("s1");
    let run = turn(
        vec![
            Reply::tool_calls(&[(
                "call_1",
                "read_file",
                r#"{"path": "plan.yaml", "start_line": 2, "end_line": 3}"#,
            )]),
            Reply::content("プランには read ノードがあります。"),
        ],
        &mut session,
        &ctx,
        input("/general プランの中身は？"),
        |_| {},
    )
    .await;
    let outcome = run.outcome.unwrap();
    assert_eq!(outcome.skill, "general");
    assert_eq!(outcome.reply, "プランには read ノードがあります。");
    assert_eq!(
        kinds(&run.events),
        ["route", "tool_call_start", "tool_call_end", "reply"]
    );
    match &run.events[0] {
        Event::Route {
            skill,
            reason,
            allowed_tools,
            ..
        } => {
            assert_eq!((skill.as_str(), *reason), ("general", RouteReason::Command));
            assert!(!allowed_tools.contains(&"apply_patch".to_string()));
        }
        other => panic!("{other:?}"),
    }
    match &run.events[2] {
        Event::ToolCallEnd { ok, result, .. } => {
            assert!(ok);
            assert_eq!(result["content"], "graph:\n  - id: read\n");
            assert_eq!(result["total_lines"], 6);
        }
        other => panic!("{other:?}"),
    }
    // The model was offered only the skill's tools, and got the tool result back.
    assert_eq!(run.requests.len(), 2);
    let offered = offered_tools(&run.requests[0]);
    assert!(
        offered.contains(&"read_file".to_string()) && !offered.contains(&"apply_patch".to_string()),
        "{offered:?}"
    );
    let system = run.requests[0].body["messages"][0]["content"]
        .as_str()
        .unwrap();
    assert!(
        system.contains("Skill: general") && system.contains("`plan.yaml`"),
        "{system}"
    );
    assert_eq!(
        run.requests[0].body["messages"][1],
        json!({"role": "user", "content": "プランの中身は？"})
    );
    assert_eq!(tool_results(&run.requests[1])[0]["path"], "plan.yaml");
    // The session keeps user, assistant (tool call), tool and assistant messages.
    assert_eq!(session.messages.len(), 4);
    assert_eq!(session.skill.as_deref(), Some("general"));
}

#[tokio::test]
async fn a_tool_outside_the_scope_returns_tool_not_allowed_and_the_loop_continues() {
    let ws = workspace();
    let ctx = tool_ctx(ws.path());
    let mut session = Session::new("s1");
    let patch = json!({"filePath": "plan.yaml", "patch": super::PLAN_PATCH}).to_string();
    let run = turn(
        vec![
            Reply::tool_calls(&[("call_1", "apply_patch", &patch)]),
            Reply::content("このスキルではプランを変更できません。"),
        ],
        &mut session,
        &ctx,
        ChatInput {
            skill: Some("catalog-explanation".into()),
            ..input("プランにステップを追加して")
        },
        |_| {},
    )
    .await;
    let outcome = run.outcome.unwrap();
    assert_eq!(outcome.reply, "このスキルではプランを変更できません。");
    assert!(outcome.stopped.is_none() && outcome.proposed.is_empty());
    // The model got the error as the tool result and was asked again.
    assert_eq!(run.requests.len(), 2);
    let results = tool_results(&run.requests[1]);
    assert_eq!(
        results[0],
        json!({
            "error_code": "TOOL_NOT_ALLOWED",
            "tool": "apply_patch",
            "message": "the tool apply_patch is not allowed in the skill catalog-explanation; allowed tools: retrieve_blocks, describe_block",
            "allowed_tools": ["retrieve_blocks", "describe_block"],
        })
    );
    assert_eq!(
        kinds(&run.events),
        ["route", "tool_call_start", "tool_call_end", "reply"]
    );
    match &run.events[2] {
        Event::ToolCallEnd { ok, error_code, .. } => {
            assert!(!ok);
            assert_eq!(error_code.as_deref(), Some("TOOL_NOT_ALLOWED"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        std::fs::read_to_string(ws.path().join("plan.yaml")).unwrap(),
        super::PLAN
    );
    assert!(session.pending.is_empty());
}

#[tokio::test]
async fn unknown_tools_and_bad_arguments_have_their_own_codes() {
    let ws = workspace();
    let ctx = tool_ctx(ws.path());
    let mut session = Session::new("s1");
    let run = turn(
        vec![
            Reply::tool_calls(&[
                ("c1", "delete_everything", "{}"),
                ("c2", "read_file", "{not json"),
                ("c3", "read_file", r#"{"path": 3}"#),
                ("c4", "read_file", r#"{"path": "missing.txt"}"#),
                ("c5", "read_file", r#"{"path": "/etc/passwd"}"#),
                ("c6", "read_file", r#"{"path": "plan.yaml"}"#),
            ]),
            Reply::content("ok"),
        ],
        &mut session,
        &ctx,
        input("/general 読んで"),
        |a| a.limits.max_consecutive_failures = 10,
    )
    .await;
    run.outcome.unwrap();
    let results = tool_results(&run.requests[1]);
    let codes: Vec<_> = results
        .iter()
        .map(|r| {
            (
                r["error_code"].as_str().unwrap_or("ok"),
                r["cause"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        codes,
        [
            ("UNKNOWN_TOOL", ""),
            ("INVALID_ARGUMENT", ""),
            ("INVALID_ARGUMENT", ""),
            ("TOOL_FAILED", "NOT_FOUND"),
            ("TOOL_FAILED", "PATH_DENIED"),
            ("ok", ""),
        ]
    );
    assert!(
        results[0]["available_tools"]
            .as_array()
            .unwrap()
            .contains(&json!("read_file"))
    );
    // Unparseable arguments are shown as the raw text.
    match &run.events[3] {
        Event::ToolCallStart { arguments, .. } => assert_eq!(arguments, &json!("{not json")),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_breaker_stops_after_n_consecutive_failures() {
    let ws = workspace();
    let ctx = tool_ctx(ws.path());
    let mut session = Session::new("s1");
    let fail = || Reply::tool_calls(&[("c", "read_file", r#"{"path": "missing.txt"}"#)]);
    let ok = Reply::tool_calls(&[("c", "read_file", r#"{"path": "plan.yaml"}"#)]);
    let run = turn(
        // A success resets the count: fail, fail, ok, fail, fail, fail → stop; the final
        // content is never asked for.
        vec![
            fail(),
            fail(),
            ok,
            fail(),
            fail(),
            fail(),
            Reply::content("never"),
        ],
        &mut session,
        &ctx,
        input("/general 読んで"),
        |a| a.limits.max_consecutive_failures = 3,
    )
    .await;
    let outcome = run.outcome.unwrap();
    assert_eq!(run.requests.len(), 6);
    assert_eq!(outcome.stopped, Some(Stop::ToolFailureLimit));
    assert_eq!(
        outcome.reply,
        "ツールの呼び出しが続けて失敗したため、処理を中断しました。"
    );
    let k = kinds(&run.events);
    assert_eq!(&k[k.len() - 2..], ["error", "reply"]);
    match &run.events[run.events.len() - 2] {
        Event::Error { code, .. } => assert_eq!(code, "TOOL_FAILURE_LIMIT"),
        other => panic!("{other:?}"),
    }
    // The history ends with an assistant message, so the next turn is a valid conversation.
    assert!(matches!(
        session.messages.last(),
        Some(keiri_llm::Message::Assistant { .. })
    ));
}

#[tokio::test]
async fn the_breaker_answers_the_calls_it_does_not_run() {
    let ws = workspace();
    let ctx = tool_ctx(ws.path());
    let mut session = Session::new("s1");
    let bad = r#"{"path": "missing.txt"}"#;
    let run = turn(
        vec![Reply::tool_calls(&[
            ("c1", "read_file", bad),
            ("c2", "read_file", bad),
            ("c3", "read_file", bad),
        ])],
        &mut session,
        &ctx,
        input("/general 読んで"),
        |a| a.limits.max_consecutive_failures = 2,
    )
    .await;
    assert_eq!(run.outcome.unwrap().stopped, Some(Stop::ToolFailureLimit));
    assert_eq!(
        kinds(&run.events)
            .iter()
            .filter(|k| *k == "tool_call_start")
            .count(),
        2
    );
    let tool_messages: Vec<_> = session
        .messages
        .iter()
        .filter_map(|m| match m {
            keiri_llm::Message::Tool {
                tool_call_id,
                content,
            } => Some((tool_call_id.clone(), content.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(tool_messages.len(), 3);
    assert!(tool_messages[2].1.contains("SKIPPED"));
}

#[tokio::test]
async fn the_loop_stops_at_the_iteration_limit() {
    let ws = workspace();
    let ctx = tool_ctx(ws.path());
    let mut session = Session::new("s1");
    let read = || Reply::tool_calls(&[("c", "read_file", r#"{"path": "plan.yaml"}"#)]);
    let run = turn(
        vec![read(), read(), read()],
        &mut session,
        &ctx,
        ChatInput {
            skill: Some("general".into()),
            ..input("read")
        },
        |a| {
            a.limits.max_iterations = 2;
            a.lang = keiri_plan::Lang::En;
        },
    )
    .await;
    let outcome = run.outcome.unwrap();
    assert_eq!(run.requests.len(), 2);
    assert_eq!(outcome.stopped, Some(Stop::MaxIterations));
    assert_eq!(
        outcome.reply,
        "Stopped: the limit of tool-calling rounds was reached."
    );
}

#[tokio::test]
async fn a_failing_model_call_is_an_error_event_and_an_error() {
    let ws = workspace();
    let ctx = tool_ctx(ws.path());
    let mut session = Session::new("s1");
    let run = turn(
        vec![Reply::error(400, "bad request")],
        &mut session,
        &ctx,
        input("hello"),
        |_| {},
    )
    .await;
    let err = run.outcome.unwrap_err();
    assert_eq!(err.code(), "LLM_REQUEST_REJECTED");
    assert_eq!(kinds(&run.events), ["route", "error"]);
    assert!(session.messages.is_empty());
}

#[tokio::test]
async fn the_next_turn_sends_the_history() {
    let ws = workspace();
    let ctx = tool_ctx(ws.path());
    let mut session = Session::new("s1");
    turn(
        vec![Reply::content("一つ目")],
        &mut session,
        &ctx,
        input("最初"),
        |_| {},
    )
    .await
    .outcome
    .unwrap();
    let run = turn(
        vec![Reply::content("二つ目")],
        &mut session,
        &ctx,
        input("次"),
        |_| {},
    )
    .await;
    run.outcome.unwrap();
    let messages = run.requests[0].body["messages"].as_array().unwrap();
    let roles: Vec<_> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(messages[2]["content"], "一つ目");
    assert_eq!(session.messages.len(), 4);
}

#[tokio::test]
async fn an_empty_message_is_refused() {
    let ws = workspace();
    let ctx = tool_ctx(ws.path());
    let mut session = Session::new("s1");
    let run = turn(vec![], &mut session, &ctx, input("  "), |_| {}).await;
    assert_eq!(run.outcome.unwrap_err().code(), "INVALID_ARGUMENT");
    assert!(run.requests.is_empty());
}

/// A tool that waits for another task of the same runtime: it finishes only when the tool
/// call hands its worker's other tasks off (a server keeps answering while a chat's tool
/// reads files). With one worker and no hand-off the other task never runs and the tool gives
/// up after its bound.
#[test]
fn a_tool_call_does_not_hold_up_the_runtime_s_other_tasks() {
    use std::sync::{Mutex, mpsc};

    struct WaitsForAnotherTask {
        started: Mutex<mpsc::Sender<()>>,
        go: Mutex<mpsc::Receiver<()>>,
    }
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct NoArgs {}
    // Blocking work in a typed tool's `run`, as the built-in tools have it.
    impl keiri_agent::TypedTool for WaitsForAnotherTask {
        const NAME: &'static str = "wait";
        const TITLE: &'static str = "Wait";
        const DESCRIPTION: &'static str = "waits";
        const READ_ONLY: bool = true;
        const FRONTS: keiri_agent::Fronts = keiri_agent::Fronts::CHAT;
        type Args = NoArgs;
        fn run(
            &self,
            _: NoArgs,
            _: &keiri_agent::ToolContext,
        ) -> Result<serde_json::Value, keiri_agent::ToolError> {
            self.started.lock().unwrap().send(()).unwrap();
            match self
                .go
                .lock()
                .unwrap()
                .recv_timeout(std::time::Duration::from_secs(10))
            {
                Ok(()) => Ok(json!("the other task ran")),
                Err(_) => Err(keiri_agent::ToolError::failed(
                    "BLOCKED",
                    "the runtime was held",
                )),
            }
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let ws = workspace();
    let (started_tx, started) = mpsc::channel();
    let (go, go_rx) = mpsc::channel();
    let tool = WaitsForAnotherTask {
        started: Mutex::new(started_tx),
        go: Mutex::new(go_rx),
    };
    let result = runtime.block_on(async move {
        let call = tokio::spawn(async move {
            let llm = super::llm("http://127.0.0.1:9/v1");
            let registry = keiri_agent::ToolRegistry::new().with(tool);
            let skills = Vec::new();
            let agent = keiri_agent::Agent::new(&llm, &registry, &skills);
            let scope = keiri_agent::Scope::new("test", vec!["wait".into()]);
            let call = keiri_llm::ToolCall {
                id: "c1".into(),
                name: "wait".into(),
                arguments: "{}".into(),
            };
            let ctx = tool_ctx(ws.path());
            keiri_agent::execute_tool_call(&agent, &scope, &ctx, &call, &mut |_| {}).await
        });
        // The tool is now waiting on the only worker (this thread is not one of them).
        started.recv().unwrap();
        tokio::spawn(async move { go.send(()).unwrap() })
            .await
            .unwrap();
        call.await.unwrap()
    });
    assert_eq!(result.unwrap(), json!("the other task ran"));
}
