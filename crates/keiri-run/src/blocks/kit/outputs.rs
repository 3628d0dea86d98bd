//! Where and how blocks write their output files: the node's folder unless `--write`,
//! atomically, with the `on_conflict` rule and output naming.

use crate::block::{BlockContext, BlockError, ErrorCode, Inputs};
use crate::blocks::invalid;
use keiri_xlsx::OnConflict;
use std::path::{Component, Path, PathBuf};

pub(crate) fn failed(ja: impl Into<String>, en: impl Into<String>) -> BlockError {
    BlockError::new(ErrorCode::BlockFailed, ja, en)
}

/// A path the plan names, as a path inside the run folder: root and drive prefixes are
/// dropped (`/reports/3月` becomes `reports/3月`), `..` is refused.
pub(crate) fn inside_run(key: &str, text: &str) -> Result<PathBuf, BlockError> {
    let text = text.replace('\\', "/");
    let mut out = PathBuf::new();
    for c in Path::new(&text).components() {
        match c {
            Component::Normal(part) => out.push(part),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                return Err(invalid(
                    format!("{key} {text:?} に .. は使えません"),
                    format!("{key} {text:?} must not contain .."),
                )
                .with_hint(
                    "実行の出力は実行フォルダに書かれ、確認後に --write で書き出せます",
                    "a run writes under its run folder; write for real with --write after review",
                ));
            }
        }
    }
    Ok(out)
}

/// Where a path the plan names for writing (input `key`) lands: with `--write` as it is,
/// relative to the workspace; otherwise inside the node's folder in the run directory (`..`
/// refused), so a run never writes into the user's folders. Every block that writes to a
/// path the plan names uses this one rule.
pub(crate) fn write_path(
    ctx: &BlockContext<'_>,
    key: &str,
    text: &str,
) -> Result<PathBuf, BlockError> {
    if ctx.write {
        // Outside the run folder: through the run's path policy (`PATH_DENIED`).
        crate::paths::resolve_write(ctx, text)
    } else {
        Ok(ctx.out_dir.join(inside_run(key, text)?))
    }
}

/// The folder, relative to the workspace, that a writing block uses when the plan names no
/// `out_dir` (the studio's dry-run preview uses the same one).
pub const DEFAULT_OUT_DIR: &str = "outputs";

/// The output directory of a block. Without `--write` (the default) every file goes under
/// the node's folder in the run directory, `out_dir` becoming a sub-folder of it; with
/// `--write` the `out_dir` the plan names is used as it is (relative to the workspace).
pub(crate) fn target_dir(
    ctx: &BlockContext<'_>,
    inputs: &Inputs,
    default: Option<&str>,
) -> Result<PathBuf, BlockError> {
    let requested = inputs
        .str("out_dir")?
        .or(default)
        .map(str::trim)
        .filter(|d| !d.is_empty());
    let dir = match requested {
        None => ctx.out_dir.to_path_buf(),
        Some(d) => write_path(ctx, "out_dir", d)?,
    };
    std::fs::create_dir_all(&dir).map_err(|e| {
        failed(
            format!("出力フォルダ {} を作れませんでした: {e}", dir.display()),
            format!("could not create the output folder {}: {e}", dir.display()),
        )
    })?;
    Ok(dir)
}

/// The `on_conflict` input: what to do when the file to write exists (`rename` by default).
pub(crate) fn on_conflict(inputs: &Inputs) -> Result<OnConflict, BlockError> {
    match inputs.str("on_conflict")? {
        None => Ok(OnConflict::Rename),
        Some(s) => s.parse().map_err(|_| {
            BlockError::input_invalid(
                "on_conflict",
                "overwrite・skip・rename のどれかです",
                "expected overwrite, skip or rename",
            )
        }),
    }
}

/// Writes `bytes` as `dir/name` by the conflict rule ([`keiri_fs::save`], the rule every
/// writer shares); `None` when skipped.
pub(crate) fn save(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    conflict: OnConflict,
) -> Result<Option<PathBuf>, BlockError> {
    keiri_fs::save(dir, name, bytes, conflict.into()).map_err(|e| not_saved(dir, name, e))
}

/// [`save`] of what `fill` writes, in pieces (`keiri_fs::save_with`): a file of millions of
/// rows is never whole in memory. `fill` fails with the block's own error, which comes back
/// as it is (nothing is written then); a failure of the disk is this block's save error.
pub(crate) fn save_with(
    dir: &Path,
    name: &str,
    conflict: OnConflict,
    fill: impl FnOnce(&mut std::fs::File) -> Result<(), Filling>,
) -> Result<Option<PathBuf>, BlockError> {
    let mut failure = None;
    let saved = keiri_fs::save_with(dir, name, conflict.into(), |file| match fill(file) {
        Ok(()) => Ok(()),
        Err(Filling::Io(e)) => Err(e),
        Err(Filling::Block(e)) => {
            failure = Some(e);
            Err(std::io::Error::other("the block stopped writing"))
        }
    });
    saved.map_err(|e| failure.unwrap_or_else(|| not_saved(dir, name, e)))
}

/// Why a [`save_with`] fill stopped: the disk, or the block's own error.
pub(crate) enum Filling {
    Io(std::io::Error),
    Block(BlockError),
}

impl From<std::io::Error> for Filling {
    fn from(e: std::io::Error) -> Filling {
        Filling::Io(e)
    }
}

impl From<BlockError> for Filling {
    fn from(e: BlockError) -> Filling {
        Filling::Block(e)
    }
}

fn not_saved(dir: &Path, name: &str, e: keiri_fs::Error) -> BlockError {
    let path = dir.join(name);
    failed(
        format!("{} を保存できませんでした: {e}", path.display()),
        format!("could not save {}: {e}", path.display()),
    )
}
