//! A mapping whose keys have default columns (`matching.three_way_match`'s `field_map`:
//! `po_no`, `quantity`, `unit_price`, `amount` read as they are unless mapped): the columns it
//! reads are checked before the run, each against the tables that read it, whether the plan
//! leaves the mapping out, leaves a key out or maps it; a key the file writes its own way is
//! fitted into the mapping, and one no header means is asked. Expectations by hand from the
//! block's code: orders read po_no, quantity, unit_price; receipts po_no, quantity; invoices
//! po_no, quantity, amount; item only when mapped, in all three.

use keiri_plan::{
    AnswerUse, Catalog, FileSchema, Lang, Options, apply_answers, build_requirements, fit_columns,
    load_plan, validate,
};
use serde_json::{Map, Value, json};

use super::{csv_schema as csv, repo_root};

fn catalog() -> Catalog {
    Catalog::load(&[repo_root().join("block_specs")]).0
}

/// A purchasing system's exports, headed the accountants' way, except that the system calls
/// the order number 注文No, which no column meaning knows.
fn exports() -> Vec<FileSchema> {
    vec![
        csv("in/po.csv", &["注文No", "品目", "数量", "単価", "金額"]),
        csv("in/rc.csv", &["注文No", "品目", "数量", "検収日"]),
        csv(
            "in/inv.csv",
            &["請求書番号", "注文No", "品目", "数量", "金額"],
        ),
    ]
}

fn plan_with(field_map: &str) -> keiri_plan::Plan {
    let yaml = format!(
        "id: t
graph:
  - {{id: po, block: csv.read, in: {{path: in/po.csv}}, out: {{rows: rows}}}}
  - {{id: rc, block: csv.read, in: {{path: in/rc.csv}}, out: {{rows: rows}}}}
  - {{id: inv, block: csv.read, in: {{path: in/inv.csv}}, out: {{rows: rows}}}}
  - id: match
    block: matching.three_way_match
    in:
      purchase_orders: '${{po.rows}}'
      receipts: '${{rc.rows}}'
      invoices: '${{inv.rows}}'{field_map}
    out: {{exceptions: exceptions}}
"
    );
    load_plan(&yaml).unwrap().plan
}

/// (path, file, wanted) of each `column.unknown` finding, sorted.
fn unknown(plan: &keiri_plan::Plan, files: Vec<FileSchema>) -> Vec<(String, String)> {
    let options = Options {
        lang: Lang::Ja,
        file_schemas: files,
        ..Options::default()
    };
    let mut out: Vec<(String, String)> = validate(plan, &catalog(), &options)
        .into_iter()
        .filter(|f| f.code.as_str() == "column.unknown")
        .map(|f| (f.path, f.message))
        .collect();
    out.sort();
    out
}

#[test]
fn a_mapping_left_out_reads_each_keys_default_against_the_tables_that_read_it() {
    let found = unknown(&plan_with(""), exports());
    let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
    // po_no and quantity in all three, unit_price in the orders, amount in the invoices;
    // the invoices have 金額 but not `amount`, the orders' 金額 is not read.
    assert_eq!(
        paths,
        [
            "/graph/3/in/field_map/amount",
            "/graph/3/in/field_map/po_no",
            "/graph/3/in/field_map/po_no",
            "/graph/3/in/field_map/po_no",
            "/graph/3/in/field_map/quantity",
            "/graph/3/in/field_map/quantity",
            "/graph/3/in/field_map/quantity",
            "/graph/3/in/field_map/unit_price",
        ]
    );
    assert!(
        found.iter().any(|(_, m)| m
            == "match の field_map.unit_price（既定値） が指定する列「unit_price」は in/po.csv にありません"),
        "{found:?}"
    );
}

#[test]
fn a_mapped_key_is_checked_and_a_key_left_out_still_reads_its_default() {
    // po_no mapped to 発注番号, which only the orders call it: the receipts and invoices lack
    // it. unit_price and amount are left out: their defaults are read, as the block reads
    // them.
    let mut files = exports();
    files[0] = csv("in/po.csv", &["発注番号", "品目", "数量", "単価", "金額"]);
    let found = unknown(
        &plan_with("\n      field_map: {po_no: 発注番号, quantity: 数量, item: 品目}"),
        files,
    );
    let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/graph/3/in/field_map/amount",
            "/graph/3/in/field_map/po_no",
            "/graph/3/in/field_map/po_no",
            "/graph/3/in/field_map/unit_price",
        ]
    );
    assert!(
        found.iter().any(|(_, m)| m
            == "match の field_map.po_no が指定する列「発注番号」は in/rc.csv にありません"),
        "{found:?}"
    );
    // Mapped to the columns every table has, nothing is left; `date` is not read at all.
    let same = vec![
        csv("in/po.csv", &["発注番号", "品目", "数量", "単価"]),
        csv("in/rc.csv", &["発注番号", "品目", "数量"]),
        csv("in/inv.csv", &["発注番号", "品目", "数量", "金額"]),
    ];
    let mapped = plan_with(
        "\n      field_map: {po_no: 発注番号, item: 品目, quantity: 数量, unit_price: 単価, amount: 金額, date: 日付}",
    );
    assert_eq!(unknown(&mapped, same), Vec::<(String, String)>::new());
}

#[test]
fn defaults_the_files_write_their_own_way_are_fitted_into_the_mapping_and_the_rest_asked() {
    let (fitted, done) = fit_columns(&plan_with(""), &catalog(), &exports());
    let field_map = fitted.graph[3].inputs.get("field_map").cloned();
    // 数量, 単価 and 金額 mean quantity, unit_price and amount.
    assert_eq!(
        field_map,
        Some(json!({"quantity": "数量", "unit_price": "単価", "amount": "金額"})),
        "{done:?}"
    );
    // Only the order number is left, in each table: one question, whose choices are the
    // columns of the first table that lacks it.
    let left = unknown(&fitted, exports());
    assert_eq!(
        left.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(),
        ["/graph/3/in/field_map/po_no"; 3]
    );
    let options = Options {
        lang: Lang::Ja,
        file_schemas: exports(),
        ..Options::default()
    };
    let findings = validate(&fitted, &catalog(), &options);
    let questions = build_requirements(&fitted, &findings, &catalog());
    let asked: Vec<_> = questions
        .iter()
        .filter(|q| q.answer_use == AnswerUse::Column)
        .collect();
    assert_eq!(asked.len(), 1, "{asked:#?}");
    let question = asked[0];
    assert_eq!(question.target.input.as_deref(), Some("field_map"));
    assert_eq!(question.target.field.as_deref(), Some("po_no"));
    assert_eq!(
        question.options,
        [
            json!("注文No"),
            json!("品目"),
            json!("数量"),
            json!("単価"),
            json!("金額")
        ]
    );
    // The answer sets that key only; the other keys stay as fitted.
    let mut answers = Map::new();
    answers.insert(question.id.clone(), Value::String("注文No".into()));
    let answered = apply_answers(&fitted, &questions, &answers).unwrap();
    let var = question.target.var.clone().unwrap();
    assert_eq!(
        answered.graph[3].inputs.get("field_map"),
        Some(&json!({
            "po_no": format!("${{vars.{var}}}"),
            "quantity": "数量",
            "unit_price": "単価",
            "amount": "金額",
        }))
    );
    assert_eq!(answered.vars.get(&var), Some(&json!("注文No")));
    // Answered, the plan reads every column the tables have.
    assert_eq!(
        unknown(&answered, exports()),
        Vec::<(String, String)>::new()
    );
}
