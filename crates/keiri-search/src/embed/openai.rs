//! The OpenAI / Azure OpenAI embeddings endpoint (`POST …/embeddings`), through keiri-llm.
//!
//! keiri-llm sends the requests ([`keiri_llm::Llm::embed`]): the same HTTP client, retries
//! with backoff, per-attempt timeout, redaction of keys in messages and typed errors as every
//! other model call. This module turns an [`OpenAiEndpoint`] into keiri-llm's provider
//! configuration, batches the texts and normalises the vectors. [`Embedder`] is a plain
//! (blocking) trait, so each call runs on a short-lived thread with a runtime of its own: it
//! can be called from plain code and from inside an async runtime (`keiri serve`) alike.

use std::time::Duration;

use keiri_llm::{ApiKey, CallOptions, Llm, LlmConfig, ProviderConfig, RetryPolicy};

use super::{EmbedKind, Embedder, l2_normalize};
use crate::error::Error;

pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
pub const DEFAULT_AZURE_API_VERSION: &str = "2024-10-21";
/// Texts per request: well under the API's 2,048-input limit, and small enough that one
/// failure costs little.
const BATCH: usize = 128;
const TIMEOUT: Duration = Duration::from_secs(60);

/// Where to send embedding requests.
#[derive(Clone, PartialEq, Eq)]
pub enum OpenAiEndpoint {
    /// OpenAI or any OpenAI-compatible server: `{base_url}/embeddings`, bearer key.
    OpenAi {
        base_url: String,
        api_key: String,
        model: String,
    },
    /// Azure OpenAI: `{endpoint}/openai/deployments/{deployment}/embeddings?api-version=…`,
    /// `api-key` header; the deployment fixes the model.
    Azure {
        endpoint: String,
        deployment: String,
        api_version: String,
        api_key: String,
    },
}

impl std::fmt::Debug for OpenAiEndpoint {
    // Never print the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenAiEndpoint::OpenAi {
                base_url, model, ..
            } => f
                .debug_struct("OpenAi")
                .field("base_url", base_url)
                .field("model", model)
                .finish_non_exhaustive(),
            OpenAiEndpoint::Azure {
                endpoint,
                deployment,
                api_version,
                ..
            } => f
                .debug_struct("Azure")
                .field("endpoint", endpoint)
                .field("deployment", deployment)
                .field("api_version", api_version)
                .finish_non_exhaustive(),
        }
    }
}

/// Embeddings from OpenAI or Azure OpenAI.
#[derive(Debug)]
pub struct OpenAiEmbedder {
    /// The model client, or why it could not be built (reported by every call).
    llm: Result<Llm, String>,
    name: String,
}

impl OpenAiEmbedder {
    pub fn new(endpoint: OpenAiEndpoint) -> OpenAiEmbedder {
        let (name, provider, model) = match endpoint {
            OpenAiEndpoint::OpenAi {
                base_url,
                api_key,
                model,
            } => (
                format!("openai:{model}"),
                ProviderConfig::Openai {
                    api_key: ApiKey::new(api_key),
                    base_url: base_url.trim_end_matches('/').to_string(),
                },
                model,
            ),
            OpenAiEndpoint::Azure {
                endpoint,
                deployment,
                api_version,
                api_key,
            } => (
                format!("azure:{deployment}"),
                ProviderConfig::Azure {
                    api_key: ApiKey::new(api_key),
                    endpoint: endpoint.trim_end_matches('/').to_string(),
                    deployment: deployment.clone(),
                    api_version,
                },
                deployment,
            ),
        };
        let config = LlmConfig {
            provider,
            model,
            temperature: 0.0,
            timeout: TIMEOUT,
            retry: RetryPolicy::default(),
        };
        OpenAiEmbedder {
            llm: Llm::new(&config).map_err(|e| e.to_string()),
            name,
        }
    }

    /// The same embedder with another retry policy (tests use none, to fail fast).
    pub fn with_retry(mut self, retry: RetryPolicy) -> OpenAiEmbedder {
        self.llm = self.llm.map(|llm| llm.with_retry(retry));
        self
    }

    /// Every batch of `texts` through keiri-llm, on one thread with one runtime for the
    /// whole call (not one per batch).
    fn request(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, Error> {
        let llm = self.llm.as_ref().map_err(|e| Error::Http(e.clone()))?;
        let call = || -> Result<Vec<Vec<f32>>, Error> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| Error::Http(format!("starting the request runtime: {e}")))?;
            let options = CallOptions::new().with_stage("embeddings");
            let mut vectors = Vec::with_capacity(texts.len());
            for batch in texts.chunks(BATCH) {
                let embeddings = runtime
                    .block_on(llm.embed(batch, &options))
                    .map_err(|e| Error::Http(e.to_string()))?;
                vectors.extend(embeddings.vectors);
            }
            Ok(vectors)
        };
        let mut vectors = std::thread::scope(|s| s.spawn(call).join())
            .map_err(|_| Error::Http("the request thread failed".into()))??;
        for v in &mut vectors {
            l2_normalize(v);
        }
        Ok(vectors)
    }
}

impl Embedder for OpenAiEmbedder {
    fn name(&self) -> &str {
        &self.name
    }

    fn embed(&self, texts: &[String], _kind: EmbedKind) -> Result<Vec<Vec<f32>>, Error> {
        self.request(texts)
    }
}
