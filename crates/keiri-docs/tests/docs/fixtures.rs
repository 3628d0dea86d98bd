//! The shared accounting fixtures (`../shared/fixtures`), read in place.

use keiri_docs::{
    BatchLimits, ExtractOptions, Format, MetricsRequest, OutputFormat, extract_bytes,
};
use keiri_fs::PathPolicy;

use super::fixtures_dir;

/// Extracts a fixture and checks the sheet, the rendered range and lines of the text.
fn check(
    rel: &str,
    opts: ExtractOptions,
    sheet: Option<&str>,
    range: Option<&str>,
    expect_lines: &[&str],
) {
    let path = fixtures_dir().join(rel);
    let bytes = std::fs::read(&path).unwrap();
    let format = Format::from_path(&path).unwrap();
    let got =
        extract_bytes(&bytes, format, &opts).unwrap_or_else(|e| panic!("{rel}: {} {e}", e.code()));
    assert_eq!(
        (got.sheet.as_deref(), got.range.as_deref()),
        (sheet, range),
        "{rel}"
    );
    let text = got.normalized();
    for line in expect_lines {
        assert!(
            text.lines().any(|l| l == *line),
            "{rel}: no line {line:?} in\n{text}"
        );
    }
    assert!(got.cuts.is_empty(), "{rel}: {:?}", got.cuts);
}

#[test]
fn accounting_workbooks() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let d = ExtractOptions::default;
    check(
        "accounting/multi_sheet_ja.xlsx",
        d(),
        Some("入力データ"),
        Some("A1:D4"),
        &[
            "データID\t会社名\t予定金額\t備考",
            "データ003\t株式会社デジタル工房\t132000",
        ],
    );
    // Strict Open XML (purl.oclc.org namespaces), which openpyxl cannot read.
    check(
        "accounting/retirement_ledger_strict.xlsx",
        d(),
        Some("退職給付金勘定元帳"),
        Some("A1:F18"),
        &[
            "伝票日付\t相手方勘定科目名\t摘要\t借方\t貸方\t残高",
            "2023-03-31\t普通預金\t鈴木一郎退職給付金支払\t1250000\t\t0",
        ],
    );
    check(
        "accounting/payroll_pivot.xlsx",
        d(),
        Some("給与明細一覧表_pivot"),
        Some("A1:T12"),
        &[
            "役職\t主任\t一般職\t課長\t一般職\t部長\t一般職\t部長\t一般職\t部長\t主任\t一般職\t主任\t課長\t一般職\t課長\t主任\t一般職\t一般職\t一般職",
        ],
    );
    let sheet = |s: &str| ExtractOptions {
        sheet: Some(s.to_string()),
        ..ExtractOptions::default()
    };
    for rel in [
        "accounting/retirement_benefit_workbook.xlsx",
        "accounting/retirement_workbook_2024Q4.xlsx",
    ] {
        let bytes = std::fs::read(fixtures_dir().join(rel)).unwrap();
        let first = extract_bytes(&bytes, Format::Xlsx, &ExtractOptions::default()).unwrap();
        let names = first.sheet_names.clone().unwrap();
        assert!(names.len() > 1, "{rel}: several sheets");
        assert!(!first.text.is_empty(), "{rel}");
        // Every sheet can be chosen by name and by position.
        for (i, name) in names.iter().enumerate() {
            let by_name = extract_bytes(&bytes, Format::Xlsx, &sheet(name)).unwrap();
            let by_index =
                extract_bytes(&bytes, Format::Xlsx, &sheet(&format!("#{}", i + 1))).unwrap();
            assert_eq!(by_name.sheet.as_deref(), Some(name.as_str()));
            assert_eq!(by_name.text, by_index.text, "{rel} {name}");
        }
    }
    check(
        "accounting/multi_sheet_ja.xlsx",
        ExtractOptions {
            range: Some("B2:C3".into()),
            ..d()
        },
        Some("入力データ"),
        Some("B2:C3"),
        &["ABC商事株式会社\t55000", "XYZ商店有限会社\t82500"],
    );
}

#[test]
fn accounting_csvs_and_the_invoice_pdf() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let d = ExtractOptions::default;
    check(
        "accounting/invoices.csv",
        d(),
        None,
        None,
        &["V002,Globex Inc,INV-2002,7600,Consulting service quarter one"],
    );
    check(
        "accounting/po_data.csv",
        d(),
        None,
        None,
        &["V003,P-1003,150000,USD"],
    );
    check(
        "docs/invoice_ja.pdf",
        d(),
        None,
        None,
        &[
            "請求書",
            "請求書番号: INV-003",
            "株式会社サンプル",
            "消費税（10%） ¥10,000",
            "合計金額 ¥110,000",
            "口座名義: デジタル工房",
        ],
    );
}

#[test]
fn metrics_of_every_fixture() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    let dir = fixtures_dir();
    let policy = PathPolicy::new([&dir]);
    let mut paths = Vec::new();
    for sub in ["accounting", "docs", "xlsx"] {
        let mut names: Vec<String> = std::fs::read_dir(dir.join(sub))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| Format::from_path(std::path::Path::new(n)).is_ok())
            .collect();
        names.sort();
        paths.extend(names.into_iter().map(|n| format!("{sub}/{n}")));
    }
    assert!(paths.len() >= 15, "{paths:?}");
    let req = MetricsRequest {
        file_paths: paths.clone(),
        output_format: OutputFormat::Json,
    };
    let cache = keiri_docs::Cache::new(64, 64 << 20);
    let out = keiri_docs::file_metrics(&policy, &req, &BatchLimits::default(), &cache).unwrap();
    let res = out.json().unwrap();
    assert!(res.success, "{:?}", res.errors);
    assert_eq!(res.files.len(), paths.len());
    for m in &res.files {
        assert!(m.size_bytes > 0, "{m:?}");
        // These two hold only shapes and SmartArt (an empty <sheetData/>): no cell text.
        let shapes_only =
            m.file_path.ends_with("shape_connector.xlsx") || m.file_path.ends_with("smartart.xlsx");
        assert_eq!(m.lines == 0, shapes_only, "{m:?}");
        match m.format {
            Format::Xlsx => assert!(m.sheets.unwrap() >= 1),
            Format::Pdf => assert_eq!(m.pages, Some(1)),
            _ => assert_eq!(m.encoding.as_deref(), Some("utf-8")),
        }
    }
}
