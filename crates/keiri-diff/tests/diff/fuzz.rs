//! Fuzz harness (stable Rust, proptest): mutated unified and `git diff` patches from
//! `fuzz/corpus/unified_diff` against mutated file contents, through parse (`prepare`),
//! `adapt` and the native applier with its work budget. Every input applies, fails with a
//! message, or is rejected with a reason; nothing panics, and inputs are at most 16 KiB. The
//! case budget is `KEIRI_FUZZ_CASES` (`make fuzz`), else a small fixed one.

#[path = "../../../../fuzz/support.rs"]
mod fuzz_support;

use keiri_diff::native::{self, Outcome};
use keiri_diff::patch::{Target, adapt, prepare};
use proptest::prelude::*;

use fuzz_support::Edit;

const MAX_BYTES: usize = 16 * 1024;

/// Diff syntax the mutator inserts.
const TOKENS: &[&[u8]] = &[
    b"@@ -1,3 +1,3 @@\n",
    b"@@ -0,0 +1 @@\n",
    b"@@ -99999999999,1 +1,99999999999 @@\n",
    b"@@ -1 +1 @@",
    b"--- a/plan.yaml\n",
    b"+++ b/plan.yaml\n",
    b"--- /dev/null\n",
    b"diff --git a/plan.yaml b/plan.yaml\n",
    b"new file mode 100644\n",
    b"deleted file mode 100644\n",
    b"rename from a\nrename to b\n",
    b"old mode 100644\nnew mode 100755\n",
    b"GIT binary patch\nliteral 0\n",
    b"Binary files a/x and b/x differ\n",
    b"\\ No newline at end of file\n",
    b"\n+",
    b"\n-",
    b"\n ",
    b"\r\n",
    b"\t",
    b"\"a/\\303\\244.txt\"",
    b"\xEF\xBB\xBF",
];

/// The "before" side of a patch: its context and removed lines, which is a file the
/// unmutated patch applies to.
fn old_side(patch: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(patch);
    let mut out = String::new();
    let mut in_hunk = false;
    // Whether the line before was on the old side (a `\ No newline` marker then ends it).
    let mut last_old = false;
    for line in text.split_inclusive('\n') {
        if line.starts_with("@@") {
            in_hunk = true;
            last_old = false;
        } else if in_hunk && line.starts_with('\\') {
            if last_old && out.ends_with('\n') {
                out.pop();
            }
        } else if in_hunk && !line.starts_with("---") {
            let rest = line.strip_prefix(' ').or_else(|| line.strip_prefix('-'));
            last_old = rest.is_some();
            out.push_str(rest.unwrap_or(""));
        }
    }
    out.into_bytes()
}

/// The file a patch names (`+++ b/<name>`), or a default for bare hunks.
fn target_name(patch: &[u8]) -> String {
    String::from_utf8_lossy(patch)
        .lines()
        .find_map(|l| l.strip_prefix("+++ b/").map(|n| n.trim_end().to_string()))
        .unwrap_or_else(|| "f.txt".to_string())
}

fn check(patch: &[u8], content: &[u8], name: &str) -> Result<(), TestCaseError> {
    let text = String::from_utf8_lossy(patch);
    let target = Target::new(name, []);
    match prepare(&text, &target) {
        Ok(prepared) => {
            let adapted = adapt(prepared, content);
            match native::apply(
                &adapted.content,
                &adapted.patch,
                name,
                native::DEFAULT_WORK_BUDGET,
            ) {
                Outcome::Applied { .. } => {}
                Outcome::Failed { message } => prop_assert!(!message.is_empty()),
            }
        }
        Err(rejection) => prop_assert!(!rejection.0.is_empty()),
    }
    Ok(())
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    prop::collection::vec(fuzz_support::edit(), 0..8)
}

#[test]
fn every_diff_seed_applies_to_its_old_side() {
    for seed in fuzz_support::corpus("unified_diff") {
        let name = target_name(&seed);
        let text = String::from_utf8_lossy(&seed);
        let prepared = prepare(&text, &Target::new(name.as_str(), [])).unwrap();
        let adapted = adapt(prepared, &old_side(&seed));
        let outcome = native::apply(
            &adapted.content,
            &adapted.patch,
            &name,
            native::DEFAULT_WORK_BUDGET,
        );
        assert!(matches!(outcome, Outcome::Applied { .. }), "{text}");
    }
}

proptest! {
    #![proptest_config(fuzz_support::config())]

    #[test]
    fn fuzz_unified_diff(
        seed in any::<prop::sample::Index>(),
        patch_edits in edits(),
        content_edits in edits(),
    ) {
        let seeds = fuzz_support::corpus("unified_diff");
        let seed = &seeds[seed.index(seeds.len())];
        let patch = fuzz_support::apply(seed, &patch_edits, TOKENS, MAX_BYTES);
        let content = fuzz_support::apply(&old_side(seed), &content_edits, TOKENS, MAX_BYTES);
        check(&patch, &content, &target_name(seed))?;
    }

    #[test]
    fn fuzz_unified_diff_arbitrary_bytes(
        patch in prop::collection::vec(any::<u8>(), 0..2048),
        content in prop::collection::vec(any::<u8>(), 0..2048),
    ) {
        check(&patch, &content, "f.txt")?;
    }
}
