//! Embeddings: [`crate::Llm::embed`] turns texts into vectors through the same provider,
//! retries, timeouts, cancellation, redaction and event log as a chat call.
//!
//! The wire rules live here: the OpenAI embeddings API rejects empty strings and inputs over
//! the model's 8,191 tokens, so texts are cut and blanks sent as one space; the answer must
//! hold one finite, non-empty vector per text, all of one dimension, in the order of their
//! `index`. Batching and normalising are the caller's (retrieval's) business.

use serde::Deserialize;
use serde_json::Value;

use crate::chat::Usage;

/// Characters kept per text; the OpenAI models take 8,191 tokens, which Japanese reaches at
/// about this many characters.
pub const MAX_EMBED_TEXT_CHARS: usize = 8_000;

/// The vectors of one [`crate::Llm::embed`] call, one per text, in the texts' order.
#[derive(Debug, Clone, PartialEq)]
pub struct Embeddings {
    pub vectors: Vec<Vec<f32>>,
    pub usage: Usage,
    /// Attempts made (1 when the first succeeded).
    pub attempts: u32,
    /// Wall time of the whole call, retries included.
    pub duration_ms: u64,
}

/// The texts as the API accepts them: cut to [`MAX_EMBED_TEXT_CHARS`], a blank as one space.
pub(crate) fn wire_inputs(texts: &[String]) -> Vec<String> {
    texts
        .iter()
        .map(|t| {
            let t: String = t.chars().take(MAX_EMBED_TEXT_CHARS).collect();
            if t.trim().is_empty() {
                " ".to_string()
            } else {
                t
            }
        })
        .collect()
}

#[derive(Deserialize)]
struct WireResponse {
    data: Vec<WireItem>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireItem {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
}

/// The vectors of an embeddings response for `expected` texts, or why it is unusable.
pub(crate) fn parse_embeddings(value: Value, expected: usize) -> Result<Embeddings, String> {
    let response: WireResponse =
        serde_json::from_value(value).map_err(|e| format!("not an embeddings response ({e})"))?;
    if response.data.len() != expected {
        return Err(format!(
            "{} embeddings returned for {expected} texts",
            response.data.len()
        ));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; expected];
    for (position, item) in response.data.into_iter().enumerate() {
        let index = item.index.unwrap_or(position);
        let slot = out
            .get_mut(index)
            .ok_or_else(|| format!("embedding index {index} out of range"))?;
        if slot.is_some() {
            return Err(format!("embedding index {index} returned twice"));
        }
        if item.embedding.is_empty() || item.embedding.iter().any(|x| !x.is_finite()) {
            return Err(format!("embedding {index} is empty or not finite"));
        }
        *slot = Some(item.embedding);
    }
    // Every slot is filled: `expected` items, none twice, none out of range.
    let vectors: Vec<Vec<f32>> = out.into_iter().flatten().collect();
    if vectors.windows(2).any(|w| w[0].len() != w[1].len()) {
        return Err("embeddings of different dimensions".into());
    }
    let prompt_tokens = response.usage.map_or(0, |u| u.prompt_tokens);
    Ok(Embeddings {
        vectors,
        usage: Usage::new(prompt_tokens, 0),
        attempts: 0,
        duration_ms: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn inputs_are_cut_and_blanks_become_a_space() {
        let long = "請".repeat(MAX_EMBED_TEXT_CHARS + 5);
        let sent = wire_inputs(&["".into(), " \n".into(), long, "a".into()]);
        assert_eq!(sent[0], " ");
        assert_eq!(sent[1], " ");
        assert_eq!(sent[2].chars().count(), MAX_EMBED_TEXT_CHARS);
        assert_eq!(sent[3], "a");
    }

    #[test]
    fn vectors_follow_their_index() {
        let e = parse_embeddings(
            json!({"data": [{"index": 1, "embedding": [2.0, 0.0]}, {"index": 0, "embedding": [1.0, 0.0]}],
                   "usage": {"prompt_tokens": 7, "total_tokens": 7}}),
            2,
        )
        .unwrap();
        assert_eq!(e.vectors, vec![vec![1.0, 0.0], vec![2.0, 0.0]]);
        assert_eq!(e.usage.prompt_tokens, 7);
    }

    #[test]
    fn unusable_answers_say_why() {
        let bad = |v: Value, n: usize| parse_embeddings(v, n).unwrap_err();
        assert!(
            bad(json!({"data": [{"embedding": [1.0]}]}), 2)
                .contains("1 embeddings returned for 2 texts")
        );
        assert!(bad(json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]}), 2).contains("twice"));
        assert!(
            bad(json!({"data": [{"index": 5, "embedding": [1.0]}]}), 1).contains("out of range")
        );
        assert!(bad(json!({"data": [{"embedding": []}]}), 1).contains("empty"));
        assert!(
            bad(
                json!({"data": [{"embedding": [1.0]}, {"embedding": [1.0, 2.0]}]}),
                2
            )
            .contains("dimensions")
        );
        assert!(bad(json!({"object": "error"}), 1).contains("not an embeddings response"));
    }
}
