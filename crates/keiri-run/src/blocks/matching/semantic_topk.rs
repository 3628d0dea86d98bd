//! `matching.semantic_topk`: its inputs and outputs are in `block_specs/matching/matching.semantic_topk.yaml`.

use super::{cell_text, items, num_json, outputs, round4};
use crate::block::ProgressUnit;
use crate::block::{BlockContext, BlockError, ErrorCode, Inputs, Outputs, Warning};
use crate::blocks::kit::steps::Steps;
use serde_json::{Value as Json, json};

// ---------------------------------------------------------------------------------------
// matching.semantic_topk

fn item_text(item: &Json, fields: &[String]) -> String {
    match item {
        Json::String(s) => s.clone(),
        Json::Object(map) if !fields.is_empty() => fields
            .iter()
            .map(|f| cell_text(map.get(f)))
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" "),
        Json::Object(map) => map
            .values()
            .filter_map(|v| v.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    }
}

fn semantic_topk(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    use keiri_search::{DocKind, Document, Index, Mode, Query};
    let queries = items(inputs, "queries")?;
    let candidates = items(inputs, "candidates")?;
    let query_fields = inputs.strings("query_fields")?.unwrap_or_default();
    let candidate_fields = inputs.strings("candidate_fields")?.unwrap_or_default();
    let top_k = usize::try_from(inputs.i64("top_k")?.unwrap_or(5).max(0)).unwrap_or(0);
    let min_score = inputs.f64("min_score")?.unwrap_or(0.0);
    let model = inputs.str("model")?.map(str::to_string);

    let docs: Vec<Document> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let text = item_text(c, &candidate_fields);
            let mut d = Document::new(DocKind::Block, &format!("c{i}"), "candidate");
            d.description = text.clone();
            d.passages = vec![text];
            d
        })
        .collect();
    // An embedder is used only when the plan names a model: a run must not change its
    // results because of a developer's environment. Without one the ranking is BM25 on the
    // same tokenizer the planner uses (CJK bigrams), which handles 品名/摘要 well.
    let embedder = match &model {
        Some(m) => {
            let mut config = keiri_search::EmbedConfig::from_env(|k| std::env::var(k).ok());
            if let Some(keiri_search::embed::OpenAiEndpoint::OpenAi { model, .. }) =
                &mut config.openai
            {
                *model = m.clone();
            }
            let mut notes = Vec::new();
            let embedder = keiri_search::select_embedder(&config, &mut notes);
            if embedder.is_none() {
                // The plan asked for meaning-based matching: say that it got keywords instead.
                let why = notes.join("; ");
                ctx.calls.warn(Warning::new(
                    "FALLBACK",
                    format!("埋め込みモデル {m} を使えないため、キーワード（BM25）で照合しました: {why}"),
                    format!("embedding model {m} is not available: matched by keywords (BM25) instead: {why}"),
                ));
            }
            embedder
        }
        None => None,
    };
    let mode = if embedder.is_some() {
        Mode::Dense
    } else {
        Mode::Bm25
    };
    let index = Index::build(docs, embedder, &Default::default()).map_err(|e| {
        BlockError::new(
            ErrorCode::BlockFailed,
            format!("候補の索引を作れませんでした: {e}"),
            format!("could not index the candidates: {e}"),
        )
    })?;
    let mut matches = Vec::new();
    let mut unmatched = Vec::new();
    let mut steps = Steps::new(ctx, ProgressUnit::Rows, Some(queries.len()));
    for q in &queries {
        steps.next()?;
        let text = item_text(q, &query_fields);
        let mut query = Query::new(text).with_mode(mode);
        query.clauses = false;
        let ranking = index.rank(&query).map_err(|e| {
            BlockError::new(
                ErrorCode::BlockFailed,
                format!("候補の順位付けに失敗しました: {e}"),
                format!("ranking the candidates failed: {e}"),
            )
        })?;
        // BM25 scores are unbounded; the score shown is the share of the best candidate's,
        // so the best is 1 and min_score cuts the tail relative to it. A dense score is the
        // cosine similarity itself.
        let best = ranking
            .scored
            .first()
            .map_or(0.0, |s| s.bm25 + s.vocabulary);
        let scored: Vec<Json> = ranking
            .scored
            .iter()
            .map(|s| {
                let score = match s.dense {
                    Some(d) => f64::from(d),
                    None if best > 0.0 => f64::from((s.bm25 + s.vocabulary) / best),
                    None => 0.0,
                };
                (s.ord, round4(score))
            })
            .filter(|(_, score)| *score > 0.0 && *score + 1e-9 >= min_score)
            .take(top_k)
            .map(|(ord, score)| json!({"item": candidates[ord], "score": num_json(score)}))
            .collect();
        if scored.is_empty() {
            unmatched.push(q.clone());
        } else {
            matches.push(json!({"query": q, "candidates": scored}));
        }
    }
    Ok(outputs(vec![
        ("matches", Json::Array(matches)),
        ("unmatched", Json::Array(unmatched)),
    ]))
}

builtin!("matching.semantic_topk", semantic_topk);
