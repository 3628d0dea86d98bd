use keiri_agent::skillpack::parse;
use keiri_agent::{RouteReason, Skill, route};

fn skill(
    name: &str,
    description: &str,
    triggers: &[&str],
    patterns: &[&str],
    priority: i64,
) -> Skill {
    let list = |items: &[&str]| {
        format!(
            "[{}]",
            items
                .iter()
                .map(|s| format!("{s:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    parse(&format!(
        "---\nname: {name}\ndescription: {description:?}\ntriggers: {}\nfile_patterns: {}\nallowed_tools: [read_file, apply_patch]\npriority: {priority}\n---\n",
        list(triggers),
        list(patterns)
    ))
    .unwrap()
}

fn read_only() -> Vec<String> {
    vec!["read_file".into()]
}

/// Routes with the shipped skillpacks; `expect` is (skill, reason).
fn check(message: &str, files: &[&str], expect: (&str, RouteReason)) {
    let files: Vec<String> = files.iter().map(|f| f.to_string()).collect();
    let skills = super::skills();
    let registry = keiri_agent::builtin_registry();
    let r = route(message, &files, None, &skills, &registry.read_only_names()).unwrap();
    assert_eq!(
        (r.skill.meta.name.as_str(), r.reason),
        expect,
        "{message}: {:?}",
        r.scores
    );
}

#[test]
fn shipped_skills_route_by_triggers_tokens_and_files() {
    check(
        "承認ステップを追加して",
        &[],
        ("plan-editing", RouteReason::Score),
    );
    check(
        "この列の数式を下までコピーしたらどうなる？",
        &[],
        ("workbook-preview", RouteReason::Score),
    );
    check(
        "この資料を要約して",
        &["docs/manual.pdf"],
        ("document-reading", RouteReason::Score),
    );
    check(
        "csv.read ブロックの使い方を教えて",
        &[],
        ("catalog-explanation", RouteReason::Score),
    );
    check("こんにちは", &[], ("general", RouteReason::Fallback));
    check(
        "/workbook-preview 承認ステップを追加して",
        &[],
        ("workbook-preview", RouteReason::Command),
    );
}

#[test]
fn a_trigger_scores_three_per_match() {
    let skills = [
        skill("a", "x", &["追加", "ステップ"], &[], 0),
        skill("b", "y", &["追加"], &[], 5),
    ];
    let r = route("ステップを追加", &[], None, &skills, &read_only()).unwrap();
    assert_eq!(r.skill.meta.name, "a");
    assert_eq!(r.score, 6);
    assert_eq!(r.scores[1].triggers, 3);
}

#[test]
fn japanese_description_overlap_counts_shared_tokens() {
    // No triggers: only the description's CJK bigrams and characters can match.
    let skills = [
        skill("invoices", "請求書の重複を検出します", &[], &[], 0),
        skill("journal", "仕訳を出力します", &[], &[], 0),
    ];
    let r = route(
        "請求書が重複していないか見て",
        &[],
        None,
        &skills,
        &read_only(),
    )
    .unwrap();
    assert_eq!(r.skill.meta.name, "invoices");
    assert_eq!(r.reason, RouteReason::Score);
    let tokens = r
        .scores
        .iter()
        .find(|s| s.skill == "invoices")
        .unwrap()
        .tokens;
    // 請求, 求書, 重複 (bigrams) + 請, 求, 書, 重, 複 (characters).
    assert!(tokens >= 8, "{:?}", r.scores);
    assert_eq!(
        r.scores
            .iter()
            .find(|s| s.skill == "journal")
            .unwrap()
            .score,
        0
    );
}

#[test]
fn attached_files_matching_patterns_add_a_bonus() {
    let skills = [
        skill("sheets", "x", &[], &["*.xlsx"], 0),
        skill("docs", "y", &[], &["*.pdf", "reports/**"], 0),
    ];
    let ro = read_only();
    let r = route("見て", &["data/売上.XLSX".into()], None, &skills, &ro).unwrap();
    assert_eq!((r.skill.meta.name.as_str(), r.score), ("sheets", 2));
    let r = route(
        "見て",
        &["a.pdf".into(), "reports/q1/b.txt".into()],
        None,
        &skills,
        &ro,
    )
    .unwrap();
    assert_eq!((r.skill.meta.name.as_str(), r.score), ("docs", 4));
    let r = route("見て", &["a.csv".into()], None, &skills, &ro).unwrap();
    assert_eq!(r.reason, RouteReason::Fallback);
}

#[test]
fn ties_go_to_the_higher_priority_then_the_name() {
    let skills = [
        skill("b", "x", &["go"], &[], 1),
        skill("a", "y", &["go"], &[], 1),
        skill("c", "z", &["go"], &[], 2),
    ];
    let r = route("go", &[], None, &skills, &read_only()).unwrap();
    assert_eq!(r.skill.meta.name, "c");
    let r = route("go", &[], None, &skills[..2], &read_only()).unwrap();
    assert_eq!(r.skill.meta.name, "a");
}

#[test]
fn slash_commands_select_a_skill_directly() {
    let skills = [
        skill("plan-editing", "x", &[], &[], 0),
        skill("other", "y", &["追加"], &[], 9),
    ];
    let r = route("/plan-editing 追加して", &[], None, &skills, &read_only()).unwrap();
    assert_eq!(r.skill.meta.name, "plan-editing");
    assert_eq!(r.reason, RouteReason::Command);
    assert_eq!(r.message, "追加して");
    assert_eq!(r.scope.allowed, ["read_file", "apply_patch"]);
    // Not a skill: an ordinary message (a path, an unknown command).
    let r = route("/data/a.csv を追加", &[], None, &skills, &read_only()).unwrap();
    assert_eq!(
        (r.skill.meta.name.as_str(), r.reason),
        ("other", RouteReason::Score)
    );
    let r = route("/nope", &[], None, &skills, &read_only()).unwrap();
    assert_eq!(r.reason, RouteReason::Fallback);
}

#[test]
fn an_explicit_skill_wins_and_an_unknown_one_is_an_error() {
    let skills = [
        skill("a", "x", &[], &[], 0),
        skill("b", "y", &["go"], &[], 0),
    ];
    let r = route("go", &[], Some("a"), &skills, &read_only()).unwrap();
    assert_eq!(
        (r.skill.meta.name.as_str(), r.reason),
        ("a", RouteReason::Explicit)
    );
    let err = route("go", &[], Some("zzz"), &skills, &read_only()).unwrap_err();
    assert_eq!(err.code(), "SKILL_NOT_FOUND");
}

#[test]
fn the_fallback_only_gets_read_only_tools() {
    // Without a general skillpack the built-in fallback is used.
    let skills = [skill("a", "x", &["zzz"], &[], 0)];
    let r = route("hello", &[], None, &skills, &read_only()).unwrap();
    assert_eq!(
        (r.skill.meta.name.as_str(), r.reason),
        ("general", RouteReason::Fallback)
    );
    assert_eq!(r.scope.allowed, ["read_file"]);
    // A general skillpack that lists a writing tool does not get it.
    let skills = [skill("general", "x", &[], &[], 0)];
    let r = route("hello", &[], None, &skills, &read_only()).unwrap();
    assert_eq!(r.scope.allowed, ["read_file"]);
}
