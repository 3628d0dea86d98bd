//! Time and randomness, passed in so tests are deterministic.
//!
//! Backoff sleeps, log timestamps and durations go through a [`Clock`]; backoff jitter comes
//! from a [`Jitter`]. Per-attempt timeouts use the runtime's real timer on purpose: they must
//! interrupt a real network wait.

use std::collections::hash_map::RandomState;
use std::fmt;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

/// A boxed, sendable future (what the object-safe traits of this crate return).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Wall-clock time, a monotonic stopwatch and sleeping.
pub trait Clock: Send + Sync + fmt::Debug {
    /// Now, for timestamps and for resolving a `Retry-After` date.
    fn now(&self) -> DateTime<Utc>;
    /// Time since an arbitrary fixed origin, for durations.
    fn monotonic(&self) -> Duration;
    /// Completes after `duration`.
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()>;
}

/// The real clock.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    origin: Instant,
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock {
            origin: Instant::now(),
        }
    }
}

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }

    fn monotonic(&self) -> Duration {
        self.origin.elapsed()
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// A source of numbers in `[0, 1)` that spread retries of many clients apart.
pub trait Jitter: Send + Sync + fmt::Debug {
    fn sample(&self) -> f64;
}

/// Always 0: backoff delays are exactly the policy's.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoJitter;

impl Jitter for NoJitter {
    fn sample(&self) -> f64 {
        0.0
    }
}

/// Pseudo-random jitter from the standard library's randomly keyed hasher; good enough to
/// de-synchronise retries, and it needs no RNG dependency.
#[derive(Debug, Default)]
pub struct RandomJitter {
    state: RandomState,
    counter: AtomicU64,
}

impl Jitter for RandomJitter {
    fn sample(&self) -> f64 {
        let mut h = self.state.build_hasher();
        h.write_u64(self.counter.fetch_add(1, Ordering::Relaxed));
        // 53 random bits as a fraction in [0, 1).
        (h.finish() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A fresh identifier suffix: 6 hex digits from the same hasher.
pub(crate) fn random_hex6() -> String {
    let mut h = RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    format!("{:06x}", h.finish() & 0xff_ffff)
}
