//! Sample runs (`keiri_run::verify`): the planner's verify-by-running, within a budget and
//! bounds the drafted plan cannot raise, keeping the failures and the tables' column names.

use std::time::{Duration, Instant};

use chrono::TimeZone;
use keiri_run::block::Registry;
use keiri_run::{RunOptions, RunStatus, Verification};

use crate::support::catalog;

const INVOICES: &str =
    "請求書番号,取引先,金額\nINV-001,株式会社山田商事,10000\nINV-002,ヤマダ商事,5500\n";

/// `yaml` verified in a workspace holding `files`, with `budget`.
fn verify(files: &[(&str, &str)], yaml: &str, budget: Duration) -> Verification {
    let ws = tempfile::tempdir().unwrap();
    for (name, text) in files {
        keiri_fs::write_atomic(&ws.path().join(name), text.as_bytes()).unwrap();
    }
    let plan = keiri_plan::load_plan(yaml).unwrap().plan;
    let now = chrono::Utc.with_ymd_and_hms(2026, 12, 1, 9, 0, 0).unwrap();
    let options = RunOptions::new(ws.path(), now, 1);
    keiri_run::verify(
        &plan,
        yaml,
        &catalog(),
        &Registry::builtins(),
        options,
        budget,
    )
    .unwrap()
}

#[test]
fn a_sample_run_stops_at_its_budget() {
    let started = Instant::now();
    let verified = verify(
        &[("請求書.csv", INVOICES)],
        "id: endless\ngraph:\n  - id: again\n    type: loop\n    while: {condition: {expr: \"${vars.iteration} >= 0\"}, max_iterations: 1000000}\n    body: {plan: {id: b, graph: [{id: read, block: csv.read, in: {path: 請求書.csv}, out: {rows: rows}}]}}\n",
        Duration::from_millis(300),
    );
    assert_eq!(verified.status, RunStatus::Cancelled, "{verified:?}");
    assert!(
        verified.failures.iter().all(|f| f.code == "CANCELLED"),
        "{verified:?}"
    );
    // Stopped by the budget, not by the million iterations (generous for a busy machine).
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// A model's plan runs inside the sample run's small bounds, which its own `policy.limits`
/// cannot raise: a foreach over 10,001 rows stops at the loop.
#[test]
fn a_sample_run_keeps_its_own_bounds_whatever_the_plan_asks() {
    let mut journal = String::from("伝票番号,金額\n");
    for i in 0..10_001 {
        journal.push_str(&format!("{},{}\n", 1000 + i, 500 + i));
    }
    let verified = verify(
        &[("仕訳.csv", &journal)],
        "id: each\npolicy: {limits: {foreach_items: 1000000}}\ngraph:\n  - {id: read, block: csv.read, in: {path: 仕訳.csv}, out: {rows: rows}}\n  - id: each\n    type: loop\n    foreach: {input: \"${read.rows}\", var: line}\n    body: {plan: {id: b, graph: [{id: pick, block: transforms.select_columns, in: {rows: \"${read.rows}\", columns: [金額]}, out: {rows: rows}}]}}\n    out: {collect: all}\n",
        Duration::from_secs(60),
    );
    let codes: Vec<_> = verified
        .failures
        .iter()
        .map(|f| (f.node.as_str(), f.code.as_str()))
        .collect();
    assert_eq!(codes, [("each", "LIMIT_EXCEEDED")], "{verified:?}");
}

/// The columns of each table a finished node produced are kept by `node.key` (the output's
/// key, whatever its alias), beside the failures of the nodes that read them.
#[test]
fn a_sample_run_keeps_the_columns_of_the_tables_and_the_failures() {
    let verified = verify(
        &[("請求書.csv", INVOICES)],
        "id: pick\npolicy: {on_error: continue}\ngraph:\n  - {id: read, block: csv.read, in: {path: 請求書.csv}, out: {rows: invoices}}\n  - {id: pick, block: transforms.select_columns, in: {rows: \"${read.invoices}\", columns: [請求書番号, vendor]}, out: {rows: picked}}\n",
        Duration::from_secs(60),
    );
    assert_eq!(verified.status, RunStatus::Failed, "{verified:?}");
    assert_eq!(
        verified.columns.get("read.rows").map(Vec::as_slice),
        Some(&["請求書番号".to_string(), "取引先".into(), "金額".into()][..]),
        "{verified:?}"
    );
    let codes: Vec<_> = verified
        .failures
        .iter()
        .map(|f| (f.node.as_str(), f.code.as_str()))
        .collect();
    assert_eq!(codes, [("pick", "COLUMN_NOT_FOUND")], "{verified:?}");
}
