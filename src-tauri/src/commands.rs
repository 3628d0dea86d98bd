//! One Tauri command per keiri-api function, named like it, so the UI's
//! `invoke("<function>", { request })` mirrors `POST /api/<function>` exactly.
//!
//! Each command only hands its request to keiri-api; `ApiError` serialises to
//! `{code, message, details?}`, which the UI's transport turns into its `ApiError`.
//! The commands are `async` so Tauri runs them off the main thread: reading the catalog or
//! writing a design never stalls the window's event loop.
//!
//! They live in this module rather than at the crate root because `#[tauri::command]`
//! generates a macro with the function's name, which collides at the root (E0255).

use keiri_api::{ApiError, Context, json};
use tauri::State;

#[tauri::command(async)]
pub fn catalog_list(
    ctx: State<'_, Context>,
    request: json::CatalogListRequest,
) -> Result<json::CatalogListResponse, ApiError> {
    keiri_api::catalog_list(&ctx, request)
}

#[tauri::command(async)]
pub fn plan_validate(
    ctx: State<'_, Context>,
    request: json::PlanValidateRequest,
) -> Result<json::PlanValidateResponse, ApiError> {
    keiri_api::plan_validate(&ctx, request)
}

#[tauri::command(async)]
pub fn plan_dry_run(
    ctx: State<'_, Context>,
    request: json::PlanDryRunRequest,
) -> Result<json::PlanDryRunResponse, ApiError> {
    keiri_api::plan_dry_run(&ctx, request)
}

#[tauri::command(async)]
pub fn plan_register(
    ctx: State<'_, Context>,
    request: json::PlanRegisterRequest,
) -> Result<json::PlanRegisterResponse, ApiError> {
    keiri_api::plan_register(&ctx, request)
}
