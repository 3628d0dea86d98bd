use keiri_agent::skillpack::{Frontmatter, Skill, format, load_dirs, parse};
use proptest::prelude::*;

fn check_error(text: &str, line: Option<usize>, fragment: &str) {
    let err = parse(text).unwrap_err();
    assert_eq!(err.line, line, "{err}");
    assert!(err.message.contains(fragment), "{err}");
}

#[test]
fn parses_quoted_strings_lists_and_block_scalars() {
    let text = "---\nname: plan-editing\ndescription: |\n  プランを編集します。\n  Edits: \"plans\".\ntriggers: [追加して, 'edit: plan']\nfile_patterns:\n  - \"*.yaml\"\nallowed_tools: [read_file, apply_patch]\npriority: 10\nversion: \"2.0\"\n---\n# 手順\n本文\n";
    let skill = parse(text).unwrap();
    assert_eq!(skill.meta.name, "plan-editing");
    assert_eq!(
        skill.meta.description,
        "プランを編集します。\nEdits: \"plans\".\n"
    );
    assert_eq!(skill.meta.triggers, ["追加して", "edit: plan"]);
    assert_eq!(skill.meta.file_patterns, ["*.yaml"]);
    assert_eq!(skill.meta.allowed_tools, ["read_file", "apply_patch"]);
    assert_eq!(skill.meta.priority, 10);
    assert_eq!(skill.meta.version, "2.0");
    assert_eq!(skill.instructions, "# 手順\n本文\n");
}

#[test]
fn defaults_and_crlf() {
    let skill = parse("---\r\nname: a\r\ndescription: d\r\n---\r\nbody").unwrap();
    assert!(skill.meta.triggers.is_empty());
    assert_eq!(skill.meta.priority, 0);
    assert_eq!(skill.meta.version, "1.0.0");
    assert_eq!(skill.instructions, "body");
}

#[test]
fn unknown_keys_are_refused_with_the_key_and_line() {
    check_error(
        "---\nname: a\ndescription: d\ntrigers: [x]\n---\n",
        Some(4),
        "trigers",
    );
    check_error(
        "---\nname: a\ndescription: d\ntriggers: [x]\nallowed_tools: []\n\nmodel: gpt\n---\n",
        Some(7),
        "model",
    );
}

#[test]
fn malformed_files_are_refused_with_a_reason() {
    check_error("name: a\n", Some(1), "must start with a '---' line");
    check_error("---\nname: a\ndescription: d\n", None, "no closing '---'");
    check_error(
        "---\nname: A b\ndescription: d\n---\n",
        Some(2),
        "lowercase",
    );
    check_error(
        "---\nname: a\ndescription: \"\"\n---\n",
        Some(2),
        "description is empty",
    );
    check_error(
        "---\nname: a\ndescription: d\npriority: high\n---\n",
        Some(4),
        "priority",
    );
    check_error(
        "---\nname: a\ndescription: [d\n---\n",
        Some(3),
        "description",
    );
    check_error(
        "---\nname: a\ndescription: d\nfile_patterns: [\"a[\"]\n---\n",
        Some(2),
        "file_patterns",
    );
}

#[test]
fn the_shipped_skillpacks_load() {
    let skills = super::skills();
    let names: Vec<&str> = skills.iter().map(|s| s.meta.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "catalog-explanation",
            "document-reading",
            "general",
            "plan-editing",
            "workbook-preview"
        ]
    );
    let registry = keiri_agent::builtin_registry();
    let known = registry.names();
    for skill in &skills {
        for tool in &skill.meta.allowed_tools {
            assert!(
                known.contains(tool),
                "{} allows unknown tool {tool}",
                skill.meta.name
            );
        }
    }
    let general = skills.iter().find(|s| s.meta.name == "general").unwrap();
    let read_only = registry.read_only_names();
    assert!(
        general
            .meta
            .allowed_tools
            .iter()
            .all(|t| read_only.contains(t))
    );
}

#[test]
fn a_workspace_skill_overrides_a_bundled_one_and_bad_files_are_reported() {
    let ws = tempfile::tempdir().unwrap();
    let own = ws.path().join("skillpacks");
    std::fs::create_dir_all(own.join("general")).unwrap();
    super::put(
        own.join("general/SKILL.md"),
        "---\nname: general\ndescription: 自分用\n---\n",
    );
    std::fs::create_dir_all(own.join("mismatch")).unwrap();
    super::put(
        own.join("mismatch/SKILL.md"),
        "---\nname: other\ndescription: d\n---\n",
    );
    let (skills, issues) = load_dirs(&[super::repo_root().join("skillpacks"), own]);
    let general = skills.iter().find(|s| s.meta.name == "general").unwrap();
    assert_eq!(general.meta.description, "自分用");
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert!(issues[0].message.contains("directory"), "{}", issues[0]);
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[ -~]{0,20}",
        Just("key: value".to_string()),
        Just("\"quoted\" 'single' #hash".to_string()),
        Just("行1\n行2\r\n\t最後 ".to_string()),
        Just("---".to_string()),
        Just("- item".to_string()),
        Just(String::new()),
        "[ぁ-んァ-ン一-龥:#\\-\"'\\n ]{0,12}",
    ]
}

fn skill() -> impl Strategy<Value = Skill> {
    (
        "[a-z0-9][a-z0-9-]{0,20}",
        text().prop_filter("non-empty", |d| !d.trim().is_empty()),
        prop::collection::vec(text(), 0..4),
        prop::collection::vec(
            "[a-z*?./]{1,8}".prop_filter("a glob", |g| globset::Glob::new(g).is_ok()),
            0..3,
        ),
        prop::collection::vec(text(), 0..4),
        any::<i64>(),
        text(),
        text(),
    )
        .prop_map(
            |(
                name,
                description,
                triggers,
                file_patterns,
                allowed_tools,
                priority,
                version,
                instructions,
            )| Skill {
                meta: Frontmatter {
                    name,
                    description,
                    triggers,
                    file_patterns,
                    allowed_tools,
                    priority,
                    version,
                },
                instructions,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn parse_format_round_trips(skill in skill()) {
        let text = format(&skill);
        let parsed = parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(parsed, skill);
    }
}
