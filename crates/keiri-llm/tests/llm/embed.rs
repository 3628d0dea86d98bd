//! `Llm::embed` against the fake server: what is sent, what comes back, retries, typed
//! failures, cancellation and the event log, exactly as for a chat call.

use std::time::Duration;

use keiri_llm::testkit::{FakeServer, Reply};
use keiri_llm::{CallOptions, CancellationToken, Env, Error, EventLog, Redactor};
use serde_json::json;

use super::{llm, llm_for};

fn texts(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn a_compatible_server_gets_the_model_and_the_cleaned_inputs() {
    let (url, server) = FakeServer::start(vec![Reply::embeddings(&[&[1.0, 0.0], &[0.0, 2.0]])])
        .await
        .unwrap();
    let (llm, _) = llm(&url);
    let e = llm
        .embed(&texts(&["請求書", "  "]), &CallOptions::new())
        .await
        .unwrap();
    assert_eq!(e.vectors, vec![vec![1.0, 0.0], vec![0.0, 2.0]]);
    assert_eq!((e.usage.prompt_tokens, e.attempts), (6, 1));
    let r = &server.requests()[0];
    assert_eq!(r.path, "/v1/embeddings");
    assert_eq!(r.body["model"], "test-model");
    // A blank text is sent as one space: the API rejects empty strings.
    assert_eq!(r.body["input"], json!(["請求書", " "]));
    assert_eq!(r.body["encoding_format"], "float");
}

#[tokio::test]
async fn azure_posts_to_the_deployment_without_a_model() {
    let (_, server) = FakeServer::start(vec![Reply::embeddings(&[&[1.0]])])
        .await
        .unwrap();
    let env = Env::from_pairs([
        ("AZURE_OPENAI_API_KEY", "azure-secret-key-42"),
        ("AZURE_OPENAI_ENDPOINT", server.origin()),
        ("AZURE_OPENAI_DEPLOYMENT", "embed-small"),
        ("AZURE_OPENAI_API_VERSION", "2024-10-21"),
    ]);
    let (llm, _) = llm_for(&env);
    llm.embed(&texts(&["x"]), &CallOptions::new())
        .await
        .unwrap();
    let r = &server.requests()[0];
    assert_eq!(r.path, "/openai/deployments/embed-small/embeddings");
    assert_eq!(r.query.as_deref(), Some("api-version=2024-10-21"));
    assert_eq!(r.header("api-key"), Some("azure-secret-key-42"));
    assert!(r.body.get("model").is_none());
}

#[tokio::test]
async fn server_errors_are_retried_with_backoff_and_logged() {
    let (url, server) = FakeServer::start(vec![
        Reply::error(503, "busy"),
        Reply::embeddings(&[&[0.5]]),
    ])
    .await
    .unwrap();
    let (llm, clock) = llm(&url);
    let dir = tempfile::tempdir().unwrap();
    let log = EventLog::create(dir.path(), "e1", Redactor::default(), clock.clone()).unwrap();
    let options = CallOptions::new()
        .with_stage("embeddings")
        .with_log(log.clone());
    let e = llm.embed(&texts(&["a"]), &options).await.unwrap();
    assert_eq!(e.attempts, 2);
    assert_eq!(clock.sleeps(), vec![Duration::from_millis(500)]);
    assert_eq!(server.remaining(), 0);
    let events: Vec<serde_json::Value> = std::fs::read_to_string(log.run_path())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let got: Vec<(&str, &str)> = events
        .iter()
        .map(|e| (e["stage"].as_str().unwrap(), e["status"].as_str().unwrap()))
        .collect();
    assert_eq!(got, [("embeddings", "error"), ("embeddings", "ok")]);
}

#[tokio::test]
async fn unusable_answers_and_rejections_are_typed_and_not_retried() {
    let (url, server) = FakeServer::start(vec![
        Reply::raw(200, json!({"data": [{"index": 0, "embedding": [1.0]}]})),
        Reply::error(401, "Incorrect API key provided: sk-live-0123456789abcdef"),
    ])
    .await
    .unwrap();
    let (llm, _) = llm(&url);
    let err = llm
        .embed(&texts(&["a", "b"]), &CallOptions::new())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "LLM_RESPONSE_INVALID");
    assert!(
        err.to_string()
            .contains("1 embeddings returned for 2 texts"),
        "{err}"
    );
    let err = llm
        .embed(&texts(&["a"]), &CallOptions::new())
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::Unauthorized { status: 401, .. }),
        "{err:?}"
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn cancellation_stops_an_embeddings_call() {
    let (url, _server) = FakeServer::start(vec![
        Reply::embeddings(&[&[1.0]]).with_delay(Duration::from_secs(30)),
    ])
    .await
    .unwrap();
    let (llm, _) = llm(&url);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        trigger.cancel();
    });
    let err = llm
        .embed(&texts(&["a"]), &CallOptions::new().with_cancel(cancel))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Cancelled), "{err:?}");
}
