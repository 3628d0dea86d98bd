use std::path::PathBuf;

/// Errors of the agent outside a tool call: sessions, skills, approvals and the model.
///
/// A failing tool call is not one of these: it becomes a [`crate::ToolError`] that the model
/// reads as the tool's result. Callers branch on [`Error::code`], never on the message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A session id that is not a safe file name.
    #[error(
        "invalid session id {id:?}: use 1-64 letters, digits, '_' or '-', starting with a letter or digit"
    )]
    InvalidSessionId { id: String },
    /// No session with this id.
    #[error("no chat session {id}")]
    SessionNotFound { id: String },
    /// The session file exists but cannot be read as a session.
    #[error("the chat session file {} is damaged: {reason}", path.display())]
    SessionDamaged { path: PathBuf, reason: String },
    /// The message is empty.
    #[error("the message is empty")]
    EmptyMessage,
    /// `--skill NAME` or `skill` names no loaded skill.
    #[error("no skill named {name:?} (available: {})", available.join(", "))]
    SkillNotFound {
        name: String,
        available: Vec<String>,
    },
    /// No pending change with this id in the session.
    #[error("no pending change {change_id} in this session")]
    ChangeNotFound { change_id: String },
    /// Nothing to undo.
    #[error("there is no approved change to undo")]
    NothingToUndo,
    /// The file changed on disk since the change was proposed (or approved, for an undo);
    /// nothing was written.
    #[error("{file} changed since the change was {when}; nothing was written")]
    Conflict { file: String, when: &'static str },
    /// A path from the session or the model failed the path policy.
    #[error(transparent)]
    Path(#[from] keiri_fs::Error),
    /// Applying an approved workbook patch failed.
    #[error("applying the workbook patch failed: {message}")]
    Workbook { code: String, message: String },
    /// Reading or writing a file failed.
    #[error("{action} {}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The model call failed (not configured, timeout, rate limit, cancelled…).
    #[error(transparent)]
    Llm(#[from] keiri_llm::Error),
}

impl Error {
    /// A stable machine-readable code for this error.
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidSessionId { .. } | Error::EmptyMessage => "INVALID_ARGUMENT",
            Error::SessionNotFound { .. } => "SESSION_NOT_FOUND",
            Error::SessionDamaged { .. } => "SESSION_DAMAGED",
            Error::SkillNotFound { .. } => "SKILL_NOT_FOUND",
            Error::ChangeNotFound { .. } => "CHANGE_NOT_FOUND",
            Error::NothingToUndo => "NOTHING_TO_UNDO",
            Error::Conflict { .. } => "CHANGE_CONFLICT",
            Error::Path(e) => e.code(),
            Error::Workbook { .. } => "WORKBOOK_PATCH_FAILED",
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                "NOT_FOUND"
            }
            Error::Io { .. } => "IO_ERROR",
            Error::Llm(e) => e.code(),
        }
    }

    pub(crate) fn io(
        action: &'static str,
        path: &std::path::Path,
    ) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.to_path_buf();
        move |source| Error::Io {
            action,
            path,
            source,
        }
    }
}
