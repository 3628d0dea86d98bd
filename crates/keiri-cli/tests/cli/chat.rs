//! `keiri chat` against the fake OpenAI-compatible server: one turn with `--message`, approval
//! with `--yes` or later with `/approve`, `/undo`, `/skills`, and the JSON output.

use keiri_llm::testkit::{FakeServer, Reply};
use serde_json::{Value, json};

use super::{LLM_ENV, keiri, put};

const PLAN: &str = "id: p\ngraph:\n  - id: read\n    block: csv.read\n    in: {path: invoices.csv, encoding: utf-8}\n    out: {rows: rows}\n";
const HUNK: &str = "@@ -4,3 +4,6 @@\n     block: csv.read\n     in: {path: invoices.csv, encoding: utf-8}\n     out: {rows: rows}\n+  - id: out\n+    block: csv.write\n+    in: {rows: \"${read.rows}\"}\n";

fn chat_cmd(
    ws: &std::path::Path,
    config: &std::path::Path,
    base_url: Option<&str>,
) -> assert_cmd::Command {
    let mut cmd = keiri(ws);
    for v in LLM_ENV {
        cmd.env_remove(v);
    }
    cmd.env("KEIRI_CONFIG_DIR", config);
    if let Some(url) = base_url {
        cmd.env("KEIRI_LLM_BASE_URL", url)
            .env("KEIRI_LLM_MODEL", "test-model")
            .env("KEIRI_LLM_MAX_RETRIES", "0");
    }
    cmd
}

fn patch_replies() -> Vec<Reply> {
    let args = json!({"filePath": "plan.yaml", "patch": HUNK}).to_string();
    vec![
        Reply::tool_calls(&[("c1", "apply_patch", &args)]),
        Reply::content("csv.write を追加する変更を提案しました。"),
    ]
}

fn plan(ws: &std::path::Path) -> String {
    std::fs::read_to_string(ws.join("plan.yaml")).unwrap()
}

#[test]
fn one_turn_streams_events_and_yes_approves_the_edit() {
    let (url, server) = FakeServer::start_background(patch_replies()).unwrap();
    let ws = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    put(&ws.path().join("plan.yaml"), PLAN);
    let out = chat_cmd(ws.path(), config.path(), Some(&url))
        .args([
            "chat",
            "--plan",
            "plan.yaml",
            "--yes",
            "--message",
            "CSVに書き出すステップを追加して",
        ])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert_eq!(server.remaining(), 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("csv.write を追加する変更を提案しました。"),
        "{stdout}"
    );
    assert!(stdout.contains("+    block: csv.write"), "{stdout}");
    let order: Vec<usize> = [
        "[skill] plan-editing",
        "→ apply_patch",
        "← apply_patch ok",
        "! chg-1 plan.yaml",
        "承認しました。書き込み: plan.yaml",
        "[session] ",
    ]
    .iter()
    .map(|needle| {
        stderr
            .find(needle)
            .unwrap_or_else(|| panic!("{needle} missing:\n{stderr}"))
    })
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{stderr}");
    assert!(
        plan(ws.path()).ends_with("    in: {rows: \"${read.rows}\"}\n"),
        "{}",
        plan(ws.path())
    );
}

#[test]
fn without_yes_the_edit_waits_and_approve_and_undo_work_later() {
    let (url, _server) = FakeServer::start_background(patch_replies()).unwrap();
    let ws = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    put(&ws.path().join("plan.yaml"), PLAN);
    let out = chat_cmd(ws.path(), config.path(), Some(&url))
        .args([
            "chat",
            "--session",
            "s1",
            "--plan",
            "plan.yaml",
            "-m",
            "ステップを追加して",
        ])
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("承認待ち: /approve chg-1"), "{stderr}");
    assert_eq!(plan(ws.path()), PLAN);

    let out = chat_cmd(ws.path(), config.path(), None)
        .args(["chat", "--session", "s1"])
        .write_stdin("/approve chg-1\n")
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("承認しました。書き込み: plan.yaml"),
        "{stderr}"
    );
    assert_ne!(plan(ws.path()), PLAN);

    let out = chat_cmd(ws.path(), config.path(), None)
        .args(["--lang", "en", "chat", "--session", "s1"])
        .write_stdin("/undo\n/undo\n/quit\nnever sent\n")
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("Undone: plan.yaml (chg-1)"), "{stderr}");
    assert!(
        stderr.contains("keiri: NOT_FOUND: there is no approved change to undo"),
        "{stderr}"
    );
    assert_eq!(plan(ws.path()), PLAN);
}

#[test]
fn json_output_has_the_events_pending_changes_and_approvals() {
    let (url, _server) = FakeServer::start_background(patch_replies()).unwrap();
    let ws = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    put(&ws.path().join("plan.yaml"), PLAN);
    let out = chat_cmd(ws.path(), config.path(), Some(&url))
        .args([
            "--json",
            "chat",
            "--skill",
            "plan-editing",
            "--plan",
            "plan.yaml",
            "--yes",
            "-m",
            "edit",
        ])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["skill"], "plan-editing");
    assert_eq!(v["events"][0]["reason"], "explicit");
    assert_eq!(v["pending"][0]["change_id"], "chg-1");
    assert_eq!(v["approvals"][0]["applied"], true);
    assert_eq!(v["approvals"][0]["file"], "plan.yaml");
}

#[test]
fn the_repl_lists_skills() {
    let ws = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let out = chat_cmd(ws.path(), config.path(), None)
        .args(["chat"])
        .write_stdin("/skills\n")
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    for name in [
        "/plan-editing",
        "/workbook-preview",
        "/document-reading",
        "/catalog-explanation",
        "/general",
    ] {
        assert!(stdout.contains(name), "{name}: {stdout}");
    }
}

#[test]
fn without_an_llm_chat_names_the_env_vars() {
    let ws = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let out = chat_cmd(ws.path(), config.path(), None)
        .args(["--json", "chat", "-m", "こんにちは"])
        .assert()
        .code(2);
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["code"], "LLM_NOT_CONFIGURED");
    assert!(
        v["message"].as_str().unwrap().contains("OPENAI_API_KEY"),
        "{v}"
    );
}
