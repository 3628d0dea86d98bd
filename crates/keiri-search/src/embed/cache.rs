//! The embedding disk cache: one small file per (model, kind, text), named by a SHA-256 of
//! the three, written atomically through keiri-fs so concurrent processes and interrupted
//! runs never leave a half-written vector that a later run would trust.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::{EmbedKind, Embedder};
use crate::error::Error;

const MAGIC: &[u8; 4] = b"KEV1";
/// Vectors larger than this are not cached (no real model comes close; it bounds what a
/// corrupt file can make us allocate).
const MAX_DIM: usize = 16_384;

/// A directory of cached vectors.
#[derive(Debug, Clone)]
pub struct DiskCache {
    dir: PathBuf,
}

impl DiskCache {
    pub fn new(dir: PathBuf) -> DiskCache {
        DiskCache { dir }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, model: &str, kind: EmbedKind, text: &str) -> PathBuf {
        let hex: String = text_key(model, kind, text)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let model_dir = file_stem(model);
        self.dir
            .join(model_dir)
            .join(&hex[..2])
            .join(format!("{hex}.vec"))
    }

    /// The cached vector, or `None` when absent or unreadable (a damaged entry is a miss).
    pub fn get(&self, model: &str, kind: EmbedKind, text: &str) -> Option<Vec<f32>> {
        let bytes = std::fs::read(self.path(model, kind, text)).ok()?;
        decode(&bytes)
    }

    /// Stores a vector.
    pub fn put(
        &self,
        model: &str,
        kind: EmbedKind,
        text: &str,
        vector: &[f32],
    ) -> Result<(), Error> {
        if vector.len() > MAX_DIM {
            return Ok(());
        }
        let path = self.path(model, kind, text);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| Error::Io {
                action: "creating the embedding cache directory",
                path: parent.to_path_buf(),
                source,
            })?;
        }
        let mut bytes = Vec::with_capacity(8 + vector.len() * 4);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&(vector.len() as u32).to_le_bytes());
        for x in vector {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        keiri_fs::write_atomic(&path, &bytes)?;
        Ok(())
    }
}

/// The key of one vector: a SHA-256 over the model name, the kind and the text, each
/// length-prefixed so no two different triples share a key. The disk cache names its files
/// after it and the bundled pack ([`super::pack`]) indexes its vectors by it.
pub fn text_key(model: &str, kind: EmbedKind, text: &str) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for part in [model.as_bytes(), kind.as_str().as_bytes(), text.as_bytes()] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    hasher.finalize().into()
}

/// A model name as a file or directory name: ASCII letters, digits, `-` and `.` kept, the
/// rest (`:` of `local:…`, which Windows refuses in names) replaced by `_`.
pub fn file_stem(model: &str) -> String {
    model
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn decode(bytes: &[u8]) -> Option<Vec<f32>> {
    let (magic, rest) = bytes.split_at_checked(4)?;
    if magic != MAGIC {
        return None;
    }
    let (dim, data) = rest.split_at_checked(4)?;
    let dim = u32::from_le_bytes(dim.try_into().ok()?) as usize;
    if dim == 0 || dim > MAX_DIM || data.len() != dim * 4 {
        return None;
    }
    let v: Vec<f32> = data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    v.iter().all(|x| x.is_finite()).then_some(v)
}

/// An embedder that consults a [`DiskCache`] first and embeds only the misses, in one batch.
pub struct CachedEmbedder {
    inner: Arc<dyn Embedder>,
    cache: DiskCache,
}

impl std::fmt::Debug for CachedEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedEmbedder")
            .field("model", &self.inner.name())
            .field("cache", &self.cache.dir)
            .finish()
    }
}

impl CachedEmbedder {
    pub fn new(inner: Arc<dyn Embedder>, cache: DiskCache) -> CachedEmbedder {
        CachedEmbedder { inner, cache }
    }
}

impl Embedder for CachedEmbedder {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn lookup(&self, texts: &[String], kind: EmbedKind) -> Vec<Option<Vec<f32>>> {
        let model = self.inner.name();
        let found: Vec<Option<Vec<f32>>> = texts
            .iter()
            .map(|t| self.cache.get(model, kind, t))
            .collect();
        super::pack::fill_missing(texts, found.clone(), |batch| {
            Ok(self.inner.lookup(batch, kind))
        })
        .unwrap_or(found)
    }

    fn embed(&self, texts: &[String], kind: EmbedKind) -> Result<Vec<Vec<f32>>, Error> {
        let model = self.inner.name();
        let mut out: Vec<Option<Vec<f32>>> = texts
            .iter()
            .map(|t| self.cache.get(model, kind, t))
            .collect();
        let missing: Vec<usize> = (0..texts.len()).filter(|&i| out[i].is_none()).collect();
        if !missing.is_empty() {
            let batch: Vec<String> = missing.iter().map(|&i| texts[i].clone()).collect();
            let vectors = self.inner.embed(&batch, kind)?;
            if vectors.len() != batch.len() {
                return Err(Error::Http(format!(
                    "{} returned {} vectors for {} texts",
                    model,
                    vectors.len(),
                    batch.len()
                )));
            }
            for (&i, v) in missing.iter().zip(vectors) {
                // A cache that cannot be written (read-only home, full disk) only costs
                // speed, so the vector is still returned.
                let _ = self.cache.put(model, kind, &texts[i], &v);
                out[i] = Some(v);
            }
        }
        Ok(out.into_iter().map(Option::unwrap_or_default).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Counts the texts it is asked to embed; the vector is the text's length.
    struct Counting(Mutex<Vec<String>>);

    impl Embedder for Counting {
        fn name(&self) -> &str {
            "test:counting"
        }
        fn embed(&self, texts: &[String], _: EmbedKind) -> Result<Vec<Vec<f32>>, Error> {
            self.0.lock().unwrap().extend(texts.iter().cloned());
            Ok(texts.iter().map(|t| vec![t.len() as f32, 1.0]).collect())
        }
    }

    #[test]
    fn second_call_is_served_from_disk() {
        let dir = tempfile::tempdir().unwrap();
        let inner = Arc::new(Counting(Mutex::new(Vec::new())));
        let cached = CachedEmbedder::new(inner.clone(), DiskCache::new(dir.path().to_path_buf()));
        let texts = vec!["a".to_string(), "bb".to_string()];
        let first = cached.embed(&texts, EmbedKind::Passage).unwrap();
        let texts2 = vec!["bb".to_string(), "ccc".to_string()];
        let second = cached.embed(&texts2, EmbedKind::Passage).unwrap();
        assert_eq!(first, vec![vec![1.0, 1.0], vec![2.0, 1.0]]);
        assert_eq!(second, vec![vec![2.0, 1.0], vec![3.0, 1.0]]);
        assert_eq!(*inner.0.lock().unwrap(), vec!["a", "bb", "ccc"]);
        // The kind is part of the key: a query is not served a passage vector.
        cached.embed(&["a".to_string()], EmbedKind::Query).unwrap();
        assert_eq!(inner.0.lock().unwrap().len(), 4);
    }

    #[test]
    fn damaged_entries_are_misses() {
        let dir = tempfile::tempdir().unwrap();
        let cache = DiskCache::new(dir.path().to_path_buf());
        cache.put("m", EmbedKind::Query, "t", &[1.0, 2.0]).unwrap();
        assert_eq!(cache.get("m", EmbedKind::Query, "t"), Some(vec![1.0, 2.0]));
        let path = cache.path("m", EmbedKind::Query, "t");
        for bad in [
            &b""[..],
            b"KEV1",
            b"KEV1\x02\0\0\0\0\0\x80?",
            b"XXXX\x01\0\0\0\0\0\x80?",
        ] {
            keiri_fs::write_atomic(&path, bad).unwrap();
            assert_eq!(cache.get("m", EmbedKind::Query, "t"), None, "{bad:?}");
        }
    }
}
