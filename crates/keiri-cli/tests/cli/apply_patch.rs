//! `keiri apply-patch FILE --patch PATCH|-`.

use serde_json::Value;

use super::{keiri, put};

const PLAN: &str = "id: p\ngraph:\n  - id: read\n    block: csv.read\n";
const PATCH: &str = "--- a/plan.yaml\n+++ b/plan.yaml\n@@ -3,2 +3,3 @@\n   - id: read\n     block: csv.read\n+    in: {path: 請求書.csv}\n";

/// Runs `keiri apply-patch` in a workspace holding plan.yaml; `stdin` is the patch when
/// `args` use `-`. Checks the exit code, a JSON pointer of the output, and the file after.
fn check(args: &[&str], stdin: &str, code: i32, pointer: &str, value: Value, after: &str) {
    let ws = tempfile::tempdir().unwrap();
    put(&ws.path().join("plan.yaml"), PLAN);
    put(&ws.path().join("change.diff"), PATCH);
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("{ws}", &ws.path().display().to_string()))
        .collect();
    let out = keiri(ws.path())
        .arg("apply-patch")
        .args(&args)
        .write_stdin(stdin)
        .assert()
        .code(code);
    let json: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(json.pointer(pointer), Some(&value), "{json}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("plan.yaml")).unwrap(),
        after
    );
}

fn patched() -> String {
    format!("{PLAN}    in: {{path: 請求書.csv}}\n")
}

#[test]
fn applies_from_stdin_or_a_file() {
    check(
        &["plan.yaml", "--patch", "-"],
        PATCH,
        0,
        "/written",
        Value::Bool(true),
        &patched(),
    );
    check(
        &["plan.yaml", "--patch", "{ws}/change.diff"],
        "",
        0,
        "/path",
        Value::from("plan.yaml"),
        &patched(),
    );
    check(
        &["plan.yaml", "--patch", "-", "--backend", "git"],
        PATCH,
        0,
        "/backend",
        Value::from("git"),
        &patched(),
    );
}

#[test]
fn dry_run_writes_nothing() {
    check(
        &["plan.yaml", "--patch", "-", "--dry-run"],
        PATCH,
        0,
        "/changed",
        Value::Bool(true),
        PLAN,
    );
}

#[test]
fn apply_failed_exits_1_other_errors_exit_2() {
    let wrong = PATCH.replace("csv.read", "csv.write");
    check(
        &["plan.yaml", "--patch", "-"],
        &wrong,
        1,
        "/code",
        Value::from("APPLY_FAILED"),
        PLAN,
    );
    // An argument the tool cannot use: its contract's code.
    check(
        &["", "--patch", "-"],
        PATCH,
        2,
        "/code",
        Value::from("INVALID_ARGUMENT"),
        PLAN,
    );
    check(
        &["missing.yaml", "--patch", "-"],
        PATCH,
        2,
        "/code",
        Value::from("NOT_FOUND"),
        PLAN,
    );
    // The command line trusts its own arguments unless --root keeps them in a folder.
    check(
        &["--root", "{ws}", "/etc/passwd", "--patch", "-"],
        PATCH,
        2,
        "/code",
        Value::from("PATH_DENIED"),
        PLAN,
    );
    check(
        &["plan.yaml", "--patch", "{ws}/no-such.diff"],
        "",
        2,
        "/code",
        Value::from("NOT_FOUND"),
        PLAN,
    );
}
