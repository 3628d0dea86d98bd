//! `output/*`: the builtins that write what a run produced — a styled Excel report, a
//! patched copy of an existing workbook, CSV in the encoding the receiving system expects,
//! journal CSVs for accounting software, and Markdown reports.
//!
//! Every file goes under the node's output directory (`ctx.out_dir`, inside the run
//! directory): an `out_dir` the plan names becomes a folder inside it (`..` is refused), so
//! a run never writes into the user's folders. Only when the user passed `--write`
//! (`ctx.write`) is the plan's `out_dir` used as it is, relative to the workspace.
//! Files are written atomically (keiri-fs), and an existing file is handled by
//! `on_conflict` (rename by default, so nothing is overwritten silently).
//!
//! Dependencies and why:
//! * `rust_xlsxwriter` writes new workbooks: the maintained, feature-complete xlsx writer
//!   for Rust (a port of Python's XlsxWriter, which openpyxl users know), with formats,
//!   frozen panes, column widths and real dates, and no C dependency. Its default features
//!   are off; it brings only `zip` with deflate.
//! * `keiri-xlsx` patches existing workbooks (and adds a sheet to a copy of one), because it
//!   keeps every part it does not touch byte for byte; a writer that re-serialises a whole
//!   workbook loses charts, pivots and macros.
//! * `encoding_rs` encodes CSV to Shift_JIS/CP932 (its `Shift_JIS` is the WHATWG
//!   definition, which is Windows-31J = CP932, the encoding Japanese software means).
//! * `unicode-width` counts East Asian wide characters as two columns for column widths.

mod csv_write;
mod excel_patch_workbook;
mod excel_write_table;
mod journal_export;
mod report_markdown;
mod report_summary;

use std::path::{Component, Path, PathBuf};

use keiri_xlsx::{OnConflict, PatchOp, PatchRequest};
use rust_xlsxwriter::{Color, ExcelDateTime, Format, FormatBorder, Workbook};
use serde_json::{Value as Json, json};
use unicode_width::UnicodeWidthStr;

use super::invalid;
use crate::block::{BlockContext, BlockError, ErrorCode, Inputs, Outputs, Registry};
use crate::jp::parse_date;
use crate::value::Row;

// ---------------------------------------------------------------------------------------
// Shared helpers

fn failed(ja: impl Into<String>, en: impl Into<String>) -> BlockError {
    BlockError::new(ErrorCode::BlockFailed, ja, en)
}

/// A path the plan names, as a path inside the run folder: root and drive prefixes are
/// dropped (`/reports/3月` becomes `reports/3月`), `..` is refused.
fn inside_run(key: &str, text: &str) -> Result<PathBuf, BlockError> {
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
        Ok(ctx.base_dir.join(text))
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
fn target_dir(
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

fn file_name(inputs: &Inputs, default: &str) -> Result<String, BlockError> {
    let name = inputs
        .str("out_name")?
        .unwrap_or(default)
        .trim()
        .to_string();
    let plain = !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\'])
        && Path::new(&name).components().count() == 1;
    if !plain {
        return Err(invalid(
            format!(
                "out_name {name:?} はファイル名だけにしてください（フォルダは out_dir で指定します）"
            ),
            format!("out_name {name:?} must be a file name only (folders go in out_dir)"),
        ));
    }
    Ok(name)
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

/// Writes `bytes` as `dir/name` by the conflict rule; `None` when skipped.
pub(crate) fn save(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    conflict: OnConflict,
) -> Result<Option<PathBuf>, BlockError> {
    let path = dir.join(name);
    let io = |e: keiri_fs::Error| {
        failed(
            format!("{} を保存できませんでした: {e}", path.display()),
            format!("could not save {}: {e}", path.display()),
        )
    };
    match conflict {
        OnConflict::Overwrite => keiri_fs::write_atomic(&path, bytes)
            .map(|()| Some(path.clone()))
            .map_err(io),
        OnConflict::Skip => match keiri_fs::write_new(&path, bytes) {
            Ok(()) => Ok(Some(path.clone())),
            Err(keiri_fs::Error::AlreadyExists { .. }) => Ok(None),
            Err(e) => Err(io(e)),
        },
        OnConflict::Rename => {
            let (stem, ext) = stem_and_ext(name);
            keiri_fs::write_unique(dir, &stem, &ext, 1, bytes)
                .map(Some)
                .map_err(io)
        }
    }
}

/// A file name's stem and its extension with the dot (`("報告", ".xlsx")`; `""` without one).
pub(crate) fn stem_and_ext(name: &str) -> (String, String) {
    let p = Path::new(name);
    let stem = p
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = p
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    (stem, ext)
}

fn path_text(p: &Option<PathBuf>) -> Json {
    json!(
        p.as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    )
}

/// Column names in first-appearance order over all rows.
fn all_columns(rows: &[Row]) -> Vec<String> {
    let mut seen = indexmap::IndexSet::new();
    for r in rows {
        for k in r.keys() {
            seen.insert(k.clone());
        }
    }
    seen.into_iter().collect()
}

fn columns(inputs: &Inputs, rows: &[Row]) -> Result<Vec<String>, BlockError> {
    Ok(match inputs.strings("columns")? {
        Some(c) if !c.is_empty() => c,
        _ => all_columns(rows),
    })
}

/// A cell as text: strings as they are, numbers as JSON prints them, objects as JSON.
fn text(v: Option<&Json>) -> String {
    match v {
        None | Some(Json::Null) => String::new(),
        Some(Json::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn patch_error(e: keiri_xlsx::Error) -> BlockError {
    let code = if e.code() == "FILE_NOT_FOUND" || e.code() == "NOT_FOUND" {
        ErrorCode::FileNotFound
    } else {
        ErrorCode::BlockFailed
    };
    BlockError::new(
        code,
        format!("ブックを更新できませんでした: {e}"),
        format!("could not patch the workbook: {e}"),
    )
}

// ---------------------------------------------------------------------------------------
// csv.write and journal.export

#[derive(Clone, Copy, PartialEq, Debug)]
enum CsvEncoding {
    Utf8,
    Utf8Bom,
    ShiftJis,
}

fn csv_encoding(name: &str) -> Result<CsvEncoding, BlockError> {
    match name.trim().to_ascii_lowercase().replace('_', "-").as_str() {
        "utf-8" | "utf8" => Ok(CsvEncoding::Utf8),
        "utf-8-sig" | "utf8-sig" | "utf-8-bom" => Ok(CsvEncoding::Utf8Bom),
        "shift-jis" | "sjis" | "cp932" | "windows-31j" | "ms932" => Ok(CsvEncoding::ShiftJis),
        _ => Err(BlockError::input_invalid(
            "encoding",
            "utf-8・utf-8-sig・shift_jis・cp932 のどれかです",
            "expected utf-8, utf-8-sig, shift_jis or cp932",
        )),
    }
}

// ---------------------------------------------------------------------------------------
// report.markdown and report.summary

fn md_cell(v: Option<&Json>) -> String {
    text(v).replace('|', "\\|").replace(['\r', '\n'], " ")
}

/// A Markdown table of `rows` (columns in first-appearance order), at most `max` rows.
fn md_table(rows: &[Row], max: usize) -> String {
    if rows.is_empty() {
        return "（該当なし / none）\n".to_string();
    }
    let cols = all_columns(rows);
    let mut out = format!(
        "| {} |\n|{}|\n",
        cols.iter()
            .map(|c| c.replace('|', "\\|"))
            .collect::<Vec<_>>()
            .join(" | "),
        vec!["---"; cols.len()].join("|")
    );
    for r in rows.iter().take(max) {
        out.push_str(&format!(
            "| {} |\n",
            cols.iter()
                .map(|c| md_cell(r.get(c)))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    if rows.len() > max {
        let more = rows.len() - max;
        out.push_str(&format!("\n（ほか {more} 行 / {more} more rows）\n"));
    }
    out
}
