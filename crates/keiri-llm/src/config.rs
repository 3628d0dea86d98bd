//! Provider configuration from environment variables (the process environment over the
//! workspace's `.env`), and the status the UI shows.
//!
//! Resolution reads an [`Env`] value, never the process environment directly, so tests pass
//! their own map and nothing here mutates global state.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::redact::{Redactor, redact_url};
use crate::retry::RetryPolicy;

/// The model used when `KEIRI_LLM_MODEL` is not set.
pub const DEFAULT_MODEL: &str = "gpt-4.1";
/// The Azure OpenAI API version used when `AZURE_OPENAI_API_VERSION` is not set: the first GA
/// version with strict structured outputs.
pub const DEFAULT_AZURE_API_VERSION: &str = "2024-10-21";
/// OpenAI's API base.
pub const OPENAI_API_BASE: &str = "https://api.openai.com/v1";
/// Per-attempt timeout when `KEIRI_LLM_TIMEOUT_SECS` is not set. Plans are long outputs; two
/// minutes covers a slow model without hanging a session for ever.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The largest `.env` read; anything bigger is not a configuration file.
pub const MAX_ENV_FILE_BYTES: u64 = 1024 * 1024;

/// Every variable this crate reads, for help texts and tests.
pub const ENV_VARS: &[&str] = &[
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_OPENAI_DEPLOYMENT",
    "AZURE_OPENAI_API_VERSION",
    "KEIRI_LLM_BASE_URL",
    "KEIRI_LLM_API_KEY",
    "KEIRI_LLM_MODEL",
    "KEIRI_LLM_TIMEOUT_SECS",
    "KEIRI_LLM_MAX_RETRIES",
];

/// Environment variables by name: what configuration is resolved from.
///
/// [`Env::load`] layers the process environment over `<workspace>/.env` (the process wins, as
/// with dotenv tools), without writing either. Empty values count as unset.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Env {
    vars: BTreeMap<String, String>,
}

impl fmt::Debug for Env {
    // Values may be keys: only names are shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Env")
            .field("names", &self.vars.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Env {
    /// An environment from name/value pairs (tests, or a front-end's own settings).
    pub fn from_pairs<I, K, V>(pairs: I) -> Env
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        Env {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// The process environment, skipping variables that are not valid UTF-8.
    pub fn process() -> Env {
        Env {
            vars: std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect(),
        }
    }

    /// The variables of `<workspace>/.env`; empty when there is no such file.
    pub fn from_dotenv(workspace: &Path) -> Result<Env, Error> {
        let path = workspace.join(".env");
        match std::fs::metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Env::default()),
            Err(source) => return Err(Error::EnvFileRead { path, source }),
            Ok(meta) if meta.len() > MAX_ENV_FILE_BYTES => {
                return Err(Error::EnvFileRead {
                    path,
                    source: std::io::Error::other(format!(
                        "the file is over {MAX_ENV_FILE_BYTES} bytes"
                    )),
                });
            }
            Ok(_) => {}
        }
        let text = std::fs::read_to_string(&path).map_err(|source| Error::EnvFileRead {
            path: path.clone(),
            source,
        })?;
        Env::parse_dotenv(&text, &path)
    }

    /// Parses `.env` text (`path` is only used in errors).
    pub fn parse_dotenv(text: &str, path: &Path) -> Result<Env, Error> {
        let mut vars = BTreeMap::new();
        for item in dotenvy::from_read_iter(text.as_bytes()) {
            match item {
                Ok((k, v)) => {
                    vars.insert(k, v);
                }
                Err(e) => {
                    return Err(Error::EnvFileSyntax {
                        path: path.to_path_buf(),
                        line: syntax_error_line(&e, text),
                    });
                }
            }
        }
        Ok(Env { vars })
    }

    /// The process environment over `<workspace>/.env`.
    pub fn load(workspace: &Path) -> Result<Env, Error> {
        Ok(Env::from_dotenv(workspace)?.overlay(Env::process()))
    }

    /// `self` with every variable of `top` set on it (`top` wins).
    pub fn overlay(mut self, top: Env) -> Env {
        self.vars.extend(top.vars);
        self
    }

    /// `self` with one more variable.
    pub fn with(mut self, name: impl Into<String>, value: impl Into<String>) -> Env {
        self.vars.insert(name.into(), value.into());
        self
    }

    /// A variable's value, trimmed; `None` when unset or blank.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
    }

    /// Every variable, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

/// dotenvy reports the offending line's text (which may contain a key); we report only its
/// number, found by matching the text against the file.
fn syntax_error_line(err: &dotenvy::Error, text: &str) -> Option<usize> {
    match err {
        dotenvy::Error::LineParse(line, _) => text
            .lines()
            .position(|l| l == line || l.trim() == line.trim())
            .map(|i| i + 1),
        _ => None,
    }
}

/// Which kind of provider a configuration talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// api.openai.com (or `OPENAI_BASE_URL`).
    Openai,
    /// Azure OpenAI: a deployment on an Azure resource.
    Azure,
    /// Any server speaking the OpenAI chat completions protocol (llama.cpp, Ollama, vLLM, …).
    OpenaiCompatible,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Openai => "openai",
            ProviderKind::Azure => "azure",
            ProviderKind::OpenaiCompatible => "openai_compatible",
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ProviderKind::Openai => "OpenAI",
            ProviderKind::Azure => "Azure OpenAI",
            ProviderKind::OpenaiCompatible => "OpenAI-compatible",
        })
    }
}

/// An API key. It has no `Serialize`, and `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into())
    }

    /// The key itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// Where requests go and how they authenticate.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ProviderConfig {
    /// OpenAI: `Authorization: Bearer <key>` to `<base_url>/chat/completions`.
    Openai { api_key: ApiKey, base_url: String },
    /// Azure OpenAI: `api-key: <key>` to
    /// `<endpoint>/openai/deployments/<deployment>/chat/completions?api-version=<v>`.
    Azure {
        api_key: ApiKey,
        endpoint: String,
        deployment: String,
        api_version: String,
    },
    /// An OpenAI-compatible server at `<base_url>/chat/completions`, with an optional key.
    OpenaiCompatible {
        base_url: String,
        api_key: Option<ApiKey>,
    },
}

impl ProviderConfig {
    pub fn kind(&self) -> ProviderKind {
        match self {
            ProviderConfig::Openai { .. } => ProviderKind::Openai,
            ProviderConfig::Azure { .. } => ProviderKind::Azure,
            ProviderConfig::OpenaiCompatible { .. } => ProviderKind::OpenaiCompatible,
        }
    }

    /// The base URL without user info, query or fragment (safe to show and log).
    pub fn display_url(&self) -> String {
        match self {
            ProviderConfig::Openai { base_url, .. }
            | ProviderConfig::OpenaiCompatible { base_url, .. } => redact_url(base_url),
            ProviderConfig::Azure { endpoint, .. } => redact_url(endpoint),
        }
    }

    /// The key, if any.
    pub fn api_key(&self) -> Option<&ApiKey> {
        match self {
            ProviderConfig::Openai { api_key, .. } | ProviderConfig::Azure { api_key, .. } => {
                Some(api_key)
            }
            ProviderConfig::OpenaiCompatible { api_key, .. } => api_key.as_ref(),
        }
    }

    /// Everything that must never be written anywhere: the key, and any password in the URL.
    pub fn secrets(&self) -> Vec<String> {
        let mut out: Vec<String> = self.api_key().map(|k| k.0.clone()).into_iter().collect();
        let raw = match self {
            ProviderConfig::Openai { base_url, .. }
            | ProviderConfig::OpenaiCompatible { base_url, .. } => base_url,
            ProviderConfig::Azure { endpoint, .. } => endpoint,
        };
        if let Ok(url) = url::Url::parse(raw)
            && let Some(password) = url.password()
        {
            out.push(password.to_string());
        }
        out
    }
}

/// Everything needed to call a model.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmConfig {
    pub provider: ProviderConfig,
    /// The model (for Azure, the body's model is ignored: the deployment decides).
    pub model: String,
    /// Sampling temperature; 0 so that the same input gives the same plan as far as the
    /// provider allows.
    pub temperature: f32,
    /// Timeout of one HTTP attempt.
    pub timeout: Duration,
    pub retry: RetryPolicy,
}

impl LlmConfig {
    /// Resolves the provider from `env`.
    ///
    /// Precedence, most specific first: `KEIRI_LLM_BASE_URL` (an OpenAI-compatible server),
    /// then Azure (`AZURE_OPENAI_API_KEY` or `AZURE_OPENAI_ENDPOINT` set), then OpenAI
    /// (`OPENAI_API_KEY`). The compatible server's key is `KEIRI_LLM_API_KEY` only: the OpenAI
    /// key is never sent to another host.
    pub fn from_env(env: &Env) -> Result<LlmConfig, Error> {
        let provider = provider_from_env(env)?;
        let model = env
            .get("KEIRI_LLM_MODEL")
            .unwrap_or(DEFAULT_MODEL)
            .to_string();
        let timeout = match env.get("KEIRI_LLM_TIMEOUT_SECS") {
            None => DEFAULT_TIMEOUT,
            Some(v) => Duration::from_secs(parse_bounded("KEIRI_LLM_TIMEOUT_SECS", v, 1, 3600)?),
        };
        let mut retry = RetryPolicy::default();
        if let Some(v) = env.get("KEIRI_LLM_MAX_RETRIES") {
            retry.max_retries = parse_bounded("KEIRI_LLM_MAX_RETRIES", v, 0, 10)? as u32;
        }
        Ok(LlmConfig {
            provider,
            model,
            temperature: 0.0,
            timeout,
            retry,
        })
    }

    /// A configuration for `provider` with the defaults.
    pub fn new(provider: ProviderConfig) -> LlmConfig {
        LlmConfig {
            provider,
            model: DEFAULT_MODEL.to_string(),
            temperature: 0.0,
            timeout: DEFAULT_TIMEOUT,
            retry: RetryPolicy::default(),
        }
    }

    /// A redactor for this configuration's secrets.
    pub fn redactor(&self) -> Redactor {
        Redactor::new(self.provider.secrets())
    }

    /// What the UI shows: configured, provider, model, URL (no secrets).
    pub fn status(&self) -> StatusResponse {
        let (deployment, api_version) = match &self.provider {
            ProviderConfig::Azure {
                deployment,
                api_version,
                ..
            } => (Some(deployment.clone()), Some(api_version.clone())),
            _ => (None, None),
        };
        StatusResponse {
            configured: true,
            provider: Some(self.provider.kind()),
            model: self.model.clone(),
            base_url: Some(self.provider.display_url()),
            deployment,
            api_version,
            api_key_set: self.provider.api_key().is_some(),
            problem: None,
        }
    }
}

fn provider_from_env(env: &Env) -> Result<ProviderConfig, Error> {
    if let Some(base) = env.get("KEIRI_LLM_BASE_URL") {
        return Ok(ProviderConfig::OpenaiCompatible {
            base_url: checked_url("KEIRI_LLM_BASE_URL", base)?,
            api_key: env
                .get("KEIRI_LLM_API_KEY")
                .map(|k| checked_key("KEIRI_LLM_API_KEY", k))
                .transpose()?,
        });
    }
    if env.get("AZURE_OPENAI_API_KEY").is_some() || env.get("AZURE_OPENAI_ENDPOINT").is_some() {
        let missing: Vec<&'static str> = [
            "AZURE_OPENAI_API_KEY",
            "AZURE_OPENAI_ENDPOINT",
            "AZURE_OPENAI_DEPLOYMENT",
        ]
        .into_iter()
        .filter(|v| env.get(v).is_none())
        .collect();
        if !missing.is_empty() {
            return Err(Error::ConfigIncomplete {
                provider: ProviderKind::Azure,
                missing,
            });
        }
        let get = |name: &str| env.get(name).unwrap_or_default().to_string();
        let deployment = get("AZURE_OPENAI_DEPLOYMENT");
        if !deployment
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            return Err(Error::ConfigInvalid {
                var: "AZURE_OPENAI_DEPLOYMENT".into(),
                reason: "use only letters, digits, '-', '_' and '.'".into(),
            });
        }
        return Ok(ProviderConfig::Azure {
            api_key: checked_key("AZURE_OPENAI_API_KEY", &get("AZURE_OPENAI_API_KEY"))?,
            endpoint: checked_url("AZURE_OPENAI_ENDPOINT", &get("AZURE_OPENAI_ENDPOINT"))?,
            deployment,
            api_version: env
                .get("AZURE_OPENAI_API_VERSION")
                .unwrap_or(DEFAULT_AZURE_API_VERSION)
                .to_string(),
        });
    }
    if let Some(key) = env.get("OPENAI_API_KEY") {
        let base_url = match env.get("OPENAI_BASE_URL") {
            Some(base) => checked_url("OPENAI_BASE_URL", base)?,
            None => OPENAI_API_BASE.to_string(),
        };
        return Ok(ProviderConfig::Openai {
            api_key: checked_key("OPENAI_API_KEY", key)?,
            base_url,
        });
    }
    Err(Error::NotConfigured)
}

/// An http(s) URL without a trailing slash (the client appends `/chat/completions`).
fn checked_url(var: &str, raw: &str) -> Result<String, Error> {
    let invalid = |reason: &str| Error::ConfigInvalid {
        var: var.to_string(),
        reason: reason.to_string(),
    };
    let url = url::Url::parse(raw).map_err(|e| invalid(&format!("not a URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid("the scheme must be http or https"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(invalid("the URL has no host"));
    }
    Ok(raw.trim_end_matches('/').to_string())
}

/// A key goes into an HTTP header: only visible ASCII is valid there (a pasted key with a
/// line break or a non-ASCII quote would otherwise fail deep inside the HTTP client).
fn checked_key(var: &str, raw: &str) -> Result<ApiKey, Error> {
    if raw.bytes().all(|b| b.is_ascii_graphic()) {
        Ok(ApiKey::new(raw))
    } else {
        Err(Error::ConfigInvalid {
            var: var.to_string(),
            reason: "the key may contain only visible ASCII characters (no spaces)".into(),
        })
    }
}

fn parse_bounded(var: &str, raw: &str, min: u64, max: u64) -> Result<u64, Error> {
    match raw.parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(Error::ConfigInvalid {
            var: var.to_string(),
            reason: format!("expected a whole number from {min} to {max}"),
        }),
    }
}

/// Request of `llm_status` (no fields).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusRequest {}

/// Whether an LLM is configured, and which (never a key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StatusResponse {
    /// A provider is fully configured.
    pub configured: bool,
    /// The provider, when configured.
    pub provider: Option<ProviderKind>,
    /// The model requests name (the default when `KEIRI_LLM_MODEL` is unset).
    pub model: String,
    /// Where requests go, without user info, query or fragment.
    pub base_url: Option<String>,
    /// The Azure deployment.
    pub deployment: Option<String>,
    /// The Azure API version.
    pub api_version: Option<String>,
    /// Whether a key is set (an OpenAI-compatible server may need none).
    pub api_key_set: bool,
    /// Why it is not configured, as a stable code and a message naming the variables.
    pub problem: Option<StatusProblem>,
}

impl StatusResponse {
    /// Nothing configured: the default model, no provider, no key, and why when it is known.
    pub fn unconfigured(problem: Option<StatusProblem>) -> StatusResponse {
        StatusResponse {
            configured: false,
            provider: None,
            model: DEFAULT_MODEL.to_string(),
            base_url: None,
            deployment: None,
            api_version: None,
            api_key_set: false,
            problem,
        }
    }
}

/// A configuration problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StatusProblem {
    pub code: String,
    pub message: String,
}

/// The status for `env` (configuration problems are reported in the response, not as errors).
pub fn status(env: &Env) -> StatusResponse {
    match LlmConfig::from_env(env) {
        Ok(config) => config.status(),
        Err(e) => not_configured(env, &e),
    }
}

/// The status for a workspace: the process environment over `<workspace>/.env`.
pub fn status_for_workspace(workspace: &Path) -> StatusResponse {
    match Env::load(workspace) {
        Ok(env) => status(&env),
        Err(e) => not_configured(&Env::process(), &e),
    }
}

fn not_configured(env: &Env, err: &Error) -> StatusResponse {
    StatusResponse {
        model: env
            .get("KEIRI_LLM_MODEL")
            .unwrap_or(DEFAULT_MODEL)
            .to_string(),
        ..StatusResponse::unconfigured(Some(StatusProblem {
            code: err.code().to_string(),
            message: err.to_string(),
        }))
    }
}
