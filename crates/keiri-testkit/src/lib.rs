//! Dev-only helpers shared by the workspace's tests and benches (a `[dev-dependencies]` entry
//! only; nothing in a shipped binary links it). It holds one rule: what a test does when the
//! third-party fixtures are not beside the checkout.
//!
//! Some tests read third-party files (real accounting workbooks, reference plans) that are not
//! in the repository: CI lays them out in `../shared` beside the checkout (`fixtures/`,
//! `reference/`). A fresh clone has nothing beside it, so those tests must not fail there, and
//! CI must not silently lose them:
//!
//! - `../shared` present: the test runs.
//! - absent and the `CI` environment variable is not `true`: the test prints which fixture it
//!   needs and why it is skipped (`eprintln!`, shown by `cargo nextest run --success-output
//!   immediate` or `cargo test -- --nocapture`) and returns without checking anything.
//! - absent and `CI=true`: the test fails, naming the missing folder.
//!
//! `KEIRI_SHARED_DIR` points the tests at another folder (a test run can set it to a missing
//! directory to see the skips without moving anything).
//!
//! Why a crate of its own: the rule is needed by eight crates' test binaries and two benches,
//! which share no dev-dependency of ours (keiri-fs is a normal dependency of most of them, and
//! test-only code does not belong in a shipped library). A dependency-free crate costs one tiny
//! compile and keeps the rule in one place.
//!
//! Use it at the top of a test:
//!
//! ```ignore
//! #[test]
//! fn reads_the_real_workbook() {
//!     if keiri_testkit::skip_without_shared("fixtures/accounting/multi_sheet_ja.xlsx") {
//!         return;
//!     }
//!     let path = keiri_testkit::shared_fixture("accounting/multi_sheet_ja.xlsx");
//!     // ...
//! }
//! ```

// A test helper's way to fail the test that called it is to panic, as `assert!` does.
#![allow(clippy::panic)]

use std::path::{Path, PathBuf};

/// The environment variable that overrides where the shared folder is.
pub const SHARED_DIR_VAR: &str = "KEIRI_SHARED_DIR";

/// The shared folder: `KEIRI_SHARED_DIR` if set, else `../shared` beside the checkout (this
/// crate sits at `<repo>/crates/keiri-testkit`).
pub fn shared_dir() -> PathBuf {
    match std::env::var_os(SHARED_DIR_VAR) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    }
}

/// `<shared>/fixtures`, where the third-party fixture files are.
pub fn shared_fixtures_dir() -> PathBuf {
    shared_dir().join("fixtures")
}

/// Whether this run is CI's (`CI=true`, as CI services and `.ci/run` set it).
pub fn on_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true"))
}

/// What to do about a test that needs `what` (paths under the shared folder, e.g.
/// `fixtures/accounting/invoices.csv`, or `fixtures/` for many of its files) when the shared folder may be absent. Returns `true` when the caller must
/// return without testing (the folder is absent outside CI; the reason is printed), `false`
/// when it is present.
///
/// # Panics
/// When the folder is absent and `CI=true`: CI must run every test.
pub fn skip_without_shared(what: &str) -> bool {
    let dir = shared_dir();
    decide(&dir, dir.is_dir(), on_ci(), what)
}

fn decide(dir: &Path, present: bool, ci: bool, what: &str) -> bool {
    if present {
        return false;
    }
    if ci {
        panic!(
            "the shared fixtures are missing: this test needs {what} in {} (absent), and CI=true requires every test to run",
            dir.display()
        );
    }
    eprintln!(
        "skipped: this test needs the third-party test data {what} in {}, which is absent (a clone without ../shared beside it; lay ../shared out or set {SHARED_DIR_VAR} to run it; with CI=true this is a failure)",
        dir.display()
    );
    true
}

/// A file of the shared fixtures, `<shared>/fixtures/<rel>`.
///
/// # Panics
/// When the file does not exist (call [`skip_without_shared`] first so a clone without the
/// folder skips instead).
pub fn shared_fixture(rel: &str) -> PathBuf {
    let path = shared_fixtures_dir().join(rel);
    assert!(
        path.is_file(),
        "the shared fixtures are missing: expected {} (the shared folder beside the repository; see keiri-testkit)",
        path.display()
    );
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_present_folder_runs_the_test() {
        assert!(!decide(Path::new("/x"), true, false, "fixtures/a.xlsx"));
        assert!(!decide(Path::new("/x"), true, true, "fixtures/a.xlsx"));
    }

    #[test]
    fn an_absent_folder_outside_ci_skips() {
        assert!(decide(
            Path::new("/nowhere"),
            false,
            false,
            "fixtures/a.xlsx"
        ));
    }

    #[test]
    #[should_panic(expected = "CI=true requires every test to run")]
    fn an_absent_folder_on_ci_fails() {
        decide(Path::new("/nowhere"), false, true, "fixtures/a.xlsx");
    }
}
