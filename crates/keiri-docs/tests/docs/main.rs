#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! keiri-docs end to end: every format, hostile input, limits, digest, batch sections,
//! metrics, the shared accounting fixtures, TOON conformance and random-bytes robustness.

mod crafted;
mod digest;
mod fixtures;
mod formats;
mod fuzz;
mod generate;
mod hostile;
mod limits;
mod metrics;
mod robustness;
mod sections;
mod toon;
mod window;

use std::path::PathBuf;

use keiri_docs::{Cache, ExtractOptions, Format};
use keiri_fs::PathPolicy;

/// The shared fixtures (`../shared/fixtures` beside the checkout; see keiri-testkit for what a
/// test does when they are absent).
pub fn fixtures_dir() -> PathBuf {
    keiri_testkit::shared_fixtures_dir()
}

/// A temporary workspace with a path policy rooted at it and a private cache.
pub struct Workspace {
    pub dir: tempfile::TempDir,
    pub policy: PathPolicy,
    pub cache: Cache,
}

impl Default for Workspace {
    fn default() -> Self {
        Self::new()
    }
}

impl Workspace {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let policy = PathPolicy::new([dir.path()]);
        Workspace {
            dir,
            policy,
            cache: Cache::new(64, 64 << 20),
        }
    }

    /// Writes a file into the workspace (test setup; product code never writes).
    pub fn put(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        keiri_fs::write_atomic(&path, bytes).unwrap();
        path
    }
}

/// Extracts bytes of `format` with default options.
pub fn extract(bytes: &[u8], format: Format) -> Result<keiri_docs::Extracted, keiri_docs::Error> {
    keiri_docs::extract_bytes(bytes, format, &ExtractOptions::default())
}

pub fn lines(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}
