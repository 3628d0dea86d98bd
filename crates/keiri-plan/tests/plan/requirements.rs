//! The requirements builder and applying answers, against the shipped catalog.

use keiri_plan::requirements::{accept_of, schema_template, short_label};
use keiri_plan::{
    AnswerError, AnswerUse, Catalog, Options, Plan, Requirement, RequirementKind,
    RequirementTarget, Severity, Validation, ValueType, apply_answers, build_requirements,
    has_errors, load_plan, schema_templates, validate,
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::template::shipped_catalog;

fn plan(body: &str) -> Plan {
    let yaml = format!("apiVersion: v1\nid: t\nversion: 1.0.0\n{body}");
    load_plan(&yaml)
        .unwrap_or_else(|e| panic!("{e}\n{yaml}"))
        .plan
}

fn requirements_of(plan: &Plan, catalog: &Catalog) -> Vec<Requirement> {
    let findings = validate(plan, catalog, &Options::default());
    build_requirements(plan, &findings, catalog)
}

/// `id:type[accept]<options>? -> var@node.input` (`?` when optional, `-` when absent).
fn summary(r: &Requirement) -> String {
    let kind = serde_json::to_value(r.kind).unwrap();
    let mut s = format!("{}:{}", r.id, kind.as_str().unwrap());
    if let Some(a) = &r.accept {
        s.push_str(&format!("[{a}]"));
    }
    if !r.options.is_empty() {
        let options: Vec<String> = r
            .options
            .iter()
            .map(|o| o.as_str().map_or(o.to_string(), str::to_string))
            .collect();
        s.push_str(&format!("<{}>", options.join("|")));
    }
    if !r.required {
        s.push('?');
    }
    s.push_str(&format!(" -> {}", r.target.var.as_deref().unwrap_or("-")));
    if let Some(node) = &r.target.node_id {
        s.push_str(&format!(
            "@{node}.{}",
            r.target.input.as_deref().unwrap_or("-")
        ));
    }
    s
}

/// Asserts the requirements a plan body produces, in order.
fn check(body: &str, expect: &[&str]) {
    let p = plan(body);
    let got: Vec<String> = requirements_of(&p, &shipped_catalog())
        .iter()
        .map(summary)
        .collect();
    assert_eq!(got, expect, "\n{body}");
}

#[test]
fn undefined_vars_are_typed_by_the_input_they_feed() {
    check(
        r#"
graph:
  - id: read
    block: csv.read
    in: {path: "${vars.src}", encoding: "${vars.enc}", header: "${vars.has_header}", skip_rows: "${vars.skip}"}
    out: {rows: rows}
  - id: dup
    block: matching.duplicate_invoices
    in: {rows: "${read.rows}", amount_tolerance: "${vars.tolerance}"}
    out: {duplicates: duplicates}
  - id: filter
    block: transforms.filter_rows
    in: {rows: "${vars.extra_rows}", condition: "amount > ${vars.limit}"}
    out: {rows: rows}
  - id: bank
    block: bank.read_statement
    in: {path: "${vars.statement}", mapping: "${vars.mapping}"}
    out: {rows: rows}
  - id: cols
    block: transforms.select_columns
    in: {rows: "${bank.rows}", columns: "${vars.columns}"}
    out: {rows: rows}
  - id: confirm
    block: ui.confirmation
    when: {expr: "${vars.ask} == true"}
    in: {message: "${vars.message}", details: "${dup.duplicates}"}
    out: {approved: ok}
"#,
        &[
            "src:file[.csv] -> src@read.path",
            "enc:select<auto|utf-8|utf-8-sig|shift_jis|cp932|windows-31j|euc-jp|utf-16|utf-16le|utf-16be> -> enc@read.encoding",
            "has_header:boolean -> has_header@read.header",
            "skip:number -> skip@read.skip_rows",
            "tolerance:number -> tolerance@dup.amount_tolerance",
            "extra_rows:table -> extra_rows@filter.rows",
            "limit:text -> limit@filter.-",
            "statement:file[.csv] -> statement@bank.path",
            "mapping:text -> mapping@bank.mapping",
            "columns:text -> columns@cols.columns",
            "message:text -> message@confirm.message",
            "ask:text -> ask@confirm.-",
        ],
    );
}

#[test]
fn value_types_hints_and_labels_come_from_the_spec() {
    let p = plan(
        r#"
graph:
  - id: read
    block: csv.read
    in: {path: "${vars.src}", skip_rows: "${vars.skip}"}
    out: {rows: rows}
  - id: bank
    block: bank.read_statement
    in: {path: in.csv, mapping: "${vars.mapping}"}
    out: {rows: rows}
  - id: cols
    block: transforms.select_columns
    in: {rows: "${bank.rows}", columns: "${vars.columns}"}
    out: {rows: rows}
"#,
    );
    let rs = requirements_of(&p, &shipped_catalog());
    let by_id = |id: &str| rs.iter().find(|r| r.id == id).unwrap();
    let src = by_id("src");
    assert_eq!(src.label, "読み込むCSVファイルのパス");
    assert_eq!(src.label_en.as_deref(), Some("Path of the CSV file"));
    assert_eq!(src.hint.as_deref(), Some("拡張子: .csv"));
    let skip = by_id("skip");
    assert_eq!(skip.value_type, Some(ValueType::Integer));
    assert_eq!(skip.default, Some(json!(0)));
    assert_eq!(skip.hint.as_deref(), Some("整数 / 省略時: 0"));
    assert_eq!(by_id("mapping").value_type, Some(ValueType::Object));
    assert_eq!(by_id("mapping").label, "明細の列名の対応付け");
    assert_eq!(by_id("columns").value_type, Some(ValueType::Array));
}

#[test]
fn excel_read_without_path_sheet_range_asks_file_and_text() {
    check(
        r#"
graph:
  - id: read
    block: excel.read_workbook
    out: {rows: rows}
"#,
        &[
            "read_path:file[.xlsx,.xlsm] -> read_path@read.path",
            "read_sheet:text? -> read_sheet@read.sheet",
            "read_range:text? -> read_range@read.range",
        ],
    );
    // Only what is missing is asked; the range answer is checked as an A1 range.
    let p = plan(
        "graph:\n  - id: read\n    block: excel.read_workbook\n    in: {path: a.xlsx, sheet: 売上}\n    out: {rows: rows}\n",
    );
    let rs = requirements_of(&p, &shipped_catalog());
    assert_eq!(
        rs.iter().map(summary).collect::<Vec<_>>(),
        ["read_range:text? -> read_range@read.range"]
    );
    assert!(rs[0].validation.is_some());
    let ok = answers(&[("read_range", json!("A3:K500"))]);
    assert!(apply_answers(&p, &rs, &ok).is_ok());
    let bad = answers(&[("read_range", json!("A3 to K500"))]);
    assert_eq!(
        problem_codes(apply_answers(&p, &rs, &bad)),
        ["answer.pattern"]
    );
}

#[test]
fn llm_without_schema_or_prompt_asks_for_a_schema_template() {
    let ids: Vec<&str> = schema_templates().iter().map(|t| t.id).collect();
    assert_eq!(
        ids,
        [
            "classification",
            "field_extraction",
            "summary",
            "reconciliation",
            "anomaly"
        ]
    );
    check(
        r#"
graph:
  - id: llm
    block: ai.process_llm
    in: {input_data: [1, 2]}
    out: {results: results}
"#,
        &[
            "llm_output_schema:enum<classification|field_extraction|summary|reconciliation|anomaly> -> -@llm.output_schema",
            "llm_prompt:text -> llm_prompt@llm.prompt",
        ],
    );
    // An empty schema counts as missing; a present one is not asked for.
    check(
        "graph:\n  - id: llm\n    block: ai.process_llm\n    in: {prompt: 分類, output_schema: {}}\n    out: {results: r}\n",
        &[
            "llm_output_schema:enum<classification|field_extraction|summary|reconciliation|anomaly> -> -@llm.output_schema",
        ],
    );
    check(
        "graph:\n  - id: llm\n    block: ai.process_llm\n    in: {prompt: 分類, output_schema: {a: string}}\n    out: {results: r}\n",
        &[],
    );
}

#[test]
fn missing_required_inputs_get_fresh_vars() {
    check(
        r#"
vars:
  dup_rows: taken
graph:
  - id: dup
    block: matching.duplicate_invoices
    out: {duplicates: d}
  - id: note
    block: notify.send
    in: {channel: email}
    out: {sent: sent}
"#,
        &[
            "dup_rows_2:table -> dup_rows_2@dup.rows",
            "note_body:text -> note_body@note.body",
        ],
    );
}

#[test]
fn vars_defined_without_a_value_are_asked_like_undefined_ones() {
    // How a generated plan marks a value it could not decide: the var is defined (so the plan
    // validates) and still asked, typed by the input it feeds; a var with a value is not.
    let body = r#"
vars:
  src: null
  enc: ""
  skip: 2
  ask: null
graph:
  - id: read
    block: csv.read
    in: {path: "${vars.src}", encoding: "${vars.enc}", skip_rows: "${vars.skip}"}
    out: {rows: rows}
  - id: each
    type: loop
    foreach: {input: "${read.rows}", var: row}
    body:
      plan:
        graph:
          - id: check
            block: transforms.filter_rows
            in: {rows: ["${vars.row}"], condition: "${vars.rule}"}
            out: {rows: rows}
  - id: confirm
    block: ui.confirmation
    when: {expr: "${vars.ask} == true"}
    in: {message: "ok?", details: "${read.rows}"}
    out: {approved: ok}
"#;
    let p = plan(body);
    let findings = validate(&p, &shipped_catalog(), &Options::default());
    let undefined: Vec<_> = findings
        .iter()
        .filter(|f| f.code.as_str() == "ref.undefined_var")
        .map(|f| f.path.clone())
        .collect();
    assert_eq!(
        undefined,
        ["/graph/1/body/plan/graph/0/in/condition"],
        "only the var that is not defined at all is a finding"
    );
    check(
        body,
        &[
            "src:file[.csv] -> src@read.path",
            "enc:select<auto|utf-8|utf-8-sig|shift_jis|cp932|windows-31j|euc-jp|utf-16|utf-16le|utf-16be> -> enc@read.encoding",
            "rule:text -> rule@check.condition",
            "ask:text -> ask@confirm.-",
        ],
    );
    // Answered, nothing is asked any more.
    let catalog = shipped_catalog();
    let asked = requirements_of(&p, &catalog);
    let answered = apply_answers(
        &p,
        &asked,
        &answers(&[
            ("src", json!("in.csv")),
            ("enc", json!("cp932")),
            ("rule", json!("amount > 0")),
            ("ask", json!("yes")),
        ]),
    )
    .unwrap();
    assert_eq!(answered.vars["src"], json!("in.csv"));
    assert!(requirements_of(&answered, &catalog).is_empty());
}

#[test]
fn scopes_defined_vars_and_repeats() {
    // Defined vars, loop vars and repeated vars are not asked twice; order is plan order.
    check(
        r#"
vars:
  src: in.csv
graph:
  - id: read
    block: csv.read
    in: {path: "${vars.src}"}
    out: {rows: rows}
  - id: each
    type: loop
    foreach: {input: "${read.rows}", var: row}
    body:
      plan:
        graph:
          - id: check
            block: transforms.filter_rows
            in: {rows: ["${vars.row}"], condition: "${vars.rule}", mode: "${vars.mode}"}
            out: {rows: rows}
  - id: again
    block: transforms.filter_rows
    in: {rows: "${read.rows}", condition: "${vars.rule}"}
    out: {rows: rows}
"#,
        &[
            "rule:text -> rule@check.condition",
            "mode:select<keep|drop> -> mode@check.mode",
        ],
    );
}

#[test]
fn the_order_is_the_plan_s_whatever_the_findings_order() {
    let p = plan(
        r#"
graph:
  - id: a
    block: csv.read
    in: {path: "${vars.first}"}
    out: {rows: rows}
  - id: b
    block: csv.read
    in: {path: "${vars.second}"}
    out: {rows: rows}
"#,
    );
    let catalog = shipped_catalog();
    let mut findings = validate(&p, &catalog, &Options::default());
    let forward = build_requirements(&p, &findings, &catalog);
    findings.reverse();
    let backward = build_requirements(&p, &findings, &catalog);
    assert_eq!(forward, backward);
    assert_eq!(
        forward.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        ["first", "second"]
    );
    // Without findings, only the proactive Excel questions remain (none here).
    assert!(build_requirements(&p, &[], &catalog).is_empty());
}

#[test]
fn accept_comes_from_the_spec() {
    let catalog = shipped_catalog();
    for (block, key, expect) in [
        ("csv.read", "path", Some(".csv")),
        ("bank.read_statement", "path", Some(".csv")),
        ("excel.read_workbook", "path", Some(".xlsx,.xlsm")),
        ("excel.patch_workbook", "xlsx_path", Some(".xlsx,.xlsm")),
        ("pdf.extract_text", "path", Some(".pdf")),
        ("docx.extract_text", "path", Some(".docx")),
        ("file.unzip_evidence", "path", Some(".zip")),
        ("control.audit_log", "log_path", None),
        ("file.list_folder", "folder", None),
    ] {
        let port = &catalog.get(block).unwrap().inputs[key];
        assert_eq!(accept_of(port).as_deref(), expect, "{block}.{key}");
    }
}

#[test]
fn short_labels() {
    for (input, expect) in [
        (
            "読み込むExcelファイルのパス（.xlsx/.xlsm）",
            "読み込むExcelファイルのパス",
        ),
        (
            "明細の列名の対応付け。date と description は必須",
            "明細の列名の対応付け",
        ),
        (
            "Path of the workbook to read (.xlsx/.xlsm)",
            "Path of the workbook to read",
        ),
        ("Columns used. Second sentence", "Columns used"),
        ("一行目\n二行目", "一行目"),
        ("", ""),
    ] {
        assert_eq!(short_label(input), expect, "{input:?}");
    }
    let long = "あ".repeat(50);
    assert_eq!(short_label(&long).chars().count(), 41);
}

fn requirement(kind: RequirementKind) -> Requirement {
    Requirement {
        id: "x".into(),
        kind,
        label: "x".into(),
        label_en: None,
        description: String::new(),
        description_en: None,
        options: Vec::new(),
        required: true,
        accept: None,
        hint: None,
        hint_en: None,
        validation: None,
        default: None,
        value_type: None,
        answer_use: AnswerUse::Value,
        target: RequirementTarget {
            var: Some("x".into()),
            node_id: None,
            input: None,
            ..Default::default()
        },
    }
}

fn answers(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

fn problem_codes(result: Result<Plan, AnswerError>) -> Vec<&'static str> {
    match result {
        Err(AnswerError::Invalid { problems }) => problems.iter().map(|p| p.code).collect(),
        other => panic!("expected invalid answers, got {other:?}"),
    }
}

/// Applies one answer to requirement `r` and checks the stored var or the problem code.
fn check_answer(r: &Requirement, answer: Value, expect: Result<Value, &str>) {
    let p = plan("graph: []\n");
    let result = apply_answers(
        &p,
        std::slice::from_ref(r),
        &answers(&[("x", answer.clone())]),
    );
    match (result, expect) {
        (Ok(plan), Ok(value)) => assert_eq!(plan.vars.get("x"), Some(&value), "{answer}"),
        (Err(AnswerError::Invalid { problems }), Err(code)) => {
            assert_eq!(problems.len(), 1);
            assert_eq!(problems[0].code, code, "{answer}: {}", problems[0].message);
        }
        (got, want) => panic!("{:?} answered {answer}: got {got:?}, want {want:?}", r.kind),
    }
}

#[test]
fn answers_are_type_checked_and_converted() {
    use RequirementKind::*;
    let text = requirement(Text);
    check_answer(&text, json!("請求書"), Ok(json!("請求書")));
    check_answer(&text, json!(2025), Ok(json!("2025")));
    check_answer(&text, json!({"a": 1}), Err("answer.type"));

    let mut object = requirement(Text);
    object.value_type = Some(ValueType::Object);
    check_answer(
        &object,
        json!({"date": "取引日"}),
        Ok(json!({"date": "取引日"})),
    );
    check_answer(
        &object,
        json!("{\"date\": \"取引日\"}"),
        Ok(json!({"date": "取引日"})),
    );
    check_answer(&object, json!("date=取引日"), Err("answer.type"));

    let mut list = requirement(Text);
    list.value_type = Some(ValueType::Array);
    check_answer(
        &list,
        json!("金額, 取引先、日付"),
        Ok(json!(["金額", "取引先", "日付"])),
    );
    check_answer(&list, json!("[\"a\", \"b\"]"), Ok(json!(["a", "b"])));
    check_answer(&list, json!(["a"]), Ok(json!(["a"])));

    let number = requirement(Number);
    check_answer(&number, json!(30), Ok(json!(30)));
    check_answer(&number, json!("1,000"), Ok(json!(1000)));
    check_answer(&number, json!("0.25"), Ok(json!(0.25)));
    check_answer(&number, json!("三十"), Err("answer.type"));
    check_answer(&number, json!(true), Err("answer.type"));
    let mut integer = requirement(Number);
    integer.value_type = Some(ValueType::Integer);
    check_answer(&integer, json!("7"), Ok(json!(7)));
    check_answer(&integer, json!(7.5), Err("answer.type"));

    let boolean = requirement(Boolean);
    check_answer(&boolean, json!(true), Ok(json!(true)));
    check_answer(&boolean, json!("はい"), Ok(json!(true)));
    check_answer(&boolean, json!("no"), Ok(json!(false)));
    check_answer(&boolean, json!("maybe"), Err("answer.type"));

    let mut select = requirement(Select);
    select.options = vec![json!("email"), json!("slack")];
    check_answer(&select, json!("slack"), Ok(json!("slack")));
    check_answer(&select, json!("fax"), Err("answer.not_an_option"));
    let mut numeric = requirement(Enum);
    numeric.options = vec![json!(1), json!(2)];
    check_answer(&numeric, json!("2"), Ok(json!(2)));
    check_answer(&numeric, json!(3), Err("answer.not_an_option"));

    let mut file = requirement(File);
    file.accept = Some(".xlsx,.xlsm".into());
    check_answer(&file, json!("data/売上.XLSX"), Ok(json!("data/売上.XLSX")));
    check_answer(&file, json!("data/売上.csv"), Err("answer.extension"));
    check_answer(&file, json!(12), Err("answer.type"));

    let table = requirement(Table);
    check_answer(&table, json!([{"a": 1}]), Ok(json!([{"a": 1}])));
    check_answer(&table, json!("[{\"a\": 1}]"), Ok(json!([{"a": 1}])));
    check_answer(&table, json!([1, 2]), Err("answer.type"));

    let mut pattern = requirement(Text);
    pattern.validation = Some(Validation {
        regex: Some(r"^T\d{13}$".into()),
    });
    check_answer(
        &pattern,
        json!("T1234567890123"),
        Ok(json!("T1234567890123")),
    );
    check_answer(&pattern, json!("T123"), Err("answer.pattern"));
    pattern.validation = Some(Validation {
        regex: Some("(unclosed".into()),
    });
    check_answer(&pattern, json!("x"), Err("answer.bad_pattern"));
    // A pattern that backtracking engines take exponential time on still answers at once.
    pattern.validation = Some(Validation {
        regex: Some("^(a+)+$".into()),
    });
    check_answer(
        &pattern,
        json!(format!("{}!", "a".repeat(5000))),
        Err("answer.pattern"),
    );
}

#[test]
fn missing_answers_are_all_reported_and_nothing_is_applied() {
    let mut optional = requirement(RequirementKind::Text);
    optional.id = "note".into();
    optional.required = false;
    optional.target.var = Some("note".into());
    let mut a = requirement(RequirementKind::Number);
    a.id = "a".into();
    let mut b = requirement(RequirementKind::File);
    b.id = "b".into();
    let p = plan("graph: []\n");
    let rs = [a, b, optional];
    let err =
        apply_answers(&p, &rs, &answers(&[("b", json!("")), ("other", json!(1))])).unwrap_err();
    assert_eq!(err.code(), "answer.invalid");
    let AnswerError::Invalid { problems } = err else {
        panic!()
    };
    let got: Vec<(&str, &str)> = problems
        .iter()
        .map(|p| (p.requirement.as_str(), p.code))
        .collect();
    assert_eq!(got, [("a", "answer.missing"), ("b", "answer.missing")]);
}

#[test]
fn a_target_node_that_does_not_exist_is_an_error() {
    let mut r = requirement(RequirementKind::Text);
    r.target.node_id = Some("ghost".into());
    r.target.input = Some("path".into());
    let err =
        apply_answers(&plan("graph: []\n"), &[r], &answers(&[("x", json!("a"))])).unwrap_err();
    assert_eq!(err.code(), "answer.unknown_node");
}

#[test]
fn requirements_serialise_as_interactive_input_items() {
    let p = plan(
        "graph:\n  - id: read\n    block: csv.read\n    in: {path: \"${vars.src}\"}\n    out: {rows: rows}\n",
    );
    let rs = requirements_of(&p, &shipped_catalog());
    let value = serde_json::to_value(&rs[0]).unwrap();
    assert_eq!(value["id"], "src");
    assert_eq!(value["type"], "file");
    assert_eq!(value["accept"], ".csv");
    assert_eq!(value["required"], true);
    assert_eq!(
        value["target"],
        json!({"var": "src", "node_id": "read", "input": "path"})
    );
    // The items of ui.interactive_input's requirements use these names; extra keys are ours.
    let catalog = shipped_catalog();
    let item = &catalog.get("ui.interactive_input").unwrap().inputs["requirements"];
    let properties = item.items.as_ref().unwrap()["properties"]
        .as_object()
        .unwrap();
    for key in properties.keys() {
        let shown = [
            "id",
            "type",
            "label",
            "description",
            "required",
            "accept",
            "hint",
        ];
        if shown.contains(&key.as_str()) {
            assert!(value.get(key).is_some(), "missing {key} in {value}");
        }
    }
    let back: Requirement = serde_json::from_value(value).unwrap();
    assert_eq!(back, rs[0]);
}

/// Missing information → typed requirements → answers → vars filled → a valid plan.
#[test]
fn an_inquire_round_makes_the_plan_valid() {
    let catalog = shipped_catalog();
    let p = plan(
        r#"
graph:
  - id: read
    block: csv.read
    in: {path: "${vars.invoices}", encoding: "${vars.encoding}"}
    out: {rows: rows}
  - id: book
    block: excel.read_workbook
    out: {rows: rows}
  - id: judge
    block: ai.process_llm
    in: {prompt: 請求書と発注を照合して判定してください, input_data: {invoices: "${read.rows}", orders: "${book.rows}"}}
    out: {results: results}
  - id: show
    block: ui.table_review
    in: {rows: "${judge.results}"}
    out: {approved: approved}
"#,
    );
    let findings = validate(&p, &catalog, &Options::default());
    assert!(has_errors(&findings));
    let rs = build_requirements(&p, &findings, &catalog);
    assert_eq!(
        rs.iter().map(summary).collect::<Vec<_>>(),
        [
            "invoices:file[.csv] -> invoices@read.path",
            "encoding:select<auto|utf-8|utf-8-sig|shift_jis|cp932|windows-31j|euc-jp|utf-16|utf-16le|utf-16be> -> encoding@read.encoding",
            "book_path:file[.xlsx,.xlsm] -> book_path@book.path",
            "book_sheet:text? -> book_sheet@book.sheet",
            "book_range:text? -> book_range@book.range",
            "judge_output_schema:enum<classification|field_extraction|summary|reconciliation|anomaly> -> -@judge.output_schema",
        ]
    );
    let given = answers(&[
        ("invoices", json!("invoices.csv")),
        ("encoding", json!("cp932")),
        ("book_path", json!("orders.xlsx")),
        ("book_sheet", json!("発注")),
        ("judge_output_schema", json!("reconciliation")),
    ]);
    let answered = apply_answers(&p, &rs, &given).unwrap();
    assert_eq!(answered.vars["invoices"], json!("invoices.csv"));
    assert_eq!(answered.vars["encoding"], json!("cp932"));
    let book = &answered.graph[1];
    assert_eq!(book.inputs["path"], json!("${vars.book_path}"));
    assert_eq!(book.inputs["sheet"], json!("${vars.book_sheet}"));
    assert!(
        !book.inputs.contains_key("range"),
        "an unanswered optional is not wired"
    );
    assert_eq!(
        answered.graph[2].inputs["output_schema"],
        schema_template("reconciliation").unwrap().schema
    );
    let after = validate(&answered, &catalog, &Options::default());
    let errors: Vec<_> = after
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // The next round asks only the optional range again.
    let next = build_requirements(&answered, &after, &catalog);
    assert_eq!(
        next.iter().map(summary).collect::<Vec<_>>(),
        ["book_range:text? -> book_range@book.range"]
    );
}

/// Any JSON value as an answer.
fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,12}".prop_map(Value::from),
        "[0-9,.\\-eE]{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            proptest::collection::btree_map("[a-z]{1,3}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// Whatever is answered, applying answers returns a plan or typed problems, never a
    /// panic, and an accepted answer lands in the requirement's var.
    #[test]
    fn any_answer_is_accepted_or_refused_cleanly(
        kind in prop_oneof![
            Just(RequirementKind::Text), Just(RequirementKind::Select),
            Just(RequirementKind::Boolean), Just(RequirementKind::Number),
            Just(RequirementKind::File), Just(RequirementKind::Table),
            Just(RequirementKind::Enum),
        ],
        value_type in prop_oneof![
            Just(None), Just(Some(ValueType::Object)), Just(Some(ValueType::Array)),
            Just(Some(ValueType::Integer)),
        ],
        answer in arb_json(),
    ) {
        let mut r = requirement(kind);
        r.value_type = value_type;
        r.options = vec![json!("a"), json!(1)];
        r.accept = Some(".csv".into());
        let p = plan("graph: []\n");
        match apply_answers(&p, std::slice::from_ref(&r), &answers(&[("x", answer)])) {
            Ok(plan) => prop_assert!(plan.vars.contains_key("x")),
            Err(AnswerError::Invalid { problems }) => prop_assert_eq!(problems.len(), 1),
            Err(other) => prop_assert!(false, "unexpected {other:?}"),
        }
    }
}

#[test]
fn a_column_input_left_unset_is_a_pick_from_the_columns_its_rows_have() {
    // What the catalog's + gives: a group and a pivot wired to a journal whose columns are
    // known, their column inputs unset.
    let p = plan(
        r#"
graph:
  - id: read
    block: csv.read
    in: {path: inputs/journal.csv}
    out: {rows: lines}
  - id: totals
    block: transforms.group_aggregate
    in: {rows: "${read.lines}", by: null, aggregations: null}
    out: {rows: totals}
  - id: wide
    block: transforms.pivot
    in: {rows: "${totals.totals}", index: null, columns: null, values: null}
    out: {rows: wide}
"#,
    );
    let catalog = shipped_catalog();
    let column = |name: &str| keiri_plan::ColumnSchema {
        name: name.into(),
        ty: "text".into(),
    };
    let journal = keiri_plan::FileSchema {
        path: "inputs/journal.csv".into(),
        tables: vec![keiri_plan::TableSchema {
            sheet: None,
            columns: vec![column("伝票番号"), column("科目"), column("金額")],
        }],
    };
    let options = Options {
        file_schemas: vec![journal],
        ..Options::default()
    };
    let findings = validate(&p, &catalog, &options);
    let questions = build_requirements(&p, &findings, &catalog);
    let find = |id: &str| questions.iter().find(|q| q.id == id).unwrap();
    // A list of columns: a text answer (a list) whose items are picked from the file's.
    let by = find("totals_by");
    assert_eq!(
        (by.kind, by.value_type, by.options.clone()),
        (
            RequirementKind::Text,
            Some(ValueType::Array),
            vec![json!("伝票番号"), json!("科目"), json!("金額")]
        )
    );
    assert_eq!(
        by.hint.as_deref(),
        Some("ファイルの列から選んでください（複数可）")
    );
    // The aggregations are a table of objects: no pick.
    assert!(find("totals_aggregations").options.is_empty());
    // After the group, the columns are known only once `by` and the aggregations are set.
    assert!(find("wide_columns").options.is_empty());
    // Answered, the pivot's single-column inputs become selects of the grouped columns.
    let group: Vec<Requirement> = questions
        .iter()
        .filter(|q| q.id.starts_with("totals_"))
        .cloned()
        .collect();
    let answered = apply_answers(
        &p,
        &group,
        &Map::from_iter([
            ("totals_by".to_string(), json!("科目")),
            (
                "totals_aggregations".to_string(),
                json!([{"field": "金額", "op": "sum", "as": "合計"}]),
            ),
        ]),
    )
    .unwrap();
    let findings = validate(&answered, &catalog, &options);
    let questions = build_requirements(&answered, &findings, &catalog);
    let wide = questions.iter().find(|q| q.id == "wide_columns").unwrap();
    assert_eq!(
        (wide.kind, wide.options.clone()),
        (RequirementKind::Select, vec![json!("科目"), json!("合計")])
    );
    // A column outside the list is refused, naming it; one inside is taken.
    let problem = keiri_plan::check_answer(by, &json!("科目, 勘定科目")).unwrap_err();
    assert_eq!(problem.code, "answer.not_an_option");
    assert!(problem.message.contains("勘定科目"), "{}", problem.message);
    assert_eq!(
        keiri_plan::check_answer(by, &json!("科目, 金額")).unwrap(),
        json!(["科目", "金額"])
    );
    // Without the file's columns, the questions are as before: typed, no choices.
    let blind = build_requirements(&p, &validate(&p, &catalog, &Options::default()), &catalog);
    assert!(blind.iter().all(|q| q.options.is_empty()));
}

#[test]
fn a_csv_question_takes_delimited_text_of_any_extension_csv_read_reads() {
    use keiri_plan::requirements::accepts_path;
    // Excel's 「Unicode テキスト」 is saved as .txt; a tab-separated export as .tsv.
    for path in ["inputs/仕訳帳.csv", "inputs/仕訳帳.TXT", "a.tsv"] {
        assert!(accepts_path(".csv", path), "{path}");
    }
    assert!(!accepts_path(".csv", "a.pdf"));
    assert!(!accepts_path(".xlsx,.xlsm", "a.txt"));
    assert!(accepts_path(".xlsx,.xlsm", "inputs/a.XLSM"));
    let question: Requirement = serde_json::from_value(json!({
        "id": "journal_csv", "type": "file", "label": "仕訳帳", "accept": ".csv",
        "target": {"var": "journal_csv"}
    }))
    .unwrap();
    assert_eq!(
        keiri_plan::check_answer(&question, &json!("inputs/仕訳帳.txt")).unwrap(),
        json!("inputs/仕訳帳.txt")
    );
    assert_eq!(
        keiri_plan::check_answer(&question, &json!("memo.pdf"))
            .unwrap_err()
            .code,
        "answer.extension"
    );
}
