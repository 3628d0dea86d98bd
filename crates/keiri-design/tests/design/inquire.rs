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
    assert!(first.errors.iter().all(|e| e.code == "ref.undefined_var"));

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
