use serde::Serialize;

/// Stable error codes; front-ends branch on these, never on message text.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum ErrorCode {
    /// The request body or an argument is malformed.
    InvalidRequest,
    /// `apply_patch`: an argument is unusable (an empty path, a patch that is not a unified
    /// diff of one file): the code its tool contract names. A body that does not have the
    /// request's shape stays `INVALID_REQUEST`, as for every function.
    InvalidArgument,
    /// The YAML does not parse (or breaks a size/alias limit).
    YamlParse,
    /// The plan has validation errors; details carry the findings.
    PlanInvalid,
    /// A file or function does not exist.
    NotFound,
    /// A path is outside the allowed roots or denied.
    PathDenied,
    /// A file already exists and may not be replaced.
    AlreadyExists,
    /// Reading or writing a file failed.
    IoError,
    /// A file cannot be written now: open in another program that locks it (Excel), or
    /// read-only. Closing it (or allowing writes) and trying again may succeed.
    FileLocked,
    /// Anything unexpected.
    Internal,
    /// A workbook file is not a readable .xlsx/.xlsm package.
    WorkbookUnreadable,
    /// The workbook backend (zip writer, formula engine) failed.
    BackendError,
    /// A patch's formula check did not finish within its time budget; nothing was written.
    PreflightTimeout,
    /// A file is over a size limit (e.g. 10 MiB for apply_patch).
    FileTooLarge,
    /// A patch did not apply and the file is unchanged.
    ApplyFailed,
    /// A mode that needs an LLM was asked for and none is configured.
    LlmNotConfigured,
    /// The LLM call failed (timeout, rate limit, invalid output…); details carry its code.
    LlmFailed,
    /// No run with that id exists for that plan (`run_get`, `run_resume`).
    RunNotFound,
    /// A run's `state.json` or saved outputs cannot be read, so it cannot be resumed.
    RunStateInvalid,
    /// The caller cancelled a streaming call (closed the connection, pressed Cancel).
    Cancelled,
    /// The OS keychain cannot be reached (no Secret Service, locked, unsupported), so an API
    /// key cannot be saved or read; nothing is written in its place.
    KeychainUnavailable,
    /// A chat change cannot be approved or undone because its file changed since it was
    /// proposed (or approved); nothing was written.
    ChangeConflict,
    /// Another call is working on the same chat session; try again when it has finished.
    SessionBusy,
    /// `keiri serve`: the request's `Host` is not this server's loopback address (DNS
    /// rebinding); answered with 421.
    HostNotAllowed,
    /// `keiri serve`: the request's `Origin` is neither the studio itself nor an allowed CORS
    /// origin; answered with 403.
    OriginNotAllowed,
    /// `keiri serve`: the per-launch token is missing or wrong; answered with 401.
    TokenInvalid,
    /// `keiri serve`: an API call whose `Content-Type` is not `application/json`; answered
    /// with 415.
    UnsupportedMediaType,
    /// The folder cannot be the workspace: the file-system root, the home folder itself or a
    /// system folder; nothing is saved.
    WorkspaceNotAllowed,
    /// A workbook read names a sheet the workbook does not have.
    SheetNotFound,
    /// A read asks for more than its limit (`max_cells`, addresses per call).
    LimitExceeded,
    /// A run request names an environment variable the user did not allow (in settings or
    /// with `--allow-env`): a request may narrow the user's list, never widen it.
    EnvNotAllowed,
}

impl ErrorCode {
    /// The code as the string sent over the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidRequest => "INVALID_REQUEST",
            ErrorCode::InvalidArgument => "INVALID_ARGUMENT",
            ErrorCode::YamlParse => "YAML_PARSE",
            ErrorCode::PlanInvalid => "PLAN_INVALID",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::PathDenied => "PATH_DENIED",
            ErrorCode::AlreadyExists => "ALREADY_EXISTS",
            ErrorCode::IoError => "IO_ERROR",
            ErrorCode::FileLocked => "FILE_LOCKED",
            ErrorCode::Internal => "INTERNAL",
            ErrorCode::WorkbookUnreadable => "WORKBOOK_UNREADABLE",
            ErrorCode::BackendError => "BACKEND_ERROR",
            ErrorCode::PreflightTimeout => "PREFLIGHT_TIMEOUT",
            ErrorCode::FileTooLarge => "FILE_TOO_LARGE",
            ErrorCode::ApplyFailed => "APPLY_FAILED",
            ErrorCode::LlmNotConfigured => "LLM_NOT_CONFIGURED",
            ErrorCode::LlmFailed => "LLM_FAILED",
            ErrorCode::RunNotFound => "RUN_NOT_FOUND",
            ErrorCode::RunStateInvalid => "RUN_STATE_INVALID",
            ErrorCode::Cancelled => "CANCELLED",
            ErrorCode::KeychainUnavailable => "KEYCHAIN_UNAVAILABLE",
            ErrorCode::ChangeConflict => "CHANGE_CONFLICT",
            ErrorCode::SessionBusy => "SESSION_BUSY",
            ErrorCode::HostNotAllowed => "HOST_NOT_ALLOWED",
            ErrorCode::OriginNotAllowed => "ORIGIN_NOT_ALLOWED",
            ErrorCode::TokenInvalid => "TOKEN_INVALID",
            ErrorCode::UnsupportedMediaType => "UNSUPPORTED_MEDIA_TYPE",
            ErrorCode::WorkspaceNotAllowed => "WORKSPACE_NOT_ALLOWED",
            ErrorCode::SheetNotFound => "SHEET_NOT_FOUND",
            ErrorCode::LimitExceeded => "LIMIT_EXCEEDED",
            ErrorCode::EnvNotAllowed => "ENV_NOT_ALLOWED",
        }
    }
}

// Lower crates' errors map to ours by variant, once, here: a new variant either gets its code
// in the match of its crate below or falls to `Internal` (the lower enums are
// `#[non_exhaustive]`); no caller compares code strings.

impl From<&keiri_fs::Error> for ErrorCode {
    fn from(e: &keiri_fs::Error) -> ErrorCode {
        use keiri_fs::Error as E;
        match e {
            e if e.is_refused() => ErrorCode::PathDenied,
            E::InvalidPath { .. } | E::InvalidPattern { .. } => ErrorCode::InvalidRequest,
            E::AlreadyExists { .. } => ErrorCode::AlreadyExists,
            E::Changed { .. } => ErrorCode::ChangeConflict,
            E::Io { source, .. } => io_code(source),
            _ => ErrorCode::Internal,
        }
    }
}

impl From<&keiri_llm::Error> for ErrorCode {
    fn from(e: &keiri_llm::Error) -> ErrorCode {
        use keiri_llm::Error as E;
        match e {
            E::NotConfigured | E::ConfigIncomplete { .. } => ErrorCode::LlmNotConfigured,
            E::Cancelled => ErrorCode::Cancelled,
            E::InvalidRunId { .. } => ErrorCode::InvalidRequest,
            E::EnvFileRead { .. } | E::Log { .. } => ErrorCode::IoError,
            _ => ErrorCode::LlmFailed,
        }
    }
}

impl From<&keiri_search::Error> for ErrorCode {
    fn from(e: &keiri_search::Error) -> ErrorCode {
        use keiri_search::Error as E;
        match e {
            E::InvalidArgument(_) | E::EvalSet { .. } => ErrorCode::InvalidRequest,
            E::Io { source, .. } => io_code(source),
            E::Fs(e) => e.into(),
            _ => ErrorCode::Internal,
        }
    }
}

impl From<&keiri_docs::Error> for ErrorCode {
    fn from(e: &keiri_docs::Error) -> ErrorCode {
        use keiri_docs::Error as E;
        match e {
            E::InvalidRequest(_) => ErrorCode::InvalidRequest,
            E::Path(e) => e.into(),
            E::Io { source, .. } => io_code(source),
            _ => ErrorCode::Internal,
        }
    }
}

impl From<&keiri_design::Error> for ErrorCode {
    fn from(e: &keiri_design::Error) -> ErrorCode {
        use keiri_design::Error as E;
        match e {
            E::LlmRequired { .. } => ErrorCode::LlmNotConfigured,
            E::Llm { source, .. } => source.into(),
            E::InvalidArgument(_) | E::Answers(_) => ErrorCode::InvalidRequest,
            E::Search(e) => e.into(),
            E::Documents(e) => e.into(),
            _ => ErrorCode::Internal,
        }
    }
}

impl From<&keiri_agent::Error> for ErrorCode {
    fn from(e: &keiri_agent::Error) -> ErrorCode {
        use keiri_agent::Error as E;
        match e {
            E::InvalidSessionId { .. } | E::EmptyMessage => ErrorCode::InvalidRequest,
            E::SessionNotFound { .. }
            | E::ChangeNotFound { .. }
            | E::SkillNotFound { .. }
            | E::NothingToUndo => ErrorCode::NotFound,
            E::Conflict { .. } => ErrorCode::ChangeConflict,
            E::Path(e) => e.into(),
            E::Io { source, .. } => io_code(source),
            E::Workbook { .. } => ErrorCode::BackendError,
            E::Llm(e) => e.into(),
            _ => ErrorCode::Internal,
        }
    }
}

impl From<&keiri_xlsx::Error> for ErrorCode {
    fn from(e: &keiri_xlsx::Error) -> ErrorCode {
        use keiri_xlsx::Error as E;
        match e {
            E::InvalidRequest(_) | E::LegacyXls { .. } => ErrorCode::InvalidRequest,
            E::Path(e) => e.into(),
            E::Unreadable { .. } => ErrorCode::WorkbookUnreadable,
            E::Io { source, .. } => io_code(source),
            E::Backend(_) => ErrorCode::BackendError,
            E::Budget(_) => ErrorCode::PreflightTimeout,
            E::SheetNotFound { .. } => ErrorCode::SheetNotFound,
            E::LimitExceeded(_) => ErrorCode::LimitExceeded,
            E::Cancelled => ErrorCode::Cancelled,
            _ => ErrorCode::Internal,
        }
    }
}

impl From<&keiri_diff::Error> for ErrorCode {
    fn from(e: &keiri_diff::Error) -> ErrorCode {
        use keiri_diff::Error as E;
        match e {
            E::InvalidArgument { .. } => ErrorCode::InvalidArgument,
            // A path the patch names is the diff's argument, not the request's.
            E::Path(e) => match ErrorCode::from(e) {
                ErrorCode::InvalidRequest => ErrorCode::InvalidArgument,
                ErrorCode::PathDenied => ErrorCode::PathDenied,
                ErrorCode::NotFound => ErrorCode::NotFound,
                _ => ErrorCode::Internal,
            },
            E::NotAFile { .. } => ErrorCode::NotFound,
            E::FileTooLarge { .. } => ErrorCode::FileTooLarge,
            E::ApplyFailed { .. } => ErrorCode::ApplyFailed,
            E::Conflict { .. } => ErrorCode::ChangeConflict,
            E::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                ErrorCode::NotFound
            }
            _ => ErrorCode::Internal,
        }
    }
}

pub(crate) fn io_code(e: &std::io::Error) -> ErrorCode {
    if e.kind() == std::io::ErrorKind::NotFound {
        ErrorCode::NotFound
    } else if keiri_fs::in_use(e) {
        ErrorCode::FileLocked
    } else {
        ErrorCode::IoError
    }
}

/// An error crossing the API boundary: `{code, message, details?}`.
#[derive(Debug, Clone, Serialize)]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
            details: None,
        }
    }

    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details);
        self
    }

    /// Builds an error from an `anyhow` chain, keeping every cause in the message.
    pub fn from_anyhow(code: ErrorCode, err: &anyhow::Error) -> Self {
        ApiError::new(code, format!("{err:#}"))
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for ApiError {}

impl From<keiri_fs::Error> for ApiError {
    fn from(e: keiri_fs::Error) -> Self {
        ApiError::lower(&e)
    }
}

impl ApiError {
    /// A lower crate's error with its code mapped by variant and its own stable code kept in
    /// `details.code` (the agent's and the planner's errors, which have finer codes than the
    /// API's).
    pub(crate) fn with_lower_code<E>(e: &E, lower: &str) -> ApiError
    where
        for<'a> &'a E: Into<ErrorCode>,
        E: std::fmt::Display,
    {
        ApiError::lower(e).with_details(serde_json::json!({ "code": lower }))
    }

    /// A lower crate's error: its code mapped by variant (the `From` impls above), its
    /// message as it is.
    pub(crate) fn lower<E>(e: &E) -> ApiError
    where
        for<'a> &'a E: Into<ErrorCode>,
        E: std::fmt::Display,
    {
        ApiError::new(e.into(), e.to_string())
    }
}
