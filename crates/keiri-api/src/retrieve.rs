//! Retrieval use cases (in `keiri-search`): the Top-K block candidates for an instruction,
//! and the retrieval eval harness.
//!
//! The request and response types are the tool contract and live in `keiri-search`; they are
//! re-exported in [`retrieval`]. Attached documents are paths: they pass the context's path
//! policy and are digested by `keiri-docs`, and an unreadable one becomes a note, not an
//! error. The embedder comes from the configuration: the local model (when installed) unless
//! cloud embeddings are switched on explicitly (`KEIRI_EMBEDDER=openai|azure`, or the
//! setting), else none; without one retrieval runs BM25-only and the response says so.
//!
//! One retriever per workspace and embedder ([`shared_retriever`], cached in `keiri-search`
//! and rebuilt when a spec or template file changes) serves this panel search, the planner
//! (`plan_generate`), the chat agent's `retrieve_blocks` and MCP's: the same candidates for
//! the same input everywhere.
//!
//! The bundled catalog's passage vectors come from the pack beside it
//! (`block_specs/.embeddings/`), so the first search embeds only the query. Passages the pack
//! and the cache lack (the workspace's own blocks) are embedded in the background: meanwhile
//! `blocks_retrieve` answers a window (an interactive context) with BM25 candidates and
//! `embedding_progress`, and it asks again; a one-shot caller (the CLI, MCP) waits for them,
//! its progress told to [`Context::embedding_progress`]. Either way the vectors go to the disk
//! cache, so the next process embeds only the query.

use keiri_search::index::IndexOptions;
use keiri_search::{Document, EmbedConfig, Index, Mode, Progress, Retriever, RetrieverKey};

use crate::{ApiError, Context, ErrorCode};

/// Request and response types of the retrieval functions.
pub mod retrieval {
    pub use keiri_search::eval::{EvalReport, Metrics, Miss, ModeReport, format_report};
    pub use keiri_search::{
        Candidate, DocKind, FusionKind, Mode, Progress, RetrieveRequest, RetrieveResponse,
    };

    /// The `blocks_retrieve_eval` request: a labelled set and the fusion settings.
    #[derive(Debug, Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct RetrieveEvalRequest {
        /// Path of the evaluation set (YAML, see `crates/keiri-search/eval/dev.yaml`).
        pub file: String,
        /// convex (default) or rrf.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub fusion: Option<FusionKind>,
        /// Weight of the dense side in convex fusion, 0 to 1.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub dense_weight: Option<f32>,
    }
}

use retrieval::{EvalReport, RetrieveEvalRequest, RetrieveRequest, RetrieveResponse};

fn api_error(err: keiri_search::Error) -> ApiError {
    ApiError::lower(&err)
}

/// How [`shared_retriever`] gets the passage vectors it lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Embedding {
    /// Not at all: BM25 only, no model loaded.
    Off,
    /// Now, before answering: one-shot callers (the CLI, MCP, the planner, the eval harness).
    /// Progress goes to [`Context::embedding_progress`], and what had to be embedded is a note.
    Wait,
    /// In the background, answering with BM25 meanwhile.
    Background,
}

/// The embedding configuration of `ctx`: the same layers as the LLM's (process, `.env`,
/// saved settings), with the packs beside the catalog directories.
pub fn embed_config(ctx: &Context, notes: &mut Vec<String>) -> EmbedConfig {
    // If the layers cannot be read, the process environment alone still works.
    let env = match crate::settings::llm_env(ctx) {
        Ok(env) => env,
        Err(e) => {
            notes.push(format!(
                "saved settings not used for embeddings: {}",
                e.message
            ));
            keiri_llm::Env::process()
        }
    };
    let mut config = EmbedConfig::from_env(|k| env.get(k).map(str::to_string));
    config.packs = ctx.catalog_dirs.clone();
    config
}

/// The context's catalog and templates as the retriever is built from them: the shared
/// retriever's key besides the embedder (the fingerprint of their files, and where they are),
/// and notes when specs could not be loaded.
struct Sources {
    fingerprint: u64,
    catalog: std::sync::Arc<keiri_plan::Catalog>,
    templates: std::sync::Arc<keiri_plan::Templates>,
    notes: Vec<String>,
}

fn load_sources(ctx: &Context) -> Sources {
    use std::hash::{Hash, Hasher};
    let catalog = ctx.specs.load_catalog(&ctx.catalog_dirs);
    let templates = ctx.specs.load_templates(&ctx.template_dirs);
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    catalog.fingerprint.hash(&mut hasher);
    templates.fingerprint.hash(&mut hasher);
    let mut notes = Vec::new();
    if !catalog.issues.is_empty() {
        notes.push(format!(
            "{} block spec(s) could not be loaded and are not searched",
            catalog.issues.len()
        ));
    }
    if !templates.issues.is_empty() {
        notes.push(format!(
            "{} template(s) could not be loaded and are not searched",
            templates.issues.len()
        ));
    }
    Sources {
        fingerprint: hasher.finish(),
        catalog: catalog.value,
        templates: templates.value,
        notes,
    }
}

/// The workspace's retriever of blocks and templates, shared by the Candidates panel, the
/// planner, the chat agent and MCP ([`keiri_search::retriever::shared`], keyed by the catalog
/// and template files and the embedder), so every one of them gets the same candidates for
/// the same input. With `Embedding::Off` it is BM25-only and loads no model. While the
/// vectors are not all there yet (the window's search during the model load, or the
/// workspace's own blocks still embedding in the background) a BM25 retriever answers, with
/// the progress, and nothing is cached.
pub fn shared_retriever(
    ctx: &Context,
    embedding: Embedding,
    notes: &mut Vec<String>,
) -> Result<(std::sync::Arc<Retriever>, Option<Progress>), ApiError> {
    let sources = load_sources(ctx);
    let options = IndexOptions::default();
    let embedder = if embedding == Embedding::Off {
        None
    } else {
        let config = embed_config(ctx, notes);
        // A window does not wait for the local model to load: keyword results now, the hybrid
        // ranking when it asks again.
        let pending = keiri_search::embed::local_model_pending(&config);
        if let Some(dir) = pending.filter(|_| embedding == Embedding::Background && ctx.interactive)
        {
            // One load at a time: the window asks again while it runs.
            if !keiri_search::embed::E5Embedder::is_loading(dir) {
                spawn_load(config.clone());
            }
            let docs = sources.catalog.blocks().map(Document::from_block).collect();
            let (blocks, progress) = Index::build_while_model_loads(
                docs,
                keiri_search::embed::LOCAL_MODEL_NAME,
                &options,
            )
            .map_err(api_error)?;
            let templates = Retriever::template_index(&sources.templates).map_err(api_error)?;
            let retriever = Retriever::new(blocks, templates).with_notes(sources.notes);
            return Ok((std::sync::Arc::new(retriever), Some(progress)));
        }
        keiri_search::select_embedder(&config, notes)
    };
    let key = RetrieverKey {
        sources: sources.fingerprint,
        embedder: embedder.as_ref().map(|e| e.name().to_string()),
    };
    if let Some(found) = keiri_search::retriever::cached(&key) {
        return Ok((found, None));
    }
    let template_index = Retriever::template_index(&sources.templates).map_err(api_error)?;
    let docs = sources.catalog.blocks().map(Document::from_block).collect();
    let (blocks, progress) = if embedding == Embedding::Background {
        Index::build_background(docs, embedder, &options).map_err(api_error)?
    } else {
        let tell = |p: Progress| {
            if let Some(hook) = &ctx.embedding_progress {
                (hook.0)(p);
            }
        };
        let (index, embedded) =
            Index::build_waiting(docs, embedder, &options, &tell).map_err(api_error)?;
        if embedded > 0
            && let Some(name) = index.embedder_name()
        {
            notes.push(format!(
                "embedded {embedded} of the workspace's passages with {name} before answering; \
                 kept in the embedding cache for the next search"
            ));
        }
        (index, None)
    };
    // Cached only when complete: an index still embedding in the background, or one whose
    // embedding failed (a network error of a cloud embedder), is used for this answer and
    // built again next time, so a passing failure does not stick.
    let complete = progress.is_none() && blocks.embedder_name() == key.embedder.as_deref();
    let retriever = Retriever::new(blocks, template_index).with_notes(sources.notes);
    if !complete {
        return Ok((std::sync::Arc::new(retriever), progress));
    }
    let shared = keiri_search::retriever::shared(key, || Ok(retriever)).map_err(api_error)?;
    Ok((shared, None))
}

/// Loads the embedding model the first candidate search will use, on a background thread, so
/// that search does not wait for it. The local model takes most of a second to load (its
/// 250,000-piece tokenizer), about as long as the window takes to become interactive, and on
/// two cores the two would slow each other: so the window asks for it once it is interactive
/// ([`embeddings_prewarm`]), and `keiri serve` at start. Loading is shared
/// ([`keiri_search::embed::E5Embedder::shared`]): a search that comes first waits for this one
/// load instead of starting another. Nothing is reported: a model that cannot be loaded is
/// reported by the search itself, as a note.
pub fn prewarm(ctx: &Context) -> Option<std::thread::JoinHandle<()>> {
    spawn_load(embed_config(ctx, &mut Vec::new()))
}

/// Loads the embedder `config` chooses on a thread of its own.
fn spawn_load(config: EmbedConfig) -> Option<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("keiri-prewarm".into())
        .spawn(move || {
            let _ = keiri_search::select_embedder(&config, &mut Vec::new());
        })
        .ok()
}

/// Start loading the embedding model in the background ([`prewarm`]).
#[derive(Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingsPrewarmRequest {}

#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct EmbeddingsPrewarmResponse {
    /// A loading thread was started (false only when no thread could be started).
    pub started: bool,
}

/// [`prewarm`], for the window to call once it is interactive; answers at once.
pub fn embeddings_prewarm(
    ctx: &Context,
    _req: EmbeddingsPrewarmRequest,
) -> Result<EmbeddingsPrewarmResponse, ApiError> {
    Ok(EmbeddingsPrewarmResponse {
        started: prewarm(ctx).is_some(),
    })
}
crate::surface::function!(plain embeddings_prewarm(crate::EmbeddingsPrewarmRequest) -> crate::EmbeddingsPrewarmResponse);

/// The Top-K block candidates for an instruction (and attached documents), with their
/// scores and matched terms.
pub fn blocks_retrieve(ctx: &Context, req: RetrieveRequest) -> Result<RetrieveResponse, ApiError> {
    req.validate().map_err(api_error)?;
    // Attached documents pass the context's path policy like every other request path, and
    // a refused one refuses the call: as a mere note it still answered whether a file outside
    // the roots exists. A missing or unreadable file inside the roots stays a note.
    let policy = ctx.path_policy();
    for doc in &req.docs {
        if let Err(e) = policy.resolve_existing(doc)
            && matches!(
                ErrorCode::from(&e),
                ErrorCode::PathDenied | ErrorCode::InvalidRequest
            )
        {
            return Err(e.into());
        }
    }
    let mut notes = Vec::new();
    let doc_texts = if req.docs.is_empty() {
        Vec::new()
    } else {
        let digest_req = crate::docs::DigestRequest {
            file_paths: req.docs.clone(),
            max_chars: 4_000,
            limits: Default::default(),
            sheet: None,
            range: None,
            output_format: crate::docs::OutputFormat::Json,
        };
        match crate::documents_digest(ctx, digest_req)? {
            crate::docs::Output::Json(digest) => {
                for e in &digest.errors {
                    let file = e.file_path.as_deref().unwrap_or("?");
                    notes.push(format!(
                        "attached document {file} not used: {}: {}",
                        e.code, e.message
                    ));
                }
                if digest.empty {
                    Vec::new()
                } else {
                    vec![digest.digest]
                }
            }
            crate::docs::Output::Toon(_) => Vec::new(),
        }
    };
    // A window gets keyword candidates at once and asks again; a one-shot caller waits for
    // the dense side instead of answering with BM25 and exiting before it is there.
    let embedding = if req.mode == Some(Mode::Bm25) {
        Embedding::Off
    } else if ctx.interactive {
        Embedding::Background
    } else {
        Embedding::Wait
    };
    let (retriever, progress) = shared_retriever(ctx, embedding, &mut notes)?;
    let mut response = retriever.retrieve(&req, &doc_texts).map_err(api_error)?;
    notes.append(&mut response.notes);
    response.notes = notes;
    response.embedding_progress = progress;
    Ok(response)
}
crate::surface::function!(plain blocks_retrieve(crate::retrieval::RetrieveRequest) -> crate::retrieval::RetrieveResponse);

/// Recall@5, recall@10, MRR and nDCG@10 of BM25-only, dense-only and hybrid retrieval on a
/// labelled evaluation set.
pub fn blocks_retrieve_eval(
    ctx: &Context,
    req: RetrieveEvalRequest,
) -> Result<EvalReport, ApiError> {
    let path = ctx.path_policy().resolve_existing(&req.file)?;
    let set = keiri_search::EvalSet::load(&path).map_err(api_error)?;
    let dense_weight = req
        .dense_weight
        .unwrap_or(keiri_search::index::DEFAULT_DENSE_WEIGHT);
    if !(0.0..=1.0).contains(&dense_weight) {
        return Err(ApiError::new(
            ErrorCode::InvalidRequest,
            format!("dense_weight must be between 0 and 1, got {dense_weight}"),
        ));
    }
    let mut notes = Vec::new();
    let (retriever, _) = shared_retriever(ctx, Embedding::Wait, &mut notes)?;
    let mut report = keiri_search::evaluate(
        retriever.blocks(),
        &set,
        &[Mode::Bm25, Mode::Dense, Mode::Hybrid],
        req.fusion.unwrap_or_default(),
        dense_weight,
    )
    .map_err(api_error)?;
    notes.append(&mut report.notes);
    report.notes = notes;
    Ok(report)
}
crate::surface::function!(plain blocks_retrieve_eval(crate::retrieval::RetrieveEvalRequest) -> crate::retrieval::EvalReport);

/// Tests of private details (the rest of the module's tests are in `tests/api/retrieve.rs`).
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_llm_key_alone_keeps_embeddings_local() {
        let (_ws, ctx) =
            isolated("OPENAI_API_KEY=sk-test\nKEIRI_LLM_BASE_URL=http://127.0.0.1:9/v1\n");
        let mut notes = Vec::new();
        let config = embed_config(&ctx, &mut notes);
        assert_eq!(
            config.preference,
            keiri_search::embed::EmbedPreference::Auto
        );
        assert_eq!(
            config.packs, ctx.catalog_dirs,
            "the packs beside the catalogs"
        );
        if let Some(chosen) = keiri_search::select_embedder(&config, &mut notes) {
            assert!(chosen.name().starts_with("local:"), "{}", chosen.name());
        }
        // Switched on explicitly, it goes to the configured server, not api.openai.com.
        let (_ws, ctx) = isolated(
            "KEIRI_EMBEDDER=openai\nOPENAI_API_KEY=sk-test\nKEIRI_LLM_BASE_URL=http://127.0.0.1:9/v1\n",
        );
        let config = embed_config(&ctx, &mut notes);
        assert!(
            matches!(&config.openai, Some(keiri_search::embed::OpenAiEndpoint::OpenAi { base_url, .. })
                if base_url == "http://127.0.0.1:9/v1"),
            "{:?}",
            config.openai
        );
    }

    #[test]
    fn a_first_hybrid_search_embeds_only_the_query() {
        let (ws, ctx) = isolated("KEIRI_EMBEDDER=local\n");
        let body = json!({"instruction": "請求書の重複を検出する"});
        let v = crate::stream::testing::call(&ctx, "blocks_retrieve", body).unwrap();
        if v["embedder"].is_null() {
            // No local model here (CI fetches it): BM25 with a note, nothing to check.
            assert_eq!(v["mode"], "bm25", "{v}");
            return;
        }
        assert_eq!(v["mode"], "hybrid", "{v}");
        assert!(v.get("embedding_progress").is_none(), "{v}");
        // The bundled pack served every catalog passage: the cache holds only the query's
        // vectors (the instruction, and no clauses for a one-clause instruction). When the
        // process environment names a cache for every test (`make test`), it wins over the
        // workspace's .env and is shared: there, the query's own vector is what is checked.
        let mut notes = Vec::new();
        let config = embed_config(&ctx, &mut notes);
        let own = ws.path().join("cache");
        if config.cache_dir.as_deref() == Some(own.as_path()) {
            let cached = walk_files(&own);
            assert_eq!(cached, 1, "{cached} vectors cached");
        } else {
            let dir = config.cache_dir.clone().unwrap();
            let model = v["embedder"].as_str().unwrap();
            let cache = keiri_search::embed::DiskCache::new(dir);
            assert!(
                cache
                    .get(
                        model,
                        keiri_search::EmbedKind::Query,
                        "請求書の重複を検出する"
                    )
                    .is_some(),
                "the query vector is cached"
            );
        }
    }

    fn ctx(ws: &std::path::Path) -> Context {
        let catalog = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../block_specs");
        Context::new(ws).with_catalog_dirs(vec![catalog])
    }

    #[test]
    fn the_shared_retriever_is_reused_until_a_spec_or_template_file_changes() {
        let ws = tempfile::tempdir().unwrap();
        let own = ws.path().join("block_specs");
        let mut ctx = ctx(ws.path());
        ctx.catalog_dirs.push(own.clone());
        let spec = |title: &str| {
            format!(
                "id: custom.piyo_check\nversion: 1.0.0\nentrypoint: builtin:transforms.filter_rows\n\
                 title_ja: {title}\ntitle_en: Piyo check\ndescription: {title}をする\n\
                 inputs: {{}}\noutputs: {{}}\n"
            )
        };
        let ids = |ctx: &Context| {
            let (retriever, _) = shared_retriever(ctx, Embedding::Off, &mut Vec::new()).unwrap();
            let first = shared_retriever(ctx, Embedding::Off, &mut Vec::new())
                .unwrap()
                .0;
            assert!(
                std::sync::Arc::ptr_eq(&retriever, &first),
                "reused while unchanged"
            );
            retriever
        };
        std::fs::create_dir_all(own.join("custom")).unwrap();
        let before = ids(&ctx);
        assert!(
            before
                .blocks()
                .position(keiri_search::DocKind::Block, "custom.piyo_check")
                .is_none()
        );

        // A spec saved in the workspace: the next search sees it.
        keiri_fs::write_atomic(&own.join("custom/piyo.yaml"), spec("ぴよ検算").as_bytes()).unwrap();
        let added = ids(&ctx);
        assert!(!std::sync::Arc::ptr_eq(&before, &added));
        let body = json!({"instruction": "ぴよ検算", "mode": "bm25"});
        let v = crate::stream::testing::call(&ctx, "blocks_retrieve", body).unwrap();
        assert_eq!(v["candidates"][0]["id"], "custom.piyo_check", "{v}");

        // Edited (a different size), and a template added: rebuilt each time.
        keiri_fs::write_atomic(
            &own.join("custom/piyo.yaml"),
            spec("ぴよぴよ検算").as_bytes(),
        )
        .unwrap();
        let edited = ids(&ctx);
        assert!(!std::sync::Arc::ptr_eq(&added, &edited));
        let template_dir = ws.path().join("designs/templates");
        std::fs::create_dir_all(&template_dir).unwrap();
        ctx.template_dirs = vec![template_dir.clone()];
        let no_templates = ids(&ctx);
        keiri_fs::write_atomic(&template_dir.join("t.yaml"), b"id: t\n").unwrap();
        assert!(!std::sync::Arc::ptr_eq(&no_templates, &ids(&ctx)));
    }

    /// A workspace whose `.env` points the embedding cache (and the settings) into it.
    fn isolated(extra_env: &str) -> (tempfile::TempDir, Context) {
        let ws = tempfile::tempdir().unwrap();
        let env = format!(
            "KEIRI_EMBED_CACHE_DIR={}\n{extra_env}",
            ws.path().join("cache").display()
        );
        keiri_fs::write_atomic(&ws.path().join(".env"), env.as_bytes()).unwrap();
        let ctx = ctx(ws.path()).with_config_dir(ws.path().join("config"));
        (ws, ctx)
    }

    #[test]
    fn a_retriever_whose_embedding_failed_is_not_kept() {
        // Cloud embeddings switched on, the server unreachable: this answer is BM25 with a
        // note, and the next search tries the embedder again instead of a cached failure.
        let (_ws, ctx) = isolated(
            "KEIRI_EMBEDDER=openai\nOPENAI_API_KEY=sk-test\nKEIRI_LLM_BASE_URL=http://127.0.0.1:9/v1\n",
        );
        let mut notes = Vec::new();
        let (first, _) = shared_retriever(&ctx, Embedding::Wait, &mut notes).unwrap();
        assert!(first.blocks().embedder_name().is_none(), "{notes:?}");
        let (second, _) = shared_retriever(&ctx, Embedding::Wait, &mut Vec::new()).unwrap();
        assert!(!std::sync::Arc::ptr_eq(&first, &second));
    }

    fn walk_files(dir: &std::path::Path) -> usize {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return 0;
        };
        entries
            .flatten()
            .map(|e| {
                if e.path().is_dir() {
                    walk_files(&e.path())
                } else {
                    1
                }
            })
            .sum()
    }
}
