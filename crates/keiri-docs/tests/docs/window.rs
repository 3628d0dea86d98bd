//! `workbook_window`: the cells around a change as the workbook holds them — the header and
//! neighbour values the preview grid draws, and formulas with the values their writer cached.

use std::io::Write;

use keiri_docs::{CellData, CellWindow, WindowCell, workbook_window};

const NS: &str = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
const REL: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

/// A one-sheet workbook (`集計`) whose sheet XML has `rows` inside `<sheetData>`; shared
/// strings 0 = 項目, 1 = 金額, 2 = 売上, 3 = 原価, 4 = 粗利.
fn book(rows: &str) -> Vec<u8> {
    let files = [
        (
            "[Content_Types].xml",
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/><Default Extension=\"xml\" ContentType=\"application/xml\"/><Override PartName=\"/xl/workbook.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml\"/><Override PartName=\"/xl/worksheets/sheet1.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml\"/><Override PartName=\"/xl/sharedStrings.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml\"/></Types>".to_string(),
        ),
        (
            "_rels/.rels",
            format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\"><Relationship Id=\"rId1\" Type=\"{REL}/officeDocument\" Target=\"xl/workbook.xml\"/></Relationships>"),
        ),
        (
            "xl/workbook.xml",
            format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><workbook xmlns=\"{NS}\" xmlns:r=\"{REL}\"><sheets><sheet name=\"集計\" sheetId=\"1\" r:id=\"rId1\"/></sheets></workbook>"),
        ),
        (
            "xl/_rels/workbook.xml.rels",
            format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\"><Relationship Id=\"rId1\" Type=\"{REL}/worksheet\" Target=\"worksheets/sheet1.xml\"/><Relationship Id=\"rId2\" Type=\"{REL}/sharedStrings\" Target=\"sharedStrings.xml\"/></Relationships>"),
        ),
        (
            "xl/sharedStrings.xml",
            format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><sst xmlns=\"{NS}\" count=\"5\" uniqueCount=\"5\"><si><t>項目</t></si><si><t>金額</t></si><si><t>売上</t></si><si><t>原価</t></si><si><t>粗利</t></si></sst>"),
        ),
        (
            "xl/worksheets/sheet1.xml",
            format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><worksheet xmlns=\"{NS}\"><sheetData>{rows}</sheetData></worksheet>"),
        ),
    ];
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, text) in files {
        out.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        out.write_all(text.as_bytes()).unwrap();
    }
    out.finish().unwrap().into_inner()
}

/// 項目/金額 headers, 売上 1000, 原価 400, 粗利 = B2-B3 cached as 600, and a far cell F20.
const SHEET: &str = "<row r=\"1\"><c r=\"A1\" t=\"s\"><v>0</v></c><c r=\"B1\" t=\"s\"><v>1</v></c></row><row r=\"2\"><c r=\"A2\" t=\"s\"><v>2</v></c><c r=\"B2\"><v>1000</v></c></row><row r=\"3\"><c r=\"A3\" t=\"s\"><v>3</v></c><c r=\"B3\"><v>400</v></c></row><row r=\"4\"><c r=\"A4\" t=\"s\"><v>4</v></c><c r=\"B4\"><f>B2-B3</f><v>600</v></c><c r=\"C4\"><f>B4*2</f></c></row><row r=\"20\"><c r=\"F20\"><v>7</v></c></row>";

fn window(sheet: &str, rows: (u32, u32), cols: (u32, u32)) -> CellWindow {
    CellWindow {
        sheet: sheet.to_string(),
        rows,
        cols,
    }
}

fn cell(row: u32, col: u32, value: Option<CellData>, formula: Option<&str>) -> WindowCell {
    WindowCell {
        row,
        col,
        value,
        formula: formula.map(str::to_string),
    }
}

#[test]
fn a_window_gives_the_neighbours_values_and_formulas_with_their_cached_values() {
    // The window around a change of B3, one row and column either side (A2:C4). A workbook
    // stores every number as a double, so 1000 reads back as 1000.0.
    let got = workbook_window(&book(SHEET), &[window("集計", (1, 3), (0, 2))]).unwrap();
    assert_eq!(
        got,
        vec![(
            "集計".to_string(),
            vec![
                cell(1, 0, Some(CellData::Text("売上".into())), None),
                cell(1, 1, Some(CellData::Float(1000.0)), None),
                cell(2, 0, Some(CellData::Text("原価".into())), None),
                cell(2, 1, Some(CellData::Float(400.0)), None),
                cell(3, 0, Some(CellData::Text("粗利".into())), None),
                cell(3, 1, Some(CellData::Float(600.0)), Some("B2-B3")),
                // A formula its writer never calculated: the formula, no value.
                cell(3, 2, None, Some("B4*2")),
            ],
        )]
    );
}

#[test]
fn cells_outside_the_window_and_unknown_sheets_give_nothing() {
    let got = workbook_window(
        &book(SHEET),
        &[
            window("集計", (0, 0), (0, 1)),
            window("ない", (0, 9), (0, 9)),
            window("集計", (10, 30), (0, 1)),
        ],
    )
    .unwrap();
    assert_eq!(
        got,
        vec![
            (
                "集計".to_string(),
                vec![
                    cell(0, 0, Some(CellData::Text("項目".into())), None),
                    cell(0, 1, Some(CellData::Text("金額".into())), None),
                ],
            ),
            ("ない".to_string(), vec![]),
            ("集計".to_string(), vec![]),
        ]
    );
}

#[test]
fn a_window_on_bytes_that_are_no_workbook_is_an_error_not_a_panic() {
    let err = workbook_window(b"not a zip", &[window("集計", (0, 1), (0, 1))]).unwrap_err();
    assert!(!err.code().is_empty(), "{err}");
}
