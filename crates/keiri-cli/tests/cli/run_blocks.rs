//! `keiri run` with the real builtins (csv.read, transforms.select_columns): `--resume`
//! continues from the failed node, inputs stay byte-identical, `--input`/`--out-dir`, and
//! SIGKILL at random moments leaves a resumable run with no partial output file, and a
//! pipeline killed half-way resumes to the totals an uninterrupted run writes.

use std::path::{Path, PathBuf};

use super::{keiri, put, stdout_json};

const PLAN: &str = r#"
id: cli_run
vars:
  ledger: ledger.csv
  bank: bank.csv
  cols: [日付, 金額]
graph:
  - {id: ledger, block: csv.read, in: {path: "${vars.ledger}"}, out: {rows: rows}}
  - {id: bank, block: csv.read, in: {path: "${vars.bank}"}, out: {rows: rows}}
  - {id: pick, block: transforms.select_columns, in: {rows: "${bank.rows}", columns: "${vars.cols}"}, out: {rows: picked}}
"#;

/// [`PLAN`] with the bank lines pivoted (one column per payer) before the pick: the pivot's
/// columns are the data's, known only when it runs, so a wrong column fails at run time.
const PIVOTED: &str = r#"
id: cli_run
vars:
  ledger: ledger.csv
  bank: bank.csv
  cols: [日付, 金額]
graph:
  - {id: ledger, block: csv.read, in: {path: "${vars.ledger}"}, out: {rows: rows}}
  - {id: bank, block: csv.read, in: {path: "${vars.bank}"}, out: {rows: rows}}
  - {id: wide, block: transforms.pivot, in: {rows: "${bank.rows}", index: [日付], columns: 摘要, values: 入金}, out: {rows: wide}}
  - {id: pick, block: transforms.select_columns, in: {rows: "${wide.wide}", columns: "${vars.cols}"}, out: {rows: picked}}
"#;

const LEDGER: &str = "日付,勘定科目,金額\n2024-04-01,売上,1000\n2024-04-02,仕入,△500\n";
const BANK: &str = "日付,摘要,入金\n2024-04-01,ﾄｳｷｮｳｼｮｳｼﾞ,1000\n";

fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    put(&ws.path().join("plan.yaml"), PLAN);
    put(&ws.path().join("ledger.csv"), LEDGER);
    put(&ws.path().join("bank.csv"), BANK);
    ws
}

fn run_dirs(ws: &Path, plan_id: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(ws.join("runs").join(plan_id))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    dirs.sort();
    dirs
}

#[test]
fn a_column_the_file_lacks_stops_the_run_before_it_starts() {
    // The plan's own columns, against the bank file's: refused with the finding, no run.
    let ws = workspace();
    let out = keiri(ws.path())
        .args(["--lang", "ja", "run", "plan.yaml"])
        .assert()
        .code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned()
        + &String::from_utf8_lossy(&out.get_output().stderr);
    assert!(
        text.contains("error[column.unknown]")
            && text.contains("列「金額」は bank.csv にありません"),
        "{text}"
    );
    assert!(run_dirs(ws.path(), "cli_run").is_empty(), "no run started");
    // The run's own vars are what is checked: with the right columns it runs.
    keiri(ws.path())
        .args(["run", "plan.yaml", "--var", r#"cols=["日付","入金"]"#])
        .assert()
        .code(0);
}

#[test]
fn a_failing_node_exits_1_with_its_id_and_code_and_resume_continues() {
    let ws = workspace();
    put(&ws.path().join("plan.yaml"), PIVOTED);
    let out = keiri(ws.path()).args(["run", "plan.yaml"]).assert().code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let failed = text
        .lines()
        .find(|l| l.starts_with("failed: pick "))
        .unwrap_or_else(|| panic!("no failed line for pick in {text}"));
    // The column the plan asks for is not in the rows: named before the block runs, with the
    // columns there are as the hint on the next line.
    assert!(
        failed.contains("COLUMN_NOT_FOUND") && failed.contains("金額"),
        "{failed}"
    );
    let hint = text
        .lines()
        .skip_while(|l| !l.starts_with("failed: pick "))
        .nth(1)
        .unwrap_or_default();
    assert!(
        hint.starts_with("    = ") && hint.contains("日付, ﾄｳｷｮｳｼｮｳｼﾞ"),
        "{text}"
    );
    let run_id = text
        .lines()
        .find_map(|l| l.strip_prefix("run_id: "))
        .unwrap()
        .to_string();
    let run_dir = ws.path().join("runs/cli_run").join(&run_id);
    assert!(
        run_dir.join("outputs/ledger/rows.arrow").is_file()
            || run_dir.join("outputs/ledger/rows.json").is_file()
    );
    let ledger_files = std::fs::read_dir(run_dir.join("outputs/ledger"))
        .unwrap()
        .count();
    let before = std::fs::metadata(run_dir.join("outputs/bank"))
        .unwrap()
        .modified()
        .unwrap();

    // Fix the input (the columns to pick) and continue from the failed node.
    let out = keiri(ws.path())
        .args(["--json", "run", "plan.yaml", "--resume", &run_id])
        .args(["--var", r#"cols=["日付","ﾄｳｷｮｳｼｮｳｼﾞ"]"#])
        .assert()
        .code(0);
    let res = stdout_json(&out);
    assert_eq!(res["run_id"], run_id.as_str());
    assert_eq!(res["status"], "finished");
    let statuses: Vec<(String, String)> = res["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["id"].as_str().unwrap().into(),
                n["status"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(statuses.len(), 4, "{statuses:?}");
    assert!(run_dir.join("outputs/pick").is_dir());
    // The finished nodes were not run again: their outputs are the first run's.
    assert_eq!(
        std::fs::metadata(run_dir.join("outputs/bank"))
            .unwrap()
            .modified()
            .unwrap(),
        before
    );
    assert_eq!(
        std::fs::read_dir(run_dir.join("outputs/ledger"))
            .unwrap()
            .count(),
        ledger_files
    );
    let events = std::fs::read_to_string(run_dir.join("events.jsonl")).unwrap();
    assert!(
        events.contains(r#""event":"node_reused","node":"bank""#),
        "{events}"
    );
    assert!(
        events.contains(r#""event":"node_error","node":"pick""#),
        "{events}"
    );

    // Inputs are byte-identical.
    assert_eq!(
        std::fs::read_to_string(ws.path().join("ledger.csv")).unwrap(),
        LEDGER
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("bank.csv")).unwrap(),
        BANK
    );
}

#[test]
fn inputs_set_vars_and_a_missing_input_is_a_usage_error() {
    let ws = workspace();
    std::fs::create_dir(ws.path().join("in")).unwrap();
    put(&ws.path().join("in/other.csv"), "日付,入金\n2024-05-01,1\n");
    let out = keiri(ws.path())
        .args(["--json", "run", "plan.yaml", "--input", "bank=in/other.csv"])
        .args(["--var", r#"cols=["入金"]"#, "--out-dir", "elsewhere"])
        .assert()
        .code(0);
    let res = stdout_json(&out);
    assert!(
        res["run_dir"]
            .as_str()
            .unwrap()
            .starts_with("elsewhere/cli_run/"),
        "{res}"
    );
    assert!(
        run_dirs(ws.path(), "cli_run").is_empty(),
        "nothing under runs/"
    );

    keiri(ws.path())
        .args(["run", "plan.yaml", "--input", "bank=missing.csv"])
        .assert()
        .code(2);
    keiri(ws.path())
        .args(["run", "plan.yaml", "--var", "novalue"])
        .assert()
        .code(2);
}

/// A month with no bank lines: the run finishes (exit 0) but says so, in the summary and in
/// `--json`'s `warnings`, instead of a silent empty result.
#[test]
fn a_header_only_export_finishes_with_a_warning_in_the_summary_and_the_json() {
    let ws = workspace();
    put(&ws.path().join("bank.csv"), "日付,摘要,入金\r\n\r\n");
    put(
        &ws.path().join("plan.yaml"),
        &PLAN.replace("cols: [日付, 金額]", "cols: [日付, 入金]"),
    );
    let out = keiri(ws.path())
        .args(["--lang", "ja", "run", "plan.yaml"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("status: finished"), "{text}");
    assert!(
        text.lines().any(|l| l
            == "warning: bank NO_ROWS: rows が 0 行です。見出しだけのファイルか、読み込む対象が空です"),
        "{text}"
    );
    // Only where the rows went missing: not again at pick, which read the empty table.
    assert_eq!(
        text.lines().filter(|l| l.starts_with("warning: ")).count(),
        1,
        "{text}"
    );
    let json = stdout_json(
        &keiri(ws.path())
            .args(["--lang", "en", "--json", "run", "plan.yaml"])
            .assert()
            .success(),
    );
    assert_eq!(json["warnings"][0]["node"], "bank");
    assert_eq!(json["warnings"][0]["code"], "NO_ROWS");
    assert_eq!(
        json["warnings"][0]["message"],
        "rows has no rows: the file has only a header, or there was nothing to read"
    );
}

/// `keiri run` says every file the run wrote: in its run folder without `--write`, where the
/// plan names with it; `--json` lists them as `files`.
#[test]
fn the_summary_lists_every_file_the_run_wrote() {
    let ws = workspace();
    put(
        &ws.path().join("plan.yaml"),
        &format!(
            "{}  - {{id: save, block: csv.write, in: {{rows: \"${{ledger.rows}}\", out_dir: outputs, out_name: 仕訳.csv}}, out: {{out_path: path}}}}\n",
            PLAN.replace("cols: [日付, 金額]", "cols: [日付, 入金]")
        ),
    );
    let out = keiri(ws.path())
        .args(["--lang", "en", "run", "plan.yaml"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let dirs = run_dirs(ws.path(), "cli_run");
    let run_dir = dirs[0].strip_prefix(ws.path()).unwrap();
    let expected = format!(
        "wrote: save {}",
        run_dir.join("files/save/outputs/仕訳.csv").display()
    );
    assert!(text.lines().any(|l| l == expected), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("wrote: ")).count(),
        1,
        "{text}"
    );
    assert!(!ws.path().join("outputs").exists());

    let json = stdout_json(
        &keiri(ws.path())
            .args(["--json", "run", "plan.yaml", "--write"])
            .assert()
            .success(),
    );
    assert_eq!(
        json["files"],
        serde_json::json!([{"node": "save", "path": "outputs/仕訳.csv"}]),
        "{json:#}"
    );
    let written = std::fs::read_to_string(ws.path().join("outputs/仕訳.csv")).unwrap();
    assert!(
        written.contains("仕入") && written.contains("△500"),
        "{written}"
    );
}

/// `on_error: continue` goes past a node that fails on its data: the run finishes with the
/// failure listed, and exits 3 so a script can tell it from a clean run (0) and a failed one (1).
#[test]
fn a_failure_continue_went_past_finishes_the_run_with_exit_code_3() {
    let ws = workspace();
    put(
        &ws.path().join("bank.csv"),
        "日付,摘要,入金\n2024-04-01,振込,1000\n2024-04-02,振込,未定\n",
    );
    put(
        &ws.path().join("cont.yaml"),
        "id: cont\npolicy: {on_error: continue}\ngraph:\n  - {id: bank, block: csv.read, in: {path: bank.csv}, out: {rows: rows}}\n  - {id: amounts, block: transforms.normalize_amounts, in: {rows: \"${bank.rows}\", fields: [入金], on_error: error}, out: {rows: rows}}\n  - {id: pick, block: transforms.select_columns, in: {rows: \"${bank.rows}\", columns: [日付]}, out: {rows: picked}}\n",
    );
    let out = keiri(ws.path())
        .args(["--lang", "en", "run", "cont.yaml"])
        .assert()
        .code(3);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("status: finished"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("failed: amounts BLOCK_FAILED") && l.contains("未定")),
        "{text}"
    );
}

/// An invalid plan is not run, and `keiri run` says why as `keiri validate` does: each finding
/// with its place, node and hint, not only a count.
#[test]
fn an_invalid_plan_prints_its_findings_with_place_and_hint() {
    let ws = workspace();
    put(
        &ws.path().join("bad.yaml"),
        "id: bad\ngraph:\n  - {id: read, block: csv.read, in: {path: ledger.csv}, out: {rows: rows}}\n  - {id: pick, block: transforms.select_columns, in: {rows: \"${read.records}\", columns: [日付]}, out: {rows: picked}}\n",
    );
    let out = keiri(ws.path())
        .args(["--lang", "en", "run", "bad.yaml"])
        .assert()
        .code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let finding = text
        .lines()
        .find(|l| l.starts_with("error[ref.unknown_alias] bad.yaml:4:"))
        .unwrap_or_else(|| panic!("no finding line in {text}"));
    assert!(finding.contains("[pick]"), "{finding}");
    assert!(finding.contains("records"), "{finding}");
    assert!(
        text.lines().any(|l| l.starts_with("    = ")),
        "the hint is printed: {text}"
    );
    assert!(run_dirs(ws.path(), "bad").is_empty(), "nothing ran");
}

#[cfg(unix)]
const CONFIRM_PLAN: &str = r#"
id: confirm_run
graph:
  - {id: bank, block: csv.read, in: {path: bank.csv}, out: {rows: rows}}
  - {id: ok, block: ui.confirmation, in: {message: 入金明細を取り込みますか, details: "${bank.rows}"}, out: {approved: approved}}
  - {id: pick, block: transforms.select_columns, in: {rows: "${bank.rows}", columns: [日付, 入金]}, out: {rows: picked}, when: {expr: "${ok.approved} == true"}}
"#;

#[test]
fn a_confirmation_pauses_the_run_and_answers_continue_it() {
    let ws = workspace();
    put(&ws.path().join("confirm.yaml"), CONFIRM_PLAN);
    // An answers file says yes as a person writes it.
    put(&ws.path().join("yes.yaml"), "ok: はい\n");
    // Not a terminal and no answers: the run stops paused and says how to go on.
    let out = keiri(ws.path())
        .args(["run", "confirm.yaml"])
        .assert()
        .code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("status: paused"), "{text}");
    assert!(
        text.lines().any(|l| l.starts_with("paused: ok: ")),
        "{text}"
    );
    let run_id = text
        .lines()
        .find_map(|l| l.strip_prefix("run_id: "))
        .unwrap()
        .to_string();
    assert!(
        text.contains(&format!("--resume {run_id} --answers")),
        "{text}"
    );
    // Resumed with the answer: the same run finishes, the bank rows picked.
    let out = keiri(ws.path())
        .args([
            "run",
            "confirm.yaml",
            "--resume",
            &run_id,
            "--answers",
            "yes.yaml",
            "--json",
        ])
        .assert()
        .code(0);
    let res = stdout_json(&out);
    assert_eq!(res["run_id"], run_id.as_str());
    assert_eq!(res["status"], "finished");
    let picked = ws
        .path()
        .join("runs/confirm_run")
        .join(&run_id)
        .join("outputs/pick/rows.arrow");
    assert!(picked.is_file());
    // With --answers from the start the run does not stop at all; a "no" skips `pick`.
    put(&ws.path().join("no.yaml"), "ok: {approved: false}\n");
    let out = keiri(ws.path())
        .args(["run", "confirm.yaml", "--answers", "no.yaml", "--json"])
        .assert()
        .code(0);
    let res = stdout_json(&out);
    assert_eq!(res["status"], "finished");
    let pick = res["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == "pick")
        .unwrap()
        .clone();
    assert_eq!(pick["status"], "skipped");
    // An answer of the wrong shape fails the node with INPUT_INVALID (exit 1).
    // (はい, yes, 承認 are answers; たぶん is not.)
    put(&ws.path().join("bad.yaml"), "ok: {approved: たぶん}\n");
    let out = keiri(ws.path())
        .args(["run", "confirm.yaml", "--answers", "bad.yaml", "--json"])
        .assert()
        .code(1);
    let res = stdout_json(&out);
    assert_eq!(res["failures"][0]["code"], "INPUT_INVALID", "{res}");
}

mod kill {
    use std::path::Path;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use super::super::{catalog_dir, test_config_dir};
    use super::{put, run_dirs};

    /// The kill-during-save acceptance asks for at least 50 trials per command.
    const TRIALS: usize = 50;
    const NODES: usize = 12;

    fn keiri_process(ws: &Path, extra: &[&str]) -> Command {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("keiri"));
        cmd.arg("--workspace")
            .arg(ws)
            .arg("--catalog")
            .arg(catalog_dir())
            .args(["run", "plan.yaml"])
            .args(extra)
            .current_dir(ws)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .env("KEIRI_CONFIG_DIR", test_config_dir(ws));
        cmd
    }

    /// Starts the plan and kills it (SIGKILL) at a moment within `full` drawn from `seed`,
    /// then waits for it to end.
    fn kill_at_some_moment(ws: &Path, seed: &mut u64, full: Duration) {
        let delay = Duration::from_micros(next(seed) % (full.as_micros() as u64 + 1));
        let mut child = keiri_process(ws, &[]).spawn().unwrap();
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
    }

    /// xorshift64: reproducible kill moments without a dependency.
    fn next(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    fn plan() -> String {
        let mut text = String::from("id: killed\ngraph:\n");
        for i in 0..NODES {
            text.push_str(&format!(
                "  - {{id: n{i}, block: csv.read, in: {{path: data.csv}}, out: {{rows: r{i}}}}}\n"
            ));
        }
        text
    }

    /// Every file in outputs/ is complete: JSON parses, Arrow IPC has its head and tail magic.
    fn assert_no_partial_output(run_dir: &Path) {
        let outputs = run_dir.join("outputs");
        let Ok(nodes) = std::fs::read_dir(&outputs) else {
            return;
        };
        for node in nodes {
            let node = node.unwrap().path();
            let files: Vec<_> = std::fs::read_dir(&node)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            assert!(!files.is_empty(), "empty output dir {node:?}");
            for f in files {
                let bytes = std::fs::read(&f).unwrap();
                match f.extension().and_then(|e| e.to_str()) {
                    Some("json") => {
                        serde_json::from_slice::<serde_json::Value>(&bytes)
                            .unwrap_or_else(|e| panic!("partial {f:?}: {e}"));
                    }
                    Some("arrow") => {
                        assert!(
                            bytes.starts_with(b"ARROW1") && bytes.ends_with(b"ARROW1"),
                            "partial {f:?}"
                        );
                    }
                    _ => panic!("unexpected file {f:?}"),
                }
            }
        }
    }

    #[test]
    fn ctrl_c_cancels_the_run_and_leaves_its_state() {
        let ws = tempfile::tempdir().unwrap();
        put(&ws.path().join("data.csv"), "日付,金額\n2024-04-01,100\n");
        // Reads the file up to 1,000,000 times: only Ctrl-C ends it in time.
        put(
            &ws.path().join("plan.yaml"),
            "id: endless\ngraph:\n  - id: again\n    type: loop\n    while: {condition: {expr: \"${vars.iteration} >= 0\"}, max_iterations: 1000000}\n    body: {plan: {id: b, graph: [{id: read, block: csv.read, in: {path: data.csv}, out: {rows: rows}}]}}\n",
        );
        let mut child = keiri_process(ws.path(), &[]).spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        let state = loop {
            if let Some(dir) = run_dirs(ws.path(), "endless").first()
                && dir.join("events.jsonl").is_file()
            {
                break dir.join("state.json");
            }
            assert!(Instant::now() < deadline, "the run never started");
            std::thread::sleep(Duration::from_millis(20));
        };
        let sent = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("keiri run did not stop after Ctrl-C");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(status.code(), Some(1));
        let state: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
        assert_eq!(state["status"], "cancelled", "{state}");
    }

    /// A journal of 12,000 lines (more than the run record keeps whole, so a resume after
    /// the amounts may run them again): each account 4,000 times, each amount form 1,000 times
    /// per account. 旅費交通費 totals 1,000 × (1,000 + 2,000 − 500 + 100) = 2,600,000; 消耗品費
    /// twice that, 5,200,000; 売上高 three times, 7,800,000.
    fn journal() -> String {
        const FORMS: [[&str; 4]; 3] = [
            ["1,000", "￥2,000", "△500", "１００"],
            ["2,000", "￥4,000", "△1,000", "２００"],
            ["3,000", "￥6,000", "△1,500", "３００"],
        ];
        const ACCOUNTS: [&str; 3] = ["旅費交通費", "消耗品費", "売上高"];
        let mut text = String::from("勘定科目,摘要,金額\n");
        for i in 0..12_000 {
            let account = i % 3;
            text.push_str(&format!(
                "{},取引{i},\"{}\"\n",
                ACCOUNTS[account],
                FORMS[account][(i / 3) % 4]
            ));
        }
        text
    }

    /// Read, amounts, totals by account, the totals sorted and written: a pipeline of steps
    /// each reading the one before. The read, the amounts and the totals run as one pass over
    /// the file (keiri-run's `engine/fused.rs`), so kills land inside it too.
    const PIPELINE: &str = r#"
id: killed
graph:
  - {id: read, block: csv.read, in: {path: journal.csv}, out: {rows: rows}}
  - {id: amounts, block: transforms.normalize_amounts, in: {rows: "${read.rows}", fields: [金額]}, out: {rows: rows}}
  - id: totals
    block: transforms.group_aggregate
    in: {rows: "${amounts.rows}", by: [勘定科目], aggregations: [{field: 金額, op: sum, as: 金額}]}
    out: {rows: rows}
  - {id: sorted, block: transforms.sort_rows, in: {rows: "${totals.rows}", by: [{field: 金額, order: desc}]}, out: {rows: rows}}
  - {id: write, block: csv.write, in: {rows: "${sorted.rows}", out_name: totals.csv}, out: {out_path: path}}
"#;

    /// The file the pipeline wrote in a run's folder.
    fn totals(run_dir: &Path) -> String {
        std::fs::read_to_string(run_dir.join("files/write/outputs/totals.csv"))
            .unwrap_or_else(|e| panic!("{}: {e}", run_dir.display()))
    }

    #[test]
    fn a_pipeline_killed_at_any_moment_resumes_to_the_same_totals() {
        let ws = tempfile::tempdir().unwrap();
        put(&ws.path().join("journal.csv"), &journal());
        put(&ws.path().join("plan.yaml"), PIPELINE);
        let started = Instant::now();
        assert!(keiri_process(ws.path(), &[]).status().unwrap().success());
        let full = started.elapsed().max(Duration::from_millis(50));
        let whole = run_dirs(ws.path(), "killed");
        // The totals worked out by hand (see `journal`), largest first, as `csv.write` writes
        // by default for Excel: a byte-order mark and CRLF line ends.
        let expected =
            "\u{feff}勘定科目,金額\r\n売上高,7800000\r\n消耗品費,5200000\r\n旅費交通費,2600000\r\n";
        assert_eq!(totals(&whole[0]), expected);
        // The pass was taken: a table it handed on is kept without a digest.
        let kept = std::fs::read_to_string(whole[0].join("outputs/read/kept-in-part.json"));
        let kept: serde_json::Value = serde_json::from_str(&kept.unwrap()).unwrap();
        assert_eq!(kept["rows"], serde_json::json!({"rows": 12_000}));
        std::fs::remove_dir_all(ws.path().join("runs")).unwrap();

        let mut seed = 0x5eed_9abc_u64;
        // Runs killed before they finished, each resumed.
        let mut resumed = 0;
        for trial in 0..TRIALS {
            kill_at_some_moment(ws.path(), &mut seed, full);
            for dir in run_dirs(ws.path(), "killed") {
                if !dir.join("state.json").is_file() {
                    continue;
                }
                let state: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(dir.join("state.json")).unwrap())
                        .unwrap();
                let run_id = dir.file_name().unwrap().to_string_lossy().into_owned();
                let status = keiri_process(ws.path(), &["--resume", &run_id])
                    .status()
                    .unwrap();
                assert!(status.success(), "trial {trial}: resume of {run_id} failed");
                assert_eq!(totals(&dir), expected, "trial {trial}: {run_id}");
                resumed += usize::from(state["status"] != "finished");
            }
            let _ = std::fs::remove_dir_all(ws.path().join("runs"));
        }
        // Not a proof of the resume, only of the test: kills did stop runs half-way.
        eprintln!("{resumed} of {TRIALS} kills stopped a run before it finished");
        assert!(resumed > 0);
    }

    #[test]
    fn a_new_run_removes_the_staging_folder_a_killed_run_left() {
        let ws = tempfile::tempdir().unwrap();
        let mut data = String::from("日付,摘要,金額\n");
        for i in 0..4000 {
            data.push_str(&format!("2024-04-{:02},取引{i},{}\n", i % 28 + 1, i * 7));
        }
        put(&ws.path().join("data.csv"), &data);
        put(&ws.path().join("plan.yaml"), &plan());
        let started = Instant::now();
        assert!(keiri_process(ws.path(), &[]).status().unwrap().success());
        let full = started.elapsed().max(Duration::from_millis(50));

        let mut seed = 0x5eed_5678_u64;
        let mut left = 0;
        for trial in 0..TRIALS {
            kill_at_some_moment(ws.path(), &mut seed, full);
            left += run_dirs(ws.path(), "killed")
                .iter()
                .filter(|d| d.join("staging").exists())
                .count();
            // The next run (not a resume) cleans what the killed one left.
            assert!(keiri_process(ws.path(), &[]).status().unwrap().success());
            for dir in run_dirs(ws.path(), "killed") {
                assert!(
                    !dir.join("staging").exists(),
                    "trial {trial}: {} keeps its staging folder",
                    dir.display()
                );
            }
        }
        // Not a proof of the cleaning, only of the test: some kills did leave a staging folder.
        eprintln!("{left} of {TRIALS} kills left a staging folder");
    }

    #[test]
    fn sigkill_at_any_moment_leaves_a_resumable_run() {
        let ws = tempfile::tempdir().unwrap();
        let mut data = String::from("日付,摘要,金額\n");
        for i in 0..4000 {
            data.push_str(&format!("2024-04-{:02},取引{i},{}\n", i % 28 + 1, i * 7));
        }
        put(&ws.path().join("data.csv"), &data);
        put(&ws.path().join("plan.yaml"), &plan());
        // One uninterrupted run tells how long a run takes here (kill moments spread over it).
        let started = Instant::now();
        let status = keiri_process(ws.path(), &[]).status().unwrap();
        assert!(status.success());
        let full = started.elapsed().max(Duration::from_millis(50));
        std::fs::remove_dir_all(ws.path().join("runs")).unwrap();

        let mut seed = 0x5eed_1234_u64;
        for trial in 0..TRIALS {
            kill_at_some_moment(ws.path(), &mut seed, full);
            let dirs = run_dirs(ws.path(), "killed");
            for dir in &dirs {
                assert_no_partial_output(dir);
                if !dir.join("state.json").is_file() {
                    // Killed before the run recorded anything: there is nothing to resume.
                    assert!(
                        !dir.join("outputs")
                            .read_dir()
                            .is_ok_and(|mut d| d.next().is_some())
                    );
                    continue;
                }
                let run_id = dir.file_name().unwrap().to_string_lossy().into_owned();
                let status = keiri_process(ws.path(), &["--resume", &run_id])
                    .status()
                    .unwrap();
                assert!(status.success(), "trial {trial}: resume of {run_id} failed");
                let state: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(dir.join("state.json")).unwrap())
                        .unwrap();
                assert_eq!(state["status"], "finished", "trial {trial}");
                // After the next start nothing half-written is left: no staging folder, no
                // temp file of an atomic write.
                assert!(!dir.join("staging").exists(), "trial {trial}: staging left");
                let mut stack = vec![dir.clone()];
                while let Some(d) = stack.pop() {
                    for e in std::fs::read_dir(&d).unwrap() {
                        let p = e.unwrap().path();
                        let name = p.file_name().unwrap().to_string_lossy().into_owned();
                        assert!(
                            !name.contains(".keiri-tmp"),
                            "trial {trial}: temp file {}",
                            p.display()
                        );
                        if p.is_dir() {
                            stack.push(p);
                        }
                    }
                }
                for i in 0..NODES {
                    assert!(
                        dir.join(format!("outputs/n{i}")).is_dir(),
                        "trial {trial}: n{i}"
                    );
                }
                assert_no_partial_output(dir);
            }
            let _ = std::fs::remove_dir_all(ws.path().join("runs"));
        }
        assert_eq!(
            std::fs::read_to_string(ws.path().join("data.csv")).unwrap(),
            data
        );
    }
}
