//! `keiri run` without builtin blocks: exit codes, the failing node with its id and code, an
//! unknown run on `--resume`, and usage errors. The journeys with the real blocks (resume,
//! inputs untouched, SIGKILL) are in `run_blocks.rs`.

use super::{keiri, put, stdout_json};

/// `demo.unbuilt` is a block spec of the workspace's own (`block_specs/` there) with no
/// implementation, so its node fails with `UNKNOWN_BLOCK` wherever it runs.
const PLAN: &str = r#"
id: cli_fail
vars: {message: 確認してください}
graph:
  - {id: ask, block: demo.unbuilt, in: {message: "${vars.message}"}}
"#;

const UNBUILT: &str = "id: demo.unbuilt
version: 1.0.0
entrypoint: builtin:demo.unbuilt
description: 実装のないブロック
inputs:
  message: {type: string, required: true, description: 文言}
outputs: {}
";

fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    put(&ws.path().join("plan.yaml"), PLAN);
    std::fs::create_dir_all(ws.path().join("own/demo")).unwrap();
    put(&ws.path().join("own/demo/demo.unbuilt.yaml"), UNBUILT);
    ws
}

/// `keiri` with the repository's catalog and the workspace's own specs.
fn keiri_own(ws: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = keiri(ws);
    cmd.arg("--catalog").arg(ws.join("own"));
    cmd
}

#[test]
fn a_failing_node_exits_1_with_its_id_and_code() {
    let ws = workspace();
    let out = keiri_own(ws.path())
        .args(["run", "plan.yaml"])
        .assert()
        .code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("status: failed"), "{text}");
    assert!(text.contains("failed: ask UNKNOWN_BLOCK: "), "{text}");
    let out = keiri_own(ws.path())
        .args(["--json", "--lang", "en", "run", "plan.yaml"])
        .assert()
        .code(1);
    let res = stdout_json(&out);
    assert_eq!(res["failures"][0]["node"], "ask");
    assert_eq!(res["failures"][0]["code"], "UNKNOWN_BLOCK");
    let run_dir = ws.path().join(res["run_dir"].as_str().unwrap());
    let events = std::fs::read_to_string(run_dir.join("events.jsonl")).unwrap();
    assert!(
        events.contains(r#""event":"node_error","node":"ask","code":"UNKNOWN_BLOCK""#),
        "{events}"
    );
    assert!(run_dir.join("state.json").is_file());
    // The plan file is only read.
    assert_eq!(
        std::fs::read_to_string(ws.path().join("plan.yaml")).unwrap(),
        PLAN
    );
}

#[test]
fn resume_of_an_unknown_run_is_refused() {
    let ws = workspace();
    let out = keiri_own(ws.path())
        .args([
            "--json",
            "run",
            "plan.yaml",
            "--resume",
            "20990101T000000000Z-000000",
        ])
        .assert()
        .code(2);
    assert_eq!(stdout_json(&out)["code"], "RUN_NOT_FOUND");
}

#[test]
fn usage_errors_exit_2() {
    let ws = workspace();
    keiri_own(ws.path())
        .args(["run", "plan.yaml", "--input", "data=missing.csv"])
        .assert()
        .code(2);
    keiri_own(ws.path())
        .args(["run", "plan.yaml", "--var", "novalue"])
        .assert()
        .code(2);
    keiri_own(ws.path())
        .args(["run", "nope.yaml"])
        .assert()
        .code(2);
}

/// Runtime chat on the command line: a plan with an open var, run without a terminal, stops
/// `paused` (exit 1) at the inserted `run_inputs` node with the plan's own question and says
/// how to resume; `--resume RUN_ID --answers FILE` runs it on the file named, and the totals
/// are those worked out by hand (A: 1,200 + 300 = 1,500; B: 40). The plan file is unchanged.
#[test]
fn a_plan_with_an_open_var_asks_it_at_the_start_and_resumes_with_the_answer() {
    let ws = tempfile::tempdir().unwrap();
    let plan = "id: open_totals\nvars:\n  journal: null\ngraph:\n- id: read\n  block: csv.read\n  in: {path: \"${vars.journal}\"}\n  out: {rows: rows}\n- id: totals\n  block: transforms.group_aggregate\n  in:\n    rows: ${read.rows}\n    by: [account]\n    aggregations: [{field: amount, op: sum}]\n  out: {rows: totals}\n- id: save\n  block: csv.write\n  in: {rows: \"${totals.totals}\", out_name: totals.csv}\n  out: {out_path: saved}\n";
    put(&ws.path().join("plan.yaml"), plan);
    put(
        &ws.path().join("journal.csv"),
        "account,amount\nA,1200\nB,40\nA,300\n",
    );
    let out = keiri(ws.path())
        .args(["--json", "run", "plan.yaml"])
        .current_dir(ws.path())
        .assert()
        .code(1);
    let res = stdout_json(&out);
    assert_eq!(res["status"], "paused", "{res:#}");
    assert_eq!(res["paused"][0]["node"], "run_inputs");
    let field = &res["paused"][0]["question"]["fields"][0];
    assert_eq!(field["id"], "journal", "{res:#}");
    assert_eq!(field["type"], "file", "{res:#}");
    let run_id = res["run_id"].as_str().unwrap();
    put(
        &ws.path().join("answers.json"),
        r#"{"run_inputs": {"values": {"journal": "journal.csv"}}}"#,
    );
    keiri(ws.path())
        .args([
            "run",
            "plan.yaml",
            "--resume",
            run_id,
            "--answers",
            "answers.json",
        ])
        .current_dir(ws.path())
        .assert()
        .code(0);
    let run_dir = ws.path().join(res["run_dir"].as_str().unwrap());
    let totals = std::fs::read_to_string(run_dir.join("files/save/outputs/totals.csv")).unwrap();
    assert_eq!(
        totals.trim_start_matches('\u{feff}').replace("\r\n", "\n"),
        "account,amount_sum\nA,1500\nB,40\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("plan.yaml")).unwrap(),
        plan
    );
}
