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
//! provider, model and URL are in effect and where each came from (keiri-llm's `effective`
//! decides; this module reads the layers).
//!
//! Embeddings stay on this machine unless cloud embeddings are chosen here (`embedding:
//! "openai" | "azure"`, i.e. `KEIRI_EMBEDDER`): an LLM key alone never sends text to an
//! embeddings endpoint (keiri-search's `select_embedder`). `KEIRI_EMBED_MODEL` only names the
//! cloud model once cloud embeddings are on.
//!
//! Dependency: `keyring` 4 (default `v1` feature: one platform store chosen for us, the
//! Secret Service over pure-Rust zbus on Linux, so no libdbus at build time).

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use keiri_llm::effective::Layers;

use crate::{ApiError, Context, ErrorCode, Lang};

/// The settings file inside the config directory.
pub const SETTINGS_FILE: &str = "settings.json";
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

    /// The provider this choice configures (`None`: none chosen).
    fn kind(self) -> Option<keiri_llm::ProviderKind> {
        match self {
            ProviderChoice::None => None,
            ProviderChoice::Openai => Some(keiri_llm::ProviderKind::Openai),
            ProviderChoice::Azure => Some(keiri_llm::ProviderKind::Azure),
            ProviderChoice::Compatible => Some(keiri_llm::ProviderKind::OpenaiCompatible),
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
    /// The ceiling of a plan run's bounds (`policy.limits`): a plan may ask for up to these,
    /// never more. Unset bounds keep the built-in ceiling ([`run_ceiling`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_limits: Option<keiri_plan::model::PolicyLimits>,
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

pub use keiri_llm::effective::{EMBED_VARS, EffectiveSettings, Source, Sourced, layer_env};

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
    /// Absent or null: keep the saved ceiling. The settings window always sends it (blank
    /// bounds are left out: the built-in ceiling).
    #[serde(default)]
    pub run_limits: Option<keiri_plan::model::PolicyLimits>,
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
    if req.run_limits.is_none() {
        settings.run_limits = load_settings(ctx).ok().and_then(|s| s.run_limits);
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
        run_limits: run_limits(req.run_limits)?,
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
        && let Some(what) = keiri_fs::unfit_root(dir, dirs::home_dir().as_deref())
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

/// The configuration's layers for `ctx` (the saved settings with the stored key among
/// them), and why the keychain could not be asked, if it could not.
fn read_layers(ctx: &Context) -> Result<(Layers, Option<SecretError>), ApiError> {
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
    let layers = Layers {
        process: keiri_llm::Env::process(),
        dotenv,
        saved: settings_vars(&settings, key.key.as_deref()),
        saved_provider: settings.provider.kind(),
        session_key: key.storage == Some(KeyStorage::Session),
    };
    Ok((layers, key.keychain_error))
}

/// The environment, or why the saved provider cannot be used: its key is in a keychain that
/// cannot be read and nothing else configures a model. A configuration that works without
/// that key (a server that needs none, a key from the environment) is used as is.
fn checked_env(
    layers: &Layers,
    keychain_error: Option<&SecretError>,
) -> Result<keiri_llm::Env, ApiError> {
    let env = layers.layered();
    if let Some(e) = keychain_error
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

/// The status of a configuration that could not be read: not configured, with the error as
/// its problem (keiri-llm's code when the error carries one).
pub(crate) fn problem_status(e: ApiError) -> keiri_llm::StatusResponse {
    let code = e
        .details
        .as_ref()
        .and_then(|d| d.get("code"))
        .and_then(|c| c.as_str())
        .map_or_else(|| e.code.as_str().to_string(), str::to_string);
    keiri_llm::StatusResponse::unconfigured(Some(keiri_llm::StatusProblem {
        code,
        message: e.message,
    }))
}

/// What is in effect for `ctx` and where each part came from; a configuration that cannot be
/// read is reported as its problem.
pub fn effective_settings(ctx: &Context) -> EffectiveSettings {
    match read_layers(ctx) {
        Ok((layers, keychain_error)) => {
            let status = match checked_env(&layers, keychain_error.as_ref()) {
                Ok(env) => keiri_llm::status(&env),
                Err(e) => problem_status(e),
            };
            layers.effective(status)
        }
        Err(e) => EffectiveSettings::unreadable(problem_status(e)),
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
    let (layers, keychain_error) = read_layers(ctx)?;
    checked_env(&layers, keychain_error.as_ref())
}

/// The workspace folder of the saved settings in `config_dir`, if one was saved and still
/// exists (the desktop shell opens it when `KEIRI_WORKSPACE` is not set).
pub fn saved_workspace(config_dir: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(config_dir.join(SETTINGS_FILE)).ok()?;
    let settings: Settings = serde_json::from_str(&text).ok()?;
    settings.workspace.filter(|w| w.is_dir())
}

mod runs;
mod secrets;

pub use runs::run_ceiling;
use runs::{allow_env, allow_hosts, run_limits};
pub(crate) use secrets::default_secret_store;
pub use secrets::{
    CONFIG_DIR_ENV, KEYCHAIN_ENV, KEYCHAIN_SERVICE, Keychain, NoKeychain, SecretError, SecretStore,
    SessionKeys, WithSession, default_config_dir,
};

/// Tests of private details (the rest of the module's tests are in `tests/api/settings.rs`).
#[cfg(test)]
mod tests;
