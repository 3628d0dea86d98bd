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
mod matching;
mod output;
mod transforms;
mod ui;

pub use output::DEFAULT_OUT_DIR;


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

/// The SHA-256 of `bytes` as 64 lowercase hex digits (the form every hash in a run's
/// outputs, logs and manifests takes).
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Japan Standard Time (UTC+9, no daylight saving): the zone times are shown in.
pub(crate) fn jst() -> chrono::FixedOffset {
    use chrono::Offset;
    chrono::FixedOffset::east_opt(9 * 3600).unwrap_or_else(|| chrono::Utc.fix())
}

/// `time` in JST as ISO 8601 with seconds and offset (`2025-03-31T09:30:00+09:00`).
pub(crate) fn jst_text(time: chrono::DateTime<chrono::Utc>) -> String {
    time.with_timezone(&jst())
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, false)
}
