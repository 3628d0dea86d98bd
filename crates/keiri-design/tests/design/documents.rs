//! The document digest goes through keiri-docs and the caller's path policy.

use std::path::PathBuf;

fn fixtures() -> PathBuf {
    keiri_testkit::shared_fixtures_dir().canonicalize().unwrap()
}

#[test]
fn the_digest_reads_a_csv_within_the_policy_and_respects_the_budget() {
    if keiri_testkit::skip_without_shared("fixtures/accounting") {
        return;
    }
    let root = fixtures().join("accounting");
    let policy = keiri_fs::PathPolicy::new([root.clone()]);
    let path = root.join("invoices.csv").display().to_string();
    let out = keiri_design::digest_documents(&policy, &[path], 1_000).unwrap();
    assert!(out.unreadable.is_empty(), "{:?}", out.unreadable);
    assert!(out.digest.contains("invoices.csv"), "{}", out.digest);
    assert!(
        out.digest.chars().count() <= 1_200,
        "{}",
        out.digest.chars().count()
    );
    let none = keiri_design::digest_documents(&policy, &[], 1_000).unwrap();
    assert_eq!(none, keiri_design::DocumentDigest::default());
}

#[test]
fn a_path_outside_the_policy_is_not_read() {
    if keiri_testkit::skip_without_shared("fixtures/accounting, fixtures/docs") {
        return;
    }
    let root = fixtures().join("accounting");
    let policy = keiri_fs::PathPolicy::new([root]);
    let outside = fixtures().join("docs").join("invoice_ja.pdf");
    let out =
        keiri_design::digest_documents(&policy, &[outside.display().to_string()], 1_000).unwrap();
    assert_eq!(out.digest, "");
    assert_eq!(out.unreadable.len(), 1);
    assert!(
        out.unreadable[0].contains("PATH_DENIED"),
        "{:?}",
        out.unreadable
    );
}
