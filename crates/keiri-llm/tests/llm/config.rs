//! Provider resolution from environment variables and `.env`, and the status for the UI.

use std::path::Path;

use keiri_llm::{Env, LlmConfig, ProviderConfig, status};

/// Resolves `pairs` and renders the outcome on one line.
fn describe(pairs: &[(&str, &str)]) -> String {
    match LlmConfig::from_env(&Env::from_pairs(pairs.iter().copied())) {
        Ok(c) => {
            let p = match &c.provider {
                ProviderConfig::Openai { base_url, .. } => format!("openai {base_url}"),
                ProviderConfig::Azure {
                    endpoint,
                    deployment,
                    api_version,
                    ..
                } => format!("azure {endpoint} {deployment} {api_version}"),
                ProviderConfig::OpenaiCompatible { base_url, api_key } => format!(
                    "compatible {base_url} key={}",
                    if api_key.is_some() { "yes" } else { "no" }
                ),
                other => format!("{other:?}"),
            };
            format!(
                "{p} model={} t={} timeout={}s retries={}",
                c.model,
                c.temperature,
                c.timeout.as_secs(),
                c.retry.max_retries
            )
        }
        Err(e) => format!("{}: {e}", e.code()),
    }
}

#[track_caller]
fn check(pairs: &[(&str, &str)], expect: &str) {
    let got = describe(pairs);
    assert!(
        got.starts_with(expect),
        "env {pairs:?}\n  got:    {got}\n  expect: {expect}…"
    );
}

#[test]
fn provider_resolution() {
    check(
        &[("OPENAI_API_KEY", "sk-test-0000000000000000")],
        "openai https://api.openai.com/v1 model=gpt-4.1 t=0 timeout=120s retries=3",
    );
    check(
        &[
            ("OPENAI_API_KEY", "sk-x-123456"),
            ("OPENAI_BASE_URL", "https://proxy.example/v1/"),
            ("KEIRI_LLM_MODEL", "gpt-4o-mini"),
        ],
        "openai https://proxy.example/v1 model=gpt-4o-mini",
    );
    check(
        &[
            ("AZURE_OPENAI_API_KEY", "azure-key-123"),
            ("AZURE_OPENAI_ENDPOINT", "https://res.openai.azure.com/"),
            ("AZURE_OPENAI_DEPLOYMENT", "gpt41"),
        ],
        "azure https://res.openai.azure.com gpt41 2024-10-21 model=gpt-4.1",
    );
    check(
        &[
            ("AZURE_OPENAI_API_KEY", "azure-key-123"),
            ("AZURE_OPENAI_ENDPOINT", "https://res.openai.azure.com"),
            ("AZURE_OPENAI_DEPLOYMENT", "gpt41"),
            ("AZURE_OPENAI_API_VERSION", "2025-01-01-preview"),
            ("OPENAI_API_KEY", "sk-also-set-123456"),
        ],
        "azure https://res.openai.azure.com gpt41 2025-01-01-preview",
    );
    check(
        &[("KEIRI_LLM_BASE_URL", "http://localhost:11434/v1")],
        "compatible http://localhost:11434/v1 key=no",
    );
    // The compatible server wins over OpenAI, and never gets the OpenAI key.
    check(
        &[
            ("KEIRI_LLM_BASE_URL", "http://127.0.0.1:8080/v1"),
            ("OPENAI_API_KEY", "sk-openai-123456"),
        ],
        "compatible http://127.0.0.1:8080/v1 key=no",
    );
    check(
        &[
            ("KEIRI_LLM_BASE_URL", "http://127.0.0.1:8080/v1"),
            ("KEIRI_LLM_API_KEY", "local-key-1"),
            ("KEIRI_LLM_TIMEOUT_SECS", "30"),
            ("KEIRI_LLM_MAX_RETRIES", "0"),
        ],
        "compatible http://127.0.0.1:8080/v1 key=yes model=gpt-4.1 t=0 timeout=30s retries=0",
    );
    // Blank values count as unset.
    check(
        &[("OPENAI_API_KEY", "  "), ("KEIRI_LLM_BASE_URL", "")],
        "LLM_NOT_CONFIGURED",
    );
}

#[test]
fn configuration_errors_name_the_variables() {
    check(
        &[],
        "LLM_NOT_CONFIGURED: no LLM provider is configured: set OPENAI_API_KEY",
    );
    let none = describe(&[("KEIRI_LLM_MODEL", "gpt-4.1")]);
    for var in [
        "OPENAI_API_KEY",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_ENDPOINT",
        "AZURE_OPENAI_DEPLOYMENT",
        "AZURE_OPENAI_API_VERSION",
        "KEIRI_LLM_BASE_URL",
    ] {
        assert!(none.contains(var), "{none} does not name {var}");
    }
    check(
        &[("AZURE_OPENAI_API_KEY", "azure-key-123")],
        "LLM_CONFIG_INCOMPLETE: the Azure OpenAI provider is missing AZURE_OPENAI_ENDPOINT, AZURE_OPENAI_DEPLOYMENT",
    );
    check(
        &[("AZURE_OPENAI_ENDPOINT", "https://r.openai.azure.com")],
        "LLM_CONFIG_INCOMPLETE: the Azure OpenAI provider is missing AZURE_OPENAI_API_KEY, AZURE_OPENAI_DEPLOYMENT",
    );
    check(
        &[("KEIRI_LLM_BASE_URL", "localhost:8080")],
        "LLM_CONFIG_INVALID: KEIRI_LLM_BASE_URL is invalid: the scheme must be http or https",
    );
    check(
        &[("KEIRI_LLM_BASE_URL", "not a url")],
        "LLM_CONFIG_INVALID: KEIRI_LLM_BASE_URL is invalid: not a URL",
    );
    check(
        &[("OPENAI_API_KEY", "sk-abc def-123456")],
        "LLM_CONFIG_INVALID: OPENAI_API_KEY is invalid: the key may contain only visible ASCII",
    );
    check(
        &[
            ("AZURE_OPENAI_API_KEY", "azure-key-123"),
            ("AZURE_OPENAI_ENDPOINT", "https://r.openai.azure.com"),
            ("AZURE_OPENAI_DEPLOYMENT", "../../x"),
        ],
        "LLM_CONFIG_INVALID: AZURE_OPENAI_DEPLOYMENT is invalid",
    );
    check(
        &[
            ("OPENAI_API_KEY", "sk-abc-123456"),
            ("KEIRI_LLM_TIMEOUT_SECS", "0"),
        ],
        "LLM_CONFIG_INVALID: KEIRI_LLM_TIMEOUT_SECS is invalid: expected a whole number from 1 to 3600",
    );
    check(
        &[
            ("OPENAI_API_KEY", "sk-abc-123456"),
            ("KEIRI_LLM_MAX_RETRIES", "many"),
        ],
        "LLM_CONFIG_INVALID: KEIRI_LLM_MAX_RETRIES is invalid",
    );
}

#[test]
fn keys_never_show_in_debug_or_status() {
    let key = "sk-proj-SECRETSECRETSECRET1234";
    let env = Env::from_pairs([
        (
            "KEIRI_LLM_BASE_URL",
            "https://user:pa55word99@llm.example/v1?token=abc123xyz",
        ),
        ("KEIRI_LLM_API_KEY", key),
    ]);
    let config = LlmConfig::from_env(&env).unwrap();
    let debug = format!("{config:?} {env:?}");
    assert!(!debug.contains(key), "{debug}");
    let st = config.status();
    let json = serde_json::to_string(&st).unwrap();
    for secret in [key, "pa55word99", "abc123xyz", "user:"] {
        assert!(!json.contains(secret), "{secret} in {json}");
    }
    assert_eq!(st.base_url.as_deref(), Some("https://llm.example/v1"));
    assert!(st.configured && st.api_key_set);
    // The URL password is a secret too.
    assert!(
        config
            .provider
            .secrets()
            .contains(&"pa55word99".to_string())
    );
}

#[test]
fn status_reports_configured_and_unconfigured() {
    let st = status(&Env::from_pairs([
        ("AZURE_OPENAI_API_KEY", "azure-key-123"),
        ("AZURE_OPENAI_ENDPOINT", "https://res.openai.azure.com"),
        ("AZURE_OPENAI_DEPLOYMENT", "gpt41"),
    ]));
    let v = serde_json::to_value(&st).unwrap();
    assert_eq!(v["configured"], true);
    assert_eq!(v["provider"], "azure");
    assert_eq!(v["model"], "gpt-4.1");
    assert_eq!(v["base_url"], "https://res.openai.azure.com");
    assert_eq!(v["deployment"], "gpt41");
    assert_eq!(v["problem"], serde_json::Value::Null);

    let st = status(&Env::default());
    assert!(!st.configured);
    assert_eq!(st.provider, None);
    let problem = st.problem.unwrap();
    assert_eq!(problem.code, "LLM_NOT_CONFIGURED");
    assert!(problem.message.contains("KEIRI_LLM_BASE_URL"));
}

fn write(path: &Path, text: &str) {
    #[allow(clippy::disallowed_methods)]
    std::fs::write(path, text).unwrap();
}

#[test]
fn dotenv_is_read_and_the_process_environment_wins() {
    let ws = tempfile::tempdir().unwrap();
    write(
        &ws.path().join(".env"),
        "# comment\nexport KEIRI_LLM_BASE_URL=http://127.0.0.1:9/v1\nKEIRI_LLM_MODEL=\"from-dotenv\"\nKEIRI_LLM_API_KEY='dotenv-key-1'\n",
    );
    let env = Env::from_dotenv(ws.path()).unwrap();
    assert_eq!(env.get("KEIRI_LLM_MODEL"), Some("from-dotenv"));
    assert_eq!(env.get("KEIRI_LLM_API_KEY"), Some("dotenv-key-1"));
    let env = env.overlay(Env::from_pairs([("KEIRI_LLM_MODEL", "from-process")]));
    let config = LlmConfig::from_env(&env).unwrap();
    assert_eq!(config.model, "from-process");
    assert_eq!(config.provider.display_url(), "http://127.0.0.1:9/v1");

    // No .env is not an error.
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(Env::from_dotenv(empty.path()).unwrap(), Env::default());
}

#[test]
fn dotenv_syntax_error_gives_the_line_not_the_secret() {
    let ws = tempfile::tempdir().unwrap();
    write(
        &ws.path().join(".env"),
        "KEIRI_LLM_MODEL=x\nOPENAI_API_KEY=\"sk-unterminated-SECRET-9999\n",
    );
    let err = Env::from_dotenv(ws.path()).unwrap_err();
    assert_eq!(err.code(), "LLM_CONFIG_INVALID");
    let msg = err.to_string();
    assert!(!msg.contains("SECRET"), "{msg}");
    assert!(msg.contains(".env has a syntax error"), "{msg}");
}
