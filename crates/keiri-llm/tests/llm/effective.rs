//! What is in effect and where it came from: the three layers told apart.

use keiri_llm::effective::{EffectiveSettings, Layers, Source, Sourced, layer_env};
use keiri_llm::{Env, ProviderKind, StatusResponse};

const KEY: &str = "sk-test-SECRET-0123456789";

fn env(pairs: &[(&str, &str)]) -> Env {
    Env::from_pairs(pairs.iter().copied())
}

/// Layers from literal environments; `saved` is what the saved settings stand for.
fn layers(
    process: &[(&str, &str)],
    dotenv: &[(&str, &str)],
    saved: &[(&str, &str)],
    saved_provider: Option<ProviderKind>,
    session_key: bool,
) -> Layers {
    Layers {
        process: env(process),
        dotenv: env(dotenv),
        saved: env(saved),
        saved_provider,
        session_key,
    }
}

/// What the layers put in effect, with the status their variables give.
fn effective(layers: &Layers) -> EffectiveSettings {
    layers.effective(keiri_llm::status(&layers.layered()))
}

fn sourced<T>(value: T, source: Source) -> Option<Sourced<T>> {
    Some(Sourced { value, source })
}

#[test]
fn the_effective_settings_say_where_each_value_came_from() {
    // Nothing anywhere: not configured, the default model.
    let e = effective(&Layers::default());
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
    let e = effective(&layers(
        &[("KEIRI_LLM_BASE_URL", "http://127.0.0.1:8080/v1")],
        &[],
        &[],
        None,
        false,
    ));
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
    let saved = [("OPENAI_API_KEY", KEY), ("KEIRI_LLM_MODEL", "gpt-4.1-mini")];
    let e = effective(&layers(&[], &[], &saved, Some(ProviderKind::Openai), false));
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
    let e = effective(&layers(
        &[],
        &[("KEIRI_LLM_MODEL", "gpt-5")],
        &saved,
        Some(ProviderKind::Openai),
        true,
    ));
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
    let e = effective(&layers(
        &[],
        &[("KEIRI_LLM_BASE_URL", "http://gpu-box:8000/v1")],
        &[("OPENAI_API_KEY", KEY)],
        Some(ProviderKind::Openai),
        false,
    ));
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
    let key = [("OPENAI_API_KEY", KEY)];
    // The key alone: retrieval's embeddings stay on this machine.
    let e = effective(&layers(&[], &[], &key, Some(ProviderKind::Openai), false));
    assert_eq!(
        e.embedding,
        Sourced {
            value: "auto".into(),
            source: Source::Default
        }
    );
    assert!(!e.cloud_embeddings);
    let chosen = [("OPENAI_API_KEY", KEY), ("KEIRI_EMBEDDER", "openai")];
    let e = effective(&layers(
        &[],
        &[],
        &chosen,
        Some(ProviderKind::Openai),
        false,
    ));
    assert!(e.cloud_embeddings);
    assert_eq!(e.embedding.source, Source::Settings);
    let e = effective(&layers(
        &[("KEIRI_EMBEDDER", "none")],
        &[],
        &[],
        Some(ProviderKind::Openai),
        false,
    ));
    assert_eq!(e.embedding.value, "bm25-only");
    assert_eq!(e.embedding.source, Source::Environment);
}

#[test]
fn the_process_beats_dotenv_which_beats_the_saved_settings() {
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
fn an_unreadable_configuration_is_the_defaults_and_its_problem() {
    let problem = keiri_llm::StatusProblem {
        code: "ENV_FILE_INVALID".into(),
        message: ".env line 3 is not NAME=value".into(),
    };
    let e = EffectiveSettings::unreadable(StatusResponse::unconfigured(Some(problem.clone())));
    assert!(!e.configured);
    assert_eq!(e.provider, None);
    assert_eq!(e.model.value, "gpt-4.1");
    assert_eq!(e.embedding.value, "auto");
    assert_eq!(e.problem, Some(problem));
}
