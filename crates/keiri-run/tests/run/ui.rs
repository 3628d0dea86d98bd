//! Human-in-the-loop blocks: without an answer each pauses with its question; with one it
//! checks the answer and produces its outputs (expected values written by hand). Then the
//! engine: a plan pauses at `ui.confirmation`, `state.json` says `paused`, and a resume with
//! the answer runs the rest.

use std::path::Path;

use chrono::TimeZone;
use keiri_run::block::{ErrorCode, Registry};
use keiri_run::{Event, NodeStatus, RunOptions, RunStatus};
use serde_json::{Value as Json, json};

use crate::matching::run_block_answered;

fn ask(id: &str, inputs: Json) -> Json {
    let dir = tempfile::tempdir().unwrap();
    match run_block_answered(id, dir.path(), inputs, false, None) {
        Err(e) => {
            assert_eq!(e.code, ErrorCode::AwaitingInput, "{id}: {e}");
            *e.question.expect("a question")
        }
        Ok(out) => panic!("{id} should wait for an answer, got {out}"),
    }
}

fn answer(id: &str, inputs: Json, answer: Json) -> Result<Json, keiri_run::block::BlockError> {
    let dir = tempfile::tempdir().unwrap();
    run_block_answered(id, dir.path(), inputs, false, Some(&answer))
}

fn refused(id: &str, inputs: Json, given: Json) {
    let err = answer(id, inputs, given.clone()).expect_err("a bad answer is refused");
    assert_eq!(err.code, ErrorCode::InputInvalid, "{id} {given}: {err}");
}

#[test]
fn confirmation_asks_then_takes_yes_or_no() {
    let inputs = json!({"message": "例外レポートを経理部長に送ります", "details": {"件数": 4}, "confirm_label": "送信する", "cancel_label": "中止する"});
    let q = ask("ui.confirmation", inputs.clone());
    assert_eq!(
        q,
        json!({"kind": "confirmation", "message": "例外レポートを経理部長に送ります", "details": {"件数": 4}, "labels": null, "confirm_label": "送信する", "cancel_label": "中止する"})
    );
    let out = answer(
        "ui.confirmation",
        inputs.clone(),
        json!({"approved": true, "comment": "確認済み"}),
    )
    .unwrap();
    assert_eq!(out, json!({"approved": true, "comment": "確認済み"}));
    let out = answer(
        "ui.confirmation",
        inputs.clone(),
        json!({"approved": false}),
    )
    .unwrap();
    assert_eq!(out, json!({"approved": false, "comment": ""}));
    // A yes or a no as a person writes it in an answers file: the whole answer or approved.
    for (given, yes) in [
        (json!(true), true),
        (json!("yes"), true),
        (json!(" Yes "), true),
        (json!("はい"), true),
        (json!("承認"), true),
        (json!({"approved": "はい", "comment": "OK です"}), true),
        (json!(false), false),
        (json!("no"), false),
        (json!("いいえ"), false),
        (json!({"approved": "却下"}), false),
    ] {
        let out = answer("ui.confirmation", inputs.clone(), given.clone()).unwrap();
        assert_eq!(out["approved"], yes, "{given}");
    }
    // Anything else is not guessed at.
    for given in [
        json!({"approved": "たぶん"}),
        json!({"approved": 1}),
        json!("maybe"),
        json!(1),
        json!({"comment": "承認"}),
    ] {
        refused("ui.confirmation", inputs.clone(), given);
    }
}

#[test]
fn interactive_input_checks_each_field_by_type() {
    let inputs = json!({
        "mode": "collect",
        "message": "支払予定日と上限額を入力してください",
        "requirements": [
            {"id": "pay_date", "label": "支払予定日", "type": "text"},
            {"id": "limit", "label": "上限額", "type": "number"},
            {"id": "bank", "label": "振込銀行", "type": "select", "options": ["みずほ", "三井住友"]},
            {"id": "memo", "label": "備考", "type": "text", "required": false},
        ],
    });
    let q = ask("ui.interactive_input", inputs.clone());
    assert_eq!(q["kind"], "input");
    assert_eq!(q["fields"].as_array().unwrap().len(), 4);
    let out = answer(
        "ui.interactive_input",
        inputs.clone(),
        json!({"values": {"pay_date": "2025-04-25", "limit": 1000000, "bank": "みずほ"}}),
    )
    .unwrap();
    assert_eq!(
        out["collected_data"],
        json!({"pay_date": "2025-04-25", "limit": 1000000, "bank": "みずほ"})
    );
    assert_eq!(out["approved"], true);
    assert_eq!(out["metadata"], json!({"mode": "collect", "fields": 4}));
    // A missing required field, a number as text, an option not offered, an unknown field.
    refused(
        "ui.interactive_input",
        inputs.clone(),
        json!({"values": {"pay_date": "2025-04-25", "bank": "みずほ"}}),
    );
    refused(
        "ui.interactive_input",
        inputs.clone(),
        json!({"values": {"pay_date": "x", "limit": "百万", "bank": "みずほ"}}),
    );
    refused(
        "ui.interactive_input",
        inputs.clone(),
        json!({"values": {"pay_date": "x", "limit": 1, "bank": "りそな"}}),
    );
    refused(
        "ui.interactive_input",
        inputs,
        json!({"values": {"pay_date": "x", "limit": 1, "bank": "みずほ", "extra": 1}}),
    );
}

#[test]
fn table_review_excludes_and_edits_only_what_it_allows() {
    let rows = json!([
        {"請求書番号": "INV-001", "取引先": "山田商事", "金額": 110000, "判断": ""},
        {"請求書番号": "INV-001", "取引先": "(株)山田商事", "金額": 110000, "判断": ""},
        {"請求書番号": "OS-0228", "取引先": "大阪運輸", "金額": 55000, "判断": ""},
    ]);
    let inputs = json!({"rows": rows, "editable_columns": ["判断"], "title": "重複の疑い"});
    let q = ask("ui.table_review", inputs.clone());
    assert_eq!(q["kind"], "table_review");
    assert_eq!(q["row_count"], 3);
    assert_eq!(q["rows"], rows);
    assert_eq!(q["allow_exclude"], true);
    // Japanese headers already: nothing for the window to name, only 金額 to show as yen.
    assert_eq!(
        q["labels"],
        json!({"columns": {}, "values": {}, "amounts": ["金額"]})
    );
    // Rows from a check: the window gets the words for its columns and codes.
    let flagged = json!([{"invoice_no": "INV-001", "amount": 110000, "reason": "same_invoice_no"}]);
    let q = ask("ui.table_review", json!({"rows": flagged}));
    assert_eq!(q["labels"]["columns"]["invoice_no"]["ja"], "請求書番号");
    assert_eq!(
        q["labels"]["values"]["reason"]["same_invoice_no"]["ja"],
        "同じ請求書番号・金額"
    );
    assert_eq!(q["labels"]["amounts"], json!(["amount"]));
    let out = answer(
        "ui.table_review",
        inputs.clone(),
        json!({"approved": true, "excluded": [2], "changes": [{"row_index": 1, "field": "判断", "after": "支払保留"}]}),
    )
    .unwrap();
    // Row 2 (大阪運輸) leaves; row 1 gets 判断 = 支払保留.
    assert_eq!(
        out["rows"],
        json!([
            {"請求書番号": "INV-001", "取引先": "山田商事", "金額": 110000, "判断": ""},
            {"請求書番号": "INV-001", "取引先": "(株)山田商事", "金額": 110000, "判断": "支払保留"},
        ])
    );
    assert_eq!(out["excluded"], json!([rows[2]]));
    assert_eq!(
        out["changes"],
        json!([{"row_index": 1, "field": "判断", "before": "", "after": "支払保留"}])
    );
    refused(
        "ui.table_review",
        inputs.clone(),
        json!({"approved": true, "changes": [{"row_index": 0, "field": "金額", "after": 1}]}),
    );
    refused(
        "ui.table_review",
        inputs.clone(),
        json!({"approved": true, "excluded": [7]}),
    );
    let fixed = json!({"rows": rows, "allow_exclude": false});
    refused(
        "ui.table_review",
        fixed,
        json!({"approved": true, "excluded": [0]}),
    );
}

#[test]
fn diff_viewer_passes_the_diff_on_with_the_decision() {
    let diff = json!([{"op": "set_value", "op_index": 0, "sheet": "集計", "cell": "B2", "before": null, "after": {"kind": "value", "value": 120000}, "status": "applied"}]);
    let inputs = json!({"patch_diff": diff, "title": "集計表の更新"});
    assert_eq!(ask("ui.diff_viewer", inputs.clone())["patch_diff"], diff);
    let out = answer("ui.diff_viewer", inputs, json!({"approved": true})).unwrap();
    assert_eq!(out, json!({"approved": true, "comment": "", "diffs": diff}));
}

#[test]
fn approval_routes_by_amount_and_needs_every_decision() {
    let approvers = json!([
        {"name": "佐藤", "role": "課長", "limit": 100000},
        {"name": "鈴木", "role": "部長", "limit": 1000000},
        {"name": "高橋", "role": "取締役"},
    ]);
    let inputs = |amount: i64| json!({"subject": "備品購入", "amount": amount, "approvers": approvers, "threshold_amount": 30000});
    // Under the threshold nobody approves.
    let dir = tempfile::tempdir().unwrap();
    let out =
        run_block_answered("control.approval", dir.path(), inputs(20000), false, None).unwrap();
    assert_eq!(out, json!({"approved": true, "decisions": [], "route": []}));
    // 250,000 is over 佐藤's 100,000 and within 鈴木's 1,000,000: 佐藤 → 鈴木.
    let q = ask("control.approval", inputs(250000));
    assert_eq!(q["route"], json!(["佐藤", "鈴木"]));
    let out = answer(
        "control.approval",
        inputs(250000),
        json!({"decisions": [{"approver": "佐藤", "decision": "approved"}, {"approver": "鈴木", "decision": "rejected", "comment": "見積を再取得"}]}),
    )
    .unwrap();
    assert_eq!(out["approved"], false);
    assert_eq!(out["decisions"][1]["role"], "部長");
    assert_eq!(out["decisions"][1]["comment"], "見積を再取得");
    refused(
        "control.approval",
        inputs(250000),
        json!({"decisions": [{"approver": "佐藤", "decision": "approved"}]}),
    );
    refused(
        "control.approval",
        inputs(250000),
        json!({"decisions": [{"approver": "佐藤", "decision": "保留"}, {"approver": "鈴木", "decision": "approved"}]}),
    );
    // Decisions written as a person says them are recorded as approved / rejected.
    let out = answer(
        "control.approval",
        inputs(250000),
        json!({"decisions": [{"approver": "佐藤", "decision": "承認"}, {"approver": "鈴木", "decision": "yes"}]}),
    )
    .unwrap();
    assert_eq!(out["approved"], true);
    assert_eq!(out["decisions"][0]["decision"], "approved");
    assert_eq!(out["decisions"][1]["decision"], "approved");
    let out = answer(
        "control.approval",
        inputs(250000),
        json!({"decisions": [{"approver": "佐藤", "decision": true}, {"approver": "鈴木", "decision": "却下"}]}),
    )
    .unwrap();
    assert_eq!(out["approved"], false);
    assert_eq!(out["decisions"][1]["decision"], "rejected");
}

/// With `require_signature`, each named approver's decision carries that approver's own name:
/// the person at the keyboard cannot decide for the 部長 unrecorded. Spaces, full-width forms
/// and case do not matter; another name, or none, is refused.
#[test]
fn approval_can_require_each_approver_to_sign_with_their_name() {
    let inputs = json!({"subject": "支払承認", "amount": 500000, "require_signature": true,
        "approvers": [{"name": "山田 太郎", "role": "部長"}]});
    assert_eq!(
        ask("control.approval", inputs.clone())["require_signature"],
        true
    );
    let out = answer(
        "control.approval",
        inputs.clone(),
        json!({"decisions": [{"approver": "山田 太郎", "decision": "approved", "signed_by": "山田\u{3000}太郎"}]}),
    )
    .unwrap();
    assert_eq!(out["approved"], true);
    assert_eq!(out["decisions"][0]["signed_by"], "山田\u{3000}太郎");
    for signed in [json!(null), json!(""), json!("佐藤 花子")] {
        let mut decision = json!({"approver": "山田 太郎", "decision": "approved"});
        if !signed.is_null() {
            decision["signed_by"] = signed;
        }
        refused(
            "control.approval",
            inputs.clone(),
            json!({"decisions": [decision]}),
        );
    }
    // Without the requirement a signature is still checked when one is given.
    let plain = json!({"subject": "支払承認", "amount": 500000,
        "approvers": [{"name": "山田 太郎", "role": "部長"}]});
    refused(
        "control.approval",
        plain.clone(),
        json!({"decisions": [{"approver": "山田 太郎", "decision": "approved", "signed_by": "佐藤"}]}),
    );
    let out = answer(
        "control.approval",
        plain,
        json!({"decisions": [{"approver": "山田 太郎", "decision": "approved"}]}),
    )
    .unwrap();
    assert!(out["decisions"][0].get("signed_by").is_none());
}

const PLAN: &str = "id: confirm_then_count
graph:
  - {id: read, block: csv.read, in: {path: invoices.csv}, out: {rows: rows}}
  - {id: ok, block: ui.confirmation, in: {message: 請求書を確認しましたか, details: \"${read.rows}\"}, out: {approved: approved}}
  - {id: pick, block: transforms.select_columns, in: {rows: \"${read.rows}\", columns: [取引先]}, out: {rows: picked}, when: {expr: \"${ok.approved} == true\"}}
";

fn catalog() -> keiri_plan::Catalog {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../block_specs");
    let (catalog, issues) = keiri_plan::Catalog::load(&[dir]);
    assert!(issues.is_empty(), "{issues:?}");
    catalog
}

#[test]
fn a_run_pauses_at_a_confirmation_and_resumes_with_the_answer() {
    let ws = tempfile::tempdir().unwrap();
    keiri_fs::write_atomic(
        &ws.path().join("invoices.csv"),
        "請求書番号,取引先\nINV-001,山田商事\n".as_bytes(),
    )
    .unwrap();
    let plan = keiri_plan::load_plan(PLAN).expect("plan").plan;
    let catalog = catalog();
    let registry = Registry::builtins();
    let now = chrono::Utc
        .with_ymd_and_hms(2026, 11, 25, 10, 0, 0)
        .unwrap();
    let options = RunOptions::new(ws.path(), now, 7);
    let events = std::sync::Mutex::new(Vec::new());
    let sink = |e: &Event| events.lock().unwrap().push(e.clone());
    let first = keiri_run::run(&plan, PLAN, &catalog, &registry, &options, &sink).unwrap();
    assert_eq!(first.status, RunStatus::Paused, "{:?}", first.failures);
    assert_eq!(first.nodes.get("ok"), Some(&NodeStatus::Paused));
    // Nothing after the pause starts (the default on_error: stop).
    assert_eq!(first.nodes.get("pick"), None);
    assert!(first.failures.is_empty());
    assert_eq!(first.paused[0].node, "ok");
    assert_eq!(
        first.paused[0].question.as_ref().unwrap()["kind"],
        "confirmation"
    );
    assert!(
        events
            .lock()
            .unwrap()
            .iter()
            .any(|e| matches!(e, Event::NodePaused { node, .. } if node == "ok"))
    );
    let state = keiri_run::RunState::load(&first.run_dir).unwrap();
    assert_eq!(state.status, RunStatus::Paused);
    assert_eq!(state.paused().len(), 1);

    // Without an answer a resume pauses again; with one the rest runs.
    let mut again = RunOptions::new(ws.path(), now, 8);
    again.resume = Some(first.run_id.clone());
    let second = keiri_run::run(&plan, PLAN, &catalog, &registry, &again, &|_| {}).unwrap();
    assert_eq!(second.status, RunStatus::Paused);
    again.answers.insert("ok".into(), json!({"approved": true}));
    let third = keiri_run::run(&plan, PLAN, &catalog, &registry, &again, &|_| {}).unwrap();
    assert_eq!(third.status, RunStatus::Finished, "{:?}", third.failures);
    assert_eq!(third.nodes.get("pick"), Some(&NodeStatus::Finished));
    let dir = keiri_run::RunDir::open(&ws.path().join("runs"), "confirm_then_count", &first.run_id)
        .unwrap();
    let picked = dir.load_outputs("pick").unwrap();
    assert_eq!(
        picked.get("rows").unwrap().to_json(),
        json!([{"取引先": "山田商事"}])
    );
}
