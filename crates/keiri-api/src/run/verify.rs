//! The planner's verifier: a generated plan run on the files the user attached in a throwaway
//! run folder, its repairable failures turned into design issues for the repair loop.
//!
//! A sample run is the user's, not the model's: the plan may read only the attached files (a
//! plan that reads `.env`, another workspace file or anything outside is refused with
//! `PATH_DENIED`, which is not sent back), writes only under its run folder, reads no
//! `${env.*}` and reaches no network; and what goes back to the model is a finding (the code,
//! the node, the input and column names), never the block's own message, which may quote the
//! data.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use keiri_llm::CancellationToken;
use keiri_run::RunOptions;
use serde_json::Value as Json;

use super::{confined_path_policy, now_and_random, pick};
use crate::plan::load_catalog;
use crate::{Context, Lang};

/// Run-time errors the model can act on (a wrong column, an input a block cannot use, a
/// condition that does not evaluate, work past the sample run's bounds); not a missing
/// implementation, a missing sample file, a path outside the attached files, a cancellation or
/// the network.
const REPAIRABLE_AT_RUN_TIME: &[&str] = &[
    "BLOCK_FAILED",
    "INPUT_INVALID",
    "COLUMN_NOT_FOUND",
    "REF_UNRESOLVED",
    "EXPR_INVALID",
    "LIMIT_EXCEEDED",
];

/// How long one verification run may take before it is stopped (and counts as passed: a plan
/// is not sent back for being slow on large files).
pub(crate) const VERIFY_BUDGET: std::time::Duration = std::time::Duration::from_secs(60);

/// The planner's verifier (`plan_generate` with `verify_by_running`): runs `plan` on the
/// attached files `samples` (resolved paths) in a throwaway run folder
/// (`.keiri/verify-runs/`, removed after) and returns each repairable run-time failure as an
/// issue, with the columns of the tables the failed node read. The run stops when the
/// generation is cancelled or after `budget`.
pub(crate) fn verify_plan(
    ctx: &Context,
    plan: &keiri_plan::Plan,
    samples: &[PathBuf],
    lang: Lang,
    cancel: &CancellationToken,
    budget: std::time::Duration,
) -> Vec<keiri_design::Issue> {
    let Ok(text) = keiri_plan::save_plan(plan) else {
        return Vec::new();
    };
    let (catalog, _) = load_catalog(ctx);
    let (now, random) = now_and_random();
    let runs = ctx.workspace.join(".keiri").join("verify-runs");
    let mut options = RunOptions::new(&ctx.workspace, now, random);
    // Only the attached files and the run's own folder; no env, hosts or model (the
    // options' defaults).
    options.paths = confined_path_policy(ctx, samples.iter().cloned(), &runs);
    options.runs_dir = runs.clone();
    options.designs_dir = ctx.designs_dir.clone();
    options.cancel = cancel.child_token();
    // A model's plan inside a server that must stay up: small bounds, which the plan's
    // `policy.limits` cannot raise.
    options.limits = keiri_run::limits::Limits::sample_run();
    options.ceiling = keiri_run::limits::Limits::sample_run();
    options.lang = lang;
    // The budget: a timer that ends early when the run does (its sender is dropped).
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let stop = options.cancel.clone();
    let timer = std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(budget) {
            stop.cancel();
        }
    });
    // What each finished node produced: table columns by `node.alias`.
    let columns: Mutex<HashMap<String, Vec<String>>> = Mutex::new(HashMap::new());
    let sink = |event: &keiri_run::Event| {
        if let keiri_run::Event::NodeFinish { node, outputs, .. } = event {
            let mut columns = columns.lock().unwrap_or_else(PoisonError::into_inner);
            for (key, summary) in outputs {
                if let Some(cols) = summary.get("columns").and_then(Json::as_array) {
                    let names = cols.iter().filter_map(Json::as_str).map(str::to_string);
                    columns.insert(format!("{node}.{key}"), names.collect());
                }
            }
        }
    };
    let registry = keiri_run::block::Registry::builtins();
    let outcome = keiri_run::run(plan, &text, &catalog, &registry, &options, &sink);
    drop(done);
    let _ = timer.join();
    let _ = std::fs::remove_dir_all(&runs);
    let Ok(outcome) = outcome else {
        return Vec::new();
    };
    let columns = columns.into_inner().unwrap_or_else(PoisonError::into_inner);
    outcome
        .failures
        .iter()
        .filter(|f| REPAIRABLE_AT_RUN_TIME.contains(&f.code.as_str()))
        .filter_map(|f| {
            let index = plan.graph.iter().position(|n| n.id == f.node)?;
            let finding = finding(plan, &catalog, index, &f.code, &columns, lang);
            Some(keiri_design::Issue {
                code: format!("run.{}", f.code.to_ascii_lowercase()),
                severity: "error".into(),
                node_id: Some(f.node.clone()),
                path: format!("/graph/{index}"),
                message: pick(
                    lang,
                    &format!("試行実行で失敗しました: {finding}"),
                    &format!("failed when run on the sample files: {finding}"),
                ),
                hint: None,
            })
        })
        .collect()
}

/// What the model is told of a node's run-time failure: built from the plan and the column
/// names of the tables the node read, never from the block's message, which may quote the
/// data (a value that is not a date, a cell of the file). For `COLUMN_NOT_FOUND` it names the
/// input and the column the rows do not have, as the runtime's check does.
fn finding(
    plan: &keiri_plan::Plan,
    catalog: &keiri_plan::Catalog,
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
                "COLUMN_NOT_FOUND" => pick(
                    lang,
                    "ノードが読む列が入力の行にありません",
                    "a column the node reads is not in its input rows",
                ),
                "INPUT_INVALID" => pick(
                    lang,
                    "入力がブロックの仕様に合いません（型、使える値、必須入力）",
                    "an input does not fit the block's spec (its type, its allowed values, or a required input)",
                ),
                "REF_UNRESOLVED" => pick(
                    lang,
                    "参照がどの出力にも変数にも解決されません",
                    "a reference resolves to no output or var",
                ),
                "EXPR_INVALID" => pick(
                    lang,
                    "式または条件が評価できません",
                    "an expression or a condition does not evaluate",
                ),
                "LIMIT_EXCEEDED" => pick(
                    lang,
                    "サンプルでの処理量が上限を超えました（行ごとの foreach、キーが重複する結合、大きすぎる表）。行は表のまま transforms.* で処理し、一意のキーで結合してください",
                    "the work on the sample files passed the run's bounds (a foreach over every row, a join whose keys repeat, a table too large): work on the rows as a table with transforms.* and join on a unique key",
                ),
                _ => pick(
                    lang,
                    "ブロックがサンプルのデータで失敗しました",
                    "the block failed on the sample data",
                ),
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
    catalog: &keiri_plan::Catalog,
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
        let line = pick(
            lang,
            &format!("入力 {input} が読む列「{column}」は {table} の行にありません"),
            &format!(
                "input {input} reads the column {column:?}, which the rows of {table} do not have"
            ),
        );
        if !out.contains(&line) {
            out.push(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use keiri_llm::CancellationToken;

    use super::super::tests::{ctx, with_invoices};
    use crate::{Context, Lang};

    /// `yaml` verified on the workspace files `samples`, in English, within `budget`.
    fn verify(
        ctx: &Context,
        yaml: &str,
        samples: &[&str],
        budget: std::time::Duration,
    ) -> Vec<keiri_design::Issue> {
        let plan = keiri_plan::load_plan(yaml).unwrap().plan;
        let samples: Vec<_> = samples.iter().map(|s| ctx.workspace.join(s)).collect();
        let cancel = CancellationToken::new();
        super::verify_plan(ctx, &plan, &samples, Lang::En, &cancel, budget)
    }

    const MINUTE: std::time::Duration = std::time::Duration::from_secs(60);

    #[test]
    fn a_verification_run_stops_at_its_budget_and_sends_nothing_back() {
        let ws = tempfile::tempdir().unwrap();
        with_invoices(ws.path());
        let ctx = ctx(ws.path());
        let started = std::time::Instant::now();
        let issues = verify(
            &ctx,
            "id: endless\ngraph:\n  - id: again\n    type: loop\n    while: {condition: {expr: \"${vars.iteration} >= 0\"}, max_iterations: 1000000}\n    body: {plan: {id: b, graph: [{id: read, block: csv.read, in: {path: inputs/請求書.csv}, out: {rows: rows}}]}}\n",
            &["inputs/請求書.csv"],
            std::time::Duration::from_millis(300),
        );
        assert!(issues.is_empty(), "{issues:?}");
        // Stopped by the budget, not by the million iterations (generous for a busy machine).
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
        assert!(!ws.path().join(".keiri/verify-runs").exists());
    }

    /// What goes back to the model is a finding, not the data: a date column that holds a
    /// vendor name fails with the block's message quoting the cell, and the issue names the
    /// code, the node and the columns only.
    #[test]
    fn a_verification_run_sends_findings_not_the_data() {
        let ws = tempfile::tempdir().unwrap();
        with_invoices(ws.path());
        let ctx = ctx(ws.path());
        let issues = verify(
            &ctx,
            "id: dates\npolicy: {on_error: continue}\ngraph:\n  - {id: read, block: csv.read, in: {path: inputs/請求書.csv}, out: {rows: rows}}\n  - {id: dates, block: transforms.normalize_dates, in: {rows: \"${read.rows}\", fields: [取引先], on_error: error}, out: {rows: dated}}\n  - {id: pick, block: transforms.select_columns, in: {rows: \"${read.rows}\", columns: [請求書番号, vendor]}, out: {rows: picked}}\n",
            &["inputs/請求書.csv"],
            MINUTE,
        );
        let by_node = |id: &str| {
            issues
                .iter()
                .find(|i| i.node_id.as_deref() == Some(id))
                .unwrap_or_else(|| panic!("no issue on {id}: {issues:?}"))
        };
        let dates = by_node("dates");
        assert_eq!(dates.code, "run.block_failed");
        assert_eq!(
            dates.message,
            "failed when run on the sample files: BLOCK_FAILED: the block failed on the sample data — input columns read.rows: [請求書番号, 取引先, 金額]"
        );
        // The missing column is named from the plan, as the runtime's check names it.
        let pick = by_node("pick");
        assert_eq!(pick.code, "run.column_not_found");
        assert_eq!(
            pick.message,
            "failed when run on the sample files: COLUMN_NOT_FOUND: input columns reads the column \"vendor\", which the rows of read.rows do not have — input columns read.rows: [請求書番号, 取引先, 金額]"
        );
        for issue in &issues {
            for cell in ["株式会社山田商事", "INV-001", "10000"] {
                assert!(!issue.message.contains(cell), "{issue:?}");
            }
        }
    }

    /// The verifier reads only the attached files: a workspace file the user did not attach
    /// (payroll beside the invoices) is refused, and its refusal is not sent back.
    #[test]
    fn a_verification_run_reads_only_the_attached_files() {
        let ws = tempfile::tempdir().unwrap();
        with_invoices(ws.path());
        keiri_fs::write_atomic(
            &ws.path().join("inputs/給与.csv"),
            "社員,月給_秘密列\n山田,420000\n".as_bytes(),
        )
        .unwrap();
        let ctx = ctx(ws.path());
        const PAYROLL: &str = "id: payroll\ngraph:\n  - {id: read, block: csv.read, in: {path: inputs/給与.csv}, out: {rows: rows}}\n  - {id: pick, block: transforms.select_columns, in: {rows: \"${read.rows}\", columns: [vendor]}, out: {rows: picked}}\n";
        let issues = verify(&ctx, PAYROLL, &["inputs/請求書.csv"], MINUTE);
        assert!(issues.is_empty(), "{issues:?}");
        // Attached, the same plan reads it and its failure goes back (with the columns).
        let issues = verify(&ctx, PAYROLL, &["inputs/給与.csv"], MINUTE);
        assert_eq!(issues.len(), 1, "{issues:?}");
        assert!(issues[0].message.contains("月給_秘密列"), "{issues:?}");
    }

    /// A model's plan runs inside the sample run's small bounds, which its own
    /// `policy.limits` cannot raise: a foreach over 10,001 sample rows stops, and the model
    /// is told what to change, not the rows.
    #[test]
    fn a_sample_run_keeps_its_own_bounds_whatever_the_plan_asks() {
        let ws = tempfile::tempdir().unwrap();
        let mut text = String::from("伝票番号,金額\n");
        for i in 0..10_001 {
            text.push_str(&format!("{},{}\n", 1000 + i, 500 + i));
        }
        keiri_fs::write_atomic(&ws.path().join("仕訳.csv"), text.as_bytes()).unwrap();
        let ctx = ctx(ws.path());
        let issues = verify(
            &ctx,
            "id: each\npolicy: {limits: {foreach_items: 1000000}}\ngraph:\n  - {id: read, block: csv.read, in: {path: 仕訳.csv}, out: {rows: rows}}\n  - id: each\n    type: loop\n    foreach: {input: \"${read.rows}\", var: line}\n    body: {plan: {id: b, graph: [{id: pick, block: transforms.select_columns, in: {rows: \"${read.rows}\", columns: [金額]}, out: {rows: rows}}]}}\n    out: {collect: all}\n",
            &["仕訳.csv"],
            MINUTE,
        );
        assert_eq!(issues.len(), 1, "{issues:?}");
        assert_eq!(issues[0].code, "run.limit_exceeded");
        assert_eq!(issues[0].node_id.as_deref(), Some("each"));
        assert!(
            issues[0].message.starts_with("failed when run on the sample files: LIMIT_EXCEEDED: the work on the sample files passed the run's bounds"),
            "{issues:?}"
        );
        assert!(!issues[0].message.contains("10001"), "{issues:?}");
    }
}
