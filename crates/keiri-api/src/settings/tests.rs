//! Tests of settings' private details: the embedding configuration retrieval derives from the
//! saved settings. Which layer wins is keiri-llm's (`tests/llm/effective.rs`); the rest are in
//! `tests/api/settings.rs`.

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

#[test]
fn retrieval_embeds_in_the_cloud_only_once_the_settings_choose_it() {
    // What retrieval actually chooses from the saved settings (keiri-search's select_embedder
    // reads this configuration).
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
