//! Patching one cell of every fixture leaves every part the op has no reason to touch
//! byte-identical, compressed bytes included.

use serde_json::json;

use crate::support::{Workspace, cells, entries, fixtures_dir, raw_entries};

/// Parts a one-cell patch may rewrite (besides the touched worksheet); calcChain must go.
fn may_change(name: &str) -> bool {
    matches!(
        name,
        "[Content_Types].xml" | "xl/workbook.xml" | "xl/_rels/workbook.xml.rels"
    )
}

fn all_fixtures() -> Vec<String> {
    let mut out = Vec::new();
    for sub in ["xlsx", "accounting"] {
        let mut names: Vec<String> = std::fs::read_dir(fixtures_dir().join(sub))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".xlsx"))
            .map(|n| format!("{sub}/{n}"))
            .collect();
        names.sort();
        out.extend(names);
    }
    assert!(
        out.len() >= 12,
        "expected the 12 fixture workbooks, found {out:?}"
    );
    out
}

fn first_sheet(path: &std::path::Path) -> String {
    use calamine::Reader;
    match calamine::open_workbook_auto(path) {
        Ok(wb) => wb.sheet_names().first().cloned().unwrap(),
        Err(_) => String::new(),
    }
}

/// Patches `sheet!cell` and checks every other part.
fn check(rel: &str, sheet: &str, cell: &str, value: serde_json::Value) {
    let ws = Workspace::new();
    let name = ws.add_fixture(rel);
    let res = ws.ok(json!({
        "xlsx_path": name,
        "ops": [{"op": "set_value", "sheet": sheet, "cell": cell, "value": value}],
        "on_conflict": "overwrite",
    }));
    assert_eq!(res.patch_diff.len(), 1, "{rel}");
    let before = entries(&ws.path(&name));
    let after = entries(std::path::Path::new(&res.out_path));
    let before_raw = raw_entries(&ws.path(&name));
    let after_raw = raw_entries(std::path::Path::new(&res.out_path));
    let touched: Vec<&String> = before
        .keys()
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    let mut sheets_changed = 0;
    for name in &touched {
        if name.starts_with("xl/worksheets/sheet") {
            sheets_changed += 1;
            continue;
        }
        if name.as_str() == "xl/calcChain.xml" {
            assert!(
                !after.contains_key(*name),
                "{rel}: calcChain must be dropped"
            );
            continue;
        }
        assert!(
            may_change(name),
            "{rel}: {name} changed but a one-cell patch has no reason to touch it"
        );
    }
    assert_eq!(
        sheets_changed, 1,
        "{rel}: exactly one worksheet part changes ({touched:?})"
    );
    assert!(
        after.keys().all(|k| before.contains_key(k)),
        "{rel}: no new parts"
    );
    let mut identical = 0;
    for (name, (crc, raw)) in &before_raw {
        if touched.contains(&name) {
            continue;
        }
        assert_eq!(
            after_raw.get(name),
            Some(&(*crc, raw.clone())),
            "{rel}: {name} must be copied raw"
        );
        identical += 1;
    }
    let workbook = String::from_utf8(after["xl/workbook.xml"].clone()).unwrap();
    assert!(
        workbook.contains("fullCalcOnLoad=\"1\""),
        "{rel}: Excel must recalculate on open"
    );
    for part in ["[Content_Types].xml", "xl/_rels/workbook.xml.rels"] {
        let text = String::from_utf8_lossy(&after[part]).into_owned();
        assert!(
            !text.contains("calcChain"),
            "{rel}: {part} still mentions calcChain"
        );
    }
    assert!(identical >= 5, "{rel}: only {identical} parts compared");
}

#[test]
fn one_cell_patch_keeps_every_other_part_of_every_fixture() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    for rel in all_fixtures() {
        let sheet = first_sheet(&fixtures_dir().join(&rel));
        let sheet = if sheet.is_empty() {
            "退職給付金勘定元帳".to_string()
        } else {
            sheet
        };
        check(&rel, &sheet, "AZ500", json!("検証"));
    }
}

#[test]
fn overwriting_existing_cells_keeps_parts_and_reads_back() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    check(
        "accounting/retirement_benefit_workbook.xlsx",
        "2024.12",
        "B5",
        json!(12345),
    );
    check("xlsx/formula_array_shared.xlsx", "Sheet1", "B3", json!(999));
    check(
        "accounting/multi_sheet_ja.xlsx",
        "入力データ",
        "D2",
        json!("備考あり"),
    );
    check("xlsx/ja_form_merged.xlsx", "Sheet1", "A1", json!("申請書"));
    check(
        "accounting/retirement_ledger_strict.xlsx",
        "退職給付金勘定元帳",
        "C3",
        json!("摘要を変更"),
    );
}

#[test]
fn shared_and_array_formulas_keep_working() {
    if keiri_testkit::skip_without_shared("fixtures/xlsx/formula_array_shared.xlsx") {
        return;
    }
    let ws = Workspace::new();
    let name = ws.add_fixture("xlsx/formula_array_shared.xlsx");
    // C10 is the master of the shared formula C10:C12; the others must keep their formulas.
    let res = ws.ok(json!({
        "xlsx_path": name,
        "ops": [{"op": "set_value", "sheet": "Sheet1", "cell": "C10", "value": "手入力"}],
        "return_inverse_ops": true,
    }));
    let before = &res.patch_diff[0].before;
    assert_eq!(
        serde_json::to_value(before).unwrap(),
        json!({"kind": "formula", "value": "=_xlfn.IFS(B10>=85,\"A\",B10>=70,\"B\",B10>=60,\"C\",TRUE,\"D\")"})
    );
    let out = std::path::Path::new(&res.out_path);
    let got = cells(out);
    let f = |a1: &str| {
        got.get(&("Sheet1".to_string(), a1.to_string()))
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(f("C10"), "手入力");
    assert!(
        f("C11").contains("B11>=85"),
        "C11 keeps its own formula: {}",
        f("C11")
    );
    assert!(
        f("C12").contains("B12>=85"),
        "C12 keeps its own formula: {}",
        f("C12")
    );
    assert_eq!(
        f("C5"),
        "=SUM(B2:B4*C2:C4)",
        "the array formula is untouched"
    );
    let sheet = String::from_utf8(entries(out)["xl/worksheets/sheet1.xml"].clone()).unwrap();
    assert!(
        sheet.contains(r#"<f t="array" ref="C5">SUM(B2:B4*C2:C4)</f>"#),
        "{sheet}"
    );

    // Writing into the array formula is refused, and nothing is written.
    let res = ws
        .run(json!({
            "xlsx_path": name,
            "ops": [{"op": "set_value", "sheet": "Sheet1", "cell": "C5", "value": 1}],
            "out_name": "refused.xlsx",
        }))
        .unwrap();
    let err = res.error.expect("writing into an array formula must fail");
    assert_eq!(err.op_index, 0);
    assert!(err.message.contains("array formula"), "{}", err.message);
    assert!(!ws.path("refused.xlsx").exists());
}

#[test]
fn merged_cells_take_writes_at_their_top_left_cell_only() {
    if keiri_testkit::skip_without_shared("fixtures/xlsx/formula_array_shared.xlsx") {
        return;
    }
    let ws = Workspace::new();
    let name = ws.add_fixture("xlsx/formula_array_shared.xlsx");
    let res = ws
        .run(json!({"xlsx_path": name, "ops": [{"op": "set_value", "sheet": "Sheet1", "cell": "B5", "value": "x"}]}))
        .unwrap();
    let err = res.error.expect("B5 is covered by the merge A5:B5");
    assert!(
        err.message.contains("A5:B5") && err.message.contains("A5"),
        "{}",
        err.message
    );
    let res = ws.ok(json!({"xlsx_path": name, "ops": [{"op": "set_value", "sheet": "Sheet1", "cell": "A5", "value": "合計"}], "out_name": "merged.xlsx"}));
    assert_eq!(
        crate::support::cell(std::path::Path::new(&res.out_path), "Sheet1", "A5").as_deref(),
        Some("合計")
    );
}

/// Applies one design op to the first sheet of a fixture and checks that only the parts the op
/// needs changed: the worksheet, and `styles.xml` for the styling ops; everything else is
/// copied raw (workbook.xml and calcChain included: styling does not recalculate).
fn check_design_op(rel: &str, sheet: &str, op: serde_json::Value, touches_styles: bool) {
    let ws = Workspace::new();
    let name = ws.add_fixture(rel);
    let mut op = op;
    op["sheet"] = json!(sheet);
    let res = ws.ok(json!({"xlsx_path": name, "ops": [op.clone()], "on_conflict": "overwrite"}));
    let before = raw_entries(&ws.path(&name));
    let after = raw_entries(std::path::Path::new(&res.out_path));
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "{rel} {op}: the same parts"
    );
    let mut sheets_changed = 0;
    for (part, raw) in &before {
        if after.get(part) == Some(raw) {
            continue;
        }
        if part.starts_with("xl/worksheets/sheet") {
            sheets_changed += 1;
        } else {
            assert!(
                touches_styles && part == "xl/styles.xml",
                "{rel} {op}: {part} changed but the op has no reason to touch it"
            );
        }
    }
    assert_eq!(
        sheets_changed, 1,
        "{rel} {op}: exactly one worksheet changes"
    );
    if touches_styles {
        // Styles are only appended: the old part is a prefix of the new one up to the first
        // list that grew.
        let old = String::from_utf8(entries(&ws.path(&name))["xl/styles.xml"].clone()).unwrap();
        let new = String::from_utf8(
            entries(std::path::Path::new(&res.out_path))["xl/styles.xml"].clone(),
        )
        .unwrap();
        assert!(new.len() >= old.len(), "{rel} {op}: styles.xml only grows");
    }
}

#[test]
fn design_ops_keep_every_part_they_have_no_reason_to_touch() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let style_ops = [
        json!({"op": "set_bold", "range": "A1:C3"}),
        json!({"op": "set_font_size", "range": "AX100:AY101", "font_size": 16}),
        json!({"op": "set_font_color", "cell": "B2", "color": "C00000"}),
        json!({"op": "set_fill_color", "range": "A1:B2", "fill_color": "#FFF2CC"}),
        json!({"op": "set_alignment", "range": "A1:B2", "horizontal_align": "center", "wrap_text": true}),
        json!({"op": "set_style", "cell": "C3", "bold": true, "fill_color": "DDEBF7", "vertical_align": "top"}),
        json!({"op": "draw_grid_border", "base_cell": "A1", "row_count": 3, "col_count": 3}),
    ];
    let structure_ops = [
        json!({"op": "set_dimensions", "rows": [1, 200], "row_height": 24, "columns": ["B"], "column_width": 20}),
        json!({"op": "auto_fit_columns", "columns": ["A", "B"]}),
        json!({"op": "merge_cells", "range": "AX100:AY101"}),
    ];
    for rel in all_fixtures() {
        let sheet = first_sheet(&fixtures_dir().join(&rel));
        let sheet = if sheet.is_empty() {
            "退職給付金勘定元帳".to_string()
        } else {
            sheet
        };
        for op in &style_ops {
            check_design_op(&rel, &sheet, op.clone(), true);
        }
        for op in &structure_ops {
            check_design_op(&rel, &sheet, op.clone(), false);
        }
    }
}

#[test]
fn apply_table_style_adds_only_its_parts_on_every_fixture() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    for rel in all_fixtures() {
        let sheet = first_sheet(&fixtures_dir().join(&rel));
        let sheet = if sheet.is_empty() {
            "退職給付金勘定元帳".to_string()
        } else {
            sheet
        };
        let ws = Workspace::new();
        let name = ws.add_fixture(&rel);
        // Headers first (a value write, which recalculates), then the table on that result.
        let headers = ws.ok(json!({"xlsx_path": name, "sheet": sheet, "out_name": "headers.xlsx",
            "ops": [{"op": "set_range_values", "range": "BX1:BY2", "values": [["科目", "金額"], ["旅費", 1]]}]}));
        let res = ws.ok(json!({"xlsx_path": "headers.xlsx", "sheet": sheet, "out_name": "table.xlsx",
            "ops": [{"op": "apply_table_style", "range": "BX1:BY2", "style": "TableStyleMedium2"}]}));
        let before = raw_entries(std::path::Path::new(&headers.out_path));
        let after = raw_entries(std::path::Path::new(&res.out_path));
        let mut sheets_changed = 0;
        for (part, raw) in &before {
            if after.get(part) == Some(raw) {
                continue;
            }
            if part.starts_with("xl/worksheets/sheet") {
                sheets_changed += 1;
            } else {
                assert!(
                    part == "[Content_Types].xml"
                        || (part.starts_with("xl/worksheets/_rels/") && part.ends_with(".rels")),
                    "{rel}: {part} changed but a new table has no reason to touch it"
                );
            }
        }
        assert_eq!(sheets_changed, 1, "{rel}: exactly one worksheet changes");
        let added: Vec<&String> = after.keys().filter(|k| !before.contains_key(*k)).collect();
        assert!(
            added.iter().any(|p| p.starts_with("xl/tables/table"))
                && added
                    .iter()
                    .all(|p| p.starts_with("xl/tables/") || p.starts_with("xl/worksheets/_rels/")),
            "{rel}: new parts {added:?}"
        );
        assert!(
            after
                .keys()
                .all(|k| before.contains_key(k) || added.contains(&k))
        );
        assert_eq!(
            before.len(),
            after.len() - added.len(),
            "{rel}: no part lost"
        );
    }
}
