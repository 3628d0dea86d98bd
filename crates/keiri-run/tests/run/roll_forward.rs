//! `closing/period_roll_forward` end to end on `samples/retirement_schedule.xlsx` and
//! `samples/retirement_changes.csv`: last quarter's sheet copied, the period end set, the
//! leavers' rows found by employee number (one typed full-width) and greyed, the joiners
//! appended into the prepared rows and past them, the provision total extended, and in a
//! first quarter the year-to-date total reset. Every expected cell is worked out by hand in
//! `samples/README.md`; serials count from 2025-01-01 = 45658.

use std::collections::BTreeMap;
use std::path::Path;

use calamine::{Data, Reader, Xlsx, open_workbook};
use keiri_run::state::{NodeStatus, RunStatus};
use serde_json::{Value as Json, json};

use crate::templates::{Workspace, run_templates};

const TEMPLATE: &str = "closing/period_roll_forward.yaml";

/// Every cell of a sheet as calamine reads it: values, and `=formula` where there is one.
fn sheet(path: &Path, name: &str) -> BTreeMap<String, String> {
    let mut wb: Xlsx<_> = open_workbook(path).unwrap();
    let mut out = BTreeMap::new();
    let values = wb.worksheet_range(name).unwrap();
    let (r0, c0) = values.start().unwrap();
    for (r, c, v) in values.used_cells() {
        let text = match v {
            Data::Empty => continue,
            Data::Float(f) => format!("{f}"),
            Data::Int(i) => format!("{i}"),
            Data::DateTime(d) => format!("{}", d.as_f64()),
            other => other.to_string(),
        };
        out.insert(a1(r0 as usize + r, c0 as usize + c), text);
    }
    let formulas = wb.worksheet_formula(name).unwrap();
    if let Some((r0, c0)) = formulas.start() {
        for (r, c, f) in formulas.used_cells() {
            if !f.is_empty() {
                out.insert(a1(r0 as usize + r, c0 as usize + c), format!("={f}"));
            }
        }
    }
    out
}

fn a1(row: usize, col: usize) -> String {
    let mut name = String::new();
    let mut n = col + 1;
    while n > 0 {
        name.insert(0, (b'A' + ((n - 1) % 26) as u8) as char);
        n = (n - 1) / 26;
    }
    format!("{name}{}", row + 1)
}

/// Every zip entry's name and (decompressed) bytes.
fn parts(path: &Path) -> BTreeMap<String, Vec<u8>> {
    use std::io::Read;
    let mut z = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    (0..z.len())
        .map(|i| {
            let mut f = z.by_index(i).unwrap();
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes).unwrap();
            (f.name().unwrap().to_string(), bytes)
        })
        .collect()
}

fn names(path: &Path) -> Vec<String> {
    let wb: Xlsx<_> = open_workbook(path).unwrap();
    wb.sheet_names()
}

/// The value the engine computed for a formula cell the run wrote, from the diff's detail.
fn computed(diff: &Json, cell: &str) -> Json {
    diff.as_array()
        .unwrap()
        .iter()
        .find(|d| d["cell"] == cell)
        .unwrap_or_else(|| panic!("no diff item for {cell}"))["detail"]["computed"]
        .clone()
}

#[test]
fn a_quarter_rolls_forward_with_leavers_updated_and_joiners_appended() {
    let ws = Workspace::new();
    let ran = run_templates(
        &ws,
        &[TEMPLATE],
        json!({"prior_workbook": "samples/retirement_schedule.xlsx",
               "changes_csv": "samples/retirement_changes.csv"}),
    );
    assert_eq!(ran.status, RunStatus::Finished, "{:?}", ran.failures);
    assert!(ran.nodes.len() <= 12, "{} nodes", ran.nodes.len());
    // 2025-03-31 closes the fourth quarter of an April year: no reset.
    assert_eq!(
        ran.status("period_roll_forward__reset"),
        Some(NodeStatus::Skipped)
    );
    let out = ran.output("period_roll_forward__roll", "out_path");
    let out = Path::new(out.as_str().unwrap());
    assert_eq!(names(out), ["2025.3", "2024.12"]);
    let new = sheet(out, "2025.3");
    let old = sheet(out, "2024.12");
    // Last quarter's sheet is as it was, byte for byte, and so is every part but the three
    // that list the sheets and the styles (the new dates' and the grey's formats).
    let input = ws.dir.path().join("samples/retirement_schedule.xlsx");
    let (before, after) = (parts(&input), parts(out));
    for (name, bytes) in &before {
        if matches!(
            name.as_str(),
            "[Content_Types].xml"
                | "xl/workbook.xml"
                | "xl/_rels/workbook.xml.rels"
                | "xl/styles.xml"
        ) {
            continue;
        }
        assert!(after.get(name) == Some(bytes), "{name} changed");
    }
    assert_eq!(
        after.keys().filter(|k| !before.contains_key(*k)).count(),
        1,
        "one new part: the copied sheet"
    );
    assert_eq!(old, sheet(&input, "2024.12"));
    let at = |cell: &str| new.get(cell).cloned().unwrap_or_default();
    assert_eq!(at("D2"), "45747", "the period end 2025-03-31");
    // Leavers: 佐藤花子 (row 7) left 2025-02-28 with 1,200,000; 高橋美咲 (row 9, keyed
    // ＥＭＰ００４ in the export) 2025-03-31 with 800,000. 鈴木一郎 left last quarter: unchanged.
    assert_eq!((at("E7"), at("F7")), ("45716".into(), "1200000".into()));
    assert_eq!((at("E9"), at("F9")), ("45747".into(), "800000".into()));
    assert_eq!((at("E8"), at("F8")), (old["E8"].clone(), old["F8"].clone()));
    // Joiners of January to March fill the prepared rows 11 and 12, then row 13 with row
    // 12's formulas; 加藤恵子 joins in April, next quarter.
    assert_eq!(
        [at("A11"), at("A12"), at("A13"), at("A14")],
        ["EMP006", "EMP007", "EMP008", ""]
    );
    assert_eq!(
        [at("D11"), at("D12"), at("D13")],
        ["45663", "45689", "45719"]
    );
    assert_eq!(at("C13"), "主任");
    assert_eq!(at("G13"), "=IF(D13=\"\",\"\",DATEDIF(D13,$D$2,\"y\"))");
    assert_eq!(at("H13"), "=IF(D13=\"\",\"\",IF(E13<>\"\",0,G13*100000))");
    // The provision total reaches the new row: 田中 12 years and 伊藤 2 years at 100,000
    // a year; the leavers and the joiners (under a year) add nothing: 1,400,000.
    assert_eq!(at("G3"), "=SUM(H6:H13)");
    let diff = ran.output("period_roll_forward__roll", "patch_diff");
    assert_eq!(computed(&diff, "G3"), json!(1_400_000));
    assert_eq!(computed(&diff, "G13"), json!(0));
    let warnings = ran.output("period_roll_forward__roll", "warnings");
    assert!(
        warnings
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("=SUM(H6:H12) → =SUM(H6:H13)")),
        "{warnings}"
    );
}

#[test]
fn the_first_quarter_of_a_year_resets_the_year_to_date_total() {
    let ws = Workspace::new();
    let q4 = run_templates(
        &ws,
        &[TEMPLATE],
        json!({"prior_workbook": "samples/retirement_schedule.xlsx",
               "changes_csv": "samples/retirement_changes.csv"}),
    );
    let rolled = q4.output("period_roll_forward__roll", "out_path");
    let bytes = std::fs::read(rolled.as_str().unwrap()).unwrap();
    keiri_fs::write_atomic(&ws.dir.path().join("closed_2025q4.xlsx"), &bytes).unwrap();
    let ran = run_templates(
        &ws,
        &[TEMPLATE],
        json!({"prior_workbook": "closed_2025q4.xlsx",
               "changes_csv": "samples/retirement_changes.csv",
               "prior_sheet": "2025.3", "new_sheet": "2025.6", "period_end": "2025-06-30",
               "out_name": "schedule_2025q1.xlsx"}),
    );
    assert_eq!(ran.status, RunStatus::Finished, "{:?}", ran.failures);
    assert_eq!(
        ran.status("period_roll_forward__reset"),
        Some(NodeStatus::Finished)
    );
    let out = ran.output("period_roll_forward__reset", "out_path");
    let out = Path::new(out.as_str().unwrap());
    assert_eq!(names(out), ["2025.6", "2025.3", "2024.12"]);
    let new = sheet(out, "2025.6");
    assert_eq!(new["D3"], "0", "the year-to-date payments start again");
    assert_eq!(sheet(out, "2025.3")["D3"], "650000");
    // 加藤恵子 joined 2025-04-01: the only April-to-June change, after EMP008 in row 13.
    assert_eq!(new["A14"], "EMP009");
    assert_eq!(new["D14"], "45748");
    assert!(!new.contains_key("A15"));
    assert_eq!(new["D2"], "45838", "2025-06-30 is 45658 + 180");
}

const LOOKUP: &str = r#"id: lookup
graph:
  - id: read
    block: csv.read
    in: {path: samples/retirement_changes.csv}
    out: {rows: rows}
  - id: find
    block: excel.lookup_rows
    in:
      path: WORKBOOK
      sheet: "2024.12"
      header_row: 5
      key_column: 社員番号
      rows: ${read.rows}
    out: {rows: rows, missing: missing, count: count}
"#;

/// `excel.lookup_rows` gives the sheet's row of each key, the full-width one included; the
/// keys the sheet does not have go to `missing` with a warning; a key in two rows fails.
#[test]
fn lookup_rows_finds_each_key_and_names_the_missing_ones() {
    let ws = Workspace::new();
    let yaml = LOOKUP.replace("WORKBOOK", "samples/retirement_schedule.xlsx");
    let (outcome, _) = crate::support::run_in(ws.dir.path(), &yaml, |_| {});
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    let dir =
        keiri_run::RunDir::open(&ws.dir.path().join("runs"), "lookup", &outcome.run_id).unwrap();
    let outputs = dir.load_outputs("find").unwrap().0;
    let found = outputs["rows"].to_json();
    let pairs: Vec<(String, u64)> = found
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["社員番号"].as_str().unwrap().to_string(),
                r["row"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        pairs,
        [
            ("EMP002".to_string(), 7),
            ("ＥＭＰ００４".to_string(), 9),
            ("EMP003".to_string(), 8)
        ]
    );
    let missing = outputs["missing"].to_json();
    assert_eq!(missing.as_array().unwrap().len(), 4, "EMP006 to EMP009");
    let warning = outcome
        .warnings
        .iter()
        .find(|w| w.code == "KEYS_NOT_FOUND")
        .expect("a warning names the keys not found");
    assert!(
        warning
            .message_ja
            .starts_with("4 件のキーが 2024.12 の A 列にありません")
            && warning.message_en.contains("\"EMP006\""),
        "{warning:?}"
    );

    // The same key twice in the sheet: which row is meant cannot be decided.
    let env = keiri_xlsx::PatchEnv::new(keiri_fs::PathPolicy::new([ws.dir.path()]));
    let req: keiri_xlsx::PatchRequest = serde_json::from_value(json!({
        "xlsx_path": "samples/retirement_schedule.xlsx",
        "out_dir": ".",
        "out_name": "twice.xlsx",
        "ops": [{"op": "append_rows", "sheet": "2024.12", "header_row": 5,
            "rows": [{"社員番号": "emp003", "氏名": "鈴木一郎（二重登録）"}]}],
    }))
    .unwrap();
    let res = keiri_xlsx::patch(&req, &env).unwrap();
    assert!(res.error.is_none(), "{:?}", res.error);
    let yaml = LOOKUP.replace("WORKBOOK", "twice.xlsx");
    let (outcome, _) = crate::support::run_in(ws.dir.path(), &yaml, |_| {});
    assert_eq!(outcome.status, RunStatus::Failed);
    let failure = &outcome.failures[0];
    assert_eq!(failure.node, "find");
    assert!(
        failure.message_en.contains("rows 8, 11 of 2024.12"),
        "{failure:?}"
    );
}

/// The same changes exported with dates written as people write them (2025/01/06, 令和7年2月1日,
/// R7.3.3): read as the same dates, so no joiner or leaver is left out of the quarter.
#[test]
fn dates_written_every_which_way_find_the_same_joiners_and_leavers() {
    let ws = Workspace::new();
    let messy = "社員番号,氏名,役職,入社日,退職年月日,退職金支給額\r\n\
        EMP002,佐藤花子,主任,2016/10/01,2025/02/28,1200000\r\n\
        ＥＭＰ００４,高橋美咲,部長,2008-04-01,令和7年3月31日,800000\r\n\
        EMP006,山本翔,一般職,2025/01/06,,\r\n\
        EMP007,中村麻衣,一般職,令和7年2月1日,,\r\n\
        EMP008,小林正雄,主任,R7.3.3,,\r\n\
        EMP009,加藤恵子,一般職,2025/4/1,,\r\n\r\n";
    keiri_fs::write_atomic(&ws.dir.path().join("changes_messy.csv"), messy.as_bytes()).unwrap();
    let ran = run_templates(
        &ws,
        &[TEMPLATE],
        json!({"prior_workbook": "samples/retirement_schedule.xlsx",
               "changes_csv": "changes_messy.csv"}),
    );
    assert_eq!(ran.status, RunStatus::Finished, "{:?}", ran.failures);
    let out = ran.output("period_roll_forward__roll", "out_path");
    let new = sheet(Path::new(out.as_str().unwrap()), "2025.3");
    let at = |cell: &str| new.get(cell).cloned().unwrap_or_default();
    assert_eq!(
        (at("E7"), at("E9")),
        ("45716".to_string(), "45747".to_string())
    );
    assert_eq!(
        [at("A11"), at("A12"), at("A13"), at("A14")],
        ["EMP006", "EMP007", "EMP008", ""]
    );
    assert_eq!(
        [at("D11"), at("D12"), at("D13")],
        ["45663", "45689", "45719"]
    );
}
