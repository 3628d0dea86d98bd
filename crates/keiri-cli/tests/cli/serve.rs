//! `keiri serve`: loopback only, the API over HTTP, CORS from the environment.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};

use serde_json::{Value, json};

use super::{VALID_PLAN, catalog_dir};

pub struct Server {
    child: Child,
    pub base: String,
    /// The per-launch token from the printed URL.
    pub token: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn start(workspace: &std::path::Path, cors: Option<&str>) -> Server {
    start_with_env(workspace, cors, &[])
}

pub fn start_with_env(
    workspace: &std::path::Path,
    cors: Option<&str>,
    env: &[(&str, &str)],
) -> Server {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("keiri"));
    cmd.arg("--workspace")
        .arg(workspace)
        .arg("--catalog")
        .arg(catalog_dir());
    cmd.args(["serve", "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    match cors {
        Some(v) => cmd.env("KEIRI_CORS_ALLOW_ORIGINS", v),
        None => cmd.env_remove("KEIRI_CORS_ALLOW_ORIGINS"),
    };
    cmd.env_remove("KEIRI_UI_DIR");
    cmd.env("KEIRI_CONFIG_DIR", super::test_config_dir(workspace));
    for name in super::LLM_ENV {
        cmd.env_remove(name);
    }
    for (name, value) in env {
        cmd.env(name, value);
    }
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("{line}"));
    let (base, token) = url
        .split_once("/?token=")
        .unwrap_or_else(|| panic!("the printed URL carries the token: {line}"));
    assert!(
        base.starts_with("http://127.0.0.1:"),
        "binds loopback only: {base}"
    );
    assert_eq!(token.len(), 64, "{token}");
    Server {
        child,
        base: base.to_string(),
        token: token.to_string(),
    }
}

impl Server {
    /// A POST to `/api/<path>` as the studio's own page sends it: JSON and the token.
    pub fn api(&self, path: &str) -> reqwest::RequestBuilder {
        reqwest::Client::new()
            .post(format!("{}/api/{path}", self.base))
            .header("x-keiri-token", &self.token)
    }
}

async fn post(
    server: &Server,
    function: &str,
    body: Value,
    origin: Option<&str>,
) -> reqwest::Response {
    let mut req = server.api(function).json(&body);
    if let Some(o) = origin {
        req = req.header("origin", o);
    }
    req.send().await.unwrap()
}

#[tokio::test]
async fn api_functions_over_http() {
    let ws = tempfile::tempdir().unwrap();
    let server = start(ws.path(), None);
    let res = post(&server, "plan_validate", json!({"yaml": VALID_PLAN}), None).await;
    assert_eq!(res.status(), 200);
    let v: Value = res.json().await.unwrap();
    assert_eq!(v["valid"], true);

    let res = post(
        &server,
        "plan_register",
        json!({"yaml": "id: x\ngraph:\n  - {id: a, block: nope}\n"}),
        None,
    )
    .await;
    assert_eq!(res.status(), 422);
    let v: Value = res.json().await.unwrap();
    assert_eq!(v["code"], "PLAN_INVALID");
    assert_eq!(v["details"]["findings"][0]["code"], "block.unknown");

    let res = post(&server, "plan_register", json!({"yaml": VALID_PLAN}), None).await;
    assert_eq!(res.status(), 200);
    let v: Value = res.json().await.unwrap();
    assert!(
        std::path::Path::new(v["path"].as_str().unwrap())
            .starts_with(ws.path().canonicalize().unwrap().join("designs"))
    );

    let res = post(&server, "plan_validate", json!({"yml": 1}), None).await;
    assert_eq!(res.status(), 400);
    assert_eq!(
        res.json::<Value>().await.unwrap()["code"],
        "INVALID_REQUEST"
    );
    let res = post(&server, "no_such_function", json!({}), None).await;
    assert_eq!(res.status(), 404);
    let res = server
        .api("plan_validate")
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
}

#[tokio::test]
async fn cors_default_allows_the_vite_dev_server_only() {
    let ws = tempfile::tempdir().unwrap();
    let server = start(ws.path(), None);
    let res = post(
        &server,
        "catalog_list",
        json!({}),
        Some("http://localhost:5173"),
    )
    .await;
    assert_eq!(
        res.headers().get("access-control-allow-origin").unwrap(),
        "http://localhost:5173"
    );
    let res = post(&server, "catalog_list", json!({}), Some("http://evil.test")).await;
    assert!(res.headers().get("access-control-allow-origin").is_none());
}

#[tokio::test]
async fn cors_from_env_and_empty_means_none() {
    let ws = tempfile::tempdir().unwrap();
    let server = start(ws.path(), Some(" http://a.test , "));
    let res = post(&server, "catalog_list", json!({}), Some("http://a.test")).await;
    assert_eq!(
        res.headers().get("access-control-allow-origin").unwrap(),
        "http://a.test"
    );
    drop(server);
    let server = start(ws.path(), Some(""));
    let res = post(
        &server,
        "catalog_list",
        json!({}),
        Some("http://localhost:5173"),
    )
    .await;
    assert!(res.headers().get("access-control-allow-origin").is_none());
}

/// The NDJSON frames of a streamed call's body.
pub fn frames(body: &str) -> Vec<Value> {
    body.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[tokio::test]
async fn plan_generate_streams_stage_events_then_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), None);
    let res = server
        .api("plan_generate/stream")
        .json(&json!({"instruction": "請求書の重複を検出してExcelに出力", "apply_mode": "compose"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(
        res.headers()["content-type"].to_str().unwrap(),
        "application/x-ndjson"
    );
    let frames = frames(&res.text().await.unwrap());
    let (last, events) = frames.split_last().unwrap();
    assert!(last["result"]["yaml"].is_string(), "{last}");
    assert!(!events.is_empty());
    for e in events {
        assert!(e["event"]["stage"].is_string(), "{e}");
        assert!(e["event"]["elapsed_ms"].is_u64(), "{e}");
    }
}

#[tokio::test]
async fn streamed_errors_arrive_as_the_last_frame_and_unknown_names_are_404() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), None);
    let res = server
        .api("plan_generate/stream")
        .json(&json!({"instruction": "請求書の重複を検出", "apply_mode": "llm-only"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let frames = frames(&res.text().await.unwrap());
    let last = frames.last().unwrap();
    assert_eq!(last["error"]["code"], "LLM_NOT_CONFIGURED", "{last}");
    let res = server
        .api("catalog_list/stream")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    assert_eq!(res.json::<Value>().await.unwrap()["code"], "NOT_FOUND");
}

/// Closing the HTTP connection must stop the generation, including the model call in flight:
/// a "model" that accepts the connection and never answers sees it closed by keiri.
#[tokio::test]
async fn closing_a_streamed_call_cancels_the_model_call_in_flight() {
    use tokio::io::AsyncReadExt;
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let model_url = format!("http://{}/v1", silent.local_addr().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let server = start_with_env(
        dir.path(),
        None,
        &[
            ("KEIRI_LLM_BASE_URL", model_url.as_str()),
            ("KEIRI_LLM_TIMEOUT_SECS", "300"),
        ],
    );
    let res = server
        .api("plan_generate/stream")
        .json(&json!({"instruction": "請求書の重複を検出", "apply_mode": "llm-only"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    // Wait until keiri is talking to the model, then hang up on keiri.
    let (mut model_side, _) =
        tokio::time::timeout(std::time::Duration::from_secs(60), silent.accept())
            .await
            .expect("keiri called the model")
            .unwrap();
    drop(res);
    // Read the request, then expect EOF: keiri dropped the call. Bounded, so a regression
    // fails instead of hanging (the model timeout above is far longer).
    let mut buf = vec![0u8; 64 * 1024];
    let closed = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        loop {
            match model_side.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "the model call was not cancelled");
}

/// Hanging up on a workbook patch stops it (#37.7): a patch whose formula check takes a while
/// writes its workbook when the client waits, and nothing when the client goes away first.
#[tokio::test]
async fn hanging_up_on_a_workbook_patch_stops_it_and_nothing_is_written() {
    let ws = tempfile::tempdir().unwrap();
    let seed =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/trial_balance.xlsx");
    std::fs::copy(seed, ws.path().join("seed.xlsx")).unwrap();
    let server = start(ws.path(), None);
    // A sheet of 50,000 formulas, each reading the next: seconds of formula engine work.
    let chain = json!({
        "xlsx_path": "seed.xlsx",
        "out_name": "chain.xlsx",
        "ops": [
            {"op": "add_sheet", "sheet": "S"},
            {"op": "set_value", "sheet": "S", "cell": "A50001", "value": 1},
            {"op": "fill_formula", "sheet": "S", "range": "A1:A50000", "base_cell": "A1", "formula": "=A2+1"},
        ],
    });
    let res = post(&server, "workbook_patch", chain, None).await;
    assert_eq!(res.status(), 200, "{:?}", res.text().await);
    let checked = |out: &str| {
        json!({
            "xlsx_path": "chain.xlsx",
            "out_name": out,
            "ops": [{"op": "set_value", "sheet": "S", "cell": "B1", "value": 1}],
            "preflight_formula_check": true,
        })
    };
    // Waited for: written.
    let started = std::time::Instant::now();
    let res = post(&server, "workbook_patch", checked("waited.xlsx"), None).await;
    let took = started.elapsed();
    assert_eq!(res.status(), 200);
    assert!(ws.path().join("waited.xlsx").is_file());
    // Hung up a quarter of the way through: never written, even long after it would have been.
    let gone = server
        .api("workbook_patch")
        .json(&checked("hung_up.xlsx"))
        .timeout(took / 4)
        .send()
        .await;
    assert!(gone.is_err(), "the call should have been cut: {gone:?}");
    tokio::time::sleep(took * 3).await;
    assert!(
        !ws.path().join("hung_up.xlsx").exists(),
        "a patch the client hung up on was saved"
    );
}
