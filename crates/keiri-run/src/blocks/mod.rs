//! The builtin blocks, one module per catalog category (the directory names under
//! `block_specs/`). Each module has a `register` function that adds its blocks.

use crate::block::{BlockContext, BlockError, ErrorCode, Registry};

mod ai;
mod control;
mod input;
mod integration;
mod matching;
mod output;
mod transforms;
mod ui;

pub use output::DEFAULT_OUT_DIR;

/// Adds every builtin to `registry`.
pub fn register_all(registry: &mut Registry) {
    input::register(registry);
    transforms::register(registry);
    matching::register(registry);
    output::register(registry);
    control::register(registry);
    ui::register(registry);
    integration::register(registry);
    ai::register(registry);
}

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
