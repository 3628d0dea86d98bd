#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! keiri-diff integration tests: the decision logic with fake backends, behaviour through the
//! whole pipeline, the conformance of the native applier with `git apply`, and properties.

mod behaviour;
mod conformance;
mod decision;
mod fuzz;
mod props;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use keiri_diff::{
    Applied, ApplyPatchInput, Backend, BackendKind, Error, Mode, Options, Sha256Hasher,
};
use keiri_fs::PathPolicy;

/// The shared fixtures (`../shared/fixtures` beside the checkout; see keiri-testkit for what a
/// test does when they are absent).
pub fn fixtures() -> PathBuf {
    keiri_testkit::shared_fixtures_dir()
}

/// Writes a file for a test (setup only).
pub fn put(path: &Path, bytes: &[u8]) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    keiri_fs::write_atomic(path, bytes).unwrap();
}

/// A temporary workspace holding `rel` with `content`.
pub fn workspace(rel: &str, content: &[u8]) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    put(&ws.path().join(rel), content);
    ws
}

/// Runs the whole pipeline on `rel` in `ws`.
pub fn run(
    ws: &Path,
    rel: &str,
    patch: &str,
    backend: &dyn Backend,
    mode: Mode,
) -> Result<Applied, Error> {
    let policy = PathPolicy::new([ws]);
    let input = ApplyPatchInput {
        file_path: rel.to_string(),
        patch: patch.to_string(),
    };
    let options = Options {
        mode,
        ..Options::default()
    };
    keiri_diff::apply_patch(&policy, &input, backend, &Sha256Hasher, &options)
}

/// Applies with the real backend of `kind`, writing.
pub fn run_kind(ws: &Path, rel: &str, patch: &str, kind: BackendKind) -> Result<Applied, Error> {
    run(ws, rel, patch, &keiri_diff::backend(kind), Mode::Write)
}

/// `git` with the user's configuration switched off, as the tests' own tool.
pub fn git_command(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("LC_ALL", "C")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE");
    cmd
}

/// Runs git and returns stdout; panics with stderr when it fails.
pub fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = git_command(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("git is required for these tests and could not run: {e}"));
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}
