//! Properties of the parser and the native applier.

use keiri_diff::native::{self, Outcome};
use keiri_diff::patch::{Target, adapt, prepare};
use proptest::prelude::*;

const WORDS: &[&str] = &["a", "b", "c", "total: 100", "請求書", "\tindented", "x y"];

fn text_with(crlf: bool) -> impl Strategy<Value = String> {
    (
        prop::collection::vec(prop::sample::select(WORDS), 0..24),
        any::<bool>(),
    )
        .prop_map(move |(lines, final_newline)| {
            let eol = if crlf { "\r\n" } else { "\n" };
            let mut out = lines.join(eol);
            if final_newline && !lines.is_empty() {
                out.push_str(eol);
            }
            out
        })
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![text_with(false), text_with(true)]
}

/// A `diffy` patch without its `---`/`+++` header (it names "original" and "modified"), as a
/// model would write it.
fn bare_patch(old: &str, new: &str) -> String {
    diffy::create_patch(old, new)
        .to_string()
        .split_inclusive('\n')
        .skip_while(|l| !l.starts_with("@@ "))
        .collect()
}

fn apply(content: &str, patch: &str) -> Result<Vec<u8>, String> {
    let target = Target::new("f.txt", []);
    let prepared = prepare(patch, &target).map_err(|r| r.0)?;
    let adapted = adapt(prepared, content.as_bytes());
    match native::apply(
        &adapted.content,
        &adapted.patch,
        "f.txt",
        native::DEFAULT_WORK_BUDGET,
    ) {
        Outcome::Applied { content, .. } => Ok(content),
        Outcome::Failed { message } => Err(message),
    }
}

fn check_round_trip(old: &str, new: &str) -> Result<(), TestCaseError> {
    prop_assume!(old != new);
    let hunks = bare_patch(old, new);
    let got = apply(old, &hunks).map_err(|e| TestCaseError::fail(format!("{e}\n{hunks}")))?;
    prop_assert_eq!(String::from_utf8(got).unwrap(), new, "{}", hunks);
    Ok(())
}

proptest! {
    /// A diff of two LF texts applied to the first gives the second.
    #[test]
    fn a_diff_applied_to_its_base_gives_its_target(old in text_with(false), new in text_with(false)) {
        check_round_trip(&old, &new)?;
    }

    /// The same for CRLF texts, when the base has lines to tell git they end in CRLF. (Added
    /// to an empty file, CRLF lines lose their CR to --whitespace=fix, in git and here.)
    #[test]
    fn a_crlf_diff_applied_to_its_base_gives_its_target(old in text_with(true), new in text_with(true)) {
        prop_assume!(old.ends_with("\r\n"));
        check_round_trip(&old, &new)?;
    }

    /// Writing a prepared patch out for git and reading it back changes nothing, whatever the
    /// file is called.
    #[test]
    fn the_git_form_reads_back_the_same(
        old in text(),
        new in text(),
        name in prop::sample::select(vec!["plan.yaml", "dir/請求書 2024.csv", "a\"q\\b.txt", "x\ty.txt"]),
    ) {
        prop_assume!(old != new);
        let hunks = bare_patch(&old, &new);
        let target = Target::new(name, []);
        let prepared = prepare(&hunks, &target).unwrap();
        let again = prepare(&prepared.to_git_diff(name), &target).unwrap();
        prop_assert_eq!(again, prepared);
    }

    /// Arbitrary patches and contents never panic, and a failure leaves no partial result.
    #[test]
    fn arbitrary_input_never_panics(
        content in prop::collection::vec(any::<u8>(), 0..200),
        lines in prop::collection::vec(
            prop_oneof![
                Just("--- a/f.txt".to_string()),
                Just("+++ b/f.txt".to_string()),
                Just("diff --git a/f.txt b/f.txt".to_string()),
                Just("\\ No newline at end of file".to_string()),
                (0usize..5, 0usize..5, 0usize..5, 0usize..5)
                    .prop_map(|(a, b, c, d)| format!("@@ -{a},{b} +{c},{d} @@")),
                "[ +-][a-c \t\r]{0,4}",
                ".{0,8}",
            ],
            0..16,
        ),
    ) {
        let patch = lines.join("\n");
        let target = Target::new("f.txt", []);
        if let Ok(prepared) = prepare(&patch, &target) {
            let adapted = adapt(prepared, &content);
            let _ = native::apply(&adapted.content, &adapted.patch, "f.txt", 100_000);
            let _ = adapted.patch.to_git_diff("f.txt");
        }
    }
}

#[test]
fn bare_patches_of_real_diffs_apply() {
    // A fixed example of the first property, so a regression shows a readable diff.
    let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
    let new = "a\nB\nc\nd\ne\nf\ng\nh\ni\n";
    let patch = bare_patch(old, new);
    assert_eq!(apply(old, &patch).unwrap(), new.as_bytes());
}
