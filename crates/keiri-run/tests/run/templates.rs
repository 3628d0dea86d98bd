//! Every shipped template, composed into a plan the way `keiri generate --apply-mode compose`
//! does (keiri_plan::compose), validated and run end to end by the engine on the repo's
//! sample data (`samples/`, see its README for the known exceptions). The expected values
//! are the README's, worked out by hand.
//!
//! Plans run with `on_error: continue`. A person's answers are given on resume where a
//! template asks (`ui.*`); a model (`ai.*`) is the fake OpenAI-compatible server where a test
//! gives one, and without one the node fails with `LLM_NOT_CONFIGURED` (its dependants are
//! skipped) while the data path runs. Each test says which.

use std::path::{Path, PathBuf};

use calamine::{Data, Reader, Xlsx, open_workbook};
use indexmap::IndexMap;
use keiri_plan::model::Policy;
use keiri_plan::{Catalog, ComposeOptions, compose, load_template};
use keiri_run::block::Registry;
use keiri_run::engine::{RunOptions, run};
use keiri_run::records::RunDir;
use keiri_run::state::{NodeStatus, RunStatus};
use serde_json::{Value as Json, json};

pub(crate) fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A workspace with a copy of `samples/`, and the bytes of every sample to compare after.
pub(crate) struct Workspace {
    pub(crate) dir: tempfile::TempDir,
    originals: Vec<(PathBuf, Vec<u8>)>,
}

impl Workspace {
    pub(crate) fn new() -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        let samples = dir.path().join("samples");
        std::fs::create_dir_all(&samples).unwrap();
        let mut originals = Vec::new();
        for entry in std::fs::read_dir(repo().join("samples")).unwrap() {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            let copy = samples.join(path.file_name().unwrap());
            keiri_fs::write_atomic(&copy, &bytes).unwrap();
            originals.push((copy, bytes));
        }
        Workspace { dir, originals }
    }

    fn assert_inputs_unchanged(&self) {
        for (path, bytes) in &self.originals {
            assert_eq!(
                &std::fs::read(path).unwrap(),
                bytes,
                "{} was modified",
                path.display()
            );
        }
    }
}

/// What a run left behind.
pub(crate) struct Ran {
    pub(crate) status: RunStatus,
    pub(crate) nodes: IndexMap<String, NodeStatus>,
    pub(crate) failures: Vec<(String, String)>,
    dir: RunDir,
    run_dir: PathBuf,
}

impl Ran {
    /// Output `alias` of node `node` (a composed id `<template>__<node>`), as JSON.
    pub(crate) fn output(&self, node: &str, alias: &str) -> Json {
        let outputs = self
            .dir
            .load_outputs(node)
            .unwrap_or_else(|e| panic!("{node}: {e}"));
        outputs
            .0
            .get(alias)
            .unwrap_or_else(|| panic!("{node} has no output {alias}"))
            .to_json()
    }

    pub(crate) fn status(&self, node: &str) -> Option<NodeStatus> {
        self.nodes.get(node).copied()
    }
}

/// Composes `templates` with `vars`, validates the plan and runs it in `ws`.
pub(crate) fn run_templates(ws: &Workspace, templates: &[&str], vars: Json) -> Ran {
    run_templates_answered(ws, templates, vars, json!({}))
}

/// [`run_templates`], then, if the run paused, resumes it once with `answers` (node id →
/// answer) as a person would in the window.
fn run_templates_answered(ws: &Workspace, templates: &[&str], vars: Json, answers: Json) -> Ran {
    run_templates_with(ws, templates, vars, answers, None)
}

/// [`run_templates_answered`] with a model for the `ai.*` blocks.
fn run_templates_with(
    ws: &Workspace,
    templates: &[&str],
    vars: Json,
    answers: Json,
    llm: Option<keiri_llm::Llm>,
) -> Ran {
    let specs: Vec<_> = templates
        .iter()
        .map(|t| {
            load_template(&repo().join("templates").join(t))
                .unwrap_or_else(|e| panic!("{t}: {e:?}"))
        })
        .collect();
    let refs: Vec<_> = specs.iter().collect();
    let options = ComposeOptions {
        plan_id: "sample_run".into(),
        vars: vars
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        ..Default::default()
    };
    let composition = compose(&refs, &options).unwrap();
    assert!(
        composition.unbound_imports.iter().all(|u| !u.required),
        "unbound: {:?}",
        composition.unbound_imports
    );
    let mut plan = composition.plan;
    plan.policy = Some(Policy {
        on_error: Some("continue".into()),
        ..Default::default()
    });
    let (catalog, issues) = Catalog::load(&[repo().join("block_specs")]);
    assert!(issues.is_empty(), "{issues:?}");
    let findings = keiri_plan::validate(&plan, &catalog, &Default::default());
    assert!(!keiri_plan::has_errors(&findings), "{findings:#?}");
    let text = keiri_plan::save_plan(&plan).unwrap();
    let now = chrono::DateTime::parse_from_rfc3339("2025-04-01T09:00:00+09:00")
        .unwrap()
        .to_utc();
    let mut run_options = RunOptions::new(ws.dir.path(), now, 7);
    run_options.llm = llm;
    let mut outcome = run(
        &plan,
        &text,
        &catalog,
        &Registry::builtins(),
        &run_options,
        &|_| {},
    )
    .unwrap();
    let answers = answers.as_object().unwrap();
    if outcome.status == RunStatus::Paused && !answers.is_empty() {
        run_options.resume = Some(outcome.run_id.clone());
        run_options.answers = answers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        outcome = run(
            &plan,
            &text,
            &catalog,
            &Registry::builtins(),
            &run_options,
            &|_| {},
        )
        .unwrap();
    }
    let dir = RunDir::open(&run_options.runs_dir, &plan.id, &outcome.run_id).unwrap();
    ws.assert_inputs_unchanged();
    Ran {
        status: outcome.status,
        nodes: outcome.nodes,
        failures: outcome
            .failures
            .into_iter()
            .map(|f| (f.node, f.code))
            .collect(),
        dir,
        run_dir: outcome.run_dir,
    }
}

fn field(rows: &Json, key: &str) -> Vec<Json> {
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| r[key].clone())
        .collect()
}

fn num(v: &Json) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"))
}

#[test]
fn invoice_duplicate_detection_finds_the_two_sample_clusters() {
    let ws = Workspace::new();
    let ran = run_templates(
        &ws,
        &["payables/invoice_duplicate_detection.yaml"],
        json!({"invoice_csv": "samples/invoices.csv"}),
    );
    assert_eq!(ran.status, RunStatus::Finished, "{:?}", ran.failures);
    let clusters = ran.output("invoice_duplicate_detection__detect", "clusters");
    let clusters = clusters.as_array().unwrap();
    assert_eq!(clusters.len(), 2);
    assert_eq!(clusters[0]["reason"], "exact_duplicate");
    assert_eq!(clusters[0]["score"], 1);
    assert_eq!(
        field(&clusters[0]["rows"], "vendor"),
        [
            json!("株式会社山田商事"),
            json!("(株)山田商事"),
            json!("ﾔﾏﾀﾞ商事")
        ]
    );
    // Dates and amounts arrive normalised: 令和7年3月12日 is 2025-03-12, 110000円 is 110,000.
    assert_eq!(
        field(&clusters[0]["rows"], "invoice_date"),
        [
            json!("2025-03-05"),
            json!("2025-03-05"),
            json!("2025-03-12")
        ]
    );
    assert!(
        field(&clusters[0]["rows"], "amount")
            .iter()
            .all(|a| num(a) == 110000.0)
    );
    assert_eq!(clusters[1]["reason"], "similar_invoice_no");
    assert_eq!(clusters[1]["score"], 0.9212);
    assert_eq!(
        field(&clusters[1]["rows"], "invoice_no"),
        [json!("TJ-2025-08812"), json!("TJ-2025-08821")]
    );
    let duplicates = ran.output("invoice_duplicate_detection__detect", "duplicates");
    assert_eq!(
        field(&duplicates, "cluster_id"),
        [json!(1), json!(1), json!(2), json!(1), json!(2)]
    );
}

#[test]
fn three_way_match_exceptions_lists_every_kind_largest_first() {
    let ws = Workspace::new();
    let ran = run_templates(
        &ws,
        &["purchasing/three_way_match_exceptions.yaml"],
        json!({"purchase_orders_csv": "samples/purchase_order_lines.csv", "receipts_csv": "samples/receipts.csv",
               "supplier_invoices_csv": "samples/supplier_invoices.csv"}),
    );
    assert_eq!(ran.status, RunStatus::Finished, "{:?}", ran.failures);
    let sorted = ran.output("three_way_match_exceptions__sorted", "rows");
    let got: Vec<(Json, Json, f64)> = sorted
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["po_no"].clone(), e["type"].clone(), num(&e["amount"])))
        .collect();
    let want: Vec<(Json, Json, f64)> = [
        ("PO-2502", "quantity_mismatch", 148000.0),
        ("PO-2505", "missing_invoice", 98000.0),
        ("PO-2506", "over_invoiced", 60000.0),
        ("PO-2503", "price_mismatch", 15000.0),
        ("PO-2599", "missing_po", 12000.0),
        ("PO-2504", "missing_receipt", 11000.0),
        ("PO-2507", "amount_mismatch", 500.0),
    ]
    .into_iter()
    .map(|(p, t, a)| (json!(p), json!(t), a))
    .collect();
    assert_eq!(got, want);
    let matches = ran.output("three_way_match_exceptions__match", "matches");
    assert_eq!(
        field(&matches, "status"),
        [json!("matched"), json!("within_tolerance")]
    );
    let summary = ran.output("three_way_match_exceptions__match", "summary");
    assert_eq!(summary["exception_count"], 7);
    assert_eq!(summary["difference_total"], 223500);
}

#[test]
fn po_policy_compliance_then_exception_report_writes_the_report_workbook() {
    let ws = Workspace::new();
    // Composed like `keiri generate --apply-mode compose`: the report's `findings` import is
    // bound to the policy template's `violations` export by its `accepts` list.
    let ran = run_templates(
        &ws,
        &[
            "purchasing/po_policy_compliance.yaml",
            "reporting/exception_report.yaml",
        ],
        json!({"purchase_orders_csv": "samples/purchase_orders.csv", "notify_channel": "email", "notify_to": "keiri@example.co.jp"}),
    );
    let issues = ran.output("po_policy_compliance__quality", "issues");
    // Row 7 (0-based) is the second P-007, row 8 has no po_no, row 9 is △20,000.
    let got: Vec<(Json, Json)> = issues
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["rule"].clone(), i["row_index"].clone()))
        .collect();
    assert_eq!(
        got,
        [
            (json!("required"), json!(8)),
            (json!("unique"), json!(7)),
            (json!("range"), json!(9))
        ]
    );
    let violations = ran.output("po_policy_compliance__policy", "violations");
    let got: Vec<(Json, Json)> = violations
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["rule_id"].clone(), v["row"]["po_no"].clone()))
        .collect();
    assert_eq!(
        got,
        [
            (json!("PO-01"), json!("P-003")),
            (json!("PO-02"), json!("P-004")),
            (json!("PO-03"), json!("P-004")),
            (json!("PO-04"), json!("P-005")),
        ]
    );
    let passed = ran.output("po_policy_compliance__policy", "passed");
    assert_eq!(
        field(&passed, "po_no"),
        [
            json!("P-001"),
            json!("P-002"),
            json!("P-006"),
            json!("P-007"),
            json!("P-010")
        ]
    );

    // The report: two errors, two warnings, one row per (severity, rule).
    let summary = ran.output("exception_report__summarize", "summary");
    assert_eq!(
        summary,
        json!({"total_count": 4, "by_severity": {"error": 2, "warning": 2}})
    );
    let out_path = ran.output("exception_report__write", "out_path");
    let path = PathBuf::from(out_path.as_str().unwrap());
    assert!(
        path.starts_with(&ran.run_dir),
        "{} is outside the run directory",
        path.display()
    );
    assert!(
        path.ends_with("outputs/exception_report.xlsx"),
        "{}",
        path.display()
    );
    // Read back: the counts per (severity, rule) in Japanese above the violations
    // themselves, each with the order it is about.
    let grid = sheet_values(&path, "例外");
    let s = |t: &str| Data::String(t.into());
    let n = |x: f64| Data::Float(x);
    assert_eq!(grid[0][0], s("例外レポート"));
    assert_eq!(grid[2][..3], [s("重要度"), s("ルール"), s("件数")]);
    let counts: Vec<&[Data]> = grid[3..7].iter().map(|r| &r[..3]).collect();
    assert_eq!(
        counts,
        [
            [s("エラー"), s("PO-01"), n(1.0)],
            [s("エラー"), s("PO-02"), n(1.0)],
            [s("警告"), s("PO-03"), n(1.0)],
            [s("警告"), s("PO-04"), n(1.0)],
        ]
    );
    assert!(grid[7].iter().all(|c| *c == Data::Empty), "{:?}", grid[7]);
    let header = &grid[8];
    let col = |h: &str| {
        header
            .iter()
            .position(|c| *c == s(h))
            .unwrap_or_else(|| panic!("no {h} in {header:?}"))
    };
    let listed: Vec<(Data, Data, Data, Data)> = grid[9..13]
        .iter()
        .map(|r| {
            (
                r[col("ルール")].clone(),
                r[col("重要度")].clone(),
                r[col("発注番号")].clone(),
                r[col("金額")].clone(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            (s("PO-01"), s("エラー"), s("P-003"), n(180_000.0)),
            (s("PO-02"), s("エラー"), s("P-004"), n(1_500_000.0)),
            (s("PO-03"), s("警告"), s("P-004"), n(1_500_000.0)),
            (s("PO-04"), s("警告"), s("P-005"), n(60_000.0)),
        ]
    );
    assert_eq!(grid.len(), 13, "{grid:?}");
    // Amounts are numbers shown #,##0, and the order dates real dates.
    let amount_cell = format!("{}10", column_letter(col("金額")));
    assert_eq!(number_format(&path, &amount_cell), "#,##0");
    let mut book: Xlsx<_> = open_workbook(&path).unwrap();
    let range = book.worksheet_range("例外").unwrap();
    let order_date = range
        .get_value((9, u32::try_from(col("order_date")).unwrap()))
        .cloned();
    assert!(
        matches!(order_date, Some(Data::DateTime(_))),
        "{order_date:?}"
    );
    // The confirmation is a person's: the run pauses there; notify waits for it.
    assert_eq!(ran.status, RunStatus::Paused);
    assert_eq!(
        ran.status("exception_report__confirm"),
        Some(NodeStatus::Paused)
    );
    assert_eq!(
        ran.status("exception_report__notify"),
        Some(NodeStatus::Skipped)
    );
    assert!(ran.failures.is_empty(), "{:?}", ran.failures);
}

#[test]
fn bank_reconciliation_clears_the_sample_statement_up_to_the_review() {
    let ws = Workspace::new();
    let ran = run_templates(
        &ws,
        &["receivables/bank_reconciliation.yaml"],
        json!({"bank_statement_csv": "samples/bank_statement.csv", "receivables_workbook": "samples/receivables.xlsx"}),
    );
    let matches = ran.output("bank_reconciliation__reconcile", "matches");
    let got: Vec<(f64, Vec<Json>, Json)> = matches
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                num(&m["deposit"]["amount"]),
                field(&m["receivables"], "invoice_no"),
                m["difference_reason"].clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (330000.0, vec![json!("AR-1001")], json!("none")),
            (131340.0, vec![json!("AR-1002")], json!("transfer_fee")),
            (
                132000.0,
                vec![json!("AR-1003"), json!("AR-1004")],
                json!("none")
            ),
        ]
    );
    let unmatched = ran.output("bank_reconciliation__reconcile", "unmatched_deposits");
    assert_eq!(
        field(&unmatched, "amount")
            .iter()
            .map(num)
            .collect::<Vec<_>>(),
        [200000.0, 50000.0]
    );
    let open = ran.output("bank_reconciliation__reconcile", "open_receivables");
    assert_eq!(
        field(&open, "invoice_no"),
        [json!("AR-1005"), json!("AR-1006"), json!("AR-1007")]
    );
    assert_eq!(
        ran.output("bank_reconciliation__reconcile", "summary"),
        json!({"deposit_count": 5, "deposit_amount": 843340, "cleared_count": 3, "cleared_amount": 593340,
               "unmatched_deposit_count": 2, "unmatched_deposit_amount": 250000, "open_receivable_count": 3,
               "open_receivable_amount": 847000, "fee_difference_total": 660})
    );
    // The review is a person's: the run pauses there with the reconciled rows to review.
    assert_eq!(ran.status, RunStatus::Paused, "{:?}", ran.failures);
    assert!(ran.failures.is_empty(), "{:?}", ran.failures);
    assert_eq!(
        ran.status("bank_reconciliation__review"),
        Some(NodeStatus::Paused)
    );
}

#[test]
fn monthly_close_checklist_checks_the_journal_and_the_trial_balance() {
    let ws = Workspace::new();
    let ran = run_templates(
        &ws,
        &["closing/monthly_close_checklist.yaml"],
        json!({"journal_csv": "samples/journal.csv", "trial_balance_workbook": "samples/trial_balance.xlsx",
               "period_start": "2025-03-01", "period_end": "2025-03-31"}),
    );
    let issues = ran.output("monthly_close_checklist__journal_check", "issues");
    let got: Vec<(Json, Json)> = issues
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["voucher"].clone(), i["check"].clone()))
        .collect();
    assert_eq!(
        got,
        [
            (json!("J-0304"), json!("balance")),
            (json!("J-0305"), json!("weekend")),
            (json!("J-0306"), json!("zero_amount")),
            (json!("J-0307"), json!("period")),
        ]
    );
    assert_eq!(
        ran.output("monthly_close_checklist__journal_check", "balanced"),
        json!(false)
    );
    let variances = ran.output("monthly_close_checklist__variance", "issues");
    assert_eq!(
        field(&variances, "account"),
        [json!("売掛金"), json!("未払金"), json!("広告宣伝費")]
    );
    // ai.explain_variances needs a model and none is configured: the checklist that includes
    // its comments is skipped (the test below gives it one).
    assert_eq!(
        ran.failures,
        [(
            "monthly_close_checklist__explain".to_string(),
            "LLM_NOT_CONFIGURED".to_string()
        )]
    );
    assert_eq!(
        ran.status("monthly_close_checklist__checklist"),
        Some(NodeStatus::Skipped)
    );
}

#[test]
fn monthly_close_checklist_with_a_model_comments_on_each_variance() {
    let ws = Workspace::new();
    let (llm, server) = crate::ai::fake_llm(vec![keiri_llm::testkit::Reply::json_content(
        &json!({"comments": [
            {"row": 1, "comment": "3月末の大口売上の入金待ち"},
            {"row": 2, "comment": "決算賞与の未払計上"},
            {"row": 3, "comment": "新製品の広告出稿"},
        ]}),
    )]);
    let ran = run_templates_with(
        &ws,
        &["closing/monthly_close_checklist.yaml"],
        json!({"journal_csv": "samples/journal.csv", "trial_balance_workbook": "samples/trial_balance.xlsx",
               "period_start": "2025-03-01", "period_end": "2025-03-31"}),
        json!({}),
        Some(llm),
    );
    assert!(ran.failures.is_empty(), "{:?}", ran.failures);
    assert_eq!(ran.status, RunStatus::Finished);
    let explained = ran.output("monthly_close_checklist__explain", "rows");
    assert_eq!(
        field(&explained, "comment"),
        [
            json!("3月末の大口売上の入金待ち"),
            json!("決算賞与の未払計上"),
            json!("新製品の広告出稿")
        ]
    );
    assert_eq!(
        server.requests().len(),
        1,
        "one call for the three flagged accounts"
    );
    let markdown = ran.output("monthly_close_checklist__checklist", "markdown");
    assert!(
        markdown.to_string().contains("決算賞与の未払計上"),
        "the checklist shows the comments: {markdown}"
    );
    // The call is in the run's events: model and tokens, never the key.
    let events = std::fs::read_to_string(ran.run_dir.join("events.jsonl")).unwrap();
    let call = events
        .lines()
        .map(|l| serde_json::from_str::<Json>(l).unwrap())
        .find(|e| e["event"] == "llm_call")
        .expect("an llm_call event");
    assert_eq!(call["node"], "monthly_close_checklist__explain");
    assert_eq!(call["call"]["model"], "test-model");
    assert_eq!(call["call"]["total_tokens"], 15);
    assert!(!events.contains(crate::ai::API_KEY));
}

#[test]
fn payroll_anomaly_check_flags_changes_and_input_problems() {
    let ws = Workspace::new();
    let ran = run_templates(
        &ws,
        &["payroll/payroll_anomaly_check.yaml"],
        json!({"payroll_current_workbook": "samples/payroll_current.xlsx", "payroll_prior_workbook": "samples/payroll_prior.xlsx"}),
    );
    assert_eq!(ran.status, RunStatus::Finished, "{:?}", ran.failures);
    let anomalies = ran.output("payroll_anomaly_check__combined", "rows");
    let rows = anomalies.as_array().unwrap();
    let from = |label: &str| {
        rows.iter()
            .filter(|r| r["source"] == label)
            .cloned()
            .collect::<Vec<_>>()
    };
    let mut changed: Vec<(String, f64)> = from("前月比の変動")
        .iter()
        .map(|r| {
            (
                r["employee_no"].as_str().unwrap_or_default().to_string(),
                num(&r["change_amount"]),
            )
        })
        .collect();
    changed.sort_by(|a, b| a.0.cmp(&b.0));
    // E003 +100,000 (35 %), E006 left (−265,000), E007 new (+240,000).
    assert_eq!(
        changed,
        [
            ("E003".to_string(), 100000.0),
            ("E006".to_string(), -265000.0),
            ("E007".to_string(), 240000.0)
        ]
    );
    let problems = from("入力の問題");
    assert_eq!(
        field(&Json::Array(problems), "rule"),
        [json!("required"), json!("range")]
    );
    // Personal data never reaches the results.
    let pay = ran.output("payroll_anomaly_check__redact", "rows");
    assert!(
        pay[0].get("my_number").is_none() && pay[0].get("bank_account").is_none(),
        "{}",
        pay[0]
    );
}

#[test]
fn exception_report_sends_after_the_confirmation() {
    let ws = Workspace::new();
    let ran = run_templates_answered(
        &ws,
        &[
            "payables/invoice_duplicate_detection.yaml",
            "reporting/exception_report.yaml",
        ],
        json!({"invoice_csv": "samples/invoices.csv", "notify_channel": "file", "notify_to": "keiri@example.co.jp"}),
        json!({"exception_report__confirm": {"approved": true, "comment": "確認済み"}}),
    );
    assert_eq!(ran.status, RunStatus::Finished, "{:?}", ran.failures);
    assert_eq!(
        ran.output("exception_report__confirm", "approved"),
        json!(true)
    );
    assert_eq!(
        ran.status("exception_report__notify"),
        Some(NodeStatus::Finished)
    );
    // The file channel records the message in the node's folder of the run.
    let log = ran
        .run_dir
        .join("files/exception_report__notify/notifications.jsonl");
    let text = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    assert_eq!(text.lines().count(), 1, "{text}");
    let line: Json = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(line["to"], json!(["keiri@example.co.jp"]), "{line}");
    // Five duplicate rows (3 + 2) make the report's findings.
    let summary = ran.output("exception_report__summarize", "summary");
    assert_eq!(summary["total_count"], json!(5), "{summary}");

    // The workbook a manager is handed: the counts per reason in words, then every
    // suspected invoice with its number, vendor, date and amount, a cluster's rows together
    // (samples/README.md: rows 1, 3, 7 and rows 5, 9).
    let report = PathBuf::from(
        ran.output("exception_report__write", "out_path")
            .as_str()
            .unwrap(),
    );
    let grid = sheet_values(&report, "例外");
    let s = |t: &str| Data::String(t.into());
    let n = |x: f64| Data::Float(x);
    assert_eq!(grid[0][0], s("例外レポート"));
    assert_eq!(grid[2][..2], [s("理由"), s("件数")]);
    assert_eq!(grid[3][..2], [s("同じ請求書（完全一致）"), n(3.0)]);
    assert_eq!(grid[4][..2], [s("請求書番号の打ち間違いの疑い"), n(2.0)]);
    assert_eq!(
        grid[6],
        [
            s("請求書番号"),
            s("取引先"),
            s("請求日"),
            s("金額"),
            s("摘要"),
            s("グループ"),
            s("理由")
        ]
    );
    let listed: Vec<(Data, Data, Data, Data)> = grid[7..]
        .iter()
        .map(|r| (r[0].clone(), r[1].clone(), r[3].clone(), r[6].clone()))
        .collect();
    let exact = s("同じ請求書（完全一致）");
    let mistyped = s("請求書番号の打ち間違いの疑い");
    assert_eq!(
        listed,
        [
            (
                s("INV-2025-0301"),
                s("株式会社山田商事"),
                n(110_000.0),
                exact.clone()
            ),
            (
                s("INV-2025-0301"),
                s("(株)山田商事"),
                n(110_000.0),
                exact.clone()
            ),
            (s("INV-2025-0301"), s("ﾔﾏﾀﾞ商事"), n(110_000.0), exact),
            (
                s("TJ-2025-08812"),
                s("東京事務機株式会社"),
                n(48_400.0),
                mistyped.clone()
            ),
            (
                s("TJ-2025-08821"),
                s("東京事務機(株)"),
                n(48_400.0),
                mistyped
            ),
        ]
    );
    assert_eq!(number_format(&report, "D8"), "#,##0");
    // 令和7年3月12日 in the export is a date cell: 2025-03-12 is Excel serial 45728.
    let mut book: Xlsx<_> = open_workbook(&report).unwrap();
    let range = book.worksheet_range("例外").unwrap();
    let dates: Vec<f64> = (7..12)
        .map(|r| match range.get_value((r, 2)) {
            Some(Data::DateTime(d)) => d.as_f64(),
            other => panic!("row {r}: {other:?} is not a date"),
        })
        .collect();
    assert_eq!(dates, [45721.0, 45721.0, 45728.0, 45726.0, 45730.0]);
}

/// A sheet's cells as a grid of values (rows from the first, columns from A).
fn sheet_values(path: &Path, sheet: &str) -> Vec<Vec<Data>> {
    let mut book: Xlsx<_> = open_workbook(path).unwrap();
    let range = book.worksheet_range(sheet).unwrap();
    let (rows, cols) = range.end().map_or((0, 0), |(r, c)| (r + 1, c + 1));
    (0..rows)
        .map(|r| {
            (0..cols)
                .map(|c| range.get_value((r, c)).cloned().unwrap_or(Data::Empty))
                .collect()
        })
        .collect()
}

fn column_letter(index: usize) -> String {
    let mut n = index + 1;
    let mut out = String::new();
    while n > 0 {
        let r = (n - 1) % 26;
        out.insert(0, char::from(b'A' + u8::try_from(r).unwrap()));
        n = (n - 1) / 26;
    }
    out
}

/// The number format of `cell` on the first sheet of a workbook, read from its XML: the
/// cell's style index, that style's format id, and the format's code (3 is Excel's built-in
/// `#,##0`).
fn number_format(path: &Path, cell: &str) -> String {
    let file = std::fs::File::open(path).unwrap();
    let mut zip = zip::ZipArchive::new(file).unwrap();
    let mut read = |name: &str| {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut zip.by_name(name).unwrap(), &mut text).unwrap();
        text
    };
    let sheet = read("xl/worksheets/sheet1.xml");
    let styles = read("xl/styles.xml");
    let attr = |tag: &str, name: &str| -> Option<String> {
        let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        Some(tag[start..start + tag[start..].find('"')?].to_string())
    };
    let at = sheet
        .find(&format!("<c r=\"{cell}\""))
        .unwrap_or_else(|| panic!("no cell {cell}"));
    let tag = &sheet[at..at + sheet[at..].find('>').unwrap()];
    let style: usize = attr(tag, "s").map_or(0, |s| s.parse().unwrap());
    let xfs = &styles[styles.find("<cellXfs").unwrap()..];
    let xf = xfs.split("<xf ").nth(style + 1).unwrap();
    let id = attr(&format!(" {xf}"), "numFmtId").unwrap();
    if id == "3" {
        return "#,##0".into();
    }
    let at = styles
        .find(&format!("numFmtId=\"{id}\""))
        .unwrap_or_else(|| panic!("no format {id}"));
    let tag = &styles[at..at + styles[at..].find('>').unwrap()];
    attr(tag, "formatCode").unwrap_or_else(|| format!("builtin {id}"))
}

#[test]
fn expense_claim_policy_lists_each_broken_rule_by_claim() {
    let ws = Workspace::new();
    let ran = run_templates(
        &ws,
        &["expenses/expense_claim_policy.yaml"],
        json!({"expense_claims_csv": "samples/expense_claims.csv"}),
    );
    // E-009 is a refund of △1,200 (row 8, 0-based): an input issue, not checked by the rules.
    let issues = ran.output("expense_claim_policy__quality", "issues");
    let got: Vec<(Json, Json)> = issues
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["rule"].clone(), i["row_index"].clone()))
        .collect();
    assert_eq!(got, [(json!("range"), json!(8))]);
    // By hand (samples/README.md): E-002 38,500 without a receipt; E-003 交際費 24,000 for 3
    // (8,000 a head > 5,000); E-004 approved by its applicant; E-006 72,000 without a
    // pre-approval (E-005's 64,800 has one); E-008 交際費 without attendees. E-010's 30,000
    // has its receipt (the threshold is inclusive).
    let violations = ran.output("expense_claim_policy__policy", "violations");
    let got: Vec<(Json, Json)> = violations
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["rule_id"].clone(), v["row"]["claim_no"].clone()))
        .collect();
    assert_eq!(
        got,
        [
            (json!("EX-02"), json!("E-002")),
            (json!("EX-03"), json!("E-003")),
            (json!("EX-04"), json!("E-004")),
            (json!("EX-01"), json!("E-006")),
            (json!("EX-03"), json!("E-008")),
        ]
    );
    let passed = ran.output("expense_claim_policy__policy", "passed");
    assert_eq!(
        field(&passed, "claim_no"),
        [
            json!("E-001"),
            json!("E-005"),
            json!("E-007"),
            json!("E-010")
        ]
    );
    ws.assert_inputs_unchanged();
}
