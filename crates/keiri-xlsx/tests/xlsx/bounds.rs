//! The preflight check works in proportion to the cells a patch touches, not to the sheet's
//! extent, and ends in a coded error when it runs out of time.
//!
//! The hang guards run the patch on a thread and fail when it has not answered in 30 s: a
//! guard against hangs (the old code took the engine's full 60 s limit per workbook here), not a
//! speed assertion. The time it really takes is measured by the `preflight` bench (README.md).

use std::sync::mpsc;
use std::time::Duration;

use calamine::Reader;
use serde_json::json;

use crate::support::{Cell, Workspace, build_xlsx, fixtures_dir};

const HANG_GUARD: Duration = Duration::from_secs(30);

/// Every workbook among the shared fixtures, relative to the fixtures directory.
fn fixture_workbooks() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["accounting", "xlsx"] {
        for entry in std::fs::read_dir(fixtures_dir().join(dir)).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".xlsx") {
                out.push(format!("{dir}/{name}"));
            }
        }
    }
    out.sort();
    assert!(out.len() >= 12, "{out:?}");
    out
}

/// Runs `request` in `ws` on another thread; `None` if it did not answer within the guard.
fn run_guarded(
    ws: Workspace,
    request: serde_json::Value,
) -> Option<Result<keiri_xlsx::PatchResponse, keiri_xlsx::Error>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(ws.run(request));
    });
    rx.recv_timeout(HANG_GUARD).ok()
}

#[test]
fn far_corner_write_with_preflight_answers_on_every_fixture() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    for rel in fixture_workbooks() {
        let book: calamine::Xlsx<_> = calamine::open_workbook(fixtures_dir().join(&rel)).unwrap();
        for sheet in book.sheet_names() {
            let ws = Workspace::new();
            let name = ws.add_fixture(&rel);
            let request = json!({
                "xlsx_path": name,
                "ops": [{"op": "set_value", "sheet": sheet, "cell": "XFD1048576", "value": 1}],
                "preflight_formula_check": true,
                "dry_run": true,
            });
            let answer = run_guarded(ws, request)
                .unwrap_or_else(|| panic!("{rel} {sheet}: no answer within {HANG_GUARD:?}"));
            let res = answer.unwrap_or_else(|e| panic!("{rel} {sheet}: {e}"));
            assert!(res.error.is_none(), "{rel} {sheet}: {:?}", res.error);
            assert_eq!(res.patch_diff.len(), 1, "{rel} {sheet}");
        }
    }
}

/// A sheet of lookups over whole columns and rows, like the retirement workbooks: writing one
/// cell far below or to the right must not stretch every `A:K` to the grid's last row.
fn lookup_book(rows: usize) -> Vec<u8> {
    let mut cells: Vec<(&'static str, Cell)> = Vec::new();
    for r in 1..=rows {
        cells.push((format!("A{r}").leak(), Cell::N(r as f64)));
        cells.push((format!("B{r}").leak(), Cell::N((r * 10) as f64)));
        if r > 1 {
            cells.push((
                format!("D{r}").leak(),
                Cell::F(format!("VLOOKUP({r},A:B,2,FALSE)+SUM(B:B)+COUNT(1:1)").leak()),
            ));
        }
    }
    build_xlsx(&[("S", cells)])
}

#[test]
fn far_writes_keep_whole_column_lookups_bounded() {
    for cell in ["XFD1048576", "XFD1", "E1048576"] {
        let ws = Workspace::new();
        let name = ws.add_file("book.xlsx", &lookup_book(100));
        let request = json!({
            "xlsx_path": name,
            "ops": [{"op": "set_value", "sheet": "S", "cell": cell, "value": 5}],
            "preflight_formula_check": true,
            "dry_run": true,
        });
        let res = run_guarded(ws, request)
            .unwrap_or_else(|| panic!("{cell}: no answer within {HANG_GUARD:?}"))
            .unwrap();
        assert!(res.error.is_none(), "{cell}: {:?}", res.error);
        assert!(
            res.formula_issues.is_empty(),
            "{cell}: {:?}",
            res.formula_issues
        );
        // The engine ran (no "only static formula checks ran" note).
        assert!(
            !res.warnings.iter().any(|w| w.contains("only static")),
            "{cell}: {:?}",
            res.warnings
        );
    }
}

#[test]
fn a_formula_over_the_whole_grid_is_checked_statically() {
    let ws = Workspace::new();
    let name = ws.add_file("book.xlsx", &lookup_book(3));
    let request = json!({
        "xlsx_path": name,
        "ops": [
            {"op": "set_formula", "sheet": "S", "cell": "F1", "formula": "=SUM(A1:XFD1048576)"},
            {"op": "set_formula", "sheet": "S", "cell": "F2", "formula": "=1/0"},
        ],
        "preflight_formula_check": true,
        "dry_run": true,
    });
    let res = run_guarded(ws, request)
        .expect("no answer within the hang guard")
        .unwrap();
    assert!(
        res.warnings.iter().any(|w| w.contains("only static")),
        "{:?}",
        res.warnings
    );
    // The static checks still find what they can.
    let found: Vec<(&str, keiri_xlsx::IssueCode)> = res
        .formula_issues
        .iter()
        .map(|i| (i.cell.as_str(), i.code))
        .collect();
    assert_eq!(found, [("F2", keiri_xlsx::IssueCode::Div0Error)]);
}

#[test]
fn running_out_of_time_is_a_coded_error_and_writes_nothing() {
    let ws = Workspace::new();
    let name = ws.add_file("book.xlsx", &lookup_book(300));
    let mut env = ws.env.clone();
    env.engine_timeout = Duration::from_millis(1);
    let req: keiri_xlsx::PatchRequest = serde_json::from_value(json!({
        "xlsx_path": name,
        "ops": [{"op": "set_value", "sheet": "S", "cell": "C1", "value": 1}],
        "preflight_formula_check": true,
    }))
    .unwrap();
    let err = keiri_xlsx::patch(&req, &env).unwrap_err();
    assert_eq!(err.code(), "PREFLIGHT_TIMEOUT", "{err}");
    assert!(err.to_string().contains("did not finish"), "{err}");
    assert!(!ws.path("book_patched.xlsx").exists());
}

#[test]
fn a_merge_over_the_whole_sheet_looks_at_the_cells_there_are() {
    // A1:XFD1048576 is 17 billion cells; the merge used to visit each of them twice (148 s
    // on a 5 KB file). It looks at the 4 cells the sheet has and the locked parts' corners.
    let ws = Workspace::new();
    let bytes = build_xlsx(&[(
        "S",
        vec![
            ("A1", Cell::S("見出し")),
            ("B2", Cell::N(100.0)),
            ("D5", Cell::S("メモ")),
            ("Z1000", Cell::N(1.0)),
        ],
    )]);
    let name = ws.add_file("plain.xlsx", &bytes);
    let request = json!({
        "xlsx_path": name,
        "sheet": "S",
        "ops": [{"op": "merge_cells", "range": "A1:XFD1048576"}],
        "out_name": "merged.xlsx",
    });
    let res = run_guarded(ws, request)
        .unwrap_or_else(|| panic!("no answer within {HANG_GUARD:?}"))
        .unwrap();
    assert!(res.error.is_none(), "{:?}", res.error);
    assert_eq!(
        res.warnings,
        vec!["merge_cells may clear non-top-left values at S!A1:XFD1048576: B2, D5, Z1000"]
    );

    // Two array formulas: the first cell of the range (row by row) that one covers is C3.
    let ws = Workspace::new();
    let bytes = build_xlsx(&[(
        "S",
        vec![
            ("A1", Cell::N(2.0)),
            ("B10", Cell::A("A1*3", "B10:B11")),
            ("C3", Cell::A("A1*2", "C3:C4")),
        ],
    )]);
    let name = ws.add_file("array.xlsx", &bytes);
    let request = json!({
        "xlsx_path": name,
        "sheet": "S",
        "ops": [{"op": "merge_cells", "range": "A2:XFD1048576"}],
        "dry_run": true,
    });
    let res = run_guarded(ws, request)
        .unwrap_or_else(|| panic!("no answer within {HANG_GUARD:?}"))
        .unwrap();
    let err = res.error.expect("merging over an array formula must fail");
    assert!(
        err.message
            .contains("A2:XFD1048576 overlaps an array formula at C3:C4; it cannot be merged"),
        "{}",
        err.message
    );
}

/// Fills `range` of sheet S with `=A{row}*2` from base cell C2 on a sheet whose values are
/// `data`; answers the response and the written workbook's cells, within the hang guard.
fn fill_guarded(
    data: Vec<(&'static str, Cell)>,
    range: &str,
) -> (
    keiri_xlsx::PatchResponse,
    std::collections::BTreeMap<(String, String), String>,
) {
    let ws = Workspace::new();
    let name = ws.add_file("fill.xlsx", &build_xlsx(&[("S", data)]));
    let request = json!({
        "xlsx_path": name,
        "sheet": "S",
        "ops": [{"op": "fill_formula", "range": range, "base_cell": "C2", "formula": "=A2*2"}],
        "out_name": "filled.xlsx",
    });
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let res = ws.run(request).unwrap();
        let cells = crate::support::cells(std::path::Path::new(&res.out_path));
        let _ = tx.send((res, cells));
    });
    rx.recv_timeout(HANG_GUARD)
        .unwrap_or_else(|_| panic!("no answer within {HANG_GUARD:?}"))
}

/// 伝票 rows 1–120: a header in A1:B1 and amounts in A2:B120.
fn ledger() -> Vec<(&'static str, Cell)> {
    let mut data = vec![("A1", Cell::S("金額")), ("B1", Cell::S("摘要"))];
    for row in 2..=120 {
        let a1: &'static str = Box::leak(format!("A{row}").into_boxed_str());
        let b1: &'static str = Box::leak(format!("B{row}").into_boxed_str());
        data.push((a1, Cell::N(f64::from(row) * 100.0)));
        data.push((b1, Cell::S("仕入")));
    }
    data
}

#[test]
fn a_fill_down_to_the_last_row_stops_where_the_data_does() {
    // C2:C1048576 (a million cells: seconds and a gigabyte) means "as far as the data goes".
    let (res, cells) = fill_guarded(ledger(), "C2:C1048576");
    assert!(res.error.is_none(), "{:?}", res.error);
    assert_eq!(
        res.warnings,
        vec![
            "op[0] fill_formula: S!C2:C1048576 reaches the end of the sheet; filled S!C2:C120, as far as the sheet's content goes"
        ]
    );
    assert_eq!(res.patch_diff.len(), 119);
    let at = |a1: &str| cells.get(&("S".to_string(), a1.to_string())).cloned();
    assert_eq!(at("C2").as_deref(), Some("=A2*2"));
    assert_eq!(at("C120").as_deref(), Some("=A120*2"));
    assert_eq!(at("C121"), None);

    // A range that stops before the sheet's edge is filled as asked, past the data too.
    let (res, cells) = fill_guarded(ledger(), "C2:C130");
    assert!(res.warnings.is_empty(), "{:?}", res.warnings);
    assert_eq!(res.patch_diff.len(), 129);
    assert!(cells.contains_key(&("S".to_string(), "C130".to_string())));

    // To the last column and row: clipped both ways (the data ends at B120, so C stays C).
    let (res, _) = fill_guarded(ledger(), "C2:XFD1048576");
    assert_eq!(res.patch_diff.len(), 119, "{:?}", res.warnings);

    // A sheet with nothing below the first row fills that row only.
    let (res, _) = fill_guarded(vec![("A1", Cell::S("金額"))], "C2:C1048576");
    assert_eq!(res.patch_diff.len(), 1);
    assert!(
        res.warnings[0].ends_with("filled S!C2, as far as the sheet's content goes"),
        "{:?}",
        res.warnings
    );
}

#[test]
fn a_request_past_the_cell_cap_is_limit_exceeded_and_writes_nothing() {
    // 26 columns × 100,000 rows = 2.6 million formula cells, stated explicitly.
    let ws = Workspace::new();
    let name = ws.add_file("fill.xlsx", &build_xlsx(&[("S", ledger())]));
    let err = ws
        .run(json!({
            "xlsx_path": name,
            "sheet": "S",
            "ops": [{"op": "fill_formula", "range": "A2:Z100001", "base_cell": "A2", "formula": "=1"}],
            "out_name": "filled.xlsx",
        }))
        .unwrap_err();
    assert_eq!(err.code(), "LIMIT_EXCEEDED", "{err}");
    assert!(err.to_string().contains("split the request"), "{err}");
    assert!(!ws.path("filled.xlsx").exists());
}
