use std::path::PathBuf;

use crate::BackendKind;

/// Errors of `apply_patch`, each with a stable code (see [`Error::code`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input is malformed: no `filePath`, an empty one, a `patch` that is not a string or is
    /// over the size limit.
    #[error("invalid argument: {message}")]
    InvalidArgument { message: String },
    /// The path policy refused the path, or could not resolve it.
    #[error(transparent)]
    Path(keiri_fs::Error),
    /// The path resolves, but not to a regular file.
    #[error("not a file: {path}")]
    NotAFile { path: PathBuf },
    /// The file is over the size limit; checked before anything else runs.
    #[error("file too large: {path} is {size} bytes, the limit is {limit} bytes")]
    FileTooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },
    /// The patch did not apply and the file is unchanged. `backend` and `exit_code` are absent
    /// when the patch was refused before any backend ran (malformed, or not about this file).
    #[error("{}", apply_failed_message(*.backend, *.exit_code, .summary))]
    ApplyFailed {
        backend: Option<BackendKind>,
        exit_code: Option<i32>,
        summary: String,
    },
    /// Reading or writing the file failed.
    #[error("{action} {path}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file changed on disk between the read and the write (a writer outside keiri got
    /// there first); nothing was written. Reading it again and re-applying is safe.
    #[error("{} changed on disk since the patch was applied to it; nothing was written", .path.display())]
    Conflict { path: PathBuf },
    /// Anything else unexpected: the backend could not run or was killed.
    #[error("{message}")]
    Internal { message: String },
}

fn apply_failed_message(
    backend: Option<BackendKind>,
    exit_code: Option<i32>,
    summary: &str,
) -> String {
    match (backend, exit_code) {
        (Some(backend), Some(code)) => {
            format!(
                "patch did not apply ({} exit code {code}): {summary}",
                backend.as_str()
            )
        }
        (Some(backend), None) => {
            format!("patch did not apply ({}): {summary}", backend.as_str())
        }
        (None, _) => format!("patch refused: {summary}"),
    }
}

impl Error {
    /// The stable machine-readable code: `INVALID_ARGUMENT`, `PATH_DENIED`, `NOT_FOUND`,
    /// `FILE_TOO_LARGE`, `APPLY_FAILED`, `CHANGE_CONFLICT` or `INTERNAL`.
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidArgument { .. } => "INVALID_ARGUMENT",
            Error::Path(e) => match e.code() {
                "PATH_DENIED" => "PATH_DENIED",
                "NOT_FOUND" => "NOT_FOUND",
                "INVALID_ARGUMENT" => "INVALID_ARGUMENT",
                _ => "INTERNAL",
            },
            Error::NotAFile { .. } => "NOT_FOUND",
            Error::FileTooLarge { .. } => "FILE_TOO_LARGE",
            Error::ApplyFailed { .. } => "APPLY_FAILED",
            Error::Conflict { .. } => "CHANGE_CONFLICT",
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                "NOT_FOUND"
            }
            Error::Io { .. } | Error::Internal { .. } => "INTERNAL",
        }
    }

    /// What the error carries for a caller to act on besides its code and message: which
    /// backend failed to apply and its exit code.
    pub fn details(&self) -> Option<serde_json::Value> {
        match self {
            Error::ApplyFailed {
                backend, exit_code, ..
            } => Some(serde_json::json!({
                "backend": backend.map(|b| b.as_str()),
                "exitCode": exit_code,
            })),
            _ => None,
        }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error::InvalidArgument {
            message: message.into(),
        }
    }

    pub(crate) fn internal(message: impl Into<String>) -> Error {
        Error::Internal {
            message: message.into(),
        }
    }

    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io {
            action,
            path,
            source,
        }
    }
}
