//! Paths and shared setup: the repository's catalog, the fixtures, the local model.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use keiri_plan::Catalog;
use keiri_search::embed::{
    CachedEmbedder, DiskCache, E5Embedder, LOCAL_MODEL_NAME, Pack, PackedEmbedder,
};
use keiri_search::{Embedder, Index};

pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The repository's block catalog directory (`block_specs/`).
fn catalog_dir() -> PathBuf {
    manifest_dir().join("../../block_specs")
}

/// The bundled embedding pack of the local model, beside the catalog.
pub fn pack_path() -> PathBuf {
    Pack::path_in(&catalog_dir(), LOCAL_MODEL_NAME)
}

/// The repository's block catalog (`block_specs/`).
pub fn catalog() -> Catalog {
    let dir = catalog_dir();
    let (catalog, issues) = Catalog::load(std::slice::from_ref(&dir));
    assert!(issues.is_empty(), "catalog issues: {issues:?}");
    assert!(
        catalog.len() >= 50,
        "expected the block catalog in {}",
        dir.display()
    );
    catalog
}

/// A file of the shared fixtures (`<repo>/../shared/fixtures`; see keiri-testkit).
pub fn fixture(rel: &str) -> PathBuf {
    keiri_testkit::shared_fixture(rel)
}

/// The local model directory, or `None` (with a visible message) when it has not been
/// fetched. In CI (`CI=true`) a missing model is a failure, because CI fetches it.
pub fn model_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("KEIRI_EMBED_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir().join("../../models/multilingual-e5-small"));
    let present = dir.join("e5-small-q4.bin").is_file() && dir.join("tokenizer.json").is_file();
    if present {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!(
            "CI=true but the embedding model is missing in {}: run scripts/fetch-models.sh",
            dir.display()
        );
    }
    // Written to the real stderr, not the captured test output, so the skip is visible.
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED: the local embedding model is not in {} (run scripts/fetch-models.sh)",
        dir.display()
    );
    None
}

/// The local model behind a disk cache under the target directory, so repeated test runs
/// embed the catalog once.
pub fn local_embedder() -> Option<Arc<dyn Embedder>> {
    let dir = model_dir()?;
    let model = E5Embedder::shared(&dir).unwrap();
    let cache =
        DiskCache::new(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("keiri-search-embeddings"));
    Some(Arc::new(CachedEmbedder::new(model, cache)))
}

/// The catalog index with the local model, as the product builds it: the catalog's passages
/// from the bundled pack (`block_specs/.embeddings`, which pack.rs checks holds exactly the
/// shipped passages, as the model embeds them), the queries from the model. Embedding the
/// catalog afresh took most of a minute of a cold CI run for the same vectors. Built once per
/// test binary.
pub fn hybrid_index() -> Option<&'static Index> {
    static INDEX: OnceLock<Option<Index>> = OnceLock::new();
    INDEX
        .get_or_init(|| {
            let model = local_embedder()?;
            let pack = Pack::load(&pack_path()).unwrap();
            let embedder: Arc<dyn Embedder> =
                Arc::new(PackedEmbedder::new(model, vec![Arc::new(pack)]));
            Some(Index::from_catalog(&catalog(), Some(embedder)).unwrap())
        })
        .as_ref()
}

/// The catalog index without embeddings.
pub fn bm25_index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| Index::from_catalog(&catalog(), None).unwrap())
}
