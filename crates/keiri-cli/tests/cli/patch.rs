//! `keiri patch`: the exstruct_patch request from a file or flags, exit codes 0/1/2.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{keiri, put};

/// A fixture workbook copied into the test workspace (fixtures live in ../shared beside the
/// repository and are never copied into it).
fn workbook(ws: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/fixtures/accounting/multi_sheet_ja.xlsx");
    assert!(
        src.is_file(),
        "the shared fixtures are missing: expected {}",
        src.display()
    );
    let dst = ws.join("book.xlsx");
    std::fs::copy(&src, &dst).unwrap();
    dst
}

/// `keiri` run from inside the workspace, so `--ops`/`--request` files resolve there too.
fn keiri_in(ws: &Path) -> assert_cmd::Command {
    let mut cmd = keiri(ws);
    cmd.current_dir(ws);
    cmd
}

fn stdout_json(out: &assert_cmd::assert::Assert) -> Value {
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

const SET_B2: &str = r#"[{"op":"set_value","sheet":"入力データ","cell":"D2","value":"確認済"}]"#;

#[test]
fn flags_dry_run_prints_the_diff_and_writes_nothing() {
    let ws = tempfile::tempdir().unwrap();
    let book = workbook(ws.path());
    let before = std::fs::read(&book).unwrap();
    put(&ws.path().join("ops.json"), SET_B2);
    let out = keiri_in(ws.path())
        .args([
            "patch",
            "--xlsx-path",
            "book.xlsx",
            "--ops",
            "ops.json",
            "--dry-run",
            "--return-inverse-ops",
        ])
        .assert()
        .code(0);
    let v = stdout_json(&out);
    assert_eq!(v["patch_diff"][0]["cell"], "D2");
    assert_eq!(
        v["patch_diff"][0]["after"],
        json!({"kind": "value", "value": "確認済"})
    );
    assert_eq!(
        v["inverse_ops"][0],
        json!({"op": "set_value", "sheet": "入力データ", "cell": "D2", "value": null})
    );
    assert!(v["error"].is_null());
    assert_eq!(std::fs::read(&book).unwrap(), before);
    assert!(!ws.path().join("book_patched.xlsx").exists());
}

#[test]
fn request_file_and_on_conflict_default() {
    let ws = tempfile::tempdir().unwrap();
    workbook(ws.path());
    let req = json!({"xlsx_path": "book.xlsx", "ops": serde_json::from_str::<Value>(SET_B2).unwrap(), "out_name": "out.xlsx"});
    put(&ws.path().join("req.json"), &req.to_string());
    keiri_in(ws.path())
        .args(["patch", "--request", "req.json"])
        .assert()
        .code(0);
    // The flag is the default: it applies because the request says nothing …
    let v = stdout_json(
        &keiri_in(ws.path())
            .args([
                "patch",
                "--request",
                "req.json",
                "--on-conflict",
                "overwrite",
            ])
            .assert()
            .code(0),
    );
    assert!(
        v["out_path"].as_str().unwrap().ends_with("/out.xlsx"),
        "{v}"
    );
    // … and a value in the request wins over it.
    let mut req = req;
    req["on_conflict"] = json!("rename");
    put(&ws.path().join("req.json"), &req.to_string());
    let v = stdout_json(
        &keiri_in(ws.path())
            .args([
                "patch",
                "--request",
                "req.json",
                "--on-conflict",
                "overwrite",
            ])
            .assert()
            .code(0),
    );
    assert!(
        v["out_path"].as_str().unwrap().ends_with("/out_1.xlsx"),
        "{v}"
    );
}

#[test]
fn op_errors_exit_1_and_request_errors_exit_2() {
    let ws = tempfile::tempdir().unwrap();
    workbook(ws.path());
    put(
        &ws.path().join("bad_sheet.json"),
        r#"[{"op":"set_value","sheet":"無い","cell":"A1","value":1}]"#,
    );
    let v = stdout_json(
        &keiri_in(ws.path())
            .args([
                "patch",
                "--xlsx-path",
                "book.xlsx",
                "--ops",
                "bad_sheet.json",
            ])
            .assert()
            .code(1),
    );
    assert_eq!(v["error"]["op_index"], 0);

    put(
        &ws.path().join("div0.json"),
        r#"[{"op":"set_formula","sheet":"入力データ","cell":"E2","formula":"=C2/0"}]"#,
    );
    let v = stdout_json(
        &keiri_in(ws.path())
            .args([
                "patch",
                "--xlsx-path",
                "book.xlsx",
                "--ops",
                "div0.json",
                "--preflight-formula-check",
            ])
            .assert()
            .code(1),
    );
    assert_eq!(v["formula_issues"][0]["code"], "div0_error");
    assert!(!ws.path().join("book_patched.xlsx").exists());

    put(&ws.path().join("old.xls"), "legacy");
    let v = stdout_json(
        &keiri_in(ws.path())
            .args(["patch", "--xlsx-path", "old.xls", "--ops", "bad_sheet.json"])
            .assert()
            .code(2),
    );
    assert_eq!(v["code"], "INVALID_REQUEST");
    assert!(v["message"].as_str().unwrap().contains("Excel COM"));

    put(
        &ws.path().join("bad_cell.json"),
        r#"[{"op":"set_value","sheet":"入力データ","cell":"A0","value":1}]"#,
    );
    let v = stdout_json(
        &keiri_in(ws.path())
            .args([
                "patch",
                "--xlsx-path",
                "book.xlsx",
                "--ops",
                "bad_cell.json",
            ])
            .assert()
            .code(2),
    );
    assert_eq!(v["code"], "INVALID_REQUEST");
    keiri_in(ws.path())
        .args(["patch", "--xlsx-path", "book.xlsx"])
        .assert()
        .code(2);
}
