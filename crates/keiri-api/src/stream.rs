//! Streaming calls: functions that report events while they run (plan generation's stages,
//! the chat agent's tool calls) and that the caller can cancel.
//!
//! [`dispatch_stream`] is to these what [`crate::dispatch`] is to the plain functions: one
//! entry point by name, so `keiri serve` (`POST /api/<name>/stream`, NDJSON) and the desktop
//! shell (`call_stream` over a Tauri channel) expose the same set. Both transports frame the
//! output the same way with [`Frame`]: any number of `{"event": …}` lines, then exactly one
//! `{"result": …}` or `{"error": …}`.

use std::time::Instant;

use keiri_llm::CancellationToken;
use serde::Serialize;
use serde_json::Value;

use crate::{ApiError, Context, ErrorCode};

/// Names of the functions [`dispatch_stream`] accepts (each is also in [`crate::FUNCTIONS`],
/// callable without events).
pub const STREAMING_FUNCTIONS: &[&str] = &["plan_generate", "chat_send"];

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

/// Calls the streaming function `name` with a JSON `body`, passing each event to `on_event`
/// as it happens, and returns the function's JSON result.
///
/// `cancel` stops the call as soon as it can; the result is then [`ErrorCode::Cancelled`].
/// A name that is not in [`STREAMING_FUNCTIONS`] is [`ErrorCode::NotFound`]; a body that does
/// not match the request type is [`ErrorCode::InvalidRequest`].
pub fn dispatch_stream(
    ctx: &Context,
    name: &str,
    body: Value,
    on_event: &mut dyn FnMut(Value),
    cancel: &CancellationToken,
) -> Result<Value, ApiError> {
    if cancel.is_cancelled() {
        return Err(ApiError::new(
            ErrorCode::Cancelled,
            "the call was cancelled",
        ));
    }
    match name {
        "plan_generate" => {
            let req = parse(body)?;
            let started = Instant::now();
            let res = crate::plan_generate_cancellable(
                ctx,
                req,
                &mut |p| on_event(progress_event(p, started)),
                cancel,
            )?;
            to_json(res)
        }
        "chat_send" => {
            let req = parse(body)?;
            to_json(crate::chat_send_stream(ctx, req, on_event, cancel)?)
        }
        _ => Err(ApiError::new(
            ErrorCode::NotFound,
            format!("unknown streaming function: {name}"),
        )),
    }
}

/// A planner stage event with the time since the call began, for "skeleton… 3.2 s".
fn progress_event(p: &crate::Progress, started: Instant) -> Value {
    let mut event = serde_json::to_value(p).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut event {
        let elapsed = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        map.insert("elapsed_ms".into(), Value::from(elapsed));
    }
    event
}

fn parse<Req: serde::de::DeserializeOwned>(body: Value) -> Result<Req, ApiError> {
    let body = if body.is_null() {
        serde_json::json!({})
    } else {
        body
    };
    serde_json::from_value(body).map_err(|e| {
        ApiError::new(
            ErrorCode::InvalidRequest,
            format!("invalid request body: {e}"),
        )
    })
}

fn to_json<Res: Serialize>(res: Res) -> Result<Value, ApiError> {
    serde_json::to_value(res)
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("serialising result: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(dir: &std::path::Path) -> Context {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut ctx = Context::new(dir).with_catalog_dirs(vec![root.join("block_specs")]);
        ctx.template_dirs = vec![root.join("templates")];
        ctx
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
