//! `keiri extract`: text, digest, batch section reads and metrics, as a user runs them.

use predicates::prelude::*;
use serde_json::Value;

use super::keiri;

/// A workspace with a Shift_JIS CSV, a UTF-8 text and two files that are not documents.
fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    put(
        ws.path(),
        "inv.csv",
        &shift_jis("請求番号,金額\r\nINV-001,110000\r\nINV-002,55000\r\n"),
    );
    put(ws.path(), "memo.txt", "一行目\n二行目\n三行目\n".as_bytes());
    put(ws.path(), "tool.exe", b"MZ\x90\x00");
    put(ws.path(), "fake.txt", b"\x7FELF\x02\x01\x01\0\0\0");
    ws
}

/// Shift_JIS bytes of the few characters these tests use (checked against CP932 tables).
fn shift_jis(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for c in text.chars() {
        match c {
            '請' => out.extend_from_slice(&[0x90, 0xBF]),
            '求' => out.extend_from_slice(&[0x8B, 0x81]),
            '番' => out.extend_from_slice(&[0x94, 0xD4]),
            '号' => out.extend_from_slice(&[0x8D, 0x86]),
            '金' => out.extend_from_slice(&[0x8B, 0xE0]),
            '額' => out.extend_from_slice(&[0x8A, 0x7A]),
            c if c.is_ascii() => out.push(c as u8),
            other => panic!("no Shift_JIS bytes for {other}"),
        }
    }
    out
}

/// Writes a test input (setup only; product writes go through keiri-fs).
fn put(dir: &std::path::Path, name: &str, bytes: &[u8]) {
    #[allow(clippy::disallowed_methods)]
    std::fs::write(dir.join(name), bytes).unwrap();
}

fn json_of(out: &assert_cmd::assert::Assert) -> Value {
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

#[test]
fn text_per_file_and_json() {
    let ws = workspace();
    keiri(ws.path())
        .args(["extract", "inv.csv", "memo.txt"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "==> inv.csv <==\n請求番号,金額\nINV-001,110000",
        ))
        .stdout(predicate::str::contains("==> memo.txt <==\n一行目"));
    let out = keiri(ws.path())
        .args(["--json", "extract", "inv.csv"])
        .assert()
        .success();
    let v = json_of(&out);
    assert_eq!(v["files"][0]["encoding"], "cp932");
    assert_eq!(v["files"][0]["lines"], 3);
    assert_eq!(v["success"], true);
}

#[test]
fn a_bad_file_is_reported_and_exits_1() {
    let ws = workspace();
    let out = keiri(ws.path())
        .args([
            "--json",
            "extract",
            "memo.txt",
            "fake.txt",
            "tool.exe",
            "missing.md",
        ])
        .assert()
        .code(1);
    let v = json_of(&out);
    assert_eq!(v["files"][0]["file_path"], "memo.txt");
    let codes: Vec<&str> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["BINARY_CONTENT", "UNSUPPORTED_FORMAT", "NOT_FOUND"]);
    keiri(ws.path())
        .args(["extract", "fake.txt"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("fake.txt: BINARY_CONTENT"));
}

#[test]
fn digest() {
    let ws = workspace();
    keiri(ws.path())
        .args(["extract", "--digest", "memo.txt", "inv.csv", "--digest-chars", "200"])
        .assert()
        .success()
        .stdout("## memo.txt\n一行目\n二行目\n三行目\n\n## inv.csv\n請求番号,金額\nINV-001,110000\nINV-002,55000\n");
    let empty = tempfile::tempdir().unwrap();
    put(empty.path(), "blank.txt", b"\n\n");
    keiri(empty.path())
        .args(["extract", "--digest", "blank.txt"])
        .assert()
        .success()
        .stdout("no documents provided\n");
}

#[test]
fn partial_read_batch_json_and_toon() {
    let ws = workspace();
    let batch = r#"[{"file_path":"memo.txt","sections":[{"start_line":2,"end_line":3,"label":"tail"}]},
                    {"file_path":"inv.csv","sections":[{"start_line":1,"end_line":1}]}]"#;
    let out = keiri(ws.path())
        .args([
            "extract",
            "--partial-read",
            "--partial-read-requests-json",
            batch,
            "--output-format",
            "json",
        ])
        .assert()
        .success();
    let v = json_of(&out);
    assert_eq!(v["results"][0]["sections"][0]["content"], "二行目\n三行目");
    assert_eq!(v["results"][0]["sections"][0]["label"], "tail");
    assert_eq!(v["results"][1]["sections"][0]["content"], "請求番号,金額");
    // TOON by default: toon_content plus metadata, no JSON detail.
    let file = ws.path().join("batch.json");
    put(
        ws.path(),
        "batch.json",
        format!(r#"{{"requests": {batch}, "format": "json"}}"#).as_bytes(),
    );
    let out = keiri(ws.path())
        .args(["extract", "--partial-read", "--partial-read-requests-file"])
        .arg(&file)
        .assert()
        .success();
    let v = json_of(&out);
    assert_eq!(v["output_format"], "toon");
    assert!(v.get("results").is_none());
    assert!(
        v["toon_content"]
            .as_str()
            .unwrap()
            .contains("content[2]{line,text}:")
    );
    assert_eq!(v["counts"]["sections_extracted"], 2);
}

#[test]
fn partial_read_single_range_errors_and_limits() {
    let ws = workspace();
    let out = keiri(ws.path())
        .args([
            "extract",
            "--partial-read",
            "memo.txt",
            "--start-line",
            "3",
            "--output-format",
            "json",
            "--format",
            "raw",
        ])
        .assert()
        .success();
    assert_eq!(
        json_of(&out)["results"][0]["sections"][0]["content"],
        "三行目\n"
    );
    // A range past the end: partial failure, reported, exit 1.
    let out = keiri(ws.path())
        .args([
            "extract",
            "--partial-read",
            "memo.txt",
            "--start-line",
            "9",
            "--output-format",
            "json",
        ])
        .assert()
        .code(1);
    assert_eq!(
        json_of(&out)["results"][0]["errors"][0]["code"],
        "LINE_OUT_OF_RANGE"
    );
    // Both forms at once is an input error (exit 2, INVALID_REQUEST).
    let both = r#"{"requests":[{"file_path":"memo.txt","sections":[{"start_line":1}]}],"file_path":"memo.txt","start_line":1}"#;
    let out = keiri(ws.path())
        .args([
            "extract",
            "--partial-read",
            "--partial-read-requests-json",
            both,
        ])
        .assert()
        .code(2);
    assert_eq!(json_of(&out)["code"], "INVALID_REQUEST");
    // 21 files exceed max_files: fails unless --allow-truncate.
    let many: Vec<String> = (0..21)
        .map(|_| {
            r#"{"file_path":"memo.txt","sections":[{"start_line":1,"end_line":1}]}"#.to_string()
        })
        .collect();
    let many = format!("[{}]", many.join(","));
    let args = [
        "extract",
        "--partial-read",
        "--partial-read-requests-json",
        &many,
        "--output-format",
        "json",
    ];
    let out = keiri(ws.path()).args(args).assert().code(1);
    let v = json_of(&out);
    assert_eq!(
        (v["success"].clone(), v["errors"][0]["limit"].clone()),
        (Value::Bool(false), Value::from("max_files"))
    );
    let out = keiri(ws.path())
        .args(args)
        .arg("--allow-truncate")
        .assert()
        .success();
    let v = json_of(&out);
    assert_eq!(
        (v["truncated"].clone(), v["sections_extracted"].clone()),
        (Value::Bool(true), Value::from(20))
    );
}

#[test]
fn metrics_only() {
    let ws = workspace();
    put(
        ws.path(),
        "list.txt",
        b"# files to measure\nmemo.txt\n\ninv.csv\n",
    );
    let out = keiri(ws.path())
        .args(["extract", "--metrics-only", "--files-from"])
        .arg(ws.path().join("list.txt"))
        .assert()
        .success();
    let v = json_of(&out);
    let files = v["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(
        (files[0]["file_path"].clone(), files[0]["lines"].clone()),
        (Value::from("memo.txt"), Value::from(3))
    );
    assert_eq!(files[1]["encoding"], "cp932");
    let out = keiri(ws.path())
        .args([
            "extract",
            "--metrics-only",
            "--file-paths",
            "memo.txt",
            "nope.txt",
            "--output-format",
            "toon",
        ])
        .assert()
        .code(1);
    let v = json_of(&out);
    assert!(
        v["toon_content"]
            .as_str()
            .unwrap()
            .starts_with("success: false\nfiles[1]{file_path,size_bytes,lines")
    );
    assert_eq!(v["error_summary"][0]["code"], "NOT_FOUND");
}

#[test]
fn usage_errors_exit_2() {
    let ws = workspace();
    keiri(ws.path()).args(["extract"]).assert().code(2);
    keiri(ws.path())
        .args(["extract", "--metrics-only"])
        .assert()
        .code(2);
    keiri(ws.path())
        .args(["extract", "--partial-read", "memo.txt"])
        .assert()
        .code(2);
    keiri(ws.path())
        .args(["extract", "--digest", "--metrics-only", "memo.txt"])
        .assert()
        .code(2);
}

#[test]
fn source_and_config_files_are_read_and_measured_as_text() {
    // The seed's own example reads a section of `src/a.py`.
    let ws = workspace();
    std::fs::create_dir_all(ws.path().join("src")).unwrap();
    put(
        ws.path(),
        "src/a.py",
        b"import csv\n\ndef total(rows):\n    return sum(r['amount'] for r in rows)\n",
    );
    put(
        ws.path(),
        "settings.json",
        b"{\n  \"fiscal_year_start\": 4\n}\n",
    );
    let batch = r#"[{"file_path":"src/a.py","sections":[{"start_line":3,"end_line":4}]}]"#;
    let out = keiri(ws.path())
        .args([
            "extract",
            "--partial-read",
            "--partial-read-requests-json",
            batch,
        ])
        .args(["--output-format", "json"])
        .assert()
        .success();
    assert_eq!(
        json_of(&out)["results"][0]["sections"][0]["content"],
        "def total(rows):\n    return sum(r['amount'] for r in rows)"
    );
    let out = keiri(ws.path())
        .args([
            "extract",
            "--metrics-only",
            "--file-paths",
            "src/a.py",
            "settings.json",
        ])
        .assert()
        .success();
    let v = json_of(&out);
    let measured: Vec<(Value, Value, Value)> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["file_path"].clone(),
                f["lines"].clone(),
                f["format"].clone(),
            )
        })
        .collect();
    assert_eq!(
        measured,
        [
            ("src/a.py".into(), 4.into(), "code".into()),
            ("settings.json".into(), 3.into(), "code".into())
        ],
        "{v}"
    );
}

#[test]
fn metrics_of_a_50_mb_log_give_its_size_and_line_count() {
    // Ten times the section cap: measured by streaming, never FILE_TOO_LARGE.
    let ws = tempfile::tempdir().unwrap();
    let line = "2026-11-27T02:00:00Z INFO 請求書 INV-0000001 を処理しました\n";
    let lines = 50 * 1024 * 1024 / line.len() + 1;
    let text = line.repeat(lines);
    put(ws.path(), "app.log", text.as_bytes());
    let out = keiri(ws.path())
        .args(["extract", "--metrics-only", "app.log"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let file = &v["files"][0];
    assert_eq!(file["size_bytes"], text.len() as u64, "{v}");
    assert!(text.len() > 50 * 1024 * 1024);
    assert_eq!(file["lines"], lines as u64, "{v}");
    assert_eq!(file["encoding"], "utf-8");
}
