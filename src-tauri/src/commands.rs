//! The one command the window calls every keiri-api function through:
//! `invoke("call", {function, request})` mirrors `POST /api/<function>` exactly, because both
//! end in [`keiri_api::dispatch`] — the function list is defined once, in keiri-api.
//!
//! `ApiError` serialises to `{code, message, details?}`, which the UI's transport turns into
//! its `ApiError`; an unknown function is `NOT_FOUND` and a request of the wrong shape
//! `INVALID_REQUEST`, as over HTTP. The command runs on Tauri's blocking pool, so reading the
//! catalog or writing a design never stalls the window's event loop.
//!
//! It lives in this module rather than at the crate root because `#[tauri::command]`
//! generates a macro with the function's name, which collides at the root (E0255).

use keiri_api::{ApiError, Context};
use serde_json::Value;
use tauri::State;

#[tauri::command(async)]
pub fn call(ctx: State<'_, Context>, function: String, request: Value) -> Result<Value, ApiError> {
    keiri_api::dispatch(&ctx, &function, request)
}
