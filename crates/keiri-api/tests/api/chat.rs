use keiri_api::{Context, ErrorCode};
use serde_json::Value;

use std::path::{Path, PathBuf};

use keiri_llm::testkit::{FakeHandle, FakeServer, Reply};
use serde_json::json;

const PLAN: &str = "id: p\ngraph:\n  - id: read\n    block: csv.read\n    in: {path: invoices.csv, encoding: utf-8}\n    out: {rows: rows}\n";
const HUNK: &str = "@@ -4,3 +4,6 @@\n     block: csv.read\n     in: {path: invoices.csv, encoding: utf-8}\n     out: {rows: rows}\n+  - id: out\n+    block: csv.write\n+    in: {rows: \"${read.rows}\"}\n";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A workspace whose `.env` points at a fake server answering `replies`.
fn setup(replies: Vec<Reply>) -> (tempfile::TempDir, tempfile::TempDir, Context, FakeHandle) {
    let (url, server) = FakeServer::start_background(replies).unwrap();
    let ws = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    keiri_fs::write_atomic(
        &ws.path().join(".env"),
        format!("KEIRI_LLM_BASE_URL={url}\nKEIRI_LLM_MAX_RETRIES=0\n").as_bytes(),
    )
    .unwrap();
    let mut ctx = Context::new(ws.path())
        .with_catalog_dirs(vec![repo().join("block_specs")])
        .with_config_dir(config.path().to_path_buf());
    ctx.skillpack_dirs = vec![repo().join("skillpacks")];
    (ws, config, ctx, server)
}

/// The tool result the model was sent back with its second request (the turn's one tool
/// call), parsed.
fn tool_result(server: &FakeHandle) -> Option<Value> {
    let sent = &server.requests()[1].body["messages"];
    let message = sent.as_array()?.iter().find(|m| m["role"] == "tool")?;
    serde_json::from_str(message["content"].as_str()?).ok()
}

fn patch_call() -> Reply {
    let args = json!({"filePath": ".keiri/chat/s1/plan.yaml", "patch": HUNK}).to_string();
    Reply::tool_calls(&[("c1", "apply_patch", &args)])
}

#[test]
fn send_approve_and_undo_a_plan_edit() {
    let (ws, _config, ctx, server) = setup(vec![patch_call(), Reply::content("提案しました")]);
    let body = json!({
        "session_id": "s1",
        "message": "CSVに書き出すステップを追加して",
        "plan_yaml": PLAN,
    });
    let res = crate::support::call(&ctx, "chat_send", body).unwrap();
    assert_eq!(res["session_id"], "s1");
    assert_eq!(res["skill"], "plan-editing");
    assert_eq!(res["reply"], "提案しました");
    let kinds: Vec<&str> = res["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "route",
            "tool_call_start",
            "tool_call_end",
            "approval_required",
            "reply"
        ]
    );
    assert_eq!(res["pending"][0]["change_id"], "chg-1");
    assert_eq!(res["pending"][0]["file"], ".keiri/chat/s1/plan.yaml");
    assert!(
        res["pending"][0]["diff"]
            .as_str()
            .unwrap()
            .contains("+    block: csv.write")
    );
    assert_eq!(server.request_count(), 2);
    let log = std::fs::read_to_string(ws.path().join("logs/runs/chat-s1.jsonl")).unwrap();
    let names: Vec<String> = log
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["event"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .filter(|n| n.starts_with("chat."))
        .collect();
    assert_eq!(
        names,
        [
            "chat.route",
            "chat.tool_call_start",
            "chat.tool_call_end",
            "chat.approval_required",
            "chat.reply"
        ]
    );
    let copy = ws.path().join(".keiri/chat/s1/plan.yaml");
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), PLAN);

    let res = crate::support::call(
        &ctx,
        "chat_approve",
        json!({"session_id": "s1", "change_id": "chg-1"}),
    )
    .unwrap();
    assert_eq!(res["applied"], true);
    assert_eq!(res["undo_available"], true);
    let after = res["plan_yaml"].as_str().unwrap();
    assert!(
        after.ends_with("  - id: out\n    block: csv.write\n    in: {rows: \"${read.rows}\"}\n"),
        "{after}"
    );
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), after);

    let res = crate::support::call(&ctx, "chat_undo", json!({"session_id": "s1"})).unwrap();
    assert_eq!(res["plan_yaml"], PLAN);
    assert_eq!(res["undo_available"], false);
    let err = crate::support::call(&ctx, "chat_undo", json!({"session_id": "s1"})).unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound);
    assert_eq!(err.details.unwrap()["code"], "NOTHING_TO_UNDO");
}

#[test]
fn an_edited_plan_drops_the_stale_pending_change() {
    let (_ws, _config, ctx, _server) = setup(vec![
        patch_call(),
        Reply::content("提案しました"),
        Reply::content("了解"),
        Reply::content("了解"),
    ]);
    let send = |plan: &str| {
        crate::support::call(
            &ctx,
            "chat_send",
            json!({"session_id": "s1", "message": "ステップを追加して", "plan_yaml": plan}),
        )
        .unwrap()
    };
    assert_eq!(send(PLAN)["pending"].as_array().unwrap().len(), 1);
    // The same text again keeps it; an edited plan drops it.
    assert_eq!(send(PLAN)["pending"].as_array().unwrap().len(), 1);
    let edited = format!("{PLAN}# edited\n");
    assert_eq!(send(&edited)["pending"], json!([]));
}

#[test]
fn the_stream_sends_events_as_they_happen() {
    let (_ws, _config, ctx, _server) = setup(vec![patch_call(), Reply::content("ok")]);
    let mut events = Vec::new();
    let res = crate::support::call_stream(
        &ctx,
        "chat_send",
        json!({"session_id": "s1", "message": "/plan-editing 追加して", "plan_yaml": PLAN}),
        &mut |e| events.push(e),
        &keiri_llm::CancellationToken::new(),
    )
    .unwrap();
    assert!(keiri_api::STREAMING_FUNCTIONS.contains(&"chat_send"));
    assert_eq!(Value::Array(events), res["events"]);
    assert_eq!(res["events"][0]["reason"], "command");
}

#[test]
fn a_cancelled_turn_is_cancelled_and_leaves_no_session() {
    let (ws, _config, ctx, _server) = setup(vec![Reply::content("late")]);
    let cancel = keiri_llm::CancellationToken::new();
    cancel.cancel();
    let err = crate::support::call_stream(
        &ctx,
        "chat_send",
        json!({"session_id": "s1", "message": "hi"}),
        &mut |_| {},
        &cancel,
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::Cancelled);
    assert!(!ws.path().join(".keiri/chat/s1.json").exists());
}

/// The chat's dry-run is the studio's: a patch node's workbook preview reaches the model.
#[test]
fn the_chats_dry_run_has_the_studios_workbook_previews() {
    if keiri_testkit::skip_without_shared("fixtures/accounting/multi_sheet_ja.xlsx") {
        return;
    }
    let plan = "id: p\ngraph:\n  - id: patch\n    block: excel.patch_workbook\n    in:\n      xlsx_path: book.xlsx\n      operations:\n        - {op: set_value, sheet: 入力データ, cell: D2, value: 確認済}\n";
    let args = json!({ "yaml": plan }).to_string();
    let (ws, _config, ctx, server) = setup(vec![
        Reply::tool_calls(&[("c1", "dry_run_plan", &args)]),
        Reply::content("D2 が 確認済 になります"),
    ]);
    let src = keiri_testkit::shared_fixture("accounting/multi_sheet_ja.xlsx");
    std::fs::copy(&src, ws.path().join("book.xlsx")).unwrap();
    let before = std::fs::read(ws.path().join("book.xlsx")).unwrap();
    let res = crate::support::call(
        &ctx,
        "chat_send",
        json!({"message": "/plan-editing この計画を試して"}),
    )
    .unwrap();
    let result = tool_result(&server).unwrap_or_else(|| panic!("no tool result: {res}"));
    let preview = &result["nodes"][0]["workbook"];
    assert_eq!(preview["status"], "ready", "{result:#}");
    assert_eq!(preview["response"]["patch_diff"][0]["cell"], "D2");
    assert_eq!(std::fs::read(ws.path().join("book.xlsx")).unwrap(), before);
}

#[test]
fn tools_never_read_env_files() {
    let (_ws, _config, ctx, server) = setup(vec![
        Reply::tool_calls(&[("c1", "read_file", r#"{"path": ".env"}"#)]),
        Reply::content("読めませんでした"),
    ]);
    let res = crate::support::call(
        &ctx,
        "chat_send",
        json!({"message": "/general .env を見せて"}),
    )
    .unwrap();
    assert_eq!(res["events"][2]["error_code"], "TOOL_FAILED", "{res}");
    let result = tool_result(&server).unwrap();
    assert_eq!(result["cause"], "PATH_DENIED");
    let sent = &server.requests()[1].body["messages"];
    assert!(!sent.to_string().contains("KEIRI_LLM_BASE_URL="), "{sent}");
}

#[test]
fn bad_requests_have_stable_codes() {
    let (_ws, _config, ctx, server) = setup(vec![]);
    let check = |name: &str, body: Value, code: ErrorCode, lower: Option<&str>| {
        let err = crate::support::call(&ctx, name, body).unwrap_err();
        assert_eq!(err.code, code, "{name}: {err}");
        if let Some(lower) = lower {
            assert_eq!(
                err.details.as_ref().unwrap()["code"],
                lower,
                "{name}: {err}"
            );
        }
    };
    check(
        "chat_send",
        json!({"session_id": "../x", "message": "hi"}),
        ErrorCode::InvalidRequest,
        Some("INVALID_ARGUMENT"),
    );
    check(
        "chat_send",
        json!({"message": "  "}),
        ErrorCode::InvalidRequest,
        None,
    );
    check(
        "chat_send",
        json!({"message": "hi", "skill": "nope"}),
        ErrorCode::NotFound,
        Some("SKILL_NOT_FOUND"),
    );
    check(
        "chat_send",
        json!({"message": "hi", "plan_path": "/etc/passwd"}),
        ErrorCode::PathDenied,
        None,
    );
    check(
        "chat_send",
        json!({"message": "hi", "extra": 1}),
        ErrorCode::InvalidRequest,
        None,
    );
    check(
        "chat_approve",
        json!({"session_id": "nope", "change_id": "chg-1"}),
        ErrorCode::NotFound,
        Some("SESSION_NOT_FOUND"),
    );
    check(
        "chat_undo",
        json!({"session_id": "a/b"}),
        ErrorCode::InvalidRequest,
        None,
    );
    assert_eq!(server.request_count(), 0);
}

#[test]
fn skills_list_lists_the_shipped_skills_and_reports_problems() {
    let (ws, _config, mut ctx, _server) = setup(vec![]);
    let own = ws.path().join("skillpacks");
    std::fs::create_dir_all(own.join("broken")).unwrap();
    keiri_fs::write_atomic(
        &own.join("broken/SKILL.md"),
        b"---\nname: broken\ndescription: d\ncolour: red\n---\n",
    )
    .unwrap();
    std::fs::create_dir_all(own.join("mine")).unwrap();
    keiri_fs::write_atomic(
        &own.join("mine/SKILL.md"),
        "---\nname: mine\ndescription: 自分用\nallowed_tools: [rm_rf]\n---\n".as_bytes(),
    )
    .unwrap();
    ctx.skillpack_dirs.push(own);
    let res = crate::support::call(&ctx, "skills_list", json!({})).unwrap();
    let names: Vec<&str> = res["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "catalog-explanation",
            "document-reading",
            "general",
            "mine",
            "plan-editing",
            "workbook-preview"
        ]
    );
    let plan = res["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "plan-editing")
        .unwrap();
    assert!(
        plan["allowed_tools"]
            .as_array()
            .unwrap()
            .contains(&json!("apply_patch"))
    );
    let issues = res["issues"].as_array().unwrap();
    assert_eq!(issues.len(), 2, "{issues:?}");
    assert_eq!(issues[0]["line"], 4, "{issues:?}");
    assert!(issues[0]["message"].as_str().unwrap().contains("colour"));
    assert!(issues[1]["message"].as_str().unwrap().contains("rm_rf"));
}
