//! Streamed calls: `call_stream` runs a keiri-api streaming function (plan generation, chat)
//! and sends its events over a Tauri channel; `cancel_stream` stops it.
//!
//! The channel carries the same frames as `POST /api/<function>/stream` carries as NDJSON
//! lines ([`keiri_api::Frame`]): any number of `{"event": …}`, then exactly one `{"result": …}`
//! or `{"error": {code, message, details?}}`. The command itself resolves (to `null`) after the
//! last frame is sent; a client settles on that frame, since Tauri does not order channel
//! messages against the command's own response.
//!
//! As for every Tauri command, the arguments are camelCase on the wire:
//! `invoke('call_stream', {function, request, streamId, onEvent: channel})` and
//! `invoke('cancel_stream', {streamId})`.
//!
//! The call is awaited on Tauri's async runtime, and keiri-api runs its blocking parts on that
//! runtime's blocking pool, never on the main thread, so the window keeps painting while a
//! model thinks.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use keiri_api::{ApiError, CancellationToken, Context, ErrorCode, Frame};
use serde_json::Value;
use tauri::State;
use tauri::ipc::Channel;

/// The streamed calls in flight, by the id the UI gave each; managed state.
#[derive(Debug, Default)]
pub struct Streams {
    running: Mutex<HashMap<String, CancellationToken>>,
}

impl Streams {
    /// Registers a call; `None` when `id` is already running (ids must be unique).
    fn start(&self, id: &str) -> Option<CancellationToken> {
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        if running.contains_key(id) {
            return None;
        }
        let token = CancellationToken::new();
        running.insert(id.to_string(), token.clone());
        Some(token)
    }

    fn finish(&self, id: &str) {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
    }

    /// Cancels the call `id`; `false` when no such call is running (it may have just ended).
    pub fn cancel(&self, id: &str) -> bool {
        let running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        running.get(id).map(CancellationToken::cancel).is_some()
    }

    /// How many calls are running (for tests and diagnostics).
    pub fn len(&self) -> usize {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Runs the streaming function `function` with `request`, sending frames to `on_event`.
///
/// A `stream_id` that is already running is refused with `INVALID_REQUEST` (as the command's
/// error, and no frame is sent); every other failure, including an unknown function, ends the
/// stream with an `{"error"}` frame.
#[tauri::command]
pub async fn call_stream(
    ctx: State<'_, Context>,
    streams: State<'_, Streams>,
    function: String,
    request: Value,
    stream_id: String,
    on_event: Channel<Value>,
) -> Result<(), ApiError> {
    let Some(cancel) = streams.start(&stream_id) else {
        return Err(ApiError::new(
            ErrorCode::InvalidRequest,
            format!("stream {stream_id} is already running"),
        ));
    };
    let worker_cancel = cancel.clone();
    let channel = on_event.clone();
    let events = keiri_api::EventSink::new(move |event| {
        // A window that went away cannot take events: stop the work it asked for.
        if channel.send(Frame::Event(event).to_json()).is_err() {
            worker_cancel.cancel();
        }
    });
    let result = keiri_api::dispatch_stream(&ctx, &function, request, events, &cancel).await;
    streams.finish(&stream_id);
    // Nobody is listening any more when this fails; the call is over either way.
    let _ = on_event.send(Frame::end(result).to_json());
    Ok(())
}

/// Cancels the streamed call `stream_id`; its stream then ends with a `CANCELLED` error
/// frame. Returns whether such a call was running.
#[tauri::command]
pub fn cancel_stream(streams: State<'_, Streams>, stream_id: String) -> bool {
    streams.cancel(&stream_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_id_runs_once_at_a_time_and_cancel_reaches_its_token() {
        let streams = Streams::default();
        let token = streams.start("a").unwrap();
        assert!(streams.start("a").is_none());
        assert!(!streams.cancel("b"));
        assert!(streams.cancel("a"));
        assert!(token.is_cancelled());
        streams.finish("a");
        assert!(streams.is_empty());
        assert!(!streams.cancel("a"));
        assert!(streams.start("a").is_some_and(|t| !t.is_cancelled()));
    }
}
