//! Dense embeddings: the [`Embedder`] trait, its two implementations (OpenAI / Azure OpenAI
//! over HTTP, and the local multilingual-e5-small model), the bundled pack of the shipped
//! catalog's vectors ([`pack`]), a disk cache keyed by model and text hash, background
//! embedding with progress ([`background`]), and the choice between them from the
//! configuration.
//!
//! Embeddings stay on this machine unless the user switches cloud embeddings on
//! explicitly (`KEIRI_EMBEDDER=openai|azure`, or the setting): an LLM key alone never sends
//! the catalog or the user's instructions to an embeddings endpoint.

pub mod background;
mod cache;
mod e5;
mod embedder;
mod openai;
pub mod pack;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use background::{Prepared, Progress, prepare_passages};
pub use cache::{CachedEmbedder, DiskCache, text_key};
pub use e5::{E5Embedder, LOCAL_MODEL_NAME, MODEL_FILE, TOKENIZER_FILE};
pub use embedder::{EmbedKind, Embedder, cosine, l2_normalize};
pub use openai::{OpenAiEmbedder, OpenAiEndpoint};
pub use pack::{PACK_DIR, Pack, PackedEmbedder};

/// Which embedder to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EmbedPreference {
    /// The local model when its files are present, else none (BM25 only). Never a cloud
    /// endpoint: sending texts to one needs the user's explicit [`EmbedPreference::OpenAi`].
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
    /// Bundled embedding packs to consult first, read-only: pack files, or catalog
    /// directories whose `.embeddings/` holds the pack of the chosen model.
    pub packs: Vec<PathBuf>,
}

/// The default OpenAI embedding model.
pub const DEFAULT_OPENAI_MODEL: &str = "text-embedding-3-small";
/// The directory name of the local model under `models/`.
pub const LOCAL_MODEL_DIR_NAME: &str = "multilingual-e5-small";

impl EmbedConfig {
    /// Reads the configuration through `var` (normally `std::env::var`), so tests can pass
    /// their own environment:
    ///
    /// * `KEIRI_EMBEDDER` = `auto` (default: the local model when present) | `local` |
    ///   `openai` | `azure` | `none`; only `openai`/`azure` ever send texts off the machine;
    /// * for `openai`: the key `OPENAI_API_KEY` (else `KEIRI_LLM_API_KEY`) and the base URL
    ///   `KEIRI_EMBED_BASE_URL`, else the configured LLM's (`KEIRI_LLM_BASE_URL`, then
    ///   `OPENAI_BASE_URL`), else the public OpenAI endpoint; for `azure`:
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
        let wants_azure = get("KEIRI_EMBEDDER").is_some_and(|v| v.eq_ignore_ascii_case("azure"));
        let openai_key = get("OPENAI_API_KEY").or_else(|| get("KEIRI_LLM_API_KEY"));
        let azure = (get("AZURE_OPENAI_API_KEY"), get("AZURE_OPENAI_ENDPOINT"));
        let openai = if let (Some(key), Some(endpoint)) = azure
            && (wants_azure || openai_key.is_none())
        {
            Some(OpenAiEndpoint::Azure {
                endpoint,
                deployment: get("AZURE_OPENAI_EMBED_DEPLOYMENT").unwrap_or_else(|| model.clone()),
                api_version: get("AZURE_OPENAI_API_VERSION")
                    .unwrap_or_else(|| openai::DEFAULT_AZURE_API_VERSION.to_string()),
                api_key: key,
            })
        } else {
            openai_key.map(|key| OpenAiEndpoint::OpenAi {
                base_url: get("KEIRI_EMBED_BASE_URL")
                    .or_else(|| get("KEIRI_LLM_BASE_URL"))
                    .or_else(|| get("OPENAI_BASE_URL"))
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
            packs: Vec::new(),
        }
    }
}

/// `models/multilingual-e5-small` in the nearest ancestor of the executable or of the
/// current directory that has the model file, or in an installed app's resource directory
/// ([`installed_resource_dirs`]).
pub fn find_local_model_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok();
    let cwd = std::env::current_dir().ok();
    let starts = exe.iter().chain(cwd.iter());
    let ancestors = starts.flat_map(|start| {
        start
            .ancestors()
            .take(8)
            .map(Path::to_path_buf)
            .collect::<Vec<_>>()
    });
    ancestors
        .chain(installed_resource_dirs())
        .map(|dir| dir.join("models").join(LOCAL_MODEL_DIR_NAME))
        .find(|dir| dir.join(MODEL_FILE).is_file())
}

/// The product name the installers use for the resource directory (`tauri.conf.json`'s
/// `productName`).
pub const PRODUCT_NAME: &str = "Keiri Studio";

/// Where an installed desktop app keeps its bundled files (catalog, templates, skillpacks,
/// model), relative to its executable, in the layouts of Tauri's bundler: the executable's
/// own directory (Windows .msi/NSIS), `../lib/Keiri Studio` (Linux .deb, .rpm and AppImage:
/// `/usr/bin/keiri-studio` + `/usr/lib/Keiri Studio/`) and `../Resources` (macOS .app:
/// `Contents/MacOS/` + `Contents/Resources/`). Only directories that exist are returned.
pub fn installed_resource_dirs() -> Vec<PathBuf> {
    let Some(exe_dir) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
    else {
        return Vec::new();
    };
    resource_dirs_for(&exe_dir)
        .into_iter()
        .filter(|d| d.is_dir())
        .collect()
}

/// [`installed_resource_dirs`] for an executable in `exe_dir`, existing or not.
pub fn resource_dirs_for(exe_dir: &Path) -> Vec<PathBuf> {
    vec![
        exe_dir.to_path_buf(),
        exe_dir.join("..").join("lib").join(PRODUCT_NAME),
        exe_dir.join("..").join("Resources"),
    ]
}

/// The local model's directory when [`select_embedder`] would load that model and it is not
/// loaded in this process yet (still loading, or not started): a caller that must not wait
/// can answer without it meanwhile.
pub fn local_model_pending(config: &EmbedConfig) -> Option<&Path> {
    if !matches!(
        config.preference,
        EmbedPreference::Auto | EmbedPreference::Local
    ) {
        return None;
    }
    config
        .local_model_dir
        .as_deref()
        .filter(|dir| dir.join(MODEL_FILE).is_file() && !E5Embedder::is_loaded(dir))
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
        EmbedPreference::Local | EmbedPreference::Auto => local(notes),
    };
    let chosen = chosen?;
    let model = chosen.name().to_string();
    let cached: Arc<dyn Embedder> = match &config.cache_dir {
        Some(dir) => Arc::new(CachedEmbedder::new(chosen, DiskCache::new(dir.clone()))),
        None => chosen,
    };
    let packs = load_packs(&config.packs, &model, notes);
    if packs.is_empty() {
        return Some(cached);
    }
    Some(Arc::new(PackedEmbedder::new(cached, packs)))
}

/// The packs of `model` named by `sources` (pack files, or catalog directories whose
/// `.embeddings/` may hold one), each loaded once per process. A missing pack is normal (a
/// workspace catalog has none); a damaged one becomes a note and is skipped.
fn load_packs(sources: &[PathBuf], model: &str, notes: &mut Vec<String>) -> Vec<Arc<Pack>> {
    type Loaded = std::sync::Mutex<std::collections::HashMap<PathBuf, Option<Arc<Pack>>>>;
    static LOADED: std::sync::OnceLock<Loaded> = std::sync::OnceLock::new();
    let mut loaded = LOADED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut packs = Vec::new();
    for source in sources {
        let path = if source.is_dir() {
            Pack::path_in(source, model)
        } else {
            source.clone()
        };
        if !path.is_file() {
            continue;
        }
        let key = path.canonicalize().unwrap_or_else(|_| path.clone());
        let pack = loaded
            .entry(key)
            .or_insert_with(|| match Pack::load(&path) {
                Ok(pack) => Some(Arc::new(pack)),
                Err(e) => {
                    notes.push(format!("the bundled embeddings are not used: {e}"));
                    None
                }
            })
            .clone();
        packs.extend(pack.filter(|p| p.model() == model));
    }
    packs
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
            ("KEIRI_EMBEDDER", "azure"),
            ("OPENAI_API_KEY", "sk-x"),
            ("AZURE_OPENAI_API_KEY", "az"),
            ("AZURE_OPENAI_ENDPOINT", "https://r.example"),
        ]);
        assert_eq!(c.preference, EmbedPreference::OpenAi);
        assert!(
            matches!(c.openai, Some(OpenAiEndpoint::Azure { ref deployment, .. }) if deployment == DEFAULT_OPENAI_MODEL)
        );
        let c = config(&[("KEIRI_EMBEDDER", "none"), ("KEIRI_EMBED_CACHE_DIR", "/c")]);
        assert_eq!(c.preference, EmbedPreference::None);
        assert_eq!(c.cache_dir, Some(PathBuf::from("/c")));
        assert!(config(&[("OPENAI_API_KEY", "  ")]).openai.is_none());
    }

    fn base_url(c: &EmbedConfig) -> Option<&str> {
        match &c.openai {
            Some(OpenAiEndpoint::OpenAi { base_url, .. }) => Some(base_url),
            _ => None,
        }
    }

    #[test]
    fn cloud_embeddings_use_the_configured_base_url() {
        let check = |vars: &[(&str, &str)], expect: &str| {
            let mut all = vec![("KEIRI_EMBEDDER", "openai"), ("OPENAI_API_KEY", "sk-x")];
            all.extend_from_slice(vars);
            assert_eq!(base_url(&config(&all)), Some(expect), "{vars:?}");
        };
        check(&[], openai::DEFAULT_OPENAI_BASE_URL);
        check(&[("OPENAI_BASE_URL", "http://proxy/v1")], "http://proxy/v1");
        check(
            &[
                ("OPENAI_BASE_URL", "http://proxy/v1"),
                ("KEIRI_LLM_BASE_URL", "http://127.0.0.1:8080/v1"),
            ],
            "http://127.0.0.1:8080/v1",
        );
        check(
            &[
                ("KEIRI_LLM_BASE_URL", "http://127.0.0.1:8080/v1"),
                ("KEIRI_EMBED_BASE_URL", "http://embed/v1"),
            ],
            "http://embed/v1",
        );
        // An OpenAI-compatible server's own key serves its embeddings too.
        let c = config(&[
            ("KEIRI_EMBEDDER", "openai"),
            ("KEIRI_LLM_BASE_URL", "http://127.0.0.1:8080/v1"),
            ("KEIRI_LLM_API_KEY", "local-key"),
        ]);
        assert_eq!(base_url(&c), Some("http://127.0.0.1:8080/v1"));
    }

    #[test]
    fn an_llm_key_alone_never_selects_cloud_embeddings() {
        // Auto with a key and no local model: nothing leaves the machine, BM25 only.
        let mut c = config(&[
            ("OPENAI_API_KEY", "sk-x"),
            ("AZURE_OPENAI_API_KEY", "az"),
            ("AZURE_OPENAI_ENDPOINT", "https://r.example"),
        ]);
        assert_eq!(c.preference, EmbedPreference::Auto);
        c.local_model_dir = None;
        c.cache_dir = None;
        let mut notes = Vec::new();
        assert!(select_embedder(&c, &mut notes).is_none());
        assert!(notes[0].contains("not installed"), "{notes:?}");
        // The same key with cloud embeddings switched on does select them.
        c.preference = EmbedPreference::OpenAi;
        let chosen = select_embedder(&c, &mut Vec::new()).unwrap();
        assert!(chosen.name().starts_with("openai:"), "{}", chosen.name());
    }

    #[test]
    fn installed_layouts_are_searched_beside_the_executable() {
        let dirs = resource_dirs_for(Path::new("/usr/bin"));
        assert!(dirs.contains(&PathBuf::from("/usr/bin/../lib/Keiri Studio")));
        assert!(dirs.contains(&PathBuf::from("/usr/bin/../Resources")));
        assert!(dirs.contains(&PathBuf::from("/usr/bin")));
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
