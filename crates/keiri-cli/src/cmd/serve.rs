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

/// Builds the router (also used by tests).
pub fn router(ctx: Context, ui_dir: Option<PathBuf>, origins: &[String]) -> Router {
    let api = Router::new()
        .route("/api/{function}", post(call))
        .with_state(Arc::new(ctx))
        .layer(DefaultBodyLimit::max(16 * 1024 * 1024));
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

fn error_response(err: ApiError) -> Response {
    let status = match err.code {
        ErrorCode::InvalidRequest | ErrorCode::YamlParse => StatusCode::BAD_REQUEST,
        ErrorCode::PathDenied => StatusCode::FORBIDDEN,
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::AlreadyExists => StatusCode::CONFLICT,
        ErrorCode::PlanInvalid | ErrorCode::WorkbookUnreadable | ErrorCode::ApplyFailed => {
            StatusCode::UNPROCESSABLE_ENTITY
        }
        ErrorCode::FileTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::LlmNotConfigured => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::LlmFailed => StatusCode::BAD_GATEWAY,
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
