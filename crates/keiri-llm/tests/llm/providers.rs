//! What each provider sends: paths, query, auth headers, token limits.

use keiri_llm::testkit::{FakeServer, Reply};
use keiri_llm::{CallOptions, ChatRequest, Env, Message, ProviderKind};

use super::llm_for;

fn request() -> ChatRequest {
    ChatRequest::new(vec![Message::user("hi")]).with_max_tokens(256)
}

#[tokio::test]
async fn openai_sends_a_bearer_key_to_v1_chat_completions() {
    let (url, server) = FakeServer::start(vec![Reply::content("ok")]).await.unwrap();
    let env = Env::from_pairs([
        ("OPENAI_API_KEY", "sk-test-openai-0123456789abcdef"),
        ("OPENAI_BASE_URL", url.as_str()),
    ]);
    let (llm, _) = llm_for(&env);
    assert_eq!(llm.provider_kind(), ProviderKind::Openai);
    assert_eq!(llm.model(), "gpt-4.1");
    llm.chat(&request(), &CallOptions::new()).await.unwrap();
    let r = &server.requests()[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(
        r.header("authorization"),
        Some("Bearer sk-test-openai-0123456789abcdef")
    );
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.body["model"], "gpt-4.1");
    assert_eq!(r.body["max_completion_tokens"], 256);
    assert!(r.body.get("max_tokens").is_none());
    assert_eq!(r.body["stream"], false);
}

#[tokio::test]
async fn azure_sends_api_key_deployment_path_and_version() {
    let (_, server) = FakeServer::start(vec![Reply::content("ok")]).await.unwrap();
    let env = Env::from_pairs([
        ("AZURE_OPENAI_API_KEY", "azure-secret-key-42"),
        ("AZURE_OPENAI_ENDPOINT", server.origin()),
        ("AZURE_OPENAI_DEPLOYMENT", "gpt41-prod"),
        ("AZURE_OPENAI_API_VERSION", "2024-10-21"),
    ]);
    let (llm, _) = llm_for(&env);
    assert_eq!(llm.provider_kind(), ProviderKind::Azure);
    let r = llm.chat(&request(), &CallOptions::new()).await.unwrap();
    assert_eq!(r.content.as_deref(), Some("ok"));
    let req = &server.requests()[0];
    assert_eq!(req.path, "/openai/deployments/gpt41-prod/chat/completions");
    assert_eq!(req.query.as_deref(), Some("api-version=2024-10-21"));
    assert_eq!(req.header("api-key"), Some("azure-secret-key-42"));
    assert_eq!(req.header("authorization"), None);
}

#[tokio::test]
async fn a_compatible_server_never_receives_the_openai_key() {
    let (url, server) = FakeServer::start(vec![Reply::content("ok"), Reply::content("ok")])
        .await
        .unwrap();
    let env = Env::from_pairs([
        ("KEIRI_LLM_BASE_URL", url.as_str()),
        ("OPENAI_API_KEY", "sk-must-not-leak-0123456789"),
    ]);
    let (llm, _) = llm_for(&env);
    assert_eq!(llm.provider_kind(), ProviderKind::OpenaiCompatible);
    llm.chat(&request(), &CallOptions::new()).await.unwrap();
    let req = &server.requests()[0];
    let headers = format!("{:?}", req.headers);
    assert!(!headers.contains("sk-must-not-leak"), "{headers}");
    // Servers that mimic older API versions know only `max_tokens`.
    assert_eq!(req.body["max_tokens"], 256);
    assert!(req.body.get("max_completion_tokens").is_none());

    let with_key = env.with("KEIRI_LLM_API_KEY", "local-server-key");
    let (llm, _) = llm_for(&with_key);
    llm.chat(&request(), &CallOptions::new()).await.unwrap();
    assert_eq!(
        server.requests()[1].header("authorization"),
        Some("Bearer local-server-key")
    );
}

#[tokio::test]
async fn provider_messages_are_redacted_and_shortened() {
    let key = "sk-test-echoed-key-0123456789abcdef";
    let long_tail = "x".repeat(2000);
    let (url, _server) = FakeServer::start(vec![Reply::error(
        401,
        format!("Incorrect API key provided: {key}. Also sk-otherkey00000000000000 {long_tail}"),
    )])
    .await
    .unwrap();
    let env = Env::from_pairs([("OPENAI_API_KEY", key), ("OPENAI_BASE_URL", url.as_str())]);
    let (llm, _) = llm_for(&env);
    let err = llm.chat(&request(), &CallOptions::new()).await.unwrap_err();
    let msg = err.to_string();
    assert_eq!(err.code(), "LLM_UNAUTHORIZED");
    assert!(!msg.contains(key), "{msg}");
    assert!(!msg.contains("sk-otherkey"), "{msg}");
    assert!(
        msg.contains("Incorrect API key provided: [REDACTED]"),
        "{msg}"
    );
    assert!(msg.chars().count() < 700, "{}", msg.len());
}

#[tokio::test]
async fn plain_text_error_bodies_are_kept_as_messages() {
    let (url, _server) = FakeServer::start(vec![Reply::raw(
        400,
        serde_json::Value::String("model 'x' not loaded".into()),
    )])
    .await
    .unwrap();
    let (llm, _) = llm_for(&super::compatible_env(&url));
    let err = llm.chat(&request(), &CallOptions::new()).await.unwrap_err();
    assert_eq!(err.code(), "LLM_REQUEST_REJECTED");
    assert!(err.to_string().ends_with("model 'x' not loaded"), "{err}");
}
