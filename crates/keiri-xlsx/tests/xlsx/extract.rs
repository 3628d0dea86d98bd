//! `workbook_extract` on the shared ExStruct sample workbooks, with expectations checked by hand
//! against the parts (`unzip -p book.xlsx xl/drawings/drawing1.xml`, `xl/charts/chart1.xml`,
//! `xl/diagrams/data1.xml`, `<mergeCells>`, `<definedNames>`).

use std::io::{Read, Write};
use std::sync::Arc;

use keiri_xlsx::extract::model::{ShapeItem, SheetData, SmartArtNode, WorkbookData};
use keiri_xlsx::{ExtractMode, ExtractOptions, ExtractRequest, read_workbook};
use serde_json::json;

use crate::support::{Workspace, fixture};

fn read_bytes(name: &str, bytes: Vec<u8>, mode: ExtractMode) -> (WorkbookData, Vec<String>) {
    read_workbook(name, Arc::from(bytes), mode, &ExtractOptions::default()).unwrap()
}

fn read(name: &str, mode: ExtractMode) -> (WorkbookData, Vec<String>) {
    let bytes = std::fs::read(fixture(&format!("xlsx/{name}"))).unwrap();
    let (data, warnings) = read_bytes(name, bytes, mode);
    assert!(warnings.is_empty(), "{name}: {warnings:?}");
    (data, warnings)
}

fn only_sheet(data: &WorkbookData) -> &SheetData {
    assert_eq!(data.sheets.len(), 1);
    &data.sheets[0].1
}

/// Shapes as `(id, text, type)` and connectors as `(begin text, end text, direction)`.
#[allow(clippy::type_complexity)]
fn summary(sheet: &SheetData) -> (Vec<(u32, String, String)>, Vec<(String, String, String)>) {
    let text_of = |id: Option<u32>| {
        sheet
            .shapes
            .iter()
            .find_map(|s| match s {
                ShapeItem::Shape(s) if s.id == id => Some(s.text.clone()),
                _ => None,
            })
            .unwrap_or_else(|| "-".to_string())
    };
    let mut shapes = Vec::new();
    let mut arrows = Vec::new();
    for item in &sheet.shapes {
        match item {
            ShapeItem::Shape(s) => shapes.push((
                s.id.unwrap(),
                s.text.clone(),
                s.shape_type.clone().unwrap_or_default(),
            )),
            ShapeItem::Arrow(a) => arrows.push((
                text_of(a.begin_id),
                text_of(a.end_id),
                a.direction.unwrap_or("-").to_string(),
            )),
            ShapeItem::SmartArt(_) => {}
        }
    }
    (shapes, arrows)
}

#[test]
fn chart_shapes_chart_has_its_type_title_and_series_refs() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let (data, _) = read("chart_shapes.xlsx", ExtractMode::Standard);
    let sheet = only_sheet(&data);
    assert_eq!(sheet.charts.len(), 1);
    let chart = &sheet.charts[0];
    assert_eq!(chart.name, "グラフ 1");
    assert_eq!(chart.chart_type, "Line");
    assert_eq!(chart.title.as_deref(), Some("売上データ"));
    let series: Vec<_> = chart
        .series
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.name_range.as_deref().unwrap(),
                s.x_range.as_deref().unwrap(),
                s.y_range.as_deref().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        series,
        [
            (
                "製品A",
                "Sheet1!$C$3",
                "Sheet1!$B$4:$B$9",
                "Sheet1!$C$4:$C$9"
            ),
            (
                "製品B",
                "Sheet1!$D$3",
                "Sheet1!$B$4:$B$9",
                "Sheet1!$D$4:$D$9"
            ),
            (
                "製品C",
                "Sheet1!$E$3",
                "Sheet1!$B$4:$B$9",
                "Sheet1!$E$4:$E$9"
            ),
        ]
    );
    // The categories B4:B9 are dates (serials 45658, 45689, … with a date format).
    let dates: Vec<String> = sheet
        .rows
        .iter()
        .filter(|r| (4..=9).contains(&r.r))
        .map(|r| r.c[0].1.as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        dates,
        [
            "2025-01-01",
            "2025-02-01",
            "2025-03-01",
            "2025-04-01",
            "2025-05-01",
            "2025-06-01"
        ]
    );
    // The anchor sits to the right of the data, below the first row.
    assert!(chart.l > 0 && chart.t > 0 && chart.w.unwrap() > 0 && chart.h.unwrap() > 0);
}

#[test]
fn chart_shapes_flowchart_shapes_and_connectors() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let (data, _) = read("chart_shapes.xlsx", ExtractMode::Standard);
    let (shapes, arrows) = summary(only_sheet(&data));
    let s = |id: u32, text: &str, t: &str| (id, text.to_string(), t.to_string());
    assert_eq!(
        shapes,
        [
            s(1, "開始", "AutoShape-FlowchartProcess"),
            s(2, "入力データ読み込み", "AutoShape-FlowchartProcess"),
            s(3, "形式は正しい？", "AutoShape-FlowchartDecision"),
            s(4, "1件処理", "AutoShape-FlowchartProcess"),
            s(5, "残件あり？", "AutoShape-FlowchartDecision"),
            s(6, "はい", "TextBox-Rectangle"),
            s(7, "出力を生成", "AutoShape-FlowchartProcess"),
            s(8, "メール送信？", "AutoShape-FlowchartDecision"),
            s(9, "エラー表示", "AutoShape-FlowchartProcess"),
            s(10, "メール送信", "AutoShape-FlowchartProcess"),
            s(11, "終了", "AutoShape-FlowchartProcess"),
            s(12, "はい", "TextBox-Rectangle"),
            s(13, "いいえ", "TextBox-Rectangle"),
        ]
    );
    let a = |b: &str, e: &str, d: &str| (b.to_string(), e.to_string(), d.to_string());
    assert_eq!(
        arrows,
        [
            a("開始", "入力データ読み込み", "S"),
            a("入力データ読み込み", "形式は正しい？", "S"),
            a("形式は正しい？", "1件処理", "E"),
            a("1件処理", "残件あり？", "S"),
            a("形式は正しい？", "エラー表示", "S"),
            a("残件あり？", "出力を生成", "S"),
            a("出力を生成", "メール送信？", "S"),
            a("エラー表示", "終了", "SE"),
            a("メール送信", "終了", "W"),
            a("メール送信？", "メール送信", "S"),
            // Connector 50 is attached at its start only (no <a:endCxn>).
            a("メール送信？", "-", "S"),
        ]
    );
}

#[test]
fn shape_connector_connectors_join_the_shapes_they_touch() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let (data, _) = read("shape_connector.xlsx", ExtractMode::Standard);
    assert_eq!(data.sheets[0].0, "要件チェック");
    let (shapes, arrows) = summary(only_sheet(&data));
    assert_eq!(shapes.len(), 15);
    let pairs: Vec<(&str, &str)> = arrows
        .iter()
        .map(|(b, e, _)| (b.as_str(), e.as_str()))
        .collect();
    // In drawing order; the last three are the two curved connectors and the straight one
    // back from 機能追加.
    assert_eq!(
        pairs,
        [
            ("S", "要件抽出"),
            ("要件抽出", "ヒアリング"),
            ("ヒアリング", "非機能要件"),
            ("ヒアリング", "機能要件"),
            ("非機能要件", "思考実験"),
            ("思考実験", "再検証"),
            ("再検証", "まとめ"),
            ("まとめ", "文書作成"),
            ("まとめ", "契約管理"),
            ("文書作成", "締結"),
            ("契約管理", "締結"),
            ("締結", "E"),
            ("機能要件", "プロトタイプ"),
            ("プロトタイプ", "実験検証"),
            ("実験検証", "まとめ"),
            ("再検証", "非機能要件"),
            ("実験検証", "機能追加"),
            ("機能追加", "プロトタイプ"),
        ]
    );
}

fn tree(nodes: &[SmartArtNode]) -> String {
    nodes
        .iter()
        .map(|n| {
            if n.kids.is_empty() {
                n.text.clone()
            } else {
                format!("{}({})", n.text, tree(&n.kids))
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn smartart_node_trees_and_layouts() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let (data, _) = read("smartart.xlsx", ExtractMode::Standard);
    let sheet = only_sheet(&data);
    let diagrams: Vec<(Option<u32>, &str, String)> = sheet
        .shapes
        .iter()
        .map(|s| match s {
            ShapeItem::SmartArt(a) => (a.id, a.layout.as_str(), tree(&a.nodes)),
            other => panic!("not SmartArt: {other:?}"),
        })
        .collect();
    assert_eq!(
        diagrams,
        [
            (
                Some(1),
                "cycle2",
                "1(要件定義),2(報連相,開発),3(実装確認,動作確認),4(対策),5(最終確認)".to_string()
            ),
            (Some(2), "hChevron3", "企画,執筆,編集,制作,校正".to_string()),
            (
                Some(3),
                "orgChart1",
                "取締役会(社長(企画管理部,営業部(第1営業課,第2営業課,第3営業課,海外営業課),\
                 開発部(第1開発課,第2開発課),技術部(第1技術課,第2技術課),\
                 生産部(愛知工場,山形工場,高知工場),総務部(総務課,人事課,経理課)))"
                    .to_string()
            ),
        ]
    );
}

#[test]
fn ja_form_merged_ranges_carry_their_top_left_text() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let (data, _) = read("ja_form_merged.xlsx", ExtractMode::Standard);
    let sheet = only_sheet(&data);
    let merged = sheet.merged_cells.as_ref().unwrap();
    assert_eq!(merged.schema, ["r1", "c1", "r2", "c2", "v"]);
    assert_eq!(merged.items.len(), 49);
    let item = |r1: u32, c1: u32, r2: u32, c2: u32, v: &str| (r1, c1, r2, c2, v.to_string());
    // A1:K1, A22:A33, C51:D53 and I6:K7 of <mergeCells>, columns 0-based.
    for want in [
        item(1, 0, 1, 10, "介護保険負担限度額認定申請書"),
        item(22, 0, 33, 0, "配偶者に関する事項"),
        item(51, 2, 53, 3, "預貯金額"),
        item(6, 8, 7, 10, ""),
    ] {
        assert!(
            merged.items.contains(&want),
            "{want:?} in {:?}",
            merged.items
        );
    }
    // Cells are keyed by column letter; the merged title is A1's value.
    let row1 = sheet.rows.iter().find(|r| r.r == 1).unwrap();
    assert_eq!(
        row1.c[0],
        ("A".to_string(), json!("介護保険負担限度額認定申請書"))
    );
    // Light mode leaves merged ranges, shapes and charts out.
    let (light, _) = read("ja_form_merged.xlsx", ExtractMode::Light);
    assert!(only_sheet(&light).merged_cells.is_none());
}

#[test]
fn print_areas_come_from_the_defined_names() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    // sf425_form.xlsx: <definedName name="_xlnm.Print_Area" localSheetId="0">FFR!$A$1:$X$66.
    // (print_ranges_4sheets.xlsx defines no print area: it has none to report.)
    let (data, _) = read("sf425_form.xlsx", ExtractMode::Light);
    let sheet = data.sheet("FFR").unwrap();
    let areas: Vec<_> = sheet
        .print_areas
        .iter()
        .map(|a| (a.r1, a.c1, a.r2, a.c2))
        .collect();
    assert_eq!(areas, [(1, 0, 66, 23)]);
    assert!(sheet.shapes.is_empty() && sheet.charts.is_empty());
    let (data, _) = read("print_ranges_4sheets.xlsx", ExtractMode::Light);
    assert!(only_sheet(&data).print_areas.is_empty());
    assert!(!only_sheet(&data).rows.is_empty());
}

#[test]
fn verbose_adds_formulas_sizes_and_numeric_keys_on_request() {
    if keiri_testkit::skip_without_shared("fixtures/xlsx/ja_form_merged.xlsx") {
        return;
    }
    let (data, _) = read("formula_array_shared.xlsx", ExtractMode::Verbose);
    let sheet = only_sheet(&data);
    let formulas: Vec<_> = sheet.formulas_map.iter().map(|(f, _)| f.as_str()).collect();
    assert!(formulas.contains(&"=SUM(B2:B4*C2:C4)"), "{formulas:?}");
    // The shared formula's other cells get their own shifted text.
    let ifs_c11 = sheet
        .formulas_map
        .iter()
        .find(|(_, cells)| cells.contains(&(11, 2)))
        .unwrap();
    assert!(ifs_c11.0.contains("B11>=85"), "{}", ifs_c11.0);
    let (standard, _) = read("formula_array_shared.xlsx", ExtractMode::Standard);
    assert!(only_sheet(&standard).formulas_map.is_empty());

    let (verbose, _) = read("chart_shapes.xlsx", ExtractMode::Verbose);
    assert!(only_sheet(&verbose).shapes.iter().all(|s| match s {
        ShapeItem::Shape(s) => s.w.is_some() && s.h.is_some(),
        ShapeItem::Arrow(a) => a.w.is_some(),
        ShapeItem::SmartArt(_) => true,
    }));

    let bytes = std::fs::read(fixture("xlsx/ja_form_merged.xlsx")).unwrap();
    let options = ExtractOptions {
        alpha_col: Some(false),
        ..ExtractOptions::default()
    };
    let (data, _) = read_workbook(
        "ja_form_merged.xlsx",
        Arc::from(bytes),
        ExtractMode::Light,
        &options,
    )
    .unwrap();
    assert_eq!(only_sheet(&data).rows[0].c[0].0, "0");
}

/// The fixture with some parts replaced or added.
fn with_parts(name: &str, parts: &[(&str, &str)]) -> Vec<u8> {
    let bytes = std::fs::read(fixture(&format!("xlsx/{name}"))).unwrap();
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    for i in 0..archive.len() {
        let mut f = archive.by_index(i).unwrap();
        let entry = f.name().unwrap().to_string();
        let mut content = Vec::new();
        f.read_to_end(&mut content).unwrap();
        if parts.iter().any(|(n, _)| *n == entry) {
            continue;
        }
        out.start_file(entry, options).unwrap();
        out.write_all(&content).unwrap();
    }
    for (n, text) in parts {
        out.start_file(n.to_string(), options).unwrap();
        out.write_all(text.as_bytes()).unwrap();
    }
    out.finish().unwrap().into_inner()
}

const DRAWING_NS: &str = r#"xmlns:xdr="http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main""#;

fn sp(id: u32, text: &str, x: u32, y: u32) -> String {
    format!(
        r#"<xdr:sp><xdr:nvSpPr><xdr:cNvPr id="{id}" name="s{id}"/><xdr:cNvSpPr/></xdr:nvSpPr><xdr:spPr><a:xfrm><a:off x="{x}" y="{y}"/><a:ext cx="127000" cy="127000"/></a:xfrm><a:prstGeom prst="rect"/></xdr:spPr><xdr:txBody><a:p><a:r><a:t>{text}</a:t></a:r></a:p></xdr:txBody></xdr:sp>"#
    )
}

#[test]
fn group_members_are_flattened_with_their_sheet_positions() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    // A group placed at (127000, 254000) EMU = (10 pt, 20 pt) at twice its child scale, holding
    // two rectangles and a connector between them.
    let drawing = format!(
        r#"<xdr:wsDr {DRAWING_NS}><xdr:twoCellAnchor><xdr:from><xdr:col>0</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>0</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:from><xdr:to><xdr:col>5</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>5</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:to>
        <xdr:grpSp><xdr:nvGrpSpPr><xdr:cNvPr id="9" name="g"/><xdr:cNvGrpSpPr/></xdr:nvGrpSpPr><xdr:grpSpPr><a:xfrm><a:off x="127000" y="254000"/><a:ext cx="2540000" cy="2540000"/><a:chOff x="0" y="0"/><a:chExt cx="1270000" cy="1270000"/></a:xfrm></xdr:grpSpPr>
        {}{}
        <xdr:cxnSp><xdr:nvCxnSpPr><xdr:cNvPr id="4" name="c"/><xdr:cNvCxnSpPr><a:stCxn id="2" idx="3"/><a:endCxn id="3" idx="1"/></xdr:cNvCxnSpPr></xdr:nvCxnSpPr><xdr:spPr><a:xfrm flipV="1"><a:off x="127000" y="0"/><a:ext cx="508000" cy="254000"/></a:xfrm><a:prstGeom prst="straightConnector1"/><a:ln><a:tailEnd type="triangle"/></a:ln></xdr:spPr></xdr:cxnSp>
        </xdr:grpSp><xdr:clientData/></xdr:twoCellAnchor></xdr:wsDr>"#,
        sp(2, "A", 0, 0),
        sp(3, "B", 635000, 254000),
    );
    let bytes = with_parts(
        "shape_connector.xlsx",
        &[("xl/drawings/drawing1.xml", drawing.as_str())],
    );
    let (data, warnings) = read_bytes("g.xlsx", bytes, ExtractMode::Standard);
    assert!(warnings.is_empty(), "{warnings:?}");
    let sheet = only_sheet(&data);
    let json = serde_json::to_value(&sheet.shapes).unwrap();
    assert_eq!(
        json,
        json!([
            {"id": 1, "text": "A", "l": 10, "t": 20, "kind": "shape", "type": "AutoShape-Rectangle"},
            {"id": 2, "text": "B", "l": 110, "t": 60, "kind": "shape", "type": "AutoShape-Rectangle"},
            {"text": "", "l": 30, "t": 20, "kind": "arrow", "end_arrow_style": 2,
             "begin_id": 1, "end_id": 2, "direction": "NE"},
        ])
    );
}

#[test]
fn hyperlinks_and_tables_are_read_from_the_sheet() {
    if keiri_testkit::skip_without_shared(
        "fixtures/xlsx/formula_array_shared.xlsx, fixtures/xlsx/ja_form_merged.xlsx",
    ) {
        return;
    }
    // Hyperlinks: an external one through the sheet's relationships, an internal location.
    let sheet = std::fs::read(fixture("xlsx/ja_form_merged.xlsx")).unwrap();
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(sheet)).unwrap();
    let mut xml = String::new();
    archive
        .by_name("xl/worksheets/sheet1.xml")
        .unwrap()
        .read_to_string(&mut xml)
        .unwrap();
    let mut rels = String::new();
    archive
        .by_name("xl/worksheets/_rels/sheet1.xml.rels")
        .unwrap()
        .read_to_string(&mut rels)
        .unwrap();
    let links = r#"<hyperlinks><hyperlink ref="A1" r:id="rIdLink"/><hyperlink ref="A3" location="Sheet1!C20"/><hyperlink ref="Z99" location="Sheet1!A1"/></hyperlinks>"#;
    let at = xml.find("<pageMargins").unwrap();
    xml.insert_str(at, links);
    let rel = r#"<Relationship Id="rIdLink" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="https://example.com/a?b=1&amp;c=2" TargetMode="External"/>"#;
    let at = rels.find("</Relationships>").unwrap();
    rels.insert_str(at, rel);
    let bytes = with_parts(
        "ja_form_merged.xlsx",
        &[
            ("xl/worksheets/sheet1.xml", xml.as_str()),
            ("xl/worksheets/_rels/sheet1.xml.rels", rels.as_str()),
        ],
    );
    let (data, _) = read_bytes("l.xlsx", bytes.clone(), ExtractMode::Verbose);
    let sheet = only_sheet(&data);
    let links: Vec<_> = sheet
        .rows
        .iter()
        .flat_map(|r| {
            r.links
                .iter()
                .map(move |(k, v)| (r.r, k.clone(), v.clone()))
        })
        .collect();
    assert_eq!(
        links,
        [
            (
                1,
                "A".to_string(),
                "https://example.com/a?b=1&c=2".to_string()
            ),
            (3, "A".to_string(), "#Sheet1!C20".to_string()),
        ]
    );
    let (standard, _) = read_bytes("l.xlsx", bytes, ExtractMode::Standard);
    assert!(
        only_sheet(&standard)
            .rows
            .iter()
            .all(|r| r.links.is_empty())
    );

    // Tables: the two bordered blocks of the sample (A1:C5: header s=1, rows s=2..6 with
    // borderId 1-3; A8:C12: s=7..10 with borderId 4) are candidates...
    let (data, _) = read("formula_array_shared.xlsx", ExtractMode::Light);
    assert_eq!(only_sheet(&data).table_candidates, ["A1:C5", "A8:C12"]);
    // ... and an Excel table made by the patch engine comes first.
    let ws = Workspace::new();
    let name = ws.add_fixture("xlsx/formula_array_shared.xlsx");
    let res = ws.ok(json!({
        "xlsx_path": ws.path(&name).display().to_string(),
        "ops": [{"op": "set_range_values", "sheet": "Sheet1", "range": "E1:F3",
                 "values": [["name", "amount"], ["a", 1], ["b", 2]]},
                {"op": "apply_table_style", "sheet": "Sheet1", "range": "E1:F3",
                 "style": "TableStyleMedium9"}],
    }));
    let bytes = std::fs::read(&res.out_path).unwrap();
    let (data, _) = read_bytes("t.xlsx", bytes, ExtractMode::Light);
    assert_eq!(
        only_sheet(&data).table_candidates,
        ["E1:F3", "A1:C5", "A8:C12"]
    );
}

#[test]
fn border_clusters_on_the_samples() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let candidates = |name: &str| {
        let (data, _) = read(name, ExtractMode::Light);
        data.sheets[0].1.table_candidates.clone()
    };
    // The chart's data: header row 3 (C3:E3 are the series names), dates B4:B9, values
    // C4:E9 — the ranges the chart's series refer to.
    assert_eq!(candidates("chart_shapes.xlsx"), ["B3:E9"]);
    // The form printed four times, one page every 32 rows, each with the same two blocks.
    assert_eq!(
        candidates("print_ranges_4sheets.xlsx"),
        [
            "B6:X25",
            "B29:R32",
            "B38:X57",
            "B61:R64",
            "B70:X89",
            "B93:R96",
            "B102:X121",
            "B125:R128"
        ]
    );
    assert_eq!(candidates("shape_connector.xlsx"), Vec::<String>::new());
}

#[test]
fn malformed_workbooks_are_typed_errors_and_broken_parts_warnings() {
    if keiri_testkit::skip_without_shared("fixtures/xlsx/ja_form_merged.xlsx") {
        return;
    }
    let err = read_workbook(
        "x.xlsx",
        Arc::from(b"not a zip".to_vec()),
        ExtractMode::Standard,
        &ExtractOptions::default(),
    )
    .unwrap_err();
    assert_eq!(err.code(), "WORKBOOK_UNREADABLE");

    // A drawing that is not XML: the cells still come back, with a warning.
    let bytes = with_parts(
        "chart_shapes.xlsx",
        &[("xl/drawings/drawing1.xml", "<xdr:wsDr><xdr:sp>")],
    );
    let (data, warnings) = read_bytes("b.xlsx", bytes, ExtractMode::Standard);
    assert!(
        warnings.iter().any(|w| w.contains("drawing1.xml")),
        "{warnings:?}"
    );
    assert!(!only_sheet(&data).rows.is_empty());
    assert!(only_sheet(&data).shapes.is_empty());

    // A chart part that is missing.
    let bytes = with_parts(
        "chart_shapes.xlsx",
        &[(
            "xl/drawings/_rels/drawing1.xml.rels",
            r#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/chart" Target="../charts/chart9.xml"/></Relationships>"#,
        )],
    );
    let (data, warnings) = read_bytes("c.xlsx", bytes, ExtractMode::Standard);
    assert!(
        warnings.iter().any(|w| w.contains("chart9.xml")),
        "{warnings:?}"
    );
    assert!(only_sheet(&data).charts.is_empty());
    assert_eq!(summary(only_sheet(&data)).0.len(), 13);

    // A broken worksheet is an error with a stable code, never a panic.
    let bytes = with_parts(
        "chart_shapes.xlsx",
        &[("xl/worksheets/sheet1.xml", "<worksheet><sheetData><row>")],
    );
    let err = read_workbook(
        "w.xlsx",
        Arc::from(bytes),
        ExtractMode::Standard,
        &ExtractOptions::default(),
    )
    .unwrap_err();
    assert_eq!(err.code(), "WORKBOOK_UNREADABLE");

    // The cell budget stops the rows and says so.
    let bytes = std::fs::read(fixture("xlsx/ja_form_merged.xlsx")).unwrap();
    let options = ExtractOptions {
        max_cells: Some(5),
        ..ExtractOptions::default()
    };
    let (data, warnings) =
        read_workbook("m.xlsx", Arc::from(bytes), ExtractMode::Light, &options).unwrap();
    let cells: usize = only_sheet(&data).rows.iter().map(|r| r.c.len()).sum();
    assert!(cells <= 5);
    assert!(
        warnings.iter().any(|w| w.contains("max_cells")),
        "{warnings:?}"
    );
}

#[test]
fn extract_writes_json_or_toon_next_to_the_workbook() {
    if keiri_testkit::skip_without_shared("fixtures/xlsx/chart_shapes.xlsx") {
        return;
    }
    let ws = Workspace::new();
    let name = ws.add_fixture("xlsx/chart_shapes.xlsx");
    let request = |v: serde_json::Value| -> ExtractRequest { serde_json::from_value(v).unwrap() };
    let req = request(json!({"xlsx_path": ws.path(&name).display().to_string()}));
    let res = keiri_xlsx::workbook_extract(&req, &ws.env).unwrap();
    assert_eq!(
        res.out_path,
        ws.path("chart_shapes.json").display().to_string()
    );
    assert_eq!(res.engine, "internal_api");
    let meta = res.workbook_meta.unwrap();
    assert_eq!(
        (meta.sheet_names, meta.sheet_count),
        (vec!["Sheet1".to_string()], 1)
    );
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&res.out_path).unwrap()).unwrap();
    assert_eq!(written["book_name"], "chart_shapes.xlsx");
    assert_eq!(
        written["sheets"]["Sheet1"]["charts"][0]["chart_type"],
        "Line"
    );
    assert!(written["sheets"]["Sheet1"]["rows"][0]["c"].is_object());

    // Again: the default conflict policy renames, with ExStruct's warning.
    let res = keiri_xlsx::workbook_extract(&req, &ws.env).unwrap();
    assert!(
        res.out_path.ends_with("chart_shapes_1.json"),
        "{}",
        res.out_path
    );
    assert_eq!(
        res.warnings,
        ["Output exists; renamed to: chart_shapes_1.json"]
    );

    let res = keiri_xlsx::workbook_extract(
        &request(json!({"xlsx_path": name, "format": "toon", "mode": "light",
                        "out_dir": ws.path("out").display().to_string(), "out_name": "book",
                        "options": {"sheets_dir": "x"}})),
        &ws.env,
    );
    let res = res.unwrap();
    assert!(res.out_path.ends_with("out/book.toon"), "{}", res.out_path);
    let toon = std::fs::read_to_string(&res.out_path).unwrap();
    assert!(toon.starts_with("book_name: chart_shapes.xlsx"), "{toon}");
    assert!(res.warnings.iter().any(|w| w.contains("sheets_dir")));

    for (args, code) in [
        (
            json!({"xlsx_path": name, "format": "yaml"}),
            "INVALID_REQUEST",
        ),
        (json!({"xlsx_path": "old.xls"}), "INVALID_REQUEST"),
        (json!({"xlsx_path": "missing.xlsx"}), "NOT_FOUND"),
        (json!({"xlsx_path": "/etc/passwd.xlsx"}), "PATH_DENIED"),
    ] {
        let err = keiri_xlsx::workbook_extract(&request(args.clone()), &ws.env).unwrap_err();
        assert_eq!(err.code(), code, "{args}: {err}");
    }
}

/// Drawing, chart and diagram parts built from a soup of their own elements (unbalanced,
/// duplicated, with bad numbers and dangling ids): the extraction returns data or a coded
/// error, never a panic.
mod never_panics {
    use proptest::prelude::*;

    use super::*;

    const DRAWING_PIECES: &[&str] = &[
        "<xdr:twoCellAnchor>",
        "</xdr:twoCellAnchor>",
        "<xdr:oneCellAnchor>",
        "</xdr:oneCellAnchor>",
        "<xdr:from><xdr:col>3</xdr:col><xdr:row>99999999999</xdr:row></xdr:from>",
        "<xdr:to><xdr:col>-1</xdr:col><xdr:row>x</xdr:row></xdr:to>",
        "<xdr:ext cx=\"1e400\" cy=\"-5\"/>",
        "<xdr:grpSp>",
        "</xdr:grpSp>",
        "<xdr:grpSpPr><a:xfrm><a:off x=\"1\" y=\"2\"/><a:ext cx=\"0\" cy=\"NaN\"/><a:chOff x=\"9\" y=\"9\"/><a:chExt cx=\"0\" cy=\"0\"/></a:xfrm></xdr:grpSpPr>",
        "<xdr:sp><xdr:nvSpPr><xdr:cNvPr id=\"2\" name=\"a\"/></xdr:nvSpPr><xdr:spPr><a:xfrm rot=\"999999999999\" flipH=\"1\"><a:off x=\"5\" y=\"5\"/><a:ext cx=\"10\" cy=\"10\"/></a:xfrm><a:prstGeom prst=\"\"/></xdr:spPr><xdr:txBody><a:p><a:r><a:t>t</a:t></a:r></a:p></xdr:txBody></xdr:sp>",
        "<xdr:cxnSp><xdr:nvCxnSpPr><xdr:cNvPr id=\"3\"/><xdr:cNvCxnSpPr><a:stCxn id=\"2\"/><a:endCxn id=\"4294967296\"/></xdr:cNvCxnSpPr></xdr:nvCxnSpPr></xdr:cxnSp>",
        "<xdr:graphicFrame><a:graphic><a:graphicData><c:chart r:id=\"rId1\"/></a:graphicData></a:graphic></xdr:graphicFrame>",
        "<xdr:graphicFrame><a:graphic><a:graphicData><dgm:relIds r:dm=\"rId1\" r:lo=\"rId404\"/></a:graphicData></a:graphic></xdr:graphicFrame>",
        "<mc:AlternateContent><mc:Choice>",
        "</mc:Choice></mc:AlternateContent>",
        "&amp;&#0;&unknown;",
    ];

    fn soup(pieces: &[usize]) -> String {
        let body: String = pieces
            .iter()
            .map(|i| DRAWING_PIECES[i % DRAWING_PIECES.len()])
            .collect();
        format!(
            r#"<xdr:wsDr xmlns:xdr="x" xmlns:a="a" xmlns:c="c" xmlns:r="r" xmlns:dgm="d" xmlns:mc="m">{body}</xdr:wsDr>"#
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn drawing_soup_never_panics(pieces in proptest::collection::vec(0usize..64, 0..24)) {
            if keiri_testkit::skip_without_shared("fixtures/xlsx/chart_shapes.xlsx, fixtures/xlsx/smartart.xlsx") {
                return Ok(());
            }
            let drawing = soup(&pieces);
            for (sample, extra) in [
                ("chart_shapes.xlsx", "xl/charts/chart1.xml"),
                ("smartart.xlsx", "xl/diagrams/data1.xml"),
            ] {
                let bytes = with_parts(
                    sample,
                    &[("xl/drawings/drawing1.xml", drawing.as_str()), (extra, drawing.as_str())],
                );
                for mode in [ExtractMode::Standard, ExtractMode::Verbose] {
                    match read_workbook("f.xlsx", Arc::from(bytes.clone()), mode, &ExtractOptions::default()) {
                        Ok(_) => {}
                        Err(e) => {
                            prop_assert_eq!(e.code(), "WORKBOOK_UNREADABLE");
                            // The panic guard's wording: a panic caught, not a typed error.
                            prop_assert!(!e.to_string().contains("could not be processed"), "{}", e);
                        }
                    }
                }
            }
        }
    }
}
