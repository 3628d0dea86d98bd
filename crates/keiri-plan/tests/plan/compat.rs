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
