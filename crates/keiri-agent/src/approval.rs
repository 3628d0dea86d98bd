//! The approval gate: a tool that would change a saved file records a [`PendingChange`]
//! (computed in memory, shown as a unified diff) instead of writing. [`approve`] writes it
//! atomically after checking that the file is still what the change was computed from, and
//! keeps a snapshot for [`undo`], which restores the last approved change.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::Error;
use crate::session::{Session, SessionStore};

/// A change waiting for the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingChange {
    /// `chg-<n>`, unique in the session.
    pub change_id: String,
    /// The file that changes, relative to the workspace.
    pub file: String,
    /// The tool that proposed it.
    pub tool: String,
    /// The tool call's arguments.
    pub args: Value,
    /// A unified diff of the change (for a workbook, one line per changed cell).
    pub diff: String,
    pub kind: ChangeKind,
}

/// What approving writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ChangeKind {
    /// New text for `file`, computed from content whose hash is `sha256_before`.
    Text {
        sha256_before: String,
        after: String,
    },
    /// A workbook patch to run for real; `source` (relative) had `source_sha256` when it was
    /// dry-run.
    Workbook {
        source: String,
        source_sha256: String,
        request: Value,
    },
}

/// An approved change that can be undone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UndoRecord {
    pub change_id: String,
    /// The file that was written, relative to the workspace.
    pub file: String,
    /// Whether the file existed before (else undo removes it).
    pub existed: bool,
    /// The hash of what was written; undo refuses when the file has changed since.
    pub sha256_after: String,
}

/// What an approval (or rejection) did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approval {
    pub applied: bool,
    pub file: String,
    pub undo_available: bool,
}

/// What an undo restored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Undone {
    pub change_id: String,
    pub file: String,
    pub undo_available: bool,
}

/// `sha256:<hex>` of `bytes` (the form keiri-diff reports).
pub fn sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(7 + 64);
    s.push_str("sha256:");
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// A unified diff of `before` → `after` for `file`, with `a/` and `b/` headers.
pub fn unified_diff(file: &str, before: &str, after: &str) -> String {
    diffy::DiffOptions::new()
        .set_original_filename(format!("a/{file}"))
        .set_modified_filename(format!("b/{file}"))
        .create_patch(before, after)
        .to_string()
}

fn snapshot_path(
    store: &SessionStore,
    session: &str,
    change_id: &str,
) -> Result<std::path::PathBuf, Error> {
    Ok(store
        .files_dir(session)?
        .join("undo")
        .join(format!("{change_id}.bak")))
}

fn read(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(Error::io("reading", path))
}

/// Writes `bytes` over the locked file atomically (keeping its permissions), but only if it
/// still holds `expected`: a save by anyone else between the check and the write is
/// `CHANGE_CONFLICT`, never a lost change (keiri-fs compares as the last step before the rename).
fn replace(lock: &keiri_fs::Lock, expected: &[u8], bytes: &[u8]) -> Result<(), Error> {
    Ok(lock.write_if_unchanged(expected, bytes)?)
}

fn save_snapshot(
    store: &SessionStore,
    session: &str,
    change_id: &str,
    bytes: &[u8],
) -> Result<(), Error> {
    let path = snapshot_path(store, session, change_id)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(Error::io("creating", dir))?;
    }
    keiri_fs::write_atomic(&path, bytes)?;
    Ok(())
}

/// Approves (`approve: true`) or rejects the pending change `change_id` of `session`. The
/// caller saves the session afterwards.
pub fn approve(
    store: &SessionStore,
    session: &mut Session,
    policy: &keiri_fs::PathPolicy,
    change_id: &str,
    approve: bool,
) -> Result<Approval, Error> {
    let Some(index) = session
        .pending
        .iter()
        .position(|p| p.change_id == change_id)
    else {
        return Err(Error::ChangeNotFound {
            change_id: change_id.to_string(),
        });
    };
    if !approve {
        let change = session.pending.remove(index);
        return Ok(Approval {
            applied: false,
            file: change.file,
            undo_available: !session.undo.is_empty(),
        });
    }
    let change = session.pending[index].clone();
    let record = match &change.kind {
        ChangeKind::Text {
            sha256_before,
            after,
        } => {
            let path = policy.resolve_existing(&change.file)?;
            // Other writers of this file (another approval, a patch) wait for this one.
            let lock = keiri_fs::lock(&path)?;
            let current = read(&path)?;
            if sha256(&current) != *sha256_before {
                return Err(Error::Conflict {
                    file: change.file.clone(),
                    when: "proposed",
                });
            }
            save_snapshot(store, &session.id, change_id, &current)?;
            replace(&lock, &current, after.as_bytes())?;
            UndoRecord {
                change_id: change_id.to_string(),
                file: change.file.clone(),
                existed: true,
                sha256_after: sha256(after.as_bytes()),
            }
        }
        ChangeKind::Workbook {
            source,
            source_sha256,
            request,
        } => approve_workbook(
            store,
            session,
            policy,
            change_id,
            source,
            source_sha256,
            request,
        )?,
    };
    session.pending.remove(index);
    let file = record.file.clone();
    session.undo.push(record);
    Ok(Approval {
        applied: true,
        file,
        undo_available: true,
    })
}

fn approve_workbook(
    store: &SessionStore,
    session: &Session,
    policy: &keiri_fs::PathPolicy,
    change_id: &str,
    source: &str,
    source_sha256: &str,
    request: &Value,
) -> Result<UndoRecord, Error> {
    let workbook_error = |code: &str, message: String| Error::Workbook {
        code: code.to_string(),
        message,
    };
    let mut request: keiri_xlsx::PatchRequest = serde_json::from_value(request.clone())
        .map_err(|e| workbook_error("INVALID_REQUEST", e.to_string()))?;
    request.dry_run = false;
    let source_path = policy.resolve_existing(source)?;
    if sha256(&read(&source_path)?) != source_sha256 {
        return Err(Error::Conflict {
            file: source.to_string(),
            when: "proposed",
        });
    }
    // Where the write will go: a dry run of the same request says (a rename picks a free
    // name, which is then a new file).
    let mut preview = request.clone();
    preview.dry_run = true;
    let env = keiri_xlsx::PatchEnv::new(policy.clone());
    let planned =
        keiri_xlsx::patch(&preview, &env).map_err(|e| workbook_error(e.code(), e.to_string()))?;
    let out = policy.resolve_new(&planned.out_path)?;
    let existed = out.is_file();
    if existed {
        save_snapshot(store, &session.id, change_id, &read(&out)?)?;
    }
    let done =
        keiri_xlsx::patch(&request, &env).map_err(|e| workbook_error(e.code(), e.to_string()))?;
    if let Some(err) = done.error {
        return Err(workbook_error("PATCH_FAILED", err.message));
    }
    let written = policy.resolve_existing(&done.out_path)?;
    let rel = policy.relative(&written);
    Ok(UndoRecord {
        change_id: change_id.to_string(),
        file: rel,
        existed: existed && written == out,
        sha256_after: sha256(&read(&written)?),
    })
}

/// Restores the file of the last approved change of `session`. The caller saves the session.
pub fn undo(
    store: &SessionStore,
    session: &mut Session,
    policy: &keiri_fs::PathPolicy,
) -> Result<Undone, Error> {
    let Some(record) = session.undo.last().cloned() else {
        return Err(Error::NothingToUndo);
    };
    let path = policy.resolve_existing(&record.file)?;
    let lock = keiri_fs::lock(&path)?;
    let current = read(&path)?;
    if sha256(&current) != record.sha256_after {
        return Err(Error::Conflict {
            file: record.file.clone(),
            when: "approved",
        });
    }
    if record.existed {
        let snapshot = snapshot_path(store, &session.id, &record.change_id)?;
        replace(&lock, &current, &read(&snapshot)?)?;
        let _ = std::fs::remove_file(&snapshot);
    } else {
        // Under the lock, so no writer of this file runs between the check and the removal.
        std::fs::remove_file(&path).map_err(Error::io("removing", &path))?;
    }
    drop(lock);
    session.undo.pop();
    Ok(Undone {
        change_id: record.change_id,
        file: record.file,
        undo_available: !session.undo.is_empty(),
    })
}
