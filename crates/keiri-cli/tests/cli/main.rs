#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! CLI journeys: the `keiri` binary as a user runs it.

mod apply_patch;
mod chat;
mod eval;
mod extract;
mod generate;
mod generate_tty;
mod llm;
mod mcp;
mod patch;
mod plan;
mod retrieve;
mod serve;

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The repository's own catalog.
pub fn catalog_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../block_specs")
        .canonicalize()
        .unwrap()
}

/// `keiri --workspace <ws> --catalog <repo catalog> …`
pub fn keiri(workspace: &Path) -> Command {
    let mut cmd = Command::cargo_bin("keiri").unwrap();
    cmd.arg("--workspace")
        .arg(workspace)
        .arg("--catalog")
        .arg(catalog_dir());
    cmd.env_remove("KEIRI_CORS_ALLOW_ORIGINS");
    // Saved settings (and the keychain key they name) of whoever runs the tests must not leak
    // in: a settings folder inside the workspace that does not exist means none.
    cmd.env("KEIRI_CONFIG_DIR", test_config_dir(workspace));
    cmd
}

/// The settings folder of a test's `keiri`: inside its workspace, empty.
pub fn test_config_dir(workspace: &Path) -> PathBuf {
    workspace.join(".keiri-test-config")
}

/// The variables that configure an LLM provider: removed so a test sees only what it sets.
pub const LLM_ENV: &[&str] = &[
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_OPENAI_DEPLOYMENT",
    "KEIRI_LLM_BASE_URL",
    "KEIRI_LLM_API_KEY",
    "KEIRI_AGENT_LLM_FALLBACK",
];

/// Writes a file for a test (setup only; product writes go through keiri-fs).
pub fn put(path: &Path, text: &str) {
    #[allow(clippy::disallowed_methods)]
    std::fs::write(path, text).unwrap();
}

pub const VALID_PLAN: &str = r#"apiVersion: v1
id: invoice_duplicates
version: 1.0.0
vars:
  source: invoices.csv
graph:
  - id: read
    block: csv.read
    in:
      path: ${vars.source}
      encoding: cp932
    out: {rows: rows}
  - id: dupes
    block: matching.duplicate_invoices
    in:
      rows: ${read.rows}
    out: {clusters: clusters}
  - id: report
    block: excel.write_table
    in:
      rows: ${dupes.clusters}
      out_name: duplicates.xlsx
    out: {out_path: out_path}
"#;
