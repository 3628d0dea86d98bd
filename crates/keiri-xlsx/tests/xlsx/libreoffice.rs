//! A styled result opens in a real spreadsheet engine: LibreOffice converts it headless to
//! flat ODF, and the bold font, the fill, the merge and the table are there.
//!
//! The test skips (with the reason printed) only when `soffice` is not installed; CI installs
//! it (`scripts/setup-system.sh`).

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::support::Workspace;

/// The style name of the cell whose text is `text`, in a flat ODF spreadsheet.
fn style_of_cell_with_text<'a>(fods: &'a str, text: &str) -> &'a str {
    let at = fods
        .find(&format!(">{text}</text:p>"))
        .unwrap_or_else(|| panic!("no cell shows {text:?}"));
    let cell = fods[..at].rfind("<table:table-cell").unwrap();
    let tag = &fods[cell..at];
    tag.split("table:style-name=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("the cell {text:?} has no style: {tag}"))
}

/// The `<style:style>` definition of a cell style.
fn style_definition<'a>(fods: &'a str, name: &str) -> &'a str {
    let at = fods
        .find(&format!("<style:style style:name=\"{name}\""))
        .unwrap_or_else(|| panic!("no style {name}"));
    let end = fods[at..].find("</style:style>").unwrap();
    &fods[at..at + end]
}

/// Whether LibreOffice is there; says why the test is skipped when not.
fn have_soffice() -> bool {
    if Command::new("soffice").arg("--version").output().is_ok() {
        return true;
    }
    println!(
        "SKIPPED: soffice (LibreOffice) is not installed; install libreoffice-calc-nogui \
         (scripts/setup-system.sh does) to run this test"
    );
    false
}

/// The workbook converted headless by LibreOffice to flat ODF (its reading of every style).
fn to_fods(ws: &Workspace, workbook: &Path) -> String {
    let out_dir = ws.path("converted");
    std::fs::create_dir_all(&out_dir).unwrap();
    // A private profile, so a concurrent LibreOffice (or a stale lock) cannot interfere.
    let profile = ws.path("lo-profile");
    let output = Command::new("soffice")
        .arg(format!(
            "-env:UserInstallation=file://{}",
            profile.display()
        ))
        .args([
            "--headless",
            "--norestore",
            "--convert-to",
            "fods",
            "--outdir",
        ])
        .arg(&out_dir)
        .arg(workbook)
        .output()
        .unwrap();
    let stem = workbook.file_stem().unwrap().to_string_lossy();
    let converted = out_dir.join(format!("{stem}.fods"));
    assert!(
        output.status.success() && converted.exists(),
        "LibreOffice could not convert the workbook: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::read_to_string(converted).unwrap()
}

#[test]
fn a_workbook_given_its_first_styles_part_opens_in_libreoffice_styled() {
    if !have_soffice() {
        return;
    }
    let ws = Workspace::new();
    let bytes = crate::support::build_xlsx(&[(
        "明細",
        // Two plain cells too: LibreOffice gives column A its most common style as the
        // default and names a cell's style only where it differs.
        vec![
            ("A1", crate::support::Cell::S("見出し")),
            ("A2", crate::support::Cell::S("塗り")),
            ("A3", crate::support::Cell::S("明細1")),
            ("A4", crate::support::Cell::S("明細2")),
        ],
    )]);
    let name = ws.add_file("plain.xlsx", &bytes);
    let res = ws.ok(json!({
        "xlsx_path": name,
        "sheet": "明細",
        "ops": [
            {"op": "set_bold", "cell": "A1"},
            {"op": "set_fill_color", "cell": "A2", "fill_color": "#FFFF00"},
        ],
        "out_name": "styled_plain.xlsx",
    }));
    let fods = to_fods(&ws, Path::new(&res.out_path));
    let bold = style_definition(&fods, style_of_cell_with_text(&fods, "見出し"));
    assert!(bold.contains("fo:font-weight=\"bold\""), "{bold}");
    let fill = style_definition(&fods, style_of_cell_with_text(&fods, "塗り"));
    assert!(
        fill.to_ascii_lowercase()
            .contains("fo:background-color=\"#ffff00\""),
        "{fill}"
    );
}

#[test]
fn a_styled_workbook_opens_in_libreoffice_with_bold_fill_merge_and_table() {
    if keiri_testkit::skip_without_shared("fixtures/accounting/multi_sheet_ja.xlsx") {
        return;
    }
    if !have_soffice() {
        return;
    }
    let ws = Workspace::new();
    let name = ws.add_fixture("accounting/multi_sheet_ja.xlsx");
    let res = ws.ok(json!({
        "xlsx_path": name,
        "sheet": "入力データ",
        "ops": [
            {"op": "set_value", "cell": "Z1", "value": "太字見出し"},
            {"op": "set_value", "cell": "Z2", "value": "黄色の塗り"},
            {"op": "set_value", "cell": "Z4", "value": "結合セル"},
            {"op": "set_bold", "cell": "Z1"},
            {"op": "set_fill_color", "cell": "Z2", "color": "FFFF00"},
            {"op": "merge_cells", "range": "Z4:AA5"},
            {"op": "set_range_values", "range": "AD1:AE2", "values": [["科目", "金額"], ["旅費", 1200]]},
            {"op": "apply_table_style", "range": "AD1:AE2", "style": "TableStyleMedium2", "table_name": "経費"},
        ],
        "out_name": "styled.xlsx",
    }));
    let fods = to_fods(&ws, Path::new(&res.out_path));

    let bold = style_definition(&fods, style_of_cell_with_text(&fods, "太字見出し"));
    assert!(bold.contains("fo:font-weight=\"bold\""), "{bold}");
    let fill = style_definition(&fods, style_of_cell_with_text(&fods, "黄色の塗り"));
    assert!(
        fill.to_ascii_lowercase()
            .contains("fo:background-color=\"#ffff00\""),
        "{fill}"
    );
    let merged = fods.find(">結合セル</text:p>").unwrap();
    let cell = &fods[fods[..merged].rfind("<table:table-cell").unwrap()..merged];
    assert!(
        cell.contains("table:number-columns-spanned=\"2\"")
            && cell.contains("table:number-rows-spanned=\"2\""),
        "{cell}"
    );
    // The table is read as a database range over its cells.
    assert!(
        fods.contains("table:database-range") && fods.contains("AD1") && fods.contains("AE2"),
        "the table is missing from the converted workbook"
    );
}

/// The part of a flat ODF spreadsheet that is one sheet.
fn table_of<'a>(fods: &'a str, name: &str) -> &'a str {
    let at = fods
        .find(&format!("<table:table table:name=\"{name}\""))
        .unwrap_or_else(|| panic!("no sheet {name:?}"));
    let end = fods[at..].find("</table:table>").unwrap();
    &fods[at..at + end]
}

#[test]
fn a_copied_sheet_opens_in_libreoffice_with_its_styles() {
    if keiri_testkit::skip_without_shared("fixtures/accounting/retirement_workbook_2024Q4.xlsx") {
        return;
    }
    if !have_soffice() {
        return;
    }
    let ws = Workspace::new();
    let name = ws.add_fixture("accounting/retirement_workbook_2024Q4.xlsx");
    let res = ws.ok(json!({
        "xlsx_path": name,
        "ops": [{"op": "copy_sheet", "sheet": "2024.12", "new_sheet": "2025.3写し"}],
        "out_name": "copied.xlsx",
    }));
    let fods = to_fods(&ws, Path::new(&res.out_path));
    let source = table_of(&fods, "2024.12");
    let copy = table_of(&fods, "2025.3写し");
    // The header cells have the same style in both sheets, and it is not the default.
    let header = style_of_cell_with_text(source, "社員番号");
    assert_eq!(style_of_cell_with_text(copy, "社員番号"), header);
    assert!(!style_definition(&fods, header).is_empty());
    // The same columns and rows.
    let shape = |t: &str| {
        (
            t.matches("<table:table-column").count(),
            t.matches("<table:table-row").count(),
        )
    };
    assert_eq!(shape(copy), shape(source));
}
