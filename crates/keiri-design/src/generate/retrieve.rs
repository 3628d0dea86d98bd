//! Retrieving: the candidate blocks and templates a plan may use, from the instruction
//! and the documents (BM25 + embeddings through keiri-search).

use keiri_plan::{TemplateSpec, Templates};
use keiri_search::Retriever;

use crate::Error;

use super::context::*;

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

/// At most this many templates are chosen by retrieval (a flow, a check and its report).
const MAX_CHOSEN: usize = 3;

/// The templates named in the options, or those whose job the instruction names
/// ([`crate::intent::names_job`]) other than inside a more specific job word of another
/// ([`crate::intent::named_only_inside`]), best BM25 match first ([`Retriever::rank_templates`] over the
/// templates' ids, titles, descriptions and tags), each kept only when the composition still
/// succeeds with it. The attached documents do not choose templates: they fit files and
/// columns once the templates are chosen (a journal attached to a request for a variance list
/// is no reason for bank reconciliation). Empty: no template does the job.
pub fn select_templates<'t>(
    instruction: &str,
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
    // The raw BM25 score orders the templates whose job the instruction names; one it does
    // not score at all (its words tokenised apart) still counts, after them.
    let mut ranked: Vec<&TemplateSpec> = retriever
        .matching_templates(instruction, &[], templates)
        .map_err(Error::Search)?
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    for t in templates.iter() {
        if !ranked.iter().any(|r| r.id == t.id) {
            ranked.push(t);
        }
    }
    // Reporting templates close a flow: they come after the flows they report on.
    ranked.sort_by_key(|t| t.category == "reporting");
    let named: Vec<&TemplateSpec> = ranked
        .iter()
        .copied()
        .filter(|t| crate::intent::names_job(instruction, t))
        .collect();
    let mut chosen: Vec<&TemplateSpec> = Vec::new();
    for t in named.iter().copied() {
        if chosen.len() == MAX_CHOSEN || crate::intent::named_only_inside(instruction, t, &named) {
            continue;
        }
        let mut with = chosen.clone();
        with.push(t);
        if crate::intent::composes(&with) {
            chosen = with;
        }
    }
    Ok(chosen)
}

/// The `n` templates that match `instruction` best by BM25 alone, whether or not it names
/// their job: what a "nothing fits" answer offers instead.
pub(super) fn nearest_templates<'t>(
    instruction: &str,
    templates: &'t Templates,
    retriever: &Retriever,
    n: usize,
) -> Result<Vec<&'t TemplateSpec>, Error> {
    Ok(retriever
        .matching_templates(instruction, &[], templates)
        .map_err(Error::Search)?
        .into_iter()
        .take(n)
        .map(|(_, t)| t)
        .collect())
}
