//! The columns the validator traces before a run (keiri-plan's `input_columns`, which the
//! column check and the studio's column pickers use) are the columns the runtime's tables
//! have: each case runs a small plan on files written out here and compares the last node's
//! output columns, and the traced ones, with the columns worked out by hand.

use keiri_plan::{ColumnSchema, FileSchema, TableSchema};
use keiri_run::RunStatus;
use keiri_run::records::RunDir;
use keiri_run::value::{Value, column_names, columns_of};

use crate::support::{catalog, run_builtins};

/// A journal export: 部門 is also a column of the chart of accounts.
const JOURNAL: &str = "伝票番号,取引日,科目,金額,部門\nV1,2026-04-01,売上高,1000,営業\nV2,2026-04-02,旅費交通費,300,総務\nV3,2026-04-02,売上高,500,営業\n";
/// The chart of accounts, keyed by 科目 like the journal.
const ACCOUNTS: &str = "科目,科目名,部門\n売上高,売上高（国内）,営業\n旅費交通費,旅費交通費,総務\n";
/// The same chart keyed by コード.
const CODES: &str = "コード,科目名\n売上高,売上高（国内）\n";
/// A budget sheet with one column per month.
const BUDGET: &str = "科目,4月,5月\n売上高,1000,1200\n旅費交通費,300,250\n";

fn schema(path: &str, text: &str) -> FileSchema {
    let header = text.lines().next().unwrap();
    FileSchema {
        path: path.into(),
        tables: vec![TableSchema {
            sheet: None,
            columns: header
                .split(',')
                .map(|name| ColumnSchema {
                    name: name.into(),
                    ty: "text".into(),
                })
                .collect(),
        }],
    }
}

/// Runs `graph` (YAML list items after the readers `j` (journal), `a` (accounts), `c` (codes)
/// and `b` (budget)), whose last node `last` publishes `out`; returns (the columns traced for
/// a node reading `${last.out}`, the columns of that output in the run).
fn traced_and_run(graph: &str) -> (Option<Vec<String>>, Vec<String>) {
    let files = [
        ("journal.csv", JOURNAL),
        ("accounts.csv", ACCOUNTS),
        ("codes.csv", CODES),
        ("budget.csv", BUDGET),
    ];
    let mut yaml = String::from("id: traced\ngraph:\n");
    for (id, (path, _)) in ["j", "a", "c", "b"].iter().zip(files) {
        yaml.push_str(&format!(
            "  - id: {id}\n    block: csv.read\n    in: {{path: {path}}}\n    out: {{rows: rows}}\n"
        ));
    }
    yaml.push_str(graph);
    let (outcome, _, ws) = run_builtins(&files, &yaml, |_| {});
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}\n{yaml}",
        outcome.failures
    );
    let options = keiri_run::RunOptions::new(ws.path(), chrono::Utc::now(), 1);
    let dir = RunDir::open(&options.runs_dir, "traced", &outcome.run_id).unwrap();
    let run = match dir.load_outputs("last").unwrap().0.get("rows").unwrap() {
        Value::Table(df) => column_names(df),
        Value::Json(rows) => {
            let rows: Vec<_> = rows
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_object().unwrap().clone())
                .collect();
            columns_of(&rows)
        }
    };
    let probe = format!(
        "{yaml}  - id: probe\n    block: transforms.sort_rows\n    in: {{rows: \"${{last.out}}\", by: []}}\n    out: {{}}\n"
    );
    let plan = keiri_plan::load_plan(&probe).unwrap().plan;
    let schemas: Vec<FileSchema> = files.iter().map(|(p, t)| schema(p, t)).collect();
    let traced = keiri_plan::input_columns(&plan, &catalog(), &schemas, "probe", "rows");
    (traced, run)
}

#[test]
fn the_columns_traced_before_a_run_are_the_runs() {
    // (the nodes after the readers, the columns worked out by hand)
    let join = |extra: &str| {
        format!(
            "  - id: last\n    block: transforms.join\n    in: {{left: \"${{j.rows}}\", right: \"${{a.rows}}\", keys: [科目]{extra}}}\n    out: {{rows: out}}\n"
        )
    };
    let cases: Vec<(String, &[&str])> = vec![
        // 部門 on both sides and not a key: suffixed on each; the key once.
        (
            join(""),
            &["伝票番号", "取引日", "科目", "金額", "部門_left", "科目名", "部門_right"],
        ),
        (
            join(", how: inner"),
            &["伝票番号", "取引日", "科目", "金額", "部門_left", "科目名", "部門_right"],
        ),
        (
            join(", how: outer"),
            &["伝票番号", "取引日", "科目", "金額", "部門_left", "科目名", "部門_right"],
        ),
        // A right join keeps the right side's rows, and its keys stand where the right has them.
        (
            join(", how: right"),
            &["伝票番号", "取引日", "金額", "部門_left", "科目", "科目名", "部門_right"],
        ),
        (
            "  - id: last\n    block: transforms.join\n    in: {left: \"${j.rows}\", right: \"${c.rows}\", keys: [{left: 科目, right: コード}], how: right}\n    out: {rows: out}\n".into(),
            &["伝票番号", "取引日", "金額", "部門", "コード", "科目名"],
        ),
        (
            join(", suffixes: [_仕訳, _マスタ]"),
            &["伝票番号", "取引日", "科目", "金額", "部門_仕訳", "科目名", "部門_マスタ"],
        ),
        // Keys of different names: the other side's key folds into this side's.
        (
            "  - id: last\n    block: transforms.join\n    in: {left: \"${j.rows}\", right: \"${c.rows}\", keys: [{left: 科目, right: コード}]}\n    out: {rows: out}\n".into(),
            &["伝票番号", "取引日", "科目", "金額", "部門", "科目名"],
        ),
        // Group: the keys, then each aggregate under its `as` or `<field>_<op>`.
        (
            "  - id: last\n    block: transforms.group_aggregate\n    in: {rows: \"${j.rows}\", by: [部門, 科目], aggregations: [{field: 金額, op: sum}, {field: 伝票番号, op: count, as: 件数}]}\n    out: {rows: out}\n".into(),
            &["部門", "科目", "金額_sum", "件数"],
        ),
        // Unpivot: the id columns, then the defaults 項目 and 値, or the names given.
        (
            "  - id: last\n    block: transforms.unpivot\n    in: {rows: \"${b.rows}\", id_fields: [科目]}\n    out: {rows: out}\n".into(),
            &["科目", "項目", "値"],
        ),
        (
            "  - id: last\n    block: transforms.unpivot\n    in: {rows: \"${b.rows}\", id_fields: [科目], variable_name: 月, value_name: 予算}\n    out: {rows: out}\n".into(),
            &["科目", "月", "予算"],
        ),
        // A join, then a group on a column the join brought in.
        (
            "  - id: named\n    block: transforms.join\n    in: {left: \"${j.rows}\", right: \"${a.rows}\", keys: [科目]}\n    out: {rows: named}\n  - id: last\n    block: transforms.group_aggregate\n    in: {rows: \"${named.named}\", by: [科目名], aggregations: [{field: 金額, op: sum, as: 合計}]}\n    out: {rows: out}\n".into(),
            &["科目名", "合計"],
        ),
    ];
    for (graph, want) in cases {
        let (traced, run) = traced_and_run(&graph);
        assert_eq!(run, want, "the run's columns\n{graph}");
        assert_eq!(
            traced,
            Some(want.iter().map(|c| c.to_string()).collect()),
            "the traced columns\n{graph}"
        );
    }
}
