//! The studio's settings: which LLM provider and model, where embeddings come from, the UI
//! language and the workspace — and the provider's API key, which lives in the OS keychain.
//!
//! Non-secret settings are one JSON file, `settings.json`, in the app's config directory
//! (`KEIRI_CONFIG_DIR`, else the platform's user config directory + `keiri-studio`: e.g.
//! `~/.config/keiri-studio` on Linux), written atomically. The API key goes to a
//! [`SecretStore`]: the OS keychain ([`Keychain`]: macOS Keychain, Windows Credential Manager,
//! the Secret Service on Linux) unless a test injects its own. A keychain that cannot be
//! reached is the error `KEYCHAIN_UNAVAILABLE`; the key is then not saved anywhere — there is
//! no plain-text fallback. The key is never returned ([`SettingsGetResponse`] only says
//! whether one is set), never written to the settings file and never put in a message.
//!
//! The LLM configuration ([`llm_env`]) layers, highest first: the process environment, then
//! `<workspace>/.env`, then these saved settings with the keychain's key — so a variable set
//! by the user or CI always beats what the dialog saved.
//!
//! Dependency: `keyring` 4 (default `v1` feature: one platform store chosen for us, the
//! Secret Service over pure-Rust zbus on Linux, so no libdbus at build time).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::{ApiError, Context, ErrorCode, Lang};

/// Overrides the config directory (tests, portable installs).
pub const CONFIG_DIR_ENV: &str = "KEIRI_CONFIG_DIR";
/// The settings file inside the config directory.
pub const SETTINGS_FILE: &str = "settings.json";
/// The keychain service the API keys are filed under (the app's identifier).
pub const KEYCHAIN_SERVICE: &str = "dev.keiri.studio";
/// The largest settings file read; anything bigger is not ours.
const MAX_SETTINGS_BYTES: u64 = 64 * 1024;

/// The LLM provider the settings select.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
}

/// Checks the allowlist: each entry a host name, an IP address or `*.` and a domain — no
/// scheme, port, path or spaces (`https://a.example.com/x` is refused, not guessed at).
fn allow_hosts(raw: &[String]) -> Result<Vec<String>, ApiError> {
    let mut hosts: Vec<String> = Vec::new();
    for entry in raw {
        let host = entry.trim().to_ascii_lowercase();
        if host.is_empty() {
            continue;
        }
        let name = host.strip_prefix("*.").unwrap_or(&host);
        let ok = !name.is_empty()
            && !name.starts_with('.')
            && !name.ends_with('.')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
        if !ok {
            return Err(ApiError::new(
                ErrorCode::InvalidRequest,
                format!("allow_hosts: {entry:?} is not a host name (write api.example.com, 127.0.0.1 or *.example.com)"),
            )
            .with_details(serde_json::json!({"field": "allow_hosts", "value": entry})));
        }
        if !hosts.contains(&host) {
            hosts.push(host);
        }
    }
    Ok(hosts)
}

/// Request of `settings_get` (no fields).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingsGetRequest {}

/// The saved settings, whether a key is stored, and where the file is. Never the key.
#[derive(Debug, Clone, Serialize)]
pub struct SettingsGetResponse {
    #[serde(flatten)]
    pub settings: Settings,
    /// The selected provider has a key in the keychain.
    pub api_key_set: bool,
    /// The keychain could be asked (false: no key can be saved on this machine right now).
    pub keychain_available: bool,
    /// The settings file (it may not exist yet).
    pub path: PathBuf,
}

/// Request of `settings_save`: the settings, and optionally a new API key.
#[derive(Deserialize)]
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
    /// Absent or null: keep the stored key. Empty: delete it. Otherwise: store it in the
    /// keychain for `provider`.
    #[serde(default)]
    pub api_key: Option<String>,
}

impl fmt::Debug for SettingsSaveRequest {
    // The key must not reach a log through `{:?}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SettingsSaveRequest")
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
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

/// The shared OS keychain handle a [`Context`] starts with.
pub(crate) fn default_secret_store() -> Arc<dyn SecretStore> {
    Arc::new(Keychain)
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

/// `settings_get`: the saved settings and whether the selected provider has a key.
pub fn settings_get(
    ctx: &Context,
    _req: SettingsGetRequest,
) -> Result<SettingsGetResponse, ApiError> {
    let path = settings_path(ctx)?;
    let settings = load_settings(ctx)?;
    let (api_key_set, keychain_available) = match settings.provider.account() {
        None => (false, true),
        Some(account) => match ctx.secrets.get(account) {
            Ok(key) => (key.is_some(), true),
            Err(SecretError::Unavailable(_)) => (false, false),
            Err(e) => return Err(e.into()),
        },
    };
    Ok(SettingsGetResponse {
        settings,
        api_key_set,
        keychain_available,
        path,
    })
}

/// `settings_save`: checks and saves the settings; stores, keeps or deletes the key.
///
/// The key is written first: when the keychain is unavailable nothing is saved at all, so the
/// dialog never shows "saved" for a key that is not.
pub fn settings_save(
    ctx: &Context,
    req: SettingsSaveRequest,
) -> Result<SettingsGetResponse, ApiError> {
    let settings = checked_settings(&req)?;
    let path = settings_path(ctx)?;
    if let Some(key) = req.api_key.as_deref() {
        let account = settings
            .provider
            .account()
            .ok_or_else(|| invalid("api_key", "choose a provider before entering an API key"))?;
        let key = key.trim();
        if key.is_empty() {
            ctx.secrets.delete(account)?;
        } else if !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(invalid(
                "api_key",
                "the key may contain only visible ASCII characters (no spaces)",
            ));
        } else {
            ctx.secrets.set(account, key)?;
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
        {
            return Some("a system folder");
        }
    }
    None
}

/// The variables the saved settings stand for, with the key from `secrets`.
///
/// The key is only read from the keychain when a provider is selected, so a machine that
/// never saved settings never touches its keychain.
pub fn settings_vars(
    settings: &Settings,
    secrets: &dyn SecretStore,
) -> Result<keiri_llm::Env, ApiError> {
    let mut env = keiri_llm::Env::default();
    let key = match settings.provider.account() {
        Some(account) => secrets.get(account)?,
        None => None,
    };
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
    Ok(env)
}

/// `process` over `dotenv` over `saved`: the precedence of [`llm_env`], as a pure function.
pub fn layer_env(
    saved: keiri_llm::Env,
    dotenv: keiri_llm::Env,
    process: keiri_llm::Env,
) -> keiri_llm::Env {
    saved.overlay(dotenv).overlay(process)
}

/// The environment the LLM (and embedding) configuration is resolved from: the process
/// environment, then `<workspace>/.env`, then the saved settings with the keychain's key.
///
/// Errors: a malformed `.env` (`INVALID_REQUEST`, details `{code}` from keiri-llm), an
/// unreadable settings file, or `KEYCHAIN_UNAVAILABLE` when a provider is saved but its key
/// cannot be read.
pub fn llm_env(ctx: &Context) -> Result<keiri_llm::Env, ApiError> {
    let dotenv = keiri_llm::Env::from_dotenv(&ctx.workspace).map_err(|e| {
        ApiError::new(ErrorCode::InvalidRequest, e.to_string())
            .with_details(serde_json::json!({"code": e.code()}))
    })?;
    let saved = match ctx.config_dir {
        Some(_) => settings_vars(&load_settings(ctx)?, ctx.secrets.as_ref())?,
        None => keiri_llm::Env::default(),
    };
    Ok(layer_env(saved, dotenv, keiri_llm::Env::process()))
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

    /// A machine without a keychain (CI: no Secret Service on the session bus).
    #[derive(Debug)]
    struct NoKeychain;

    impl SecretStore for NoKeychain {
        fn get(&self, _: &str) -> Result<Option<String>, SecretError> {
            Err(SecretError::Unavailable("no secret service".into()))
        }
        fn set(&self, _: &str, _: &str) -> Result<(), SecretError> {
            Err(SecretError::Unavailable("no secret service".into()))
        }
        fn delete(&self, _: &str) -> Result<(), SecretError> {
            Err(SecretError::Unavailable("no secret service".into()))
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
        crate::dispatch(ctx, "settings_save", body)
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
        let run = || crate::dispatch(&f.ctx, "plan_run", json!({"yaml": plan})).unwrap();
        // Nothing allowed yet: the request never leaves.
        let refused = run();
        assert_eq!(refused["status"], "failed", "{refused:#}");
        assert_eq!(refused["failures"][0]["code"], "HOST_NOT_ALLOWED");

        let saved = save(
            &f.ctx,
            json!({"provider": "none", "allow_hosts": [" 127.0.0.1 ", "", "*.Slack.com", "127.0.0.1"]}),
        )
        .unwrap();
        assert_eq!(saved["allow_hosts"], json!(["127.0.0.1", "*.slack.com"]));
        let allowed = run();
        assert_eq!(allowed["status"], "finished", "{allowed:#}");

        for bad in [
            "https://hooks.slack.com",
            "a b",
            "*.",
            "example.com/x",
            "host:443",
        ] {
            let err = save(&f.ctx, json!({"provider": "none", "allow_hosts": [bad]})).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidRequest, "{bad}");
            assert_eq!(err.details.as_ref().unwrap()["field"], "allow_hosts");
        }
        // A refused save changes nothing.
        let got = crate::dispatch(&f.ctx, "settings_get", json!({})).unwrap();
        assert_eq!(got["allow_hosts"], json!(["127.0.0.1", "*.slack.com"]));
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

        let got = crate::dispatch(&f.ctx, "settings_get", json!({})).unwrap();
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
        let got = crate::dispatch(&ctx, "settings_get", json!({})).unwrap();
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
        for dir in ["/", "/etc", "/usr/share", "/proc", "/dev", "/sys"] {
            assert!(
                forbidden_workspace(Path::new(dir), Some(home.as_path())).is_some(),
                "{dir}"
            );
        }
        assert!(forbidden_workspace(&home, Some(home.as_path())).is_some());
        assert!(forbidden_workspace(&home.join("project"), Some(home.as_path())).is_none());
        assert!(forbidden_workspace(Path::new("C:\\windows"), None).is_some());
        for dir in ["/", "/etc", "/usr"] {
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
        let vars = settings_vars(&load_settings(&f.ctx).unwrap(), f.secrets.as_ref()).unwrap();
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
