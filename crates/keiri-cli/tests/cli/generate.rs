//! `keiri generate`: offline compose end to end, and a clear error when a mode needs an LLM.

use serde_json::Value;

use super::{keiri, put};

use super::LLM_ENV as LLM_VARS;

fn generate(ws: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = keiri(ws);
    for v in LLM_VARS {
        cmd.env_remove(v);
    }
    cmd.args([
        "--json",
        "generate",
        "--instruction",
        "請求書CSVから重複を検出してレポートにする",
    ]);
    cmd
}

#[test]
fn compose_asks_then_registers_a_valid_plan() {
    let ws = tempfile::tempdir().unwrap();
    let out = generate(ws.path())
        .args([
            "--apply-mode",
            "compose",
            "--templates",
            "invoice_duplicate_detection",
        ])
        .assert()
        .code(1);
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["result"]["status"], "needs_answers");
    let questions: Vec<&str> = v["result"]["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(questions.contains(&"invoice_csv"), "{questions:?}");
    // Among the notes (compose may also say which part of the instruction it could not
    // serve): the offline composition's note about the LLM.
    let notes = v["result"]["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n.as_str().unwrap().contains("LLM")),
        "{notes:?}"
    );

    let answers: serde_json::Map<String, Value> = questions
        .iter()
        .map(|q| (q.to_string(), Value::String("invoices.csv".into())))
        .collect();
    let answers_file = ws.path().join("answers.json");
    put(&answers_file, &serde_json::to_string(&answers).unwrap());
    let out = generate(ws.path())
        .args([
            "--apply-mode",
            "compose",
            "--templates",
            "invoice_duplicate_detection",
        ])
        .arg("--answers")
        .arg(&answers_file)
        .arg("--register")
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["result"]["status"], "valid");
    let path = v["registered"]["path"].as_str().unwrap();
    let saved = std::fs::read_to_string(path).unwrap();
    assert!(saved.contains("invoice_duplicate_detection__"), "{saved}");
}

#[test]
fn a_mode_that_needs_an_llm_names_the_env_vars() {
    let ws = tempfile::tempdir().unwrap();
    let out = generate(ws.path())
        .args(["--apply-mode", "llm-only"])
        .assert()
        .code(2);
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["code"], "LLM_NOT_CONFIGURED");
    assert!(
        v["message"].as_str().unwrap().contains("OPENAI_API_KEY"),
        "{v}"
    );
}

/// A base URL on loopback where nothing listens: every connection is refused at once.
fn unreachable_llm() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}/v1")
}

#[test]
fn unreachable_llm_falls_back_only_with_the_flag() {
    let ws = tempfile::tempdir().unwrap();
    let url = unreachable_llm();
    let with = |cmd: &mut assert_cmd::Command| {
        cmd.env("KEIRI_LLM_BASE_URL", &url)
            .env("KEIRI_LLM_MAX_RETRIES", "0")
            .env("KEIRI_LLM_TIMEOUT_SECS", "5")
            .args(["--apply-mode", "hint"]);
    };

    let mut cmd = generate(ws.path());
    with(&mut cmd);
    let out = cmd.assert().code(2);
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert!(v["code"].as_str().unwrap().starts_with("LLM_"), "{v}");

    let mut cmd = generate(ws.path());
    with(&mut cmd);
    let out = cmd.env("KEIRI_AGENT_LLM_FALLBACK", "1").assert().success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["result"]["status"], "fallback", "{v}");
    assert_eq!(v["result"]["fallback"], true);
    let why = v["result"]["notes"][0].as_str().unwrap();
    assert!(
        why.starts_with("FALLBACK PLAN") && why.contains("LLM_"),
        "{why}"
    );
    assert!(
        v["result"]["templates"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "invoice_duplicate_detection"),
        "{v}"
    );
}

/// `--out` writes whatever plan comes back: a fallback plan (marked) into a folder that did not
/// exist, a plan that needs answers with its questions; a file already there is refused before
/// any model call.
#[test]
fn out_writes_every_plan_that_comes_back_and_never_over_a_file() {
    let ws = tempfile::tempdir().unwrap();
    let url = unreachable_llm();
    let out = ws.path().join("new/dir/plan.yaml");
    let res = generate(ws.path())
        .env("KEIRI_LLM_BASE_URL", &url)
        .env("KEIRI_LLM_MAX_RETRIES", "0")
        .env("KEIRI_LLM_TIMEOUT_SECS", "5")
        .args(["--apply-mode", "hint", "--fallback", "1", "--out"])
        .arg(&out)
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&res.get_output().stdout).unwrap();
    assert_eq!(v["result"]["status"], "fallback", "{v}");
    assert_eq!(v["wrote"], out.display().to_string());
    let written = std::fs::read_to_string(&out).unwrap();
    // Headed by why, as the first note says it (the model could not be reached).
    let why = v["result"]["notes"][0].as_str().unwrap();
    assert!(
        written.starts_with(&format!("# {why}\n# Review it before running it.\n")),
        "{written}"
    );
    assert!(why.contains("LLM_") && !why.contains("  "), "{why}");
    assert!(written.ends_with(v["result"]["yaml"].as_str().unwrap()));
    // The header is a comment: the file is a plan `keiri validate` reads.
    keiri(ws.path())
        .arg("validate")
        .arg(&out)
        .assert()
        .code(predicates::ord::ne(2));

    // A plan that needs answers: written with its questions.
    let asks = ws.path().join("asks.yaml");
    generate(ws.path())
        .args([
            "--apply-mode",
            "compose",
            "--templates",
            "invoice_duplicate_detection",
            "--out",
        ])
        .arg(&asks)
        .assert()
        .code(1);
    let written = std::fs::read_to_string(&asks).unwrap();
    assert!(written.starts_with("# NEEDS ANSWERS:"), "{written}");
    assert!(written.contains("#   - invoice_csv ("), "{written}");

    // The file exists now: refused before the model is called (no server answers here, and
    // an unreachable one would fail with LLM_ rather than name the file).
    let res = generate(ws.path())
        .env("KEIRI_LLM_BASE_URL", &url)
        .args(["--apply-mode", "hint", "--out"])
        .arg(&asks)
        .assert()
        .failure();
    let stderr = String::from_utf8_lossy(&res.get_output().stderr).into_owned();
    assert!(stderr.contains("exists already"), "{stderr}");
    assert!(!stderr.contains("LLM_"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&asks).unwrap(), written);
}

/// The issue's acceptance journey: a plan composed from the shipped templates runs on the
/// repository's sample data, writes the report workbook under its run directory, and leaves
/// the input byte-identical.
#[test]
fn a_composed_plan_runs_on_the_samples_and_writes_the_report_in_its_run_folder() {
    let ws = tempfile::tempdir().unwrap();
    let sample =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/invoices.csv");
    let original = std::fs::read(&sample).unwrap();
    std::fs::create_dir_all(ws.path().join("samples")).unwrap();
    std::fs::copy(&sample, ws.path().join("samples/invoices.csv")).unwrap();
    put(
        &ws.path().join("answers.json"),
        r#"{"invoice_csv": "samples/invoices.csv", "notify_channel": "file", "notify_to": "keiri@example.co.jp"}"#,
    );
    let out = generate(ws.path())
        .args([
            "--apply-mode",
            "compose",
            "--templates",
            "invoice_duplicate_detection,exception_report",
            "--plan-id",
            "duplicate_report",
        ])
        .arg("--answers")
        .arg(ws.path().join("answers.json"))
        .arg("--out")
        .arg(ws.path().join("plan.yaml"))
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["result"]["status"], "valid", "{v:#}");
    // The report asks before it notifies: the answer comes from a file here.
    put(
        &ws.path().join("confirm.yaml"),
        "exception_report__confirm: {approved: true}\n",
    );
    let out = keiri(ws.path())
        .args(["--json", "run", "plan.yaml", "--answers", "confirm.yaml"])
        .assert()
        .code(0);
    let res: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(res["status"], "finished", "{res:#}");
    let run_dir = ws.path().join(res["run_dir"].as_str().unwrap());
    assert!(run_dir.starts_with(ws.path().join("runs/duplicate_report")));
    let report = run_dir.join("files/exception_report__write/outputs/exception_report.xlsx");
    assert!(report.is_file(), "{}", report.display());
    assert_eq!(
        std::fs::read(ws.path().join("samples/invoices.csv")).unwrap(),
        original
    );
    // The run wrote nothing outside runs/ (`logs/` is the generation's event log).
    let mut top: Vec<String> = std::fs::read_dir(ws.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    top.sort();
    assert_eq!(
        top,
        [
            "answers.json",
            "confirm.yaml",
            "logs",
            "plan.yaml",
            "runs",
            "samples"
        ]
    );
}
