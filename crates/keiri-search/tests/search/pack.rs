//! The bundled embedding pack (`block_specs/.embeddings/`): it holds exactly the shipped
//! catalog's and templates' passages, and with it a first search embeds only the query.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use keiri_plan::Templates;
use keiri_search::embed::{E5Embedder, LOCAL_MODEL_NAME, Pack, PackedEmbedder, cosine, text_key};
use keiri_search::index::IndexOptions;
use keiri_search::{
    DocKind, Document, EmbedKind, Embedder, Error, Index, Mode, Progress, RetrieveRequest,
    passages_of, top_k,
};

use crate::support::{catalog, manifest_dir, model_dir, pack_path};

fn shipped_passages() -> Vec<String> {
    let (templates, issues) = Templates::load(&[manifest_dir().join("../../templates")]);
    assert!(issues.is_empty(), "{issues:?}");
    assert!(!templates.is_empty());
    passages_of(&catalog(), &templates)
}

/// A stand-in for the local model (same name, so the pack applies) that records what it is
/// asked to embed.
struct Recording(Mutex<Vec<(EmbedKind, String)>>);

impl Embedder for Recording {
    fn name(&self) -> &str {
        LOCAL_MODEL_NAME
    }
    fn embed(&self, texts: &[String], kind: EmbedKind) -> Result<Vec<Vec<f32>>, Error> {
        let mut seen = self.0.lock().unwrap();
        seen.extend(texts.iter().map(|t| (kind, t.clone())));
        Ok(texts.iter().map(|_| vec![1.0; 384]).collect())
    }
}

#[test]
fn the_bundled_pack_holds_exactly_the_shipped_passages() {
    let pack = Pack::load(&pack_path()).unwrap();
    assert_eq!(pack.model(), LOCAL_MODEL_NAME);
    let want: BTreeSet<[u8; 32]> = shipped_passages()
        .iter()
        .map(|t| text_key(LOCAL_MODEL_NAME, EmbedKind::Passage, t))
        .collect();
    let have: BTreeSet<[u8; 32]> = pack.keys().copied().collect();
    assert!(
        want == have,
        "{} is stale: {} shipped passages are not in it and {} of its vectors match no shipped \
         text; run `make embeddings` after changing block_specs/ or templates/",
        pack_path().display(),
        want.difference(&have).count(),
        have.difference(&want).count(),
    );
}

#[test]
fn with_the_pack_a_first_search_embeds_only_the_query() {
    let recording = Arc::new(Recording(Mutex::new(Vec::new())));
    let pack = Arc::new(Pack::load(&pack_path()).unwrap());
    let embedder: Arc<dyn Embedder> = Arc::new(PackedEmbedder::new(recording.clone(), vec![pack]));
    let index = Index::from_catalog(&catalog(), Some(embedder)).unwrap();
    assert!(
        recording.0.lock().unwrap().is_empty(),
        "the catalog's passages were embedded: {:?}",
        recording.0.lock().unwrap().first()
    );
    let request = RetrieveRequest {
        instruction: "請求書の重複を検出する".into(),
        ..Default::default()
    };
    let response = top_k(&index, &request, &[]).unwrap();
    assert_eq!(response.embedder.as_deref(), Some(LOCAL_MODEL_NAME));
    let seen = recording.0.lock().unwrap();
    assert!(
        seen.iter().all(|(kind, _)| *kind == EmbedKind::Query) && !seen.is_empty(),
        "{seen:?}"
    );
}

#[test]
fn pack_vectors_are_the_models_vectors() {
    let Some(dir) = model_dir() else { return };
    let model = E5Embedder::shared(&dir).unwrap();
    let pack = Pack::load(&pack_path()).unwrap();
    for text in shipped_passages().iter().take(3) {
        let packed = pack.get(EmbedKind::Passage, text).unwrap();
        let fresh = model.embed_one(text, EmbedKind::Passage).unwrap();
        assert!(cosine(packed, &fresh) > 0.999, "{text}");
    }
}

/// Embeds only when the test lets it (one message per call), like a slow model.
struct Gated(Mutex<std::sync::mpsc::Receiver<()>>);

impl Embedder for Gated {
    fn name(&self) -> &str {
        LOCAL_MODEL_NAME
    }
    fn embed(&self, texts: &[String], _: EmbedKind) -> Result<Vec<Vec<f32>>, Error> {
        self.0.lock().unwrap().recv().unwrap();
        Ok(texts.iter().map(|_| vec![1.0; 384]).collect())
    }
}

#[test]
fn a_workspace_block_is_embedded_in_the_background_while_bm25_answers() {
    let (gate, rx) = std::sync::mpsc::channel();
    let pack = Arc::new(Pack::load(&pack_path()).unwrap());
    let embedder: Arc<dyn Embedder> = Arc::new(PackedEmbedder::new(
        Arc::new(Gated(Mutex::new(rx))),
        vec![pack],
    ));
    let mut docs: Vec<Document> = catalog().blocks().map(Document::from_block).collect();
    let mut own = Document::new(DocKind::Block, "mine.expense_check", "matching");
    own.title = "経費精算チェック".into();
    own.titles = "経費精算チェック".into();
    own.description = "経費精算の重複をチェックする".into();
    own.passages = vec!["経費精算の重複チェック".into(), "expense check".into()];
    docs.push(own);
    let request = RetrieveRequest {
        instruction: "経費精算の重複チェック".into(),
        ..Default::default()
    };
    let options = IndexOptions::default();

    let (index, progress) =
        Index::build_background(docs.clone(), Some(embedder.clone()), &options).unwrap();
    assert_eq!(progress, Some(Progress { done: 0, total: 2 }));
    let response = top_k(&index, &request, &[]).unwrap();
    assert_eq!(response.mode, Mode::Bm25, "{:?}", response.notes);
    assert_eq!(response.candidates[0].id, "mine.expense_check");
    // One note says why: the embedding is on its way, not that there is no model.
    assert!(
        response
            .notes
            .iter()
            .any(|n| n.contains("in the background"))
            && !response
                .notes
                .iter()
                .any(|n| n.contains("no embedding model")),
        "{:?}",
        response.notes
    );

    gate.send(()).unwrap(); // both passages are one batch
    let index = loop {
        let (index, progress) =
            Index::build_background(docs.clone(), Some(embedder.clone()), &options).unwrap();
        if progress.is_none() {
            break index;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    gate.send(()).unwrap(); // the query
    let response = top_k(&index, &request, &[]).unwrap();
    assert_eq!(response.mode, Mode::Hybrid, "{:?}", response.notes);
}

/// A one-shot caller waits for the workspace's passages: told the progress batch by batch,
/// answered with the dense side, and told how many passages were embedded for it.
#[test]
fn a_one_shot_caller_waits_for_the_workspace_blocks_and_sees_the_progress() {
    let (gate, rx) = std::sync::mpsc::channel();
    let embedder: Arc<dyn Embedder> = Arc::new(Gated(Mutex::new(rx)));
    let mut own = Document::new(DocKind::Block, "mine.expense_check", "matching");
    own.title = "経費精算チェック".into();
    own.passages = (0..10).map(|i| format!("経費精算の確認 {i}")).collect();
    // Two batches of passages (8 + 2), then the query.
    for _ in 0..3 {
        gate.send(()).unwrap();
    }
    let seen = Mutex::new(Vec::new());
    let (index, embedded) =
        Index::build_waiting(vec![own], Some(embedder), &IndexOptions::default(), &|p| {
            seen.lock().unwrap().push(p)
        })
        .unwrap();
    assert_eq!(embedded, 10);
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.first().map(|p| p.total), Some(10), "{seen:?}");
    assert_eq!(
        seen.last(),
        Some(&Progress {
            done: 10,
            total: 10
        }),
        "{seen:?}"
    );
    assert!(seen.windows(2).all(|w| w[0].done <= w[1].done), "{seen:?}");
    let request = RetrieveRequest {
        instruction: "経費精算".into(),
        ..Default::default()
    };
    let response = top_k(&index, &request, &[]).unwrap();
    assert_eq!(response.mode, Mode::Hybrid, "{:?}", response.notes);
}

/// An embedder that panics fails the wait instead of leaving it waiting for ever: the index
/// answers lexically with a note saying why.
#[test]
fn a_panicking_embedder_ends_the_wait_with_a_note() {
    struct Panics;
    impl Embedder for Panics {
        fn name(&self) -> &str {
            "test:panics"
        }
        fn embed(&self, _: &[String], _: EmbedKind) -> Result<Vec<Vec<f32>>, Error> {
            panic!("model file truncated")
        }
    }
    let mut own = Document::new(DocKind::Block, "mine.expense_check", "matching");
    own.passages = vec!["経費精算の確認".into()];
    let (index, embedded) = Index::build_waiting(
        vec![own],
        Some(Arc::new(Panics)),
        &IndexOptions::default(),
        &|_| {},
    )
    .unwrap();
    assert_eq!(embedded, 0);
    assert_eq!(index.embedder_name(), None);
    assert!(
        index.notes().iter().any(|n| n.contains("panicked")),
        "{:?}",
        index.notes()
    );
}
