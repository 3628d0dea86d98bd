//! The studio's settings: which LLM provider and model, where embeddings come from, the UI
//! language and the workspace — and the provider's API key, which lives in the OS keychain or,
//! when the user asks for it, in this process's memory only.
//!
//! Non-secret settings are one JSON file, `settings.json`, in the app's config directory
//! (`KEIRI_CONFIG_DIR`, else the platform's user config directory + `keiri-studio`: e.g.
//! `~/.config/keiri-studio` on Linux), written atomically. The API key goes to a
//! [`SecretStore`]: the OS keychain ([`Keychain`]: macOS Keychain, Windows Credential Manager,
//! the Secret Service on Linux; [`NoKeychain`] when `KEIRI_KEYCHAIN=off`) unless a test
//! injects its own. A keychain that cannot be reached is the error `KEYCHAIN_UNAVAILABLE`,
//! and the user may then keep the key for this session only (`key_storage: "session"`):
//! it is held in [`SessionKeys`], in memory, and serves every model call of this process
//! until it ends. There is no plain-text fallback. The key is never returned
//! ([`SettingsGetResponse`] only says whether one is set and where), never written to the
//! settings file and never put in a message.
//!
//! The LLM configuration ([`llm_env`]) layers, highest first: the process environment, then
//! `<workspace>/.env`, then these saved settings with the stored key — so a variable set by
//! the user or CI always beats what the dialog saved. A keychain that cannot be read only
//! matters when nothing else configures a model: a server that needs no key (a local
//! llama.cpp or Ollama) works without any keychain. [`EffectiveSettings`] says which
//! provider, model and URL are in effect and where each came from.
//!
//! Embeddings stay on this machine unless cloud embeddings are chosen here (`embedding:
//! "openai" | "azure"`, i.e. `KEIRI_EMBEDDER`): an LLM key alone never sends text to an
//! embeddings endpoint (keiri-search's `select_embedder`). `KEIRI_EMBED_MODEL` only names the
//! cloud model once cloud embeddings are on.
//!
//! Dependency: `keyring` 4 (default `v1` feature: one platform store chosen for us, the
//! Secret Service over pure-Rust zbus on Linux, so no libdbus at build time).

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use crate::{ApiError, Context, ErrorCode, Lang};

/// Overrides the config directory (tests, portable installs).
pub const CONFIG_DIR_ENV: &str = "KEIRI_CONFIG_DIR";
/// The settings file inside the config directory.
pub const SETTINGS_FILE: &str = "settings.json";
/// The keychain service the API keys are filed under (the app's identifier).
pub const KEYCHAIN_SERVICE: &str = "dev.keiri.studio";
/// `off` (or `none`, `0`, `false`): use no OS keychain at all ([`NoKeychain`]) — for CI and
/// end-to-end tests, which must not touch the machine's keychain, and for users who want no
/// key stored; a key can then still be kept for the session.
pub const KEYCHAIN_ENV: &str = "KEIRI_KEYCHAIN";
/// The largest settings file read; anything bigger is not ours.
const MAX_SETTINGS_BYTES: u64 = 64 * 1024;

/// The LLM provider the settings select.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ProviderChoice {
    /// Nothing saved: only the environment configures a provider.
    #[default]
    None,
    Openai,
    Azure,
    /// Any OpenAI-compatible server at `base_url` (llama.cpp, Ollama, vLLM, …).
    Compatible,
}

impl ProviderChoice {
    /// The keychain account of this provider's key (each provider keeps its own key, so
    /// switching back and forth does not lose one).
    fn account(self) -> Option<&'static str> {
        match self {
            ProviderChoice::None => None,
            ProviderChoice::Openai => Some("openai-api-key"),
            ProviderChoice::Azure => Some("azure-openai-api-key"),
            ProviderChoice::Compatible => Some("compatible-api-key"),
        }
    }
}

/// Where retrieval's embeddings come from (keiri-search's `KEIRI_EMBEDDER`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EmbeddingChoice {
    /// The bundled multilingual-e5-small model, on this machine.
    Local,
    Openai,
    Azure,
    /// No embeddings: keyword (BM25) retrieval only.
    Bm25Only,
}

impl EmbeddingChoice {
    fn embedder_var(self) -> &'static str {
        match self {
            EmbeddingChoice::Local => "local",
            EmbeddingChoice::Openai => "openai",
            EmbeddingChoice::Azure => "azure",
            EmbeddingChoice::Bm25Only => "none",
        }
    }
}

/// The saved, non-secret settings: exactly what `settings.json` holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct Settings {
    pub provider: ProviderChoice,
    /// The model (`KEIRI_LLM_MODEL`); the default model when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The OpenAI-compatible server (`compatible`), or another OpenAI endpoint (`openai`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub azure_endpoint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub azure_deployment: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub azure_api_version: Option<String>,
    /// Unset: the local model when installed, else BM25 only; a cloud endpoint only when
    /// chosen here (or `KEIRI_EMBEDDER`), never because an LLM key exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding: Option<EmbeddingChoice>,
    pub lang: Lang,
    /// The folder the desktop app opens (used at its next start).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<PathBuf>,
    /// Hosts a run's network blocks (`http.request`, `notify.send` webhooks) may reach: host
    /// names, IP addresses or `*.example.com`. Empty: no network at all. A plan cannot widen it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow_hosts: Vec<String>,
    /// Environment variable names `${env.X}` in a plan run may read (besides the command
    /// line's `--allow-env`). Empty: none. A run request may narrow it, never widen it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow_env: Vec<String>,
}

/// Checks the allowlist with the runtime's own parser ([`keiri_run::allow_hosts`]): each entry
/// a host, optionally with a scheme and a port (`api.example.com`, `https://api.example.com`,
/// `127.0.0.1:8080`, `*.example.com`); no path. A top-level name alone (`com`, `*.com`) and
/// link-local or metadata addresses are refused. Saved in the parser's normal form.
fn allow_hosts(raw: &[String]) -> Result<Vec<String>, ApiError> {
    let mut hosts: Vec<String> = Vec::new();
    for entry in raw {
        if entry.trim().is_empty() {
            continue;
        }
        let host = keiri_run::allow_hosts::parse_allow_entry(entry)
            .map_err(|reason| {
                ApiError::new(
                    ErrorCode::InvalidRequest,
                    format!("allow_hosts: {entry:?}: {reason} (write api.example.com, https://api.example.com, 127.0.0.1:8080 or *.example.com)"),
                )
                .with_details(serde_json::json!({"field": "allow_hosts", "value": entry}))
            })?
            .to_text();
        if !hosts.contains(&host) {
            hosts.push(host);
        }
    }
    Ok(hosts)
}

/// Checks the environment variable names: each `[A-Za-z_][A-Za-z0-9_]*`, blanks dropped,
/// duplicates once.
fn allow_env(raw: &[String]) -> Result<Vec<String>, ApiError> {
    let mut names: Vec<String> = Vec::new();
    for entry in raw {
        let name = entry.trim();
        if name.is_empty() {
            continue;
        }
        let ok = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            return Err(ApiError::new(
                ErrorCode::InvalidRequest,
                format!("allow_env: {entry:?} is not an environment variable name"),
            )
            .with_details(serde_json::json!({"field": "allow_env", "value": entry})));
        }
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    Ok(names)
}

/// Request of `settings_get` (no fields).
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingsGetRequest {}

/// The saved settings, whether a key is stored, and where the file is. Never the key.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SettingsGetResponse {
    #[serde(flatten)]
    pub settings: Settings,
    /// The selected provider has a key in the keychain.
    pub api_key_set: bool,
    /// Where that key is kept: the keychain, or this session's memory; `None` without a key.
    pub api_key_storage: Option<KeyStorage>,
    /// The keychain could be asked (false: no key can be saved on this machine right now; it
    /// can still be kept for the session).
    pub keychain_available: bool,
    /// The settings file (it may not exist yet).
    pub path: PathBuf,
    /// What is in effect once the environment is layered over these settings, and why.
    pub effective: EffectiveSettings,
}

/// Where the selected provider's key is kept.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum KeyStorage {
    /// The OS keychain: kept across restarts.
    #[default]
    Keychain,
    /// This process's memory only ([`SessionKeys`]): gone when the app or `keiri serve` stops.
    Session,
}

/// Where an effective value came from, highest precedence first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[schemars(rename = "Sourced{T}")]
pub struct Sourced<T> {
    pub value: T,
    pub source: Source,
}

/// The LLM and embedding configuration actually in effect — the environment layered over the
/// saved settings — and where each part came from, so the dialog never claims "not set" while
/// a variable configures a model. No key, only where it comes from.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct EffectiveSettings {
    /// A model can be called.
    pub configured: bool,
    pub provider: Option<Sourced<keiri_llm::ProviderKind>>,
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
    pub problem: Option<keiri_llm::StatusProblem>,
}

/// Request of `settings_save`: the settings, and optionally a new API key.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingsSaveRequest {
    pub provider: ProviderChoice,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub base_url: Option<String>,
    #[serde(default)]
    pub azure_endpoint: Option<String>,
    #[serde(default)]
    pub azure_deployment: Option<String>,
    #[serde(default)]
    pub azure_api_version: Option<String>,
    #[serde(default)]
    pub embedding: Option<EmbeddingChoice>,
    #[serde(default)]
    pub lang: Lang,
    #[serde(default)]
    pub workspace: Option<PathBuf>,
    #[serde(default)]
    pub allow_hosts: Vec<String>,
    /// Absent or null: keep the saved list (the settings window does not show it).
    #[serde(default)]
    pub allow_env: Option<Vec<String>>,
    /// Absent or null: keep the stored key. Empty: delete it (from the keychain and the
    /// session). Otherwise: store it for `provider`, where `key_storage` says.
    #[serde(default)]
    pub api_key: Option<String>,
    /// Where a new `api_key` goes: the keychain (default; `KEYCHAIN_UNAVAILABLE` when there is
    /// none) or this session's memory.
    #[serde(default)]
    pub key_storage: KeyStorage,
}

impl fmt::Debug for SettingsSaveRequest {
    // The key must not reach a log through `{:?}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SettingsSaveRequest")
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("key_storage", &self.key_storage)
            .finish_non_exhaustive()
    }
}

/// Where secrets are kept. Implemented by [`Keychain`]; tests inject an in-memory store.
///
/// `Debug` is required (a [`Context`] is `Debug`) and must never show a secret.
pub trait SecretStore: Send + Sync + fmt::Debug {
    /// The secret filed under `account`, `None` when there is none.
    fn get(&self, account: &str) -> Result<Option<String>, SecretError>;
    /// Stores (or replaces) the secret under `account`.
    fn set(&self, account: &str, secret: &str) -> Result<(), SecretError>;
    /// Removes the secret under `account`; no error when there is none.
    fn delete(&self, account: &str) -> Result<(), SecretError>;
    /// The keys kept for this session beside the store, if it has such a place ([`WithSession`]).
    fn session(&self) -> Option<&SessionKeys> {
        None
    }
}

/// API keys kept for this process only: in memory, never written to a file, a log or the
/// keychain, and gone when the process ends. They serve a user whose machine has no keychain
/// (or who wants none used) for every model call of this session.
#[derive(Default)]
pub struct SessionKeys(Mutex<HashMap<String, String>>);

impl SessionKeys {
    fn keys(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        // A panic elsewhere while the lock was held leaves a map that is still whole.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The key kept under `account`.
    pub fn get(&self, account: &str) -> Option<String> {
        self.keys().get(account).cloned()
    }

    /// Keeps `key` under `account` until the process ends (or it is replaced or removed).
    pub fn set(&self, account: &str, key: &str) {
        self.keys().insert(account.to_string(), key.to_string());
    }

    /// Forgets the key under `account`, if any.
    pub fn remove(&self, account: &str) {
        self.keys().remove(account);
    }
}

impl fmt::Debug for SessionKeys {
    // Account names only: the values are keys.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys = self.keys();
        let mut accounts: Vec<&String> = keys.keys().collect();
        accounts.sort();
        f.debug_struct("SessionKeys")
            .field("accounts", &accounts)
            .finish()
    }
}

/// A secret store with this session's keys beside it: what every [`Context`] starts with.
#[derive(Debug, Default)]
pub struct WithSession<S> {
    store: S,
    session: SessionKeys,
}

impl<S: SecretStore> WithSession<S> {
    pub fn new(store: S) -> Self {
        WithSession {
            store,
            session: SessionKeys::default(),
        }
    }
}

impl<S: SecretStore> SecretStore for WithSession<S> {
    fn get(&self, account: &str) -> Result<Option<String>, SecretError> {
        self.store.get(account)
    }
    fn set(&self, account: &str, secret: &str) -> Result<(), SecretError> {
        self.store.set(account, secret)
    }
    fn delete(&self, account: &str) -> Result<(), SecretError> {
        self.store.delete(account)
    }
    fn session(&self) -> Option<&SessionKeys> {
        Some(&self.session)
    }
}

/// No keychain: every call is [`SecretError::Unavailable`]. Chosen with `KEIRI_KEYCHAIN=off`;
/// it is also what a machine without a Secret Service looks like.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoKeychain;

impl SecretStore for NoKeychain {
    fn get(&self, _: &str) -> Result<Option<String>, SecretError> {
        Err(NoKeychain::error())
    }
    fn set(&self, _: &str, _: &str) -> Result<(), SecretError> {
        Err(NoKeychain::error())
    }
    fn delete(&self, _: &str) -> Result<(), SecretError> {
        Err(NoKeychain::error())
    }
}

impl NoKeychain {
    fn error() -> SecretError {
        SecretError::Unavailable(format!("the keychain is switched off ({KEYCHAIN_ENV}=off)"))
    }
}

/// Why a [`SecretStore`] failed. Messages never contain the secret.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecretError {
    /// There is no keychain to talk to (no Secret Service on the session bus, locked and the
    /// unlock was refused, an unsupported platform).
    #[error("the OS keychain is not available: {0}")]
    Unavailable(String),
    /// The keychain answered with an error.
    #[error("the OS keychain failed: {0}")]
    Failed(String),
}

impl From<SecretError> for ApiError {
    fn from(e: SecretError) -> Self {
        let code = match e {
            SecretError::Unavailable(_) => ErrorCode::KeychainUnavailable,
            SecretError::Failed(_) => ErrorCode::Internal,
        };
        ApiError::new(code, e.to_string())
    }
}

/// The OS keychain, through the `keyring` crate, under [`KEYCHAIN_SERVICE`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Keychain;

impl Keychain {
    fn entry(account: &str) -> Result<keyring::Entry, SecretError> {
        keyring::Entry::new(KEYCHAIN_SERVICE, account).map_err(keychain_error)
    }
}

fn keychain_error(e: keyring::Error) -> SecretError {
    match e {
        keyring::Error::NoDefaultStore
        | keyring::Error::NoStorageAccess(_)
        | keyring::Error::PlatformFailure(_)
        | keyring::Error::NotSupportedByStore(_) => SecretError::Unavailable(e.to_string()),
        other => SecretError::Failed(other.to_string()),
    }
}

impl SecretStore for Keychain {
    fn get(&self, account: &str) -> Result<Option<String>, SecretError> {
        match Keychain::entry(account)?.get_password() {
            Ok(secret) => Ok(Some(secret)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(keychain_error(e)),
        }
    }

    fn set(&self, account: &str, secret: &str) -> Result<(), SecretError> {
        Keychain::entry(account)?
            .set_password(secret)
            .map_err(keychain_error)
    }

    fn delete(&self, account: &str) -> Result<(), SecretError> {
        match Keychain::entry(account)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(keychain_error(e)),
        }
    }
}

/// The store a [`Context`] starts with: the OS keychain (or none, with `KEIRI_KEYCHAIN=off`),
/// with this session's keys beside it.
pub(crate) fn default_secret_store() -> Arc<dyn SecretStore> {
    let off = std::env::var(KEYCHAIN_ENV).is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "off" | "none" | "0" | "false"
        )
    });
    if off {
        Arc::new(WithSession::new(NoKeychain))
    } else {
        Arc::new(WithSession::new(Keychain))
    }
}

/// The selected provider's key and where it is, as far as the stores can tell.
#[derive(Debug, Default)]
struct KeyLookup {
    key: Option<String>,
    storage: Option<KeyStorage>,
    /// The keychain could not be asked (`None`: it answered).
    keychain_error: Option<SecretError>,
}

/// The key under `account`: this session's first (the user's latest choice in this process),
/// then the keychain's. The keychain is asked either way, so its state is known.
fn lookup_key(secrets: &dyn SecretStore, account: &str) -> KeyLookup {
    let session = secrets.session().and_then(|s| s.get(account));
    let (stored, keychain_error) = match secrets.get(account) {
        Ok(key) => (key, None),
        Err(e) => (None, Some(e)),
    };
    match (session, stored) {
        (Some(key), _) => KeyLookup {
            key: Some(key),
            storage: Some(KeyStorage::Session),
            keychain_error,
        },
        (None, Some(key)) => KeyLookup {
            key: Some(key),
            storage: Some(KeyStorage::Keychain),
            keychain_error,
        },
        (None, None) => KeyLookup {
            key: None,
            storage: None,
            keychain_error,
        },
    }
}

/// The config directory: `KEIRI_CONFIG_DIR` when set and non-empty, else the user config
/// directory + `keiri-studio`; `None` when the platform has no such directory.
pub fn default_config_dir() -> Option<PathBuf> {
    match std::env::var_os(CONFIG_DIR_ENV) {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => dirs::config_dir().map(|d| d.join("keiri-studio")),
    }
}

fn settings_path(ctx: &Context) -> Result<PathBuf, ApiError> {
    ctx.config_dir
        .as_ref()
        .map(|d| d.join(SETTINGS_FILE))
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::IoError,
                format!("this system has no user config directory (set {CONFIG_DIR_ENV})"),
            )
        })
}

/// The saved settings; the defaults when nothing was saved yet.
pub fn load_settings(ctx: &Context) -> Result<Settings, ApiError> {
    let path = settings_path(ctx)?;
    let io = |e: std::io::Error| {
        ApiError::new(
            ErrorCode::IoError,
            format!("reading {}: {e}", path.display()),
        )
    };
    let meta = match std::fs::metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Settings::default()),
        Err(e) => return Err(io(e)),
        Ok(meta) => meta,
    };
    if meta.len() > MAX_SETTINGS_BYTES {
        return Err(ApiError::new(
            ErrorCode::FileTooLarge,
            format!(
                "{} is over {MAX_SETTINGS_BYTES} bytes: not a settings file",
                path.display()
            ),
        ));
    }
    let text = std::fs::read_to_string(&path).map_err(io)?;
    serde_json::from_str(&text).map_err(|e| {
        ApiError::new(
            ErrorCode::InvalidRequest,
            format!("{} is not a valid settings file: {e}", path.display()),
        )
    })
}

/// `settings_get`: the saved settings, whether and where the selected provider has a key, and
/// what is in effect.
pub fn settings_get(
    ctx: &Context,
    _req: SettingsGetRequest,
) -> Result<SettingsGetResponse, ApiError> {
    let path = settings_path(ctx)?;
    let settings = load_settings(ctx)?;
    let lookup = match settings.provider.account() {
        None => KeyLookup::default(),
        Some(account) => lookup_key(ctx.secrets.as_ref(), account),
    };
    let keychain_available = !matches!(lookup.keychain_error, Some(SecretError::Unavailable(_)));
    // A keychain that answered with an error is reported, unless a session key serves anyway.
    if lookup.key.is_none()
        && let Some(e @ SecretError::Failed(_)) = lookup.keychain_error
    {
        return Err(e.into());
    }
    Ok(SettingsGetResponse {
        settings,
        api_key_set: lookup.key.is_some(),
        api_key_storage: lookup.storage,
        keychain_available,
        path,
        effective: effective_settings(ctx),
    })
}
crate::surface::function!(plain settings_get(crate::SettingsGetRequest) -> crate::SettingsGetResponse);

/// `settings_save`: checks and saves the settings; stores, keeps or deletes the key.
///
/// The key is written first: when the keychain is unavailable nothing is saved at all, so the
/// dialog never shows "saved" for a key that is not. The error (`KEYCHAIN_UNAVAILABLE`, details
/// `session_available: true`) lets the dialog offer to keep the key for this session instead
/// (`key_storage: "session"`), which needs no keychain.
pub fn settings_save(
    ctx: &Context,
    req: SettingsSaveRequest,
) -> Result<SettingsGetResponse, ApiError> {
    let mut settings = checked_settings(&req)?;
    if req.allow_env.is_none() {
        settings.allow_env = load_settings(ctx).map(|s| s.allow_env).unwrap_or_default();
    }
    let path = settings_path(ctx)?;
    if let Some(key) = req.api_key.as_deref() {
        let account = settings
            .provider
            .account()
            .ok_or_else(|| invalid("api_key", "choose a provider before entering an API key"))?;
        let session = ctx.secrets.session();
        let key = key.trim();
        if key.is_empty() {
            if let Some(session) = session {
                session.remove(account);
            }
            // Without a keychain there is no stored key to delete (and none can be read).
            match ctx.secrets.delete(account) {
                Ok(()) | Err(SecretError::Unavailable(_)) => {}
                Err(e) => return Err(e.into()),
            }
        } else if !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(invalid(
                "api_key",
                "the key may contain only visible ASCII characters (no spaces)",
            ));
        } else {
            match (req.key_storage, session) {
                (KeyStorage::Keychain, session) => {
                    ctx.secrets.set(account, key).map_err(|e| {
                        let unavailable = matches!(e, SecretError::Unavailable(_));
                        let err = ApiError::from(e);
                        if unavailable && session.is_some() {
                            err.with_details(serde_json::json!({"session_available": true}))
                        } else {
                            err
                        }
                    })?;
                    // The keychain now holds the current key; an older session key must not
                    // shadow it.
                    if let Some(session) = session {
                        session.remove(account);
                    }
                }
                (KeyStorage::Session, Some(session)) => session.set(account, key),
                (KeyStorage::Session, None) => {
                    return Err(ApiError::new(
                        ErrorCode::KeychainUnavailable,
                        "this secret store cannot keep a key for the session",
                    ));
                }
            }
        }
    }
    let mut text = serde_json::to_string_pretty(&settings)
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("serialising settings: {e}")))?;
    text.push('\n');
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| {
            ApiError::new(
                ErrorCode::IoError,
                format!("creating {}: {e}", dir.display()),
            )
        })?;
    }
    keiri_fs::write_atomic(&path, text.as_bytes())?;
    settings_get(ctx, SettingsGetRequest {})
}
crate::surface::function!(plain settings_save(crate::SettingsSaveRequest) -> crate::SettingsGetResponse);

fn invalid(field: &str, message: &str) -> ApiError {
    ApiError::new(ErrorCode::InvalidRequest, format!("{field}: {message}"))
        .with_details(serde_json::json!({ "field": field }))
}

/// Trims every text, drops blank ones, and checks what the chosen provider needs.
fn checked_settings(req: &SettingsSaveRequest) -> Result<Settings, ApiError> {
    let text = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    let settings = Settings {
        provider: req.provider,
        model: text(&req.model),
        base_url: text(&req.base_url),
        azure_endpoint: text(&req.azure_endpoint),
        azure_deployment: text(&req.azure_deployment),
        azure_api_version: text(&req.azure_api_version),
        embedding: req.embedding,
        lang: req.lang,
        workspace: req
            .workspace
            .as_ref()
            .filter(|w| !w.as_os_str().is_empty())
            .cloned(),
        allow_hosts: allow_hosts(&req.allow_hosts)?,
        allow_env: allow_env(req.allow_env.as_deref().unwrap_or_default())?,
    };
    let url = |field: &str, value: &Option<String>| -> Result<(), ApiError> {
        if let Some(v) = value {
            let ok = url::Url::parse(v).is_ok_and(|u| {
                matches!(u.scheme(), "http" | "https")
                    && u.host_str().is_some_and(|h| !h.is_empty())
            });
            if !ok {
                return Err(invalid(field, "enter an http:// or https:// URL"));
            }
        }
        Ok(())
    };
    url("base_url", &settings.base_url)?;
    url("azure_endpoint", &settings.azure_endpoint)?;
    match settings.provider {
        ProviderChoice::Compatible if settings.base_url.is_none() => {
            return Err(invalid(
                "base_url",
                "an OpenAI-compatible provider needs the server URL",
            ));
        }
        ProviderChoice::Azure if settings.azure_endpoint.is_none() => {
            return Err(invalid("azure_endpoint", "Azure OpenAI needs the endpoint"));
        }
        ProviderChoice::Azure if settings.azure_deployment.is_none() => {
            return Err(invalid(
                "azure_deployment",
                "Azure OpenAI needs the deployment name",
            ));
        }
        _ => {}
    }
    if let Some(dir) = &settings.workspace
        && !(dir.is_absolute() && dir.is_dir())
    {
        return Err(invalid(
            "workspace",
            "the workspace must be an existing folder (absolute path)",
        ));
    }
    if let Some(dir) = &settings.workspace
        && let Some(what) = forbidden_workspace(dir, dirs::home_dir().as_deref())
    {
        return Err(ApiError::new(
            ErrorCode::WorkspaceNotAllowed,
            format!(
                "workspace: {} is {what}; choose a project folder",
                dir.display()
            ),
        )
        .with_details(serde_json::json!({ "field": "workspace" })));
    }
    Ok(settings)
}

/// Folders that hold the operating system: a workspace there would put system files in reach
/// of every tool. Compared without regard to case (Windows, macOS).
const SYSTEM_DIRS: &[&str] = &[
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/boot",
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/var/lib",
    "/var/run",
    "/System",
    "/Library",
    "/private/etc",
    "/private/var/db",
    "C:\\Windows",
    "C:\\Program Files",
    "C:\\Program Files (x86)",
    "C:\\ProgramData",
];

/// Folders that hold everyone's (or the system's) files, refused as the workspace themselves
/// though a project folder inside one is fine (`/tmp/book-closing`, `/home/sato/keiri`).
const SHARED_DIRS: &[&str] = &[
    "/var",
    "/tmp",
    "/var/tmp",
    "/root",
    "/home",
    "/Users",
    "/opt",
    "/srv",
    "/mnt",
    "/media",
    "/private",
    "/private/tmp",
    "/private/var",
    "C:\\Users",
];

/// What makes `dir` unfit as the workspace, if anything: the file-system root, the home folder
/// itself (every dotfile and key in reach), or a system folder or anything inside one. The
/// workspace is the root every HTTP, MCP and agent path must stay inside, so it must be a
/// project folder.
fn forbidden_workspace(dir: &Path, home: Option<&Path>) -> Option<&'static str> {
    let canonical = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let lower = |p: &Path| -> Vec<String> {
        p.components()
            .map(|c| c.as_os_str().to_string_lossy().to_lowercase())
            .collect()
    };
    let same = |a: &Path, b: &Path| lower(a) == lower(b);
    let inside = |p: &Path, prefix: &Path| {
        let (p, prefix) = (lower(p), lower(prefix));
        p.len() >= prefix.len() && p[..prefix.len()] == prefix[..]
    };
    for candidate in [dir, canonical.as_path()] {
        if candidate.parent().is_none() {
            return Some("the file-system root");
        }
        if let Some(home) = home
            && (same(candidate, home) || home.canonicalize().is_ok_and(|h| same(candidate, &h)))
        {
            return Some("the home folder itself");
        }
        if SYSTEM_DIRS
            .iter()
            .any(|sys| inside(candidate, Path::new(sys)))
            || SHARED_DIRS
                .iter()
                .any(|shared| same(candidate, Path::new(shared)))
        {
            return Some("a system folder");
        }
    }
    None
}

/// The variables the saved settings stand for, with the provider's stored `key`.
pub fn settings_vars(settings: &Settings, key: Option<&str>) -> keiri_llm::Env {
    let mut env = keiri_llm::Env::default();
    let key = key.map(str::to_string);
    let mut set = |name: &str, value: &Option<String>| {
        if let Some(v) = value {
            env = std::mem::take(&mut env).with(name, v.clone());
        }
    };
    match settings.provider {
        ProviderChoice::None => {}
        ProviderChoice::Openai => {
            set("OPENAI_API_KEY", &key);
            set("OPENAI_BASE_URL", &settings.base_url);
        }
        ProviderChoice::Azure => {
            set("AZURE_OPENAI_API_KEY", &key);
            set("AZURE_OPENAI_ENDPOINT", &settings.azure_endpoint);
            set("AZURE_OPENAI_DEPLOYMENT", &settings.azure_deployment);
            set("AZURE_OPENAI_API_VERSION", &settings.azure_api_version);
        }
        ProviderChoice::Compatible => {
            set("KEIRI_LLM_BASE_URL", &settings.base_url);
            set("KEIRI_LLM_API_KEY", &key);
        }
    }
    if settings.provider != ProviderChoice::None {
        set("KEIRI_LLM_MODEL", &settings.model);
    }
    set(
        "KEIRI_EMBEDDER",
        &settings.embedding.map(|e| e.embedder_var().to_string()),
    );
    env
}

/// `process` over `dotenv` over `saved`: the precedence of [`llm_env`], as a pure function.
pub fn layer_env(
    saved: keiri_llm::Env,
    dotenv: keiri_llm::Env,
    process: keiri_llm::Env,
) -> keiri_llm::Env {
    saved.overlay(dotenv).overlay(process)
}

/// The three places the configuration comes from, kept apart so that each value's source
/// can be told.
struct Layers {
    process: keiri_llm::Env,
    dotenv: keiri_llm::Env,
    saved: keiri_llm::Env,
    settings: Settings,
    key: KeyLookup,
}

impl Layers {
    fn read(ctx: &Context) -> Result<Layers, ApiError> {
        let dotenv = keiri_llm::Env::from_dotenv(&ctx.workspace).map_err(|e| {
            ApiError::new(ErrorCode::InvalidRequest, e.to_string())
                .with_details(serde_json::json!({"code": e.code()}))
        })?;
        let (settings, key) = match ctx.config_dir {
            Some(_) => {
                let settings = load_settings(ctx)?;
                // The keychain is only asked when a provider is selected, so a machine that
                // never saved settings never touches it.
                let key = match settings.provider.account() {
                    Some(account) => lookup_key(ctx.secrets.as_ref(), account),
                    None => KeyLookup::default(),
                };
                (settings, key)
            }
            None => (Settings::default(), KeyLookup::default()),
        };
        Ok(Layers {
            process: keiri_llm::Env::process(),
            dotenv,
            saved: settings_vars(&settings, key.key.as_deref()),
            settings,
            key,
        })
    }

    fn layered(&self) -> keiri_llm::Env {
        layer_env(
            self.saved.clone(),
            self.dotenv.clone(),
            self.process.clone(),
        )
    }

    /// The environment, or why the saved provider cannot be used: its key is in a keychain
    /// that cannot be read and nothing else configures a model. A configuration that works
    /// without that key (a server that needs none, a key from the environment) is used as is.
    fn env(&self) -> Result<keiri_llm::Env, ApiError> {
        let env = self.layered();
        if let Some(e) = &self.key.keychain_error
            && keiri_llm::LlmConfig::from_env(&env).is_err()
        {
            let code = match e {
                SecretError::Unavailable(_) => ErrorCode::KeychainUnavailable,
                SecretError::Failed(_) => ErrorCode::Internal,
            };
            return Err(ApiError::new(
                code,
                format!(
                    "the saved API key cannot be read ({e}); enter it again in the settings and keep it for this session"
                ),
            ));
        }
        Ok(env)
    }

    /// Where variable `name` comes from, if it is set.
    fn source(&self, name: &str) -> Option<Source> {
        if self.process.get(name).is_some() {
            Some(Source::Environment)
        } else if self.dotenv.get(name).is_some() {
            Some(Source::EnvFile)
        } else if self.saved.get(name).is_some() {
            let is_key = name.ends_with("_API_KEY");
            if is_key && self.key.storage == Some(KeyStorage::Session) {
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

    fn effective(&self) -> EffectiveSettings {
        use keiri_llm::ProviderKind;
        let env = self.layered();
        let status = match self.env() {
            Ok(env) => keiri_llm::status(&env),
            Err(e) => problem_status(e),
        };
        // The variable that decided each part, per provider (keiri-llm's precedence).
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
        let saved_kind = match self.settings.provider {
            ProviderChoice::None => None,
            ProviderChoice::Openai => Some(ProviderKind::Openai),
            ProviderChoice::Azure => Some(ProviderKind::Azure),
            ProviderChoice::Compatible => Some(ProviderKind::OpenaiCompatible),
        };
        let settings_overridden = match (saved_kind, &provider) {
            (Some(saved), Some(p)) => {
                p.value != saved || matches!(p.source, Source::Environment | Source::EnvFile)
            }
            _ => false,
        };
        let mut variables: Vec<String> = keiri_llm::config::ENV_VARS
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

/// The status of a configuration that could not be read: not configured, with the error as
/// its problem (keiri-llm's code when the error carries one).
fn problem_status(e: ApiError) -> keiri_llm::StatusResponse {
    let code = e
        .details
        .as_ref()
        .and_then(|d| d.get("code"))
        .and_then(|c| c.as_str())
        .map_or_else(|| e.code.as_str().to_string(), str::to_string);
    keiri_llm::StatusResponse {
        configured: false,
        provider: None,
        model: keiri_llm::DEFAULT_MODEL.to_string(),
        base_url: None,
        deployment: None,
        api_version: None,
        api_key_set: false,
        problem: Some(keiri_llm::StatusProblem {
            code,
            message: e.message,
        }),
    }
}

/// keiri-search's embedding variables (see `EmbedConfig::from_env`).
const EMBED_VARS: &[&str] = &[
    "KEIRI_EMBEDDER",
    "KEIRI_EMBED_MODEL",
    "KEIRI_EMBED_BASE_URL",
    "AZURE_OPENAI_EMBED_DEPLOYMENT",
];

/// What is in effect for `ctx` and where each part came from; a configuration that cannot be
/// read is reported as its problem.
pub fn effective_settings(ctx: &Context) -> EffectiveSettings {
    match Layers::read(ctx) {
        Ok(layers) => layers.effective(),
        Err(e) => {
            let status = problem_status(e);
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
}

/// The environment the LLM (and embedding) configuration is resolved from: the process
/// environment, then `<workspace>/.env`, then the saved settings with the stored key (this
/// session's, else the keychain's).
///
/// Errors: a malformed `.env` (`INVALID_REQUEST`, details `{code}` from keiri-llm), an
/// unreadable settings file, or `KEYCHAIN_UNAVAILABLE` when the saved provider needs its key,
/// the keychain cannot give it and nothing else configures a model. A keychain that cannot be
/// read is no error for a configuration that needs no key from it.
pub fn llm_env(ctx: &Context) -> Result<keiri_llm::Env, ApiError> {
    Layers::read(ctx)?.env()
}

/// The workspace folder of the saved settings in `config_dir`, if one was saved and still
/// exists (the desktop shell opens it when `KEIRI_WORKSPACE` is not set).
pub fn saved_workspace(config_dir: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(config_dir.join(SETTINGS_FILE)).ok()?;
    let settings: Settings = serde_json::from_str(&text).ok()?;
    settings.workspace.filter(|w| w.is_dir())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Mutex;

    use serde_json::{Value, json};

    use super::*;

    const KEY: &str = "sk-test-SECRET-0123456789";

    #[derive(Default)]
    struct MemorySecrets(Mutex<HashMap<String, String>>);

    impl fmt::Debug for MemorySecrets {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("MemorySecrets")
        }
    }

    impl SecretStore for MemorySecrets {
        fn get(&self, account: &str) -> Result<Option<String>, SecretError> {
            Ok(self.0.lock().unwrap().get(account).cloned())
        }
        fn set(&self, account: &str, secret: &str) -> Result<(), SecretError> {
            self.0.lock().unwrap().insert(account.into(), secret.into());
            Ok(())
        }
        fn delete(&self, account: &str) -> Result<(), SecretError> {
            self.0.lock().unwrap().remove(account);
            Ok(())
        }
    }

    struct Fixture {
        dir: tempfile::TempDir,
        ctx: Context,
        secrets: Arc<MemorySecrets>,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let secrets = Arc::new(MemorySecrets::default());
        let ctx = Context::new(dir.path())
            .with_config_dir(dir.path().join("config"))
            .with_secrets(secrets.clone());
        Fixture { dir, ctx, secrets }
    }

    fn save(ctx: &Context, body: Value) -> Result<Value, ApiError> {
        crate::stream::testing::call(ctx, "settings_save", body)
    }

    fn settings_file(f: &Fixture) -> String {
        std::fs::read_to_string(f.dir.path().join("config").join(SETTINGS_FILE)).unwrap()
    }

    #[test]
    fn the_network_allowlist_is_saved_cleaned_and_reaches_a_run() {
        let f = fixture();
        // A local server that answers every request with 200 and a small JSON body.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                use std::io::{Read, Write};
                let mut stream = stream;
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf);
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\nconnection: close\r\n\r\n{\"ok\":true}");
            }
        });
        let plan = format!(
            "id: net\ngraph:\n  - {{id: call, block: http.request, in: {{method: GET, url: \"http://127.0.0.1:{port}/status\"}}, out: {{status: status}}}}\n"
        );
        let run =
            || crate::stream::testing::call(&f.ctx, "plan_run", json!({"yaml": plan})).unwrap();
        // Nothing allowed yet: the request never leaves.
        let refused = run();
        assert_eq!(refused["status"], "failed", "{refused:#}");
        assert_eq!(refused["failures"][0]["code"], "HOST_NOT_ALLOWED");

        // The host without the server's port: only ports 80 and 443 of it, so still refused.
        save(
            &f.ctx,
            json!({"provider": "none", "allow_hosts": ["127.0.0.1"]}),
        )
        .unwrap();
        assert_eq!(run()["failures"][0]["code"], "HOST_NOT_ALLOWED");

        let local = format!("127.0.0.1:{port}");
        let saved = save(
            &f.ctx,
            json!({"provider": "none", "allow_hosts": [format!(" {local} "), "", "*.Slack.com", local]}),
        )
        .unwrap();
        assert_eq!(saved["allow_hosts"], json!([local, "*.slack.com"]));
        let allowed = run();
        assert_eq!(allowed["status"], "finished", "{allowed:#}");

        for bad in [
            "ftp://hooks.slack.com",
            "a b",
            "*.",
            "example.com/x",
            "host:http",
            "com",
            "*.com",
            "169.254.169.254",
            "[fe80::1]",
        ] {
            let err = save(&f.ctx, json!({"provider": "none", "allow_hosts": [bad]})).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidRequest, "{bad}");
            assert_eq!(err.details.as_ref().unwrap()["field"], "allow_hosts");
        }
        // A refused save changes nothing.
        let got = crate::stream::testing::call(&f.ctx, "settings_get", json!({})).unwrap();
        assert_eq!(got["allow_hosts"], json!([local, "*.slack.com"]));
    }

    #[test]
    fn the_key_goes_to_the_keychain_and_never_to_the_file_or_the_response() {
        let f = fixture();
        let saved = save(
            &f.ctx,
            json!({"provider": "openai", "model": "gpt-4.1-mini", "embedding": "bm25-only",
                   "lang": "en", "api_key": KEY}),
        )
        .unwrap();
        assert_eq!(saved["api_key_set"], json!(true));
        assert_eq!(saved["provider"], json!("openai"));
        assert_eq!(saved["embedding"], json!("bm25-only"));
        assert_eq!(saved["lang"], json!("en"));
        assert!(!saved.to_string().contains(KEY));
        assert_eq!(
            f.secrets.get("openai-api-key").unwrap().as_deref(),
            Some(KEY)
        );
        let file = settings_file(&f);
        assert!(!file.contains(KEY), "{file}");
        assert!(file.contains("gpt-4.1-mini"), "{file}");

        let got = crate::stream::testing::call(&f.ctx, "settings_get", json!({})).unwrap();
        assert_eq!(got["api_key_set"], json!(true));
        assert_eq!(got["model"], json!("gpt-4.1-mini"));
        assert!(!got.to_string().contains(KEY));
    }

    #[test]
    fn saving_without_a_key_keeps_it_and_an_empty_key_deletes_it() {
        let f = fixture();
        save(&f.ctx, json!({"provider": "openai", "api_key": KEY})).unwrap();
        let kept = save(&f.ctx, json!({"provider": "openai", "model": "m"})).unwrap();
        assert_eq!(kept["api_key_set"], json!(true));
        let deleted = save(&f.ctx, json!({"provider": "openai", "api_key": ""})).unwrap();
        assert_eq!(deleted["api_key_set"], json!(false));
        assert!(f.secrets.get("openai-api-key").unwrap().is_none());
    }

    #[test]
    fn nothing_saved_gives_the_defaults_without_asking_the_keychain() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Context::new(dir.path())
            .with_config_dir(dir.path().join("config"))
            .with_secrets(Arc::new(NoKeychain));
        let got = crate::stream::testing::call(&ctx, "settings_get", json!({})).unwrap();
        assert_eq!(got["provider"], json!("none"));
        assert_eq!(got["lang"], json!("ja"));
        assert_eq!(got["api_key_set"], json!(false));
        assert!(llm_env(&ctx).is_ok());
    }

    #[test]
    fn an_unavailable_keychain_is_a_typed_error_and_nothing_is_saved() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Context::new(dir.path())
            .with_config_dir(dir.path().join("config"))
            .with_secrets(Arc::new(NoKeychain));
        let err = save(&ctx, json!({"provider": "openai", "api_key": KEY})).unwrap_err();
        assert_eq!(err.code, ErrorCode::KeychainUnavailable);
        assert_eq!(err.code.as_str(), "KEYCHAIN_UNAVAILABLE");
        assert!(!err.message.contains(KEY));
        // No plain-text fallback: not even the non-secret settings were written.
        assert!(!dir.path().join("config").join(SETTINGS_FILE).exists());

        // Settings without a key still save; reading them reports the keychain's state.
        let saved = save(&ctx, json!({"provider": "openai"})).unwrap();
        assert_eq!(saved["keychain_available"], json!(false));
        assert_eq!(saved["api_key_set"], json!(false));
        // A saved provider whose key cannot be read: the LLM configuration says why.
        assert_eq!(
            llm_env(&ctx).unwrap_err().code,
            ErrorCode::KeychainUnavailable
        );
        let status = crate::llm_status(&ctx, Default::default()).unwrap();
        assert!(!status.configured);
        assert_eq!(status.problem.unwrap().code, "KEYCHAIN_UNAVAILABLE");
    }

    /// A context on a fresh workspace with no keychain at all (this session's keys only).
    fn without_keychain() -> (tempfile::TempDir, Context) {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Context::new(dir.path())
            .with_config_dir(dir.path().join("config"))
            .with_secrets(Arc::new(WithSession::new(NoKeychain)));
        (dir, ctx)
    }

    /// Whether the test process's own environment configures a model or embeddings (it wins
    /// over everything a test saves, so such a test has nothing to check).
    fn process_configures_llm() -> bool {
        let process = keiri_llm::Env::process();
        keiri_llm::config::ENV_VARS
            .iter()
            .chain(EMBED_VARS)
            .any(|v| process.get(v).is_some())
    }

    fn files_under(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.extend(files_under(&path));
            } else {
                out.push(path);
            }
        }
        out
    }

    #[test]
    fn without_a_keychain_a_key_kept_for_the_session_serves_the_model_calls() {
        if process_configures_llm() {
            return;
        }
        let (url, server) = keiri_llm::testkit::FakeServer::start_background(vec![
            keiri_llm::testkit::Reply::content("OK"),
        ])
        .unwrap();
        let (dir, ctx) = without_keychain();
        let body = json!({"provider": "compatible", "base_url": url, "api_key": KEY});
        // The keychain is refused, and the error says a session key is possible.
        let err = save(&ctx, body.clone()).unwrap_err();
        assert_eq!(err.code, ErrorCode::KeychainUnavailable);
        assert_eq!(err.details.unwrap()["session_available"], json!(true));
        assert!(!dir.path().join("config").join(SETTINGS_FILE).exists());

        let mut session = body;
        session["key_storage"] = json!("session");
        let saved = save(&ctx, session).unwrap();
        assert_eq!(saved["api_key_set"], json!(true), "{saved:#}");
        assert_eq!(saved["api_key_storage"], json!("session"));
        assert_eq!(saved["keychain_available"], json!(false));
        assert_eq!(saved["effective"]["api_key"], json!("session"));
        assert!(!saved.to_string().contains(KEY));
        for file in files_under(dir.path()) {
            let bytes = std::fs::read(&file).unwrap();
            assert!(
                !String::from_utf8_lossy(&bytes).contains(KEY),
                "{} holds the key",
                file.display()
            );
        }

        // Every model call of this process goes through llm_env: a clone of the context (as
        // `keiri serve` shares one) sends the key.
        let clone = ctx.clone();
        assert_eq!(llm_env(&clone).unwrap().get("KEIRI_LLM_API_KEY"), Some(KEY));
        let tested =
            crate::stream::testing::call(&clone, "llm_connection_test", json!({})).unwrap();
        assert_eq!(tested["ok"], json!(true), "{tested:#}");
        let auth = format!("Bearer {KEY}");
        assert_eq!(
            server.requests()[0].header("authorization"),
            Some(auth.as_str())
        );
        // Saving other settings keeps the session key; the next process has none.
        let kept = save(
            &ctx,
            json!({"provider": "compatible", "base_url": url, "model": "m2"}),
        )
        .unwrap();
        assert_eq!(kept["api_key_storage"], json!("session"));
        let (_other_dir, other) = without_keychain();
        let other = other.with_config_dir(dir.path().join("config"));
        let fresh = crate::stream::testing::call(&other, "settings_get", json!({})).unwrap();
        assert_eq!(fresh["api_key_set"], json!(false));
        // An empty key forgets it.
        let deleted = save(
            &ctx,
            json!({"provider": "compatible", "base_url": url, "api_key": ""}),
        )
        .unwrap();
        assert_eq!(deleted["api_key_set"], json!(false));
        assert_eq!(llm_env(&ctx).unwrap().get("KEIRI_LLM_API_KEY"), None);
    }

    #[test]
    fn a_server_that_needs_no_key_works_with_no_key_and_no_keychain() {
        if process_configures_llm() {
            return;
        }
        let (url, server) = keiri_llm::testkit::FakeServer::start_background(vec![
            keiri_llm::testkit::Reply::content("OK"),
        ])
        .unwrap();
        let (_dir, ctx) = without_keychain();
        let saved = save(
            &ctx,
            json!({"provider": "compatible", "base_url": url, "model": "local-model"}),
        )
        .unwrap();
        assert_eq!(saved["keychain_available"], json!(false));
        assert_eq!(saved["effective"]["configured"], json!(true), "{saved:#}");
        assert_eq!(saved["effective"]["api_key"], Value::Null);
        let env = llm_env(&ctx).unwrap();
        assert_eq!(env.get("KEIRI_LLM_BASE_URL"), Some(url.as_str()));
        let status = crate::llm_status(&ctx, Default::default()).unwrap();
        assert!(status.configured, "{status:?}");
        assert!(status.problem.is_none());
        let tested = crate::stream::testing::call(&ctx, "llm_connection_test", json!({})).unwrap();
        assert_eq!(tested["ok"], json!(true), "{tested:#}");
        let requests = server.requests();
        assert_eq!(requests[0].body["model"], json!("local-model"));
        // No key is sent (the client's empty bearer scheme at most).
        assert!(
            matches!(requests[0].header("authorization"), None | Some("Bearer")),
            "{:?}",
            requests[0].header("authorization")
        );
    }

    /// Layers from literal environments, saved settings and the stored key.
    fn layers(
        process: &[(&str, &str)],
        dotenv: &[(&str, &str)],
        settings: Settings,
        key: Option<KeyStorage>,
    ) -> Layers {
        let key = KeyLookup {
            key: key.map(|_| KEY.to_string()),
            storage: key,
            keychain_error: None,
        };
        Layers {
            process: keiri_llm::Env::from_pairs(process.iter().copied()),
            dotenv: keiri_llm::Env::from_pairs(dotenv.iter().copied()),
            saved: settings_vars(&settings, key.key.as_deref()),
            settings,
            key,
        }
    }

    fn openai(model: Option<&str>) -> Settings {
        Settings {
            provider: ProviderChoice::Openai,
            model: model.map(str::to_string),
            ..Settings::default()
        }
    }

    fn sourced<T>(value: T, source: Source) -> Option<Sourced<T>> {
        Some(Sourced { value, source })
    }

    #[test]
    fn the_effective_settings_say_where_each_value_came_from() {
        use keiri_llm::ProviderKind;
        // Nothing anywhere: not configured, the default model.
        let e = layers(&[], &[], Settings::default(), None).effective();
        assert!(!e.configured);
        assert_eq!(e.provider, None);
        assert_eq!(
            e.model,
            Sourced {
                value: "gpt-4.1".into(),
                source: Source::Default
            }
        );
        assert_eq!(e.problem.unwrap().code, "LLM_NOT_CONFIGURED");

        // A local server from the environment, nothing saved: the dialog must say so.
        let e = layers(
            &[("KEIRI_LLM_BASE_URL", "http://127.0.0.1:8080/v1")],
            &[],
            Settings::default(),
            None,
        )
        .effective();
        assert!(e.configured);
        assert_eq!(
            e.provider,
            sourced(ProviderKind::OpenaiCompatible, Source::Environment)
        );
        assert_eq!(
            e.base_url,
            sourced("http://127.0.0.1:8080/v1".to_string(), Source::Environment)
        );
        assert_eq!(e.api_key, None);
        assert!(!e.settings_overridden);
        assert_eq!(e.variables, vec!["KEIRI_LLM_BASE_URL".to_string()]);

        // OpenAI from the dialog, key in the keychain, model saved.
        let e = layers(
            &[],
            &[],
            openai(Some("gpt-4.1-mini")),
            Some(KeyStorage::Keychain),
        )
        .effective();
        assert_eq!(e.provider, sourced(ProviderKind::Openai, Source::Settings));
        assert_eq!(
            e.model,
            Sourced {
                value: "gpt-4.1-mini".into(),
                source: Source::Settings
            }
        );
        assert_eq!(
            e.base_url,
            sourced("https://api.openai.com/v1".to_string(), Source::Default)
        );
        assert_eq!(e.api_key, Some(Source::Settings));
        assert!(e.variables.is_empty());

        // The same, with the key kept for the session and the model from `.env`.
        let e = layers(
            &[],
            &[("KEIRI_LLM_MODEL", "gpt-5")],
            openai(Some("gpt-4.1-mini")),
            Some(KeyStorage::Session),
        )
        .effective();
        assert_eq!(e.api_key, Some(Source::Session));
        assert_eq!(
            e.model,
            Sourced {
                value: "gpt-5".into(),
                source: Source::EnvFile
            }
        );
        assert!(!e.settings_overridden);

        // `.env` names another server: it wins, and the saved provider is not in effect.
        let e = layers(
            &[],
            &[("KEIRI_LLM_BASE_URL", "http://gpu-box:8000/v1")],
            openai(None),
            Some(KeyStorage::Keychain),
        )
        .effective();
        assert_eq!(
            e.provider,
            sourced(ProviderKind::OpenaiCompatible, Source::EnvFile)
        );
        assert!(e.settings_overridden);
        // The OpenAI key is never sent to another host.
        assert_eq!(e.api_key, None);
    }

    #[test]
    fn embeddings_stay_local_with_an_openai_key_until_cloud_embeddings_are_chosen() {
        // The key alone: retrieval's embeddings stay on this machine.
        let e = layers(&[], &[], openai(None), Some(KeyStorage::Keychain)).effective();
        assert_eq!(
            e.embedding,
            Sourced {
                value: "auto".into(),
                source: Source::Default
            }
        );
        assert!(!e.cloud_embeddings);
        let chosen = Settings {
            embedding: Some(EmbeddingChoice::Openai),
            ..openai(None)
        };
        let e = layers(&[], &[], chosen, Some(KeyStorage::Keychain)).effective();
        assert!(e.cloud_embeddings);
        assert_eq!(e.embedding.source, Source::Settings);
        let e = layers(&[("KEIRI_EMBEDDER", "none")], &[], openai(None), None).effective();
        assert_eq!(e.embedding.value, "bm25-only");
        assert_eq!(e.embedding.source, Source::Environment);

        // And what retrieval actually chooses from the saved settings (keiri-search's
        // select_embedder reads this configuration).
        if process_configures_llm() {
            return;
        }
        let f = fixture();
        save(&f.ctx, json!({"provider": "openai", "api_key": KEY})).unwrap();
        let config = crate::retrieve::embed_config(&f.ctx, &mut Vec::new());
        assert_eq!(
            config.preference,
            keiri_search::embed::EmbedPreference::Auto
        );
        save(&f.ctx, json!({"provider": "openai", "embedding": "openai"})).unwrap();
        let config = crate::retrieve::embed_config(&f.ctx, &mut Vec::new());
        assert_eq!(
            config.preference,
            keiri_search::embed::EmbedPreference::OpenAi
        );
        assert!(
            matches!(&config.openai, Some(keiri_search::embed::OpenAiEndpoint::OpenAi { api_key, .. }) if api_key == KEY)
        );
    }

    #[test]
    fn a_saved_provider_from_env_file_shows_through_settings_get() {
        if process_configures_llm() {
            return;
        }
        let (dir, ctx) = without_keychain();
        keiri_fs::write_atomic(
            &dir.path().join(".env"),
            b"KEIRI_LLM_BASE_URL=http://127.0.0.1:9/v1\nKEIRI_LLM_MODEL=qwen\n",
        )
        .unwrap();
        let got = crate::stream::testing::call(&ctx, "settings_get", json!({})).unwrap();
        assert_eq!(got["provider"], json!("none"));
        let effective = &got["effective"];
        assert_eq!(
            effective["provider"],
            json!({"value": "openai_compatible", "source": "env_file"})
        );
        assert_eq!(
            effective["model"],
            json!({"value": "qwen", "source": "env_file"})
        );
        assert_eq!(
            effective["base_url"],
            json!({"value": "http://127.0.0.1:9/v1", "source": "env_file"})
        );
        assert_eq!(
            effective["variables"],
            json!(["KEIRI_LLM_BASE_URL", "KEIRI_LLM_MODEL"])
        );
    }

    #[test]
    fn the_key_is_not_in_debug_output_or_error_messages() {
        let f = fixture();
        let req: SettingsSaveRequest =
            serde_json::from_value(json!({"provider": "openai", "api_key": KEY})).unwrap();
        assert!(!format!("{req:?}").contains(KEY));
        let bad = format!("{KEY} with a space");
        let err = save(&f.ctx, json!({"provider": "openai", "api_key": bad})).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidRequest);
        assert!(!err.message.contains(KEY), "{}", err.message);
        save(&f.ctx, json!({"provider": "openai", "api_key": KEY})).unwrap();
        let env = llm_env(&f.ctx).unwrap();
        assert!(!format!("{env:?}").contains(KEY));
        assert!(!format!("{:?}", f.ctx).contains(KEY));
    }

    // check(request, field the error names)
    fn check_invalid(body: Value, field: &str) {
        let f = fixture();
        let err = save(&f.ctx, body.clone()).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidRequest, "{body}");
        assert_eq!(err.details.unwrap()["field"], json!(field), "{body}");
        assert!(!f.dir.path().join("config").join(SETTINGS_FILE).exists());
    }

    #[test]
    fn settings_are_checked_before_anything_is_saved() {
        check_invalid(json!({"provider": "compatible"}), "base_url");
        check_invalid(
            json!({"provider": "compatible", "base_url": "ftp://x"}),
            "base_url",
        );
        check_invalid(
            json!({"provider": "azure", "azure_deployment": "d"}),
            "azure_endpoint",
        );
        check_invalid(
            json!({"provider": "azure", "azure_endpoint": "https://r.openai.azure.com"}),
            "azure_deployment",
        );
        check_invalid(json!({"provider": "none", "api_key": KEY}), "api_key");
        check_invalid(
            json!({"provider": "none", "workspace": "relative/dir"}),
            "workspace",
        );
        let f = fixture();
        let err = save(&f.ctx, json!({"provider": "gemini"})).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidRequest);
    }

    #[test]
    fn the_root_the_home_folder_and_system_folders_are_refused_as_workspace() {
        let f = fixture();
        let home = f.dir.path().join("home");
        std::fs::create_dir_all(home.join("project")).unwrap();
        for dir in [
            "/",
            "/etc",
            "/usr/share",
            "/proc",
            "/dev",
            "/sys",
            "/var",
            "/tmp",
            "/tmp/",
            "/root",
            "/home",
            "/var/tmp",
        ] {
            assert!(
                forbidden_workspace(Path::new(dir), Some(home.as_path())).is_some(),
                "{dir}"
            );
        }
        assert!(forbidden_workspace(&home, Some(home.as_path())).is_some());
        assert!(forbidden_workspace(&home.join("project"), Some(home.as_path())).is_none());
        // A project folder inside a shared folder is fine (the test workspaces live in one).
        assert!(forbidden_workspace(Path::new("/tmp/book-closing"), None).is_none());
        assert!(forbidden_workspace(Path::new("/home/sato/keiri"), None).is_none());
        assert!(forbidden_workspace(f.dir.path(), None).is_none());
        assert!(forbidden_workspace(Path::new("C:\\windows"), None).is_some());
        for dir in ["/", "/etc", "/usr", "/var", "/tmp", "/root"] {
            let err = save(&f.ctx, json!({"provider": "none", "workspace": dir})).unwrap_err();
            assert_eq!(err.code, ErrorCode::WorkspaceNotAllowed, "{dir}");
            assert_eq!(err.details.unwrap()["field"], json!("workspace"));
            assert!(!f.dir.path().join("config").join(SETTINGS_FILE).exists());
        }
    }

    #[test]
    fn the_process_beats_dotenv_which_beats_the_saved_settings() {
        let env = |pairs: &[(&str, &str)]| keiri_llm::Env::from_pairs(pairs.iter().copied());
        let layered = layer_env(
            env(&[
                ("KEIRI_LLM_MODEL", "saved"),
                ("KEIRI_LLM_BASE_URL", "http://saved"),
                ("KEIRI_EMBEDDER", "local"),
            ]),
            env(&[
                ("KEIRI_LLM_MODEL", "dotenv"),
                ("KEIRI_LLM_BASE_URL", "http://dotenv"),
            ]),
            env(&[("KEIRI_LLM_MODEL", "process")]),
        );
        assert_eq!(layered.get("KEIRI_LLM_MODEL"), Some("process"));
        assert_eq!(layered.get("KEIRI_LLM_BASE_URL"), Some("http://dotenv"));
        assert_eq!(layered.get("KEIRI_EMBEDDER"), Some("local"));
    }

    #[test]
    fn llm_env_reads_the_workspace_dotenv_over_the_saved_settings() {
        let f = fixture();
        save(
            &f.ctx,
            json!({"provider": "compatible", "base_url": "http://127.0.0.1:9/v1",
                   "model": "saved-model", "api_key": KEY}),
        )
        .unwrap();
        keiri_fs::write_atomic(
            &f.dir.path().join(".env"),
            b"KEIRI_LLM_MODEL=dotenv-model\n",
        )
        .unwrap();
        let env = llm_env(&f.ctx).unwrap();
        let process = keiri_llm::Env::process();
        let expect = |name: &str, value: &str| {
            // A variable the test process itself sets wins, as it should.
            let want = process.get(name).unwrap_or(value).to_string();
            assert_eq!(env.get(name).map(str::to_string), Some(want), "{name}");
        };
        expect("KEIRI_LLM_MODEL", "dotenv-model");
        expect("KEIRI_LLM_BASE_URL", "http://127.0.0.1:9/v1");
        expect("KEIRI_LLM_API_KEY", KEY);
    }

    #[test]
    fn saved_settings_configure_llm_status_and_the_embedder() {
        let f = fixture();
        save(
            &f.ctx,
            json!({"provider": "azure", "azure_endpoint": "https://r.openai.azure.com",
                   "azure_deployment": "gpt4", "embedding": "bm25-only", "api_key": KEY}),
        )
        .unwrap();
        let vars = settings_vars(
            &load_settings(&f.ctx).unwrap(),
            f.secrets.get("azure-openai-api-key").unwrap().as_deref(),
        );
        assert_eq!(vars.get("AZURE_OPENAI_API_KEY"), Some(KEY));
        assert_eq!(vars.get("AZURE_OPENAI_DEPLOYMENT"), Some("gpt4"));
        assert_eq!(vars.get("KEIRI_EMBEDDER"), Some("none"));
        let process = keiri_llm::Env::process();
        let env_configures_llm = [
            "KEIRI_LLM_BASE_URL",
            "AZURE_OPENAI_API_KEY",
            "AZURE_OPENAI_ENDPOINT",
            "OPENAI_API_KEY",
        ]
        .iter()
        .any(|v| process.get(v).is_some());
        if !env_configures_llm {
            let status = crate::llm_status(&f.ctx, Default::default()).unwrap();
            assert!(status.configured, "{status:?}");
            assert_eq!(status.provider, Some(keiri_llm::ProviderKind::Azure));
            assert_eq!(status.deployment.as_deref(), Some("gpt4"));
            assert!(status.api_key_set);
        }
    }
}
