//! The styling and structure ops: what each one writes, that its inverse op gives every cell
//! its original style back, and how bad requests are refused.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::{Workspace, entries};

const BOOK: &str = "accounting/multi_sheet_ja.xlsx";
const SHEET: &str = "入力データ";

fn part(path: &Path, name: &str) -> String {
    String::from_utf8(entries(path)[name].clone()).unwrap()
}

/// The `<c>` start tag of a cell in a worksheet part, or "" when the cell has no element.
fn cell_tag(sheet_xml: &str, a1: &str) -> String {
    let needle = format!("<c r=\"{a1}\"");
    match sheet_xml.find(&needle) {
        Some(at) => {
            let end = sheet_xml[at..].find('>').unwrap();
            sheet_xml[at..=at + end].to_string()
        }
        None => String::new(),
    }
}

fn style_of(sheet_xml: &str, a1: &str) -> u32 {
    let tag = cell_tag(sheet_xml, a1);
    tag.split(" s=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .map_or(0, |s| s.parse().unwrap())
}

/// The `<xf>` of `cellXfs` at an index.
fn xf(styles: &str, index: u32) -> String {
    let list = &styles[styles.find("<cellXfs").unwrap()..styles.find("</cellXfs>").unwrap()];
    let mut items = list
        .match_indices("<xf ")
        .map(|(i, _)| i)
        .collect::<Vec<_>>();
    items.push(list.len());
    list[items[index as usize]..items[index as usize + 1]].to_string()
}

fn list_item(styles: &str, list: &str, item: &str, index: usize) -> String {
    let body = &styles
        [styles.find(&format!("<{list}")).unwrap()..styles.find(&format!("</{list}>")).unwrap()];
    let starts: Vec<usize> = body
        .match_indices(&format!("<{item}>"))
        .chain(body.match_indices(&format!("<{item} ")))
        .chain(body.match_indices(&format!("<{item}/>")))
        .map(|(i, _)| i)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let start = starts[index];
    let end = starts.get(index + 1).copied().unwrap_or(body.len());
    body[start..end].to_string()
}

fn attr(tag: &str, name: &str) -> Option<String> {
    tag.split(&format!(" {name}=\""))
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .map(str::to_string)
}

/// Applies `op` to a fresh copy of the fixture with inverse ops, checks the written style with
/// `expect`, then applies the inverse op and checks every target cell has its old style.
fn check(op: Value, cells: &[&str], expect: impl Fn(&str, &str, &str)) {
    let ws = Workspace::new();
    let name = ws.add_fixture(BOOK);
    let original = part(&ws.path(&name), "xl/worksheets/sheet1.xml");
    let res = ws.ok(json!({
        "xlsx_path": name,
        "sheet": SHEET,
        "ops": [op.clone()],
        "return_inverse_ops": true,
        "out_name": "styled.xlsx",
    }));
    assert_eq!(res.patch_diff.len(), 1, "{op}");
    let out = Path::new(&res.out_path);
    let sheet = part(out, "xl/worksheets/sheet1.xml");
    let styles = part(out, "xl/styles.xml");
    for a1 in cells {
        expect(&sheet, &styles, a1);
    }
    assert_eq!(res.inverse_ops.len(), 1, "{op}");
    let undo = serde_json::to_value(&res.inverse_ops).unwrap();
    assert_eq!(undo[0]["op"], "restore_design_snapshot", "{undo}");
    let back = ws.ok(json!({
        "xlsx_path": "styled.xlsx",
        "ops": undo,
        "out_name": "restored.xlsx",
    }));
    let restored = part(Path::new(&back.out_path), "xl/worksheets/sheet1.xml");
    for a1 in cells {
        assert_eq!(
            style_of(&restored, a1),
            style_of(&original, a1),
            "{op}: {a1} has its original style again"
        );
    }
}

#[test]
fn set_bold_derives_a_bold_font_and_its_inverse_restores_the_style() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    check(
        json!({"op": "set_bold", "range": "A1:B2"}),
        &["A1", "B2"],
        |sheet, styles, a1| {
            let f = xf(styles, style_of(sheet, a1));
            let font = attr(&f, "fontId").unwrap().parse().unwrap();
            assert!(
                list_item(styles, "fonts", "font", font).contains("<b/>"),
                "{a1}: {f}"
            );
            assert_eq!(attr(&f, "applyFont").as_deref(), Some("1"), "{f}");
        },
    );
}

#[test]
fn set_font_size_and_color_write_sz_and_rgb() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    check(
        json!({"op": "set_font_size", "cell": "C3", "font_size": 14}),
        &["C3"],
        |sheet, styles, a1| {
            let f = xf(styles, style_of(sheet, a1));
            let font = attr(&f, "fontId").unwrap().parse().unwrap();
            assert!(list_item(styles, "fonts", "font", font).contains("<sz val=\"14\"/>"));
        },
    );
    check(
        json!({"op": "set_font_color", "cell": "C3", "color": "#1f4e79"}),
        &["C3"],
        |sheet, styles, a1| {
            let f = xf(styles, style_of(sheet, a1));
            let font = attr(&f, "fontId").unwrap().parse().unwrap();
            assert!(list_item(styles, "fonts", "font", font).contains("<color rgb=\"FF1F4E79\"/>"));
        },
    );
}

#[test]
fn set_fill_color_accepts_the_color_alias_and_writes_a_solid_fill() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    check(
        json!({"op": "set_fill_color", "range": "A1:C1", "color": "FFFF00"}),
        &["A1", "C1"],
        |sheet, styles, a1| {
            let f = xf(styles, style_of(sheet, a1));
            let fill = attr(&f, "fillId").unwrap().parse().unwrap();
            assert_eq!(
                list_item(styles, "fills", "fill", fill),
                "<fill><patternFill patternType=\"solid\"><fgColor rgb=\"FFFFFF00\"/><bgColor rgb=\"FFFFFF00\"/></patternFill></fill>"
            );
        },
    );
}

#[test]
fn set_alignment_and_set_style_write_the_alignment_element() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    check(
        json!({"op": "set_alignment", "cell": "B2", "horizontal": "center", "wrap_text": true}),
        &["B2"],
        |sheet, styles, a1| {
            let f = xf(styles, style_of(sheet, a1));
            assert!(
                f.contains("horizontal=\"center\"") && f.contains("wrapText=\"1\""),
                "{f}"
            );
        },
    );
    check(
        json!({"op": "set_style", "range": "D5:E6", "bold": true, "fill_color": "#DDEBF7",
               "vertical_align": "top"}),
        &["D5", "E6"],
        |sheet, styles, a1| {
            let f = xf(styles, style_of(sheet, a1));
            assert!(f.contains("vertical=\"top\""), "{f}");
            let fill = attr(&f, "fillId").unwrap().parse().unwrap();
            assert!(list_item(styles, "fills", "fill", fill).contains("FFDDEBF7"));
            let font = attr(&f, "fontId").unwrap().parse().unwrap();
            assert!(list_item(styles, "fonts", "font", font).contains("<b/>"));
        },
    );
}

#[test]
fn draw_grid_border_accepts_a_range_and_draws_thin_black_sides() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    check(
        json!({"op": "draw_grid_border", "range": "A1:B3"}),
        &["A1", "B3", "A3"],
        |sheet, styles, a1| {
            let f = xf(styles, style_of(sheet, a1));
            let border = attr(&f, "borderId").unwrap().parse().unwrap();
            let b = list_item(styles, "borders", "border", border);
            for side in ["left", "right", "top", "bottom"] {
                assert!(
                    b.contains(&format!("<{side} style=\"thin\"><color rgb=\"FF000000\"/>")),
                    "{a1}: {b}"
                );
            }
        },
    );
}

#[test]
fn a_second_identical_style_reuses_the_appended_format() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let ws = Workspace::new();
    let name = ws.add_fixture(BOOK);
    let before = part(&ws.path(&name), "xl/styles.xml");
    let res = ws.ok(json!({
        "xlsx_path": name,
        "sheet": SHEET,
        "ops": [
            {"op": "set_fill_color", "cell": "H20", "fill_color": "FF0000"},
            {"op": "set_fill_color", "cell": "H21", "fill_color": "FF0000"},
        ],
    }));
    let out = Path::new(&res.out_path);
    let sheet = part(out, "xl/worksheets/sheet1.xml");
    let styles = part(out, "xl/styles.xml");
    assert_eq!(style_of(&sheet, "H20"), style_of(&sheet, "H21"));
    assert_eq!(
        styles.matches("FFFF0000").count() - before.matches("FFFF0000").count(),
        2
    );
    // The original part is a prefix of the new one up to the first appended element.
    let first_fill_end = before.find("</fills>").unwrap();
    let cut = before[..first_fill_end].rfind("<fills").unwrap();
    assert_eq!(&styles[..cut], &before[..cut]);
}

#[test]
fn merge_and_unmerge_edit_merge_cells_and_invert_each_other() {
    if keiri_testkit::skip_without_shared("fixtures/xlsx/ja_form_merged.xlsx") {
        return;
    }
    let ws = Workspace::new();
    let name = ws.add_fixture("xlsx/ja_form_merged.xlsx");
    let original = part(&ws.path(&name), "xl/worksheets/sheet1.xml");
    let res = ws.ok(json!({
        "xlsx_path": name,
        "sheet": "Sheet1",
        "ops": [{"op": "merge_cells", "range": "AA1:AC2"}],
        "return_inverse_ops": true,
        "out_name": "merged.xlsx",
    }));
    let sheet = part(Path::new(&res.out_path), "xl/worksheets/sheet1.xml");
    assert!(sheet.contains("<mergeCell ref=\"AA1:AC2\"/>"), "{sheet}");
    assert_eq!(
        serde_json::to_value(&res.patch_diff[0].after).unwrap(),
        json!({"kind": "style", "value": "merged=AA1:AC2"})
    );
    let undo = serde_json::to_value(&res.inverse_ops).unwrap();
    assert_eq!(
        undo,
        json!([{"op": "restore_design_snapshot", "sheet": "Sheet1",
                "design_snapshot": {"merge_state": {"scope": "AA1:AC2", "ranges": []}}}])
    );
    let back = ws.ok(json!({"xlsx_path": "merged.xlsx", "ops": undo, "out_name": "back.xlsx"}));
    let restored = part(Path::new(&back.out_path), "xl/worksheets/sheet1.xml");
    assert!(!restored.contains("AA1:AC2"));
    let merges = |xml: &str| xml.matches("<mergeCell ").count();
    assert_eq!(merges(&restored), merges(&original));

    // Overlapping an existing merge is an op error; unmerging it is undone by its inverse.
    let first = original
        .split("<mergeCell ref=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    let res = ws
        .run(json!({"xlsx_path": name, "sheet": "Sheet1",
                    "ops": [{"op": "merge_cells", "range": first}]}))
        .unwrap();
    let err = res.error.expect("an overlapping merge must fail");
    assert!(
        err.message.contains("overlaps existing merged ranges"),
        "{}",
        err.message
    );
    let res = ws.ok(json!({"xlsx_path": name, "sheet": "Sheet1",
        "ops": [{"op": "unmerge_cells", "range": first}], "return_inverse_ops": true,
        "out_name": "unmerged.xlsx"}));
    let sheet = part(Path::new(&res.out_path), "xl/worksheets/sheet1.xml");
    assert_eq!(merges(&sheet), merges(&original) - 1);
    let undo = serde_json::to_value(&res.inverse_ops).unwrap();
    let back =
        ws.ok(json!({"xlsx_path": "unmerged.xlsx", "ops": undo, "out_name": "remerged.xlsx"}));
    let sheet = part(Path::new(&back.out_path), "xl/worksheets/sheet1.xml");
    assert!(sheet.contains(&format!("<mergeCell ref=\"{first}\"/>")));
}

#[test]
fn set_dimensions_with_aliases_sets_heights_and_widths_and_its_inverse_removes_them() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let ws = Workspace::new();
    let name = ws.add_fixture(BOOK);
    let res = ws.ok(json!({
        "xlsx_path": name,
        "sheet": SHEET,
        "ops": [{"op": "set_dimensions", "row": [2, 40], "height": 30, "col": ["B", 30], "width": 18.5}],
        "return_inverse_ops": true,
        "out_name": "sized.xlsx",
    }));
    let sheet = part(Path::new(&res.out_path), "xl/worksheets/sheet1.xml");
    assert!(sheet.contains("<col min=\"2\" max=\"2\""), "{sheet}");
    assert!(
        sheet.contains("<col min=\"30\" max=\"30\" width=\"18.5\" customWidth=\"1\"/>"),
        "{sheet}"
    );
    assert!(
        sheet.contains("<row r=\"40\" ht=\"30\" customHeight=\"1\"/>"),
        "{sheet}"
    );
    let row2 = &sheet[sheet.find("<row r=\"2\"").unwrap()..];
    assert!(row2[..row2.find('>').unwrap()].contains("ht=\"30\" customHeight=\"1\""));
    assert_eq!(
        serde_json::to_value(&res.patch_diff[0].after).unwrap(),
        json!({"kind": "dimension", "value": "rows=2,40, columns=B,AD"})
    );
    let undo = serde_json::to_value(&res.inverse_ops).unwrap();
    let back = ws.ok(json!({"xlsx_path": "sized.xlsx", "ops": undo, "out_name": "back.xlsx"}));
    let restored = part(Path::new(&back.out_path), "xl/worksheets/sheet1.xml");
    assert!(!restored.contains("min=\"30\""), "{restored}");
    assert!(!restored.contains("<row r=\"40\" ht"), "{restored}");
}

#[test]
fn auto_fit_columns_counts_east_asian_characters_as_two() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let ws = Workspace::new();
    let name = ws.add_fixture(BOOK);
    let res = ws.ok(json!({
        "xlsx_path": name,
        "sheet": SHEET,
        "ops": [
            {"op": "set_value", "cell": "Z1", "value": "請求書番号"},
            {"op": "set_value", "cell": "AA1", "value": "Invoice"},
            {"op": "auto_fit_columns", "columns": ["Z", "AA"], "max_width": 60},
        ],
    }));
    let sheet = part(Path::new(&res.out_path), "xl/worksheets/sheet1.xml");
    // 5 wide characters = 10 columns + 2 of padding; 7 narrow ones + 2.
    assert!(
        sheet.contains("<col min=\"26\" max=\"26\" width=\"12\" customWidth=\"1\"/>"),
        "{sheet}"
    );
    assert!(
        sheet.contains("<col min=\"27\" max=\"27\" width=\"9\" customWidth=\"1\"/>"),
        "{sheet}"
    );
}

#[test]
fn a_top_level_sheet_applies_to_ops_without_one() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let ws = Workspace::new();
    let name = ws.add_fixture(BOOK);
    let res = ws
        .run(json!({"xlsx_path": name, "ops": [{"op": "set_bold", "cell": "A1"}]}))
        .unwrap_err();
    assert_eq!(res.code(), "INVALID_REQUEST");
    assert!(
        res.to_string()
            .contains("ops[0] (set_bold) is missing sheet"),
        "{res}"
    );
    let ok = ws.ok(json!({"xlsx_path": name, "sheet": SHEET,
        "ops": [{"op": "set_bold", "cell": "A1"}, {"op": "add_sheet", "name": "追加"}]}));
    assert_eq!(ok.patch_diff[0].sheet, SHEET);
    assert_eq!(ok.patch_diff[1].sheet, "追加");
}

#[test]
fn more_than_200_ops_get_exstructs_warning() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let ws = Workspace::new();
    let name = ws.add_fixture(BOOK);
    let ops: Vec<Value> = (1..=201)
        .map(|r| json!({"op": "set_bold", "cell": format!("AB{r}")}))
        .collect();
    let res = ws.ok(json!({"xlsx_path": name, "sheet": SHEET, "ops": ops, "dry_run": true}));
    assert!(
        res.warnings
            .iter()
            .any(|w| w.starts_with("Large patch request: 201 ops.")),
        "{:?}",
        res.warnings
    );
}

#[test]
fn style_only_patches_leave_workbook_xml_and_calc_chain_alone() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let ws = Workspace::new();
    let name = ws.add_fixture(BOOK);
    let res = ws.ok(json!({"xlsx_path": name, "sheet": SHEET,
        "ops": [{"op": "set_bold", "cell": "A1"}]}));
    let before = entries(&ws.path(&name));
    let after = entries(Path::new(&res.out_path));
    for (k, v) in &before {
        if k == "xl/worksheets/sheet1.xml" || k == "xl/styles.xml" {
            continue;
        }
        assert_eq!(after.get(k), Some(v), "{k} must not change");
    }
}

/// A request refused before anything is read, with its stable code and ExStruct's reason.
fn refused(op: Value, reason: &str) {
    let ws = Workspace::new();
    let name = ws.add_fixture(BOOK);
    let body = json!({"xlsx_path": name, "sheet": SHEET, "ops": [op.clone()]});
    match serde_json::from_value::<keiri_xlsx::PatchRequest>(body) {
        Err(e) => assert!(e.to_string().contains(reason), "{op}: {e}"),
        Ok(req) => {
            let e = keiri_xlsx::patch(&req, &ws.env).unwrap_err();
            assert_eq!(e.code(), "INVALID_REQUEST", "{op}");
            assert!(e.to_string().contains(reason), "{op}: {e}");
        }
    }
}

#[test]
fn bad_design_ops_are_refused_with_exstructs_reasons() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    refused(
        json!({"op": "set_font_color", "cell": "A1", "color": "red"}),
        "Invalid color format",
    );
    refused(
        json!({"op": "set_fill_color", "cell": "A1", "fill_color": "#12345"}),
        "Invalid fill_color format",
    );
    refused(
        json!({"op": "set_bold", "range": "A1-B2"}),
        "Invalid range reference: A1-B2",
    );
    refused(
        json!({"op": "set_bold", "cell": "A1", "range": "A1:B2"}),
        "exactly one of cell or range",
    );
    refused(
        json!({"op": "set_bold", "range": "A1:Z1000"}),
        "target exceeds max cells: 10000",
    );
    refused(
        json!({"op": "merge_cells", "range": "A1:A1"}),
        "multi-cell range",
    );
    refused(
        json!({"op": "set_font_size", "cell": "A1", "font_size": 0}),
        "must be > 0",
    );
    refused(
        json!({"op": "set_alignment", "cell": "A1"}),
        "requires at least one of",
    );
    refused(
        json!({"op": "set_style", "cell": "A1"}),
        "requires at least one style field",
    );
    refused(
        json!({"op": "set_dimensions", "rows": [1]}),
        "requires row_height",
    );
    refused(
        json!({"op": "auto_fit_columns", "min_width": 20, "max_width": 10}),
        "min_width <= max_width",
    );
    refused(
        json!({"op": "set_fill_color", "cell": "A1", "color": "FF0000", "fill_color": "00FF00"}),
        "conflicting fields: 'fill_color' and alias 'color'",
    );
    refused(
        json!({"op": "draw_grid_border", "range": "A1:B2", "base_cell": "A1"}),
        "does not allow mixing 'range'",
    );
    refused(
        json!({"op": "set_bold", "cell": "A1", "font_size": 3}),
        "set_bold does not accept font_size",
    );
    refused(
        json!({"op": "set_bold", "cell": "A1", "colour": "x"}),
        "unknown field `colour`",
    );
    refused(
        json!({"op": "paint_cells", "cell": "A1"}),
        "unknown op \"paint_cells\"",
    );
}

#[test]
fn parsed_ops_keep_exstructs_names_and_serialise_canonically() {
    let op = keiri_xlsx::PatchOp::from_json(
        json!({"op": "set_alignment", "sheet": "S", "cell": "A1", "horizontal": "centerContinuous", "vertical": "center"}),
    )
    .unwrap();
    assert_eq!(
        serde_json::to_value(&op).unwrap(),
        json!({"op": "set_alignment", "sheet": "S", "cell": "A1",
               "horizontal_align": "centerContinuous", "vertical_align": "center"})
    );
    let op = keiri_xlsx::PatchOp::from_json(json!({"op": "set_bold", "sheet": "S", "cell": "A1"}))
        .unwrap();
    assert_eq!(
        serde_json::to_value(&op).unwrap(),
        json!({"op": "set_bold", "sheet": "S", "cell": "A1", "bold": true})
    );
    let op = keiri_xlsx::PatchOp::from_json(
        json!({"op": "draw_grid_border", "sheet": "S", "range": "B2:D5"}),
    )
    .unwrap();
    assert_eq!(
        serde_json::to_value(&op).unwrap(),
        json!({"op": "draw_grid_border", "sheet": "S", "base_cell": "B2", "row_count": 4, "col_count": 3})
    );
}

#[test]
fn apply_table_style_adds_a_table_part_with_its_relationship_and_content_type() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let ws = Workspace::new();
    let name = ws.add_fixture(BOOK);
    let before = entries(&ws.path(&name));
    let res = ws.ok(json!({
        "xlsx_path": name,
        "sheet": SHEET,
        "ops": [
            {"op": "set_range_values", "range": "Z1:AB3",
             "values": [["科目", "金額", "備考"], ["旅費", 1200, "出張"], ["会議費", 3400, null]]},
            {"op": "apply_table_style", "range": "Z1:AB3", "style": "TableStyleMedium9",
             "table_name": "経費一覧"},
        ],
    }));
    assert_eq!(
        serde_json::to_value(&res.patch_diff.last().unwrap().after).unwrap(),
        json!({"kind": "style", "value": "table=経費一覧;table_style=TableStyleMedium9"})
    );
    let out = Path::new(&res.out_path);
    let after = entries(out);
    let new_parts: Vec<&String> = after.keys().filter(|k| !before.contains_key(*k)).collect();
    let table_part = new_parts
        .iter()
        .find(|p| p.starts_with("xl/tables/table"))
        .unwrap_or_else(|| panic!("no table part among {new_parts:?}"));
    let table = String::from_utf8(after[*table_part].clone()).unwrap();
    assert!(
        table.contains("displayName=\"経費一覧\" ref=\"Z1:AB3\""),
        "{table}"
    );
    assert!(table.contains("<tableColumn id=\"1\" name=\"科目\"/><tableColumn id=\"2\" name=\"金額\"/><tableColumn id=\"3\" name=\"備考\"/>"), "{table}");
    assert!(
        table.contains("<tableStyleInfo name=\"TableStyleMedium9\""),
        "{table}"
    );
    let types = String::from_utf8(after["[Content_Types].xml"].clone()).unwrap();
    assert!(
        types.contains(&format!("<Override PartName=\"/{table_part}\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.table+xml\"/>")),
        "{types}"
    );
    let sheet = part(out, "xl/worksheets/sheet1.xml");
    let rid = sheet
        .split("<tablePart ")
        .nth(1)
        .and_then(|t| t.split("r:id=\"").nth(1))
        .and_then(|t| t.split('"').next())
        .unwrap_or_else(|| panic!("no tablePart: {sheet}"));
    let rels = part(out, "xl/worksheets/_rels/sheet1.xml.rels");
    assert!(
        rels.contains(&format!("Id=\"{rid}\""))
            && rels.contains(&format!("Target=\"/{table_part}\"")),
        "{rels}"
    );

    // A second table over the same cells, or with the same name, is refused.
    let first = res.out_path.clone();
    let res = ws
        .run(json!({"xlsx_path": res.out_path, "sheet": SHEET,
            "ops": [{"op": "apply_table_style", "range": "AA1:AB2", "style": "TableStyleLight1"}]}))
        .unwrap();
    let err = res.error.unwrap().message;
    assert!(
        err.contains("intersects the existing table at Z1:AB3"),
        "{err}"
    );
    let res = ws
        .run(json!({"xlsx_path": first, "sheet": SHEET,
            "ops": [
                {"op": "set_range_values", "range": "BA1:BA2", "values": [["x"], [1]]},
                {"op": "apply_table_style", "range": "BA1:BA2", "style": "TableStyleLight1", "table_name": "経費一覧"},
            ]}))
        .unwrap();
    let err = res.error.unwrap().message;
    assert!(err.contains("Table name already exists: 経費一覧"), "{err}");

    // The inverse op removes the table again: the parts are those of the first patch's input.
    let ws2 = Workspace::new();
    let name2 = ws2.add_fixture(BOOK);
    let with_headers = ws2.ok(json!({"xlsx_path": name2, "sheet": SHEET, "out_name": "h.xlsx",
        "ops": [{"op": "set_range_values", "range": "Z1:AA2", "values": [["科目", "金額"], ["旅費", 1]]}]}));
    let table = ws2.ok(
        json!({"xlsx_path": "h.xlsx", "sheet": SHEET, "out_name": "t.xlsx",
        "return_inverse_ops": true,
        "ops": [{"op": "apply_table_style", "range": "Z1:AA2", "style": "TableStyleLight9"}]}),
    );
    let undo = serde_json::to_value(&table.inverse_ops).unwrap();
    assert_eq!(
        undo,
        json!([{"op": "delete_table", "sheet": SHEET, "table_name": "Table1"}])
    );
    let back = ws2.ok(json!({"xlsx_path": "t.xlsx", "ops": undo, "out_name": "back.xlsx"}));
    let original = entries(Path::new(&with_headers.out_path));
    let restored = entries(Path::new(&back.out_path));
    assert_eq!(
        original.keys().collect::<Vec<_>>(),
        restored.keys().collect::<Vec<_>>(),
        "the table part is gone again"
    );
    let types = String::from_utf8(restored["[Content_Types].xml"].clone()).unwrap();
    assert!(!types.contains("table+xml"), "{types}");
    let sheet = part(Path::new(&back.out_path), "xl/worksheets/sheet1.xml");
    assert!(!sheet.contains("tablePart"), "{sheet}");
}

#[test]
fn apply_table_style_refuses_a_header_row_with_an_empty_cell() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let ws = Workspace::new();
    let name = ws.add_fixture(BOOK);
    let res = ws
        .run(json!({"xlsx_path": name, "sheet": SHEET,
            "ops": [{"op": "apply_table_style", "range": "AZ1:BA3", "style": "TableStyleLight1"}]}))
        .unwrap();
    assert!(res.error.unwrap().message.contains("needs a header row"));
    refused(
        json!({"op": "apply_table_style", "range": "A1:B2", "style": "TableStyleLight1", "table_name": "A1"}),
        "not a valid Excel table name",
    );
}

#[test]
fn a_workbook_without_a_styles_part_gets_one_for_its_first_styling_op() {
    // The styles part is optional; generators and some exporters leave it out. The first
    // styling op starts from Excel's default stylesheet, added with its relationship and
    // content type; the other parts stay as they were.
    let ws = Workspace::new();
    let bytes = crate::support::build_xlsx(&[(
        "明細",
        vec![
            ("A1", crate::support::Cell::S("科目")),
            ("B1", crate::support::Cell::N(1200.0)),
        ],
    )]);
    let name = ws.add_file("plain.xlsx", &bytes);
    let before = entries(&ws.path(&name));
    assert!(
        !before.keys().any(|k| k.contains("styles")),
        "{:?}",
        before.keys()
    );
    let res = ws.ok(json!({
        "xlsx_path": name,
        "sheet": "明細",
        "ops": [{"op": "set_bold", "range": "A1:B1"}, {"op": "set_fill_color", "cell": "A1", "fill_color": "#D9E1F2"}],
        "out_name": "styled.xlsx",
    }));
    let out = Path::new(&res.out_path);
    let after = entries(out);
    let styles = part(out, "xl/styles.xml");
    let sheet = part(out, "xl/worksheets/sheet1.xml");
    let f = xf(&styles, style_of(&sheet, "B1"));
    let font = attr(&f, "fontId").unwrap().parse().unwrap();
    assert!(
        list_item(&styles, "fonts", "font", font).contains("<b/>"),
        "{f}"
    );
    let a1 = xf(&styles, style_of(&sheet, "A1"));
    let fill = attr(&a1, "fillId").unwrap().parse().unwrap();
    assert!(
        list_item(&styles, "fills", "fill", fill).contains("D9E1F2"),
        "{a1}"
    );
    let rels = part(out, "xl/_rels/workbook.xml.rels");
    assert!(
        rels.contains("/styles\" Target=\"/xl/styles.xml\""),
        "{rels}"
    );
    let types = part(out, "[Content_Types].xml");
    assert!(
        types.contains("PartName=\"/xl/styles.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml\""),
        "{types}"
    );
    for (name, bytes) in &before {
        if ![
            "xl/worksheets/sheet1.xml",
            "xl/_rels/workbook.xml.rels",
            "[Content_Types].xml",
        ]
        .contains(&name.as_str())
        {
            assert_eq!(after.get(name), Some(bytes), "{name} is untouched");
        }
    }
    // Another reader opens it with the values intact.
    assert_eq!(
        crate::support::cell(out, "明細", "B1").as_deref(),
        Some("1200")
    );
}
