//! File-system primitives every Keiri crate shares: atomic writes and the path policy.
//!
//! * [`write_atomic`] writes a temp file `.<name>.keiri-tmp-<random>` in the target's
//!   directory, fsyncs it and renames it over the target, so an interrupted save leaves the old
//!   file intact; an existing file keeps its permissions (0644 stays 0644).
//! * [`write_new`] does the same but never replaces an existing file; [`write_unique`] picks
//!   the first free `name`, `name_2`, `name_3`, … and reserves it atomically ([`first_free`]
//!   previews the name it would pick).
//! * [`save`] is the one rule for a file that exists already ([`Existing`]: overwrite, skip or
//!   rename), used by every block that writes a file and by keiri-xlsx's patches;
//!   [`save_with`] is the same for content written in pieces into the temp file (a CSV of
//!   millions of rows is never whole in memory; a fill that fails leaves no file).
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
//! * [`unfit_root`] says why a folder cannot be the workspace (the root every path from outside
//!   must stay inside): the file-system root, the home folder itself, a system folder.
//! * [`safe_file_name`] makes a file name safe on every platform from untrusted text (an
//!   upload's name); [`stem_and_ext`] splits a name where a suffix goes (`報告_2.xlsx`).
//! * [`catch_panic`] turns a panic in code that reads an untrusted file into an error, so one
//!   bad file cannot take a server down (keiri-docs' parsers and keiri-xlsx's patches use it).
//!
//! This crate must not know about plans, workbooks or documents. `tempfile` is used for the
//! temp file because it creates it with `O_EXCL` and a random name and cleans it up on drop;
//! `globset` gives gitignore-style deny globs without a hand-written matcher.

use std::io;
use std::path::{Component, Path, PathBuf};

mod names;
mod panic;
mod roots;
mod write;

pub use names::{safe_file_name, stem_and_ext};
pub use panic::catch_panic;
pub use roots::unfit_root;
pub use write::{
    Existing, LOCK_SUFFIX, Lock, TEMP_MARK, first_free, lock, save, save_with, sweep, try_lock,
    write_atomic, write_new, write_unique,
};

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
    /// The raw path text is refused before resolution (`~`, a URL, URL-encoded characters).
    #[error("path {path:?} refused: {reason}")]
    Refused { path: String, reason: &'static str },
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
            Error::OutsideRoots { .. } | Error::Denied { .. } | Error::Refused { .. } => {
                "PATH_DENIED"
            }
            Error::InvalidPath { .. } | Error::InvalidPattern { .. } => "INVALID_ARGUMENT",
            Error::AlreadyExists { .. } => "ALREADY_EXISTS",
            Error::Changed { .. } => "CHANGE_CONFLICT",
            Error::Io { source, .. } if source.kind() == io::ErrorKind::NotFound => "NOT_FOUND",
            Error::Io { source, .. } if in_use(source) => "FILE_LOCKED",
            Error::Io { .. } => "IO_ERROR",
        }
    }

    /// Whether the path was refused by the policy (outside the roots, denied, or refused as
    /// written): `PATH_DENIED` in every front-end, whatever the file system holds. For the
    /// front-ends that map errors to their own codes by variant (as [`Error::code`] does).
    pub fn is_refused(&self) -> bool {
        matches!(
            self,
            Error::OutsideRoots { .. } | Error::Denied { .. } | Error::Refused { .. }
        )
    }

    /// Whether the file (or a folder on its way) does not exist: `NOT_FOUND`.
    pub fn is_missing(&self) -> bool {
        matches!(self, Error::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }
}

/// Whether a write failed because the file (or its folder) cannot be written now: open in
/// another program that locks it (Excel holds an open workbook so, and Windows refuses to
/// replace it: access denied, or a sharing or lock violation), or read-only. The user can do
/// something about either (close the file, allow writing) and try again, unlike other I/O
/// failures.
pub fn in_use(e: &io::Error) -> bool {
    /// ERROR_SHARING_VIOLATION and ERROR_LOCK_VIOLATION.
    const WINDOWS_IN_USE: [i32; 2] = [32, 33];
    e.kind() == io::ErrorKind::PermissionDenied
        || (cfg!(windows)
            && e.raw_os_error()
                .is_some_and(|c| WINDOWS_IN_USE.contains(&c)))
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

/// The longest path text the policy considers (bytes). Longer requests are refused before the
/// file system sees them, so a caller cannot probe with megabyte-long names.
pub const MAX_PATH_BYTES: usize = 4096;

/// Where outside paths may point: a set of roots, deny globs and denied directories.
///
/// This is the one decision point for every path that crosses a trust boundary. A *confined*
/// policy ([`PathPolicy::new`], for HTTP, MCP and LLM tool callers) screens the raw text first
/// (NUL, `~`, URLs such as `file:`, URL-encoded `.`/`/`/`\`, over-long paths are refused; `\` is
/// read as a separator on every platform, so `..\..\x` is the traversal it looks like), then
/// resolves the path with symlinks followed and refuses it unless it lies inside a root. A
/// *trusted* policy ([`PathPolicy::trusted`], for the user's own command-line arguments)
/// accepts any location; deny globs and denied directories apply to both.
#[derive(Debug, Clone)]
pub struct PathPolicy {
    roots: Vec<PathBuf>,
    confined: bool,
    deny: Vec<String>,
    deny_set: globset::GlobSet,
    deny_dirs: Vec<PathBuf>,
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
            confined: true,
            deny: Vec::new(),
            deny_set: globset::GlobSet::empty(),
            deny_dirs: Vec::new(),
        }
    }

    /// A policy for paths the user typed themselves (command-line arguments): any location is
    /// accepted, relative paths resolve against `base`. Deny globs and denied directories
    /// still apply.
    pub fn trusted(base: impl AsRef<Path>) -> Self {
        let base = base.as_ref();
        let root = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
        PathPolicy {
            roots: vec![root],
            confined: false,
            deny: Vec::new(),
            deny_set: globset::GlobSet::empty(),
            deny_dirs: Vec::new(),
        }
    }

    /// True for a policy that keeps paths inside its roots.
    pub fn is_confined(&self) -> bool {
        self.confined
    }

    /// Adds deny globs (matched case-insensitively against the canonical absolute path and
    /// against the path relative to its root), e.g. `**/.git/**` or `*.key`. Case-insensitive
    /// because macOS and Windows file systems are: `C.KEY` opens the same file as `c.key`.
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
                .case_insensitive(true)
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

    /// Refuses everything inside `dir` (and `dir` itself), e.g. the settings folder. Kept both
    /// as given and canonicalised, so it holds whether or not the folder exists yet.
    pub fn with_denied_dir(mut self, dir: impl AsRef<Path>) -> Self {
        let dir = dir.as_ref();
        if dir.is_absolute() {
            self.deny_dirs.push(dir.to_path_buf());
        }
        // A folder that does not exist yet is denied where it will be: its deepest existing
        // ancestor resolved (so `/var/…` also matches `/private/var/…` on macOS).
        if let Ok(resolved) = self.resolve_ancestors("", dir) {
            self.deny_dirs.push(resolved);
        }
        self
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
    /// root; the result is canonical and allowed.
    ///
    /// Where the path *would* lead is checked before its existence, so a refused location
    /// answers `PATH_DENIED` whether or not the file exists (no probing outside the roots).
    pub fn resolve_existing(&self, raw: &str) -> Result<PathBuf, Error> {
        let joined = self.join(raw)?;
        let target = self.resolve_ancestors(raw, &joined)?;
        self.check(&target)?;
        let canonical = std::fs::canonicalize(&joined).map_err(io_err("resolving", &joined))?;
        self.check(&canonical)?;
        Ok(canonical)
    }

    /// Resolves a path that may not exist yet (an output file or directory): the deepest
    /// existing ancestor is canonicalised and must be allowed; the rest must be plain names
    /// (no `..`).
    pub fn resolve_new(&self, raw: &str) -> Result<PathBuf, Error> {
        let joined = self.join(raw)?;
        let canonical = self.resolve_ancestors(raw, &joined)?;
        self.check(&canonical)?;
        Ok(canonical)
    }

    /// The deepest existing ancestor of `joined`, canonicalised, with the missing names
    /// appended. A dangling symlink counts as existing (and then fails to resolve), so a new
    /// file cannot be created through a link that points outside.
    fn resolve_ancestors(&self, raw: &str, joined: &Path) -> Result<PathBuf, Error> {
        let mut existing = joined;
        let mut tail: Vec<&std::ffi::OsStr> = Vec::new();
        loop {
            if std::fs::symlink_metadata(existing).is_ok() {
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
        Ok(canonical)
    }

    /// Screens the raw text and joins it to the first root.
    fn join(&self, raw: &str) -> Result<PathBuf, Error> {
        if raw.trim().is_empty() {
            return Err(Error::InvalidPath {
                path: raw.to_string(),
                reason: "empty path",
            });
        }
        if raw.contains('\0') {
            return Err(Error::InvalidPath {
                path: raw.escape_debug().to_string(),
                reason: "contains NUL",
            });
        }
        if raw.len() > MAX_PATH_BYTES {
            return Err(Error::InvalidPath {
                path: raw.chars().take(64).collect::<String>() + "…",
                reason: "path too long",
            });
        }
        let normalised;
        let text = if self.confined {
            if let Some(reason) = suspicious(raw) {
                return Err(Error::Refused {
                    path: raw.to_string(),
                    reason,
                });
            }
            // `\` separates on Windows; read it as a separator everywhere so the checks
            // below see the same components the Windows file system would.
            normalised = raw.replace('\\', "/");
            normalised.as_str()
        } else {
            raw
        };
        let p = Path::new(text);
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

    /// Checks an already canonical path against the roots, denied directories and deny globs.
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
        let root = self.roots.iter().find(|r| canonical.starts_with(r));
        if self.confined && root.is_none() {
            return Err(Error::OutsideRoots {
                path: canonical.to_path_buf(),
            });
        }
        if let Some(dir) = self
            .deny_dirs
            .iter()
            .find(|d| starts_with_ignore_case(canonical, d))
        {
            return Err(Error::Denied {
                path: canonical.to_path_buf(),
                pattern: dir.display().to_string(),
            });
        }
        if !self.deny.is_empty() {
            let relative = root
                .and_then(|r| canonical.strip_prefix(r).ok())
                .unwrap_or(canonical);
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

/// Why raw path text from an untrusted caller is refused before it is resolved, if it is:
/// forms that a shell, a browser or a URL parser would turn into another path (`~`, `file:`,
/// `%2e%2e%2f`) are never what a tool call means, so they are refused rather than guessed at.
/// Public for callers that join a relative path to a base folder themselves before
/// [`PathPolicy`] sees it (keiri-run's plan paths), so the raw text is judged the same way.
pub fn suspicious(raw: &str) -> Option<&'static str> {
    if raw.starts_with('~') {
        return Some("`~` is not expanded; give the path itself");
    }
    // A URL scheme: two or more scheme characters before the first `:` (one letter is a
    // Windows drive such as `C:`).
    if let Some((scheme, _)) = raw.split_once(':') {
        let mut chars = scheme.chars();
        let starts_with_letter = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
        if scheme.len() >= 2
            && starts_with_letter
            && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        {
            return Some("a URL is not a path");
        }
    }
    // URL-encoded `.`, `/`, `\`, `%` and NUL: a decoder further along could turn them into
    // traversal, so the encoded forms are refused outright.
    let lower = raw.to_ascii_lowercase();
    if ["%2e", "%2f", "%5c", "%25", "%00"]
        .iter()
        .any(|e| lower.contains(e))
    {
        return Some("URL-encoded path characters");
    }
    None
}

/// `path.starts_with(prefix)`, comparing components without regard to case, because the
/// settings folder on a case-insensitive file system is reachable under any spelling.
fn starts_with_ignore_case(path: &Path, prefix: &Path) -> bool {
    let mut path = path.components();
    prefix.components().all(|p| {
        path.next().is_some_and(|c| {
            c.as_os_str().to_string_lossy().to_lowercase()
                == p.as_os_str().to_string_lossy().to_lowercase()
        })
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_refused_write_is_file_locked_and_other_failures_are_io_errors() {
        let write = |source| {
            Error::Io {
                action: "writing",
                path: PathBuf::from("outputs/report.xlsx"),
                source,
            }
            .code()
        };
        assert_eq!(
            write(io::Error::from(io::ErrorKind::PermissionDenied)),
            "FILE_LOCKED"
        );
        assert_eq!(write(io::Error::from(io::ErrorKind::NotFound)), "NOT_FOUND");
        assert_eq!(write(io::Error::other("disk full")), "IO_ERROR");
        // A sharing violation is a lock on Windows only; elsewhere the number means nothing.
        assert_eq!(
            write(io::Error::from_raw_os_error(32)) == "FILE_LOCKED",
            cfg!(windows)
        );
    }

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
    #[test]
    fn deny_globs_ignore_case() {
        let root = tempfile::tempdir().unwrap();
        std::fs::File::create(root.path().join("c.KEY")).unwrap();
        std::fs::File::create(root.path().join(".ENV")).unwrap();
        let policy = PathPolicy::new([root.path()])
            .with_deny(["*.key", "**/.env"])
            .unwrap();
        for raw in ["c.KEY", ".ENV"] {
            assert_eq!(
                policy.resolve_existing(raw).unwrap_err().code(),
                "PATH_DENIED",
                "{raw}"
            );
        }
        assert_eq!(
            policy.resolve_new("new.Key").unwrap_err().code(),
            "PATH_DENIED"
        );
    }

    // check(raw path, expected error code) against a confined policy rooted at `ws/root`,
    // beside which `ws/outside/secret.txt` exists.
    fn check_refused(cases: &[&str]) {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(ws.path().join("outside")).unwrap();
        std::fs::File::create(ws.path().join("outside/secret.txt")).unwrap();
        std::fs::File::create(root.join("ok.txt")).unwrap();
        let policy = PathPolicy::new([&root]);
        let abs_secret = ws.path().join("outside/secret.txt").display().to_string();
        for raw in cases {
            let raw = raw.replace("{abs}", &abs_secret);
            for result in [policy.resolve_existing(&raw), policy.resolve_new(&raw)] {
                let err = result.expect_err(&raw);
                assert!(
                    matches!(err.code(), "PATH_DENIED" | "INVALID_ARGUMENT"),
                    "{raw}: {err}"
                );
            }
        }
        assert!(policy.resolve_existing("sub/../ok.txt").is_ok());
        assert!(policy.resolve_existing("sub\\..\\ok.txt").is_ok());
    }

    #[test]
    fn confined_policy_refuses_traversal_in_every_spelling() {
        check_refused(&[
            "../outside/secret.txt",
            "..\\outside\\secret.txt",
            "sub\\..\\..\\outside\\secret.txt",
            "{abs}",
            "/etc/passwd",
            "/proc/self/environ",
            "file:///etc/passwd",
            "file:../outside/secret.txt",
            "~/secret.txt",
            "~",
            "%2e%2e/outside/secret.txt",
            "..%2Foutside%2Fsecret.txt",
            "..%5coutside%5csecret.txt",
            "%252e%252e/outside/secret.txt",
            "ok.txt\0.png",
            "../outside/missing.txt",
            "../missing-dir/new.txt",
            "",
        ]);
        let long = "a/".repeat(MAX_PATH_BYTES);
        check_refused(&[long.as_str()]);
    }

    #[test]
    fn a_refused_location_does_not_reveal_whether_a_file_exists() {
        let root = tempfile::tempdir().unwrap();
        let policy = PathPolicy::new([root.path()]);
        assert_eq!(
            policy
                .resolve_existing("/definitely/missing/file.txt")
                .unwrap_err()
                .code(),
            "PATH_DENIED"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_dangling_symlink_is_not_a_way_to_create_files_outside() {
        let outside = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("created.txt"),
            root.path().join("dangling"),
        )
        .unwrap();
        let policy = PathPolicy::new([root.path()]);
        assert!(policy.resolve_new("dangling").is_err());
    }

    #[test]
    fn denied_dir_is_refused_under_any_spelling_and_even_when_missing() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("Config")).unwrap();
        std::fs::File::create(root.path().join("Config/settings.json")).unwrap();
        let policy = PathPolicy::new([root.path()])
            .with_denied_dir(root.path().join("Config"))
            .with_denied_dir(root.path().join("not-yet"));
        assert_eq!(
            policy
                .resolve_existing("Config/settings.json")
                .unwrap_err()
                .code(),
            "PATH_DENIED"
        );
        assert_eq!(
            policy.resolve_new("config/new.json").unwrap_err().code(),
            "PATH_DENIED"
        );
        assert_eq!(
            policy.resolve_new("not-yet/x").unwrap_err().code(),
            "PATH_DENIED"
        );
        assert!(policy.resolve_new("other/x").is_ok());
    }

    #[test]
    fn trusted_policy_accepts_the_users_own_paths_anywhere() {
        let base = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let file = elsewhere.path().join("請求書.txt");
        std::fs::File::create(&file).unwrap();
        std::fs::File::create(elsewhere.path().join("a.key")).unwrap();
        let policy = PathPolicy::trusted(base.path())
            .with_deny(["*.key"])
            .unwrap();
        assert!(!policy.is_confined());
        let got = policy
            .resolve_existing(&file.display().to_string())
            .unwrap();
        assert_eq!(got, file.canonicalize().unwrap());
        let a_key = elsewhere.path().join("a.key").display().to_string();
        assert_eq!(
            policy.resolve_existing(&a_key).unwrap_err().code(),
            "PATH_DENIED"
        );
    }

    proptest::proptest! {
        /// Whatever the text, a confined policy either refuses it with a code or returns a
        /// path inside its root; it never panics.
        #[test]
        fn confined_resolution_stays_inside_the_root(raw in "[a-z./\\\\%~:0-9A-F\\x00]{0,40}") {
            let root = tempfile::tempdir().unwrap();
            let policy = PathPolicy::new([root.path()]);
            let canonical_root = root.path().canonicalize().unwrap();
            for result in [policy.resolve_existing(&raw), policy.resolve_new(&raw)] {
                match result {
                    Ok(p) => proptest::prop_assert!(p.starts_with(&canonical_root), "{raw:?} -> {p:?}"),
                    Err(e) => proptest::prop_assert!(!e.code().is_empty()),
                }
            }
        }
    }
}
