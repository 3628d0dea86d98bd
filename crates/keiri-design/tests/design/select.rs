//! Template choice by retrieval (BM25 over the templates' ids, titles, descriptions and tags).

use keiri_search::Retriever;

use super::*;

fn select<'t>(
    instruction: &str,
    digest: &str,
    templates: &'t keiri_plan::Templates,
) -> Vec<&'t keiri_plan::TemplateSpec> {
    let retriever = Retriever::build(&catalog(), templates, None).unwrap();
    keiri_design::select_templates(
        instruction,
        digest,
        &GenerateOptions::default(),
        templates,
        &retriever,
    )
    .unwrap()
}

fn check(instruction: &str, expect: &[&str]) {
    let templates = templates();
    let chosen = select(instruction, "", &templates);
    let ids: Vec<&str> = chosen.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, expect, "{instruction}");
}

#[test]
fn retrieval_chooses_the_best_template_and_a_close_runner_up() {
    // The e2e compose journey and the CLI tests rely on this one.
    check(
        "請求書の重複を検出してExcelに出力",
        &["invoice_duplicate_detection"],
    );
    // A report step asked for too: the report template is a close runner-up.
    check(
        "請求書CSVから重複を検出してレポートにする",
        &["invoice_duplicate_detection", "exception_report"],
    );
    check(
        "銀行明細と入金予定を照合して、未照合の入金を洗い出したい",
        &["bank_reconciliation"],
    );
    check(
        "発注書・検収・請求書の3点照合で差異を出す",
        &["three_way_match_exceptions"],
    );
    check(
        "給与の異常を前月と比べて見つける",
        &["payroll_anomaly_check"],
    );
    check("月次決算のチェックリスト", &["monthly_close_checklist"]);
    check("例外をレポートにまとめる", &["exception_report"]);
    check(
        "Three-way match of purchase orders",
        &["three_way_match_exceptions"],
    );
}

/// Token overlap used to pick a template for anything that shared one kanji with it.
#[test]
fn an_unrelated_instruction_chooses_no_template() {
    check("今日の天気", &[]);
}

#[test]
fn a_digest_widens_the_query() {
    let templates = templates();
    let chosen = select(
        "このファイルを処理したい",
        "給与明細 支給額 前月比 従業員",
        &templates,
    );
    assert_eq!(
        chosen.first().map(|t| t.id.as_str()),
        Some("payroll_anomaly_check")
    );
}
