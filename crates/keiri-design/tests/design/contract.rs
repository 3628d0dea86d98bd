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

/// An invoices CSV whose headers are Japanese, not the template's defaults.
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
                column("取引先名", "text"),
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
    let unserved: Vec<&String> = result
        .notes
        .iter()
        .filter(|n| n.contains("含まれていません"))
        .collect();
    assert_eq!(
        unserved,
        [
            "指示にある「Excel ファイルへの出力」に対応するテンプレートが見つからず、このプランには含まれていません。ブロックを追加するか、チャットで追加を依頼してください",
            "指示にある「レポート（報告書）」に対応するテンプレートが見つからず、このプランには含まれていません。ブロックを追加するか、チャットで追加を依頼してください",
        ]
    );
}

#[tokio::test]
async fn compose_asks_for_the_columns_the_attached_csv_lacks_and_fits_the_ones_written_differently()
{
    let (catalog, templates) = (catalog(), templates());
    let ctx = Context::new(&catalog, &templates).with_file_schemas(vec![invoices()]);
    let mut answers = Map::new();
    answers.insert("invoice_csv".into(), json!("inputs/invoices.csv"));
    let names = ["invoice_duplicate_detection"];
    let result = keiri_design::generate_plan(
        "請求書の重複を検出する",
        "",
        &compose_options(&names, answers.clone()),
        &ctx,
    )
    .await
    .unwrap();
    assert_eq!(result.status, Status::NeedsAnswers, "{:?}", result.errors);
    // `amount` is the file's `Amount`: fitted, and said so.
    let fitted: Vec<&String> = result
        .notes
        .iter()
        .filter(|n| n.contains("に合わせました"))
        .collect();
    assert_eq!(
        fitted,
        [
            "invoice_duplicate_detection__amounts の fields の列「amount」を、ファイルの見出し「Amount」に合わせました",
            "invoice_duplicate_detection__detect の amount_field の列「amount」を、ファイルの見出し「Amount」に合わせました",
        ]
    );
    let columns: Vec<(&str, &str)> = result
        .requirements
        .iter()
        .filter(|q| q.answer_use == AnswerUse::Column)
        .map(|q| {
            (
                q.target.node_id.as_deref().unwrap(),
                q.target.input.as_deref().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        columns,
        [
            ("invoice_duplicate_detection__dates", "fields"),
            ("invoice_duplicate_detection__detect", "vendor_field"),
            ("invoice_duplicate_detection__detect", "date_field"),
            ("invoice_duplicate_detection__detect", "invoice_no_field"),
        ]
    );
    for q in result
        .requirements
        .iter()
        .filter(|q| q.answer_use == AnswerUse::Column)
    {
        assert_eq!(q.kind, RequirementKind::Select);
        assert_eq!(
            q.options,
            [
                json!("請求書番号"),
                json!("取引先名"),
                json!("請求日"),
                json!("Amount")
            ]
        );
    }

    // Answering with the file's headers gives a plan without a column finding.
    for (id, header) in [
        ("invoice_duplicate_detection__dates_fields_1", "請求日"),
        (
            "invoice_duplicate_detection__detect_vendor_field",
            "取引先名",
        ),
        ("invoice_duplicate_detection__detect_date_field", "請求日"),
        (
            "invoice_duplicate_detection__detect_invoice_no_field",
            "請求書番号",
        ),
    ] {
        answers.insert(id.into(), json!(header));
    }
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
        text.contains("inputs/invoices.csv: 請求書番号 (text), 取引先名 (text), 請求日 (date), Amount (number)"),
        "{text}"
    );
    assert_eq!(keiri_design::prompt::file_columns(&[]), "");
}
