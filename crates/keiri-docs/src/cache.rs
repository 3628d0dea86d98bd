//! A bounded cache of extracted files, keyed by canonical path and extraction options and
//! validated by size + modification time, then by content hash.
//!
//! The chat agent reads the same documents range after range; without the cache every call
//! would re-parse a PDF to serve ten lines. An entry is reused when the file's size and mtime
//! are unchanged; when they changed but the bytes hash the same (a `touch`, a copy), the
//! extraction is reused too. Errors are not cached, so a fixed file is picked up at once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::extract::{self, ExtractOptions, Extracted, Format};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    path: PathBuf,
    opts: ExtractOptions,
}

#[derive(Debug)]
struct Entry {
    size: u64,
    modified: Option<SystemTime>,
    hash: String,
    value: Arc<Extracted>,
    used: u64,
}

#[derive(Debug, Default)]
struct Inner {
    map: HashMap<Key, Entry>,
    tick: u64,
    text_bytes: usize,
}

/// The cache. [`Cache::shared`] is the process-wide instance the API uses.
#[derive(Debug)]
pub struct Cache {
    inner: Mutex<Inner>,
    max_entries: usize,
    max_text_bytes: usize,
    hits: AtomicU64,
    misses: AtomicU64,
}

/// A file as the cache returns it.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub extracted: Arc<Extracted>,
    pub size: u64,
    /// `sha256:<hex>` of the file's bytes.
    pub hash: String,
}

/// Hit and miss counts, for tests and diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub entries: usize,
}

impl Cache {
    /// A cache holding at most `max_entries` files and `max_text_bytes` of text.
    pub fn new(max_entries: usize, max_text_bytes: usize) -> Cache {
        Cache {
            inner: Mutex::new(Inner::default()),
            max_entries: max_entries.max(1),
            max_text_bytes,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// The process-wide cache: 256 files, 256 MiB of text.
    pub fn shared() -> &'static Cache {
        static SHARED: OnceLock<Cache> = OnceLock::new();
        SHARED.get_or_init(|| Cache::new(256, 256 * 1024 * 1024))
    }

    pub fn stats(&self) -> CacheStats {
        let entries = self.inner.lock().map(|i| i.map.len()).unwrap_or(0);
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            entries,
        }
    }

    /// Extracts `path` (canonical) with `opts`, or returns the cached extraction.
    pub fn load(
        &self,
        path: &Path,
        format: Format,
        opts: &ExtractOptions,
        max_bytes: u64,
    ) -> Result<Loaded> {
        let meta = std::fs::metadata(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        if meta.len() > max_bytes {
            return Err(Error::FileTooLarge {
                size: meta.len(),
                limit: max_bytes,
            });
        }
        let modified = meta.modified().ok();
        let key = Key {
            path: path.to_path_buf(),
            opts: opts.clone(),
        };
        if let Some(hit) = self.lookup(&key, |e| {
            e.size == meta.len() && e.modified == modified && modified.is_some()
        }) {
            return Ok(hit);
        }
        let bytes = extract::read_capped(path, max_bytes)?;
        let hash = content_hash(&bytes);
        let size = bytes.len() as u64;
        if let Some(hit) = self.lookup(&key, |e| e.hash == hash) {
            if let Ok(mut inner) = self.inner.lock()
                && let Some(e) = inner.map.get_mut(&key)
            {
                e.size = size;
                e.modified = modified;
            }
            return Ok(hit);
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let value = Arc::new(extract::extract_bytes(&bytes, format, opts)?);
        self.insert(
            key,
            Entry {
                size,
                modified,
                hash: hash.clone(),
                value: value.clone(),
                used: 0,
            },
        );
        Ok(Loaded {
            extracted: value,
            size,
            hash,
        })
    }

    fn lookup(&self, key: &Key, valid: impl Fn(&Entry) -> bool) -> Option<Loaded> {
        let mut inner = self.inner.lock().ok()?;
        inner.tick += 1;
        let tick = inner.tick;
        let entry = inner.map.get_mut(key)?;
        if !valid(entry) {
            return None;
        }
        entry.used = tick;
        self.hits.fetch_add(1, Ordering::Relaxed);
        Some(Loaded {
            extracted: entry.value.clone(),
            size: entry.size,
            hash: entry.hash.clone(),
        })
    }

    fn insert(&self, key: Key, mut entry: Entry) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        let bytes = entry.value.text.len();
        if bytes > self.max_text_bytes {
            return;
        }
        inner.tick += 1;
        entry.used = inner.tick;
        if let Some(old) = inner.map.insert(key, entry) {
            inner.text_bytes -= old.value.text.len();
        }
        inner.text_bytes += bytes;
        while inner.map.len() > self.max_entries || inner.text_bytes > self.max_text_bytes {
            let Some(oldest) = inner
                .map
                .iter()
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(old) = inner.map.remove(&oldest) {
                inner.text_bytes -= old.value.text.len();
            }
        }
    }
}

/// `sha256:<hex>` of `bytes`.
pub fn content_hash(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest.iter() {
        out.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        out.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_format() {
        assert_eq!(
            content_hash(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn reuses_until_the_file_changes_and_evicts() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.txt");
        let b = dir.path().join("b.txt");
        keiri_fs::write_atomic(&a, b"one").unwrap();
        keiri_fs::write_atomic(&b, b"two").unwrap();
        let cache = Cache::new(1, 1 << 20);
        let opts = ExtractOptions::default();
        assert_eq!(
            cache
                .load(&a, Format::Txt, &opts, 100)
                .unwrap()
                .extracted
                .text,
            "one"
        );
        assert_eq!(
            cache
                .load(&a, Format::Txt, &opts, 100)
                .unwrap()
                .extracted
                .text,
            "one"
        );
        assert_eq!(
            cache.stats(),
            CacheStats {
                hits: 1,
                misses: 1,
                entries: 1
            }
        );
        keiri_fs::write_atomic(&a, b"changed").unwrap();
        assert_eq!(
            cache
                .load(&a, Format::Txt, &opts, 100)
                .unwrap()
                .extracted
                .text,
            "changed"
        );
        // A second file evicts the first (capacity 1).
        assert_eq!(
            cache
                .load(&b, Format::Txt, &opts, 100)
                .unwrap()
                .extracted
                .text,
            "two"
        );
        assert_eq!(cache.stats().entries, 1);
        assert_eq!(
            cache.load(&a, Format::Txt, &opts, 3).unwrap_err().code(),
            "FILE_TOO_LARGE"
        );
    }
}
