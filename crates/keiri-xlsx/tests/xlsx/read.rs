//! The read tools (`read_range`, `read_cells`, `read_formulas`): what they read agrees with an
//! independent reader (calamine), bad input is a coded error, and nothing is ever written.

use std::collections::BTreeMap;
use std::path::Path;

use calamine::{Data, Reader};
use keiri_xlsx::{CellValue, ReadCellsRequest, ReadFormulasRequest, ReadRangeRequest};
use serde_json::json;

use super::support::{Workspace, two_sheet_ledger};

fn range(xlsx: &str, sheet: Option<&str>, range: &str) -> ReadRangeRequest {
    ReadRangeRequest {
        xlsx_path: xlsx.into(),
        sheet: sheet.map(str::to_string),
        range: range.into(),
        include_formulas: true,
        include_empty: false,
        max_cells: 10_000,
    }
}

fn show(v: &CellValue) -> String {
    match v {
        CellValue::Bool(b) => b.to_string(),
        CellValue::Int(i) => i.to_string(),
        CellValue::Float(f) => format!("{f}"),
        CellValue::Text(t) => t.clone(),
        other => panic!("the read tools return no typed values: {other:?}"),
    }
}

/// Every non-empty value calamine reads (a formula cell's cached value), by (sheet, A1).
fn calamine_values(path: &Path) -> BTreeMap<(String, String), String> {
    let mut wb = calamine::open_workbook_auto(path).unwrap();
    let mut out = BTreeMap::new();
    for name in wb.sheet_names() {
        let values = wb.worksheet_range(&name).unwrap();
        let Some((r0, c0)) = values.start() else {
            continue;
        };
        for (r, c, v) in values.used_cells() {
            let text = match v {
                Data::Empty => continue,
                Data::String(s) if s.is_empty() => continue,
                Data::Float(f) => format!("{f}"),
                Data::Int(i) => format!("{i}"),
                Data::DateTime(d) => format!("{}", d.as_f64()),
                other => other.to_string(),
            };
            let at = keiri_xlsx::CellRef {
                row: r0 + r as u32 + 1,
                col: c0 + c as u32 + 1,
            };
            out.insert((name.clone(), at.to_a1()), text);
        }
    }
    out
}

#[test]
fn read_range_agrees_with_an_independent_reader() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    for fixture in [
        "accounting/multi_sheet_ja.xlsx",
        "xlsx/formula_array_shared.xlsx",
        "accounting/retirement_benefit_workbook.xlsx",
    ] {
        let ws = Workspace::new();
        let name = ws.add_fixture(fixture);
        let want = calamine_values(&ws.path(&name));
        let sheets: std::collections::BTreeSet<String> =
            want.keys().map(|(s, _)| s.clone()).collect();
        let mut got = BTreeMap::new();
        for sheet in sheets {
            let res =
                keiri_xlsx::read_range(&range(&name, Some(&sheet), "A1:Z200"), &ws.env.policy)
                    .unwrap_or_else(|e| panic!("{fixture} {sheet}: {e}"));
            assert_eq!(res.sheet_name, sheet);
            assert_eq!(res.book_name.as_deref(), Some(name.as_str()));
            for c in res.cells {
                if let Some(v) = c.value.as_ref().map(show).filter(|v| !v.is_empty()) {
                    got.insert((sheet.clone(), c.cell), v);
                }
            }
        }
        let want: BTreeMap<_, _> = want
            .into_iter()
            .filter(|((_, cell), _)| {
                let at = keiri_xlsx::CellRef::parse(cell).unwrap();
                at.row <= 200 && at.col <= 26
            })
            .collect();
        assert_eq!(got, want, "{fixture}");
    }
}

#[test]
fn formulas_are_read_with_their_cached_values() {
    if keiri_testkit::skip_without_shared("fixtures/accounting/retirement_benefit_workbook.xlsx") {
        return;
    }
    let ws = Workspace::new();
    let name = ws.add_fixture("accounting/retirement_benefit_workbook.xlsx");
    let path = ws.path(&name);
    let values = calamine_values(&path);
    let mut wb = calamine::open_workbook_auto(&path).unwrap();
    let sheet = wb.sheet_names()[0].clone();
    let formulas = wb.worksheet_formula(&sheet).unwrap();
    let (r0, c0) = formulas.start().unwrap();
    let want: Vec<(String, String)> = formulas
        .used_cells()
        .filter(|(_, _, f)| !f.is_empty())
        .map(|(r, c, f)| {
            let at = keiri_xlsx::CellRef {
                row: r0 + r as u32 + 1,
                col: c0 + c as u32 + 1,
            };
            (at.to_a1(), format!("={f}"))
        })
        .collect();
    assert!(!want.is_empty(), "the fixture has formulas");
    let res = keiri_xlsx::read_formulas(
        &ReadFormulasRequest {
            xlsx_path: name.clone(),
            sheet: Some(sheet.clone()),
            range: None,
            include_values: true,
            max_cells: 10_000,
        },
        &ws.env.policy,
    )
    .unwrap();
    assert!(!res.truncated);
    let got: Vec<(String, String)> = res
        .formulas
        .iter()
        .map(|f| (f.cell.clone(), f.formula.clone()))
        .collect();
    assert_eq!(got, want);
    for f in &res.formulas {
        let cached = values.get(&(sheet.clone(), f.cell.clone()));
        // calamine reads a cached empty text as an empty cell.
        let got = f.value.as_ref().map(show).filter(|v| !v.is_empty());
        assert_eq!(got.as_ref(), cached, "{}", f.cell);
    }
    // A range narrows the list, and max_cells cuts it with a warning.
    let first = &res.formulas[0].cell;
    let narrowed = keiri_xlsx::read_formulas(
        &ReadFormulasRequest {
            xlsx_path: name.clone(),
            sheet: Some(sheet.clone()),
            range: Some(first.clone()),
            include_values: false,
            max_cells: 10_000,
        },
        &ws.env.policy,
    )
    .unwrap();
    assert_eq!(narrowed.formulas.len(), 1);
    assert_eq!(narrowed.formulas[0].value, None);
    assert_eq!(narrowed.range.as_deref(), Some(first.as_str()));
    let cut = keiri_xlsx::read_formulas(
        &ReadFormulasRequest {
            xlsx_path: name,
            sheet: Some(sheet),
            range: None,
            include_values: false,
            max_cells: 1,
        },
        &ws.env.policy,
    )
    .unwrap();
    assert!(cut.truncated && cut.formulas.len() == 1, "{cut:?}");
    assert!(cut.warnings[0].contains("max_cells"), "{:?}", cut.warnings);
}

#[test]
fn read_cells_lists_values_formulas_and_missing_cells_in_order() {
    let ws = Workspace::new();
    let name = two_sheet_ledger(&ws);
    let res = keiri_xlsx::read_cells(
        &ReadCellsRequest {
            xlsx_path: name.clone(),
            sheet: Some("明細".into()),
            addresses: vec!["B2".into(), "a1".into(), "$C$9".into()],
            include_formulas: true,
        },
        &ws.env.policy,
    )
    .unwrap();
    assert_eq!(
        serde_json::to_value(&res.cells).unwrap(),
        json!([
            {"cell": "B2", "value": null, "formula": "=SUM(B1:B1)"},
            {"cell": "A1", "value": "品目", "formula": null},
            {"cell": "C9", "value": null, "formula": null},
        ])
    );
    assert_eq!(res.missing_cells, ["C9"]);
    // The range form, with empty cells and without formulas.
    let mut req = range(&name, Some("明細"), "A1:B2");
    req.include_empty = true;
    req.include_formulas = false;
    let res = keiri_xlsx::read_range(&req, &ws.env.policy).unwrap();
    assert_eq!(
        serde_json::to_value(&res.cells).unwrap(),
        json!([
            {"cell": "A1", "value": "品目", "formula": null},
            {"cell": "B1", "value": 1200, "formula": null},
            {"cell": "A2", "value": null, "formula": null},
            {"cell": "B2", "value": null, "formula": null},
        ])
    );
}

#[test]
fn bad_reads_are_coded_errors_and_touch_nothing() {
    let ws = Workspace::new();
    let name = two_sheet_ledger(&ws);
    ws.add_file("notes.xlsx", b"not a zip");
    let before = std::fs::read(ws.path(&name)).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let other = outside.path().join("o.xlsx");
    keiri_fs::write_atomic(&other, &before).unwrap();
    let check = |req: ReadRangeRequest, code: &str, message: &str| {
        let err = keiri_xlsx::read_range(&req, &ws.env.policy).unwrap_err();
        assert_eq!(err.code(), code, "{req:?}: {err}");
        assert!(err.to_string().contains(message), "{err} lacks {message:?}");
    };
    check(
        range(&name, Some("明細"), "A1:"),
        "INVALID_REQUEST",
        "A1 range",
    );
    check(
        range(&name, Some("明細"), "XFE1"),
        "INVALID_REQUEST",
        "A1 range",
    );
    check(
        range(&name, Some("無い"), "A1"),
        "SHEET_NOT_FOUND",
        "明細, 集計",
    );
    check(
        range(&name, None, "A1"),
        "INVALID_REQUEST",
        "sheet is required",
    );
    check(
        range(&name, Some("明細"), "A1:Z1000"),
        "LIMIT_EXCEEDED",
        "26000 cells",
    );
    let mut huge = range(&name, Some("明細"), "A1");
    huge.max_cells = 0;
    check(huge, "INVALID_REQUEST", "max_cells");
    check(
        range("missing.xlsx", None, "A1"),
        "NOT_FOUND",
        "missing.xlsx",
    );
    check(
        range("notes.xlsx", None, "A1"),
        "WORKBOOK_UNREADABLE",
        "not a zip",
    );
    check(range("old.xls", None, "A1"), "INVALID_REQUEST", "Excel COM");
    check(
        range(&other.display().to_string(), None, "A1"),
        "PATH_DENIED",
        "outside",
    );
    let err = keiri_xlsx::read_cells(
        &ReadCellsRequest {
            xlsx_path: name.clone(),
            sheet: Some("明細".into()),
            addresses: vec!["A1".into(), "1A".into()],
            include_formulas: true,
        },
        &ws.env.policy,
    )
    .unwrap_err();
    assert_eq!(err.code(), "INVALID_REQUEST");
    assert!(err.to_string().contains("\"1A\""), "{err}");
    let err = keiri_xlsx::read_cells(
        &ReadCellsRequest {
            xlsx_path: name.clone(),
            sheet: None,
            addresses: vec![],
            include_formulas: true,
        },
        &ws.env.policy,
    )
    .unwrap_err();
    assert_eq!(err.code(), "INVALID_REQUEST");
    assert_eq!(std::fs::read(ws.path(&name)).unwrap(), before);
}

#[test]
fn a_free_sheet_name_skips_the_names_taken_ignoring_case_and_reads_nothing_else() {
    let ws = Workspace::new();
    let book = ws.add_file(
        "names.xlsx",
        &super::support::build_xlsx(&[("Report", vec![]), ("report_2", vec![]), ("集計", vec![])]),
    );
    let before = std::fs::read(ws.path(&book)).unwrap();
    let free = |wanted: &str| keiri_xlsx::free_sheet_name(&book, wanted, &ws.env.policy).unwrap();
    assert_eq!(free("明細").as_deref(), Some("明細"));
    // `REPORT` is `Report` for Excel, and `report_2` is taken too.
    assert_eq!(free("REPORT").as_deref(), Some("REPORT_3"));
    assert_eq!(free("集計").as_deref(), Some("集計_2"));
    // A name Excel refuses is never offered, nor are its numbered forms.
    assert_eq!(free("a/b"), None);
    // 31 UTF-16 units at most: a wanted name of 30 leaves no room for `_2`.
    let long = "あ".repeat(30);
    assert_eq!(free(&long).as_deref(), Some(long.as_str()));
    assert_eq!(
        std::fs::read(ws.path(&book)).unwrap(),
        before,
        "nothing written"
    );

    // A missing workbook or a path outside the roots is the error a patch would give.
    let missing = keiri_xlsx::free_sheet_name("nope.xlsx", "明細", &ws.env.policy).unwrap_err();
    assert_eq!(missing.code(), "NOT_FOUND", "{missing}");
    let other = tempfile::tempdir().unwrap();
    let outside = other.path().join("names.xlsx");
    keiri_fs::write_atomic(&outside, &before).unwrap();
    let refused =
        keiri_xlsx::free_sheet_name(&outside.display().to_string(), "明細", &ws.env.policy)
            .unwrap_err();
    assert_eq!(refused.code(), "PATH_DENIED", "{refused}");
}
