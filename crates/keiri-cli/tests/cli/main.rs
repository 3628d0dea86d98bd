#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! CLI journeys: the `keiri` binary as a user runs it.

mod apply_patch;
mod chat;
mod concurrency;
mod eval;
mod eval_offline;
mod extract;
mod generate;
mod generate_jobs;
mod generate_tty;
mod ja_mode;
mod kill;
mod llm;
mod mcp;
mod patch;
mod plan;
mod retrieve;
mod run;
mod run_blocks;
mod security;
mod serve;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use assert_cmd::assert::Assert;
use serde_json::Value;

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

/// [`keiri`] that sees only the LLM the test gives it: every provider variable removed and,
/// with `base_url`, the fake server's model with no retries.
pub fn keiri_with_llm(workspace: &Path, base_url: Option<&str>) -> Command {
    let mut cmd = keiri(workspace);
    for v in LLM_ENV {
        cmd.env_remove(v);
    }
    cmd.env_remove("KEIRI_LLM_MODEL");
    if let Some(url) = base_url {
        cmd.env("KEIRI_LLM_BASE_URL", url)
            .env("KEIRI_LLM_MODEL", "test-model")
            .env("KEIRI_LLM_MAX_RETRIES", "0");
    }
    cmd
}

pub fn stdout_text(out: &Assert) -> String {
    String::from_utf8_lossy(&out.get_output().stdout).into_owned()
}

pub fn stderr_text(out: &Assert) -> String {
    String::from_utf8_lossy(&out.get_output().stderr).into_owned()
}

pub fn stdout_json(out: &Assert) -> Value {
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

/// Checks a `--json` run without a provider: the error code, and that its message names each
/// of `vars`.
pub fn assert_llm_not_configured(out: &Assert, vars: &[&str]) {
    let v = stdout_json(out);
    assert_eq!(v["code"], "LLM_NOT_CONFIGURED");
    let message = v["message"].as_str().unwrap();
    for var in vars {
        assert!(message.contains(var), "{var}: {v}");
    }
}

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
