//! validate / dry-run / register / catalog.

use predicates::prelude::*;
use serde_json::Value;

use super::{VALID_PLAN, keiri, put};

fn invalid_plan() -> String {
    VALID_PLAN
        .replace("encoding: cp932", "encoding: iso-2022-jp")
        .replace("${read.rows}", "${read.records}")
}

#[test]
fn validate_valid_plan_exits_0() {
    let ws = tempfile::tempdir().unwrap();
    let plan = ws.path().join("p.yaml");
    put(&plan, VALID_PLAN);
    keiri(ws.path())
        .arg("validate")
        .arg(&plan)
        .assert()
        .success()
        .stdout(predicate::str::contains("ok:"));
}

/// `keiri --lang en --json validate` of the invalid plan: the parsed output (exit 1 checked).
fn invalid_plan_json(ws: &std::path::Path) -> Value {
    let plan = ws.join("p.yaml");
    put(&plan, &invalid_plan());
    let out = keiri(ws)
        .args(["--lang", "en", "--json", "validate"])
        .arg(&plan)
        .assert()
        .code(1);
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

#[test]
fn validate_json_prints_findings_and_exits_1() {
    let ws = tempfile::tempdir().unwrap();
    let v = invalid_plan_json(ws.path());
    assert_eq!(v["valid"], false);
    let codes: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["input.enum_mismatch", "ref.unknown_alias"]);
    let first = &v["findings"][0];
    assert_eq!(first["path"], "/graph/0/in/encoding");
    assert_eq!(first["line"], 11);
    assert!(
        first["message"]
            .as_str()
            .unwrap()
            .contains("not one of the allowed values")
    );
}

#[test]
fn validate_human_output_in_japanese() {
    let ws = tempfile::tempdir().unwrap();
    let plan = ws.path().join("p.yaml");
    put(&plan, &invalid_plan());
    keiri(ws.path())
        .arg("validate")
        .arg(&plan)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("error[input.enum_mismatch]"))
        .stdout(predicate::str::contains("選択肢にありません"));
}

/// The whole `--json` and human outputs of a failing validate, as snapshots
/// (`tests/cli/snapshots/`): a change of a field, a code, a line number or a message shows as a
/// diff to review (`cargo insta review`), not as a silently passing substring check.
#[test]
fn validate_outputs_snapshot() {
    let ws = tempfile::tempdir().unwrap();
    insta::assert_json_snapshot!("validate_json_en", invalid_plan_json(ws.path()));
    let plan = ws.path().join("p.yaml");
    let out = keiri(ws.path())
        .args(["--lang", "ja", "validate"])
        .arg(&plan)
        .assert()
        .code(1);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    // The plan's temporary folder is the only part of the text that changes between runs.
    let text = text.replace(&ws.path().display().to_string(), "<ws>");
    insta::assert_snapshot!("validate_text_ja", text);
}

#[test]
fn usage_and_io_errors_exit_2() {
    let ws = tempfile::tempdir().unwrap();
    keiri(ws.path())
        .arg("validate")
        .arg(ws.path().join("missing.yaml"))
        .assert()
        .code(2);
    keiri(ws.path()).arg("frobnicate").assert().code(2);
    keiri(ws.path())
        .args(["--lang", "fr", "catalog"])
        .assert()
        .code(2);
}

#[test]
fn yaml_syntax_error_is_a_finding() {
    let ws = tempfile::tempdir().unwrap();
    let plan = ws.path().join("p.yaml");
    put(&plan, "id: x\ngraph: [\n");
    let out = keiri(ws.path())
        .args(["--json", "validate"])
        .arg(&plan)
        .assert()
        .code(1);
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["findings"][0]["code"], "yaml.parse");
    assert!(v["findings"][0]["line"].is_number());
}

#[test]
fn register_refuses_invalid_and_writes_valid_once() {
    let ws = tempfile::tempdir().unwrap();
    let plan = ws.path().join("p.yaml");
    put(&plan, &invalid_plan());
    keiri(ws.path()).arg("register").arg(&plan).assert().code(1);
    assert!(
        !ws.path().join("designs").exists()
            || std::fs::read_dir(ws.path().join("designs"))
                .unwrap()
                .count()
                == 0
    );

    put(&plan, VALID_PLAN);
    let out = keiri(ws.path())
        .args(["--json", "register"])
        .arg(&plan)
        .assert()
        .success();
    let first: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let name = first["file_name"].as_str().unwrap();
    assert!(
        name.starts_with("invoice_duplicates_") && name.ends_with(".yaml"),
        "{name}"
    );
    let saved = std::fs::read_to_string(first["path"].as_str().unwrap()).unwrap();
    assert_eq!(saved, VALID_PLAN);

    // A second registration never overwrites the first.
    let out = keiri(ws.path())
        .args(["--json", "register"])
        .arg(&plan)
        .assert()
        .success();
    let second: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_ne!(first["path"], second["path"]);
    assert_eq!(
        std::fs::read_dir(ws.path().join("designs"))
            .unwrap()
            .count(),
        2
    );
}

#[test]
fn dry_run_shows_order() {
    let ws = tempfile::tempdir().unwrap();
    let plan = ws.path().join("p.yaml");
    put(&plan, VALID_PLAN);
    let out = keiri(ws.path())
        .args(["--json", "dry-run"])
        .arg(&plan)
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["order"], serde_json::json!(["read", "dupes", "report"]));
    assert_eq!(v["nodes"][0]["inputs"]["path"], "invoices.csv");
    keiri(ws.path())
        .arg("dry-run")
        .arg(&plan)
        .assert()
        .success()
        .stdout(predicate::str::contains("1. read (csv.read)"));
    put(&plan, &invalid_plan());
    keiri(ws.path()).arg("dry-run").arg(&plan).assert().code(1);
}

#[test]
fn catalog_lists_blocks() {
    let ws = tempfile::tempdir().unwrap();
    let out = keiri(ws.path())
        .args(["--json", "catalog", "--query", "請求書"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let ids: Vec<&str> = v["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"matching.duplicate_invoices"), "{ids:?}");
    keiri(ws.path())
        .arg("catalog")
        .assert()
        .success()
        .stdout(predicate::str::contains("ai.process_llm"));
}

/// `keiri validate --var/--input` checks the plan as that run would be: the columns of the
/// file a run is given, and a column a var names for the run.
#[test]
fn validate_with_a_runs_vars_and_inputs_checks_the_files_that_run_reads() {
    let ws = tempfile::tempdir().unwrap();
    put(
        &ws.path().join("p.yaml"),
        "id: totals\nvars:\n  journal: journal.csv\n  by: [部門]\ngraph:\n  - {id: read, block: csv.read, in: {path: \"${vars.journal}\"}, out: {rows: rows}}\n  - {id: totals, block: transforms.group_aggregate, in: {rows: \"${read.rows}\", by: \"${vars.by}\", aggregations: [{field: 金額, op: sum}]}, out: {rows: totals}}\n  - {id: save, block: csv.write, in: {rows: \"${totals.totals}\", out_name: totals.csv}}\n",
    );
    put(
        &ws.path().join("journal.csv"),
        "伝票番号,部門,金額\nV1,営業,1000\n",
    );
    // Next month's export writes the department 部署.
    put(
        &ws.path().join("april.csv"),
        "伝票番号,部署,金額\nV9,総務,300\n",
    );
    let plan = ws.path().join("p.yaml");
    let validate = |extra: &[&str]| {
        keiri(ws.path())
            .args(["--lang", "ja", "validate"])
            .arg(&plan)
            .args(extra)
            .assert()
    };
    validate(&[]).success();
    let out = validate(&["--input", "journal=april.csv"]).code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains("error[column.unknown]")
            && text.contains("列「部門」は")
            && text.contains("伝票番号, 部署, 金額"),
        "{text}"
    );
    // The run's own column for it: valid.
    validate(&["--input", "journal=april.csv", "--var", "by=[\"部署\"]"]).success();
    // A column the run's var names that the file lacks.
    validate(&["--var", "by=[\"部署\"]"]).code(1);
    // An input that does not exist is refused, naming it.
    validate(&["--input", "journal=may.csv"])
        .code(2)
        .stderr(predicate::str::contains("NOT_FOUND: input journal"));
}

/// A plan written for keiri_agent v0: its CSV read and its grouping, in v0's block ids and keys.
const V0_TOTALS: &str = r#"apiVersion: v1
id: v0_totals
version: 0.1.0
vars:
  journal: journal.csv
graph:
- id: read
  block: file.read_csv
  in:
    path: ${vars.journal}
    has_header: true
  out:
    rows: rows
- id: totals
  block: transforms.group_by_agg
  in:
    items: ${read.rows}
    by: [account]
    aggregations:
    - {field: amount, op: sum}
  out:
    rows: totals
"#;

/// `keiri validate` on a v0 plan names what each v0 block became first: csv.read for
/// file.read_csv (it used to suggest file.list_folder).
#[test]
fn an_unknown_v0_block_suggests_what_it_became() {
    let ws = tempfile::tempdir().unwrap();
    put(&ws.path().join("v0.yaml"), V0_TOTALS);
    let out = keiri(ws.path())
        .args(["--json", "--lang", "en", "validate"])
        .arg(ws.path().join("v0.yaml"))
        .assert()
        .code(1);
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let hints: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "block.unknown")
        .map(|f| f["hint"].as_str().unwrap())
        .collect();
    assert_eq!(hints.len(), 2, "{v:#}");
    assert!(hints[0].starts_with("did you mean: csv.read"), "{hints:?}");
    assert!(
        hints[1].starts_with("did you mean: transforms.group_aggregate"),
        "{hints:?}"
    );
}

/// `keiri import-v0` rewrites a v0 plan whose blocks all map one to one into a plan that
/// validates and runs on the journal it names. A plan with a block that has no successor
/// exits 1 and names that node.
#[test]
fn import_v0_rewrites_what_maps_and_names_what_does_not() {
    let ws = tempfile::tempdir().unwrap();
    put(&ws.path().join("v0.yaml"), V0_TOTALS);
    put(
        &ws.path().join("journal.csv"),
        "account,amount\nA,1200\nB,40\nA,300\n",
    );
    keiri(ws.path())
        .args(["import-v0", "v0.yaml", "--out"])
        .arg(ws.path().join("plan.yaml"))
        .current_dir(ws.path())
        .assert()
        .code(0)
        .stderr(predicate::str::contains(
            "block file.read_csv is now csv.read",
        ))
        .stderr(predicate::str::contains("input has_header is now header"))
        .stderr(predicate::str::contains("0 not mapped"));
    let plan = std::fs::read_to_string(ws.path().join("plan.yaml")).unwrap();
    assert!(
        plan.contains("block: csv.read") && plan.contains("header: true"),
        "{plan}"
    );
    let out = keiri(ws.path())
        .args(["--json", "run", "plan.yaml"])
        .current_dir(ws.path())
        .assert()
        .code(0);
    let res: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(res["status"], "finished", "{res:#}");
    // Refused over an existing file, before anything is written.
    keiri(ws.path())
        .args(["import-v0", "v0.yaml", "--out"])
        .arg(ws.path().join("plan.yaml"))
        .assert()
        .code(2);

    let chunked = V0_TOTALS.replace("transforms.group_by_agg", "nlp.chunk_texts");
    put(&ws.path().join("v0_nlp.yaml"), &chunked);
    let out = keiri(ws.path())
        .args(["--json", "import-v0"])
        .arg(ws.path().join("v0_nlp.yaml"))
        .assert()
        .code(1);
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let unmapped = v["unmapped"].as_array().unwrap();
    assert_eq!(unmapped.len(), 1, "{v:#}");
    assert_eq!(unmapped[0]["node_id"], "totals");
    assert!(
        unmapped[0]["detail"]
            .as_str()
            .unwrap()
            .contains("no equivalent here"),
        "{v:#}"
    );
    assert_eq!(v["validation"]["valid"], false);
}
