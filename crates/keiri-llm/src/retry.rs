//! When and how long to wait before retrying.

use std::time::Duration;

use chrono::{DateTime, Utc};

/// Retries of one chat call: 429, 5xx, connection failures and (by default) timeouts are
/// retried with exponential backoff; a server's `Retry-After` replaces the backoff.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0 = one attempt only).
    pub max_retries: u32,
    /// The first backoff delay; doubled on each retry.
    pub base_delay: Duration,
    /// The longest backoff delay.
    pub max_delay: Duration,
    /// A `Retry-After` longer than this is not waited for: the call fails as rate limited
    /// (a session must not sleep for an hour because a server said so).
    pub max_retry_after: Duration,
    /// Whether an attempt that timed out is retried.
    pub retry_timeouts: bool,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(120),
            retry_timeouts: true,
        }
    }
}

impl RetryPolicy {
    /// The delay before retry number `retry` (1-based) without a `Retry-After`:
    /// `base * 2^(retry-1)`, capped at `max_delay`, then reduced by up to half by `jitter`
    /// (in `[0, 1)`), so a jitter of 0 gives the exact exponential delay.
    pub fn backoff(&self, retry: u32, jitter: f64) -> Duration {
        let exp = 2u32.saturating_pow(retry.saturating_sub(1).min(30));
        let delay = self.base_delay.saturating_mul(exp).min(self.max_delay);
        let jitter = if jitter.is_finite() {
            jitter.clamp(0.0, 1.0)
        } else {
            0.0
        };
        delay.mul_f64(1.0 - 0.5 * jitter)
    }
}

/// A server's request to wait, from `retry-after-ms` or `Retry-After`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryAfter {
    /// Wait this long.
    Delay(Duration),
    /// Wait until then (an HTTP date).
    At(DateTime<Utc>),
}

impl RetryAfter {
    /// Parses the headers' values; `retry-after-ms` (sent by OpenAI) wins because it is
    /// more precise. Unparseable values count as absent.
    pub fn parse(retry_after: Option<&str>, retry_after_ms: Option<&str>) -> Option<RetryAfter> {
        if let Some(ms) = retry_after_ms.and_then(|v| parse_non_negative(v.trim()))
            && let Ok(d) = Duration::try_from_secs_f64(ms / 1000.0)
        {
            return Some(RetryAfter::Delay(d));
        }
        let v = retry_after?.trim();
        if let Some(secs) = parse_non_negative(v) {
            return Duration::try_from_secs_f64(secs)
                .ok()
                .map(RetryAfter::Delay);
        }
        DateTime::parse_from_rfc2822(v)
            .ok()
            .map(|d| RetryAfter::At(d.with_timezone(&Utc)))
    }

    /// The wait from `now` (a date in the past means no wait).
    pub fn delay_from(self, now: DateTime<Utc>) -> Duration {
        match self {
            RetryAfter::Delay(d) => d,
            RetryAfter::At(at) => (at - now).to_std().unwrap_or(Duration::ZERO),
        }
    }
}

fn parse_non_negative(v: &str) -> Option<f64> {
    // Only plain decimal numbers: `f64::from_str` would also take "inf" and "1e999".
    if v.is_empty() || !v.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    v.parse::<f64>().ok().filter(|n| n.is_finite())
}
