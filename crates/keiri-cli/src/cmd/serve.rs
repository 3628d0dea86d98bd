//! `keiri serve`: the studio UI and `POST /api/<function>` on 127.0.0.1 only.
//!
//! Cross-site request forgery (CSRF) and DNS rebinding: loopback is not a boundary against the
//! browser the user is running: any web page can send requests to 127.0.0.1, and a DNS-rebinding page can even read the answers. So every request
//! passes [`guard`] before anything is read or done:
//!
//! * `Host` must be this server's own loopback address (`127.0.0.1:<port>`, `localhost:<port>`
//!   or `[::1]:<port>`), else 421 `HOST_NOT_ALLOWED` — a rebound name is refused.
//! * On `/api/*`: an `Origin`, when sent, must be the studio itself or listed in
//!   `KEIRI_CORS_ALLOW_ORIGINS` (403 `ORIGIN_NOT_ALLOWED`); the per-launch token printed in the
//!   start URL must come as `X-Keiri-Token` (401 `TOKEN_INVALID`), so a caller without an
//!   Origin (curl, scripts) is one that was given the URL; and the body must be declared
//!   `application/json` (415 `UNSUPPORTED_MEDIA_TYPE`), which a cross-site "simple request"
//!   (form posts, `text/plain`) cannot do without a preflight.
//!
//! The token comes from the OS random source (`getrandom`, already in the tree through the
//! HTTP and hashing crates) and lives only in this process and the page that was opened with
//! it.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use axum::Router;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use keiri_api::{ApiError, Context, ErrorCode};
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::services::{ServeDir, ServeFile};

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 8710)]
    pub port: u16,
    /// The built UI to serve (default: ui/dist beside the binary or the repository).
    #[arg(long, value_name = "DIR")]
    pub ui_dir: Option<PathBuf>,
}

/// The default allowed origin: the Vite dev server.
pub const DEFAULT_CORS_ORIGIN: &str = "http://localhost:5173";

/// Allowed cross-origin callers from `KEIRI_CORS_ALLOW_ORIGINS`: comma-separated, entries
/// trimmed, empty entries dropped; set but empty means no cross-origin access; unset means
/// the Vite dev server only.
pub fn cors_origins(env: Option<&str>) -> Vec<String> {
    match env {
        None => vec![DEFAULT_CORS_ORIGIN.to_string()],
        Some(v) => v
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
    }
}

fn cors_layer(origins: &[String]) -> CorsLayer {
    let values: Vec<HeaderValue> = origins
        .iter()
        .filter_map(|o| match HeaderValue::from_str(o) {
            Ok(v) => Some(v),
            Err(_) => {
                eprintln!("keiri serve: ignoring invalid CORS origin {o:?}");
                None
            }
        })
        .collect();
    CorsLayer::new()
        .allow_origin(AllowOrigin::list(values))
        .allow_methods([axum::http::Method::POST, axum::http::Method::GET])
        .allow_headers([header::CONTENT_TYPE, TOKEN_HEADER])
}

/// The header that carries the per-launch token on every `/api/*` call.
pub const TOKEN_HEADER: HeaderName = HeaderName::from_static("x-keiri-token");

/// What a request must match to be served: the port the server listens on (for `Host` and
/// same-origin checks), the per-launch token and the allowed cross-origin callers.
#[derive(Debug, Clone)]
pub struct Guard {
    port: u16,
    token: String,
    origins: Vec<String>,
}

impl Guard {
    pub fn new(port: u16, token: String, origins: &[String]) -> Guard {
        Guard {
            port,
            token,
            origins: origins.to_vec(),
        }
    }

    /// The names this server answers to; anything else is a rebound or foreign name.
    fn hosts(&self) -> [String; 3] {
        let p = self.port;
        [
            format!("127.0.0.1:{p}"),
            format!("localhost:{p}"),
            format!("[::1]:{p}"),
        ]
    }

    fn host_allowed(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        self.hosts().contains(&host)
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        let same_origin = origin
            .to_ascii_lowercase()
            .strip_prefix("http://")
            .is_some_and(|host| self.host_allowed(host));
        same_origin || self.origins.iter().any(|o| o == origin)
    }

    fn token_matches(&self, sent: &[u8]) -> bool {
        // Compared in constant time, so the answer time does not tell how much of a guess
        // was right.
        let want = self.token.as_bytes();
        sent.len() == want.len()
            && sent.iter().zip(want).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
    }

    /// Why a request is refused, if it is.
    pub fn refuse(&self, req: &Request) -> Option<ApiError> {
        let headers = req.headers();
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .or_else(|| req.uri().authority().map(|a| a.as_str()));
        if !host.is_some_and(|h| self.host_allowed(h)) {
            return Some(ApiError::new(
                ErrorCode::HostNotAllowed,
                format!("this server answers only to {}", self.hosts().join(", ")),
            ));
        }
        let path = req.uri().path();
        if !(path == "/api" || path.starts_with("/api/")) {
            return None;
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let allowed = origin.to_str().is_ok_and(|o| self.origin_allowed(o));
            if !allowed {
                return Some(ApiError::new(
                    ErrorCode::OriginNotAllowed,
                    "requests from this origin are not allowed (KEIRI_CORS_ALLOW_ORIGINS)",
                ));
            }
        }
        let token_ok = headers
            .get(TOKEN_HEADER)
            .is_some_and(|t| self.token_matches(t.as_bytes()));
        if !token_ok {
            return Some(ApiError::new(
                ErrorCode::TokenInvalid,
                "missing or wrong X-Keiri-Token: open the URL keiri serve printed",
            ));
        }
        let json = headers
            .get(header::CONTENT_TYPE)
            .and_then(|c| c.to_str().ok())
            .and_then(|c| c.split(';').next())
            .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"));
        if !json {
            return Some(ApiError::new(
                ErrorCode::UnsupportedMediaType,
                "API calls must be sent as Content-Type: application/json",
            ));
        }
        None
    }
}

/// A fresh 256-bit token from the OS random source, hex-encoded.
pub fn new_token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| anyhow::anyhow!("reading the OS random source: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The middleware in front of every route: refuses what [`Guard::refuse`] refuses, before the
/// body is read or a function runs — the studio's defence against cross-site request forgery
/// (CSRF) and DNS rebinding (see the module docs).
async fn guard(State(guard): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    match guard.refuse(&req) {
        Some(err) => error_response(err),
        None => next.run(req).await,
    }
}

fn find_ui_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("KEIRI_UI_DIR") {
        return Some(PathBuf::from(dir));
    }
    let exe = std::env::current_exe().ok()?;
    exe.ancestors()
        .skip(1)
        .take(5)
        .map(|d| d.join("ui/dist"))
        .find(|d| d.join("index.html").is_file())
}

/// The largest request body: a `documents_upload` of the largest allowed file, base64-encoded
/// (4/3 of 50 MiB), plus room for the JSON around it.
pub const MAX_BODY_BYTES: usize = keiri_api::MAX_UPLOAD_BYTES / 3 * 4 + 1024 * 1024;

/// Builds the router (also used by tests).
pub fn router(ctx: Context, ui_dir: Option<PathBuf>, guard_with: Guard) -> Router {
    let origins = guard_with.origins.clone();
    let api = Router::new()
        .route("/api/{function}", post(call))
        .route("/api/{function}/stream", post(call_stream))
        .with_state(Arc::new(ctx))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES));
    let app = match ui_dir {
        Some(dir) => {
            let index = dir.join("index.html");
            api.fallback_service(ServeDir::new(dir).fallback(ServeFile::new(index)))
        }
        None => api,
    };
    // The CORS layer is outside the guard, so a refusal still carries the CORS headers an
    // allowed origin needs to read it, and a preflight is answered without running anything.
    app.layer(axum::middleware::from_fn_with_state(
        Arc::new(guard_with),
        guard,
    ))
    .layer(cors_layer(&origins))
}

async fn call(
    State(ctx): State<Arc<Context>>,
    Path(function): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let parsed: Result<serde_json::Value, _> = if body.is_empty() {
        Ok(serde_json::Value::Null)
    } else {
        serde_json::from_slice(&body)
    };
    let body = match parsed {
        Ok(v) => v,
        Err(e) => {
            return error_response(ApiError::new(
                ErrorCode::InvalidRequest,
                format!("the request body is not JSON: {e}"),
            ));
        }
    };
    // The API runs its blocking file work on the runtime's blocking pool itself.
    match keiri_api::dispatch(&ctx, &function, body).await {
        Ok(value) => axum::Json(value).into_response(),
        Err(e) => error_response(e),
    }
}

/// `POST /api/<function>/stream`: the streamed call as NDJSON, one [`keiri_api::Frame`] a
/// line — events as they happen, then the result or the error. The HTTP status is 200 once
/// streaming starts (errors arrive in the last line); only an unknown function or a body that
/// is not JSON is refused up front with the usual error status. The call runs as its own
/// task; when the client goes away the body stream is dropped, which cancels the call.
async fn call_stream(
    State(ctx): State<Arc<Context>>,
    Path(function): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    if !keiri_api::STREAMING_FUNCTIONS.contains(&function.as_str()) {
        return error_response(ApiError::new(
            ErrorCode::NotFound,
            format!("unknown streaming function: {function}"),
        ));
    }
    let body: serde_json::Value = if body.is_empty() {
        serde_json::Value::Null
    } else {
        match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                return error_response(ApiError::new(
                    ErrorCode::InvalidRequest,
                    format!("the request body is not JSON: {e}"),
                ));
            }
        }
    };
    let cancel = keiri_api::CancellationToken::new();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<keiri_api::Frame>();
    let worker_cancel = cancel.clone();
    tokio::spawn(async move {
        let events = tx.clone();
        let events = keiri_api::EventSink::new(move |event| {
            // A closed receiver means the client left; the drop guard has cancelled.
            let _ = events.send(keiri_api::Frame::Event(event));
        });
        let result =
            keiri_api::dispatch_stream(&ctx, &function, body, events, &worker_cancel).await;
        let _ = tx.send(keiri_api::Frame::end(result));
    });
    // The guard lives as long as the body stream: dropping it (client gone) cancels the call.
    let guard = cancel.drop_guard();
    let stream = futures_util::stream::unfold((rx, guard), |(mut rx, guard)| async move {
        let frame = rx.recv().await?;
        let mut line = frame.to_json().to_string();
        line.push('\n');
        Some((
            Ok::<_, std::convert::Infallible>(axum::body::Bytes::from(line)),
            (rx, guard),
        ))
    });
    (
        [
            (header::CONTENT_TYPE, "application/x-ndjson"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        axum::body::Body::from_stream(stream),
    )
        .into_response()
}

fn error_response(err: ApiError) -> Response {
    let status = match err.code {
        ErrorCode::InvalidRequest | ErrorCode::InvalidArgument | ErrorCode::YamlParse => {
            StatusCode::BAD_REQUEST
        }
        ErrorCode::PathDenied | ErrorCode::EnvNotAllowed => StatusCode::FORBIDDEN,
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::AlreadyExists
        | ErrorCode::ChangeConflict
        | ErrorCode::SessionBusy
        | ErrorCode::FileLocked => StatusCode::CONFLICT,
        ErrorCode::PlanInvalid | ErrorCode::WorkbookUnreadable | ErrorCode::ApplyFailed => {
            StatusCode::UNPROCESSABLE_ENTITY
        }
        ErrorCode::FileTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::HostNotAllowed => StatusCode::MISDIRECTED_REQUEST,
        ErrorCode::OriginNotAllowed => StatusCode::FORBIDDEN,
        ErrorCode::TokenInvalid => StatusCode::UNAUTHORIZED,
        ErrorCode::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ErrorCode::WorkspaceNotAllowed => StatusCode::BAD_REQUEST,
        ErrorCode::LlmNotConfigured => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::LlmFailed => StatusCode::BAD_GATEWAY,
        ErrorCode::PreflightTimeout => StatusCode::GATEWAY_TIMEOUT,
        // 499 (nginx's "client closed request"): only seen if a plain call is cancelled.
        ErrorCode::Cancelled => StatusCode::from_u16(499).unwrap_or(StatusCode::BAD_REQUEST),
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    (status, axum::Json(err)).into_response()
}

pub fn run(
    mut ctx: Context,
    args: &ServeArgs,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<ExitCode> {
    // The window asks again while the embedding model loads (keyword results meanwhile).
    ctx.interactive = true;
    let ui_dir = args.ui_dir.clone().or_else(find_ui_dir);
    if let Some(dir) = &ui_dir {
        anyhow::ensure!(
            dir.join("index.html").is_file(),
            "no built UI in {} (run `make ui` first)",
            dir.display()
        );
    }
    let origins = cors_origins(std::env::var("KEIRI_CORS_ALLOW_ORIGINS").ok().as_deref());
    // The first candidate search should not wait for the embedding model to load.
    keiri_api::prewarm(&ctx);
    runtime.block_on(async move {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding {addr}"))?;
        let local = listener.local_addr()?;
        if ui_dir.is_none() {
            eprintln!("keiri serve: no built UI found; serving the API only");
        }
        let token = new_token()?;
        // The only place the token is shown: open this URL (the UI keeps the token and drops
        // it from the address bar); API clients send it as X-Keiri-Token.
        println!("listening on http://{local}/?token={token}");
        // Flush so a parent process waiting for this line sees it at once.
        std::io::Write::flush(&mut std::io::stdout())?;
        let guard_with = Guard::new(local.port(), token, &origins);
        axum::serve(listener, router(ctx, ui_dir, guard_with))
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .context("serving")?;
        Ok(ExitCode::SUCCESS)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(host: Option<&str>, path: &str, headers: &[(&str, &str)]) -> Request {
        let mut builder = axum::http::Request::builder().method("POST").uri(path);
        if let Some(h) = host {
            builder = builder.header("host", h);
        }
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        builder.body(axum::body::Body::empty()).unwrap()
    }

    // check(host, path, headers, expected refusal code or None)
    #[test]
    fn guard_refuses_foreign_hosts_origins_tokens_and_content_types() {
        let guard = Guard::new(8710, "t0k".into(), &["http://localhost:5173".to_string()]);
        let json = ("content-type", "application/json");
        let token = ("x-keiri-token", "t0k");
        type Case<'a> = (
            Option<&'a str>,
            &'a str,
            &'a [(&'a str, &'a str)],
            Option<&'a str>,
        );
        let cases: &[Case<'_>] = &[
            (Some("127.0.0.1:8710"), "/api/x", &[json, token], None),
            (Some("LOCALHOST:8710"), "/api/x", &[json, token], None),
            (
                Some("[::1]:8710"),
                "/api/x",
                &[("content-type", "application/json; charset=utf-8"), token],
                None,
            ),
            (Some("127.0.0.1:8710"), "/", &[], None),
            (Some("evil.example"), "/", &[], Some("HOST_NOT_ALLOWED")),
            (
                Some("evil.example:8710"),
                "/api/x",
                &[json, token],
                Some("HOST_NOT_ALLOWED"),
            ),
            (
                Some("127.0.0.1"),
                "/api/x",
                &[json, token],
                Some("HOST_NOT_ALLOWED"),
            ),
            (
                Some("127.0.0.1:9999"),
                "/api/x",
                &[json, token],
                Some("HOST_NOT_ALLOWED"),
            ),
            (None, "/api/x", &[json, token], Some("HOST_NOT_ALLOWED")),
            (
                Some("127.0.0.1:8710"),
                "/api/x",
                &[json, token, ("origin", "http://evil.example")],
                Some("ORIGIN_NOT_ALLOWED"),
            ),
            (
                Some("127.0.0.1:8710"),
                "/api/x",
                &[json, token, ("origin", "null")],
                Some("ORIGIN_NOT_ALLOWED"),
            ),
            (
                Some("127.0.0.1:8710"),
                "/api/x",
                &[json, token, ("origin", "http://127.0.0.1:8710")],
                None,
            ),
            (
                Some("127.0.0.1:8710"),
                "/api/x",
                &[json, token, ("origin", "http://localhost:5173")],
                None,
            ),
            (
                Some("127.0.0.1:8710"),
                "/api/x",
                &[json],
                Some("TOKEN_INVALID"),
            ),
            (
                Some("127.0.0.1:8710"),
                "/api/x",
                &[json, ("x-keiri-token", "t0K")],
                Some("TOKEN_INVALID"),
            ),
            (
                Some("127.0.0.1:8710"),
                "/api/x",
                &[json, ("x-keiri-token", "t0k0")],
                Some("TOKEN_INVALID"),
            ),
            (
                Some("127.0.0.1:8710"),
                "/api/x",
                &[token],
                Some("UNSUPPORTED_MEDIA_TYPE"),
            ),
            (
                Some("127.0.0.1:8710"),
                "/api/x",
                &[token, ("content-type", "text/plain")],
                Some("UNSUPPORTED_MEDIA_TYPE"),
            ),
            (
                Some("127.0.0.1:8710"),
                "/api/x",
                &[token, ("content-type", "application/jsonp")],
                Some("UNSUPPORTED_MEDIA_TYPE"),
            ),
        ];
        for (host, path, headers, want) in cases {
            let got = guard
                .refuse(&request(*host, path, headers))
                .map(|e| e.code.as_str());
            assert_eq!(got, *want, "{host:?} {path} {headers:?}");
        }
    }

    #[test]
    fn tokens_are_fresh_and_long() {
        let (a, b) = (new_token().unwrap(), new_token().unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }

    #[test]
    fn cors_origins_from_env() {
        assert_eq!(cors_origins(None), ["http://localhost:5173"]);
        assert_eq!(cors_origins(Some("")), Vec::<String>::new());
        assert_eq!(cors_origins(Some(" , ")), Vec::<String>::new());
        assert_eq!(
            cors_origins(Some(" http://a.test , ,http://b.test ")),
            ["http://a.test", "http://b.test"]
        );
    }
}
