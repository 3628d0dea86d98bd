//! `keiri llm status`.

use serde_json::Value;

use super::{keiri, put};

/// `keiri` with none of the LLM variables inherited from the test's environment.
fn keiri_clean(ws: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = keiri(ws);
    for var in [
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
    ] {
        cmd.env_remove(var);
    }
    cmd
}

#[test]
fn llm_status_without_a_provider_names_the_variables_and_exits_1() {
    let ws = tempfile::tempdir().unwrap();
    let out = keiri_clean(ws.path())
        .args(["llm", "status"])
        .assert()
        .code(1);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(stdout.contains("configured: no"), "{stdout}");
    for var in [
        "OPENAI_API_KEY",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_ENDPOINT",
        "AZURE_OPENAI_DEPLOYMENT",
        "KEIRI_LLM_BASE_URL",
    ] {
        assert!(stdout.contains(var), "{var} missing from {stdout}");
    }
}

#[test]
fn llm_status_reads_the_workspace_dotenv_and_hides_the_key() {
    let ws = tempfile::tempdir().unwrap();
    let key = "sk-local-0123456789abcdefSECRET";
    put(
        &ws.path().join(".env"),
        &format!(
            "KEIRI_LLM_BASE_URL=http://user:pw1234567@127.0.0.1:8080/v1\nKEIRI_LLM_API_KEY={key}\nKEIRI_LLM_MODEL=qwen2.5\n"
        ),
    );
    let out = keiri_clean(ws.path())
        .args(["--json", "llm", "status"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        !stdout.contains("SECRET") && !stdout.contains("pw1234567"),
        "{stdout}"
    );
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["configured"], true);
    assert_eq!(v["provider"], "openai_compatible");
    assert_eq!(v["model"], "qwen2.5");
    assert_eq!(v["base_url"], "http://127.0.0.1:8080/v1");
    assert_eq!(v["api_key_set"], true);

    // The process environment wins over .env.
    let out = keiri_clean(ws.path())
        .env("KEIRI_LLM_MODEL", "from-env")
        .args(["llm", "status"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(stdout.contains("configured: yes"), "{stdout}");
    assert!(stdout.contains("model:      from-env"), "{stdout}");
    assert!(!stdout.contains("SECRET"), "{stdout}");
}

#[tokio::test]
async fn llm_status_is_dispatched_by_name() {
    let ws = tempfile::tempdir().unwrap();
    let ctx = keiri_api::Context::new(ws.path());
    assert!(keiri_api::FUNCTIONS.contains(&"llm_status"));
    // The answer depends on the test's own environment; its shape does not.
    let v = keiri_api::dispatch(&ctx, "llm_status", Value::Null)
        .await
        .unwrap();
    assert!(v["configured"].is_boolean(), "{v}");
    assert!(v["model"].is_string(), "{v}");
    let err = keiri_api::dispatch(&ctx, "llm_status", serde_json::json!({"unexpected": 1}))
        .await
        .unwrap_err();
    assert_eq!(err.code.as_str(), "INVALID_REQUEST");
}
