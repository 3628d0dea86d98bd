//! Compatibility with the keiri_agent v0 block specs and plans (reference data in
//! `../shared/reference`): they load unchanged, and the validator reports their real
//! problems with stable codes.

use keiri_plan::{Catalog, Options, load_plan, validate};

use super::shared_dir;

#[test]
fn v0_specs_and_plans_load_and_validate() {
    if keiri_testkit::skip_without_shared("reference/keiri_agent_v0") {
        return;
    }
    let v0 = shared_dir().join("reference/keiri_agent_v0");
    let (catalog, issues) = Catalog::load(&[v0.join("block_specs")]);
    assert!(issues.is_empty(), "{issues:#?}");
    assert!(catalog.len() >= 40, "{}", catalog.len());
    // Inputs whose type is a list load as several types.
    assert!(catalog.blocks().any(|b| {
        b.inputs
            .values()
            .any(|p| matches!(p.ty, keiri_plan::TypeSpec::Many(_)))
    }));

    let mut files: Vec<_> = std::fs::read_dir(v0.join("designs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 4);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let loaded = load_plan(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let findings = validate(&loaded.plan, &catalog, &Options::default());
        // Every finding uses a documented code and points into the plan.
        for f in &findings {
            assert!(f.code.as_str().contains('.'), "{f:?}");
            assert!(f.path.starts_with('/'), "{f:?}");
        }
        let codes: Vec<&str> = findings.iter().map(|f| f.code.as_str()).collect();
        eprintln!("{}: {codes:?}", file.file_name().unwrap().to_string_lossy());
    }
}

/// The v0 table ([`keiri_plan::v0`]) against v0's own catalog: every v0 block is in it, and
/// every v0 key it maps is a real input or output of that v0 block.
#[test]
fn the_v0_table_covers_v0s_catalog_with_its_real_keys() {
    if keiri_testkit::skip_without_shared("reference/keiri_agent_v0") {
        return;
    }
    let v0 = shared_dir().join("reference/keiri_agent_v0");
    let (catalog, _) = Catalog::load(&[v0.join("block_specs")]);
    for spec in catalog.blocks() {
        let entry = keiri_plan::v0::v0_block(&spec.id)
            .unwrap_or_else(|| panic!("v0's {} is not in the table", spec.id));
        for (key, _) in entry.inputs {
            assert!(
                spec.inputs.contains_key(*key),
                "v0's {} has no input {key}",
                spec.id
            );
        }
        for (key, _) in entry.outputs {
            assert!(
                spec.outputs.contains_key(*key),
                "v0's {} has no output {key}",
                spec.id
            );
        }
    }
    assert_eq!(keiri_plan::v0::V0_BLOCKS.len(), catalog.len());
}

/// v0's designs imported for our catalog: no v0 block id that has a successor is left, every
/// node whose block has none is listed, and the validator no longer reports `block.unknown`
/// for a renamed block. How many validate after import is the figure the README quotes.
#[test]
fn v0_designs_are_imported_and_what_does_not_map_is_listed() {
    if keiri_testkit::skip_without_shared("reference/keiri_agent_v0") {
        return;
    }
    let v0 = shared_dir().join("reference/keiri_agent_v0");
    let (ours, _) = Catalog::load(&[super::repo_root().join("block_specs")]);
    let mut files: Vec<_> = std::fs::read_dir(v0.join("designs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut valid = 0;
    for file in &files {
        let loaded = load_plan(&std::fs::read_to_string(file).unwrap()).unwrap();
        let before = validate(&loaded.plan, &ours, &Options::default());
        let imported = keiri_plan::import_v0(&loaded.plan, &ours);
        let after = validate(&imported.plan, &ours, &Options::default());
        let unknown = |findings: &[keiri_plan::Finding]| {
            findings
                .iter()
                .filter(|f| f.code.as_str() == "block.unknown")
                .count()
        };
        let gone = imported
            .unmapped
            .iter()
            .filter(|u| u.detail.contains("has no equivalent here"))
            .count();
        assert_eq!(
            unknown(&after),
            gone,
            "{}: {:#?}",
            file.display(),
            imported.unmapped
        );
        assert!(unknown(&before) > unknown(&after), "{}", file.display());
        assert!(!imported.rewritten.is_empty());
        if !keiri_plan::has_errors(&after) {
            valid += 1;
        }
    }
    eprintln!(
        "v0 designs that validate after import: {valid} of {}",
        files.len()
    );
}
