//! Template choice by retrieval (BM25 over the templates' ids, titles, descriptions and tags).

use keiri_search::Retriever;

use super::*;

fn select<'t>(
    instruction: &str,
    templates: &'t keiri_plan::Templates,
) -> Vec<&'t keiri_plan::TemplateSpec> {
    let retriever = Retriever::build(&catalog(), templates, None).unwrap();
    keiri_design::select_templates(
        instruction,
        &GenerateOptions::default(),
        templates,
        &retriever,
    )
    .unwrap()
}

fn check(instruction: &str, expect: &[&str]) {
    let templates = templates();
    let chosen = select(instruction, &templates);
    let ids: Vec<&str> = chosen.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, expect, "{instruction}");
}

#[test]
fn retrieval_chooses_the_templates_whose_job_the_instruction_names() {
    // The e2e compose journey and the CLI tests rely on this one.
    check(
        "請求書の重複を検出してExcelに出力",
        &["invoice_duplicate_detection"],
    );
    // A journal summary by account and month with a month-on-month variance: its own
    // template, not payroll (it used to be no job of any template).
    check(
        "仕訳帳を勘定科目別・月別に合計して前月比の増減を一覧にする",
        &["journal_monthly_variance"],
    );
    // A retirement-benefit workbook rolled forward: the roll-forward, not a payroll check
    // (it used to get the payroll check for sharing 給与-like words, then nothing).
    check(
        "退職給付引当金のワークブックを前期から当期に繰り越す",
        &["period_roll_forward"],
    );
    // A report asked for too is not a job: compose adds the report template for it afterwards
    // (`intent::complete`), retrieval does not choose it.
    check(
        "請求書CSVから重複を検出してレポートにする",
        &["invoice_duplicate_detection"],
    );
    // Two jobs named: both, in the order of the match.
    check(
        "請求書CSVから重複を検出して例外レポートにする",
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

/// The job is the instruction's: a payroll file attached to "process this file" does not make
/// it a payroll check (the digest is not even an input of the choice any more).
#[test]
fn an_instruction_that_names_no_job_chooses_no_template() {
    check("このファイルを処理したい", &[]);
}

/// A template that shares only a word with the instruction (請求書, 発注, 前月比, 照合) is not
/// chosen: each of these named a job no template does, and used to get an unrelated one.
#[test]
fn a_shared_word_does_not_choose_a_template() {
    // Depreciation from a fixed-asset register: not the journal summary (仕訳) or payroll.
    check("固定資産台帳から今月の減価償却費を計算して仕訳を作る", &[]);
    // Two text files compared: not a close checklist or a three-way match.
    check("2つのテキストファイルを比較して差分を出す", &[]);
    // Withholding tax computed from pay: 給与 names the domain, not the payroll check's job
    // (comparing months, flagging changes).
    check(
        "毎月の給与から源泉徴収税額を計算して、納付書用に月別で集計する",
        &[],
    );
    check(
        "給与を前月と比べて大きく変わった社員を洗い出す",
        &["payroll_anomaly_check"],
    );
    // An evidence ZIP against the ledger: its own template now, not three-way match + bank
    // reconciliation for sharing 請求書 and 照合.
    check(
        "証憑のZIPの請求書PDFを仕訳帳と照合する",
        &["evidence_reconciliation"],
    );
}

/// Duplicates in an invoice CSV are one job: the three-way match, which shares 請求書 with
/// it and needs three files, is not added.
#[test]
fn an_invoice_duplicate_job_is_not_a_three_way_match() {
    check(
        "請求書CSVから重複を検出する",
        &["invoice_duplicate_detection"],
    );
}

/// A template whose job the instruction names is chosen even when BM25 scores it nothing (its
/// job words are not in its indexed text).
#[test]
fn a_named_job_counts_without_a_bm25_score() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("closing");
    std::fs::create_dir_all(&folder).unwrap();
    keiri_fs::write_atomic(
        &folder.join("rollforward.yaml"),
        "id: rollforward\nversion: 1.0.0\ntitle: 繰越\ndescription: 前期のシートを当期にコピーします\njob_words: [ロールフォワード]\nimports: {}\nexports:\n  rows: {from: '${read.rows}', type: array}\ngraph_snippet:\n  - id: read\n    block: csv.read\n    in: {path: inputs/a.csv}\n    out: {rows: rows}\n"
            .as_bytes(),
    )
    .unwrap();
    let (templates, issues) = keiri_plan::Templates::load(&[dir.path().to_path_buf()]);
    assert!(issues.is_empty(), "{issues:?}");
    let ids: Vec<String> = select("退職給付のロールフォワードを作る", &templates)
        .iter()
        .map(|t| t.id.clone())
        .collect();
    assert_eq!(ids, ["rollforward"]);
}

/// A job word standing inside a longer job word of another template names the more specific
/// job only: 重複 (invoice duplicates) inside 重複登録 of the vendor master, "duplicate" inside
/// "duplicate vendors". Where it also stands on its own, both jobs are named.
#[test]
fn a_job_word_inside_a_more_specific_one_names_only_that_job() {
    check(
        "取引先マスタに重複登録されている仕入先がないか調べる",
        &["vendor_master_name_matching"],
    );
    check(
        "Find duplicate vendors in the vendor master before the payment run",
        &["vendor_master_name_matching"],
    );
    check("請求書の重複を検出する", &["invoice_duplicate_detection"]);
    let templates = templates();
    let both = select(
        "取引先マスタの重複登録を調べて、請求書の重複も検出する",
        &templates,
    );
    let mut ids: Vec<&str> = both.iter().map(|t| t.id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        ["invoice_duplicate_detection", "vendor_master_name_matching"]
    );
}
