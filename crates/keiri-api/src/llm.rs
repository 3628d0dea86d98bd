//! LLM status: whether a provider is configured, so the UI can say so before a generation
//! (and `keiri llm status` can print it).
//!
//! The request and response types are the tool contract and live in `keiri-llm`. The status is
//! resolved from the process environment over `<workspace>/.env`; a configuration problem is
//! data in the response (`configured: false` with a code and a message naming the variables),
//! not an error. Nothing here ever returns a key.

use crate::{ApiError, Context};

pub use keiri_llm::{
    ProviderKind as LlmProviderKind, StatusProblem as LlmStatusProblem,
    StatusRequest as LlmStatusRequest, StatusResponse as LlmStatusResponse,
};

/// Whether an LLM is configured: provider, model and base URL (no secrets).
pub fn llm_status(ctx: &Context, _req: LlmStatusRequest) -> Result<LlmStatusResponse, ApiError> {
    Ok(keiri_llm::status_for_workspace(&ctx.workspace))
}
