//! The roll-forward ops on a schedule built the way accountants keep one: a title, a summary
//! cell above the table, headers in row 3 (one with stray spaces), keys typed every which way
//! (a leading space, full-width characters, a number), a formula column, and two prepared rows
//! below the last employee that hold only formulas. Expected cells are worked out by hand.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::{Cell, Workspace, build_xlsx, cell, cells, entries};

fn schedule() -> Vec<u8> {
    let point = |r: u32| -> &'static str {
        // Leaked once per test process: build_xlsx takes static text.
        Box::leak(format!("IF(A{r}<>\"\",C{r}/1000,\"\")").into_boxed_str())
    };
    build_xlsx(&[
        (
            "2024.12",
            vec![
                ("A1", Cell::S("退職給付明細")),
                ("G2", Cell::F("SUM(E4:E8)")),
                ("H2", Cell::F("SUM(F4:F10)")),
                ("A3", Cell::S("社員番号")),
                ("B3", Cell::S("氏名")),
                ("C3", Cell::S(" 入社日 ")),
                ("D3", Cell::S("退職年月日")),
                ("E3", Cell::S("退職金支給額")),
                ("F3", Cell::S("ポイント")),
                ("A4", Cell::S("EMP001")),
                ("B4", Cell::S("田中")),
                ("C4", Cell::N(43191.0)),
                ("F4", Cell::F(point(4))),
                ("A5", Cell::S(" EMP002")),
                ("B5", Cell::S("佐藤")),
                ("C5", Cell::N(43661.0)),
                ("F5", Cell::F(point(5))),
                ("A6", Cell::S("ＥＭＰ００３")),
                ("B6", Cell::S("鈴木")),
                ("C6", Cell::N(43009.0)),
                ("F6", Cell::F(point(6))),
                ("A7", Cell::N(1004.0)),
                ("B7", Cell::S("高橋")),
                ("C7", Cell::N(43850.0)),
                ("F7", Cell::F(point(7))),
                ("A8", Cell::S("EMP005")),
                ("B8", Cell::S("伊藤")),
                ("C8", Cell::N(42592.0)),
                ("E8", Cell::N(1_000_000.0)),
                ("F8", Cell::F(point(8))),
                ("F9", Cell::F(point(9))),
                ("F10", Cell::F(point(10))),
            ],
        ),
        (
            "設定",
            vec![("A1", Cell::S("期末")), ("B1", Cell::N(45747.0))],
        ),
    ])
}

fn ws_with_schedule() -> (Workspace, String) {
    let ws = Workspace::new();
    let name = ws.add_file("schedule.xlsx", &schedule());
    (ws, name)
}

/// The value element of a cell in a sheet part (`None` when the cell has none).
fn raw_value(path: &Path, part: &str, a1: &str) -> Option<String> {
    let sheet = String::from_utf8(entries(path)[part].clone()).unwrap();
    let start = sheet.find(&format!("<c r=\"{a1}\""))?;
    let end = start + sheet[start..].find("</c>")?;
    let cell = &sheet[start..end];
    let v = cell.find("<v>")? + 3;
    Some(cell[v..v + cell[v..].find("</v>")?].to_string())
}

/// A request refused before any workbook is read (its ops do not parse or check).
fn request_error(ws: &Workspace, request: Value) -> String {
    match serde_json::from_value::<keiri_xlsx::PatchRequest>(request.clone()) {
        Err(e) => e.to_string(),
        Ok(_) => ws.run(request).unwrap_err().to_string(),
    }
}

fn op_error(ws: &Workspace, name: &str, ops: Value) -> String {
    let res = ws
        .run(json!({"xlsx_path": name, "ops": ops, "out_name": "failed.xlsx"}))
        .unwrap();
    assert!(
        !ws.path("failed.xlsx").exists(),
        "a failed op writes nothing"
    );
    res.error
        .unwrap_or_else(|| panic!("expected an op error for {ops}"))
        .message
}

#[test]
fn update_rows_by_key_finds_each_row_however_its_key_was_typed() {
    let (ws, name) = ws_with_schedule();
    let res = ws.ok(json!({
        "xlsx_path": name,
        "ops": [{"op": "update_rows_by_key", "sheet": "2024.12", "header_row": 3,
            "key_column": "社員番号",
            "rows": [
                {"社員番号": "EMP002", "退職年月日": "2025-01-10", "退職金支給額": 500000},
                {"社員番号": "EMP003", "E": 250000},
                {"社員番号": 1004, "退職年月日": {"kind": "date", "value": "2025-02-28"}},
                {"社員番号": "ｅｍｐ005", "退職金支給額": null},
            ]}],
        "out_name": "updated.xlsx",
        "return_inverse_ops": true,
    }));
    let out = Path::new(&res.out_path);
    let sheet = "xl/worksheets/sheet1.xml";
    // 2025-01-01 is serial 45658: the 10th is 45667, 28 February 45658 + 31 + 27 = 45716.
    assert_eq!(raw_value(out, sheet, "D5").as_deref(), Some("45667"));
    assert_eq!(raw_value(out, sheet, "E5").as_deref(), Some("500000"));
    assert_eq!(raw_value(out, sheet, "E6").as_deref(), Some("250000"));
    assert_eq!(raw_value(out, sheet, "D7").as_deref(), Some("45716"));
    // "ｅｍｐ005" finds EMP005 (Excel's lookups ignore case too), and null clears its 退職金.
    assert_eq!(raw_value(out, sheet, "E8"), None);
    let written: Vec<String> = res
        .patch_diff
        .iter()
        .map(|d| d.cell.clone().unwrap())
        .collect();
    assert_eq!(
        written,
        ["D5", "E5", "E6", "D7", "E8"],
        "{:?}",
        res.warnings
    );
    assert!(
        res.patch_diff
            .iter()
            .all(|d| d.op == keiri_xlsx::OpKind::UpdateRowsByKey)
    );
    // Nothing else moved: the keys, names and formulas are as they were.
    let original = ws.path(&name);
    assert_eq!(cell(out, "2024.12", "A5"), cell(&original, "2024.12", "A5"));
    assert_eq!(
        cell(out, "2024.12", "F7").as_deref(),
        Some("=IF(A7<>\"\",C7/1000,\"\")")
    );
    // The inverse puts every cell back.
    let undo = serde_json::to_value(&res.inverse_ops).unwrap();
    let back = ws.ok(json!({"xlsx_path": "updated.xlsx", "ops": undo, "out_name": "back.xlsx"}));
    assert_eq!(cells(Path::new(&back.out_path)), cells(&ws.path(&name)));
}

#[test]
fn update_rows_by_key_refuses_what_it_cannot_place_and_says_where() {
    let (ws, name) = ws_with_schedule();
    let update = |rows: Value, extra: Value| {
        let mut op = json!({"op": "update_rows_by_key", "sheet": "2024.12", "header_row": 3,
            "key_column": "社員番号", "rows": rows});
        for (k, v) in extra.as_object().unwrap() {
            op[k] = v.clone();
        }
        json!([op])
    };
    // A key no row has: an error naming it, and nothing written.
    let message = op_error(
        &ws,
        &name,
        update(
            json!([{"社員番号": "EMP099", "退職金支給額": 1}]),
            json!({}),
        ),
    );
    assert!(
        message.contains("\"EMP099\"") && message.contains("on_missing"),
        "{message}"
    );
    // A column the header row does not have: an error listing the headers.
    let message = op_error(
        &ws,
        &name,
        update(json!([{"社員番号": "EMP001", "退職金": 1}]), json!({})),
    );
    assert!(
        message.contains("\"退職金\"") && message.contains("退職金支給額"),
        "{message}"
    );
    // skip: the known keys are written and the unknown one is named in a warning.
    let res = ws.ok(json!({"xlsx_path": name, "ops": update(
        json!([{"社員番号": "EMP099", "E": 1}, {"社員番号": "EMP001", "E": 2}]),
        json!({"on_missing": "skip"})), "dry_run": true}));
    assert_eq!(res.patch_diff.len(), 1);
    assert!(
        res.warnings.iter().any(|w| w.contains("\"EMP099\"")),
        "{:?}",
        res.warnings
    );
    // A key given twice is a request error (which of the two values would win?).
    let err = request_error(
        &ws,
        json!({"xlsx_path": name, "ops": update(
            json!([{"社員番号": "EMP001", "E": 1}, {"社員番号": "ＥＭＰ００１", "E": 2}]),
            json!({}))}),
    );
    assert!(err.contains("both have the key"), "{err}");

    // A key in two rows of the sheet: an error naming both rows.
    let dup = ws.add_file(
        "dup.xlsx",
        &build_xlsx(&[(
            "一覧",
            vec![
                ("A1", Cell::S("コード")),
                ("B1", Cell::S("金額")),
                ("A2", Cell::S("K-1")),
                ("A3", Cell::S("K-2")),
                ("A4", Cell::S("k-1 ")),
            ],
        )]),
    );
    let message = op_error(
        &ws,
        &dup,
        json!([{"op": "update_rows_by_key", "sheet": "一覧", "key_column": "コード",
            "rows": [{"コード": "K-1", "金額": 5}]}]),
    );
    assert!(message.contains("rows 2, 4"), "{message}");
}

#[test]
fn append_rows_fills_the_prepared_rows_then_carries_the_formulas_down() {
    let (ws, name) = ws_with_schedule();
    let res = ws.ok(json!({
        "xlsx_path": name,
        "ops": [{"op": "append_rows", "sheet": "2024.12", "header_row": 3, "rows": [
            {"社員番号": "EMP006", "氏名": "渡辺", "入社日": "2025-01-06"},
            {"社員番号": "EMP007", "氏名": "山田", "入社日": "2025-02-01"},
            {"社員番号": "EMP008", "氏名": "中村", "入社日": "2025-03-03"},
        ]}],
        "out_name": "appended.xlsx",
        "return_inverse_ops": true,
    }));
    let out = Path::new(&res.out_path);
    // Row 8 was the last with a value; rows 9 and 10 held only the prepared formulas, so the
    // first two new rows fill them and the third gets row 10's formula shifted to row 11.
    assert_eq!(cell(out, "2024.12", "A9").as_deref(), Some("EMP006"));
    assert_eq!(cell(out, "2024.12", "B10").as_deref(), Some("山田"));
    assert_eq!(cell(out, "2024.12", "A11").as_deref(), Some("EMP008"));
    assert_eq!(
        cell(out, "2024.12", "F9").as_deref(),
        Some("=IF(A9<>\"\",C9/1000,\"\")")
    );
    assert_eq!(
        cell(out, "2024.12", "F11").as_deref(),
        Some("=IF(A11<>\"\",C11/1000,\"\")")
    );
    // 2025-01-06 is 45658 + 5; 2025-03-03 is 45658 + 31 + 28 + 2. Dates, not text.
    let sheet = "xl/worksheets/sheet1.xml";
    assert_eq!(raw_value(out, sheet, "C9").as_deref(), Some("45663"));
    assert_eq!(raw_value(out, sheet, "C11").as_deref(), Some("45719"));
    // The totals above the table, G2 = SUM(E4:E8) and H2 = SUM(F4:F10), stopped before the
    // new rows: they are extended to row 11, in the diff and in a warning.
    assert_eq!(cell(out, "2024.12", "G2").as_deref(), Some("=SUM(E4:E11)"));
    assert_eq!(cell(out, "2024.12", "H2").as_deref(), Some("=SUM(F4:F11)"));
    assert!(
        res.warnings
            .iter()
            .any(|w| w.contains("G2 =SUM(E4:E8) → =SUM(E4:E11)")),
        "{:?}",
        res.warnings
    );
    assert!(
        res.patch_diff
            .iter()
            .any(|d| d.cell.as_deref() == Some("H2"))
    );
    // Undo: the cells come back as they were.
    let undo = serde_json::to_value(&res.inverse_ops).unwrap();
    let back = ws.ok(json!({"xlsx_path": "appended.xlsx", "ops": undo, "out_name": "back.xlsx"}));
    assert_eq!(cells(Path::new(&back.out_path)), cells(&ws.path(&name)));

    // on_missing: append puts an unknown key's row where append_rows would.
    let res = ws.ok(json!({
        "xlsx_path": name,
        "ops": [{"op": "update_rows_by_key", "sheet": "2024.12", "header_row": 3,
            "key_column": "社員番号", "on_missing": "append",
            "rows": [{"社員番号": "EMP009", "氏名": "小林"}, {"社員番号": "EMP001", "E": 7}]}],
        "out_name": "upserted.xlsx",
    }));
    let out = Path::new(&res.out_path);
    assert_eq!(cell(out, "2024.12", "A9").as_deref(), Some("EMP009"));
    assert_eq!(cell(out, "2024.12", "B9").as_deref(), Some("小林"));
    assert_eq!(cell(out, "2024.12", "E4").as_deref(), Some("7"));
}

#[test]
fn append_rows_will_not_land_below_a_totals_row() {
    let ws = Workspace::new();
    let name = ws.add_file(
        "totals.xlsx",
        &build_xlsx(&[(
            "経費",
            vec![
                ("A1", Cell::S("科目")),
                ("B1", Cell::S("金額")),
                ("A2", Cell::S("旅費")),
                ("B2", Cell::N(1200.0)),
                ("A3", Cell::S("通信費")),
                ("B3", Cell::N(800.0)),
                ("A4", Cell::S("合計")),
                ("B4", Cell::F("SUM(B2:B3)")),
            ],
        )]),
    );
    let message = op_error(
        &ws,
        &name,
        json!([{"op": "append_rows", "sheet": "経費", "header_row": 1,
            "rows": [{"科目": "消耗品費", "金額": 300}]}]),
    );
    assert!(
        message.contains("row 4") && message.contains("totals row") && message.contains("B4"),
        "{message}"
    );
    // Without a header row, columns are letters; a name is a request error.
    let err = request_error(
        &ws,
        json!({"xlsx_path": name, "ops": [{"op": "append_rows", "sheet": "経費",
            "rows": [{"科目": "x"}]}]}),
    );
    assert!(err.contains("header_row"), "{err}");
}

/// Apply, then apply the inverse: the worksheet part comes back byte for byte (the dates'
/// number format stays defined in the styles part, unused).
#[test]
fn the_inverse_of_an_update_and_an_append_restores_the_sheet_byte_for_byte() {
    let (ws, name) = ws_with_schedule();
    let res = ws.ok(json!({
        "xlsx_path": name,
        "ops": [
            {"op": "update_rows_by_key", "sheet": "2024.12", "header_row": 3,
                "key_column": "社員番号", "rows": [
                    {"社員番号": "EMP002", "退職年月日": "2025-01-10", "退職金支給額": 500000},
                    {"社員番号": "ｅｍｐ005", "退職金支給額": null}]},
            {"op": "append_rows", "sheet": "2024.12", "header_row": 3, "rows": [
                {"社員番号": "EMP006", "氏名": "渡辺", "入社日": "2025-01-06"},
                {"社員番号": "EMP007", "氏名": "山田", "入社日": "2025-02-01"},
                {"社員番号": "EMP008", "氏名": "中村", "入社日": "2025-03-03"}]},
        ],
        "out_name": "updated.xlsx",
        "return_inverse_ops": true,
    }));
    let part = "xl/worksheets/sheet1.xml";
    let changed = entries(Path::new(&res.out_path))[part].clone();
    let original = entries(&ws.path(&name))[part].clone();
    assert_ne!(changed, original);
    let undo = serde_json::to_value(&res.inverse_ops).unwrap();
    let back = ws.ok(json!({"xlsx_path": "updated.xlsx", "ops": undo, "out_name": "back.xlsx"}));
    let back = entries(Path::new(&back.out_path));
    assert_eq!(
        String::from_utf8_lossy(&back[part]),
        String::from_utf8_lossy(&original)
    );
    assert_eq!(
        back["xl/worksheets/sheet2.xml"],
        entries(&ws.path(&name))["xl/worksheets/sheet2.xml"]
    );
}

/// On the real quarterly workbook: joiners go into the prepared rows, then past them with the
/// last row's styles and formulas; only the sheet's own part changes.
#[test]
fn append_rows_on_the_retirement_workbook_carries_styles_and_formulas() {
    if keiri_testkit::skip_without_shared("fixtures/accounting/retirement_workbook_2024Q4.xlsx") {
        return;
    }
    let ws = Workspace::new();
    let name = ws.add_fixture("accounting/retirement_workbook_2024Q4.xlsx");
    let rows: Vec<Value> = (1..=12)
        .map(|n| json!({"社員番号": format!("NEW{n:02}"), "氏名": format!("新入社員{n}"), "入社日": "2025-01-06"}))
        .collect();
    let res = ws.ok(json!({
        "xlsx_path": name,
        "ops": [{"op": "append_rows", "sheet": "2024.12", "header_row": 7, "rows": rows}],
        "out_name": "joined.xlsx",
    }));
    let out = Path::new(&res.out_path);
    let original = ws.path(&name);
    let before = cells(&original);
    let last_employee = (8..=34)
        .rev()
        .find(|r| before.contains_key(&("2024.12".to_string(), format!("A{r}"))))
        .unwrap();
    let first = last_employee + 1;
    assert_eq!(
        cell(out, "2024.12", &format!("A{first}")).as_deref(),
        Some("NEW01")
    );
    // The twelfth joiner is past the prepared rows (8..34): row 34's formulas, shifted.
    let twelfth = first + 11;
    assert!(twelfth > 34, "{twelfth}");
    assert_eq!(
        cell(out, "2024.12", &format!("A{twelfth}")).as_deref(),
        Some("NEW12")
    );
    assert_eq!(
        cell(out, "2024.12", &format!("N{twelfth}")),
        Some(format!("=M{twelfth}"))
    );
    let sheet = String::from_utf8(entries(out)["xl/worksheets/sheet1.xml"].clone()).unwrap();
    let style = |a1: &str| -> String {
        let at = sheet
            .find(&format!("<c r=\"{a1}\""))
            .unwrap_or_else(|| panic!("{a1}"));
        let tag = &sheet[at..at + sheet[at..].find('>').unwrap()];
        tag.split(" s=\"")
            .nth(1)
            .map_or("0", |s| s.split('"').next().unwrap())
            .to_string()
    };
    for col in ["A", "D", "J", "P"] {
        assert_eq!(
            style(&format!("{col}{twelfth}")),
            style(&format!("{col}34")),
            "{col}"
        );
    }
    // Only the sheet changes, and the styles (the prepared rows' 入社日 cells had no date
    // format, so the dates get one).
    let before = entries(&original);
    let after = entries(out);
    for (part, bytes) in &before {
        if matches!(
            part.as_str(),
            "xl/worksheets/sheet1.xml" | "xl/workbook.xml" | "xl/styles.xml"
        ) {
            continue;
        }
        assert!(after.get(part) == Some(bytes), "{part} changed");
    }
}

/// Leavers' rows greyed out across the header's columns; the undo takes the grey away.
#[test]
fn update_rows_by_key_greys_the_rows_it_finds() {
    let (ws, name) = ws_with_schedule();
    let res = ws.ok(json!({
        "xlsx_path": name,
        "ops": [{"op": "update_rows_by_key", "sheet": "2024.12", "header_row": 3,
            "key_column": "社員番号", "fill_color": "#D9D9D9",
            "rows": [{"社員番号": "EMP002", "退職年月日": "2025-01-10"}]}],
        "out_name": "grey.xlsx",
        "return_inverse_ops": true,
    }));
    let out = Path::new(&res.out_path);
    let sheet = String::from_utf8(entries(out)["xl/worksheets/sheet1.xml"].clone()).unwrap();
    let styles = String::from_utf8(entries(out)["xl/styles.xml"].clone()).unwrap();
    let style_of = |a1: &str| -> usize {
        let at = sheet
            .find(&format!("<c r=\"{a1}\""))
            .unwrap_or_else(|| panic!("{a1}"));
        let tag = &sheet[at..at + sheet[at..].find('>').unwrap()];
        tag.split(" s=\"")
            .nth(1)
            .map_or(0, |s| s.split('"').next().unwrap().parse().unwrap())
    };
    let xf = |id: usize| -> String {
        let xfs = &styles[styles.find("<cellXfs").unwrap()..];
        xfs.split("<xf ").nth(id + 1).unwrap().to_string()
    };
    let fills = &styles[styles.find("<fills").unwrap()..];
    // A..F (the header's columns) of row 5 are grey; row 4 and G5 are not.
    for col in ["A", "B", "C", "D", "E", "F"] {
        let fill_id: usize = xf(style_of(&format!("{col}5")))
            .split("fillId=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let fill = fills.split("<fill>").nth(fill_id + 1).unwrap();
        assert!(fill.contains("FFD9D9D9"), "{col}5: {fill}");
    }
    // D5 keeps its date format under the grey.
    assert!(
        xf(style_of("D5")).contains("numFmtId=\"")
            && !xf(style_of("D5")).contains("numFmtId=\"0\"")
    );
    assert!(!sheet.contains("<c r=\"G5\""));
    assert_eq!(style_of("A4"), 0);
    let undo = serde_json::to_value(&res.inverse_ops).unwrap();
    let back = ws.ok(json!({"xlsx_path": "grey.xlsx", "ops": undo, "out_name": "back.xlsx"}));
    let part = "xl/worksheets/sheet1.xml";
    assert_eq!(
        String::from_utf8_lossy(&entries(Path::new(&back.out_path))[part]),
        String::from_utf8_lossy(&entries(&ws.path(&name))[part])
    );
}

/// With extend_ranges off, a total that stops short is left and named.
#[test]
fn append_rows_can_leave_totals_alone_and_say_so() {
    let (ws, name) = ws_with_schedule();
    let res = ws.ok(json!({
        "xlsx_path": name,
        "ops": [{"op": "append_rows", "sheet": "2024.12", "header_row": 3, "extend_ranges": false,
            "rows": [{"社員番号": "EMP006"}, {"社員番号": "EMP007"}, {"社員番号": "EMP008"}]}],
        "dry_run": true,
    }));
    assert!(
        res.patch_diff
            .iter()
            .all(|d| d.cell.as_deref() != Some("G2"))
    );
    assert!(
        res.warnings.iter().any(|w| w.contains("G2 =SUM(E4:E8)")
            && w.contains("H2 =SUM(F4:F10)")
            && w.contains("extend their ranges")),
        "{:?}",
        res.warnings
    );
}

/// A quarter without leavers or joiners: nothing to write, and the run says so.
#[test]
fn no_rows_change_nothing_and_say_so() {
    let (ws, name) = ws_with_schedule();
    let res = ws.ok(json!({
        "xlsx_path": name,
        "ops": [
            {"op": "update_rows_by_key", "sheet": "2024.12", "header_row": 3,
                "key_column": "社員番号", "rows": []},
            {"op": "append_rows", "sheet": "2024.12", "header_row": 3, "rows": []},
        ],
        "out_name": "same.xlsx",
    }));
    assert!(res.patch_diff.is_empty());
    assert_eq!(
        res.warnings
            .iter()
            .filter(|w| w.contains("no rows were given"))
            .count(),
        2,
        "{:?}",
        res.warnings
    );
    assert_eq!(
        std::fs::read(&res.out_path).unwrap(),
        std::fs::read(ws.path(&name)).unwrap()
    );
}
