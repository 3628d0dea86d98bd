//! Top-K retrieval over the repository's catalog: BM25 on Japanese and English, the caps,
//! pinned blocks, filters, fallbacks and the fusion path (with a deterministic test embedder).

use std::sync::Arc;

use keiri_search::embed::l2_normalize;
use keiri_search::{
    EmbedKind, Embedder, Error, FusionKind, Index, Mode, RetrieveRequest, RetrieveResponse,
    tokenize, top_k,
};

use crate::support::{bm25_index, catalog, fixture};

fn request(instruction: &str) -> RetrieveRequest {
    RetrieveRequest {
        instruction: instruction.into(),
        ..RetrieveRequest::default()
    }
}

fn ids(response: &RetrieveResponse) -> Vec<&str> {
    response.candidates.iter().map(|c| c.id.as_str()).collect()
}

/// BM25 only: every expected block is among the first `within` candidates.
fn check(instruction: &str, within: usize, expect: &[&str]) {
    let response = top_k(bm25_index(), &request(instruction), &[]).unwrap();
    let top: Vec<&str> = ids(&response).into_iter().take(within).collect();
    for id in expect {
        assert!(
            top.contains(id),
            "{instruction}: {id} not in the first {within}: {top:?}"
        );
    }
}

#[test]
fn bm25_ranks_japanese_and_english_instructions() {
    check(
        "請求書CSVから重複を検出してExcelレポートにする",
        10,
        &[
            "matching.duplicate_invoices",
            "csv.read",
            "excel.write_table",
        ],
    );
    check("入金消込", 1, &["matching.bank_reconciliation"]);
    check("和暦を西暦に", 1, &["transforms.normalize_dates"]);
    check("職務分掌", 1, &["control.sod_check"]);
    check(
        "ＰＤＦの請求書から項目を抽出",
        3,
        &["pdf.extract_text", "ai.extract_fields"],
    );
    check(
        "three-way match of purchase orders",
        1,
        &["matching.three_way_match"],
    );
    check("duplicate invoices", 1, &["matching.duplicate_invoices"]);
    check("send a Slack notification", 1, &["notify.send"]);
}

#[test]
fn japanese_queries_do_not_fall_back_to_catalog_order() {
    // The failure this crate replaces: an ASCII-only tokenizer returns the first blocks of
    // the catalog (ai.*) for any Japanese query.
    let first_ids: Vec<String> = catalog().blocks().take(3).map(|b| b.id.clone()).collect();
    for instruction in [
        "銀行明細を読み込む",
        "仕訳の貸借一致を確認",
        "表を縦持ちにする",
    ] {
        let response = top_k(bm25_index(), &request(instruction), &[]).unwrap();
        let top: Vec<String> = ids(&response)
            .iter()
            .take(3)
            .map(|s| s.to_string())
            .collect();
        assert_ne!(top, first_ids, "{instruction}");
        assert!(response.candidates[0].bm25 > 0.0, "{instruction}");
        assert!(!response.candidates[0].matched.is_empty(), "{instruction}");
    }
}

#[test]
fn caps_per_category_and_in_total() {
    let broad = "CSVやExcelを読み込んで変換・集計・照合・チェックし、AIで要約してレポートを書き出し、通知して承認をもらう";
    for k in 5..=8 {
        let response = top_k(
            bm25_index(),
            &RetrieveRequest {
                k: Some(k),
                ..request(broad)
            },
            &[],
        )
        .unwrap();
        assert!(response.candidates.len() <= 30);
        let mut per_category = std::collections::HashMap::new();
        for c in &response.candidates {
            *per_category.entry(c.category.clone()).or_insert(0) += 1;
        }
        assert!(
            per_category.values().all(|&n| n <= k),
            "k={k}: {per_category:?}"
        );
        // The instruction touches every category, so the total fills up, and with the
        // tightest cap some categories are cut at it.
        if k == 5 {
            assert!(
                per_category.values().filter(|&&n| n == k).count() >= 3,
                "{per_category:?}"
            );
        }
        assert_eq!(response.candidates.len(), 30, "k={k}: {per_category:?}");
        let scores: Vec<f32> = response.candidates.iter().map(|c| c.score).collect();
        assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    }
}

#[test]
fn k_outside_five_to_eight_is_rejected() {
    for k in [0, 4, 9, 100] {
        let err = top_k(
            bm25_index(),
            &RetrieveRequest {
                k: Some(k),
                ..request("請求書")
            },
            &[],
        )
        .unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT", "k={k}");
    }
    let err = top_k(bm25_index(), &request("   "), &[]).unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    let err = top_k(
        bm25_index(),
        &RetrieveRequest {
            dense_weight: Some(1.5),
            ..request("a")
        },
        &[],
    )
    .unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");
}

#[test]
fn pinned_blocks_are_always_included() {
    let req = RetrieveRequest {
        pinned: vec![
            "ui.confirmation".into(),
            "no.such_block".into(),
            "ui.confirmation".into(),
        ],
        ..request("和暦の日付を西暦にそろえる")
    };
    let response = top_k(bm25_index(), &req, &[]).unwrap();
    let pinned: Vec<&str> = response
        .candidates
        .iter()
        .filter(|c| c.pinned)
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(pinned, ["ui.confirmation"]);
    assert!(
        response.notes.iter().any(|n| n.contains("no.such_block")),
        "{:?}",
        response.notes
    );
    assert_eq!(response.candidates[0].id, "transforms.normalize_dates");
}

#[test]
fn category_filter_keeps_one_category() {
    let req = RetrieveRequest {
        category: Some("matching".into()),
        ..request("請求書の照合")
    };
    let response = top_k(bm25_index(), &req, &[]).unwrap();
    assert!(!response.candidates.is_empty());
    assert!(
        response.candidates.iter().all(|c| c.category == "matching"),
        "{:?}",
        ids(&response)
    );
    let req = RetrieveRequest {
        category: Some("nothing".into()),
        ..request("請求書")
    };
    let response = top_k(bm25_index(), &req, &[]).unwrap();
    assert!(response.candidates.is_empty());
    assert!(response.notes.iter().any(|n| n.contains("nothing")));
}

#[test]
fn without_an_embedder_hybrid_runs_as_bm25_and_says_so() {
    let response = top_k(bm25_index(), &request("重複した請求書"), &[]).unwrap();
    assert_eq!(response.mode, Mode::Bm25);
    assert_eq!(response.embedder, None);
    assert!(
        response.notes.iter().any(|n| n.contains("BM25")),
        "{:?}",
        response.notes
    );
    let first = &response.candidates[0];
    assert_eq!(first.id, "matching.duplicate_invoices");
    assert_eq!(first.dense, None);
    assert!(
        first.matched.contains(&"重複".to_string()),
        "{:?}",
        first.matched
    );
    assert!(
        first.matched.contains(&"請求".to_string()),
        "{:?}",
        first.matched
    );
    // Single characters already inside a matched bigram are not listed again.
    assert!(
        !first.matched.contains(&"重".to_string()),
        "{:?}",
        first.matched
    );
}

#[test]
fn port_names_in_the_query_raise_the_vocabulary_score() {
    let response = top_k(
        bm25_index(),
        &request("set date_window_days and vendor_similarity"),
        &[],
    )
    .unwrap();
    let first = &response.candidates[0];
    assert_eq!(first.id, "matching.duplicate_invoices");
    assert!(first.vocabulary > 0.0);
}

#[test]
fn attached_documents_widen_the_query() {
    if keiri_testkit::skip_without_shared("fixtures/accounting/invoices.csv") {
        return;
    }
    let csv = std::fs::read_to_string(fixture("accounting/invoices.csv")).unwrap();
    let instruction = "この一覧をチェックしたい";
    let rank = |docs: &[String]| {
        let response = top_k(bm25_index(), &request(instruction), docs).unwrap();
        ids(&response)
            .iter()
            .position(|id| *id == "matching.duplicate_invoices")
    };
    let without = rank(&[]);
    let with = rank(&[csv]);
    assert!(
        with.is_some_and(|w| without.is_none_or(|wo| w < wo)),
        "with {with:?}, without {without:?}"
    );
}

/// A deterministic stand-in for a model: hashed bag of tokens, normalised.
struct Hashing {
    fail_queries: bool,
}

impl Embedder for Hashing {
    fn name(&self) -> &str {
        "test:hashing"
    }
    fn embed(&self, texts: &[String], kind: EmbedKind) -> Result<Vec<Vec<f32>>, Error> {
        if self.fail_queries && kind == EmbedKind::Query {
            return Err(Error::Http("offline".into()));
        }
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0.0_f32; 64];
                for token in tokenize(t) {
                    let h = token
                        .bytes()
                        .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
                    v[(h % 64) as usize] += 1.0;
                }
                l2_normalize(&mut v);
                v
            })
            .collect())
    }
}

#[test]
fn hybrid_fuses_both_sides() {
    let index = Index::from_catalog(
        &catalog(),
        Some(Arc::new(Hashing {
            fail_queries: false,
        })),
    )
    .unwrap();
    assert_eq!(index.embedder_name(), Some("test:hashing"));
    for (fusion, max) in [(FusionKind::Convex, 1.0), (FusionKind::Rrf, 2.0 / 61.0)] {
        let req = RetrieveRequest {
            fusion: Some(fusion),
            ..request("重複した請求書を検出する")
        };
        let response = top_k(&index, &req, &[]).unwrap();
        assert_eq!(response.mode, Mode::Hybrid);
        assert_eq!(response.embedder.as_deref(), Some("test:hashing"));
        let top3: Vec<&str> = ids(&response).into_iter().take(3).collect();
        assert!(
            top3.contains(&"matching.duplicate_invoices"),
            "{fusion:?}: {top3:?}"
        );
        let first = &response.candidates[0];
        assert!(first.dense.is_some_and(|d| d > 0.0));
        assert!(
            first.score <= max + 1e-6 && first.score > 0.0,
            "{fusion:?}: {}",
            first.score
        );
    }
    let dense = top_k(
        &index,
        &RetrieveRequest {
            mode: Some(Mode::Dense),
            ..request("重複した請求書")
        },
        &[],
    )
    .unwrap();
    assert_eq!(dense.mode, Mode::Dense);
    assert!(dense.candidates.iter().all(|c| c.dense.is_some()));
}

#[test]
fn a_failing_embedder_degrades_to_bm25() {
    let index =
        Index::from_catalog(&catalog(), Some(Arc::new(Hashing { fail_queries: true }))).unwrap();
    let response = top_k(&index, &request("重複した請求書"), &[]).unwrap();
    assert_eq!(response.mode, Mode::Bm25);
    assert!(
        response.notes.iter().any(|n| n.contains("offline")),
        "{:?}",
        response.notes
    );
    assert_eq!(response.candidates[0].id, "matching.duplicate_invoices");
}

#[test]
fn request_json_contract() {
    let req: RetrieveRequest = serde_json::from_value(serde_json::json!({
        "instruction": "x", "docs": ["a.csv"], "k": 7, "mode": "dense", "pinned": ["csv.read"],
        "category": "input", "fusion": "rrf", "dense_weight": 0.25
    }))
    .unwrap();
    assert_eq!(req.k, Some(7));
    assert_eq!(req.mode, Some(Mode::Dense));
    assert_eq!(req.fusion, Some(FusionKind::Rrf));
    assert!(
        serde_json::from_value::<RetrieveRequest>(
            serde_json::json!({"instruction": "x", "top": 3})
        )
        .is_err()
    );
    let response = top_k(bm25_index(), &request("CSVを読み込む"), &[]).unwrap();
    let json = serde_json::to_value(&response).unwrap();
    let first = &json["candidates"][0];
    for key in ["id", "category", "score", "bm25", "dense", "matched"] {
        assert!(first.get(key).is_some(), "{key} missing in {first}");
    }
    assert_eq!(json["mode"], "bm25");
    let schema = schemars::schema_for!(RetrieveRequest);
    assert!(
        serde_json::to_string(&schema)
            .unwrap()
            .contains("instruction")
    );
}
