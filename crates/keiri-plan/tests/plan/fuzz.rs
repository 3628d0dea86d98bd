//! Fuzz harness (stable Rust, proptest): mutated plan YAML from `fuzz/corpus/plan_yaml` and
//! arbitrary bytes through load → validate → dry-run. Every input loads or fails with a coded
//! error; nothing panics, and inputs are at most 16 KiB so nothing can take long. The case
//! budget is `KEIRI_FUZZ_CASES` (`make fuzz`), else a small fixed one.

#[path = "../../../../fuzz/support.rs"]
mod fuzz_support;

use std::path::Path;
use std::sync::OnceLock;

use keiri_plan::{Catalog, dry_run, load_plan, validate};
use proptest::prelude::*;

/// YAML syntax and plan keys the mutator inserts.
const TOKENS: &[&[u8]] = &[
    b"&a ",
    b"*a",
    b"<<: *a\n",
    b"${",
    b"}",
    b"${vars.",
    b"${read.rows[0]}",
    b"[",
    b"]",
    b"{",
    b"- ",
    b": ",
    b"\n  ",
    b"\n    - ",
    b"!!binary ",
    b"!!str ",
    b"!custom ",
    b"~",
    b"null",
    b"type: loop\n",
    b"type: subflow\n",
    b"foreach: {input: x}\n",
    b"while: {condition: {expr: x}, max_iterations: 0}\n",
    b"body: {plan: {id: p, graph: [{id: q, block: csv.read}]}}\n",
    b"call: {plan_id: x}\n",
    b"'",
    b"\"",
    b"#",
    b"\t",
    b"99999999999999999999",
    b"- id: x\n  block: csv.read\n",
    b"? ",
    b"|\n",
    b">-\n",
    b"%YAML 1.2\n---\n",
    b"...\n",
    b"\xEF\xBB\xBF",
];

/// The shipped block catalog (read-only).
fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../block_specs");
        Catalog::load(&[dir]).0
    })
}

fn check(bytes: &[u8]) -> Result<(), TestCaseError> {
    let text = String::from_utf8_lossy(bytes);
    match load_plan(&text) {
        Ok(loaded) => {
            let findings = validate(&loaded.plan, catalog(), &Default::default());
            for f in &findings {
                prop_assert!(
                    !f.code.as_str().is_empty(),
                    "a finding without a code: {f:?}"
                );
            }
            let _ = dry_run(&loaded.plan, catalog(), &Default::default());
        }
        Err(e) => prop_assert!(
            !e.code().as_str().is_empty(),
            "an error without a code: {e}"
        ),
    }
    Ok(())
}

#[test]
fn every_plan_seed_loads_or_fails_with_a_code() {
    for seed in fuzz_support::corpus("plan_yaml") {
        check(&seed).unwrap();
    }
}

proptest! {
    #![proptest_config(fuzz_support::config())]

    #[test]
    fn fuzz_plan_yaml(
        bytes in fuzz_support::input(fuzz_support::corpus("plan_yaml"), TOKENS, 16 * 1024),
    ) {
        check(&bytes)?;
    }
}
