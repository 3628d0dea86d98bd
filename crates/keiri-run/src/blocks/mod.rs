//! The builtin blocks: `blocks/<category>/<block>.rs`, one file per block, where the category
//! is the block's directory under `block_specs/` and the file name is the block id with dots
//! turned into underscores (`csv.read` → `input/csv_read.rs`; a leading category is dropped:
//! `matching.fuzzy_match` → `matching/fuzzy_match.rs`). Each file registers its block with
//! `builtin!` (in `lib.rs`) under the block's function, so adding a block touches that one
//! file, its `mod` line in `<category>.rs` and its spec. `<category>.rs` holds what several
//! blocks of the category share; what blocks of several categories share is in [`kit`].

use crate::block::{BlockContext, BlockError, ErrorCode};

mod ai;
mod control;
mod input;
mod integration;
pub(crate) mod kit;
mod matching;
mod output;
mod transforms;
mod ui;

pub use kit::outputs::DEFAULT_OUT_DIR;

/// `INPUT_INVALID` with a message in both languages.
pub(crate) fn invalid(ja: impl Into<String>, en: impl Into<String>) -> BlockError {
    BlockError::new(ErrorCode::InputInvalid, ja, en)
}

/// `CANCELLED` once the run is cancelled or the node timed out: long loops call it.
pub(crate) fn cancelled(ctx: &BlockContext<'_>) -> Result<(), BlockError> {
    if ctx.cancel.is_cancelled() {
        return Err(BlockError::new(
            ErrorCode::Cancelled,
            "実行が取り消されました",
            "the run was cancelled",
        ));
    }
    Ok(())
}
