//! One trigger and one clean plan per validator rule.

use keiri_plan::{Lang, Options, Severity, load_plan, validate};

use super::test_catalog;

fn findings(yaml: &str, known_plans: &[&str]) -> Vec<keiri_plan::Finding> {
    let loaded = load_plan(yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"));
    let options = Options {
        lang: Lang::Ja,
        known_plans: known_plans.iter().map(|s| s.to_string()).collect(),
        ..Options::default()
    };
    validate(&loaded.plan, &test_catalog(), &options)
}

/// Asserts the sorted set of error codes (with node ids) a plan produces.
fn check(yaml: &str, expect: &[&str]) {
    check_with(yaml, &[], expect);
}

fn check_with(yaml: &str, known_plans: &[&str], expect: &[&str]) {
    let mut got: Vec<String> = findings(yaml, known_plans)
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| format!("{}@{}", f.code, f.node_id.unwrap_or_default()))
        .collect();
    got.sort();
    let mut want: Vec<String> = expect.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(got, want, "\n{yaml}");
}

fn warnings(yaml: &str) -> Vec<String> {
    let mut got: Vec<String> = findings(yaml, &[])
        .into_iter()
        .filter(|f| f.severity == Severity::Warning)
        .map(|f| format!("{}@{}", f.code, f.node_id.unwrap_or_default()))
        .collect();
    got.sort();
    got
}

const HEAD: &str = "apiVersion: v1\nid: t\nversion: 1.0.0\n";

fn plan(body: &str) -> String {
    format!("{HEAD}{body}")
}

const CLEAN: &str = r#"
vars:
  src: invoices.csv
graph:
  - id: read
    block: csv.read
    in: {path: "${vars.src}", encoding: shift_jis}
    out: {rows: rows}
  - id: filter
    block: transforms.filter
    in: {rows: "${read.rows}", condition: "amount > 0", limit: 10}
    out: {rows: kept}
  - id: write
    block: excel.write
    in: {rows: "${filter.kept}", path: out.xlsx}
    out: {out_path: out_path}
"#;

#[test]
fn clean_plan_has_no_findings() {
    check(&plan(CLEAN), &[]);
    assert_eq!(warnings(&plan(CLEAN)), Vec::<String>::new());
}

#[test]
fn plan_and_node_ids() {
    check("graph: []\n", &["plan.missing_id@"]);
    check(
        &plan("graph:\n  - block: ui.confirm\n"),
        &["node.missing_id@"],
    );
    check(
        &plan("graph:\n  - {id: a, block: ui.confirm}\n  - {id: a, block: ui.confirm}\n"),
        &["node.duplicate_id@a"],
    );
    check(
        &plan("graph:\n  - {id: a, block: ui.confirm}\n  - {id: b, block: ui.confirm}\n"),
        &[],
    );
}

#[test]
fn unknown_block_and_missing_block() {
    check(
        &plan("graph:\n  - {id: a, block: csv.reed, in: {path: x}}\n"),
        &["block.unknown@a"],
    );
    check(
        &plan("graph:\n  - {id: a, in: {path: x}}\n"),
        &["node.missing_block@a"],
    );
    check(
        &plan("graph:\n  - {id: a, type: parallel}\n"),
        &["node.unknown_type@a"],
    );
    let f = findings(
        &plan("graph:\n  - {id: a, block: csv.reed, in: {path: x}}\n"),
        &[],
    );
    assert!(
        f[0].hint.as_deref().unwrap().contains("csv.read"),
        "{:?}",
        f[0].hint
    );
    assert_eq!(f[0].path, "/graph/0/block");
}

#[test]
fn input_and_output_keys() {
    check(
        &plan("graph:\n  - {id: a, block: csv.read, in: {path: x, delimiter: ','}}\n"),
        &["input.unknown_key@a"],
    );
    check(
        &plan("graph:\n  - {id: a, block: csv.read, in: {path: x}, out: {records: r}}\n"),
        &["output.unknown_key@a"],
    );
    check(
        &plan("graph:\n  - {id: a, block: csv.read, in: {path: x}, out: {rows: r}}\n"),
        &[],
    );
}

#[test]
fn required_inputs() {
    check(
        &plan("graph:\n  - {id: a, block: csv.read, in: {header: true}}\n"),
        &["input.missing_required@a"],
    );
    check(
        &plan("graph:\n  - {id: a, block: csv.read, in: {path: null}}\n"),
        &["input.missing_required@a"],
    );
    check(
        &plan("graph:\n  - {id: a, block: csv.read, in: {path: a.csv}}\n"),
        &[],
    );
}

#[test]
fn enum_literals() {
    check(
        &plan("graph:\n  - {id: a, block: csv.read, in: {path: x, encoding: euc-jp}}\n"),
        &["input.enum_mismatch@a"],
    );
    check(
        &plan("graph:\n  - {id: a, block: csv.read, in: {path: x, encoding: utf-8}}\n"),
        &[],
    );
    // A reference is not a literal: its value is only known at run time.
    check(
        &plan(
            "vars: {e: utf-8}\ngraph:\n  - {id: a, block: csv.read, in: {path: x, encoding: '${vars.e}'}}\n",
        ),
        &[],
    );
}

#[test]
fn literal_types() {
    check(
        &plan("graph:\n  - {id: a, block: csv.read, in: {path: 12}}\n"),
        &["input.type_mismatch@a"],
    );
    check(
        &plan("graph:\n  - {id: a, block: csv.read, in: {path: x, header: 'yes'}}\n"),
        &["input.type_mismatch@a"],
    );
    check(
        &plan(
            "graph:\n  - {id: a, block: csv.read, in: {path: x}, out: {rows: r}}\n  - {id: b, block: transforms.filter, in: {rows: '${a.r}', condition: c, limit: 1.5}}\n",
        ),
        &["input.type_mismatch@b"],
    );
    // An interpolated reference makes a string.
    check(
        &plan(
            "graph:\n  - {id: a, block: csv.read, in: {path: x}, out: {rows: r}}\n  - {id: b, block: transforms.filter, in: {rows: 'n=${a.r}', condition: c}}\n",
        ),
        &["input.type_mismatch@b"],
    );
    // An integer is a number.
    check(
        &plan("graph:\n  - {id: a, block: csv.read, in: {path: x, header: false}}\n"),
        &[],
    );
}

#[test]
fn references_anywhere() {
    // Unknown node: whole string, interpolated, nested in a map and in a list.
    for value in [
        "'${ghost.rows}'",
        "'件数 ${ghost.count} 件'",
        "{nested: {deep: '${ghost.rows}'}}",
        "['${ghost.rows}']",
    ] {
        check(
            &plan(&format!(
                "graph:\n  - {{id: a, block: ai.process_llm, in: {{prompt: p, output_schema: {{x: string}}, input_data: {value}}}}}\n"
            )),
            &["ref.unknown_node@a"],
        );
    }
    check(
        &plan(
            "graph:\n  - {id: a, block: csv.read, in: {path: x}, out: {rows: r}}\n  - {id: b, block: transforms.filter, in: {rows: '${a.rows}', condition: c}}\n",
        ),
        &["ref.unknown_alias@b"],
    );
    check(
        &plan("graph:\n  - {id: a, block: csv.read, in: {path: '${vars.missing}'}}\n"),
        &["ref.undefined_var@a"],
    );
    check(
        &plan("graph:\n  - {id: a, block: csv.read, in: {path: '${env.HOME}/x.csv'}}\n"),
        &[],
    );
    check(
        &plan("graph:\n  - {id: a, block: csv.read, in: {path: '${a'}}\n"),
        &["ref.malformed@a"],
    );
}

#[test]
fn reference_types() {
    // rows (array) ← summary (object): mismatch.
    check(
        &plan(
            "graph:\n  - {id: a, block: csv.read, in: {path: x}, out: {summary: s}}\n  - {id: b, block: transforms.filter, in: {rows: '${a.s}', condition: c}}\n",
        ),
        &["ref.type_mismatch@b"],
    );
    // A nested path is relaxed: its type is unknown.
    check(
        &plan(
            "graph:\n  - {id: a, block: csv.read, in: {path: x}, out: {summary: s}}\n  - {id: b, block: transforms.filter, in: {rows: '${a.s.items}', condition: c}}\n",
        ),
        &[],
    );
    // An `any` output is relaxed.
    check(
        &plan(
            "graph:\n  - {id: a, block: transforms.filter, in: {rows: [], condition: c}, out: {count: n}}\n  - {id: b, block: csv.read, in: {path: '${a.n}'}}\n",
        ),
        &["ref.type_mismatch@b"],
    );
}

#[test]
fn cycles_direct_nested_and_interpolated() {
    // Direct.
    check(
        &plan(
            "graph:\n  - {id: a, block: transforms.filter, in: {rows: '${b.rows}', condition: c}, out: {rows: rows}}\n  - {id: b, block: transforms.filter, in: {rows: '${a.rows}', condition: c}, out: {rows: rows}}\n",
        ),
        &["graph.cycle@a"],
    );
    // Through a reference nested in a map.
    check(
        &plan(
            "graph:\n  - {id: a, block: ai.process_llm, in: {prompt: p, output_schema: {x: string}, input_data: {deep: ['${b.out}']}}, out: {results: res}}\n  - {id: b, block: transforms.filter, in: {rows: '${a.res}', condition: c}, out: {rows: out}}\n",
        ),
        &["graph.cycle@a"],
    );
    // Through an interpolated reference inside a longer string.
    check(
        &plan(
            "graph:\n  - {id: a, block: transforms.filter, in: {rows: [], condition: 'x > ${b.count}'}, out: {rows: rows}}\n  - {id: b, block: transforms.filter, in: {rows: '${a.rows}', condition: c}, out: {count: count}}\n",
        ),
        &["graph.cycle@a"],
    );
    // Self-reference.
    check(
        &plan(
            "graph:\n  - {id: a, block: transforms.filter, in: {rows: '${a.rows}', condition: c}, out: {rows: rows}}\n",
        ),
        &["graph.cycle@a"],
    );
    // Through a when condition.
    check(
        &plan(
            "graph:\n  - {id: a, block: ui.confirm, when: {expr: '${b.approved}'}, out: {approved: approved}}\n  - {id: b, block: ui.confirm, when: {expr: '${a.approved}'}, out: {approved: approved}}\n",
        ),
        &["graph.cycle@a"],
    );
}

#[test]
fn when_expressions() {
    check(
        &plan(
            "graph:\n  - {id: c, block: ui.confirm, out: {approved: ok}}\n  - {id: a, block: ui.confirm, when: {expr: \"__import__('os').system('x')\"}}\n",
        ),
        &["when.invalid_expr@a"],
    );
    check(
        &plan(
            "graph:\n  - {id: c, block: ui.confirm, out: {approved: ok}}\n  - {id: a, block: ui.confirm, when: {expr: '${c.ok} == true and not ${c.ok} != false'}}\n",
        ),
        &[],
    );
    let f = findings(
        &plan("graph:\n  - {id: a, block: ui.confirm, when: {expr: 'true + 1'}}\n"),
        &[],
    );
    assert!(
        f[0].message.contains("6"),
        "the message carries the column: {}",
        f[0].message
    );
}

const LOOP: &str = r#"
graph:
  - id: read
    block: csv.read
    in: {path: x}
    out: {rows: rows}
  - id: each
    type: loop
    foreach: {input: "${read.rows}", var: row}
    body:
      plan:
        id: inner
        graph:
          - id: llm
            block: ai.process_llm
            in: {prompt: "${vars.row.name}", output_schema: {x: string}, input_data: "${read.rows}"}
            out: {results: results}
    out: {collect: all}
  - id: write
    block: excel.write
    in: {rows: "${each.all}", path: out.xlsx}
"#;

#[test]
fn loops() {
    check(&plan(LOOP), &[]);
    check(
        &plan(&LOOP.replace("foreach: {input: \"${read.rows}\", var: row}", "foreach: {input: \"${read.rows}\", var: row}\n    while: {condition: {expr: 'true'}, max_iterations: 3}")),
        &["loop.foreach_and_while@each"],
    );
    check(
        &plan(&LOOP.replace(
            "foreach: {input: \"${read.rows}\", var: row}",
            "foreach: {input: 3, var: row}",
        )),
        &["loop.foreach_not_iterable@each"],
    );
    // A reference to an object output is not iterable.
    check(
        &plan(
            &LOOP
                .replace("{rows: rows}", "{rows: rows, summary: summ}")
                .replace(
                    "foreach: {input: \"${read.rows}\"",
                    "foreach: {input: \"${read.summ}\"",
                ),
        ),
        &["loop.foreach_not_iterable@each"],
    );
    check(
        &plan(&LOOP.replace(
            "foreach: {input: \"${read.rows}\", var: row}",
            "while: {condition: {expr: 'true'}, max_iterations: 0}",
        )),
        &["loop.while_max_iterations@each", "ref.undefined_var@llm"],
    );
    check(
        &plan(&LOOP.replace(
            "foreach: {input: \"${read.rows}\", var: row}",
            "while: {condition: {expr: 'true'}, max_iterations: 5}",
        )),
        &["ref.undefined_var@llm"],
    );
    // The body is validated recursively.
    check(
        &plan(&LOOP.replace("output_schema: {x: string}, ", "")),
        &["ai.output_schema_required@llm"],
    );
    // The loop var is not visible outside the body.
    check(
        &plan(&LOOP.replace(
            "in: {rows: \"${each.all}\", path: out.xlsx}",
            "in: {rows: \"${each.all}\", path: \"${vars.row}\"}",
        )),
        &["ref.undefined_var@write"],
    );
    check(
        &plan("graph:\n  - {id: l, type: loop, body: {plan: {id: i, graph: []}}}\n"),
        &["loop.missing_iteration@l"],
    );
    check(
        &plan("graph:\n  - {id: l, type: loop, foreach: {items: [1, 2]}}\n"),
        &["loop.missing_body@l"],
    );
    // A while condition sees the iteration count and the body's outputs; anything else in
    // it must still exist.
    let repeat = |cond: &str| {
        plan(
            &LOOP
                .replace(
                    "foreach: {input: \"${read.rows}\", var: row}",
                    &format!("while: {{condition: {{expr: \"{cond}\"}}, max_iterations: 5}}"),
                )
                .replace("${vars.row.name}", "x"),
        )
    };
    check(
        &repeat("${vars.iteration} < 3 and ${llm.results} == null"),
        &[],
    );
    check(&repeat("${vars.nope} < 3"), &["ref.undefined_var@each"]);
    // A body referencing its own loop's output is a cycle.
    check(
        &plan(&LOOP.replace(
            "input_data: \"${read.rows}\"",
            "input_data: \"${each.all}\"",
        )),
        &["graph.cycle@each"],
    );
}

#[test]
fn loop_keys_on_a_non_loop_node_and_loop_bounds() {
    // The issue's case: a block node with foreach and while at once and max_iterations 0.
    check(
        &plan(
            "graph:\n  - id: b\n    block: ui.confirm\n    foreach: {items: [1]}\n    while: {condition: {expr: 'true'}, max_iterations: 0}\n",
        ),
        &[
            "node.loop_key_on_non_loop@b",
            "node.loop_key_on_non_loop@b",
            "loop.foreach_and_while@b",
            "loop.while_max_iterations@b",
        ],
    );
    check(
        &plan("graph:\n  - id: b\n    block: ui.confirm\n    body: {plan: {id: i, graph: []}}\n"),
        &["node.loop_key_on_non_loop@b"],
    );
    check_with(
        &plan(
            "graph:\n  - {id: s, type: subflow, call: {plan_id: p}, while: {condition: {expr: 'true'}, max_iterations: 2}}\n",
        ),
        &["p"],
        &["node.loop_key_on_non_loop@s"],
    );
    check(
        &plan(&LOOP.replace(
            "foreach: {input: \"${read.rows}\", var: row}",
            "foreach: {input: \"${read.rows}\", var: row, max_concurrency: 0}",
        )),
        &["loop.max_concurrency@each"],
    );
    check(
        &plan(&LOOP.replace(
            "foreach: {input: \"${read.rows}\", var: row}",
            "foreach: {input: \"${read.rows}\", var: row, max_concurrency: 1}",
        )),
        &[],
    );
    // Every new finding has both languages' text, a hint and a pointer to the key.
    let yaml = plan(
        "graph:\n  - id: b\n    block: ui.confirm\n    foreach: {items: [1], max_concurrency: 0}\n",
    );
    let found: Vec<_> = findings(&yaml, &[])
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .collect();
    let codes: Vec<&str> = found.iter().map(|f| f.code.as_str()).collect();
    assert_eq!(codes, ["node.loop_key_on_non_loop", "loop.max_concurrency"]);
    assert_eq!(found[0].path, "/graph/0/foreach");
    assert_eq!(found[1].path, "/graph/0/foreach/max_concurrency");
    assert!(found.iter().all(|f| f.hint.is_some()));
    assert!(
        found[0].message.contains("type: loop"),
        "{}",
        found[0].message
    );
}

#[test]
fn subflows() {
    let yaml = plan(
        "graph:\n  - {id: s, type: subflow, call: {plan_id: monthly_close, inputs: {month: 4}}}\n",
    );
    check(&yaml, &["subflow.unknown_plan@s"]);
    check_with(&yaml, &["monthly_close"], &[]);
    check(
        &plan("graph:\n  - {id: s, type: subflow}\n"),
        &["subflow.missing_plan_id@s"],
    );
}

#[test]
fn ai_process_llm_rules() {
    check(
        &plan("graph:\n  - {id: a, block: ai.process_llm, in: {prompt: p, output_schema: {}}}\n"),
        &["ai.output_schema_required@a"],
    );
    check(
        &plan(
            "graph:\n  - {id: a, block: ai.process_llm, in: {output_schema: {x: string}, prompt: '  '}}\n",
        ),
        &["ai.prompt_required@a"],
    );
    check(
        &plan(
            "graph:\n  - {id: a, block: ai.process_llm, in: {instruction: i, output_schema: {x: string}}}\n",
        ),
        &[],
    );
}

#[test]
fn ui_layout() {
    check(
        &plan("ui: {layout: [c, ghost]}\ngraph:\n  - {id: c, block: ui.confirm}\n"),
        &["ui.layout_unknown_node@"],
    );
    check(
        &plan("ui: {layout: [c]}\ngraph:\n  - {id: c, block: ui.confirm}\n"),
        &[],
    );
}

#[test]
fn usage_warnings() {
    // `summary` is published but unused; `filter` feeds nothing.
    let yaml = plan(
        "graph:\n  - {id: read, block: csv.read, in: {path: x}, out: {rows: rows, summary: s}}\n  - {id: filter, block: transforms.filter, in: {rows: '${read.rows}', condition: c}, out: {rows: kept}}\n",
    );
    assert_eq!(
        warnings(&yaml),
        ["node.feeds_nothing@filter", "output.unused@read"]
    );
    // Sinks (output/ui blocks) need not feed anything.
    assert_eq!(warnings(&plan(CLEAN)), Vec::<String>::new());
}

#[test]
fn messages_in_english_on_request() {
    let loaded = load_plan(&plan("graph:\n  - {id: a, block: nope}\n")).unwrap();
    let en = validate(
        &loaded.plan,
        &test_catalog(),
        &Options {
            lang: Lang::En,
            ..Options::default()
        },
    );
    assert_eq!(en[0].message, "block nope is not in the catalog");
    let ja = validate(&loaded.plan, &test_catalog(), &Options::default());
    assert_eq!(ja[0].message, "ブロック nope はカタログにありません");
}

#[test]
fn findings_carry_json_pointers() {
    let f = findings(
        &plan("graph:\n  - {id: a, block: csv.read, in: {path: x, encoding: euc}}\n"),
        &[],
    );
    assert_eq!(f[0].path, "/graph/0/in/encoding");
    assert_eq!(f[0].node_id.as_deref(), Some("a"));
}

#[test]
fn out_aliases_must_be_strings() {
    check(
        &plan("graph:\n  - {id: a, block: csv.read, in: {path: x}, out: {rows: [r]}}\n"),
        &["out.alias_invalid@a"],
    );
    check(
        &plan("graph:\n  - {id: a, block: csv.read, in: {path: x}, out: {rows: r}}\n"),
        &[],
    );
}

/// Every field of the findings of a plan with several kinds of mistake, through
/// `keiri_plan::check` (so with lines and columns), in both languages, as snapshots
/// (`tests/plan/snapshots/`): a changed message, hint, pointer or position is a reviewed diff.
#[test]
fn findings_snapshot() {
    let yaml = plan(
        r#"
vars:
  src: invoices.csv
graph:
  - id: read
    block: csv.read
    in: {path: "${vars.source}", encoding: ebcdic}
    out: {rows: rows}
  - id: filter
    block: transforms.filtr
    in: {rows: "${read.records}"}
  - id: read
    block: csv.read
    in: {path: "${vars.src}", colour: red}
"#,
    );
    for lang in [Lang::Ja, Lang::En] {
        let checked = keiri_plan::check(&yaml, lang, &test_catalog(), |_| Options {
            lang,
            ..Options::default()
        });
        insta::assert_yaml_snapshot!(
            format!("findings_{lang:?}").to_lowercase(),
            checked.findings
        );
    }
    let unreadable =
        keiri_plan::check("id: [\n", Lang::En, &test_catalog(), |_| Options::default());
    insta::assert_yaml_snapshot!("findings_yaml_parse", unreadable.findings);
}

#[test]
fn policy_limits_are_the_plans_own_and_none_is_zero() {
    // The plan's own bounds, raised and lowered: clean.
    let bounded = CLEAN.replacen(
        "graph:",
        "policy:\n  limits: {foreach_items: 500000, join_rows: 50000000, memory_mb: 12000}\ngraph:",
        1,
    );
    check(&plan(&bounded), &[]);
    assert_eq!(warnings(&plan(&bounded)), Vec::<String>::new());
    // A bound of 0 stops the first loop or join it meets: an error at its place.
    let zero = CLEAN.replacen(
        "graph:",
        "policy:\n  limits: {while_iterations: 0}\ngraph:",
        1,
    );
    check(&plan(&zero), &["policy.limit_zero@"]);
    let found = findings(&plan(&zero), &[]);
    assert_eq!(found[0].path, "/policy/limits/while_iterations");
    // On a node or a loop body it would be ignored: a warning says so.
    let on_node = CLEAN.replacen(
        "out: {rows: kept}",
        "out: {rows: kept}\n    policy: {limits: {join_rows: 10}}",
        1,
    );
    check(&plan(&on_node), &[]);
    assert_eq!(warnings(&plan(&on_node)), ["policy.limits_not_plan@filter"]);
    let in_body = plan(
        r#"
graph:
  - id: each
    type: loop
    foreach: {items: [1, 2], var: n}
    body:
      plan:
        id: b
        policy: {limits: {foreach_items: 5}}
        graph:
          - id: f
            block: transforms.filter
            in: {rows: [], condition: "amount > 0"}
            out: {rows: kept}
    out: {collect: all}
"#,
    );
    assert!(
        warnings(&in_body).contains(&"policy.limits_not_plan@each".to_string()),
        "{:?}",
        warnings(&in_body)
    );
    // A misspelt bound does not load: it would otherwise be silently ignored.
    let misspelt = CLEAN.replacen("graph:", "policy:\n  limits: {memroy_mb: 100}\ngraph:", 1);
    let err = load_plan(&plan(&misspelt)).expect_err("an unknown bound must not load");
    assert!(err.to_string().contains("memroy_mb"), "{err}");
}

#[test]
fn list_items_of_the_wrong_type_are_findings_before_the_run() {
    // `control.approval` wants approvers as objects ({name, role, limit}); a list of names
    // validated and then failed the run with INPUT_INVALID.
    let catalog = super::template::shipped_catalog();
    let run = |approvers: &str| {
        let yaml = format!(
            "id: a\nvars: {{second: 鈴木}}\ngraph:\n  - id: approve\n    block: control.approval\n    in: {{subject: 支払, approvers: {approvers}}}\n    out: {{approved: ok}}\n"
        );
        let plan = load_plan(&yaml).unwrap().plan;
        validate(&plan, &catalog, &Options::default())
            .into_iter()
            .filter(|f| f.code.as_str() == "input.type_mismatch")
            .map(|f| (f.path, f.message))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        run("[{name: 佐藤}, 鈴木]"),
        [(
            "/graph/0/in/approvers/1".to_string(),
            "control.approval の approvers の 2 番目は object 型が必要ですが string が指定されています（例 {name: …}）".to_string()
        )]
    );
    assert!(run("[{name: 佐藤}, {name: 鈴木, limit: 1000000}]").is_empty());
    // An item known only at run time is the run's to check.
    assert!(run("[{name: 佐藤}, \"${vars.second}\"]").is_empty());
    // Items of several allowed types (`transforms.join`'s keys: a name or {left, right}).
    let join = load_plan(
        "id: j\ngraph:\n  - {id: l, block: csv.read, in: {path: a.csv}, out: {rows: rows}}\n  - {id: r, block: csv.read, in: {path: b.csv}, out: {rows: rows}}\n  - {id: j, block: transforms.join, in: {left: \"${l.rows}\", right: \"${r.rows}\", keys: [科目, {left: 部門, right: 部署}, 3]}, out: {rows: rows}}\n",
    )
    .unwrap()
    .plan;
    let mismatched: Vec<String> = validate(&join, &catalog, &Options::default())
        .into_iter()
        .filter(|f| f.code.as_str() == "input.type_mismatch")
        .map(|f| f.path)
        .collect();
    assert_eq!(mismatched, ["/graph/2/in/keys/2"]);
}
