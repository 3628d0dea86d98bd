//! Dates written as Excel dates (serials with a date number format, in the workbook's date
//! system), read back with calamine; and `fill_formula` over a 2-D range from its base cell.

use std::io::Write;
use std::path::Path;

use calamine::{Data, Reader};
use serde_json::{Value, json};

use crate::support::{Workspace, cells, entries};

const MAIN_NS: &str = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";

/// The styles of the test workbook: custom format 164 (a Japanese date) on xf 1, a grey fill
/// on xf 2 (General number format).
const STYLES: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy&quot;年&quot;m&quot;月&quot;d&quot;日&quot;"/></numFmts><fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="3"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/><xf numFmtId="0" fontId="0" fillId="1" borderId="0" xfId="0" applyFill="1"/></cellXfs></styleSheet>"#;

/// The sheet, written the way the engine writes rows, so an untouched-then-restored row
/// compares byte for byte: A1 a number; B2 a date cell (xf 1, 45000); C2 a grey cell.
const SHEET: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1"><v>1</v></c></row><row r="2"><c r="B2" s="1"><v>45000</v></c><c r="C2" s="2"/></row></sheetData></worksheet>"#;

/// A one-sheet workbook (`Data`) with [`STYLES`], in the 1900 or the 1904 date system.
fn book(date1904: bool) -> Vec<u8> {
    let pr = if date1904 {
        r#"<workbookPr date1904="1"/>"#
    } else {
        ""
    };
    let files = [
        ("[Content_Types].xml", r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/></Types>"#.to_string()),
        ("_rels/.rels", r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#.to_string()),
        ("xl/workbook.xml", format!(r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="{MAIN_NS}" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">{pr}<sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets><calcPr calcId="191029"/></workbook>"#)),
        ("xl/_rels/workbook.xml.rels", r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>"#.to_string()),
        ("xl/styles.xml", STYLES.to_string()),
        ("xl/worksheets/sheet1.xml", SHEET.to_string()),
    ];
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, text) in files {
        w.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        w.write_all(text.as_bytes()).unwrap();
    }
    w.finish().unwrap().into_inner()
}

fn part(path: &Path, name: &str) -> String {
    String::from_utf8(entries(path)[name].clone()).unwrap()
}

/// The `s` attribute of a cell in the sheet part (`None` when it has none).
fn style_of(sheet: &str, a1: &str) -> Option<u32> {
    let start = sheet.find(&format!("<c r=\"{a1}\""))?;
    let tag = &sheet[start..start + sheet[start..].find('>')?];
    let s = tag.find(" s=\"")? + 4;
    tag[s..s + tag[s..].find('"')?].parse().ok()
}

/// The format code of cell format `xf` (its numFmtId looked up in `<numFmts>`).
fn format_code(styles: &str, xf: u32) -> String {
    let xfs = &styles[styles.find("<cellXfs").unwrap()..];
    let item = xfs.split("<xf ").nth(xf as usize + 1).unwrap();
    let id = item
        .split("numFmtId=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    let needle = format!("<numFmt numFmtId=\"{id}\" formatCode=\"");
    let at = styles
        .find(&needle)
        .unwrap_or_else(|| panic!("no numFmt {id}: {styles}"));
    let rest = &styles[at + needle.len()..];
    rest[..rest.find('"').unwrap()].to_string()
}

/// The cell as calamine reads it.
fn read(path: &Path, a1: &str) -> Data {
    let mut wb = calamine::open_workbook_auto(path).unwrap();
    let range = wb.worksheet_range("Data").unwrap();
    let at = keiri_xlsx::CellRef::parse(a1).unwrap();
    range
        .get_value((at.row - 1, at.col - 1))
        .cloned()
        .unwrap_or(Data::Empty)
}

/// Asserts a date cell: calamine reads a date with `serial`.
fn assert_date(path: &Path, a1: &str, serial: f64) {
    match read(path, a1) {
        Data::DateTime(d) => {
            assert!(d.is_datetime(), "{a1}: {d:?}");
            assert_eq!(d.as_f64(), serial, "{a1}");
        }
        other => panic!("{a1} is not a date cell: {other:?}"),
    }
}

fn ops() -> Value {
    json!([
        {"op": "set_value", "sheet": "Data", "cell": "D2", "value": "2025-03-31"},
        {"op": "set_value", "sheet": "Data", "cell": "E2", "value": {"kind": "date", "value": "2025-03-31"}},
        {"op": "set_value", "sheet": "Data", "cell": "F2", "value": {"kind": "datetime", "value": "2025-03-31T12:00:00"}},
        {"op": "set_value", "sheet": "Data", "cell": "G2", "value": {"kind": "text", "value": "2025-03-31"}},
        {"op": "set_value", "sheet": "Data", "cell": "B2", "value": {"kind": "date", "value": "2024-02-29"}},
        {"op": "set_range_values", "sheet": "Data", "range": "C2:C3", "values": [["2025-01-01"], ["2025-02-30"]]},
    ])
}

#[test]
fn iso_dates_become_date_cells_with_a_date_format() {
    let ws = Workspace::new();
    let name = ws.add_file("dates.xlsx", &book(false));
    let res = ws.ok(json!({"xlsx_path": name, "ops": ops(), "out_name": "out.xlsx"}));
    let out = Path::new(&res.out_path);
    // Serials worked out by hand (1900 system): 2025-03-31 = 45747, 2024-02-29 = 45351,
    // 2025-01-01 = 45658 (45747 - 89 days).
    assert_date(out, "D2", 45747.0);
    assert_date(out, "E2", 45747.0);
    assert_date(out, "F2", 45747.5);
    assert_date(out, "B2", 45351.0);
    assert_date(out, "C2", 45658.0);
    // Forced text and a date that does not exist stay text.
    assert_eq!(read(out, "G2"), Data::String("2025-03-31".into()));
    assert_eq!(read(out, "C3"), Data::String("2025-02-30".into()));

    let sheet = part(out, "xl/worksheets/sheet1.xml");
    let styles = part(out, "xl/styles.xml");
    // B2 keeps its own (Japanese) date format; the unformatted cells get yyyy/mm/dd, the
    // datetime yyyy/mm/dd hh:mm:ss; D2 and E2 share one new cell format.
    assert_eq!(style_of(&sheet, "B2"), Some(1));
    let d2 = style_of(&sheet, "D2").unwrap();
    assert_eq!(style_of(&sheet, "E2"), Some(d2));
    assert_eq!(format_code(&styles, d2), "yyyy/mm/dd");
    assert_eq!(
        format_code(&styles, style_of(&sheet, "F2").unwrap()),
        "yyyy/mm/dd hh:mm:ss"
    );
    // The grey cell keeps its fill: its new format is the old one with a date format.
    let c2 = style_of(&sheet, "C2").unwrap();
    assert_eq!(format_code(&styles, c2), "yyyy/mm/dd");
    let c2_xf = styles[styles.find("<cellXfs").unwrap()..]
        .split("<xf ")
        .nth(c2 as usize + 1)
        .unwrap();
    assert!(c2_xf.contains("fillId=\"1\""), "{c2_xf}");
    assert_eq!(style_of(&sheet, "G2"), None, "text gets no date format");
    // Styles are appended, never rewritten: every original format is still there, the new
    // number formats take the first free custom ids.
    for original in STYLES
        .split('<')
        .filter(|t| t.starts_with("xf ") || t.starts_with("numFmt "))
    {
        assert!(
            styles.contains(original),
            "{original} was changed: {styles}"
        );
    }
    assert!(styles.contains(r#"<numFmts count="3">"#), "{styles}");
    assert!(styles.contains(r#"<numFmt numFmtId="165" formatCode="yyyy/mm/dd"/>"#));
    assert!(styles.contains(r#"<numFmt numFmtId="166" formatCode="yyyy/mm/dd hh:mm:ss"/>"#));

    // The diff shows the dates as dates.
    let diff = serde_json::to_value(&res.patch_diff).unwrap();
    assert_eq!(
        diff[0]["after"],
        json!({"kind": "date", "value": "2025-03-31"})
    );
    assert_eq!(
        diff[2]["after"],
        json!({"kind": "datetime", "value": "2025-03-31T12:00:00"})
    );
    assert_eq!(
        diff[3]["after"],
        json!({"kind": "value", "value": "2025-03-31"})
    );
    assert_eq!(diff[4]["before"], json!({"kind": "value", "value": 45000}));
}

#[test]
fn inverse_ops_restore_the_sheet_byte_for_byte() {
    let ws = Workspace::new();
    let name = ws.add_file("dates.xlsx", &book(false));
    let res = ws.ok(json!({"xlsx_path": name, "ops": ops(), "out_name": "out.xlsx", "return_inverse_ops": true}));
    let undo = serde_json::to_value(&res.inverse_ops).unwrap();
    // The text that looked like a date comes back as text, and the new styles are undone.
    let restore_styles = undo
        .as_array()
        .unwrap()
        .iter()
        .filter(|op| op["op"] == "restore_design_snapshot")
        .count();
    assert_eq!(
        restore_styles, 4,
        "D2, E2, F2 and C2 got a date format: {undo}"
    );
    let back = ws.ok(json!({"xlsx_path": "out.xlsx", "ops": undo, "out_name": "back.xlsx"}));
    let back = Path::new(&back.out_path);
    assert_eq!(part(back, "xl/worksheets/sheet1.xml"), SHEET, "{undo}");
    assert_eq!(cells(back), cells(&ws.path(&name)));
}

#[test]
fn a_1904_workbook_gets_1904_serials() {
    let ws = Workspace::new();
    let name = ws.add_file("mac.xlsx", &book(true));
    let res = ws.ok(json!({"xlsx_path": name, "ops": [
        {"op": "set_value", "sheet": "Data", "cell": "D2", "value": "2025-03-31"},
        {"op": "set_value", "sheet": "Data", "cell": "E2", "value": {"kind": "date", "value": "1904-01-01"}},
    ], "out_name": "out.xlsx"}));
    let out = Path::new(&res.out_path);
    // 1904 system: 1904-01-01 is day 0, so 2025-03-31 is 45747 - 1462 = 44285.
    assert_date(out, "D2", 44285.0);
    let sheet = part(out, "xl/worksheets/sheet1.xml");
    assert!(sheet.contains("<c r=\"E2\" s=\""), "{sheet}");
    assert!(sheet.contains("<v>0</v>"), "{sheet}");

    // A date before the system's first day is an op error, and nothing is written.
    let res = ws
        .run(json!({"xlsx_path": name, "ops": [
            {"op": "set_value", "sheet": "Data", "cell": "D2", "value": {"kind": "date", "value": "1903-12-31"}},
        ], "out_name": "refused.xlsx"}))
        .unwrap();
    let error = res.error.expect("an op error");
    assert!(error.message.contains("1904-01-01"), "{}", error.message);
    assert!(!ws.path("refused.xlsx").exists());
}

#[test]
fn a_bad_date_is_a_request_error() {
    let ws = Workspace::new();
    let name = ws.add_file("dates.xlsx", &book(false));
    for value in [
        json!({"kind": "date", "value": "2025-02-30"}),
        json!({"kind": "date", "value": "31/03/2025"}),
        json!({"kind": "datetime", "value": "2025-03-31T25:00"}),
    ] {
        let err = ws
            .run(json!({"xlsx_path": name, "ops": [{"op": "set_value", "sheet": "Data", "cell": "A1", "value": value}]}))
            .unwrap_err();
        assert!(
            matches!(err, keiri_xlsx::Error::InvalidRequest(_)),
            "{value}: {err}"
        );
    }
    // So is a bad date in a condition: it could never match.
    let err = ws
        .run(json!({"xlsx_path": name, "ops": [{"op": "set_value_if", "sheet": "Data", "cell": "A1", "expected": {"kind": "date", "value": "2025-13-01"}, "value": 1}]}))
        .unwrap_err();
    assert!(matches!(err, keiri_xlsx::Error::InvalidRequest(_)), "{err}");
    // A kind the contract does not have is refused when the op is read.
    let req: Result<keiri_xlsx::PatchRequest, _> = serde_json::from_value(json!({
        "xlsx_path": name,
        "ops": [{"op": "set_value", "sheet": "Data", "cell": "A1", "value": {"kind": "money", "value": "1"}}],
    }));
    assert!(req.is_err());
}

#[test]
fn set_value_if_compares_dates_as_serials() {
    let ws = Workspace::new();
    let name = ws.add_file("dates.xlsx", &book(false));
    // B2 holds 45000 = 2023-03-15 (45747 - 733 days: 2023-03-15 → 2025-03-15 is 731, +16).
    let res = ws.ok(json!({"xlsx_path": name, "ops": [
        {"op": "set_value_if", "sheet": "Data", "cell": "B2", "expected": {"kind": "date", "value": "2023-03-15"}, "value": {"kind": "date", "value": "2025-03-31"}},
        {"op": "set_value_if", "sheet": "Data", "cell": "A1", "expected": {"kind": "date", "value": "1900-01-02"}, "value": 2},
    ], "out_name": "out.xlsx"}));
    let out = Path::new(&res.out_path);
    assert_date(out, "B2", 45747.0);
    assert_eq!(
        read(out, "A1"),
        Data::Float(1.0),
        "A1 holds 1 = 1900-01-01, not the 2nd"
    );
    assert_eq!(res.warnings.len(), 1, "{:?}", res.warnings);
}

#[test]
fn fill_formula_fills_a_rectangle_from_the_base_cell() {
    let ws = Workspace::new();
    let name = ws.add_file("dates.xlsx", &book(false));
    let res = ws.ok(json!({"xlsx_path": name, "ops": [
        {"op": "set_formula", "sheet": "Data", "cell": "C2", "formula": "=A2*B2+$E$1"},
        {"op": "fill_formula", "sheet": "Data", "range": "C2:D4", "base_cell": "C2"},
        {"op": "fill_formula", "sheet": "Data", "range": "F2:G3", "base_cell": "F1", "formula": "=SUM($A1:A$1)"},
    ], "out_name": "out.xlsx", "return_inverse_ops": true}));
    let got = cells(Path::new(&res.out_path));
    let f = |a1: &str| got.get(&("Data".to_string(), a1.to_string())).cloned();
    // Relative parts move with the row and the column, `$` parts stay.
    for (a1, want) in [
        ("C2", "=A2*B2+$E$1"),
        ("D2", "=B2*C2+$E$1"),
        ("C3", "=A3*B3+$E$1"),
        ("D3", "=B3*C3+$E$1"),
        ("C4", "=A4*B4+$E$1"),
        ("D4", "=B4*C4+$E$1"),
        ("F2", "=SUM($A2:A$1)"),
        ("G2", "=SUM($A2:B$1)"),
        ("F3", "=SUM($A3:A$1)"),
        ("G3", "=SUM($A3:B$1)"),
    ] {
        assert_eq!(f(a1).as_deref(), Some(want), "{a1}");
    }
    // A base cell without a formula, and no formula in the op, is an op error.
    let res = ws
        .run(json!({"xlsx_path": name, "ops": [
            {"op": "fill_formula", "sheet": "Data", "range": "A2:A3", "base_cell": "A1"},
        ], "out_name": "refused.xlsx"}))
        .unwrap();
    let error = res.error.expect("an op error");
    assert!(error.message.contains("no formula"), "{}", error.message);
}
