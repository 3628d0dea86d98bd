//! The engine with its own small test blocks (not the builtins): levels, concurrency,
//! policy, conditions, loops, subflows, env allowlist, records, resume and cancellation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use chrono::TimeZone;
use keiri_plan::{BlockSpec, Catalog, Plan};
use keiri_run::block::{
    BlockContext, BlockError, ErrorCode, Inputs, Outputs, Progress, ProgressUnit, Registry,
};
use keiri_run::value::Value;
use keiri_run::{Event, NodeStatus, RunOptions, RunOutcome, RunStatus};
use polars::prelude::{Column, DataFrame};
use serde_json::{Value as Json, json};

// ---- test blocks -------------------------------------------------------------------------

/// Every test block appends its node id to `<base>/calls.log`, so tests can count calls.
/// One `write_all` of the whole line: blocks of one level run in parallel, and `writeln!` may
/// split a line into several writes that interleave with another block's.
fn log_call(ctx: &BlockContext<'_>) {
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(ctx.base_dir.join("calls.log"))
    {
        let _ = f.write_all(format!("{}\n", ctx.node_id).as_bytes());
    }
}

/// Writes a whole file (tests only; the product writes atomically through keiri-fs).
fn put(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::File::create(path)?.write_all(text.as_bytes())
}

fn json_in(inputs: &Inputs, key: &str) -> Json {
    match inputs.0.get(key) {
        Some(Value::Json(j)) => j.clone(),
        Some(Value::Table(df)) => json!(df.height()),
        None => Json::Null,
    }
}

fn out(pairs: &[(&str, Value)]) -> Outputs {
    Outputs(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
        Default::default(),
    )
}

fn failed(msg: &str) -> BlockError {
    BlockError::new(ErrorCode::BlockFailed, msg, msg)
}

fn t_const(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    log_call(ctx);
    Ok(out(&[("value", Value::Json(json_in(inputs, "value")))]))
}

fn t_add(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    log_call(ctx);
    let a = json_in(inputs, "a").as_i64().ok_or_else(|| failed("a"))?;
    let b = json_in(inputs, "b").as_i64().ok_or_else(|| failed("b"))?;
    Ok(out(&[("sum", Value::Json(json!(a + b)))]))
}

fn t_fail(ctx: &BlockContext<'_>, _inputs: &Inputs) -> Result<Outputs, BlockError> {
    log_call(ctx);
    Err(BlockError::new(
        ErrorCode::BlockFailed,
        "失敗しました",
        "it failed",
    ))
}

/// Fails until it has been called `fails + 1` times (counted in `<base>/flaky.count`).
fn t_flaky(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    log_call(ctx);
    let path = ctx.base_dir.join("flaky.count");
    let n = std::fs::read_to_string(&path)
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or(0)
        + 1;
    put(&path, &n.to_string()).map_err(|e| failed(&e.to_string()))?;
    if n <= json_in(inputs, "fails").as_i64().unwrap_or(0) {
        return Err(failed("flaky"));
    }
    Ok(out(&[("value", Value::Json(json!(n)))]))
}

/// Sleeps `ms` in small steps, stopping early when cancelled.
/// Sleeps `ms`, or `ms` in each of `steps` steps, reporting each step's progress (rows).
fn t_sleep(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    log_call(ctx);
    let ms = json_in(inputs, "ms").as_u64().unwrap_or(0);
    let steps = json_in(inputs, "steps").as_u64();
    for done in 0..steps.unwrap_or(1) {
        if steps.is_some() {
            ctx.calls.progress(Progress {
                done,
                total: steps,
                unit: ProgressUnit::Rows,
            });
        }
        let end = Instant::now() + Duration::from_millis(ms);
        while Instant::now() < end {
            if ctx.cancel.is_cancelled() {
                return Err(BlockError::new(ErrorCode::Cancelled, "取消", "cancelled"));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    Ok(out(&[("value", Value::Json(json!(ms)))]))
}

/// Waits (up to 3 s) until `n` barrier blocks have arrived: passes only when they run at once.
fn t_barrier(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    log_call(ctx);
    let dir = ctx.base_dir.join("barrier");
    std::fs::create_dir_all(&dir).map_err(|e| failed(&e.to_string()))?;
    put(&dir.join(ctx.node_id), "").map_err(|e| failed(&e.to_string()))?;
    let n = json_in(inputs, "n").as_u64().unwrap_or(2) as usize;
    let end = Instant::now() + Duration::from_secs(3);
    while Instant::now() < end {
        if std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0) >= n {
            return Ok(out(&[("value", Value::Json(json!(true)))]));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Err(failed("the others never arrived"))
}

/// Reads `<base>/<path>`; fails when the text is `bad`.
fn t_read(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    log_call(ctx);
    let path = ctx
        .base_dir
        .join(json_in(inputs, "path").as_str().unwrap_or(""));
    let text = std::fs::read_to_string(&path)
        .map_err(|e| BlockError::new(ErrorCode::FileNotFound, e.to_string(), e.to_string()))?;
    if text.trim() == "bad" {
        return Err(BlockError::new(
            ErrorCode::BlockFailed,
            "列 amount がありません",
            "column amount is missing",
        ));
    }
    Ok(out(&[("text", Value::Json(json!(text.trim())))]))
}

/// A table with one column `n` holding `values`.
fn t_table(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    log_call(ctx);
    let values: Vec<i64> = json_in(inputs, "values")
        .as_array()
        .map(|a| a.iter().filter_map(Json::as_i64).collect())
        .unwrap_or_default();
    let df = DataFrame::new(values.len(), vec![Column::new("n".into(), values)])
        .map_err(|e| failed(&e.to_string()))?;
    Ok(out(&[("rows", Value::Table(df))]))
}

/// A block with a bug: it builds its `items` in part (one of `n`) even when the plan takes them.
fn t_in_part(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    log_call(ctx);
    let n = json_in(inputs, "n").as_u64().unwrap_or(0) as usize;
    Ok(Outputs::new().with_shown("items", vec![json!({"i": 0})], n))
}

fn registry() -> Registry {
    let mut r = Registry::default();
    r.insert("t.in_part", t_in_part);
    r.insert("t.const", t_const);
    r.insert("t.add", t_add);
    r.insert("t.fail", t_fail);
    r.insert("t.flaky", t_flaky);
    r.insert("t.sleep", t_sleep);
    r.insert("t.barrier", t_barrier);
    r.insert("t.read", t_read);
    r.insert("t.table", t_table);
    r
}

fn spec(id: &str, inputs: Json, outputs: &[&str]) -> BlockSpec {
    let outputs: serde_json::Map<String, Json> = outputs
        .iter()
        .map(|o| (o.to_string(), json!({"type": "any"})))
        .collect();
    serde_json::from_value(json!({
        "id": id, "version": "1.0.0", "entrypoint": format!("builtin:{id}"),
        "inputs": inputs, "outputs": outputs
    }))
    .expect("spec")
}

fn catalog() -> Catalog {
    Catalog::from_specs([
        spec("t.const", json!({"value": {"type": "any"}}), &["value"]),
        spec(
            "t.add",
            json!({"a": {"type": "integer", "required": true}, "b": {"type": "integer", "default": 100}}),
            &["sum"],
        ),
        spec("t.fail", json!({"x": {"type": "any"}}), &[]),
        spec("t.flaky", json!({"fails": {"type": "integer"}}), &["value"]),
        spec(
            "t.sleep",
            json!({"ms": {"type": "integer"}, "steps": {"type": "integer"}, "mode": {"type": "string", "enum": ["a", "b"]}}),
            &["value"],
        ),
        spec("t.barrier", json!({"n": {"type": "integer"}}), &["value"]),
        spec(
            "t.read",
            json!({"path": {"type": "string", "required": true}}),
            &["text"],
        ),
        spec("t.table", json!({"values": {"type": "array"}}), &["rows"]),
        spec("t.in_part", json!({"n": {"type": "integer"}}), &["items"]),
    ])
}

// ---- harness ----------------------------------------------------------------------------

struct Run {
    outcome: RunOutcome,
    events: Vec<Event>,
}

impl Run {
    fn failure(&self, node: &str) -> Option<&str> {
        self.outcome
            .failures
            .iter()
            .find(|f| f.node == node)
            .map(|f| f.code.as_str())
    }
    fn status(&self, node: &str) -> Option<NodeStatus> {
        self.outcome.nodes.get(node).copied()
    }
    fn output(&self, node: &str, key: &str) -> Json {
        let path = self
            .outcome
            .run_dir
            .join("outputs")
            .join(node)
            .join(format!("{key}.json"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        serde_json::from_str(&text).expect("json output")
    }
}

fn options(ws: &Path) -> RunOptions {
    let now = chrono::Utc
        .with_ymd_and_hms(2026, 11, 25, 9, 0, 0)
        .single()
        .expect("time");
    RunOptions::new(ws, now, 0xabcdef)
}

fn run_with(yaml: &str, options: &RunOptions) -> Run {
    let plan: Plan = keiri_plan::load_plan(yaml).expect("plan").plan;
    let events = Mutex::new(Vec::new());
    let sink = |e: &Event| events.lock().expect("lock").push(e.clone());
    let outcome =
        keiri_run::run(&plan, yaml, &catalog(), &registry(), options, &sink).expect("run");
    Run {
        outcome,
        events: events.into_inner().expect("events"),
    }
}

fn run(ws: &Path, yaml: &str) -> Run {
    run_with(yaml, &options(ws))
}

fn calls(ws: &Path, node: &str) -> usize {
    std::fs::read_to_string(ws.join("calls.log"))
        .unwrap_or_default()
        .lines()
        .filter(|l| *l == node)
        .count()
}

fn ws() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

// ---- tests ------------------------------------------------------------------------------

#[test]
fn references_flow_between_levels_with_their_types() {
    let ws = ws();
    let r = run(
        ws.path(),
        r#"
id: levels
vars: {base: 40}
graph:
  - {id: c, block: t.add, in: {a: "${a.v}", b: "${b.v}"}, out: {sum: total}}
  - {id: a, block: t.const, in: {value: "${vars.base}"}, out: {value: v}}
  - {id: b, block: t.const, in: {value: 2}, out: {value: v}}
  - {id: d, block: t.const, in: {value: {text: "合計 ${c.total} 円", list: ["${c.total}"]}}, out: {value: v}}
"#,
    );
    assert_eq!(r.outcome.status, RunStatus::Finished);
    assert_eq!(r.output("c", "sum"), json!(42));
    assert_eq!(
        r.output("d", "value"),
        json!({"text": "合計 42 円", "list": [42]})
    );
    let starts: Vec<&str> = r
        .events
        .iter()
        .filter_map(|e| match e {
            Event::NodeStart { node, .. } => Some(node.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(starts, ["a", "b", "c", "d"]);
}

#[test]
fn spec_defaults_are_applied_and_inputs_outside_the_spec_are_refused() {
    let ws = ws();
    let r = run(
        ws.path(),
        r#"
id: specs
policy: {on_error: continue}
graph:
  - {id: dflt, block: t.add, in: {a: 1}, out: {sum: s}}
  - {id: unknown_key, block: t.const, in: {value: 1, colour: red}}
  - {id: bad_enum, block: t.sleep, in: {ms: 0, mode: c}}
  - {id: bad_type, block: t.add, in: {a: "one"}}
  - {id: missing, block: t.add, in: {b: 1}}
  - {id: no_impl, block: t.nothing}
"#,
    );
    assert_eq!(r.output("dflt", "sum"), json!(101));
    for node in ["unknown_key", "bad_enum", "bad_type", "missing"] {
        assert_eq!(r.failure(node), Some("INPUT_INVALID"), "{node}");
    }
    assert_eq!(r.failure("no_impl"), Some("UNKNOWN_BLOCK"));
    assert_eq!(calls(ws.path(), "unknown_key"), 0);
    assert_eq!(r.outcome.status, RunStatus::Failed);
}

#[test]
fn concurrency_runs_a_level_in_parallel() {
    let plan = |c: u32| {
        format!(
            "id: conc\npolicy: {{concurrency: {c}, on_error: continue}}\ngraph:\n  - {{id: x, block: t.barrier, in: {{n: 2}}}}\n  - {{id: y, block: t.barrier, in: {{n: 2}}}}\n"
        )
    };
    let ws1 = ws();
    assert_eq!(
        run(ws1.path(), &plan(2)).outcome.status,
        RunStatus::Finished
    );
    // One at a time, the first barrier waits for a partner that never comes.
    let ws2 = ws();
    let r = run(ws2.path(), &plan(1));
    assert_eq!(r.failure("x"), Some("BLOCK_FAILED"));
}

const BRANCHES: &str = r#"
id: branches
policy: {on_error: ON_ERROR}
graph:
  - {id: bad, block: t.fail}
  - {id: a, block: t.const, in: {value: 1}, out: {value: v}}
  - {id: after_bad, block: t.const, in: {value: "${bad.v}"}}
  - {id: after_a, block: t.const, in: {value: "${a.v}"}}
"#;

#[test]
fn on_error_stop_runs_no_further_level() {
    let ws = ws();
    let r = run(ws.path(), &BRANCHES.replace("ON_ERROR", "stop"));
    assert_eq!(r.outcome.status, RunStatus::Failed);
    assert_eq!(r.failure("bad"), Some("BLOCK_FAILED"));
    assert_eq!(r.status("a"), Some(NodeStatus::Finished));
    assert_eq!(calls(ws.path(), "after_a"), 0);
    assert_eq!(r.status("after_a"), None);
}

#[test]
fn on_error_continue_runs_the_independent_branch() {
    let ws = ws();
    let r = run(ws.path(), &BRANCHES.replace("ON_ERROR", "continue"));
    // The failure `continue` let through is listed; the run itself finished (as v0's did).
    assert_eq!(r.outcome.status, RunStatus::Finished);
    assert_eq!(r.failure("bad"), Some("BLOCK_FAILED"));
    assert!(
        matches!(r.events.last(), Some(Event::RunFinish { status: RunStatus::Finished, failed, .. }) if failed == &["bad"])
    );
    assert_eq!(r.status("after_a"), Some(NodeStatus::Finished));
    assert_eq!(r.status("after_bad"), Some(NodeStatus::Skipped));
    let e = r.events.iter().find_map(|e| match e {
        Event::NodeError {
            node,
            code,
            message_ja,
            message_en,
            ..
        } if node == "bad" => Some((code.clone(), message_ja.clone(), message_en.clone())),
        _ => None,
    });
    let (code, ja, en) = e.expect("node_error");
    assert_eq!(code, "BLOCK_FAILED");
    assert!(ja.contains("bad") && ja.contains("失敗しました"), "{ja}");
    assert!(en.contains("node bad") && en.contains("it failed"), "{en}");
}

#[test]
fn retries_until_success_and_gives_up_after_the_last_attempt() {
    let plan = |retries: u32| {
        format!(
            "id: retry\ngraph:\n  - {{id: f, block: t.flaky, in: {{fails: 2}}, policy: {{retries: {retries}}}, out: {{value: v}}}}\n"
        )
    };
    let ws1 = ws();
    let r = run(ws1.path(), &plan(2));
    assert_eq!(r.outcome.status, RunStatus::Finished);
    assert_eq!(calls(ws1.path(), "f"), 3);
    let ws2 = ws();
    let r = run(ws2.path(), &plan(1));
    assert_eq!(r.failure("f"), Some("BLOCK_FAILED"));
    assert_eq!(calls(ws2.path(), "f"), 2);
    let retrying: Vec<bool> = r
        .events
        .iter()
        .filter_map(|e| match e {
            Event::NodeError { retrying, .. } => Some(*retrying),
            _ => None,
        })
        .collect();
    assert_eq!(retrying, [true, false]);
}

#[test]
fn a_slow_node_times_out() {
    let ws = ws();
    let r = run(
        ws.path(),
        "id: slow\npolicy: {timeout_ms: 50}\ngraph:\n  - {id: s, block: t.sleep, in: {ms: 20000}}\n",
    );
    assert_eq!(r.failure("s"), Some("TIMEOUT"));
    assert_eq!(r.outcome.status, RunStatus::Failed);
}

/// The `node_progress` events of `node`: (done, total, unit).
fn progress_of(r: &Run, node: &str) -> Vec<(u64, Option<u64>, ProgressUnit)> {
    r.events
        .iter()
        .filter_map(|e| match e {
            Event::NodeProgress {
                node: n,
                done,
                total,
                unit,
            } if n == node => Some((*done, *total, *unit)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_long_node_reports_its_progress_while_it_runs() {
    let ws = ws();
    let mut options = options(ws.path());
    options.progress_every = Duration::ZERO;
    let yaml = "id: long\ngraph:\n  - {id: s, block: t.sleep, in: {ms: 150, steps: 3}}\n";
    let r = run_with(yaml, &options);
    assert_eq!(r.status("s"), Some(NodeStatus::Finished));
    let progress = progress_of(&r, "s");
    // Each step is reported before its 150 ms; the engine looks every 10 ms.
    assert!(!progress.is_empty(), "no node_progress: {:?}", r.events);
    assert!(progress.windows(2).all(|w| w[0].0 < w[1].0), "{progress:?}");
    assert!(
        progress
            .iter()
            .all(|&(done, total, unit)| done < 3 && total == Some(3) && unit == ProgressUnit::Rows),
        "{progress:?}"
    );
    // Between the node's start and its finish, and in events.jsonl as on the sink.
    let at = |want: &dyn Fn(&Event) -> bool| r.events.iter().position(want).unwrap();
    let start = at(&|e| matches!(e, Event::NodeStart { .. }));
    let first = at(&|e| matches!(e, Event::NodeProgress { .. }));
    let finish = at(&|e| matches!(e, Event::NodeFinish { .. }));
    assert!(start < first && first < finish, "{:?}", r.events);
    let log = std::fs::read_to_string(r.outcome.run_dir.join("events.jsonl")).unwrap();
    assert!(
        log.contains(r#""event":"node_progress","node":"s","done":"#),
        "{log}"
    );
}

#[test]
fn a_quick_node_reports_no_progress() {
    // The default: a node that ends within a second has no progress events.
    let ws = ws();
    let r = run(
        ws.path(),
        "id: quick\ngraph:\n  - {id: s, block: t.sleep, in: {ms: 20, steps: 3}}\n",
    );
    assert_eq!(r.status("s"), Some(NodeStatus::Finished));
    assert_eq!(progress_of(&r, "s"), vec![]);
}

#[test]
fn a_timeout_under_continue_is_listed_and_the_run_finishes_but_a_plan_defect_fails_it() {
    let ws1 = ws();
    let r = run(
        ws1.path(),
        "id: slow
policy: {on_error: continue}
graph:
  - {id: s, block: t.sleep, in: {ms: 20000}, policy: {timeout_ms: 50}}
  - {id: a, block: t.const, in: {value: 1}, out: {value: v}}
  - {id: after_a, block: t.const, in: {value: \"${a.v}\"}}
",
    );
    assert_eq!(r.failure("s"), Some("TIMEOUT"));
    assert_eq!(r.status("after_a"), Some(NodeStatus::Finished));
    assert_eq!(r.outcome.status, RunStatus::Finished);
    // An input outside the block's spec is the plan's defect: continue goes on past it, but
    // the run failed.
    let ws2 = ws();
    let r = run(
        ws2.path(),
        "id: defect\npolicy: {on_error: continue}\ngraph:\n  - {id: bad_type, block: t.add, in: {a: \"one\"}}\n  - {id: a, block: t.const, in: {value: 1}}\n",
    );
    assert_eq!(r.failure("bad_type"), Some("INPUT_INVALID"));
    assert_eq!(r.status("a"), Some(NodeStatus::Finished));
    assert_eq!(r.outcome.status, RunStatus::Failed);
}

#[test]
fn when_skips_a_node_and_what_depends_on_it() {
    let ws = ws();
    let r = run(
        ws.path(),
        r#"
id: when
vars: {limit: 10}
graph:
  - {id: a, block: t.const, in: {value: 5}, out: {value: v}}
  - {id: big, block: t.const, in: {value: "${a.v}"}, when: {expr: "${a.v} > ${vars.limit}"}, out: {value: v}}
  - {id: small, block: t.const, in: {value: "${a.v}"}, when: "${a.v} <= ${vars.limit} and not ${vars.missing_ok}", out: {value: v}}
  - {id: after_big, block: t.const, in: {value: "${big.v}"}}
"#,
    );
    assert_eq!(r.outcome.status, RunStatus::Finished);
    assert_eq!(r.status("big"), Some(NodeStatus::Skipped));
    assert_eq!(r.status("small"), Some(NodeStatus::Finished));
    assert_eq!(r.status("after_big"), Some(NodeStatus::Skipped));
}

#[test]
fn foreach_runs_the_body_per_item() {
    let ws = ws();
    let r = run(
        ws.path(),
        r#"
id: each
graph:
  - {id: src, block: t.const, in: {value: [1, 2, 3]}, out: {value: list}}
  - id: loop
    type: loop
    foreach: {input: "${src.list}", var: n, max_concurrency: 2}
    body:
      plan:
        id: body
        graph:
          - {id: add, block: t.add, in: {a: "${vars.n}", b: "${vars.index}"}, out: {sum: s}}
    out: {collect: results, s: sums}
"#,
    );
    assert_eq!(r.outcome.status, RunStatus::Finished);
    assert_eq!(
        r.output("loop", "collect"),
        json!([{"s": 1}, {"s": 3}, {"s": 5}])
    );
    assert_eq!(r.output("loop", "s"), json!([1, 3, 5]));
    assert_eq!(calls(ws.path(), "loop[1]/add"), 1);
}

#[test]
fn foreach_over_a_table_iterates_its_rows() {
    let ws = ws();
    let r = run(
        ws.path(),
        r#"
id: each_row
graph:
  - {id: t, block: t.table, in: {values: [7, 8]}, out: {rows: rows}}
  - id: loop
    type: loop
    foreach: {input: "${t.rows}"}
    body: {plan: {id: b, graph: [{id: c, block: t.const, in: {value: "${vars.item.n}"}, out: {value: v}}]}}
    out: {collect: all}
"#,
    );
    assert_eq!(r.output("loop", "collect"), json!([{"v": 7}, {"v": 8}]));
    // Tables are recorded as Arrow IPC.
    assert!(r.outcome.run_dir.join("outputs/t/rows.arrow").is_file());
}

#[test]
fn while_repeats_until_the_condition_fails_or_the_cap() {
    let plan = |max: u32| {
        format!(
            r#"
id: repeat
graph:
  - id: w
    type: loop
    while: {{condition: {{expr: "${{vars.iteration}} < 3 and (${{step.v}} == null or ${{step.v}} < 10)"}}, max_iterations: {max}}}
    body: {{plan: {{id: b, graph: [{{id: step, block: t.const, in: {{value: "${{vars.iteration}}"}}, out: {{value: v}}}}]}}}}
    out: {{collect: all, v: last}}
"#
        )
    };
    let ws1 = ws();
    let r = run(ws1.path(), &plan(10));
    assert_eq!(
        r.output("w", "collect"),
        json!([{"v": 0}, {"v": 1}, {"v": 2}])
    );
    assert_eq!(r.output("w", "v"), json!(2));
    assert!(r.outcome.warnings.is_empty(), "{:?}", r.outcome.warnings);
    let ws2 = ws();
    let r = run(ws2.path(), &plan(2));
    assert_eq!(r.output("w", "collect"), json!([{"v": 0}, {"v": 1}]));
    // Stopped by the cap with the condition still true (iteration 2 < 3): said, not silent.
    let capped: Vec<(&str, &str)> = r
        .outcome
        .warnings
        .iter()
        .map(|w| (w.node.as_str(), w.code.as_str()))
        .collect();
    assert_eq!(capped, vec![("w", "LOOP_CAPPED")]);
    assert_eq!(
        r.outcome.warnings[0].message_en,
        "the while condition still held when max_iterations (2) was reached: the outputs are the last iteration's"
    );
    // A cap the condition reaches at the same time is not a warning: 3 iterations, max 3.
    let ws3 = ws();
    let r = run(ws3.path(), &plan(3));
    assert_eq!(r.output("w", "v"), json!(2));
    assert!(r.outcome.warnings.is_empty(), "{:?}", r.outcome.warnings);
}

fn register(ws: &Path, name: &str, yaml: &str) {
    let dir = ws.join("designs");
    std::fs::create_dir_all(&dir).expect("designs");
    put(&dir.join(name), yaml).expect("write");
}

#[test]
fn subflow_runs_the_latest_registered_plan() {
    let ws = ws();
    register(
        ws.path(),
        "child_202601010000.yaml",
        "id: child\nvars: {x: 0}\ngraph:\n  - {id: k, block: t.const, in: {value: old}, out: {value: result}}\n",
    );
    register(
        ws.path(),
        "child_202602010000.yaml",
        "id: child\nvars: {x: 0}\ngraph:\n  - {id: k, block: t.add, in: {a: \"${vars.x}\", b: 1}, out: {sum: result}}\n",
    );
    let r = run(
        ws.path(),
        "id: parent\ngraph:\n  - {id: call, type: subflow, call: {plan_id: child, inputs: {x: 41}}, out: {result: r}}\n  - {id: use, block: t.const, in: {value: \"${call.r}\"}}\n",
    );
    assert_eq!(r.outcome.status, RunStatus::Finished);
    assert_eq!(r.output("use", "value"), json!(42));
    assert_eq!(calls(ws.path(), "call/k"), 1);
}

#[test]
fn subflow_cycles_and_missing_plans_are_refused() {
    let ws = ws();
    register(
        ws.path(),
        "a_202601010000.yaml",
        "id: a\ngraph:\n  - {id: to_b, type: subflow, call: {plan_id: b}}\n",
    );
    register(
        ws.path(),
        "b_202601010000.yaml",
        "id: b\ngraph:\n  - {id: to_a, type: subflow, call: {plan_id: a}}\n",
    );
    let r = run(
        ws.path(),
        "id: a\npolicy: {on_error: continue}\ngraph:\n  - {id: start, type: subflow, call: {plan_id: b}}\n  - {id: nowhere, type: subflow, call: {plan_id: nope}}\n",
    );
    assert_eq!(r.failure("start"), Some("SUBFLOW_CYCLE"));
    assert_eq!(r.failure("nowhere"), Some("SUBFLOW_NOT_FOUND"));
}

#[test]
fn env_references_need_the_allowlist() {
    let yaml = "id: env\ngraph:\n  - {id: e, block: t.const, in: {value: \"key=${env.KEIRI_TEST_TOKEN}\"}}\n";
    let ws1 = ws();
    let mut opts = options(ws1.path());
    opts.env.insert("KEIRI_TEST_TOKEN".into(), "abc".into());
    let r = run_with(yaml, &opts);
    assert_eq!(r.failure("e"), Some("ENV_NOT_ALLOWED"));
    opts.env_allow.insert("KEIRI_TEST_TOKEN".into());
    let ws2 = ws();
    opts.runs_dir = ws2.path().join("runs");
    let r = run_with(yaml, &opts);
    assert_eq!(r.output("e", "value"), json!("key=abc"));
}

#[test]
fn env_values_are_redacted_from_the_records() {
    // The value reaches the node, but no file of the run holds it: node outputs are read back
    // by `run_output` callers (HTTP, MCP), who must not learn the user's secrets.
    let yaml = "id: envred\ngraph:\n  - {id: e, block: t.const, in: {value: {auth: \"Bearer ${env.KEIRI_TEST_TOKEN}\", list: [\"${env.KEIRI_TEST_TOKEN}\"]}}}\n";
    let ws = ws();
    let mut opts = options(ws.path());
    opts.env
        .insert("KEIRI_TEST_TOKEN".into(), "sk-live-0123456789".into());
    opts.env_allow.insert("KEIRI_TEST_TOKEN".into());
    let r = run_with(yaml, &opts);
    assert_eq!(
        r.output("e", "value"),
        json!({"auth": "Bearer (redacted)", "list": ["(redacted)"]})
    );
    let mut dirs = vec![r.outcome.run_dir.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let text =
                    String::from_utf8_lossy(&std::fs::read(&path).expect("read")).into_owned();
                assert!(!text.contains("sk-live-0123456789"), "{path:?}: {text}");
            }
        }
    }
}

#[test]
fn records_hold_events_outputs_and_state() {
    let ws = ws();
    let yaml =
        "id: rec\ngraph:\n  - {id: a, block: t.const, in: {value: {k: 1}}, out: {value: v}}\n";
    let r = run(ws.path(), yaml);
    assert_eq!(r.outcome.run_id, "20261125T090000000Z-abcdef");
    assert_eq!(
        r.outcome.run_dir,
        ws.path().join("runs/rec/20261125T090000000Z-abcdef")
    );
    let events = keiri_run::records::read_events(&r.outcome.run_dir).expect("events");
    assert_eq!(events, r.events);
    match &events[0] {
        Event::RunStart {
            plan_text,
            plan_sha256,
            ..
        } => {
            assert_eq!(plan_text, yaml);
            assert_eq!(plan_sha256, &keiri_run::plan_sha256(yaml));
        }
        other => panic!("first event {other:?}"),
    }
    assert!(matches!(
        events.last(),
        Some(Event::RunFinish {
            status: RunStatus::Finished,
            ..
        })
    ));
    let state = keiri_run::RunState::load(&r.outcome.run_dir).expect("state");
    assert_eq!(state.nodes["a"].outputs, ["value.json"]);
    assert_eq!(state.status, RunStatus::Finished);
}

#[test]
fn resume_continues_from_the_failed_node() {
    let ws = ws();
    put(&ws.path().join("input.txt"), "bad").expect("input");
    let yaml = r#"
id: resume
graph:
  - {id: first, block: t.table, in: {values: [1, 2]}, out: {rows: rows}}
  - {id: read, block: t.read, in: {path: input.txt}, out: {text: t}}
  - {id: last, block: t.const, in: {value: {text: "${read.t}", n: "${first.rows}"}}}
"#;
    let r = run(ws.path(), yaml);
    assert_eq!(r.failure("read"), Some("BLOCK_FAILED"));
    assert_eq!(calls(ws.path(), "first"), 1);
    put(&ws.path().join("input.txt"), "good").expect("fix");
    let mut opts = options(ws.path());
    opts.resume = Some(r.outcome.run_id.clone());
    let r2 = run_with(yaml, &opts);
    assert_eq!(r2.outcome.status, RunStatus::Finished);
    assert_eq!(r2.outcome.run_id, r.outcome.run_id);
    assert_eq!(
        calls(ws.path(), "first"),
        1,
        "finished nodes are not run again"
    );
    assert_eq!(calls(ws.path(), "read"), 2);
    // The reloaded table still flows as a table.
    assert_eq!(
        r2.output("last", "value"),
        json!({"text": "good", "n": [{"n": 1}, {"n": 2}]})
    );
    assert!(
        r2.events
            .iter()
            .any(|e| matches!(e, Event::NodeReused { node } if node == "first"))
    );
}

/// Two runs given the same id (the same millisecond, the same random part) never share a
/// folder: the second takes the next id, and the first's record stays as it left it (its plan
/// text, its one `run_start`, its output).
#[test]
fn two_runs_given_the_same_id_keep_their_own_records() {
    let ws = ws();
    let plan = |v: u32| {
        format!(
            "id: twice\ngraph:\n  - {{id: a, block: t.const, in: {{value: {v}}}, out: {{value: v}}}}\n"
        )
    };
    let first = run(ws.path(), &plan(1));
    let second = run(ws.path(), &plan(2));
    let third = run(ws.path(), &plan(3));
    assert_eq!(first.outcome.run_id, "20261125T090000000Z-abcdef");
    assert_eq!(second.outcome.run_id, "20261125T090000000Z-abcdf0");
    assert_eq!(third.outcome.run_id, "20261125T090000000Z-abcdf1");
    let runs = ws.path().join("runs");
    for (run, value) in [(&first, 1), (&second, 2), (&third, 3)] {
        assert_eq!(run.outcome.status, RunStatus::Finished);
        let dir = keiri_run::RunDir::open(&runs, "twice", &run.outcome.run_id).unwrap();
        assert_eq!(
            dir.load_outputs("a")
                .unwrap()
                .get("value")
                .unwrap()
                .to_json(),
            json!(value)
        );
        let text = std::fs::read_to_string(dir.path().join("plan.yaml")).unwrap();
        assert_eq!(text, plan(value));
        let events = std::fs::read_to_string(dir.path().join("events.jsonl")).unwrap();
        assert_eq!(events.matches("\"run_start\"").count(), 1, "{events}");
    }
}

#[test]
fn resume_of_an_unknown_run_is_an_error() {
    let ws = ws();
    let plan: Plan = keiri_plan::load_plan("id: x\ngraph: []\n")
        .expect("plan")
        .plan;
    let mut opts = options(ws.path());
    opts.resume = Some("20990101T000000000Z-000000".into());
    let err =
        keiri_run::run(&plan, "", &catalog(), &registry(), &opts, &|_| {}).expect_err("no run");
    assert_eq!(err.code(), "RUN_NOT_FOUND");
    opts.resume = Some("../../etc".into());
    let err =
        keiri_run::run(&plan, "", &catalog(), &registry(), &opts, &|_| {}).expect_err("bad id");
    assert_eq!(err.code(), "INVALID_REQUEST");
}

#[test]
fn cancellation_stops_the_running_node_and_the_rest() {
    let ws = ws();
    let opts = options(ws.path());
    let token = opts.cancel.clone();
    let plan: Plan = keiri_plan::load_plan(
        "id: cancel\ngraph:\n  - {id: s, block: t.sleep, in: {ms: 20000}, out: {value: v}}\n  - {id: next, block: t.const, in: {value: \"${s.v}\"}}\n",
    )
    .expect("plan")
    .plan;
    let sink = move |e: &Event| {
        if matches!(e, Event::NodeStart { node, .. } if node == "s") {
            token.cancel();
        }
    };
    let outcome = keiri_run::run(&plan, "", &catalog(), &registry(), &opts, &sink).expect("run");
    assert_eq!(outcome.status, RunStatus::Cancelled);
    assert_eq!(outcome.failures[0].code, "CANCELLED");
    assert_eq!(calls(ws.path(), "next"), 0);
}

/// Only an output the plan does not take may be built in part: a block that builds a taken one
/// in part fails rather than hand a later node a list cut short.
#[test]
fn a_block_that_builds_an_output_the_plan_takes_in_part_fails() {
    let ws = tempfile::tempdir().expect("tempdir");
    let taken = run(
        ws.path(),
        "id: p\ngraph:\n  - {id: a, block: t.in_part, in: {n: 5}, out: {items: items}}\n",
    );
    assert_eq!(taken.failure("a"), Some("BLOCK_FAILED"));
    let message = &taken.outcome.failures[0].message_en;
    assert!(message.contains("items only in part"), "{message}");
    // Not taken: the block may, and the run keeps the real count.
    let untaken = run(
        ws.path(),
        "id: p\ngraph:\n  - {id: a, block: t.in_part, in: {n: 5}}\n",
    );
    assert_eq!(untaken.status("a"), Some(NodeStatus::Finished));
    let dir = keiri_run::RunDir::open(&ws.path().join("runs"), "p", &untaken.outcome.run_id)
        .expect("run dir");
    assert_eq!(dir.kept_in_part("a").expect("kept")["items"].rows, 5);
}
