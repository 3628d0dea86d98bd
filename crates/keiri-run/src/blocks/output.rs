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

mod bank_zengin_transfer;
mod csv_write;
mod excel_patch_workbook;
mod excel_write_table;
mod journal_export;
mod report_markdown;
mod report_summary;

pub use excel_patch_workbook::patch_workbook_request;

use std::path::{Path, PathBuf};

use serde_json::{Value as Json, json};

use super::invalid;
use crate::block::{BlockContext, BlockError, ErrorCode, Inputs};
use crate::blocks::kit::outputs::{DEFAULT_OUT_DIR, failed, on_conflict, save, target_dir};
use crate::value::Row;

// ---------------------------------------------------------------------------------------
// Shared helpers

/// The `out_name` a block writes in `dir` (else `default`): a plain file name, which the run's
/// path policy allows there (no `.env` or key file, even among the outputs).
fn out_file(
    ctx: &BlockContext<'_>,
    inputs: &Inputs,
    dir: &Path,
    default: &str,
) -> Result<String, BlockError> {
    let name = file_name(inputs, default)?;
    crate::paths::check_new_file(ctx, dir, &name)?;
    Ok(name)
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

fn path_text(p: &Option<PathBuf>) -> Json {
    json!(
        p.as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    )
}

/// Column names in first-appearance order over all rows.
fn all_columns(rows: &[Row]) -> Vec<String> {
    crate::value::columns_of(rows)
}

/// The columns to write: those the plan lists, else the rows'; a table with no rows still
/// has its columns (an empty quarter's report keeps its header).
fn columns(inputs: &Inputs, rows: &[Row]) -> Result<Vec<String>, BlockError> {
    Ok(match (inputs.strings("columns")?, inputs.get("rows")) {
        (Some(c), _) if !c.is_empty() => c,
        (_, Some(crate::value::Value::Table(df))) if rows.is_empty() => {
            crate::value::column_names(df)
        }
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

/// Where a block's workbook patch runs: inside the block's base folder (its paths were checked
/// against the run's policy first), stopped with the node (a cancelled run, a timeout, the
/// memory budget) between ops, every few thousand cells and while formulas are evaluated.
fn patch_env(ctx: &BlockContext<'_>) -> keiri_xlsx::PatchEnv {
    let mut env = keiri_xlsx::PatchEnv::new(keiri_fs::PathPolicy::trusted(ctx.base_dir));
    let token = ctx.cancel.clone();
    env.stop = keiri_xlsx::Stop::when(move || token.is_cancelled());
    env
}

/// A keiri-xlsx error as the block's error, by its variant (never by its code's text): a
/// missing file is `FILE_NOT_FOUND`, a refused path `PATH_DENIED`, a stopped patch
/// `CANCELLED`, anything else `BLOCK_FAILED`.
fn patch_error(e: keiri_xlsx::Error) -> BlockError {
    use keiri_xlsx::Error as X;
    let code = match &e {
        X::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            ErrorCode::FileNotFound
        }
        X::Path(p) if p.is_missing() => ErrorCode::FileNotFound,
        X::Path(p) if p.is_refused() => ErrorCode::PathDenied,
        X::Cancelled => ErrorCode::Cancelled,
        _ => ErrorCode::BlockFailed,
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

/// Encodes CSV text. Characters CP932 cannot hold become `?`, each kept in `replaced` with
/// the line it was on (encoding_rs would write an HTML character reference instead, which no
/// accounting software reads).
fn encode(text: String, encoding: CsvEncoding, replaced: &mut Vec<Replaced>) -> Vec<u8> {
    match encoding {
        // UTF-8 text is its bytes: no copy of what may be a hundred megabytes.
        CsvEncoding::Utf8 => text.into_bytes(),
        CsvEncoding::Utf8Bom => {
            let mut out = text.into_bytes();
            out.splice(0..0, BOM);
            out
        }
        CsvEncoding::ShiftJis => encode_piece(&text, encoding, 1, replaced).into_owned(),
    }
}

/// What begins a UTF-8 file with a byte order mark (`utf-8-sig`, what Excel needs to read
/// UTF-8 CSV as UTF-8).
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// The bytes of a piece of CSV text, whole lines, as [`encode`] gives them but without a byte
/// order mark: `first_line` is the number of the piece's first line in its file, for
/// `replaced`. UTF-8 text is its own bytes, not copied.
fn encode_piece<'t>(
    text: &'t str,
    encoding: CsvEncoding,
    first_line: usize,
    replaced: &mut Vec<Replaced>,
) -> std::borrow::Cow<'t, [u8]> {
    if encoding != CsvEncoding::ShiftJis {
        return std::borrow::Cow::Borrowed(text.as_bytes());
    }
    let (bytes, _, had_errors) = encoding_rs::SHIFT_JIS.encode(text);
    if !had_errors {
        return bytes;
    }
    let mut out = Vec::with_capacity(text.len() * 2);
    for (line_no, line) in text.split_inclusive('\n').enumerate() {
        for c in line.chars() {
            let mut buf = [0u8; 4];
            let (b, _, bad) = encoding_rs::SHIFT_JIS.encode(c.encode_utf8(&mut buf));
            if bad {
                replaced.push(Replaced {
                    line: first_line + line_no,
                    c,
                });
                out.push(b'?');
            } else {
                out.extend_from_slice(&b);
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A character CP932 cannot hold, written as `?`, and the line of the file it was on.
#[derive(Debug, Clone, Copy)]
struct Replaced {
    line: usize,
    c: char,
}

impl Replaced {
    /// The line of the block's `warnings` output for this character, in the run's language.
    fn warning(self, lang: keiri_plan::Lang) -> String {
        let (n, c, code) = (self.line, self.c, self.c as u32);
        lang.pick(
            format!(
                "{n}行目: 文字 '{c}' (U+{code:04X}) は CP932 で表せないため ? に置き換えました"
            ),
            format!("line {n}: '{c}' (U+{code:04X}) is not in CP932 and was replaced with ?"),
        )
    }
}

/// Warns `CHARACTERS_REPLACED` when the file `name` was written with characters CP932 cannot
/// hold as `?` (a customer's name in a 弥生 import file that reads `?田商事`): the block's
/// `warnings` output lists each one, but a run that changed what it wrote must not look like
/// any other finished run.
fn warn_replaced(ctx: &BlockContext<'_>, name: &str, replaced: &[Replaced]) {
    let examples: Vec<(String, String)> = replaced
        .iter()
        .map(|r| {
            let (n, c, code) = (r.line, r.c, r.c as u32);
            (
                format!("{n}行目 '{c}' (U+{code:04X})"),
                format!("line {n} '{c}' (U+{code:04X})"),
            )
        })
        .take(3)
        .collect();
    let n = replaced.len();
    warn_lines(
        ctx,
        "CHARACTERS_REPLACED",
        n,
        &examples,
        (
            format!(
                "{name} の {n} 文字は CP932（Shift_JIS）で表せないため ? に置き換えて書き出しました。UTF-8（utf-8-sig）で書き出すか、元の文字を直してください"
            ),
            format!(
                "{} CP932 (Shift_JIS) cannot hold {} written as ? in {name}: write it as UTF-8 (utf-8-sig), or change them at the source",
                counted(n, "character", "characters"),
                if n == 1 { "was" } else { "were" },
            ),
        ),
    );
}

/// `n` and the noun for it, one or many (`1 line`, `3 lines`).
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Warns `code` about `count` lines of a file a block wrote: `lead` (which says how many), then
/// the first examples, each in both languages; nothing when `count` is 0.
fn warn_lines(
    ctx: &BlockContext<'_>,
    code: &str,
    count: usize,
    examples: &[(String, String)],
    (lead_ja, lead_en): (String, String),
) {
    if count == 0 {
        return;
    }
    let (ja, en): (Vec<&str>, Vec<&str>) = examples
        .iter()
        .map(|(ja, en)| (ja.as_str(), en.as_str()))
        .unzip();
    let (more_ja, more_en) = crate::blocks::kit::text::and_more(count, examples.len());
    ctx.calls.warn(crate::block::Warning::new(
        code,
        format!("{lead_ja}（{}{more_ja}）", ja.join("、")),
        format!("{lead_en} ({}{more_en})", en.join("; ")),
    ));
}

/// CSV text built line by line: fields quoted when they hold the delimiter, a quote or a line
/// break (RFC 4180), lines ended by CRLF (what Excel and Japanese accounting and banking
/// software expect).
struct CsvText<'d> {
    out: String,
    delimiter: &'d str,
}

impl<'d> CsvText<'d> {
    fn new(delimiter: &'d str) -> CsvText<'d> {
        CsvText {
            out: String::new(),
            delimiter,
        }
    }

    fn line<'s>(&mut self, fields: impl IntoIterator<Item = &'s str>) {
        for (i, field) in fields.into_iter().enumerate() {
            if i > 0 {
                self.out.push_str(self.delimiter);
            }
            self.field(field);
        }
        self.out.push_str("\r\n");
    }

    fn field(&mut self, s: &str) {
        if self.needs_quotes(s) {
            self.out.push('"');
            self.out.push_str(&s.replace('"', "\"\""));
            self.out.push('"');
        } else {
            self.out.push_str(s);
        }
    }

    /// Whether `s` holds the delimiter, a quote or a line break. A one-byte delimiter (every
    /// usual one) is looked for in the same pass over the bytes as the others: they are all
    /// ASCII, which never occurs inside a UTF-8 sequence of another character. The pass has no
    /// early exit, so the compiler checks many bytes at a time (most fields need no quotes and
    /// are read to the end either way).
    fn needs_quotes(&self, s: &str) -> bool {
        match self.delimiter.as_bytes() {
            &[d] => s.bytes().fold(false, |hit, b| {
                hit | (b == d) | (b == b'"') | (b == b'\n') | (b == b'\r')
            }),
            _ => s.contains(self.delimiter) || s.contains(['"', '\n', '\r']),
        }
    }
}

/// The CSV text of `lines`, after a header line when one is given.
fn csv_text(header: Option<&[String]>, lines: &[Vec<String>], delimiter: &str) -> String {
    let mut csv = CsvText::new(delimiter);
    if let Some(h) = header {
        csv.line(h.iter().map(String::as_str));
    }
    for l in lines {
        csv.line(l.iter().map(String::as_str));
    }
    csv.out
}

// ---------------------------------------------------------------------------------------
// report.markdown and report.summary

fn md_cell(v: Option<&Json>) -> String {
    text(v).replace('|', "\\|").replace(['\r', '\n'], " ")
}

/// A Markdown table of `rows` (columns in first-appearance order), at most `max` rows; an
/// empty one says so in the run's language.
fn md_table(ctx: &BlockContext<'_>, rows: &[Row], max: usize) -> String {
    if rows.is_empty() {
        return ctx.say("（該当なし）\n", "(none)\n").to_string();
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;
    use std::path::PathBuf;

    /// The block's code follows the variant keiri-xlsx failed with, wherever the not-found
    /// or the refusal came from (its own read, or the path policy underneath).
    #[test]
    fn a_workbook_error_keeps_its_kind_as_the_blocks_code() {
        let missing = || io::Error::from(io::ErrorKind::NotFound);
        let cases = [
            (
                keiri_xlsx::Error::Io {
                    action: "reading",
                    path: PathBuf::from("a.xlsx"),
                    source: missing(),
                },
                ErrorCode::FileNotFound,
            ),
            (
                keiri_xlsx::Error::Path(keiri_fs::Error::Io {
                    action: "resolving",
                    path: PathBuf::from("a.xlsx"),
                    source: missing(),
                }),
                ErrorCode::FileNotFound,
            ),
            (
                keiri_xlsx::Error::Path(keiri_fs::Error::OutsideRoots {
                    path: PathBuf::from("/elsewhere/a.xlsx"),
                }),
                ErrorCode::PathDenied,
            ),
            (keiri_xlsx::Error::Cancelled, ErrorCode::Cancelled),
            (
                keiri_xlsx::Error::Io {
                    action: "writing",
                    path: PathBuf::from("a.xlsx"),
                    source: io::Error::from(io::ErrorKind::PermissionDenied),
                },
                ErrorCode::BlockFailed,
            ),
            (
                keiri_xlsx::Error::Backend("zip".into()),
                ErrorCode::BlockFailed,
            ),
        ];
        for (error, code) in cases {
            let shown = error.to_string();
            assert_eq!(patch_error(error).code, code, "{shown}");
        }
    }
}
