use std::sync::Arc;

use keiri_llm::testkit::{FakeServer, Reply};
use serde_json::{Value, json};

use keiri_api::settings::{NoKeychain, WithSession};

/// A workspace whose `.env` holds `dotenv`, with settings in its own folder and no keychain.
fn context(dotenv: &str) -> (tempfile::TempDir, keiri_api::Context) {
    let ws = tempfile::tempdir().unwrap();
    keiri_fs::write_atomic(&ws.path().join(".env"), dotenv.as_bytes()).unwrap();
    let ctx = keiri_api::Context::new(ws.path())
        .with_config_dir(ws.path().join("config"))
        .with_secrets(Arc::new(WithSession::new(NoKeychain)));
    (ws, ctx)
}

fn test(ctx: &keiri_api::Context, lang: &str) -> Value {
    crate::support::call(ctx, "llm_connection_test", json!({"lang": lang})).unwrap()
}

/// Whether the test process's own environment configures a model (it would win over the
/// workspace's `.env`, so the outcome would not be this test's).
fn process_configures_llm() -> bool {
    let process = keiri_llm::Env::process();
    keiri_llm::config::ENV_VARS
        .iter()
        .any(|v| process.get(v).is_some())
}

#[test]
fn a_server_that_answers_is_ok_and_gets_one_small_request() {
    if process_configures_llm() {
        return;
    }
    let (url, server) = FakeServer::start_background(vec![Reply::content("OK")]).unwrap();
    let (_ws, ctx) = context(&format!("KEIRI_LLM_BASE_URL={url}\nKEIRI_LLM_MODEL=tiny\n"));
    let v = test(&ctx, "ja");
    assert_eq!(v["ok"], json!(true), "{v:#}");
    assert_eq!(v["code"], Value::Null);
    assert_eq!(v["provider"], json!("openai_compatible"));
    assert_eq!(v["model"], json!("tiny"));
    assert_eq!(v["base_url"], json!(url));
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .starts_with("接続できました（OpenAI互換サーバー・モデル tiny、"),
        "{v}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].body["model"], json!("tiny"));
    assert_eq!(requests[0].body["max_tokens"], json!(16));
    // A server that needs no key gets none: the OpenAI client still sends the scheme
    // name with an empty token, which keyless servers ignore.
    assert!(
        matches!(requests[0].header("authorization"), None | Some("Bearer")),
        "{:?}",
        requests[0].header("authorization")
    );
}

#[test]
fn a_rejected_key_is_llm_unauthorized_at_once_without_retries() {
    if process_configures_llm() {
        return;
    }
    let (url, server) = FakeServer::start_background(vec![
        Reply::error(401, "Incorrect API key provided"),
        Reply::content("OK"),
    ])
    .unwrap();
    let (_ws, ctx) = context(&format!(
        "KEIRI_LLM_BASE_URL={url}\nKEIRI_LLM_API_KEY=sk-wrong\nKEIRI_LLM_MAX_RETRIES=3\n"
    ));
    let v = test(&ctx, "en");
    assert_eq!(v["ok"], json!(false), "{v:#}");
    assert_eq!(v["code"], json!("LLM_UNAUTHORIZED"));
    assert_eq!(
        v["message"],
        json!("The API key was not accepted. Check that the key is correct")
    );
    assert!(!v.to_string().contains("sk-wrong"), "{v}");
    assert_eq!(server.request_count(), 1);
    let v = test(&ctx, "ja");
    assert_eq!(
        v["ok"],
        json!(true),
        "the next test reaches the next reply: {v:#}"
    );
}

#[test]
fn an_unreachable_server_is_llm_connection_with_what_to_check() {
    if process_configures_llm() {
        return;
    }
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (_ws, ctx) = context(&format!("KEIRI_LLM_BASE_URL=http://127.0.0.1:{port}/v1\n"));
    let v = test(&ctx, "ja");
    assert_eq!(v["ok"], json!(false), "{v:#}");
    assert_eq!(v["code"], json!("LLM_CONNECTION"));
    assert_eq!(
        v["message"],
        json!("サーバーに接続できませんでした。URLと、サーバーが起動しているかを確認してください")
    );
    assert_eq!(v["base_url"], json!(format!("http://127.0.0.1:{port}/v1")));
}

#[test]
fn nothing_configured_is_reported_without_a_request() {
    if process_configures_llm() {
        return;
    }
    let (_ws, ctx) = context("");
    let v = test(&ctx, "ja");
    assert_eq!(v["ok"], json!(false));
    assert_eq!(v["code"], json!("LLM_NOT_CONFIGURED"));
    assert_eq!(v["message"], json!("AIモデルの接続先が設定されていません"));
}
