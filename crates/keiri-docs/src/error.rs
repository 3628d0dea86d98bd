use std::path::PathBuf;

/// Errors of this crate. Every variant has a stable [`Error::code`] that callers branch on.
///
/// A per-file failure inside a batch (a corrupt PDF, a zip bomb, a missing file) is reported as
/// data in the response (`errors[]`) with the same code, so the other files still extract; only
/// a malformed request makes a whole call fail.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The request itself is malformed (both request forms given, a zero line number, …).
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// The path failed the path policy or does not exist.
    #[error(transparent)]
    Path(#[from] keiri_fs::Error),
    /// The extension or the content is not a format this crate reads.
    #[error("unsupported format: {0}")]
    UnsupportedFormat(String),
    /// The file is larger than the size cap.
    #[error("file is {size} bytes, over the limit of {limit} bytes")]
    FileTooLarge { size: u64, limit: u64 },
    /// A text file that is really binary data (for example an executable renamed `.txt`).
    #[error("file content is binary, not text")]
    BinaryContent,
    /// No supported text encoding decodes the file without errors; we refuse rather than
    /// return mojibake.
    #[error("text encoding could not be detected (tried UTF-8, UTF-16, Shift_JIS, EUC-JP)")]
    UnknownEncoding,
    /// The bytes are not valid in the encoding `named` (by the caller, or tried by `auto`);
    /// `detected` is the encoding the `auto` rule reads them in, when the caller looked.
    #[error("the text is not valid {named}{}", detected.map(|d| format!(" (it reads as {d})")).unwrap_or_default())]
    EncodingMismatch {
        named: crate::text::TextEncoding,
        detected: Option<crate::text::TextEncoding>,
    },
    /// The file is malformed.
    #[error("corrupt {format} file: {reason}")]
    Corrupt {
        format: &'static str,
        reason: String,
    },
    /// The file is encrypted or protected by a password.
    #[error("file is encrypted or password-protected")]
    Encrypted,
    /// Decompressed content would exceed its cap (a zip bomb or a PDF stream bomb).
    #[error("decompressed content exceeds the limit of {limit} bytes ({what})")]
    DecompressionLimit { limit: u64, what: String },
    /// The document's structure exceeds a safety limit (nesting, loops, operator count).
    #[error("document structure exceeds a safety limit: {0}")]
    StructureLimit(String),
    /// A requested workbook sheet does not exist.
    #[error("sheet not found: {0}")]
    SheetNotFound(String),
    /// A cell range is not valid A1 notation.
    #[error("invalid cell range {0:?}")]
    InvalidCellRange(String),
    /// Reading the file failed.
    #[error("reading {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Encoding a response as TOON failed.
    #[error("encoding the response as TOON")]
    Toon(#[source] toon_format::ToonError),
    /// Serialising a response to JSON failed.
    #[error("serialising the response")]
    Json(#[source] serde_json::Error),
}

impl Error {
    /// A stable machine-readable code for this error.
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidRequest(_) => "INVALID_REQUEST",
            Error::Path(e) => match e.code() {
                "INVALID_ARGUMENT" => "INVALID_PATH",
                other => other,
            },
            Error::UnsupportedFormat(_) => "UNSUPPORTED_FORMAT",
            Error::FileTooLarge { .. } => "FILE_TOO_LARGE",
            Error::BinaryContent => "BINARY_CONTENT",
            Error::UnknownEncoding => "UNKNOWN_ENCODING",
            Error::EncodingMismatch { .. } => "ENCODING_MISMATCH",
            Error::Corrupt { .. } => "CORRUPT_FILE",
            Error::Encrypted => "ENCRYPTED",
            Error::DecompressionLimit { .. } => "DECOMPRESSION_LIMIT",
            Error::StructureLimit(_) => "STRUCTURE_LIMIT",
            Error::SheetNotFound(_) => "SHEET_NOT_FOUND",
            Error::InvalidCellRange(_) => "INVALID_CELL_RANGE",
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                "NOT_FOUND"
            }
            Error::Io { .. } => "IO_ERROR",
            Error::Toon(_) | Error::Json(_) => "INTERNAL",
        }
    }

    pub(crate) fn corrupt(format: &'static str, reason: impl Into<String>) -> Self {
        Error::Corrupt {
            format,
            reason: reason.into(),
        }
    }
}

/// Shorthand used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
