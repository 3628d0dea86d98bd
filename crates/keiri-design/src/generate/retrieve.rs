//! Retrieving: the candidate blocks and templates a plan may use, from the instruction
//! and the documents (BM25 + embeddings through keiri-search).

use super::*;

pub(super) fn truncate_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    text.chars().take(max).collect()
}

/// The candidate block ids of the shared retriever for the instruction and the digest: the
/// same request, and so the same candidates, as the Candidates panel's `blocks_retrieve`.
pub(super) fn retrieve_blocks(
    instruction: &str,
    digest: &str,
    options: &GenerateOptions,
    retriever: &Retriever,
) -> Result<Vec<String>, Error> {
    let request = keiri_search::RetrieveRequest {
        instruction: instruction.to_string(),
        k: options.topk_per_category,
        pinned: options.pinned_blocks.clone(),
        ..Default::default()
    };
    let response = retriever
        .retrieve(&request, &doc_texts(digest))
        .map_err(Error::Search)?;
    Ok(response.candidates.into_iter().map(|c| c.id).collect())
}

pub(super) fn doc_texts(digest: &str) -> Vec<String> {
    if digest.trim().is_empty() {
        Vec::new()
    } else {
        vec![digest.to_string()]
    }
}

/// `ctx`'s retriever, or a BM25-only one of its catalog and templates for a caller that
/// passed none (a library use without a workspace).
pub(super) fn with_retriever<T>(
    ctx: &Context<'_>,
    f: impl FnOnce(&Retriever) -> Result<T, Error>,
) -> Result<T, Error> {
    match ctx.retriever {
        Some(retriever) => f(retriever),
        None => f(&Retriever::build(ctx.catalog, ctx.templates, None).map_err(Error::Search)?),
    }
}

/// A runner-up template is chosen too when its BM25 score is at least this share of the best.
pub(super) const RUNNER_UP_SHARE: f32 = 0.6;

/// The templates named in the options, or those the retriever finds
/// ([`Retriever::rank_templates`]: BM25 over the templates' ids, titles, descriptions and
/// tags, with the block retrieval's tokenizer): the best match, plus the runner-up when it
/// scores at least 60 % of it (two related flows, e.g. read + report).
pub fn select_templates<'t>(
    instruction: &str,
    digest: &str,
    options: &GenerateOptions,
    templates: &'t Templates,
    retriever: &Retriever,
) -> Result<Vec<&'t TemplateSpec>, Error> {
    if !options.templates.is_empty() {
        return options
            .templates
            .iter()
            .map(|id| {
                templates
                    .get(id)
                    .ok_or_else(|| Error::InvalidArgument(format!("unknown template {id:?}")))
            })
            .collect();
    }
    // The raw BM25 score, not the min-max normalised one: the runner-up rule compares the two
    // best matches with each other, and normalising by the weakest template would distort it.
    let scored = retriever
        .matching_templates(instruction, &doc_texts(digest), templates)
        .map_err(Error::Search)?;
    let mut chosen = Vec::new();
    if let Some(&(top, first)) = scored.first() {
        chosen.push(first);
        if let Some(&(second, t)) = scored.get(1)
            && second >= top * RUNNER_UP_SHARE
        {
            chosen.push(t);
        }
    }
    Ok(chosen)
}
