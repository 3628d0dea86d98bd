//! The one command the window calls every keiri-api function through:
//! `invoke("call", {function, request})` mirrors `POST /api/<function>` exactly, because both
//! end in [`keiri_api::dispatch`] — the function list is defined once, in keiri-api.
//!
//! `ApiError` serialises to `{code, message, details?}`, which the UI's transport turns into
//! its `ApiError`; an unknown function is `NOT_FOUND` and a request of the wrong shape
//! `INVALID_REQUEST`, as over HTTP. The command is awaited on Tauri's async runtime, and
//! keiri-api runs the blocking work (reading the catalog, writing a design) on that runtime's
//! blocking pool, so it never stalls the window's event loop.
//!
//! It lives in this module rather than at the crate root because `#[tauri::command]`
//! generates a macro with the function's name, which collides at the root (E0255).

use keiri_api::{ApiError, Context};
use serde_json::Value;
use tauri::State;

#[tauri::command]
pub async fn call(
    ctx: State<'_, Context>,
    function: String,
    request: Value,
) -> Result<Value, ApiError> {
    keiri_api::dispatch(&ctx, &function, request).await
}
