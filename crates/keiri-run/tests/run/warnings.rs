//! Warnings on runs that finish (#30.3): a file with no data rows, a transform that loses
//! every row, a check or match that flags nearly every row, rows a block left out and values
//! it could not read. Each reaches `RunOutcome::warnings`, the `node_warning` event and
//! `state.json`; a clean run has none. Builtins through the engine with the shipped catalog,
//! on small exports written out here; every expected message was worked out by hand.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::{run_builtins, run_in};
use keiri_run::{Event, RunOutcome, RunStatus};

/// Runs `yaml` with the builtins in a workspace holding `files` (see [`run_builtins`]).
fn run(files: &[(&str, &str)], yaml: &str) -> (RunOutcome, Vec<Event>, tempfile::TempDir) {
    run_builtins(files, yaml, |_| {})
}

/// The outcome's warnings as (node, code, Japanese message, English message).
fn warnings(outcome: &RunOutcome) -> Vec<(String, String, String, String)> {
    outcome
        .warnings
        .iter()
        .map(|w| {
            (
                w.node.clone(),
                w.code.clone(),
                w.message_ja.clone(),
                w.message_en.clone(),
            )
        })
        .collect()
}

fn codes(outcome: &RunOutcome) -> Vec<(String, String)> {
    outcome
        .warnings
        .iter()
        .map(|w| (w.node.clone(), w.code.clone()))
        .collect()
}

/// A 弥生-style journal export: one line per row, debit and credit side by side, their tax
/// amounts in columns of their own. Ten lines; only line 1 carries consumption tax.
const JOURNAL: &str =
    "\u{feff}伝票番号,日付,借方勘定科目,借方金額,借方税金額,貸方勘定科目,貸方金額,貸方税金額,摘要
1,2026-04-01,消耗品費,1100,100,普通預金,1100,0,文具
2,2026-04-02,旅費交通費,2000,0,現金,2000,0,電車代
3,2026-04-03,普通預金,55000,0,売掛金,55000,0,A社入金
4,2026-04-06,支払手数料,440,0,普通預金,440,0,振込手数料
5,2026-04-07,通信費,8800,0,未払金,8800,0,携帯電話
6,2026-04-08,地代家賃,120000,0,普通預金,120000,0,4月分家賃
7,2026-04-09,普通預金,33000,0,売掛金,33000,0,B社入金
8,2026-04-10,租税公課,5000,0,現金,5000,0,収入印紙
9,2026-04-13,給料手当,250000,0,普通預金,250000,0,4月分給与
10,2026-04-14,普通預金,11000,0,売掛金,11000,0,C社入金


";

const JOURNAL_CHECK: &str = "id: t
graph:
  - id: read
    block: csv.read
    in: {path: journal.csv}
    out: {rows: rows}
  - id: check
    block: control.journal_check
    in:
      entries: ${read.rows}
      voucher_field: 伝票番号
      debit_field: DEBIT
      credit_field: CREDIT
      account_fields: [借方勘定科目, 貸方勘定科目]
      date_field: 日付
      checks: [zero_amount, balance]
    out: {issues: issues, balanced: balanced}
";

#[test]
fn a_clean_run_has_no_warnings() {
    // The right columns: every line has amounts and every voucher balances.
    let yaml = JOURNAL_CHECK
        .replace("DEBIT", "借方金額")
        .replace("CREDIT", "貸方金額");
    let (outcome, events, ws) = run(&[("journal.csv", JOURNAL)], &yaml);
    assert_eq!(outcome.status, RunStatus::Finished);
    assert_eq!(warnings(&outcome), vec![]);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::NodeWarning { .. }))
    );
    let state = std::fs::read_to_string(outcome.run_dir.join("state.json")).unwrap();
    assert!(!state.contains("warnings"), "{state}");
    drop(ws);
}

#[test]
fn a_check_that_flags_nearly_every_line_warns_to_check_the_columns() {
    // The tax columns picked as the amounts: 9 of the 10 lines have 0 on both sides.
    let yaml = JOURNAL_CHECK
        .replace("DEBIT", "借方税金額")
        .replace("CREDIT", "貸方税金額");
    let (outcome, events, _ws) = run(&[("journal.csv", JOURNAL)], &yaml);
    assert_eq!(outcome.status, RunStatus::Finished);
    // Voucher 1 (debit tax 100, credit tax 0) does not balance: 1 line of 10, no warning.
    assert_eq!(
        warnings(&outcome),
        vec![(
            "check".to_string(),
            "MOSTLY_FLAGGED".to_string(),
            "10 行中 9 行（90%）がチェック zero_amount の問題になりました。列の指定や条件を確認してください"
                .to_string(),
            "9 of 10 rows (90%) came out as issues of the zero_amount check: check the columns and conditions"
                .to_string(),
        )]
    );
    // The same warning is an event of the node, and is in state.json for run_get.
    assert!(events.iter().any(|e| matches!(e,
        Event::NodeWarning { node, code, .. } if node == "check" && code == "MOSTLY_FLAGGED")));
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(outcome.run_dir.join("state.json")).unwrap())
            .unwrap();
    assert_eq!(state["warnings"][0]["node"], "check");
    assert_eq!(state["warnings"][0]["code"], "MOSTLY_FLAGGED");
}

#[test]
fn a_header_only_export_warns_where_the_rows_are_missing() {
    // The export of a month with no entries: the header, then blank lines.
    let header = JOURNAL.lines().next().unwrap();
    let empty = format!("{header}\r\n\r\n");
    let yaml = JOURNAL_CHECK
        .replace("DEBIT", "借方金額")
        .replace("CREDIT", "貸方金額");
    let (outcome, _, _ws) = run(&[("journal.csv", &empty)], &yaml);
    assert_eq!(outcome.status, RunStatus::Finished);
    assert_eq!(
        warnings(&outcome),
        vec![
            (
                "read".to_string(),
                "NO_ROWS".to_string(),
                "rows が 0 行です。見出しだけのファイルか、読み込む対象が空です".to_string(),
                "rows has no rows: the file has only a header, or there was nothing to read"
                    .to_string(),
            ),
            (
                "check".to_string(),
                "NO_ROWS".to_string(),
                "仕訳が 0 行のため、何もチェックしていません（balanced は意味を持ちません）"
                    .to_string(),
                "there are no journal lines: nothing was checked (balanced means nothing here)"
                    .to_string(),
            ),
        ]
    );
}

#[test]
fn a_transform_that_loses_every_row_warns_once_not_at_every_node_after_it() {
    let yaml = "id: t
graph:
  - id: read
    block: csv.read
    in: {path: journal.csv}
    out: {rows: rows}
  - id: large
    block: transforms.filter_rows
    in: {rows: '${read.rows}', condition: '借方金額 >= 1000000'}
    out: {rows: large}
  - id: total
    block: transforms.group_aggregate
    in: {rows: '${large.large}', by: [借方勘定科目], aggregations: [{field: 借方金額, op: sum, as: 合計}]}
    out: {rows: totals}
";
    let (outcome, _, _ws) = run(&[("journal.csv", JOURNAL)], yaml);
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    assert_eq!(
        warnings(&outcome),
        vec![(
            "large".to_string(),
            "NO_ROWS".to_string(),
            "rows が 0 行になりました（入力は 10 行）。条件・キー・列の指定を確認してください"
                .to_string(),
            "rows came out with no rows (the input had 10): check the conditions, keys and columns"
                .to_string(),
        )]
    );
}

#[test]
fn a_filter_whose_plan_keeps_only_the_excluded_rows_does_not_warn_when_every_row_is_excluded() {
    // The aging's long-overdue list: the plan takes the rows that fail the rule. All ten lines
    // are at least 100 (so every row is excluded and `rows` is empty), and that is the
    // answer, not lost rows; taking `rows` as well would warn as before.
    let only_excluded = "id: t
graph:
  - id: read
    block: csv.read
    in: {path: journal.csv}
    out: {rows: rows}
  - id: small
    block: transforms.filter_rows
    in: {rows: '${read.rows}', condition: '借方金額 < 100'}
    out: {excluded: large}
";
    let (outcome, _, _ws) = run(&[("journal.csv", JOURNAL)], only_excluded);
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    assert_eq!(warnings(&outcome), vec![]);
    let both = only_excluded.replace(
        "out: {excluded: large}",
        "out: {rows: small, excluded: large}",
    );
    let (outcome, _, _ws) = run(&[("journal.csv", JOURNAL)], &both);
    let codes: Vec<(String, String)> = warnings(&outcome)
        .into_iter()
        .map(|(node, code, _, _)| (node, code))
        .collect();
    assert_eq!(codes, vec![("small".to_string(), "NO_ROWS".to_string())]);
}

#[test]
fn a_folder_without_the_files_asked_for_says_so_not_that_a_file_has_only_a_header() {
    // The month's evidence folder holds a note but no PDF.
    let yaml = "id: t
graph:
  - id: list
    block: file.list_folder
    in: {folder: evidence, extensions: ['.pdf']}
    out: {files: files}
";
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join("evidence")).unwrap();
    keiri_fs::write_atomic(
        &ws.path().join("evidence/memo.txt"),
        "未着分は来週".as_bytes(),
    )
    .unwrap();
    let (outcome, _) = run_in(ws.path(), yaml, |_| {});
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    assert_eq!(
        warnings(&outcome),
        vec![(
            "list".to_string(),
            "NO_ROWS".to_string(),
            "files が 0 件です。フォルダ（ZIP）に対象のファイルがありません。場所と絞り込み条件を確認してください".to_string(),
            "files is empty: the folder (or ZIP) holds no file to read; check its location and filters".to_string(),
        )]
    );
}

/// Expense claims: 5 rows.
const EXPENSES: &str = "申請番号,申請者,科目,金額
E-01,佐藤,旅費交通費,3000
E-02,鈴木,会議費,4500
E-03,高橋,交際費,12000
E-04,田中,消耗品費,800
E-05,伊藤,会議費,5000
";

#[test]
fn a_rule_stated_the_wrong_way_round_warns_and_a_sound_rule_does_not() {
    // R1 means "up to 100,000 yen" but says the opposite: every row violates it. R2 flags
    // E-03 only (12,000 > 10,000): 1 of 5, no warning.
    let yaml = "id: t
graph:
  - id: read
    block: csv.read
    in: {path: expenses.csv}
    out: {rows: rows}
  - id: policy
    block: control.policy_enforce
    in:
      rows: ${read.rows}
      rules:
        - {id: R1, condition: '金額 >= 100000'}
        - {id: R2, condition: '金額 <= 10000'}
    out: {violations: violations}
";
    let (outcome, _, _ws) = run(&[("expenses.csv", EXPENSES)], yaml);
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    assert_eq!(
        warnings(&outcome),
        vec![(
            "policy".to_string(),
            "MOSTLY_FLAGGED".to_string(),
            "5 行中 5 行（100%）がルール R1 の違反になりました。列の指定や条件を確認してください"
                .to_string(),
            "5 of 5 rows (100%) came out as violations of rule R1: check the columns and conditions"
                .to_string(),
        )]
    );
}

#[test]
fn invoices_left_out_of_the_comparison_are_counted_with_the_reason() {
    // Six invoices: INV-3 has no amount yet (未定), INV-5 and INV-6 no date. INV-1 and
    // INV-2 are the same invoice (same vendor and amount, 3 days apart).
    let invoices = "請求番号,取引先,請求日,金額
INV-1,山田商事,2026-04-01,55000
INV-2,山田商事,2026-04-04,55000
INV-3,佐藤工業,2026-04-05,未定
INV-4,佐藤工業,2026-04-10,33000
INV-5,鈴木物産,,21000
INV-6,鈴木物産,,21000
";
    let yaml = "id: t
graph:
  - id: read
    block: csv.read
    in: {path: invoices.csv}
    out: {rows: rows}
  - id: dups
    block: matching.duplicate_invoices
    in: {rows: '${read.rows}', vendor_field: 取引先, amount_field: 金額, date_field: 請求日}
    out: {duplicates: duplicates}
";
    let (outcome, _, _ws) = run(&[("invoices.csv", invoices)], yaml);
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    assert_eq!(
        warnings(&outcome),
        vec![
            (
                "dups".to_string(),
                "ROWS_SKIPPED".to_string(),
                "6 行中 1 行は金額（金額）が空か読めないため比較していません".to_string(),
                "1 of 6 rows were not compared: their amount (金額) is empty or unreadable"
                    .to_string(),
            ),
            (
                "dups".to_string(),
                "ROWS_SKIPPED".to_string(),
                "6 行中 2 行は日付（請求日）が空か読めないため比較していません".to_string(),
                "2 of 6 rows were not compared: their date (請求日) is empty or unreadable"
                    .to_string(),
            ),
        ]
    );
}

/// An export with no date column (`date_field: ''`, the spec's `absent_ok`): the invoices
/// are compared without dates, and the run says so. Worked by hand: 山田商事 55,000 twice
/// (months apart, no numbers) pair as same vendor and amount; 佐藤工業 33,000 and 33,300
/// differ in amount; 鈴木物産's 未定 is left out and counted. The date normaliser in front
/// skips the empty name and passes the rows on.
#[test]
fn invoices_without_a_date_column_are_compared_without_dates_and_the_run_says_so() {
    let invoices = "取引先,金額,摘要
山田商事,55000,4月分
山田商事,55000,5月分
佐藤工業,33000,保守
佐藤工業,33300,保守（改定後）
鈴木物産,未定,見積中
";
    let yaml = "id: t
graph:
  - id: read
    block: csv.read
    in: {path: invoices.csv}
    out: {rows: rows}
  - id: dates
    block: transforms.normalize_dates
    in: {rows: '${read.rows}', fields: ['']}
    out: {rows: rows}
  - id: dups
    block: matching.duplicate_invoices
    in: {rows: '${dates.rows}', vendor_field: 取引先, amount_field: 金額, date_field: ''}
    out: {duplicates: duplicates, summary: summary}
";
    let (outcome, events, _ws) = run(&[("invoices.csv", invoices)], yaml);
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    assert_eq!(
        codes(&outcome),
        [
            ("dups".to_string(), "WITHOUT_COLUMN".to_string()),
            ("dups".to_string(), "ROWS_SKIPPED".to_string()),
        ]
    );
    let without = &warnings(&outcome)[0];
    assert!(
        without
            .2
            .starts_with("日付の列がないため、日付を見ずに比較しました"),
        "{without:?}"
    );
    let rows = events.iter().find_map(|e| match e {
        Event::NodeFinish { node, outputs, .. } if node == "dups" => {
            outputs["duplicates"]["rows"].as_u64()
        }
        _ => None,
    });
    assert_eq!(rows, Some(2), "the two 山田商事 invoices: {events:?}");
}

#[test]
fn amounts_that_cannot_be_read_are_counted_with_an_example() {
    // A bank export: 2 of the 5 amounts are not numbers (未定, 要確認); △500 is -500.
    let bank = "日付,摘要,金額
2026-04-01,振込 ヤマダ,\"1,000\"
2026-04-02,手数料,△500
2026-04-03,振込 サトウ,未定
2026-04-04,振込 スズキ,\"2,000円\"
2026-04-05,振込 タナカ,要確認
";
    let yaml = "id: t
graph:
  - id: read
    block: csv.read
    in: {path: bank.csv}
    out: {rows: rows}
  - id: amounts
    block: transforms.normalize_amounts
    in: {rows: '${read.rows}', fields: [金額]}
    out: {rows: rows}
";
    let (outcome, _, _ws) = run(&[("bank.csv", bank)], yaml);
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    assert_eq!(
        warnings(&outcome),
        vec![(
            "amounts".to_string(),
            "VALUES_UNREADABLE".to_string(),
            "列 金額 の 5 行中 2 件を金額として読めませんでした（例: 未定）。元の値のまま残しています"
                .to_string(),
            "2 of 5 values of 金額 are not amounts (e.g. 未定): they were kept as they were"
                .to_string(),
        )]
    );
}

#[test]
fn keys_that_never_meet_and_a_rule_on_an_empty_column_are_warned_about() {
    // The ledger writes invoice numbers as INV-0001, the bank as 1: nothing matches.
    let ledger = "請求番号,金額\nINV-0001,1000\nINV-0002,2000\nINV-0003,3000\n";
    let bank = "請求番号,金額\n1,1000\n2,2000\n3,3000\n";
    let yaml = "id: t
graph:
  - id: ledger
    block: csv.read
    in: {path: ledger.csv}
    out: {rows: rows}
  - id: bank
    block: csv.read
    in: {path: bank.csv}
    out: {rows: rows}
  - id: match
    block: matching.exact_match
    in: {left: '${ledger.rows}', right: '${bank.rows}', keys: [請求番号]}
    out: {unmatched_left: open}
";
    let files = [("ledger.csv", ledger), ("bank.csv", bank)];
    let (outcome, _, _ws) = run(&files, yaml);
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    assert_eq!(
        codes(&outcome),
        vec![("match".to_string(), "MOSTLY_FLAGGED".to_string())]
    );
    assert_eq!(
        outcome.warnings[0].message_ja,
        "3 行中 3 行（100%）が突合できない行になりました。列の指定や条件を確認してください"
    );

    // A range rule on a column that is empty in 4 of 4 rows checked nothing.
    let claims = "申請番号,承認日,金額\nE-1,,100\nE-2,,200\nE-3,,300\nE-4,,400\n";
    let yaml = "id: t
graph:
  - id: read
    block: csv.read
    in: {path: claims.csv}
    out: {rows: rows}
  - id: quality
    block: control.data_quality
    in:
      rows: ${read.rows}
      rules:
        - {field: 承認日, rule: range, min: '2026-04-01', max: '2026-04-30'}
        - {field: 金額, rule: range, min: 0, max: 1000}
    out: {issues: issues}
";
    let (outcome, _, _ws) = run(&[("claims.csv", claims)], yaml);
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    assert_eq!(
        warnings(&outcome),
        vec![(
            "quality".to_string(),
            "ROWS_SKIPPED".to_string(),
            "4 行中 4 行は列 承認日 が空のため、range チェックをしていません".to_string(),
            "4 of 4 rows were not checked by range: 承認日 is empty there".to_string(),
        )]
    );

    // A row with an error leaves valid_rows: whatever totals them next is short of it, so the
    // run says so (the other rows are in range, and the dates filled in).
    let claims =
        "申請番号,承認日,金額\nE-1,2026-04-02,100\nE-2,2026-04-03,2000\nE-3,2026-04-04,300\n";
    let (outcome, _, _ws) = run(&[("claims.csv", claims)], yaml);
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    assert_eq!(
        warnings(&outcome),
        vec![(
            "quality".to_string(),
            "ROWS_SKIPPED".to_string(),
            "3 行中 1 行はエラーがあるため valid_rows から除きました（理由は issues にあります）"
                .to_string(),
            "1 of 3 rows were left out of valid_rows for errors (the reasons are in issues)"
                .to_string(),
        )]
    );
}

#[test]
fn a_resume_keeps_the_warnings_of_the_nodes_it_reuses() {
    // The header-only read warns; the approval pauses the run; the resume reuses the read.
    let ws = tempfile::tempdir().unwrap();
    keiri_fs::write_atomic(
        &ws.path().join("expenses.csv"),
        "申請番号,金額\n".as_bytes(),
    )
    .unwrap();
    let yaml = "id: t
graph:
  - id: read
    block: csv.read
    in: {path: expenses.csv}
    out: {rows: rows}
  - id: ok
    block: ui.confirmation
    in: {message: '0 件で続けますか', details: '${read.rows}'}
    out: {approved: approved}
";
    let (first, _) = run_in(ws.path(), yaml, |_| {});
    assert_eq!(first.status, RunStatus::Paused, "{:?}", first.failures);
    assert_eq!(codes(&first), vec![("read".into(), "NO_ROWS".into())]);
    let (second, _) = run_in(ws.path(), yaml, |resume| {
        resume.random = 2;
        resume.resume = Some(first.run_id.clone());
        resume
            .answers
            .insert("ok".into(), serde_json::json!({"approved": true}));
    });
    assert_eq!(second.status, RunStatus::Finished, "{:?}", second.failures);
    assert_eq!(codes(&second), vec![("read".into(), "NO_ROWS".into())]);
}

#[test]
fn rows_that_none_pass_still_have_their_columns_so_a_later_join_runs() {
    // No claim passes R1 (nothing is <= 0): `passed` is empty. It keeps the claims' columns,
    // so the join with the staff list finishes with 0 rows instead of "column 申請者 does
    // not exist" at the join.
    let staff = "申請者,部署\n佐藤,営業部\n鈴木,経理部\n";
    let yaml = "id: t
graph:
  - id: read
    block: csv.read
    in: {path: expenses.csv}
    out: {rows: rows}
  - id: staff
    block: csv.read
    in: {path: staff.csv}
    out: {rows: rows}
  - id: policy
    block: control.policy_enforce
    in:
      rows: ${read.rows}
      rules: [{id: R1, condition: '金額 <= 0'}]
    out: {passed: passed}
  - id: joined
    block: transforms.join
    in: {left: '${policy.passed}', right: '${staff.rows}', keys: [申請者], how: left}
    out: {rows: rows}
";
    let files = [("expenses.csv", EXPENSES), ("staff.csv", staff)];
    let (outcome, events, _ws) = run(&files, yaml);
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    let joined = events.iter().find_map(|e| match e {
        Event::NodeFinish { node, outputs, .. } if node == "joined" => {
            Some(outputs["rows"].clone())
        }
        _ => None,
    });
    let joined = joined.expect("joined finished");
    assert_eq!(joined["rows"], 0, "{joined}");
    assert_eq!(
        joined["columns"],
        serde_json::json!(["申請番号", "申請者", "科目", "金額", "部署"]),
        "{joined}"
    );
    // The rule every claim breaks is warned about; the empty `passed` is not a second warning
    // (a check's outputs are its answer), and the join of no rows warns nowhere either.
    assert_eq!(
        codes(&outcome),
        vec![("policy".to_string(), "MOSTLY_FLAGGED".to_string())]
    );
}

#[test]
fn computed_columns_left_empty_by_a_blank_or_a_failed_row_are_warned_about() {
    // Order lines: ノート has no quantity, クリップ no unit price, 封筒 a quantity of 0.
    let lines = "品名,単価,数量
ボールペン,120,10
ノート,250,
封筒,30,0
クリップ,,5
付箋,200,3
";
    let yaml = "id: t
graph:
  - id: read
    block: csv.read
    in: {path: lines.csv}
    out: {rows: rows}
  - id: calc
    block: transforms.compute_columns
    in:
      rows: '${read.rows}'
      columns:
        - {name: 金額, expr: '単価 * 数量'}
        - {name: 単価確認, expr: '金額 / 数量'}
        - {name: 品名写し, expr: '品名'}
    out: {rows: rows}
";
    let (outcome, _, _ws) = run(&[("lines.csv", lines)], yaml);
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    // 金額: rows 1 and 3 read a blank. 単価確認: rows 1 and 3 read the blank 金額, row 2 is
    // 0 / 0. 品名写し copies a column and has nothing to say.
    let calc = |code: &str, ja: &str, en: &str| {
        (
            "calc".to_string(),
            code.to_string(),
            ja.to_string(),
            en.to_string(),
        )
    };
    assert_eq!(
        warnings(&outcome),
        vec![
            calc(
                "VALUES_MISSING",
                "列 金額 の式「単価 * 数量」: 5 行中 2 行は式が読む列（単価, 数量）が空のため空になりました（最初は 1 行目、0始まり）",
                "金額 = 単価 * 数量: 2 of 5 rows are empty because a column it reads (単価, 数量) is empty there (first: row 1, from 0)",
            ),
            calc(
                "VALUES_NOT_COMPUTED",
                "列 単価確認 の式「金額 / 数量」: 5 行中 1 行は計算できず空にしました（最初は 2 行目、0始まり: division by zero）。errors 出力に全件あります",
                "単価確認 = 金額 / 数量: 1 of 5 rows could not be computed and were left empty (first: row 2, from 0: division by zero); the errors output lists them all",
            ),
            calc(
                "VALUES_MISSING",
                "列 単価確認 の式「金額 / 数量」: 5 行中 2 行は式が読む列（数量, 金額）が空のため空になりました（最初は 1 行目、0始まり）",
                "単価確認 = 金額 / 数量: 2 of 5 rows are empty because a column it reads (数量, 金額) is empty there (first: row 1, from 0)",
            ),
        ]
    );
}

#[test]
fn a_fuzzy_match_on_the_wrong_column_warns_that_nothing_matched() {
    // The plan compares the ledger's vendor code with the bank's payee name: no pair scores
    // anywhere near 0.8, so every ledger row is unmatched. On the names, all three match.
    let ledger = "取引先コード,取引先,金額\nV001,株式会社山田商事,1000\nV002,佐藤工業,2000\nV003,田中商店,3000\n";
    let bank = "支払先,支払額\n(株)山田商事,1000\n佐藤工業(有),2000\n田中商店,3000\n";
    let yaml = |left: &str| {
        format!(
            "id: t
graph:
  - id: ledger
    block: csv.read
    in: {{path: ledger.csv}}
    out: {{rows: rows}}
  - id: bank
    block: csv.read
    in: {{path: bank.csv}}
    out: {{rows: rows}}
  - id: match
    block: matching.fuzzy_match
    in:
      left: '${{ledger.rows}}'
      right: '${{bank.rows}}'
      fields: [{{left: {left}, right: 支払先, kind: text}}]
      threshold: 0.8
    out: {{unmatched_left: open}}
"
        )
    };
    let files = [("ledger.csv", ledger), ("bank.csv", bank)];
    let (outcome, _, _ws) = run(&files, &yaml("取引先コード"));
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    assert_eq!(
        warnings(&outcome),
        vec![(
            "match".to_string(),
            "MOSTLY_FLAGGED".to_string(),
            "3 行中 3 行（100%）が突合できない行になりました。列の指定や条件を確認してください"
                .to_string(),
            "3 of 3 rows (100%) came out as unmatched: check the columns and conditions"
                .to_string(),
        )]
    );
    let (outcome, _, _ws) = run(&files, &yaml("取引先"));
    assert_eq!(warnings(&outcome), vec![]);
}

#[test]
fn a_variance_check_says_which_values_it_compared_as_0_and_when_nearly_every_row_is_over() {
    // Budget against actual: 未確定 in 前月 is not a number and counts as 0 (as an empty cell
    // does), so 交際費 is flagged on a change it never had; 旅費 is +10 % (under 20 %),
    // 通信費 has no prior month (flagged), 会議費 did not change. 2 of 4 flagged: no ratio
    // warning, one unreadable value.
    let table = "科目,当月,前月\n旅費,110000,100000\n通信費,20000,\n交際費,30000,未確定\n会議費,50000,50000\n";
    let yaml = |comparison: &str| {
        format!(
            "id: t
graph:
  - id: read
    block: csv.read
    in: {{path: pl.csv}}
    out: {{rows: rows}}
  - id: variance
    block: control.variance_check
    in: {{rows: '${{read.rows}}', key_field: 科目, current_field: 当月, comparison_field: {comparison}}}
    out: {{issues: issues}}
"
        )
    };
    let (outcome, _, _ws) = run(&[("pl.csv", table)], &yaml("前月"));
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    assert_eq!(
        warnings(&outcome),
        vec![(
            "variance".to_string(),
            "VALUES_UNREADABLE".to_string(),
            "列 前月 の 4 行中 1 件を数値として読めず、0 として比較しました（例: 未確定）"
                .to_string(),
            "1 of 4 values of 前月 are not numbers (e.g. 未確定): they were compared as 0"
                .to_string(),
        )]
    );
    // Compared with 科目 (text in every row) by mistake: 4 unreadable values, 4 of 4 over.
    let (outcome, _, _ws) = run(&[("pl.csv", table)], &yaml("科目"));
    assert_eq!(
        codes(&outcome),
        vec![
            ("variance".to_string(), "VALUES_UNREADABLE".to_string()),
            ("variance".to_string(), "MOSTLY_FLAGGED".to_string()),
        ]
    );
    assert_eq!(
        outcome.warnings[1].message_ja,
        "4 行中 4 行（100%）がしきい値を超える増減になりました。列の指定や条件を確認してください"
    );
}

/// A CSV whose lines have fewer values than its header (a hand-edited export, or a value left
/// out mid-line) is read with the missing columns empty, and says so: how many rows, the
/// first one's data row (blank lines and `,,,` rows not counted) and its text. A file whose
/// every line is complete, empty fields included, has no such warning.
#[test]
fn rows_with_fewer_values_than_the_header_are_warned_about() {
    let yaml = "id: t
graph:
  - id: read
    block: csv.read
    in: {path: pay.csv}
    out: {rows: rows}
";
    let short =
        "支払先,金額,部門,備考\nA社,1000,営業,\nB社,2000\n\nC社,3000,総務,至急\nD社,500,営業\n";
    let (outcome, _, _) = run(&[("pay.csv", short)], yaml);
    assert_eq!(outcome.status, RunStatus::Finished);
    assert_eq!(
        warnings(&outcome),
        [(
            "read".to_string(),
            "ROWS_SHORT".to_string(),
            "見出し（4 列）より値の少ない行が 2 行あり、足りない列を空として読みました。最初はデータ 2 行目（値 2 個）:「B社,2000」。値が列からずれていないか確認してください".to_string(),
            "2 rows have fewer values than the header's 4 columns; their missing columns were read as empty. First: data row 2 (2 values): \"B社,2000\". Check that no value shifted columns".to_string(),
        )]
    );
    // With quoted fields (read record by record), blank lines and `,,,` rows not counted.
    let quoted = "支払先,金額,部門,備考\n\"A社, 本店\",1000,営業,\n,,,\n\u{3000}\nB社,\"2,000\"\n";
    let (outcome, _, _) = run(&[("pay.csv", quoted)], yaml);
    let (_, code, ja, _) = &warnings(&outcome)[0];
    assert_eq!(code, "ROWS_SHORT");
    assert!(
        ja.starts_with("見出し（4 列）より値の少ない行が 1 行あり")
            && ja.contains("最初はデータ 2 行目（値 2 個）:「B社,2,000」"),
        "{ja}"
    );
    // Lines skipped before the header (a title, a blank line) are neither the header nor data.
    let titled = "id: t
graph:
  - id: read
    block: csv.read
    in: {path: pay.csv, skip_rows: 2}
    out: {rows: rows}
";
    let sales = "売上明細\n\n得意先,金額,担当\nA社,100,佐藤\nB社,200\n";
    let (outcome, _, _) = run(&[("pay.csv", sales)], titled);
    let (_, code, ja, _) = &warnings(&outcome)[0];
    assert_eq!(code, "ROWS_SHORT");
    assert!(
        ja.starts_with("見出し（3 列）より値の少ない行が 1 行あり")
            && ja.contains("最初はデータ 2 行目（値 2 個）:「B社,200」"),
        "{ja}"
    );
    let complete = "支払先,金額,部門,備考\nA社,1000,営業,\nB社,2000,,\n";
    let (outcome, _, _) = run(&[("pay.csv", complete)], yaml);
    assert!(codes(&outcome).is_empty(), "{:?}", codes(&outcome));
}

/// A three-way match on exports named the accountants' way (発注番号, 数量, 単価, 金額), given
/// through field_map; by hand: 2 orders, 2 receipts, 3 invoices.
const THREE_WAY: &str = "id: t
graph:
  - {id: po, block: csv.read, in: {path: po.csv}, out: {rows: rows}}
  - {id: rc, block: csv.read, in: {path: rc.csv}, out: {rows: rows}}
  - {id: inv, block: csv.read, in: {path: inv.csv}, out: {rows: rows}}
  - id: match
    block: matching.three_way_match
    in:
      purchase_orders: '${po.rows}'
      receipts: '${rc.rows}'
      invoices: '${inv.rows}'
      field_map: {po_no: 発注番号, quantity: 数量, unit_price: 単価, amount: 金額}
    out: {exceptions: exceptions, summary: summary}
";

#[test]
fn a_three_way_match_checks_its_columns_and_says_when_nearly_every_invoice_is_an_exception() {
    let po = "発注番号,数量,単価,金額\nPO-1,10,1000,10000\nPO-2,5,2000,10000\n";
    let rc = "発注番号,数量\nPO-1,10\nPO-2,5\n";
    // Without an item column anywhere: matched by PO number, and the run says so.
    let inv = "請求書番号,発注番号,数量,金額\nS-1,PO-1,10,10000\nS-2,PO-2,5,10000\n";
    let files = [("po.csv", po), ("rc.csv", rc), ("inv.csv", inv)];
    let (outcome, _, _ws) = run(&files, THREE_WAY);
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    assert_eq!(
        codes(&outcome),
        [("match".to_string(), "WITHOUT_COLUMN".to_string())]
    );
    assert!(
        warnings(&outcome)[0]
            .2
            .starts_with("品目の列（item）がどの表にもないため、発注番号だけで照合しました"),
        "{:?}",
        warnings(&outcome)
    );
    // The invoice export writes its PO numbers without the prefix: every invoice is an
    // order-less exception, which a finished run must not report in silence.
    let inv = "請求書番号,発注番号,数量,金額\nS-1,1,10,10000\nS-2,2,5,10000\nS-3,2,1,2000\n";
    let files = [("po.csv", po), ("rc.csv", rc), ("inv.csv", inv)];
    let (outcome, _, _ws) = run(&files, THREE_WAY);
    assert_eq!(
        codes(&outcome),
        [
            ("match".to_string(), "WITHOUT_COLUMN".to_string()),
            ("match".to_string(), "MOSTLY_FLAGGED".to_string()),
        ]
    );
    assert_eq!(
        warnings(&outcome)[1].2,
        "3 行中 3 行（100%）が例外（請求書）になりました。列の指定や条件を確認してください"
    );
    // Without field_map the default names are not in the files: an error naming the table,
    // the column and its columns, never "every invoice has no order".
    let plain = THREE_WAY.replace(
        "\n      field_map: {po_no: 発注番号, quantity: 数量, unit_price: 単価, amount: 金額}",
        "",
    );
    let (outcome, _, _ws) = run(&files, &plain);
    assert_eq!(outcome.status, RunStatus::Failed);
    let f = &outcome.failures[0];
    assert_eq!(
        (f.node.as_str(), f.code.as_str()),
        ("match", "COLUMN_NOT_FOUND")
    );
    assert_eq!(
        f.message_ja,
        "ノード match: 入力 field_map.po_no（既定値） が読む列「po_no」は purchase_orders の行にありません（ある列: 発注番号, 数量, 単価, 金額）"
    );
    assert_eq!(
        f.hint_ja.as_deref(),
        Some(
            "purchase_orders の列: 発注番号, 数量, 単価, 金額。field_map.po_no に実在する列名を指定してください"
        )
    );
    // A key field_map leaves out still reads its default: amount, which the invoices call 金額.
    let partial = THREE_WAY.replace(", amount: 金額}", "}");
    let (outcome, _, _ws) = run(&files, &partial);
    let f = &outcome.failures[0];
    assert_eq!(
        f.message_ja,
        "ノード match: 入力 field_map.amount（既定値） が読む列「amount」は invoices の行にありません（ある列: 請求書番号, 発注番号, 数量, 金額）"
    );
    // An item column field_map names must be in every table: here only the orders have it.
    let with_item = "発注番号,品目,数量,単価,金額\nPO-1,紙,10,1000,10000\n";
    let files = [("po.csv", with_item), ("rc.csv", rc), ("inv.csv", inv)];
    let named = THREE_WAY.replace("amount: 金額}", "amount: 金額, item: 品目}");
    let (outcome, _, _ws) = run(&files, &named);
    let f = &outcome.failures[0];
    assert_eq!(f.code, "COLUMN_NOT_FOUND", "{f:?}");
    assert!(
        f.message_ja
            .contains("入力 field_map.item が読む列「品目」は receipts の行にありません"),
        "{f:?}"
    );
}

/// Self-approval checked on a voucher export: vouchers with no approver are counted as not
/// checked, and when the approver field names the preparer's column by mistake every voucher
/// "approves itself", which the run must say instead of reporting 4 violations as found.
#[test]
fn a_sod_check_counts_unsigned_vouchers_and_says_when_every_voucher_approves_itself() {
    let vouchers = "伝票番号,起票者,承認者\nV-1,佐藤,鈴木\nV-2,田中,田中\nV-3,佐藤,\nV-4,高橋,鈴木\nV-5,鈴木,佐藤\n";
    let plan = |approver: &str| {
        format!(
            "id: t
graph:
  - {{id: read, block: csv.read, in: {{path: v.csv}}, out: {{rows: rows}}}}
  - id: sod
    block: control.sod_check
    in:
      assignments: [{{user: 佐藤, roles: [起票]}}]
      conflicts: [{{roles: [起票, 承認]}}]
      transactions: '${{read.rows}}'
      preparer_field: 起票者
      approver_field: {approver}
    out: {{violations: violations}}
"
        )
    };
    let (outcome, _, _ws) = run(&[("v.csv", vouchers)], &plan("承認者"));
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    // V-2 approves itself (1 of the 4 signed): no MOSTLY_FLAGGED; V-3 is unsigned.
    assert_eq!(
        warnings(&outcome),
        [(
            "sod".to_string(),
            "ROWS_SKIPPED".to_string(),
            "5 行中 1 行は起票者（起票者）か承認者（承認者）が空のため自己承認を確認していません"
                .to_string(),
            "1 of 5 rows were not checked for self-approval: their preparer (起票者) or approver (承認者) is empty"
                .to_string(),
        )]
    );
    let (outcome, _, _ws) = run(&[("v.csv", vouchers)], &plan("起票者"));
    assert_eq!(
        codes(&outcome),
        [("sod".to_string(), "MOSTLY_FLAGGED".to_string())]
    );
    assert_eq!(
        warnings(&outcome)[0].2,
        "5 行中 5 行（100%）が自己承認になりました。列の指定や条件を確認してください"
    );
}

/// A quarter with no rows for its months: each month's filter keeps the journal's columns, the
/// loop keeps them for its list of month tables, the concatenation gives them to its empty
/// result, and the join runs through to an empty table with the journal's and the accounts'
/// columns; so does a loop over no months, whose filter would read the journal. When the
/// body's rows are the item's own, nothing tells the columns of a loop that ran 0 times: the
/// join stops and names the node that came out empty, not only the column 科目.
#[test]
fn an_empty_quarter_runs_through_a_loop_a_concatenation_and_a_join() {
    let journal = "月,科目,金額\n2026-01,売上,1000\n2026-02,売上,2000\n";
    let accounts = "科目,区分\n売上,収益\n";
    let plan = |months: &str, rows: &str| {
        format!(
            "id: quarter
vars:
  months: {months}
graph:
  - {{id: read, block: csv.read, in: {{path: journal.csv}}, out: {{rows: rows}}}}
  - {{id: acc, block: csv.read, in: {{path: accounts.csv}}, out: {{rows: accounts}}}}
  - id: each
    type: loop
    foreach: {{input: '${{vars.months}}', var: month}}
    body:
      plan:
        id: inner
        graph:
          - {{id: pick, block: transforms.filter_rows, in: {{rows: {rows}, condition: \"月 == '${{vars.month}}'\"}}, out: {{rows: picked}}}}
    out: {{picked: months_rows}}
  - {{id: all, block: transforms.concat_rows, in: {{tables: '${{each.months_rows}}', source_field: 元}}, out: {{rows: quarter}}}}
  - {{id: named, block: transforms.join, in: {{left: '${{all.quarter}}', right: '${{acc.accounts}}', keys: [科目]}}, out: {{rows: joined}}}}
"
        )
    };
    let files = [("journal.csv", journal), ("accounts.csv", accounts)];
    let joined = |months: &str, rows: &str| {
        let (outcome, _, ws) = run(&files, &plan(months, rows));
        assert_eq!(
            outcome.status,
            RunStatus::Finished,
            "{months}: {:?}",
            outcome.failures
        );
        let options = keiri_run::RunOptions::new(ws.path(), chrono::Utc::now(), 1);
        let dir = keiri_run::records::RunDir::open(&options.runs_dir, "quarter", &outcome.run_id)
            .unwrap();
        match dir.load_outputs("named").unwrap().0.get("rows").unwrap() {
            keiri_run::value::Value::Table(df) => (df.height(), keiri_run::value::column_names(df)),
            other => panic!("{other:?}"),
        }
    };
    let columns = ["月", "科目", "金額", "元", "区分"]
        .map(String::from)
        .to_vec();
    // The first quarter: both months have a row.
    assert_eq!(
        joined("['2026-01', '2026-02']", "'${read.rows}'"),
        (2, columns.clone())
    );
    // The second quarter has none; a loop over no months has none either.
    assert_eq!(
        joined("['2026-04', '2026-05']", "'${read.rows}'"),
        (0, columns.clone())
    );
    assert_eq!(joined("[]", "'${read.rows}'"), (0, columns));
    // Rows the item itself gives (`rows: ${vars.month}`), and no month: nothing tells the
    // columns.
    let (outcome, _, _ws) = run(&files, &plan("[]", "'${vars.month}'"));
    assert_eq!(outcome.status, RunStatus::Failed);
    let f = &outcome.failures[0];
    assert_eq!(
        (f.node.as_str(), f.code.as_str()),
        ("named", "COLUMN_NOT_FOUND")
    );
    assert!(
        f.message_ja
            .ends_with("left（all の出力） は 0 行で列もありません"),
        "{}",
        f.message_ja
    );
    assert!(
        f.hint_ja
            .as_deref()
            .is_some_and(|h| h.starts_with("列名の誤りではなく、left（all の出力） が空でした")),
        "{f:?}"
    );
}

/// compute_tax writes tax_rate, tax_amount, net_amount and gross_amount: an input column of
/// one of those names (an English export's stated tax) is replaced, and the run says so with
/// the rows whose value changed. By hand at 10 %, floor: 1,000 → 100 (as stated), 2,000 → 200
/// (stated 180), a blank stated tax is not a change; the stated rate 10% is the rate used.
#[test]
fn compute_tax_says_when_it_replaces_an_input_column_that_held_other_figures() {
    let yaml = "id: t
graph:
  - {id: read, block: csv.read, in: {path: inv.csv}, out: {rows: rows}}
  - id: tax
    block: transforms.compute_tax
    in: {rows: '${read.rows}', amount_field: 税抜, rate_field: tax_rate}
    out: {rows: rows}
";
    let stated = "税抜,tax_rate,tax_amount\n1000,10%,100\n\"2,000\",10%,180\n3000,10%,\n";
    let (outcome, _, _ws) = run(&[("inv.csv", stated)], yaml);
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    assert_eq!(
        warnings(&outcome),
        [(
            "tax".to_string(),
            "REPLACED_COLUMN".to_string(),
            "入力の列 tax_amount を計算した値で置き換えました（3 行中 1 行で元の値と違います）。元の値を残すには、先に列の名前を変えてください".to_string(),
            "the input's column tax_amount was replaced by the computed values (1 of 3 rows held another value); to keep the input's values, rename the column first".to_string(),
        )]
    );
    // A plan that kept the stated figures under its own names says so.
    let kept = yaml.replace(
        "rate_field: tax_rate}",
        "rate_field: tax_rate, replace_columns: true}",
    );
    assert_ne!(kept, yaml);
    let (outcome, _, _ws) = run(&[("inv.csv", stated)], &kept);
    assert!(codes(&outcome).is_empty(), "{:?}", codes(&outcome));
    // Figures that agree are no warning.
    let agree = "税抜,tax_rate,tax_amount\n1000,10%,100\n\"2,000\",0.1,200\n";
    let (outcome, _, _ws) = run(&[("inv.csv", agree)], yaml);
    assert!(codes(&outcome).is_empty(), "{:?}", codes(&outcome));
}
