use super::*;

const SHEET: &str = r#"<?xml version="1.0"?><worksheet xmlns="m"><dimension ref="A1:C3"/><cols><col min="4" max="4" style="9"/></cols><sheetData><row r="1" spans="1:3"><c r="A1" s="1" t="s"><v>0</v></c><c r="B1"><v>2.5</v></c><c r="C1" t="inlineStr"><is><t>インライン</t></is></c></row><row r="3" spans="1:3"><c r="A3"><f t="shared" ref="A3:C3" si="0">A1*2</f><v>0</v></c><c r="B3"><f t="shared" si="0"/><v>5</v></c><c r="C3"><f t="array" ref="C3">SUM(A1:B1)</f><v>2.5</v></c></row></sheetData><mergeCells count="1"><mergeCell ref="A5:B6"/></mergeCells></worksheet>"#;

fn doc() -> SheetDoc {
    SheetDoc::parse(SHEET.to_string()).unwrap()
}

fn at(a1: &str) -> CellRef {
    CellRef::parse(a1).unwrap()
}

#[test]
fn reads_cells() {
    let d = doc();
    let sst = vec!["共有".to_string()];
    assert_eq!(d.get(at("A1"), &sst), Content::Text("共有".into()));
    assert_eq!(d.get(at("B1"), &sst), Content::Number(2.5));
    assert_eq!(d.get(at("C1"), &sst), Content::Text("インライン".into()));
    assert!(matches!(d.get(at("B3"), &sst), Content::Formula { ref text, .. } if text == "B1*2"));
    assert_eq!(d.get(at("Z9"), &sst), Content::Empty);
    assert!(d.locked_at(at("C3")).is_some());
    assert_eq!(
        d.merged_cover(at("B6")).map(|a| a.to_a1()),
        Some("A5:B6".into())
    );
    assert_eq!(d.merged_cover(at("A5")), None);
}

#[test]
fn writes_only_touched_rows() {
    let mut d = doc();
    let sst = vec!["共有".to_string()];
    d.set(at("B2"), Content::Number(7.0), &sst);
    d.set(at("D1"), Content::Text(" x ".into()), &sst);
    let out = d.to_xml();
    assert!(
        out.contains(r#"<row r="2"><c r="B2"><v>7</v></c></row>"#),
        "{out}"
    );
    assert!(out.contains(r#"<row r="1" spans="1:4">"#), "{out}");
    assert!(
        out.contains(
            r#"<c r="D1" s="9" t="inlineStr"><is><t xml:space="preserve"> x </t></is></c></row>"#
        ),
        "{out}"
    );
    assert!(out.contains(r#"<dimension ref="A1:D3"/>"#), "{out}");
    let row3 = &SHEET[SHEET.find(r#"<row r="3""#).unwrap()..SHEET.find("</sheetData>").unwrap()];
    assert!(
        out.contains(row3),
        "untouched row 3 must stay byte-identical"
    );
}

#[test]
fn overwriting_a_shared_master_keeps_the_group_working() {
    let mut d = doc();
    d.set(at("A3"), Content::Number(1.0), &[]);
    let out = d.to_xml();
    assert!(
        out.contains(r#"<c r="B3"><f>B1*2</f><v>5</v></c>"#),
        "{out}"
    );
    assert!(out.contains(r#"<c r="A3"><v>1</v></c>"#), "{out}");
}

#[test]
fn clearing_keeps_style_and_drops_unstyled_cells() {
    let mut d = doc();
    d.set(at("A1"), Content::Empty, &[]);
    d.set(at("B1"), Content::Empty, &[]);
    let out = d.to_xml();
    assert!(
        out.contains(r#"<row r="1" spans="1:3"><c r="A1" s="1"/><c r="C1""#),
        "{out}"
    );
}

#[test]
fn empty_sheet_data_and_implicit_rows() {
    let mut d = SheetDoc::parse(SheetDoc::empty_xml("m")).unwrap();
    d.set(at("B2"), Content::Bool(true), &[]);
    let out = d.to_xml();
    assert!(
        out.contains(r#"<sheetData><row r="2"><c r="B2" t="b"><v>1</v></c></row></sheetData>"#),
        "{out}"
    );
    assert!(out.contains(r#"<dimension ref="B2"/>"#), "{out}");

    let xml = r#"<worksheet><sheetData><row><c><v>1</v></c></row><row><c><v>2</v></c></row></sheetData></worksheet>"#;
    let mut d = SheetDoc::parse(xml.to_string()).unwrap();
    assert_eq!(d.get(at("A2"), &[]), Content::Number(2.0));
    d.set(at("B1"), Content::Number(3.0), &[]);
    let out = d.to_xml();
    assert_eq!(
        out,
        r#"<worksheet><sheetData><row r="1"><c r="A1"><v>1</v></c><c r="B1"><v>3</v></c></row><row r="2"><c><v>2</v></c></row></sheetData></worksheet>"#
    );
}

#[test]
fn refuses_disordered_rows() {
    let xml = r#"<worksheet><sheetData><row r="2"/><row r="1"/></sheetData></worksheet>"#;
    assert!(SheetDoc::parse(xml.to_string()).is_err());
    assert!(SheetDoc::parse("<worksheet></worksheet>".to_string()).is_err());
    assert!(SheetDoc::parse("<worksheet><sheetData>".to_string()).is_err());
}

#[test]
fn shared_strings_skip_phonetic_runs() {
    let sst = r#"<sst><si><t>漢字</t><rPh sb="0" eb="2"><t>カンジ</t></rPh></si><si><r><t>a</t></r><r><t xml:space="preserve"> b</t></r></si><si/><si><t>x_x000D_y&amp;</t></si></sst>"#;
    assert_eq!(
        parse_shared_strings(sst).unwrap(),
        ["漢字", "a b", "", "x\ry&"]
    );
}

#[test]
fn numbers_format_for_the_file() {
    for (n, s) in [
        (7.0, "7"),
        (0.1, "0.1"),
        (-2.5, "-2.5"),
        (1e20, "1E20"),
        (1.5e-9, "1.5E-9"),
        (0.0, "0"),
    ] {
        assert_eq!(format_number(n), s);
        assert_eq!(s.parse::<f64>().unwrap(), n);
    }
}
