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

use std::path::{Component, Path, PathBuf};

use keiri_xlsx::{OnConflict, PatchOp, PatchRequest};
use rust_xlsxwriter::{Color, ExcelDateTime, Format, FormatBorder, Workbook};
use serde_json::{Value as Json, json};
use unicode_width::UnicodeWidthStr;

use super::invalid;
use crate::block::{BlockContext, BlockError, ErrorCode, Inputs, Outputs, Registry};
use crate::jp::parse_date;
use crate::value::Row;

/// Adds the `output/*` builtins.
pub fn register(registry: &mut Registry) {
    registry.insert("excel.write_table", write_table);
    registry.insert("excel.patch_workbook", patch_workbook);
    registry.insert("csv.write", csv_write);
    registry.insert("journal.export", journal_export);
    registry.insert("report.markdown", report_markdown);
    registry.insert("report.summary", report_summary);
}

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

/// A Japanese accounting amount written as text, as a number (`None`: not an amount).
fn text_amount(s: &str) -> Option<f64> {
    crate::jp::parse_amount(s, &Default::default())
        .ok()
        .flatten()
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

// ---------------------------------------------------------------------------------------
// excel.write_table

/// Width of a column in Excel's character units: wide characters count two, plus padding,
/// within limits that keep a long description from making the sheet unusable.
fn column_width(texts: impl Iterator<Item = String>) -> f64 {
    let widest = texts
        .map(|t| UnicodeWidthStr::width(t.as_str()))
        .max()
        .unwrap_or(0);
    (widest as f64 + 2.0).clamp(8.0, 60.0)
}

fn xlsx_error(e: rust_xlsxwriter::XlsxError) -> BlockError {
    failed(
        format!("Excelファイルを作れませんでした: {e}"),
        format!("could not build the workbook: {e}"),
    )
}

fn write_table(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let rows = inputs.rows("rows")?;
    let cols = columns(inputs, &rows)?;
    let labels = match inputs.json("column_labels") {
        Some(Json::Object(m)) => m,
        None => serde_json::Map::new(),
        Some(_) => {
            return Err(BlockError::input_invalid(
                "column_labels",
                "オブジェクトが必要です",
                "expected an object",
            ));
        }
    };
    let formats = match inputs.json("number_formats") {
        Some(Json::Object(m)) => m,
        None => serde_json::Map::new(),
        Some(_) => {
            return Err(BlockError::input_invalid(
                "number_formats",
                "オブジェクトが必要です",
                "expected an object",
            ));
        }
    };
    let sheet_name = inputs.str("sheet_name")?.unwrap_or("レポート").to_string();
    let title = inputs.str("title")?.map(str::to_string);
    let freeze = inputs.bool("freeze_header")?.unwrap_or(true);
    let dir = target_dir(ctx, inputs, Some(DEFAULT_OUT_DIR))?;
    let name = file_name(inputs, "report.xlsx")?;
    let conflict = on_conflict(inputs)?;
    let header_labels: Vec<String> = cols
        .iter()
        .map(|c| {
            labels
                .get(c)
                .and_then(Json::as_str)
                .unwrap_or(c)
                .to_string()
        })
        .collect();

    if let Some(base) = inputs.str("base_workbook")? {
        return write_into_copy(
            ctx,
            base,
            &dir,
            &name,
            conflict,
            &sheet_name,
            title.as_deref(),
            &header_labels,
            &cols,
            &rows,
        );
    }

    let mut book = Workbook::new();
    let sheet = book.add_worksheet();
    sheet.set_name(&sheet_name).map_err(|e| {
        invalid(
            format!("シート名 {sheet_name:?} は使えません: {e}"),
            format!("sheet name {sheet_name:?} is not valid: {e}"),
        )
    })?;
    let header_format = Format::new()
        .set_bold()
        .set_background_color(Color::RGB(0x00DD_EBF7))
        .set_border(FormatBorder::Thin);
    let date_format = Format::new().set_num_format("yyyy/mm/dd");
    let mut header_row: u32 = 0;
    if let Some(t) = &title {
        sheet
            .write_string_with_format(0, 0, t, &Format::new().set_bold().set_font_size(14))
            .map_err(xlsx_error)?;
        header_row = 2;
    }
    for (c, label) in header_labels.iter().enumerate() {
        let col = u16::try_from(c).map_err(|_| failed("列が多すぎます", "too many columns"))?;
        sheet
            .write_string_with_format(header_row, col, label, &header_format)
            .map_err(xlsx_error)?;
    }
    for (c, name) in cols.iter().enumerate() {
        let col = u16::try_from(c).map_err(|_| failed("列が多すぎます", "too many columns"))?;
        // A format is looked up by column name first, then by its header label.
        let number_format = formats
            .get(name)
            .or_else(|| formats.get(&header_labels[c]))
            .and_then(Json::as_str)
            .map(|f| Format::new().set_num_format(f));
        for (r, row) in rows.iter().enumerate() {
            let excel_row = header_row
                + 1
                + u32::try_from(r).map_err(|_| failed("行が多すぎます", "too many rows"))?;
            let written = match row.get(name) {
                None | Some(Json::Null) => continue,
                Some(Json::Number(n)) => {
                    let x = n.as_f64().unwrap_or(0.0);
                    match &number_format {
                        Some(f) => sheet.write_number_with_format(excel_row, col, x, f),
                        None => sheet.write_number(excel_row, col, x),
                    }
                }
                Some(Json::Bool(b)) => sheet.write_boolean(excel_row, col, *b),
                Some(Json::String(s)) => match iso_date(s) {
                    // ISO dates (what the date transforms produce) become real Excel dates.
                    Some(d) => sheet.write_datetime_with_format(
                        excel_row,
                        col,
                        &d,
                        number_format.as_ref().unwrap_or(&date_format),
                    ),
                    None => match (&number_format, text_amount(s)) {
                        // A column the plan formats as numbers gets numbers, also from text
                        // as a CSV gives it (`1,200`, `¥1,200`, `△500`): no "number stored as
                        // text" in the report. Other text stays text (codes keep their zeros).
                        (Some(f), Some(x)) => sheet.write_number_with_format(excel_row, col, x, f),
                        _ => sheet.write_string(excel_row, col, s),
                    },
                },
                Some(other) => sheet.write_string(excel_row, col, other.to_string()),
            };
            written.map_err(xlsx_error)?;
        }
        let width = column_width(
            std::iter::once(header_labels[c].clone())
                .chain(rows.iter().map(|r| display_text(r.get(name)))),
        );
        sheet.set_column_width(col, width).map_err(xlsx_error)?;
    }
    if freeze {
        sheet
            .set_freeze_panes(header_row + 1, 0)
            .map_err(xlsx_error)?;
    }
    let bytes = book.save_to_buffer().map_err(xlsx_error)?;
    let saved = save(&dir, &name, &bytes, conflict)?;
    Ok(Outputs::new()
        .with("out_path", path_text(&saved))
        .with("sheet_name", json!(sheet_name))
        .with(
            "row_count",
            json!(if saved.is_some() { rows.len() } else { 0 }),
        ))
}

/// What a cell shows, for the column width: dates as yyyy/mm/dd, numbers with separators.
fn display_text(v: Option<&Json>) -> String {
    match v {
        Some(Json::Number(n)) => {
            let s = n.to_string();
            // Thousands separators add one character per three digits.
            let digits = s.chars().filter(char::is_ascii_digit).count();
            format!("{s}{}", ",".repeat(digits.saturating_sub(1) / 3))
        }
        other => text(other),
    }
}

fn iso_date(s: &str) -> Option<ExcelDateTime> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let d = parse_date(s)?;
    use chrono::Datelike;
    ExcelDateTime::from_ymd(
        u16::try_from(d.year()).ok()?,
        u8::try_from(d.month()).ok()?,
        u8::try_from(d.day()).ok()?,
    )
    .ok()
}

/// `excel.write_table` with `base_workbook`: a copy of the workbook with the table added as a
/// new sheet, through keiri-xlsx so the rest of the workbook is kept byte for byte. Values
/// only: keiri-xlsx does not add styles to a workbook it did not create.
#[allow(clippy::too_many_arguments)]
fn write_into_copy(
    ctx: &BlockContext<'_>,
    base: &str,
    dir: &Path,
    name: &str,
    conflict: OnConflict,
    sheet_name: &str,
    title: Option<&str>,
    labels: &[String],
    cols: &[String],
    rows: &[Row],
) -> Result<Outputs, BlockError> {
    let base_path = crate::paths::resolve_read(ctx, base)?;
    let env = keiri_xlsx::PatchEnv::new(keiri_fs::PathPolicy::trusted(ctx.base_dir));
    // A free sheet name: the requested one, else name_2, name_3, … (found with dry runs).
    let mut chosen = None;
    for n in 1..100 {
        let candidate = if n == 1 {
            sheet_name.to_string()
        } else {
            format!("{sheet_name}_{n}")
        };
        let mut probe = PatchRequest::new(
            base_path.display().to_string(),
            vec![PatchOp::AddSheet {
                sheet: candidate.clone(),
            }],
        );
        probe.dry_run = true;
        let response = keiri_xlsx::patch(&probe, &env).map_err(patch_error)?;
        if response.error.is_none() {
            chosen = Some(candidate);
            break;
        }
    }
    let sheet = chosen.ok_or_else(|| {
        failed(
            "空いているシート名が見つかりません",
            "no free sheet name found",
        )
    })?;
    let mut values: Vec<Vec<Option<keiri_xlsx::CellValue>>> = Vec::new();
    let mut start_row = 1;
    let mut ops = vec![PatchOp::AddSheet {
        sheet: sheet.clone(),
    }];
    if let Some(t) = title {
        ops.push(PatchOp::SetValue {
            sheet: sheet.clone(),
            cell: "A1".into(),
            value: Some(keiri_xlsx::CellValue::Text(t.into())),
        });
        start_row = 3;
    }
    values.push(
        labels
            .iter()
            .map(|l| Some(keiri_xlsx::CellValue::Text(l.clone())))
            .collect(),
    );
    for r in rows {
        values.push(
            cols.iter()
                .map(|c| match r.get(c) {
                    None | Some(Json::Null) => None,
                    Some(Json::Number(n)) => n.as_f64().map(keiri_xlsx::CellValue::number),
                    Some(Json::Bool(b)) => Some(keiri_xlsx::CellValue::Bool(*b)),
                    Some(Json::String(s)) => Some(keiri_xlsx::CellValue::Text(s.clone())),
                    Some(other) => Some(keiri_xlsx::CellValue::Text(other.to_string())),
                })
                .collect(),
        );
    }
    if !cols.is_empty() {
        let last = keiri_xlsx::column_name(u32::try_from(cols.len()).unwrap_or(1));
        let end_row = start_row + values.len() - 1;
        ops.push(PatchOp::SetRangeValues {
            sheet: sheet.clone(),
            range: format!("A{start_row}:{last}{end_row}"),
            values,
        });
    }
    let mut req = PatchRequest::new(base_path.display().to_string(), ops);
    req.out_dir = Some(dir.display().to_string());
    req.out_name = Some(name.to_string());
    req.on_conflict = Some(conflict);
    let existed = dir.join(name).exists();
    let response = keiri_xlsx::patch(&req, &env).map_err(patch_error)?;
    if let Some(e) = response.error {
        return Err(failed(
            format!("シートを追加できませんでした: {}", e.message),
            format!("could not add the sheet: {}", e.message),
        ));
    }
    let skipped = existed && conflict == OnConflict::Skip;
    Ok(Outputs::new()
        .with(
            "out_path",
            json!(if skipped {
                String::new()
            } else {
                response.out_path
            }),
        )
        .with("sheet_name", json!(sheet))
        .with("row_count", json!(if skipped { 0 } else { rows.len() })))
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
// excel.patch_workbook

fn patch_workbook(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let xlsx_path = inputs.require_str("xlsx_path")?;
    let ops = match inputs.json("operations") {
        Some(Json::Array(items)) => items
            .into_iter()
            .enumerate()
            .map(|(i, op)| {
                PatchOp::from_json(op).map_err(|e| {
                    invalid(
                        format!("operations[{i}] が不正です: {e}"),
                        format!("operations[{i}] is invalid: {e}"),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
        _ => {
            return Err(BlockError::input_invalid(
                "operations",
                "操作の配列が必要です",
                "expected an array of operations",
            ));
        }
    };
    let dry_run = inputs.bool("dry_run")?.unwrap_or(false);
    let conflict = on_conflict(inputs)?;
    // The patched copy goes where every other written file goes: the plan's out_dir, else
    // the workspace's outputs folder (inside the node's folder for a run without --write).
    // Never beside the source: the inputs folder holds what the person attached, and a
    // result there is taken for a source the next time.
    let source = match crate::paths::resolve_read(ctx, xlsx_path) {
        Ok(path) => path,
        Err(e) if e.code == ErrorCode::FileNotFound => ctx.base_dir.join(xlsx_path),
        Err(e) => return Err(e),
    };
    let dir = target_dir(ctx, inputs, Some(DEFAULT_OUT_DIR))?;
    if !source.is_file() {
        return Err(BlockError::new(
            ErrorCode::FileNotFound,
            format!("ブック {xlsx_path} が見つかりません"),
            format!("workbook {xlsx_path} was not found"),
        ));
    }
    let mut req = PatchRequest::new(source.display().to_string(), ops);
    req.out_dir = Some(dir.display().to_string());
    if let Some(name) = inputs.str("out_name")? {
        req.out_name = Some(file_name(inputs, name)?);
    }
    req.on_conflict = Some(conflict);
    req.dry_run = dry_run;
    req.auto_formula = inputs.bool("auto_formula")?.unwrap_or(false);
    req.preflight_formula_check = inputs.bool("preflight_formula_check")?.unwrap_or(false);
    req.return_inverse_ops = true;
    let env = keiri_xlsx::PatchEnv::new(keiri_fs::PathPolicy::trusted(ctx.base_dir));
    // The file keiri-xlsx will write (its own naming rule); a skip is seen as "existed before".
    let target_name =
        keiri_xlsx::output_name(&source, req.out_name.as_deref()).map_err(patch_error)?;
    let existed = dir.join(&target_name).exists();
    let response = keiri_xlsx::patch(&req, &env).map_err(patch_error)?;
    if let Some(e) = &response.error {
        return Err(failed(
            format!(
                "操作 {} ({}) を適用できませんでした: {}",
                e.op_index, e.sheet, e.message
            ),
            format!(
                "operation {} ({}) could not be applied: {}",
                e.op_index, e.sheet, e.message
            ),
        ));
    }
    let written = !(dry_run || existed && conflict == OnConflict::Skip);
    let diff: Vec<Json> = response
        .patch_diff
        .iter()
        .map(|d| {
            let v = |p: &Option<keiri_xlsx::PatchValue>| {
                p.as_ref()
                    .and_then(|p| p.value.as_ref())
                    .map_or(Json::Null, |c| {
                        serde_json::to_value(c).unwrap_or(Json::Null)
                    })
            };
            // `detail` is keiri-xlsx's own item (op, value kinds, applied or skipped): the
            // studio draws its cell grid from it; plans read the plain before/after.
            json!({
                "sheet": d.sheet, "cell": d.cell, "before": v(&d.before), "after": v(&d.after),
                "detail": serde_json::to_value(d).unwrap_or(Json::Null),
            })
        })
        .collect();
    Ok(Outputs::new()
        .with(
            "out_path",
            json!(if written {
                response.out_path.clone()
            } else {
                String::new()
            }),
        )
        .with("patch_diff", Json::Array(diff))
        .with("warnings", json!(response.warnings))
        .with(
            "inverse_ops",
            serde_json::to_value(&response.inverse_ops).unwrap_or(Json::Null),
        )
        .with(
            "formula_issues",
            serde_json::to_value(&response.formula_issues).unwrap_or(Json::Null),
        ))
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

/// One CSV field, quoted when it holds the delimiter, a quote or a line break (RFC 4180).
fn csv_field(s: &str, delimiter: &str) -> String {
    if s.contains(delimiter) || s.contains('"') || s.contains('\n') || s.contains('\r') {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Encodes CSV text. Characters CP932 cannot hold become `?`, each reported once with the
/// line it was on (encoding_rs would write an HTML character reference instead, which no
/// accounting software reads).
fn encode(text: &str, encoding: CsvEncoding, warnings: &mut Vec<String>) -> Vec<u8> {
    match encoding {
        CsvEncoding::Utf8 => text.as_bytes().to_vec(),
        CsvEncoding::Utf8Bom => {
            let mut out = vec![0xEF, 0xBB, 0xBF];
            out.extend_from_slice(text.as_bytes());
            out
        }
        CsvEncoding::ShiftJis => {
            let (bytes, _, had_errors) = encoding_rs::SHIFT_JIS.encode(text);
            if !had_errors {
                return bytes.into_owned();
            }
            let mut out = Vec::with_capacity(text.len() * 2);
            for (line_no, line) in text.split_inclusive('\n').enumerate() {
                for c in line.chars() {
                    let mut buf = [0u8; 4];
                    let (b, _, bad) = encoding_rs::SHIFT_JIS.encode(c.encode_utf8(&mut buf));
                    if bad {
                        warnings.push(format!(
                            "{}行目: 文字 '{c}' (U+{:04X}) は CP932 で表せないため ? に置き換えました / line {}: '{c}' is not in CP932 and was replaced with ?",
                            line_no + 1,
                            c as u32,
                            line_no + 1
                        ));
                        out.push(b'?');
                    } else {
                        out.extend_from_slice(&b);
                    }
                }
            }
            out
        }
    }
}

fn csv_text(header: Option<&[String]>, lines: &[Vec<String>], delimiter: &str) -> String {
    let mut out = String::new();
    let mut push = |fields: &[String]| {
        let line: Vec<String> = fields.iter().map(|f| csv_field(f, delimiter)).collect();
        out.push_str(&line.join(delimiter));
        // CRLF: what Excel and Japanese accounting and banking software expect.
        out.push_str("\r\n");
    };
    if let Some(h) = header {
        push(h);
    }
    for l in lines {
        push(l);
    }
    out
}

fn csv_write(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let rows = inputs.rows("rows")?;
    let cols = columns(inputs, &rows)?;
    let encoding = csv_encoding(inputs.str("encoding")?.unwrap_or("utf-8-sig"))?;
    let delimiter = match inputs.str("delimiter")?.unwrap_or(",") {
        "\\t" | "tab" | "\t" => "\t".to_string(),
        d if !d.is_empty() && !d.contains(['"', '\n', '\r']) => d.to_string(),
        _ => {
            return Err(BlockError::input_invalid(
                "delimiter",
                "引用符・改行以外の区切り文字です",
                "expected a delimiter other than a quote or line break",
            ));
        }
    };
    let header = inputs.bool("include_header")?.unwrap_or(true);
    let dir = target_dir(ctx, inputs, Some(DEFAULT_OUT_DIR))?;
    let name = file_name(inputs, "output.csv")?;
    let conflict = on_conflict(inputs)?;
    let lines: Vec<Vec<String>> = rows
        .iter()
        .map(|r| cols.iter().map(|c| text(r.get(c))).collect())
        .collect();
    let body = csv_text(header.then_some(cols.as_slice()), &lines, &delimiter);
    let mut warnings = Vec::new();
    let bytes = encode(&body, encoding, &mut warnings);
    let saved = save(&dir, &name, &bytes, conflict)?;
    if saved.is_none() {
        warnings.push(format!("{name} は既にあり on_conflict が skip のため書きませんでした / {name} exists and on_conflict is skip; nothing was written"));
    }
    Ok(Outputs::new()
        .with("out_path", path_text(&saved))
        .with(
            "row_count",
            json!(if saved.is_some() { rows.len() } else { 0 }),
        )
        .with("warnings", json!(warnings)))
}

/// Yayoi's 摘要 holds 64 bytes (32 full-width characters).
const YAYOI_DESCRIPTION_WIDTH: usize = 64;

fn journal_export(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let entries = inputs.rows("entries")?;
    let format = inputs.str("format")?.unwrap_or("generic").to_string();
    let mapping = match inputs.json("field_mapping") {
        Some(Json::Object(m)) => m,
        None => serde_json::Map::new(),
        Some(_) => {
            return Err(BlockError::input_invalid(
                "field_mapping",
                "オブジェクトが必要です",
                "expected an object",
            ));
        }
    };
    let default_encoding = match format.as_str() {
        "yayoi" => "cp932",
        "generic" | "freee" | "moneyforward" => "utf-8-sig",
        _ => {
            return Err(BlockError::input_invalid(
                "format",
                "generic・yayoi・freee・moneyforward のどれかです",
                "expected generic, yayoi, freee or moneyforward",
            ));
        }
    };
    let encoding = csv_encoding(inputs.str("encoding")?.unwrap_or(default_encoding))?;
    let dir = target_dir(ctx, inputs, Some(DEFAULT_OUT_DIR))?;
    let name = file_name(inputs, "journal.csv")?;
    let conflict = on_conflict(inputs)?;

    let mut warnings = Vec::new();
    let field = |row: &Row, f: &str| -> String {
        let column = mapping.get(f).and_then(Json::as_str).unwrap_or(f);
        text(row.get(column))
    };
    let mut lines = Vec::new();
    for (i, row) in entries.iter().enumerate() {
        let get = |f: &str| field(row, f);
        let date = match parse_date(&get("date")) {
            Some(d) => d.format("%Y/%m/%d").to_string(),
            None => {
                warnings.push(format!(
                    "{}行目: 日付 {:?} を読めません / line {}: date {:?} is not a date",
                    i + 1,
                    get("date"),
                    i + 1,
                    get("date")
                ));
                get("date")
            }
        };
        let mut amount = |f: &str| -> String {
            let raw = get(f);
            match crate::jp::parse_amount(&raw, &Default::default()) {
                Ok(Some(x)) if x.fract() == 0.0 => format!("{}", x as i64),
                Ok(Some(x)) => format!("{x}"),
                Ok(None) => String::new(),
                Err(_) => {
                    warnings.push(format!("{}行目: 金額 {raw:?} を読めません / line {}: amount {raw:?} is not a number", i + 1, i + 1));
                    raw
                }
            }
        };
        let (debit_amount, credit_amount) = (amount("debit_amount"), amount("credit_amount"));
        // Journal software refuses a line with an amount but no account.
        for (account, amt, side_ja, side_en) in [
            ("debit_account", &debit_amount, "借方", "debit"),
            ("credit_account", &credit_amount, "貸方", "credit"),
        ] {
            if get(account).is_empty() && !amt.is_empty() {
                warnings.push(format!(
                    "{}行目: {side_ja}勘定科目がありません / line {}: no {side_en} account",
                    i + 1,
                    i + 1
                ));
            }
        }
        let mut description = get("description");
        if format == "yayoi"
            && UnicodeWidthStr::width(description.as_str()) > YAYOI_DESCRIPTION_WIDTH
        {
            let mut cut = String::new();
            for c in description.chars() {
                if UnicodeWidthStr::width(format!("{cut}{c}").as_str()) > YAYOI_DESCRIPTION_WIDTH {
                    break;
                }
                cut.push(c);
            }
            warnings.push(format!("{}行目: 摘要を弥生の上限（全角32文字）で切り詰めました / line {}: description truncated to Yayoi's 32 full-width characters", i + 1, i + 1));
            description = cut;
        }
        let line: Vec<String> = match format.as_str() {
            // 弥生会計 仕訳日記帳インポート (25 columns; 2000 = a one-line entry, no header).
            "yayoi" => vec![
                "2000".into(),
                get("voucher_no"),
                String::new(),
                date,
                get("debit_account"),
                get("debit_sub_account"),
                get("department"),
                get("debit_tax_category"),
                debit_amount,
                String::new(),
                get("credit_account"),
                get("credit_sub_account"),
                get("department"),
                get("credit_tax_category"),
                credit_amount,
                String::new(),
                description,
                String::new(),
                String::new(),
                "0".into(),
                String::new(),
                String::new(),
                "0".into(),
                "0".into(),
                "no".into(),
            ],
            "freee" => vec![
                date,
                get("voucher_no"),
                get("debit_account"),
                get("debit_sub_account"),
                get("debit_tax_category"),
                debit_amount,
                get("department"),
                get("credit_account"),
                get("credit_sub_account"),
                get("credit_tax_category"),
                credit_amount,
                get("department"),
                description,
            ],
            "moneyforward" => vec![
                get("voucher_no"),
                date,
                get("debit_account"),
                get("debit_sub_account"),
                get("department"),
                get("debit_tax_category"),
                debit_amount,
                get("credit_account"),
                get("credit_sub_account"),
                get("department"),
                get("credit_tax_category"),
                credit_amount,
                description,
            ],
            _ => vec![
                get("voucher_no"),
                date,
                get("debit_account"),
                get("debit_sub_account"),
                debit_amount,
                get("debit_tax_category"),
                get("credit_account"),
                get("credit_sub_account"),
                credit_amount,
                get("credit_tax_category"),
                description,
                get("department"),
            ],
        };
        lines.push(line);
    }
    let header: Option<Vec<String>> = match format.as_str() {
        "yayoi" => None,
        "freee" => Some(
            [
                "取引日",
                "伝票番号",
                "借方勘定科目",
                "借方補助科目",
                "借方税区分",
                "借方金額",
                "借方部門",
                "貸方勘定科目",
                "貸方補助科目",
                "貸方税区分",
                "貸方金額",
                "貸方部門",
                "摘要",
            ]
            .map(String::from)
            .to_vec(),
        ),
        "moneyforward" => Some(
            [
                "取引No",
                "取引日",
                "借方勘定科目",
                "借方補助科目",
                "借方部門",
                "借方税区分",
                "借方金額(円)",
                "貸方勘定科目",
                "貸方補助科目",
                "貸方部門",
                "貸方税区分",
                "貸方金額(円)",
                "摘要",
            ]
            .map(String::from)
            .to_vec(),
        ),
        _ => Some(
            [
                "伝票番号",
                "日付",
                "借方勘定科目",
                "借方補助科目",
                "借方金額",
                "借方税区分",
                "貸方勘定科目",
                "貸方補助科目",
                "貸方金額",
                "貸方税区分",
                "摘要",
                "部門",
            ]
            .map(String::from)
            .to_vec(),
        ),
    };
    let body = csv_text(header.as_deref(), &lines, ",");
    let bytes = encode(&body, encoding, &mut warnings);
    let saved = save(&dir, &name, &bytes, conflict)?;
    Ok(Outputs::new()
        .with("out_path", path_text(&saved))
        .with(
            "row_count",
            json!(if saved.is_some() { lines.len() } else { 0 }),
        )
        .with("warnings", json!(warnings)))
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

fn report_markdown(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let title = inputs.require_str("title")?;
    let sections = match inputs.json("sections") {
        Some(Json::Array(s)) => s,
        _ => {
            return Err(BlockError::input_invalid(
                "sections",
                "セクションの配列が必要です",
                "expected an array of sections",
            ));
        }
    };
    let mut md = format!("# {title}\n");
    for (i, s) in sections.iter().enumerate() {
        let Json::Object(s) = s else {
            return Err(invalid(
                format!("sections[{i}] はオブジェクトです"),
                format!("sections[{i}] must be an object"),
            ));
        };
        if let Some(h) = s.get("heading").and_then(Json::as_str) {
            md.push_str(&format!("\n## {h}\n"));
        }
        if let Some(b) = s.get("body") {
            let b = text(Some(b));
            if !b.is_empty() {
                md.push_str(&format!("\n{b}\n"));
            }
        }
        if let Some(Json::Array(bullets)) = s.get("bullets") {
            md.push('\n');
            for b in bullets {
                md.push_str(&format!("- {}\n", text(Some(b))));
            }
        }
        match s.get("rows") {
            None | Some(Json::Null) => {}
            Some(Json::Array(items)) => {
                let rows: Vec<Row> = items
                    .iter()
                    .map(|v| match v {
                        Json::Object(m) => m.clone(),
                        other => {
                            let mut m = Row::new();
                            m.insert("value".into(), other.clone());
                            m
                        }
                    })
                    .collect();
                let max = s
                    .get("max_rows")
                    .and_then(Json::as_u64)
                    .map_or(usize::MAX, |m| usize::try_from(m).unwrap_or(usize::MAX));
                md.push('\n');
                md.push_str(&md_table(&rows, max));
            }
            Some(_) => {
                return Err(invalid(
                    format!("sections[{i}].rows は行の配列です"),
                    format!("sections[{i}].rows must be an array of rows"),
                ));
            }
        }
    }
    let saved = if inputs.has("out_dir") {
        let dir = target_dir(ctx, inputs, None)?;
        let name = file_name(inputs, "report.md")?;
        save(&dir, &name, md.as_bytes(), OnConflict::Rename)?
    } else {
        None
    };
    Ok(Outputs::new()
        .with("markdown", json!(md))
        .with("out_path", path_text(&saved)))
}

/// Columns tried, in order, when none of `group_by` is in the findings: each catalog block
/// names its finding kind differently.
const FALLBACK_GROUPS: &[&str] = &["type", "reason", "rule", "rule_id", "source"];

/// Severity order for the report: the most serious first.
fn severity_rank(s: &str) -> usize {
    match s.to_ascii_lowercase().as_str() {
        "critical" | "重大" => 0,
        "error" | "high" | "エラー" | "高" => 1,
        "warning" | "medium" | "警告" | "中" => 2,
        "info" | "low" | "情報" | "低" => 3,
        _ => 4,
    }
}

fn report_summary(_ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let findings = inputs.rows("findings")?;
    let requested = inputs
        .strings("group_by")?
        .unwrap_or_else(|| vec!["severity".into(), "rule_id".into()]);
    let amount_field = inputs.str("amount_field")?.map(str::to_string);
    let title = inputs.str("title")?.unwrap_or("例外レポート").to_string();
    let period = inputs.str("period")?.map(str::to_string);
    let max_examples =
        usize::try_from(inputs.i64("max_examples")?.unwrap_or(5).max(0)).unwrap_or(0);

    let present = |c: &str| {
        findings
            .iter()
            .any(|r| r.get(c).is_some_and(|v| !v.is_null()))
    };
    let mut group_by: Vec<String> = requested.iter().filter(|c| present(c)).cloned().collect();
    if group_by.is_empty() {
        group_by.extend(
            FALLBACK_GROUPS
                .iter()
                .find(|c| present(c))
                .map(|c| c.to_string()),
        );
    }
    let amount_of = |r: &Row| -> Option<f64> {
        let f = amount_field.as_deref()?;
        match r.get(f)? {
            Json::Number(n) => n.as_f64(),
            Json::String(s) => crate::jp::parse_amount(s, &Default::default())
                .ok()
                .flatten(),
            _ => None,
        }
    };
    // Groups in first-appearance order, then sorted by severity and count.
    let mut groups: indexmap::IndexMap<Vec<String>, Vec<usize>> = indexmap::IndexMap::new();
    for (i, r) in findings.iter().enumerate() {
        let key: Vec<String> = group_by.iter().map(|c| text(r.get(c))).collect();
        groups.entry(key).or_default().push(i);
    }
    let sev_pos = group_by.iter().position(|c| c == "severity");
    let mut ordered: Vec<(Vec<String>, Vec<usize>)> = groups.into_iter().collect();
    ordered.sort_by(|a, b| {
        let ra = sev_pos.map_or(0, |p| severity_rank(&a.0[p]));
        let rb = sev_pos.map_or(0, |p| severity_rank(&b.0[p]));
        ra.cmp(&rb).then(b.1.len().cmp(&a.1.len()))
    });
    let mut table = Vec::new();
    let mut total_amount = 0.0;
    let mut by_severity: indexmap::IndexMap<String, usize> = indexmap::IndexMap::new();
    for r in &findings {
        if let Some(s) = r.get("severity").filter(|v| !v.is_null()) {
            *by_severity.entry(text(Some(s))).or_default() += 1;
        }
        total_amount += amount_of(r).unwrap_or(0.0);
    }
    let mut md = format!("# {title}\n\n");
    if let Some(p) = &period {
        md.push_str(&format!("対象期間 / Period: {p}\n\n"));
    }
    md.push_str(&format!("総件数 / Total: {} 件\n", findings.len()));
    if amount_field.is_some() {
        md.push_str(&format!(
            "金額合計 / Amount: {} 円\n",
            crate::blocks::matching::num_json(total_amount)
        ));
    }
    for (key, idx) in &ordered {
        let mut row = Row::new();
        for (c, v) in group_by.iter().zip(key) {
            row.insert(c.clone(), json!(v));
        }
        row.insert("count".into(), json!(idx.len()));
        let label = if key.is_empty() {
            "すべて / all".to_string()
        } else {
            key.join(" / ")
        };
        md.push_str(&format!("\n## {label}（{} 件）\n\n", idx.len()));
        if amount_field.is_some() {
            let amount: f64 = idx.iter().filter_map(|&i| amount_of(&findings[i])).sum();
            row.insert("amount".into(), crate::blocks::matching::num_json(amount));
            md.push_str(&format!(
                "金額 / Amount: {} 円\n\n",
                crate::blocks::matching::num_json(amount)
            ));
        }
        let examples: Vec<Row> = idx
            .iter()
            .take(max_examples)
            .map(|&i| findings[i].clone())
            .collect();
        md.push_str(&md_table(&examples, max_examples));
        if idx.len() > max_examples && max_examples > 0 {
            // md_table has already said how many rows were left out only when it was given
            // them all; examples are a prefix, so say it here.
            md.push_str(&format!(
                "\n（ほか {} 件 / {} more）\n",
                idx.len() - max_examples,
                idx.len() - max_examples
            ));
        }
        table.push(row);
    }
    let mut summary = json!({"total_count": findings.len(), "by_severity": by_severity});
    if amount_field.is_some() {
        summary["total_amount"] = crate::blocks::matching::num_json(total_amount);
    }
    Ok(Outputs::new()
        .with(
            "rows",
            Json::Array(table.into_iter().map(Json::Object).collect()),
        )
        .with("markdown", json!(md))
        .with("summary", summary))
}
