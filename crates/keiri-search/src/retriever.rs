//! One retriever for the blocks and the templates of a workspace, shared by every front-end.
//!
//! The Candidates panel (`blocks_retrieve`), the planner, the chat agent's `retrieve_blocks`
//! tool and the MCP tool of the same name all search a [`Retriever`] obtained from
//! [`shared`], so the same instruction and documents give the same candidates everywhere.
//! The cache is keyed by the caller's fingerprint of the catalog and template files
//! ([`keiri_plan::Catalog::fingerprint`], [`keiri_plan::Templates::fingerprint`]) and the
//! embedder's name: saving a spec, adding a template or switching the embedder builds a new
//! retriever; anything else reuses the built one (tokenized fields, passage vectors).
//!
//! Templates are ranked lexically (BM25 with the blocks' tokenizer and field boosts): the
//! planner chooses a runner-up template by comparing raw BM25 scores, which a fused score
//! would blur, and requires shared words as evidence that a template fits.

use std::sync::{Arc, LazyLock, Mutex};

use keiri_plan::{Catalog, TemplateSpec, Templates};

use crate::index::{IndexOptions, top_k};
use crate::{
    DocKind, Document, Embedder, Error, Index, Mode, Query, RetrieveRequest, RetrieveResponse,
};

/// The indexes of a workspace's blocks and templates.
#[derive(Debug)]
pub struct Retriever {
    blocks: Index,
    templates: Index,
    /// What the caller noted while building (specs that could not be loaded), repeated in
    /// every response.
    notes: Vec<String>,
}

/// A template that matched, with its raw BM25 score.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateMatch {
    pub id: String,
    pub bm25: f32,
}

impl Retriever {
    /// Indexes the blocks of `catalog` with `embedder` (none: BM25 only) and the templates
    /// lexically.
    pub fn build(
        catalog: &Catalog,
        templates: &Templates,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> Result<Retriever, Error> {
        let blocks = Index::from_catalog(catalog, embedder)?;
        Ok(Retriever::new(
            blocks,
            Retriever::template_index(templates)?,
        ))
    }

    /// A retriever of already built block and template indexes.
    pub fn new(blocks: Index, templates: Index) -> Retriever {
        Retriever {
            blocks,
            templates,
            notes: Vec::new(),
        }
    }

    /// Adds notes to every response (e.g. how many specs could not be loaded).
    pub fn with_notes(mut self, notes: Vec<String>) -> Retriever {
        self.notes = notes;
        self
    }

    /// The lexical index of `templates`.
    pub fn template_index(templates: &Templates) -> Result<Index, Error> {
        let docs = templates.iter().map(Document::from_template).collect();
        Index::build(docs, None, &IndexOptions::default())
    }

    pub fn blocks(&self) -> &Index {
        &self.blocks
    }

    pub fn templates(&self) -> &Index {
        &self.templates
    }

    /// The block index's embedder when it is ready ([`Index::embedder`]).
    pub fn embedder(&self) -> Option<&Arc<dyn Embedder>> {
        self.blocks.embedder()
    }

    /// The Top-K block candidates for `request`, `doc_texts` being the attached documents'
    /// text ([`top_k`] over the blocks).
    pub fn retrieve(
        &self,
        request: &RetrieveRequest,
        doc_texts: &[String],
    ) -> Result<RetrieveResponse, Error> {
        let mut response = top_k(&self.blocks, request, doc_texts)?;
        if !self.notes.is_empty() {
            response.notes.splice(0..0, self.notes.iter().cloned());
        }
        Ok(response)
    }

    /// The templates that share at least one word (or a two-character CJK bigram) with the
    /// instruction and the documents, best first, with their raw BM25 scores. A lone shared
    /// kanji is no evidence that a template fits.
    pub fn rank_templates(
        &self,
        instruction: &str,
        doc_texts: &[String],
    ) -> Result<Vec<TemplateMatch>, Error> {
        if self.templates.is_empty() {
            return Ok(Vec::new());
        }
        let mut query = Query::new(instruction).with_mode(Mode::Bm25);
        query.kind = Some(DocKind::Template);
        query.docs = doc_texts
            .iter()
            .filter(|d| !d.trim().is_empty())
            .cloned()
            .collect();
        let ranking = self.templates.rank(&query)?;
        Ok(ranking
            .scored
            .iter()
            .filter(|s| s.bm25 > 0.0)
            .filter(|s| {
                self.templates
                    .matched(&ranking, s.ord)
                    .iter()
                    .any(|term| term.chars().count() >= 2)
            })
            .map(|s| TemplateMatch {
                id: self.templates.docs()[s.ord].id.clone(),
                bm25: s.bm25,
            })
            .collect())
    }

    /// The templates of `templates` in the order of [`Retriever::rank_templates`].
    pub fn matching_templates<'t>(
        &self,
        instruction: &str,
        doc_texts: &[String],
        templates: &'t Templates,
    ) -> Result<Vec<(f32, &'t TemplateSpec)>, Error> {
        Ok(self
            .rank_templates(instruction, doc_texts)?
            .into_iter()
            .filter_map(|m| templates.get(&m.id).map(|t| (m.bm25, t)))
            .collect())
    }
}

/// What a shared retriever was built from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RetrieverKey {
    /// A fingerprint of the catalog and template files (and of where they are).
    pub sources: u64,
    /// The embedder's name; `None` for a BM25-only retriever.
    pub embedder: Option<String>,
}

/// How many retrievers the process keeps (one per workspace and embedder in practice; the
/// oldest goes first).
const CACHED: usize = 4;

/// The cached retrievers, oldest first.
type Cache = Vec<(RetrieverKey, Arc<Retriever>)>;

static CACHE: LazyLock<Mutex<Cache>> = LazyLock::new(|| Mutex::new(Vec::new()));

/// The retriever built for `key`, built with `build` when there is none yet. The build runs
/// outside the lock (it may embed passages); two callers racing for a new key both build,
/// and the later one's retriever is kept.
pub fn shared(
    key: RetrieverKey,
    build: impl FnOnce() -> Result<Retriever, Error>,
) -> Result<Arc<Retriever>, Error> {
    if let Some(found) = cached(&key) {
        return Ok(found);
    }
    let built = Arc::new(build()?);
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    cache.retain(|(k, _)| k != &key);
    if cache.len() >= CACHED {
        cache.remove(0);
    }
    cache.push((key, Arc::clone(&built)));
    Ok(built)
}

/// The retriever cached for `key`, if any.
pub fn cached(key: &RetrieverKey) -> Option<Arc<Retriever>> {
    let cache = CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    cache
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, r)| Arc::clone(r))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn key(sources: u64) -> RetrieverKey {
        RetrieverKey {
            sources,
            embedder: None,
        }
    }

    fn empty() -> Result<Retriever, Error> {
        Retriever::build(&Catalog::from_specs([]), &Templates::from_specs([]), None)
    }

    #[test]
    fn a_key_is_built_once_and_a_changed_key_builds_again() {
        // Keys no other test uses: the cache is the process's.
        let base = 0x5eed_0000_0000_0000_u64;
        let mut builds = 0;
        let first = shared(key(base), || {
            builds += 1;
            empty()
        })
        .unwrap();
        let again = shared(key(base), || {
            builds += 1;
            empty()
        })
        .unwrap();
        assert_eq!(builds, 1);
        assert!(Arc::ptr_eq(&first, &again));
        let changed = shared(key(base + 1), || {
            builds += 1;
            empty()
        })
        .unwrap();
        assert_eq!(builds, 2);
        assert!(!Arc::ptr_eq(&first, &changed));
    }

    #[test]
    fn a_failed_build_is_not_cached() {
        let k = key(0x5eed_0000_0000_0100);
        let err = shared(k.clone(), || Err(Error::InvalidArgument("no".into())));
        assert!(err.is_err());
        assert!(cached(&k).is_none());
    }
}
