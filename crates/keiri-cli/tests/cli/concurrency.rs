//! Writes never lose an update: 200 concurrent `apply_patch` calls and 200 concurrent
//! `workbook_patch` calls on one file through a real `keiri serve` (on 127.0.0.1 only). Every
//! call either lands — its change is in the final file — or fails with `CHANGE_CONFLICT`.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::catalog_dir;

const CALLS: usize = 200;

/// A running `keiri serve`, killed on drop.
struct Server {
    child: Child,
    base: String,
    /// The per-launch token when the server prints one in its URL (`?token=…`).
    token: Option<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Splits the first `http://…` URL in `line` into the base (`http://host:port`) and the value
/// of its `token` query parameter, if any.
fn parse_url(line: &str) -> Option<(String, Option<String>)> {
    let start = line.find("http://")?;
    let url = line[start..].split_whitespace().next()?;
    let rest = &url["http://".len()..];
    let host_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let base = format!("http://{}", &rest[..host_end]);
    let token = url.split_once('?').and_then(|(_, query)| {
        query
            .split(['&', '#'])
            .find_map(|pair| pair.strip_prefix("token="))
            .map(str::to_string)
    });
    Some((base, token))
}

fn start(workspace: &Path) -> Server {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("keiri"));
    cmd.arg("--workspace")
        .arg(workspace)
        .arg("--catalog")
        .arg(catalog_dir())
        .args(["serve", "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .env_remove("KEIRI_CORS_ALLOW_ORIGINS")
        .env_remove("KEIRI_UI_DIR")
        .env("KEIRI_CONFIG_DIR", super::test_config_dir(workspace));
    for name in super::LLM_ENV {
        cmd.env_remove(name);
    }
    let mut child = cmd.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    // The server's first URL line is its address; later output is drained so the server never
    // writes into a closed pipe.
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if !sent && let Some(found) = parse_url(&line) {
                let _ = sender.send(found);
                sent = true;
            }
        }
    });
    let (base, token) = receiver
        .recv_timeout(Duration::from_secs(120))
        .expect("keiri serve printed no URL");
    assert!(
        base.starts_with("http://127.0.0.1:"),
        "binds loopback only: {base}"
    );
    Server { child, base, token }
}

/// Sends every body at once to `/api/<function>` and returns the answers in order.
async fn all_at_once(server: &Server, function: &str, bodies: Vec<Value>) -> Vec<(u16, Value)> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(300))
        .build()
        .unwrap();
    let server = std::sync::Arc::new((
        server.base.clone(),
        server.token.clone(),
        client,
        function.to_string(),
    ));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, body) in bodies.into_iter().enumerate() {
        let server = server.clone();
        tasks.spawn(async move {
            let (base, token, client, function) = &*server;
            let view = Server::post_parts(base, token.as_deref(), client, function, &body).await;
            (i, view)
        });
    }
    let mut answers = vec![(0, Value::Null); CALLS];
    while let Some(done) = tasks.join_next().await {
        let (i, answer) = done.unwrap();
        answers[i] = answer;
    }
    answers
}

impl Server {
    /// POSTs `body` to `/api/<function>` the way any client must: JSON content type, and the
    /// token when the server has one. Returns the status and the JSON answer.
    async fn post_parts(
        base: &str,
        token: Option<&str>,
        client: &reqwest::Client,
        function: &str,
        body: &Value,
    ) -> (u16, Value) {
        let mut req = client
            .post(format!("{base}/api/{function}"))
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(token) = token {
            req = req.header("X-Keiri-Token", token);
        }
        let res = req.send().await.unwrap();
        let status = res.status().as_u16();
        let text = res.text().await.unwrap();
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, value)
    }
}

/// Tallies the answers: each call landed (`landed(i, answer)` and its change is in the final
/// file per `in_file(i)`) or failed with `CHANGE_CONFLICT`. Returns (landed, conflicts).
fn tally(
    answers: &[(u16, Value)],
    landed: impl Fn(&Value) -> bool,
    in_file: impl Fn(usize) -> bool,
) -> (usize, usize) {
    let (mut ok, mut conflicts, mut lost) = (0, 0, Vec::new());
    for (i, (status, answer)) in answers.iter().enumerate() {
        if *status == 200 && landed(answer) {
            if in_file(i) {
                ok += 1;
            } else {
                lost.push(i);
            }
        } else {
            assert_eq!(
                answer["code"], "CHANGE_CONFLICT",
                "call {i}: neither landed nor a conflict: {status} {answer}"
            );
            conflicts += 1;
        }
    }
    assert!(
        lost.is_empty(),
        "{} calls were reported written but their change is not in the file: {lost:?}",
        lost.len()
    );
    (ok, conflicts)
}

/// splitmix64: a seeded generator, so a failing run can be replayed.
pub fn next_random(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A workbook with one sheet `Sheet1` of `rows` rows × 6 number cells (from `seed`), built
/// here so the test needs no fixture.
pub fn workbook(rows: usize, seed: u64) -> Vec<u8> {
    let mut state = seed;
    let mut data = String::new();
    for r in 1..=rows {
        data.push_str(&format!(r#"<row r="{r}">"#));
        for col in ["A", "B", "C", "D", "E", "F"] {
            state = next_random(state);
            data.push_str(&format!(
                r#"<c r="{col}{r}"><v>{}</v></c>"#,
                state % 1_000_000
            ));
        }
        data.push_str("</row>");
    }
    let files = [
        (
            "[Content_Types].xml",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#.to_string(),
        ),
        (
            "_rels/.rels",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#.to_string(),
        ),
        (
            "xl/workbook.xml",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>"#.to_string(),
        ),
        (
            "xl/_rels/workbook.xml.rels",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#.to_string(),
        ),
        (
            "xl/worksheets/sheet1.xml",
            format!(
                r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>{data}</sheetData></worksheet>"#
            ),
        ),
    ];
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, text) in files {
        w.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        w.write_all(text.as_bytes()).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// The worksheet XML of a complete workbook file: every entry is read to its end, so a
/// truncated or corrupt package fails here (the zip reader checks each entry's CRC).
pub fn sheet_xml(bytes: &[u8]) -> Result<String, String> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| e.to_string())?;
    let mut sheet = None;
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| e.to_string())?;
        let is_sheet = entry
            .name()
            .is_ok_and(|name| name == "xl/worksheets/sheet1.xml");
        let mut text = Vec::new();
        entry.read_to_end(&mut text).map_err(|e| e.to_string())?;
        if is_sheet {
            sheet = Some(String::from_utf8_lossy(&text).into_owned());
        }
    }
    sheet.ok_or_else(|| "no xl/worksheets/sheet1.xml".to_string())
}

/// Writes a file for a test (setup only, while no keiri process runs).
pub fn put_bytes(path: &Path, bytes: &[u8]) {
    let mut file = std::fs::File::create(path).unwrap();
    file.write_all(bytes).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_apply_patch_calls_never_lose_an_update() {
    let ws = tempfile::tempdir().unwrap();
    let text: String = (0..CALLS).map(|i| format!("key {i}\nold {i}\n")).collect();
    put_bytes(&ws.path().join("notes.txt"), text.as_bytes());
    let server = start(ws.path());
    // Call i replaces line `old i`; its context (`key i`, `key i+1`) no call changes, so every
    // patch applies to whatever the others have written.
    let bodies: Vec<Value> = (0..CALLS)
        .map(|i| {
            let line = 2 * i + 1;
            let patch = if i + 1 < CALLS {
                format!(
                    "@@ -{line},3 +{line},3 @@\n key {i}\n-old {i}\n+new {i}\n key {}\n",
                    i + 1
                )
            } else {
                format!("@@ -{line},2 +{line},2 @@\n key {i}\n-old {i}\n+new {i}\n")
            };
            json!({"filePath": "notes.txt", "patch": patch})
        })
        .collect();
    let answers = all_at_once(&server, "apply_patch", bodies).await;
    drop(server);
    let after = std::fs::read_to_string(ws.path().join("notes.txt")).unwrap();
    let lines: Vec<&str> = after.lines().collect();
    let (landed, _conflicts) = tally(
        &answers,
        |answer| answer["written"] == true,
        |i| lines.get(2 * i + 1) == Some(&format!("new {i}").as_str()),
    );
    assert!(landed > 0, "no call landed: {:?}", answers.first());
    assert_eq!(lines.len(), 2 * CALLS, "the file kept its shape");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_workbook_patch_calls_never_lose_an_update() {
    let ws = tempfile::tempdir().unwrap();
    put_bytes(&ws.path().join("book.xlsx"), &workbook(2, 7));
    let server = start(ws.path());
    // Call i writes its own cell G{i+1} of the workbook in place.
    let bodies: Vec<Value> = (0..CALLS)
        .map(|i| {
            json!({
                "xlsx_path": "book.xlsx",
                "out_name": "book.xlsx",
                "on_conflict": "overwrite",
                "ops": [{"op": "set_value", "sheet": "Sheet1", "cell": format!("G{}", i + 1), "value": format!("call {i}")}],
            })
        })
        .collect();
    let answers = all_at_once(&server, "workbook_patch", bodies).await;
    drop(server);
    let bytes = std::fs::read(ws.path().join("book.xlsx")).unwrap();
    let sheet = sheet_xml(&bytes).unwrap();
    let (landed, _conflicts) = tally(
        &answers,
        |answer| answer["error"].is_null() && answer["out_path"].is_string(),
        |i| sheet.contains(&format!(">call {i}<")),
    );
    assert!(landed > 0, "no call landed: {:?}", answers.first());
    let mut left: Vec<String> = std::fs::read_dir(ws.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with(".keiri-test-config"))
        .collect();
    left.sort();
    assert_eq!(left, ["book.xlsx"], "no temp or lock file stays");
}

#[test]
fn server_urls_with_and_without_a_token() {
    assert_eq!(
        parse_url("listening on http://127.0.0.1:8710"),
        Some(("http://127.0.0.1:8710".to_string(), None))
    );
    assert_eq!(
        parse_url("listening on http://127.0.0.1:8710/?token=abc123 (open in a browser)"),
        Some((
            "http://127.0.0.1:8710".to_string(),
            Some("abc123".to_string())
        ))
    );
    assert_eq!(
        parse_url("http://127.0.0.1:1/?lang=ja&token=t#x"),
        Some(("http://127.0.0.1:1".to_string(), Some("t".to_string())))
    );
    assert_eq!(parse_url("starting"), None);
}
