//! `keiri serve`: loopback only, the API over HTTP, CORS from the environment.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};

use serde_json::{Value, json};

use super::{VALID_PLAN, catalog_dir};

struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(workspace: &std::path::Path, cors: Option<&str>) -> Server {
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
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("{line}"))
        .to_string();
    assert!(
        base.starts_with("http://127.0.0.1:"),
        "binds loopback only: {base}"
    );
    Server { child, base }
}

async fn post(base: &str, function: &str, body: Value, origin: Option<&str>) -> reqwest::Response {
    let mut req = reqwest::Client::new()
        .post(format!("{base}/api/{function}"))
        .json(&body);
    if let Some(o) = origin {
        req = req.header("origin", o);
    }
    req.send().await.unwrap()
}

#[tokio::test]
async fn api_functions_over_http() {
    let ws = tempfile::tempdir().unwrap();
    let server = start(ws.path(), None);
    let res = post(
        &server.base,
        "plan_validate",
        json!({"yaml": VALID_PLAN}),
        None,
    )
    .await;
    assert_eq!(res.status(), 200);
    let v: Value = res.json().await.unwrap();
    assert_eq!(v["valid"], true);

    let res = post(
        &server.base,
        "plan_register",
        json!({"yaml": "id: x\ngraph:\n  - {id: a, block: nope}\n"}),
        None,
    )
    .await;
    assert_eq!(res.status(), 422);
    let v: Value = res.json().await.unwrap();
    assert_eq!(v["code"], "PLAN_INVALID");
    assert_eq!(v["details"]["findings"][0]["code"], "block.unknown");

    let res = post(
        &server.base,
        "plan_register",
        json!({"yaml": VALID_PLAN}),
        None,
    )
    .await;
    assert_eq!(res.status(), 200);
    let v: Value = res.json().await.unwrap();
    assert!(
        std::path::Path::new(v["path"].as_str().unwrap())
            .starts_with(ws.path().canonicalize().unwrap().join("designs"))
    );

    let res = post(&server.base, "plan_validate", json!({"yml": 1}), None).await;
    assert_eq!(res.status(), 400);
    assert_eq!(
        res.json::<Value>().await.unwrap()["code"],
        "INVALID_REQUEST"
    );
    let res = post(&server.base, "no_such_function", json!({}), None).await;
    assert_eq!(res.status(), 404);
    let res = reqwest::Client::new()
        .post(format!("{}/api/plan_validate", server.base))
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
        &server.base,
        "catalog_list",
        json!({}),
        Some("http://localhost:5173"),
    )
    .await;
    assert_eq!(
        res.headers().get("access-control-allow-origin").unwrap(),
        "http://localhost:5173"
    );
    let res = post(
        &server.base,
        "catalog_list",
        json!({}),
        Some("http://evil.test"),
    )
    .await;
    assert!(res.headers().get("access-control-allow-origin").is_none());
}

#[tokio::test]
async fn cors_from_env_and_empty_means_none() {
    let ws = tempfile::tempdir().unwrap();
    let server = start(ws.path(), Some(" http://a.test , "));
    let res = post(
        &server.base,
        "catalog_list",
        json!({}),
        Some("http://a.test"),
    )
    .await;
    assert_eq!(
        res.headers().get("access-control-allow-origin").unwrap(),
        "http://a.test"
    );
    drop(server);
    let server = start(ws.path(), Some(""));
    let res = post(
        &server.base,
        "catalog_list",
        json!({}),
        Some("http://localhost:5173"),
    )
    .await;
    assert!(res.headers().get("access-control-allow-origin").is_none());
}
