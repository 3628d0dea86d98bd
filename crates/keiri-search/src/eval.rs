//! The retrieval eval harness: a labelled set of instructions (each with the blocks a correct
//! plan needs) and recall@5, recall@10, MRR and nDCG@10 per mode.
//!
//! Metrics are computed on the plain ranking ([`Index::rank`]), before the per-category cap,
//! so they measure the scorer and not the cap.

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::document::DocKind;
use crate::error::Error;
use crate::fusion::FusionKind;
use crate::index::{DEFAULT_DENSE_WEIGHT, Index, Mode, Query};

/// A labelled evaluation set (`eval/dev.yaml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvalSet {
    pub queries: Vec<EvalQuery>,
}

/// One labelled instruction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvalQuery {
    pub id: String,
    /// `ja` or `en`.
    pub lang: String,
    pub instruction: String,
    /// The blocks a correct plan needs.
    pub relevant: Vec<String>,
}

impl EvalSet {
    /// Reads and checks a set: at least one query, unique ids, every query with a relevant
    /// block.
    pub fn load(path: &Path) -> Result<EvalSet, Error> {
        let err = |reason: String| Error::EvalSet {
            path: path.to_path_buf(),
            reason,
        };
        let meta = std::fs::metadata(path).map_err(|source| Error::Io {
            action: "reading",
            path: path.to_path_buf(),
            source,
        })?;
        if meta.len() > 4 * 1024 * 1024 {
            return Err(err(format!(
                "{} bytes is too large for an evaluation set",
                meta.len()
            )));
        }
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            action: "reading",
            path: path.to_path_buf(),
            source,
        })?;
        let set: EvalSet = serde_yaml::from_str(&text).map_err(|e| err(e.to_string()))?;
        if set.queries.is_empty() {
            return Err(err("it has no queries".into()));
        }
        let mut seen = std::collections::HashSet::new();
        for q in &set.queries {
            if !seen.insert(q.id.as_str()) {
                return Err(err(format!("query id {} is used twice", q.id)));
            }
            if q.relevant.is_empty() || q.instruction.trim().is_empty() {
                return Err(err(format!(
                    "query {} needs an instruction and relevant blocks",
                    q.id
                )));
            }
        }
        Ok(set)
    }

    /// Relevant ids that are not blocks of `index`, as `(query id, block id)`.
    pub fn unknown_ids(&self, index: &Index) -> Vec<(String, String)> {
        self.queries
            .iter()
            .flat_map(|q| {
                q.relevant
                    .iter()
                    .filter(|id| index.position(DocKind::Block, id).is_none())
                    .map(|id| (q.id.clone(), id.clone()))
            })
            .collect()
    }
}

/// Averages over a set of queries.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Metrics {
    pub queries: usize,
    pub recall_at_5: f64,
    pub recall_at_10: f64,
    pub mrr: f64,
    pub ndcg_at_10: f64,
}

/// A query whose relevant blocks were not all in the top 10.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Miss {
    pub query: String,
    /// Relevant blocks outside the top 10, with their rank (null when not ranked at all).
    pub missing: Vec<(String, Option<usize>)>,
}

/// Results of one mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModeReport {
    pub mode: Mode,
    /// Whether the mode ran as asked (dense and hybrid need an embedder).
    pub ran: bool,
    pub all: Metrics,
    /// Per language (`ja`, `en`).
    pub by_lang: BTreeMap<String, Metrics>,
    pub misses: Vec<Miss>,
}

/// Results of an evaluation run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvalReport {
    pub embedder: Option<String>,
    pub fusion: FusionKind,
    pub dense_weight: f32,
    pub modes: Vec<ModeReport>,
    pub notes: Vec<String>,
}

impl EvalReport {
    pub fn mode(&self, mode: Mode) -> Option<&ModeReport> {
        self.modes.iter().find(|m| m.mode == mode)
    }
}

/// Per-query metric values.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct QueryMetrics {
    pub recall_at_5: f64,
    pub recall_at_10: f64,
    pub reciprocal_rank: f64,
    pub ndcg_at_10: f64,
}

/// Metrics of one ranked list of ids against the relevant ids (binary relevance).
pub fn query_metrics(ranked: &[&str], relevant: &[String]) -> QueryMetrics {
    if relevant.is_empty() {
        return QueryMetrics::default();
    }
    let is_relevant = |id: &str| relevant.iter().any(|r| r == id);
    let hits_at = |k: usize| ranked.iter().take(k).filter(|id| is_relevant(id)).count() as f64;
    let n = relevant.len() as f64;
    let first = ranked.iter().position(|id| is_relevant(id));
    let dcg: f64 = ranked
        .iter()
        .take(10)
        .enumerate()
        .filter(|(_, id)| is_relevant(id))
        .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
        .sum();
    let ideal: f64 = (0..relevant.len().min(10))
        .map(|i| 1.0 / ((i + 2) as f64).log2())
        .sum();
    QueryMetrics {
        recall_at_5: hits_at(5) / n,
        recall_at_10: hits_at(10) / n,
        reciprocal_rank: first.map_or(0.0, |p| 1.0 / (p + 1) as f64),
        ndcg_at_10: if ideal > 0.0 { dcg / ideal } else { 0.0 },
    }
}

fn average(values: &[QueryMetrics]) -> Metrics {
    let n = values.len().max(1) as f64;
    Metrics {
        queries: values.len(),
        recall_at_5: values.iter().map(|m| m.recall_at_5).sum::<f64>() / n,
        recall_at_10: values.iter().map(|m| m.recall_at_10).sum::<f64>() / n,
        mrr: values.iter().map(|m| m.reciprocal_rank).sum::<f64>() / n,
        ndcg_at_10: values.iter().map(|m| m.ndcg_at_10).sum::<f64>() / n,
    }
}

/// Runs every query of `set` in each of `modes`.
pub fn evaluate(
    index: &Index,
    set: &EvalSet,
    modes: &[Mode],
    fusion: FusionKind,
    dense_weight: f32,
) -> Result<EvalReport, Error> {
    let mut notes: Vec<String> = index.notes().to_vec();
    for (query, id) in set.unknown_ids(index) {
        notes.push(format!("query {query}: {id} is not in the catalog"));
    }
    let mut reports = Vec::new();
    for &mode in modes {
        let mut all = Vec::new();
        let mut by_lang: BTreeMap<String, Vec<QueryMetrics>> = BTreeMap::new();
        let mut misses = Vec::new();
        let mut ran = true;
        for q in &set.queries {
            let query = Query {
                kind: Some(DocKind::Block),
                fusion,
                dense_weight,
                ..Query::new(q.instruction.clone()).with_mode(mode)
            };
            let ranking = index.rank(&query)?;
            ran &= ranking.mode == mode;
            let ids: Vec<&str> = ranking
                .scored
                .iter()
                .map(|s| index.docs()[s.ord].id.as_str())
                .collect();
            let m = query_metrics(&ids, &q.relevant);
            let missing: Vec<(String, Option<usize>)> = q
                .relevant
                .iter()
                .filter(|r| !ids.iter().take(10).any(|id| id == r))
                .map(|r| (r.clone(), ids.iter().position(|id| id == r).map(|p| p + 1)))
                .collect();
            if !missing.is_empty() {
                misses.push(Miss {
                    query: q.id.clone(),
                    missing,
                });
            }
            all.push(m);
            by_lang.entry(q.lang.clone()).or_default().push(m);
        }
        if !ran {
            notes.push(format!(
                "{} ran as BM25 only: no embedding model is available",
                mode.as_str()
            ));
        }
        reports.push(ModeReport {
            mode,
            ran,
            all: average(&all),
            by_lang: by_lang
                .iter()
                .map(|(k, v)| (k.clone(), average(v)))
                .collect(),
            misses,
        });
    }
    Ok(EvalReport {
        embedder: index.embedder_name().map(str::to_string),
        fusion,
        dense_weight,
        modes: reports,
        notes,
    })
}

/// Evaluates with the default fusion settings in all three modes.
pub fn evaluate_default(index: &Index, set: &EvalSet) -> Result<EvalReport, Error> {
    evaluate(
        index,
        set,
        &[Mode::Bm25, Mode::Dense, Mode::Hybrid],
        FusionKind::Convex,
        DEFAULT_DENSE_WEIGHT,
    )
}

/// The report as a plain-text table for the terminal.
pub fn format_report(report: &EvalReport) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "embedder: {}   fusion: {:?}   dense weight: {}\n",
        report.embedder.as_deref().unwrap_or("none"),
        report.fusion,
        report.dense_weight
    ));
    out.push_str(&format!(
        "{:<8} {:<4} {:>7} {:>9} {:>10} {:>6} {:>8}\n",
        "mode", "lang", "queries", "recall@5", "recall@10", "MRR", "nDCG@10"
    ));
    for m in &report.modes {
        let name = if m.ran {
            m.mode.as_str().to_string()
        } else {
            format!("{}*", m.mode.as_str())
        };
        let rows = std::iter::once(("all".to_string(), m.all))
            .chain(m.by_lang.iter().map(|(k, v)| (k.clone(), *v)));
        for (lang, x) in rows {
            out.push_str(&format!(
                "{:<8} {:<4} {:>7} {:>9.3} {:>10.3} {:>6.3} {:>8.3}\n",
                name, lang, x.queries, x.recall_at_5, x.recall_at_10, x.mrr, x.ndcg_at_10
            ));
        }
    }
    for note in &report.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(ranked: &[&str], relevant: &[&str], expect: (f64, f64, f64, f64)) {
        let relevant: Vec<String> = relevant.iter().map(|s| s.to_string()).collect();
        let m = query_metrics(ranked, &relevant);
        let got = (
            m.recall_at_5,
            m.recall_at_10,
            m.reciprocal_rank,
            m.ndcg_at_10,
        );
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(
            close(got.0, expect.0)
                && close(got.1, expect.1)
                && close(got.2, expect.2)
                && close(got.3, expect.3),
            "{ranked:?} vs {relevant:?}: got {got:?}, expected {expect:?}"
        );
    }

    #[test]
    fn metrics() {
        check(&["a", "b"], &["a"], (1.0, 1.0, 1.0, 1.0));
        check(&["x", "a"], &["a"], (1.0, 1.0, 0.5, 1.0 / 3f64.log2()));
        check(
            &["x", "x", "x", "x", "x", "a"],
            &["a", "b"],
            (0.0, 0.5, 1.0 / 6.0, {
                (1.0 / 7f64.log2()) / (1.0 + 1.0 / 3f64.log2())
            }),
        );
        check(&[], &["a"], (0.0, 0.0, 0.0, 0.0));
    }
}
