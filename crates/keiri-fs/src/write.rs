//! Atomic writes, the per-target lock that makes compare-and-swap writes possible, and the
//! sweep of what a killed writer leaves behind.
//!
//! # Names beside the target
//!
//! A write of `dir/book.xlsx` uses two hidden files in `dir`, both named after the target so a
//! person who sees one knows where it came from:
//!
//! * `.book.xlsx.keiri-tmp-<random>` — the new content, written, fsynced, then renamed over
//!   (or hard-linked to) the target. It lives in the target's directory because a rename is
//!   only atomic within one file system.
//! * `.book.xlsx.keiri-lock` — an advisory lock file (`flock` on Unix, `LockFileEx` on Windows)
//!   held for as long as the write runs. On Unix the holder removes it before it lets go.
//!
//! A process killed mid-write leaves its temp file (and lock file) behind, but never a partial
//! target: the target only changes by the rename. [`sweep`] removes such leftovers. It only
//! touches the files of a target whose lock it can take, and every writer holds that lock for
//! the whole life of its temp file, so the sweep never removes a temp file that a live writer
//! (in this process or another) is still filling — no age guess is needed.
//!
//! # Compare-and-swap
//!
//! [`lock`] takes the target's lock: first a per-path lock inside this process (so that the
//! threads of one `keiri serve` queue up instead of racing), then the lock file (so that other
//! keiri processes queue up too). A read-modify-write holds the [`Lock`] from the read to the
//! rename, and [`Lock::write_if_unchanged`] re-reads the target just before the rename and
//! refuses with `CHANGE_CONFLICT` ([`Error::Changed`]) when it no longer holds what was read.
//! Among keiri writers that leaves no window at all. A program that ignores the lock file (a
//! text editor, Excel) can still replace the file between that last comparison and the rename —
//! a window of one `rename` system call; its change is then overwritten. No portable file-system
//! operation closes that window for writers that take no lock.
//!
//! # Modes
//!
//! Replacing a file keeps its permissions: on Unix the target's mode is copied onto the temp
//! file before the rename, so a 0644 file stays 0644 (a temp file is created 0600). A new file
//! keeps the temp file's owner-only mode.

use std::collections::{BTreeMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, OnceLock, PoisonError};

use crate::{Error, io_err, parent_dir};

/// What marks a temp file: `.<target name>.keiri-tmp-<random>`.
pub const TEMP_MARK: &str = ".keiri-tmp-";
/// What marks a lock file: `.<target name>.keiri-lock`.
pub const LOCK_SUFFIX: &str = ".keiri-lock";
/// The longest part of a target's name used in a temp or lock name, in bytes, so that
/// `.{name}.keiri-tmp-{random}` stays under the 255-byte name limit of common file systems.
const MAX_NAME_BYTES: usize = 200;

/// The target's file name as it appears inside its temp and lock names.
fn owner_name(path: &Path) -> Result<String, Error> {
    let Some(name) = path.file_name() else {
        return Err(Error::InvalidPath {
            path: path.display().to_string(),
            reason: "no file name",
        });
    };
    let name = name.to_string_lossy();
    let mut end = name.len().min(MAX_NAME_BYTES);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    Ok(name[..end].to_string())
}

fn lock_name(owner: &str) -> String {
    format!(".{owner}{LOCK_SUFFIX}")
}

/// The target name a leftover file belongs to, if `name` is a temp or lock file of ours.
fn leftover_owner(name: &str) -> Option<&str> {
    let rest = name.strip_prefix('.')?;
    if let Some(owner) = rest.strip_suffix(LOCK_SUFFIX) {
        return (!owner.is_empty()).then_some(owner);
    }
    let at = rest.rfind(TEMP_MARK)?;
    let owner = &rest[..at];
    (!owner.is_empty()).then_some(owner)
}

/// The per-path locks held in this process.
struct Held {
    paths: Mutex<HashSet<PathBuf>>,
    freed: Condvar,
}

fn held() -> &'static Held {
    static HELD: OnceLock<Held> = OnceLock::new();
    HELD.get_or_init(|| Held {
        paths: Mutex::new(HashSet::new()),
        freed: Condvar::new(),
    })
}

/// The key of a target in this process: its directory canonicalised (when it exists), so two
/// spellings of one file share a lock.
fn local_key(path: &Path) -> PathBuf {
    let dir = parent_dir(path);
    match (std::fs::canonicalize(dir), path.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => path.to_path_buf(),
    }
}

enum FileLock {
    /// The lock file, locked and still the file at its path.
    Held(File),
    /// Another holder has it (only from a non-blocking attempt).
    Busy,
    /// The file system offers no advisory locks.
    Unsupported,
}

/// Opens (creating if needed) and locks the lock file at `path`. On Unix a holder removes the
/// file before it lets go, so a lock won on a file that is no longer at `path` is worthless:
/// then it starts over with the file that is there now.
fn lock_file(path: &Path, wait: bool) -> io::Result<FileLock> {
    loop {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        let locked = if wait {
            file.lock()
        } else {
            match file.try_lock() {
                Ok(()) => Ok(()),
                Err(std::fs::TryLockError::WouldBlock) => return Ok(FileLock::Busy),
                Err(std::fs::TryLockError::Error(e)) => Err(e),
            }
        };
        match locked {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Unsupported => return Ok(FileLock::Unsupported),
            Err(e) => return Err(e),
        }
        if still_at(&file, path) {
            return Ok(FileLock::Held(file));
        }
    }
}

#[cfg(unix)]
fn still_at(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn still_at(_file: &File, _path: &Path) -> bool {
    // Lock files are never removed on other platforms (see `release_lock_file`).
    true
}

/// Lets go of a lock file. On Unix the file is removed first, while it is still locked, so no
/// lock file stays behind; a waiter that opened it sees that it is gone and starts over. On
/// other platforms removing an open file makes opening it fail for a while, so it stays.
fn release_lock_file(file: File, path: &Path) {
    #[cfg(unix)]
    {
        let _ = std::fs::remove_file(path);
    }
    #[cfg(not(unix))]
    let _ = path;
    drop(file);
}

/// The write lock of one target path; see the module documentation. Dropping it releases it.
/// While holding it, write the target through it: [`write_atomic`] on the same path would wait
/// for this very lock.
#[derive(Debug)]
pub struct Lock {
    path: PathBuf,
    key: PathBuf,
    lock_path: PathBuf,
    file: Option<File>,
}

/// Takes the write lock of `path` (which need not exist yet; its directory must), waiting for
/// other holders in this process and in other keiri processes.
pub fn lock(path: &Path) -> Result<Lock, Error> {
    let owner = owner_name(path)?;
    let key = local_key(path);
    {
        let held = held();
        let mut paths = held.paths.lock().unwrap_or_else(PoisonError::into_inner);
        while paths.contains(&key) {
            paths = held
                .freed
                .wait(paths)
                .unwrap_or_else(PoisonError::into_inner);
        }
        paths.insert(key.clone());
    }
    // From here on the guard exists, so any early return below releases the local lock.
    let mut guard = Lock {
        path: path.to_path_buf(),
        key,
        lock_path: parent_dir(path).join(lock_name(&owner)),
        file: None,
    };
    match lock_file(&guard.lock_path, true).map_err(io_err("locking", &guard.lock_path))? {
        FileLock::Held(file) => {
            guard.file = Some(file);
            // Holding the lock, no live writer of this target exists, so its temp files are
            // what killed writers left: each write of a target sweeps its own leftovers, and a
            // killed `keiri run --write` never leaves them behind for good.
            remove_temps(parent_dir(path), &owner);
        }
        // Without advisory locks only this process is kept in order; the comparison before the
        // rename still catches other writers.
        FileLock::Busy | FileLock::Unsupported => {
            let _ = std::fs::remove_file(&guard.lock_path);
        }
    }
    Ok(guard)
}

/// Takes the write lock of `path` if nobody holds it, in this process or another; `None` when
/// someone does (or the file system has no advisory locks, so liveness cannot be told).
pub fn try_lock(path: &Path) -> Result<Option<Lock>, Error> {
    let owner = owner_name(path)?;
    let key = local_key(path);
    {
        let mut paths = held().paths.lock().unwrap_or_else(PoisonError::into_inner);
        if paths.contains(&key) {
            return Ok(None);
        }
        paths.insert(key.clone());
    }
    let mut guard = Lock {
        path: path.to_path_buf(),
        key,
        lock_path: parent_dir(path).join(lock_name(&owner)),
        file: None,
    };
    match lock_file(&guard.lock_path, false).map_err(io_err("locking", &guard.lock_path))? {
        FileLock::Held(file) => {
            guard.file = Some(file);
            Ok(Some(guard))
        }
        FileLock::Busy | FileLock::Unsupported => Ok(None),
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        if let Some(file) = self.file.take() {
            release_lock_file(file, &self.lock_path);
        }
        let held = held();
        let mut paths = held.paths.lock().unwrap_or_else(PoisonError::into_inner);
        paths.remove(&self.key);
        held.freed.notify_all();
    }
}

impl Lock {
    /// The target path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Atomically replaces (or creates) the target with `bytes`, keeping its permissions.
    pub fn write(&self, bytes: &[u8]) -> Result<(), Error> {
        self.replace(None, |out| out.write_all(bytes))
    }

    /// [`Lock::write`] of what `fill` writes (in pieces, so a large file is never whole in
    /// memory); an error from `fill` leaves the target as it was.
    pub fn write_with(&self, fill: impl FnOnce(&mut File) -> io::Result<()>) -> Result<(), Error> {
        self.replace(None, fill)
    }

    /// Like [`Lock::write`], but only if the target still holds exactly `expected` (the content
    /// the new one was computed from); otherwise nothing is written and the error is
    /// [`Error::Changed`] (`CHANGE_CONFLICT`). The comparison is the last step before the rename.
    pub fn write_if_unchanged(&self, expected: &[u8], bytes: &[u8]) -> Result<(), Error> {
        self.replace(Some(expected), |out| out.write_all(bytes))
    }

    /// Atomically creates the target with `bytes`; [`Error::AlreadyExists`] if it exists. The
    /// check and the creation are one operation (a hard link or `RENAME_NOREPLACE`).
    pub fn write_new(&self, bytes: &[u8]) -> Result<(), Error> {
        self.write_new_with(|out| out.write_all(bytes))
    }

    /// [`Lock::write_new`] of what `fill` writes (in pieces, so a large file is never whole in
    /// memory); an error from `fill` leaves no file.
    pub fn write_new_with(
        &self,
        fill: impl FnOnce(&mut File) -> io::Result<()>,
    ) -> Result<(), Error> {
        let tmp = write_temp(&self.path, fill)?;
        match tmp.persist_noclobber(&self.path) {
            Ok(_) => {
                sync_dir(parent_dir(&self.path));
                Ok(())
            }
            Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => Err(Error::AlreadyExists {
                path: self.path.clone(),
            }),
            Err(e) => Err(Error::Io {
                action: "creating",
                path: self.path.clone(),
                source: e.error,
            }),
        }
    }

    fn replace(
        &self,
        expected: Option<&[u8]>,
        fill: impl FnOnce(&mut File) -> io::Result<()>,
    ) -> Result<(), Error> {
        let path = &self.path;
        let tmp = write_temp(path, fill)?;
        keep_permissions(path, tmp.as_file())?;
        if let Some(expected) = expected
            && !holds(path, expected)?
        {
            return Err(Error::Changed { path: path.clone() });
        }
        tmp.persist(path).map_err(|e| Error::Io {
            action: "renaming a temp file onto",
            path: path.clone(),
            source: e.error,
        })?;
        sync_dir(parent_dir(path));
        Ok(())
    }
}

/// Copies the permissions of an existing `path` onto the temp file that will replace it
/// (a temp file is created owner-only).
#[cfg(unix)]
fn keep_permissions(path: &Path, tmp: &File) -> Result<(), Error> {
    match std::fs::metadata(path) {
        Ok(meta) => tmp
            .set_permissions(meta.permissions())
            .map_err(io_err("setting the permissions of a temp file for", path)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(Error::Io {
            action: "reading metadata of",
            path: path.to_path_buf(),
            source,
        }),
    }
}

#[cfg(not(unix))]
fn keep_permissions(_path: &Path, _tmp: &File) -> Result<(), Error> {
    Ok(())
}

/// Whether `path` holds exactly `expected`. A missing file holds nothing. Reads at most one
/// byte more than `expected`, so a file that grew is not read whole.
fn holds(path: &Path, expected: &[u8]) -> Result<bool, Error> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(source) => {
            return Err(Error::Io {
                action: "reading",
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let mut current = Vec::with_capacity(expected.len());
    file.take(expected.len() as u64 + 1)
        .read_to_end(&mut current)
        .map_err(io_err("reading", path))?;
    Ok(current == expected)
}

/// Writes a fully flushed temp file beside `path` with what `fill` writes and returns it, not
/// yet renamed (an error from `fill` removes it).
fn write_temp(
    path: &Path,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> Result<tempfile::NamedTempFile, Error> {
    let dir = parent_dir(path);
    let prefix = format!(".{}{TEMP_MARK}", owner_name(path)?);
    let mut tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix("")
        .rand_bytes(8)
        .tempfile_in(dir)
        .map_err(io_err("creating a temp file in", dir))?;
    let written = fill(tmp.as_file_mut());
    written.map_err(io_err("writing", tmp.path()))?;
    tmp.as_file()
        .sync_all()
        .map_err(io_err("syncing", tmp.path()))?;
    Ok(tmp)
}

fn sync_dir(dir: &Path) {
    // Syncing the directory makes the rename durable. Not every platform lets a directory be
    // opened for this; the data itself is already synced, so a failure here is not an error.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Atomically replaces (or creates) `path` with `bytes`: temp file, fsync, rename, under the
/// target's [`Lock`]. An existing file keeps its permissions.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    lock(path)?.write(bytes)
}

/// Atomically creates `path` with `bytes`; fails with [`Error::AlreadyExists`] if it exists.
/// The check and the rename are one operation (a hard link), so two writers cannot both win.
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    lock(path)?.write_new(bytes)
}

/// How many names [`write_unique`] tries before it gives up.
const MAX_UNIQUE_TRIES: u32 = 10_000;

/// The `n`th name [`write_unique`] tries: `stem.ext` first, then `stem_{first_suffix}.ext`,
/// `stem_{first_suffix + 1}.ext`, … The one naming rule for "rename when it exists".
fn unique_name(dir: &Path, stem: &str, ext: &str, first_suffix: u32, n: u32) -> PathBuf {
    if n == 0 {
        dir.join(format!("{stem}{ext}"))
    } else {
        dir.join(format!("{stem}_{}{ext}", first_suffix + n - 1))
    }
}

/// The name [`write_unique`] with the same arguments would write now: the first of its
/// names that does not exist. A preview (a dry run names the file it would write); a
/// concurrent writer can take the name first, and `write_unique` then goes on to the next.
pub fn first_free(dir: &Path, stem: &str, ext: &str, first_suffix: u32) -> PathBuf {
    (0..MAX_UNIQUE_TRIES)
        .map(|n| unique_name(dir, stem, ext, first_suffix, n))
        .find(|p| p.symlink_metadata().is_err())
        .unwrap_or_else(|| unique_name(dir, stem, ext, first_suffix, MAX_UNIQUE_TRIES))
}

/// What a write does when its file already exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Replace it atomically.
    Overwrite,
    /// Write nothing.
    Skip,
    /// Write to the first free name, `stem_1.ext`, `stem_2.ext`, … ([`write_unique`]).
    Rename,
}

/// Writes `bytes` as `dir/name` atomically by the rule for an existing file, and returns
/// where it went: `None` when the file exists and the rule is [`Existing::Skip`] (checked and
/// created in one step, so a file that appears meanwhile is not replaced either).
pub fn save(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    rule: Existing,
) -> Result<Option<PathBuf>, Error> {
    save_with(dir, name, rule, |out| out.write_all(bytes))
}

/// [`save`] of what `fill` writes into the temp file, in pieces: a file of hundreds of
/// megabytes (a CSV of millions of rows) is never whole in memory. An error from `fill`
/// leaves no file and the target as it was. Under [`Existing::Skip`] the content is written
/// before the target is found to exist (the check and the creation are one step).
pub fn save_with(
    dir: &Path,
    name: &str,
    rule: Existing,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> Result<Option<PathBuf>, Error> {
    let path = dir.join(name);
    match rule {
        Existing::Overwrite => lock(&path)?.write_with(fill).map(|()| Some(path)),
        Existing::Skip => match lock(&path)?.write_new_with(fill) {
            Ok(()) => Ok(Some(path)),
            Err(Error::AlreadyExists { .. }) => Ok(None),
            Err(e) => Err(e),
        },
        Existing::Rename => {
            let (stem, ext) = crate::stem_and_ext(Path::new(name));
            write_unique_with(dir, &stem, &ext, 1, fill).map(Some)
        }
    }
}

/// Writes `bytes` to the first free name among `stem.ext`, `stem{sep}2.ext`, `stem{sep}3.ext`, …
/// in `dir` (`first_suffix` sets the number tried after the bare name) and returns the path.
/// Never overwrites anything, even with a concurrent writer. One temp file (named after
/// `stem.ext`, under its lock) is linked to each candidate name in turn.
pub fn write_unique(
    dir: &Path,
    stem: &str,
    ext: &str,
    first_suffix: u32,
    bytes: &[u8],
) -> Result<PathBuf, Error> {
    write_unique_with(dir, stem, ext, first_suffix, |out| out.write_all(bytes))
}

/// [`write_unique`] of what `fill` writes (see [`save_with`]).
fn write_unique_with(
    dir: &Path,
    stem: &str,
    ext: &str,
    first_suffix: u32,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> Result<PathBuf, Error> {
    let first = unique_name(dir, stem, ext, first_suffix, 0);
    let _lock = lock(&first)?;
    let mut tmp = write_temp(&first, fill)?;
    for n in 0..MAX_UNIQUE_TRIES {
        let path = unique_name(dir, stem, ext, first_suffix, n);
        match tmp.persist_noclobber(&path) {
            Ok(_) => {
                sync_dir(dir);
                return Ok(path);
            }
            Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => tmp = e.file,
            Err(e) => {
                return Err(Error::Io {
                    action: "creating",
                    path,
                    source: e.error,
                });
            }
        }
    }
    Err(Error::Io {
        action: "finding a free file name in",
        path: dir.to_path_buf(),
        source: io::Error::new(
            io::ErrorKind::AlreadyExists,
            "too many files with this name",
        ),
    })
}

/// Removes the temp files of target `owner` in `dir` (the caller holds its lock).
fn remove_temps(dir: &Path, owner: &str) {
    let prefix = format!(".{owner}{TEMP_MARK}");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Removes the temp and lock files that killed writers left in `dir` (see the module
/// documentation) and returns how many were removed. A missing directory has none. Files of a
/// target whose lock is held right now are left alone: their writer is alive.
pub fn sweep(dir: &Path) -> Result<usize, Error> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(source) => {
            return Err(Error::Io {
                action: "listing",
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    // Leftover temp files by the target name they belong to; a lone lock file counts too.
    let mut leftovers: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = name.to_str().and_then(leftover_owner) else {
            continue;
        };
        let list = leftovers.entry(owner.to_string()).or_default();
        if !name.to_string_lossy().ends_with(LOCK_SUFFIX) {
            list.push(entry.path());
        }
    }
    let mut removed = 0;
    for (owner, temps) in leftovers {
        let lock_path = dir.join(lock_name(&owner));
        let file = match lock_file(&lock_path, false) {
            Ok(FileLock::Held(file)) => file,
            // A live writer holds it, or we cannot tell: leave its files alone.
            Ok(FileLock::Busy | FileLock::Unsupported) | Err(_) => continue,
        };
        for temp in temps {
            if std::fs::remove_file(&temp).is_ok() {
                removed += 1;
            }
        }
        release_lock_file(file, &lock_path);
        if cfg!(unix) {
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn write_atomic_replaces_and_leaves_no_temp_or_lock() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(names(dir.path()), ["a.txt"]);
    }

    /// A file written in pieces is the pieces in order, by every rule; a fill that fails
    /// half-way leaves the target as it was and no temp file, by every rule.
    #[test]
    fn save_with_writes_pieces_and_a_failed_fill_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let fill = |out: &mut File| {
            for piece in [&b"one,"[..], b"two,", b"three"] {
                out.write_all(piece)?;
            }
            Ok(())
        };
        // Overwrite creates a.csv; Skip then finds it and writes nothing; Rename takes a_1.csv.
        for (rule, expect) in [
            (Existing::Overwrite, Some("a.csv")),
            (Existing::Skip, None),
            (Existing::Rename, Some("a_1.csv")),
        ] {
            let saved = save_with(dir.path(), "a.csv", rule, fill).unwrap();
            assert_eq!(saved, expect.map(|n| dir.path().join(n)), "{rule:?}");
        }
        for name in ["a.csv", "a_1.csv"] {
            assert_eq!(
                std::fs::read(dir.path().join(name)).unwrap(),
                b"one,two,three"
            );
        }
        write_atomic(&dir.path().join("a.csv"), b"before").unwrap();
        for rule in [Existing::Overwrite, Existing::Skip, Existing::Rename] {
            let err = save_with(dir.path(), "a.csv", rule, |out| {
                out.write_all(b"half")?;
                Err(io::Error::other("the rows ran out"))
            })
            .unwrap_err();
            match err {
                Error::Io { action, source, .. } => {
                    assert_eq!(
                        (action, source.to_string()),
                        ("writing", "the rows ran out".into())
                    )
                }
                other => panic!("{other:?}"),
            }
            assert_eq!(std::fs::read(dir.path().join("a.csv")).unwrap(), b"before");
            assert_eq!(names(dir.path()), ["a.csv", "a_1.csv"], "{rule:?}");
        }
    }

    #[test]
    fn write_new_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        write_new(&p, b"one").unwrap();
        let err = write_new(&p, b"two").unwrap_err();
        assert_eq!(err.code(), "ALREADY_EXISTS");
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        assert_eq!(names(dir.path()), ["a.txt"]);
    }

    /// Each rule for an existing file, and a preview of the renamed file that names the
    /// file the write then makes.
    #[test]
    fn save_follows_the_rule_for_an_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(
            save(d, "報告.csv", b"1", Existing::Skip).unwrap(),
            Some(d.join("報告.csv"))
        );
        assert_eq!(save(d, "報告.csv", b"2", Existing::Skip).unwrap(), None);
        assert_eq!(std::fs::read(d.join("報告.csv")).unwrap(), b"1");
        assert_eq!(first_free(d, "報告", ".csv", 1), d.join("報告_1.csv"));
        assert_eq!(
            save(d, "報告.csv", b"3", Existing::Rename).unwrap(),
            Some(d.join("報告_1.csv"))
        );
        assert_eq!(first_free(d, "報告", ".csv", 1), d.join("報告_2.csv"));
        assert_eq!(
            save(d, "報告.csv", b"4", Existing::Overwrite).unwrap(),
            Some(d.join("報告.csv"))
        );
        assert_eq!(std::fs::read(d.join("報告.csv")).unwrap(), b"4");
        assert_eq!(std::fs::read(d.join("報告_1.csv")).unwrap(), b"3");
        assert_eq!(names(d), ["報告.csv", "報告_1.csv"]);
        assert_eq!(
            crate::stem_and_ext(Path::new("a.b.xlsx")),
            ("a.b".to_string(), ".xlsx".to_string())
        );
        assert_eq!(
            crate::stem_and_ext(Path::new("README")),
            ("README".to_string(), String::new())
        );
    }

    #[test]
    fn write_unique_suffixes() {
        let dir = tempfile::tempdir().unwrap();
        let a = write_unique(dir.path(), "plan", ".yaml", 2, b"1").unwrap();
        let b = write_unique(dir.path(), "plan", ".yaml", 2, b"2").unwrap();
        let c = write_unique(dir.path(), "plan", ".yaml", 2, b"3").unwrap();
        let names_of: Vec<_> = [a, b, c]
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names_of, ["plan.yaml", "plan_2.yaml", "plan_3.yaml"]);
        assert_eq!(std::fs::read(dir.path().join("plan_3.yaml")).unwrap(), b"3");
        assert_eq!(
            names(dir.path()),
            ["plan.yaml", "plan_2.yaml", "plan_3.yaml"]
        );
    }

    #[test]
    fn leftover_names() {
        let check = |name: &str, owner: Option<&str>| {
            assert_eq!(leftover_owner(name), owner, "{name}");
        };
        check(".book.xlsx.keiri-tmp-AbC123xy", Some("book.xlsx"));
        check(".book.xlsx.keiri-lock", Some("book.xlsx"));
        check(".a.keiri-tmp-b.keiri-tmp-c", Some("a.keiri-tmp-b"));
        check("book.xlsx", None);
        check(".keiri-lock", None);
        check(".keiri-tmp-x", None);
        check("book.xlsx.keiri-lock", None);
        check(".keiri-abc.tmp", None);
    }

    #[test]
    fn the_temp_file_is_named_after_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = write_temp(&dir.path().join("請求書.xlsx"), |out| {
            out.write_all(b"x")
        })
        .unwrap();
        let name = tmp
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(name.starts_with(".請求書.xlsx.keiri-tmp-"), "{name}");
        assert_eq!(leftover_owner(&name), Some("請求書.xlsx"));
        let long = "x".repeat(300);
        let tmp = write_temp(&dir.path().join(&long), |out| out.write_all(b"x")).unwrap();
        let name = tmp
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(name.len() < 255, "{}", name.len());
    }

    #[test]
    fn a_write_removes_the_temp_files_a_killed_writer_of_its_target_left() {
        let dir = tempfile::tempdir().unwrap();
        let put = |name: &str| {
            let mut f = File::create(dir.path().join(name)).unwrap();
            f.write_all(b"partial").unwrap();
        };
        put(".report.xlsx.keiri-tmp-dead0001");
        put(".report.xlsx.keiri-tmp-dead0002");
        put(".other.xlsx.keiri-tmp-dead0003");
        write_atomic(&dir.path().join("report.xlsx"), b"new").unwrap();
        // The other target's leftover waits for its own write (or a sweep).
        assert_eq!(
            names(dir.path()),
            [".other.xlsx.keiri-tmp-dead0003", "report.xlsx"]
        );
    }

    #[test]
    fn sweep_removes_leftovers_of_dead_writers_only() {
        let dir = tempfile::tempdir().unwrap();
        let put = |name: &str| {
            let mut f = File::create(dir.path().join(name)).unwrap();
            f.write_all(b"partial").unwrap();
        };
        put("a.txt");
        put(".a.txt.keiri-tmp-dead0001");
        put(".a.txt.keiri-lock");
        put(".b.txt.keiri-tmp-dead0002");
        put(".other.tmp");
        // A live writer of c.txt holds its lock (taken before it creates its temp file): its
        // temp file stays.
        let live = lock(&dir.path().join("c.txt")).unwrap();
        put(".c.txt.keiri-tmp-live0003");
        let removed = sweep(dir.path()).unwrap();
        assert_eq!(
            names(dir.path()),
            [
                ".c.txt.keiri-lock",
                ".c.txt.keiri-tmp-live0003",
                ".other.tmp",
                "a.txt"
            ]
        );
        assert!(removed >= 2, "{removed}");
        drop(live);
        sweep(dir.path()).unwrap();
        assert_eq!(names(dir.path()), [".other.tmp", "a.txt"]);
        assert_eq!(sweep(&dir.path().join("missing")).unwrap(), 0);
    }

    #[test]
    fn write_if_unchanged_refuses_a_changed_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        write_atomic(&p, b"one").unwrap();
        let guard = lock(&p).unwrap();
        guard.write_if_unchanged(b"one", b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let err = guard.write_if_unchanged(b"one", b"three").unwrap_err();
        assert_eq!(err.code(), "CHANGE_CONFLICT");
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        // A longer file with the same beginning is a change too.
        let err = guard.write_if_unchanged(b"t", b"three").unwrap_err();
        assert_eq!(err.code(), "CHANGE_CONFLICT");
        drop(guard);
        std::fs::remove_file(&p).unwrap();
        let err = lock(&p)
            .unwrap()
            .write_if_unchanged(b"two", b"x")
            .unwrap_err();
        assert_eq!(err.code(), "CHANGE_CONFLICT", "a removed file changed too");
        assert!(!p.exists());
        assert_eq!(names(dir.path()), Vec::<String>::new());
    }

    #[test]
    fn concurrent_read_modify_writes_in_one_process_all_land() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("count.txt");
        write_atomic(&p, b"0").unwrap();
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..25 {
                        let guard = lock(&p).unwrap();
                        let before = std::fs::read(&p).unwrap();
                        let n: u32 = String::from_utf8_lossy(&before).parse().unwrap();
                        guard
                            .write_if_unchanged(&before, (n + 1).to_string().as_bytes())
                            .unwrap();
                    }
                });
            }
        });
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "200");
        assert_eq!(names(dir.path()), ["count.txt"]);
    }

    #[cfg(unix)]
    #[test]
    fn overwriting_keeps_the_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        write_atomic(&p, b"one").unwrap();
        for mode in [0o644, 0o640, 0o755] {
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
            write_atomic(&p, b"two").unwrap();
            let got = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(got, mode);
        }
    }
}
