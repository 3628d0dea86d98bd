//! LLM status: whether a provider is configured, so the UI can say so before a generation
//! (and `keiri llm status` can print it).
//!
//! The request and response types are the tool contract and live in `keiri-llm`. The status is
//! resolved from the process environment over `<workspace>/.env` over the saved settings; a
//! configuration problem is data in the response (`configured: false` with a code and a message naming the variables),
//! not an error. Nothing here ever returns a key.

use crate::{ApiError, Context};

pub use keiri_llm::{
    ProviderKind as LlmProviderKind, StatusProblem as LlmStatusProblem,
    StatusRequest as LlmStatusRequest, StatusResponse as LlmStatusResponse,
};

/// Whether an LLM is configured: provider, model and base URL (no secrets).
///
/// Resolved from [`crate::llm_env`]: the process environment, then `<workspace>/.env`, then
/// the saved settings with the keychain's key. A problem reading those is reported in the
/// response like any other configuration problem.
pub fn llm_status(ctx: &Context, _req: LlmStatusRequest) -> Result<LlmStatusResponse, ApiError> {
    match crate::llm_env(ctx) {
        Ok(env) => Ok(keiri_llm::status(&env)),
        // A settings file or keychain that cannot be read: a configuration problem too.
        Err(e) => Ok(crate::settings::problem_status(e)),
    }
}
crate::surface::function!(plain llm_status(crate::LlmStatusRequest) -> crate::LlmStatusResponse);

/// The JSONL event log of one run (`logs/keiri_agent.log` and `logs/runs/<run_id>.jsonl`),
/// with secrets from `env` redacted; `run_id` defaults to a fresh time-based id. A log that
/// cannot be opened must not stop the work, so that is `None`.
pub(crate) fn event_log(
    ctx: &Context,
    env: &keiri_llm::Env,
    run_id: Option<String>,
) -> Option<keiri_llm::EventLog> {
    let clock: std::sync::Arc<dyn keiri_llm::Clock> =
        std::sync::Arc::new(keiri_llm::SystemClock::default());
    let run_id = run_id.unwrap_or_else(|| keiri_llm::new_run_id(clock.as_ref()));
    keiri_llm::EventLog::create(
        &ctx.workspace.join("logs"),
        &run_id,
        keiri_llm::Redactor::from_env(env),
        clock,
    )
    .ok()
}
