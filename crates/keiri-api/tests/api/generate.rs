use keiri_api::*;
use keiri_api::{ApiError, Context, ErrorCode, Lang};

fn ctx(dir: &std::path::Path) -> Context {
    let catalog = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../block_specs");
    Context::new(dir).with_catalog_dirs(vec![catalog])
}

const PLAN: &str = "id: p\ngraph:\n  - id: read\n    block: csv.read\n    in: {path: \"${vars.src}\", encoding: \"${vars.enc}\"}\n    out: {rows: rows}\n  - id: out\n    block: csv.write\n    in: {rows: \"${read.rows}\"}\n";

fn answer(answers: serde_json::Value) -> Result<RequirementsAnswerResponse, ApiError> {
    let dir = tempfile::tempdir().unwrap();
    let answers = answers.as_object().cloned().unwrap();
    requirements_answer(
        &ctx(dir.path()),
        RequirementsAnswerRequest {
            yaml: PLAN.into(),
            answers,
            lang: Some(Lang::En),
        },
    )
}

#[test]
fn answers_fill_vars_and_the_plan_validates() {
    let res = answer(serde_json::json!({"src": "invoices.csv", "enc": "cp932"})).unwrap();
    assert!(res.valid, "{:?}", res.findings);
    assert!(res.requirements.is_empty(), "{:?}", res.requirements);
    assert!(res.yaml.contains("src: invoices.csv"), "{}", res.yaml);
}

#[test]
fn unanswered_questions_stay_open_and_bad_answers_are_refused() {
    let res = answer(serde_json::json!({"src": "invoices.csv"})).unwrap();
    assert!(!res.valid);
    let open: Vec<&str> = res.requirements.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(open, ["enc"]);
    let err = answer(serde_json::json!({"src": "invoices.csv", "enc": "ebcdic"})).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidRequest);
}

/// A duplicate check whose columns are the template's defaults, reading `${vars.src}`.
const DUPLICATES: &str = "id: p\nvars:\n  src: null\ngraph:\n  - id: read\n    block: csv.read\n    in: {path: \"${vars.src}\"}\n    out: {rows: rows}\n  - id: detect\n    block: matching.duplicate_invoices\n    in: {rows: \"${read.rows}\", vendor_field: vendor, amount_field: 金額}\n    out: {duplicates: duplicates}\n";

#[test]
fn naming_a_csv_whose_headers_differ_raises_a_column_question_with_its_headers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("inputs")).unwrap();
    // Test setup only; product writes go through keiri-fs.
    #[allow(clippy::disallowed_methods)]
    std::fs::write(
        dir.path().join("inputs/invoices.csv"),
        "請求書番号,取引先名,請求日,金額\nA-1,山田商事,2025/03/31,\"110,000\"\n",
    )
    .unwrap();
    let ctx = ctx(dir.path());
    let ask = |yaml: String, answers: serde_json::Value| {
        requirements_answer(
            &ctx,
            RequirementsAnswerRequest {
                yaml,
                answers: answers.as_object().cloned().unwrap(),
                lang: Some(Lang::Ja),
            },
        )
        .unwrap()
    };
    let res = ask(
        DUPLICATES.into(),
        serde_json::json!({"src": "inputs/invoices.csv"}),
    );
    assert!(!res.valid);
    let unknown: Vec<(&str, Option<&str>)> = res
        .findings
        .iter()
        .filter(|f| f.code == keiri_plan::FindingCode::ColumnUnknown)
        .map(|f| (f.path.as_str(), f.hint.as_deref()))
        .collect();
    // vendor_field, and date_field left at its default (invoice_date), which the file lacks.
    let hint =
        Some("inputs/invoices.csv の列から選んでください: 請求書番号, 取引先名, 請求日, 金額");
    assert_eq!(
        unknown,
        [
            ("/graph/1/in/vendor_field", hint),
            ("/graph/1/in/date_field", hint)
        ]
    );
    let question = &res.requirements[0];
    assert_eq!(question.id, "detect_vendor_field");
    assert_eq!(question.kind, keiri_plan::RequirementKind::Select);
    assert_eq!(
        question.options,
        [
            serde_json::json!("請求書番号"),
            serde_json::json!("取引先名"),
            serde_json::json!("請求日"),
            serde_json::json!("金額")
        ]
    );

    assert_eq!(res.requirements[1].id, "detect_date_field");
    // Picking the headers fits the plan: valid, nothing left to ask.
    let fitted = ask(
        res.yaml.clone(),
        serde_json::json!({"detect_vendor_field": "取引先名", "detect_date_field": "請求日"}),
    );
    assert!(fitted.valid, "{:?}", fitted.findings);
    assert!(fitted.requirements.is_empty(), "{:?}", fitted.requirements);
    assert!(
        fitted.yaml.contains("${vars.detect_vendor_field}"),
        "{}",
        fitted.yaml
    );
    // Dry-run and register see the same finding as validation.
    let before = keiri_api::plan_dry_run(
        &ctx,
        keiri_api::json::PlanRequest {
            yaml: res.yaml.clone(),
            lang: Some(Lang::Ja),
        },
    )
    .unwrap_err();
    assert_eq!(before.code, ErrorCode::PlanInvalid);
    assert!(format!("{:?}", before.details).contains("column.unknown"));
}
