//! `output/*` blocks: the written files are opened again (workbooks with calamine and their
//! XML, CSV bytes decoded with the chosen encoding) and compared with hand-written values.

use std::io::Read;
use std::path::{Path, PathBuf};

use calamine::{Data, Reader, Xlsx, open_workbook};
use keiri_run::block::ErrorCode;
use serde_json::{Value as Json, json};

use crate::matching::run_block;

fn run(id: &str, dir: &Path, inputs: Json) -> Json {
    run_block(id, dir, inputs.clone())
        .unwrap_or_else(|e| panic!("{id} failed: {e}\ninputs: {inputs}"))
}

fn error_code(id: &str, dir: &Path, inputs: Json) -> ErrorCode {
    match run_block(id, dir, inputs) {
        Err(e) => e.code,
        Ok(out) => panic!("{id} should fail, got {out}"),
    }
}

fn cells(path: &Path, sheet: &str) -> Vec<Vec<Data>> {
    let mut book: Xlsx<_> = open_workbook(path).unwrap();
    let range = book.worksheet_range(sheet).unwrap();
    let (rows, cols) = range.get_size();
    let start = range.start().unwrap_or((0, 0));
    // Rebuild the grid from A1 so tests can use Excel coordinates.
    let mut grid = vec![vec![Data::Empty; cols + start.1 as usize]; rows + start.0 as usize];
    for (r, c, v) in range.cells() {
        grid[r + start.0 as usize][c + start.1 as usize] = v.clone();
    }
    grid
}

fn zip_text(path: &Path, part: &str) -> String {
    let mut archive = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut text = String::new();
    archive
        .by_name(part)
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    text
}

fn out_path(out: &Json) -> PathBuf {
    PathBuf::from(out["out_path"].as_str().unwrap())
}

fn s(text: &str) -> Data {
    Data::String(text.into())
}

#[test]
fn write_table_makes_a_styled_workbook_with_wide_character_widths() {
    let dir = tempfile::tempdir().unwrap();
    let rows = json!([
        {"取引先": "株式会社山田商事", "金額": 110000, "請求日": "2025-03-05", "備考": null},
        {"取引先": "ABC", "金額": 48400.5, "請求日": "2025-03-14", "備考": "再発行"},
    ]);
    let out = run(
        "excel.write_table",
        dir.path(),
        json!({"rows": rows, "column_labels": {"取引先": "取引先名"}, "number_formats": {"金額": "#,##0"},
               "title": "2025年3月 重複請求書", "out_name": "重複.xlsx"}),
    );
    let path = out_path(&out);
    assert_eq!(path, dir.path().join("out/outputs/重複.xlsx"));
    assert_eq!(out["sheet_name"], "レポート");
    assert_eq!(out["row_count"], 2);
    let grid = cells(&path, "レポート");
    assert_eq!(grid[0][0], s("2025年3月 重複請求書"));
    assert_eq!(
        grid[2],
        vec![s("取引先名"), s("金額"), s("請求日"), s("備考")]
    );
    assert_eq!(grid[3][0], s("株式会社山田商事"));
    assert_eq!(grid[3][1], Data::Float(110000.0));
    // The ISO date is a real Excel date: serial 45721 is 2025-03-05.
    match &grid[3][2] {
        Data::DateTime(d) => assert_eq!(d.as_f64(), 45721.0),
        other => panic!("expected a date, got {other:?}"),
    }
    assert_eq!(grid[3][3], Data::Empty);
    assert_eq!(grid[4][1], Data::Float(48400.5));
    assert_eq!(grid[4][3], s("再発行"));

    // Amounts as a CSV gives them (text) become numbers in a column formatted as numbers;
    // text elsewhere, and text that is no amount, stays text.
    let rows = json!([
        {"番号": "001", "金額": "1,200"},
        {"番号": "002", "金額": "△500"},
        {"番号": "003", "金額": "未定"},
    ]);
    let out = run(
        "excel.write_table",
        dir.path(),
        json!({"rows": rows, "number_formats": {"金額": "#,##0"}, "out_name": "text.xlsx"}),
    );
    let grid = cells(&out_path(&out), "レポート");
    let body: Vec<(Data, Data)> = grid
        .iter()
        .skip_while(|r| r.first() != Some(&s("番号")))
        .skip(1)
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect();
    assert_eq!(
        body,
        [
            (s("001"), Data::Float(1200.0)),
            (s("002"), Data::Float(-500.0)),
            (s("003"), s("未定")),
        ]
    );

    let sheet = zip_text(&path, "xl/worksheets/sheet1.xml");
    // Header on row 3 frozen: the pane starts at A4.
    assert!(
        sheet.contains(r#"topLeftCell="A4""#) && sheet.contains(r#"state="frozen""#),
        "{sheet}"
    );
    // Widths: 株式会社山田商事 is 8 wide characters = 16, + 2 → 18, stored by Excel's rule
    // trunc((18 × 7 + 5) / 7 × 256) / 256 = 18.7109375. 金額: "48400.5" with one separator
    // is 8 + 2 = 10 → 10.7109375. 請求日: 2025-03-05 shows as 2025/03/05, 10 + 2 = 12 → 12.7109375.
    assert!(
        sheet.contains(r#"<col min="1" max="1" width="18.7109375""#),
        "{sheet}"
    );
    assert!(
        sheet.contains(r#"<col min="2" max="2" width="10.7109375""#),
        "{sheet}"
    );
    assert!(
        sheet.contains(r#"<col min="3" max="3" width="12.7109375""#),
        "{sheet}"
    );
    let styles = zip_text(&path, "xl/styles.xml");
    assert!(styles.contains(r##"formatCode="#,##0""##), "{styles}");
    assert!(styles.contains(r#"formatCode="yyyy/mm/dd""#), "{styles}");
    assert!(styles.contains("<b/>"), "the header is bold: {styles}");

    // A second write keeps the first file and takes the next free name; skip writes nothing.
    let again = run(
        "excel.write_table",
        dir.path(),
        json!({"rows": rows, "out_name": "重複.xlsx"}),
    );
    assert_eq!(out_path(&again), dir.path().join("out/outputs/重複_1.xlsx"));
    let skipped = run(
        "excel.write_table",
        dir.path(),
        json!({"rows": rows, "out_name": "重複.xlsx", "on_conflict": "skip"}),
    );
    assert_eq!(skipped["out_path"], "");
    assert_eq!(skipped["row_count"], 0);
}

#[test]
fn write_table_adds_a_sheet_to_a_copy_of_a_base_workbook() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("月次.xlsx");
    let mut book = rust_xlsxwriter::Workbook::new();
    book.add_worksheet()
        .set_name("レポート")
        .unwrap()
        .write_string(0, 0, "既存")
        .unwrap();
    book.save(&base).unwrap();
    let before = std::fs::read(&base).unwrap();
    let out = run(
        "excel.write_table",
        dir.path(),
        json!({"rows": [{"科目": "現金", "残高": 520000}], "base_workbook": "月次.xlsx", "out_name": "月次_追加.xlsx"}),
    );
    assert_eq!(out["sheet_name"], "レポート_2");
    let path = out_path(&out);
    assert!(
        path.starts_with(dir.path().join("out")),
        "{}",
        path.display()
    );
    let grid = cells(&path, "レポート_2");
    assert_eq!(grid[0], vec![s("科目"), s("残高")]);
    assert_eq!(grid[1], vec![s("現金"), Data::Float(520000.0)]);
    assert_eq!(cells(&path, "レポート")[0][0], s("既存"));
    assert_eq!(
        std::fs::read(&base).unwrap(),
        before,
        "the base workbook is never modified"
    );
}

/// An exception list as a manager reads it: the counts above the rows, headers and codes in
/// words, the data's own words kept; `labels: none` keeps the codes, `en` speaks English; a
/// copy of a base workbook gets the same (values only).
#[test]
fn write_table_labels_codes_and_puts_the_summary_above_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let rows = json!([
        {"invoice_no": "TJ-08812", "vendor": "東京事務機", "amount": 48400, "cluster_id": 2, "reason": "similar_invoice_no"},
        {"invoice_no": "X-1", "vendor": "山田商事", "amount": 110000, "cluster_id": 1, "reason": "exact_duplicate", "status": "matched"},
        {"invoice_no": "X-2", "vendor": "大阪運輸", "amount": 55000, "reason": "", "status": "open"},
    ]);
    let summary = json!([{"reason": "similar_invoice_no", "count": 1}, {"reason": "exact_duplicate", "count": 1}]);
    let out = run(
        "excel.write_table",
        dir.path(),
        json!({"rows": rows, "summary": summary, "title": "例外", "column_labels": {"vendor": "仕入先"}, "out_name": "ja.xlsx"}),
    );
    let ja = out_path(&out);
    let grid = cells(&ja, "レポート");
    let n = |x: f64| Data::Float(x);
    assert_eq!(grid[0][0], s("例外"));
    assert_eq!(grid[2][..2], [s("理由"), s("件数")]);
    assert_eq!(grid[3][..2], [s("請求書番号の打ち間違いの疑い"), n(1.0)]);
    assert_eq!(grid[4][..2], [s("同じ請求書（完全一致）"), n(1.0)]);
    assert!(grid[5].iter().all(|c| *c == Data::Empty));
    assert_eq!(
        grid[6],
        [
            s("請求書番号"),
            s("仕入先"),
            s("金額"),
            s("グループ"),
            s("理由"),
            s("状態")
        ]
    );
    assert_eq!(
        grid[7],
        [
            s("TJ-08812"),
            s("東京事務機"),
            n(48400.0),
            n(2.0),
            s("請求書番号の打ち間違いの疑い"),
            Data::Empty
        ]
    );
    // A column of the user's own words keeps them, even one that spells a code: status holds
    // "open" beside "matched", so "matched" is not relabelled 「一致」.
    assert_eq!(grid[8][4..], [s("同じ請求書（完全一致）"), s("matched")]);
    assert_eq!(grid[9][5], s("open"));
    assert_eq!(out["row_count"], 3);

    let out = run(
        "excel.write_table",
        dir.path(),
        json!({"rows": rows, "labels": "none", "out_name": "codes.xlsx"}),
    );
    let grid = cells(&out_path(&out), "レポート");
    assert_eq!(grid[0][..2], [s("invoice_no"), s("vendor")]);
    assert_eq!(grid[1][4], s("similar_invoice_no"));

    let out = run(
        "excel.write_table",
        dir.path(),
        json!({"rows": rows, "summary": summary, "labels": "en", "out_name": "en.xlsx"}),
    );
    let grid = cells(&out_path(&out), "レポート");
    assert_eq!(grid[0][..2], [s("Reason"), s("Count")]);
    assert_eq!(grid[4][4], s("Reason"));
    assert_eq!(grid[5][4], s("Invoice number likely mistyped"));

    let out = run(
        "excel.write_table",
        dir.path(),
        json!({"rows": rows, "summary": summary, "base_workbook": ja, "out_name": "copy.xlsx"}),
    );
    let grid = cells(&out_path(&out), "レポート_2");
    assert_eq!(grid[0][..2], [s("理由"), s("件数")]);
    assert_eq!(grid[1][0], s("請求書番号の打ち間違いの疑い"));
    assert_eq!(grid[4][0], s("請求書番号"));
    assert_eq!(grid[5][4], s("請求書番号の打ち間違いの疑い"));

    assert_eq!(
        error_code(
            "excel.write_table",
            dir.path(),
            json!({"rows": rows, "labels": "fr"})
        ),
        ErrorCode::InputInvalid
    );
}

/// A report of nothing found says so: under the header when the columns are known, alone
/// under the title when they are not, and an empty summary adds nothing; also in a copy.
#[test]
fn write_table_says_when_a_report_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        "excel.write_table",
        dir.path(),
        json!({"rows": [], "summary": [], "title": "重複請求書", "out_name": "none.xlsx"}),
    );
    assert_eq!(out["row_count"], 0);
    let grid = cells(&out_path(&out), "レポート");
    assert_eq!(grid[0][0], s("重複請求書"));
    assert_eq!(grid[2][0], s("該当なし（0 件）"));
    assert_eq!(grid.len(), 3, "{grid:?}");

    let out = run(
        "excel.write_table",
        dir.path(),
        json!({"rows": [], "columns": ["invoice_no", "amount"], "labels": "en", "out_name": "cols.xlsx"}),
    );
    let grid = cells(&out_path(&out), "レポート");
    assert_eq!(grid[0], [s("Invoice no."), s("Amount")]);
    assert_eq!(grid[1], [s("None (0 rows)"), Data::Empty]);

    let base = out_path(&out);
    let out = run(
        "excel.write_table",
        dir.path(),
        json!({"rows": [], "summary": [], "columns": ["invoice_no", "amount"], "base_workbook": base, "out_name": "copy.xlsx"}),
    );
    let grid = cells(&out_path(&out), "レポート_2");
    assert_eq!(grid[0], [s("請求書番号"), s("金額")]);
    assert_eq!(grid[1][0], s("該当なし（0 件）"));
    assert_eq!(grid.len(), 2, "{grid:?}");
}

/// A filter that leaves no rows hands on a table that still has its columns: the report and
/// the CSV written from it keep the header (the workbook says 該当なし under it), so an empty
/// month reads as "nothing found" in the columns the user expects.
#[test]
fn an_empty_table_is_written_with_its_header() {
    let yaml = "id: t
graph:
  - {id: read, block: csv.read, in: {path: j.csv}, out: {rows: rows}}
  - {id: pick, block: transforms.filter_rows, in: {rows: '${read.rows}', condition: '金額 > 1000000'}, out: {rows: rows}}
  - {id: book, block: excel.write_table, in: {rows: '${pick.rows}', out_name: none.xlsx}, out: {path: path}}
  - {id: text, block: csv.write, in: {rows: '${pick.rows}', out_name: none.csv}, out: {path: path}}
";
    let journal = "日付,科目,金額\n2026-04-01,売上,1000\n";
    let (outcome, _, _ws) = crate::support::run_builtins(&[("j.csv", journal)], yaml, |_| {});
    assert_eq!(
        outcome.status,
        keiri_run::RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    let files = outcome.run_dir.join("files");
    let grid = cells(&files.join("book/outputs/none.xlsx"), "レポート");
    assert_eq!(grid[0], [s("日付"), s("科目"), s("金額")]);
    assert_eq!(grid[1][0], s("該当なし（0 件）"));
    let text = std::fs::read_to_string(files.join("text/outputs/none.csv")).unwrap();
    assert_eq!(
        text.trim_start_matches('\u{feff}').trim_end(),
        "日付,科目,金額"
    );
}

#[test]
fn output_paths_stay_inside_the_run_folder_unless_write_is_allowed() {
    let dir = tempfile::tempdir().unwrap();
    for (id, inputs) in [
        ("excel.write_table", json!({"rows": [], "out_dir": "../外"})),
        (
            "csv.write",
            json!({"rows": [], "out_dir": "output/../../外"}),
        ),
        ("csv.write", json!({"rows": [], "out_name": "../a.csv"})),
        (
            "journal.export",
            json!({"entries": [], "out_name": "sub/j.csv"}),
        ),
        (
            "report.markdown",
            json!({"title": "t", "sections": [], "out_dir": "..", "out_name": "r.md"}),
        ),
    ] {
        assert_eq!(
            error_code(id, dir.path(), inputs.clone()),
            ErrorCode::InputInvalid,
            "{id} {inputs}"
        );
    }
    assert!(!dir.path().join("外").exists());
    // A folder the plan names is a folder inside the node's run folder…
    let out = run(
        "csv.write",
        dir.path(),
        json!({"rows": csv_rows(), "out_dir": "/reports/3月"}),
    );
    assert_eq!(
        out_path(&out),
        dir.path().join("out/reports/3月/output.csv")
    );
    // …until the user allows writing for real (--write): then it is the workspace's.
    let out = crate::matching::run_block_with(
        "csv.write",
        dir.path(),
        json!({"rows": csv_rows(), "out_dir": "出力"}),
        true,
    )
    .unwrap();
    assert_eq!(out_path(&out), dir.path().join("出力/output.csv"));
}

#[test]
fn patch_workbook_writes_a_patched_copy_and_reports_the_diff() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("試算表.xlsx");
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet().set_name("試算表").unwrap();
    sheet.write_string(0, 0, "科目").unwrap();
    sheet.write_string(0, 1, "当月").unwrap();
    sheet.write_string(1, 0, "現金").unwrap();
    sheet.write_number(1, 1, 520000).unwrap();
    book.save(&source).unwrap();
    let before = std::fs::read(&source).unwrap();
    let ops = json!([
        {"op": "set_value", "sheet": "試算表", "cell": "C1", "value": "前月"},
        {"op": "set_value", "sheet": "試算表", "cell": "C2", "value": 480000},
        {"op": "set_formula", "sheet": "試算表", "cell": "D2", "formula": "=B2-C2"},
    ]);
    let dry = run(
        "excel.patch_workbook",
        dir.path(),
        json!({"xlsx_path": "試算表.xlsx", "operations": ops, "dry_run": true}),
    );
    assert_eq!(dry["out_path"], "");
    assert!(!dir.path().join("out/outputs/試算表_patched.xlsx").exists());

    let out = run(
        "excel.patch_workbook",
        dir.path(),
        json!({"xlsx_path": "試算表.xlsx", "operations": ops}),
    );
    assert_eq!(
        out_path(&out),
        dir.path().join("out/outputs/試算表_patched.xlsx")
    );
    let plain: Vec<Json> = out["patch_diff"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| json!({"sheet": d["sheet"], "cell": d["cell"], "before": d["before"], "after": d["after"]}))
        .collect();
    assert_eq!(
        plain,
        [
            json!({"sheet": "試算表", "cell": "C1", "before": null, "after": "前月"}),
            json!({"sheet": "試算表", "cell": "C2", "before": null, "after": 480000}),
            json!({"sheet": "試算表", "cell": "D2", "before": null, "after": "=B2-C2"}),
        ]
    );
    // Each item also carries keiri-xlsx's own diff item, for the studio's cell grid.
    let formula = &out["patch_diff"][2]["detail"];
    assert_eq!(
        (
            &formula["op"],
            &formula["after"]["kind"],
            &formula["status"]
        ),
        (&json!("set_formula"), &json!("formula"), &json!("applied"))
    );
    assert_eq!(out["inverse_ops"].as_array().unwrap().len(), 3);
    let grid = cells(&out_path(&out), "試算表");
    assert_eq!(grid[0][2], s("前月"));
    assert_eq!(grid[1][2], Data::Float(480000.0));
    assert_eq!(
        std::fs::read(&source).unwrap(),
        before,
        "the source workbook is never modified"
    );
    // With --write and no out_dir, the copy goes to the workspace's outputs folder, never beside
    // the source (patched_workbooks_land_in_the_output_folder_not_beside_the_inputs).
    let out = crate::matching::run_block_with(
        "excel.patch_workbook",
        dir.path(),
        json!({"xlsx_path": "試算表.xlsx", "operations": ops}),
        true,
    )
    .unwrap();
    assert_eq!(
        out_path(&out),
        dir.path().join("outputs/試算表_patched.xlsx")
    );
    assert!(!dir.path().join("試算表_patched.xlsx").exists());
    assert_eq!(std::fs::read(&source).unwrap(), before);

    assert_eq!(
        error_code(
            "excel.patch_workbook",
            dir.path(),
            json!({"xlsx_path": "ない.xlsx", "operations": ops})
        ),
        ErrorCode::FileNotFound
    );
    assert_eq!(
        error_code(
            "excel.patch_workbook",
            dir.path(),
            json!({"xlsx_path": "試算表.xlsx", "operations": [{"op": "rename_sheet", "sheet": "x"}]})
        ),
        ErrorCode::InputInvalid
    );
    // A sheet that does not exist fails the node and writes nothing.
    let missing = json!([{"op": "set_value", "sheet": "ない", "cell": "A1", "value": 1}]);
    assert_eq!(
        error_code(
            "excel.patch_workbook",
            dir.path(),
            json!({"xlsx_path": "試算表.xlsx", "operations": missing, "out_name": "x.xlsx"})
        ),
        ErrorCode::BlockFailed
    );
    assert!(!dir.path().join("out/outputs/x.xlsx").exists());
    // An out_name without extension gets the source's (keiri-xlsx's rule); patching again with
    // on_conflict skip sees that file and reports nothing written.
    let named = json!({"xlsx_path": "試算表.xlsx", "operations": ops, "out_name": "月次", "on_conflict": "skip"});
    let out = run("excel.patch_workbook", dir.path(), named.clone());
    assert_eq!(out_path(&out), dir.path().join("out/outputs/月次.xlsx"));
    let again = run("excel.patch_workbook", dir.path(), named);
    assert_eq!(again["out_path"], "", "skipped: the file was already there");
}

fn csv_rows() -> Json {
    json!([
        {"科目": "旅費交通費", "金額": 3480, "摘要": "タクシー代, 渋谷"},
        {"科目": "消耗品費", "金額": 12000, "摘要": "\"特価\"品"},
    ])
}

#[test]
fn csv_write_encodes_utf8_bom_and_cp932() {
    let dir = tempfile::tempdir().unwrap();
    let expected = "科目,金額,摘要\r\n旅費交通費,3480,\"タクシー代, 渋谷\"\r\n消耗品費,12000,\"\"\"特価\"\"品\"\r\n";
    // utf-8-sig is the default: EF BB BF, then the text.
    let out = run("csv.write", dir.path(), json!({"rows": csv_rows()}));
    assert_eq!(out_path(&out), dir.path().join("out/outputs/output.csv"));
    assert_eq!(out["row_count"], 2);
    let bytes = std::fs::read(out_path(&out)).unwrap();
    assert_eq!(&bytes[..3], &[0xEF, 0xBB, 0xBF]);
    assert_eq!(std::str::from_utf8(&bytes[3..]).unwrap(), expected);

    let out = run(
        "csv.write",
        dir.path(),
        json!({"rows": csv_rows(), "encoding": "utf-8", "out_name": "u.csv"}),
    );
    assert_eq!(std::fs::read(out_path(&out)).unwrap(), expected.as_bytes());

    let out = run(
        "csv.write",
        dir.path(),
        json!({"rows": csv_rows(), "encoding": "cp932", "out_name": "s.csv"}),
    );
    let bytes = std::fs::read(out_path(&out)).unwrap();
    // 旅 is 0x97B7 in Shift_JIS.
    assert_eq!(&bytes[16..18], &[0x97, 0xB7]);
    let (text, _, bad) = encoding_rs::SHIFT_JIS.decode(&bytes);
    assert!(!bad);
    assert_eq!(text, expected);
    assert_eq!(out["warnings"], json!([]));

    // 𠮷 (U+20BB7) is not in CP932: it becomes ? and is reported; 髙 (an IBM extension) is kept.
    let out = run(
        "csv.write",
        dir.path(),
        json!({"rows": [{"店名": "𠮷野家", "担当": "髙橋"}], "encoding": "shift_jis", "out_name": "w.csv",
               "include_header": false, "delimiter": "\t", "columns": ["担当", "店名"]}),
    );
    let bytes = std::fs::read(out_path(&out)).unwrap();
    let (text, _, _) = encoding_rs::SHIFT_JIS.decode(&bytes);
    assert_eq!(text, "髙橋\t?野家\r\n");
    let warnings = out["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].as_str().unwrap().contains("U+20BB7"),
        "{warnings:?}"
    );
}

/// A table as `csv.read` or a transform hands it on: text with delimiters, quotes, a line
/// break and gaps; integers, floats (a whole one, NaN), dates and booleans. The table is written
/// column by column, without turning it into JSON rows; the bytes must be what its rows give.
#[test]
fn csv_write_writes_a_typed_table_as_its_rows_would_be() {
    use keiri_run::value::Value;
    use polars::prelude::{Column, DataFrame, DataType};
    let day = |y, m, d| {
        let date = chrono::NaiveDate::from_ymd_opt(y, m, d).unwrap();
        (date - chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap()).num_days() as i32
    };
    let table = DataFrame::new(
        4,
        vec![
            Column::new(
                "摘要".into(),
                [
                    Some("タクシー代, 渋谷"),
                    Some("\"特価\"品"),
                    None,
                    Some("二行\n目"),
                ]
                .to_vec(),
            ),
            Column::new(
                "金額".into(),
                [Some(3480i64), None, Some(-12000), Some(0)].to_vec(),
            ),
            Column::new(
                "率".into(),
                [Some(0.1f64), Some(2.0), Some(f64::NAN), None].to_vec(),
            ),
            Column::new(
                "日付".into(),
                [
                    Some(day(2025, 3, 5)),
                    Some(day(2024, 12, 31)),
                    None,
                    Some(day(2025, 1, 1)),
                ]
                .to_vec(),
            )
            .cast(&DataType::Date)
            .unwrap(),
            Column::new(
                "確認".into(),
                [Some(true), Some(false), None, Some(true)].to_vec(),
            ),
        ],
    )
    .unwrap();
    // By hand: a comma or a quote or a line break quotes the field (quotes doubled); a gap, a
    // NaN and a null are empty; a whole float keeps its ".0"; dates are YYYY-MM-DD.
    let expected = "摘要,金額,率,日付,確認\r\n\
                    \"タクシー代, 渋谷\",3480,0.1,2025-03-05,true\r\n\
                    \"\"\"特価\"\"品\",,2.0,2024-12-31,false\r\n\
                    ,-12000,,,\r\n\
                    \"二行\n目\",0,,2025-01-01,true\r\n";
    let dir = tempfile::tempdir().unwrap();
    let write = |rows: Value, name: &str, columns: Option<Json>| {
        let mut inputs = vec![
            ("rows", rows),
            ("encoding", Value::Json(json!("utf-8"))),
            ("out_name", Value::Json(json!(name))),
        ];
        if let Some(c) = columns {
            inputs.push(("columns", Value::Json(c)));
        }
        let out = crate::matching::run_block_values("csv.write", dir.path(), inputs).unwrap();
        assert_eq!(out["row_count"], 4);
        String::from_utf8(std::fs::read(out_path(&out)).unwrap()).unwrap()
    };
    assert_eq!(write(Value::Table(table.clone()), "t.csv", None), expected);
    let rows = Value::Table(table.clone()).to_json();
    assert_eq!(write(Value::Json(rows.clone()), "r.csv", None), expected);
    // Chosen columns, in the chosen order.
    let picked = "日付,摘要\r\n2025-03-05,\"タクシー代, 渋谷\"\r\n2024-12-31,\"\"\"特価\"\"品\"\r\n,\r\n2025-01-01,\"二行\n目\"\r\n";
    let columns = Some(json!(["日付", "摘要"]));
    assert_eq!(
        write(Value::Table(table), "tc.csv", columns.clone()),
        picked
    );
    assert_eq!(write(Value::Json(rows), "rc.csv", columns), picked);
}

/// The text `csv.write` writes to `dir/name` from `rows` (a table or JSON rows), UTF-8 with
/// `delimiter`.
fn write_utf8_csv(
    dir: &Path,
    rows: keiri_run::value::Value,
    name: &str,
    delimiter: &str,
) -> String {
    use keiri_run::value::Value;
    let inputs = vec![
        ("rows", rows),
        ("encoding", Value::Json(json!("utf-8"))),
        ("delimiter", Value::Json(json!(delimiter))),
        ("out_name", Value::Json(json!(name))),
    ];
    let out = crate::matching::run_block_values("csv.write", dir, inputs).unwrap();
    String::from_utf8(std::fs::read(out_path(&out)).unwrap()).unwrap()
}

/// Numbers at the edges of their text (exponents, a negative zero, the largest integers, a
/// float32, an infinity) and the delimiters that change what is quoted: a table is written as
/// its JSON rows are (the rows' text is serde_json's), and as worked out by hand.
#[test]
fn csv_write_writes_edge_numbers_and_any_delimiter_as_rows_would_be() {
    use keiri_run::value::Value;
    use polars::prelude::{Column, DataFrame};
    let table = DataFrame::new(
        5,
        vec![
            Column::new(
                "f".into(),
                [
                    Some(1e21f64),
                    Some(-0.0),
                    Some(1.5e-7),
                    Some(f64::INFINITY),
                    Some(123456.789),
                ]
                .to_vec(),
            ),
            Column::new(
                "g".into(),
                [Some(0.5f32), None, Some(-2.0), Some(1e10), Some(f32::NAN)].to_vec(),
            ),
            Column::new(
                "u".into(),
                [Some(u64::MAX), Some(0), None, Some(7), Some(10)].to_vec(),
            ),
            Column::new(
                "i".into(),
                [Some(i64::MIN), Some(-1), Some(0), None, Some(i64::MAX)].to_vec(),
            ),
            Column::new(
                "t".into(),
                [
                    Some("a;b"),
                    Some("a\tb"),
                    Some("a | b"),
                    Some("a,b"),
                    Some(""),
                ]
                .to_vec(),
            ),
        ],
    )
    .unwrap();
    let rows = Value::Table(table.clone()).to_json();
    let dir = tempfile::tempdir().unwrap();
    let write = |rows: Value, name: &str, delimiter: &str| {
        write_utf8_csv(dir.path(), rows, name, delimiter)
    };
    // By hand, with a comma: serde_json writes 1e21 and 1.5e-7 with exponents (`1e+21`),
    // keeps the sign of -0.0 and a whole float's ".0"; an infinity and a NaN are JSON's null,
    // so empty; the float32 0.5 and 1e10 are widened exactly.
    let expected = "f,g,u,i,t\r\n\
                    1e+21,0.5,18446744073709551615,-9223372036854775808,a;b\r\n\
                    -0.0,,0,-1,a\tb\r\n\
                    1.5e-7,-2.0,,0,a | b\r\n\
                    ,10000000000.0,7,,\"a,b\"\r\n\
                    123456.789,,10,9223372036854775807,\r\n";
    assert_eq!(write(Value::Table(table.clone()), "c.csv", ","), expected);
    for (n, delimiter) in [";", "\\t", " | "].into_iter().enumerate() {
        let from_table = write(Value::Table(table.clone()), &format!("t{n}.csv"), delimiter);
        let from_rows = write(Value::Json(rows.clone()), &format!("r{n}.csv"), delimiter);
        assert_eq!(from_table, from_rows, "{delimiter}");
    }
    let semicolon = write(Value::Table(table.clone()), "s.csv", ";");
    assert!(semicolon.contains("\"a;b\""), "{semicolon}");
    assert!(semicolon.contains(";a,b\r\n"), "{semicolon}");
    let tab = write(Value::Table(table.clone()), "tab.csv", "\\t");
    assert!(tab.contains("\t\"a\tb\"\r\n"), "{tab}");
    let bar = write(Value::Table(table), "bar.csv", " | ");
    assert!(bar.contains(" | \"a | b\"\r\n"), "{bar}");
    assert!(bar.contains(" | a;b\r\n"), "{bar}");
}

/// Dates, booleans and the small integer types are rendered column by column without JSON:
/// the same text as the rows they make, from year 1 to 9999 (by hand), past it (Polars' own
/// text, as before), with a delimiter that occurs inside numbers and dates, and across the
/// pieces of a long table.
#[test]
fn csv_write_renders_dates_and_small_numbers_as_rows_would_be() {
    use keiri_run::value::Value;
    use polars::prelude::{Column, DataFrame, DataType};
    let day = |y, m, d| {
        let date = chrono::NaiveDate::from_ymd_opt(y, m, d).unwrap();
        (date - chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap()).num_days() as i32
    };
    let dates = |days: Vec<Option<i32>>| {
        Column::new("日付".into(), days)
            .cast(&DataType::Date)
            .unwrap()
    };
    let table = DataFrame::new(
        6,
        vec![
            dates(vec![
                Some(day(1, 1, 1)),
                Some(day(999, 12, 31)),
                None,
                Some(day(1969, 12, 31)),
                Some(day(2024, 2, 29)),
                Some(day(9999, 12, 31)),
            ]),
            Column::new(
                "i8".into(),
                [Some(-128i8), Some(127), None, Some(0), Some(-1), Some(5)].to_vec(),
            ),
            Column::new(
                "u32".into(),
                [Some(u32::MAX), Some(0), Some(10), None, Some(1), Some(2)].to_vec(),
            ),
            Column::new(
                "b".into(),
                [None, Some(true), Some(false), Some(true), None, Some(false)].to_vec(),
            ),
        ],
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let write = |rows: Value, name: &str, delimiter: &str| {
        write_utf8_csv(dir.path(), rows, name, delimiter)
    };
    let expected = "日付,i8,u32,b\r\n\
                    0001-01-01,-128,4294967295,\r\n\
                    0999-12-31,127,0,true\r\n\
                    ,,10,false\r\n\
                    1969-12-31,0,,true\r\n\
                    2024-02-29,-1,1,\r\n\
                    9999-12-31,5,2,false\r\n";
    assert_eq!(write(Value::Table(table.clone()), "c.csv", ","), expected);
    // A delimiter inside the numbers' and dates' text quotes them, as it does the rows'.
    let rows = Value::Table(table.clone()).to_json();
    for (n, delimiter) in ["-", "0", "9", "t"].into_iter().enumerate() {
        let from_table = write(Value::Table(table.clone()), &format!("t{n}.csv"), delimiter);
        let from_rows = write(Value::Json(rows.clone()), &format!("r{n}.csv"), delimiter);
        assert_eq!(from_table, from_rows, "{delimiter}");
    }
    assert!(write(Value::Table(table), "dash.csv", "-").contains("\"0001-01-01\"-\"-128\""));
    // Years past 9999 and before 1 are Polars' text, the same from the table and its rows.
    let far = DataFrame::new(
        3,
        vec![dates(vec![
            Some(day(10000, 1, 1)),
            Some(day(-5, 6, 7)),
            Some(day(2025, 4, 1)),
        ])],
    )
    .unwrap();
    let far_rows = Value::Table(far.clone()).to_json();
    let from_table = write(Value::Table(far), "far.csv", ",");
    assert_eq!(
        from_table,
        write(Value::Json(far_rows), "far_rows.csv", ",")
    );
    assert!(from_table.ends_with("\r\n2025-04-01\r\n"), "{from_table}");
    // Across the pieces of a long table: each date once, in order, its weekday's boolean beside it.
    let n = 140_000usize;
    let start = day(2020, 1, 1);
    let long = DataFrame::new(
        n,
        vec![
            dates((0..n).map(|i| Some(start + (i % 3000) as i32)).collect()),
            Column::new("b".into(), (0..n).map(|i| i % 7 == 0).collect::<Vec<_>>()),
        ],
    )
    .unwrap();
    let text = write(Value::Table(long), "long.csv", ",");
    let lines: Vec<&str> = text.split("\r\n").collect();
    assert_eq!(lines.len(), n + 2, "a header, the rows and the empty end");
    for i in [0usize, 2_999, 3_000, 65_535, 65_536, 131_072, n - 1] {
        let date = chrono::NaiveDate::from_ymd_opt(2020, 1, 1).unwrap()
            + chrono::Duration::days((i % 3000) as i64);
        assert_eq!(
            lines[i + 1],
            format!("{},{}", date.format("%Y-%m-%d"), i % 7 == 0),
            "row {i}"
        );
    }
}

/// A table longer than the block turns into text at a time (65,536 rows): every row once, in
/// order, across the pieces.
#[test]
fn csv_write_writes_every_row_of_a_long_table_in_order() {
    use keiri_run::value::Value;
    use polars::prelude::{Column, DataFrame};
    let n = 150_001usize;
    let ids: Vec<i64> = (0..n as i64).collect();
    let names: Vec<String> = (0..n).map(|i| format!("行{i}")).collect();
    let table = DataFrame::new(
        n,
        vec![
            Column::new("番号".into(), ids),
            Column::new("名前".into(), names),
        ],
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let inputs = vec![
        ("rows", Value::Table(table)),
        ("encoding", Value::Json(json!("utf-8"))),
        ("include_header", Value::Json(json!(false))),
    ];
    let out = crate::matching::run_block_values("csv.write", dir.path(), inputs).unwrap();
    assert_eq!(out["row_count"], n);
    let text = String::from_utf8(std::fs::read(out_path(&out)).unwrap()).unwrap();
    let lines: Vec<&str> = text.split_terminator("\r\n").collect();
    assert_eq!(lines.len(), n);
    for (i, line) in [0usize, 65_535, 65_536, 131_072, 150_000].map(|i| (i, lines[i])) {
        assert_eq!(line, format!("{i},行{i}"));
    }
    assert!(
        lines
            .iter()
            .enumerate()
            .all(|(i, l)| *l == format!("{i},行{i}"))
    );
}

/// A long table and long JSON rows go to the file a piece at a time (65,536 rows): the byte
/// order mark once at the start, and each character CP932 cannot hold reported with its line
/// in the file (the header is line 1, row `i` line `i + 2`), whichever piece it is in.
#[test]
fn csv_write_in_pieces_marks_the_file_once_and_numbers_the_lines_of_its_warnings() {
    use keiri_run::value::Value;
    use polars::prelude::{Column, DataFrame};
    let n = 140_000usize;
    let bad = [3usize, 70_000, 131_073];
    let name = |i: usize| {
        if bad.contains(&i) {
            format!("𠮷野家{i}")
        } else {
            format!("吉野家{i}")
        }
    };
    let table = || {
        DataFrame::new(
            n,
            vec![
                Column::new("番号".into(), (0..n as i64).collect::<Vec<_>>()),
                Column::new("店名".into(), (0..n).map(name).collect::<Vec<_>>()),
            ],
        )
        .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let inputs = vec![
        ("rows", Value::Table(table())),
        ("encoding", Value::Json(json!("cp932"))),
    ];
    let out = crate::matching::run_block_values("csv.write", dir.path(), inputs).unwrap();
    assert_eq!(out["row_count"], n);
    let lines_warned: Vec<String> = out["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().split('行').next().unwrap().to_string())
        .collect();
    assert_eq!(lines_warned, ["5", "70002", "131075"]);
    let bytes = std::fs::read(out_path(&out)).unwrap();
    let (text, _, _) = encoding_rs::SHIFT_JIS.decode(&bytes);
    let lines: Vec<&str> = text.split_terminator("\r\n").collect();
    assert_eq!(lines.len(), n + 1);
    assert_eq!(lines[0], "番号,店名");
    assert_eq!(lines[70_001], "70000,?野家70000");
    assert_eq!(lines[70_002], "70001,吉野家70001");

    // utf-8-sig, the default: the mark once, then every row.
    let inputs = vec![
        ("rows", Value::Table(table())),
        ("out_name", Value::Json(json!("bom.csv"))),
    ];
    let out = crate::matching::run_block_values("csv.write", dir.path(), inputs).unwrap();
    let bytes = std::fs::read(out_path(&out)).unwrap();
    assert_eq!(&bytes[..3], &[0xEF, 0xBB, 0xBF]);
    let text = std::str::from_utf8(&bytes[3..]).unwrap();
    assert!(!text.contains('\u{feff}'));
    let lines: Vec<&str> = text.split_terminator("\r\n").collect();
    assert_eq!(lines.len(), n + 1);
    assert!(
        lines[1..]
            .iter()
            .enumerate()
            .all(|(i, l)| *l == format!("{i},{}", name(i)))
    );

    // A run cancelled while the block writes: it stops at the end of a piece, and neither
    // the file nor a temp file is left.
    let inputs = vec![
        ("rows", Value::Table(table())),
        ("out_name", Value::Json(json!("cancelled.csv"))),
    ];
    let err = crate::matching::run_block_cancelled("csv.write", dir.path(), inputs).unwrap_err();
    assert_eq!(err.code, keiri_run::block::ErrorCode::Cancelled);
    let left: Vec<String> = std::fs::read_dir(dir.path().join("out/outputs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("cancelled"))
        .collect();
    assert_eq!(left, Vec::<String>::new());

    // JSON rows, 70,000 of them: the row in the second piece is line 70,001.
    let rows: Vec<Json> = (0..70_000)
        .map(|i| json!({"店名": if i == 69_999 { "𠮷".to_string() } else { format!("吉野家{i}") }}))
        .collect();
    let out = run(
        "csv.write",
        dir.path(),
        json!({"rows": rows, "encoding": "shift_jis", "out_name": "rows.csv"}),
    );
    assert_eq!(out["row_count"], 70_000);
    let warnings = out["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].as_str().unwrap().starts_with("70001行目"),
        "{warnings:?}"
    );
}

fn journal_rows() -> Json {
    json!([
        {"voucher_no": "J-0301", "date": "2025-03-03", "借方科目": "旅費交通費", "credit_account": "現金",
         "debit_amount": "3,480", "credit_amount": "3,480", "description": "出張交通費 大阪"},
        {"voucher_no": "J-0302", "date": "令和7年3月5日", "借方科目": "普通預金", "credit_account": "売掛金",
         "debit_amount": 330000, "credit_amount": 330000,
         "description": "山田商事 入金 3月分 請求書番号AR-1001 振込手数料なし 消込済み 担当佐藤"},
    ])
}

#[test]
fn journal_export_writes_generic_and_yayoi_layouts() {
    let dir = tempfile::tempdir().unwrap();
    let mapping = json!({"debit_account": "借方科目"});
    let out = run(
        "journal.export",
        dir.path(),
        json!({"entries": journal_rows(), "field_mapping": mapping}),
    );
    assert_eq!(out_path(&out), dir.path().join("out/outputs/journal.csv"));
    let bytes = std::fs::read(out_path(&out)).unwrap();
    assert_eq!(&bytes[..3], &[0xEF, 0xBB, 0xBF]);
    assert_eq!(
        std::str::from_utf8(&bytes[3..]).unwrap(),
        "伝票番号,日付,借方勘定科目,借方補助科目,借方金額,借方税区分,貸方勘定科目,貸方補助科目,貸方金額,貸方税区分,摘要,部門\r\n\
         J-0301,2025/03/03,旅費交通費,,3480,,現金,,3480,,出張交通費 大阪,\r\n\
         J-0302,2025/03/05,普通預金,,330000,,売掛金,,330000,,山田商事 入金 3月分 請求書番号AR-1001 振込手数料なし 消込済み 担当佐藤,\r\n"
    );
    assert_eq!(out["row_count"], 2);
    assert_eq!(out["warnings"], json!([]));

    // Yayoi: no header, 25 columns, identifier 2000, CP932, 摘要 cut at 64 half-width columns.
    let out = run(
        "journal.export",
        dir.path(),
        json!({"entries": journal_rows(), "field_mapping": mapping, "format": "yayoi", "out_name": "yayoi.csv"}),
    );
    let bytes = std::fs::read(out_path(&out)).unwrap();
    let (text, _, bad) = encoding_rs::SHIFT_JIS.decode(&bytes);
    assert!(!bad);
    // "山田商事 入金 3月分 " is 8+1+4+1+5+1 = 20 columns; 請求書番号AR-1001 17 (37), a space
    // (38), 振込手数料なし 14 (52), a space (53), 消込済み 8 (61), a space (62), 担 2 (64): 当 is over.
    assert_eq!(
        text,
        "2000,J-0301,,2025/03/03,旅費交通費,,,,3480,,現金,,,,3480,,出張交通費 大阪,,,0,,,0,0,no\r\n\
         2000,J-0302,,2025/03/05,普通預金,,,,330000,,売掛金,,,,330000,,山田商事 入金 3月分 請求書番号AR-1001 振込手数料なし 消込済み 担,,,0,,,0,0,no\r\n"
    );
    let warnings = out["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].as_str().unwrap().starts_with("2行目"),
        "{warnings:?}"
    );

    // A line with an amount and no account is reported.
    let out = run(
        "journal.export",
        dir.path(),
        json!({"entries": [{"voucher_no": "J-1", "date": "2025-03-31", "debit_amount": 100, "credit_account": "現金", "credit_amount": 100}],
               "out_name": "j.csv"}),
    );
    assert_eq!(out["warnings"].as_array().unwrap().len(), 1);
    assert_eq!(
        error_code(
            "journal.export",
            dir.path(),
            json!({"entries": [], "format": "obic"})
        ),
        ErrorCode::InputInvalid
    );
}

#[test]
fn report_markdown_renders_sections_and_saves_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let sections = json!([
        {"heading": "1. 仕訳チェック", "body": "貸借一致: false",
         "rows": [{"voucher": "J-0304", "check": "balance"}, {"voucher": "J-0306", "check": "zero_amount"}], "max_rows": 1},
        {"heading": "2. 確認事項", "bullets": ["仮払金の解消", "減価償却費の計上"]},
        {"heading": "3. 未処理", "rows": []},
        {"heading": "4. 表の中の区切り", "rows": [{"摘要": "A|B\n改行"}]},
    ]);
    let expected = "# 月次決算チェックリスト\n\n## 1. 仕訳チェック\n\n貸借一致: false\n\n\
                    | voucher | check |\n|---|---|\n| J-0304 | balance |\n\n（ほか 1 行 / 1 more rows）\n\n\
                    ## 2. 確認事項\n\n- 仮払金の解消\n- 減価償却費の計上\n\n\
                    ## 3. 未処理\n\n（該当なし）\n\n\
                    ## 4. 表の中の区切り\n\n| 摘要 |\n|---|\n| A\\|B 改行 |\n";
    let out = run(
        "report.markdown",
        dir.path(),
        json!({"title": "月次決算チェックリスト", "sections": sections}),
    );
    assert_eq!(out["markdown"], expected);
    assert_eq!(out["out_path"], "");
    let out = run(
        "report.markdown",
        dir.path(),
        json!({"title": "月次決算チェックリスト", "sections": sections, "out_dir": "outputs", "out_name": "checklist.md"}),
    );
    assert_eq!(out_path(&out), dir.path().join("out/outputs/checklist.md"));
    assert_eq!(std::fs::read_to_string(out_path(&out)).unwrap(), expected);
    // A file name alone asks for the file too (it used to be ignored without a word).
    let out = run(
        "report.markdown",
        dir.path(),
        json!({"title": "月次決算チェックリスト", "sections": sections, "out_name": "名前だけ.md"}),
    );
    assert_eq!(out_path(&out), dir.path().join("out/名前だけ.md"));
    assert_eq!(std::fs::read_to_string(out_path(&out)).unwrap(), expected);
}

/// Through the engine, which fills spec defaults: a report with neither out_dir nor out_name
/// is not saved (no default name makes it look asked for), and one with a name is.
#[test]
fn report_markdown_in_a_plan_saves_only_when_a_folder_or_a_name_is_given() {
    let plan = |extra: &str| {
        format!(
            "id: t\ngraph:\n  - {{id: md, block: report.markdown, in: {{title: 報告, sections: [{{heading: 概要, body: なし}}]{extra}}}, out: {{out_path: out_path}}}}\n"
        )
    };
    let saved = |extra: &str| {
        let (outcome, _, ws) = crate::support::run_builtins(&[], &plan(extra), |_| {});
        assert_eq!(
            outcome.status,
            keiri_run::RunStatus::Finished,
            "{:?}",
            outcome.failures
        );
        let run_dir = ws.path().join("runs/t");
        let mut found = Vec::new();
        let mut stack = vec![run_dir];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                if e.path().is_dir() {
                    stack.push(e.path());
                } else if e.path().extension().is_some_and(|x| x == "md") {
                    found.push(e.file_name().to_string_lossy().into_owned());
                }
            }
        }
        found
    };
    assert_eq!(saved(""), Vec::<String>::new());
    assert_eq!(saved(", out_name: 月次.md"), ["月次.md"]);
}

#[test]
fn report_summary_groups_findings_by_severity_and_rule() {
    let dir = tempfile::tempdir().unwrap();
    let findings = json!([
        {"rule_id": "PO-01", "severity": "error", "message": "承認者がいません", "amount": 180000},
        {"rule_id": "PO-03", "severity": "warning", "message": "相見積もりが1件です", "amount": 1500000},
        {"rule_id": "PO-02", "severity": "error", "message": "発注者と承認者が同じです", "amount": 1500000},
        {"rule_id": "PO-01", "severity": "error", "message": "承認者がいません", "amount": "¥250,000"},
    ]);
    let out = run(
        "report.summary",
        dir.path(),
        json!({"findings": findings, "amount_field": "amount", "period": "2025年3月", "max_examples": 1}),
    );
    // error before warning; within error the larger group first. PO-01: 180,000 + 250,000.
    assert_eq!(
        out["rows"],
        json!([
            {"severity": "error", "rule_id": "PO-01", "count": 2, "amount": 430000},
            {"severity": "error", "rule_id": "PO-02", "count": 1, "amount": 1500000},
            {"severity": "warning", "rule_id": "PO-03", "count": 1, "amount": 1500000},
        ])
    );
    assert_eq!(
        out["summary"],
        json!({"total_count": 4, "by_severity": {"error": 3, "warning": 1}, "total_amount": 3430000})
    );
    let md = out["markdown"].as_str().unwrap();
    for part in [
        "# 例外レポート\n",
        "対象期間: 2025年3月",
        "総件数: 4 件",
        "金額合計: 3,430,000 円",
        "## エラー / PO-01（2 件）",
        "金額: 430,000 円",
        "| ルール | 重要度 | 内容 | 金額 |",
        "| PO-01 | エラー | 承認者がいません | 180000 |",
        "（ほか 1 件）",
        "## 警告 / PO-03（1 件）",
    ] {
        assert!(md.contains(part), "{part:?} missing in\n{md}");
    }
    assert!(!md.contains(" / Total") && !md.contains("more"), "{md}");
    // The findings themselves, in the groups' order, for a table under the counts.
    let rules: Vec<&Json> = out["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["rule_id"])
        .collect();
    assert_eq!(rules, ["PO-01", "PO-01", "PO-02", "PO-03"]);
    // Findings without severity or rule_id (duplicate invoices) are grouped by their reason.
    let out = run(
        "report.summary",
        dir.path(),
        json!({"findings": [{"cluster_id": 1, "reason": "exact_duplicate"}, {"cluster_id": 1, "reason": "exact_duplicate"},
                            {"cluster_id": 2, "reason": "similar_invoice_no"}]}),
    );
    assert_eq!(
        out["rows"],
        json!([{"reason": "exact_duplicate", "count": 2}, {"reason": "similar_invoice_no", "count": 1}])
    );
    assert_eq!(out["summary"], json!({"total_count": 3, "by_severity": {}}));
    let md = out["markdown"].as_str().unwrap();
    assert!(md.contains("## 同じ請求書（完全一致）（2 件）"), "{md}");
    assert!(md.contains("| グループ | 理由 |"), "{md}");

    // A policy violation carries the row it is about: its columns come beside the
    // violation's own in the details, and nested values (a match's source rows) are left out
    // rather than written as JSON. Clusters stay together within their group.
    let out = run(
        "report.summary",
        dir.path(),
        json!({"findings": [
            {"rule_id": "R1", "severity": "error", "row_index": 0, "row": {"po_no": "P-1", "rule_id": "shadowed", "lines": [1, 2]}},
            {"reason": "x", "cluster_id": 2, "rows": [{"a": 1}]},
            {"reason": "x", "cluster_id": 1, "rows": [{"a": 2}]},
        ], "group_by": ["reason"]}),
    );
    assert_eq!(
        out["details"],
        json!([
            {"reason": "x", "cluster_id": 1},
            {"reason": "x", "cluster_id": 2},
            {"rule_id": "R1", "severity": "error", "row_index": 0, "po_no": "P-1"},
        ])
    );
}

/// What a written file changed or holds that the receiving software will refuse is a warning
/// of the run, not only a line of the block's `warnings` output: a CP932 file with `?` for a
/// character it cannot hold, and a 弥生 journal with a date and an amount written as they
/// were given, a side with an amount but no account and a description cut short.
#[test]
fn writers_warn_the_run_of_what_their_files_changed_or_cannot_carry() {
    let dir = tempfile::tempdir().unwrap();
    let write = |id: &str, inputs: Json| {
        let (result, notes) = crate::matching::run_block_noted(id, dir.path(), inputs, &[]);
        let warnings = crate::matching::warnings_of(notes);
        (result.unwrap(), warnings)
    };
    // Lines 2, 4 and 5 (after the header) hold characters CP932 lacks: 𠮷 (U+20BB7) and 🍣
    // (U+1F363); 髙 (an IBM extension) is in CP932.
    let shops =
        json!([{"店名": "𠮷野家"}, {"店名": "髙島屋"}, {"店名": "🍣屋"}, {"店名": "𠮷田と𠮷川"}]);
    let (out, warnings) = write(
        "csv.write",
        json!({"rows": shops, "encoding": "cp932", "out_name": "shops.csv"}),
    );
    let bytes = std::fs::read(out_path(&out)).unwrap();
    let (text, _, _) = encoding_rs::SHIFT_JIS.decode(&bytes);
    assert_eq!(text, "店名\r\n?野家\r\n髙島屋\r\n?屋\r\n?田と?川\r\n");
    assert_eq!(out["warnings"].as_array().unwrap().len(), 4);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].code, "CHARACTERS_REPLACED");
    assert_eq!(
        warnings[0].message_en,
        "4 characters CP932 (Shift_JIS) cannot hold were written as ? in shops.csv: write it as \
         UTF-8 (utf-8-sig), or change them at the source (line 2 '𠮷' (U+20BB7); line 4 '🍣' \
         (U+1F363); line 5 '𠮷' (U+20BB7) and 1 more)"
    );
    assert_eq!(
        warnings[0].message_ja,
        "shops.csv の 4 文字は CP932（Shift_JIS）で表せないため ? に置き換えて書き出しました。\
         UTF-8（utf-8-sig）で書き出すか、元の文字を直してください\
         （2行目 '𠮷' (U+20BB7)、4行目 '🍣' (U+1F363)、5行目 '𠮷' (U+20BB7) ほか 1 件）"
    );
    // The same rows as UTF-8 lose nothing and warn nothing.
    let (_, warnings) = write(
        "csv.write",
        json!({"rows": shops, "encoding": "utf-8-sig", "out_name": "shops_utf8.csv"}),
    );
    assert_eq!(warnings, []);

    // A 弥生 journal (CP932, no header: entry n is line n).
    let long = "東京都千代田区丸の内一丁目九番二号グラントウキョウサウスタワー会議室利用料";
    let entries = json!([
        {"voucher_no": "J-1", "date": "R6.13.45", "debit_account": "会議費", "debit_amount": 1000,
         "credit_account": "現金", "credit_amount": 1000, "description": "𠮷野家 会食"},
        {"voucher_no": "J-2", "date": "2025/03/05", "debit_account": "", "debit_amount": "2,000",
         "credit_account": "現金", "credit_amount": "二千円"},
        {"voucher_no": "J-3", "date": "2025/03/06", "debit_account": "地代家賃", "debit_amount": 500,
         "credit_account": "現金", "credit_amount": 500, "description": long},
    ]);
    let (out, warnings) = write(
        "journal.export",
        json!({"entries": entries, "format": "yayoi", "out_name": "yayoi.csv"}),
    );
    let bytes = std::fs::read(out_path(&out)).unwrap();
    let (text, _, _) = encoding_rs::SHIFT_JIS.decode(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("2000,J-1,,R6.13.45,会議費,"), "{text}");
    assert!(lines[0].contains(",?野家 会食,"), "{text}");
    assert!(lines[1].contains(",,2000,,現金,,,,二千円,"), "{text}");
    // 32 full-width characters of the 37 (17 of the address, 14 of the tower, 会).
    assert!(
        lines[2].contains(",東京都千代田区丸の内一丁目九番二号グラントウキョウサウスタワー会,"),
        "{text}"
    );
    let codes: Vec<&str> = warnings.iter().map(|w| w.code.as_str()).collect();
    assert_eq!(
        codes,
        [
            "VALUES_UNREADABLE",
            "VALUES_UNREADABLE",
            "VALUES_MISSING",
            "VALUE_TRUNCATED",
            "CHARACTERS_REPLACED"
        ]
    );
    let en: Vec<&str> = warnings.iter().map(|w| w.message_en.as_str()).collect();
    assert_eq!(
        en[0],
        "yayoi.csv: 1 date could not be read and was written as it was given: the accounting \
         software will refuse it or read another date (line 1 \"R6.13.45\")"
    );
    assert_eq!(
        en[1],
        "yayoi.csv: 1 amount could not be read and was written as it was given: the accounting \
         software will refuse it (line 2 \"二千円\")"
    );
    assert_eq!(
        en[2],
        "yayoi.csv: 1 side has an amount but no account: the accounting software will refuse \
         those lines (line 2 debit)"
    );
    assert_eq!(
        en[3],
        "yayoi.csv: 1 description was cut to Yayoi's 32 full-width characters (line 3)"
    );
    assert!(
        en[4]
            .starts_with("1 character CP932 (Shift_JIS) cannot hold was written as ? in yayoi.csv"),
        "{}",
        en[4]
    );
    assert!(en[4].ends_with("(line 1 '𠮷' (U+20BB7))"), "{}", en[4]);
    assert_eq!(
        warnings[1].message_ja,
        "yayoi.csv の 1 行は金額を読めないため、書かれたままの値を書き出しました。\
         会計ソフトは取り込めません（2行目 \"二千円\"）"
    );
    assert_eq!(
        warnings[2].message_ja,
        "yayoi.csv の 1 か所は金額があるのに勘定科目が空です。会計ソフトはその行を取り込めません（2行目 借方）"
    );
    // The block's own list says the same, line by line, in the run's language.
    assert_eq!(out["warnings"].as_array().unwrap().len(), 5);
}

/// A guarded change whose cell no longer holds what the plan expected is skipped and the
/// workbook saved with the others: the run says which cells kept their value.
#[test]
fn patch_workbook_warns_the_run_of_changes_it_did_not_apply() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet().set_name("試算表").unwrap();
    sheet.write_string(0, 0, "現金").unwrap();
    sheet.write_number(0, 1, 520000).unwrap();
    sheet.write_string(1, 0, "預金").unwrap();
    sheet.write_number(1, 1, 1200000).unwrap();
    book.save(dir.path().join("試算表.xlsx")).unwrap();
    // Someone already changed B1 from 500,000 to 520,000: the plan's guarded write of B1 is
    // skipped; B2 (as expected) and C1 (unguarded) are written.
    let ops = json!([
        {"op": "set_value_if", "sheet": "試算表", "cell": "B1", "expected": 500000, "value": 530000},
        {"op": "set_value_if", "sheet": "試算表", "cell": "B2", "expected": 1200000, "value": 1250000},
        {"op": "set_value", "sheet": "試算表", "cell": "C1", "value": "確認済"},
    ]);
    let (out, notes) = crate::matching::run_block_noted(
        "excel.patch_workbook",
        dir.path(),
        json!({"xlsx_path": "試算表.xlsx", "operations": ops}),
        &[],
    );
    let out = out.unwrap();
    let grid = cells(&out_path(&out), "試算表");
    assert_eq!(grid[0][1], Data::Float(520000.0));
    assert_eq!(grid[1][1], Data::Float(1250000.0));
    assert_eq!(grid[0][2], s("確認済"));
    let warnings = crate::matching::warnings_of(notes);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].code, "OPS_SKIPPED");
    assert_eq!(
        warnings[0].message_en,
        "the workbook was saved without 1 of the plan's changes: the cell did not hold what the \
         plan expected (試算表!B1); warnings gives what each expected and found"
    );
    assert!(
        warnings[0]
            .message_ja
            .starts_with("1 件の変更は、セルの値が計画の想定と違うため"),
        "{}",
        warnings[0].message_ja
    );
    let listed = out["warnings"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert!(
        listed[0].as_str().unwrap().contains("skipped at 試算表!B1"),
        "{listed:?}"
    );
}
