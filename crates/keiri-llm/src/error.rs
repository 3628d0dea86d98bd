use std::path::PathBuf;
use std::time::Duration;

use crate::config::ProviderKind;
use crate::strategy::StrategyFailure;

/// Every way an LLM call, its configuration or its event log can fail.
///
/// Callers branch on [`Error::code`], never on the message. Messages never contain an API key:
/// provider messages are passed through the provider's redactor before they get here.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No provider variables are set at all.
    #[error(
        "no LLM provider is configured: set OPENAI_API_KEY (OpenAI), or AZURE_OPENAI_API_KEY, \
         AZURE_OPENAI_ENDPOINT and AZURE_OPENAI_DEPLOYMENT (Azure OpenAI; \
         AZURE_OPENAI_API_VERSION optional), or KEIRI_LLM_BASE_URL (any OpenAI-compatible \
         server; KEIRI_LLM_API_KEY optional), in the environment or in the workspace's .env"
    )]
    NotConfigured,
    /// A provider was chosen but some of its variables are missing.
    #[error(
        "the {provider} provider is missing {}: set it in the environment or in the workspace's .env",
        missing.join(", ")
    )]
    ConfigIncomplete {
        provider: ProviderKind,
        missing: Vec<&'static str>,
    },
    /// A variable is set to something unusable.
    #[error("{var} is invalid: {reason}")]
    ConfigInvalid { var: String, reason: String },
    /// The workspace's `.env` could not be parsed. The offending line is not quoted because it
    /// may hold a key.
    #[error("{} has a syntax error{}", path.display(), line.map(|l| format!(" on line {l}")).unwrap_or_default())]
    EnvFileSyntax { path: PathBuf, line: Option<usize> },
    /// The workspace's `.env` exists but could not be read.
    #[error("reading {}", path.display())]
    EnvFileRead {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The HTTP client could not be built (TLS set-up) or could not send the request.
    #[error("the HTTP client failed: {reason}")]
    Transport { reason: String },
    /// The caller cancelled the call.
    #[error("the LLM call was cancelled")]
    Cancelled,
    /// No response within the per-attempt timeout, on every attempt.
    #[error("no response from the LLM within {}s (attempts: {attempts})", after.as_secs_f64())]
    Timeout { after: Duration, attempts: u32 },
    /// HTTP 429 on every attempt, or a Retry-After longer than the policy allows.
    #[error("rate limited by the LLM provider (attempts: {attempts}{}): {message}", retry_after.map(|d| format!(", retry after {}s", d.as_secs_f64())).unwrap_or_default())]
    RateLimited {
        attempts: u32,
        retry_after: Option<Duration>,
        message: String,
    },
    /// HTTP 5xx on every attempt.
    #[error("the LLM provider failed with HTTP {status} (attempts: {attempts}): {message}")]
    ServerError {
        status: u16,
        attempts: u32,
        message: String,
    },
    /// The server could not be reached on any attempt.
    #[error("cannot reach the LLM provider (attempts: {attempts}): {message}")]
    Connection { attempts: u32, message: String },
    /// HTTP 401 or 403: the key is wrong or lacks access.
    #[error("the LLM provider rejected the credentials (HTTP {status}): {message}")]
    Unauthorized { status: u16, message: String },
    /// Any other 4xx: the request itself was refused (unsupported parameter, unknown model, …).
    #[error("the LLM provider rejected the request (HTTP {status}): {message}")]
    Rejected {
        status: u16,
        message: String,
        /// The provider's `error.code`, when it sent one.
        error_code: Option<String>,
        /// The provider's `error.param`, when it sent one.
        param: Option<String>,
    },
    /// The response is not a usable answer (not JSON, no choices, too large, vectors
    /// missing).
    #[error("the LLM provider's response is not usable: {reason}")]
    ResponseInvalid { reason: String },
    /// The model declined to answer.
    #[error("the model refused: {message}")]
    Refused { message: String },
    /// No strategy produced output matching the schema.
    #[error("no structured output matched the schema: {}", summarize(failures))]
    StructuredOutput { failures: Vec<StrategyFailure> },
    /// The output schema cannot be sent (bad name, or not valid for strict mode).
    #[error("the output schema cannot be used: {}", problems.join("; "))]
    InvalidSchema { problems: Vec<String> },
    /// A run id that is not a safe file name.
    #[error(
        "invalid run id {run_id:?}: use 1-128 letters, digits, '.', '_' or '-', not starting with '.'"
    )]
    InvalidRunId { run_id: String },
    /// Writing the event log failed.
    #[error("{action} {}", path.display())]
    Log {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn summarize(failures: &[StrategyFailure]) -> String {
    if failures.is_empty() {
        return "no strategy was tried".to_string();
    }
    failures
        .iter()
        .map(|f| format!("{}: {}", f.strategy.as_str(), f.message))
        .collect::<Vec<_>>()
        .join("; ")
}

impl Error {
    /// A stable machine-readable code for this error.
    pub fn code(&self) -> &'static str {
        match self {
            Error::NotConfigured => "LLM_NOT_CONFIGURED",
            Error::ConfigIncomplete { .. } => "LLM_CONFIG_INCOMPLETE",
            Error::ConfigInvalid { .. } | Error::EnvFileSyntax { .. } => "LLM_CONFIG_INVALID",
            Error::EnvFileRead { .. } | Error::Log { .. } => "IO_ERROR",
            Error::Transport { .. } => "LLM_TRANSPORT",
            Error::Cancelled => "LLM_CANCELLED",
            Error::Timeout { .. } => "LLM_TIMEOUT",
            Error::RateLimited { .. } => "LLM_RATE_LIMITED",
            Error::ServerError { .. } => "LLM_SERVER_ERROR",
            Error::Connection { .. } => "LLM_CONNECTION",
            Error::Unauthorized { .. } => "LLM_UNAUTHORIZED",
            Error::Rejected { .. } => "LLM_REQUEST_REJECTED",
            Error::ResponseInvalid { .. } => "LLM_RESPONSE_INVALID",
            Error::Refused { .. } => "LLM_REFUSED",
            Error::StructuredOutput { .. } => "LLM_OUTPUT_INVALID",
            Error::InvalidSchema { .. } => "LLM_SCHEMA_INVALID",
            Error::InvalidRunId { .. } => "INVALID_ARGUMENT",
        }
    }

    /// Whether the error is about configuration (nothing was sent).
    pub fn is_configuration(&self) -> bool {
        matches!(
            self,
            Error::NotConfigured
                | Error::ConfigIncomplete { .. }
                | Error::ConfigInvalid { .. }
                | Error::EnvFileSyntax { .. }
                | Error::EnvFileRead { .. }
        )
    }
}
