use keiri_api::*;
use keiri_api::{ApiError, Context, ErrorCode};
use serde_json::Value;

fn ctx(dir: &std::path::Path) -> Context {
    crate::support::test_context(dir)
}

fn run(
    ctx: &Context,
    name: &str,
    body: Value,
    cancel: &CancellationToken,
) -> (Vec<Value>, Result<Value, ApiError>) {
    let mut events = Vec::new();
    let res = crate::support::call_stream(ctx, name, body, &mut |e| events.push(e), cancel);
    (events, res)
}

#[test]
fn compose_streams_stage_events_with_elapsed_time_then_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let (events, res) = run(
        &ctx(dir.path()),
        "plan_generate",
        serde_json::json!({
            "instruction": "請求書の重複を検出してExcelに出力",
            "apply_mode": "compose",
        }),
        &CancellationToken::new(),
    );
    let res = res.unwrap();
    assert!(res["yaml"].as_str().is_some_and(|y| y.contains("graph")));
    let stages: Vec<&str> = events.iter().filter_map(|e| e["stage"].as_str()).collect();
    assert!(stages.contains(&"retrieving"), "{stages:?}");
    assert!(stages.contains(&"composing"), "{stages:?}");
    assert!(
        events.iter().all(|e| e["elapsed_ms"].is_u64()),
        "{events:?}"
    );
}

#[test]
fn a_cancelled_call_is_cancelled_and_sends_no_events() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let (events, res) = run(
        &ctx(dir.path()),
        "plan_generate",
        serde_json::json!({"instruction": "x", "apply_mode": "compose"}),
        &cancel,
    );
    assert_eq!(res.unwrap_err().code, ErrorCode::Cancelled);
    assert!(events.is_empty());
}

#[test]
fn unknown_names_and_bad_bodies_have_codes() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    let (_, res) = run(&ctx(dir.path()), "catalog_list", Value::Null, &cancel);
    assert_eq!(res.unwrap_err().code, ErrorCode::NotFound);
    let (_, res) = run(
        &ctx(dir.path()),
        "plan_generate",
        serde_json::json!({"instruction": 3}),
        &cancel,
    );
    assert_eq!(res.unwrap_err().code, ErrorCode::InvalidRequest);
}

#[test]
fn every_event_is_handed_over_in_order_before_the_result() {
    let mut seen = Vec::new();
    // Sent from the blocking pool, as a run's blocks send theirs, the last ones just
    // before the call ends.
    let out = crate::support::drive(&mut |e: u32| seen.push(e), async |sink| {
        let sink = sink.clone();
        tokio::task::spawn_blocking(move || (0..500).for_each(|i| sink.send(i)))
            .await
            .unwrap();
        "done"
    });
    assert_eq!(out, "done");
    assert_eq!(seen, (0..500).collect::<Vec<_>>());
}

#[test]
fn frames_serialise_as_one_key_objects() {
    assert_eq!(
        Frame::Event(serde_json::json!({"stage": "skeleton"})).to_json(),
        serde_json::json!({"event": {"stage": "skeleton"}})
    );
    assert_eq!(
        Frame::end(Ok(serde_json::json!(1))).to_json(),
        serde_json::json!({"result": 1})
    );
    let err = Frame::end(Err(ApiError::new(ErrorCode::Cancelled, "stop"))).to_json();
    assert_eq!(err["error"]["code"], "CANCELLED");
}
