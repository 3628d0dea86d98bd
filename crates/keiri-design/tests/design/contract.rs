//! Plans fitted to the attached files, and every recognised part of the instruction kept:
//! compose mode, no server.

use keiri_design::{ApplyMode, Context, Status};
use keiri_plan::{AnswerUse, ColumnSchema, FileSchema, RequirementKind, TableSchema};
use serde_json::{Map, json};

use super::*;

fn compose_options(templates: &[&str], answers: Map<String, Value>) -> GenerateOptions {
    GenerateOptions {
        plan_id: "composed".into(),
        apply_mode: ApplyMode::Compose,
        templates: templates.iter().map(|t| t.to_string()).collect(),
        answers,
        ..GenerateOptions::default()
    }
}

/// An invoices CSV whose headers are Japanese, not the template's defaults: three of them
/// accounting names for the template's columns, 相手先 (the counterparty) one no accounting
/// export uses for the vendor, and `Amount` the template's own written differently.
fn invoices() -> FileSchema {
    let column = |name: &str, ty: &str| ColumnSchema {
        name: name.into(),
        ty: ty.into(),
    };
    FileSchema {
        path: "inputs/invoices.csv".into(),
        tables: vec![TableSchema {
            sheet: None,
            columns: vec![
                column("請求書番号", "text"),
                column("相手先", "text"),
                column("請求日", "date"),
                column("Amount", "number"),
            ],
        }],
    }
}

const EXCEL_REPORT: &str = "請求書CSVから重複を検出してExcelレポートにする";

#[tokio::test]
async fn compose_keeps_the_excel_report_the_instruction_asks_for() {
    let (catalog, templates) = (catalog(), templates());
    let ctx = Context::new(&catalog, &templates);
    let result =
        keiri_design::generate_plan(EXCEL_REPORT, "", &compose_options(&[], Map::new()), &ctx)
            .await
            .unwrap();
    assert_eq!(
        result.templates,
        ["invoice_duplicate_detection", "exception_report"]
    );
    assert!(
        result
            .plan
            .graph
            .iter()
            .any(|n| n.block.as_deref() == Some("excel.write_table")),
        "{:#?}",
        result.plan.graph
    );
    assert!(
        result.notes.iter().all(|n| !n.contains("含まれていません")),
        "{:?}",
        result.notes
    );
}

/// Named templates are kept as named; an Excel file they do not write gets a plain workbook
/// step on the flow's result rows (no report template and its notification), and a part no
/// step can serve (a notification) is said in a note.
#[tokio::test]
async fn compose_says_which_part_of_the_instruction_the_named_templates_do_not_serve() {
    let (catalog, templates) = (catalog(), templates());
    let ctx = Context::new(&catalog, &templates);
    let result = keiri_design::generate_plan(
        EXCEL_REPORT,
        "",
        &compose_options(&["invoice_duplicate_detection"], Map::new()),
        &ctx,
    )
    .await
    .unwrap();
    result_step(&result, "excel_output", "excel.write_table");
    assert!(
        result.notes.iter().all(|n| !n.contains("含まれていません")),
        "{:?}",
        result.notes
    );
    assert_eq!(result.status, Status::NeedsAnswers, "{:?}", result.errors);

    let result = keiri_design::generate_plan(
        "請求書の重複を検出して担当者にメールで知らせる",
        "",
        &compose_options(&["invoice_duplicate_detection"], Map::new()),
        &ctx,
    )
    .await
    .unwrap();
    let unserved: Vec<&String> = result
        .notes
        .iter()
        .filter(|n| n.contains("含まれていません"))
        .collect();
    assert_eq!(
        unserved,
        [
            "指示にある「担当者への通知」に対応するテンプレートが見つからず、このプランには含まれていません。ブロックを追加するか、チャットで追加を依頼してください"
        ]
    );
}

#[tokio::test]
async fn compose_fits_the_columns_it_can_know_and_asks_for_the_one_it_cannot() {
    let (catalog, templates) = (catalog(), templates());
    let ctx = Context::new(&catalog, &templates).with_file_schemas(vec![invoices()]);
    let names = ["invoice_duplicate_detection"];
    // Nothing answered: the one attached CSV is the file to read.
    let result = keiri_design::generate_plan(
        "請求書の重複を検出する",
        "",
        &compose_options(&names, Map::new()),
        &ctx,
    )
    .await
    .unwrap();
    assert_eq!(result.status, Status::NeedsAnswers, "{:?}", result.errors);
    assert!(
        result.notes.contains(
            &"「請求書一覧のCSVファイル」には添付のファイル inputs/invoices.csv を使います"
                .to_string()
        ),
        "{:?}",
        result.notes
    );
    assert_eq!(
        result.plan.vars["invoice_csv"],
        json!("inputs/invoices.csv")
    );
    // One note per column, naming every place it was fitted.
    let fitted: Vec<&String> = result
        .notes
        .iter()
        .filter(|n| n.starts_with("列「"))
        .collect();
    assert_eq!(
        fitted,
        [
            "列「invoice_date」には、同じ意味のファイルの見出し「請求日」を使います。違う場合はプランで直してください（invoice_duplicate_detection__dates.fields, invoice_duplicate_detection__detect.date_field）",
            "列「amount」を、ファイルの見出し「Amount」に合わせました（invoice_duplicate_detection__amounts.fields, invoice_duplicate_detection__detect.amount_field）",
            "列「invoice_no」には、同じ意味のファイルの見出し「請求書番号」を使います。違う場合はプランで直してください（invoice_duplicate_detection__detect.invoice_no_field）",
        ]
    );
    // 相手先 is the user's to confirm: a select of exactly the file's headers, asked, with the
    // file's only header that names a party proposed (no dictionary vouches for it: a
    // counterparty may be a customer).
    let columns: Vec<&keiri_plan::Requirement> = result
        .requirements
        .iter()
        .filter(|q| q.answer_use == AnswerUse::Column)
        .collect();
    assert_eq!(columns.len(), 1, "{:#?}", result.requirements);
    let q = columns[0];
    assert_eq!(q.id, "invoice_duplicate_detection__detect_vendor_field");
    assert_eq!(q.kind, RequirementKind::Select);
    assert_eq!(
        q.options,
        [
            json!("請求書番号"),
            json!("相手先"),
            json!("請求日"),
            json!("Amount")
        ]
    );
    assert_eq!(q.default, Some(json!("相手先")));
    assert!(
        q.description
            .ends_with("（取引先らしい見出しの列は「相手先」だけなので、これを選んでおきました）"),
        "{}",
        q.description
    );

    // Answering it gives a plan without a column finding.
    let mut answers = Map::new();
    answers.insert(q.id.clone(), json!("相手先"));
    let answered = keiri_design::generate_plan(
        "請求書の重複を検出する",
        "",
        &compose_options(&names, answers),
        &ctx,
    )
    .await
    .unwrap();
    assert_eq!(answered.status, Status::Valid, "{:?}", answered.errors);
}

#[test]
fn the_wiring_prompt_lists_the_attached_files_columns() {
    let text = keiri_design::prompt::file_columns(&[invoices()]);
    assert!(
        text.contains(
            "inputs/invoices.csv: 請求書番号 (text), 相手先 (text), 請求日 (date), Amount (number)"
        ),
        "{text}"
    );
    assert_eq!(keiri_design::prompt::file_columns(&[]), "");
}

/// A column the file lacks that two nodes read (`invoice_date`: the date normaliser and the
/// detector) is one question, and its one answer fits both.
#[tokio::test]
async fn a_column_two_nodes_read_is_asked_once() {
    let (catalog, templates) = (catalog(), templates());
    let mut file = invoices();
    file.tables[0].columns.retain(|c| c.name != "請求日");
    file.tables[0].columns.push(ColumnSchema {
        name: "計上月".into(),
        ty: "text".into(),
    });
    let ctx = Context::new(&catalog, &templates).with_file_schemas(vec![file]);
    let names = ["invoice_duplicate_detection"];
    let mut answers = Map::new();
    answers.insert(
        "invoice_duplicate_detection__detect_vendor_field".into(),
        json!("相手先"),
    );
    let result = keiri_design::generate_plan(
        "請求書の重複を検出する",
        "",
        &compose_options(&names, answers.clone()),
        &ctx,
    )
    .await
    .unwrap();
    assert_eq!(result.status, Status::NeedsAnswers, "{:?}", result.errors);
    let ids: Vec<&str> = result.requirements.iter().map(|q| q.id.as_str()).collect();
    assert_eq!(ids, ["invoice_duplicate_detection__dates_fields_1"]);
    assert!(
        result.requirements[0].description.ends_with(
            "（この答えは invoice_duplicate_detection__detect.date_field にも使います）"
        ),
        "{}",
        result.requirements[0].description
    );
    let detect = result
        .plan
        .graph
        .iter()
        .find(|n| n.id == "invoice_duplicate_detection__detect")
        .unwrap();
    assert_eq!(
        detect.inputs["date_field"],
        json!("${vars.invoice_duplicate_detection__dates_fields_1}")
    );
    // The window answers from the plan alone (requirements_answer rebuilds the questions from
    // it): the same one question, whose answer fits both places.
    let opts = keiri_plan::Options {
        file_schemas: ctx.file_schemas.clone(),
        ..Default::default()
    };
    let findings = keiri_plan::validate(&result.plan, &catalog, &opts);
    let rebuilt = keiri_plan::build_requirements(&result.plan, &findings, &catalog);
    let rebuilt_ids: Vec<&str> = rebuilt.iter().map(|q| q.id.as_str()).collect();
    assert_eq!(
        rebuilt_ids,
        ["invoice_duplicate_detection__dates_fields_1"],
        "{rebuilt:#?}"
    );
    assert_eq!(rebuilt[0].kind, RequirementKind::Select);
    let mut one = Map::new();
    one.insert(rebuilt[0].id.clone(), json!("計上月"));
    let applied = keiri_plan::apply_answers(&result.plan, &rebuilt, &one).unwrap();
    let after = keiri_plan::validate(&applied, &catalog, &opts);
    assert!(
        after
            .iter()
            .all(|f| f.severity != keiri_plan::Severity::Error),
        "{after:#?}"
    );

    answers.insert(
        "invoice_duplicate_detection__dates_fields_1".into(),
        json!("計上月"),
    );
    let answered = keiri_design::generate_plan(
        "請求書の重複を検出する",
        "",
        &compose_options(&names, answers),
        &ctx,
    )
    .await
    .unwrap();
    assert_eq!(answered.status, Status::Valid, "{:?}", answered.errors);
    assert_eq!(
        answered.plan.vars["invoice_duplicate_detection__dates_fields_1"],
        json!("計上月")
    );
}

/// Only bare column names are merged into one question: a rule's condition that reads a
/// column the file lacks keeps its expression (it is never pointed at another question's var).
#[tokio::test]
async fn rule_conditions_are_never_merged_into_another_question() {
    let (catalog, templates) = (catalog(), templates());
    let column = |name: &str| ColumnSchema {
        name: name.into(),
        ty: "text".into(),
    };
    let orders = FileSchema {
        path: "inputs/po.csv".into(),
        tables: vec![TableSchema {
            sheet: None,
            columns: ["発注番号", "発注日", "納期", "金額", "発注者"]
                .into_iter()
                .map(column)
                .collect(),
        }],
    };
    let ctx = Context::new(&catalog, &templates).with_file_schemas(vec![orders]);
    let result = keiri_design::generate_plan(
        "発注データを購買規程でチェックする",
        "",
        &compose_options(&["po_policy_compliance"], Map::new()),
        &ctx,
    )
    .await
    .unwrap();
    let template = templates.get("po_policy_compliance").unwrap();
    let snippet = template
        .graph_snippet
        .iter()
        .find(|n| n.id == "policy")
        .unwrap();
    let node = result
        .plan
        .graph
        .iter()
        .find(|n| n.id == "po_policy_compliance__policy")
        .unwrap();
    assert_eq!(
        node.inputs["rules"]
            .to_string()
            .matches("${vars.po_policy_compliance__policy_rules")
            .count(),
        0,
        "{}",
        node.inputs["rules"]
    );
    assert_eq!(
        node.inputs["rules"].as_array().map(Vec::len),
        snippet.inputs["rules"].as_array().map(Vec::len)
    );
}

/// A CSV export the instruction asks for gets a `csv.write` step on the flow's result rows
/// (Shift_JIS when it says so); a CSV the job only reads gets none.
#[tokio::test]
async fn a_csv_export_asked_for_gets_a_csv_step_and_a_csv_read_does_not() {
    let (catalog, templates) = (catalog(), templates());
    let ctx = Context::new(&catalog, &templates);
    let options = compose_options(&[], Map::new());
    let result = keiri_design::generate_plan(
        "請求書CSVから重複を検出して、結果をShift_JISのCSVで出力する",
        "",
        &options,
        &ctx,
    )
    .await
    .unwrap();
    let step = result_step(&result, "csv_output", "csv.write");
    assert_eq!(step.inputs["encoding"], "cp932");
    assert!(
        result
            .notes
            .iter()
            .any(|n| n.contains("手順 csv_output を加えました")),
        "{:?}",
        result.notes
    );

    let result = keiri_design::generate_plan("請求書CSVから重複を検出する", "", &options, &ctx)
        .await
        .unwrap();
    assert!(
        result.plan.graph.iter().all(|n| n.id != "csv_output"),
        "{:#?}",
        result.plan.graph
    );
}

/// The step `id` an invoice-duplicates composition added: its block, and the duplicates it
/// writes.
fn result_step<'r>(
    result: &'r keiri_design::GeneratedPlan,
    id: &str,
    block: &str,
) -> &'r keiri_plan::Node {
    assert_eq!(result.templates, ["invoice_duplicate_detection"]);
    let step = result
        .plan
        .graph
        .iter()
        .find(|n| n.id == id)
        .unwrap_or_else(|| panic!("{:#?}", result.plan.graph));
    assert_eq!(step.block.as_deref(), Some(block));
    assert_eq!(
        step.inputs["rows"],
        "${invoice_duplicate_detection__detect.duplicates}"
    );
    step
}
