//! The offline compose mode: no server at all.

use keiri_design::{ApplyMode, Context, Status};
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

#[tokio::test]
async fn compose_builds_a_valid_plan_from_two_templates_without_a_server() {
    let (catalog, templates) = (catalog(), templates());
    let ctx = Context::new(&catalog, &templates);
    let names = ["invoice_duplicate_detection", "exception_report"];
    let first =
        keiri_design::generate_plan(INSTRUCTION, "", &compose_options(&names, Map::new()), &ctx)
            .await
            .unwrap();
    assert_eq!(first.status, Status::NeedsAnswers, "{:?}", first.errors);
    assert!(
        first
            .notes
            .iter()
            .any(|n| n.starts_with("AIを使わずにテンプレートから合成しました"))
    );
    assert!(
        first
            .plan
            .graph
            .iter()
            .any(|n| n.id.starts_with("invoice_duplicate_detection__"))
    );
    assert!(
        first
            .plan
            .graph
            .iter()
            .any(|n| n.id.starts_with("exception_report__"))
    );

    let mut answers = Map::new();
    for r in &first.requirements {
        let value = if r.options.is_empty() {
            json!("data/invoices.csv")
        } else {
            r.options[0].clone()
        };
        answers.insert(r.id.clone(), value);
    }
    let second =
        keiri_design::generate_plan(INSTRUCTION, "", &compose_options(&names, answers), &ctx)
            .await
            .unwrap();
    assert_eq!(second.status, Status::Valid, "{:?}", second.errors);
    assert_eq!(second.templates, names);
    assert!(second.usage.is_zero());
}

#[tokio::test]
async fn compose_chooses_templates_by_retrieval() {
    let (catalog, templates) = (catalog(), templates());
    let ctx = Context::new(&catalog, &templates);
    let result = keiri_design::generate_plan(
        "銀行明細と入金予定を照合して、未照合の入金を洗い出したい",
        "",
        &compose_options(&[], Map::new()),
        &ctx,
    )
    .await
    .unwrap();
    assert_eq!(
        result.templates[0], "bank_reconciliation",
        "{:?}",
        result.templates
    );
}

#[tokio::test]
async fn an_unknown_template_is_an_invalid_argument() {
    let (catalog, templates) = (catalog(), templates());
    let ctx = Context::new(&catalog, &templates);
    let err = keiri_design::generate_plan(
        INSTRUCTION,
        "",
        &compose_options(&["nope"], Map::new()),
        &ctx,
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    assert!(err.to_string().contains("nope"));
}
