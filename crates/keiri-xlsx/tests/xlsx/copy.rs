//! `copy_sheet` on real workbooks: last quarter's sheet rolled forward (every other part copied
//! raw), a form with a print area and drawings (the copy gets its own print area; the drawings
//! are named in a warning and stay on the original), every shared sample, and the inverse.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;

use crate::support::{Workspace, cells, entries, fixtures_dir, raw_entries};

/// The cells of one sheet, as calamine reads them, keyed by A1.
fn sheet_cells(path: &Path, sheet: &str) -> BTreeMap<String, String> {
    cells(path)
        .into_iter()
        .filter(|((s, _), _)| s == sheet)
        .map(|((_, a1), v)| (a1, v))
        .collect()
}

fn sheet_names(path: &Path) -> Vec<String> {
    use calamine::Reader;
    calamine::open_workbook_auto(path).unwrap().sheet_names()
}

fn text(path: &Path, part: &str) -> String {
    String::from_utf8(entries(path)[part].clone()).unwrap()
}

#[test]
fn copy_sheet_rolls_a_quarter_forward_and_copies_every_other_part_raw() {
    if keiri_testkit::skip_without_shared("fixtures/accounting/retirement_workbook_2024Q4.xlsx") {
        return;
    }
    let ws = Workspace::new();
    let name = ws.add_fixture("accounting/retirement_workbook_2024Q4.xlsx");
    let original = ws.path(&name);
    let res = ws.ok(json!({
        "xlsx_path": name,
        "ops": [{"op": "copy_sheet", "source": "2024.12", "name": "2025.3 期末", "position": 1}],
        "out_name": "rolled.xlsx",
        "return_inverse_ops": true,
    }));
    let out = Path::new(&res.out_path);
    assert_eq!(
        sheet_names(out),
        ["2025.3 期末", "2024.12", "2024.9", "2025.3"]
    );
    // Every value and formula of the source, in the same cells.
    let source = sheet_cells(&original, "2024.12");
    assert!(source.len() > 200, "{}", source.len());
    assert_eq!(sheet_cells(out, "2025.3 期末"), source);
    // The copy's part is the source's, less its selected-tab flag (two selected tabs open
    // grouped in Excel, where an edit goes to both).
    let before = entries(&original);
    let after = entries(out);
    let new_parts: Vec<&String> = after.keys().filter(|k| !before.contains_key(*k)).collect();
    assert_eq!(new_parts, ["xl/worksheets/sheet4.xml"]);
    let source_xml = String::from_utf8(before["xl/worksheets/sheet1.xml"].clone()).unwrap();
    let copy_xml = text(out, "xl/worksheets/sheet4.xml");
    assert_eq!(copy_xml, source_xml.replace(" tabSelected=\"1\"", ""));
    // Nothing else is rewritten: every other part is copied raw, compressed bytes included.
    let before_raw = raw_entries(&original);
    let after_raw = raw_entries(out);
    for (part, raw) in &before_raw {
        if matches!(
            part.as_str(),
            "[Content_Types].xml" | "xl/workbook.xml" | "xl/_rels/workbook.xml.rels"
        ) {
            continue;
        }
        assert_eq!(after_raw.get(part), Some(raw), "{part} must be copied raw");
    }
    // The undo deletes the copy (it is still a copy) and restores the workbook.
    let undo = serde_json::to_value(&res.inverse_ops).unwrap();
    assert_eq!(
        undo,
        json!([{"op": "delete_sheet", "sheet": "2025.3 期末", "copy_of": "2024.12"}])
    );
    let back = ws.ok(json!({"xlsx_path": "rolled.xlsx", "ops": undo, "out_name": "back.xlsx"}));
    let back = Path::new(&back.out_path);
    assert_eq!(sheet_names(back), sheet_names(&original));
    assert_eq!(cells(back), cells(&original));
    // Every part byte for byte (this workbook already asks for a full calculation).
    assert!(
        entries(back) == entries(&original),
        "copy then undo changed a part"
    );

    // A copy that was edited afterwards is not deleted by copy_of.
    let edited = ws.ok(json!({"xlsx_path": "rolled.xlsx", "ops": [
        {"op": "set_value", "sheet": "2025.3 期末", "cell": "C2", "value": "2025-03-31"}],
        "out_name": "edited.xlsx"}));
    let res = ws
        .run(json!({"xlsx_path": edited.out_path, "ops": undo, "out_name": "refused.xlsx"}))
        .unwrap();
    let error = res.error.expect("an edited copy is refused");
    assert!(
        error.message.contains("no longer a copy") && error.message.contains("C2"),
        "{}",
        error.message
    );
    // A name already taken, and a position past the last tab, are op errors.
    for (op, wanted) in [
        (
            json!({"op": "copy_sheet", "sheet": "2024.12", "new_sheet": "2024.9"}),
            "already exists",
        ),
        (
            json!({"op": "copy_sheet", "sheet": "2024.12", "new_sheet": "X", "position": 9}),
            "past the last tab",
        ),
        (
            json!({"op": "copy_sheet", "sheet": "無い", "new_sheet": "X"}),
            "does not exist",
        ),
    ] {
        let res = ws
            .run(json!({"xlsx_path": name, "ops": [op], "out_name": "x.xlsx"}))
            .unwrap();
        let message = res.error.map(|e| e.message).unwrap_or_default();
        assert!(message.contains(wanted), "{op}: {message}");
    }
}

#[test]
fn copy_sheet_gives_the_copy_its_own_print_area_and_names_the_drawings_it_leaves() {
    if keiri_testkit::skip_without_shared("fixtures/xlsx/sf425_form.xlsx") {
        return;
    }
    let ws = Workspace::new();
    let name = ws.add_fixture("xlsx/sf425_form.xlsx");
    let res = ws.ok(json!({
        "xlsx_path": name,
        "ops": [{"op": "copy_sheet", "sheet": "FFR", "new_sheet": "FFR (2)"}],
        "out_name": "copied.xlsx",
    }));
    let out = Path::new(&res.out_path);
    let workbook = text(out, "xl/workbook.xml");
    assert!(
        workbook.contains("localSheetId=\"0\">FFR!$A$1:$X$66</definedName>")
            && workbook.contains("localSheetId=\"1\">'FFR (2)'!$A$1:$X$66</definedName>"),
        "{workbook}"
    );
    assert!(
        res.warnings
            .iter()
            .any(|w| w.contains("drawings") && w.contains("FFR (2)")),
        "{:?}",
        res.warnings
    );
    // The copy points to no part it does not have; the original keeps its drawing.
    let copy = entries(out)
        .into_iter()
        .find(|(k, _)| k.starts_with("xl/worksheets/sheet") && !k.ends_with("sheet1.xml"))
        .map(|(_, v)| String::from_utf8(v).unwrap())
        .unwrap();
    assert!(!copy.contains("r:id="), "the copy keeps a relationship id");
    assert!(text(out, "xl/worksheets/sheet1.xml").contains("<drawing"));
    assert_eq!(sheet_cells(out, "FFR (2)"), sheet_cells(out, "FFR"));
}

/// On every shared sample the copy has the source's cells and no part of the original changes
/// but the three that list sheets.
#[test]
fn copy_sheet_on_every_sample_keeps_the_original_parts() {
    if keiri_testkit::skip_without_shared("fixtures/xlsx/chart_shapes.xlsx") {
        return;
    }
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir().join("xlsx"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".xlsx"))
        .collect();
    names.sort();
    assert!(names.len() >= 7, "{names:?}");
    for file in names {
        let ws = Workspace::new();
        let name = ws.add_fixture(&format!("xlsx/{file}"));
        let original = ws.path(&name);
        let first = sheet_names(&original)[0].clone();
        let res = ws.ok(json!({
            "xlsx_path": name,
            "ops": [{"op": "copy_sheet", "sheet": first, "new_sheet": "写し"}],
            "out_name": "copied.xlsx",
        }));
        let out = Path::new(&res.out_path);
        assert_eq!(
            sheet_cells(out, "写し"),
            sheet_cells(&original, &first),
            "{file}"
        );
        let before_raw = raw_entries(&original);
        let after_raw = raw_entries(out);
        for (part, raw) in &before_raw {
            if matches!(
                part.as_str(),
                "[Content_Types].xml" | "xl/workbook.xml" | "xl/_rels/workbook.xml.rels"
            ) || part == "xl/calcChain.xml"
            {
                continue;
            }
            assert_eq!(after_raw.get(part), Some(raw), "{file}: {part}");
        }
    }
}

/// append_rows and update_rows_by_key on every shared sample (column letters, keys in A):
/// only the sheet they write changes; charts, shapes, SmartArt and every other part are copied
/// raw.
#[test]
fn row_ops_on_every_sample_touch_only_their_sheet() {
    if keiri_testkit::skip_without_shared("fixtures/xlsx/chart_shapes.xlsx") {
        return;
    }
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir().join("xlsx"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".xlsx"))
        .collect();
    names.sort();
    for file in names {
        let ws = Workspace::new();
        let name = ws.add_fixture(&format!("xlsx/{file}"));
        let original = ws.path(&name);
        let first = sheet_names(&original)[0].clone();
        let res = ws
            .run(json!({
                "xlsx_path": name,
                "ops": [{"op": "append_rows", "sheet": first, "copy_style_from": "none",
                    "rows": [{"A": "追加1", "B": 100}, {"A": "追加2", "B": 200}]}],
                "out_name": "appended.xlsx",
            }))
            .unwrap();
        if let Some(error) = &res.error {
            // A form whose empty area below the last value is merged cells: refused, saying
            // where, and nothing is written.
            assert!(
                ["ja_form_merged.xlsx", "sf425_form.xlsx"].contains(&file.as_str())
                    && error.message.contains("is part of the merged range"),
                "{file}: {error:?}"
            );
            assert!(!ws.path("appended.xlsx").exists());
            continue;
        }
        let out = Path::new(&res.out_path);
        let appended = sheet_cells(out, &first);
        let (row1, row2) = appended
            .iter()
            .filter(|(_, v)| v.starts_with("追加"))
            .map(|(a1, _)| a1.trim_start_matches('A').parse::<u32>().unwrap())
            .fold((u32::MAX, 0), |(lo, hi), r| (lo.min(r), hi.max(r)));
        assert_eq!(row2, row1 + 1, "{file}");
        let before_raw = raw_entries(&original);
        let after_raw = raw_entries(out);
        let changed: Vec<&String> = before_raw
            .iter()
            .filter(|(part, raw)| after_raw.get(*part) != Some(raw))
            .map(|(part, _)| part)
            .collect();
        assert!(
            changed.iter().all(|p| p.starts_with("xl/worksheets/sheet")
                || matches!(
                    p.as_str(),
                    "xl/workbook.xml"
                        | "xl/calcChain.xml"
                        | "[Content_Types].xml"
                        | "xl/_rels/workbook.xml.rels"
                )),
            "{file}: {changed:?}"
        );
        assert_eq!(
            changed
                .iter()
                .filter(|p| p.starts_with("xl/worksheets/sheet"))
                .count(),
            1,
            "{file}: {changed:?}"
        );
        // The rows just appended are found again by key (below a header row, when there is
        // a row above them).
        if row1 == 1 {
            continue;
        }
        let res = ws.ok(json!({
            "xlsx_path": "appended.xlsx",
            "ops": [{"op": "update_rows_by_key", "sheet": first, "header_row": row1 - 1,
                "key_column": "A", "rows": [{"A": "追加2", "B": 250}]}],
            "dry_run": true,
        }));
        assert_eq!(
            res.patch_diff[0].cell.as_deref(),
            Some(format!("B{row2}").as_str()),
            "{file}"
        );
    }
}

/// A sheet with a VBA code name and a selected tab: the copy has neither (a code name is
/// unique in a workbook; two selected tabs open grouped), and keeps the rest of sheetPr.
#[test]
fn the_copy_drops_the_code_name_and_the_selected_tab() {
    let ws = Workspace::new();
    let bytes = crate::support::build_xlsx(&[("元", vec![("A1", crate::support::Cell::S("値"))])]);
    // Give the generated sheet a sheetPr with a code name and a tab colour, and a selected view.
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..z.len() {
        use std::io::{Read, Write};
        let mut f = z.by_index(i).unwrap();
        let name = f.name().unwrap().to_string();
        let mut text = String::new();
        f.read_to_string(&mut text).unwrap();
        if name == "xl/worksheets/sheet1.xml" {
            text = text.replace(
                "<sheetData>",
                "<sheetPr codeName=\"Sheet1\"><tabColor rgb=\"FFFF0000\"/></sheetPr><sheetViews><sheetView tabSelected=\"1\" workbookViewId=\"0\"/></sheetViews><sheetData>",
            );
        }
        out.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        out.write_all(text.as_bytes()).unwrap();
    }
    let name = ws.add_file("coded.xlsx", &out.finish().unwrap().into_inner());
    let res = ws.ok(
        json!({"xlsx_path": name, "ops": [{"op": "copy_sheet", "sheet": "元", "new_sheet": "写し"}],
        "out_name": "copied.xlsx"}),
    );
    let out = Path::new(&res.out_path);
    let copy = text(out, "xl/worksheets/sheet2.xml");
    assert!(
        copy.contains("<sheetPr><tabColor rgb=\"FFFF0000\"/></sheetPr>"),
        "{copy}"
    );
    assert!(
        !copy.contains("codeName") && !copy.contains("tabSelected"),
        "{copy}"
    );
    assert!(text(out, "xl/worksheets/sheet1.xml").contains("codeName=\"Sheet1\""));
    assert_eq!(sheet_cells(out, "写し"), sheet_cells(out, "元"));
}
