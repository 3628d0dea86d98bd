//! [`Workspace`]: the block catalog and the templates of a set of directories, loaded once and
//! kept while their files are unchanged.
//!
//! Every API call needs the catalog (validate, dry-run, retrieval, generation, runs) and many
//! need the templates; reading and parsing a hundred YAML specs on each call is the cost this
//! removes. A load is reused while the directories' fingerprint — every spec file's path, size
//! and modification time ([`Catalog::fingerprint`], [`Templates::fingerprint`]) — is the same,
//! so a spec a user saves, adds or deletes is seen by the next call without a restart.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::catalog::{Catalog, CatalogIssue};
use crate::template::Templates;

/// One cached load: what it was loaded from, and the result.
#[derive(Debug)]
struct Entry<T> {
    dirs: Vec<PathBuf>,
    fingerprint: u64,
    value: Arc<T>,
    issues: Vec<CatalogIssue>,
}

/// The catalog and templates, cached by their files' fingerprints. Cheap to share
/// (`Arc<Workspace>`); safe to use from several threads.
#[derive(Debug, Default)]
pub struct Workspace {
    catalog: Mutex<Option<Entry<Catalog>>>,
    templates: Mutex<Option<Entry<Templates>>>,
}

/// One load handed out by a [`Workspace`]: the value, the files that could not be used, and
/// the fingerprint of the files it was loaded from (a cache keyed by the same files, like the
/// shared retriever's, uses it instead of walking the directories again).
#[derive(Debug, Clone)]
pub struct Loaded<T> {
    pub value: Arc<T>,
    pub issues: Vec<CatalogIssue>,
    pub fingerprint: u64,
}

impl Workspace {
    pub fn new() -> Workspace {
        Workspace::default()
    }

    /// The catalog of `dirs` (lowest precedence first) and the files that could not be used,
    /// as [`Catalog::load`] gives them: from the cache while no spec file changed.
    pub fn catalog(&self, dirs: &[PathBuf]) -> (Arc<Catalog>, Vec<CatalogIssue>) {
        let loaded = self.load_catalog(dirs);
        (loaded.value, loaded.issues)
    }

    /// [`Workspace::catalog`] with its fingerprint.
    pub fn load_catalog(&self, dirs: &[PathBuf]) -> Loaded<Catalog> {
        cached(
            &self.catalog,
            dirs,
            Catalog::fingerprint(dirs),
            Catalog::load,
        )
    }

    /// The templates of `dirs`, as [`Templates::load`] gives them: from the cache while no
    /// template file changed.
    pub fn templates(&self, dirs: &[PathBuf]) -> (Arc<Templates>, Vec<CatalogIssue>) {
        let loaded = self.load_templates(dirs);
        (loaded.value, loaded.issues)
    }

    /// [`Workspace::templates`] with its fingerprint.
    pub fn load_templates(&self, dirs: &[PathBuf]) -> Loaded<Templates> {
        cached(
            &self.templates,
            dirs,
            Templates::fingerprint(dirs),
            Templates::load,
        )
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while loading leaves no half-written entry (it is replaced whole), so a
    // poisoned lock's content is still usable.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn cached<T>(
    slot: &Mutex<Option<Entry<T>>>,
    dirs: &[PathBuf],
    fingerprint: u64,
    load: impl FnOnce(&[PathBuf]) -> (T, Vec<CatalogIssue>),
) -> Loaded<T> {
    if let Some(e) = lock(slot).as_ref()
        && e.dirs == dirs
        && e.fingerprint == fingerprint
    {
        return Loaded {
            value: e.value.clone(),
            issues: e.issues.clone(),
            fingerprint,
        };
    }
    // Loaded outside the lock: a slow load does not hold up callers of another kind, and two
    // racing loads of the same files give the same result.
    let (value, issues) = load(dirs);
    let value = Arc::new(value);
    *lock(slot) = Some(Entry {
        dirs: dirs.to_vec(),
        fingerprint,
        value: value.clone(),
        issues: issues.clone(),
    });
    Loaded {
        value,
        issues,
        fingerprint,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    fn spec(id: &str) -> String {
        format!(
            "id: {id}\nversion: 1.0.0\nentrypoint: builtin:{id}\ntitle_ja: {id}\ntitle_en: {id}\n\
             description: {id}\ninputs: {{}}\noutputs: {{}}\n"
        )
    }

    #[test]
    fn a_load_is_reused_until_a_spec_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let cat = dir.path().join("csv");
        std::fs::create_dir_all(&cat).unwrap();
        keiri_fs::write_atomic(&cat.join("read.yaml"), spec("csv.read").as_bytes()).unwrap();
        let dirs = vec![dir.path().to_path_buf()];
        let ws = Workspace::new();
        let (first, issues) = ws.catalog(&dirs);
        assert!(issues.is_empty(), "{issues:?}");
        let (again, _) = ws.catalog(&dirs);
        assert!(Arc::ptr_eq(&first, &again), "the second call reloaded");
        assert!(first.get("csv.read").is_some());
        // A new spec is seen by the next call.
        keiri_fs::write_atomic(&cat.join("write.yaml"), spec("csv.write").as_bytes()).unwrap();
        let (after, _) = ws.catalog(&dirs);
        assert!(!Arc::ptr_eq(&first, &after));
        assert!(after.get("csv.write").is_some());
        // The fingerprint handed out is the files': it changed with them, and a cached load
        // hands out the same one.
        let (one, two) = (ws.load_catalog(&dirs), ws.load_catalog(&dirs));
        assert_eq!(one.fingerprint, two.fingerprint);
        assert_eq!(one.fingerprint, Catalog::fingerprint(&dirs));
        keiri_fs::write_atomic(&cat.join("sum.yaml"), spec("csv.sum").as_bytes()).unwrap();
        assert_ne!(ws.load_catalog(&dirs).fingerprint, one.fingerprint);
        // Other directories are another load.
        let other = tempfile::tempdir().unwrap();
        let (empty, _) = ws.catalog(&[other.path().to_path_buf()]);
        assert!(empty.get("csv.read").is_none());
    }
}
