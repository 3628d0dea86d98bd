//! File-system primitives every Keiri crate shares: atomic writes and the path policy.
//!
//! * [`write_atomic`] writes a temp file `.<name>.keiri-tmp-<random>` in the target's
//!   directory, fsyncs it and renames it over the target, so an interrupted save leaves the old
//!   file intact; an existing file keeps its permissions (0644 stays 0644).
//! * [`write_new`] does the same but never replaces an existing file; [`write_unique`] picks
//!   the first free `name`, `name_2`, `name_3`, … and reserves it atomically.
//! * [`lock`] takes a target's write lock (per path in this process, a `.<name>.keiri-lock`
//!   file across processes) so a read-modify-write can end in
//!   [`Lock::write_if_unchanged`]: compare-and-swap, refused with `CHANGE_CONFLICT` when the
//!   file changed since it was read.
//! * [`sweep`] removes the temp and lock files a killed writer left in a directory; callers
//!   run it before they write there. See the `write` module for the naming, the lock protocol
//!   and the window a writer that takes no lock still has.
//! * [`PathPolicy`] resolves a path that came from outside (UI, HTTP, MCP, an LLM tool call)
//!   and refuses it unless it lies inside one of the allowed roots after canonicalisation,
//!   so `..` and symlinks cannot escape.
//!
//! This crate must not know about plans, workbooks or documents. `tempfile` is used for the
//! temp file because it creates it with `O_EXCL` and a random name and cleans it up on drop;
//! `globset` gives gitignore-style deny globs without a hand-written matcher.

use std::io;
use std::path::{Component, Path, PathBuf};

mod write;

pub use write::{LOCK_SUFFIX, Lock, TEMP_MARK, lock, sweep, write_atomic, write_new, write_unique};

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The path is outside every allowed root (after canonicalisation).
    #[error("path is outside the allowed roots: {path}")]
    OutsideRoots { path: PathBuf },
    /// The path matches a deny glob.
    #[error("path is denied by the pattern {pattern}: {path}")]
    Denied { path: PathBuf, pattern: String },
    /// The path is empty or otherwise unusable.
    #[error("invalid path {path:?}: {reason}")]
    InvalidPath { path: String, reason: &'static str },
    /// A deny glob does not parse.
    #[error("invalid deny pattern {pattern}")]
    InvalidPattern {
        pattern: String,
        #[source]
        source: globset::Error,
    },
    /// The target exists and the call must not replace it.
    #[error("file already exists: {path}")]
    AlreadyExists { path: PathBuf },
    /// A compare-and-swap write found the file changed since it was read; nothing was written.
    #[error("{path} changed on disk since it was read; nothing was written")]
    Changed { path: PathBuf },
    /// Any other I/O failure, with what we were doing.
    #[error("{action} {path}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl Error {
    /// A stable machine-readable code for this error.
    pub fn code(&self) -> &'static str {
        match self {
            Error::OutsideRoots { .. } | Error::Denied { .. } => "PATH_DENIED",
            Error::InvalidPath { .. } | Error::InvalidPattern { .. } => "INVALID_ARGUMENT",
            Error::AlreadyExists { .. } => "ALREADY_EXISTS",
            Error::Changed { .. } => "CHANGE_CONFLICT",
            Error::Io { source, .. } if source.kind() == io::ErrorKind::NotFound => "NOT_FOUND",
            Error::Io { .. } => "IO_ERROR",
        }
    }
}

pub(crate) fn io_err<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(io::Error) -> Error + 'a {
    move |source| Error::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

pub(crate) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Where outside paths may point: a set of roots and optional deny globs.
#[derive(Debug, Clone)]
pub struct PathPolicy {
    roots: Vec<PathBuf>,
    deny: Vec<String>,
    deny_set: globset::GlobSet,
}

impl PathPolicy {
    /// A policy allowing everything below `roots` (each canonicalised; missing roots are
    /// dropped because nothing can be inside them).
    pub fn new<I, P>(roots: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        let roots = roots
            .into_iter()
            .filter_map(|r| std::fs::canonicalize(r.as_ref()).ok())
            .collect();
        PathPolicy {
            roots,
            deny: Vec::new(),
            deny_set: globset::GlobSet::empty(),
        }
    }

    /// Adds deny globs (matched against the canonical absolute path and against the path
    /// relative to its root), e.g. `**/.git/**` or `*.key`.
    pub fn with_deny<I, S>(mut self, patterns: I) -> Result<Self, Error>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut builder = globset::GlobSetBuilder::new();
        let all: Vec<String> = self
            .deny
            .iter()
            .cloned()
            .chain(patterns.into_iter().map(Into::into))
            .collect();
        for p in all {
            let glob = globset::GlobBuilder::new(&p)
                .literal_separator(false)
                .build()
                .map_err(|source| Error::InvalidPattern {
                    pattern: p.clone(),
                    source,
                })?;
            builder.add(glob);
            if !self.deny.contains(&p) {
                self.deny.push(p);
            }
        }
        self.deny_set = builder.build().map_err(|source| Error::InvalidPattern {
            pattern: self.deny.join(","),
            source,
        })?;
        Ok(self)
    }

    /// The canonical roots.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// How a canonical path inside a root is shown to users and models: relative to the root
    /// it lies in, `/`-separated on every platform. A path outside every root is shown whole.
    pub fn relative(&self, canonical: &Path) -> String {
        let Some(rest) = self
            .roots
            .iter()
            .find_map(|root| canonical.strip_prefix(root).ok())
        else {
            return canonical.to_string_lossy().into_owned();
        };
        rest.components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/")
    }

    /// Resolves an existing path from outside: relative paths are taken against the first
    /// root; the result is canonical and inside a root.
    pub fn resolve_existing(&self, raw: &str) -> Result<PathBuf, Error> {
        let joined = self.join(raw)?;
        let canonical = std::fs::canonicalize(&joined).map_err(io_err("resolving", &joined))?;
        self.check(&canonical)?;
        Ok(canonical)
    }

    /// Resolves a path that may not exist yet (an output file or directory): the deepest
    /// existing ancestor is canonicalised and must be inside a root; the rest must be plain
    /// names (no `..`).
    pub fn resolve_new(&self, raw: &str) -> Result<PathBuf, Error> {
        let joined = self.join(raw)?;
        let mut existing = joined.as_path();
        let mut tail: Vec<&std::ffi::OsStr> = Vec::new();
        loop {
            if existing.exists() {
                break;
            }
            match (existing.parent(), existing.file_name()) {
                (Some(parent), Some(name)) => {
                    tail.push(name);
                    existing = parent;
                }
                _ => {
                    return Err(Error::InvalidPath {
                        path: raw.to_string(),
                        reason: "no existing ancestor",
                    });
                }
            }
        }
        let mut canonical =
            std::fs::canonicalize(existing).map_err(io_err("resolving", existing))?;
        for name in tail.iter().rev() {
            canonical.push(name);
        }
        self.check(&canonical)?;
        Ok(canonical)
    }

    fn join(&self, raw: &str) -> Result<PathBuf, Error> {
        if raw.trim().is_empty() {
            return Err(Error::InvalidPath {
                path: raw.to_string(),
                reason: "empty path",
            });
        }
        if raw.contains('\0') {
            return Err(Error::InvalidPath {
                path: raw.to_string(),
                reason: "contains NUL",
            });
        }
        let p = Path::new(raw);
        if p.is_absolute() {
            return Ok(p.to_path_buf());
        }
        match self.roots.first() {
            Some(root) => Ok(root.join(p)),
            None => Err(Error::OutsideRoots {
                path: p.to_path_buf(),
            }),
        }
    }

    /// Checks an already canonical path against the roots and deny globs.
    pub fn check(&self, canonical: &Path) -> Result<(), Error> {
        if canonical
            .components()
            .any(|c| matches!(c, Component::ParentDir))
        {
            return Err(Error::InvalidPath {
                path: canonical.display().to_string(),
                reason: "contains ..",
            });
        }
        let Some(root) = self.roots.iter().find(|r| canonical.starts_with(r)) else {
            return Err(Error::OutsideRoots {
                path: canonical.to_path_buf(),
            });
        };
        if !self.deny.is_empty() {
            let relative = canonical.strip_prefix(root).unwrap_or(canonical);
            for candidate in [canonical, relative] {
                if let Some(i) = self.deny_set.matches(candidate).first() {
                    return Err(Error::Denied {
                        path: canonical.to_path_buf(),
                        pattern: self.deny.get(*i).cloned().unwrap_or_default(),
                    });
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_are_slash_separated_from_their_root() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("designs/sub")).unwrap();
        std::fs::File::create(root.path().join("designs/sub/p.yaml")).unwrap();
        let policy = PathPolicy::new([root.path()]);
        let canonical = policy.resolve_existing("designs/sub/p.yaml").unwrap();
        assert_eq!(policy.relative(&canonical), "designs/sub/p.yaml");
        let outside = Path::new("/elsewhere/x.txt");
        assert_eq!(policy.relative(outside), outside.to_string_lossy());
    }

    #[test]
    fn policy_refuses_parent_escape_and_symlink_escape() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::File::create(outside.path().join("secret.txt")).unwrap();
        let root = tempfile::tempdir().unwrap();
        std::fs::File::create(root.path().join("ok.txt")).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(outside.path(), root.path().join("link")).unwrap();
        let policy = PathPolicy::new([root.path()]);
        assert!(policy.resolve_existing("ok.txt").is_ok());
        let escape = format!(
            "../{}/secret.txt",
            outside.path().file_name().unwrap().to_string_lossy()
        );
        assert_eq!(
            policy.resolve_existing(&escape).unwrap_err().code(),
            "PATH_DENIED"
        );
        #[cfg(unix)]
        assert_eq!(
            policy
                .resolve_existing("link/secret.txt")
                .unwrap_err()
                .code(),
            "PATH_DENIED"
        );
        assert_eq!(
            policy.resolve_new("link/new.txt").unwrap_err().code(),
            "PATH_DENIED",
            "a new file under a symlink that leaves the root is refused"
        );
        assert!(policy.resolve_new("sub/dir/new.txt").is_ok());
        assert_eq!(
            policy.resolve_existing("missing.txt").unwrap_err().code(),
            "NOT_FOUND"
        );
        assert_eq!(
            policy.resolve_existing("").unwrap_err().code(),
            "INVALID_ARGUMENT"
        );
    }

    #[test]
    fn policy_deny_globs() {
        let root = tempfile::tempdir().unwrap();
        std::fs::File::create(root.path().join("a.key")).unwrap();
        std::fs::File::create(root.path().join("a.txt")).unwrap();
        let policy = PathPolicy::new([root.path()]).with_deny(["*.key"]).unwrap();
        assert_eq!(
            policy.resolve_existing("a.key").unwrap_err().code(),
            "PATH_DENIED"
        );
        assert!(policy.resolve_existing("a.txt").is_ok());
    }
}
