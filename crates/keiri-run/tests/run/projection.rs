//! A `csv.read` whose later uses are all known parses only the columns they read
//! (`engine/projection.rs`): the same answers as a read of every column, the columns left out
//! named in its summary, every other use reading the whole file, and a resume whose plan now
//! reads more running the reader (and what follows it) again.

use keiri_run::{Event, RunDir, RunStatus};
use serde_json::{Value as Json, json};

use crate::support::{reused, run_in};

/// A 弥生-style export in CP932: 和暦 and ISO dates, `￥`, `△`, full-width digits, a quoted
/// comma and quote, a blank `,,,,,,` line and trailing empty lines.
const JOURNAL: &str = "伝票日付,伝票番号,勘定科目,補助科目,摘要,金額,メモ\r\n\
    2024/04/01,1,旅費交通費,,\"新幹線, 東京\",12800,\r\n\
    R6.4.15,2,旅費交通費,,タクシー,\"￥2,400\",\r\n\
    令和6年4月30日,3,消耗品費,文具,\"\"\"A4\"\" 用紙\",△500,返品\r\n\
    ,,,,,,\r\n\
    2024-05-01,4,消耗品費,,トナー,\"3,300\",\r\n\
    2024/05/20,5,旅費交通費,,バス,２２０,\r\n\
    \r\n\r\n";

/// By hand: 旅費交通費 in 2024-04 is 12,800 + 2,400 = 15,200 (2 rows); 消耗品費 in 2024-04
/// is −500 (the 返品); 消耗品費 in 2024-05 is 3,300; 旅費交通費 in 2024-05 is 220.
fn expected_totals() -> Json {
    json!([
        ["旅費交通費", "2024-04", 15200, 2],
        ["旅費交通費", "2024-05", 220, 1],
        ["消耗品費", "2024-04", -500, 1],
        ["消耗品費", "2024-05", 3300, 1],
    ])
}

const PLAN: &str = r#"
id: journal_totals
graph:
  - {id: read, block: csv.read, in: {path: journal.csv}, out: {rows: rows, columns: columns, summary: summary}}
  - {id: dates, block: transforms.normalize_dates, in: {rows: "${read.rows}", fields: [伝票日付], on_error: error}, out: {rows: rows}}
  - {id: month, block: transforms.fiscal_period, in: {rows: "${dates.rows}", date_field: 伝票日付}, out: {rows: rows}}
  - {id: amounts, block: transforms.normalize_amounts, in: {rows: "${month.rows}", fields: [金額], on_error: error}, out: {rows: rows}}
  - id: totals
    block: transforms.group_aggregate
    in:
      rows: "${amounts.rows}"
      by: [勘定科目, year_month]
      aggregations: [{field: 金額, op: sum, as: 金額合計}, {field: 金額, op: count, as: 件数}]
    out: {rows: rows, group_count: groups}
"#;

fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let (bytes, _, lossy) = encoding_rs::SHIFT_JIS.encode(JOURNAL);
    assert!(!lossy);
    keiri_fs::write_atomic(&ws.path().join("journal.csv"), &bytes).unwrap();
    ws
}

/// Runs `plan` in `ws`, reading only the used columns or not; returns the run's folder (a new
/// one each time, though every run here starts at the same instant).
fn run(ws: &std::path::Path, plan: &str, used_only: bool) -> (RunDir, Vec<Event>) {
    let (outcome, events) = run_in(ws, plan, |o| o.only_what_is_used = used_only);
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    let dir = RunDir::open(&ws.join("runs"), &outcome.plan_id, &outcome.run_id).unwrap();
    (dir, events)
}

fn output(dir: &RunDir, node: &str, name: &str) -> Json {
    dir.load_outputs(node).unwrap().get(name).unwrap().to_json()
}

fn columns(dir: &RunDir, node: &str) -> Vec<String> {
    let rows = output(dir, node, "rows");
    let mut names: Vec<String> = Vec::new();
    for row in rows.as_array().unwrap() {
        for key in row.as_object().unwrap().keys() {
            if !names.contains(key) {
                names.push(key.clone());
            }
        }
    }
    names
}

/// The totals node's rows as `[account, month, total, count]`, sorted.
pub fn totals(dir: &RunDir) -> Json {
    let rows = output(dir, "totals", "rows");
    let mut rows: Vec<Json> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| json!([r["勘定科目"], r["year_month"], r["金額合計"], r["件数"]]))
        .collect();
    rows.sort_by_key(|r| r.to_string());
    Json::Array(rows)
}

#[test]
fn a_read_keeps_only_the_columns_the_plan_reads_and_the_totals_are_the_same() {
    let ws = workspace();
    let (pruned, _) = run(ws.path(), PLAN, true);
    let (whole, _) = run(ws.path(), PLAN, false);
    assert_eq!(totals(&pruned), expected_totals());
    assert_eq!(totals(&whole), expected_totals());
    // Only the three columns read later were parsed, in the file's order; the summary names
    // the others. Blank records are dropped either way (the `,,,,,,` line and two empty ones).
    assert_eq!(columns(&pruned, "read"), ["伝票日付", "勘定科目", "金額"]);
    let summary = output(&pruned, "read", "summary");
    assert_eq!(
        summary["unread_columns"],
        json!(["伝票番号", "補助科目", "摘要", "メモ"])
    );
    assert_eq!(summary["rows"], json!(5));
    assert_eq!(summary["blank_rows"], json!(3));
    assert_eq!(columns(&whole, "read").len(), 7);
    assert!(
        output(&whole, "read", "summary")
            .get("unread_columns")
            .is_none()
    );
}

/// Every whitelisted block's way of naming columns is read: sort keys as objects, a filter's
/// expression, a selection (include and exclude), an aggregation's fields. Each plan runs
/// and its read keeps exactly the columns named (the file's, in its order).
#[test]
fn each_way_a_block_names_columns_keeps_those_columns() {
    let cases = [
        (
            "  - {id: s, block: transforms.sort_rows, in: {rows: \"${read.rows}\", by: [{field: 伝票番号, order: desc}]}, out: {rows: rows}}\n  - {id: g, block: transforms.group_aggregate, in: {rows: \"${s.rows}\", by: [勘定科目], aggregations: [{field: 勘定科目, op: count, as: n}]}, out: {rows: rows}}\n",
            vec!["伝票番号", "勘定科目"],
        ),
        (
            "  - {id: f, block: transforms.filter_rows, in: {rows: \"${read.rows}\", condition: \"補助科目 == '文具' or メモ != ''\"}, out: {rows: kept, excluded: out}}\n  - {id: g, block: transforms.group_aggregate, in: {rows: \"${f.kept}\", by: [摘要], aggregations: [{field: 摘要, op: count, as: n}]}, out: {rows: rows}}\n  - {id: h, block: transforms.group_aggregate, in: {rows: \"${f.out}\", by: [伝票番号], aggregations: [{field: 伝票番号, op: count, as: n}]}, out: {rows: rows}}\n",
            vec!["伝票番号", "補助科目", "摘要", "メモ"],
        ),
        (
            "  - {id: c, block: transforms.coerce_types, in: {rows: \"${read.rows}\", columns: [{field: 伝票番号, to: integer}]}, out: {rows: rows}}\n  - {id: g, block: transforms.group_aggregate, in: {rows: \"${c.rows}\", by: [勘定科目], aggregations: [{field: 伝票番号, op: sum, as: n}]}, out: {rows: rows}}\n",
            vec!["伝票番号", "勘定科目"],
        ),
        (
            "  - {id: k, block: transforms.select_columns, in: {rows: \"${read.rows}\", columns: [金額, 摘要]}, out: {rows: rows}}\n",
            vec!["摘要", "金額"],
        ),
        (
            "  - {id: x, block: transforms.select_columns, in: {rows: \"${read.rows}\", columns: [メモ], mode: exclude}, out: {rows: rows}}\n  - {id: g, block: transforms.group_aggregate, in: {rows: \"${x.rows}\", by: [補助科目], aggregations: [{field: 伝票番号, op: count, as: n}]}, out: {rows: rows}}\n",
            vec!["伝票番号", "補助科目", "メモ"],
        ),
    ];
    for (graph, kept) in cases {
        let plan = format!(
            "id: named\ngraph:\n  - {{id: read, block: csv.read, in: {{path: journal.csv}}, out: {{rows: rows, summary: summary}}}}\n{graph}"
        );
        let ws = workspace();
        let (dir, _) = run(ws.path(), &plan, true);
        assert_eq!(columns(&dir, "read"), kept, "{graph}");
    }
}

/// Each of these uses of the table is not one whose columns are known before the run, so the
/// read keeps every column.
#[test]
fn any_other_use_of_the_table_reads_every_column() {
    let extra = [
        // A block that uses every column (it writes them all).
        "  - {id: copy, block: csv.write, in: {rows: \"${read.rows}\", out_name: copy.csv}, out: {out_path: copy}}\n",
        // The reader's column list.
        "  - {id: names, block: transforms.pick_value, in: {source: \"${read.columns}\", path: \"0\"}, out: {value: first}}\n",
        // Columns named by a var only the run resolves.
        "  - {id: more, block: transforms.sort_rows, in: {rows: \"${read.rows}\", by: [{field: \"${vars.key}\"}]}, out: {rows: rows}}\n",
        // A block whose expressions may name any column: not on the list until its code is
        // checked to read only the columns they name.
        "  - {id: cc, block: transforms.compute_columns, in: {rows: \"${read.rows}\", columns: [{name: 件名, expr: \"concat(摘要, メモ)\"}]}, out: {rows: rows}}\n",
        // Rows passed through to a use of every column.
        "  - {id: sorted, block: transforms.sort_rows, in: {rows: \"${dates.rows}\", by: [{field: 伝票番号}]}, out: {rows: rows}}\n  - {id: out, block: csv.write, in: {rows: \"${sorted.rows}\", out_name: sorted.csv}, out: {out_path: written}}\n",
    ];
    for graph in extra {
        let with_var = PLAN.replacen(
            "id: journal_totals\n",
            "id: journal_totals\nvars: {key: 摘要}\n",
            1,
        );
        let plan = format!("{with_var}{graph}");
        let ws = workspace();
        let (dir, _) = run(ws.path(), &plan, true);
        assert_eq!(columns(&dir, "read").len(), 7, "{graph}");
        assert!(
            output(&dir, "read", "summary")
                .get("unread_columns")
                .is_none(),
            "{graph}"
        );
        assert_eq!(totals(&dir), expected_totals(), "{graph}");
    }
}

/// The first attempt reads three columns and stops at a file that is not there yet; the resume
/// runs a plan that now also writes the read rows whole. The read and every node after it run
/// again (their tables held three columns), and the copy has all seven.
#[test]
fn a_resume_whose_plan_reads_more_columns_runs_the_reader_again() {
    let failing = format!(
        "{PLAN}  - {{id: extra, block: csv.read, in: {{path: extra.csv}}, when: \"${{totals.groups}} == 4\", out: {{rows: rows}}}}\n"
    );
    let ws = workspace();
    let (first, _) = run_in(ws.path(), &failing, |_| {});
    assert_eq!(first.status, RunStatus::Failed);
    assert_eq!(first.failures[0].node, "extra");
    let dir = RunDir::open(&ws.path().join("runs"), "journal_totals", &first.run_id).unwrap();
    assert_eq!(columns(&dir, "read"), ["伝票日付", "勘定科目", "金額"]);

    keiri_fs::write_atomic(&ws.path().join("extra.csv"), "a\n1\n".as_bytes()).unwrap();
    // The same plan: nothing read differently, so the finished nodes are reused.
    let (same, events) = run_in(ws.path(), &failing, |o| {
        o.resume = Some(first.run_id.clone())
    });
    assert_eq!(same.status, RunStatus::Finished, "{:?}", same.failures);
    assert_eq!(
        reused(&events),
        ["read", "dates", "month", "amounts", "totals"],
        "{events:#?}"
    );

    // A failed attempt of the longer plan, then its resume with the plan that copies the rows.
    // Test setup only.
    #[allow(clippy::disallowed_methods)]
    std::fs::remove_file(ws.path().join("extra.csv")).unwrap();
    let (again, _) = run_in(ws.path(), &failing, |_| {});
    assert_eq!(again.status, RunStatus::Failed);
    keiri_fs::write_atomic(&ws.path().join("extra.csv"), "a\n1\n".as_bytes()).unwrap();
    let more = format!(
        "{failing}  - {{id: copy, block: transforms.concat_rows, in: {{tables: [\"${{read.rows}}\"]}}, out: {{rows: rows}}}}\n"
    );
    let (second, events) = run_in(ws.path(), &more, |o| o.resume = Some(again.run_id.clone()));
    assert_eq!(second.status, RunStatus::Finished, "{:?}", second.failures);
    assert!(reused(&events).is_empty(), "{:?}", reused(&events));
    let dir = RunDir::open(&ws.path().join("runs"), "journal_totals", &second.run_id).unwrap();
    assert_eq!(columns(&dir, "copy").len(), 7);
    assert_eq!(columns(&dir, "read").len(), 7);
    assert_eq!(totals(&dir), expected_totals());
}
