//! The bundled embedding pack: the passage vectors of the shipped catalog and templates for
//! one model, computed once (`make embeddings`) and checked in beside the catalog as
//! `block_specs/.embeddings/<model>.kev`, so a first search costs one query embedding instead
//! of the whole catalog.
//!
//! The pack is read-only and consulted before the disk cache ([`PackedEmbedder`]); a text
//! it does not hold (a workspace's own block, a spec edited since the pack was built) falls
//! through to the cache and the model, so a stale pack costs speed, never correctness. A
//! test compares the pack's keys with the shipped texts, so a stale pack fails CI.
//!
//! Format (little-endian): `KEVP`, u32 version (1), u32 model-name length, the name (UTF-8),
//! u32 dimension, u32 count, `count` 32-byte keys ([`text_key`], sorted), then `count ×
//! dimension` f32. One file rather than a file per vector, so the repository and the
//! installer carry a few hundred kilobytes in one place.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::cache::{file_stem, text_key};
use super::{EmbedKind, Embedder};
use crate::error::Error;

const MAGIC: &[u8; 4] = b"KEVP";
const VERSION: u32 = 1;
/// Bounds on what a damaged or hostile pack can make us allocate.
const MAX_DIM: usize = 16_384;
const MAX_COUNT: usize = 1_000_000;
const MAX_NAME: usize = 1_024;

/// The directory, beside a catalog directory, that holds its packs.
pub const PACK_DIR: &str = ".embeddings";

/// The vectors of one model, by text key.
#[derive(Debug, Clone, PartialEq)]
pub struct Pack {
    model: String,
    dim: usize,
    vectors: HashMap<[u8; 32], Vec<f32>>,
}

impl Pack {
    /// The file name of `model`'s pack (`local_multilingual-e5-small-q4.kev`).
    pub fn file_name(model: &str) -> String {
        format!("{}.kev", file_stem(model))
    }

    /// Where `model`'s pack lives for the catalog directory `catalog_dir`.
    pub fn path_in(catalog_dir: &Path, model: &str) -> PathBuf {
        catalog_dir.join(PACK_DIR).join(Pack::file_name(model))
    }

    /// A pack of `model` from `(kind, text, vector)` triples; every vector must have the
    /// same dimension.
    pub fn new(
        model: &str,
        entries: impl IntoIterator<Item = (EmbedKind, String, Vec<f32>)>,
    ) -> Result<Pack, Error> {
        let mut vectors = HashMap::new();
        let mut dim = 0;
        for (kind, text, vector) in entries {
            if dim == 0 {
                dim = vector.len();
            }
            if vector.len() != dim || dim == 0 || dim > MAX_DIM {
                return Err(Error::InvalidArgument(format!(
                    "pack vectors must share one dimension (1 to {MAX_DIM}), got {} and {dim}",
                    vector.len()
                )));
            }
            vectors.insert(text_key(model, kind, &text), vector);
        }
        Ok(Pack {
            model: model.to_string(),
            dim,
            vectors,
        })
    }

    /// Embeds `texts` with `embedder` and packs the vectors.
    pub fn build(embedder: &dyn Embedder, texts: &[(EmbedKind, String)]) -> Result<Pack, Error> {
        let mut entries = Vec::with_capacity(texts.len());
        for kind in [EmbedKind::Passage, EmbedKind::Query] {
            let batch: Vec<String> = texts
                .iter()
                .filter(|(k, _)| *k == kind)
                .map(|(_, t)| t.clone())
                .collect();
            if batch.is_empty() {
                continue;
            }
            let vectors = embedder.embed(&batch, kind)?;
            if vectors.len() != batch.len() {
                return Err(Error::Http(format!(
                    "{} returned {} vectors for {} texts",
                    embedder.name(),
                    vectors.len(),
                    batch.len()
                )));
            }
            entries.extend(batch.into_iter().zip(vectors).map(|(t, v)| (kind, t, v)));
        }
        Pack::new(embedder.name(), entries)
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }

    /// The keys of every vector in the pack (see [`text_key`]).
    pub fn keys(&self) -> impl Iterator<Item = &[u8; 32]> {
        self.vectors.keys()
    }

    /// The vector of `text`, when the pack holds it.
    pub fn get(&self, kind: EmbedKind, text: &str) -> Option<&[f32]> {
        self.vectors
            .get(&text_key(&self.model, kind, text))
            .map(Vec::as_slice)
    }

    /// The pack as bytes; the same pack always gives the same bytes (keys sorted).
    pub fn encode(&self) -> Vec<u8> {
        let mut keys: Vec<&[u8; 32]> = self.vectors.keys().collect();
        keys.sort();
        let mut out = Vec::with_capacity(24 + self.model.len() + keys.len() * (32 + 4 * self.dim));
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(self.model.len() as u32).to_le_bytes());
        out.extend_from_slice(self.model.as_bytes());
        out.extend_from_slice(&(self.dim as u32).to_le_bytes());
        out.extend_from_slice(&(keys.len() as u32).to_le_bytes());
        for key in &keys {
            out.extend_from_slice(*key);
        }
        for key in &keys {
            for x in self.vectors.get(*key).into_iter().flatten() {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        out
    }

    /// Parses a pack; anything malformed (truncated, wrong magic or version, sizes out of
    /// bounds, non-finite numbers) is an [`Error::Pack`], never a panic.
    pub fn decode(bytes: &[u8], path: &Path) -> Result<Pack, Error> {
        let bad = |reason: &str| Error::Pack {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        };
        let mut rest = bytes;
        let mut take = |n: usize| -> Result<&[u8], Error> {
            let (head, tail) = rest.split_at_checked(n).ok_or_else(|| bad("truncated"))?;
            rest = tail;
            Ok(head)
        };
        let u32_at = |b: &[u8]| -> usize {
            let mut word = [0u8; 4];
            word.copy_from_slice(b);
            u32::from_le_bytes(word) as usize
        };
        if take(4)? != MAGIC {
            return Err(bad("not an embedding pack (bad magic)"));
        }
        if u32_at(take(4)?) != VERSION as usize {
            return Err(bad("unsupported pack version"));
        }
        let name_len = u32_at(take(4)?);
        if name_len > MAX_NAME {
            return Err(bad("model name too long"));
        }
        let model = std::str::from_utf8(take(name_len)?)
            .map_err(|_| bad("model name is not UTF-8"))?
            .to_string();
        let dim = u32_at(take(4)?);
        let count = u32_at(take(4)?);
        if dim == 0 || dim > MAX_DIM || count > MAX_COUNT {
            return Err(bad("dimension or count out of range"));
        }
        let keys = take(count * 32)?;
        let data = take(count * dim * 4)?;
        if !rest.is_empty() {
            return Err(bad("trailing bytes"));
        }
        let mut vectors = HashMap::with_capacity(count);
        for (key, raw) in keys.chunks_exact(32).zip(data.chunks_exact(dim * 4)) {
            let mut k = [0u8; 32];
            k.copy_from_slice(key);
            let v: Vec<f32> = raw
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            if !v.iter().all(|x| x.is_finite()) {
                return Err(bad("non-finite number"));
            }
            vectors.insert(k, v);
        }
        Ok(Pack {
            model,
            dim,
            vectors,
        })
    }

    /// Reads the pack at `path`.
    pub fn load(path: &Path) -> Result<Pack, Error> {
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            action: "reading the embedding pack",
            path: path.to_path_buf(),
            source,
        })?;
        Pack::decode(&bytes, path)
    }

    /// Writes the pack atomically to `path` (creating its directory).
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| Error::Io {
                action: "creating the embedding pack directory",
                path: parent.to_path_buf(),
                source,
            })?;
        }
        keiri_fs::write_atomic(path, &self.encode())?;
        Ok(())
    }
}

/// An embedder that serves the vectors of its packs first and asks `inner` (normally the
/// disk cache in front of the model) only for the rest.
pub struct PackedEmbedder {
    inner: Arc<dyn Embedder>,
    packs: Vec<Arc<Pack>>,
}

impl std::fmt::Debug for PackedEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackedEmbedder")
            .field("model", &self.inner.name())
            .field("packs", &self.packs.len())
            .finish()
    }
}

impl PackedEmbedder {
    /// Wraps `inner` with the packs of its model; packs of other models are left out.
    pub fn new(inner: Arc<dyn Embedder>, packs: Vec<Arc<Pack>>) -> PackedEmbedder {
        let model = inner.name().to_string();
        let packs = packs.into_iter().filter(|p| p.model == model).collect();
        PackedEmbedder { inner, packs }
    }

    fn in_packs(&self, texts: &[String], kind: EmbedKind) -> Vec<Option<Vec<f32>>> {
        texts
            .iter()
            .map(|t| {
                self.packs
                    .iter()
                    .find_map(|p| p.get(kind, t))
                    .map(<[f32]>::to_vec)
            })
            .collect()
    }
}

/// Fills the `None`s of `found` from `fill`, which gets the missing texts in order.
pub(super) fn fill_missing(
    texts: &[String],
    mut found: Vec<Option<Vec<f32>>>,
    fill: impl FnOnce(&[String]) -> Result<Vec<Option<Vec<f32>>>, Error>,
) -> Result<Vec<Option<Vec<f32>>>, Error> {
    let missing: Vec<usize> = (0..texts.len()).filter(|&i| found[i].is_none()).collect();
    if missing.is_empty() {
        return Ok(found);
    }
    let batch: Vec<String> = missing.iter().map(|&i| texts[i].clone()).collect();
    let filled = fill(&batch)?;
    if filled.len() != batch.len() {
        return Err(Error::Http(format!(
            "got {} vectors for {} texts",
            filled.len(),
            batch.len()
        )));
    }
    for (&i, v) in missing.iter().zip(filled) {
        found[i] = v;
    }
    Ok(found)
}

impl Embedder for PackedEmbedder {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn embed(&self, texts: &[String], kind: EmbedKind) -> Result<Vec<Vec<f32>>, Error> {
        let found = fill_missing(texts, self.in_packs(texts, kind), |batch| {
            Ok(self
                .inner
                .embed(batch, kind)?
                .into_iter()
                .map(Some)
                .collect())
        })?;
        Ok(found.into_iter().map(Option::unwrap_or_default).collect())
    }

    fn lookup(&self, texts: &[String], kind: EmbedKind) -> Vec<Option<Vec<f32>>> {
        let found = self.in_packs(texts, kind);
        fill_missing(texts, found.clone(), |batch| {
            Ok(self.inner.lookup(batch, kind))
        })
        .unwrap_or(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

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

    fn pack() -> Pack {
        Pack::new(
            "test:counting",
            [
                (EmbedKind::Passage, "a".to_string(), vec![9.0, 9.0]),
                (EmbedKind::Passage, "bb".to_string(), vec![8.0, 8.0]),
            ],
        )
        .unwrap()
    }

    #[test]
    fn round_trip_is_byte_stable() {
        let p = pack();
        let bytes = p.encode();
        let back = Pack::decode(&bytes, Path::new("p.kev")).unwrap();
        assert_eq!(back, p);
        assert_eq!(back.encode(), bytes);
        assert_eq!(back.get(EmbedKind::Passage, "a"), Some(&[9.0, 9.0][..]));
        // The kind is part of the key.
        assert_eq!(back.get(EmbedKind::Query, "a"), None);
    }

    #[test]
    fn damaged_packs_are_typed_errors() {
        let good = pack().encode();
        let mut cases: Vec<Vec<u8>> = vec![
            Vec::new(),
            b"KEVP".to_vec(),
            b"XXXX\x01\0\0\0".to_vec(),
            good[..good.len() - 1].to_vec(),
            [&good[..], b"x"].concat(),
        ];
        let mut huge = good.clone();
        // The count field, after magic, version, name length, the name and the dimension.
        let count_at = 4 + 4 + 4 + "test:counting".len() + 4;
        huge[count_at..count_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        cases.push(huge);
        let mut nan = good.clone();
        let last = nan.len() - 4;
        nan[last..].copy_from_slice(&f32::NAN.to_le_bytes());
        cases.push(nan);
        for bad in cases {
            let err = Pack::decode(&bad, Path::new("p.kev")).unwrap_err();
            assert_eq!(err.code(), "EMBEDDING_PACK", "{bad:?}");
        }
    }

    #[test]
    fn the_pack_is_consulted_before_the_inner_embedder() {
        let inner = Arc::new(Counting(Mutex::new(Vec::new())));
        let other_model = Pack::new(
            "other",
            [(EmbedKind::Passage, "ccc".to_string(), vec![7.0, 7.0])],
        )
        .unwrap();
        let packed =
            PackedEmbedder::new(inner.clone(), vec![Arc::new(pack()), Arc::new(other_model)]);
        let texts: Vec<String> = ["a", "ccc", "bb"].iter().map(|s| s.to_string()).collect();
        assert_eq!(
            packed.lookup(&texts, EmbedKind::Passage),
            vec![Some(vec![9.0, 9.0]), None, Some(vec![8.0, 8.0])]
        );
        let out = packed.embed(&texts, EmbedKind::Passage).unwrap();
        assert_eq!(out, vec![vec![9.0, 9.0], vec![3.0, 1.0], vec![8.0, 8.0]]);
        // Only the text no pack of this model holds reached the model.
        assert_eq!(*inner.0.lock().unwrap(), vec!["ccc"]);
    }

    #[test]
    fn save_and_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = Pack::path_in(dir.path(), "test:counting");
        assert!(path.ends_with(".embeddings/test_counting.kev"), "{path:?}");
        pack().save(&path).unwrap();
        assert_eq!(Pack::load(&path).unwrap(), pack());
        assert_eq!(
            Pack::load(&dir.path().join("missing.kev"))
                .unwrap_err()
                .code(),
            "NOT_FOUND"
        );
    }
}
