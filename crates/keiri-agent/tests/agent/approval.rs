use keiri_agent::{ChatInput, Event, Session, SessionStore, approve, undo};
use keiri_llm::testkit::Reply;
use serde_json::json;

use super::{PLAN, PLAN_AFTER, PLAN_PATCH, input, kinds, tool_ctx, tool_results, turn, workspace};

fn read(ws: &std::path::Path) -> String {
    std::fs::read_to_string(ws.join("plan.yaml")).unwrap()
}

fn policy(ws: &std::path::Path) -> keiri_fs::PathPolicy {
    keiri_fs::PathPolicy::new([ws])
}

/// A plan-editing turn that proposes PLAN_PATCH, then validates the pending plan.
async fn propose(ws: &std::path::Path, session: &mut Session) -> super::TurnRun {
    let ctx = tool_ctx(ws);
    let patch = json!({"filePath": "plan.yaml", "patch": PLAN_PATCH}).to_string();
    turn(
        vec![
            Reply::tool_calls(&[("c1", "apply_patch", &patch)]),
            Reply::tool_calls(&[("c2", "validate_plan", "{}")]),
            Reply::content(
                "csv.write ノードを追加する変更を提案しました。承認すると保存されます。",
            ),
        ],
        session,
        &ctx,
        input("CSVに書き出すステップを追加して"),
        |_| {},
    )
    .await
}

#[tokio::test]
async fn a_plan_edit_is_a_diff_written_only_after_approval_and_can_be_undone() {
    let ws = workspace();
    let store = SessionStore::new(ws.path());
    let mut session = Session::new("s1");
    let run = propose(ws.path(), &mut session).await;
    let outcome = run.outcome.unwrap();
    assert_eq!(outcome.skill, "plan-editing");
    assert_eq!(
        kinds(&run.events),
        [
            "route",
            "tool_call_start",
            "tool_call_end",
            "approval_required",
            "tool_call_start",
            "tool_call_end",
            "reply"
        ]
    );
    // Proposed, not written.
    assert_eq!(read(ws.path()), PLAN);
    assert_eq!(outcome.proposed.len(), 1);
    let change = &session.pending[0];
    assert_eq!(
        (
            change.change_id.as_str(),
            change.file.as_str(),
            change.tool.as_str()
        ),
        ("chg-1", "plan.yaml", "apply_patch")
    );
    assert_eq!(
        change.diff,
        "--- a/plan.yaml\n+++ b/plan.yaml\n@@ -4,3 +4,6 @@\n     block: csv.read\n     in: {path: invoices.csv, encoding: utf-8}\n     out: {rows: rows}\n+  - id: out\n+    block: csv.write\n+    in: {rows: \"${read.rows}\"}\n"
    );
    match &run.events[3] {
        Event::ApprovalRequired {
            change_id, diff, ..
        } => {
            assert_eq!(change_id, "chg-1");
            assert_eq!(diff, &change.diff);
        }
        other => panic!("{other:?}"),
    }
    // The model was told the change is pending, and validate_plan checked the pending plan.
    let results = tool_results(&run.requests[2]);
    assert_eq!(results[0]["status"], "pending_approval");
    assert_eq!(results[0]["change_id"], "chg-1");
    assert_eq!(results[1]["valid"], true, "{}", results[1]);

    // The session survives a round trip through the store (stateless front-ends).
    store.save(&session).unwrap();
    let mut session = store.load("s1").unwrap();

    let approval = approve(&store, &mut session, &policy(ws.path()), "chg-1", true).unwrap();
    assert!(approval.applied && approval.undo_available);
    assert_eq!(approval.file, "plan.yaml");
    assert_eq!(read(ws.path()), PLAN_AFTER);
    assert!(session.pending.is_empty());

    let undone = undo(&store, &mut session, &policy(ws.path())).unwrap();
    assert_eq!(
        (
            undone.change_id.as_str(),
            undone.file.as_str(),
            undone.undo_available
        ),
        ("chg-1", "plan.yaml", false)
    );
    assert_eq!(read(ws.path()), PLAN);
    assert_eq!(
        undo(&store, &mut session, &policy(ws.path()))
            .unwrap_err()
            .code(),
        "NOTHING_TO_UNDO"
    );
}

#[tokio::test]
async fn a_rejected_change_is_dropped_and_nothing_is_written() {
    let ws = workspace();
    let store = SessionStore::new(ws.path());
    let mut session = Session::new("s1");
    propose(ws.path(), &mut session).await.outcome.unwrap();
    let approval = approve(&store, &mut session, &policy(ws.path()), "chg-1", false).unwrap();
    assert!(!approval.applied && !approval.undo_available);
    assert!(session.pending.is_empty());
    assert_eq!(read(ws.path()), PLAN);
    assert_eq!(
        approve(&store, &mut session, &policy(ws.path()), "chg-1", true)
            .unwrap_err()
            .code(),
        "CHANGE_NOT_FOUND"
    );
}

#[tokio::test]
async fn a_file_changed_since_the_proposal_is_not_overwritten() {
    let ws = workspace();
    let store = SessionStore::new(ws.path());
    let mut session = Session::new("s1");
    propose(ws.path(), &mut session).await.outcome.unwrap();
    super::put(ws.path().join("plan.yaml"), "id: edited\n");
    let err = approve(&store, &mut session, &policy(ws.path()), "chg-1", true).unwrap_err();
    assert_eq!(err.code(), "CHANGE_CONFLICT");
    assert_eq!(read(ws.path()), "id: edited\n");
    assert_eq!(session.pending.len(), 1);
}

#[tokio::test]
async fn undo_refuses_when_the_file_changed_after_approval() {
    let ws = workspace();
    let store = SessionStore::new(ws.path());
    let mut session = Session::new("s1");
    propose(ws.path(), &mut session).await.outcome.unwrap();
    approve(&store, &mut session, &policy(ws.path()), "chg-1", true).unwrap();
    super::put(ws.path().join("plan.yaml"), "id: edited\n");
    let err = undo(&store, &mut session, &policy(ws.path())).unwrap_err();
    assert_eq!(err.code(), "CHANGE_CONFLICT");
    assert_eq!(read(ws.path()), "id: edited\n");
    assert_eq!(session.undo.len(), 1);
}

#[tokio::test]
async fn a_second_patch_builds_on_the_pending_change() {
    let ws = workspace();
    let ctx = tool_ctx(ws.path());
    let mut session = Session::new("s1");
    let first = json!({"filePath": "plan.yaml", "patch": PLAN_PATCH}).to_string();
    let second =
        json!({"filePath": "plan.yaml", "patch": "@@ -1,2 +1,2 @@\n-id: p\n+id: invoices\n graph:\n"})
            .to_string();
    let bad =
        json!({"filePath": "plan.yaml", "patch": "@@ -1,2 +1,2 @@\n-id: nope\n+id: x\n graph:\n"})
            .to_string();
    let run = turn(
        vec![
            Reply::tool_calls(&[("c1", "apply_patch", &first)]),
            Reply::tool_calls(&[("c2", "apply_patch", &second), ("c3", "apply_patch", &bad)]),
            Reply::content("done"),
        ],
        &mut session,
        &ctx,
        ChatInput {
            skill: Some("plan-editing".into()),
            ..input("edit")
        },
        |_| {},
    )
    .await;
    run.outcome.unwrap();
    let results = tool_results(&run.requests[2]);
    assert_eq!(results[1]["status"], "pending_approval", "{}", results[1]);
    assert_eq!(results[2]["error_code"], "TOOL_FAILED");
    assert_eq!(results[2]["cause"], "APPLY_FAILED");
    // One pending change holding both edits.
    assert_eq!(session.pending.len(), 1);
    assert_eq!(session.pending[0].change_id, "chg-2");
    let store = SessionStore::new(ws.path());
    approve(&store, &mut session, &policy(ws.path()), "chg-2", true).unwrap();
    assert_eq!(
        read(ws.path()),
        PLAN_AFTER.replacen("id: p\n", "id: invoices\n", 1)
    );
}
