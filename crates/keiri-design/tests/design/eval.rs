//! The eval harness: the shipped case file, and one case run against the fake server.

use keiri_design::eval::{self, load_cases, unknown_expected_blocks};
use keiri_llm::testkit::Reply;

use super::*;

#[test]
fn every_shipped_case_parses_and_expects_only_catalog_blocks() {
    let path = repo_root().join("evals/planner_cases.yaml");
    let cases = load_cases(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(cases.len() >= 20, "{} cases", cases.len());
    let catalog = catalog();
    assert_eq!(unknown_expected_blocks(&cases, &catalog), Vec::new());
    let templates = templates();
    for case in &cases {
        assert!(
            case.instruction.chars().any(|c| c > '\u{3000}'),
            "{}: the instruction should be Japanese",
            case.id
        );
        assert!(!case.expect_blocks.is_empty(), "{}", case.id);
        for t in &case.templates {
            assert!(templates.get(t).is_some(), "{}: template {t}", case.id);
        }
        // The plans a subflow case may call load and validate without errors.
        for file in &case.plans {
            let text = std::fs::read_to_string(repo_root().join(file))
                .unwrap_or_else(|e| panic!("{}: {file}: {e}", case.id));
            let plan = keiri_plan::load_plan(&text)
                .unwrap_or_else(|e| panic!("{}: {file}: {e}", case.id))
                .plan;
            let findings = keiri_plan::validate(&plan, &catalog, &Default::default());
            assert!(!keiri_plan::has_errors(&findings), "{file}: {findings:?}");
        }
        assert_eq!(
            case.expect_shapes.contains(&eval::Shape::Subflow),
            !case.plans.is_empty(),
            "{}: a subflow case names the plans it may call",
            case.id
        );
    }
    // The file covers the plan shapes beyond block nodes.
    for shape in [
        eval::Shape::Loop,
        eval::Shape::Subflow,
        eval::Shape::Policy,
        eval::Shape::When,
    ] {
        assert!(
            cases.iter().any(|c| c.expect_shapes.contains(&shape)),
            "no case expects {shape:?}"
        );
    }
}

#[tokio::test]
async fn run_case_counts_first_pass_validity_and_consistency() {
    let good = wiring("invoices.csv", "${read.rows}", json!([]));
    let broken = wiring("invoices.csv", "${nowhere.rows}", json!([]));
    let scripted = Scripted::start(vec![
        // Run 1: valid on the first pass.
        Reply::json_content(&skeleton(json!([]))),
        Reply::json_content(&good),
        // Run 2: a broken reference, repaired once.
        Reply::json_content(&skeleton(json!([]))),
        Reply::json_content(&broken),
        Reply::json_content(&good),
    ])
    .await;
    let case = eval::EvalCase {
        id: "dup".into(),
        instruction: INSTRUCTION.into(),
        docs: Vec::new(),
        templates: Vec::new(),
        apply_mode: Some(ApplyMode::LlmOnly),
        expect_blocks: vec!["matching.duplicate_invoices".into()],
        expect_shapes: vec![eval::Shape::Loop],
        answers: Default::default(),
        plans: Vec::new(),
    };
    let mut seen = Vec::new();
    let runs = eval::run_case(&case, "", 2, &options(), &scripted.ctx(), &mut |o| {
        seen.push(o.run)
    })
    .await
    .unwrap();
    assert_eq!(seen, [1, 2]);
    assert_eq!(scripted.server.request_count(), 5);
    let report = eval::case_report(&case, runs);
    assert_eq!(report.first_pass_valid, 1);
    assert_eq!(report.valid_after_repair, 2);
    assert_eq!(report.unknown.total(), 0);
    assert_eq!(report.consistency, Some(1.0));
    assert_eq!(report.jaccard, Some(1.0));
    // The block is there, the expected loop is not: half of the expectations are met.
    assert_eq!(report.expected_found, Some(0.5));
    assert_eq!(report.runs[0].missing_expected, ["shape:loop"]);
    assert_eq!(report.runs[1].repairs, 1);
}
