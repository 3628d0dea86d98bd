//! Tests of settings' private details: the layers a value comes from, the workspace guard, the
//! embedding configuration retrieval derives. The rest are in `tests/api/settings.rs`.

use super::*;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

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

/// A workspace whose settings go to its own `config/` and whose key store is in memory.
struct Fixture {
    _dir: tempfile::TempDir,
    ctx: Context,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let ctx = Context::new(dir.path())
        .with_config_dir(dir.path().join("config"))
        .with_secrets(Arc::new(MemorySecrets::default()));
    Fixture { _dir: dir, ctx }
}

fn save(ctx: &Context, body: Value) -> Result<Value, ApiError> {
    crate::stream::testing::call(ctx, "settings_save", body)
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
