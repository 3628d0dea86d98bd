//! An inquire round: missing information → typed requirements → answers → vars filled →
//! valid plan.

use keiri_design::Status;
use keiri_llm::testkit::Reply;
use keiri_plan::RequirementKind;
use serde_json::{Map, json};

use super::*;

#[tokio::test]
async fn missing_information_becomes_requirements_then_answers_make_it_valid() {
    let questions =
        json!([{"var": "invoice_csv", "kind": "file", "label": "請求書一覧のCSV", "options": []}]);
    let wired = wiring(
        "${vars.invoice_csv}",
        "${read.rows}",
        json!([{"name": "invoice_csv", "value_json": "null"}]),
    );
    let scripted = Scripted::start(vec![
        Reply::json_content(&skeleton(questions.clone())),
        Reply::json_content(&wired),
        Reply::json_content(&skeleton(questions)),
        Reply::json_content(&wired),
    ])
    .await;

    // Round 1: nobody knows the file; no repair is attempted for it.
    let first = scripted.generate(&options()).await.unwrap();
    assert_eq!(first.status, Status::NeedsAnswers, "{:?}", first.errors);
    assert_eq!(first.attempts.len(), 1);
    assert_eq!(scripted.server.request_count(), 2);
    let r = first
        .requirements
        .iter()
        .find(|r| r.target.var.as_deref() == Some("invoice_csv"))
        .unwrap();
    assert_eq!(r.kind, RequirementKind::File, "{r:?}");
    // The open value is defined, so the plan validates while the question stays.
    assert!(first.errors.is_empty(), "{:?}", first.errors);
    assert_eq!(first.plan.vars["invoice_csv"], json!(null));

    // Round 2: the answer fills the var and the plan validates.
    let mut answers = Map::new();
    answers.insert(r.id.clone(), json!("data/invoices.csv"));
    let options = GenerateOptions {
        answers,
        ..options()
    };
    let second = scripted.generate(&options).await.unwrap();
    assert_eq!(second.status, Status::Valid, "{:?}", second.errors);
    assert_eq!(second.plan.vars["invoice_csv"], json!("data/invoices.csv"));
    assert!(second.requirements.is_empty(), "{:?}", second.requirements);
    // The answer reached the wiring prompt.
    let requests = scripted.server.requests();
    assert!(last_message(&requests[3]).contains("invoice_csv = \"data/invoices.csv\""));
}

#[tokio::test]
async fn every_open_value_is_a_var_with_a_requirement_and_the_plan_validates() {
    // The model reads two values it could not decide and defines neither: the skeleton's
    // open point (the file) and a threshold nobody asked about.
    let questions =
        json!([{"var": "invoice_csv", "kind": "file", "label": "請求書一覧のCSV", "options": []}]);
    let mut wired = wiring("${vars.invoice_csv}", "${read.rows}", json!([]));
    wired["nodes"][1]["inputs"]
        .as_array_mut()
        .unwrap()
        .push(json!({"key": "amount_tolerance", "value_json": "\"${vars.tolerance}\""}));
    let scripted = Scripted::start(vec![
        Reply::json_content(&skeleton(questions)),
        Reply::json_content(&wired),
    ])
    .await;
    let result = scripted.generate(&options()).await.unwrap();
    assert_eq!(result.status, Status::NeedsAnswers, "{:?}", result.errors);
    // No repair was spent on values only the user can give.
    assert_eq!(scripted.server.request_count(), 2);
    assert_eq!(result.plan.vars["invoice_csv"], json!(null));
    assert_eq!(result.plan.vars["tolerance"], json!(null));
    let catalog = catalog();
    let findings = keiri_plan::validate(&result.plan, &catalog, &Default::default());
    assert!(!keiri_plan::has_errors(&findings), "{findings:?}");
    let asked: Vec<(&str, RequirementKind)> = result
        .requirements
        .iter()
        .map(|r| (r.target.var.as_deref().unwrap_or("-"), r.kind))
        .collect();
    assert_eq!(
        asked,
        [
            ("invoice_csv", RequirementKind::File),
            ("tolerance", RequirementKind::Number)
        ]
    );
    // The plan text alone gives the same questions (the window and `requirements_answer`
    // ask from it).
    assert_eq!(
        keiri_plan::build_requirements(&result.plan, &findings, &catalog),
        result.requirements
    );
}
