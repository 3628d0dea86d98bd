//! Streaming calls: functions that report events while they run (plan generation's stages,
//! the chat agent's tool calls) and that the caller can cancel.
//!
//! [`crate::dispatch_stream`] (defined with the rest of the surface in `surface.rs`) is the one
//! entry point by name, so `keiri serve` (`POST /api/<name>/stream`, NDJSON) and the desktop
//! shell (`call_stream` over a Tauri channel) expose the same set. Both transports frame the
//! output the same way with [`Frame`]: any number of `{"event": …}` lines, then exactly one
//! `{"result": …}` or `{"error": …}`.

use serde::Serialize;
use serde_json::Value;

use crate::ApiError;

/// One message of a streamed call, as both transports send it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Frame {
    /// Something happened (a stage began, a tool was called).
    Event(Value),
    /// The call finished; the function's response.
    Result(Value),
    /// The call failed (or was cancelled: code `CANCELLED`).
    Error(ApiError),
}

impl Frame {
    /// The frame as its JSON object: `{"event": …}`, `{"result": …}` or `{"error": …}`.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|e| {
            serde_json::json!({"error": {"code": "INTERNAL", "message": format!("serialising a frame: {e}")}})
        })
    }

    /// The last frame of a call.
    pub fn end(result: Result<Value, ApiError>) -> Frame {
        match result {
            Ok(v) => Frame::Result(v),
            Err(e) => Frame::Error(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CancellationToken, Context, ErrorCode, dispatch_stream};

    fn ctx(dir: &std::path::Path) -> Context {
        crate::context::test_context(dir)
    }

    fn run(
        ctx: &Context,
        name: &str,
        body: Value,
        cancel: &CancellationToken,
    ) -> (Vec<Value>, Result<Value, ApiError>) {
        let mut events = Vec::new();
        let res = dispatch_stream(ctx, name, body, &mut |e| events.push(e), cancel);
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
}
