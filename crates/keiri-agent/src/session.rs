//! Chat sessions on disk: `<workspace>/.keiri/chat/<session_id>.json` holds the messages, the
//! pending changes and the undo stack, so that a stateless front-end (the HTTP API, one
//! `keiri chat --message` call) can continue a conversation and approve or undo later.
//! `<workspace>/.keiri/chat/<session_id>/` holds the session's files: the working copy of the
//! current plan and the undo snapshots. Every write is atomic (`keiri_fs::write_atomic`).

use std::path::{Path, PathBuf};

use keiri_llm::Message;
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::approval::{PendingChange, UndoRecord};

/// The largest session file read; a conversation is far smaller.
pub const MAX_SESSION_BYTES: u64 = 32 * 1024 * 1024;

/// One conversation.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Session {
    pub id: String,
    /// The skill of the last turn.
    #[serde(default)]
    pub skill: Option<String>,
    /// The conversation as sent to the model (system prompts are not stored).
    #[serde(default)]
    pub messages: Vec<Message>,
    /// Changes shown to the user and not yet approved or rejected.
    #[serde(default)]
    pub pending: Vec<PendingChange>,
    /// Approved changes, the last one on top.
    #[serde(default)]
    pub undo: Vec<UndoRecord>,
    /// The number of the last change id handed out (`chg-<n>`).
    #[serde(default)]
    pub next_change: u64,
    /// The working copy of the current plan, relative to the workspace, when there is one.
    #[serde(default)]
    pub plan_path: Option<String>,
}

impl Session {
    pub fn new(id: impl Into<String>) -> Session {
        Session {
            id: id.into(),
            ..Session::default()
        }
    }
}

/// Checks that `id` is a safe file name: 1-64 ASCII letters, digits, `_` or `-`, starting with
/// a letter or digit. Ids come from outside (HTTP, the UI), so this blocks path traversal.
pub fn check_session_id(id: &str) -> Result<(), Error> {
    let ok = (1..=64).contains(&id.len())
        && id.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidSessionId { id: id.to_string() })
    }
}

/// Where the sessions of a workspace live.
#[derive(Debug, Clone)]
pub struct SessionStore {
    workspace: PathBuf,
}

impl SessionStore {
    pub fn new(workspace: impl Into<PathBuf>) -> SessionStore {
        SessionStore {
            workspace: workspace.into(),
        }
    }

    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// `<workspace>/.keiri/chat`.
    pub fn dir(&self) -> PathBuf {
        self.workspace.join(".keiri").join("chat")
    }

    /// The session's file directory (working copies, undo snapshots).
    pub fn files_dir(&self, id: &str) -> Result<PathBuf, Error> {
        check_session_id(id)?;
        Ok(self.dir().join(id))
    }

    /// The working copy of the session's plan, relative to the workspace.
    pub fn plan_rel(&self, id: &str) -> Result<String, Error> {
        check_session_id(id)?;
        Ok(format!(".keiri/chat/{id}/plan.yaml"))
    }

    fn path(&self, id: &str) -> Result<PathBuf, Error> {
        check_session_id(id)?;
        Ok(self.dir().join(format!("{id}.json")))
    }

    /// Whether the session exists.
    pub fn exists(&self, id: &str) -> Result<bool, Error> {
        Ok(self.path(id)?.is_file())
    }

    /// Loads a session.
    pub fn load(&self, id: &str) -> Result<Session, Error> {
        let path = self.path(id)?;
        let meta = match std::fs::metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::SessionNotFound { id: id.to_string() });
            }
            Err(source) => {
                return Err(Error::Io {
                    action: "reading",
                    path,
                    source,
                });
            }
            Ok(m) => m,
        };
        if meta.len() > MAX_SESSION_BYTES {
            return Err(Error::SessionDamaged {
                path,
                reason: format!("over {MAX_SESSION_BYTES} bytes"),
            });
        }
        let bytes = std::fs::read(&path).map_err(Error::io("reading", &path))?;
        let session: Session =
            serde_json::from_slice(&bytes).map_err(|e| Error::SessionDamaged {
                path: path.clone(),
                reason: e.to_string(),
            })?;
        if session.id != id {
            return Err(Error::SessionDamaged {
                path,
                reason: format!("it holds the session {:?}", session.id),
            });
        }
        Ok(session)
    }

    /// Loads `id`, or a new empty session when it does not exist yet.
    pub fn load_or_new(&self, id: &str) -> Result<Session, Error> {
        match self.load(id) {
            Err(Error::SessionNotFound { .. }) => Ok(Session::new(id)),
            other => other,
        }
    }

    /// Saves a session atomically.
    pub fn save(&self, session: &Session) -> Result<(), Error> {
        let path = self.path(&session.id)?;
        let dir = self.dir();
        std::fs::create_dir_all(&dir).map_err(Error::io("creating", &dir))?;
        let bytes = serde_json::to_vec_pretty(session).map_err(|e| Error::SessionDamaged {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        keiri_fs::write_atomic(&path, &bytes)?;
        Ok(())
    }

    /// Writes the editor's plan text to the session's working copy and returns its
    /// workspace-relative path.
    pub fn write_plan(&self, id: &str, yaml: &str) -> Result<String, Error> {
        let dir = self.files_dir(id)?;
        std::fs::create_dir_all(&dir).map_err(Error::io("creating", &dir))?;
        keiri_fs::write_atomic(&dir.join("plan.yaml"), yaml.as_bytes())?;
        self.plan_rel(id)
    }
}
