//! A `csv.read` and the row-by-row steps after it run as one pass over the file
//! (`engine/fused.rs`): every node's record and every answer are the ones node-by-node
//! execution gives, a piece that would not come out the same makes the pass void, and a
//! resume after a failure past the pass gives the same totals.

use keiri_run::{Event, RunDir, RunStatus};
use serde_json::{Value as Json, json};

use crate::support::run_in;

/// One block of a 弥生-style export: 和暦 and full-width dates, `￥`, `△`, full-width digits,
/// quoted commas and quotes, vendor name variants and a blank `,,,,,,` line. By hand, per
/// block: 旅費交通費 2024-04 is 12,800 + 2,400 = 15,200 (2 rows) and 2024-05 is 220;
/// (the first row's day is the block's number mod 28, plus one: firsts and lasts differ);
/// 消耗品費 2024-04 is −500 and 2024-05 is 3,300; 売上高 2024-05 is 1,100,000. Six rows.
const BLOCK: &str = "2024/04/{d},{n},旅費交通費,大阪支店,株式会社山田商事,\"12,800\",\"新幹線, 東京\"\r\n\
    R6.4.15,{n},旅費交通費,東京支店,山田商事（株）,\"￥2,400\",タクシー\r\n\
    令和6年4月30日,{n},消耗品費,東京支店,ｱｽｸﾙ,△500,\"\"\"A4\"\" 用紙 返品\"\r\n\
    ,,,,,,\r\n\
    ２０２４／０５／０１,{n},消耗品費,大阪支店,アスクル,\"3,300\",トナー\r\n\
    2024-05-20,{n},旅費交通費,東京支店,東京バス,２２０,バス\r\n\
    2024/05/31,{n},売上高,本社,株式会社佐藤,\"1,100,000\",5月分\r\n";

/// Blocks in the file: 120,000 rows, about 10 MB of text, so the read hands the pass three
/// pieces (of 4 MiB of text).
const BLOCKS: usize = 20_000;

/// The journal in CP932, `last` replacing the last block's first line, with two blank lines
/// at its end.
fn journal(last: Option<&str>) -> Vec<u8> {
    let mut text = String::from("伝票日付,伝票番号,勘定科目,部門,取引先,金額,摘要\r\n");
    for n in 0..BLOCKS {
        let day = format!("{:02}", n % 28 + 1);
        let block = BLOCK.replace("{n}", &n.to_string()).replace("{d}", &day);
        match last {
            Some(line) if n + 1 == BLOCKS => {
                let (_, rest) = block.split_once("\r\n").unwrap();
                text.push_str(line);
                text.push_str("\r\n");
                text.push_str(rest);
            }
            _ => text.push_str(&block),
        }
    }
    text.push_str("\r\n\r\n");
    // Pieces are 4 MiB of decoded text.
    assert!(text.len() > 8 << 20, "three pieces: {}", text.len());
    let (bytes, _, lossy) = encoding_rs::SHIFT_JIS.encode(&text);
    assert!(!lossy);
    bytes.into_owned()
}

/// The totals by hand for `BLOCKS` blocks: (account, month, total, rows), sorted.
fn expected() -> Json {
    let n = BLOCKS as i64;
    json!([
        ["売上高", "2024-05", 1_100_000 * n, n],
        ["旅費交通費", "2024-04", 15_200 * n, 2 * n],
        ["旅費交通費", "2024-05", 220 * n, n],
        ["消耗品費", "2024-04", -500 * n, n],
        ["消耗品費", "2024-05", 3_300 * n, n],
    ])
}

const PLAN: &str = r#"
id: fused
vars: {by: 勘定科目, on_error: error}
graph:
  - {id: read, block: csv.read, in: {path: journal.csv}, out: {rows: rows}}
  - {id: dates, block: transforms.normalize_dates, in: {rows: "${read.rows}", fields: [伝票日付], on_error: "${vars.on_error}"}, out: {rows: rows}}
  - {id: keep, block: transforms.filter_rows, in: {rows: "${dates.rows}", condition: '{condition}'}, out: {rows: rows}}
  - {id: month, block: transforms.fiscal_period, in: {rows: "${keep.rows}", date_field: 伝票日付}, out: {rows: rows}}
  - {id: amounts, block: transforms.normalize_amounts, in: {rows: "${month.rows}", fields: [金額]}, out: {rows: rows}}
  - {id: pick, block: transforms.select_columns, in: {rows: "${amounts.rows}", columns: [勘定科目, year_month, 金額, 伝票日付]}, out: {rows: rows}}
  - id: totals
    block: transforms.group_aggregate
    in:
      rows: "${pick.rows}"
      by: ["${vars.by}", year_month]
      aggregations:
        - {field: 金額, op: sum, as: 金額合計}
        - {field: 金額, op: count, as: 件数}
        - {field: 金額, op: mean, as: 平均}
        - {field: 金額, op: min, as: 最小}
        - {field: 金額, op: max, as: 最大}
        - {field: 伝票日付, op: first, as: 最初}
        - {field: 伝票日付, op: last, as: 最後}
    out: {rows: rows}
"#;

const NODES: [&str; 7] = [
    "read", "dates", "keep", "month", "amounts", "pick", "totals",
];

/// A run of `PLAN` (its filter leaving out nothing) with the pass on or off and the vars
/// given.
fn run(
    ws: &std::path::Path,
    fused: bool,
    vars: &[(&str, &str)],
) -> (keiri_run::RunOutcome, Vec<Event>) {
    run_filtered(ws, fused, vars, r#"勘定科目 != "雑費""#)
}

/// [`run`] with the filter's condition `condition` (written into the plan: a condition
/// from a var is read only at run time, so the read would parse every column, and no pass).
fn run_filtered(
    ws: &std::path::Path,
    fused: bool,
    vars: &[(&str, &str)],
    condition: &str,
) -> (keiri_run::RunOutcome, Vec<Event>) {
    run_in(ws, &PLAN.replace("{condition}", condition), |o| {
        o.fused = fused;
        for (k, v) in vars {
            o.vars.insert((*k).into(), json!(v));
        }
    })
}

fn workspace(file: &[u8]) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    keiri_fs::write_atomic(&ws.path().join("journal.csv"), file).unwrap();
    ws
}

/// What the window and `run_output` show of each node: its outputs as shown (first rows),
/// its kept-in-part counts, and its `node_finish` (rows, output summaries).
fn record(ws: &std::path::Path, outcome: &keiri_run::RunOutcome, events: &[Event]) -> Json {
    let dir = RunDir::open(&ws.join("runs"), &outcome.plan_id, &outcome.run_id).unwrap();
    let mut out = serde_json::Map::new();
    for node in NODES {
        let shown: serde_json::Map<String, Json> = dir
            .load_shown(node)
            .unwrap()
            .0
            .iter()
            .map(|(k, v)| (k.clone(), v.to_json()))
            .collect();
        let kept: Json = dir
            .kept_in_part(node)
            .unwrap()
            .iter()
            .map(|(k, kept)| (k.clone(), json!(kept.rows)))
            .collect::<serde_json::Map<_, _>>()
            .into();
        let finish = events.iter().find_map(|e| match e {
            Event::NodeFinish {
                node: n,
                rows,
                outputs,
                ..
            } if n == node => Some(json!({"rows": rows, "outputs": outputs})),
            _ => None,
        });
        out.insert(
            node.into(),
            json!({"shown": shown, "kept": kept, "finish": finish}),
        );
    }
    out.into()
}

/// Fails at the first place `a` and `b` differ, naming it (the records are long).
fn same(a: &Json, b: &Json) {
    fn walk(a: &Json, b: &Json, at: &str) {
        match (a, b) {
            (Json::Object(x), Json::Object(y)) => {
                let keys =
                    |m: &serde_json::Map<String, Json>| m.keys().cloned().collect::<Vec<_>>();
                assert_eq!(keys(x), keys(y), "keys at {at}");
                for (k, v) in x {
                    walk(v, &y[k], &format!("{at}/{k}"));
                }
            }
            (Json::Array(x), Json::Array(y)) => {
                assert_eq!(x.len(), y.len(), "length at {at}");
                for (i, (v, w)) in x.iter().zip(y).enumerate() {
                    walk(v, w, &format!("{at}/{i}"));
                }
            }
            _ => assert_eq!(a, b, "at {at}"),
        }
    }
    walk(a, b, "");
}

/// Whether the read's rows went through the pass: a table a pass handed on is kept without a
/// digest (`Kept`), one read whole with one.
fn passed(ws: &std::path::Path, outcome: &keiri_run::RunOutcome) -> bool {
    let dir = RunDir::open(&ws.join("runs"), &outcome.plan_id, &outcome.run_id).unwrap();
    dir.kept_in_part("read").unwrap()["rows"].digest.is_empty()
}

fn totals(ws: &std::path::Path, outcome: &keiri_run::RunOutcome) -> Json {
    let dir = RunDir::open(&ws.join("runs"), &outcome.plan_id, &outcome.run_id).unwrap();
    crate::projection::totals(&dir)
}

#[test]
fn a_pass_over_the_file_records_what_node_by_node_execution_records() {
    let ws = workspace(&journal(None));
    let (fused, fused_events) = run(ws.path(), true, &[]);
    let (plain, plain_events) = run(ws.path(), false, &[]);
    for outcome in [&fused, &plain] {
        assert_eq!(
            outcome.status,
            RunStatus::Finished,
            "{:?}",
            outcome.failures
        );
        assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
        assert_eq!(totals(ws.path(), outcome), expected());
    }
    assert!(passed(ws.path(), &fused));
    assert!(!passed(ws.path(), &plain));
    same(
        &record(ws.path(), &fused, &fused_events),
        &record(ws.path(), &plain, &plain_events),
    );
    // Every row read, each step's count the read's, the first rows shown as read.
    let rows = record(ws.path(), &fused, &fused_events);
    for node in ["read", "dates", "keep", "month", "amounts", "pick"] {
        assert_eq!(rows[node]["finish"]["rows"], json!(6 * BLOCKS), "{node}");
    }
    assert_eq!(
        rows["month"]["shown"]["rows"][2],
        json!({"伝票日付": "2024-04-30", "勘定科目": "消耗品費", "金額": "△500",
               "fiscal_year": 2024, "fiscal_quarter": 1, "fiscal_month": 1, "year_month": "2024-04"})
    );
}

#[test]
fn a_date_that_is_not_one_in_the_last_piece_gives_node_by_node_errors_and_warnings() {
    // The last row but five: a date no reader takes, with `on_error: keep` (listed, warned)
    // and `error` (the run fails at that row).
    let line = "2024/13/45,x,旅費交通費,大阪支店,株式会社山田商事,\"12,800\",誤入力";
    let ws = workspace(&journal(Some(line)));
    for on_error in ["keep", "error"] {
        let vars = [("on_error", on_error)];
        let (fused, fused_events) = run(ws.path(), true, &vars);
        let (plain, plain_events) = run(ws.path(), false, &vars);
        assert_eq!(fused.status, plain.status, "{on_error}");
        assert_eq!(fused.failures, plain.failures, "{on_error}");
        assert_eq!(fused.warnings, plain.warnings, "{on_error}");
        let finishes = |events: &[Event]| {
            events
                .iter()
                .filter(|e| matches!(e, Event::NodeFinish { .. } | Event::NodeError { .. }))
                .map(|e| serde_json::to_value(e).unwrap())
                .map(|mut e| {
                    e.as_object_mut().unwrap().remove("duration_ms");
                    e
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            finishes(&fused_events),
            finishes(&plain_events),
            "{on_error}"
        );
        // The pass did not stand: the file was read again and the steps ran one by one.
        let dir = RunDir::open(&ws.path().join("runs"), "fused", &fused.run_id).unwrap();
        assert!(!dir.kept_in_part("read").unwrap()["rows"].digest.is_empty());
    }
    let (kept, _) = run(ws.path(), true, &[("on_error", "keep")]);
    assert_eq!(kept.warnings.len(), 1, "{:?}", kept.warnings);
    let dir = RunDir::open(&ws.path().join("runs"), "fused", &kept.run_id).unwrap();
    let errors = dir
        .load_shown("dates")
        .unwrap()
        .get("errors")
        .unwrap()
        .to_json();
    // 19,999 blocks of six rows before it: the whole table's row number.
    assert_eq!(errors[0]["row_index"], json!(6 * (BLOCKS - 1)));
    let (failed, _) = run(ws.path(), true, &[]);
    assert_eq!(failed.status, RunStatus::Failed);
    assert!(
        failed.failures[0]
            .message_en
            .contains(&format!("row {}", 6 * (BLOCKS - 1))),
        "{:?}",
        failed.failures
    );
}

#[test]
fn amounts_whole_in_the_first_pieces_and_not_in_the_last_come_out_as_node_by_node() {
    // One amount with yen and sen in the last piece: the whole column is fractional
    // (node by node: a Float64 column), the pieces before it whole numbers.
    let line = "2024/04/01,x,旅費交通費,大阪支店,株式会社山田商事,\"12,800.50\",端数";
    let ws = workspace(&journal(Some(line)));
    let (fused, fused_events) = run(ws.path(), true, &[]);
    let (plain, plain_events) = run(ws.path(), false, &[]);
    same(
        &record(ws.path(), &fused, &fused_events),
        &record(ws.path(), &plain, &plain_events),
    );
    // The whole column is fractional: every total is a Float64.
    let mut want = expected();
    for row in want.as_array_mut().unwrap() {
        row[2] = json!(row[2].as_i64().unwrap() as f64);
    }
    want[1][2] = json!(15_200.0 * BLOCKS as f64 + 0.5);
    assert_eq!(totals(ws.path(), &fused), want);
    assert!(!passed(ws.path(), &fused));
}

/// Totals by voucher: 20,000 groups, more than a run record keeps whole, so a resume that
/// needs them runs the pass's nodes again, one by one, and compares the groups' digest with
/// the pass's. The last node picks a column from a var, wrong the first time.
const BY_VOUCHER: &str = r#"
id: fused
vars: {column: 合計}
graph:
  - {id: read, block: csv.read, in: {path: journal.csv}, out: {rows: rows}}
  - {id: dates, block: transforms.normalize_dates, in: {rows: "${read.rows}", fields: [伝票日付], on_error: error}, out: {rows: rows}}
  - {id: amounts, block: transforms.normalize_amounts, in: {rows: "${dates.rows}", fields: [金額]}, out: {rows: rows}}
  - id: totals
    block: transforms.group_aggregate
    in: {rows: "${amounts.rows}", by: [伝票番号], aggregations: [{field: 金額, op: sum, as: 金額合計}, {field: 金額, op: count, as: 件数}]}
    out: {rows: rows}
  - {id: pick, block: transforms.select_columns, in: {rows: "${totals.rows}", columns: [伝票番号, "${vars.column}", 件数]}, out: {rows: rows}}
"#;

#[test]
fn a_resume_after_a_failure_past_the_pass_gives_the_same_totals() {
    let ws = workspace(&journal(None));
    let (first, _) = run_in(ws.path(), BY_VOUCHER, |_| {});
    assert_eq!(first.status, RunStatus::Failed);
    assert_eq!(first.failures[0].node, "pick");
    assert!(passed(ws.path(), &first));
    let (second, events) = run_in(ws.path(), BY_VOUCHER, |o| {
        o.resume = Some(first.run_id.clone());
        o.vars.insert("column".into(), json!("金額合計"));
    });
    assert_eq!(second.status, RunStatus::Finished, "{:?}", second.failures);
    // The groups were kept in part: the resume read the file and ran every node again (a
    // digest that differed would have stopped it with DATA_CHANGED).
    for node in ["read", "dates", "amounts", "totals", "pick"] {
        let ran = events
            .iter()
            .any(|e| matches!(e, Event::NodeFinish { node: n, .. } if n == node));
        assert!(ran, "{node}");
    }
    // By hand, each voucher: 12,800 + 2,400 − 500 + 3,300 + 220 + 1,100,000 = 1,118,220 in
    // six rows.
    let dir = RunDir::open(&ws.path().join("runs"), "fused", &second.run_id).unwrap();
    assert_eq!(dir.kept_in_part("pick").unwrap()["rows"].rows, BLOCKS);
    let shown = dir
        .load_shown("pick")
        .unwrap()
        .get("rows")
        .unwrap()
        .to_json();
    let shown = shown.as_array().unwrap();
    assert_eq!(shown.len(), 1_000);
    for (n, row) in shown.iter().enumerate() {
        assert_eq!(
            row,
            &json!({"伝票番号": n.to_string(), "金額合計": 1_118_220, "件数": 6})
        );
    }
}

#[test]
fn a_filter_in_the_pass_counts_and_keeps_its_excluded_rows_as_node_by_node() {
    let ws = workspace(&journal(None));
    // 売上高 (one row in six) left out: the totals without it, the excluded rows counted.
    let condition = r#"勘定科目 != "売上高""#;
    let (fused, fused_events) = run_filtered(ws.path(), true, &[], condition);
    let (plain, plain_events) = run_filtered(ws.path(), false, &[], condition);
    assert_eq!(fused.status, RunStatus::Finished, "{:?}", fused.failures);
    assert!(passed(ws.path(), &fused));
    same(
        &record(ws.path(), &fused, &fused_events),
        &record(ws.path(), &plain, &plain_events),
    );
    let mut want = expected();
    want.as_array_mut().unwrap().remove(0);
    assert_eq!(totals(ws.path(), &fused), want);
    let rows = record(ws.path(), &fused, &fused_events);
    assert_eq!(rows["keep"]["finish"]["rows"], json!(5 * BLOCKS));
    assert_eq!(rows["keep"]["shown"]["count"], json!(5 * BLOCKS));
    assert_eq!(rows["keep"]["kept"]["excluded"], json!(BLOCKS));

    // A filter that keeps no row: node by node warns NO_ROWS there, and so does the run
    // with the pass (which gives way).
    let condition = r#"勘定科目 == "雑収入""#;
    let (fused, _) = run_filtered(ws.path(), true, &[], condition);
    let (plain, _) = run_filtered(ws.path(), false, &[], condition);
    assert_eq!(fused.status, plain.status);
    assert_eq!(fused.failures, plain.failures);
    assert_eq!(fused.warnings, plain.warnings);
    assert!(
        fused.warnings.iter().any(|w| w.code == "NO_ROWS"),
        "{:?}",
        fused.warnings
    );
    assert!(!passed(ws.path(), &fused));
}

/// A plan that counts the rows its filter left out: the filter cannot be in the pass (it
/// would hand `excluded` on in part, and the count would be of its first rows), which ends
/// before it.
const EXCLUDED_TAKEN: &str = r#"
id: fused
graph:
  - {id: read, block: csv.read, in: {path: journal.csv}, out: {rows: rows}}
  - {id: dates, block: transforms.normalize_dates, in: {rows: "${read.rows}", fields: [伝票日付], on_error: error}, out: {rows: rows}}
  - {id: keep, block: transforms.filter_rows, in: {rows: "${dates.rows}", condition: '勘定科目 != "売上高"'}, out: {rows: rows, excluded: sales}}
  - {id: count, block: transforms.group_aggregate, in: {rows: "${keep.rows}", by: [], aggregations: [{field: 金額, op: count, as: 件数}]}, out: {rows: rows}}
  - {id: sales, block: transforms.group_aggregate, in: {rows: "${keep.sales}", by: [], aggregations: [{field: 金額, op: count, as: 件数}]}, out: {rows: rows}}
"#;

#[test]
fn a_filter_whose_excluded_rows_a_later_node_takes_ends_the_pass_before_it() {
    let ws = workspace(&journal(None));
    let (outcome, _) = run_in(ws.path(), EXCLUDED_TAKEN, |_| {});
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    assert!(passed(ws.path(), &outcome));
    let dir = RunDir::open(&ws.path().join("runs"), "fused", &outcome.run_id).unwrap();
    // The filter ran node by node: its rows and excluded rows kept with a digest.
    let kept = dir.kept_in_part("keep").unwrap();
    assert!(!kept["excluded"].digest.is_empty());
    assert_eq!(kept["excluded"].rows, BLOCKS);
    let count = |node: &str| {
        dir.load_outputs(node)
            .unwrap()
            .get("rows")
            .unwrap()
            .to_json()
    };
    // One 売上高 row in six: every one of them counted.
    assert_eq!(count("sales"), json!([{"件数": BLOCKS}]));
    assert_eq!(count("count"), json!([{"件数": 5 * BLOCKS}]));
}
