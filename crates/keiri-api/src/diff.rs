//! The `apply_patch` use case (`keiri-diff`): one unified diff applied to one workspace file.
//!
//! The request and result types are the tool contract and live in `keiri-diff`, so the agent
//! and the MCP server use the same types; front-ends reach them through [`patches`]. The
//! workspace's path policy is the root; the native applier is the default backend, `git` is
//! used when the request asks for it.
//!
//! A write is a compare-and-swap (see `keiri-diff`): concurrent calls on one file queue on its
//! write lock and each applies to the current content; a change by a writer outside keiri
//! between the read and the rename is `CHANGE_CONFLICT` (409 over HTTP), never a reported
//! write that is lost.

use crate::{ApiError, Context};

/// Request and result types of `apply_patch`, and its tool definition.
pub mod patches {
    pub use keiri_diff::{
        ApplyPatchInput, ApplyPatchRequest, ApplyPatchResult, BackendKind, TOOL_DESCRIPTION,
        TOOL_NAME, ToolDefinition, tool_definition,
    };
}

use patches::{ApplyPatchInput, ApplyPatchRequest, ApplyPatchResult};

fn api_error(err: keiri_diff::Error) -> ApiError {
    let api = ApiError::lower(&err);
    match err.details() {
        Some(details) => api.with_details(details),
        None => api,
    }
}

/// Applies `req.patch` to `req.file_path` once (or, with `dry_run`, reports what would change).
pub fn apply_patch(ctx: &Context, req: ApplyPatchRequest) -> Result<ApplyPatchResult, ApiError> {
    let input = ApplyPatchInput {
        file_path: req.file_path,
        patch: req.patch,
    };
    let options = keiri_diff::Options {
        mode: if req.dry_run {
            keiri_diff::Mode::DryRun
        } else {
            keiri_diff::Mode::Write
        },
        ..keiri_diff::Options::default()
    };
    let backend = keiri_diff::backend(req.backend);
    keiri_diff::apply_patch(
        &ctx.path_policy(),
        &input,
        &backend,
        &keiri_diff::Sha256Hasher,
        &options,
    )
    .map(|applied| applied.result)
    .map_err(api_error)
}
crate::surface::function!(plain apply_patch(crate::patches::ApplyPatchRequest) -> crate::patches::ApplyPatchResult);
