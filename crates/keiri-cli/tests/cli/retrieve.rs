//! `keiri retrieve`: candidates for an instruction, and the eval table.

use predicates::prelude::*;
use serde_json::Value;

use super::{keiri, put};

/// `keiri … retrieve` without embeddings, so the journeys are fast and deterministic.
fn retrieve(ws: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = keiri(ws);
    cmd.env("KEIRI_EMBEDDER", "none").arg("retrieve");
    cmd
}

#[test]
fn json_candidates_for_a_japanese_instruction() {
    let ws = tempfile::tempdir().unwrap();
    let out = retrieve(ws.path())
        .args([
            "請求書CSVの重複を検出する",
            "--k",
            "5",
            "--pin",
            "ui.confirmation",
            "--json",
        ])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["mode"], "bm25");
    assert_eq!(v["embedder"], Value::Null);
    assert_eq!(v["candidates"][0]["id"], "matching.duplicate_invoices");
    let first = &v["candidates"][0];
    for key in ["category", "score", "bm25", "dense", "matched"] {
        assert!(first.get(key).is_some(), "{key}: {first}");
    }
    let candidates = v["candidates"].as_array().unwrap();
    assert!(
        candidates
            .iter()
            .any(|c| c["id"] == "ui.confirmation" && c["pinned"] == true)
    );
    assert!(v["notes"].to_string().contains("BM25"), "{}", v["notes"]);
}

#[test]
fn text_output_lists_ids_and_matched_terms() {
    let ws = tempfile::tempdir().unwrap();
    put(
        &ws.path().join("invoices.csv"),
        "vendor,invoice_no,amount\nA,1,100\nA,1,100\n",
    );
    retrieve(ws.path())
        .args([
            "入金消込をしたい",
            "--mode",
            "bm25",
            "--docs",
            "invoices.csv",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("matching.bank_reconciliation"))
        .stdout(predicate::str::contains("消込"));
}

#[test]
fn bad_arguments_exit_2() {
    let ws = tempfile::tempdir().unwrap();
    retrieve(ws.path())
        .args(["請求書", "--k", "3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("INVALID_REQUEST"));
    retrieve(ws.path()).assert().code(2);
}

#[test]
fn eval_prints_the_metrics_table() {
    let ws = tempfile::tempdir().unwrap();
    put(
        &ws.path().join("set.yaml"),
        "queries:\n  - {id: q1, lang: ja, instruction: 入金消込, relevant: [matching.bank_reconciliation]}\n  - {id: q2, lang: en, instruction: duplicate invoices, relevant: [matching.duplicate_invoices]}\n",
    );
    retrieve(ws.path())
        .args(["--eval", "set.yaml"])
        .assert()
        .success()
        .stdout(predicate::str::contains("recall@10"))
        .stdout(predicate::str::contains("nDCG@10"))
        .stdout(
            predicate::str::is_match(r"bm25\s+all\s+2\s+1\.000\s+1\.000\s+1\.000\s+1\.000")
                .unwrap(),
        );
    let out = retrieve(ws.path())
        .args(["--eval", "set.yaml", "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["modes"][0]["mode"], "bm25");
    assert_eq!(
        v["modes"][2]["ran"], false,
        "hybrid without a model runs as bm25: {v}"
    );
    put(&ws.path().join("bad.yaml"), "queries: 3\n");
    retrieve(ws.path())
        .args(["--eval", "bad.yaml"])
        .assert()
        .code(2);
}

/// A team's own catalog beside the workspace: copies of the bundled matching blocks, without
/// the bundled pack's vectors, so every passage must be embedded.
pub fn own_catalog(ws: &std::path::Path) -> std::path::PathBuf {
    let own = ws.join("own_blocks");
    std::fs::create_dir_all(own.join("matching")).unwrap();
    for entry in std::fs::read_dir(super::catalog_dir().join("matching")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, own.join("matching").join(path.file_name().unwrap())).unwrap();
    }
    own
}

/// The files under `dir` (the embedding cache: one file per vector).
fn files_under(dir: &std::path::Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .map(|e| e.unwrap().path())
        .map(|p| if p.is_dir() { files_under(&p) } else { 1 })
        .sum()
}

/// True (with a printed reason) where the local model is not installed and this is not CI;
/// in CI, which installs it, a missing model fails. Asked of the files, not of a response, so
/// a response that wrongly answers without the model fails instead of skipping.
pub fn no_model_here() -> bool {
    let dir = std::env::var_os("KEIRI_EMBED_MODEL_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../models/multilingual-e5-small")
        });
    if dir.join("e5-small-q4.bin").is_file() && dir.join("tokenizer.json").is_file() {
        return false;
    }
    assert!(
        std::env::var("CI").is_err(),
        "CI installs the embedding model, but it is not in {}",
        dir.display()
    );
    eprintln!(
        "SKIPPED: no local embedding model in {} (make setup-models)",
        dir.display()
    );
    true
}

/// The check both front-ends pass: the first `search` over a team's own catalog answers
/// hybrid, every candidate with a dense score, one note saying what was embedded and none
/// contradicting it; the second finds every vector in `cache` and embeds nothing.
pub fn hybrid_at_once_then_from_the_cache(search: impl Fn() -> Value, cache: &std::path::Path) {
    let first = search();
    assert_eq!(first["mode"], "hybrid", "{first}");
    assert!(first.get("embedding_progress").is_none(), "{first}");
    let candidates = first["candidates"].as_array().unwrap();
    assert!(!candidates.is_empty(), "{first}");
    assert!(
        candidates.iter().all(|c| c["dense"].is_number()),
        "every candidate has a dense score: {first}"
    );
    let notes = first["notes"].to_string();
    assert!(!notes.contains("background"), "{notes}");
    assert!(!notes.contains("no embedding model"), "{notes}");
    assert_eq!(embedded_notes(&first).len(), 1, "{notes}");
    let cached = files_under(cache);
    assert!(cached > candidates.len(), "{cached} vectors cached");

    let second = search();
    assert_eq!(second["mode"], "hybrid", "{second}");
    assert_eq!(second["candidates"], first["candidates"]);
    assert!(embedded_notes(&second).is_empty(), "{second}");
    assert_eq!(files_under(cache), cached, "nothing new embedded");
}

/// The notes that say passages were embedded for this call.
fn embedded_notes(response: &Value) -> Vec<String> {
    response["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .filter(|n| n.starts_with("embedded "))
        .map(str::to_string)
        .collect()
}

/// `keiri retrieve --mode hybrid` over a catalog the bundled pack does not cover embeds its
/// passages before answering (it used to answer BM25, saying both that they were embedding in
/// the background and that no model was available, and exit before anything was embedded);
/// the next process finds them in the disk cache and embeds nothing.
#[test]
fn a_teams_own_catalog_gets_dense_scores_at_once_and_from_the_cache_next_time() {
    let ws = tempfile::tempdir().unwrap();
    let own = own_catalog(ws.path());
    let cache = ws.path().join("embed-cache");
    let search = || {
        let mut cmd = assert_cmd::Command::cargo_bin("keiri").unwrap();
        cmd.arg("--workspace")
            .arg(ws.path())
            .arg("--catalog")
            .arg(&own)
            .env("KEIRI_CONFIG_DIR", super::test_config_dir(ws.path()))
            .env("KEIRI_EMBED_CACHE_DIR", &cache)
            .env_remove("KEIRI_EMBEDDER")
            .args([
                "retrieve",
                "--mode",
                "hybrid",
                "--json",
                "請求書の二重計上を見つける",
            ]);
        let out = cmd.assert().success();
        serde_json::from_slice::<Value>(&out.get_output().stdout).unwrap()
    };
    if no_model_here() {
        return;
    }
    hybrid_at_once_then_from_the_cache(search, &cache);
}
