//! `keiri serve` and `keiri mcp` under attack (issue #20): every request a web page, a
//! rebinding page or a confused tool caller can make is refused, and nothing is written.
//!
//! HTTP requests here are written by hand on a `TcpStream`, so each header — `Host`,
//! `Origin`, `Content-Type`, the token — is exactly what the test says, as a browser or an
//! attacker would send it.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::serve::{Server, start_with_env};
use super::{VALID_PLAN, catalog_dir, put};

/// Text that must never come back in an answer: it is inside every file a caller may not read.
const SECRET: &str = "TOP-SECRET-0xC0FFEE";

/// Every file under `dir` with its bytes, to prove a refused request wrote nothing.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                files.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// The port of `http://127.0.0.1:<port>`.
fn port(server: &Server) -> u16 {
    server.base.rsplit(':').next().unwrap().parse().unwrap()
}

/// One raw HTTP/1.1 request; returns the status and the body as JSON (`Null` if it is not).
fn raw(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, Value) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut text = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        text.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
    stream.write_all(text.as_bytes()).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer);
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {answer}"));
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

/// A workspace with a key in `.env`, a text file, a workbook, an outside folder with a secret,
/// a symlink out of the workspace and a settings folder with a secret in it.
struct Fixture {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    config: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    let config = super::test_config_dir(&ws);
    for d in [&ws, &outside, &config] {
        std::fs::create_dir_all(d).unwrap();
    }
    put(&outside.join("secret.txt"), &format!("{SECRET}\n"));
    put(&ws.join(".env"), "OPENAI_API_KEY=sk-victim-key\n");
    put(&ws.join("notes.txt"), "one\ntwo\nthree\n");
    put(&ws.join("cases.yaml"), "cases: []\n");
    put(&config.join("notes.txt"), &format!("{SECRET}\n"));
    std::fs::copy(workbook_fixture(), ws.join("book.xlsx")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
    Fixture {
        ws: ws.canonicalize().unwrap(),
        outside: outside.canonicalize().unwrap(),
        config,
        _dir: dir,
    }
}

/// A workbook the repository ships (the tests here are about paths and hosts, not the
/// workbook's content, so they need no third-party fixture).
fn workbook_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/trial_balance.xlsx")
}

const PATCH: &str = "@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n";
const SET_D2: &str = r#"[{"op":"set_value","sheet":"試算表","cell":"D2","value":"x"}]"#;

/// A fake "attacker" server on loopback that counts every connection it gets.
fn attacker() -> (String, Arc<AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&hits);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            counter.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (url, hits)
}

fn start(f: &Fixture) -> Server {
    start_with_env(&f.ws, None, &[])
}

/// Calls that write (or would point the LLM elsewhere) if they ran.
fn writing_calls(attacker_url: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("plan_register", json!({"yaml": VALID_PLAN})),
        (
            "apply_patch",
            json!({"filePath": "notes.txt", "patch": PATCH}),
        ),
        (
            "apply_patch",
            json!({"filePath": ".env", "patch": "@@ -1 +1,2 @@\n OPENAI_API_KEY=sk-victim-key\n+OPENAI_BASE_URL=http://evil/v1\n"}),
        ),
        (
            "documents_upload",
            json!({"name": "x.csv", "content_base64": "YSxiCg=="}),
        ),
        (
            "settings_save",
            json!({"provider": "compatible", "base_url": attacker_url}),
        ),
        (
            "workbook_patch",
            json!({"xlsx_path": "book.xlsx", "ops": serde_json::from_str::<Value>(SET_D2).unwrap(), "out_name": "out.xlsx"}),
        ),
    ]
}

#[test]
fn foreign_and_rebound_hosts_are_refused_with_421() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let f = fixture();
    let server = start(&f);
    let p = port(&server);
    let token = server.token.clone();
    let evil_with_port = format!("evil.example:{p}");
    let rebound = format!("127.0.0.1.nip.io:{p}");
    let sub = format!("localhost.evil.example:{p}");
    let other_port = format!("127.0.0.1:{}", p.wrapping_add(1));
    let before = snapshot(&f.ws);
    for host in [
        "evil.example",
        evil_with_port.as_str(),
        rebound.as_str(),
        sub.as_str(),
        other_port.as_str(),
        "127.0.0.1",
    ] {
        let (status, body) = raw(p, "GET", "/", &[("Host", host)], "");
        assert_eq!(status, 421, "GET / with Host {host}");
        assert_eq!(body["code"], "HOST_NOT_ALLOWED", "{host}");
        for (function, request) in [
            ("catalog_list", json!({})),
            ("settings_get", json!({})),
            ("llm_status", json!({})),
            ("documents_extract", json!({"file_paths": ["notes.txt"]})),
            (
                "workbook_patch",
                json!({"xlsx_path": "book.xlsx", "ops": serde_json::from_str::<Value>(SET_D2).unwrap()}),
            ),
        ] {
            let (status, body) = raw(
                p,
                "POST",
                &format!("/api/{function}"),
                &[
                    ("Host", host),
                    ("Content-Type", "application/json"),
                    ("X-Keiri-Token", token.as_str()),
                ],
                &request.to_string(),
            );
            assert_eq!(status, 421, "{function} with Host {host}: {body}");
            assert_eq!(body["code"], "HOST_NOT_ALLOWED");
            assert!(!body.to_string().contains("one\\ntwo"), "{body}");
        }
    }
    assert_eq!(snapshot(&f.ws), before, "a refused request wrote something");
    // The same request with the server's own name is served.
    for host in [format!("127.0.0.1:{p}"), format!("localhost:{p}")] {
        let (status, _) = raw(
            p,
            "POST",
            "/api/catalog_list",
            &[
                ("Host", host.as_str()),
                ("Content-Type", "application/json"),
                ("X-Keiri-Token", token.as_str()),
            ],
            "{}",
        );
        assert_eq!(status, 200, "{host}");
    }
}

#[test]
fn cross_site_simple_requests_are_refused_in_every_content_type_and_write_nothing() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let f = fixture();
    let (attacker_url, hits) = attacker();
    let server = start(&f);
    let p = port(&server);
    let before = snapshot(&f.ws);
    let mut tries = 0;
    for (function, request) in writing_calls(&attacker_url) {
        let body = request.to_string();
        for content_type in [
            Some("text/plain"),
            Some("application/x-www-form-urlencoded"),
            Some("multipart/form-data; boundary=x"),
            None,
        ] {
            for origin in [Some("http://evil.example"), Some("null"), None] {
                let mut headers = Vec::new();
                if let Some(c) = content_type {
                    headers.push(("Content-Type", c));
                }
                if let Some(o) = origin {
                    headers.push(("Origin", o));
                }
                let (status, answer) = raw(p, "POST", &format!("/api/{function}"), &headers, &body);
                let want = if origin.is_some() {
                    (403, "ORIGIN_NOT_ALLOWED")
                } else {
                    (401, "TOKEN_INVALID")
                };
                assert_eq!(
                    (status, answer["code"].as_str().unwrap_or_default()),
                    want,
                    "{function} {content_type:?} {origin:?}: {answer}"
                );
                tries += 1;
            }
            // Even with the token, only JSON is taken: a form post cannot carry it anyway.
            let mut headers = vec![("X-Keiri-Token", server.token.as_str())];
            if let Some(c) = content_type {
                headers.push(("Content-Type", c));
            }
            let (status, answer) = raw(p, "POST", &format!("/api/{function}"), &headers, &body);
            assert_eq!(status, 415, "{function} {content_type:?}: {answer}");
            assert_eq!(answer["code"], "UNSUPPORTED_MEDIA_TYPE");
        }
        // A page that could set headers still lacks the token, and a foreign Origin is
        // refused even with it.
        let json_headers = [("Content-Type", "application/json")];
        let (status, answer) = raw(p, "POST", &format!("/api/{function}"), &json_headers, &body);
        assert_eq!(
            (status, answer["code"].clone()),
            (401, json!("TOKEN_INVALID"))
        );
        let wrong = [
            ("Content-Type", "application/json"),
            ("X-Keiri-Token", "0000"),
        ];
        let (status, _) = raw(p, "POST", &format!("/api/{function}"), &wrong, &body);
        assert_eq!(status, 401);
        let foreign = [
            ("Content-Type", "application/json"),
            ("X-Keiri-Token", server.token.as_str()),
            ("Origin", "http://evil.example"),
        ];
        let (status, _) = raw(p, "POST", &format!("/api/{function}"), &foreign, &body);
        assert_eq!(status, 403);
    }
    assert_eq!(tries, 6 * 4 * 3);
    assert_eq!(snapshot(&f.ws), before, "a refused request wrote something");
    assert_eq!(hits.load(Ordering::SeqCst), 0);

    // The same bodies from the studio's own page (JSON, the token, same origin) do act, so
    // the refusals above are the guard's and not the bodies'.
    let own = format!("http://127.0.0.1:{p}");
    let headers = [
        ("Content-Type", "application/json"),
        ("X-Keiri-Token", server.token.as_str()),
        ("Origin", own.as_str()),
    ];
    let (status, answer) = raw(
        p,
        "POST",
        "/api/plan_register",
        &headers,
        &json!({"yaml": VALID_PLAN}).to_string(),
    );
    assert_eq!(status, 200, "{answer}");
    let (status, answer) = raw(
        p,
        "POST",
        "/api/apply_patch",
        &headers,
        &json!({"filePath": "notes.txt", "patch": PATCH}).to_string(),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        std::fs::read_to_string(f.ws.join("notes.txt")).unwrap(),
        "one\n2\nthree\n"
    );
}

/// The issue's chain: patch `.env` to point the LLM at the attacker, point the saved settings
/// there too, then generate a plan, which would send the key and document excerpts.
#[test]
fn the_key_exfiltration_chain_ends_with_the_attacker_receiving_nothing() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let f = fixture();
    let (attacker_url, hits) = attacker();
    let server = start(&f);
    let p = port(&server);
    let dotenv = std::fs::read(f.ws.join(".env")).unwrap();
    let chain = [
        (
            "apply_patch",
            json!({"filePath": ".env", "patch": format!("@@ -1 +1,2 @@\n OPENAI_API_KEY=sk-victim-key\n+OPENAI_BASE_URL={attacker_url}\n")}),
        ),
        (
            "settings_save",
            json!({"provider": "compatible", "base_url": attacker_url, "model": "m"}),
        ),
        (
            "plan_generate",
            json!({"instruction": "請求書の重複を検出", "apply_mode": "llm-only", "docs": ["notes.txt"]}),
        ),
    ];
    // As a web page: two cross-origin text/plain posts (the issue's exact requests).
    for (function, body) in &chain {
        for origin in [Some("http://evil.example"), None] {
            let mut headers = vec![("Content-Type", "text/plain")];
            if let Some(o) = origin {
                headers.push(("Origin", o));
            }
            let (status, answer) = raw(
                p,
                "POST",
                &format!("/api/{function}"),
                &headers,
                &body.to_string(),
            );
            assert!(matches!(status, 401 | 403), "{function}: {status} {answer}");
        }
    }
    // As a caller holding the token (an agent, a script): `.env` is never writable.
    let headers = [
        ("Content-Type", "application/json"),
        ("X-Keiri-Token", server.token.as_str()),
    ];
    for file in [".env", ".ENV", "sub/../.env", "./.env"] {
        let mut body = chain[0].1.clone();
        body["filePath"] = json!(file);
        let (status, answer) = raw(p, "POST", "/api/apply_patch", &headers, &body.to_string());
        assert!(status >= 400, "{file}: {answer}");
        let code = answer["code"].as_str().unwrap_or_default();
        // Denied, or (`sub/../.env`: no such folder) an unusable argument.
        assert!(
            matches!(code, "PATH_DENIED" | "INVALID_ARGUMENT"),
            "{file}: {answer}"
        );
    }
    assert_eq!(std::fs::read(f.ws.join(".env")).unwrap(), dotenv);
    assert!(!f.config.join("settings.json").exists());
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "the attacker received a connection"
    );
}

/// Paths every API parameter that takes one is tried with.
fn corpus(f: &Fixture) -> Vec<String> {
    let abs_secret = f.outside.join("secret.txt").display().to_string();
    let mut paths = vec![
        "../outside/secret.txt".to_string(),
        "../../../../../../etc/passwd".to_string(),
        abs_secret.clone(),
        "/etc/passwd".to_string(),
        "/proc/self/environ".to_string(),
        "link/secret.txt".to_string(),
        "notes.txt\u{0}.png".to_string(),
        "..\\outside\\secret.txt".to_string(),
        "sub\\..\\..\\outside\\secret.txt".to_string(),
        "%2e%2e/outside/secret.txt".to_string(),
        "..%2foutside%2fsecret.txt".to_string(),
        "%252e%252e%252foutside%252fsecret.txt".to_string(),
        "file:///etc/passwd".to_string(),
        format!("file://{abs_secret}"),
        "~/.bashrc".to_string(),
        "~root/.bashrc".to_string(),
        ".env".to_string(),
        ".ENV".to_string(),
        ".keiri-test-config/notes.txt".to_string(),
        f.config.join("notes.txt").display().to_string(),
        format!("{}/secret.txt", "a/".repeat(3000)),
    ];
    if !cfg!(unix) {
        paths.retain(|p| !p.starts_with("link/"));
    }
    paths
}

/// Every API function and parameter that takes a path: builds the request for one path.
type Probe = (&'static str, &'static str, fn(&str) -> Value);

/// A probe; the function argument makes each closure a plain `fn`.
fn probe(function: &'static str, param: &'static str, build: fn(&str) -> Value) -> Probe {
    (function, param, build)
}

fn http_probes() -> Vec<Probe> {
    fn ops() -> Value {
        serde_json::from_str(SET_D2).unwrap()
    }
    vec![
        probe(
            "documents_extract",
            "file_paths",
            |p| json!({"file_paths": [p]}),
        ),
        probe(
            "documents_digest",
            "file_paths",
            |p| json!({"file_paths": [p]}),
        ),
        probe(
            "documents_extract_sections",
            "file_path",
            |p| json!({"file_path": p, "start_line": 1}),
        ),
        probe(
            "documents_metrics",
            "file_paths",
            |p| json!({"file_paths": [p]}),
        ),
        probe(
            "workbook_patch",
            "xlsx_path",
            |p| json!({"xlsx_path": p, "ops": []}),
        ),
        probe(
            "workbook_patch",
            "out_dir",
            |p| json!({"xlsx_path": "book.xlsx", "ops": ops(), "out_dir": p}),
        ),
        probe(
            "workbook_patch",
            "out_name",
            |p| json!({"xlsx_path": "book.xlsx", "ops": ops(), "out_name": p}),
        ),
        probe(
            "blocks_retrieve",
            "docs",
            |p| json!({"instruction": "請求書", "mode": "bm25", "docs": [p]}),
        ),
        probe("blocks_retrieve_eval", "file", |p| json!({"file": p})),
        probe(
            "apply_patch",
            "filePath",
            |p| json!({"filePath": p, "patch": PATCH}),
        ),
        probe(
            "plan_generate",
            "docs",
            |p| json!({"instruction": "請求書の重複", "apply_mode": "compose", "templates": ["invoice_duplicate_detection"], "docs": [p]}),
        ),
        probe("planner_eval", "cases", |p| json!({"cases": p})),
        probe(
            "chat_send",
            "plan_path",
            |p| json!({"message": "x", "plan_path": p}),
        ),
    ]
}

/// A refusal: an error answer (or a per-file error) naming a path refusal, and no secret.
fn refused(answer: &str) -> bool {
    let secret =
        answer.contains(SECRET) || answer.contains("root:x:0") || answer.contains("sk-victim");
    let coded = [
        "PATH_DENIED",
        "INVALID_PATH",
        "INVALID_ARGUMENT",
        "INVALID_REQUEST",
    ]
    .iter()
    .any(|c| answer.contains(c));
    coded && !secret
}

fn outside_untouched(f: &Fixture) {
    let names: Vec<_> = std::fs::read_dir(&f.outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["secret.txt"], "something was written outside");
    let parent: Vec<_> = std::fs::read_dir(f.outside.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut parent = parent;
    parent.sort();
    assert_eq!(parent, ["outside", "ws"]);
}

#[test]
fn the_traversal_corpus_is_refused_over_http() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let f = fixture();
    let server = start(&f);
    let p = port(&server);
    let headers = [
        ("Content-Type", "application/json"),
        ("X-Keiri-Token", server.token.as_str()),
    ];
    let dotenv = std::fs::read(f.ws.join(".env")).unwrap();
    let mut failures = Vec::new();
    let mut total = 0;
    for (function, param, build) in http_probes() {
        for path in corpus(&f) {
            let (status, answer) = raw(
                p,
                "POST",
                &format!("/api/{function}"),
                &headers,
                &build(&path).to_string(),
            );
            total += 1;
            let text = format!("{status} {answer}");
            if !refused(&text) {
                failures.push(format!("{function}.{param} {path:?}: {text}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {total} not refused:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(total >= 13 * 20);
    outside_untouched(&f);
    assert_eq!(std::fs::read(f.ws.join(".env")).unwrap(), dotenv);
}

// ---------------------------------------------------------------------------------------------
// keiri mcp

/// A `keiri mcp` whose stdout is read on a thread, so a silent server fails the test instead
/// of hanging it.
struct Mcp {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Mcp {
    fn start(f: &Fixture) -> Mcp {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("keiri"))
            .arg("--workspace")
            .arg(&f.ws)
            .arg("--catalog")
            .arg(catalog_dir())
            .args(["mcp", "--root"])
            .arg(&f.ws)
            .env("KEIRI_CONFIG_DIR", &f.config)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut mcp = Mcp { child, lines };
        let init = mcp.request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        );
        assert!(init.get("result").is_some(), "{init}");
        mcp.send_line(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        );
        mcp
    }

    fn send_line(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn receive(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("no answer from keiri mcp within 60 s");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {line}"))
    }

    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send_line(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        let answer = self.receive();
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }
}

#[test]
fn mcp_answers_every_malformed_or_oversized_request_and_stays_up() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let f = fixture();
    let mut mcp = Mcp::start(&f);
    let cases: Vec<(String, Value, i64)> = vec![
        (
            r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"arguments":{}}}"#.into(),
            json!(11),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":"s12","method":"tools/call"}"#.into(),
            json!("s12"),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":17,"method":7}"#.into(),
            json!(17),
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":18,"method":"no/such"}"#.into(),
            json!(18),
            -32601,
        ),
        (
            r#"{"jsonrpc":"2.0","id":13,"method":"tools/list""#.into(),
            json!(13),
            -32700,
        ),
        (r#"{"jsonrpc":"2.0","id":14}"#.into(), json!(14), -32600),
        ("garbage".into(), Value::Null, -32700),
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{{"name":"check_code_scale","arguments":{{"pad":"{}"}}}}}}"#,
                "a".repeat(17 * 1024 * 1024)
            ),
            json!(15),
            -32600,
        ),
    ];
    for (line, id, code) in &cases {
        mcp.send_line(line);
        let answer = mcp.receive();
        assert_eq!(answer["id"], *id, "{}", &line[..line.len().min(80)]);
        assert_eq!(answer["error"]["code"], *code, "{answer}");
    }
    // Still serving.
    let listed = mcp.request(16, "tools/list", json!({}));
    assert!(
        listed["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{listed}"
    );
}

#[test]
fn the_traversal_corpus_is_refused_over_mcp() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let f = fixture();
    let mut mcp = Mcp::start(&f);
    let dotenv = std::fs::read(f.ws.join(".env")).unwrap();
    let probes: Vec<Probe> = vec![
        probe(
            "check_code_scale",
            "file_paths",
            |p| json!({"file_paths": [p], "output_format": "json"}),
        ),
        probe(
            "extract_code_section",
            "file_path",
            |p| json!({"file_path": p, "start_line": 1, "output_format": "json"}),
        ),
        probe(
            "exstruct_patch",
            "xlsx_path",
            |p| json!({"xlsx_path": p, "ops": []}),
        ),
        probe(
            "exstruct_patch",
            "out_dir",
            |p| json!({"xlsx_path": "book.xlsx", "ops": serde_json::from_str::<Value>(SET_D2).unwrap(), "out_dir": p}),
        ),
        probe(
            "exstruct_patch",
            "out_name",
            |p| json!({"xlsx_path": "book.xlsx", "ops": serde_json::from_str::<Value>(SET_D2).unwrap(), "out_name": p}),
        ),
        probe(
            "apply_patch",
            "filePath",
            |p| json!({"filePath": p, "patch": PATCH}),
        ),
        probe(
            "retrieve_blocks",
            "docs",
            |p| json!({"instruction": "請求書", "mode": "bm25", "docs": [p]}),
        ),
        probe(
            "plan_generate",
            "docs",
            |p| json!({"instruction": "請求書の重複", "apply_mode": "compose", "templates": ["invoice_duplicate_detection"], "docs": [p]}),
        ),
        // Plan runs (issue 37): the same walls for the files a plan's blocks read.
        probe(
            "run_plan",
            "csv.read path",
            |p| json!({"yaml": format!("id: probe\ngraph:\n  - {{id: read, block: csv.read, in: {{path: {}}}}}\n", json!(p))}),
        ),
        probe(
            "run_plan",
            "file.list_folder folder",
            |p| json!({"yaml": format!("id: probe\ngraph:\n  - {{id: list, block: file.list_folder, in: {{folder: {}}}}}\n", json!(p))}),
        ),
        probe(
            "run_plan",
            "excel.write_table base_workbook",
            |p| json!({"yaml": format!("id: probe\ngraph:\n  - {{id: save, block: excel.write_table, in: {{rows: [{{a: 1}}], base_workbook: {}}}}}\n", json!(p))}),
        ),
    ];
    let mut failures = Vec::new();
    let mut id = 100;
    for (tool, param, build) in &probes {
        for path in corpus(&f) {
            id += 1;
            let answer = mcp.request(
                id,
                "tools/call",
                json!({"name": tool, "arguments": build(&path)}),
            );
            let text = answer.to_string();
            if !refused(&text) {
                failures.push(format!("{tool}.{param} {path:?}: {text}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} not refused:\n{}",
        failures.len(),
        failures.join("\n")
    );
    outside_untouched(&f);
    assert_eq!(std::fs::read(f.ws.join(".env")).unwrap(), dotenv);
}

#[test]
fn arbitrary_http_bodies_always_get_a_coded_answer() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    let f = fixture();
    let server = start(&f);
    let p = port(&server);
    let token = server.token.clone();
    let functions: Vec<&str> = vec![
        "catalog_list",
        "plan_validate",
        "plan_dry_run",
        "plan_register",
        "documents_extract",
        "documents_digest",
        "documents_extract_sections",
        "documents_metrics",
        "workbook_patch",
        "blocks_retrieve",
        "apply_patch",
        "templates_list",
        "requirements_answer",
        "documents_upload",
        "settings_get",
        "chat_approve",
        "chat_undo",
        "skills_list",
        "nope",
    ];
    let body = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..64)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        "[{}\\[\\]\",:a-z0-9 ]{0,64}",
        ("[a-z_]{1,12}", "[a-z0-9./ ]{0,16}").prop_map(|(k, v)| format!("{{\"{k}\": \"{v}\"}}")),
    ];
    let mut runner = TestRunner::new(Config {
        cases: 96,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&(0..functions.len(), body), |(i, body)| {
            let function = functions[i];
            let (status, answer) = raw(
                p,
                "POST",
                &format!("/api/{function}"),
                &[
                    ("Content-Type", "application/json"),
                    ("X-Keiri-Token", token.as_str()),
                ],
                &body,
            );
            prop_assert!(
                status != 500 || answer["code"].is_string(),
                "{function} {body:?}: {status} {answer}"
            );
            if status >= 400 {
                prop_assert!(
                    answer["code"].as_str().is_some_and(|c| !c.is_empty()),
                    "{function} {body:?}: {status} {answer}"
                );
                prop_assert!(answer["message"].is_string());
            }
            Ok(())
        })
        .unwrap();
    // Still up and still serving.
    let (status, _) = raw(
        p,
        "POST",
        "/api/catalog_list",
        &[
            ("Content-Type", "application/json"),
            ("X-Keiri-Token", token.as_str()),
        ],
        "{}",
    );
    assert_eq!(status, 200);
}

// ---------------------------------------------------------------------------------------------
// The command line trusts its own user.

#[test]
fn the_cli_reads_a_file_the_user_names_anywhere_unless_given_a_root() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let f = fixture();
    let elsewhere = tempfile::tempdir().unwrap();
    let file = elsewhere.path().join("請求書.txt");
    put(&file, "請求番号,金額\nINV-001,110000\n");
    let abs = file.display().to_string();
    let out = super::keiri(&f.ws)
        .args(["--json", "extract", abs.as_str()])
        .assert()
        .success();
    let v = super::stdout_json(&out);
    assert_eq!(v["success"], true, "{v}");
    assert!(v.to_string().contains("INV-001"), "{v}");

    let root = f.ws.display().to_string();
    let out = super::keiri(&f.ws)
        .args(["--json", "--root", root.as_str(), "extract", abs.as_str()])
        .assert();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.get_output().stdout),
        String::from_utf8_lossy(&out.get_output().stderr)
    );
    assert!(text.contains("PATH_DENIED"), "{text}");
    assert!(!text.contains("INV-001"), "{text}");
}

/// `keiri run` (issue 37): a plan's blocks read inside the workspace, or inside `--root`, and
/// the files named on the command line — never the corpus. Each run exits 1 with
/// `PATH_DENIED` and prints nothing of a secret; a file the user named with `--input` still
/// reads, and `--root` narrows even that.
#[test]
fn keiri_run_refuses_the_corpus_in_a_plans_blocks() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let f = fixture();
    let plan = f.ws.join("probe.yaml");
    let mut failures = Vec::new();
    for path in corpus(&f) {
        if path.contains('\u{0}') {
            continue; // not a YAML string a file can hold; refused by the tool probes
        }
        put(
            &plan,
            &format!(
                "id: probe\ngraph:\n  - {{id: read, block: csv.read, in: {{path: {}}}}}\n",
                json!(path)
            ),
        );
        for root in [None, Some(f.ws.display().to_string())] {
            let mut cmd = super::keiri(&f.ws);
            if let Some(root) = &root {
                cmd.args(["--root", root.as_str()]);
            }
            let out = cmd.args(["run", "probe.yaml"]).output().unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            if out.status.code() != Some(1) || !refused(&text) {
                failures.push(format!("{path:?} (root {root:?}): {:?} {text}", out.status));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} not refused:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The user's own argument: a file outside the workspace named with --input reads …
    let elsewhere = tempfile::tempdir().unwrap();
    let named = elsewhere.path().join("請求書.csv");
    put(&named, "請求番号,金額\nINV-001,110000\n");
    put(
        &plan,
        "id: probe\nvars: {src: x}\ngraph:\n  - {id: read, block: csv.read, in: {path: \"${vars.src}\"}}\n",
    );
    let input = format!("src={}", named.display());
    super::keiri(&f.ws)
        .args(["run", "probe.yaml", "--input", input.as_str()])
        .assert()
        .success();
    // … unless --root says where files may come from.
    let root = f.ws.display().to_string();
    let out = super::keiri(&f.ws)
        .args([
            "--root",
            root.as_str(),
            "run",
            "probe.yaml",
            "--input",
            input.as_str(),
        ])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_ne!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("PATH_DENIED"), "{text}");
    outside_untouched(&f);
}

/// `keiri --json catalog | head -c 16`: the reader closes the pipe after a few bytes of an
/// answer far larger than a pipe's buffer; keiri ends quietly with status 0 instead of
/// panicking (status 101) on the broken pipe.
#[test]
fn a_closed_stdout_pipe_is_a_quiet_exit_not_a_panic() {
    let ws = tempfile::tempdir().unwrap();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("keiri"))
        .arg("--workspace")
        .arg(ws.path())
        .arg("--catalog")
        .arg(catalog_dir())
        .env("KEIRI_CONFIG_DIR", super::test_config_dir(ws.path()))
        .arg("--json")
        .arg("catalog")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
