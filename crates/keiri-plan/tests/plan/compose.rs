//! Compose: id prefixing, reference rewriting, import binding, conflicts, errors, and
//! composing the shipped templates into plans that validate.

use indexmap::IndexMap;
use keiri_plan::refs::{self, Target};
use keiri_plan::{
    ComposeError, ComposeOptions, Composition, Conflict, Lang, Node, Options, Plan, Resolution,
    Severity, TemplateSpec, apply_answers, compose, validate,
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::template::{shipped_catalog, shipped_templates, template};
use super::test_catalog;

/// Reads a CSV and filters it; exports the kept rows as `rows`.
const SOURCE: &str = r#"
id: source
version: 1.0.0
title: 読み込み
description: CSVを読んで絞り込む
imports:
  src: {type: string, description: 入力CSV, requirement: {type: file, accept: .csv}}
exports:
  rows: {from: "${filter.kept}", type: array, description: 残った行}
  count: {from: "${filter.count}", type: integer, description: 件数}
vars_defaults:
  condition: amount > 0
graph_snippet:
  - id: read
    block: csv.read
    in: {path: "${vars.src}"}
    out: {rows: rows}
  - id: filter
    block: transforms.filter
    in: {rows: "${read.rows}", condition: "${vars.condition}"}
    out: {rows: kept, count: count}
"#;

/// Writes rows to Excel and confirms; imports `rows`.
const SINK: &str = r#"
id: sink
version: 1.0.0
title: 書き出し
description: Excelに書き出して確認する
imports:
  rows: {type: array, description: 書き出す行, accepts: [kept_rows, count]}
  out_path: {type: string, description: 出力先のExcelファイル（.xlsx）, description_en: Output workbook (.xlsx), requirement: {type: file, accept: .xlsx, hint: 例 out.xlsx}}
exports:
  written: {from: "${write.out_path}", type: string, description: 出力パス}
vars_defaults:
  title: 結果
graph_snippet:
  - id: write
    block: excel.write
    in: {rows: "${vars.rows}", path: "${vars.out_path}", title: "${vars.title}"}
    out: {out_path: out_path}
  - id: confirm
    block: ui.confirm
    when: {expr: "${write.out_path} != ''"}
    in: {message: "${vars.rows.0} ほか ${write.out_path} に書き出しました"}
    out: {approved: approved}
"#;

fn options(plan_id: &str) -> ComposeOptions {
    ComposeOptions {
        plan_id: plan_id.into(),
        ..ComposeOptions::default()
    }
}

fn ids(plan: &Plan) -> Vec<&str> {
    plan.graph.iter().map(|n| n.id.as_str()).collect()
}

/// `template.import=kind:target` for every binding.
fn bindings(c: &Composition) -> Vec<String> {
    c.bindings
        .iter()
        .map(|b| {
            let resolution = match &b.resolution {
                Resolution::Explicit { export, .. } => format!("explicit:{export}"),
                Resolution::Export { export, .. } => format!("export:{export}"),
                Resolution::Var { var, value } => match value {
                    Some(v) => format!("var:{var}={v}"),
                    None => format!("var:{var}"),
                },
            };
            format!("{}.{}={resolution}", b.template, b.import)
        })
        .collect()
}

fn conflict_codes(c: &Composition) -> Vec<&'static str> {
    c.conflicts.iter().map(Conflict::code).collect()
}

fn errors(plan: &Plan, catalog: &keiri_plan::Catalog) -> Vec<String> {
    validate(plan, catalog, &Options::default())
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| format!("{}@{} {}", f.code, f.path, f.message))
        .collect()
}

/// Composes test templates and checks the bindings, conflicts and unbound imports.
fn check(
    templates: &[&TemplateSpec],
    opts: &ComposeOptions,
    expect_bindings: &[&str],
    expect_conflicts: &[&str],
    expect_unbound: &[&str],
) -> Composition {
    let c = compose(templates, opts).unwrap();
    assert_eq!(bindings(&c), expect_bindings);
    assert_eq!(conflict_codes(&c), expect_conflicts);
    let unbound: Vec<&str> = c.unbound_imports.iter().map(|u| u.var.as_str()).collect();
    assert_eq!(unbound, expect_unbound);
    c
}

#[test]
fn ids_are_prefixed_and_imports_bind_to_earlier_exports() {
    let (source, sink) = (template(SOURCE), template(SINK));
    let c = check(
        &[&source, &sink],
        &options("p"),
        &[
            "source.src=var:src",
            "sink.rows=export:source.rows",
            "sink.out_path=var:out_path",
        ],
        &[],
        &["src", "out_path"],
    );
    assert_eq!(
        ids(&c.plan),
        [
            "source__read",
            "source__filter",
            "sink__write",
            "sink__confirm"
        ]
    );
    let write = &c.plan.graph[2];
    assert_eq!(write.inputs["rows"], json!("${source__filter.kept}"));
    assert_eq!(write.inputs["path"], json!("${vars.out_path}"));
    let confirm = &c.plan.graph[3];
    assert_eq!(
        confirm.when.as_ref().unwrap().expr(),
        "${sink__write.out_path} != ''"
    );
    // A bound import with a path keeps the path; interpolations are rewritten in place.
    assert_eq!(
        confirm.inputs["message"],
        json!("${source__filter.kept.0} ほか ${sink__write.out_path} に書き出しました")
    );
    assert_eq!(
        c.plan.vars,
        IndexMap::from([
            ("condition".to_string(), json!("amount > 0")),
            ("title".to_string(), json!("結果")),
        ])
    );
    let exports: Vec<(&str, &str)> = c
        .exports
        .iter()
        .map(|e| (e.name.as_str(), e.reference.as_str()))
        .collect();
    assert_eq!(
        exports,
        [
            ("rows", "${source__filter.kept}"),
            ("count", "${source__filter.count}"),
            ("written", "${sink__write.out_path}"),
        ]
    );
    // Before the answers the two unbound vars are the only errors.
    let codes: Vec<String> = errors(&c.plan, &test_catalog())
        .into_iter()
        .map(|e| e.split(' ').next().unwrap().to_string())
        .collect();
    assert_eq!(
        codes,
        [
            "ref.undefined_var@/graph/0/in/path",
            "ref.undefined_var@/graph/2/in/path"
        ]
    );
}

#[test]
fn requirements_carry_the_import_contract_and_answers_make_it_valid() {
    let (source, sink) = (template(SOURCE), template(SINK));
    let catalog = test_catalog();
    let c = compose(&[&source, &sink], &options("p")).unwrap();
    let findings = validate(&c.plan, &catalog, &Options::default());
    let rs = c.requirements(&findings, &catalog);
    let got: Vec<(&str, Option<&str>, &str, Option<&str>)> = rs
        .iter()
        .map(|r| {
            (
                r.id.as_str(),
                r.accept.as_deref(),
                r.label.as_str(),
                r.hint.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("src", Some(".csv"), "入力CSV", None),
            (
                "out_path",
                Some(".xlsx"),
                "出力先のExcelファイル",
                Some("例 out.xlsx")
            ),
        ]
    );
    assert_eq!(rs[1].label_en.as_deref(), Some("Output workbook"));
    let answers: Map<String, Value> = [
        ("src".to_string(), json!("in.csv")),
        ("out_path".to_string(), json!("out.xlsx")),
    ]
    .into_iter()
    .collect();
    let plan = apply_answers(&c.plan, &rs, &answers).unwrap();
    assert_eq!(errors(&plan, &catalog), Vec::<String>::new());
}

#[test]
fn binding_order_explicit_then_name_then_accepts_then_var() {
    let source = template(SOURCE);
    let sink = template(SINK);
    // `accepts`: the export is not called `rows` any more.
    let renamed = template(&SOURCE.replace("  rows: {from", "  kept_rows: {from"));
    check(
        &[&renamed, &sink],
        &options("p"),
        &[
            "source.src=var:src",
            "sink.rows=export:source.kept_rows",
            "sink.out_path=var:out_path",
        ],
        &[],
        &["src", "out_path"],
    );
    // An explicit binding wins over the name match, and a caller var over an unbound import.
    let mut opts = options("p");
    opts.bindings.insert("rows".into(), "source.count".into());
    opts.vars.insert("out_path".into(), json!("x.xlsx"));
    let c = check(
        &[&source, &sink],
        &opts,
        &[
            "source.src=var:src",
            "sink.rows=explicit:source.count",
            "sink.out_path=var:out_path=\"x.xlsx\"",
        ],
        &["compose.incompatible_binding"],
        &["src"],
    );
    assert_eq!(
        c.conflicts[0].message(Lang::En),
        "import rows of sink (array) does not fit source.count (integer); bound as requested"
    );
    // A template-qualified binding beats a bare one, in either order.
    for keys in [["rows", "sink.rows"], ["sink.rows", "rows"]] {
        let mut opts = options("p");
        for key in keys {
            let target = if key == "rows" {
                "source.count"
            } else {
                "source.rows"
            };
            opts.bindings.insert(key.into(), target.into());
        }
        let c = compose(&[&source, &sink], &opts).unwrap();
        assert_eq!(
            bindings(&c)[1],
            "sink.rows=explicit:source.rows",
            "{keys:?}"
        );
    }
    // With no earlier template, the import is a plan var.
    check(
        &[&sink],
        &options("p"),
        &["sink.rows=var:rows", "sink.out_path=var:out_path"],
        &[],
        &["rows", "out_path"],
    );
}

#[test]
fn conflicts_are_reported_not_resolved_silently() {
    let source = template(SOURCE);
    let sink = template(SINK);
    // An automatic candidate of the wrong type is not bound; `accepts` then finds `count`,
    // which does not fit either.
    let wrong = template(&SOURCE.replace(
        "rows: {from: \"${filter.kept}\", type: array",
        "rows: {from: \"${filter.count}\", type: integer",
    ));
    let c = check(
        &[&wrong, &sink],
        &options("p"),
        &[
            "source.src=var:src",
            "sink.rows=var:rows",
            "sink.out_path=var:out_path",
        ],
        &[
            "compose.incompatible_binding",
            "compose.incompatible_binding",
        ],
        &["src", "rows", "out_path"],
    );
    assert!(matches!(
        &c.conflicts[0],
        Conflict::IncompatibleBinding { bound: false, export, .. } if export == "source.rows"
    ));

    // Different defaults for one var: the first is used and the clash reported.
    let other = template(
        &SOURCE
            .replace("id: source", "id: other")
            .replace("condition: amount > 0", "condition: amount > 100"),
    );
    let c = check(
        &[&source, &other, &sink],
        &options("p"),
        &[
            "source.src=var:src",
            "other.src=var:src",
            "sink.rows=export:other.rows",
            "sink.out_path=var:out_path",
        ],
        &["compose.var_default_conflict", "compose.ambiguous_binding"],
        &["src", "out_path"],
    );
    assert_eq!(c.plan.vars["condition"], json!("amount > 0"));
    assert_eq!(
        c.conflicts[0].message(Lang::Ja),
        "変数 condition の既定値が source では \"amount > 0\"、other では \"amount > 100\" です（source の値を使いました）"
    );
    // A caller's value settles the var, so nothing is reported.
    let mut opts = options("p");
    opts.vars.insert("condition".into(), json!("amount > 5"));
    let c = compose(&[&source, &other], &opts).unwrap();
    assert!(c.conflicts.is_empty());
    assert_eq!(c.plan.vars["condition"], json!("amount > 5"));

    // A template listed twice is composed once.
    let c = check(
        &[&source, &source, &source],
        &options("p"),
        &["source.src=var:src"],
        &["compose.duplicate_template"],
        &["src"],
    );
    assert_eq!(ids(&c.plan), ["source__read", "source__filter"]);
}

#[test]
fn options_that_cannot_be_honoured_are_errors() {
    let source = template(SOURCE);
    let sink = template(SINK);
    let err = |templates: &[&TemplateSpec], opts: &ComposeOptions| {
        compose(templates, opts).unwrap_err().code()
    };
    assert_eq!(err(&[&source], &options(" ")), "compose.missing_plan_id");
    assert_eq!(err(&[], &options("p")), "compose.no_templates");
    for (key, target, code) in [
        ("nope", "source.rows", "compose.unknown_import"),
        ("source.rows", "source.rows", "compose.unknown_import"),
        ("rows", "source.nope", "compose.unknown_export"),
        ("rows", "ghost.rows", "compose.unknown_export"),
        ("rows", "rows", "compose.unknown_export"),
        ("source.src", "source.rows", "compose.self_binding"),
    ] {
        let mut opts = options("p");
        opts.bindings.insert(key.into(), target.into());
        assert_eq!(err(&[&source, &sink], &opts), code, "{key} → {target}");
    }
    let mut dotted = source.clone();
    dotted.id = "a.b".into();
    assert_eq!(
        err(&[&dotted], &options("p")),
        "compose.invalid_template_id"
    );
    let mut broken = source.clone();
    broken.exports["rows"].from = "${nowhere.kept}".into();
    assert_eq!(
        compose(&[&broken], &options("p")).unwrap_err(),
        ComposeError::InvalidExport {
            template: "source".into(),
            export: "rows".into()
        }
    );
    // `a` + `b__c` and `a__b` + `c` would both be `a__b__c`.
    let mut a = source.clone();
    a.id = "a".into();
    a.graph_snippet[0].id = "b__c".into();
    a.exports.clear();
    let mut ab = source.clone();
    ab.id = "a__b".into();
    ab.graph_snippet[0].id = "c".into();
    ab.exports.clear();
    assert_eq!(
        compose(&[&a, &ab], &options("p")).unwrap_err(),
        ComposeError::IdCollision("a__b__c".into())
    );
}

/// References in every kind of place are rewritten; loop vars shadow bound imports.
#[test]
fn references_are_rewritten_everywhere() {
    let source = template(SOURCE.replace("  count: {from", "  item: {from").as_str());
    let looping = template(
        r#"
id: looping
version: 1.0.0
title: ループ
description: 行ごとに処理する
imports:
  item: {type: any, description: 項目}
  rows: {type: array, description: 行}
graph_snippet:
  - id: each
    type: loop
    description: "${vars.rows} を1行ずつ"
    foreach: {input: "${vars.rows}", var: item}
    body:
      plan:
        graph:
          - id: one
            block: transforms.filter
            in: {rows: ["${vars.item}"], condition: "${vars.item.amount} > 0"}
            out: {rows: rows}
          - id: two
            block: ui.confirm
            when: {expr: "${one.rows} != ''"}
            in: {message: "${one.rows.0}"}
            out: {approved: ok}
  - id: call
    type: subflow
    call: {plan_id: other, inputs: {first: "${vars.item}", loop: "${each.collect}"}}
    x_meta: {see: ["${each.collect}"]}
"#,
    );
    let c = compose(&[&source, &looping], &options("p")).unwrap();
    let each = &c.plan.graph[2];
    assert_eq!(each.id, "looping__each");
    assert_eq!(
        each.description.as_deref(),
        Some("${source__filter.kept} を1行ずつ")
    );
    assert_eq!(
        each.foreach.as_ref().unwrap().input,
        Some(json!("${source__filter.kept}"))
    );
    let body = &each.body.as_ref().unwrap().plan.graph;
    assert_eq!(body[0].id, "looping__one");
    // Inside the loop, `item` is the loop var, not the bound import.
    assert_eq!(body[0].inputs["rows"], json!(["${vars.item}"]));
    assert_eq!(
        body[0].inputs["condition"],
        json!("${vars.item.amount} > 0")
    );
    assert_eq!(
        body[1].when.as_ref().unwrap().expr(),
        "${looping__one.rows} != ''"
    );
    assert_eq!(body[1].inputs["message"], json!("${looping__one.rows.0}"));
    let call = &c.plan.graph[3];
    let inputs = &call.call.as_ref().unwrap().inputs;
    assert_eq!(inputs["first"], json!("${source__filter.count}"));
    assert_eq!(inputs["loop"], json!("${looping__each.collect}"));
    assert_eq!(
        call.extra["x_meta"],
        json!({"see": ["${looping__each.collect}"]})
    );
}

fn answer_all(c: &Composition, catalog: &keiri_plan::Catalog, answers: &[(&str, Value)]) -> Plan {
    let findings = validate(&c.plan, catalog, &Options::default());
    let rs = c.requirements(&findings, catalog);
    let wanted: Vec<&str> = rs
        .iter()
        .filter(|r| r.required)
        .map(|r| r.id.as_str())
        .collect();
    let given: Vec<&str> = answers.iter().map(|(k, _)| *k).collect();
    assert_eq!(wanted, given, "the required questions");
    let map: Map<String, Value> = answers
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    apply_answers(&c.plan, &rs, &map).unwrap()
}

/// The offline compose journey: two shipped templates, questions, answers, a valid plan.
#[test]
fn invoice_duplicates_then_exception_report() {
    let templates = shipped_templates();
    let catalog = shipped_catalog();
    let list = [
        templates.get("invoice_duplicate_detection").unwrap(),
        templates.get("exception_report").unwrap(),
    ];
    let c = compose(&list, &options("invoice_duplicates_report")).unwrap();
    assert!(c.conflicts.is_empty(), "{:?}", c.conflicts);
    assert!(bindings(&c).contains(
        &"exception_report.findings=export:invoice_duplicate_detection.duplicates".to_string()
    ));
    let summarize = c
        .plan
        .graph
        .iter()
        .find(|n| n.id == "exception_report__summarize")
        .unwrap();
    assert_eq!(
        summarize.inputs["findings"],
        json!("${invoice_duplicate_detection__detect.duplicates}")
    );
    let suggested: Vec<(&str, Option<&str>)> = c
        .ui_suggestions
        .iter()
        .map(|s| (s.block.as_str(), s.after.as_deref()))
        .collect();
    assert_eq!(
        suggested,
        [(
            "ui.table_review",
            Some("invoice_duplicate_detection__detect")
        )]
    );
    let findings = validate(&c.plan, &catalog, &Options::default());
    let rs = c.requirements(&findings, &catalog);
    let kinds: Vec<(String, String)> = rs
        .iter()
        .map(|r| {
            (
                r.id.clone(),
                serde_json::to_value(r.kind)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("invoice_csv".to_string(), "file".to_string()),
            ("notify_to".to_string(), "text".to_string()),
            ("notify_channel".to_string(), "select".to_string()),
        ]
    );
    assert_eq!(
        rs[2].options,
        [
            json!("email"),
            json!("slack"),
            json!("teams"),
            json!("file")
        ]
    );
    // The template's words for its imports stay with the plan: saved, reopened and asked again
    // (as the window does after every answer), notify_to is still 「通知先」 with the template's
    // example, not the var's name.
    let reopened = keiri_plan::load_plan(&keiri_plan::save_plan(&c.plan).unwrap())
        .unwrap()
        .plan;
    let again = keiri_plan::build_requirements(&reopened, &findings, &catalog);
    let notify_to = again.iter().find(|r| r.id == "notify_to").unwrap();
    assert_eq!(notify_to.label, "通知先");
    assert_eq!(notify_to.hint.as_deref(), Some("例 keiri@example.co.jp"));
    assert!(
        notify_to.description.starts_with("通知先（"),
        "{notify_to:?}"
    );
    assert_eq!(again, rs, "asked the same way as at composition");
    let plan = answer_all(
        &c,
        &catalog,
        &[
            ("invoice_csv", json!("請求書一覧.csv")),
            ("notify_to", json!("keiri@example.co.jp")),
            ("notify_channel", json!("email")),
        ],
    );
    assert_eq!(errors(&plan, &catalog), Vec::<String>::new());
    // The plan round-trips through YAML unchanged.
    let yaml = keiri_plan::save_plan(&plan).unwrap();
    assert_eq!(keiri_plan::load_plan(&yaml).unwrap().plan, plan);
}

#[test]
fn bank_reconciliation_then_monthly_close() {
    let templates = shipped_templates();
    let catalog = shipped_catalog();
    let list = [
        templates.get("bank_reconciliation").unwrap(),
        templates.get("monthly_close_checklist").unwrap(),
    ];
    let c = compose(&list, &options("close_with_bank")).unwrap();
    assert!(c.conflicts.is_empty(), "{:?}", c.conflicts);
    assert!(
        bindings(&c).contains(
            &"monthly_close_checklist.open_items=export:bank_reconciliation.unmatched_deposits"
                .to_string()
        )
    );
    // The bound import's default is not copied into vars.
    assert!(!c.plan.vars.contains_key("open_items"));
    let plan = answer_all(
        &c,
        &catalog,
        &[
            ("bank_statement_csv", json!("明細.csv")),
            ("receivables_workbook", json!("売掛金.xlsx")),
            ("journal_csv", json!("仕訳.csv")),
            ("period_start", json!("2025-03-01")),
            ("period_end", json!("2025-03-31")),
            ("trial_balance_workbook", json!("試算表.xlsx")),
        ],
    );
    assert_eq!(errors(&plan, &catalog), Vec::<String>::new());
    let checklist = plan
        .graph
        .iter()
        .find(|n| n.id == "monthly_close_checklist__checklist")
        .unwrap();
    assert_eq!(
        checklist.inputs["sections"][2]["rows"],
        json!("${bank_reconciliation__reconcile.unmatched_deposits}")
    );
    // A date that does not match the template's pattern is refused.
    let findings = validate(&c.plan, &catalog, &Options::default());
    let rs = c.requirements(&findings, &catalog);
    let mut bad: Map<String, Value> = Map::new();
    for r in rs.iter().filter(|r| r.required) {
        bad.insert(r.id.clone(), json!("x.csv"));
    }
    bad.insert("receivables_workbook".into(), json!("売掛金.xlsx"));
    bad.insert("trial_balance_workbook".into(), json!("試算表.xlsx"));
    bad.insert("period_start".into(), json!("3月1日"));
    bad.insert("period_end".into(), json!("2025-03-31"));
    let err = apply_answers(&c.plan, &rs, &bad).unwrap_err();
    assert!(err.to_string().contains("period_start"), "{err}");
}

/// Every shipped template composes on its own into a plan that validates once answered
/// with plausible values.
#[test]
fn every_shipped_template_composes_alone() {
    let templates = shipped_templates();
    let catalog = shipped_catalog();
    for t in templates.iter() {
        let c = compose(&[t], &options(&t.id)).unwrap();
        let findings = validate(&c.plan, &catalog, &Options::default());
        let rs = c.requirements(&findings, &catalog);
        let mut answers = Map::new();
        for r in rs.iter().filter(|r| r.required) {
            let value = match (r.accept.as_deref(), r.options.first(), r.kind) {
                (Some(accept), _, _) => {
                    json!(format!("input{}", accept.split(',').next().unwrap()))
                }
                (None, Some(option), _) => option.clone(),
                (None, None, keiri_plan::RequirementKind::Table) => json!([{"amount": 1}]),
                // The example its hint gives (例 1234567890, 普通 または 当座), else a date.
                _ if r.validation.is_some() => {
                    let pattern = r.validation.as_ref().and_then(|v| v.regex.clone());
                    let fits = |v: &str| {
                        pattern
                            .as_deref()
                            .is_none_or(|p| regex::Regex::new(p).unwrap().is_match(v))
                    };
                    let hint = r.hint.clone().unwrap_or_default();
                    let example = hint.trim_start_matches("例").trim().to_string();
                    let first = example.split_whitespace().next().unwrap_or("").to_string();
                    json!(
                        [example, first]
                            .into_iter()
                            .find(|v| fits(v))
                            .unwrap_or_else(|| "2025-03-31".to_string())
                    )
                }
                _ => json!("x@example.co.jp"),
            };
            answers.insert(r.id.clone(), value);
        }
        let plan =
            apply_answers(&c.plan, &rs, &answers).unwrap_or_else(|e| panic!("{}: {e}", t.id));
        assert_eq!(errors(&plan, &catalog), Vec::<String>::new(), "{}", t.id);
    }
}

/// Every `${node.alias}` head in a plan (all values, loop bodies included).
fn reference_heads(graph: &[Node], out: &mut Vec<String>) {
    for node in graph {
        let mut values: Vec<Value> = node.inputs.values().cloned().collect();
        if let Some(w) = &node.when {
            values.push(Value::String(w.expr()));
        }
        for value in values {
            let (mut found, mut bad) = (Vec::new(), Vec::new());
            refs::scan(&value, "", &mut found, &mut bad);
            for r in found {
                if let Target::Node { node, .. } = r.target {
                    out.push(node);
                }
            }
        }
        if let Some(body) = &node.body {
            reference_heads(&body.plan.graph, out);
        }
    }
}

const NAMES: &[&str] = &["read", "a", "b_c", "x1", "filter", "n", "fo", "z"];

/// A random chain template: node i reads or filters, referencing earlier nodes whole, inside
/// strings, in lists and in `when`.
fn arb_template(id: &'static str) -> impl Strategy<Value = TemplateSpec> {
    (1usize..7)
        .prop_flat_map(|n| {
            (
                proptest::sample::subsequence(NAMES.to_vec(), n).prop_shuffle(),
                proptest::collection::vec((any::<prop::sample::Index>(), 0u8..4), n),
            )
        })
        .prop_map(move |(names, picks)| {
            let mut graph = Vec::new();
            for (i, name) in names.iter().enumerate() {
                let mut node = Node {
                    id: name.to_string(),
                    ..Node::default()
                };
                node.out.insert("rows".into(), json!("rows"));
                if i == 0 {
                    node.block = Some("csv.read".into());
                    node.inputs.insert("path".into(), json!("${vars.src}"));
                } else {
                    let (index, style) = &picks[i];
                    let target = names[index.index(i)];
                    node.block = Some("transforms.filter".into());
                    let rows = match style {
                        0 => json!(format!("${{{target}.rows}}")),
                        _ => json!(format!("${{{}.rows}}", names[i - 1])),
                    };
                    node.inputs.insert("rows".into(), rows);
                    let condition = format!("count(${{{target}.rows}}) > 0 and ${{{target}.rows.0}}");
                    node.inputs.insert("condition".into(), json!(condition));
                    if *style == 2 {
                        node.when = Some(keiri_plan::model::When::Expr {
                            expr: json!(format!("${{{target}.rows}} != ''")),
                        });
                    }
                    if *style == 3 {
                        node.extra.insert("x_refs".into(), json!([{"r": format!("${{{target}.rows}}")}]));
                    }
                }
                graph.push(node);
            }
            let last = names[names.len() - 1];
            let mut spec = template(&format!(
                "id: {id}\nversion: 1.0.0\ntitle: t\ndescription: d\nimports:\n  src: {{type: string}}\nexports:\n  out: {{from: \"${{{last}.rows}}\", type: array}}\ngraph_snippet: []\n"
            ));
            spec.graph_snippet = graph;
            spec
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Compose never leaves a reference to an unprefixed snippet node, and the composed
    /// plan's references all resolve.
    #[test]
    fn rewriting_leaves_no_unprefixed_reference(a in arb_template("t_a"), b in arb_template("t_b")) {
        let c = compose(&[&a, &b], &options("p")).unwrap();
        let composed: Vec<&str> = ids(&c.plan);
        let mut heads = Vec::new();
        reference_heads(&c.plan.graph, &mut heads);
        for node in &c.plan.graph {
            for v in node.extra.values() {
                let (mut found, mut bad) = (Vec::new(), Vec::new());
                refs::scan(v, "", &mut found, &mut bad);
                heads.extend(found.into_iter().filter_map(|r| match r.target {
                    Target::Node { node, .. } => Some(node),
                    _ => None,
                }));
            }
        }
        for head in &heads {
            prop_assert!(composed.contains(&head.as_str()), "{head} not in {composed:?}");
            prop_assert!(!NAMES.contains(&head.as_str()), "unprefixed {head}");
        }
        let mut plan = c.plan.clone();
        plan.vars.insert("src".into(), json!("in.csv"));
        let problems: Vec<String> = errors(&plan, &test_catalog())
            .into_iter()
            .filter(|e| e.starts_with("ref."))
            .collect();
        prop_assert!(problems.is_empty(), "{problems:?}");
    }
}
