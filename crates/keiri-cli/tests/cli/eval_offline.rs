//! `keiri eval offline`: the shipped case files run as a user's requests (compose, attached
//! files and all) and keep the pass rates the README reports; a bad case file is refused
//! with its line.

use std::path::Path;

use serde_json::Value;

use super::{LLM_ENV, keiri, put, stdout_json};

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The README's figure for `cases`: `(passed, total)` from its line
/// "- `<cases>`: offline eval: N of M cases passed …".
fn readme_rate(cases: &str) -> (usize, usize) {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let marker = format!("`{cases}`: offline eval: ");
    let line = readme
        .lines()
        .find_map(|l| l.split_once(&marker).map(|(_, rest)| rest.to_string()))
        .unwrap_or_else(|| panic!("README.md has no line with {marker:?}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words.get(1), Some(&"of"), "{line}");
    (words[0].parse().unwrap(), words[2].parse().unwrap())
}

fn run_eval(cases: &str) -> Value {
    let ws = tempfile::tempdir().unwrap();
    copy_dir(&repo().join("evals"), &ws.path().join("evals"));
    copy_dir(&repo().join("samples"), &ws.path().join("samples"));
    let mut cmd = keiri(ws.path());
    for v in LLM_ENV {
        cmd.env_remove(v);
    }
    let out = cmd
        .args(["--json", "eval", "offline", "--cases", cases])
        .assert()
        .success();
    stdout_json(&out)
}

fn check(cases: &str, at_least: usize) {
    let report = run_eval(cases);
    let failed: Vec<&Value> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["passed"] != true)
        .collect();
    let (passed, total) = (
        report["passed"].as_u64().unwrap() as usize,
        report["total"].as_u64().unwrap() as usize,
    );
    assert!(total >= at_least, "{cases}: only {total} cases");
    let (readme_passed, readme_total) = readme_rate(cases);
    assert_eq!(
        total, readme_total,
        "{cases}: the README counts other cases"
    );
    assert!(
        passed >= readme_passed,
        "{cases}: {passed} of {total} passed, the README says {readme_passed}; failed: {failed:#?}"
    );
}

#[test]
fn the_offline_cases_keep_the_readme_pass_rate() {
    check("evals/offline_cases.yaml", 30);
}

/// Cases written without sight of the templates' job words: jobs the chooser has not seen.
#[test]
fn the_held_out_cases_keep_the_readme_pass_rate() {
    check("evals/offline_heldout.yaml", 20);
}

#[test]
fn a_bad_offline_case_file_is_refused_with_its_line() {
    let ws = tempfile::tempdir().unwrap();
    put(
        &ws.path().join("cases.yaml"),
        "cases:\n  - id: a\n    instruction: 請求書の重複\n    no_fit: true\n    expect_templates: [invoice_duplicate_detection]\n",
    );
    let out = keiri(ws.path())
        .args(["eval", "offline", "--cases", "cases.yaml"])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr);
    assert!(stderr.contains("EVAL_CASES_INVALID"), "{stderr}");
    assert!(stderr.contains(":2:"), "{stderr}");
    assert!(stderr.contains("either templates"), "{stderr}");

    put(
        &ws.path().join("cases.yaml"),
        "cases:\n  - id: a\n    instruction: 請求書の重複\n    expect_templates: [invoice_duplicate_detection]\n",
    );
    let out = keiri(ws.path())
        .args(["eval", "offline", "--cases", "cases.yaml", "--only", "zzz"])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr);
    assert!(stderr.contains("no case with the id"), "{stderr}");
}
