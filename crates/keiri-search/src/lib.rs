//! Retrieval for the planner: given an instruction (Japanese or English) and optional
//! attached documents, find the few block specs (and, later, templates) a plan should be built
//! from, with the evidence for each.
//!
//! * [`tokenize`]: the one lexical tokenizer (NFKC, lowercase, Latin words, CJK character
//!   bigrams plus single characters), also used by the chat router; registered in tantivy.
//! * [`bm25`]: an in-memory tantivy BM25 index with field boosts, a port-name vocabulary
//!   score and a category filter.
//! * [`embed`]: the [`Embedder`] trait with OpenAI / Azure OpenAI and a local
//!   multilingual-e5-small (4-bit weights, run with candle), behind the bundled pack of the
//!   shipped catalog's vectors and a disk cache; passages neither holds are embedded in the
//!   background ([`Index::build_background`]) while BM25 answers.
//! * [`fusion`] + [`index`]: min-max convex fusion (or RRF) and the capped Top-K
//!   ([`top_k`]) with per-candidate scores and matched terms.
//! * [`retriever`]: the blocks' and templates' indexes of a workspace, built once and shared
//!   ([`retriever::shared`]) by the Candidates panel, the planner, the chat agent and MCP.
//! * [`eval`]: recall@5/10, MRR and nDCG@10 on a labelled dev set (`eval/dev.yaml`).
//!
//! This crate must not read documents (the caller extracts their text), call an LLM, or
//! know about the API's transport types beyond the request/response contract it defines.
//! Without an embedding model it still works: retrieval runs BM25-only and says so.
//!
//! Dependencies and why:
//! * `tantivy`: a maintained BM25 implementation with per-field boosts and pluggable
//!   tokenizers, in memory; writing our own scorer would be less tested.
//! * `candle-core` / `candle-nn`: pure-Rust tensor ops (matmul via `gemm`, softmax, layer
//!   norm) to run the e5 encoder offline; ONNX Runtime (fastembed) cannot be installed here.
//! * `tokenizers`: the reference implementation of the model's SentencePiece-unigram
//!   `tokenizer.json`, so token ids match what the model was trained on.
//! * `half`: the f16 scales of the 4-bit blocks.
//! * `keiri-llm`: the OpenAI / Azure embeddings endpoint, so an embeddings request has the
//!   same client, retries, timeout, redaction and typed errors as every other model call;
//!   `tokio` only runs that call on a thread of its own behind the blocking [`Embedder`].
//! * `sha2`: cache keys; `dirs`: the user cache directory; `keiri-fs`: atomic cache writes.
//! * `unicode-normalization`: NFKC, so full-width and half-width forms match.

pub mod bm25;
pub mod document;
pub mod embed;
mod error;
pub mod eval;
pub mod fusion;
pub mod index;
pub mod retriever;
pub mod tokenize;

pub use document::{DocKind, Document, passages_of};
pub use embed::{EmbedConfig, EmbedKind, Embedder, Progress, select_embedder};
pub use error::Error;
pub use eval::{EvalReport, EvalSet, Metrics, evaluate, evaluate_default, format_report};
pub use fusion::FusionKind;
pub use index::{
    Candidate, Index, Mode, Query, Ranking, RetrieveRequest, RetrieveResponse, Scored, top_k,
};
pub use retriever::{Retriever, RetrieverKey, TemplateMatch};
pub use tokenize::{tokenize, tokenize_detailed};
