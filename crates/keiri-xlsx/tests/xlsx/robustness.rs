//! Untrusted workbooks: damaged packages and malformed parts give typed errors, never a panic,
//! a hang or a partial write.

use std::io::Write;

use proptest::prelude::*;
use serde_json::json;

use crate::support::{Cell, Workspace, build_xlsx};

fn small() -> Vec<u8> {
    build_xlsx(&[(
        "S",
        vec![
            ("A1", Cell::N(1.0)),
            ("B1", Cell::S("x")),
            ("C1", Cell::F("A1*2")),
        ],
    )])
}

/// Rebuilds a package with one part replaced.
fn with_part(bytes: &[u8], part: &str, content: &str) -> Vec<u8> {
    let mut src = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).unwrap();
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..src.len() {
        let f = src.by_index_raw(i).unwrap();
        if f.name().unwrap() == part {
            continue;
        }
        w.raw_copy_file(f).unwrap();
    }
    w.start_file(part, zip::write::SimpleFileOptions::default())
        .unwrap();
    w.write_all(content.as_bytes()).unwrap();
    w.finish().unwrap().into_inner()
}

fn run(ws: &Workspace, bytes: &[u8]) -> Result<keiri_xlsx::PatchResponse, keiri_xlsx::Error> {
    ws.add_file("in.xlsx", bytes);
    let _ = std::fs::remove_file(ws.path("in_patched.xlsx"));
    ws.run(json!({
        "xlsx_path": "in.xlsx",
        "ops": [{"op": "set_value", "sheet": "S", "cell": "B2", "value": 1}, {"op": "set_formula", "sheet": "S", "cell": "D1", "formula": "=C1+1"}],
        "preflight_formula_check": true,
        "on_conflict": "overwrite",
    }))
}

#[test]
fn damaged_parts_are_unreadable_workbooks() {
    let ws = Workspace::new();
    let base = small();
    let check = |bytes: Vec<u8>, message: &str| {
        let err = run(&ws, &bytes).unwrap_err();
        assert_eq!(err.code(), "WORKBOOK_UNREADABLE", "{err}");
        assert!(err.to_string().contains(message), "{err} lacks {message:?}");
        assert!(!ws.path("in_patched.xlsx").exists());
    };
    check(base[..base.len() / 2].to_vec(), "not a zip");
    check(
        with_part(
            &base,
            "xl/worksheets/sheet1.xml",
            "<worksheet><sheetData><row r=\"1\"><c r=\"A1\">",
        ),
        "sheet1.xml",
    );
    check(
        with_part(
            &base,
            "xl/worksheets/sheet1.xml",
            "<worksheet><sheetData><row r=\"2\"/><row r=\"1\"/></sheetData></worksheet>",
        ),
        "out of order",
    );
    check(
        with_part(
            &base,
            "xl/workbook.xml",
            "<workbook><sheets></sheets></workbook>",
        ),
        "no <sheets>",
    );
    check(
        with_part(&base, "_rels/.rels", "<Relationships/>"),
        "officeDocument",
    );
    check(
        with_part(&base, "xl/sharedStrings.xml", "<sst><si><t>x</si></sst>"),
        "sharedStrings",
    );
}

#[test]
fn sheets_whose_part_is_missing_are_refused_per_op() {
    let ws = Workspace::new();
    let mut src = zip::ZipArchive::new(std::io::Cursor::new(small())).unwrap();
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..src.len() {
        let f = src.by_index_raw(i).unwrap();
        if f.name().unwrap() != "xl/worksheets/sheet1.xml" {
            w.raw_copy_file(f).unwrap();
        }
    }
    let bytes = w.finish().unwrap().into_inner();
    ws.add_file("in.xlsx", &bytes);
    let res = ws.run(json!({"xlsx_path": "in.xlsx", "ops": [{"op": "set_value", "sheet": "S", "cell": "A1", "value": 1}]})).unwrap();
    assert!(res.error.unwrap().message.contains("part is missing"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Flipping bytes of a valid package never panics: the result is a response or a typed error.
    #[test]
    fn corrupted_packages_never_panic(flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let ws = Workspace::new();
        let mut bytes = small();
        for (at, b) in flips {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        let _ = run(&ws, &bytes);
    }

    /// Arbitrary worksheet XML never panics either.
    #[test]
    fn arbitrary_sheet_xml_never_panics(body in "(<row( r=\"[0-9]{1,3}\")?>|</row>|<c( r=\"[A-C][0-9]\")?( t=\"(s|b|e|str|inlineStr|d)\")?>|</c>|<v>[0-9a-z#]{0,3}</v>|<f( t=\"shared\" si=\"0\"( ref=\"A1:C3\")?)?>[A-C1-3+*(]{0,5}</f>|<is><t>x</t></is>){0,12}") {
        let ws = Workspace::new();
        let xml = format!("<worksheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\"><sheetData>{body}</sheetData></worksheet>");
        let _ = run(&ws, &with_part(&small(), "xl/worksheets/sheet1.xml", &xml));
    }
}
