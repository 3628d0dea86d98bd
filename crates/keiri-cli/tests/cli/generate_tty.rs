//! `keiri generate` on a terminal: open questions asked with typed prompts, a bad answer asked
//! again, the generation run again with the answers, one spinner line per stage. Driven on a
//! pseudo-terminal by `tty_driver.py` (python3's `pty`); without python3 it prints a skip
//! notice, except under `CI=true`, where it fails. Also `keiri run` asking a plan's open
//! questions when the run starts (runtime chat).

use std::io::Write;
use std::path::Path;
use std::process::Command;

use super::{LLM_ENV, catalog_dir, put};

fn python() -> Option<String> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
    let ok = Command::new(&python)
        .args(["-c", "import pty"])
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        return Some(python);
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(!ci, "CI=true: the terminal test needs python3 with pty");
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED keiri generate terminal test: python3 with pty unavailable"
    );
    None
}

#[test]
fn generate_on_a_terminal_asks_the_questions_and_continues() {
    let Some(python) = python() else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("data")).unwrap();
    // Headers that fit the template's columns: the file named in the answer is read like an
    // attached one, and these leave no column to ask about.
    put(
        &ws.path().join("data/invoices.csv"),
        "vendor,invoice_no,invoice_date,amount\nA社,INV-1,2026-10-01,1000\n",
    );
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/tty_driver.py");
    // Wait for the question, give a file that does not exist (refused while typing), then
    // one that does.
    let script = serde_json::json!([
        ["請求書一覧のCSVファイル", "data/missing.csv\r"],
        [
            "is not an existing file",
            "\u{8}".repeat(20) + "data/invoices.csv\r"
        ],
    ]);
    let mut cmd = Command::new(python);
    cmd.arg(&driver)
        .arg(script.to_string())
        .arg("--")
        .arg(assert_cmd::cargo::cargo_bin("keiri"))
        .arg("--workspace")
        .arg(ws.path())
        .arg("--catalog")
        .arg(catalog_dir())
        .args([
            "generate",
            "-i",
            "請求書の重複を検出してExcelに出力",
            "--apply-mode",
            "compose",
        ])
        .env("TERM", "xterm")
        .env("KEIRI_CONFIG_DIR", super::test_config_dir(ws.path()));
    for v in LLM_ENV {
        cmd.env_remove(v);
    }
    let out = cmd.output().unwrap();
    let transcript = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{transcript}");
    assert!(transcript.contains("EXIT 0"), "{transcript}");
    // One finished spinner line per stage, with its elapsed time, named as the window names
    // it (Japanese mode).
    assert!(
        transcript.contains("✓ ［テンプレートの合成］"),
        "{transcript}"
    );
    assert!(
        transcript.contains("1 件の質問に答えてください"),
        "{transcript}"
    );
    // The second generation used the answer and printed a valid plan.
    assert!(
        transcript.contains("invoice_csv: data/invoices.csv"),
        "{transcript}"
    );
    assert!(
        transcript.contains("block: matching.duplicate_invoices"),
        "{transcript}"
    );
}

/// Runtime chat on a terminal: `keiri run` of a plan whose CSV is left open asks for it with
/// the plan's own question when the run starts, and the run finishes on the file typed.
#[test]
fn run_on_a_terminal_asks_the_plans_open_file_and_finishes() {
    let Some(python) = python() else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    put(
        &ws.path().join("journal.csv"),
        "account,amount\nA,1200\nA,300\n",
    );
    put(
        &ws.path().join("plan.yaml"),
        "id: open_read\nvars: {journal: null}\ngraph:\n- id: read\n  block: csv.read\n  in: {path: \"${vars.journal}\"}\n  out: {rows: rows}\n",
    );
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/tty_driver.py");
    let script = serde_json::json!([["読み込むCSVファイルのパス", "journal.csv\r"]]);
    let mut cmd = Command::new(python);
    cmd.arg(&driver)
        .arg(script.to_string())
        .arg("--")
        .arg(assert_cmd::cargo::cargo_bin("keiri"))
        .arg("--workspace")
        .arg(ws.path())
        .arg("--catalog")
        .arg(catalog_dir())
        .args(["run", "plan.yaml"])
        .current_dir(ws.path())
        .env("TERM", "xterm")
        .env("KEIRI_CONFIG_DIR", super::test_config_dir(ws.path()));
    let out = cmd.output().unwrap();
    let transcript = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(transcript.contains("EXIT 0"), "{transcript}");
    assert!(transcript.contains("status: finished"), "{transcript}");
    assert!(transcript.contains("read（"), "{transcript}");
}
