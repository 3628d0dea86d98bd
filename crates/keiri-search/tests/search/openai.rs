//! The OpenAI / Azure OpenAI embedder against a fake embeddings server on 127.0.0.1: no key,
//! no network. The tests check both the vectors and the requests that were sent.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::IntoResponse;
use axum::routing::post;
use keiri_search::embed::{CachedEmbedder, DiskCache, OpenAiEmbedder, OpenAiEndpoint};
use keiri_search::{EmbedKind, Embedder};
use serde_json::{Value, json};

#[derive(Debug, Clone)]
struct Seen {
    path: String,
    query: Option<String>,
    auth: Option<String>,
    api_key: Option<String>,
    body: Value,
}

/// How the fake server answers.
#[derive(Clone, Copy)]
enum Behaviour {
    /// One 3-d vector per input: [len, 1, 0], in reverse order with explicit indexes.
    Good,
    Unauthorized,
    WrongCount,
    NotJson,
}

#[derive(Clone)]
struct Fake {
    seen: Arc<Mutex<Vec<Seen>>>,
    behaviour: Behaviour,
}

async fn embeddings(
    State(fake): State<Fake>,
    uri: Uri,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: String,
) -> axum::response::Response {
    let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    fake.seen.lock().unwrap().push(Seen {
        path: uri.path().to_string(),
        query,
        auth: header("authorization"),
        api_key: header("api-key"),
        body: body.clone(),
    });
    let inputs: Vec<String> = body["input"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    match fake.behaviour {
        Behaviour::Unauthorized => (
            StatusCode::UNAUTHORIZED,
            r#"{"error":{"message":"bad key"}}"#,
        )
            .into_response(),
        Behaviour::NotJson => (StatusCode::OK, "<html>proxy</html>").into_response(),
        Behaviour::WrongCount => {
            axum::Json(json!({"data": [{"embedding": [1.0], "index": 0}]})).into_response()
        }
        Behaviour::Good => {
            let data: Vec<Value> = inputs
                .iter()
                .enumerate()
                .rev()
                .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": [t.chars().count() as f32, 1.0, 0.0]}))
                .collect();
            axum::Json(json!({"object": "list", "data": data, "model": "fake"})).into_response()
        }
    }
}

/// Starts the fake server on 127.0.0.1:0 in a background thread; returns its base URL.
fn serve(behaviour: Behaviour) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let fake = Fake {
        seen: seen.clone(),
        behaviour,
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            let app = Router::new().fallback(post(embeddings)).with_state(fake);
            axum::serve(listener, app).await.unwrap();
        });
    });
    let addr = rx.recv().unwrap();
    (format!("http://{addr}"), seen)
}

fn texts(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn openai_request_and_vectors() {
    let (base, seen) = serve(Behaviour::Good);
    let embedder = OpenAiEmbedder::new(OpenAiEndpoint::OpenAi {
        base_url: format!("{base}/v1/"),
        api_key: "sk-test".into(),
        model: "text-embedding-3-small".into(),
    });
    assert_eq!(embedder.name(), "openai:text-embedding-3-small");
    let vectors = embedder
        .embed(&texts(&["abc", "", "請求書"]), EmbedKind::Query)
        .unwrap();
    // Reordered by index and normalised: [3,1,0] / sqrt(10), and the empty text was sent
    // as one space (the API rejects empty strings).
    let expect: [[f32; 3]; 3] = [[3.0, 1.0, 0.0], [1.0, 1.0, 0.0], [3.0, 1.0, 0.0]];
    for (v, e) in vectors.iter().zip(expect) {
        let n = (e[0] * e[0] + e[1] * e[1]).sqrt();
        assert!(
            (v[0] - e[0] / n).abs() < 1e-6 && (v[1] - e[1] / n).abs() < 1e-6,
            "{vectors:?}"
        );
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/v1/embeddings");
    assert_eq!(seen[0].auth.as_deref(), Some("Bearer sk-test"));
    assert_eq!(seen[0].body["model"], "text-embedding-3-small");
    assert_eq!(seen[0].body["input"], json!(["abc", " ", "請求書"]));
}

#[test]
fn azure_request_shape() {
    let (base, seen) = serve(Behaviour::Good);
    let embedder = OpenAiEmbedder::new(OpenAiEndpoint::Azure {
        endpoint: base.clone(),
        deployment: "embed-small".into(),
        api_version: "2024-10-21".into(),
        api_key: "az-key".into(),
    });
    assert_eq!(embedder.name(), "azure:embed-small");
    embedder.embed(&texts(&["x"]), EmbedKind::Passage).unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].path, "/openai/deployments/embed-small/embeddings");
    assert_eq!(seen[0].query.as_deref(), Some("api-version=2024-10-21"));
    assert_eq!(seen[0].api_key.as_deref(), Some("az-key"));
    assert_eq!(seen[0].auth, None);
    assert!(seen[0].body.get("model").is_none());
}

#[test]
fn large_inputs_are_batched() {
    let (base, seen) = serve(Behaviour::Good);
    let embedder = OpenAiEmbedder::new(OpenAiEndpoint::OpenAi {
        base_url: base,
        api_key: "k".into(),
        model: "m".into(),
    });
    let many: Vec<String> = (0..300).map(|i| format!("text {i}")).collect();
    assert_eq!(
        embedder.embed(&many, EmbedKind::Passage).unwrap().len(),
        300
    );
    let sizes: Vec<usize> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|s| s.body["input"].as_array().map_or(0, Vec::len))
        .collect();
    assert_eq!(sizes, [128, 128, 44]);
}

fn check_error(behaviour: Behaviour, expect: &str) {
    let (base, _) = serve(behaviour);
    let embedder = OpenAiEmbedder::new(OpenAiEndpoint::OpenAi {
        base_url: base,
        api_key: "k".into(),
        model: "m".into(),
    });
    let err = embedder
        .embed(&texts(&["a", "b"]), EmbedKind::Query)
        .unwrap_err();
    assert_eq!(err.code(), "EMBEDDINGS_HTTP");
    assert!(err.to_string().contains(expect), "{err}");
}

#[test]
fn server_errors_are_typed() {
    check_error(Behaviour::Unauthorized, "401");
    check_error(Behaviour::WrongCount, "1 embeddings returned for 2 texts");
    check_error(Behaviour::NotJson, "not JSON");
}

#[test]
fn unreachable_server_is_an_error_not_a_hang() {
    // Bind then drop a listener: the port is closed, so the connection is refused at once.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let embedder = OpenAiEmbedder::new(OpenAiEndpoint::OpenAi {
        base_url: format!("http://127.0.0.1:{port}"),
        api_key: "k".into(),
        model: "m".into(),
    });
    assert_eq!(
        embedder
            .embed(&texts(&["a"]), EmbedKind::Query)
            .unwrap_err()
            .code(),
        "EMBEDDINGS_HTTP"
    );
}

#[test]
fn cache_avoids_a_second_request() {
    let (base, seen) = serve(Behaviour::Good);
    let dir = tempfile::tempdir().unwrap();
    let embedder = CachedEmbedder::new(
        Arc::new(OpenAiEmbedder::new(OpenAiEndpoint::OpenAi {
            base_url: base,
            api_key: "k".into(),
            model: "m".into(),
        })),
        DiskCache::new(dir.path().to_path_buf()),
    );
    let first = embedder
        .embed(&texts(&["a", "bb"]), EmbedKind::Passage)
        .unwrap();
    let second = embedder
        .embed(&texts(&["a", "bb"]), EmbedKind::Passage)
        .unwrap();
    assert_eq!(first, second);
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[test]
fn debug_output_never_shows_the_key() {
    let endpoint = OpenAiEndpoint::OpenAi {
        base_url: "u".into(),
        api_key: "sk-secret".into(),
        model: "m".into(),
    };
    assert!(!format!("{endpoint:?}").contains("sk-secret"));
}
