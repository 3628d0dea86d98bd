use std::path::PathBuf;

/// Errors of this crate. Each has a stable [`Error::code`] for callers that must branch.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A request argument is out of range or malformed.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The local model directory lacks a file.
    #[error("model file not found: {path}")]
    ModelMissing { path: PathBuf },
    /// The weights file does not follow the documented format (bad magic, truncated, wrong
    /// shapes). Never a panic: the file comes from outside the repository.
    #[error("invalid model file {path}: {reason}")]
    ModelFormat { path: PathBuf, reason: String },
    /// The tokenizer file does not load or does not fit the model.
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    /// A tensor operation failed (shape mismatch, allocation).
    #[error("tensor computation failed")]
    Tensor(#[source] candle_core::Error),
    /// The embeddings HTTP endpoint failed or answered something unusable.
    #[error("embeddings request failed: {0}")]
    Http(String),
    /// The BM25 index could not be built or queried.
    #[error("search index")]
    Index(#[source] tantivy::TantivyError),
    /// The evaluation set does not parse or names blocks that do not exist.
    #[error("evaluation set {path}: {reason}")]
    EvalSet { path: PathBuf, reason: String },
    /// The bundled embedding pack is damaged or not a pack.
    #[error("invalid embedding pack {path}: {reason}")]
    Pack { path: PathBuf, reason: String },
    /// Reading a file failed.
    #[error("{action} {path}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Writing through keiri-fs failed (path policy, atomic write).
    #[error(transparent)]
    Fs(#[from] keiri_fs::Error),
}

impl Error {
    /// A stable machine-readable code for this error.
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidArgument(_) => "INVALID_ARGUMENT",
            Error::ModelMissing { .. } => "MODEL_MISSING",
            Error::ModelFormat { .. } => "MODEL_FORMAT",
            Error::Tokenizer(_) => "TOKENIZER",
            Error::Tensor(_) => "TENSOR",
            Error::Http(_) => "EMBEDDINGS_HTTP",
            Error::Index(_) => "INDEX",
            Error::EvalSet { .. } => "EVAL_SET",
            Error::Pack { .. } => "EMBEDDING_PACK",
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                "NOT_FOUND"
            }
            Error::Io { .. } => "IO_ERROR",
            Error::Fs(e) => e.code(),
        }
    }
}

impl From<candle_core::Error> for Error {
    fn from(e: candle_core::Error) -> Self {
        Error::Tensor(e)
    }
}

impl From<tantivy::TantivyError> for Error {
    fn from(e: tantivy::TantivyError) -> Self {
        Error::Index(e)
    }
}
