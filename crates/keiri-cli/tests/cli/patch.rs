//! `keiri patch`: the exstruct_patch request from a file or flags, exit codes 0/1/2.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{keiri, put, stdout_json};

/// A fixture workbook copied into the test workspace (fixtures live in ../shared beside the
/// repository and are never copied into it).
fn workbook(ws: &Path) -> PathBuf {
    let src = keiri_testkit::shared_fixture("accounting/multi_sheet_ja.xlsx");
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

/// Runs `keiri patch <args>` in `ws`, checks its exit code and returns the JSON it printed.
fn check(ws: &Path, args: &[&str], expect_code: i32) -> Value {
    let out = keiri_in(ws)
        .arg("patch")
        .args(args)
        .assert()
        .code(expect_code);
    stdout_json(&out)
}

const SET_B2: &str = r#"[{"op":"set_value","sheet":"入力データ","cell":"D2","value":"確認済"}]"#;

#[test]
fn flags_dry_run_prints_the_diff_and_writes_nothing() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let book = workbook(ws.path());
    let before = std::fs::read(&book).unwrap();
    put(&ws.path().join("ops.json"), SET_B2);
    let v = check(
        ws.path(),
        &[
            "--xlsx-path",
            "book.xlsx",
            "--ops",
            "ops.json",
            "--dry-run",
            "--return-inverse-ops",
        ],
        0,
    );
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
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    workbook(ws.path());
    let req = json!({"xlsx_path": "book.xlsx", "ops": serde_json::from_str::<Value>(SET_B2).unwrap(), "out_name": "out.xlsx"});
    put(&ws.path().join("req.json"), &req.to_string());
    check(ws.path(), &["--request", "req.json"], 0);
    for (on_conflict, expect_out) in [
        // The flag is the default: it applies because the request says nothing …
        (None, "/out.xlsx"),
        // … and a value in the request wins over it.
        (Some("rename"), "/out_1.xlsx"),
    ] {
        let mut req = req.clone();
        if let Some(value) = on_conflict {
            req["on_conflict"] = json!(value);
        }
        put(&ws.path().join("req.json"), &req.to_string());
        let v = check(
            ws.path(),
            &["--request", "req.json", "--on-conflict", "overwrite"],
            0,
        );
        assert!(v["out_path"].as_str().unwrap().ends_with(expect_out), "{v}");
    }
}

#[test]
fn op_errors_exit_1_and_request_errors_exit_2() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    workbook(ws.path());
    // Ops that fail on the workbook exit 1, a request that cannot be run exits 2; neither
    // writes the workbook.
    for (name, ops, extra, expect_code, pointer, expect) in [
        (
            "bad_sheet.json",
            r#"[{"op":"set_value","sheet":"無い","cell":"A1","value":1}]"#,
            &[][..],
            1,
            "/error/op_index",
            json!(0),
        ),
        (
            "div0.json",
            r#"[{"op":"set_formula","sheet":"入力データ","cell":"E2","formula":"=C2/0"}]"#,
            &["--preflight-formula-check"][..],
            1,
            "/formula_issues/0/code",
            json!("div0_error"),
        ),
        // A shape that differs from the range, and a fill from a bad base cell, are request errors
        // (the contract's), not op errors: exit 2 with the code.
        (
            "bad_shape.json",
            r#"[{"op":"set_range_values","sheet":"入力データ","range":"A1:B2","values":[[1,2]]}]"#,
            &[][..],
            2,
            "/code",
            json!("INVALID_REQUEST"),
        ),
        (
            "bad_fill.json",
            r#"[{"op":"fill_formula","sheet":"入力データ","range":"E2:F3","base_cell":"E","formula":"=C2"}]"#,
            &[][..],
            2,
            "/code",
            json!("INVALID_REQUEST"),
        ),
        (
            "bad_cell.json",
            r#"[{"op":"set_value","sheet":"入力データ","cell":"A0","value":1}]"#,
            &[][..],
            2,
            "/code",
            json!("INVALID_REQUEST"),
        ),
    ] {
        put(&ws.path().join(name), ops);
        let args = [&["--xlsx-path", "book.xlsx", "--ops", name][..], extra].concat();
        let v = check(ws.path(), &args, expect_code);
        assert_eq!(v.pointer(pointer), Some(&expect), "{name}: {v}");
        assert!(!ws.path().join("book_patched.xlsx").exists(), "{name}");
    }

    put(&ws.path().join("old.xls"), "legacy");
    let v = check(
        ws.path(),
        &["--xlsx-path", "old.xls", "--ops", "bad_sheet.json"],
        2,
    );
    assert_eq!(v["code"], "INVALID_REQUEST");
    assert!(v["message"].as_str().unwrap().contains("Excel COM"));

    keiri_in(ws.path())
        .args(["patch", "--xlsx-path", "book.xlsx"])
        .assert()
        .code(2);
}

#[test]
fn dry_run_with_skip_previews_no_diff_when_the_output_exists() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    workbook(ws.path());
    put(&ws.path().join("ops.json"), SET_B2);
    let flags = ["--xlsx-path", "book.xlsx", "--ops", "ops.json"];
    check(ws.path(), &flags, 0);
    let written = std::fs::read(ws.path().join("book_patched.xlsx")).unwrap();
    let v = check(
        ws.path(),
        &[&flags[..], &["--dry-run", "--on-conflict", "skip"]].concat(),
        0,
    );
    assert_eq!(v["patch_diff"], json!([]), "{v}");
    assert!(
        v["warnings"][0]
            .as_str()
            .unwrap()
            .contains("nothing would be written"),
        "{v}"
    );
    assert_eq!(
        std::fs::read(ws.path().join("book_patched.xlsx")).unwrap(),
        written
    );
}
