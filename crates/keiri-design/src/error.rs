//! The one error type of the planner.

/// Every way plan generation can fail (an invalid plan is not an error: it is a
/// [`crate::GeneratedPlan`] with `status: invalid`, its findings and suggestions).
///
/// Callers branch on [`Error::code`], never on the message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An LLM mode was asked for but no provider is configured.
    #[error(
        "the {mode} mode needs an LLM, and none is configured: set OPENAI_API_KEY (OpenAI), or \
         AZURE_OPENAI_API_KEY, AZURE_OPENAI_ENDPOINT and AZURE_OPENAI_DEPLOYMENT (Azure \
         OpenAI), or KEIRI_LLM_BASE_URL (any OpenAI-compatible server), or use the compose mode, \
         which works offline"
    )]
    LlmRequired { mode: &'static str },
    /// The model call of a stage failed (configuration, timeout, rate limit, output that
    /// matches no schema, ...). The source keeps the provider's typed error.
    #[error("the {stage} stage failed: {source}")]
    Llm {
        stage: &'static str,
        #[source]
        source: keiri_llm::Error,
    },
    /// An argument is unusable (empty instruction, unknown template id, ...).
    #[error("{0}")]
    InvalidArgument(String),
    /// Retrieval over the catalog failed.
    #[error("retrieving candidate blocks failed: {0}")]
    Search(#[source] keiri_search::Error),
    /// Reading the attached documents failed as a whole.
    #[error("reading the documents failed: {0}")]
    Documents(#[source] keiri_docs::Error),
    /// Templates could not be composed.
    #[error("composing the templates failed: {0}")]
    Compose(#[source] keiri_plan::ComposeError),
    /// The answers do not fit the requirements.
    #[error("the answers do not fit the questions: {0}")]
    Answers(#[source] keiri_plan::AnswerError),
    /// The catalog has no block to build a plan from.
    #[error("no candidate blocks: the catalog is empty or nothing matched")]
    NoCandidates,
}

impl Error {
    /// A stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Error::LlmRequired { .. } => "LLM_NOT_CONFIGURED",
            Error::Llm { source, .. } => source.code(),
            Error::InvalidArgument(_) => "INVALID_ARGUMENT",
            Error::Search(e) => e.code(),
            Error::Documents(e) => e.code(),
            Error::Compose(e) => e.code(),
            Error::Answers(_) => "ANSWER_INVALID",
            Error::NoCandidates => "NO_CANDIDATES",
        }
    }
}
