//! Dry-run order and sample inputs.

use keiri_plan::{dry_run, load_plan};
use serde_json::json;

use super::test_catalog;

#[test]
fn order_is_topological_and_stable() {
    // Written out of order on purpose: write depends on filter depends on read.
    let text = r#"
id: p
graph:
  - {id: write, block: excel.write, in: {rows: "${filter.kept}", path: "out_${vars.month}.xlsx"}}
  - {id: confirm, block: ui.confirm, in: {message: ok?}, out: {approved: ok}}
  - {id: filter, block: transforms.filter, in: {rows: "${read.rows}", condition: c}, out: {rows: kept}, when: {expr: "${confirm.ok}"}}
  - {id: read, block: csv.read, in: {path: x}, out: {rows: rows, summary: s}}
vars: {month: "2025-04"}
"#;
    let loaded = load_plan(text).unwrap();
    let run = dry_run(&loaded.plan, &test_catalog(), &Default::default());
    assert_eq!(run.order, ["confirm", "read", "filter", "write"]);
    let write = run.nodes.iter().find(|n| n.id == "write").unwrap();
    assert_eq!(write.depends_on, ["filter"]);
    assert_eq!(write.inputs["path"], json!("out_2025-04.xlsx"));
    assert_eq!(
        write.inputs["rows"],
        json!([{}]),
        "array sample from the declared type"
    );
    let filter = run.nodes.iter().find(|n| n.id == "filter").unwrap();
    assert_eq!(filter.depends_on, ["confirm", "read"]);
    assert_eq!(filter.when.as_deref(), Some("${confirm.ok}"));
}

#[test]
fn loops_are_shown_one_level_deep() {
    let text = r#"
id: p
graph:
  - {id: read, block: csv.read, in: {path: x}, out: {rows: rows}}
  - id: each
    type: loop
    foreach: {input: "${read.rows}", var: row}
    body:
      plan:
        id: inner
        graph:
          - {id: llm, block: ai.process_llm, in: {prompt: "${vars.row}", output_schema: {a: string}}, out: {results: r}}
    out: {collect: all}
"#;
    let loaded = load_plan(text).unwrap();
    let run = dry_run(&loaded.plan, &test_catalog(), &Default::default());
    let each = run.nodes.iter().find(|n| n.id == "each").unwrap();
    assert_eq!(each.depends_on, ["read"]);
    assert_eq!(each.children.len(), 1);
    assert_eq!(
        each.children[0].inputs["prompt"],
        json!({}),
        "the loop var is one sample item"
    );
    assert_eq!(each.outputs["all"], json!([{}]));
}
