//! The configuration in effect and where each part of it came from.
//!
//! Three layers configure a model, highest first: the process environment, the workspace's
//! `.env`, and the variables the saved settings stand for (with the stored key). [`Layers`]
//! keeps them apart so that each value's source can be told, and [`Layers::effective`] says
//! which provider, model, URL, key and embeddings are in effect — so a settings dialog never
//! claims "not set" while a variable configures a model. Reading the layers (the settings
//! file, the keychain) is the caller's; this module only decides.

use schemars::JsonSchema;
use serde::Serialize;

use crate::config::{ENV_VARS, Env, ProviderKind, StatusProblem, StatusResponse};

/// Where an effective value came from, highest precedence first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The process environment (set by the user, a launcher or CI).
    Environment,
    /// The workspace's `.env` file.
    EnvFile,
    /// The settings dialog (`settings.json`, the key from the keychain).
    Settings,
    /// A key kept for this session only.
    Session,
    /// Nothing set: the built-in default.
    Default,
}

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(rename = "Sourced{T}")]
pub struct Sourced<T> {
    pub value: T,
    pub source: Source,
}

/// The LLM and embedding configuration actually in effect — the environment layered over the
/// saved settings — and where each part came from, so the dialog never claims "not set" while
/// a variable configures a model. No key, only where it comes from.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct EffectiveSettings {
    /// A model can be called.
    pub configured: bool,
    pub provider: Option<Sourced<ProviderKind>>,
    pub model: Sourced<String>,
    /// Where requests go (user info and query removed).
    pub base_url: Option<Sourced<String>>,
    /// The Azure deployment.
    pub deployment: Option<Sourced<String>>,
    /// Where the key comes from; `None`: no key is sent (a server that needs none).
    pub api_key: Option<Source>,
    /// Retrieval's embeddings: `auto` (the local model when installed), `local`, `openai`,
    /// `azure` or `bm25-only`.
    pub embedding: Sourced<String>,
    /// Retrieval sends the instruction and the catalog's texts to a cloud embeddings endpoint.
    pub cloud_embeddings: bool,
    /// The saved provider is not the one in effect: the environment or `.env` configures
    /// another, and wins.
    pub settings_overridden: bool,
    /// The names (never the values) of the LLM and embedding variables set in the environment
    /// or `.env`, for an administrator.
    pub variables: Vec<String>,
    /// Why no model can be called, when none can.
    pub problem: Option<StatusProblem>,
}

impl EffectiveSettings {
    /// A configuration that could not be read at all (a malformed `.env`, an unreadable
    /// settings file): nothing in effect but the defaults, and `status`'s problem.
    pub fn unreadable(status: StatusResponse) -> EffectiveSettings {
        EffectiveSettings {
            configured: false,
            provider: None,
            model: Sourced {
                value: status.model,
                source: Source::Default,
            },
            base_url: None,
            deployment: None,
            api_key: None,
            embedding: Sourced {
                value: "auto".into(),
                source: Source::Default,
            },
            cloud_embeddings: false,
            settings_overridden: false,
            variables: Vec::new(),
            problem: status.problem,
        }
    }
}

/// keiri-search's embedding variables (see `EmbedConfig::from_env`): one set in the process
/// environment wins over the saved settings.
pub const EMBED_VARS: &[&str] = &[
    "KEIRI_EMBEDDER",
    "KEIRI_EMBED_MODEL",
    "KEIRI_EMBED_BASE_URL",
    "AZURE_OPENAI_EMBED_DEPLOYMENT",
];

/// `process` over `dotenv` over `saved`: the precedence of the layers, as a pure function.
pub fn layer_env(saved: Env, dotenv: Env, process: Env) -> Env {
    saved.overlay(dotenv).overlay(process)
}

/// The three places the configuration comes from, kept apart so that each value's source
/// can be told.
#[derive(Debug, Clone, Default)]
pub struct Layers {
    pub process: Env,
    pub dotenv: Env,
    /// The variables the saved settings stand for, the stored key among them.
    pub saved: Env,
    /// The provider the settings saved (`None`: none chosen).
    pub saved_provider: Option<ProviderKind>,
    /// The saved key is kept for this session only (not in the keychain).
    pub session_key: bool,
}

impl Layers {
    /// The variables in effect: [`layer_env`] of the three layers.
    pub fn layered(&self) -> Env {
        layer_env(
            self.saved.clone(),
            self.dotenv.clone(),
            self.process.clone(),
        )
    }

    /// Where variable `name` comes from, if it is set.
    pub fn source(&self, name: &str) -> Option<Source> {
        if self.process.get(name).is_some() {
            Some(Source::Environment)
        } else if self.dotenv.get(name).is_some() {
            Some(Source::EnvFile)
        } else if self.saved.get(name).is_some() {
            let is_key = name.ends_with("_API_KEY");
            if is_key && self.session_key {
                Some(Source::Session)
            } else {
                Some(Source::Settings)
            }
        } else {
            None
        }
    }

    fn sourced(&self, name: &str, value: String) -> Sourced<String> {
        Sourced {
            value,
            source: self.source(name).unwrap_or(Source::Default),
        }
    }

    /// What is in effect, given the `status` of the layered variables (the caller's: a key
    /// it could not read makes a status of its own).
    pub fn effective(&self, status: StatusResponse) -> EffectiveSettings {
        let env = self.layered();
        // The variable that decided each part, per provider (config's precedence).
        let (provider_var, url_var, key_var) = match status.provider {
            Some(ProviderKind::OpenaiCompatible) => (
                "KEIRI_LLM_BASE_URL",
                "KEIRI_LLM_BASE_URL",
                "KEIRI_LLM_API_KEY",
            ),
            Some(ProviderKind::Azure) => (
                "AZURE_OPENAI_ENDPOINT",
                "AZURE_OPENAI_ENDPOINT",
                "AZURE_OPENAI_API_KEY",
            ),
            Some(ProviderKind::Openai) | None => {
                ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_KEY")
            }
        };
        let provider = status.provider.map(|kind| Sourced {
            value: kind,
            source: self.source(provider_var).unwrap_or(Source::Default),
        });
        let embedding = match env.get("KEIRI_EMBEDDER").map(str::to_ascii_lowercase) {
            Some(v) if v == "local" => "local",
            Some(v) if v == "openai" => "openai",
            Some(v) if v == "azure" => "azure",
            Some(v) if matches!(v.as_str(), "none" | "off" | "bm25") => "bm25-only",
            _ => "auto",
        };
        let settings_overridden = match (self.saved_provider, &provider) {
            (Some(saved), Some(p)) => {
                p.value != saved || matches!(p.source, Source::Environment | Source::EnvFile)
            }
            _ => false,
        };
        let mut variables: Vec<String> = ENV_VARS
            .iter()
            .chain(EMBED_VARS)
            .filter(|v| self.process.get(v).is_some() || self.dotenv.get(v).is_some())
            .map(|v| v.to_string())
            .collect();
        variables.sort();
        EffectiveSettings {
            configured: status.configured,
            model: self.sourced("KEIRI_LLM_MODEL", status.model.clone()),
            base_url: status
                .base_url
                .clone()
                .filter(|_| status.configured)
                .map(|url| self.sourced(url_var, url)),
            deployment: status
                .deployment
                .clone()
                .map(|d| self.sourced("AZURE_OPENAI_DEPLOYMENT", d)),
            api_key: if status.api_key_set {
                self.source(key_var)
            } else {
                None
            },
            provider,
            cloud_embeddings: matches!(embedding, "openai" | "azure"),
            embedding: self.sourced("KEIRI_EMBEDDER", embedding.to_string()),
            settings_overridden,
            variables,
            problem: status.problem,
        }
    }
}
