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

/// A composed plan states how it runs (the runtime's defaults as its policy), lists its UI
/// steps as `ui.layout`, and passes on the UI steps its templates suggest as notes; the
/// stage-1 prompt's template summary carries the same suggestions.
#[tokio::test]
async fn a_composed_plan_states_its_policy_layout_and_the_templates_suggestions() {
    let (catalog, templates) = (catalog(), templates());
    let ctx = Context::new(&catalog, &templates);
    let instruction = "請求書の重複を検出して、上長の承認を得てからExcelに出力する";
    let options = compose_options(&["invoice_duplicate_detection"], Map::new());
    let got = keiri_design::generate_plan(instruction, "", &options, &ctx)
        .await
        .unwrap();
    let policy = got.plan.policy.as_ref().expect("a policy");
    assert_eq!(policy.on_error.as_deref(), Some("stop"));
    assert_eq!((policy.retries, policy.concurrency), (Some(0), Some(1)));
    let ui_steps: Vec<&str> = got
        .plan
        .graph
        .iter()
        .filter(|n| n.block.as_deref().is_some_and(|b| b.starts_with("ui.")))
        .map(|n| n.id.as_str())
        .collect();
    assert!(
        !ui_steps.is_empty(),
        "the approval step: {:?}",
        got.plan.graph
    );
    assert_eq!(got.plan.ui.as_ref().unwrap().layout, ui_steps);
    assert!(
        got.notes
            .iter()
            .any(|n| n.starts_with("テンプレートの提案:")
                && n.contains("ui.table_review")
                && n.contains("invoice_duplicate_detection__detect")),
        "{:?}",
        got.notes
    );
    let template = templates.get("invoice_duplicate_detection").unwrap();
    let summary = keiri_design::prompt::template_summary(template);
    assert!(
        summary.contains("suggested UI step: ui.table_review after detect"),
        "{summary}"
    );
}

/// The repair prompt's node diff sees a change inside a loop body (it used to compare the top
/// level only, so a repair that fixed a body node looked like no change at all).
#[test]
fn the_repair_diff_names_changes_inside_loop_bodies() {
    let plan = |limit: &str, extra: bool| {
        let more = if extra {
            "\n          - {id: note, block: transforms.pick_value, in: {source: {}, path: a}}"
        } else {
            ""
        };
        keiri_plan::load_plan(&format!(
            "id: p\ngraph:\n  - id: each\n    type: loop\n    foreach: {{input: [1]}}\n    body:\n      plan:\n        id: b\n        graph:\n          - {{id: pick, block: transforms.pick_value, in: {{source: {{}}, path: {limit}}}}}{more}\n"
        ))
        .unwrap()
        .plan
    };
    let diff = keiri_design::node_diff(&plan("a", false), &plan("b", true));
    assert_eq!(
        diff,
        [
            "~ each/pick: in.path \"a\" -> \"b\"".to_string(),
            "+ each/note (transforms.pick_value)".to_string()
        ],
        "{diff:?}"
    );
}
