use std::io;
use std::path::PathBuf;

/// Errors that stop a patch request as a whole.
///
/// Problems with one operation on this workbook (a missing sheet, a write into a merged range,
/// …) are not errors of this type: they come back inside the response as
/// [`PatchErrorDetail`](crate::PatchErrorDetail) with the index of the operation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The request is malformed: a bad cell or range, a formula without `=`, values whose shape
    /// differs from their range, a fill range of more than one row and column, a bad output
    /// name…
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// A legacy binary workbook; only Excel itself can edit it faithfully.
    #[error(
        "{path}: editing .xls workbooks requires Excel COM (Windows + Excel); save it as .xlsx \
         or .xlsm and patch that file"
    )]
    LegacyXls { path: String },
    /// The path policy refused a path, or a path does not resolve.
    #[error(transparent)]
    Path(#[from] keiri_fs::Error),
    /// The file is not a readable workbook package (not a zip, no workbook part, bad XML…).
    #[error("cannot read workbook {path}: {reason}")]
    Unreadable { path: String, reason: String },
    /// Reading or writing a file failed.
    #[error("{action} {path}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The zip writer failed while building the patched package.
    #[error("workbook backend failed: {0}")]
    Backend(String),
    /// The formula check ran out of its time budget; nothing was written.
    #[error("formula check out of time: {0}")]
    Budget(String),
    /// A read names a sheet the workbook does not have.
    #[error("sheet {sheet:?} not found; the workbook's sheets are: {}", available.join(", "))]
    SheetNotFound {
        sheet: String,
        available: Vec<String>,
    },
    /// A read asks for more cells than its `max_cells`.
    #[error("{0}")]
    LimitExceeded(String),
    /// The caller asked the patch to stop (see [`Stop`](crate::Stop)); nothing was written.
    #[error("the patch was cancelled before it was saved; nothing was written")]
    Cancelled,
}

impl Error {
    /// A stable machine-readable code; callers branch on it, never on the message.
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidRequest(_) | Error::LegacyXls { .. } => "INVALID_REQUEST",
            Error::Path(e) => match e.code() {
                "INVALID_ARGUMENT" => "INVALID_REQUEST",
                other => other,
            },
            Error::Unreadable { .. } => "WORKBOOK_UNREADABLE",
            Error::Io { source, .. } if source.kind() == io::ErrorKind::NotFound => "NOT_FOUND",
            Error::Io { .. } => "IO_ERROR",
            Error::Backend(_) => "BACKEND_ERROR",
            Error::Budget(_) => "PREFLIGHT_TIMEOUT",
            Error::SheetNotFound { .. } => "SHEET_NOT_FOUND",
            Error::LimitExceeded(_) => "LIMIT_EXCEEDED",
            Error::Cancelled => "CANCELLED",
        }
    }

    pub(crate) fn unreadable(path: &str, reason: impl Into<String>) -> Error {
        Error::Unreadable {
            path: path.to_string(),
            reason: reason.into(),
        }
    }
}
