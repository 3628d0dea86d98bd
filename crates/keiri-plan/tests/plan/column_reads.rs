//! Every column a block reads is checked before the run when the file is known: named by the
//! plan, by the block's default, inside a rule, a condition or an expression, or in a mapping
//! object; and known columns flow through renames and selections. Loop outputs are checked
//! too. Expectations are written by hand from the specs.

use keiri_plan::{Catalog, FileSchema, Lang, Options, load_plan, validate};

use super::{csv_schema, repo_root};

fn catalog() -> Catalog {
    Catalog::load(&[repo_root().join("block_specs")]).0
}

/// A 弥生-like journal export: none of the blocks' English defaults.
fn export() -> FileSchema {
    let columns = [
        "伝票番号",
        "取引日",
        "借方勘定科目",
        "借方金額",
        "貸方勘定科目",
        "貸方金額",
        "摘要",
        "amount",
        "vendor",
    ];
    csv_schema("in/export.csv", &columns)
}

/// A plan reading the export, then one node of `block` with `inputs` (YAML flow mapping,
/// `rows: ${read.rows}` added under `rows_key`).
fn findings(block: &str, rows_key: &str, inputs: &str, code: &str) -> Vec<(String, String)> {
    let yaml = format!(
        "id: t\ngraph:\n  - id: read\n    block: csv.read\n    in: {{path: in/export.csv}}\n    out: {{rows: rows}}\n  - id: n\n    block: {block}\n    in: {{{rows_key}: \"${{read.rows}}\", {inputs}}}\n    out: {{}}\n"
    );
    let plan = load_plan(&yaml).unwrap().plan;
    let options = Options {
        lang: Lang::En,
        file_schemas: vec![export()],
        ..Options::default()
    };
    validate(&plan, &catalog(), &options)
        .into_iter()
        .filter(|f| f.code.as_str() == code)
        .map(|f| (f.path, f.message))
        .collect()
}

#[test]
fn unknown_columns_are_findings_wherever_a_block_reads_them() {
    // (block, rows input, inputs, expected paths of column.unknown)
    let cases: &[(&str, &str, &str, &[&str])] = &[
        // Explicit.
        (
            "matching.duplicate_invoices",
            "rows",
            "vendor_field: vendor, amount_field: amount, date_field: 日付",
            &["/graph/1/in/date_field"],
        ),
        // Default: date_field is invoice_date when the plan leaves it out.
        (
            "matching.duplicate_invoices",
            "rows",
            "vendor_field: vendor, amount_field: amount",
            &["/graph/1/in/date_field"],
        ),
        (
            "matching.duplicate_invoices",
            "rows",
            "vendor_field: vendor, amount_field: amount, date_field: 取引日",
            &[],
        ),
        // Every default of journal_check on a Japanese export; account columns only with a chart.
        (
            "control.journal_check",
            "entries",
            "checks: [balance]",
            &[
                "/graph/1/in/voucher_field",
                "/graph/1/in/debit_field",
                "/graph/1/in/credit_field",
                "/graph/1/in/date_field",
            ],
        ),
        (
            "control.journal_check",
            "entries",
            "voucher_field: 伝票番号, debit_field: 借方金額, credit_field: 貸方金額, date_field: 取引日",
            &[],
        ),
        (
            "control.journal_check",
            "entries",
            "voucher_field: 伝票番号, debit_field: 借方金額, credit_field: 貸方金額, date_field: 取引日, chart_of_accounts: ['100']",
            &[
                "/graph/1/in/account_fields/0",
                "/graph/1/in/account_fields/1",
            ],
        ),
        // A default that is used only where the rows have it (default_if_present): unset,
        // report.summary's group_by [severity, rule_id] is not a read; set, it is.
        ("report.summary", "findings", "title: t", &[]),
        (
            "report.summary",
            "findings",
            "group_by: [severity, vendor]",
            &["/graph/1/in/group_by/0"],
        ),
        // Editable columns of a review are written by the reviewer, not read.
        ("ui.table_review", "rows", "editable_columns: [note]", &[]),
        // In a rule's condition and its `when`.
        (
            "control.policy_enforce",
            "rows",
            "rules: [{id: r1, condition: 'amout <= 100000', when: 'vendor != \"\"'}]",
            &["/graph/1/in/rules/0/condition"],
        ),
        (
            "control.policy_enforce",
            "rows",
            "rules: [{id: r1, condition: 'amount <= 100000', when: 'is_empty(取引先)'}]",
            &["/graph/1/in/rules/0/when"],
        ),
        (
            "control.policy_enforce",
            "rows",
            "rules: [{id: r1, condition: 'amount <= 100000 and 摘要 != \"\"'}]",
            &[],
        ),
        // A rule's field.
        (
            "control.data_quality",
            "rows",
            "rules: [{field: 金額, rule: required}, {field: vendor, rule: required}]",
            &["/graph/1/in/rules/0/field"],
        ),
        // A condition.
        (
            "transforms.filter_rows",
            "rows",
            "condition: '金額 >= 100000'",
            &["/graph/1/in/condition"],
        ),
        (
            "transforms.filter_rows",
            "rows",
            "condition: 'amount >= 100000'",
            &[],
        ),
        // A mapping object's keys.
        (
            "transforms.rename_columns",
            "rows",
            "mapping: {取引先: vendor_name, 摘要: memo}",
            &["/graph/1/in/mapping/取引先"],
        ),
        // Keys of two tables: a plain name on both sides, {left, right} each on its own.
        (
            "transforms.join",
            "left",
            "right: \"${read.rows}\", keys: [伝票番号, {left: 摘要, right: vendr}]",
            &["/graph/1/in/keys/1/right"],
        ),
        (
            "matching.exact_match",
            "left",
            "right: \"${read.rows}\", keys: [{left: 伝票番号, right: 伝票番号}], compare: [{left: 借方金額, right: 貸方金額}, {left: 金額, right: amount}]",
            &["/graph/1/in/compare/1/left"],
        ),
        (
            "matching.fuzzy_match",
            "left",
            "right: \"${read.rows}\", fields: [{left: vendor, right: 取引先, kind: text}]",
            &["/graph/1/in/fields/0/right"],
        ),
        // A mapping object's values.
        (
            "journal.export",
            "entries",
            "field_mapping: {voucher_no: 伝票番号, date: 日付}",
            &["/graph/1/in/field_mapping/date"],
        ),
        // Fields with defaults on other blocks.
        (
            "control.variance_check",
            "rows",
            "current_field: amount",
            &["/graph/1/in/key_field", "/graph/1/in/comparison_field"],
        ),
    ];
    for (block, rows, inputs, want) in cases {
        let got: Vec<String> = findings(block, rows, inputs, "column.unknown")
            .into_iter()
            .map(|(path, _)| path)
            .collect();
        assert_eq!(got, *want, "{block} {inputs}");
    }
}

#[test]
fn a_default_column_says_it_is_the_default() {
    let f = findings(
        "matching.duplicate_invoices",
        "rows",
        "vendor_field: vendor, amount_field: amount",
        "column.unknown",
    );
    assert_eq!(
        f[0].1,
        "n.date_field (its default) names the column \"invoice_date\", which in/export.csv does not have"
    );
}

/// Known columns flow through a rename and a selection to the next block.
#[test]
fn known_columns_flow_through_renames_and_selections() {
    let yaml = r#"
id: t
graph:
  - id: read
    block: csv.read
    in: {path: in/export.csv}
    out: {rows: rows}
  - id: ren
    block: transforms.rename_columns
    in: {rows: "${read.rows}", mapping: {借方金額: debit, 取引日: date}}
    out: {rows: renamed}
  - id: sel
    block: transforms.select_columns
    in: {rows: "${ren.renamed}", columns: [debit, date, 伝票番号]}
    out: {rows: picked}
  - id: f
    block: transforms.filter_rows
    in: {rows: "${sel.picked}", condition: "debit > 0 and 借方金額 > 0 and 摘要 != ''"}
    out: {rows: big}
"#;
    let plan = load_plan(yaml).unwrap().plan;
    let options = Options {
        lang: Lang::En,
        file_schemas: vec![export()],
        ..Options::default()
    };
    let found: Vec<(String, Vec<String>)> = validate(&plan, &catalog(), &options)
        .into_iter()
        .filter(|f| f.code.as_str() == "column.unknown")
        .map(|f| (f.message, f.choices))
        .collect();
    let choices = vec!["debit".to_string(), "date".into(), "伝票番号".into()];
    assert_eq!(
        found,
        [
            (
                "f.condition names the column \"借方金額\", which the output of sel (from in/export.csv) does not have"
                    .to_string(),
                choices.clone()
            ),
            (
                "f.condition names the column \"摘要\", which the output of sel (from in/export.csv) does not have"
                    .to_string(),
                choices
            ),
        ]
    );
}

#[test]
fn loop_outputs_name_one_body_alias_each() {
    let yaml = r#"
id: t
vars: {items: [1, 2]}
graph:
  - id: each
    type: loop
    foreach: {input: "${vars.items}"}
    body:
      plan:
        graph:
          - id: a
            block: transforms.pick_value
            in: {source: "${vars.item}", path: x}
            out: {value: v}
          - id: b
            block: transforms.pick_value
            in: {source: "${vars.item}", path: x}
            out: {value: v}
    out: {v: values, missing: nothing, collect: all}
"#;
    let plan = load_plan(yaml).unwrap().plan;
    let options = Options {
        lang: Lang::En,
        ..Options::default()
    };
    let got: Vec<(String, String)> = validate(&plan, &catalog(), &options)
        .into_iter()
        .filter(|f| f.code.as_str().starts_with("loop."))
        .map(|f| (f.code.as_str().to_string(), f.path))
        .collect();
    assert_eq!(
        got,
        [
            (
                "loop.body_alias_duplicate".to_string(),
                "/graph/0/body/plan/graph/1/out/value".to_string()
            ),
            (
                "loop.out_unknown_alias".to_string(),
                "/graph/0/out/missing".to_string()
            ),
        ]
    );
}
