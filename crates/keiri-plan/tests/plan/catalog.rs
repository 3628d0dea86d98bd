//! Catalog loading, precedence and the shipped catalog.

use keiri_plan::Catalog;

use super::{repo_root, write_specs};

const V1: &str = "id: x.block\nversion: 1.0.0\ndescription: 一\ninputs: {a: {type: string}}\n";
const V2: &str = "id: x.block\nversion: 2.0.0\ndescription: 二\ninputs: {b: {type: string}}\n";

#[test]
fn latest_semver_wins_and_later_dirs_override_on_ties() {
    let bundled = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    write_specs(
        bundled.path(),
        &[("misc/x.block.yaml", V2), ("misc/x.block.v1.yaml", V1)],
    );
    let (c, issues) = Catalog::load(&[bundled.path().to_path_buf()]);
    assert!(issues.is_empty());
    assert_eq!(c.get("x.block").unwrap().version, "2.0.0");

    write_specs(
        user.path(),
        &[("misc/x.block.yaml", &V2.replace("二", "ユーザー版"))],
    );
    let (c, _) = Catalog::load(&[bundled.path().to_path_buf(), user.path().to_path_buf()]);
    let spec = c.get("x.block").unwrap();
    assert_eq!(spec.description, "ユーザー版");
    assert_eq!(spec.category, "misc");
}

#[test]
fn a_broken_spec_is_reported_with_file_and_line_and_others_load() {
    let dir = tempfile::tempdir().unwrap();
    write_specs(
        dir.path(),
        &[
            ("misc/good.yaml", V1),
            (
                "misc/bad_syntax.yaml",
                "id: bad\nversion: 1.0.0\ninputs: [\n",
            ),
            (
                "misc/bad_shape.yaml",
                "id: bad2\nversion: 1.0.0\ninputs:\n  a:\n    required: maybe\n",
            ),
            ("misc/bad_version.yaml", "id: bad3\nversion: one\n"),
        ],
    );
    let (c, issues) = Catalog::load(&[dir.path().to_path_buf()]);
    assert_eq!(c.len(), 1);
    let summary = super::issue_summary(&issues);
    assert_eq!(
        summary,
        [
            ("bad_shape.yaml".to_string(), Some(5)),
            ("bad_syntax.yaml".to_string(), Some(4)),
            ("bad_version.yaml".to_string(), None),
        ]
    );
    assert!(
        issues[0].message.contains("/inputs/a/required"),
        "{}",
        issues[0].message
    );
}

/// A spec saved directly in a catalog folder, not in a category folder, is an issue naming
/// where it belongs: before, it was silently not there (a team's catalog of such files was
/// an empty catalog, with no word of why).
#[test]
fn a_spec_outside_a_category_folder_is_an_issue_not_a_silent_gap() {
    let dir = tempfile::tempdir().unwrap();
    write_specs(dir.path(), &[("misc/good.yaml", V1), ("loose.yaml", V2)]);
    let (c, issues) = Catalog::load(&[dir.path().to_path_buf()]);
    assert_eq!(
        c.get("x.block").unwrap().version,
        "1.0.0",
        "loose.yaml is not read"
    );
    assert_eq!(
        super::issue_summary(&issues),
        [("loose.yaml".to_string(), None)]
    );
    assert!(
        issues[0].message.contains("category folder"),
        "{}",
        issues[0].message
    );
}

/// The catalog we ship: loads cleanly and meets the bar every spec must meet.
#[test]
fn shipped_catalog_is_complete() {
    let (c, issues) = Catalog::load(&[repo_root().join("block_specs")]);
    assert!(issues.is_empty(), "{issues:#?}");
    assert!(c.len() >= 40, "only {} blocks", c.len());
    let mut categories = std::collections::BTreeSet::new();
    for b in c.blocks() {
        categories.insert(b.category.clone());
        assert!(
            !b.description.trim().is_empty(),
            "{}: Japanese description",
            b.id
        );
        assert!(
            b.description_en
                .as_deref()
                .is_some_and(|d| !d.trim().is_empty()),
            "{}: English description",
            b.id
        );
        assert!(
            b.title_ja.is_some() && b.title_en.is_some(),
            "{}: titles",
            b.id
        );
        assert_eq!(
            b.source.file_stem().unwrap().to_string_lossy(),
            b.id,
            "file name = id"
        );
        for (name, port) in b.inputs.iter().chain(b.outputs.iter()) {
            assert!(
                !port.description.trim().is_empty(),
                "{}.{name}: description",
                b.id
            );
            if let Some(e) = &port.enum_values {
                assert!(!e.is_empty(), "{}.{name}: empty enum", b.id);
            }
        }
    }
    for family in [
        "input",
        "transforms",
        "matching",
        "ai",
        "control",
        "output",
        "ui",
        "integration",
    ] {
        assert!(categories.contains(family), "no {family} blocks");
    }
    let llm = c.get("ai.process_llm").unwrap();
    assert!(llm.inputs["output_schema"].required);
    assert!(llm.inputs.contains_key("prompt") && llm.inputs.contains_key("instruction"));
    let ui = c.get("ui.interactive_input").unwrap();
    let modes: Vec<String> = ui.inputs["mode"]
        .enum_values
        .clone()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(modes, ["collect", "confirm", "inquire", "mixed"]);
    let patch = c.get("excel.patch_workbook").unwrap();
    assert!(patch.inputs["operations"].required);
}
