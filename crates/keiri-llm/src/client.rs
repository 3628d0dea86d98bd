//! [`Llm`]: chat and embeddings calls with timeouts, retries and cancellation, over any
//! [`Provider`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio_util::sync::CancellationToken;

use crate::Error;
use crate::chat::{ChatRequest, ChatResponse, Usage};
use crate::config::{Env, LlmConfig, ProviderKind};
use crate::embed::{Embeddings, wire_inputs};
use crate::log::{Event, EventLog};
use crate::provider::{OpenAiProvider, Provider, ProviderError, Settings};
use crate::redact::Redactor;
use crate::retry::RetryPolicy;
use crate::strategy::Strategy;
use crate::time::{BoxFuture, Clock, Jitter, RandomJitter, SystemClock};

/// Per-call options: cancellation, the stage name for the log, and the log.
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    /// Cancelling it ends the call (in flight or while waiting to retry) with
    /// [`Error::Cancelled`].
    pub cancel: CancellationToken,
    /// The generation stage, written on every event of the call.
    pub stage: String,
    /// Where attempts are logged (nothing is logged without one).
    pub log: Option<EventLog>,
}

impl CallOptions {
    pub fn new() -> CallOptions {
        CallOptions::default()
    }

    pub fn with_cancel(mut self, cancel: CancellationToken) -> CallOptions {
        self.cancel = cancel;
        self
    }

    pub fn with_stage(mut self, stage: impl Into<String>) -> CallOptions {
        self.stage = stage.into();
        self
    }

    pub fn with_log(mut self, log: EventLog) -> CallOptions {
        self.log = Some(log);
        self
    }

    fn stage(&self) -> &str {
        if self.stage.is_empty() {
            "llm"
        } else {
            &self.stage
        }
    }
}

/// What the provider is known to reject, learnt during this session so that later calls do
/// not repeat a request that cannot succeed.
#[derive(Debug, Default)]
pub(crate) struct Capabilities {
    json_schema_rejected: AtomicBool,
    function_call_rejected: AtomicBool,
}

impl Capabilities {
    pub(crate) fn rejected(&self, s: Strategy) -> bool {
        match s {
            Strategy::JsonSchema => self.json_schema_rejected.load(Ordering::Relaxed),
            Strategy::FunctionCall => self.function_call_rejected.load(Ordering::Relaxed),
            Strategy::FreeForm => false,
        }
    }

    pub(crate) fn remember_rejected(&self, s: Strategy) {
        match s {
            Strategy::JsonSchema => self.json_schema_rejected.store(true, Ordering::Relaxed),
            Strategy::FunctionCall => self.function_call_rejected.store(true, Ordering::Relaxed),
            Strategy::FreeForm => {}
        }
    }
}

/// A configured model: [`Llm::chat`] for conversations with tools, [`Llm::structured`] for
/// typed JSON output. Cheap to clone; clones share what was learnt about the provider.
#[derive(Debug, Clone)]
pub struct Llm {
    provider: Arc<dyn Provider>,
    settings: Settings,
    timeout: Duration,
    retry: RetryPolicy,
    clock: Arc<dyn Clock>,
    jitter: Arc<dyn Jitter>,
    pub(crate) capabilities: Arc<Capabilities>,
}

impl Llm {
    /// A model from `config` over async-openai, with the real clock and random jitter.
    pub fn new(config: &LlmConfig) -> Result<Llm, Error> {
        let provider = OpenAiProvider::new(&config.provider, &Redactor::default())?;
        Ok(Llm::with_provider(Arc::new(provider), config))
    }

    /// Resolves the configuration from `env` (see [`LlmConfig::from_env`]); messages from the
    /// server are also scrubbed of every secret-looking variable of `env`.
    pub fn from_env(env: &Env) -> Result<Llm, Error> {
        let config = LlmConfig::from_env(env)?;
        let provider = OpenAiProvider::new(&config.provider, &Redactor::from_env(env))?;
        Ok(Llm::with_provider(Arc::new(provider), &config))
    }

    /// A model over any provider (model, temperature, timeout and retries from `config`).
    pub fn with_provider(provider: Arc<dyn Provider>, config: &LlmConfig) -> Llm {
        Llm {
            provider,
            settings: Settings {
                model: config.model.clone(),
                temperature: config.temperature,
            },
            timeout: config.timeout,
            retry: config.retry.clone(),
            clock: Arc::new(SystemClock::default()),
            jitter: Arc::new(RandomJitter::default()),
            capabilities: Arc::new(Capabilities::default()),
        }
    }

    /// Uses `clock` for backoff sleeps, timestamps and durations.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Llm {
        self.clock = clock;
        self
    }

    /// Uses `jitter` for backoff delays.
    pub fn with_jitter(mut self, jitter: Arc<dyn Jitter>) -> Llm {
        self.jitter = jitter;
        self
    }

    pub fn with_timeout(mut self, timeout: Duration) -> Llm {
        self.timeout = timeout;
        self
    }

    pub fn with_retry(mut self, retry: RetryPolicy) -> Llm {
        self.retry = retry;
        self
    }

    /// The same provider (and what was learnt about it) with another model, for a caller that
    /// lets the user pick one per task (the `model` input of the `ai.*` blocks).
    pub fn with_model(mut self, model: impl Into<String>) -> Llm {
        self.settings.model = model.into();
        self
    }

    /// The same provider with another sampling temperature.
    pub fn with_temperature(mut self, temperature: f32) -> Llm {
        self.settings.temperature = temperature;
        self
    }

    pub fn model(&self) -> &str {
        &self.settings.model
    }

    pub fn temperature(&self) -> f32 {
        self.settings.temperature
    }

    pub fn provider_kind(&self) -> ProviderKind {
        self.provider.kind()
    }

    pub(crate) fn clock(&self) -> &dyn Clock {
        self.clock.as_ref()
    }

    pub(crate) fn event(&self, options: &CallOptions, name: &str) -> Event {
        let mut e = Event::new(options.stage(), name);
        e.provider = Some(self.provider.kind());
        e.model = Some(self.settings.model.clone());
        e
    }

    /// One chat completion, retried on 429, 5xx, connection failures and timeouts.
    ///
    /// Each attempt has the configured timeout. Between attempts it waits for the server's
    /// `Retry-After` when given (failing at once if that exceeds the policy's limit), else the
    /// exponential backoff. Cancellation is honoured before, during and between attempts.
    pub async fn chat(
        &self,
        request: &ChatRequest,
        options: &CallOptions,
    ) -> Result<ChatResponse, Error> {
        self.retried(options, || self.provider.send(request, &self.settings))
            .await
    }

    /// The embeddings of `texts` (one vector per text, in order) from the configured model,
    /// with the same timeout, retries, cancellation and log as [`Llm::chat`]. Texts are cut
    /// to [`crate::MAX_EMBED_TEXT_CHARS`] and blanks sent as one space, as the API requires;
    /// the caller batches (one call is one request).
    pub async fn embed(
        &self,
        texts: &[String],
        options: &CallOptions,
    ) -> Result<Embeddings, Error> {
        let inputs = wire_inputs(texts);
        self.retried(options, || self.provider.embed(&inputs, &self.settings))
            .await
    }

    /// Runs `send` until it succeeds, fails for good, runs out of attempts or is cancelled.
    async fn retried<'a, T: Answer>(
        &'a self,
        options: &CallOptions,
        send: impl Fn() -> BoxFuture<'a, Result<T, ProviderError>>,
    ) -> Result<T, Error> {
        let started = self.clock.monotonic();
        let max_attempts = self.retry.max_retries.saturating_add(1);
        let mut attempt = 0;
        loop {
            attempt += 1;
            if options.cancel.is_cancelled() {
                return Err(self.log_cancelled(options, attempt));
            }
            let attempt_started = self.clock.monotonic();
            let outcome = tokio::select! {
                biased;
                () = options.cancel.cancelled() => {
                    return Err(self.log_cancelled(options, attempt));
                }
                r = tokio::time::timeout(self.timeout, send()) => r,
            };
            let took = self.clock.monotonic().saturating_sub(attempt_started);
            let failure = match outcome {
                Ok(Ok(mut response)) => {
                    response.finish(
                        attempt,
                        millis(self.clock.monotonic().saturating_sub(started)),
                    );
                    if let Some(log) = &options.log {
                        log.record_lossy(
                            self.event(options, "llm.attempt")
                                .ok()
                                .attempt(attempt)
                                .duration(took)
                                .usage(response.usage()),
                        );
                    }
                    return Ok(response);
                }
                Ok(Err(e)) => Failure::Provider(e),
                Err(_elapsed) => Failure::Timeout,
            };
            let retryable = failure.retryable(&self.retry);
            let final_error = failure
                .clone()
                .into_error(attempt, self.timeout, self.clock.now());
            if let Some(log) = &options.log {
                let mut e = self
                    .event(options, "llm.attempt")
                    .failed(&final_error)
                    .attempt(attempt)
                    .duration(took);
                e.http_status = failure.status();
                log.record_lossy(e.with("retryable", retryable));
            }
            if !retryable || attempt >= max_attempts {
                return Err(final_error);
            }
            let delay = match failure.retry_after() {
                Some(ra) => {
                    let wait = ra.delay_from(self.clock.now());
                    if wait > self.retry.max_retry_after {
                        return Err(final_error);
                    }
                    wait
                }
                None => self.retry.backoff(attempt, self.jitter.sample()),
            };
            tokio::select! {
                biased;
                () = options.cancel.cancelled() => {
                    return Err(self.log_cancelled(options, attempt + 1));
                }
                () = self.clock.sleep(delay) => {}
            }
        }
    }

    fn log_cancelled(&self, options: &CallOptions, attempt: u32) -> Error {
        let err = Error::Cancelled;
        if let Some(log) = &options.log {
            log.record_lossy(
                self.event(options, "llm.attempt")
                    .failed(&err)
                    .attempt(attempt),
            );
        }
        err
    }
}

/// What a successful attempt tells the retry loop, and how it is told its totals.
trait Answer {
    fn usage(&self) -> Usage;
    fn finish(&mut self, attempts: u32, duration_ms: u64);
}

impl Answer for ChatResponse {
    fn usage(&self) -> Usage {
        self.usage
    }

    fn finish(&mut self, attempts: u32, duration_ms: u64) {
        self.attempts = attempts;
        self.duration_ms = duration_ms;
    }
}

impl Answer for Embeddings {
    fn usage(&self) -> Usage {
        self.usage
    }

    fn finish(&mut self, attempts: u32, duration_ms: u64) {
        self.attempts = attempts;
        self.duration_ms = duration_ms;
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// One failed attempt.
#[derive(Debug, Clone)]
enum Failure {
    Provider(ProviderError),
    Timeout,
}

impl Failure {
    fn retryable(&self, policy: &RetryPolicy) -> bool {
        match self {
            Failure::Timeout => policy.retry_timeouts,
            Failure::Provider(ProviderError::Http { status, .. }) => {
                *status == 429 || (500..=599).contains(status)
            }
            Failure::Provider(ProviderError::Connection { .. }) => true,
            Failure::Provider(_) => false,
        }
    }

    fn status(&self) -> Option<u16> {
        match self {
            Failure::Provider(ProviderError::Http { status, .. }) => Some(*status),
            _ => None,
        }
    }

    fn retry_after(&self) -> Option<crate::retry::RetryAfter> {
        match self {
            Failure::Provider(ProviderError::Http { retry_after, .. }) => *retry_after,
            _ => None,
        }
    }

    /// The error to return if this is the last attempt.
    fn into_error(self, attempts: u32, timeout: Duration, now: DateTime<Utc>) -> Error {
        match self {
            Failure::Timeout => Error::Timeout {
                after: timeout,
                attempts,
            },
            Failure::Provider(ProviderError::Http {
                status,
                message,
                error_code,
                param,
                retry_after,
            }) => match status {
                429 => Error::RateLimited {
                    attempts,
                    retry_after: retry_after.map(|r| r.delay_from(now)),
                    message,
                },
                401 | 403 => Error::Unauthorized { status, message },
                500..=599 => Error::ServerError {
                    status,
                    attempts,
                    message,
                },
                _ => Error::Rejected {
                    status,
                    message,
                    error_code,
                    param,
                },
            },
            Failure::Provider(ProviderError::Connection { message }) => {
                Error::Connection { attempts, message }
            }
            Failure::Provider(ProviderError::InvalidResponse { message }) => {
                Error::ResponseInvalid { reason: message }
            }
            Failure::Provider(ProviderError::Request { message }) => {
                Error::Transport { reason: message }
            }
        }
    }
}
