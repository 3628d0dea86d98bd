//! Reading the files a block names: paths against the workspace, a size limit, and
//! `FILE_NOT_FOUND` with the path when a file cannot be read.

use crate::block::{BlockContext, BlockError, ErrorCode};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Files larger than this are refused before reading (1 GiB: a 1,000,000-row journal is
/// about 100 MB).
pub(crate) const MAX_FILE_BYTES: u64 = 1 << 30;

/// `path` against the workspace (absolute paths stay as they are), through the run's path
/// policy ([`crate::paths::resolve_read`]): `PATH_DENIED` outside its roots.
pub(crate) fn resolve(ctx: &BlockContext<'_>, path: &str) -> Result<PathBuf, BlockError> {
    crate::paths::resolve_read(ctx, path)
}

pub(crate) fn not_found(path: &Path, e: &std::io::Error) -> BlockError {
    let shown = path.display();
    BlockError::new(
        ErrorCode::FileNotFound,
        format!("ファイル {shown} を読めません: {e}"),
        format!("cannot read {shown}: {e}"),
    )
}

/// Reads a whole file (capped), mapping a missing file to `FILE_NOT_FOUND`.
pub(crate) fn read_bytes(
    ctx: &BlockContext<'_>,
    path: &str,
) -> Result<(PathBuf, Vec<u8>), BlockError> {
    let full = resolve(ctx, path)?;
    let file = std::fs::File::open(&full).map_err(|e| not_found(&full, &e))?;
    let size = file.metadata().map_err(|e| not_found(&full, &e))?.len();
    if size > MAX_FILE_BYTES {
        return Err(BlockError::failed(
            format!("ファイルが大きすぎます（{size} バイト）"),
            format!("file is {size} bytes, over the limit of {MAX_FILE_BYTES}"),
        ));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| not_found(&full, &e))?;
    Ok((full, bytes))
}
