//! `excel.write_table`: its inputs and outputs are in `block_specs/output/excel.write_table.yaml`.

use super::{
    DEFAULT_OUT_DIR, columns, failed, on_conflict, out_file, patch_env, patch_error, path_text,
    save, target_dir, text,
};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::invalid;
use crate::codes::{self, Lang};
use crate::jp::parse_date;
use crate::value::Row;
use keiri_xlsx::{OnConflict, PatchOp, PatchOutcome, PatchRequest};
use rust_xlsxwriter::{Color, ExcelDateTime, Format, FormatBorder, Workbook};
use serde_json::{Value as Json, json};
use std::path::Path;
use unicode_width::UnicodeWidthStr;

/// A Japanese accounting amount written as text, as a number (`None`: not an amount).
fn text_amount(s: &str) -> Option<f64> {
    crate::jp::parse_amount(s, &Default::default())
        .ok()
        .flatten()
}

// ---------------------------------------------------------------------------------------
// excel.write_table

/// Width of a column in Excel's character units for its widest text (wide characters count
/// two), plus padding, within limits that keep a long description from making the sheet
/// unusable.
fn column_width(widest: usize) -> f64 {
    (widest as f64 + 2.0).clamp(8.0, 60.0)
}

/// What a table with no rows says under its header, so an empty report reads as "nothing
/// found" rather than as a report that failed to fill.
fn nothing_found(lang: Option<Lang>) -> &'static str {
    match lang {
        Some(Lang::En) => "None (0 rows)",
        _ => "該当なし（0 件）",
    }
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
    let name = out_file(ctx, inputs, &dir, "report.xlsx")?;
    let conflict = on_conflict(inputs)?;
    let lang = label_lang(inputs)?;
    let header_labels = headers(&cols, &labels, lang);
    let summary = match inputs.json("summary") {
        None | Some(Json::Null) => None,
        Some(_) => {
            let rows = inputs.rows("summary")?;
            let cols = super::all_columns(&rows);
            Some(Table {
                labels: headers(&cols, &labels, lang),
                cols,
                rows,
            })
        }
    };
    let table = Table {
        labels: header_labels,
        cols,
        rows,
    };

    if let Some(base) = inputs.str("base_workbook")? {
        return write_into_copy(
            ctx,
            base,
            &dir,
            &name,
            conflict,
            &sheet_name,
            title.as_deref(),
            summary.as_ref(),
            &table,
            lang,
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
    let mut next_row: u32 = 0;
    if let Some(t) = &title {
        sheet
            .write_string_with_format(0, 0, t, &Format::new().set_bold().set_font_size(14))
            .map_err(xlsx_error)?;
        next_row = 2;
    }
    let mut widths: Vec<f64> = Vec::new();
    if let Some(summary) = summary.as_ref().filter(|s| !s.rows.is_empty()) {
        // The counts above the rows they count, as a manager reads a report.
        next_row = write_block(sheet, next_row, summary, &formats, lang, &mut widths)? + 1;
    }
    let header_row = next_row;
    write_block(sheet, header_row, &table, &formats, lang, &mut widths)?;
    for (c, width) in widths.iter().enumerate() {
        let col = u16::try_from(c).map_err(|_| failed("列が多すぎます", "too many columns"))?;
        sheet.set_column_width(col, *width).map_err(xlsx_error)?;
    }
    if freeze && !table.cols.is_empty() {
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
            json!(if saved.is_some() { table.rows.len() } else { 0 }),
        ))
}

/// Rows to write under a header: the column names, their headers and the rows.
struct Table {
    cols: Vec<String>,
    labels: Vec<String>,
    rows: Vec<Row>,
}

impl Table {
    /// Per column, whether its values are codes to show as labels (`codes::is_code_column`).
    fn code_columns(&self, lang: Option<Lang>) -> Vec<bool> {
        self.cols
            .iter()
            .map(|c| {
                lang.is_some()
                    && codes::is_code_column(c, self.rows.iter().filter_map(|r| r.get(c)))
            })
            .collect()
    }
}

/// The language the codes and headers are written in (`labels`), `None` for the data's own.
fn label_lang(inputs: &Inputs) -> Result<Option<Lang>, BlockError> {
    match inputs.str("labels")?.unwrap_or("ja") {
        "ja" => Ok(Some(Lang::Ja)),
        "en" => Ok(Some(Lang::En)),
        "none" => Ok(None),
        _ => Err(BlockError::input_invalid(
            "labels",
            "ja・en・none のどれかです",
            "expected ja, en or none",
        )),
    }
}

/// Headers: the plan's `column_labels`, else the catalog's name for a column it knows, else
/// the column's own name.
fn headers(
    cols: &[String],
    labels: &serde_json::Map<String, Json>,
    lang: Option<Lang>,
) -> Vec<String> {
    cols.iter()
        .map(|c| {
            labels
                .get(c)
                .and_then(Json::as_str)
                .or_else(|| lang.and_then(|l| codes::column_label(c, l)))
                .unwrap_or(c)
                .to_string()
        })
        .collect()
}

/// A cell's value as people read it: a code in a column of codes becomes its label.
fn shown<'a>(
    column: &str,
    v: &'a Json,
    lang: Option<Lang>,
    code_column: bool,
) -> std::borrow::Cow<'a, Json> {
    match (v, lang) {
        (Json::String(s), Some(l)) if code_column => match codes::value_label(column, s, l) {
            Some(label) => std::borrow::Cow::Owned(json!(label)),
            None => std::borrow::Cow::Borrowed(v),
        },
        _ => std::borrow::Cow::Borrowed(v),
    }
}

/// Writes a header row at `top` and the table's rows under it, widening `widths` to fit;
/// returns the row after the last one written.
fn write_block(
    sheet: &mut rust_xlsxwriter::Worksheet,
    top: u32,
    table: &Table,
    formats: &serde_json::Map<String, Json>,
    lang: Option<Lang>,
    widths: &mut Vec<f64>,
) -> Result<u32, BlockError> {
    let header_format = Format::new()
        .set_bold()
        .set_background_color(Color::RGB(0x00DD_EBF7))
        .set_border(FormatBorder::Thin);
    let date_format = Format::new().set_num_format("yyyy/mm/dd");
    let too_many = || failed("行が多すぎます", "too many rows");
    for (c, label) in table.labels.iter().enumerate() {
        let col = u16::try_from(c).map_err(|_| failed("列が多すぎます", "too many columns"))?;
        sheet
            .write_string_with_format(top, col, label, &header_format)
            .map_err(xlsx_error)?;
    }
    if widths.len() < table.cols.len() {
        widths.resize(table.cols.len(), 0.0);
    }
    if table.rows.is_empty() {
        // Under the header, or alone when there are no columns either.
        let row = if table.cols.is_empty() { top } else { top + 1 };
        let note = nothing_found(lang);
        sheet.write_string(row, 0, note).map_err(xlsx_error)?;
        if widths.is_empty() {
            widths.push(0.0);
        }
        widths[0] = widths[0].max(column_width(UnicodeWidthStr::width(note)));
        return Ok(row + 1);
    }
    let code_columns = table.code_columns(lang);
    for (c, name) in table.cols.iter().enumerate() {
        let col = u16::try_from(c).map_err(|_| failed("列が多すぎます", "too many columns"))?;
        let is_codes = code_columns.get(c).copied().unwrap_or(false);
        // A format is looked up by column name first, then by its header label; a yen amount
        // column the catalog knows is written #,##0 unless the plan says otherwise.
        let number_format = formats
            .get(name)
            .or_else(|| formats.get(&table.labels[c]))
            .and_then(Json::as_str)
            .or_else(|| codes::is_amount(name).then_some("#,##0"))
            .map(|f| Format::new().set_num_format(f));
        let mut widest = UnicodeWidthStr::width(table.labels[c].as_str());
        for (r, row) in table.rows.iter().enumerate() {
            let excel_row = top + 1 + u32::try_from(r).map_err(|_| too_many())?;
            let Some(value) = row.get(name) else { continue };
            let value = shown(name, value, lang, is_codes);
            widest = widest.max(UnicodeWidthStr::width(
                display_text(Some(value.as_ref())).as_str(),
            ));
            let written = match value.as_ref() {
                Json::Null => continue,
                Json::Number(n) => {
                    let x = n.as_f64().unwrap_or(0.0);
                    match &number_format {
                        Some(f) => sheet.write_number_with_format(excel_row, col, x, f),
                        None => sheet.write_number(excel_row, col, x),
                    }
                }
                Json::Bool(b) => sheet.write_boolean(excel_row, col, *b),
                Json::String(s) => match iso_date(s) {
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
                other => sheet.write_string(excel_row, col, other.to_string()),
            };
            written.map_err(xlsx_error)?;
        }
        widths[c] = widths[c].max(column_width(widest));
    }
    let written = u32::try_from(table.rows.len()).map_err(|_| too_many())?;
    Ok(top + 1 + written)
}

builtin!("excel.write_table", write_table);

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

/// A date cell for `2025-03-05` (what the date transforms produce) or `2025/03/05` (how
/// Japanese exports write it); other text, even one that reads as a date, stays text.
fn iso_date(s: &str) -> Option<ExcelDateTime> {
    let b = s.as_bytes();
    if b.len() != 10 || !matches!(b[4], b'-' | b'/') || b[7] != b[4] {
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
    summary: Option<&Table>,
    table: &Table,
    lang: Option<Lang>,
) -> Result<Outputs, BlockError> {
    let base_path = crate::paths::resolve_read(ctx, base)?;
    let env = patch_env(ctx);
    // A free sheet name: the requested one, else name_2, name_3, …
    let sheet =
        keiri_xlsx::free_sheet_name(&base_path.display().to_string(), sheet_name, &env.policy)
            .map_err(patch_error)?
            .ok_or_else(|| {
                failed(
                    "空いているシート名が見つかりません",
                    "no free sheet name found",
                )
            })?;
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
    for block in summary
        .filter(|s| !s.rows.is_empty())
        .into_iter()
        .chain(std::iter::once(table))
    {
        let mut values: Vec<Vec<Option<keiri_xlsx::CellValue>>> = Vec::new();
        if !block.cols.is_empty() {
            values.push(
                block
                    .labels
                    .iter()
                    .map(|l| Some(keiri_xlsx::CellValue::Text(l.clone())))
                    .collect(),
            );
        }
        let code_columns = block.code_columns(lang);
        for r in &block.rows {
            values.push(
                block
                    .cols
                    .iter()
                    .zip(&code_columns)
                    .map(|(c, &is_codes)| {
                        match r.get(c).map(|v| shown(c, v, lang, is_codes)).as_deref() {
                            None | Some(Json::Null) => None,
                            Some(Json::Number(n)) => n.as_f64().map(keiri_xlsx::CellValue::number),
                            Some(Json::Bool(b)) => Some(keiri_xlsx::CellValue::Bool(*b)),
                            Some(Json::String(s)) => Some(keiri_xlsx::CellValue::Text(s.clone())),
                            Some(other) => Some(keiri_xlsx::CellValue::Text(other.to_string())),
                        }
                    })
                    .collect(),
            );
        }
        let width = block.cols.len().max(1);
        if block.rows.is_empty() {
            // Under the header (or alone): an empty table says so.
            let mut note = vec![None; width];
            note[0] = Some(keiri_xlsx::CellValue::Text(nothing_found(lang).into()));
            values.push(note);
        }
        let last = keiri_xlsx::column_name(u32::try_from(width).unwrap_or(1));
        let end_row = start_row + values.len() - 1;
        ops.push(PatchOp::SetRangeValues {
            sheet: sheet.clone(),
            range: format!("A{start_row}:{last}{end_row}"),
            values,
        });
        // One empty row between the summary and the table.
        start_row = end_row + 2;
    }
    let mut req = PatchRequest::new(base_path.display().to_string(), ops);
    req.out_dir = Some(dir.display().to_string());
    req.out_name = Some(name.to_string());
    req.on_conflict = Some(conflict);
    let patched = keiri_xlsx::apply(&req, &env).map_err(patch_error)?;
    let response = patched.response;
    if let Some(e) = response.error {
        return Err(failed(
            format!("シートを追加できませんでした: {}", e.message),
            format!("could not add the sheet: {}", e.message),
        ));
    }
    let skipped = patched.outcome == PatchOutcome::Skipped;
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
        .with(
            "row_count",
            json!(if skipped { 0 } else { table.rows.len() }),
        ))
}
