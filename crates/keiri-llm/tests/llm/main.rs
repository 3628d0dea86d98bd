#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! keiri-llm against the fake OpenAI-compatible server: no key, no network.

mod config;
mod effective;
mod embed;
mod extract;
mod log;
mod providers;
mod redact;
mod retry;
mod schema;
mod structured;
mod tools;

use std::sync::Arc;
use std::time::Duration;

use keiri_llm::testkit::TestClock;
use keiri_llm::{Env, Llm, NoJitter};

/// The environment of an OpenAI-compatible server at `base_url`.
pub fn compatible_env(base_url: &str) -> Env {
    Env::from_pairs([
        ("KEIRI_LLM_BASE_URL", base_url),
        ("KEIRI_LLM_MODEL", "test-model"),
    ])
}

/// A model on the fake server with a test clock (sleeps return at once and are recorded),
/// no jitter and a short timeout.
pub fn llm_for(env: &Env) -> (Llm, Arc<TestClock>) {
    let clock = Arc::new(TestClock::fixed());
    let llm = Llm::from_env(env)
        .unwrap()
        .with_clock(clock.clone())
        .with_jitter(Arc::new(NoJitter))
        .with_timeout(Duration::from_secs(5));
    (llm, clock)
}

pub fn llm(base_url: &str) -> (Llm, Arc<TestClock>) {
    llm_for(&compatible_env(base_url))
}
