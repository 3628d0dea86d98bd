//! Bounded work (#37.4): a foreach over too many items, a while past its ceiling and a join
//! that would multiply rows stop with `LIMIT_EXCEEDED` before doing the work, with the size,
//! the limit and what to change. The limits are lowered through `RunOptions::limits` so each
//! case is small; the defaults are the same code path.

use crate::support::run_builtins;
use keiri_run::limits::Limits;
use keiri_run::{Event, RunOutcome, RunStatus};

/// Runs `yaml` with the builtins in a workspace holding `files`, under `limits`.
fn run(files: &[(&str, &str)], yaml: &str, limits: Limits) -> (RunOutcome, Vec<Event>) {
    let (outcome, events, _ws) = run_builtins(files, yaml, |o| o.limits = limits);
    (outcome, events)
}

/// The one failure of a run as (node, code, Japanese message, English message).
fn failure(outcome: &RunOutcome) -> (String, String, String, String) {
    assert_eq!(outcome.status, RunStatus::Failed, "{:?}", outcome.failures);
    assert_eq!(outcome.failures.len(), 1, "{:?}", outcome.failures);
    let f = &outcome.failures[0];
    (
        f.node.clone(),
        f.code.clone(),
        f.message_ja.clone(),
        f.message_en.clone(),
    )
}

const STAFF: &str = "社員番号,部門\n1,営業\n2,営業\n3,経理\n";

const EACH_ROW: &str = "id: t
graph:
  - id: read
    block: csv.read
    in: {path: staff.csv}
    out: {rows: rows}
  - id: each
    type: loop
    foreach: {input: '${read.rows}', var: person}
    body:
      plan:
        id: b
        graph:
          - id: pick
            block: transforms.select_columns
            in: {rows: '${read.rows}', columns: [部門]}
            out: {rows: rows}
    out: {collect: all}
";

#[test]
fn a_foreach_over_more_items_than_the_limit_stops_before_its_first_iteration() {
    let limits = Limits {
        foreach_items: 2,
        ..Limits::default()
    };
    let (outcome, events) = run(&[("staff.csv", STAFF)], EACH_ROW, limits);
    assert_eq!(
        failure(&outcome),
        (
            "each".to_string(),
            "LIMIT_EXCEEDED".to_string(),
            "ノード each: foreach の対象が 3 件あり、上限の 2 件を超えています".to_string(),
            "node each: foreach over 3 items is past the limit of 2".to_string(),
        )
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::NodeStart { node, .. } if node.starts_with("each/"))),
        "the body must not have run"
    );
    // At the limit it runs.
    let limits = Limits {
        foreach_items: 3,
        ..Limits::default()
    };
    let (outcome, _) = run(&[("staff.csv", STAFF)], EACH_ROW, limits);
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
}

#[test]
fn a_while_that_would_run_past_the_limit_stops_there_whatever_its_max_iterations() {
    let plan = |max: u32| {
        format!(
            "id: t
graph:
  - id: read
    block: csv.read
    in: {{path: staff.csv}}
    out: {{rows: rows}}
  - id: w
    type: loop
    while: {{condition: {{expr: \"${{vars.iteration}} >= 0\"}}, max_iterations: {max}}}
    body:
      plan:
        id: b
        graph:
          - id: pick
            block: transforms.select_columns
            in: {{rows: '${{read.rows}}', columns: [部門]}}
            out: {{rows: rows}}
    out: {{collect: all}}
"
        )
    };
    let limits = Limits {
        while_iterations: 4,
        ..Limits::default()
    };
    let (outcome, _) = run(&[("staff.csv", STAFF)], &plan(1_000_000_000), limits);
    assert_eq!(
        failure(&outcome),
        (
            "w".to_string(),
            "LIMIT_EXCEEDED".to_string(),
            "ノード w: while が 4 回を超えて続こうとしました（上限 4 回）".to_string(),
            "node w: the while loop would run past 4 iterations (the limit)".to_string(),
        )
    );
    // A max_iterations under the limit ends the loop as before.
    let (outcome, _) = run(&[("staff.csv", STAFF)], &plan(3), limits);
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
}

#[test]
fn a_join_whose_keys_repeat_on_both_sides_stops_before_it_builds_the_rows() {
    // Joined on 部門 where 社員番号 was meant: 営業 is 2 rows × 3 rows = 6, 経理 1 × 1 = 1,
    // and the left join keeps 総務 (no match): 8 rows.
    let staff = "社員番号,部門\n1,営業\n2,営業\n3,経理\n4,総務\n";
    let pay = "社員番号,部門,支給額\n1,営業,300000\n2,営業,280000\n9,営業,1\n3,経理,310000\n";
    let yaml = &join_on_department("left");
    let files = [("staff.csv", staff), ("pay.csv", pay)];
    let (outcome, ja, en) = join_limited(&files, yaml, 8);
    assert!(
        ja.contains(
            "キー（部門）で結合すると 8 行になり、上限の 7 行を超えます（左 4 行 × 右 4 行）"
        ),
        "{ja}"
    );
    assert!(
        en.contains(
            "joining on 部門 would give 8 rows, past the limit of 7 (left 4 rows, right 4 rows)"
        ),
        "{en}"
    );
    let hint = outcome.failures[0].hint_ja.clone().unwrap_or_default();
    assert!(hint.contains("一意になるキー"), "{hint}");
}

/// Runs `yaml` (its join node `joined`) on `files` with `join_rows` one under `rows`, where
/// it must stop with `LIMIT_EXCEEDED` (that run and its Japanese and English messages are
/// returned), and exactly at `rows`, where it must run.
fn join_limited(files: &[(&str, &str)], yaml: &str, rows: u128) -> (RunOutcome, String, String) {
    let limits = |join_rows| Limits {
        join_rows,
        ..Limits::default()
    };
    let (outcome, _) = run(files, yaml, limits(rows - 1));
    let (node, code, ja, en) = failure(&outcome);
    assert_eq!((node.as_str(), code.as_str()), ("joined", "LIMIT_EXCEEDED"));
    let (at_limit, _) = run(files, yaml, limits(rows));
    assert_eq!(
        at_limit.status,
        RunStatus::Finished,
        "{:?}",
        at_limit.failures
    );
    (outcome, ja, en)
}

#[test]
fn a_join_on_number_keys_that_repeat_stops_before_it_builds_the_rows() {
    // Two keys read as numbers (a month and a department code), which the join packs into
    // one number and pairs itself, counting before it builds a row: (4, 10) is 2 rows × 3
    // rows = 6, (4, 20) 1 × 1 = 1, and the left join keeps (5, 10) (no match): 8 rows.
    let staff = "月,部門コード,氏名\n4,10,佐藤\n4,10,鈴木\n4,20,高橋\n5,10,田中\n";
    let pay = "月,部門コード,支給額\n4,10,300000\n4,10,280000\n4,10,1\n4,20,310000\n6,30,5\n";
    let yaml = "id: t
graph:
  - id: staff
    block: csv.read
    in: {path: staff.csv}
    out: {rows: rows}
  - id: staff_numbers
    block: transforms.normalize_amounts
    in: {rows: '${staff.rows}', fields: [月, 部門コード], on_error: error}
    out: {rows: rows}
  - id: pay
    block: csv.read
    in: {path: pay.csv}
    out: {rows: rows}
  - id: pay_numbers
    block: transforms.normalize_amounts
    in: {rows: '${pay.rows}', fields: [月, 部門コード], on_error: error}
    out: {rows: rows}
  - id: joined
    block: transforms.join
    in: {left: '${staff_numbers.rows}', right: '${pay_numbers.rows}', keys: [月, 部門コード], how: left}
    out: {rows: rows}
";
    let files = [("staff.csv", staff), ("pay.csv", pay)];
    let (_, ja, _) = join_limited(&files, yaml, 8);
    assert!(
        ja.contains(
            "キー（月, 部門コード）で結合すると 8 行になり、上限の 7 行を超えます（左 4 行 × 右 5 行）"
        ),
        "{ja}"
    );
}

/// `EACH_ROW` with `policy.limits` set to `limits` (a YAML mapping).
fn each_row_with(limits: &str) -> String {
    EACH_ROW.replacen("graph:", &format!("policy:\n  limits: {limits}\ngraph:"), 1)
}

#[test]
fn a_plan_raises_or_lowers_its_bounds_in_policy_limits_but_never_past_the_ceiling() {
    // The defaults allow 2 items, the settings' ceiling 3; the file has 3 staff.
    let options = |o: &mut keiri_run::RunOptions| {
        o.limits = Limits {
            foreach_items: 2,
            ..Limits::default()
        };
        o.ceiling = Limits {
            foreach_items: 3,
            ..Limits::ceiling()
        };
    };
    let files = [("staff.csv", STAFF)];
    // Without policy.limits the default stops it; the hint says how to raise it.
    let (outcome, _, _ws) = run_builtins(&files, EACH_ROW, options);
    let (_, code, ja, _) = failure(&outcome);
    assert_eq!(code, "LIMIT_EXCEEDED");
    assert!(ja.ends_with("上限の 2 件を超えています"), "{ja}");
    let hint = outcome.failures[0].hint_en.clone().unwrap_or_default();
    assert!(
        hint.contains(
            "raise policy.limits.foreach_items in the plan (up to run_limits.foreach_items in the settings)"
        ),
        "{hint}"
    );
    // The plan raises it to 3, within the ceiling: the loop runs its 3 items.
    let (outcome, events, _ws) =
        run_builtins(&files, &each_row_with("{foreach_items: 3}"), options);
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    let bodies: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::NodeFinish { node, .. } if node.ends_with("pick") => Some(node.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(bodies.len(), 3, "{bodies:?} {events:?}");
    // Asking for a million is held at the ceiling of 3, so 3 items still run …
    let (outcome, _, _ws) =
        run_builtins(&files, &each_row_with("{foreach_items: 1000000}"), options);
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    // … and under a ceiling of 2 the same plan stops at 2, whatever it asks for.
    let (outcome, _, _ws) = run_builtins(&files, &each_row_with("{foreach_items: 1000000}"), |o| {
        o.ceiling = Limits {
            foreach_items: 2,
            ..Limits::ceiling()
        };
    });
    let (_, code, ja, _) = failure(&outcome);
    assert_eq!(code, "LIMIT_EXCEEDED");
    assert!(ja.ends_with("上限の 2 件を超えています"), "{ja}");
    // A plan may lower a bound below the default.
    let (outcome, _, _ws) = run_builtins(&files, &each_row_with("{foreach_items: 1}"), |_| {});
    let (_, _, ja, _) = failure(&outcome);
    assert!(ja.ends_with("上限の 1 件を超えています"), "{ja}");
}

/// `rows` lines of `部門,金額` all in one department, so joining two of them on 部門 gives
/// rows × rows rows.
fn one_department(rows: usize) -> String {
    let mut text = String::from("部門,金額\n");
    for i in 0..rows {
        text.push_str(&format!("営業,{}\n", 1000 + i));
    }
    text
}

/// `rows` rows of one department with ten numbers each, in columns `<prefix>1` to
/// `<prefix>10`.
fn wide_department(rows: usize, prefix: &str) -> String {
    let mut text = String::from("部門");
    for c in 1..=10 {
        text.push_str(&format!(",{prefix}{c}"));
    }
    text.push('\n');
    for i in 0..rows {
        text.push_str("営業");
        for c in 1..=10 {
            text.push_str(&format!(",{}", i * 10 + c));
        }
        text.push('\n');
    }
    text
}

/// Reads staff.csv and pay.csv and joins them on 部門 (`how`).
fn join_on_department(how: &str) -> String {
    format!(
        "id: t
graph:
  - id: staff
    block: csv.read
    in: {{path: staff.csv}}
    out: {{rows: rows}}
  - id: pay
    block: csv.read
    in: {{path: pay.csv}}
    out: {{rows: rows}}
  - id: joined
    block: transforms.join
    in: {{left: '${{staff.rows}}', right: '${{pay.rows}}', keys: [部門], how: {how}}}
    out: {{rows: rows}}
"
    )
}

#[test]
fn a_node_that_grows_the_memory_past_the_budget_fails_and_its_rows_are_dropped() {
    // 2,000 × 1,000 = 2,000,000 joined rows (under the row bound) of two texts and two
    // numbers each: about 95 MB kept, well over 64 MB. The two reading nodes grow the process
    // by what the engine's start-up costs (under 16 MB with Polars optimised, 19 MB without),
    // well under it.
    let (a, b) = (one_department(2_000), one_department(1_000));
    let files = [("staff.csv", a.as_str()), ("pay.csv", b.as_str())];
    let yaml = join_on_department("inner");
    let (outcome, events, _ws) = run_builtins(&files, &yaml, |o| {
        o.limits = Limits {
            memory_bytes: 64 * 1024 * 1024,
            ..Limits::default()
        };
    });
    let (node, code, ja, en) = failure(&outcome);
    assert_eq!((node.as_str(), code.as_str()), ("joined", "LIMIT_EXCEEDED"));
    assert!(
        ja.starts_with("ノード joined: 実行開始からメモリが "),
        "{ja}"
    );
    assert!(
        ja.ends_with(" MB 増え、上限の 64 MB を超えたため止めました"),
        "{ja}"
    );
    assert!(en.ends_with("past the limit of 64 MB"), "{en}");
    let hint = outcome.failures[0].hint_ja.clone().unwrap_or_default();
    assert!(hint.contains("policy.limits.memory_mb"), "{hint}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::NodeFinish { node, .. } if node == "joined")),
        "the node's rows must not be kept"
    );
    // The reading nodes, small, finished under the same budget; with the default budget the
    // join finishes with its 2,000,000 rows.
    let (outcome, events, _ws) = run_builtins(&files, &yaml, |_| {});
    assert_eq!(
        outcome.status,
        RunStatus::Finished,
        "{:?}",
        outcome.failures
    );
    let rows = events.iter().find_map(|e| match e {
        Event::NodeFinish { node, rows, .. } if node == "joined" => *rows,
        _ => None,
    });
    assert_eq!(rows, Some(2_000_000));
}

/// Reads staff.csv and pay.csv and joins them on 部門 three times (j1, j2, j3, one after the
/// other: a plan runs one node at a time unless its policy says otherwise). Nothing reads the
/// joins, so the run keeps all three to its end.
const THREE_JOINS: &str = "id: t
graph:
  - id: staff
    block: csv.read
    in: {path: staff.csv}
    out: {rows: rows}
  - id: pay
    block: csv.read
    in: {path: pay.csv}
    out: {rows: rows}
  - id: j1
    block: transforms.join
    in: {left: '${staff.rows}', right: '${pay.rows}', keys: [部門], how: inner}
    out: {rows: rows1}
  - id: j2
    block: transforms.join
    in: {left: '${staff.rows}', right: '${pay.rows}', keys: [部門], how: inner}
    out: {rows: rows2}
  - id: j3
    block: transforms.join
    in: {left: '${staff.rows}', right: '${pay.rows}', keys: [部門], how: inner}
    out: {rows: rows3}
";

#[test]
fn the_memory_budget_is_the_runs_so_tables_kept_node_after_node_add_up() {
    // Each join is 1,000 × 1,000 = 1,000,000 rows of 21 columns (the key and ten numbers from
    // each side): it keeps a table of about 180 MB. Measured alone, with the engine's start-up,
    // the first grows the process by about 350 MB, and the second takes it past 700 MB. Under
    // a 500 MB budget each node alone passes, as it did when the budget was a node's; the run
    // keeps them all, so it stops at j2 or j3, never at j1.
    // (One run per test process: nextest's; a second run in one process starts from what the
    // allocator kept of the first.)
    let (a, b) = (wide_department(1_000, "a"), wide_department(1_000, "b"));
    let files = [("staff.csv", a.as_str()), ("pay.csv", b.as_str())];
    let (outcome, events, _ws) = run_builtins(&files, THREE_JOINS, |o| {
        o.limits = Limits {
            memory_bytes: 500 * 1024 * 1024,
            ..Limits::default()
        };
    });
    assert_eq!(outcome.status, RunStatus::Failed, "{:?}", outcome.failures);
    let finished = |id: &str| {
        events
            .iter()
            .any(|e| matches!(e, Event::NodeFinish { node, .. } if node == id))
    };
    assert!(finished("j1"), "{:?}", outcome.failures);
    let failure = &outcome.failures[0];
    assert!(
        ["j2", "j3"].contains(&failure.node.as_str()),
        "{:?}",
        outcome.failures
    );
    assert_eq!(failure.code, "LIMIT_EXCEEDED");
    assert!(
        failure.message_en.contains("the run's memory grew by")
            && failure.message_en.ends_with("past the limit of 500 MB"),
        "{}",
        failure.message_en
    );
    assert!(!finished(&failure.node), "its rows must not be kept");
}
