//! What the repair loop is told when a drafted plan fails on the user's sample files
//! (verify-by-running, [`Context::verify`](crate::Context)): each failure the model can act on
//! becomes an error [`Finding`] `run.<code>` on its node, built from the plan and the column names
//! of the tables the node read — never from the block's message, which may quote the data (a
//! value that is not a date, a cell of the file). The run itself is keiri-run's
//! ([`keiri_run::verify`] there; this crate does not depend on it), so the caller passes the
//! failures and the columns it kept.

use std::collections::HashMap;

use keiri_plan::{Catalog, Finding, FindingCode, Lang, Plan};

/// Run-time errors the model can act on (a wrong column, an input a block cannot use, a
/// condition that does not evaluate, work past the sample run's bounds); not a missing
/// implementation, a missing sample file, a path outside the attached files, a cancellation or
/// the network.
pub const REPAIRABLE_AT_RUN_TIME: &[&str] = &[
    "BLOCK_FAILED",
    "INPUT_INVALID",
    "COLUMN_NOT_FOUND",
    "REF_UNRESOLVED",
    "EXPR_INVALID",
    "LIMIT_EXCEEDED",
];

/// The findings of a sample run of `plan`: one per failure (`(node id, code)`) whose code the
/// model can act on ([`REPAIRABLE_AT_RUN_TIME`]) at a top-level node of the plan, in the
/// failures' order. `columns` holds the column names of each table a finished node produced,
/// by `node.key` (the output's key).
pub fn sample_run_issues<'f>(
    plan: &Plan,
    catalog: &Catalog,
    failures: impl IntoIterator<Item = (&'f str, &'f str)>,
    columns: &HashMap<String, Vec<String>>,
    lang: Lang,
) -> Vec<Finding> {
    failures
        .into_iter()
        .filter(|(_, code)| REPAIRABLE_AT_RUN_TIME.contains(code))
        .filter_map(|(node, code)| {
            let index = plan.graph.iter().position(|n| n.id == node)?;
            let what = finding(plan, catalog, index, code, columns, lang);
            Some(Finding::error(
                run_code(code)?,
                Some(node.to_string()),
                format!("/graph/{index}"),
                lang.pick(
                    format!("試行実行で失敗しました: {what}"),
                    format!("failed when run on the sample files: {what}"),
                ),
            ))
        })
        .collect()
}

/// The finding code of a run error's `code`: `run.` and the code in lower case
/// (`COLUMN_NOT_FOUND` → `run.column_not_found`); `None` for a code plans have no finding for.
fn run_code(code: &str) -> Option<FindingCode> {
    format!("run.{}", code.to_ascii_lowercase()).parse().ok()
}

/// What the model is told of a node's run-time failure: built from the plan and the column
/// names of the tables the node read, never from the block's message, which may quote the
/// data (a value that is not a date, a cell of the file). For `COLUMN_NOT_FOUND` it names the
/// input and the column the rows do not have, as the runtime's check does.
fn finding(
    plan: &Plan,
    catalog: &Catalog,
    index: usize,
    code: &str,
    columns: &HashMap<String, Vec<String>>,
    lang: Lang,
) -> String {
    let node = &plan.graph[index];
    // The tables each input read, as `dep.alias` and their columns.
    let mut tables: Vec<(String, String, &Vec<String>)> = Vec::new();
    for (input, value) in &node.inputs {
        let (mut refs, mut bad) = (Vec::new(), Vec::new());
        keiri_plan::refs::scan(value, "", &mut refs, &mut bad);
        for r in refs {
            let keiri_plan::refs::Target::Node {
                node: dep, alias, ..
            } = &r.target
            else {
                continue;
            };
            // `out: {key: alias}`: the event names the output by its key.
            let key = plan
                .graph
                .iter()
                .find(|n| &n.id == dep)
                .and_then(|n| {
                    n.out
                        .iter()
                        .find(|(_, a)| a.as_str() == Some(alias.as_str()))
                        .map(|(k, _)| k.clone())
                })
                .unwrap_or_else(|| alias.clone());
            if let Some(cols) = columns.get(&format!("{dep}.{key}")) {
                tables.push((input.clone(), format!("{dep}.{alias}"), cols));
            }
        }
    }
    let mut what = match code {
        "COLUMN_NOT_FOUND" => missing_columns(node, catalog, &tables, lang),
        _ => Vec::new(),
    };
    if what.is_empty() {
        what.push(
            match code {
                "COLUMN_NOT_FOUND" => lang.pick("ノードが読む列が入力の行にありません",
                    "a column the node reads is not in its input rows",
                ).to_string(),
                "INPUT_INVALID" => lang.pick("入力がブロックの仕様に合いません（型、使える値、必須入力）",
                    "an input does not fit the block's spec (its type, its allowed values, or a required input)",
                ).to_string(),
                "REF_UNRESOLVED" => lang.pick("参照がどの出力にも変数にも解決されません",
                    "a reference resolves to no output or var",
                ).to_string(),
                "EXPR_INVALID" => lang.pick("式または条件が評価できません",
                    "an expression or a condition does not evaluate",
                ).to_string(),
                "LIMIT_EXCEEDED" => lang.pick("サンプルでの処理量が上限を超えました（行ごとの foreach、キーが重複する結合、大きすぎる表）。行は表のまま transforms.* で処理し、一意のキーで結合してください",
                    "the work on the sample files passed the run's bounds (a foreach over every row, a join whose keys repeat, a table too large): work on the rows as a table with transforms.* and join on a unique key",
                ).to_string(),
                _ => lang.pick("ブロックがサンプルのデータで失敗しました",
                    "the block failed on the sample data",
                ).to_string(),
            }
            .to_string(),
        );
    }
    let mut read: Vec<String> = Vec::new();
    for (_, table, cols) in &tables {
        let entry = format!("{table}: [{}]", cols.join(", "));
        if !read.contains(&entry) {
            read.push(entry);
        }
    }
    let mut message = format!("{code}: {}", what.join("; "));
    if !read.is_empty() {
        message.push_str(&format!(" — input columns {}", read.join("; ")));
    }
    message
}

/// The columns `node` reads that its input rows do not have (keiri-plan's
/// [`keiri_plan::column_reads`] over the plan's own inputs).
fn missing_columns(
    node: &keiri_plan::model::Node,
    catalog: &Catalog,
    tables: &[(String, String, &Vec<String>)],
    lang: Lang,
) -> Vec<String> {
    let Some(spec) = node.block.as_deref().and_then(|b| catalog.get(b)) else {
        return Vec::new();
    };
    let get = |key: &str| node.inputs.get(key);
    let mut out = Vec::new();
    for read in keiri_plan::column_reads(spec, &get) {
        let Some((_, table, cols)) = tables.iter().find(|(input, _, _)| *input == read.rows) else {
            continue;
        };
        if cols.contains(&read.column) {
            continue;
        }
        let (input, column) = (&read.input, &read.column);
        let line = lang.pick(&format!("入力 {input} が読む列「{column}」は {table} の行にありません"),
            &format!(
                "input {input} reads the column {column:?}, which the rows of {table} do not have"
            ),
        ).to_string();
        if !out.contains(&line) {
            out.push(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../block_specs");
        Catalog::load(&[dir]).0
    }

    /// The columns a sample run of the invoice file kept: `read`'s output key is `rows`, its
    /// alias `invoices`.
    fn columns() -> HashMap<String, Vec<String>> {
        let cols = ["請求書番号", "取引先", "金額"].map(String::from).to_vec();
        HashMap::from([("read.rows".to_string(), cols)])
    }

    const PLAN: &str = "id: dates\npolicy: {on_error: continue}\ngraph:\n  - {id: read, block: csv.read, in: {path: inputs/請求書.csv}, out: {rows: invoices}}\n  - {id: dates, block: transforms.normalize_dates, in: {rows: \"${read.invoices}\", fields: [取引先], on_error: error}, out: {rows: dated}}\n  - {id: pick, block: transforms.select_columns, in: {rows: \"${read.invoices}\", columns: [請求書番号, vendor]}, out: {rows: picked}}\n  - id: each\n    type: loop\n    foreach: {input: \"${read.invoices}\", var: line}\n    body: {plan: {id: b, graph: [{id: one, block: transforms.select_columns, in: {rows: \"${read.invoices}\", columns: [金額]}, out: {rows: rows}}]}}\n";

    /// What goes back to the model is a finding built from the plan and the column names: the
    /// code, the node, the input and column it reads, the tables it read (by their aliases);
    /// failures the model cannot act on (a path outside the attached files, a cancellation) and
    /// nodes the plan does not have are left out.
    #[test]
    fn a_sample_run_failure_becomes_a_finding_on_its_node() {
        let plan = keiri_plan::load_plan(PLAN).unwrap().plan;
        let failures = [
            ("dates", "BLOCK_FAILED"),
            ("pick", "COLUMN_NOT_FOUND"),
            ("read", "PATH_DENIED"),
            ("each", "LIMIT_EXCEEDED"),
            ("gone", "BLOCK_FAILED"),
            ("dates", "CANCELLED"),
        ];
        let issues = sample_run_issues(&plan, &catalog(), failures, &columns(), Lang::En);
        let found: Vec<_> = issues
            .iter()
            .map(|i| {
                (
                    i.node_id.as_deref().unwrap(),
                    i.code.as_str(),
                    i.path.as_str(),
                )
            })
            .collect();
        assert_eq!(
            found,
            [
                ("dates", "run.block_failed", "/graph/1"),
                ("pick", "run.column_not_found", "/graph/2"),
                ("each", "run.limit_exceeded", "/graph/3"),
            ]
        );
        assert!(issues.iter().all(Finding::is_error));
        assert_eq!(
            issues[0].message,
            "failed when run on the sample files: BLOCK_FAILED: the block failed on the sample data — input columns read.invoices: [請求書番号, 取引先, 金額]"
        );
        // The missing column is named from the plan, as the runtime's check names it.
        assert_eq!(
            issues[1].message,
            "failed when run on the sample files: COLUMN_NOT_FOUND: input columns reads the column \"vendor\", which the rows of read.invoices do not have — input columns read.invoices: [請求書番号, 取引先, 金額]"
        );
        assert!(
            issues[2].message.starts_with(
                "failed when run on the sample files: LIMIT_EXCEEDED: the work on the sample files passed the run's bounds"
            ),
            "{issues:?}"
        );
    }

    #[test]
    fn a_sample_run_finding_speaks_the_users_language() {
        let plan = keiri_plan::load_plan(PLAN).unwrap().plan;
        let issues = sample_run_issues(
            &plan,
            &catalog(),
            [("pick", "COLUMN_NOT_FOUND")],
            &columns(),
            Lang::Ja,
        );
        assert_eq!(
            issues[0].message,
            "試行実行で失敗しました: COLUMN_NOT_FOUND: 入力 columns が読む列「vendor」は read.invoices の行にありません — input columns read.invoices: [請求書番号, 取引先, 金額]"
        );
    }

    #[test]
    fn every_repairable_run_code_has_its_finding_code() {
        for code in REPAIRABLE_AT_RUN_TIME {
            let finding = run_code(code).unwrap_or_else(|| panic!("{code} has no run.* code"));
            assert_eq!(
                finding.as_str(),
                format!("run.{}", code.to_ascii_lowercase())
            );
        }
        assert_eq!(run_code("PATH_DENIED"), None);
    }
}
