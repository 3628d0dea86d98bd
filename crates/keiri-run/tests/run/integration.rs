//! `integration/*` blocks: HTTP calls and webhooks against a local server on 127.0.0.1 (and
//! their refusal when the host is not allowed), evidence archives, schedule triggers.
//! Expected values are worked out by hand; the clock is 2025-03-31 09:30 JST (a Monday).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};

use keiri_run::block::{BlockError, ErrorCode};
use serde_json::{Value as Json, json};

use crate::matching::{run_block, run_block_in, run_block_noted, run_block_with};

// ---------------------------------------------------------------------------------------
// A local HTTP server

/// A request the local server received.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A one-connection-per-request HTTP/1.1 server on 127.0.0.1 with a few fixed routes.
struct Server {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let log = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let log = Arc::clone(&log);
                std::thread::spawn(move || handle(stream, port, &log));
            }
        });
        Server { port, seen }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn handle(stream: TcpStream, port: u16, log: &Mutex<Vec<Seen>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).unwrap();
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((n, v)) = h.split_once(':') {
            headers.push((n.trim().to_string(), v.trim().to_string()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let seen = Seen {
        method,
        path,
        headers,
        body,
    };
    log.lock().unwrap().push(seen.clone());

    let route = seen.path.split('?').next().unwrap_or("");
    let (status, content_type, extra, payload): (&str, &str, String, Vec<u8>) = match route {
        "/echo" => {
            let echo = json!({
                "method": seen.method, "path": seen.path,
                "authorization": seen.header("authorization"),
                "content_type": seen.header("content-type"),
                "body": String::from_utf8_lossy(&seen.body),
            });
            (
                "200 OK",
                "application/json",
                String::new(),
                echo.to_string().into_bytes(),
            )
        }
        "/sjis" => {
            let (bytes, _, _) = encoding_rs::SHIFT_JIS.encode("請求書 3月分 ￥110,000");
            (
                "200 OK",
                "text/plain; charset=Shift_JIS",
                String::new(),
                bytes.into_owned(),
            )
        }
        "/redirect-same" => (
            "302 Found",
            "text/plain",
            "Location: /echo\r\n".to_string(),
            Vec::new(),
        ),
        "/redirect-other" => (
            "302 Found",
            "text/plain",
            format!("Location: http://localhost:{port}/echo\r\n"),
            Vec::new(),
        ),
        "/redirect-to" => (
            "302 Found",
            "text/plain",
            format!(
                "Location: {}\r\n",
                seen.path.split_once("?u=").map_or("", |(_, u)| u)
            ),
            Vec::new(),
        ),
        "/missing" => (
            "404 Not Found",
            "text/plain; charset=utf-8",
            String::new(),
            "見つかりません".as_bytes().to_vec(),
        ),
        "/big" => (
            "200 OK",
            "application/octet-stream",
            String::new(),
            vec![b'0'; 10 * 1024 * 1024 + 1],
        ),
        "/slow" => {
            std::thread::sleep(std::time::Duration::from_secs(3));
            ("200 OK", "text/plain", String::new(), b"late".to_vec())
        }
        "/hook" => (
            "200 OK",
            "text/plain",
            "Set-Cookie: session=secret\r\n".to_string(),
            b"ok".to_vec(),
        ),
        _ => (
            "500 Internal Server Error",
            "text/plain",
            String::new(),
            Vec::new(),
        ),
    };
    let mut stream = stream;
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n",
        payload.len()
    );
    // The client may hang up first (a refused body, a timeout): that is not the test's failure.
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&payload);
}

/// The allowlist entry of the local server: its host and its port.
fn local(server: &Server) -> Vec<String> {
    vec![format!("127.0.0.1:{}", server.port)]
}

fn call(id: &str, inputs: Json, allow: &[String]) -> Result<Json, BlockError> {
    let dir = tempfile::tempdir().unwrap();
    run_block_in(id, dir.path(), inputs, false, allow)
}

// ---------------------------------------------------------------------------------------
// http.request

#[test]
fn http_request_calls_an_allowed_host_and_parses_the_answer() {
    let server = Server::start();
    // GET with a query (Japanese values percent-encoded as UTF-8) and a bearer token.
    let out = call(
        "http.request",
        json!({"url": server.url("/echo"), "query": {"取引先": "山田商事", "月": 3, "区分": ["課税", "非課税"]},
               "headers": {"Authorization": "Bearer t0ken"}}),
        &local(&server),
    )
    .unwrap();
    assert_eq!(out["status"], 200);
    assert_eq!(out["headers"]["content-type"], "application/json");
    assert_eq!(out["body"]["method"], "GET");
    assert_eq!(
        out["body"]["path"],
        "/echo?%E5%8F%96%E5%BC%95%E5%85%88=%E5%B1%B1%E7%94%B0%E5%95%86%E4%BA%8B&%E6%9C%88=3&%E5%8C%BA%E5%88%86=%E8%AA%B2%E7%A8%8E&%E5%8C%BA%E5%88%86=%E9%9D%9E%E8%AA%B2%E7%A8%8E"
    );
    assert_eq!(out["body"]["authorization"], "Bearer t0ken");

    // POST: an object is sent as JSON, a string as text.
    let out = call(
        "http.request",
        json!({"method": "POST", "url": server.url("/echo"), "body": {"仕訳": [{"借方": "旅費交通費", "金額": 3480}]}}),
        &local(&server),
    )
    .unwrap();
    assert_eq!(out["body"]["content_type"], "application/json");
    assert_eq!(
        serde_json::from_str::<Json>(out["body"]["body"].as_str().unwrap()).unwrap(),
        json!({"仕訳": [{"借方": "旅費交通費", "金額": 3480}]})
    );
    let out = call(
        "http.request",
        json!({"method": "PUT", "url": server.url("/echo"), "body": "締め完了"}),
        &local(&server),
    )
    .unwrap();
    assert_eq!(
        (
            out["body"]["method"].clone(),
            out["body"]["content_type"].clone(),
            out["body"]["body"].clone()
        ),
        (
            json!("PUT"),
            json!("text/plain; charset=utf-8"),
            json!("締め完了")
        )
    );

    // Text in the charset the server names.
    let out = call(
        "http.request",
        json!({"url": server.url("/sjis")}),
        &local(&server),
    )
    .unwrap();
    assert_eq!(out["body"], "請求書 3月分 ￥110,000");

    // A redirect to the same host is followed; the allowlist entry may be written as a URL.
    let out = call(
        "http.request",
        json!({"url": server.url("/redirect-same")}),
        &[format!("HTTP://127.0.0.1:{}/", server.port)],
    )
    .unwrap();
    assert_eq!(out["body"]["path"], "/echo");

    // A cookie in the answer is not kept in the outputs.
    let out = call(
        "http.request",
        json!({"url": server.url("/hook")}),
        &local(&server),
    )
    .unwrap();
    assert_eq!(out["headers"]["set-cookie"], "(redacted)");
    assert_eq!(out["body"], "ok");
}

#[test]
fn http_request_refuses_hosts_that_are_not_allowed() {
    let server = Server::start();
    // (allowlist, url): none of these may connect.
    let cases: Vec<(Vec<String>, String)> = vec![
        (vec![], server.url("/echo")),
        // The host without the port: only ports 80 and 443 of it.
        (vec!["127.0.0.1".into()], server.url("/echo")),
        (
            vec!["localhost".into()],
            format!("http://localhost:{}/echo", server.port),
        ),
        // The right port under another scheme.
        (
            vec![format!("https://127.0.0.1:{}", server.port)],
            server.url("/echo"),
        ),
        (
            vec!["127.0.0.2".into(), "example.com".into()],
            server.url("/echo"),
        ),
        (vec!["*.0.0.1".into()], server.url("/echo")),
        (
            local(&server),
            format!("http://localhost:{}/echo", server.port),
        ),
    ];
    for (allow, url) in cases {
        let err = call("http.request", json!({"url": url}), &allow).unwrap_err();
        assert_eq!(
            err.code,
            ErrorCode::HostNotAllowed,
            "{allow:?} {url}: {err}"
        );
        let (ja, en) = *err.hint.clone().unwrap();
        assert!(
            ja.contains("設定") && en.contains("settings"),
            "{ja} / {en}"
        );
    }
    assert!(server.seen().is_empty(), "{:?}", server.seen());
    // A wildcard entry allows the subdomains of a name, not the name's look-alikes.
    let err = call(
        "http.request",
        json!({"url": "https://evil-example.com/api"}),
        &["*.example.com".to_string()],
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::HostNotAllowed);

    // The redirect to localhost (another host name) is refused after the first request.
    let err = call(
        "http.request",
        json!({"url": server.url("/redirect-other")}),
        &local(&server),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::HostNotAllowed, "{err}");
    assert!(
        err.message_en.contains(&format!(
            "redirect to host http://localhost:{}",
            server.port
        )),
        "{}",
        err.message_en
    );
    assert_eq!(
        server
            .seen()
            .iter()
            .map(|s| s.path.as_str())
            .collect::<Vec<_>>(),
        ["/redirect-other"]
    );
}

#[test]
fn http_request_redirects_only_within_the_allowlist_and_records_each_decision() {
    let (a, b) = (Server::start(), Server::start());
    let to_b = a.url(&format!("/redirect-to?u=http://127.0.0.1:{}/echo", b.port));
    let dir = tempfile::tempdir().unwrap();
    let redirects = |notes: Vec<keiri_run::block::Note>| -> Vec<(bool, String)> {
        notes
            .into_iter()
            .filter_map(|n| match n {
                keiri_run::block::Note::Redirect(r) => Some((r.followed, r.reason)),
                keiri_run::block::Note::Llm(_) | keiri_run::block::Note::Warning(_) => None,
            })
            .collect()
    };

    // Only a's port is allowed: the redirect to b's port is refused, b never sees a request.
    let (result, notes) =
        run_block_noted("http.request", dir.path(), json!({"url": to_b}), &local(&a));
    let err = result.unwrap_err();
    assert_eq!(err.code, ErrorCode::HostNotAllowed, "{err}");
    assert!(
        err.message_en
            .contains(&format!("redirect to host http://127.0.0.1:{}", b.port)),
        "{}",
        err.message_en
    );
    assert!(b.seen().is_empty(), "{:?}", b.seen());
    assert_eq!(redirects(notes), [(false, "not_allowed".to_string())]);

    // Both allowed: followed, and recorded as followed.
    let both = [local(&a), local(&b)].concat();
    let (result, notes) = run_block_noted("http.request", dir.path(), json!({"url": to_b}), &both);
    assert_eq!(result.unwrap()["body"]["path"], "/echo");
    assert_eq!(b.seen().len(), 1);
    assert_eq!(redirects(notes), [(true, "allowed".to_string())]);

    // follow_redirects: false answers with the redirect itself.
    let (result, notes) = run_block_noted(
        "http.request",
        dir.path(),
        json!({"url": to_b, "follow_redirects": false, "expected_status": [302]}),
        &both,
    );
    let out = result.unwrap();
    assert_eq!(out["status"], 302);
    assert_eq!(
        out["headers"]["location"],
        format!("http://127.0.0.1:{}/echo", b.port)
    );
    assert_eq!(b.seen().len(), 1);
    assert_eq!(redirects(notes), [(false, "disabled".to_string())]);
}

#[test]
fn http_request_bounds_status_size_and_time() {
    let server = Server::start();
    let cases = [
        // 404 is not 2xx.
        (
            json!({"url": server.url("/missing")}),
            ErrorCode::BlockFailed,
        ),
        // 10 MB + 1 byte is one byte too many.
        (json!({"url": server.url("/big")}), ErrorCode::BlockFailed),
        // The server sleeps 3 s.
        (
            json!({"url": server.url("/slow"), "timeout_ms": 300}),
            ErrorCode::Timeout,
        ),
        (
            json!({"url": server.url("/echo"), "timeout_ms": 300001}),
            ErrorCode::InputInvalid,
        ),
        (
            json!({"url": "ftp://127.0.0.1/a.csv"}),
            ErrorCode::InputInvalid,
        ),
        (json!({"url": "請求書"}), ErrorCode::InputInvalid),
        (
            json!({"url": server.url("/echo"), "method": "TRACE"}),
            ErrorCode::InputInvalid,
        ),
        (
            json!({"url": server.url("/echo"), "headers": {"X-Bad": "a\nb"}}),
            ErrorCode::InputInvalid,
        ),
        (
            json!({"url": server.url("/echo"), "expected_status": [201]}),
            ErrorCode::BlockFailed,
        ),
    ];
    for (inputs, want) in cases {
        match call("http.request", inputs.clone(), &local(&server)) {
            Err(e) => assert_eq!(e.code, want, "{inputs}: {e}"),
            Ok(out) => panic!("{inputs} should fail with {want:?}, got {out}"),
        }
    }
    let err = call(
        "http.request",
        json!({"url": server.url("/missing")}),
        &local(&server),
    )
    .unwrap_err();
    assert!(
        err.message_ja.contains("404") && err.message_ja.contains("見つかりません"),
        "{}",
        err.message_ja
    );
    // An expected 404 is a success, with its text body.
    let out = call(
        "http.request",
        json!({"url": server.url("/missing"), "expected_status": [200, 404]}),
        &local(&server),
    )
    .unwrap();
    assert_eq!(
        (out["status"].clone(), out["body"].clone()),
        (json!(404), json!("見つかりません"))
    );
}

// ---------------------------------------------------------------------------------------
// notify.send

#[test]
fn notify_send_records_to_a_file_without_any_network() {
    let dir = tempfile::tempdir().unwrap();
    let send = |subject: &str| {
        run_block(
            "notify.send",
            dir.path(),
            json!({"channel": "file", "to": ["keiri@example.co.jp", "#月次決算"], "subject": subject,
                   "body": "例外が 3 件あります。", "attachments": ["outputs/exception_report.xlsx"]}),
        )
        .unwrap()
    };
    let first = send("3月分 例外レポート");
    let second = send("3月分 例外レポート（再送）");
    assert_eq!(
        first,
        json!({"sent": true, "message_id": "notifications.jsonl:1"})
    );
    assert_eq!(second["message_id"], "notifications.jsonl:2");
    let text = std::fs::read_to_string(dir.path().join("out/notifications.jsonl")).unwrap();
    let lines: Vec<Json> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines[0],
        json!({"time": "2025-03-31T09:30:00+09:00", "channel": "file",
               "to": ["keiri@example.co.jp", "#月次決算"], "subject": "3月分 例外レポート",
               "body": "例外が 3 件あります。", "attachments": ["outputs/exception_report.xlsx"],
               "webhook": null})
    );
    assert_eq!(lines[1]["subject"], "3月分 例外レポート（再送）");
}

#[test]
fn notify_send_posts_to_slack_and_teams_webhooks_on_allowed_hosts() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    for channel in ["slack", "teams"] {
        let out = run_block_in(
            "notify.send",
            dir.path(),
            json!({"channel": channel, "subject": "支払予定", "body": "3/31 支払 12 件 ¥4,620,000",
                   "webhook_url": server.url("/hook")}),
            false,
            &local(&server),
        )
        .unwrap();
        assert_eq!(out, json!({"sent": true, "message_id": null}));
    }
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    assert!(seen.iter().all(|s| s.method == "POST" && s.path == "/hook"));
    let body = |i: usize| serde_json::from_slice::<Json>(&seen[i].body).unwrap();
    assert_eq!(
        body(0),
        json!({"text": "*支払予定*\n3/31 支払 12 件 ¥4,620,000"})
    );
    let card = &body(1)["attachments"][0];
    assert_eq!(
        card["contentType"],
        "application/vnd.microsoft.card.adaptive"
    );
    assert_eq!(
        card["content"]["body"],
        json!([{"type": "TextBlock", "text": "支払予定", "weight": "Bolder", "size": "Medium", "wrap": true},
               {"type": "TextBlock", "text": "3/31 支払 12 件 ¥4,620,000", "wrap": true}])
    );
    // The record keeps the webhook's host, never its path (the path is the secret).
    let text = std::fs::read_to_string(dir.path().join("out/notifications.jsonl")).unwrap();
    assert!(!text.contains("/hook"), "{text}");
    assert!(text.contains("\"webhook\":\"http://127.0.0.1\""), "{text}");

    // Not allowed: refused before connecting, and nothing recorded.
    let dir = tempfile::tempdir().unwrap();
    let err = run_block(
        "notify.send",
        dir.path(),
        json!({"channel": "slack", "body": "x", "webhook_url": server.url("/hook")}),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::HostNotAllowed);
    assert_eq!(server.seen().len(), 2);
    assert!(!dir.path().join("out/notifications.jsonl").exists());

    let cases = [
        // Slack without a webhook, email without an SMTP client.
        json!({"channel": "slack", "body": "x"}),
        json!({"channel": "email", "to": "keiri@example.co.jp", "body": "x"}),
        json!({"channel": "fax", "body": "x"}),
        json!({"channel": "teams", "body": "x", "webhook_url": "file:///etc/passwd"}),
    ];
    for inputs in cases {
        let err = call("notify.send", inputs.clone(), &local(&server)).unwrap_err();
        assert_eq!(err.code, ErrorCode::InputInvalid, "{inputs}: {err}");
    }
}

// ---------------------------------------------------------------------------------------
// evidence.archive

fn zip_entries(path: &Path) -> Vec<(String, Vec<u8>)> {
    let mut archive = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    (0..archive.len())
        .map(|i| {
            let mut f = archive.by_index(i).unwrap();
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes).unwrap();
            (f.name().unwrap().to_string(), bytes)
        })
        .collect()
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

const SHA_ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
const SHA_EMPTY: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

#[test]
fn evidence_archive_zips_the_files_with_their_hashes_and_search_fields() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("証憑/4月")).unwrap();
    keiri_fs::write_atomic(&dir.path().join("証憑/請求書_山田商事.pdf"), b"abc").unwrap();
    keiri_fs::write_atomic(&dir.path().join("証憑/領収書.jpg"), b"").unwrap();
    keiri_fs::write_atomic(&dir.path().join("証憑/4月/領収書.jpg"), b"abc").unwrap();
    let files = json!([
        {"path": "証憑/請求書_山田商事.pdf", "date": "令和7年3月10日", "amount": "¥110,000",
         "counterparty": "山田商事", "doc_type": "請求書"},
        "証憑/領収書.jpg",
        {"path": "証憑/4月/領収書.jpg", "date": "2025/04/01", "amount": 3480},
    ]);
    let out = run_block(
        "evidence.archive",
        dir.path(),
        json!({"files": files, "label": "2025-03 月次決算"}),
    )
    .unwrap();
    // The second 領収書.jpg becomes 領収書_2.jpg inside the archive.
    assert_eq!(
        out["archived"],
        json!([
            {"source": "証憑/請求書_山田商事.pdf", "path": "請求書_山田商事.pdf", "sha256": SHA_ABC},
            {"source": "証憑/領収書.jpg", "path": "領収書.jpg", "sha256": SHA_EMPTY},
            {"source": "証憑/4月/領収書.jpg", "path": "領収書_2.jpg", "sha256": SHA_ABC},
        ])
    );
    // Retention: 2025-03-31 + 7 years. 3 + 0 + 3 bytes.
    assert_eq!(
        out["summary"],
        json!({"archived_count": 3, "skipped_count": 0, "total_bytes": 6,
               "retention_years": 7, "retention_until": "2032-03-31"})
    );
    let zip_path = dir.path().join("out/evidence/2025-03 月次決算.zip");
    assert_eq!(out["archive_path"], json!(zip_path.display().to_string()));
    let entries = zip_entries(&zip_path);
    let names: Vec<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "請求書_山田商事.pdf",
            "領収書.jpg",
            "領収書_2.jpg",
            "manifest.json"
        ]
    );
    assert_eq!(entries[0].1, b"abc");
    let manifest: Json = serde_json::from_slice(&entries[3].1).unwrap();
    assert_eq!(
        manifest,
        json!({"label": "2025-03 月次決算", "created_at": "2025-03-31T09:30:00+09:00",
        "retention_years": 7, "retention_until": "2032-03-31", "file_count": 3,
        "files": [
          {"name": "請求書_山田商事.pdf", "source": "証憑/請求書_山田商事.pdf", "sha256": SHA_ABC,
           "size": 3, "date": "2025-03-10", "amount": 110000, "counterparty": "山田商事", "doc_type": "請求書"},
          {"name": "領収書.jpg", "source": "証憑/領収書.jpg", "sha256": SHA_EMPTY, "size": 0,
           "date": null, "amount": null, "counterparty": null, "doc_type": null},
          {"name": "領収書_2.jpg", "source": "証憑/4月/領収書.jpg", "sha256": SHA_ABC, "size": 3,
           "date": "2025-04-01", "amount": 3480, "counterparty": null, "doc_type": null},
        ]})
    );
    // Beside the zip: the same manifest plus the zip's own name and hash.
    let beside_path = dir
        .path()
        .join("out/evidence/2025-03 月次決算.manifest.json");
    assert_eq!(
        out["manifest_path"],
        json!(beside_path.display().to_string())
    );
    let mut beside: Json = serde_json::from_slice(&std::fs::read(&beside_path).unwrap()).unwrap();
    assert_eq!(beside["archive"], "2025-03 月次決算.zip");
    assert_eq!(
        beside["archive_sha256"],
        json!(sha256(&std::fs::read(&zip_path).unwrap()))
    );
    let map = beside.as_object_mut().unwrap();
    map.remove("archive");
    map.remove("archive_sha256");
    assert_eq!(beside, manifest);

    // Again with the same label: renamed by default, kept with skip.
    let again = run_block(
        "evidence.archive",
        dir.path(),
        json!({"files": ["証憑/領収書.jpg"], "label": "2025-03 月次決算", "retention_years": 10}),
    )
    .unwrap();
    assert!(
        again["archive_path"]
            .as_str()
            .unwrap()
            .ends_with("2025-03 月次決算_1.zip")
    );
    assert!(
        again["manifest_path"]
            .as_str()
            .unwrap()
            .ends_with("2025-03 月次決算_1.manifest.json")
    );
    assert_eq!(again["summary"]["retention_until"], "2035-03-31");
    let skipped = run_block(
        "evidence.archive",
        dir.path(),
        json!({"files": ["証憑/領収書.jpg"], "label": "2025-03 月次決算", "on_conflict": "skip"}),
    )
    .unwrap();
    assert_eq!(
        (
            skipped["archived"].clone(),
            skipped["archive_path"].clone(),
            skipped["summary"]["skipped_count"].clone()
        ),
        (json!([]), json!(""), json!(1))
    );
}

#[test]
fn evidence_archive_goes_to_the_workspace_with_write_and_refuses_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    keiri_fs::write_atomic(&dir.path().join("仕訳.csv"), b"abc").unwrap();
    let out = run_block_with(
        "evidence.archive",
        dir.path(),
        json!({"files": ["仕訳.csv"], "archive_dir": "電帳法/2025"}),
        true,
    )
    .unwrap();
    // No label: evidence_<the run's JST date>.
    let zip_path = dir.path().join("電帳法/2025/evidence_20250331.zip");
    assert_eq!(out["archive_path"], json!(zip_path.display().to_string()));
    assert!(zip_path.exists());

    keiri_fs::write_atomic(&dir.path().join("a.pdf"), b"abc").unwrap();
    let cases = [
        (json!({"files": []}), ErrorCode::InputInvalid),
        (json!({"files": ["ない.pdf"]}), ErrorCode::FileNotFound),
        (
            json!({"files": ["a.pdf"], "label": "3月/4月"}),
            ErrorCode::InputInvalid,
        ),
        (
            json!({"files": ["a.pdf"], "archive_dir": "../外"}),
            ErrorCode::InputInvalid,
        ),
        (
            json!({"files": ["a.pdf"], "retention_years": 0}),
            ErrorCode::InputInvalid,
        ),
        (
            json!({"files": [{"path": "a.pdf", "date": "3月吉日"}]}),
            ErrorCode::InputInvalid,
        ),
        (
            json!({"files": [{"path": "a.pdf", "amount": "未定"}]}),
            ErrorCode::InputInvalid,
        ),
        (
            json!({"files": [{"date": "2025-03-31"}]}),
            ErrorCode::InputInvalid,
        ),
    ];
    for (inputs, want) in cases {
        let d = tempfile::tempdir().unwrap();
        keiri_fs::write_atomic(&d.path().join("a.pdf"), b"abc").unwrap();
        match run_block("evidence.archive", d.path(), inputs.clone()) {
            Err(e) => assert_eq!(e.code, want, "{inputs}: {e}"),
            Ok(out) => panic!("{inputs} should fail with {want:?}, got {out}"),
        }
    }
}

// ---------------------------------------------------------------------------------------
// schedule.trigger

fn trigger(inputs: Json) -> Json {
    call("schedule.trigger", inputs.clone(), &[])
        .unwrap_or_else(|e| panic!("schedule.trigger failed: {e}\ninputs: {inputs}"))
}

#[test]
fn schedule_trigger_finds_the_next_due_time() {
    // (inputs, next_run_at). Now: Monday 2025-03-31 09:30 JST.
    let cases = [
        // Weekdays at 9:00: today's 9:00 has passed, so Tuesday.
        (
            json!({"kind": "cron", "cron": "0 9 * * 1-5"}),
            "2025-04-01T09:00:00+09:00",
        ),
        // Every 15 minutes in office hours on weekdays: 9:45 today.
        (
            json!({"kind": "cron", "cron": "*/15 9-17 * * MON-FRI"}),
            "2025-03-31T09:45:00+09:00",
        ),
        // Day 1 or 15, or any Friday (both restricted: either matches): 4/1 comes first.
        (
            json!({"kind": "cron", "cron": "30 9 1,15 * 5"}),
            "2025-04-01T09:30:00+09:00",
        ),
        // Only Feb 29: the next leap year is 2028.
        (
            json!({"kind": "cron", "cron": "0 0 29 2 *"}),
            "2028-02-29T00:00:00+09:00",
        ),
        (
            json!({"kind": "cron", "cron": "@monthly"}),
            "2025-04-01T00:00:00+09:00",
        ),
        // In UTC it is 00:30, so 9:00 UTC today is still ahead.
        (
            json!({"kind": "cron", "cron": "0 9 * * 1-5", "timezone": "UTC"}),
            "2025-03-31T09:00:00+00:00",
        ),
        // 3rd business day of April: Tue 4/1, Wed 4/2, Thu 4/3.
        (
            json!({"kind": "monthly_business_day", "day": 3}),
            "2025-04-03T09:00:00+09:00",
        ),
        // The last business day of March is today; 18:00 is still ahead.
        (
            json!({"kind": "monthly_business_day", "day": -1, "time": "18:00"}),
            "2025-03-31T18:00:00+09:00",
        ),
        // At 9:00 it has passed: April's last business day is Wed 4/30 (4/29 is 昭和の日).
        (
            json!({"kind": "monthly_business_day", "day": -1}),
            "2025-04-30T09:00:00+09:00",
        ),
        // The 5th of April 2025 is a Saturday: Friday 4/4 before, Monday 4/7 after.
        (
            json!({"kind": "monthly_day", "day": 5}),
            "2025-04-04T09:00:00+09:00",
        ),
        (
            json!({"kind": "monthly_day", "day": 5, "holiday_shift": "after"}),
            "2025-04-07T09:00:00+09:00",
        ),
        (
            json!({"kind": "monthly_day", "day": 5, "holiday_shift": "none"}),
            "2025-04-05T09:00:00+09:00",
        ),
        // The 31st of April is its last day, the 30th (a Wednesday).
        (
            json!({"kind": "monthly_day", "day": 31, "time": "8:30"}),
            "2025-04-30T08:30:00+09:00",
        ),
    ];
    for (inputs, next) in cases {
        let out = trigger(inputs.clone());
        assert_eq!(out["next_run_at"], next, "{inputs}");
    }
}

#[test]
fn schedule_trigger_records_the_period_and_the_schedule() {
    let out = trigger(json!({"kind": "monthly_business_day", "day": 3}));
    // Run in March, the default offset −1: February's books.
    assert_eq!(out["triggered_at"], "2025-03-31T09:30:00+09:00");
    assert_eq!(out["period"], "2025-02");
    assert_eq!(
        out["schedule"],
        json!({"kind": "monthly_business_day", "day": 3, "time": "09:00", "timezone": "Asia/Tokyo"})
    );
    for (offset, period) in [
        (0, "2025-03"),
        (-3, "2024-12"),
        (-12, "2024-03"),
        (1, "2025-04"),
    ] {
        let out =
            trigger(json!({"kind": "cron", "cron": "0 9 * * *", "period_offset_months": offset}));
        assert_eq!(out["period"], period, "offset {offset}");
    }
    let out = trigger(json!({"kind": "monthly_day", "day": 25, "timezone": "+09:00"}));
    assert_eq!(
        out["schedule"],
        json!({"kind": "monthly_day", "day": 25, "time": "09:00", "timezone": "+09:00", "holiday_shift": "before"})
    );
    let out = trigger(json!({"kind": "cron", "cron": " 0 9 * * 1-5 "}));
    assert_eq!(
        out["schedule"],
        json!({"kind": "cron", "cron": "0 9 * * 1-5", "timezone": "Asia/Tokyo"})
    );
}

#[test]
fn schedule_trigger_refuses_bad_schedules() {
    let cases = [
        json!({"kind": "cron"}),
        json!({"kind": "cron", "cron": "0 9 * *"}),
        json!({"kind": "cron", "cron": "0 25 * * *"}),
        json!({"kind": "cron", "cron": "60 9 * * *"}),
        json!({"kind": "cron", "cron": "0 9 * * 8"}),
        json!({"kind": "cron", "cron": "0 9 10-5 * *"}),
        json!({"kind": "cron", "cron": "*/0 9 * * *"}),
        json!({"kind": "cron", "cron": "0 9 ? * MON"}),
        // Never due: February has no 31st.
        json!({"kind": "cron", "cron": "0 9 31 2 *"}),
        json!({"kind": "monthly_business_day"}),
        json!({"kind": "monthly_business_day", "day": 16}),
        json!({"kind": "monthly_business_day", "day": 0}),
        json!({"kind": "monthly_day", "day": 32}),
        json!({"kind": "monthly_day", "day": 25, "time": "25:00"}),
        json!({"kind": "monthly_day", "day": 25, "holiday_shift": "skip"}),
        json!({"kind": "monthly_day", "day": 25, "timezone": "America/New_York"}),
        json!({"kind": "monthly_day", "day": 25, "period_offset_months": 121}),
        json!({"kind": "weekly"}),
    ];
    for inputs in cases {
        match call("schedule.trigger", inputs.clone(), &[]) {
            Err(e) => assert_eq!(e.code, ErrorCode::InputInvalid, "{inputs}: {e}"),
            Ok(out) => panic!("{inputs} should fail, got {out}"),
        }
    }
}
