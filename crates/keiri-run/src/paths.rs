//! Where a block may read and write: every path a plan names goes through the run's
//! [`keiri_fs::PathPolicy`] ([`crate::RunOptions::paths`]), the same roots and deny globs as the
//! surface that started the run (`keiri serve` and the desktop app: the workspace; MCP:
//! `--root`/`--deny`; the CLI: the workspace and the files named on the command line, or
//! `--root`). `.env` files and the settings folder are denied by the caller's policy. A refused
//! path is `PATH_DENIED`; the engine adds the node to the message.
//!
//! Relative paths resolve against [`crate::block::BlockContext::base_dir`] (the workspace)
//! before the policy sees them, so a plan's `data/invoices.csv` means the same file on every
//! surface. What a block writes under its own node folder (`out_dir`) needs no root check: that
//! folder is the run's. The name of every file a block writes still passes the deny globs
//! ([`check_new_file`]), wherever it lands.

use std::path::{Path, PathBuf};

use crate::block::{BlockContext, BlockError, ErrorCode};

fn joined(ctx: &BlockContext<'_>, raw: &str) -> String {
    let p = Path::new(raw);
    if p.is_absolute() {
        raw.to_string()
    } else {
        ctx.base_dir.join(p).to_string_lossy().into_owned()
    }
}

/// An existing file or folder the plan names for reading, canonical and allowed.
///
/// A path that the policy allows but that does not exist is `FILE_NOT_FOUND`; a path whose
/// location is refused is `PATH_DENIED` whether or not it exists (no probing outside the roots).
pub fn resolve_read(ctx: &BlockContext<'_>, raw: &str) -> Result<PathBuf, BlockError> {
    refuse_suspicious(raw)?;
    let full = joined(ctx, raw);
    ctx.paths
        .resolve_existing(&full)
        .map_err(|e| path_error(raw, &full, &e))
}

/// A file the plan names for writing outside the run folder (`--write`): it may not exist yet;
/// its deepest existing folder must be allowed and the rest plain names.
pub fn resolve_write(ctx: &BlockContext<'_>, raw: &str) -> Result<PathBuf, BlockError> {
    refuse_suspicious(raw)?;
    let full = joined(ctx, raw);
    ctx.paths
        .resolve_new(&full)
        .map_err(|e| path_error(raw, &full, &e))
}

/// The file a block is about to write, `dir/name`, checked against the run's path policy
/// wherever it lands, its own run folder included: a plan never creates a file the surface
/// would refuse to hand out (a `.env`, a key file, a `--deny` match). `PATH_DENIED` naming
/// the file as the plan named it.
pub fn check_new_file(ctx: &BlockContext<'_>, dir: &Path, name: &str) -> Result<(), BlockError> {
    let full = dir.join(name);
    ctx.paths
        .resolve_new(&full.to_string_lossy())
        .map(|_| ())
        .map_err(|e| path_denied(name, &e))
}

/// `PATH_DENIED` for path text that a shell or URL parser would turn into another path (`~`,
/// `file:`, `%2e%2e`): judged on the plan's text, before it is joined to the workspace.
fn refuse_suspicious(raw: &str) -> Result<(), BlockError> {
    match keiri_fs::suspicious(raw) {
        Some(reason) => Err(path_denied(
            raw,
            &keiri_fs::Error::Refused {
                path: raw.to_string(),
                reason,
            },
        )),
        None => Ok(()),
    }
}

/// `PATH_DENIED` for a refused location, `FILE_NOT_FOUND` for one that is allowed but missing.
fn path_error(raw: &str, full: &str, error: &keiri_fs::Error) -> BlockError {
    match error {
        keiri_fs::Error::Io { source, .. } => BlockError::new(
            ErrorCode::FileNotFound,
            format!("ファイル {full} を読めません: {source}"),
            format!("cannot read {full}: {source}"),
        ),
        other => path_denied(raw, other),
    }
}

/// `PATH_DENIED` naming the path as the plan wrote it.
pub fn path_denied(raw: &str, error: &keiri_fs::Error) -> BlockError {
    BlockError::new(
        ErrorCode::PathDenied,
        format!("パス {raw:?} は使えません（許可されたフォルダの外か、拒否されたファイルです）: {error}"),
        format!("path {raw:?} is not allowed (outside the allowed folders, or denied): {error}"),
    )
    .with_hint(
        "ワークスペース（または --root で指定したフォルダ）の中のファイルを使ってください。.env や鍵ファイルは読めません",
        "use a file inside the workspace (or the folders given with --root); .env and key files cannot be read",
    )
}
