//! Any bytes as a batch request body, run against a workspace holding one small file: an
//! input error or a response, never a panic.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

fn policy() -> &'static keiri_fs::PathPolicy {
    static POLICY: OnceLock<keiri_fs::PathPolicy> = OnceLock::new();
    POLICY.get_or_init(|| {
        let dir: PathBuf = std::env::temp_dir().join("keiri-docs-fuzz-workspace");
        std::fs::create_dir_all(&dir).expect("creating the fuzz workspace");
        keiri_fs::write_atomic(&dir.join("a.txt"), b"one\ntwo\nthree\n").expect("writing a.txt");
        keiri_fs::PathPolicy::new([&dir])
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(req) = serde_json::from_slice::<keiri_docs::SectionsRequest>(data) else { return };
    let _ = keiri_docs::extract_sections(
        policy(),
        &req,
        &keiri_docs::BatchLimits::default(),
        keiri_docs::Cache::shared(),
    );
});
