//! The `apply_patch` pipeline, the same for both backends:
//! validate the input → resolve the path, check it is a file of at most 10 MiB (before any
//! process starts) → SHA-256 of the content → apply → SHA-256 again → decide → write.
//!
//! The decision: the backend reported success → applied; it reported failure but the content
//! changed → applied (the result carries the exit code); it reported failure and the content is
//! unchanged → `APPLY_FAILED` with the exit code and a summary of the diagnostics. The write is
//! a separate step ([`commit`]), atomic through `keiri-fs`, and only happens after a decision
//! for "applied"; a dry run stops before it, which is what an approval gate needs.
//!
//! A write is a compare-and-swap. Before reading, the pipeline takes the file's write lock
//! ([`keiri_fs::lock`]: per path inside this process, a lock file across keiri processes) and
//! holds it until the rename, so concurrent calls queue up and each one applies to the content
//! the previous one left. The write itself re-reads the file just before the rename and refuses
//! with `CHANGE_CONFLICT` when it no longer holds what the patch was applied to — which only a
//! writer that ignores the lock (an editor) can cause. Before it writes, the pipeline sweeps
//! the file's directory of temp files that killed writers left ([`keiri_fs::sweep`]).

use std::io::Read;
use std::path::{Path, PathBuf};

use keiri_fs::PathPolicy;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::hash::{ContentHasher, hex};
use crate::patch::{self, PreparedPatch, Rejection, Target};
use crate::tool::{ApplyPatchInput, ApplyPatchResult};
use crate::{BackendKind, Error, native};

/// Files above this size are refused with `FILE_TOO_LARGE` (10 MiB).
pub const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// Patches above this size are refused with `INVALID_ARGUMENT` (10 MiB).
pub const MAX_PATCH_BYTES: usize = 10 * 1024 * 1024;

/// The file a backend works on.
#[derive(Debug, Clone, Copy)]
pub struct TargetFile<'a> {
    /// The canonical path of the real file. Backends must not write it: the pipeline does.
    pub path: &'a Path,
    /// The path relative to the workspace root, `/`-separated, as the patch is written for it.
    pub rel: &'a str,
    /// The content to patch (without a byte order mark; the pipeline restores it).
    pub content: &'a [u8],
    /// The largest result a backend should read back.
    pub output_limit: u64,
}

/// What a backend reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// 0 for success. Git's own exit code; the native applier uses 1 for "did not apply".
    pub exit_code: i32,
    /// A one-line summary of the diagnostics (git's stderr).
    pub summary: String,
    /// The file content after the backend ran.
    pub content: Vec<u8>,
    /// Notes for the result.
    pub messages: Vec<String>,
}

/// A way to apply a prepared patch to a file's content.
pub trait Backend {
    fn kind(&self) -> BackendKind;
    /// Applies `patch` to `file.content`. `Err` is for the unexpected (the backend could not
    /// run); a patch that does not apply is an `Ok` run with a non-zero exit code.
    fn apply(&self, file: &TargetFile<'_>, patch: &PreparedPatch) -> Result<Run, Error>;
}

impl<T: Backend + ?Sized> Backend for &T {
    fn kind(&self) -> BackendKind {
        (**self).kind()
    }

    fn apply(&self, file: &TargetFile<'_>, patch: &PreparedPatch) -> Result<Run, Error> {
        (**self).apply(file, patch)
    }
}

impl<T: Backend + ?Sized> Backend for Box<T> {
    fn kind(&self) -> BackendKind {
        (**self).kind()
    }

    fn apply(&self, file: &TargetFile<'_>, patch: &PreparedPatch) -> Result<Run, Error> {
        (**self).apply(file, patch)
    }
}

/// The native applier as a [`Backend`] (the default: it needs no git).
#[derive(Debug, Clone, Copy)]
pub struct NativeBackend {
    budget: u64,
}

impl NativeBackend {
    /// With a work budget other than [`native::DEFAULT_WORK_BUDGET`].
    pub fn with_budget(budget: u64) -> Self {
        NativeBackend { budget }
    }
}

impl Default for NativeBackend {
    fn default() -> Self {
        NativeBackend::with_budget(native::DEFAULT_WORK_BUDGET)
    }
}

impl Backend for NativeBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Native
    }

    fn apply(&self, file: &TargetFile<'_>, patch: &PreparedPatch) -> Result<Run, Error> {
        Ok(
            match native::apply(file.content, patch, file.rel, self.budget) {
                native::Outcome::Applied { content, messages } => Run {
                    exit_code: 0,
                    summary: String::new(),
                    content,
                    messages,
                },
                native::Outcome::Failed { message } => Run {
                    exit_code: 1,
                    summary: crate::git::summarize(message.as_bytes()),
                    content: file.content.to_vec(),
                    messages: Vec::new(),
                },
            },
        )
    }
}

/// The backend of a kind, ready to run.
pub fn backend(kind: BackendKind) -> Box<dyn Backend> {
    match kind {
        BackendKind::Native => Box::new(NativeBackend::default()),
        BackendKind::Git => Box::new(crate::git::GitBackend::new()),
    }
}

/// Whether the pipeline writes the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Write the new content when the patch applied and changed it.
    #[default]
    Write,
    /// Decide and report, write nothing.
    DryRun,
}

/// Limits and mode of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub mode: Mode,
    pub max_file_bytes: u64,
    pub max_patch_bytes: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            mode: Mode::Write,
            max_file_bytes: MAX_FILE_BYTES,
            max_patch_bytes: MAX_PATCH_BYTES,
        }
    }
}

/// A decided application: the result and both contents, so a caller can show the change and
/// [`commit`] it later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub result: ApplyPatchResult,
    /// The canonical path of the file.
    pub path: PathBuf,
    pub before: Vec<u8>,
    pub after: Vec<u8>,
}

#[derive(Debug)]
pub(crate) enum ReadError {
    TooLarge,
    Io(std::io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::TooLarge => f.write_str("larger than the limit"),
            ReadError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// Reads at most `limit` bytes of a file; a longer file is `TooLarge`, never read whole.
pub(crate) fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge);
    }
    Ok(bytes)
}

const BOM: &[u8] = b"\xef\xbb\xbf";

struct Attempt {
    backend: Option<BackendKind>,
    exit_code: Option<i32>,
    summary: String,
    content: Vec<u8>,
    messages: Vec<String>,
    hunks: usize,
}

/// Applies `input.patch` to the file `input.file_path` inside `policy`'s roots, once.
pub fn apply_patch(
    policy: &PathPolicy,
    input: &ApplyPatchInput,
    backend: &dyn Backend,
    hasher: &dyn ContentHasher,
    options: &Options,
) -> Result<Applied, Error> {
    // 1. The input.
    if input.file_path.trim().is_empty() {
        return Err(Error::invalid("filePath is empty"));
    }
    if input.patch.len() > options.max_patch_bytes {
        return Err(Error::invalid(format!(
            "patch is {} bytes, the limit is {} bytes",
            input.patch.len(),
            options.max_patch_bytes
        )));
    }

    // 2. The file exists inside the workspace and is small enough; nothing has run yet.
    let path = policy
        .resolve_existing(&input.file_path)
        .map_err(Error::Path)?;
    // A write holds the file's lock from the read to the rename, so that a concurrent call
    // applies its patch to what this one wrote instead of overwriting it.
    let guard = match options.mode {
        Mode::Write => {
            if let Some(dir) = path.parent() {
                // Leftovers of a killed writer; failing to remove them must not stop this write.
                let _ = keiri_fs::sweep(dir);
            }
            Some(keiri_fs::lock(&path).map_err(Error::Path)?)
        }
        Mode::DryRun => None,
    };
    let metadata = std::fs::metadata(&path).map_err(Error::io("reading metadata of", &path))?;
    if !metadata.is_file() {
        return Err(Error::NotAFile { path });
    }
    let too_large = |size| Error::FileTooLarge {
        path: path.clone(),
        size,
        limit: options.max_file_bytes,
    };
    if metadata.len() > options.max_file_bytes {
        return Err(too_large(metadata.len()));
    }
    let before = match read_limited(&path, options.max_file_bytes) {
        Ok(bytes) => bytes,
        // It grew between the check and the read.
        Err(ReadError::TooLarge) => return Err(too_large(options.max_file_bytes + 1)),
        Err(ReadError::Io(source)) => {
            return Err(Error::Io {
                action: "reading",
                path,
                source,
            });
        }
    };

    // 3. The hash before.
    let hash_before = hasher.sha256(&before);

    // 4. Apply.
    let rel = policy.relative(&path);
    let aliases = [
        input.file_path.clone(),
        input.file_path.replace('\\', "/"),
        path.to_string_lossy().into_owned(),
    ];
    let target = Target::new(rel.clone(), aliases);
    let attempt = match patch::prepare(&input.patch, &target) {
        Err(Rejection(reason)) => Attempt {
            backend: None,
            exit_code: None,
            summary: reason,
            content: before.clone(),
            messages: Vec::new(),
            hunks: 0,
        },
        Ok(prepared) => {
            let adapted = patch::adapt(prepared, &before);
            let file = TargetFile {
                path: &path,
                rel: &rel,
                content: &adapted.content,
                output_limit: options
                    .max_file_bytes
                    .saturating_add(options.max_patch_bytes as u64),
            };
            let run = backend.apply(&file, &adapted.patch)?;
            let content = if adapted.bom {
                let mut with_bom = Vec::with_capacity(BOM.len() + run.content.len());
                with_bom.extend_from_slice(BOM);
                with_bom.extend_from_slice(run.content.strip_prefix(BOM).unwrap_or(&run.content));
                with_bom
            } else {
                run.content
            };
            let mut messages = adapted.notes;
            messages.extend(run.messages);
            Attempt {
                backend: Some(backend.kind()),
                exit_code: Some(run.exit_code),
                summary: run.summary,
                content,
                messages,
                hunks: adapted.patch.hunk_count(),
            }
        }
    };

    // 5. The hash after.
    let hash_after = hasher.sha256(&attempt.content);

    // 6. Decide.
    let changed = hash_after != hash_before;
    let mut messages = attempt.messages;
    let mut exit_code = None;
    if attempt.exit_code != Some(0) {
        if !changed {
            return Err(Error::ApplyFailed {
                backend: attempt.backend,
                exit_code: attempt.exit_code,
                summary: attempt.summary,
            });
        }
        exit_code = attempt.exit_code;
        messages.push(format!(
            "the backend reported failure{} but the content changed, so it counts as applied{}",
            attempt
                .exit_code
                .map(|c| format!(" (exit code {c})"))
                .unwrap_or_default(),
            if attempt.summary.is_empty() {
                String::new()
            } else {
                format!(": {}", attempt.summary)
            }
        ));
    }
    let mut applied = Applied {
        result: ApplyPatchResult {
            file_path: input.file_path.clone(),
            path: rel,
            backend: backend.kind(),
            changed,
            written: false,
            hunks: attempt.hunks,
            sha256_before: hex(&hash_before),
            sha256_after: hex(&hash_after),
            exit_code,
            messages,
        },
        path,
        before,
        after: attempt.content,
    };

    // 7. Write.
    if let Some(guard) = guard.as_ref().filter(|_| changed) {
        commit_locked(guard, &applied)?;
        applied.result.written = true;
    }
    Ok(applied)
}

/// Writes `applied.after` atomically, provided the file still holds `applied.before`
/// (otherwise `CHANGE_CONFLICT` and nothing is written); keeps the file's permissions. This is
/// the write step of [`apply_patch`], public so that an approval gate can run the pipeline as a
/// dry run and write after the user agrees.
pub fn commit(applied: &Applied) -> Result<(), Error> {
    let guard = keiri_fs::lock(&applied.path).map_err(Error::Path)?;
    commit_locked(&guard, applied)
}

fn commit_locked(guard: &keiri_fs::Lock, applied: &Applied) -> Result<(), Error> {
    guard
        .write_if_unchanged(&applied.before, &applied.after)
        .map_err(|e| match e {
            keiri_fs::Error::Changed { path } => Error::Conflict { path },
            other => Error::internal(format!("writing {}: {other}", applied.path.display())),
        })
}
