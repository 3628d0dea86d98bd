//! Test support (feature `testkit`): a fake OpenAI-compatible server and a test clock.
//!
//! [`FakeServer`] listens on `127.0.0.1:0` (axum) and answers `POST /v1/chat/completions`,
//! `POST /v1/embeddings` and their Azure paths `POST /openai/deployments/{deployment}/…` with scripted
//! [`Reply`]s, in order: JSON bodies, any status code (429 with `Retry-After`, 5xx, 400),
//! delays for timeout tests, and tool calls. It records every request (method, path, query,
//! headers, JSON body) so tests assert on what was sent. Other paths get a 404, recorded too.
//! When the script runs out it answers 500 (or repeats a configured reply), so a test that
//! sends more than it scripted fails visibly.
//!
//! [`TestClock`] records backoff sleeps and returns at once, so retry tests neither wait nor
//! depend on timing.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Value, json};

use crate::time::{BoxFuture, Clock};

/// One scripted answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub status: u16,
    /// The body; a JSON value is sent as JSON, a string as plain text.
    pub body: Value,
    pub headers: Vec<(String, String)>,
    /// Waited before answering (for timeout and cancellation tests).
    pub delay: Duration,
    /// Answers only a request whose body contains this text (see [`Reply::when_body_contains`]).
    pub when: Option<String>,
}

impl Reply {
    /// 200 with an assistant message whose content is `text`, usage 10 + 5 tokens.
    pub fn content(text: impl Into<String>) -> Reply {
        Reply::completion(json!({"role": "assistant", "content": text.into()}), "stop")
    }

    /// 200 with `value` serialised as the message content.
    pub fn json_content(value: &Value) -> Reply {
        Reply::content(value.to_string())
    }

    /// 200 with tool calls `(id, function name, arguments JSON text)`.
    pub fn tool_calls(calls: &[(&str, &str, &str)]) -> Reply {
        let calls: Vec<Value> = calls
            .iter()
            .map(|(id, name, args)| {
                json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
            })
            .collect();
        Reply::completion(
            json!({"role": "assistant", "content": null, "tool_calls": calls}),
            "tool_calls",
        )
    }

    /// 200 with a refusal.
    pub fn refusal(text: impl Into<String>) -> Reply {
        Reply::completion(
            json!({"role": "assistant", "content": null, "refusal": text.into()}),
            "stop",
        )
    }

    fn completion(message: Value, finish_reason: &str) -> Reply {
        Reply {
            status: 200,
            body: json!({
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": 1_700_000_000,
                "model": "fake-model",
                "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
            }),
            headers: Vec::new(),
            delay: Duration::ZERO,
            when: None,
        }
    }

    /// 200 with an embeddings response: one item per vector with its `index`, usage
    /// `prompt_tokens` 3 per vector.
    pub fn embeddings(vectors: &[&[f32]]) -> Reply {
        let data: Vec<Value> = vectors
            .iter()
            .enumerate()
            .map(|(i, v)| json!({"object": "embedding", "index": i, "embedding": v}))
            .collect();
        let tokens = 3 * vectors.len();
        Reply::raw(
            200,
            json!({"object": "list", "data": data, "model": "fake-embedding",
                   "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}),
        )
    }

    /// `status` with an OpenAI-style error body.
    pub fn error(status: u16, message: impl Into<String>) -> Reply {
        Reply {
            status,
            body: json!({"error": {"message": message.into(), "type": "invalid_request_error", "param": null, "code": null}}),
            headers: Vec::new(),
            delay: Duration::ZERO,
            when: None,
        }
    }

    /// 429 with `Retry-After: <retry_after>`.
    pub fn rate_limited(retry_after: &str) -> Reply {
        Reply::error(429, "Rate limit reached, please retry later")
            .with_header("retry-after", retry_after)
    }

    /// Any status and body.
    pub fn raw(status: u16, body: Value) -> Reply {
        Reply {
            status,
            body,
            headers: Vec::new(),
            delay: Duration::ZERO,
            when: None,
        }
    }

    pub fn with_usage(mut self, prompt: u64, completion: u64) -> Reply {
        if let Some(obj) = self.body.as_object_mut() {
            obj.insert(
                "usage".into(),
                json!({"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}),
            );
        }
        self
    }

    pub fn with_finish_reason(mut self, reason: &str) -> Reply {
        if let Some(choice) = self.body.pointer_mut("/choices/0") {
            choice["finish_reason"] = json!(reason);
        }
        self
    }

    /// Sets the error's `param` and `code` (OpenAI-style error bodies only).
    pub fn with_error_fields(mut self, param: Option<&str>, code: Option<&str>) -> Reply {
        if let Some(err) = self.body.get_mut("error") {
            err["param"] = json!(param);
            err["code"] = json!(code);
        }
        self
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Answers only a request whose body contains `text` (as sent: JSON-escaped, non-ASCII
    /// as is); the first such reply in the script answers it, wherever it stands. For callers
    /// that send several requests at once, whose arrival order is not fixed.
    pub fn when_body_contains(mut self, text: impl Into<String>) -> Reply {
        self.when = Some(text.into());
        self
    }

    pub fn with_delay(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }
}

/// Replies in order, then `then` for every further request (a 500 by default).
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    replies: VecDeque<Reply>,
    then: Option<Reply>,
}

impl Script {
    pub fn new(replies: Vec<Reply>) -> Script {
        Script {
            replies: replies.into(),
            then: None,
        }
    }

    /// Answers every request after the script with `reply` (benchmarks, long sessions).
    pub fn then_repeat(mut self, reply: Reply) -> Script {
        self.then = Some(reply);
        self
    }
}

impl From<Vec<Reply>> for Script {
    fn from(replies: Vec<Reply>) -> Script {
        Script::new(replies)
    }
}

/// A request the fake server received.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    /// Lower-case names.
    pub headers: BTreeMap<String, String>,
    /// The body as JSON (`Null` when it is not JSON; see `raw_body`).
    pub body: Value,
    pub raw_body: String,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

#[derive(Debug, Default)]
struct ServerState {
    script: Mutex<Option<Script>>,
    requests: Mutex<Vec<RecordedRequest>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The fake OpenAI-compatible server.
#[derive(Debug)]
pub struct FakeServer;

impl FakeServer {
    /// Starts the server on the current tokio runtime and returns its OpenAI base URL
    /// (`http://127.0.0.1:<port>/v1`) and a handle; the server stops when the handle drops.
    pub async fn start(script: impl Into<Script>) -> std::io::Result<(String, FakeHandle)> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let origin = format!("http://{}", listener.local_addr()?);
        let state = Arc::new(ServerState {
            script: Mutex::new(Some(script.into())),
            requests: Mutex::new(Vec::new()),
        });
        let app = router(state.clone());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let serve = axum::serve(listener, app);
            tokio::select! {
                _ = serve => {}
                _ = rx => {}
            }
        });
        let handle = FakeHandle {
            state,
            origin: origin.clone(),
            stop: Some(tx),
            runner: Runner::Task(task),
        };
        Ok((format!("{origin}/v1"), handle))
    }

    /// Starts the server on a thread with its own runtime, for synchronous tests (CLI
    /// journeys); same URL and handle as [`FakeServer::start`].
    pub fn start_background(script: impl Into<Script>) -> std::io::Result<(String, FakeHandle)> {
        let script = script.into();
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        std_listener.set_nonblocking(true)?;
        let origin = format!("http://{}", std_listener.local_addr()?);
        let state = Arc::new(ServerState {
            script: Mutex::new(Some(script)),
            requests: Mutex::new(Vec::new()),
        });
        let app = router(state.clone());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let thread = std::thread::Builder::new()
            .name("keiri-fake-llm".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let Ok(listener) = tokio::net::TcpListener::from_std(std_listener) else {
                        return;
                    };
                    tokio::select! {
                        _ = axum::serve(listener, app) => {}
                        _ = rx => {}
                    }
                });
            })?;
        let handle = FakeHandle {
            state,
            origin: origin.clone(),
            stop: Some(tx),
            runner: Runner::Thread(Some(thread)),
        };
        Ok((format!("{origin}/v1"), handle))
    }
}

fn router(state: Arc<ServerState>) -> Router {
    Router::new()
        .fallback(handle)
        .layer(axum::extract::DefaultBodyLimit::max(64 * 1024 * 1024))
        .with_state(state)
}

/// A chat completions or embeddings path, for OpenAI (with or without `/v1`) or an Azure
/// deployment.
fn is_model_path(path: &str) -> bool {
    ["/chat/completions", "/embeddings"].iter().any(|endpoint| {
        path == *endpoint
            || path.strip_prefix("/v1") == Some(endpoint)
            || path
                .strip_prefix("/openai/deployments/")
                .and_then(|rest| rest.strip_suffix(endpoint))
                .is_some_and(|d| !d.is_empty() && !d.contains('/'))
    })
}

async fn handle(
    State(state): State<Arc<ServerState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let raw_body = String::from_utf8_lossy(&body).into_owned();
    let recorded = RecordedRequest {
        method: method.to_string(),
        path: uri.path().to_string(),
        query: uri.query().map(str::to_string),
        headers: headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        raw_body: raw_body.clone(),
    };
    let chat = method == Method::POST && is_model_path(uri.path());
    lock(&state.requests).push(recorded);
    if !chat {
        return reply_response(&Reply::error(
            404,
            format!("no route for {method} {}", uri.path()),
        ));
    }
    let reply = {
        let mut script = lock(&state.script);
        match script.as_mut() {
            Some(s) => s
                .replies
                .iter()
                .position(|r| {
                    r.when
                        .as_ref()
                        .is_none_or(|w| raw_body.contains(w.as_str()))
                })
                .and_then(|i| s.replies.remove(i))
                .or_else(|| s.then.clone()),
            None => None,
        }
    }
    .unwrap_or_else(|| Reply::error(500, "fake server: the script is exhausted"));
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    reply_response(&reply)
}

fn reply_response(reply: &Reply) -> Response {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = match &reply.body {
        Value::String(text) => (status, text.clone()).into_response(),
        other => (status, axum::Json(other.clone())).into_response(),
    };
    for (name, value) in &reply.headers {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            response.headers_mut().insert(n, v);
        }
    }
    response
}

#[derive(Debug)]
enum Runner {
    Task(tokio::task::JoinHandle<()>),
    Thread(Option<std::thread::JoinHandle<()>>),
}

/// A running fake server: its recorded requests; stops it when dropped.
#[derive(Debug)]
pub struct FakeHandle {
    state: Arc<ServerState>,
    origin: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    runner: Runner,
}

impl FakeHandle {
    /// `http://127.0.0.1:<port>`: the Azure endpoint form.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// `http://127.0.0.1:<port>/v1`: the OpenAI base URL form.
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.origin)
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.state.requests).clone()
    }

    /// How many requests were received so far.
    pub fn request_count(&self) -> usize {
        lock(&self.state.requests).len()
    }

    /// Scripted replies not yet sent.
    pub fn remaining(&self) -> usize {
        lock(&self.state.script)
            .as_ref()
            .map_or(0, |s| s.replies.len())
    }

    /// Adds replies to the end of the script.
    pub fn push(&self, replies: Vec<Reply>) {
        if let Some(s) = lock(&self.state.script).as_mut() {
            s.replies.extend(replies);
        }
    }
}

impl Drop for FakeHandle {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match &mut self.runner {
            Runner::Task(task) => task.abort(),
            Runner::Thread(thread) => {
                if let Some(t) = thread.take() {
                    let _ = t.join();
                }
            }
        }
    }
}

/// A clock for tests: a fixed start time that only moves when something sleeps; sleeps are
/// recorded and return at once (or never, with [`TestClock::never_wakes`]).
#[derive(Debug)]
pub struct TestClock {
    start: DateTime<Utc>,
    elapsed: Mutex<Duration>,
    sleeps: Mutex<Vec<Duration>>,
    never_wakes: bool,
}

impl TestClock {
    /// Starts at `start`.
    pub fn new(start: DateTime<Utc>) -> TestClock {
        TestClock {
            start,
            elapsed: Mutex::new(Duration::ZERO),
            sleeps: Mutex::new(Vec::new()),
            never_wakes: false,
        }
    }

    /// Starts at 2025-01-01T00:00:00Z.
    pub fn fixed() -> TestClock {
        TestClock::new(DateTime::<Utc>::UNIX_EPOCH + chrono::Duration::seconds(1_735_689_600))
    }

    /// Sleeps are recorded but never complete (for cancellation during backoff).
    pub fn never_wakes(mut self) -> TestClock {
        self.never_wakes = true;
        self
    }

    /// Every sleep requested so far.
    pub fn sleeps(&self) -> Vec<Duration> {
        lock(&self.sleeps).clone()
    }

    pub fn advance(&self, by: Duration) {
        let mut e = lock(&self.elapsed);
        *e = e.saturating_add(by);
    }
}

impl Clock for TestClock {
    fn now(&self) -> DateTime<Utc> {
        let elapsed = *lock(&self.elapsed);
        self.start + chrono::Duration::from_std(elapsed).unwrap_or(chrono::Duration::zero())
    }

    fn monotonic(&self) -> Duration {
        *lock(&self.elapsed)
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        lock(&self.sleeps).push(duration);
        if self.never_wakes {
            return Box::pin(std::future::pending());
        }
        self.advance(duration);
        Box::pin(std::future::ready(()))
    }
}
