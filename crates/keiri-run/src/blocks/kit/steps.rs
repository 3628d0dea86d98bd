//! The steps of a block's long loop: each step checks that the run goes on (cancelled, timed
//! out, past its memory budget) and reports how far the block has got, so a 50-second
//! matching node shows "120,000 / 200,000 rows" instead of only "running".

use crate::block::{BlockContext, BlockError, Progress, ProgressUnit};

/// Counts the steps of one loop over `total` units; [`Steps::next`] at the top of each
/// iteration replaces a bare [`crate::blocks::cancelled`] check.
pub(crate) struct Steps<'a, 'c> {
    ctx: &'a BlockContext<'c>,
    unit: ProgressUnit,
    total: Option<u64>,
    done: u64,
}

impl<'a, 'c> Steps<'a, 'c> {
    /// A loop over `total` units (`None` when not known ahead), reported at 0 done.
    pub(crate) fn new(
        ctx: &'a BlockContext<'c>,
        unit: ProgressUnit,
        total: Option<usize>,
    ) -> Steps<'a, 'c> {
        let steps = Steps {
            ctx,
            unit,
            total: total.map(|t| t as u64),
            done: 0,
        };
        steps.report();
        steps
    }

    /// One more step begins: `CANCELLED` once the run stops; else the steps before it are
    /// reported done.
    pub(crate) fn next(&mut self) -> Result<(), BlockError> {
        crate::blocks::cancelled(self.ctx)?;
        self.report();
        self.done += 1;
        Ok(())
    }

    /// `done` units are done (a reader that counts bytes): checks the run goes on and reports.
    pub(crate) fn advance_to(&mut self, done: u64) -> Result<(), BlockError> {
        crate::blocks::cancelled(self.ctx)?;
        self.done = done;
        self.report();
        Ok(())
    }

    fn report(&self) {
        self.ctx.calls.progress(Progress {
            done: self.done,
            total: self.total,
            unit: self.unit,
        });
    }
}
