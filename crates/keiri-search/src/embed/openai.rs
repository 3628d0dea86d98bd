//! The OpenAI / Azure OpenAI embeddings endpoint (`POST …/embeddings`).
//!
//! Requests run on a short-lived thread of their own with reqwest's blocking client, so the
//! embedder can be called from plain code and from inside an async runtime (`keiri serve`)
//! alike; calling a blocking client on a runtime thread would panic.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use super::{EmbedKind, Embedder, l2_normalize};
use crate::error::Error;

pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
pub const DEFAULT_AZURE_API_VERSION: &str = "2024-10-21";
/// Texts per request: well under the API's 2,048-input limit, and small enough that one
/// failure costs little.
const BATCH: usize = 128;
/// Characters kept per text; the models take 8,191 tokens, which Japanese reaches at about
/// this many characters.
const MAX_TEXT_CHARS: usize = 8_000;
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
    endpoint: OpenAiEndpoint,
    name: String,
}

#[derive(Deserialize)]
struct Response {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

impl OpenAiEmbedder {
    pub fn new(endpoint: OpenAiEndpoint) -> OpenAiEmbedder {
        let name = match &endpoint {
            OpenAiEndpoint::OpenAi { model, .. } => format!("openai:{model}"),
            OpenAiEndpoint::Azure { deployment, .. } => format!("azure:{deployment}"),
        };
        OpenAiEmbedder { endpoint, name }
    }

    fn request(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, Error> {
        let inputs: Vec<String> = texts
            .iter()
            // The API rejects empty strings.
            .map(|t| {
                let t: String = t.chars().take(MAX_TEXT_CHARS).collect();
                if t.trim().is_empty() {
                    " ".to_string()
                } else {
                    t
                }
            })
            .collect();
        let (url, header, value, body) = match &self.endpoint {
            OpenAiEndpoint::OpenAi {
                base_url,
                api_key,
                model,
            } => (
                format!("{}/embeddings", base_url.trim_end_matches('/')),
                "Authorization",
                format!("Bearer {api_key}"),
                json!({"model": model, "input": inputs, "encoding_format": "float"}),
            ),
            OpenAiEndpoint::Azure {
                endpoint,
                deployment,
                api_version,
                api_key,
            } => (
                format!(
                    "{}/openai/deployments/{deployment}/embeddings?api-version={api_version}",
                    endpoint.trim_end_matches('/')
                ),
                "api-key",
                api_key.clone(),
                json!({"input": inputs, "encoding_format": "float"}),
            ),
        };
        let send = move || -> Result<Response, Error> {
            let client = reqwest::blocking::Client::builder()
                .timeout(TIMEOUT)
                .build()
                .map_err(|e| Error::Http(format!("building the HTTP client: {e}")))?;
            let response = client
                .post(&url)
                .header(header, value)
                .json(&body)
                .send()
                .map_err(|e| Error::Http(format!("POST {url}: {e}")))?;
            let status = response.status();
            let text = response
                .text()
                .map_err(|e| Error::Http(format!("reading the response: {e}")))?;
            if !status.is_success() {
                let excerpt: String = text.chars().take(300).collect();
                return Err(Error::Http(format!("POST {url}: HTTP {status}: {excerpt}")));
            }
            serde_json::from_str(&text)
                .map_err(|e| Error::Http(format!("unexpected response: {e}")))
        };
        let response = std::thread::scope(|s| s.spawn(send).join())
            .map_err(|_| Error::Http("the request thread failed".into()))??;
        if response.data.len() != texts.len() {
            return Err(Error::Http(format!(
                "{} embeddings returned for {} texts",
                response.data.len(),
                texts.len()
            )));
        }
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for (position, item) in response.data.into_iter().enumerate() {
            let index = item.index.unwrap_or(position);
            let slot = out
                .get_mut(index)
                .ok_or_else(|| Error::Http(format!("embedding index {index} out of range")))?;
            if item.embedding.is_empty() || item.embedding.iter().any(|x| !x.is_finite()) {
                return Err(Error::Http(format!(
                    "embedding {index} is empty or not finite"
                )));
            }
            let mut v = item.embedding;
            l2_normalize(&mut v);
            *slot = Some(v);
        }
        let vectors: Vec<Vec<f32>> = out
            .into_iter()
            .enumerate()
            .map(|(i, v)| v.ok_or_else(|| Error::Http(format!("no embedding for text {i}"))))
            .collect::<Result<_, _>>()?;
        if vectors.windows(2).any(|w| w[0].len() != w[1].len()) {
            return Err(Error::Http("embeddings of different dimensions".into()));
        }
        Ok(vectors)
    }
}

impl Embedder for OpenAiEmbedder {
    fn name(&self) -> &str {
        &self.name
    }

    fn embed(&self, texts: &[String], _kind: EmbedKind) -> Result<Vec<Vec<f32>>, Error> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            out.extend(self.request(chunk)?);
        }
        Ok(out)
    }
}
