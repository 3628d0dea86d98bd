//! The contract's acceptance list: dry runs, inverse ops, validation, conditional ops, the
//! preflight formula check, output paths and conflict policies.

use std::path::Path;

use keiri_xlsx::{IssueCode, IssueLevel, OnConflict, PatchOp};
use serde_json::{Value, json};

use crate::support::{Cell, Workspace, build_xlsx, cell, cells};

/// A small ledger: values, text and formulas on two sheets.
fn ledger() -> Vec<u8> {
    build_xlsx(&[
        (
            "明細",
            vec![
                ("A1", Cell::S("品目")),
                ("B1", Cell::S("金額")),
                ("A2", Cell::S("交通費")),
                ("B2", Cell::N(1200.0)),
                ("A3", Cell::S("会議費")),
                ("B3", Cell::N(3400.5)),
                ("B4", Cell::F("SUM(B2:B3)")),
                ("C2", Cell::F("B2*1.1")),
                ("C3", Cell::F("B3*1.1")),
            ],
        ),
        (
            "集計",
            vec![("A1", Cell::F("明細!B4")), ("B1", Cell::N(0.0))],
        ),
    ])
}

fn ws_with_ledger() -> (Workspace, String) {
    let ws = Workspace::new();
    let name = ws.add_file("ledger.xlsx", &ledger());
    (ws, name)
}

/// A preview shows what a formula comes to, not only its text: the diff carries the value the
/// engine computes in the patched workbook (the new 1,500 included), with or without the
/// formula check; a formula that evaluates to an error has none (the check reports it).
#[test]
fn a_formula_written_shows_its_value_in_the_patched_workbook() {
    let (ws, name) = ws_with_ledger();
    for preflight in [false, true] {
        let res = ws.ok(json!({
            "xlsx_path": name,
            "ops": [
                {"op": "set_value", "sheet": "明細", "cell": "B2", "value": 1500},
                {"op": "set_formula", "sheet": "集計", "cell": "B2", "formula": "=明細!B4*2"},
                {"op": "set_formula", "sheet": "集計", "cell": "C2", "formula": "=\"合計\"&TEXT(明細!B2*2,\"#,##0\")"},
                {"op": "set_formula", "sheet": "集計", "cell": "D2", "formula": "=明細!B2>1000"},
                {"op": "set_formula", "sheet": "集計", "cell": "E2", "formula": "=1/集計!B1"},
            ],
            "dry_run": true,
            "preflight_formula_check": preflight,
        }));
        let computed = |cell: &str| {
            res.patch_diff
                .iter()
                .find(|d| d.sheet == "集計" && d.cell.as_deref() == Some(cell))
                .unwrap_or_else(|| panic!("no diff item for {cell}"))
                .computed
                .clone()
        };
        // (1,500 + 3,400.5) × 2; a value written is not computed.
        assert_eq!(
            computed("B2"),
            Some(keiri_xlsx::CellValue::Int(9801)),
            "preflight {preflight}"
        );
        assert_eq!(
            computed("C2"),
            Some(keiri_xlsx::CellValue::Text("合計3,000".into()))
        );
        assert_eq!(computed("D2"), Some(keiri_xlsx::CellValue::Bool(true)));
        assert_eq!(
            computed("E2"),
            None,
            "#DIV/0! is a formula issue, not a value"
        );
        let written = res
            .patch_diff
            .iter()
            .find(|d| d.sheet == "明細" && d.cell.as_deref() == Some("B2"))
            .unwrap();
        assert_eq!(written.computed, None);
    }
}

fn mtime(p: &Path) -> std::time::SystemTime {
    std::fs::metadata(p).unwrap().modified().unwrap()
}

#[test]
fn dry_run_writes_nothing_and_reports_everything() {
    let (ws, name) = ws_with_ledger();
    let src = ws.path(&name);
    let bytes = std::fs::read(&src).unwrap();
    let modified = mtime(&src);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let res = ws.ok(json!({
        "xlsx_path": name,
        "ops": [
            {"op": "set_value", "sheet": "明細", "cell": "B2", "value": 1500},
            {"op": "set_formula", "sheet": "集計", "cell": "B2", "formula": "=1/集計!B1"},
        ],
        "out_dir": "out/nested",
        "dry_run": true,
        "return_inverse_ops": true,
        "preflight_formula_check": true,
    }));
    assert_eq!(std::fs::read(&src).unwrap(), bytes);
    assert_eq!(mtime(&src), modified);
    assert!(!ws.path("out").exists(), "a dry run creates no directory");
    assert_eq!(
        Path::new(&res.out_path),
        ws.dir
            .path()
            .canonicalize()
            .unwrap()
            .join("out/nested/ledger_patched.xlsx")
    );
    assert_eq!(res.patch_diff.len(), 2);
    assert_eq!(res.inverse_ops.len(), 2);
    assert!(
        res.error.is_none(),
        "a dry run lists issues without failing"
    );
    assert!(
        res.formula_issues.iter().any(|i| i.cell == "B2"
            && i.code == IssueCode::Div0Error
            && i.level == IssueLevel::Error)
    );
}

/// Applies the patch, then its inverse ops to the result, and compares every cell with the
/// original (values and formulas, read by calamine).
fn check_round_trip(ws: &Workspace, name: &str, ops: Value) {
    let original = cells(&ws.path(name));
    let res = ws.ok(json!({"xlsx_path": name, "ops": ops, "return_inverse_ops": true, "out_name": "patched.xlsx", "on_conflict": "overwrite"}));
    assert_ne!(
        cells(Path::new(&res.out_path)),
        original,
        "the patch must change something"
    );
    let undo = serde_json::to_value(&res.inverse_ops).unwrap();
    let back = ws.ok(json!({"xlsx_path": "patched.xlsx", "ops": undo, "out_name": "restored.xlsx", "on_conflict": "overwrite"}));
    assert_eq!(
        cells(Path::new(&back.out_path)),
        original,
        "inverse ops: {undo}"
    );
    use calamine::Reader;
    let sheets = |p: &Path| calamine::open_workbook_auto(p).unwrap().sheet_names();
    assert_eq!(sheets(Path::new(&back.out_path)), sheets(&ws.path(name)));
}

#[test]
fn inverse_ops_restore_the_original() {
    let (ws, name) = ws_with_ledger();
    check_round_trip(
        &ws,
        &name,
        json!([
            {"op": "set_value", "sheet": "明細", "cell": "B2", "value": 1500},
            {"op": "set_value", "sheet": "明細", "cell": "A3", "value": null},
            {"op": "set_formula", "sheet": "明細", "cell": "B4", "formula": "=SUM(B2:B3)*2"},
            {"op": "set_value", "sheet": "明細", "cell": "C2", "value": "手入力"},
            {"op": "set_range_values", "sheet": "明細", "range": "A5:B6", "values": [["追加", 1], [null, 2.5]]},
            {"op": "set_range_values", "sheet": "明細", "range": "B3:C3", "values": [[1, 2]]},
            {"op": "fill_formula", "sheet": "明細", "range": "D2:D4", "base_cell": "D2", "formula": "=B2+C2"},
            {"op": "add_sheet", "sheet": "新規シート"},
            {"op": "set_value", "sheet": "新規シート", "cell": "A1", "value": "一時"},
            {"op": "set_value_if", "sheet": "集計", "cell": "B1", "expected": 0, "value": 7},
            {"op": "set_formula_if", "sheet": "集計", "cell": "A1", "expected": "=明細!B4", "formula": "=明細!B4/2"},
        ]),
    );
}

#[test]
fn inverse_ops_restore_a_real_workbook() {
    if keiri_testkit::skip_without_shared("fixtures/accounting/retirement_benefit_workbook.xlsx") {
        return;
    }
    let ws = Workspace::new();
    let name = ws.add_fixture("accounting/retirement_benefit_workbook.xlsx");
    check_round_trip(
        &ws,
        &name,
        json!([
            {"op": "set_range_values", "sheet": "2024.12", "range": "A3:C5", "values": [[1, 2, 3], ["a", "b", "c"], [null, null, true]]},
            {"op": "fill_formula", "sheet": "2024.9", "range": "H2:H6", "base_cell": "H2", "formula": "=SUM($B2:G2)"},
        ]),
    );
}

fn op_error(ws: &Workspace, name: &str, ops: Value) -> keiri_xlsx::PatchErrorDetail {
    let res = ws
        .run(json!({"xlsx_path": name, "ops": ops, "out_name": "failed.xlsx"}))
        .unwrap();
    assert!(
        !ws.path("failed.xlsx").exists(),
        "a failed patch writes nothing"
    );
    assert!(res.patch_diff.is_empty());
    res.error
        .unwrap_or_else(|| panic!("expected an op error for {ops}"))
}

#[test]
fn op_errors_carry_the_op_index() {
    let (ws, name) = ws_with_ledger();
    let check = |ops: Value, index: i64, message: &str| {
        let err = op_error(&ws, &name, ops);
        assert_eq!(err.op_index, index, "{err:?}");
        assert!(
            err.message.contains(message),
            "{:?} lacks {message:?}",
            err.message
        );
    };
    let ok = json!({"op": "set_value", "sheet": "明細", "cell": "A1", "value": 1});
    check(
        json!([ok, {"op": "set_value", "sheet": "無い", "cell": "A1", "value": 1}]),
        1,
        "does not exist",
    );
    check(
        json!([{"op": "set_value", "sheet": "明細", "cell": "A1", "value": "=1+1"}]),
        0,
        "starts with '='",
    );
    check(
        json!([{"op": "add_sheet", "sheet": "明細"}]),
        0,
        "already exists",
    );
    check(
        json!([{"op": "add_sheet", "sheet": "集計"}, ok]),
        0,
        "already exists",
    );
    check(
        json!([{"op": "add_sheet", "sheet": "SHEET/1"}]),
        0,
        "contains",
    );
    check(
        json!([{"op": "add_sheet", "sheet": "x".repeat(32)}]),
        0,
        "31",
    );
    check(
        json!([{"op": "set_value", "sheet": "後で", "cell": "A1", "value": 1}, {"op": "add_sheet", "sheet": "後で"}]),
        0,
        "does not exist",
    );
    check(
        json!([{"op": "delete_sheet", "sheet": "明細"}]),
        0,
        "still has values",
    );
    check(
        json!([{"op": "set_value", "sheet": "明細", "cell": "A1", "value": "x".repeat(32_768)}]),
        0,
        "32767",
    );
}

/// The contract makes a `set_range_values` whose values differ from the range's shape, and a
/// `fill_formula` with a bad base cell, request errors (nothing written, a coded
/// error); they used to come back as a successful response with `error` set.
#[test]
fn range_shape_and_fill_area_mismatches_are_request_errors() {
    let (ws, name) = ws_with_ledger();
    let check = |op: Value, message: &str| {
        for dry_run in [false, true] {
            let request = json!({"xlsx_path": name, "ops": [op], "dry_run": dry_run});
            let err = ws.run(request.clone()).unwrap_err();
            assert_eq!(err.code(), "INVALID_REQUEST", "{request}: {err}");
            assert!(err.to_string().contains(message), "{err} lacks {message:?}");
        }
        assert_eq!(
            std::fs::read_dir(ws.dir.path()).unwrap().count(),
            1,
            "nothing was written"
        );
    };
    check(
        json!({"op": "set_range_values", "sheet": "明細", "range": "A1:B2", "values": [[1, 2], [3, 4], [5, 6]]}),
        "ops[0] (set_range_values): values are 3×2 (rows×columns) but the range A1:B2 is 2×2",
    );
    check(
        json!({"op": "set_range_values", "sheet": "明細", "range": "A1:C1", "values": [[1, 2]]}),
        "1×3",
    );
    // A missing sheet does not hide the shape error: the request is wrong for any workbook.
    check(
        json!({"op": "set_range_values", "sheet": "無い", "range": "A1:A2", "values": [[1]]}),
        "2×1",
    );
    check(
        json!({"op": "fill_formula", "sheet": "明細", "range": "A1:B2", "base_cell": "A", "formula": "=1"}),
        "ops[0] (fill_formula): base_cell \"A\" is not an A1 cell reference",
    );
}

#[test]
fn request_errors_touch_nothing() {
    let (ws, name) = ws_with_ledger();
    let xls = ws.add_file("old.xls", b"\xD0\xCF\x11\xE0 legacy");
    ws.add_file("notes.xlsx", b"this is not a zip");
    let outside = tempfile::tempdir().unwrap();
    keiri_fs::write_atomic(&outside.path().join("other.xlsx"), &ledger()).unwrap();
    let outside_path = outside.path().join("other.xlsx").display().to_string();
    let check = |request: Value, code: &str, message: &str| {
        let err = ws.run(request.clone()).unwrap_err();
        assert_eq!(err.code(), code, "{request}: {err}");
        assert!(err.to_string().contains(message), "{err} lacks {message:?}");
        assert_eq!(
            std::fs::read_dir(ws.dir.path()).unwrap().count(),
            3,
            "nothing was written"
        );
    };
    let op = |cell: &str| json!([{"op": "set_value", "sheet": "明細", "cell": cell, "value": 1}]);
    check(
        json!({"xlsx_path": xls, "ops": op("A1")}),
        "INVALID_REQUEST",
        "requires Excel COM (Windows + Excel)",
    );
    check(
        json!({"xlsx_path": "ledger.csv", "ops": op("A1")}),
        "INVALID_REQUEST",
        "only .xlsx and .xlsm",
    );
    check(
        json!({"xlsx_path": name, "ops": op("A0")}),
        "INVALID_REQUEST",
        "ops[0] (set_value): cell \"A0\"",
    );
    check(
        json!({"xlsx_path": name, "ops": op("XFE1")}),
        "INVALID_REQUEST",
        "not an A1 cell",
    );
    check(
        json!({"xlsx_path": name, "ops": [{"op": "set_formula", "sheet": "明細", "cell": "A1", "formula": "SUM(1)"}]}),
        "INVALID_REQUEST",
        "must start with '='",
    );
    check(
        json!({"xlsx_path": name, "ops": [{"op": "set_range_values", "sheet": "明細", "range": "A1:", "values": [[1]]}]}),
        "INVALID_REQUEST",
        "A1 range",
    );
    check(
        json!({"xlsx_path": name, "ops": [{"op": "set_range_values", "sheet": "明細", "range": "A1:B2", "values": [[1, 2], [3]]}]}),
        "INVALID_REQUEST",
        "rectangular",
    );
    check(
        json!({"xlsx_path": name, "ops": [{"op": "add_sheet", "sheet": "  "}]}),
        "INVALID_REQUEST",
        "sheet must not be empty",
    );
    check(
        json!({"xlsx_path": name, "ops": op("A1"), "out_name": "../escape.xlsx"}),
        "INVALID_REQUEST",
        "plain file name",
    );
    check(
        json!({"xlsx_path": name, "ops": op("A1"), "out_name": "x.xlsm"}),
        "INVALID_REQUEST",
        "extension",
    );
    check(
        json!({"xlsx_path": outside_path, "ops": op("A1")}),
        "PATH_DENIED",
        "outside",
    );
    check(
        json!({"xlsx_path": name, "ops": op("A1"), "out_dir": outside.path()}),
        "PATH_DENIED",
        "outside",
    );
    check(
        json!({"xlsx_path": "missing.xlsx", "ops": op("A1")}),
        "NOT_FOUND",
        "missing.xlsx",
    );
    check(
        json!({"xlsx_path": "notes.xlsx", "ops": op("A1")}),
        "WORKBOOK_UNREADABLE",
        "not a zip",
    );
}

#[test]
fn conditional_ops_skip_on_mismatch() {
    let (ws, name) = ws_with_ledger();
    let res = ws.ok(json!({
        "xlsx_path": name,
        "ops": [
            {"op": "set_value_if", "sheet": "明細", "cell": "B2", "expected": 1200.0, "value": 1300},
            {"op": "set_value_if", "sheet": "明細", "cell": "B3", "expected": 1, "value": 2},
            {"op": "set_value_if", "sheet": "明細", "cell": "Z9", "expected": null, "value": "空欄でした"},
            {"op": "set_value_if", "sheet": "明細", "cell": "A2", "expected": "交通費", "value": "旅費交通費"},
            {"op": "set_formula_if", "sheet": "明細", "cell": "B4", "expected": "=SUM(B2:B2)", "formula": "=0"},
        ],
        "return_inverse_ops": true,
    }));
    let statuses: Vec<String> = res
        .patch_diff
        .iter()
        .map(|d| format!("{:?}", d.status))
        .collect();
    assert_eq!(
        statuses,
        ["Applied", "Skipped", "Applied", "Applied", "Skipped"]
    );
    assert_eq!(res.inverse_ops.len(), 3, "skipped ops have no inverse");
    assert!(
        res.warnings
            .iter()
            .any(|w| w.contains("op[1]") && w.contains("found 3400.5")),
        "{:?}",
        res.warnings
    );
    assert!(
        res.warnings
            .iter()
            .any(|w| w.contains("op[4]") && w.contains("=SUM(B2:B3)")),
        "{:?}",
        res.warnings
    );
    let out = Path::new(&res.out_path);
    assert_eq!(cell(out, "明細", "B2").as_deref(), Some("1300"));
    assert_eq!(cell(out, "明細", "B3").as_deref(), Some("3400.5"));
    assert_eq!(cell(out, "明細", "Z9").as_deref(), Some("空欄でした"));
}

#[test]
fn range_ops_diff_every_cell_and_fill_shifts_references() {
    let (ws, name) = ws_with_ledger();
    let res = ws.ok(json!({
        "xlsx_path": name,
        "ops": [
            {"op": "set_range_values", "sheet": "明細", "range": "E1:F2", "values": [[1, "a"], [true, null]]},
            {"op": "fill_formula", "sheet": "明細", "range": "G2:G4", "base_cell": "G2", "formula": "=B2*$B$1+SUM(B$2:B2)"},
            {"op": "fill_formula", "sheet": "明細", "range": "H1:H2", "base_cell": "H2", "formula": "=A1"},
        ],
    }));
    let cells_of = |i: usize| {
        res.patch_diff
            .iter()
            .filter(|d| d.op_index == i)
            .map(|d| d.cell.clone().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(cells_of(0), ["E1", "F1", "E2", "F2"]);
    assert_eq!(cells_of(1), ["G2", "G3", "G4"]);
    let after = |a1: &str| {
        let d = res
            .patch_diff
            .iter()
            .find(|d| d.cell.as_deref() == Some(a1) && d.op_index == 1)
            .unwrap();
        d.after.clone().unwrap().value.unwrap()
    };
    assert_eq!(
        after("G4"),
        keiri_xlsx::CellValue::Text("=B4*$B$1+SUM(B$2:B4)".into())
    );
    assert!(
        res.warnings
            .iter()
            .any(|w| w.contains("H1") && w.contains("#REF!")),
        "{:?}",
        res.warnings
    );
    let out = Path::new(&res.out_path);
    assert_eq!(
        cell(out, "明細", "G3").as_deref(),
        Some("=B3*$B$1+SUM(B$2:B3)")
    );
    assert_eq!(cell(out, "明細", "H1").as_deref(), Some("=#REF!"));
    assert_eq!(cell(out, "明細", "E2").as_deref(), Some("true"));
}

#[test]
fn preflight_finds_errors_and_blocks_the_save() {
    let (ws, name) = ws_with_ledger();
    let check = |formula: &str, code: IssueCode, level: IssueLevel| {
        let res = ws
            .run(json!({
                "xlsx_path": name,
                "ops": [{"op": "set_formula", "sheet": "集計", "cell": "C1", "formula": formula}],
                "preflight_formula_check": true,
                "out_name": "checked.xlsx",
                "on_conflict": "overwrite",
            }))
            .unwrap();
        let issue = res
            .formula_issues
            .iter()
            .find(|i| i.sheet == "集計" && i.cell == "C1");
        let issue =
            issue.unwrap_or_else(|| panic!("{formula}: no issue in {:?}", res.formula_issues));
        assert_eq!(
            (issue.code, issue.level),
            (code, level),
            "{formula}: {}",
            issue.message
        );
        match level {
            IssueLevel::Error => {
                let err = res
                    .error
                    .unwrap_or_else(|| panic!("{formula}: an error-level issue blocks the save"));
                assert_eq!((err.op_index, err.cell.as_deref()), (0, Some("C1")));
                assert!(!ws.path("checked.xlsx").exists());
            }
            IssueLevel::Warning => {
                assert!(res.error.is_none());
                assert!(ws.path("checked.xlsx").exists());
                std::fs::remove_file(ws.path("checked.xlsx")).unwrap();
            }
        }
    };
    check("=無い!A1", IssueCode::RefError, IssueLevel::Error);
    check("=#REF!+1", IssueCode::RefError, IssueLevel::Error);
    check(
        "=NOSUCHFUNCTION(1)",
        IssueCode::NameError,
        IssueLevel::Error,
    );
    check("=undefined_name*2", IssueCode::NameError, IssueLevel::Error);
    check("=A1/B1", IssueCode::Div0Error, IssueLevel::Error);
    check("=\"税\"+1", IssueCode::ValueError, IssueLevel::Error);
    check("=NA()", IssueCode::NaError, IssueLevel::Warning);
    check("=C1+1", IssueCode::CircularRefSuspected, IssueLevel::Error);
    check("=SUM(1,", IssueCode::InvalidToken, IssueLevel::Error);
    check("=1++", IssueCode::InvalidToken, IssueLevel::Error);
}

#[test]
fn preflight_downgrades_problems_the_patch_did_not_cause() {
    let ws = Workspace::new();
    let name = ws.add_file(
        "broken.xlsx",
        &build_xlsx(&[(
            "S",
            vec![
                ("A1", Cell::N(0.0)),
                ("B1", Cell::F("1/A1")),
                ("C1", Cell::F("Gone!A1")),
            ],
        )]),
    );
    let res = ws.ok(json!({
        "xlsx_path": name,
        "ops": [{"op": "set_value", "sheet": "S", "cell": "D1", "value": 5}],
        "preflight_formula_check": true,
    }));
    let codes: Vec<(String, IssueCode, IssueLevel)> = res
        .formula_issues
        .iter()
        .map(|i| (i.cell.clone(), i.code, i.level))
        .collect();
    assert_eq!(
        codes,
        [
            ("B1".to_string(), IssueCode::Div0Error, IssueLevel::Warning),
            ("C1".to_string(), IssueCode::RefError, IssueLevel::Warning)
        ]
    );
    assert!(
        res.formula_issues
            .iter()
            .all(|i| i.message.starts_with("already present"))
    );
    // Fixing the divisor makes the #DIV/0! go away; breaking it again is the patch's fault.
    let res = ws.ok(json!({
        "xlsx_path": name,
        "ops": [{"op": "set_value", "sheet": "S", "cell": "A1", "value": 4}],
        "preflight_formula_check": true,
        "dry_run": true,
    }));
    assert!(
        !res.formula_issues.iter().any(|i| i.cell == "B1"),
        "{:?}",
        res.formula_issues
    );
}

#[test]
fn preflight_on_fixtures_reports_no_new_errors_for_a_harmless_edit() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    for rel in [
        "xlsx/formula_array_shared.xlsx",
        "accounting/retirement_benefit_workbook.xlsx",
        "xlsx/sf425_form.xlsx",
    ] {
        let ws = Workspace::new();
        let name = ws.add_fixture(rel);
        use calamine::Reader;
        let sheet = calamine::open_workbook_auto(ws.path(&name))
            .unwrap()
            .sheet_names()[0]
            .clone();
        let res = ws.ok(json!({
            "xlsx_path": name,
            "ops": [{"op": "set_value", "sheet": sheet, "cell": "AZ900", "value": 1}],
            "preflight_formula_check": true,
            "dry_run": true,
        }));
        assert!(
            res.formula_issues
                .iter()
                .all(|i| i.level == IssueLevel::Warning),
            "{rel}: {:?}",
            res.formula_issues
        );
    }
}

#[test]
fn conflict_policy_default_and_override() {
    let (mut ws, name) = ws_with_ledger();
    let op = json!([{"op": "set_value", "sheet": "明細", "cell": "A1", "value": "一回目"}]);
    let first = ws.ok(json!({"xlsx_path": name, "ops": op}));
    let target = ws
        .dir
        .path()
        .canonicalize()
        .unwrap()
        .join("ledger_patched.xlsx");
    assert_eq!(Path::new(&first.out_path), target);

    // No default anywhere: an existing output is never overwritten silently.
    let second = ws.ok(json!({"xlsx_path": name, "ops": op}));
    assert_eq!(
        Path::new(&second.out_path),
        target.with_file_name("ledger_patched_1.xlsx")
    );

    // The configured default applies when the request says nothing …
    ws.env.on_conflict_default = Some(OnConflict::Overwrite);
    let op2 = json!([{"op": "set_value", "sheet": "明細", "cell": "A1", "value": "二回目"}]);
    let third = ws.ok(json!({"xlsx_path": name, "ops": op2}));
    assert_eq!(Path::new(&third.out_path), target);
    assert_eq!(cell(&target, "明細", "A1").as_deref(), Some("二回目"));

    // … and the request always wins.
    let fourth = ws.ok(json!({"xlsx_path": name, "ops": op2, "on_conflict": "rename"}));
    assert_eq!(
        Path::new(&fourth.out_path),
        target.with_file_name("ledger_patched_2.xlsx")
    );
    let skipped = ws.ok(json!({"xlsx_path": name, "ops": op, "on_conflict": "skip"}));
    assert!(skipped.patch_diff.is_empty());
    assert!(
        skipped.warnings[0].contains("on_conflict is skip"),
        "{:?}",
        skipped.warnings
    );
    assert_eq!(
        cell(&target, "明細", "A1").as_deref(),
        Some("二回目"),
        "skip leaves the file alone"
    );

    // A dry run with skip previews what the real run does: nothing (no diff, the skip's
    // warning), not the patch a real run would not write.
    let preview = ws.ok(json!({"xlsx_path": name, "ops": op, "on_conflict": "skip", "dry_run": true, "return_inverse_ops": true}));
    assert!(preview.patch_diff.is_empty(), "{:?}", preview.patch_diff);
    assert!(preview.inverse_ops.is_empty());
    assert_eq!(Path::new(&preview.out_path), target);
    assert!(
        preview.warnings[0].contains("on_conflict is skip; nothing would be written"),
        "{:?}",
        preview.warnings
    );

    ws.env.on_conflict_default = Some(OnConflict::Skip);
    let skipped = ws.ok(json!({"xlsx_path": name, "ops": op}));
    assert!(skipped.patch_diff.is_empty());
    let preview = ws.ok(json!({"xlsx_path": name, "ops": op, "dry_run": true}));
    assert!(
        preview.patch_diff.is_empty(),
        "the default skip applies to dry runs too"
    );
    let forced = ws.ok(json!({"xlsx_path": name, "ops": op, "on_conflict": "overwrite"}));
    assert_eq!(forced.patch_diff.len(), 1);
    assert_eq!(cell(&target, "明細", "A1").as_deref(), Some("一回目"));
}

#[test]
fn missing_out_dir_is_created() {
    let (ws, name) = ws_with_ledger();
    let res = ws.ok(json!({
        "xlsx_path": name,
        "ops": [{"op": "set_value", "sheet": "明細", "cell": "A1", "value": 1}],
        "out_dir": "出力/2024/12",
        "out_name": "結果",
    }));
    let expected = ws
        .dir
        .path()
        .canonicalize()
        .unwrap()
        .join("出力/2024/12/結果.xlsx");
    assert_eq!(Path::new(&res.out_path), expected);
    assert!(expected.is_file());
}

#[test]
fn auto_formula_and_string_ops() {
    let (ws, name) = ws_with_ledger();
    let res = ws.ok(json!({
        "xlsx_path": name,
        "auto_formula": true,
        "ops": [
            "{\"op\":\"set_value\",\"sheet\":\"明細\",\"cell\":\"D1\",\"value\":\"=B2+B3\"}",
            {"op": "set_formula", "sheet": "明細", "cell": "D2", "formula": "=IFS(B2>1000,\"高\",TRUE,\"低\")"},
        ],
    }));
    assert_eq!(
        res.patch_diff[0].after.as_ref().map(|a| a.kind),
        Some(keiri_xlsx::ValueKind::Formula)
    );
    let out = Path::new(&res.out_path);
    assert_eq!(cell(out, "明細", "D1").as_deref(), Some("=B2+B3"));
    assert_eq!(
        cell(out, "明細", "D2").as_deref(),
        Some("=_xlfn.IFS(B2>1000,\"高\",TRUE,\"低\")"),
        "newer functions get their file prefix"
    );
}

#[test]
fn added_sheets_are_real_worksheets() {
    if keiri_testkit::skip_without_shared("fixtures/accounting/retirement_ledger_strict.xlsx") {
        return;
    }
    let ws = Workspace::new();
    let name = ws.add_fixture("accounting/retirement_ledger_strict.xlsx");
    let res = ws.ok(json!({
        "xlsx_path": name,
        "ops": [
            {"op": "add_sheet", "sheet": "売上集計"},
            {"op": "set_value", "sheet": "売上集計", "cell": "A1", "value": "月"},
            {"op": "set_formula", "sheet": "売上集計", "cell": "B1", "formula": "=COUNTA(退職給付金勘定元帳!A:A)"},
        ],
        "return_inverse_ops": true,
    }));
    assert_eq!(
        res.patch_diff[0].after.as_ref().map(|v| v.kind),
        Some(keiri_xlsx::ValueKind::Sheet)
    );
    assert_eq!(
        res.inverse_ops.last(),
        Some(&PatchOp::DeleteSheet {
            sheet: "売上集計".into(),
            copy_of: None,
        })
    );
    let parts = crate::support::entries(Path::new(&res.out_path));
    let workbook = String::from_utf8(parts["xl/workbook.xml"].clone()).unwrap();
    assert!(
        workbook.contains(r#"<sheet name="売上集計" sheetId="2" r:id="rId5"/>"#),
        "{workbook}"
    );
    let rels = String::from_utf8(parts["xl/_rels/workbook.xml.rels"].clone()).unwrap();
    assert!(rels.contains(r#"Type="http://purl.oclc.org/ooxml/officeDocument/relationships/worksheet" Target="/xl/worksheets/sheet2.xml""#), "strict packages keep strict relationship types: {rels}");
    let sheet = String::from_utf8(parts["xl/worksheets/sheet2.xml"].clone()).unwrap();
    assert!(sheet.contains(r#"xmlns="http://purl.oclc.org/ooxml/spreadsheetml/main""#));
    let types = String::from_utf8(parts["[Content_Types].xml"].clone()).unwrap();
    assert!(types.contains(r#"PartName="/xl/worksheets/sheet2.xml""#));
}

#[test]
fn unchanged_workbook_is_saved_as_an_exact_copy() {
    let (ws, name) = ws_with_ledger();
    let res = ws.ok(json!({
        "xlsx_path": name,
        "ops": [{"op": "set_value_if", "sheet": "明細", "cell": "B2", "expected": 1, "value": 2}],
    }));
    assert_eq!(
        std::fs::read(&res.out_path).unwrap(),
        std::fs::read(ws.path(&name)).unwrap()
    );
}

#[test]
fn concurrent_in_place_patches_each_apply_to_the_saved_workbook() {
    const CALLS: usize = 24;
    let ws = Workspace::new();
    let name = ws.add_file("book.xlsx", &ledger());
    std::thread::scope(|s| {
        for t in 0..4 {
            let ws = &ws;
            let name = &name;
            s.spawn(move || {
                for i in (t..CALLS).step_by(4) {
                    ws.ok(json!({
                        "xlsx_path": name,
                        "out_name": name,
                        "on_conflict": "overwrite",
                        "ops": [{"op": "set_value", "sheet": "明細", "cell": format!("D{}", i + 1), "value": format!("call {i}")}],
                    }));
                }
            });
        }
    });
    let after = cells(&ws.path(&name));
    for i in 0..CALLS {
        let key = ("明細".to_string(), format!("D{}", i + 1));
        assert_eq!(
            after.get(&key).map(String::as_str),
            Some(format!("call {i}").as_str())
        );
    }
    let mut left: Vec<_> = std::fs::read_dir(ws.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["book.xlsx"], "no temp or lock file stays");
}

#[cfg(unix)]
#[test]
fn overwriting_a_workbook_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let ws = Workspace::new();
    let name = ws.add_file("book.xlsx", &ledger());
    std::fs::set_permissions(ws.path(&name), std::fs::Permissions::from_mode(0o644)).unwrap();
    ws.ok(json!({
        "xlsx_path": name,
        "out_name": name,
        "on_conflict": "overwrite",
        "ops": [{"op": "set_value", "sheet": "明細", "cell": "D1", "value": "x"}],
    }));
    let mode = std::fs::metadata(ws.path(&name))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o644);
}

#[test]
fn apply_says_what_it_did_with_the_file() {
    use keiri_xlsx::{PatchOutcome, PatchRequest};
    let (ws, name) = ws_with_ledger();
    let apply = |request: Value| {
        let req: PatchRequest = serde_json::from_value(request).unwrap();
        keiri_xlsx::apply(&req, &ws.env).unwrap()
    };
    let op = json!([{"op": "set_value", "sheet": "明細", "cell": "A1", "value": "一回目"}]);
    let dry = apply(json!({"xlsx_path": name, "ops": op, "out_name": "a.xlsx", "dry_run": true}));
    assert_eq!(dry.outcome, PatchOutcome::DryRun);
    let written = apply(json!({"xlsx_path": name, "ops": op, "out_name": "b.xlsx"}));
    assert_eq!(written.outcome, PatchOutcome::Written);
    assert!(Path::new(&written.response.out_path).is_file());
    let skipped =
        apply(json!({"xlsx_path": name, "ops": op, "out_name": "b.xlsx", "on_conflict": "skip"}));
    assert_eq!(skipped.outcome, PatchOutcome::Skipped);
    // An op that cannot apply (the sheet exists already): nothing written.
    let bad = json!([{"op": "add_sheet", "sheet": "明細"}]);
    let failed = apply(json!({"xlsx_path": name, "ops": bad, "out_name": "c.xlsx"}));
    assert_eq!(failed.outcome, PatchOutcome::Failed);
    assert!(failed.response.error.is_some());
    assert!(!ws.path("c.xlsx").exists());
}
