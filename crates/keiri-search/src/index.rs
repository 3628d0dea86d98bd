//! The searchable index (BM25 + passage vectors) and the two ways to query it: [`Index::rank`]
//! scores every eligible document, [`top_k`] turns that into the capped candidate list the
//! planner sees.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use keiri_plan::Catalog;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::bm25::{Bm25Index, FieldBoosts, QueryTerm, query_words};
use crate::document::{DocKind, Document};
use crate::embed::{
    EmbedKind, Embedder, Prepared, Progress, cosine, l2_normalize, prepare_passages,
};
use crate::error::Error;
use crate::fusion::{self, FusionKind};

/// Which scores rank the candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// BM25 (+ the port-name vocabulary score) only.
    Bm25,
    /// Embedding cosine only.
    Dense,
    /// Both, fused.
    #[default]
    Hybrid,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Bm25 => "bm25",
            Mode::Dense => "dense",
            Mode::Hybrid => "hybrid",
        }
    }
}

impl std::str::FromStr for Mode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Mode, Error> {
        match s.trim().to_ascii_lowercase().as_str() {
            "bm25" | "lexical" => Ok(Mode::Bm25),
            "dense" | "embedding" => Ok(Mode::Dense),
            "hybrid" => Ok(Mode::Hybrid),
            other => Err(Error::InvalidArgument(format!(
                "unknown mode {other:?} (expected bm25, dense or hybrid)"
            ))),
        }
    }
}

/// Default weight of the dense side in the convex fusion, chosen on the dev set
/// (`eval/dev.yaml`, see the crate README for the sweep).
pub const DEFAULT_DENSE_WEIGHT: f32 = 0.5;
/// Default per-category cap, and its allowed range.
pub const DEFAULT_PER_CATEGORY: usize = 6;
pub const PER_CATEGORY_RANGE: std::ops::RangeInclusive<usize> = 5..=8;
/// At most this many candidates in total (pinned ones included).
pub const MAX_CANDIDATES: usize = 30;
/// Weight of attached document text relative to the instruction.
const DOC_WEIGHT: f32 = 0.3;
/// Characters used from each attached document, and documents used at most.
const DOC_CHARS: usize = 4_000;
const MAX_DOCS: usize = 8;
/// Characters of the instruction used; an instruction is a few sentences, and the cap keeps
/// a pasted document from turning into a huge query.
const MAX_INSTRUCTION_CHARS: usize = 20_000;
/// Distinct query terms kept (the instruction's come first).
const MAX_QUERY_TERMS: usize = 512;
/// Weight of the port-name vocabulary score added to BM25.
const VOCABULARY_WEIGHT: f32 = 1.0;
/// How often [`Index::build_waiting`] looks at the background embedding's progress.
const WAIT_POLL: std::time::Duration = std::time::Duration::from_millis(50);
/// Matched terms reported per candidate.
const MATCHED_LIMIT: usize = 12;

/// Index-time settings.
#[derive(Debug, Clone, Default)]
pub struct IndexOptions {
    pub boosts: FieldBoosts,
}

/// One query.
#[derive(Debug, Clone)]
pub struct Query {
    pub instruction: String,
    /// Text of attached documents (already extracted); they widen the query at lower weight.
    pub docs: Vec<String>,
    pub mode: Mode,
    pub fusion: FusionKind,
    pub dense_weight: f32,
    /// Restrict to one kind of document.
    pub kind: Option<DocKind>,
    /// Restrict to one category (within `kind`).
    pub category: Option<String>,
    /// Also embed each clause of the instruction on the dense side (see [`split_clauses`]).
    pub clauses: bool,
}

impl Query {
    pub fn new(instruction: impl Into<String>) -> Query {
        Query {
            instruction: instruction.into(),
            docs: Vec::new(),
            mode: Mode::Hybrid,
            fusion: FusionKind::Convex,
            dense_weight: DEFAULT_DENSE_WEIGHT,
            kind: None,
            category: None,
            clauses: true,
        }
    }

    pub fn with_mode(mut self, mode: Mode) -> Query {
        self.mode = mode;
        self
    }
}

/// One document with its scores.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// Position of the document in the index.
    pub ord: usize,
    /// Fused score (or the single side's normalised score in bm25/dense mode).
    pub score: f32,
    /// Raw BM25 score.
    pub bm25: f32,
    /// Port-name vocabulary score (added to BM25 before fusion).
    pub vocabulary: f32,
    /// Best cosine over the document's passages, when embeddings ran.
    pub dense: Option<f32>,
}

/// Every eligible document, best first.
#[derive(Debug, Clone)]
pub struct Ranking {
    pub scored: Vec<Scored>,
    /// The mode that actually ran (hybrid or dense fall back to bm25 without embeddings).
    pub mode: Mode,
    pub notes: Vec<String>,
    terms: Vec<QueryTerm>,
}

/// A searchable set of documents.
pub struct Index {
    docs: Vec<Document>,
    by_id: HashMap<(DocKind, String), usize>,
    bm25: Bm25Index,
    embedder: Option<Arc<dyn Embedder>>,
    /// Passage vectors of each document (empty without an embedder).
    vectors: Vec<Vec<Vec<f32>>>,
    notes: Vec<String>,
    /// The dense side is still on its way (the model loading, or the workspace's passages
    /// embedding in the background): its note says so, and ranking adds no other.
    pending: bool,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("docs", &self.docs.len())
            .field("embedder", &self.embedder_name())
            .finish_non_exhaustive()
    }
}

impl Index {
    /// Indexes every block of `catalog`.
    pub fn from_catalog(
        catalog: &Catalog,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> Result<Index, Error> {
        let docs = catalog.blocks().map(Document::from_block).collect();
        Index::build(docs, embedder, &IndexOptions::default())
    }

    /// Indexes `docs` and embeds their passages. When embedding fails the index still works
    /// lexically, and [`Index::notes`] says why the dense side is missing.
    pub fn build(
        docs: Vec<Document>,
        embedder: Option<Arc<dyn Embedder>>,
        options: &IndexOptions,
    ) -> Result<Index, Error> {
        let flat = embedder.as_ref().map(|e| {
            let passages = passages(&docs);
            e.embed(&passages, EmbedKind::Passage)
                .map(|flat| (flat, passages.len()))
        });
        Index::assemble(docs, embedder, flat, options)
    }

    /// Like [`Index::build`], but passages that the embedder does not hold already (bundled
    /// pack, disk cache) are embedded in the background ([`prepare_passages`]): until they
    /// are all there the index is BM25-only and the progress is returned, so the caller can
    /// answer at once and ask again later.
    pub fn build_background(
        docs: Vec<Document>,
        embedder: Option<Arc<dyn Embedder>>,
        options: &IndexOptions,
    ) -> Result<(Index, Option<Progress>), Error> {
        let Some(e) = embedder else {
            return Ok((Index::assemble(docs, None, None, options)?, None));
        };
        let passages = passages(&docs);
        match prepare_passages(&e, &passages) {
            Ok(Prepared::Ready(flat)) => {
                let flat = Some(Ok((flat, passages.len())));
                Ok((Index::assemble(docs, Some(e), flat, options)?, None))
            }
            Ok(Prepared::Pending(progress)) => {
                let mut index = Index::assemble(docs, None, None, options)?;
                index.pending = true;
                index.notes.push(format!(
                    "embedding {} of the workspace's passages with {} in the background ({} done); BM25 results meanwhile",
                    progress.total,
                    e.name(),
                    progress.done
                ));
                Ok((index, Some(progress)))
            }
            Err(err) => {
                let flat = Some(Err(err));
                Ok((Index::assemble(docs, Some(e), flat, options)?, None))
            }
        }
    }

    /// Like [`Index::build_background`], but waits for the passages the pack and the disk
    /// cache lack to be embedded, telling `on_progress` how far it has got while it waits:
    /// for callers that answer once (the CLI, MCP, a CLI-driven planner). The vectors go to
    /// the embedder's disk cache, so the next process finds them there. Also returns how many
    /// passages were embedded for this call (0 when the pack and cache held them all). A
    /// failed embedding leaves the index lexical, with a note saying why.
    pub fn build_waiting(
        docs: Vec<Document>,
        embedder: Option<Arc<dyn Embedder>>,
        options: &IndexOptions,
        on_progress: &dyn Fn(Progress),
    ) -> Result<(Index, usize), Error> {
        let Some(e) = embedder else {
            return Ok((Index::assemble(docs, None, None, options)?, 0));
        };
        let passages = passages(&docs);
        let mut embedded = 0;
        let mut last = None;
        let flat = loop {
            match prepare_passages(&e, &passages) {
                Ok(Prepared::Ready(flat)) => break Ok(flat),
                Ok(Prepared::Pending(progress)) => {
                    embedded = embedded.max(progress.total);
                    if last != Some(progress) {
                        on_progress(progress);
                        last = Some(progress);
                    }
                    std::thread::sleep(WAIT_POLL);
                }
                Err(err) => break Err(err),
            }
        };
        if embedded > 0 && flat.is_ok() {
            on_progress(Progress {
                done: embedded,
                total: embedded,
            });
        }
        let flat = Some(flat.map(|f| (f, passages.len())));
        let index = Index::assemble(docs, Some(e), flat, options)?;
        let embedded = if index.embedder.is_some() {
            embedded
        } else {
            0
        };
        Ok((index, embedded))
    }

    /// The BM25 index of `docs` while the embedding model `model` is still loading: the dense
    /// side comes with a later call, and the progress says nothing is embedded yet.
    pub fn build_while_model_loads(
        docs: Vec<Document>,
        model: &str,
        options: &IndexOptions,
    ) -> Result<(Index, Progress), Error> {
        let total = passages(&docs).len();
        let mut index = Index::assemble(docs, None, None, options)?;
        index.pending = true;
        index.notes.push(format!(
            "loading the embedding model {model}; BM25 results meanwhile"
        ));
        Ok((index, Progress { done: 0, total }))
    }

    /// The index of `docs` with the passage vectors `flat` (all passages in document order,
    /// with their count), or without a dense side when there are none or they failed.
    fn assemble(
        docs: Vec<Document>,
        embedder: Option<Arc<dyn Embedder>>,
        flat: Option<Result<FlatVectors, Error>>,
        options: &IndexOptions,
    ) -> Result<Index, Error> {
        let bm25 = Bm25Index::build(&docs, options.boosts)?;
        let by_id = docs
            .iter()
            .enumerate()
            .map(|(i, d)| ((d.kind, d.id.clone()), i))
            .collect();
        let mut notes = Vec::new();
        let mut vectors = Vec::new();
        let mut embedder = embedder;
        if flat.is_none() {
            embedder = None;
        }
        if let (Some(e), Some(result)) = (&embedder, flat) {
            match result {
                Ok((flat, count)) if flat.len() == count => {
                    let mut flat = flat.into_iter();
                    vectors = docs
                        .iter()
                        .map(|d| flat.by_ref().take(d.passages.len()).collect())
                        .collect();
                }
                Ok((flat, count)) => {
                    notes.push(format!(
                        "embedding the catalog with {} returned {} vectors for {} passages; using BM25 only",
                        e.name(),
                        flat.len(),
                        count
                    ));
                    embedder = None;
                }
                Err(err) => {
                    notes.push(format!(
                        "embedding the catalog with {} failed ({err}); using BM25 only",
                        e.name()
                    ));
                    embedder = None;
                }
            }
        }
        Ok(Index {
            docs,
            by_id,
            bm25,
            embedder,
            vectors,
            notes,
            pending: false,
        })
    }

    pub fn docs(&self) -> &[Document] {
        &self.docs
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The embedder's model name, when the dense side is available.
    pub fn embedder_name(&self) -> Option<&str> {
        self.embedder.as_deref().map(Embedder::name)
    }

    /// The embedder of the dense side, when it is ready (not while the model still loads):
    /// what else needs text similarity in the same process (a column's meaning) uses it too.
    pub fn embedder(&self) -> Option<&Arc<dyn Embedder>> {
        self.embedder.as_ref().filter(|_| !self.pending)
    }

    /// Notes from building the index (a failed catalog embedding).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Looks a document up by kind and id.
    pub fn position(&self, kind: DocKind, id: &str) -> Option<usize> {
        self.by_id.get(&(kind, id.to_string())).copied()
    }

    /// Scores every document that passes the query's filters, best first. In bm25 mode a
    /// document without any lexical evidence is left out rather than ranked arbitrarily.
    pub fn rank(&self, query: &Query) -> Result<Ranking, Error> {
        let mut notes = Vec::new();
        let instruction: String = query
            .instruction
            .chars()
            .take(MAX_INSTRUCTION_CHARS)
            .collect();
        let docs: Vec<String> = query
            .docs
            .iter()
            .take(MAX_DOCS)
            .map(|d| d.chars().take(DOC_CHARS).collect())
            .collect();
        let terms = self
            .bm25
            .query_terms(&instruction, &docs, DOC_WEIGHT, MAX_QUERY_TERMS);
        let words = query_words(&instruction, 64);
        let eligible: Vec<usize> = (0..self.docs.len())
            .filter(|&i| {
                let d = &self.docs[i];
                query.kind.is_none_or(|k| d.kind == k)
                    && query.category.as_deref().is_none_or(|c| d.category == c)
            })
            .collect();
        if self.docs.is_empty() {
            notes.push("the catalog has nothing to search: no block or template was loaded".into());
        }
        if let Some(category) = &query.category
            && eligible.is_empty()
        {
            notes.push(format!("no document is in the category {category:?}"));
        }
        let bm25_all = self
            .bm25
            .scores(&terms, query.kind, query.category.as_deref())?;

        let mut mode = query.mode;
        let mut dense_all: Option<Vec<f32>> = None;
        if mode != Mode::Bm25 {
            match self.dense_scores(&instruction, &docs, query.clauses) {
                Ok(Some(scores)) => dense_all = Some(scores),
                Ok(None) => {
                    if !self.pending {
                        notes.push(format!(
                            "no embedding model is available, so {} retrieval ran as BM25 only",
                            mode.as_str()
                        ));
                    }
                    mode = Mode::Bm25;
                }
                Err(e) => {
                    notes.push(format!("embedding the query failed ({e}); ran BM25 only"));
                    mode = Mode::Bm25;
                }
            }
        }

        let vocabulary: Vec<f32> = eligible
            .iter()
            .map(|&i| self.bm25.vocabulary_score(i, &words))
            .collect();
        let bm25: Vec<f32> = eligible.iter().map(|&i| bm25_all[i]).collect();
        let lexical: Vec<f32> = bm25
            .iter()
            .zip(&vocabulary)
            .map(|(b, v)| b + VOCABULARY_WEIGHT * v)
            .collect();
        let dense: Option<Vec<f32>> = dense_all
            .as_ref()
            .map(|all| eligible.iter().map(|&i| all[i]).collect());
        let fused: Vec<f32> = match (mode, &dense) {
            (Mode::Dense, Some(d)) => fusion::min_max(d),
            (Mode::Hybrid, Some(d)) => match query.fusion {
                FusionKind::Convex => fusion::convex(&lexical, d, query.dense_weight),
                FusionKind::Rrf => fusion::rrf(&lexical, d),
            },
            _ => fusion::min_max(&lexical),
        };
        let mut scored: Vec<Scored> = eligible
            .iter()
            .enumerate()
            .filter(|&(j, _)| mode != Mode::Bm25 || lexical[j] > 0.0)
            .map(|(j, &ord)| Scored {
                ord,
                score: fused[j],
                bm25: bm25[j],
                vocabulary: vocabulary[j],
                dense: dense.as_ref().map(|d| d[j]),
            })
            .collect();
        scored.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(b.bm25.total_cmp(&a.bm25))
                .then_with(|| self.docs[a.ord].id.cmp(&self.docs[b.ord].id))
        });
        if scored.is_empty() && !eligible.is_empty() {
            notes.push("no document shares a word with the instruction".into());
        }
        Ok(Ranking {
            scored,
            mode,
            notes,
            terms,
        })
    }

    /// Best passage cosine of every document, or `None` without an embedder.
    fn dense_scores(
        &self,
        instruction: &str,
        docs: &[String],
        use_clauses: bool,
    ) -> Result<Option<Vec<f32>>, Error> {
        let Some(embedder) = &self.embedder else {
            return Ok(None);
        };
        let clauses = if use_clauses {
            split_clauses(instruction)
        } else {
            Vec::new()
        };
        let mut texts = vec![instruction.to_string()];
        let joined = docs.join("\n");
        let has_docs = !joined.trim().is_empty();
        if has_docs {
            texts.push(joined.chars().take(2_000).collect());
        }
        texts.extend(clauses.iter().cloned());
        let vectors = embedder.embed(&texts, EmbedKind::Query)?;
        if vectors.len() != texts.len() {
            return Err(Error::Http(format!(
                "{} returned {} vectors for {} texts",
                embedder.name(),
                vectors.len(),
                texts.len()
            )));
        }
        let mut query = vectors.first().cloned().unwrap_or_default();
        if has_docs && let Some(doc_vector) = vectors.get(1) {
            for (q, d) in query.iter_mut().zip(doc_vector) {
                *q += DOC_WEIGHT * d;
            }
            l2_normalize(&mut query);
        }
        let clause_vectors = &vectors[vectors.len() - clauses.len()..];
        let best = |p: &[f32]| {
            let whole = cosine(&query, p);
            // A plan needs one block per step, and one query vector blurs the steps of a
            // long instruction together, so each clause also gets its own say: a block
            // scores by its best match among the whole instruction and its clauses.
            clause_vectors
                .iter()
                .map(|c| cosine(c, p))
                .fold(whole, f32::max)
        };
        let scores = self
            .vectors
            .iter()
            .map(|passages| passages.iter().map(|p| best(p)).fold(0.0_f32, f32::max))
            .collect();
        Ok(Some(scores))
    }

    /// The query terms found in document `ord`.
    pub fn matched(&self, ranking: &Ranking, ord: usize) -> Vec<String> {
        self.bm25.matched(ord, &ranking.terms, MATCHED_LIMIT)
    }
}

/// Every passage's vector in document order, with the number of passages they are for.
type FlatVectors = (Vec<Vec<f32>>, usize);

/// Every passage of `docs`, in document order.
fn passages(docs: &[Document]) -> Vec<String> {
    docs.iter()
        .flat_map(|d| d.passages.iter().cloned())
        .collect()
}

/// The `blocks_retrieve` request: the tool contract shared by the API, the CLI and MCP.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrieveRequest {
    /// What the user wants done, in Japanese or English.
    pub instruction: String,
    /// Paths of attached documents; the caller resolves them and passes their text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub docs: Vec<String>,
    /// Candidates per category, 5 to 8 (default 6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<usize>,
    /// bm25, dense or hybrid (default hybrid; without embeddings it runs as bm25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    /// Block ids that must be in the candidates whatever their score.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pinned: Vec<String>,
    /// Only candidates of this category.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// convex (default) or rrf.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fusion: Option<FusionKind>,
    /// Weight of the dense side in convex fusion, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dense_weight: Option<f32>,
}

impl RetrieveRequest {
    /// Checks the arguments that do not need the index: `k` in 5..=8, `dense_weight` in
    /// 0..=1, and an instruction or at least one document.
    pub fn validate(&self) -> Result<(), Error> {
        if let Some(k) = self.k
            && !PER_CATEGORY_RANGE.contains(&k)
        {
            return Err(Error::InvalidArgument(format!(
                "k must be between {} and {}, got {k}",
                PER_CATEGORY_RANGE.start(),
                PER_CATEGORY_RANGE.end()
            )));
        }
        if let Some(w) = self.dense_weight
            && !(0.0..=1.0).contains(&w)
        {
            return Err(Error::InvalidArgument(format!(
                "dense_weight must be between 0 and 1, got {w}"
            )));
        }
        if self.instruction.trim().is_empty() && self.docs.is_empty() {
            return Err(Error::InvalidArgument("the instruction is empty".into()));
        }
        Ok(())
    }
}

/// One candidate, with every score the UI shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Candidate {
    pub id: String,
    pub kind: DocKind,
    pub category: String,
    pub title: String,
    /// The fused score used for ranking (0 to 1 for convex fusion).
    pub score: f32,
    /// Raw BM25 score.
    pub bm25: f32,
    /// Port-name vocabulary score.
    pub vocabulary: f32,
    /// Embedding cosine, when embeddings ran.
    pub dense: Option<f32>,
    /// Query terms found in the document.
    pub matched: Vec<String>,
    /// Whether the user pinned it.
    pub pinned: bool,
}

/// The `blocks_retrieve` response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RetrieveResponse {
    pub candidates: Vec<Candidate>,
    /// The mode that actually ran.
    pub mode: Mode,
    /// The embedding model used, or null for BM25 only.
    pub embedder: Option<String>,
    /// What the user should know (fallbacks, unknown pinned ids).
    pub notes: Vec<String>,
    /// Set while the workspace's own blocks are being embedded in the background: the
    /// candidates are BM25-only meanwhile; ask again for hybrid results once it is done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding_progress: Option<Progress>,
}

/// Answers a request: ranks, then keeps at most `k` per (kind, category) and
/// [`MAX_CANDIDATES`] in total, always including the pinned blocks. `doc_texts` are the
/// texts of `request.docs`.
pub fn top_k(
    index: &Index,
    request: &RetrieveRequest,
    doc_texts: &[String],
) -> Result<RetrieveResponse, Error> {
    request.validate()?;
    if request.instruction.trim().is_empty() && doc_texts.iter().all(|d| d.trim().is_empty()) {
        return Err(Error::InvalidArgument("the instruction is empty".into()));
    }
    let k = request.k.unwrap_or(DEFAULT_PER_CATEGORY);
    let dense_weight = request.dense_weight.unwrap_or(DEFAULT_DENSE_WEIGHT);
    let query = Query {
        instruction: request.instruction.clone(),
        docs: doc_texts.to_vec(),
        mode: request.mode.unwrap_or_default(),
        fusion: request.fusion.unwrap_or_default(),
        dense_weight,
        kind: Some(DocKind::Block),
        category: request.category.clone(),
        clauses: true,
    };
    let ranking = index.rank(&query)?;
    let mut notes: Vec<String> = index.notes().to_vec();
    notes.extend(ranking.notes.iter().cloned());

    let mut pinned: Vec<usize> = Vec::new();
    for id in &request.pinned {
        match index.position(DocKind::Block, id) {
            Some(ord) if !pinned.contains(&ord) => pinned.push(ord),
            Some(_) => {}
            None => notes.push(format!("the pinned block {id} is not in the catalog")),
        }
    }
    let free_slots = MAX_CANDIDATES.saturating_sub(pinned.len());
    let mut per_category: HashMap<(DocKind, &str), usize> = HashMap::new();
    let mut chosen: Vec<&Scored> = Vec::new();
    for s in &ranking.scored {
        if chosen.len() >= free_slots {
            break;
        }
        if pinned.contains(&s.ord) {
            continue;
        }
        let doc = &index.docs[s.ord];
        let count = per_category
            .entry((doc.kind, doc.category.as_str()))
            .or_default();
        if *count < k {
            *count += 1;
            chosen.push(s);
        }
    }
    let scored_by_ord: HashMap<usize, &Scored> =
        ranking.scored.iter().map(|s| (s.ord, s)).collect();
    let pinned_set: HashSet<usize> = pinned.iter().copied().collect();
    let mut rows: Vec<(Scored, bool)> = chosen.into_iter().map(|s| (s.clone(), false)).collect();
    for ord in pinned {
        // A pinned block outside the ranking (filtered out, or without lexical evidence in
        // bm25 mode) still comes with whatever scores it has: none.
        let s = scored_by_ord.get(&ord).map_or(
            Scored {
                ord,
                score: 0.0,
                bm25: 0.0,
                vocabulary: 0.0,
                dense: None,
            },
            |s| (*s).clone(),
        );
        rows.push((s, true));
    }
    rows.sort_by(|a, b| b.0.score.total_cmp(&a.0.score).then(b.1.cmp(&a.1)));
    let candidates = rows
        .into_iter()
        .map(|(s, _)| {
            let doc = &index.docs[s.ord];
            Candidate {
                id: doc.id.clone(),
                kind: doc.kind,
                category: doc.category.clone(),
                title: doc.title.clone(),
                score: s.score,
                bm25: s.bm25,
                vocabulary: s.vocabulary,
                dense: s.dense,
                matched: index.matched(&ranking, s.ord),
                pinned: pinned_set.contains(&s.ord),
            }
        })
        .collect();
    Ok(RetrieveResponse {
        candidates,
        mode: ranking.mode,
        embedder: if ranking.mode == Mode::Bm25 {
            None
        } else {
            index.embedder_name().map(str::to_string)
        },
        notes,
        embedding_progress: None,
    })
}

/// The clauses of an instruction, one per step: split at punctuation, at Japanese
/// conjunctive て/で forms (`検出して|Excelに`, `読み込んで|`), and at English `then`.
/// Returns nothing when the instruction is a single clause. Fragments shorter than four
/// characters are dropped and at most eight clauses are kept.
pub fn split_clauses(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut clauses: Vec<String> = Vec::new();
    let mut current = String::new();
    let hiragana = |c: char| ('\u{3041}'..='\u{309F}').contains(&c);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        if matches!(
            c,
            '、' | '。' | '，' | '．' | ',' | ';' | '；' | '!' | '?' | '！' | '？' | '\n'
        ) || (c == '.' && next.is_none_or(char::is_whitespace))
        {
            clauses.push(std::mem::take(&mut current));
            i += 1;
            continue;
        }
        current.push(c);
        let te_form =
            (c == 'て' && prev.is_some_and(hiragana)) || (c == 'で' && prev == Some('ん'));
        if te_form && next.is_some() {
            // `…てから` stays with its clause.
            if chars.get(i + 1) == Some(&'か') && chars.get(i + 2) == Some(&'ら') {
                current.push_str("から");
                i += 2;
            }
            clauses.push(std::mem::take(&mut current));
        }
        i += 1;
    }
    clauses.push(current);
    let mut out: Vec<String> = Vec::new();
    for clause in clauses {
        // English steps joined by "then" are clauses too.
        for part in clause.split(" then ") {
            let part = part.trim().trim_start_matches("and ").trim();
            if part.chars().count() >= 4 && out.len() < 8 {
                out.push(part.to_string());
            }
        }
    }
    if out.len() < 2 { Vec::new() } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expect: &[&str]) {
        assert_eq!(split_clauses(input), expect, "split_clauses({input:?})");
    }

    #[test]
    fn clauses() {
        check(
            "請求書CSVから重複を検出してExcelレポートにする",
            &["請求書CSVから重複を検出して", "Excelレポートにする"],
        );
        check(
            "CSVを読み込んで3点照合し、差異をメールで知らせる",
            &["CSVを読み込んで", "3点照合し", "差異をメールで知らせる"],
        );
        check(
            "重複を除いてから、並べ替える",
            &["重複を除いてから", "並べ替える"],
        );
        check(
            "Check the totals, then export them for freee",
            &["Check the totals", "export them for freee"],
        );
        check("重複を検出する", &[]);
        check("", &[]);
    }
}
