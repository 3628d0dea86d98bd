//! An unknown column stops the block with `COLUMN_NOT_FOUND` before it runs, wherever the
//! block reads it (named by the plan, by its default, in a rule, a condition or a mapping),
//! instead of a finished run with a wrong answer. Builtins through the engine with the
//! shipped catalog.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use chrono::TimeZone;
use keiri_run::block::Registry;
use keiri_run::{RunOptions, RunStatus};

use crate::support::catalog;

/// A 弥生-like export: Japanese headers, none of the blocks' defaults.
const CSV: &str = "伝票番号,取引日,取引先,借方金額,貸方金額,amount\n1,2026-04-01,山田商事,1000,1000,1000\n2,2026-04-01,山田商事,1000,1000,1000\n";

/// Runs `read → n` where n is `block` with `inputs` (YAML flow mapping) and the rows under
/// `rows_key`; returns (status, the failure of n as (code, English message)).
fn run(block: &str, rows_key: &str, inputs: &str) -> (RunStatus, Option<(String, String)>) {
    let ws = tempfile::tempdir().unwrap();
    keiri_fs::write_atomic(&ws.path().join("export.csv"), CSV.as_bytes()).unwrap();
    let yaml = format!(
        "id: t\ngraph:\n  - id: read\n    block: csv.read\n    in: {{path: export.csv}}\n    out: {{rows: rows}}\n  - id: n\n    block: {block}\n    in: {{{rows_key}: \"${{read.rows}}\", {inputs}}}\n    out: {{}}\n"
    );
    let plan = keiri_plan::load_plan(&yaml).unwrap().plan;
    let now = chrono::Utc
        .with_ymd_and_hms(2026, 11, 28, 10, 0, 0)
        .unwrap();
    let options = RunOptions::new(ws.path(), now, 1);
    let outcome = keiri_run::run(
        &plan,
        &yaml,
        &catalog(),
        &Registry::builtins(),
        &options,
        &|_| {},
    )
    .unwrap();
    let failure = outcome
        .failures
        .iter()
        .find(|f| f.node == "n")
        .map(|f| (f.code.clone(), f.message_en.clone()));
    (outcome.status, failure)
}

#[test]
fn an_unknown_column_is_column_not_found_before_the_block_runs() {
    // (block, rows input, inputs, the message's column part, or None when the run finishes)
    let cases: &[(&str, &str, &str, Option<&str>)] = &[
        // By default: before, 0 duplicates and "finished".
        (
            "matching.duplicate_invoices",
            "rows",
            "vendor_field: 取引先, amount_field: amount",
            Some("input date_field (its default) reads the column \"invoice_date\""),
        ),
        (
            "matching.duplicate_invoices",
            "rows",
            "vendor_field: 取引先, amount_field: amount, date_field: 取引日",
            None,
        ),
        // journal_check's defaults on a Japanese export: before, every line 「金額が0」 and balanced.
        (
            "control.journal_check",
            "entries",
            "checks: [balance]",
            Some("input voucher_field (its default) reads the column \"voucher_no\""),
        ),
        (
            "control.journal_check",
            "entries",
            "voucher_field: 伝票番号, debit_field: 借方金額, credit_field: 貸方金額, date_field: 取引日",
            None,
        ),
        // In a rule: before, every row "violated".
        (
            "control.policy_enforce",
            "rows",
            "rules: [{id: r1, condition: 'amout <= 100000'}]",
            Some("input rules reads the column \"amout\""),
        ),
        (
            "control.policy_enforce",
            "rows",
            "rules: [{id: r1, condition: 'amount <= 100000'}]",
            None,
        ),
        // A rule's field: before, the check was skipped.
        (
            "control.data_quality",
            "rows",
            "rules: [{field: 金額, rule: required}]",
            Some("input rules reads the column \"金額\""),
        ),
        // A condition.
        (
            "transforms.filter_rows",
            "rows",
            "condition: 'amout > 0'",
            Some("input condition reads the column \"amout\""),
        ),
        // A key of the right-hand table; the left one is there.
        (
            "transforms.join",
            "left",
            "right: \"${read.rows}\", keys: [{left: 取引先, right: 仕入先}]",
            Some("input keys reads the column \"仕入先\""),
        ),
        (
            "transforms.join",
            "left",
            "right: \"${read.rows}\", keys: [伝票番号]",
            None,
        ),
        // A compared field of exact matching.
        (
            "matching.exact_match",
            "left",
            "right: \"${read.rows}\", keys: [伝票番号], compare: [{left: amount, right: 金額}]",
            Some("input compare reads the column \"金額\""),
        ),
        // A mapping's values.
        (
            "journal.export",
            "entries",
            "field_mapping: {voucher_no: 伝票番号, date: 日付}",
            Some("input field_mapping.date reads the column \"日付\""),
        ),
        // A mapping's keys.
        (
            "transforms.rename_columns",
            "rows",
            "mapping: {vendor: 取引先名}",
            Some("input mapping reads the column \"vendor\""),
        ),
    ];
    for (block, rows, inputs, want) in cases {
        let (status, failure) = run(block, rows, inputs);
        match want {
            None => assert_eq!(status, RunStatus::Finished, "{block} {inputs}: {failure:?}"),
            Some(part) => {
                assert_eq!(status, RunStatus::Failed, "{block} {inputs}");
                let (code, message) = failure.unwrap();
                assert_eq!(code, "COLUMN_NOT_FOUND", "{block} {inputs}");
                assert!(message.contains(part), "{block}: {message}");
                assert!(
                    message.contains(
                        "(columns: 伝票番号, 取引日, 取引先, 借方金額, 貸方金額, amount)"
                    ),
                    "{message}"
                );
            }
        }
    }
}
