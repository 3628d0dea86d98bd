#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! keiri-design against the fake OpenAI-compatible server (no key, no network), asserting on
//! the requests sent as well as on the plans returned.

mod compose;
mod contract;
mod documents;
mod eval;
mod inquire;
mod repair;
mod schema;
mod select;
mod shapes;
mod transport;
mod values;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use keiri_design::{ApplyMode, Context, GenerateOptions, GeneratedPlan};
use keiri_llm::testkit::{FakeHandle, FakeServer, RecordedRequest, Script, TestClock};
use keiri_llm::{Env, Llm, NoJitter};
use keiri_plan::{Catalog, Templates};
use serde_json::{Value, json};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The repository's block catalog and templates (both are part of the repo).
pub fn catalog() -> Catalog {
    let dir = repo_root().join("block_specs");
    assert!(dir.is_dir(), "block catalog missing at {}", dir.display());
    let (catalog, issues) = Catalog::load(&[dir]);
    assert!(issues.is_empty(), "catalog issues: {issues:?}");
    catalog
}

pub fn templates() -> Templates {
    let dir = repo_root().join("templates");
    assert!(dir.is_dir(), "templates missing at {}", dir.display());
    let (templates, issues) = Templates::load(&[dir]);
    assert!(issues.is_empty(), "template issues: {issues:?}");
    templates
}

/// A model on the fake server: test clock (sleeps return at once), no jitter, short timeout.
pub fn llm(base_url: &str) -> (Llm, Arc<TestClock>) {
    let env = Env::from_pairs([
        ("KEIRI_LLM_BASE_URL", base_url),
        ("KEIRI_LLM_MODEL", "test-model"),
    ]);
    let clock = Arc::new(TestClock::fixed());
    let llm = Llm::from_env(&env)
        .unwrap()
        .with_clock(clock.clone())
        .with_jitter(Arc::new(NoJitter))
        .with_timeout(Duration::from_secs(5));
    (llm, clock)
}

pub const INSTRUCTION: &str = "請求書一覧のCSVを読み込んで、重複している請求書を検出してください";

/// LLM-only options with the two blocks of the test flow pinned as candidates.
pub fn options() -> GenerateOptions {
    GenerateOptions {
        plan_id: "dup_check".into(),
        apply_mode: ApplyMode::LlmOnly,
        pinned_blocks: vec!["csv.read".into(), "matching.duplicate_invoices".into()],
        ..GenerateOptions::default()
    }
}

/// The planner on the fake server: the server playing its script, a model on it (see [`llm`])
/// and the repository's catalog and templates.
pub struct Scripted {
    pub server: FakeHandle,
    pub llm: Llm,
    pub clock: Arc<TestClock>,
    pub catalog: Catalog,
    pub templates: Templates,
}

impl Scripted {
    pub async fn start(script: impl Into<Script>) -> Scripted {
        let (url, server) = FakeServer::start(script).await.unwrap();
        let (llm, clock) = llm(&url);
        Scripted {
            server,
            llm,
            clock,
            catalog: catalog(),
            templates: templates(),
        }
    }

    pub fn ctx(&self) -> Context<'_> {
        Context::new(&self.catalog, &self.templates).with_llm(&self.llm)
    }

    /// One `generate_plan` of [`INSTRUCTION`] (no document digest) with `options`.
    pub async fn generate(
        &self,
        options: &GenerateOptions,
    ) -> Result<GeneratedPlan, keiri_design::Error> {
        keiri_design::generate_plan(INSTRUCTION, "", options, &self.ctx()).await
    }
}

/// One planner run against a fake server playing `script`: the result, and the requests the
/// server received.
pub async fn run_scripted(
    script: impl Into<Script>,
    options: &GenerateOptions,
) -> (
    Result<GeneratedPlan, keiri_design::Error>,
    Vec<RecordedRequest>,
) {
    let scripted = Scripted::start(script).await;
    let result = scripted.generate(options).await;
    (result, scripted.server.requests())
}

pub fn skeleton(questions: Value) -> Value {
    json!({
        "reasoning": "read the CSV, then find duplicates",
        "nodes": [
            {"id": "read", "block": "csv.read", "purpose": "read the invoice list", "repeat": null, "calls_plan": null},
            {"id": "detect", "block": "matching.duplicate_invoices", "purpose": "find duplicates", "repeat": null, "calls_plan": null}
        ],
        "questions": questions
    })
}

/// A wiring of the test flow; `rows_ref` is what `detect.rows` reads, `path` what
/// `read.path` gets, `vars` the vars list.
pub fn wiring(path: &str, rows_ref: &str, vars: Value) -> Value {
    json!({
        "reasoning": "wired by type",
        "policy": null,
        "node_policies": [],
        "ui_layout": [],
        "vars": vars,
        "nodes": [
            {"id": "read", "block": "csv.read",
             "inputs": [{"key": "path", "value_json": serde_json::to_string(path).unwrap()}],
             "outputs": [{"key": "rows", "alias": "rows"}], "when": null},
            {"id": "detect", "block": "matching.duplicate_invoices",
             "inputs": [{"key": "rows", "value_json": serde_json::to_string(rows_ref).unwrap()}],
             "outputs": [{"key": "duplicates", "alias": "duplicates"}], "when": null}
        ]
    })
}

/// The text of every message of a recorded chat request, joined.
pub fn messages_text(request: &RecordedRequest) -> String {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text of the last message of a recorded chat request.
pub fn last_message(request: &RecordedRequest) -> String {
    request.body["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}
