//! `workbook_make` (`exstruct_make`): a new workbook and its first ops in one call.

use serde_json::json;

use keiri_xlsx::{ExtractMode, ExtractOptions, MakeRequest, PatchResponse, read_workbook};

use crate::support::{Workspace, cell};

fn make(ws: &Workspace, args: serde_json::Value) -> Result<PatchResponse, keiri_xlsx::Error> {
    let req: MakeRequest = serde_json::from_value(args).unwrap();
    keiri_xlsx::workbook_make(&req, &ws.env)
}

fn sheet_names(path: &std::path::Path) -> Vec<String> {
    let bytes = std::fs::read(path).unwrap();
    let (data, _) = read_workbook(
        "b.xlsx",
        bytes.into(),
        ExtractMode::Light,
        &ExtractOptions::default(),
    )
    .unwrap();
    data.sheets.into_iter().map(|(n, _)| n).collect()
}

#[test]
fn make_creates_the_workbook_with_its_ops() {
    let ws = Workspace::new();
    let out = ws.path("new_book.xlsx");
    let res = make(
        &ws,
        json!({"out_path": out.display().to_string(), "ops": [
            {"op": "add_sheet", "sheet": "Data"},
            {"op": "set_value", "sheet": "Data", "cell": "A1", "value": "hello"},
            {"op": "set_value", "sheet": "Data", "cell": "B1", "value": 42},
            {"op": "set_formula", "sheet": "Data", "cell": "C1", "formula": "=B1*2"},
            {"op": "set_bold", "sheet": "Data", "cell": "A1"},
        ]}),
    )
    .unwrap();
    assert!(res.error.is_none(), "{:?}", res.error);
    assert_eq!(
        res.out_path,
        out.canonicalize().unwrap().display().to_string()
    );
    assert_eq!(res.patch_diff.len(), 5, "{:?}", res.patch_diff);
    assert_eq!(sheet_names(&out), ["Sheet1", "Data"]);
    assert_eq!(cell(&out, "Data", "A1").as_deref(), Some("hello"));
    assert_eq!(cell(&out, "Data", "B1").as_deref(), Some("42"));
}

#[test]
fn the_top_level_sheet_names_the_first_sheet_unless_add_sheet_makes_it() {
    let ws = Workspace::new();
    let out = ws.path("a.xlsx");
    make(
        &ws,
        json!({"out_path": "a.xlsx", "sheet": "売上",
               "ops": [{"op": "set_value", "cell": "A1", "value": "品目"}]}),
    )
    .unwrap();
    assert_eq!(sheet_names(&out), ["売上"]);
    assert_eq!(cell(&out, "売上", "A1").as_deref(), Some("品目"));

    let out = ws.path("b.xlsm");
    make(
        &ws,
        json!({"out_path": "b.xlsm", "sheet": "Data",
               "ops": [{"op": "add_sheet", "sheet": "Data"},
                       {"op": "set_value", "cell": "A1", "value": 1}]}),
    )
    .unwrap();
    assert_eq!(sheet_names(&out), ["Sheet1", "Data"]);
    assert_eq!(cell(&out, "Data", "A1").as_deref(), Some("1"));

    // No ops: an empty workbook.
    make(&ws, json!({"out_path": "empty.xlsx"})).unwrap();
    assert_eq!(sheet_names(&ws.path("empty.xlsx")), ["Sheet1"]);
}

#[test]
fn make_follows_the_patch_rules_for_conflicts_dry_runs_and_paths() {
    let ws = Workspace::new();
    make(&ws, json!({"out_path": "book.xlsx"})).unwrap();
    // Rename (the default): the existing file stays.
    let res = make(
        &ws,
        json!({"out_path": "book.xlsx", "ops": [{"op": "set_value", "sheet": "Sheet1", "cell": "A1", "value": 1}]}),
    )
    .unwrap();
    assert!(res.out_path.ends_with("book_1.xlsx"), "{}", res.out_path);
    // A dry run writes nothing and still reports the diff.
    let res = make(
        &ws,
        json!({"out_path": "sub/dry.xlsx", "dry_run": true,
               "ops": [{"op": "set_value", "sheet": "Sheet1", "cell": "A1", "value": 1}]}),
    )
    .unwrap();
    assert_eq!(res.patch_diff.len(), 1);
    assert!(!ws.path("sub").exists());
    // An op that cannot apply: nothing is saved.
    let res = make(
        &ws,
        json!({"out_path": "bad.xlsx", "ops": [{"op": "set_value", "sheet": "Nope", "cell": "A1", "value": 1}]}),
    )
    .unwrap();
    assert!(res.error.is_some());
    assert!(!ws.path("bad.xlsx").exists());
    for (args, code) in [
        (json!({"out_path": "old.xls"}), "INVALID_REQUEST"),
        (json!({"out_path": "notes.txt"}), "INVALID_REQUEST"),
        (json!({"out_path": "/etc/keiri-make.xlsx"}), "PATH_DENIED"),
        (
            json!({"out_path": "x.xlsx", "sheet": "a/b"}),
            "INVALID_REQUEST",
        ),
    ] {
        let err = make(&ws, args.clone()).unwrap_err();
        assert_eq!(err.code(), code, "{args}: {err}");
    }
}
