//! The catalog's contract with the runtime: every block spec in `block_specs/` names an
//! entrypoint (`builtin:<id>`) that this crate implements, in every category.

use std::path::Path;

use keiri_plan::Catalog;
use keiri_run::block::Registry;

#[test]
fn every_spec_in_the_catalog_has_a_builtin() {
    let (catalog, issues) =
        Catalog::load(&[Path::new(env!("CARGO_MANIFEST_DIR")).join("../../block_specs")]);
    assert!(issues.is_empty(), "{issues:?}");
    let registry = Registry::builtins();
    for spec in catalog.blocks() {
        let entry = spec
            .entrypoint
            .as_deref()
            .and_then(|e| e.strip_prefix("builtin:"))
            .unwrap_or_else(|| panic!("{} has no builtin entrypoint", spec.id));
        assert!(registry.get(entry).is_some(), "{} has no builtin", spec.id);
    }
    // All 60 specs of the eight categories were read (one that fails to load is an issue above).
    assert_eq!(catalog.blocks().count(), 60);
}
