//! The dev set (`eval/dev.yaml`) and the acceptance numbers of the retrieval issue.

use keiri_search::Mode;
use keiri_search::eval::{EvalSet, evaluate_default, format_report};

use crate::support::{bm25_index, hybrid_index, manifest_dir};

fn dev_set() -> EvalSet {
    EvalSet::load(&manifest_dir().join("eval/dev.yaml")).unwrap()
}

#[test]
fn dev_set_is_large_bilingual_and_names_only_catalog_blocks() {
    let set = dev_set();
    assert!(set.queries.len() >= 40, "{} queries", set.queries.len());
    let ja = set.queries.iter().filter(|q| q.lang == "ja").count();
    let en = set.queries.iter().filter(|q| q.lang == "en").count();
    assert!(ja >= 20 && en >= 10, "ja {ja}, en {en}");
    assert_eq!(
        set.unknown_ids(bm25_index()),
        Vec::<(String, String)>::new()
    );
}

#[test]
fn bm25_alone_gets_the_japanese_queries_right() {
    let set = dev_set();
    let report = evaluate_default(bm25_index(), &set).unwrap();
    let bm25 = report.mode(Mode::Bm25).unwrap();
    let ja = bm25.by_lang["ja"];
    assert!(ja.recall_at_10 >= 0.9, "{}", format_report(&report));
    // No Japanese query falls back to catalog order: each has a relevant block in its top 5.
    for q in set.queries.iter().filter(|q| q.lang == "ja") {
        let ranking = bm25_index()
            .rank(&keiri_search::Query::new(q.instruction.clone()).with_mode(Mode::Bm25))
            .unwrap();
        let top: Vec<&str> = ranking
            .scored
            .iter()
            .take(5)
            .map(|s| bm25_index().docs()[s.ord].id.as_str())
            .collect();
        assert!(
            q.relevant.iter().any(|r| top.contains(&r.as_str())),
            "{}: {top:?}",
            q.id
        );
    }
}

/// The acceptance numbers of the retrieval issue, on the real local model.
#[test]
fn hybrid_beats_both_components_on_the_dev_set() {
    let Some(index) = hybrid_index() else { return };
    let report = evaluate_default(index, &dev_set()).unwrap();
    let table = format_report(&report);
    // Shown with --nocapture, and in the failure message otherwise.
    println!("{table}");
    let [bm25, dense, hybrid] =
        [Mode::Bm25, Mode::Dense, Mode::Hybrid].map(|m| report.mode(m).unwrap());
    assert!(bm25.ran && dense.ran && hybrid.ran, "{table}");
    assert!(hybrid.all.recall_at_10 >= 0.95, "{table}");
    for other in [bm25, dense] {
        assert!(
            hybrid.all.recall_at_10 >= other.all.recall_at_10,
            "recall@10 vs {:?}\n{table}",
            other.mode
        );
        assert!(
            hybrid.all.ndcg_at_10 > other.all.ndcg_at_10,
            "nDCG@10 vs {:?}\n{table}",
            other.mode
        );
        assert!(
            hybrid.all.mrr > other.all.mrr,
            "MRR vs {:?}\n{table}",
            other.mode
        );
    }
}
