//! The self-repair loop: findings, spec excerpts and the diff go back; every attempt is kept;
//! no fallback unless allowed.

use keiri_design::{Stage, Status};
use keiri_llm::testkit::Reply;
use serde_json::json;

use super::*;

#[tokio::test]
async fn an_invalid_plan_is_repaired_on_attempt_2() {
    let scripted = Scripted::start(vec![
        Reply::json_content(&skeleton(json!([]))),
        // `reader` is not a node: ref.unknown_node.
        Reply::json_content(&wiring("invoices.csv", "${reader.rows}", json!([]))),
        Reply::json_content(&wiring("invoices.csv", "${read.rows}", json!([]))),
    ])
    .await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let ctx = scripted.ctx().with_progress(tx);
    let result = keiri_design::generate_plan(INSTRUCTION, "", &options(), &ctx)
        .await
        .unwrap();
    assert_eq!(result.status, Status::Valid, "{:?}", result.errors);
    assert_eq!(result.attempts.len(), 2);
    assert!(result.attempts[0].errors > 0);
    assert!(
        result.attempts[0]
            .issues
            .iter()
            .any(|i| i.code == keiri_plan::FindingCode::RefUnknownNode)
    );
    assert_eq!(result.attempts[1].errors, 0);
    assert_eq!(result.plan.graph[1].inputs["rows"], json!("${read.rows}"));

    let requests = scripted.server.requests();
    assert_eq!(requests.len(), 3);
    let repair = last_message(&requests[2]);
    assert!(repair.contains("Repair 1/2"), "{repair}");
    // The finding: code, node, path, message.
    assert!(
        repair.contains("ref.unknown_node | detect | /graph/1/in/rows"),
        "{repair}"
    );
    // The spec excerpt of the block involved.
    assert!(repair.contains("matching.duplicate_invoices,"), "{repair}");
    assert!(repair.contains("rows*:array"), "{repair}");
    // The node-level diff from the previous attempt (the skeleton).
    assert!(
        repair.contains("~ detect: in.rows added = \"${reader.rows}\""),
        "{repair}"
    );
    // The previous answer is in the conversation.
    assert!(messages_text(&requests[2]).contains("${reader.rows}"));

    let mut stages = Vec::new();
    while let Ok(p) = rx.try_recv() {
        stages.push((p.stage, p.repair.map(|r| (r.n, r.of))));
    }
    let names: Vec<Stage> = stages.iter().map(|s| s.0).collect();
    for stage in [
        Stage::Extracting,
        Stage::Retrieving,
        Stage::Skeleton,
        Stage::Questions,
        Stage::Wiring,
        Stage::Validating,
    ] {
        assert!(names.contains(&stage), "{stage:?} missing from {stages:?}");
    }
    assert!(
        stages.contains(&(Stage::Repair, Some((1, 2)))),
        "{stages:?}"
    );
}

#[tokio::test]
async fn still_invalid_after_n_attempts_gives_errors_and_suggestions_without_fallback() {
    let bad = Reply::json_content(&wiring("invoices.csv", "${reader.rows}", json!([])));
    let (result, requests) = run_scripted(
        vec![
            Reply::json_content(&skeleton(json!([]))),
            bad.clone(),
            bad.clone(),
            bad,
        ],
        &options(),
    )
    .await;
    let result = result.unwrap();
    assert_eq!(result.status, Status::Invalid);
    assert!(!result.fallback);
    assert_eq!(result.attempts.len(), 3, "1 wiring + 2 repairs");
    assert_eq!(requests.len(), 4);
    assert!(
        result
            .errors
            .iter()
            .any(|e| e.code == keiri_plan::FindingCode::RefUnknownNode)
    );
    // The template that already wires the failing block is suggested.
    assert!(
        result
            .suggestions
            .iter()
            .any(|s| s.contains("invoice_duplicate_detection")),
        "{:?}",
        result.suggestions
    );
    assert!(
        result
            .notes
            .iter()
            .any(|n| n.contains("KEIRI_AGENT_LLM_FALLBACK"))
    );
    // The second repair's diff is against attempt 2, which did not change.
    assert!(last_message(&requests[3]).contains("(no node changed)"));
}

#[tokio::test]
async fn the_fallback_flag_gives_a_marked_fallback_plan() {
    let bad = Reply::json_content(&wiring("invoices.csv", "${reader.rows}", json!([])));
    let options = GenerateOptions {
        max_repair_attempts: 1,
        allow_fallback: keiri_design::fallback_allowed(Some("yes")),
        ..options()
    };
    let (result, _) = run_scripted(
        vec![Reply::json_content(&skeleton(json!([]))), bad.clone(), bad],
        &options,
    )
    .await;
    let result = result.unwrap();
    assert_eq!(result.status, Status::Fallback, "{:?}", result.notes);
    assert!(result.fallback);
    assert_eq!(result.attempts.len(), 2, "the failed attempts are kept");
    assert!(result.notes[0].starts_with("FALLBACK PLAN"));
    assert_eq!(result.templates[0], "invoice_duplicate_detection");
}

#[test]
fn fallback_flag_values() {
    for (value, expect) in [
        (Some("1"), true),
        (Some("true"), true),
        (Some("YES"), true),
        (Some("0"), false),
        (Some("no"), false),
        (Some(""), false),
        (None, false),
    ] {
        assert_eq!(keiri_design::fallback_allowed(value), expect, "{value:?}");
    }
}

#[tokio::test]
async fn validation_counts_and_repair_iterations_are_logged() {
    let scripted = Scripted::start(vec![
        Reply::json_content(&skeleton(json!([]))),
        Reply::json_content(&wiring("invoices.csv", "${reader.rows}", json!([]))),
        Reply::json_content(&wiring("invoices.csv", "${read.rows}", json!([]))),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let log = keiri_llm::EventLog::create(
        dir.path(),
        "run-1",
        keiri_llm::Redactor::default(),
        scripted.clock.clone(),
    )
    .unwrap();
    let ctx = scripted.ctx().with_log(log.clone());
    let result = keiri_design::generate_plan(INSTRUCTION, "", &options(), &ctx)
        .await
        .unwrap();
    assert_eq!(result.status, Status::Valid);
    let text = std::fs::read_to_string(log.run_path()).unwrap();
    let events: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|e: &serde_json::Value| e["event"] == "validation")
        .collect();
    assert_eq!(events.len(), 2, "{text}");
    assert!(events[0]["validation_errors"].as_u64().unwrap() > 0);
    assert_eq!(events[1]["validation_errors"], json!(0));
    assert_eq!(events[1]["repair_iteration"], json!(1));
    assert!(
        events[1]["block_distribution"]
            .to_string()
            .contains("csv.read")
    );
    // The final plan's dry-run is measured too.
    let dry_run: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["event"] == "dry_run")
        .collect();
    assert_eq!(dry_run.len(), 1, "{text}");
    assert!(dry_run[0]["duration_ms"].is_u64());
    assert_eq!(dry_run[0]["nodes"], json!(2));
    // The model calls were logged under their stages.
    assert!(text.contains("\"stage\":\"skeleton\""));
    assert!(text.contains("\"stage\":\"repair\""));
}
