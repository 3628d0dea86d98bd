//! The user's numbers in the instruction set the template settings they are for, or a note
//! says why not: never dropped in silence, never put in a setting they were not for.

use serde_json::json;

use super::*;

async fn compose(instruction: &str) -> keiri_design::GeneratedPlan {
    let (catalog, templates) = (catalog(), templates());
    let ctx = Context::new(&catalog, &templates);
    let options = GenerateOptions {
        plan_id: "composed".into(),
        apply_mode: ApplyMode::Compose,
        ..GenerateOptions::default()
    };
    keiri_design::generate_plan(instruction, "", &options, &ctx)
        .await
        .unwrap()
}

#[tokio::test]
async fn the_instructions_thresholds_set_the_payroll_check() {
    let result =
        compose("当月と前月の給与を比べて、前月比±15%以上、または5万円以上変わった社員を洗い出す")
            .await;
    assert_eq!(result.templates, ["payroll_anomaly_check"]);
    assert_eq!(result.plan.vars["payroll_change_rate"], json!(0.15));
    assert_eq!(result.plan.vars["payroll_change_amount"], json!(50_000));
    for note in [
        "指示の「±15%」を設定 payroll_change_rate に使いました（既定 0.2 → 0.15）",
        "指示の「5万円」を設定 payroll_change_amount に使いました（既定 30000 → 50000）",
    ] {
        assert!(
            result.notes.iter().any(|n| n == note),
            "{:#?}",
            result.notes
        );
    }
}

#[tokio::test]
async fn two_amounts_go_to_the_settings_their_clauses_name() {
    let result = compose(
        "発注データを購買規程でチェックする。承認が必要なのは5万円以上、相見積もりは50万円以上",
    )
    .await;
    assert_eq!(result.templates, ["po_policy_compliance"]);
    assert_eq!(result.plan.vars["approval_threshold"], json!(50_000));
    assert_eq!(result.plan.vars["quote_threshold"], json!(500_000));
}

#[tokio::test]
async fn a_number_no_setting_is_named_for_is_said_and_left() {
    // 10万円以下 selects invoices; it is not the amount tolerance, the only yen setting.
    let result = compose("10万円以下の請求書の重複を14日以内で検出する").await;
    assert_eq!(result.templates, ["invoice_duplicate_detection"]);
    assert_eq!(result.plan.vars["duplicate_amount_tolerance"], json!(0));
    assert_eq!(result.plan.vars["duplicate_date_window_days"], json!(14));
    assert!(
        result.notes.iter().any(|n| n
            == "指示の「10万円」は、このプランのどの設定のことか分からないため使っていません。必要ならプランの vars か手順で指定してください"),
        "{:#?}",
        result.notes
    );
}

#[tokio::test]
async fn a_word_of_the_instruction_chooses_the_setting_it_names() {
    let result = compose("売掛金の年齢表を作りたい。請求日からの経過日数で区分する").await;
    assert_eq!(result.templates, ["receivables_aging"]);
    assert_eq!(result.plan.vars["aging_basis"], json!("invoice_date"));
    assert!(
        result.notes.iter().any(|n| n
            == "指示の「請求日から」から設定 aging_basis を invoice_date にしました（既定 due_date）"),
        "{:#?}",
        result.notes
    );

    // Words of both values choose neither: the default stays, and it is said.
    let result = compose("売掛金の年齢表を、請求日からではなく期日経過で作りたい").await;
    assert_eq!(result.templates, ["receivables_aging"]);
    assert_eq!(result.plan.vars["aging_basis"], json!("due_date"));
    assert!(
        result.notes.iter().any(|n| n.starts_with(
            "指示の言葉から設定 aging_basis を一つに決められないため既定のままです（期日経過 → due_date, 請求日から → invoice_date）"
        )),
        "{:#?}",
        result.notes
    );
}

#[tokio::test]
async fn numbers_a_template_uses_as_they_are_are_confirmed_or_said_to_differ() {
    // The aging buckets are 30, 60 and 90 days; the follow-up threshold is a setting.
    let result = compose(
        "売掛金の年齢表を作りたい。30日・45日・90日超に分け、120日を超えて滞留しているものは督促する",
    )
    .await;
    assert_eq!(result.templates, ["receivables_aging"]);
    assert_eq!(result.plan.vars["overdue_alert_days"], json!(120));
    for note in [
        "指示の「30日」はこのプランの区切り（30日・60日・90日）のとおりです",
        "指示の「45日」の区切りはこのプランにはありません（30日・60日・90日 で分けます）。変えるにはプランの手順を直してください",
        "指示の「90日」はこのプランの区切り（30日・60日・90日）のとおりです",
        "指示の「120日」を設定 overdue_alert_days に使いました（既定 60 → 120）",
    ] {
        assert!(
            result.notes.iter().any(|n| n == note),
            "{note}: {:#?}",
            result.notes
        );
    }
}
