//! `validate_input`: a workbook's readability and a patch's ops checked as a dry run, with
//! aliases and the top-level sheet; nothing is ever written.

use keiri_xlsx::ValidateInputRequest;
use serde_json::json;

use super::support::{Workspace, two_sheet_ledger};

#[test]
fn validate_input_checks_the_file_and_the_ops_without_writing() {
    if keiri_testkit::skip_without_shared("fixtures/accounting/multi_sheet_ja.xlsx") {
        return;
    }
    let ws = Workspace::new();
    let name = two_sheet_ledger(&ws);
    ws.add_file("notes.xlsx", b"not a zip");
    let real = ws.add_fixture("accounting/multi_sheet_ja.xlsx");
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(ws.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let before = listing();
    let check = |req: serde_json::Value| {
        let req: ValidateInputRequest = serde_json::from_value(req).unwrap();
        keiri_xlsx::validate_input(&req, &ws.env).unwrap()
    };
    let plain = check(json!({"xlsx_path": name}));
    assert!(plain.is_readable && plain.valid && plain.errors.is_empty());
    assert_eq!(plain.sheet_names, ["明細", "集計"]);

    let unreadable = check(json!({"xlsx_path": "notes.xlsx"}));
    assert!(!unreadable.is_readable && !unreadable.valid);
    assert_eq!(unreadable.error_codes, ["WORKBOOK_UNREADABLE"]);
    let missing = check(json!({"xlsx_path": "missing.xlsx"}));
    assert_eq!(missing.error_codes, ["NOT_FOUND"]);

    // Ops with aliases (`name`, `color`, `horizontal`) and the top-level sheet apply (on a real
    // workbook: styling needs its styles part).
    let good = check(json!({"xlsx_path": real, "sheet": "入力データ", "ops": [
        {"op": "add_sheet", "name": "新規"},
        {"op": "set_fill_color", "range": "A1:B1", "color": "FFFF00"},
        {"op": "set_alignment", "cell": "A1", "horizontal": "center"},
        {"op": "set_value", "cell": "C1", "value": 1},
    ]}));
    assert!(good.valid, "{good:?}");
    assert_eq!(good.ops_checked, 4);

    // A missing sheet is the op error a patch would report; a bad shape is a request error;
    // an op that does not parse is named by its index.
    let bad_sheet = check(json!({"xlsx_path": name, "ops": [
        {"op": "set_value", "sheet": "無い", "cell": "A1", "value": 1},
    ]}));
    assert!(bad_sheet.is_readable && !bad_sheet.valid);
    assert_eq!(bad_sheet.error_codes, ["OP_FAILED"]);
    assert_eq!(bad_sheet.patch_error.as_ref().unwrap().op_index, 0);
    let bad_shape = check(json!({"xlsx_path": name, "ops": [
        {"op": "set_range_values", "sheet": "明細", "range": "A1:B2", "values": [[1]]},
    ]}));
    assert_eq!(bad_shape.error_codes, ["INVALID_REQUEST"]);
    let unparsable = check(json!({"xlsx_path": name, "ops": [
        {"op": "set_value", "sheet": "明細", "cell": "A1", "value": 1},
        {"op": "paint", "sheet": "明細"},
    ]}));
    assert!(
        unparsable.errors[0].starts_with("ops[1]:"),
        "{unparsable:?}"
    );

    // An existing output does not turn the check into a skip that checks nothing.
    ws.add_file("ledger_patched.xlsx", b"");
    let mut env = keiri_xlsx::PatchEnv::new(keiri_fs::PathPolicy::new([ws.dir.path()]));
    env.on_conflict_default = Some(keiri_xlsx::OnConflict::Skip);
    let req: ValidateInputRequest = serde_json::from_value(json!({"xlsx_path": name, "ops": [
        {"op": "set_value", "sheet": "無い", "cell": "A1", "value": 1},
    ]}))
    .unwrap();
    assert!(!keiri_xlsx::validate_input(&req, &env).unwrap().valid);
    std::fs::remove_file(ws.path("ledger_patched.xlsx")).unwrap();

    let outside = tempfile::tempdir().unwrap();
    let other = outside.path().join("o.xlsx");
    let req: ValidateInputRequest =
        serde_json::from_value(json!({"xlsx_path": other.display().to_string()})).unwrap();
    assert_eq!(
        keiri_xlsx::validate_input(&req, &ws.env)
            .unwrap_err()
            .code(),
        "PATH_DENIED"
    );
    assert_eq!(listing(), before, "nothing was written");
}
