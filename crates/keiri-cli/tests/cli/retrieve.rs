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
