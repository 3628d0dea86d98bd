//! The stdio transport of `keiri mcp`: newline-delimited JSON-RPC, with an error reply for
//! every frame the protocol layer cannot take.
//!
//! rmcp's own stdio transport drops a line that is not JSON, answers a well-formed but
//! invalid request with an error whose `id` is `null`, and drops a line over its 16 MiB limit
//! without a word, so a client that sent such a request with an `id` waits forever. This
//! transport reads the frames itself and answers each one rmcp would not take:
//!
//! * not JSON: `-32700` (parse error), with the `id` when it can be read off the text;
//! * JSON that is not a valid MCP message: `-32600` (invalid request) with the request's `id`
//!   (`null` when there is none; a notification — a `method` and no `id` — gets no reply, as
//!   JSON-RPC requires);
//! * longer than [`MAX_FRAME_BYTES`]: the frame is skipped without being buffered and
//!   answered with `-32600`, with the `id` when it appears in the frame's first bytes.
//!
//! Everything written — rmcp's messages and these replies — goes through one writer task, so
//! lines never interleave and a cancelled read never leaves half a reply on stdout.

use std::io;
use std::sync::LazyLock;

use rmcp::RoleServer;
use rmcp::model::{ClientRequest, JsonRpcMessage, JsonRpcRequest};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The largest frame read: rmcp's own default, so a payload acceptable to rmcp is acceptable
/// here.
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// How much of an oversized frame is kept to look for its `id`.
const ID_PREFIX_BYTES: usize = 4096;

/// JSON-RPC error codes used here.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const INVALID_PARAMS: i64 = -32602;

/// MCP methods a client sends. rmcp takes any request it cannot read as one of its types as a
/// "custom" request, so one of these with malformed params would be answered "method not
/// found"; it is answered "invalid params" here instead, which is what happened.
const MCP_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/call",
    "tools/list",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
];

/// A best-effort reading of a top-level `"id": <number or string>` from text that is not a
/// whole JSON document. The pattern is a literal, so building it cannot fail in practice; if
/// it ever did, the reply falls back to a `null` id.
static ID_PATTERN: LazyLock<Option<regex::Regex>> = LazyLock::new(|| {
    regex::Regex::new(r#""id"\s*:\s*("(?:[^"\\]|\\.){0,256}"|-?[0-9]{1,20})\s*[,}]"#).ok()
});

/// Newline-delimited JSON-RPC over any reader and writer (stdin/stdout in `keiri mcp`).
pub struct LineTransport<R> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// The first bytes of the oversized frame being skipped, to find its `id`.
    oversized_prefix: Option<Vec<u8>>,
    out: mpsc::UnboundedSender<Vec<u8>>,
    max_frame: usize,
}

/// What one read of a frame produced.
enum Read {
    Line,
    Oversized(Vec<u8>),
    Closed,
}

impl<R: AsyncRead + Unpin + Send> LineTransport<R> {
    /// Starts the writer task on the current runtime; must be called inside one.
    pub fn new<W: AsyncWrite + Unpin + Send + 'static>(read: R, write: W) -> Self {
        Self::with_max_frame(read, write, MAX_FRAME_BYTES)
    }

    /// [`LineTransport::new`] with another frame limit (tests).
    pub fn with_max_frame<W: AsyncWrite + Unpin + Send + 'static>(
        read: R,
        mut write: W,
        max_frame: usize,
    ) -> Self {
        let (out, mut lines) = mpsc::unbounded_channel::<Vec<u8>>();
        tokio::spawn(async move {
            while let Some(line) = lines.recv().await {
                if write.write_all(&line).await.is_err() || write.flush().await.is_err() {
                    break;
                }
            }
        });
        LineTransport {
            read: BufReader::new(read),
            line: Vec::new(),
            oversized_prefix: None,
            out,
            max_frame,
        }
    }

    fn write(&self, message: &Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        // A closed writer means stdout is gone; the next read ends the session.
        let _ = self.out.send(line);
    }

    /// Reads one `\n`-terminated frame into `self.line`, never buffering more than
    /// `max_frame` bytes. Cancel-safe: the copy and the `consume` happen with no await in
    /// between, so a dropped read resumes where it stopped.
    async fn read_frame(&mut self) -> Read {
        loop {
            let (consumed, done) = {
                let available = match self.read.fill_buf().await {
                    Ok(a) => a,
                    Err(_) => return Read::Closed,
                };
                if available.is_empty() {
                    return Read::Closed;
                }
                let newline = available.iter().position(|b| *b == b'\n');
                let take = newline.map_or(available.len(), |i| i + 1);
                if let Some(prefix) = &mut self.oversized_prefix {
                    let room = ID_PREFIX_BYTES.saturating_sub(prefix.len());
                    prefix.extend_from_slice(&available[..take.min(room)]);
                } else if self.line.len().saturating_add(take) > self.max_frame {
                    let mut prefix = std::mem::take(&mut self.line);
                    prefix.truncate(ID_PREFIX_BYTES);
                    let room = ID_PREFIX_BYTES.saturating_sub(prefix.len());
                    prefix.extend_from_slice(&available[..take.min(room)]);
                    self.oversized_prefix = Some(prefix);
                } else {
                    self.line.extend_from_slice(&available[..take]);
                }
                (take, newline.is_some())
            };
            self.read.consume(consumed);
            if done {
                return match self.oversized_prefix.take() {
                    Some(prefix) => Read::Oversized(prefix),
                    None => Read::Line,
                };
            }
        }
    }
}

/// What to do with one complete frame.
#[derive(Debug)]
pub enum Frame {
    /// A valid message for rmcp.
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// Not for rmcp: write this error reply.
    Reply(Value),
    /// Nothing to do (a blank line, an invalid notification).
    Ignore,
}

/// A JSON-RPC error response.
pub fn error_reply(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The `id` found in the text of a frame that is not a whole JSON document, or `null`.
fn salvage_id(text: &[u8]) -> Value {
    let text = String::from_utf8_lossy(text);
    ID_PATTERN
        .as_ref()
        .and_then(|re| re.captures(&text))
        .and_then(|c| c.get(1))
        .and_then(|m| serde_json::from_str::<Value>(m.as_str()).ok())
        .unwrap_or(Value::Null)
}

/// Sorts one frame (without its newline) into a message for rmcp, an error reply, or
/// nothing.
pub fn classify(frame: &[u8]) -> Frame {
    let frame = frame.strip_suffix(b"\r").unwrap_or(frame);
    let frame = frame.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(frame);
    if frame.iter().all(u8::is_ascii_whitespace) {
        return Frame::Ignore;
    }
    let value: Value = match serde_json::from_slice(frame) {
        Ok(v) => v,
        Err(e) => {
            return Frame::Reply(error_reply(
                salvage_id(frame),
                PARSE_ERROR,
                &format!("parse error: {e}"),
            ));
        }
    };
    let id = value.get("id").cloned();
    match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value.clone()) {
        Ok(JsonRpcMessage::Request(JsonRpcRequest {
            id,
            request: ClientRequest::CustomRequest(custom),
            ..
        })) if MCP_METHODS.contains(&custom.method.as_str()) => Frame::Reply(error_reply(
            serde_json::to_value(&id).unwrap_or(Value::Null),
            INVALID_PARAMS,
            &format!("invalid params for {}", custom.method),
        )),
        Ok(message) => Frame::Message(Box::new(message)),
        Err(e) => {
            let is_notification = id.is_none() && value.get("method").is_some_and(Value::is_string);
            if is_notification {
                return Frame::Ignore;
            }
            let id = id
                .filter(|id| id.is_string() || id.is_number())
                .unwrap_or(Value::Null);
            let message = if value.is_array() {
                "invalid request: batches are not supported".to_string()
            } else {
                format!("invalid request: {e}")
            };
            Frame::Reply(error_reply(id, INVALID_REQUEST, &message))
        }
    }
}

impl<R: AsyncRead + Unpin + Send> Transport<RoleServer> for LineTransport<R> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = serde_json::to_vec(&item)
            .map_err(io::Error::other)
            .and_then(|mut line| {
                line.push(b'\n');
                self.out
                    .send(line)
                    .map_err(|_| io::Error::new(io::ErrorKind::NotConnected, "stdout is closed"))
            });
        std::future::ready(sent)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.read_frame().await {
                Read::Closed => return None,
                Read::Oversized(prefix) => {
                    let limit = self.max_frame;
                    self.write(&error_reply(
                        salvage_id(&prefix),
                        INVALID_REQUEST,
                        &format!("message too large: the limit is {limit} bytes"),
                    ));
                }
                Read::Line => {
                    let line = std::mem::take(&mut self.line);
                    let frame = line.strip_suffix(b"\n").unwrap_or(&line);
                    match classify(frame) {
                        Frame::Message(message) => return Some(*message),
                        Frame::Reply(reply) => self.write(&reply),
                        Frame::Ignore => {}
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // check(frame, Some((reply code, reply id))) or None for a frame passed on / ignored.
    #[track_caller]
    fn check(frame: &str, want: Option<(i64, Value)>) {
        let got = match classify(frame.as_bytes()) {
            Frame::Reply(r) => Some((r["error"]["code"].as_i64().unwrap(), r["id"].clone())),
            Frame::Message(_) | Frame::Ignore => None,
        };
        assert_eq!(got, want, "{frame}");
    }

    #[test]
    fn every_malformed_request_with_an_id_gets_an_error_with_that_id() {
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        check(ping, None);
        check("", None);
        check(
            r#"{"jsonrpc":"2.0","method":"notifications/bogus","params":7}"#,
            None,
        );
        check(
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{}}}"#,
            Some((INVALID_PARAMS, json!(2))),
        );
        check(
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call"}"#,
            Some((INVALID_PARAMS, json!("a"))),
        );
        // An unknown method is rmcp's to answer ("method not found", with the id).
        check(
            r#"{"jsonrpc":"2.0","id":"b","method":"x/y","params":{}}"#,
            None,
        );
        check(
            r#"{"jsonrpc":"2.0","id":3}"#,
            Some((INVALID_REQUEST, json!(3))),
        );
        check(
            r#"{"jsonrpc":"2.0","id":4,"method":7}"#,
            Some((INVALID_REQUEST, json!(4))),
        );
        check(
            r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#,
            Some((INVALID_REQUEST, Value::Null)),
        );
        check(
            r#"[{"jsonrpc":"2.0","id":5,"method":"ping"}]"#,
            Some((INVALID_REQUEST, Value::Null)),
        );
        check("42", Some((INVALID_REQUEST, Value::Null)));
        check(
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/list""#,
            Some((PARSE_ERROR, json!(6))),
        );
        check(
            r#"{"jsonrpc":"2.0","id":"q\"7","method":"#,
            Some((PARSE_ERROR, json!("q\"7"))),
        );
        check("not json at all", Some((PARSE_ERROR, Value::Null)));
        check(
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}\r",
            None,
        );
    }

    /// Runs the transport over `input` and returns every line it wrote and the messages it
    /// passed on.
    async fn run(input: Vec<u8>, max: usize) -> (Vec<Value>, usize) {
        let (mut client_out, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, mut client_in) = tokio::io::duplex(1 << 16);
        let writer = tokio::spawn(async move {
            client_out.write_all(&input).await.unwrap();
            drop(client_out);
        });
        let mut transport = LineTransport::with_max_frame(server_in, server_out, max);
        let mut passed = 0;
        while transport.receive().await.is_some() {
            passed += 1;
        }
        writer.await.unwrap();
        drop(transport);
        let mut text = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut client_in, &mut text)
            .await
            .unwrap();
        let replies = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (replies, passed)
    }

    #[tokio::test]
    async fn an_oversized_frame_is_answered_and_the_next_one_still_served() {
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{{\"name\":\"x\",\"arguments\":{{\"pad\":\"{}\"}}}}}}\n",
            "a".repeat(300_000)
        );
        let mut input = big.into_bytes();
        input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\"}\n");
        input.extend_from_slice(b"{broken\n");
        let (replies, passed) = run(input, 100_000).await;
        assert_eq!(passed, 1, "the ping after the big frame reaches rmcp");
        assert_eq!(replies.len(), 2, "{replies:?}");
        assert_eq!(replies[0]["id"], 9);
        assert_eq!(replies[0]["error"]["code"], INVALID_REQUEST);
        assert!(
            replies[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("too large")
        );
        assert_eq!(replies[1]["error"]["code"], PARSE_ERROR);
    }

    proptest::proptest! {
        /// Arbitrary bytes on a line never panic, and anything that is not passed on to rmcp
        /// and carries an id is answered.
        #[test]
        fn arbitrary_frames_never_panic(frame in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            let _ = classify(&frame);
        }

        #[test]
        fn arbitrary_requests_with_an_id_are_answered(id in 0u32..1000, method in "[a-z/]{0,12}", params in "[a-z0-9\"{}:,\\[\\]]{0,20}") {
            let frame = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);
            match classify(frame.as_bytes()) {
                Frame::Reply(r) => proptest::prop_assert!(r["error"]["code"].is_i64()),
                Frame::Message(_) => {}
                Frame::Ignore => proptest::prop_assert!(false, "a request with an id was ignored: {frame}"),
            }
        }
    }
}
