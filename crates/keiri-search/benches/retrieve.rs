//! Retrieval benchmark (a bench binary, `harness = false`): index build time and query
//! latency p50/p95 for BM25 and hybrid retrieval over 50 and 5,000 blocks.
//!
//! The 50-block index is the first 50 blocks of the repository's catalog; the 5,000-block
//! index is synthetic: each real block is copied under new ids with its descriptions mixed
//! with words of another block, so the BM25 postings grow like a real large catalog. The
//! copies keep their source block's passages, so with the disk cache warm ("a cached
//! catalog") building the hybrid index reads vectors instead of running the model. The query
//! itself is always embedded live by the local model. Queries are the dev set's
//! instructions.
//!
//! Run: `cargo bench -p keiri-search --bench retrieve` (needs `scripts/fetch-models.sh` for
//! the hybrid rows; without the model only BM25 is measured).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use keiri_plan::Catalog;
use keiri_search::embed::{CachedEmbedder, DiskCache, E5Embedder};
use keiri_search::index::IndexOptions;
use keiri_search::{
    Document, EmbedKind, Embedder, Error, EvalSet, Index, Mode, RetrieveRequest, top_k,
};

/// Passages from the disk cache, queries straight from the model.
struct CachedPassages {
    passages: CachedEmbedder,
    model: Arc<E5Embedder>,
}

impl Embedder for CachedPassages {
    fn name(&self) -> &str {
        self.model.name()
    }
    fn embed(&self, texts: &[String], kind: EmbedKind) -> Result<Vec<Vec<f32>>, Error> {
        match kind {
            EmbedKind::Passage => self.passages.embed(texts, kind),
            EmbedKind::Query => self.model.embed(texts, kind),
        }
    }
}

fn synthetic(base: &[Document], n: usize) -> Vec<Document> {
    (0..n)
        .map(|i| {
            let mut d = base[i % base.len()].clone();
            let other = &base[(i * 7 + 3) % base.len()];
            d.id = format!("{}_{i}", d.id);
            d.id_words = format!("{} v{i}", d.id_words);
            let words: Vec<&str> = other.description.split_whitespace().take(12).collect();
            d.description = format!("{}\n{}", d.description, words.join(" "));
            d.tags = format!("{} {}", d.tags, other.tags);
            d
        })
        .collect()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn latency(index: &Index, queries: &[String], mode: Mode, rounds: usize) -> (Duration, Duration) {
    let mut samples = Vec::new();
    for _ in 0..rounds {
        for q in queries {
            let req = RetrieveRequest {
                instruction: q.clone(),
                mode: Some(mode),
                ..RetrieveRequest::default()
            };
            let start = Instant::now();
            let response = top_k(index, &req, &[]).unwrap();
            samples.push(start.elapsed());
            assert_eq!(response.mode, mode);
        }
    }
    samples.sort();
    (percentile(&samples, 0.5), percentile(&samples, 0.95))
}

fn main() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let (catalog, issues) = Catalog::load(&[manifest.join("../../block_specs")]);
    assert!(
        issues.is_empty() && catalog.len() >= 50,
        "catalog: {issues:?}"
    );
    let base: Vec<Document> = catalog.blocks().map(Document::from_block).collect();
    let set = EvalSet::load(&manifest.join("eval/dev.yaml")).unwrap();
    let queries: Vec<String> = set.queries.iter().map(|q| q.instruction.clone()).collect();

    let model_dir = std::env::var_os("KEIRI_EMBED_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../../models/multilingual-e5-small"));
    let embedder: Option<Arc<dyn Embedder>> = match E5Embedder::shared(&model_dir) {
        Ok(model) => {
            let cache = DiskCache::new(manifest.join("../../target/tmp/keiri-search-embeddings"));
            Some(Arc::new(CachedPassages {
                passages: CachedEmbedder::new(model.clone(), cache),
                model,
            }))
        }
        Err(e) => {
            println!("note: no local model ({e}); measuring BM25 only");
            None
        }
    };

    println!("| blocks | index | build | mode | p50 | p95 | queries |");
    println!("|---|---|---|---|---|---|---|");
    for n in [50, 5_000] {
        let docs = if n <= base.len() {
            base[..n].to_vec()
        } else {
            synthetic(&base, n)
        };
        let start = Instant::now();
        let bm25 = Index::build(docs.clone(), None, &IndexOptions::default()).unwrap();
        let bm25_build = start.elapsed();
        let rounds = if n <= 50 { 5 } else { 2 };
        let (p50, p95) = latency(&bm25, &queries, Mode::Bm25, rounds);
        println!(
            "| {n} | BM25 | {} | bm25 | {} | {} | {} |",
            ms(bm25_build),
            ms(p50),
            ms(p95),
            queries.len() * rounds
        );
        if let Some(e) = &embedder {
            // Warm the passage cache first (the model runs once per distinct passage), then
            // time the build that a later process would do.
            Index::build(docs.clone(), Some(e.clone()), &IndexOptions::default()).unwrap();
            let start = Instant::now();
            let hybrid = Index::build(docs, Some(e.clone()), &IndexOptions::default()).unwrap();
            let hybrid_build = start.elapsed();
            let (p50, p95) = latency(&hybrid, &queries, Mode::Hybrid, 1);
            println!(
                "| {n} | BM25 + cached vectors | {} | hybrid | {} | {} | {} |",
                ms(hybrid_build),
                ms(p50),
                ms(p95),
                queries.len()
            );
        }
    }
}
