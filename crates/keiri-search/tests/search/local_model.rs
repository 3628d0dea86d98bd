//! The local multilingual-e5-small embedder on the real model files.

use keiri_search::EmbedKind;
use keiri_search::embed::{E5Embedder, cosine};

use crate::support::model_dir;

fn check(a: &str, b: &str, expect: f32) {
    let Some(dir) = model_dir() else { return };
    let model = E5Embedder::shared(&dir).unwrap();
    let va = model.embed_one(a, EmbedKind::Query).unwrap();
    let vb = model.embed_one(b, EmbedKind::Query).unwrap();
    let c = cosine(&va, &vb);
    assert!(
        (c - expect).abs() < 0.02,
        "cosine({a}, {b}) = {c}, expected about {expect}"
    );
}

#[test]
fn paraphrases_are_close_and_unrelated_texts_are_not() {
    check("請求書の重複を検出する", "重複した請求書を見つける", 0.98);
    check(
        "請求書の重複を検出する",
        "今日は天気がいいので散歩に行く",
        0.80,
    );
}

#[test]
fn long_texts_are_truncated_to_the_model_window() {
    let Some(dir) = model_dir() else { return };
    let model = E5Embedder::shared(&dir).unwrap();
    let long = "請求書の重複を検出する。".repeat(400);
    let ids = model.token_ids(&long, EmbedKind::Passage).unwrap();
    assert_eq!(ids.len(), 512);
    assert_eq!((ids[0], ids[511]), (0, 2), "<s> … </s>");
    let v = model.embed_one(&long, EmbedKind::Passage).unwrap();
    let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert_eq!(v.len(), 384);
    assert!((norm - 1.0).abs() < 1e-4);
    // An empty text still embeds ("query: " alone).
    assert_eq!(model.embed_one("", EmbedKind::Query).unwrap().len(), 384);
}

#[test]
fn query_and_passage_prefixes_differ() {
    let Some(dir) = model_dir() else { return };
    let model = E5Embedder::shared(&dir).unwrap();
    let q = model.token_ids("請求書", EmbedKind::Query).unwrap();
    let p = model.token_ids("請求書", EmbedKind::Passage).unwrap();
    assert_ne!(q, p);
    // <s> ▁query : ▁ 請求 書 </s>, the last two from the text itself.
    assert_eq!(q.len(), 8, "{q:?}");
    assert_eq!(q[q.len() - 3..], p[p.len() - 3..]);
}

#[test]
fn a_missing_or_damaged_model_directory_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        E5Embedder::load(dir.path()).unwrap_err().code(),
        "MODEL_MISSING"
    );
    keiri_fs::write_atomic(
        &dir.path().join("e5-small-q4.bin"),
        b"E5S1\x01\0\0\0truncated",
    )
    .unwrap();
    keiri_fs::write_atomic(&dir.path().join("tokenizer.json"), b"{}").unwrap();
    assert_eq!(
        E5Embedder::load(dir.path()).unwrap_err().code(),
        "MODEL_FORMAT"
    );
}
