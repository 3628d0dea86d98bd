#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! keiri-agent against the fake OpenAI-compatible server (no key, no network): the router,
//! skillpacks, the tool-calling loop with scopes and the circuit breaker, the approval gate
//! and undo. Tests assert on the requests sent to the model as well as on the events.

mod approval;
mod chat;
mod router;
mod session;
mod skillpack;
mod tools;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use keiri_agent::{
    Agent, ChatInput, ChatOutcome, Event, Session, Skill, ToolContext, ToolRegistry,
    builtin_registry,
};
use keiri_llm::testkit::{FakeServer, RecordedRequest, Reply, TestClock};
use keiri_llm::{Env, Llm, NoJitter};
use serde_json::Value;

/// Awaits a tool call (tools are `async`) on a runtime of its own.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The shipped skillpacks (they are part of the repo and must load without issues).
pub fn skills() -> Vec<Skill> {
    let (skills, issues) = keiri_agent::skillpack::load_dirs(&[repo_root().join("skillpacks")]);
    assert!(issues.is_empty(), "skillpack issues: {issues:?}");
    skills
}

/// A model on the fake server: test clock, no jitter, no retries on 5xx surprises.
pub fn llm(base_url: &str) -> Llm {
    let env = Env::from_pairs([
        ("KEIRI_LLM_BASE_URL", base_url),
        ("KEIRI_LLM_MODEL", "test-model"),
        ("KEIRI_LLM_MAX_RETRIES", "0"),
    ]);
    Llm::from_env(&env)
        .unwrap()
        .with_clock(Arc::new(TestClock::fixed()))
        .with_jitter(Arc::new(NoJitter))
        .with_timeout(Duration::from_secs(10))
}

pub const PLAN: &str = "id: p\ngraph:\n  - id: read\n    block: csv.read\n    in: {path: invoices.csv, encoding: utf-8}\n    out: {rows: rows}\n";

/// Adds a csv.write node after `read`.
pub const PLAN_PATCH: &str = "--- a/plan.yaml\n+++ b/plan.yaml\n@@ -4,3 +4,6 @@\n     block: csv.read\n     in: {path: invoices.csv, encoding: utf-8}\n     out: {rows: rows}\n+  - id: out\n+    block: csv.write\n+    in: {rows: \"${read.rows}\"}\n";

pub const PLAN_AFTER: &str = "id: p\ngraph:\n  - id: read\n    block: csv.read\n    in: {path: invoices.csv, encoding: utf-8}\n    out: {rows: rows}\n  - id: out\n    block: csv.write\n    in: {rows: \"${read.rows}\"}\n";

/// A workspace with `plan.yaml`.
pub fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    keiri_fs::write_atomic(&ws.path().join("plan.yaml"), PLAN.as_bytes()).unwrap();
    ws
}

/// The tool context of a workspace: its path policy, the repo's catalog, the plan as the
/// current plan.
pub fn tool_ctx(ws: &Path) -> ToolContext {
    ToolContext::new(ws, keiri_fs::PathPolicy::new([ws]))
        .with_catalog_dirs(vec![repo_root().join("block_specs")])
        .with_plan_path(Some("plan.yaml".into()))
}

/// One turn against scripted replies: the outcome, the events and the requests the model got.
pub struct TurnRun {
    pub outcome: Result<ChatOutcome, keiri_agent::Error>,
    pub events: Vec<Event>,
    pub requests: Vec<RecordedRequest>,
}

pub async fn turn(
    replies: Vec<Reply>,
    session: &mut Session,
    ctx: &ToolContext,
    input: ChatInput,
    configure: impl FnOnce(&mut Agent<'_>),
) -> TurnRun {
    let (url, server) = FakeServer::start(replies).await.unwrap();
    let llm = llm(&url);
    let registry: ToolRegistry = builtin_registry();
    let skills = skills();
    let mut agent = Agent::new(&llm, &registry, &skills);
    configure(&mut agent);
    let mut events = Vec::new();
    let outcome = keiri_agent::chat(&agent, session, ctx, &input, &mut |e| events.push(e)).await;
    TurnRun {
        outcome,
        events,
        requests: server.requests(),
    }
}

pub fn input(message: &str) -> ChatInput {
    ChatInput {
        message: message.into(),
        ..ChatInput::default()
    }
}

/// The type names of events, in order.
pub fn kinds(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// The tool results (`role: tool` messages) of a recorded request, parsed.
pub fn tool_results(request: &RecordedRequest) -> Vec<Value> {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect()
}

/// The names of the tools offered in a recorded request.
pub fn offered_tools(request: &RecordedRequest) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Writes a file for a test (setup only; product writes go through keiri-fs).
pub fn put(path: impl AsRef<Path>, bytes: impl AsRef<[u8]>) {
    #[allow(clippy::disallowed_methods)]
    std::fs::write(path, bytes).unwrap();
}
