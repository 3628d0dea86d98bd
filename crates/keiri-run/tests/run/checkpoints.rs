//! The run record's checkpoint policy (`RunDir::save_outputs`): a big table of a step that can
//! run again is kept as its first rows with its row count and a digest; a resume runs the
//! step again, gives the same totals, and stops with `DATA_CHANGED` when its file changed.

use keiri_run::records::{SHOWN_ROWS, WHOLE_ROWS};
use keiri_run::value::Value;
use keiri_run::{Event, RunDir, RunStatus};
use serde_json::json;

use crate::support::{run_builtins, run_in};

const ACCOUNTS: [&str; 3] = ["旅費交通費", "消耗品費", "売上高"];
/// 1,000 + 2,000 − 500 + 100 = 2,600 for every four rows of an account.
const AMOUNTS: [&str; 4] = ["1,000", "￥2,000", "△500", "１００"];
const ROWS: usize = 12_000;

/// 12,000 rows: each account 4,000 times, each amount form 1,000 times per account, so each
/// account totals 1,000 × 2,600 = 2,600,000.
fn journal() -> String {
    let mut text = String::from("勘定科目,金額\n");
    for i in 0..ROWS {
        text.push_str(&format!(
            "{},\"{}\"\n",
            ACCOUNTS[i % 3],
            AMOUNTS[(i / 3) % 4]
        ));
    }
    text
}

/// Everything up to the totals finishes the first time; then `extra.csv` is missing.
const PLAN: &str = r#"
id: checkpoints
graph:
  - {id: read, block: csv.read, in: {path: journal.csv}, out: {rows: rows}}
  - {id: amounts, block: transforms.normalize_amounts, in: {rows: "${read.rows}", fields: [金額]}, out: {rows: rows}}
  - id: totals
    block: transforms.group_aggregate
    in: {rows: "${amounts.rows}", by: [勘定科目], aggregations: [{field: 金額, op: sum, as: 金額}]}
    out: {rows: rows, group_count: groups}
  - {id: extra, block: csv.read, in: {path: extra.csv}, when: "${totals.groups} == 3", out: {rows: rows}}
  - {id: all, block: transforms.concat_rows, in: {tables: ["${totals.rows}", "${extra.rows}"]}, out: {rows: rows}}
"#;

/// A first attempt of `plan` on the journal that fails at `failing`.
fn first_attempt(plan: &str, failing: &str) -> (keiri_run::RunOutcome, tempfile::TempDir) {
    let (outcome, _, ws) = run_builtins(&[("journal.csv", &journal())], plan, |_| {});
    assert_eq!(outcome.status, RunStatus::Failed, "{:?}", outcome.failures);
    assert_eq!(outcome.failures[0].node, failing);
    (outcome, ws)
}

fn resume(ws: &std::path::Path, run_id: &str) -> (keiri_run::RunOutcome, Vec<Event>) {
    run_in(ws, PLAN, |o| o.resume = Some(run_id.to_string()))
}

#[test]
fn a_big_table_of_a_step_is_kept_in_part_and_a_resume_gives_the_same_totals() {
    const { assert!(ROWS > WHOLE_ROWS) };
    let (first, ws) = first_attempt(PLAN, "extra");
    let dir = RunDir::open(&ws.path().join("runs"), "checkpoints", &first.run_id).unwrap();
    // The read and the normalised rows are kept as their first rows, with the real count.
    for node in ["read", "amounts"] {
        let kept = dir.kept_in_part(node).unwrap();
        assert_eq!(kept["rows"].rows, ROWS, "{node}");
        assert_eq!(dir.load_outputs(node).unwrap_err().code(), "KEPT_IN_PART");
        match dir.load_shown(node).unwrap().get("rows") {
            Some(Value::Table(df)) => assert_eq!(df.height(), SHOWN_ROWS),
            other => panic!("{node}: {other:?}"),
        }
    }
    // Three rows of totals are saved whole.
    assert!(dir.kept_in_part("totals").unwrap().is_empty());
    assert!(dir.load_outputs("totals").is_ok());

    keiri_fs::write_atomic(
        &ws.path().join("extra.csv"),
        "勘定科目,金額\n雑費,1\n".as_bytes(),
    )
    .unwrap();
    let (second, events) = resume(ws.path(), &first.run_id);
    assert_eq!(second.status, RunStatus::Finished, "{:?}", second.failures);
    let reused: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::NodeReused { node } => Some(node.as_str()),
            _ => None,
        })
        .collect();
    // Nothing still to run needs the rows kept in part: the read and the normalising step
    // stay done and are not run again.
    assert_eq!(reused, ["read", "amounts", "totals"]);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::NodeStart { node, .. } if node == "read"))
    );
    let dir = RunDir::open(&ws.path().join("runs"), "checkpoints", &second.run_id).unwrap();
    let all = dir
        .load_outputs("all")
        .unwrap()
        .get("rows")
        .unwrap()
        .to_json();
    // The totals are numbers and the extra file's 金額 text, so the combined column is text.
    let mut rows: Vec<(String, String)> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let text = |k: &str| r[k].as_str().unwrap_or_else(|| panic!("{all}")).to_string();
            (text("勘定科目"), text("金額"))
        })
        .collect();
    rows.sort();
    assert_eq!(
        json!(rows),
        json!([
            ["売上高", "2600000"],
            ["旅費交通費", "2600000"],
            ["消耗品費", "2600000"],
            ["雑費", "1"]
        ])
    );
}

/// A plan whose last step, reading the normalised rows, fails the first time (a column that
/// is not there, from a var) and is given the right column on resume: the resume needs the
/// rows kept in part, so the read and the normalising step run again.
const PICK: &str = r#"
id: checkpoints
vars: {column: 科目}
graph:
  - {id: read, block: csv.read, in: {path: journal.csv}, out: {rows: rows}}
  - {id: amounts, block: transforms.normalize_amounts, in: {rows: "${read.rows}", fields: [金額]}, out: {rows: rows}}
  - {id: pick, block: transforms.select_columns, in: {rows: "${amounts.rows}", columns: ["${vars.column}", 金額]}, out: {rows: rows}}
"#;

/// A resume of `plan`'s run `run_id` with the var `column` set to `column`.
fn resume_with_column(
    ws: &std::path::Path,
    plan: &str,
    run_id: &str,
    column: &str,
) -> (keiri_run::RunOutcome, Vec<Event>) {
    run_in(ws, plan, |o| {
        o.resume = Some(run_id.to_string());
        o.vars.insert("column".into(), json!(column));
    })
}

fn pick_resume(ws: &std::path::Path, run_id: &str) -> (keiri_run::RunOutcome, Vec<Event>) {
    resume_with_column(ws, PICK, run_id, "勘定科目")
}

/// The rows `pick` shows in run `run_id`, once checked to be kept in part, all `ROWS` counted.
fn picked_rows_shown(ws: &std::path::Path, run_id: &str) -> serde_json::Value {
    let dir = RunDir::open(&ws.join("runs"), "checkpoints", run_id).unwrap();
    assert_eq!(dir.kept_in_part("pick").unwrap()["rows"].rows, ROWS);
    dir.load_shown("pick")
        .unwrap()
        .get("rows")
        .unwrap()
        .to_json()
}

/// A resume that stopped at `read` because its file changed, before `pick` ran on the
/// changed rows.
fn assert_data_changed(outcome: &keiri_run::RunOutcome, read: &str) {
    assert_eq!(outcome.status, RunStatus::Failed);
    let failure = &outcome.failures[0];
    assert_eq!(
        (failure.node.as_str(), failure.code.as_str()),
        (read, "DATA_CHANGED")
    );
    assert_ne!(
        outcome.nodes.get("pick"),
        Some(&keiri_run::NodeStatus::Finished)
    );
}

#[test]
fn a_resume_that_needs_the_rows_kept_in_part_computes_them_again() {
    let (first, ws) = first_attempt(PICK, "pick");
    let (second, events) = pick_resume(ws.path(), &first.run_id);
    assert_eq!(second.status, RunStatus::Finished, "{:?}", second.failures);
    assert!(!events.iter().any(|e| matches!(e, Event::NodeReused { .. })));
    // The picked rows are kept in part too; their count and the first rows are the journal's.
    let shown = picked_rows_shown(ws.path(), &second.run_id);
    assert_eq!(shown[0], json!({"勘定科目": "旅費交通費", "金額": 1000}));
    assert_eq!(shown[3], json!({"勘定科目": "旅費交通費", "金額": 2000}));
    assert_eq!(shown[7], json!({"勘定科目": "消耗品費", "金額": -500}));
}

#[test]
fn a_resume_whose_file_changed_stops_rather_than_mix_two_attempts() {
    let (first, ws) = first_attempt(PICK, "pick");
    // One amount of the journal changes between the attempts: 1,000 becomes 1,001.
    let changed = journal().replacen("\"1,000\"", "\"1,001\"", 1);
    keiri_fs::write_atomic(&ws.path().join("journal.csv"), changed.as_bytes()).unwrap();
    let (second, _) = pick_resume(ws.path(), &first.run_id);
    assert_data_changed(&second, "read");
    let failure = &second.failures[0];
    assert!(
        failure.message_en.contains("12000 rows, now 12000"),
        "{}",
        failure.message_en
    );
}

/// 12,000 statement lines, every fourth a deposit of 1,500, the others withdrawals of 300,
/// dated 2025/04/01 to 2025/04/28 in turn.
fn statement() -> String {
    let mut text = String::from("取引日,お預入金額,お引出金額,摘要,残高\n");
    for i in 0..ROWS {
        let (deposit, withdrawal) = if i.is_multiple_of(4) {
            ("\"1,500\"", "")
        } else {
            ("", "300")
        };
        text.push_str(&format!(
            "2025/04/{:02},{deposit},{withdrawal},ﾌﾘｺﾐ ﾔﾏﾀﾞｼﾖｳｼﾞ,\n",
            i % 28 + 1
        ));
    }
    text
}

/// A statement read and a step after it that fails the first time (a column that is not
/// there, from a var) and is given the right column on resume.
const STATEMENT: &str = r#"
id: checkpoints
vars: {column: 日付}
graph:
  - id: read_bank
    block: bank.read_statement
    in: {path: statement.csv, mapping: {date: 取引日, deposit: お預入金額, withdrawal: お引出金額, description: 摘要, balance: 残高}}
    out: {rows: lines}
  - {id: pick, block: transforms.select_columns, in: {rows: "${read_bank.lines}", columns: ["${vars.column}", direction, amount]}, out: {rows: rows}}
"#;

fn statement_resume(ws: &std::path::Path, run_id: &str) -> (keiri_run::RunOutcome, Vec<Event>) {
    resume_with_column(ws, STATEMENT, run_id, "date")
}

#[test]
fn a_big_statement_is_kept_in_part_and_read_again_for_a_resume() {
    let (first, _, ws) = run_builtins(&[("statement.csv", &statement())], STATEMENT, |_| {});
    assert_eq!(first.status, RunStatus::Failed, "{:?}", first.failures);
    assert_eq!(first.failures[0].node, "pick");
    let dir = RunDir::open(&ws.path().join("runs"), "checkpoints", &first.run_id).unwrap();
    // The statement's lines are kept as their first rows with the real count, not whole.
    assert_eq!(dir.kept_in_part("read_bank").unwrap()["rows"].rows, ROWS);
    assert_eq!(
        dir.load_outputs("read_bank").unwrap_err().code(),
        "KEPT_IN_PART"
    );
    let (second, events) = statement_resume(ws.path(), &first.run_id);
    assert_eq!(second.status, RunStatus::Finished, "{:?}", second.failures);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::NodeStart { node, .. } if node == "read_bank"))
    );
    let shown = picked_rows_shown(ws.path(), &second.run_id);
    assert_eq!(
        shown[0],
        json!({"date": "2025-04-01", "direction": "deposit", "amount": 1500})
    );
    assert_eq!(
        shown[1],
        json!({"date": "2025-04-02", "direction": "withdrawal", "amount": 300})
    );
}

#[test]
fn a_resume_whose_statement_changed_stops_at_its_read() {
    let (first, _, ws) = run_builtins(&[("statement.csv", &statement())], STATEMENT, |_| {});
    assert_eq!(first.failures[0].node, "pick");
    // One deposit changes between the attempts: 1,500 becomes 1,501.
    let changed = statement().replacen("\"1,500\"", "\"1,501\"", 1);
    keiri_fs::write_atomic(&ws.path().join("statement.csv"), changed.as_bytes()).unwrap();
    let (second, _) = statement_resume(ws.path(), &first.run_id);
    assert_data_changed(&second, "read_bank");
}
