//! Score fusion: a min-max-normalised convex combination of the lexical and dense scores
//! (the default), or reciprocal rank fusion.
//!
//! BM25 scores are unbounded and depend on the query length while cosines of e5 sit in a
//! narrow band (0.75–0.9), so neither can be added to the other raw; min-max over the
//! candidate set maps both onto [0, 1] first. RRF ignores the score values altogether and
//! only uses the two rankings, which is more robust when one side's scores are flat.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How lexical and dense scores are combined in hybrid mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FusionKind {
    /// `(1 − w)·bm25′ + w·dense′` with both min-max normalised.
    #[default]
    Convex,
    /// `Σ 1 / (60 + rank)` over the two rankings.
    Rrf,
}

/// The RRF constant from Cormack et al. (2009); it damps the head of each ranking.
pub const RRF_K: f32 = 60.0;

/// Min-max normalises `scores` to [0, 1]. When all scores are equal every entry becomes 0
/// for an all-zero input (no evidence) and 1 otherwise.
pub fn min_max(scores: &[f32]) -> Vec<f32> {
    let (min, max) = scores
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &s| {
            (lo.min(s), hi.max(s))
        });
    if scores.is_empty() {
        return Vec::new();
    }
    let range = max - min;
    if !range.is_finite() || range <= f32::EPSILON {
        let v = if max > 0.0 { 1.0 } else { 0.0 };
        return vec![v; scores.len()];
    }
    scores.iter().map(|&s| (s - min) / range).collect()
}

/// Convex combination of two score lists of equal length.
pub fn convex(lexical: &[f32], dense: &[f32], dense_weight: f32) -> Vec<f32> {
    let w = dense_weight.clamp(0.0, 1.0);
    let l = min_max(lexical);
    let d = min_max(dense);
    l.iter()
        .zip(&d)
        .map(|(a, b)| (1.0 - w) * a + w * b)
        .collect()
}

/// 1-based ranks by descending score; entries for which `eligible` is false get no rank.
pub fn ranks(scores: &[f32], eligible: impl Fn(usize) -> bool) -> Vec<Option<usize>> {
    let mut order: Vec<usize> = (0..scores.len()).filter(|&i| eligible(i)).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    let mut out = vec![None; scores.len()];
    for (rank, i) in order.into_iter().enumerate() {
        out[i] = Some(rank + 1);
    }
    out
}

/// Reciprocal rank fusion. A document without lexical evidence (score 0) gets no lexical
/// rank, so it cannot ride on an arbitrary position among the zeros.
pub fn rrf(lexical: &[f32], dense: &[f32]) -> Vec<f32> {
    let lr = ranks(lexical, |i| lexical[i] > 0.0);
    let dr = ranks(dense, |_| true);
    lr.iter()
        .zip(&dr)
        .map(|(a, b)| {
            a.map_or(0.0, |r| 1.0 / (RRF_K + r as f32))
                + b.map_or(0.0, |r| 1.0 / (RRF_K + r as f32))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(actual: Vec<f32>, expect: &[f32]) {
        assert_eq!(actual.len(), expect.len(), "{actual:?} vs {expect:?}");
        for (a, e) in actual.iter().zip(expect) {
            assert!((a - e).abs() < 1e-5, "{actual:?} vs {expect:?}");
        }
    }

    #[test]
    fn min_max_cases() {
        check(min_max(&[2.0, 4.0, 3.0]), &[0.0, 1.0, 0.5]);
        check(min_max(&[0.0, 0.0]), &[0.0, 0.0]);
        check(min_max(&[0.8, 0.8]), &[1.0, 1.0]);
        check(min_max(&[]), &[]);
    }

    #[test]
    fn convex_cases() {
        check(convex(&[0.0, 10.0], &[0.9, 0.8], 0.5), &[0.5, 0.5]);
        check(convex(&[0.0, 10.0], &[0.9, 0.8], 0.0), &[0.0, 1.0]);
        check(convex(&[0.0, 10.0], &[0.9, 0.8], 1.0), &[1.0, 0.0]);
        check(convex(&[0.0, 10.0], &[0.9, 0.8], 7.0), &[1.0, 0.0]);
    }

    #[test]
    fn rrf_cases() {
        let s = rrf(&[3.0, 0.0, 1.0], &[0.1, 0.9, 0.5]);
        check(
            s.clone(),
            &[1.0 / 61.0 + 1.0 / 63.0, 1.0 / 61.0, 1.0 / 62.0 + 1.0 / 62.0],
        );
        assert_eq!(
            ranks(&[1.0, 3.0, 2.0], |_| true),
            vec![Some(3), Some(1), Some(2)]
        );
    }
}
