//! Streaming calls: functions that report events while they run (plan generation's stages,
//! the chat agent's tool calls, a run's node events) and that the caller can cancel.
//!
//! Each one is an `async fn(&Context, Req, &EventSink<Event>, &CancellationToken)`: the
//! transports await it on their own runtime (axum's, Tauri's, the CLI's one), and the blocking
//! parts inside (reading documents, loading the embedding model, running a plan's blocks) go to
//! that runtime's blocking pool through [`blocking`]. No use case starts a thread or a runtime.
//!
//! [`crate::dispatch_stream`] (defined with the rest of the surface in `surface.rs`) is the one
//! entry point by name, so `keiri serve` (`POST /api/<name>/stream`, NDJSON) and the desktop
//! shell (`call_stream` over a Tauri channel) expose the same set. Both transports frame the
//! output the same way with [`Frame`]: any number of `{"event": …}` lines, then exactly one
//! `{"result": …}` or `{"error": …}`.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::{ApiError, Context, ErrorCode};

/// Where a use case sends its events as they happen. Any thread may send (a run's blocks send
/// from the blocking pool); a transport whose listener has gone keeps accepting and drops them.
pub struct EventSink<T>(Option<Arc<dyn Fn(T) + Send + Sync>>);

impl<T> Clone for EventSink<T> {
    fn clone(&self) -> Self {
        EventSink(self.0.clone())
    }
}

impl<T> std::fmt::Debug for EventSink<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "EventSink"
        } else {
            "EventSink(none)"
        })
    }
}

impl<T> EventSink<T> {
    /// A sink that passes each event to `f`.
    pub fn new(f: impl Fn(T) + Send + Sync + 'static) -> Self {
        EventSink(Some(Arc::new(f)))
    }

    /// A sink that drops every event (a caller that only wants the result).
    pub fn none() -> Self {
        EventSink(None)
    }

    /// Sends one event.
    pub fn send(&self, event: T) {
        if let Some(f) = &self.0 {
            f(event);
        }
    }
}

impl<T: Serialize> EventSink<T> {
    /// The typed sink in front of a by-name transport's JSON sink: each event is serialised
    /// as the schema's event type says.
    pub fn to_json(out: EventSink<Value>) -> Self {
        match out.0 {
            None => EventSink(None),
            Some(f) => EventSink::new(move |event: T| {
                f(serde_json::to_value(event).unwrap_or(Value::Null));
            }),
        }
    }
}

/// The receiving end of an [`EventSink`], for a caller that handles a call's events on its own
/// task or thread (the CLI's progress bars and prompts, a test): [`events`] makes the pair, and
/// [`Events::drive`] awaits the call while handing each event over, in order, before the result.
pub struct Events<E> {
    rx: tokio::sync::mpsc::UnboundedReceiver<E>,
}

/// A sink to pass to a call and the [`Events`] that receive what it sends.
pub fn events<E: Send + 'static>() -> (EventSink<E>, Events<E>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let sink = EventSink::new(move |event| {
        // The receiver lives until the call is driven to its end.
        let _ = tx.send(event);
    });
    (sink, Events { rx })
}

impl<E> Events<E> {
    /// Awaits `call`, passing each event it sends to `on_event` as it arrives; what was sent
    /// just before the end is passed before the result is returned.
    pub async fn drive<T>(
        mut self,
        call: impl std::future::Future<Output = T>,
        mut on_event: impl FnMut(E),
    ) -> T {
        let mut call = std::pin::pin!(call);
        loop {
            tokio::select! {
                biased;
                Some(event) = self.rx.recv() => on_event(event),
                out = &mut call => {
                    while let Ok(event) = self.rx.try_recv() {
                        on_event(event);
                    }
                    return out;
                }
            }
        }
    }
}

/// Runs blocking work (file reads, the embedding model's load, a plan's blocks) on the
/// runtime's blocking pool with a clone of the context, so an `async` use case never stalls the
/// runtime's workers. A panic in `f` is an [`ErrorCode::Internal`] error.
///
/// The pool cannot abort a closure, so the clone's [`Context::cancel`] is a child token that
/// is cancelled when this future is dropped before `f` returns — what the HTTP server does when
/// the client hangs up (#37.7) — and work that can stop part-way (a workbook patch) stops there.
pub(crate) async fn blocking<T: Send + 'static>(
    ctx: &Context,
    f: impl FnOnce(&Context) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let mut ctx = ctx.clone();
    ctx.cancel = ctx.cancel.child_token();
    let hung_up = ctx.cancel.clone().drop_guard();
    let out = tokio::task::spawn_blocking(move || f(&ctx))
        .await
        .unwrap_or_else(|e| {
            Err(ApiError::new(
                ErrorCode::Internal,
                format!("the call stopped: {e}"),
            ))
        });
    hung_up.disarm();
    out
}

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

/// The unit tests' way to call the async API from a plain `#[test]`: on a runtime of its own,
/// as a front-end would (the integration tests have their own in `tests/api/main.rs`).
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    }

    /// [`crate::dispatch`], blocking.
    pub fn call(ctx: &Context, name: &str, body: Value) -> Result<Value, ApiError> {
        runtime().block_on(crate::dispatch(ctx, name, body))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    /// Blocking work that waits (up to 60 s) for its context's `cancel`, then says whether
    /// it saw it.
    fn wait_for_cancel(
        tx: mpsc::Sender<bool>,
    ) -> impl FnOnce(&Context) -> Result<(), ApiError> + Send + 'static {
        move |ctx| {
            let start = std::time::Instant::now();
            while !ctx.cancel.is_cancelled() && start.elapsed() < Duration::from_secs(60) {
                std::thread::sleep(Duration::from_millis(5));
            }
            let _ = tx.send(ctx.cancel.is_cancelled());
            Ok(())
        }
    }

    #[test]
    fn dropping_a_call_cancels_its_blocking_work_and_only_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Context::new(dir.path());
        let (tx, rx) = mpsc::channel();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            // The caller gives up after 50 ms (the HTTP server drops the call's future when
            // the client hangs up).
            let call = blocking(&ctx, wait_for_cancel(tx));
            assert!(
                tokio::time::timeout(Duration::from_millis(50), call)
                    .await
                    .is_err()
            );
        });
        assert_eq!(rx.recv_timeout(Duration::from_secs(60)), Ok(true));
        // The front-end's context is not cancelled with it: the next call runs.
        assert!(!ctx.cancel.is_cancelled());
        let done = runtime.block_on(blocking(&ctx, |ctx| Ok(ctx.cancel.is_cancelled())));
        assert!(!done.unwrap());
    }
}
