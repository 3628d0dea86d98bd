//! A caller's request to stop a patch (#37.7): the HTTP client went away, an MCP client sent
//! `notifications/cancelled`, or a plan run was cancelled or ran out of time.
//!
//! A patch looks at it before it reads the workbook, after it parsed it, before each op, every
//! [`CELLS_PER_CHECK`] cells an op writes, while the formula engine evaluates and before the
//! save; once it is set the patch ends with [`Error::Cancelled`] (`CANCELLED`) and writes
//! nothing. A save already under way finishes (it is one atomic rename), so a stop never
//! leaves half a workbook. The formula engine cannot be interrupted inside IronCalc: its
//! thread, bounded by the engine's work budget, ends on its own after the patch has answered.
//!
//! It is a predicate rather than a token type so this crate needs no async runtime: callers
//! wrap their own token (`Stop::when(move || token.is_cancelled())`).

use std::sync::Arc;

use crate::error::Error;

/// Cells an op writes between two looks at the stop.
pub(crate) const CELLS_PER_CHECK: u64 = 4_096;

/// Whether the caller wants the patch to stop. The default never stops.
#[derive(Clone, Default)]
pub struct Stop(Option<Arc<dyn Fn() -> bool + Send + Sync>>);

impl Stop {
    /// A stop that is set once `stopped` answers true.
    pub fn when(stopped: impl Fn() -> bool + Send + Sync + 'static) -> Stop {
        Stop(Some(Arc::new(stopped)))
    }

    /// Whether the caller asked to stop.
    pub fn is_set(&self) -> bool {
        self.0.as_ref().is_some_and(|stopped| stopped())
    }

    /// [`Error::Cancelled`] once the caller asked to stop.
    pub(crate) fn check(&self) -> Result<(), Error> {
        if self.is_set() {
            Err(Error::Cancelled)
        } else {
            Ok(())
        }
    }
}

impl std::fmt::Debug for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            Some(_) => "Stop(when)",
            None => "Stop(never)",
        })
    }
}
