//! LLM access for Keiri Studio: the planner's and the chat agent's only way to a model.
//!
//! * [`config`]: the provider from environment variables — OpenAI (`OPENAI_API_KEY`), Azure
//!   OpenAI (`AZURE_OPENAI_API_KEY`, `AZURE_OPENAI_ENDPOINT`, `AZURE_OPENAI_DEPLOYMENT`,
//!   `AZURE_OPENAI_API_VERSION`) or any OpenAI-compatible server (`KEIRI_LLM_BASE_URL`,
//!   optional `KEIRI_LLM_API_KEY`); model `KEIRI_LLM_MODEL` (default `gpt-4.1`), temperature 0.
//!   Variables come from an [`Env`] value (the process environment over the workspace's
//!   `.env`), so tests pass their own. With none set, [`Error::NotConfigured`] names them.
//! * [`effective`]: the configuration in effect when the process environment, `.env` and the
//!   saved settings each set some of it, and where each part came from.
//! * [`Llm::chat`]: one chat completion, with tools and tool calls for agent round trips;
//!   per-attempt timeout, retries with backoff on 429/5xx/connection errors honouring
//!   `Retry-After`, cancellation through a [`CancellationToken`], token usage per call.
//! * [`Llm::embed`]: embeddings (OpenAI, Azure OpenAI, compatible servers) with the same
//!   retries, timeout, cancellation, redaction and log as a chat call; keiri-search's
//!   OpenAI embedder is built on it.
//! * [`Llm::structured`]: typed JSON output — JSON Schema `response_format` (strict), then
//!   function calling, then free-form JSON extraction, with the strategy used recorded and the
//!   output validated against the schema ([`schema`]).
//! * [`EventLog`]: JSONL events of a generation run in `logs/keiri_agent.log` and
//!   `logs/runs/<run_id>.jsonl`, with every line scrubbed of secrets ([`Redactor`]).
//! * `testkit` (feature `testkit`): a fake OpenAI-compatible server that replays scripted
//!   answers and records requests, and a test clock, so no test needs a key.
//!
//! Time and randomness are injected ([`Clock`], [`Jitter`]). This crate must not know about
//! plans, prompts or blocks (that is `keiri-design`), must not read or change the process
//! environment except through [`Env::process`] / [`Env::load`], and must never write a key
//! anywhere: keys have no `Serialize`, their `Debug` is masked, provider messages and log lines
//! are redacted.
//!
//! Dependencies and why:
//! * `async-openai`: maintained OpenAI client whose configs build the OpenAI and Azure URLs,
//!   query and auth headers, and whose typed request matches the wire format. Its middleware
//!   hook replaces its own retry layer (ours honours `Retry-After` with an injected clock, logs
//!   attempts and can be cancelled) and bounds response sizes; `byot` lets us parse responses
//!   leniently, since compatible servers omit fields. Built without its default TLS provider
//!   (`rustls-no-provider`): `rustls` with `ring`, already compiled for the workspace, is
//!   installed instead of compiling aws-lc.
//! * `reqwest` 0.13, `http`, `tower-service`: exactly the versions async-openai's middleware
//!   interface is written against.
//! * `dotenvy`: the `.env` grammar (quotes, escapes, `export`) without mutating the process
//!   environment (`from_read_iter`).
//! * `tokio-util`: `CancellationToken`, tokio's standard cancellation handle, which a planner,
//!   a CLI's Ctrl-C handler and an HTTP request can all hold.
//! * `url`: URL validation and removing user info and queries before a URL is shown or logged.
//! * `chrono`: log timestamps and HTTP-date `Retry-After` values.
//! * `axum` (testkit only): the fake server, the same HTTP stack as `keiri serve`.

mod chat;
mod client;
pub mod config;
pub mod effective;
mod embed;
mod error;
pub mod extract;
mod log;
mod provider;
pub mod redact;
mod retry;
pub mod schema;
mod strategy;
mod structured;
mod time;

#[cfg(feature = "testkit")]
pub mod testkit;

pub use chat::{
    ChatRequest, ChatResponse, FinishReason, Message, ResponseFormat, ToolCall, ToolChoice,
    ToolSpec, Usage,
};
pub use client::{CallOptions, Llm};
pub use config::{
    ApiKey, DEFAULT_MODEL, Env, LlmConfig, ProviderConfig, ProviderKind, StatusProblem,
    StatusRequest, StatusResponse, status, status_for_workspace,
};
pub use embed::{Embeddings, MAX_EMBED_TEXT_CHARS};
pub use error::Error;
pub use log::{AGENT_LOG, Event, EventLog, RUNS_DIR, check_run_id, new_run_id};
pub use provider::{OpenAiProvider, Provider, ProviderError, Settings};
pub use redact::Redactor;
pub use retry::{RetryAfter, RetryPolicy};
pub use strategy::{Strategy, StrategyFailure};
pub use structured::{OutputSchema, Structured, StructuredRequest};
pub use time::{BoxFuture, Clock, Jitter, NoJitter, RandomJitter, SystemClock};
pub use tokio_util::sync::CancellationToken;
