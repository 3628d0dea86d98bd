//! What every embedder is: the [`Embedder`] trait, the [`EmbedKind`] of a text, and the vector
//! arithmetic they share. Its own file, below the implementations and the choice between them
//! (`embed/mod.rs`), so that each implementation depends on it and not on that choice.

use crate::error::Error;

/// Whether a text is a search query or a document passage. e5 models are trained with
/// `query: ` / `passage: ` prefixes and embed the two differently; OpenAI models ignore it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EmbedKind {
    Query,
    Passage,
}

impl EmbedKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EmbedKind::Query => "query",
            EmbedKind::Passage => "passage",
        }
    }
}

/// Turns texts into L2-normalised vectors, one per text, all of one dimension.
pub trait Embedder: Send + Sync {
    /// A stable name of the model (`local:multilingual-e5-small-q4`,
    /// `openai:text-embedding-3-small`); part of every cache key and shown to the user.
    fn name(&self) -> &str;

    /// Embeds `texts` in order.
    fn embed(&self, texts: &[String], kind: EmbedKind) -> Result<Vec<Vec<f32>>, Error>;

    /// The vectors this embedder has at hand without computing anything (from a pack or a
    /// cache), `None` for the others, in order. A model alone has none.
    fn lookup(&self, texts: &[String], _kind: EmbedKind) -> Vec<Option<Vec<f32>>> {
        vec![None; texts.len()]
    }
}

/// Scales `v` to unit length (a zero vector stays zero).
pub fn l2_normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 1e-12 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Cosine of two unit vectors (their dot product); 0 when the lengths differ.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
