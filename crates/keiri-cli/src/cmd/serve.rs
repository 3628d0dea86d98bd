//! `keiri serve`: the studio UI and `POST /api/<function>` on 127.0.0.1 only.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use axum::Router;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderValue, StatusCode, header};
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
        .allow_headers([header::CONTENT_TYPE])
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
pub fn router(ctx: Context, ui_dir: Option<PathBuf>, origins: &[String]) -> Router {
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
    app.layer(cors_layer(origins))
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
    // The API functions do blocking file I/O; keep them off the async workers.
    let result =
        tokio::task::spawn_blocking(move || keiri_api::dispatch(&ctx, &function, body)).await;
    match result {
        Ok(Ok(value)) => axum::Json(value).into_response(),
        Ok(Err(e)) => error_response(e),
        Err(e) => error_response(ApiError::new(
            ErrorCode::Internal,
            format!("the call failed: {e}"),
        )),
    }
}

/// `POST /api/<function>/stream`: the streamed call as NDJSON, one [`keiri_api::Frame`] a
/// line — events as they happen, then the result or the error. The HTTP status is 200 once
/// streaming starts (errors arrive in the last line); only an unknown function or a body that
/// is not JSON is refused up front with the usual error status. The call runs on the blocking
/// pool; when the client goes away the body stream is dropped, which cancels the call.
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
    tokio::task::spawn_blocking(move || {
        let events = tx.clone();
        let result = keiri_api::dispatch_stream(
            &ctx,
            &function,
            body,
            &mut |event| {
                // A closed receiver means the client left; the drop guard has cancelled.
                let _ = events.send(keiri_api::Frame::Event(event));
            },
            &worker_cancel,
        );
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
        ErrorCode::InvalidRequest | ErrorCode::YamlParse => StatusCode::BAD_REQUEST,
        ErrorCode::PathDenied => StatusCode::FORBIDDEN,
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::AlreadyExists | ErrorCode::ChangeConflict | ErrorCode::SessionBusy => {
            StatusCode::CONFLICT
        }
        ErrorCode::PlanInvalid | ErrorCode::WorkbookUnreadable | ErrorCode::ApplyFailed => {
            StatusCode::UNPROCESSABLE_ENTITY
        }
        ErrorCode::FileTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::LlmNotConfigured => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::LlmFailed => StatusCode::BAD_GATEWAY,
        // 499 (nginx's "client closed request"): only seen if a plain call is cancelled.
        ErrorCode::Cancelled => StatusCode::from_u16(499).unwrap_or(StatusCode::BAD_REQUEST),
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    (status, axum::Json(err)).into_response()
}

pub fn run(ctx: Context, args: &ServeArgs) -> anyhow::Result<ExitCode> {
    let ui_dir = args.ui_dir.clone().or_else(find_ui_dir);
    if let Some(dir) = &ui_dir {
        anyhow::ensure!(
            dir.join("index.html").is_file(),
            "no built UI in {} (run `make ui` first)",
            dir.display()
        );
    }
    let origins = cors_origins(std::env::var("KEIRI_CORS_ALLOW_ORIGINS").ok().as_deref());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding {addr}"))?;
        let local = listener.local_addr()?;
        if ui_dir.is_none() {
            eprintln!("keiri serve: no built UI found; serving the API only");
        }
        println!("listening on http://{local}");
        // Flush so a parent process waiting for this line sees it at once.
        std::io::Write::flush(&mut std::io::stdout())?;
        axum::serve(listener, router(ctx, ui_dir, &origins))
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
    use super::cors_origins;

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
