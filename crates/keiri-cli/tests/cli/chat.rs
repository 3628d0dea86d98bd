//! `keiri chat` against the fake OpenAI-compatible server: one turn with `--message`, approval
//! with `--yes` or later with `/approve`, `/undo`, `/skills`, and the JSON output.

use std::path::Path;

use keiri_llm::testkit::{FakeHandle, FakeServer, Reply};
use serde_json::json;
use tempfile::TempDir;

use super::{
    assert_llm_not_configured, keiri_with_llm, put, stderr_text, stdout_json, stdout_text,
};

const PLAN: &str = "id: p\ngraph:\n  - id: read\n    block: csv.read\n    in: {path: invoices.csv, encoding: utf-8}\n    out: {rows: rows}\n";
const HUNK: &str = "@@ -4,3 +4,6 @@\n     block: csv.read\n     in: {path: invoices.csv, encoding: utf-8}\n     out: {rows: rows}\n+  - id: out\n+    block: csv.write\n+    in: {rows: \"${read.rows}\"}\n";

fn chat_cmd(ws: &Path, config: &Path, base_url: Option<&str>) -> assert_cmd::Command {
    let mut cmd = keiri_with_llm(ws, base_url);
    cmd.env("KEIRI_CONFIG_DIR", config);
    cmd
}

fn patch_replies() -> Vec<Reply> {
    let args = json!({"filePath": "plan.yaml", "patch": HUNK}).to_string();
    vec![
        Reply::tool_calls(&[("c1", "apply_patch", &args)]),
        Reply::content("csv.write を追加する変更を提案しました。"),
    ]
}

fn plan(ws: &Path) -> String {
    std::fs::read_to_string(ws.join("plan.yaml")).unwrap()
}

/// A workspace holding [`PLAN`] as plan.yaml, its own settings folder, and the fake server
/// ready to play [`patch_replies`].
struct PatchTurn {
    ws: TempDir,
    config: TempDir,
    url: String,
    server: FakeHandle,
}

impl PatchTurn {
    fn start() -> PatchTurn {
        let (url, server) = FakeServer::start_background(patch_replies()).unwrap();
        let ws = tempfile::tempdir().unwrap();
        let config = tempfile::tempdir().unwrap();
        put(&ws.path().join("plan.yaml"), PLAN);
        PatchTurn {
            ws,
            config,
            url,
            server,
        }
    }

    /// `keiri` on this workspace and settings folder; `with_llm` points it at the fake server.
    fn keiri(&self, with_llm: bool) -> assert_cmd::Command {
        let url = with_llm.then_some(self.url.as_str());
        chat_cmd(self.ws.path(), self.config.path(), url)
    }
}

#[test]
fn one_turn_streams_events_and_yes_approves_the_edit() {
    let turn = PatchTurn::start();
    let out = turn
        .keiri(true)
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
    let (stdout, stderr) = (stdout_text(&out), stderr_text(&out));
    assert_eq!(turn.server.remaining(), 0, "{stdout}\n{stderr}");
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
        plan(turn.ws.path()).ends_with("    in: {rows: \"${read.rows}\"}\n"),
        "{}",
        plan(turn.ws.path())
    );
}

#[test]
fn without_yes_the_edit_waits_and_approve_and_undo_work_later() {
    let turn = PatchTurn::start();
    let out = turn
        .keiri(true)
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
    let stderr = stderr_text(&out);
    assert!(stderr.contains("承認待ち: /approve chg-1"), "{stderr}");
    assert_eq!(plan(turn.ws.path()), PLAN);

    let out = turn
        .keiri(false)
        .args(["chat", "--session", "s1"])
        .write_stdin("/approve chg-1\n")
        .assert()
        .success();
    let stderr = stderr_text(&out);
    assert!(
        stderr.contains("承認しました。書き込み: plan.yaml"),
        "{stderr}"
    );
    assert_ne!(plan(turn.ws.path()), PLAN);

    let out = turn
        .keiri(false)
        .args(["--lang", "en", "chat", "--session", "s1"])
        .write_stdin("/undo\n/undo\n/quit\nnever sent\n")
        .assert()
        .success();
    let stderr = stderr_text(&out);
    assert!(stderr.contains("Undone: plan.yaml (chg-1)"), "{stderr}");
    assert!(
        stderr.contains("keiri: NOT_FOUND: there is no approved change to undo"),
        "{stderr}"
    );
    assert_eq!(plan(turn.ws.path()), PLAN);
}

#[test]
fn json_output_has_the_events_pending_changes_and_approvals() {
    let turn = PatchTurn::start();
    let out = turn
        .keiri(true)
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
    let v = stdout_json(&out);
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
    let stdout = stdout_text(&out);
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
    assert_llm_not_configured(&out, &["OPENAI_API_KEY"]);
}
