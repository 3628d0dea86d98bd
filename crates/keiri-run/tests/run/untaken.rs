//! A block builds an output the plan does not take (not in the node's `out`, so no node can
//! read it) only as far as the window shows it: the reconciliation's `matches` and the
//! duplicate finder's `clusters`, the costliest outputs of their blocks (nested JSON rows).
//! Everything the plan takes is the same as when every output is built whole; the record
//! keeps the first rows of the other with its real count; a resume whose plan now takes it
//! runs the block again.

use keiri_run::records::SHOWN_ROWS;
use keiri_run::value::Value;
use keiri_run::{Event, RunDir, RunOutcome, RunStatus};
use serde_json::{Value as Json, json};

use crate::support::{reused, run_builtins, run_in};

const SOUNDS: [&str; 30] = [
    "ア", "イ", "ウ", "エ", "オ", "カ", "キ", "ク", "ケ", "コ", "サ", "シ", "ス", "セ", "ソ", "タ",
    "チ", "ツ", "テ", "ト", "ナ", "ニ", "ヌ", "ネ", "ノ", "ハ", "ヒ", "フ", "ヘ", "ホ",
];
const CUSTOMERS: usize = 1_200;

/// The kana of customer `i`: three sounds and ショウジ, different for every customer.
fn kana(i: usize) -> String {
    format!(
        "{}{}{}ショウジ",
        SOUNDS[i % 30],
        SOUNDS[(i / 30) % 30],
        SOUNDS[i / 900]
    )
}

/// 1,200 customers, each paying its one invoice of 10,000 + 7i yen to the yen during March
/// (the payer written as a bank writes it, `振込 カ)` before the kana); five deposits from a
/// payer with no receivable (999,001 … 999,005 yen); three more invoices of the first three
/// customers (5,000,000 + i yen) that nothing pays.
fn statement() -> (String, String) {
    let mut deposits = String::from("date,amount,direction,description,balance\n");
    let mut receivables = String::from("invoice_no,customer,customer_kana,amount,due_date\n");
    for i in 0..CUSTOMERS {
        let amount = 10_000 + 7 * i;
        deposits.push_str(&format!(
            "2025-03-{:02},{amount},deposit,振込 カ){},\n",
            i % 28 + 1,
            kana(i)
        ));
        receivables.push_str(&format!(
            "AR-{i:05},株式会社{k},{k},{amount},2025-03-31\n",
            k = kana(i)
        ));
    }
    for i in 1..=5 {
        deposits.push_str(&format!(
            "2025-03-31,{},deposit,振込 ミシラヌ,\n",
            999_000 + i
        ));
    }
    for i in 0..3 {
        receivables.push_str(&format!(
            "AR-9{i:04},株式会社{k},{k},{},2025-03-31\n",
            5_000_000 + i,
            k = kana(i)
        ));
    }
    (deposits, receivables)
}

const RECONCILE: &str = r#"
id: untaken_matches
graph:
  - {id: deps, block: csv.read, in: {path: deposits.csv}, out: {rows: rows}}
  - {id: recs, block: csv.read, in: {path: receivables.csv}, out: {rows: rows}}
  - id: reconcile
    block: matching.bank_reconciliation
    in: {deposits: "${deps.rows}", receivables: "${recs.rows}"}
    out: {unmatched_deposits: unmatched, open_receivables: open, summary: summary}
"#;

/// By hand: every customer's deposit clears its invoice, 1,200 of them for
/// Σ (10,000 + 7i) = 12,000,000 + 7 × 719,400 = 17,035,800; the five deposits of 999,001 …
/// 999,005 (4,995,015) stay unmatched; the three invoices of 5,000,000 … 5,000,002
/// (15,000,003) stay open.
fn expected_summary() -> Json {
    json!({
        "deposit_count": 1205, "deposit_amount": 22030815,
        "cleared_count": 1200, "cleared_amount": 17035800,
        "unmatched_deposit_count": 5, "unmatched_deposit_amount": 4995015,
        "open_receivable_count": 3, "open_receivable_amount": 15000003,
        "fee_difference_total": 0,
    })
}

fn dir_of(ws: &std::path::Path, outcome: &RunOutcome) -> RunDir {
    RunDir::open(&ws.join("runs"), &outcome.plan_id, &outcome.run_id).unwrap()
}

/// Runs `plan` on `files`, building every output whole or only what is used; it must finish.
fn run(
    files: &[(&str, &str)],
    plan: &str,
    only_used: bool,
) -> (RunDir, Vec<Event>, tempfile::TempDir) {
    let (outcome, events, ws) = run_builtins(files, plan, |o| o.only_what_is_used = only_used);
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    (dir_of(ws.path(), &outcome), events, ws)
}

fn recorded(dir: &RunDir, node: &str, key: &str) -> Json {
    dir.load_shown(node)
        .unwrap()
        .get(key)
        .map(Value::to_json)
        .unwrap_or_else(|| panic!("{node} has no {key}"))
}

/// The `rows` of the node's `node_finish` event and the summary of one of its outputs there.
fn finished(events: &[Event], node: &str, key: &str) -> (Option<usize>, Json) {
    events
        .iter()
        .find_map(|e| match e {
            Event::NodeFinish {
                node: n,
                rows,
                outputs,
                ..
            } if n == node => Some((*rows, outputs[key].clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{node} did not finish"))
}

#[test]
fn a_reconciliation_whose_matches_no_node_takes_builds_only_what_is_shown() {
    const { assert!(CUSTOMERS > SHOWN_ROWS) };
    let (deposits, receivables) = statement();
    let files = [
        ("deposits.csv", deposits.as_str()),
        ("receivables.csv", receivables.as_str()),
    ];
    let (whole, whole_events, _w) = run(&files, RECONCILE, false);
    let (shown, shown_events, _s) = run(&files, RECONCILE, true);

    // What the plan takes is the same, and as worked out by hand.
    assert_eq!(recorded(&shown, "reconcile", "summary"), expected_summary());
    for key in ["summary", "unmatched_deposits", "open_receivables"] {
        assert_eq!(
            recorded(&shown, "reconcile", key),
            recorded(&whole, "reconcile", key),
            "{key}"
        );
    }
    let open: Vec<Json> = recorded(&shown, "reconcile", "open_receivables")
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["invoice_no"].clone())
        .collect();
    assert_eq!(
        open,
        [json!("AR-90000"), json!("AR-90001"), json!("AR-90002")]
    );

    // `matches`: whole when built whole; else its first rows, the same ones, and its count.
    let all = recorded(&whole, "reconcile", "matches");
    let first = recorded(&shown, "reconcile", "matches");
    assert_eq!(all.as_array().unwrap().len(), CUSTOMERS);
    assert_eq!(first.as_array().unwrap().len(), SHOWN_ROWS);
    assert_eq!(
        first.as_array().unwrap()[..],
        all.as_array().unwrap()[..SHOWN_ROWS]
    );
    // csv.read hands on text; the block reads the amounts.
    assert_eq!(all[CUSTOMERS - 1]["deposit"]["amount"], json!("18393"));
    assert!(whole.kept_in_part("reconcile").unwrap().is_empty());
    let kept = shown.kept_in_part("reconcile").unwrap();
    assert_eq!(kept.keys().collect::<Vec<_>>(), ["matches"]);
    assert_eq!(kept["matches"].rows, CUSTOMERS);
    assert!(kept["matches"].untaken && kept["matches"].digest.is_empty());

    // The finish line counts every match; its summary says how many were built.
    let (rows, matches) = finished(&shown_events, "reconcile", "matches");
    assert_eq!(rows, Some(CUSTOMERS));
    assert_eq!(
        (matches["rows"].clone(), matches["shown"].clone()),
        (json!(CUSTOMERS), json!(SHOWN_ROWS))
    );
    let (rows, matches) = finished(&whole_events, "reconcile", "matches");
    assert_eq!(rows, Some(CUSTOMERS));
    assert_eq!(
        (matches["rows"].clone(), matches.get("shown")),
        (json!(CUSTOMERS), None)
    );
}

/// The first attempt stops at a file that is not there yet, `matches` built in part. A resume
/// of the same plan reuses the reconciliation; one whose plan now takes `matches` and reads
/// its last match runs the reconciliation again and reads it whole.
#[test]
fn a_resume_whose_plan_now_takes_the_matches_runs_the_reconciliation_again() {
    let (deposits, receivables) = statement();
    let failing = format!(
        "{RECONCILE}  - {{id: extra, block: csv.read, in: {{path: extra.csv}}, when: \"${{reconcile.summary.cleared_count}} == 1200\", out: {{rows: rows}}}}\n"
    );
    let files = [
        ("deposits.csv", deposits.as_str()),
        ("receivables.csv", receivables.as_str()),
    ];
    let (first, _, ws) = run_builtins(&files, &failing, |_| {});
    assert_eq!(first.status, RunStatus::Failed);
    assert_eq!(first.failures[0].node, "extra");
    let dir = dir_of(ws.path(), &first);
    assert!(dir.kept_in_part("reconcile").unwrap()["matches"].untaken);
    // Loaded for a resume as it is: no node takes it.
    assert!(dir.load_outputs("reconcile").is_ok());

    keiri_fs::write_atomic(&ws.path().join("extra.csv"), "a\n1\n".as_bytes()).unwrap();
    let (same, events) = run_in(ws.path(), &failing, |o| {
        o.resume = Some(first.run_id.clone())
    });
    assert_eq!(same.status, RunStatus::Finished, "{:?}", same.failures);
    assert_eq!(reused(&events), ["deps", "recs", "reconcile"]);

    // Test setup only.
    #[allow(clippy::disallowed_methods)]
    std::fs::remove_file(ws.path().join("extra.csv")).unwrap();
    let (again, _) = run_in(ws.path(), &failing, |_| {});
    assert_eq!(again.status, RunStatus::Failed);
    keiri_fs::write_atomic(&ws.path().join("extra.csv"), "a\n1\n".as_bytes()).unwrap();
    let takes = failing.replacen(
        "out: {unmatched_deposits: unmatched,",
        "out: {matches: matches, unmatched_deposits: unmatched,",
        1,
    ) + "  - {id: last, block: transforms.pick_value, in: {source: \"${reconcile.matches}\", path: \"1199.deposit.amount\"}, out: {value: amount}}\n";
    let (second, events) = run_in(ws.path(), &takes, |o| o.resume = Some(again.run_id.clone()));
    assert_eq!(second.status, RunStatus::Finished, "{:?}", second.failures);
    assert_eq!(reused(&events), ["deps", "recs"]);
    let dir = dir_of(ws.path(), &second);
    assert!(dir.kept_in_part("reconcile").unwrap().is_empty());
    // 10,000 + 7 × 1,199, as csv.read hands it on (text).
    assert_eq!(recorded(&dir, "last", "value"), json!("18393"));
}

const VENDORS: usize = 1_100;

/// 1,100 vendors, each with one invoice of 1,000 + 13i yen entered twice, five days apart
/// (two numbers), and 50 invoices of other amounts that pair with nothing.
fn invoices() -> String {
    let mut text = String::from("請求書番号,取引先,金額,請求日\n");
    for i in 0..VENDORS {
        let amount = 1_000 + 13 * i;
        for (day, copy) in [(1, "a"), (6, "b")] {
            text.push_str(&format!(
                "INV-{i}-{copy},株式会社取引先{i:04},\"{amount}\",2025-04-{day:02}\n"
            ));
        }
    }
    for i in 0..50 {
        text.push_str(&format!(
            "ONE-{i},有限会社単発{i:02},\"{}\",2025-05-10\n",
            900_000 + 101 * i
        ));
    }
    text
}

const DUPLICATES: &str = r#"
id: untaken_clusters
graph:
  - {id: read, block: csv.read, in: {path: invoices.csv}, out: {rows: rows}}
  - id: detect
    block: matching.duplicate_invoices
    in: {rows: "${read.rows}", vendor_field: 取引先, amount_field: 金額, date_field: 請求日}
    out: {duplicates: duplicates, summary: summary}
"#;

#[test]
fn duplicates_whose_clusters_no_node_takes_are_the_same_and_the_clusters_shown_in_part() {
    const { assert!(VENDORS > SHOWN_ROWS) };
    let text = invoices();
    let files = [("invoices.csv", text.as_str())];
    let (whole, _, _w) = run(&files, DUPLICATES, false);
    let (shown, events, _s) = run(&files, DUPLICATES, true);

    // By hand: 1,100 clusters of two; at risk, the second copy of each:
    // Σ (1,000 + 13i) = 1,100,000 + 13 × 604,450 = 8,957,850.
    assert_eq!(
        recorded(&shown, "detect", "summary"),
        json!({"cluster_count": 1100, "row_count": 2200, "amount_at_risk": 8957850})
    );
    for key in ["summary", "duplicates"] {
        assert_eq!(
            recorded(&shown, "detect", key),
            recorded(&whole, "detect", key),
            "{key}"
        );
    }
    let all = recorded(&whole, "detect", "clusters");
    let first = recorded(&shown, "detect", "clusters");
    assert_eq!(all.as_array().unwrap().len(), VENDORS);
    assert_eq!(
        first.as_array().unwrap()[..],
        all.as_array().unwrap()[..SHOWN_ROWS]
    );
    // Each cluster holds its two rows, the first and the second copy of one invoice.
    let numbers: Vec<&Json> = first[SHOWN_ROWS - 1]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["請求書番号"])
        .collect();
    assert_eq!(numbers, [&json!("INV-999-a"), &json!("INV-999-b")]);
    clusters_in_part(&shown, &events, VENDORS, SHOWN_ROWS);
}

/// `detect`'s `clusters` recorded in part: `total` counted (the record's count and the finish
/// line's rows), `shown` built.
fn clusters_in_part(dir: &RunDir, events: &[Event], total: usize, shown: usize) {
    let kept = dir.kept_in_part("detect").unwrap();
    assert_eq!(
        (kept["clusters"].rows, kept["clusters"].untaken),
        (total, true)
    );
    let (rows, clusters) = finished(events, "detect", "clusters");
    assert_eq!(rows, Some(total));
    assert_eq!(clusters["shown"], json!(shown));
}

/// Invoices of one vendor and amount each, `sizes[k]` of them a day apart (so each vendor's
/// chain is one cluster, in the order of `sizes`), then one invoice entered twice.
fn chained_invoices(sizes: &[usize]) -> String {
    let start = chrono::NaiveDate::from_ymd_opt(2000, 1, 1).unwrap();
    let mut text = String::from("請求書番号,取引先,金額,請求日\n");
    for (k, &size) in sizes.iter().enumerate() {
        for day in 0..size {
            let date = start + chrono::Days::new(day as u64);
            text.push_str(&format!(
                "M-{k}-{day},株式会社月次{k:02},{},{date}\n",
                10_000 * (k + 1)
            ));
        }
    }
    text.push_str("X-1,有限会社一回,\"777,777\",2024-06-01\nX-2,有限会社一回,777777,2024-06-05\n");
    text
}

#[test]
fn clusters_no_node_takes_are_recorded_as_far_as_ten_thousand_rows_each_cluster_whole() {
    const { assert!(keiri_run::records::WHOLE_ROWS == 10_000) };
    // By hand, sizes 6,000, 4,000 and the last invoice's 2: the first two clusters hold
    // 10,000 rows, the third would pass them; 6,000 + 4,000 + 2 rows are flagged.
    // 10,001 then 2: the first cluster alone passes 10,000 rows and is kept whole.
    for (sizes, shown) in [(&[6_000, 4_000][..], 2), (&[10_001][..], 1)] {
        let text = chained_invoices(sizes);
        let clusters = sizes.len() + 1;
        let flagged = sizes.iter().sum::<usize>() + 2;
        let files = [("invoices.csv", text.as_str())];
        let (whole, _, _w) = run(&files, DUPLICATES, false);
        let (part, events, _p) = run(&files, DUPLICATES, true);
        let summary = recorded(&part, "detect", "summary");
        assert_eq!(summary["cluster_count"], json!(clusters), "{sizes:?}");
        assert_eq!(summary["row_count"], json!(flagged), "{sizes:?}");
        assert_eq!(summary, recorded(&whole, "detect", "summary"));
        let all = recorded(&whole, "detect", "clusters");
        let first = recorded(&part, "detect", "clusters");
        let sizes_of = |list: &Json| -> Vec<usize> {
            list.as_array()
                .unwrap()
                .iter()
                .map(|c| c["rows"].as_array().unwrap().len())
                .collect()
        };
        let mut all_sizes = sizes.to_vec();
        all_sizes.push(2);
        assert_eq!(sizes_of(&all), all_sizes);
        assert_eq!(sizes_of(&first), all_sizes[..shown]);
        assert_eq!(
            first.as_array().unwrap()[..],
            all.as_array().unwrap()[..shown]
        );
        clusters_in_part(&part, &events, clusters, shown);
    }
}
