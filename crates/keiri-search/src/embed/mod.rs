//! Dense embeddings: the [`Embedder`] trait, its two implementations (OpenAI / Azure OpenAI
//! over HTTP, and the local multilingual-e5-small model), a disk cache keyed by model and
//! text hash, and the choice between them from the configuration.

mod cache;
mod e5;
mod openai;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use cache::{CachedEmbedder, DiskCache};
pub use e5::{E5Embedder, MODEL_FILE, TOKENIZER_FILE};
pub use openai::{OpenAiEmbedder, OpenAiEndpoint};

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
}

/// Which embedder to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EmbedPreference {
    /// OpenAI / Azure when a key is configured, else the local model when its files are
    /// present, else none (BM25 only).
    #[default]
    Auto,
    Local,
    OpenAi,
    None,
}

/// Where the embedders come from; see [`EmbedConfig::from_env`].
#[derive(Debug, Clone, Default)]
pub struct EmbedConfig {
    pub preference: EmbedPreference,
    pub openai: Option<OpenAiEndpoint>,
    /// The local model directory (with `e5-small-q4.bin` and `tokenizer.json`).
    pub local_model_dir: Option<PathBuf>,
    /// The embedding cache; `None` disables it.
    pub cache_dir: Option<PathBuf>,
}

/// The default OpenAI embedding model.
pub const DEFAULT_OPENAI_MODEL: &str = "text-embedding-3-small";
/// The directory name of the local model under `models/`.
pub const LOCAL_MODEL_DIR_NAME: &str = "multilingual-e5-small";

impl EmbedConfig {
    /// Reads the configuration through `var` (normally `std::env::var`), so tests can pass
    /// their own environment:
    ///
    /// * `KEIRI_EMBEDDER` = `auto` (default) | `local` | `openai` | `none`;
    /// * `OPENAI_API_KEY` (+ `KEIRI_EMBED_BASE_URL` for an OpenAI-compatible server), or
    ///   `AZURE_OPENAI_API_KEY` + `AZURE_OPENAI_ENDPOINT` (+ `AZURE_OPENAI_EMBED_DEPLOYMENT`,
    ///   `AZURE_OPENAI_API_VERSION`);
    /// * `KEIRI_EMBED_MODEL` (default `text-embedding-3-small`);
    /// * `KEIRI_EMBED_MODEL_DIR`, else `models/multilingual-e5-small` in an ancestor of the
    ///   executable or of the current directory;
    /// * `KEIRI_EMBED_CACHE_DIR`, else the user cache directory (`~/.cache/keiri-studio/
    ///   embeddings` on Linux).
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> EmbedConfig {
        let get = |k: &str| {
            var(k)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let preference = match get("KEIRI_EMBEDDER")
            .map(|v| v.to_ascii_lowercase())
            .as_deref()
        {
            Some("local") => EmbedPreference::Local,
            Some("openai" | "azure") => EmbedPreference::OpenAi,
            Some("none" | "off" | "bm25") => EmbedPreference::None,
            _ => EmbedPreference::Auto,
        };
        let model = get("KEIRI_EMBED_MODEL").unwrap_or_else(|| DEFAULT_OPENAI_MODEL.to_string());
        let openai = if let (Some(key), Some(endpoint)) =
            (get("AZURE_OPENAI_API_KEY"), get("AZURE_OPENAI_ENDPOINT"))
        {
            Some(OpenAiEndpoint::Azure {
                endpoint,
                deployment: get("AZURE_OPENAI_EMBED_DEPLOYMENT").unwrap_or_else(|| model.clone()),
                api_version: get("AZURE_OPENAI_API_VERSION")
                    .unwrap_or_else(|| openai::DEFAULT_AZURE_API_VERSION.to_string()),
                api_key: key,
            })
        } else {
            get("OPENAI_API_KEY").map(|key| OpenAiEndpoint::OpenAi {
                base_url: get("KEIRI_EMBED_BASE_URL")
                    .unwrap_or_else(|| openai::DEFAULT_OPENAI_BASE_URL.to_string()),
                api_key: key,
                model: model.clone(),
            })
        };
        let local_model_dir = get("KEIRI_EMBED_MODEL_DIR")
            .map(PathBuf::from)
            .or_else(find_local_model_dir);
        let cache_dir = get("KEIRI_EMBED_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| dirs::cache_dir().map(|d| d.join("keiri-studio").join("embeddings")));
        EmbedConfig {
            preference,
            openai,
            local_model_dir,
            cache_dir,
        }
    }
}

/// `models/multilingual-e5-small` in the nearest ancestor of the executable or of the
/// current directory that has the model file.
pub fn find_local_model_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok();
    let cwd = std::env::current_dir().ok();
    let starts = exe.iter().chain(cwd.iter());
    starts
        .flat_map(|start| {
            start
                .ancestors()
                .take(8)
                .map(Path::to_path_buf)
                .collect::<Vec<_>>()
        })
        .map(|dir| dir.join("models").join(LOCAL_MODEL_DIR_NAME))
        .find(|dir| dir.join(MODEL_FILE).is_file())
}

/// The embedder chosen by `config` (wrapped in the disk cache when one is configured), or
/// `None` for BM25-only retrieval; `notes` says what was chosen and why, for the user.
pub fn select_embedder(config: &EmbedConfig, notes: &mut Vec<String>) -> Option<Arc<dyn Embedder>> {
    let remote = || -> Option<Arc<dyn Embedder>> {
        config
            .openai
            .clone()
            .map(|e| Arc::new(OpenAiEmbedder::new(e)) as Arc<dyn Embedder>)
    };
    let local = |notes: &mut Vec<String>| -> Option<Arc<dyn Embedder>> {
        let Some(dir) = &config.local_model_dir else {
            notes.push(
                "the local embedding model is not installed (run scripts/fetch-models.sh or set KEIRI_EMBED_MODEL_DIR)"
                    .into(),
            );
            return None;
        };
        match E5Embedder::shared(dir) {
            Ok(model) => Some(model as Arc<dyn Embedder>),
            Err(e) => {
                notes.push(format!(
                    "the local embedding model could not be loaded: {e}"
                ));
                None
            }
        }
    };
    let chosen = match config.preference {
        EmbedPreference::None => {
            notes.push("embeddings are turned off (KEIRI_EMBEDDER=none)".into());
            None
        }
        EmbedPreference::OpenAi => {
            let e = remote();
            if e.is_none() {
                notes.push("no OpenAI or Azure OpenAI key is configured".into());
            }
            e
        }
        EmbedPreference::Local => local(notes),
        EmbedPreference::Auto => remote().or_else(|| local(notes)),
    };
    let chosen = chosen?;
    Some(match &config.cache_dir {
        Some(dir) => Arc::new(CachedEmbedder::new(chosen, DiskCache::new(dir.clone()))),
        None => chosen,
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> EmbedConfig {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        EmbedConfig::from_env(|k| map.get(k).cloned())
    }

    #[test]
    fn env_selects_endpoints() {
        let c = config(&[("OPENAI_API_KEY", "sk-x"), ("KEIRI_EMBED_MODEL", "m")]);
        assert_eq!(
            c.openai,
            Some(OpenAiEndpoint::OpenAi {
                base_url: openai::DEFAULT_OPENAI_BASE_URL.into(),
                api_key: "sk-x".into(),
                model: "m".into()
            })
        );
        let c = config(&[
            ("OPENAI_API_KEY", "sk-x"),
            ("AZURE_OPENAI_API_KEY", "az"),
            ("AZURE_OPENAI_ENDPOINT", "https://r.example"),
        ]);
        assert!(
            matches!(c.openai, Some(OpenAiEndpoint::Azure { ref deployment, .. }) if deployment == DEFAULT_OPENAI_MODEL)
        );
        let c = config(&[("KEIRI_EMBEDDER", "none"), ("KEIRI_EMBED_CACHE_DIR", "/c")]);
        assert_eq!(c.preference, EmbedPreference::None);
        assert_eq!(c.cache_dir, Some(PathBuf::from("/c")));
        assert!(config(&[("OPENAI_API_KEY", "  ")]).openai.is_none());
    }

    #[test]
    fn selection_notes_when_nothing_is_available() {
        let mut notes = Vec::new();
        let c = EmbedConfig {
            preference: EmbedPreference::Local,
            ..EmbedConfig::default()
        };
        assert!(select_embedder(&c, &mut notes).is_none());
        assert!(notes[0].contains("not installed"), "{notes:?}");
        let mut notes = Vec::new();
        let c = EmbedConfig {
            preference: EmbedPreference::OpenAi,
            ..EmbedConfig::default()
        };
        assert!(select_embedder(&c, &mut notes).is_none());
        assert!(notes[0].contains("key"), "{notes:?}");
    }

    #[test]
    fn normalize_and_cosine() {
        let mut v = vec![3.0, 4.0];
        l2_normalize(&mut v);
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
        assert!((cosine(&v, &v) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&v, &[1.0]), 0.0);
        let mut z = vec![0.0, 0.0];
        l2_normalize(&mut z);
        assert_eq!(z, vec![0.0, 0.0]);
    }
}
