//! Templates: loading, precedence, the `template.*` rules, and the templates we ship.

use std::path::PathBuf;

use keiri_plan::{
    Catalog, Lang, Options, Severity, TemplateSpec, Templates, validate_template,
    validate_templates,
};

use super::{repo_root, test_catalog, write_specs};

/// The block catalog we ship (`block_specs/`).
pub fn shipped_catalog() -> Catalog {
    let (catalog, issues) = Catalog::load(&[repo_root().join("block_specs")]);
    assert!(issues.is_empty(), "{issues:#?}");
    catalog
}

/// The templates we ship (`templates/`).
pub fn shipped_templates() -> Templates {
    let dir = repo_root().join("templates");
    assert!(
        dir.is_dir(),
        "the shipped templates are missing: {}",
        dir.display()
    );
    let (templates, issues) = Templates::load(&[dir]);
    assert!(issues.is_empty(), "{issues:#?}");
    templates
}

/// Parses a template from YAML text (as if it were `templates/test/<id>.yaml`).
pub fn template(yaml: &str) -> TemplateSpec {
    let dir = tempfile::tempdir().unwrap();
    write_specs(dir.path(), &[("test/t.yaml", yaml)]);
    keiri_plan::load_template(&dir.path().join("test/t.yaml")).unwrap_or_else(|e| panic!("{e:?}"))
}

/// Asserts the sorted `code@path` list of a template's findings of one severity.
fn check_severity(yaml: &str, severity: Severity, expect: &[&str]) {
    let t = template(yaml);
    let options = Options {
        lang: Lang::En,
        ..Options::default()
    };
    let mut got: Vec<String> = validate_template(&t, &test_catalog(), &options)
        .into_iter()
        .filter(|f| f.severity == severity)
        .map(|f| format!("{}@{}", f.code, f.path))
        .collect();
    got.sort();
    let mut want: Vec<String> = expect.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(got, want, "\n{yaml}");
}

fn check(yaml: &str, expect: &[&str]) {
    check_severity(yaml, Severity::Error, expect);
}

/// A clean template over the test catalog: read a CSV, filter, export the rows.
const CLEAN: &str = r#"
id: clean
version: 1.0.0
title: きれいなテンプレート
description: テスト用
imports:
  src: {type: string, description: 入力CSV, requirement: {type: file, accept: .csv}}
  limit: {type: integer, description: 上限, required: false}
exports:
  kept: {from: "${filter.kept}", type: array, description: 残った行}
vars_defaults:
  limit: 10
  condition: amount > 0
graph_snippet:
  - id: read
    block: csv.read
    in: {path: "${vars.src}"}
    out: {rows: rows}
  - id: filter
    block: transforms.filter
    in: {rows: "${read.rows}", condition: "${vars.condition}", limit: "${vars.limit}"}
    out: {rows: kept, count: count}
"#;

#[test]
fn clean_template_has_no_findings() {
    check(CLEAN, &[]);
    // `filter.count` is neither used nor exported: the one warning.
    check_severity(
        CLEAN,
        Severity::Warning,
        &["template.snippet@/graph_snippet/1/out/count"],
    );
}

#[test]
fn instruction_values_name_a_default_and_their_words() {
    let with = |values: &str| CLEAN.replace("vars_defaults:", &format!("{values}vars_defaults:"));
    check(
        &with("instruction_values:\n  limit: {unit: yen, words: [上限]}\n"),
        &[],
    );
    check(
        &with("instruction_values:\n  ceiling: {unit: yen, words: [上限]}\n"),
        &["template.instruction_value_unknown@/instruction_values/ceiling"],
    );
    check(
        &with("instruction_values:\n  limit: {unit: yen, words: []}\n"),
        &["template.instruction_value_unknown@/instruction_values/limit"],
    );
}

#[test]
fn instruction_choices_name_a_text_default_among_their_values() {
    let with = |choices: &str| {
        CLEAN.replace(
            "vars_defaults:\n",
            &format!("{choices}vars_defaults:\n  basis: due\n"),
        )
    };
    check(
        &with("instruction_choices:\n  basis: {due: [期日], issued: [請求日から]}\n"),
        &[],
    );
    // The default is not one of the values, the var has no text default, a value no words.
    check(
        &with("instruction_choices:\n  basis: {issued: [請求日から], paid: [入金日]}\n"),
        &["template.instruction_value_unknown@/instruction_choices/basis"],
    );
    check(
        &with("instruction_choices:\n  limit: {due: [期日]}\n"),
        &["template.instruction_value_unknown@/instruction_choices/limit"],
    );
    check(
        &with("instruction_choices:\n  basis: {due: [期日], issued: []}\n"),
        &["template.instruction_value_unknown@/instruction_choices/basis"],
    );
}

#[test]
fn instruction_fixed_names_values_and_words() {
    let with = |fixed: &str| CLEAN.replace("vars_defaults:", &format!("{fixed}vars_defaults:"));
    check(
        &with("instruction_fixed:\n  - {unit: days, values: [30, 60], words: [区分]}\n"),
        &[],
    );
    check(
        &with("instruction_fixed:\n  - {unit: days, values: [], words: [区分]}\n"),
        &["template.instruction_value_unknown@/instruction_fixed/0"],
    );
    check(
        &with("instruction_fixed:\n  - {unit: days, values: [30], words: []}\n"),
        &["template.instruction_value_unknown@/instruction_fixed/0"],
    );
}

#[test]
fn header_rules() {
    // The loader refuses a file without an id; a template built in memory can still lack one.
    let mut t = template(CLEAN);
    t.id.clear();
    let codes: Vec<&str> = validate_template(&t, &test_catalog(), &Options::default())
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| f.code)
        .collect();
    assert_eq!(codes, ["template.missing_id"]);
    check(
        &CLEAN.replace("id: clean", "id: has.dot"),
        &["template.invalid_id@/id"],
    );
    check(
        &CLEAN.replace("version: 1.0.0", "version: one"),
        &["template.invalid_version@/version"],
    );
    check_severity(
        &CLEAN.replace("title: きれいなテンプレート", "title: ''"),
        Severity::Warning,
        &[
            "template.missing_title@/title",
            "template.snippet@/graph_snippet/1/out/count",
        ],
    );
}

#[test]
fn snippet_rules_are_the_plan_validator_s_under_template_codes() {
    // An unknown block, an unknown input and an undefined var: the plan codes are kept.
    let yaml = CLEAN
        .replace("block: transforms.filter", "block: transforms.nope")
        .replace(
            "in: {path: \"${vars.src}\"}",
            "in: {path: \"${vars.src}\", sheet: x}",
        );
    let t = template(&yaml);
    let findings = validate_template(&t, &test_catalog(), &Options::default());
    let got: Vec<(&str, Option<&str>, &str)> = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| (f.code, f.plan_code.map(|c| c.as_str()), f.path.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (
                "template.snippet",
                Some("input.unknown_key"),
                "/graph_snippet/0/in/sheet"
            ),
            (
                "template.snippet",
                Some("block.unknown"),
                "/graph_snippet/1/block"
            ),
        ],
        "{findings:#?}"
    );
    check(
        &CLEAN.replace("\"${vars.condition}\"", "\"${vars.nowhere}\""),
        &["template.snippet@/graph_snippet/1/in/condition"],
    );
    // A duplicate id: the second `read` now reads its own rows, which is also a cycle.
    check(
        &CLEAN.replace("- id: filter", "- id: read"),
        &[
            "template.duplicate_node_id@/graph_snippet/1/id",
            "template.export_unknown_node@/exports/kept/from",
            "template.snippet@/graph_snippet/1",
        ],
    );
    check(
        &CLEAN.replace("graph_snippet:", "graph_snippet: []\nx_old_graph:"),
        &[
            "template.empty_snippet@/graph_snippet",
            "template.import_unused@/imports/limit",
            "template.import_unused@/imports/src",
            "template.export_unknown_node@/exports/kept/from",
        ],
    );
}

#[test]
fn contract_rules() {
    // Imports must be used, optional ones need a default, and types must fit.
    check(
        &CLEAN.replace("{path: \"${vars.src}\"}", "{path: in.csv}"),
        &["template.import_unused@/imports/src"],
    );
    check(
        &CLEAN.replace("  limit: 10\n", ""),
        &["template.import_default_missing@/imports/limit"],
    );
    check(
        &CLEAN.replace("src: {type: string", "src: {type: array"),
        &["template.import_type_mismatch@/graph_snippet/0/in/path"],
    );
    check(
        &CLEAN.replace("  src: {", "  bad name: {type: string}\n  src: {"),
        &["template.invalid_import_name@/imports/bad name"],
    );
    // Exports: a whole ${node.alias}, to a top-level node, with a fitting type.
    for (from, code) in [
        ("kept rows", "template.export_malformed@/exports/kept/from"),
        (
            "${vars.src}",
            "template.export_malformed@/exports/kept/from",
        ),
        (
            "rows: ${filter.kept}",
            "template.export_malformed@/exports/kept/from",
        ),
        (
            "${ghost.kept}",
            "template.export_unknown_node@/exports/kept/from",
        ),
        (
            "${filter.nope}",
            "template.export_unknown_alias@/exports/kept/from",
        ),
    ] {
        check(&CLEAN.replace("${filter.kept}", from), &[code]);
    }
    check(
        &CLEAN.replace(
            "type: array, description: 残った行",
            "type: string, description: 残った行",
        ),
        &["template.export_type_mismatch@/exports/kept/type"],
    );
    // A path inside the export is allowed and not type-checked.
    check(&CLEAN.replace("${filter.kept}", "${filter.kept.0}"), &[]);
    check(
        &CLEAN.replace(
            "graph_snippet:",
            "ui_suggestions:\n  - {block: ui.nope, after: ghost}\ngraph_snippet:",
        ),
        &[
            "template.ui_suggestion_unknown_block@/ui_suggestions/0/block",
            "template.ui_suggestion_unknown_node@/ui_suggestions/0/after",
        ],
    );
    check(
        &CLEAN.replace(
            "graph_snippet:",
            "ui_suggestions:\n  - {block: ui.confirm, after: filter, reason: 確認}\ngraph_snippet:",
        ),
        &[],
    );
    check(
        &CLEAN
            .replace("- id: filter", "- id: fil.ter")
            .replace("${filter.kept}", "${read.rows}"),
        &["template.invalid_node_id@/graph_snippet/1/id"],
    );
}

#[test]
fn unused_default_is_a_warning() {
    check_severity(
        &CLEAN.replace("  limit: 10\n", "  limit: 10\n  stale: 1\n"),
        Severity::Warning,
        &[
            "template.default_unused@/vars_defaults/stale",
            "template.snippet@/graph_snippet/1/out/count",
        ],
    );
}

const V1: &str = "id: t\nversion: 1.0.0\ntitle: 一\ngraph_snippet: []\n";
const V2: &str = "id: t\nversion: 2.0.0\ntitle: 二\ngraph_snippet: []\n";

#[test]
fn loader_precedence_and_broken_files() {
    let bundled = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    write_specs(
        bundled.path(),
        &[
            ("a/t.yaml", V2),
            ("a/t_old.yaml", V1),
            ("a/bad_syntax.yaml", "id: x\nversion: 1.0.0\nimports: [\n"),
            (
                "a/bad_shape.yaml",
                "id: y\nversion: 1.0.0\nimports:\n  a:\n    required: sometimes\n",
            ),
            ("a/bad_version.yaml", "id: z\nversion: latest\n"),
            ("a/no_id.yaml", "title: 無題\n"),
            ("a/notes.txt", "not a template"),
        ],
    );
    let (set, issues) = Templates::load(&[bundled.path().to_path_buf()]);
    assert_eq!(set.len(), 1);
    assert_eq!(set.get("t").unwrap().version, "2.0.0");
    assert_eq!(set.get("t").unwrap().category, "a");
    let got = super::issue_summary(&issues);
    assert_eq!(
        got,
        [
            ("bad_shape.yaml".to_string(), Some(5)),
            ("bad_syntax.yaml".to_string(), Some(4)),
            ("bad_version.yaml".to_string(), None),
            ("no_id.yaml".to_string(), Some(1)),
        ]
    );
    // A later directory wins on equal versions; a missing directory is skipped.
    write_specs(
        user.path(),
        &[("b/t.yaml", &V2.replace("二", "ユーザー版"))],
    );
    let dirs: Vec<PathBuf> = vec![
        bundled.path().to_path_buf(),
        user.path().to_path_buf(),
        user.path().join("missing"),
    ];
    let (set, _) = Templates::load(&dirs);
    let t = set.get("t").unwrap();
    assert_eq!((t.title.as_str(), t.category.as_str()), ("ユーザー版", "b"));
}

/// The accounting templates the issue asks for, by id.
const REQUIRED: &[&str] = &[
    "invoice_duplicate_detection",
    "bank_reconciliation",
    "po_policy_compliance",
    "three_way_match_exceptions",
    "payroll_anomaly_check",
    "monthly_close_checklist",
];

#[test]
fn shipped_templates_validate_cleanly() {
    let templates = shipped_templates();
    let catalog = shipped_catalog();
    for id in REQUIRED {
        assert!(templates.get(id).is_some(), "template {id} is not shipped");
    }
    let findings = validate_templates(&templates, &catalog, &Options::default());
    // Zero errors, and zero warnings too: a shipped template should be tidy.
    assert!(findings.is_empty(), "{findings:#?}");
    for t in templates.iter() {
        assert_eq!(
            t.source.file_stem().unwrap().to_string_lossy(),
            t.id,
            "file name = id"
        );
        assert!(!t.description.trim().is_empty(), "{}: description", t.id);
        assert!(
            t.title_en.is_some() && t.description_en.is_some(),
            "{}: English title and description",
            t.id
        );
        assert!(!t.tags.is_empty(), "{}: tags", t.id);
        for (name, import) in &t.imports {
            assert!(
                !import.description.is_empty() && import.description_en.is_some(),
                "{}: import {name} needs both descriptions",
                t.id
            );
        }
        for (name, export) in &t.exports {
            assert!(
                !export.description.is_empty() && export.description_en.is_some(),
                "{}: export {name} needs both descriptions",
                t.id
            );
        }
    }
}

/// A template written to the spec's TemplateSpec shape: `ui_suggestions {layout: [...]}`,
/// exports without `from`, kept flat in `designs/templates/` (no category directory).
const SPEC_SHAPED: &str = r#"
id: spec_shaped
version: 1.0.0
title: 仕様どおりのテンプレート
description: テスト用
imports:
  src: {type: string, description: 入力CSV}
exports:
  kept: {type: array, description: 残った行}
vars_defaults:
  condition: amount > 0
ui_suggestions:
  layout:
    - ui.confirm
    - {block: ui.confirm, after: filter, reason: 確認}
graph_snippet:
  - id: read
    block: csv.read
    in: {path: "${vars.src}"}
    out: {rows: rows}
  - id: filter
    block: transforms.filter
    in: {rows: "${read.rows}", condition: "${vars.condition}"}
    out: {rows: kept}
"#;

#[test]
fn spec_shaped_template_in_designs_templates_loads_and_composes() {
    let workspace = tempfile::tempdir().unwrap();
    write_specs(
        workspace.path(),
        &[("designs/templates/spec_shaped.yaml", SPEC_SHAPED)],
    );
    let dir = workspace.path().join("designs/templates");
    let (set, issues) = Templates::load(std::slice::from_ref(&dir));
    assert!(issues.is_empty(), "{issues:#?}");
    let t = set.get("spec_shaped").expect("the flat template loads");
    assert_eq!(t.category, "templates");
    // `from` inferred from the last node's only alias.
    assert_eq!(t.exports["kept"].from, "${filter.kept}");
    let suggestions: Vec<(&str, Option<&str>)> = t
        .ui_suggestions
        .iter()
        .map(|s| (s.block.as_str(), s.after.as_deref()))
        .collect();
    assert_eq!(
        suggestions,
        [("ui.confirm", None), ("ui.confirm", Some("filter"))]
    );
    let options = Options {
        lang: Lang::En,
        ..Options::default()
    };
    let errors: Vec<_> = validate_template(t, &test_catalog(), &options)
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let composition = keiri_plan::compose(
        &[t],
        &keiri_plan::ComposeOptions {
            plan_id: "from_spec".into(),
            bindings: Default::default(),
            vars: Default::default(),
        },
    )
    .expect("composes");
    assert_eq!(composition.plan.graph.len(), 2);
}

#[test]
fn export_without_from_on_an_ambiguous_last_node_is_a_finding() {
    // The last node has two aliases, neither named like the export.
    let yaml = CLEAN.replace(
        "kept: {from: \"${filter.kept}\", type: array, description: 残った行}",
        "rest: {type: array, description: 残った行}",
    );
    check(&yaml, &["template.export_from_ambiguous@/exports/rest"]);
    // Named like one of the aliases: that one, no finding.
    let yaml = CLEAN.replace(
        "kept: {from: \"${filter.kept}\", type: array, description: 残った行}",
        "kept: {type: array, description: 残った行}",
    );
    check(&yaml, &[]);
}

#[test]
fn requirement_without_required_is_required() {
    let r: keiri_plan::Requirement = serde_json::from_value(serde_json::json!({
        "id": "q", "type": "text", "label": "質問",
        "target": {"var": "q"}
    }))
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(r.required);
}

/// A template written to the spec with its optional fields set to `null` (description,
/// vars_defaults, ui_suggestions, an import's description…) loads as if they were left out;
/// it used to be refused whole ("invalid type: null").
#[test]
fn optional_fields_written_as_null_load_as_left_out() {
    let dir = tempfile::tempdir().unwrap();
    write_specs(
        dir.path(),
        &[(
            "a/nulls.yaml",
            "id: nulls\nversion: 1.0.0\ntitle: 空欄のあるテンプレート\ndescription: null\n\
             tags: null\njob_words: ~\nvars_defaults: null\nui_suggestions: null\n\
             imports:\n  src:\n    type: table\n    description: null\n    accepts: null\n\
             exports: null\ngraph_snippet: []\n",
        )],
    );
    let (set, issues) = Templates::load(&[dir.path().to_path_buf()]);
    assert!(issues.is_empty(), "{issues:?}");
    let t = set.get("nulls").unwrap();
    assert_eq!(t.title, "空欄のあるテンプレート");
    assert!(t.description.is_empty() && t.vars_defaults.is_empty());
    assert!(t.ui_suggestions.is_empty() && t.exports.is_empty());
    assert!(t.imports["src"].description.is_empty());
}
