//! The shape of a table file: the header row of a CSV, or of each sheet of a workbook, with
//! the type the first values of each column suggest. Plans are checked against it (a node
//! naming a column the file lacks) and the planner is told it; this module only reads.

use serde::Serialize;

use crate::csv::Layout;
use crate::error::{Error, Result};
use crate::extract::Format;
use crate::text::EncodingChoice;
use crate::xlsx::{CellData, workbook_cells};

/// How many data rows under the header are looked at to guess a column's type.
pub const SAMPLE_ROWS: usize = 20;

/// Cells read from a workbook at most (every sheet's header and sample rows fit easily; a
/// huge first sheet must not stop the others from being described).
const MAX_WORKBOOK_CELLS: usize = 200_000;

/// One table: a CSV (`sheet` is `None`) or one sheet of a workbook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Table {
    pub sheet: Option<String>,
    pub columns: Vec<Column>,
}

/// A column's header and guessed type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Column {
    pub name: String,
    /// `number`, `date`, `boolean`, `text`, or `empty` when the sampled rows have no value.
    #[serde(rename = "type")]
    pub ty: &'static str,
}

/// The tables of a CSV or workbook in `bytes`; other formats are `UnsupportedFormat`. A CSV
/// is read with the `auto` encoding and the default [`Layout`] (delimiter detected, a header,
/// no skipped records), as `csv.read` reads it by default.
pub fn tables(bytes: &[u8], format: Format) -> Result<Vec<Table>> {
    tables_with(bytes, format, EncodingChoice::Auto, &Layout::default())
}

/// [`tables`], with a CSV read in `encoding` and `layout` (a plan's `csv.read` inputs); a
/// workbook ignores both.
pub fn tables_with(
    bytes: &[u8],
    format: Format,
    encoding: EncodingChoice,
    layout: &Layout,
) -> Result<Vec<Table>> {
    match format {
        Format::Csv => {
            // Binary content is no table (the document rules), whatever the encoding asked.
            if encoding == EncodingChoice::Auto {
                let text = crate::text::decode(bytes)?.text;
                Ok(vec![csv_table(&text, layout)])
            } else {
                let (text, _) = crate::text::decode_as(bytes, encoding)?;
                Ok(vec![csv_table(&text, layout)])
            }
        }
        Format::Xlsx | Format::Xlsm => workbook_tables(bytes),
        other => Err(Error::UnsupportedFormat(format!("{other:?}"))),
    }
}

/// The header and sampled column types of delimited text, by the layout rules of
/// [`crate::csv`] (the ones `csv.read` applies): blank records skipped, trailing empty
/// columns dropped.
fn csv_table(text: &str, layout: &Layout) -> Table {
    let table = crate::csv::read_sample(text, layout, SAMPLE_ROWS);
    let columns = table
        .columns
        .iter()
        .enumerate()
        .map(|(i, name)| Column {
            name: name.clone(),
            ty: guess(
                table
                    .rows
                    .iter()
                    .filter_map(|r| r.get(i))
                    .map(String::as_str),
            ),
        })
        .collect();
    Table {
        sheet: None,
        columns,
    }
}

fn workbook_tables(bytes: &[u8]) -> Result<Vec<Table>> {
    let cells = workbook_cells(bytes, MAX_WORKBOOK_CELLS)?;
    let mut tables = Vec::new();
    for (sheet, cells) in cells.sheets {
        // The header is the first row that has a cell; the sample is the rows under it.
        let Some(header_row) = cells.iter().map(|(r, _, _)| *r).min() else {
            tables.push(Table {
                sheet: Some(sheet),
                columns: Vec::new(),
            });
            continue;
        };
        let mut header: Vec<(u32, String)> = cells
            .iter()
            .filter(|(r, _, _)| *r == header_row)
            .map(|(_, c, v)| (*c, text_of(v)))
            .collect();
        header.sort_by_key(|(c, _)| *c);
        let last = header_row.saturating_add(u32::try_from(SAMPLE_ROWS).unwrap_or(u32::MAX));
        let columns = header
            .into_iter()
            .map(|(col, name)| {
                let values: Vec<&CellData> = cells
                    .iter()
                    .filter(|(r, c, _)| *c == col && *r > header_row && *r <= last)
                    .map(|(_, _, v)| v)
                    .collect();
                let ty = if values.is_empty() {
                    "empty"
                } else if values
                    .iter()
                    .all(|v| matches!(v, CellData::Int(_) | CellData::Float(_)))
                {
                    "number"
                } else if values.iter().all(|v| matches!(v, CellData::Bool(_))) {
                    "boolean"
                } else {
                    let texts: Vec<String> = values.iter().map(|v| text_of(v)).collect();
                    guess(texts.iter().map(String::as_str))
                };
                Column {
                    name: name.trim().to_string(),
                    ty,
                }
            })
            .collect();
        tables.push(Table {
            sheet: Some(sheet),
            columns,
        });
    }
    Ok(tables)
}

fn text_of(value: &CellData) -> String {
    match value {
        CellData::Int(i) => i.to_string(),
        CellData::Float(f) => f.to_string(),
        CellData::Bool(b) => b.to_string(),
        CellData::Text(t) => t.clone(),
    }
}

/// The type every non-empty value fits: amounts as accountants write them (`¥110,000`,
/// `△500`, `1,000円`) are numbers, `2025/03/05`, `2025-03-05` and `令和7年3月5日` are dates.
fn guess<'a>(values: impl Iterator<Item = &'a str>) -> &'static str {
    let values: Vec<&str> = values.map(str::trim).filter(|v| !v.is_empty()).collect();
    if values.is_empty() {
        return "empty";
    }
    if values.iter().all(|v| is_number(v)) {
        "number"
    } else if values.iter().all(|v| is_date(v)) {
        "date"
    } else if values
        .iter()
        .all(|v| matches!(v.to_ascii_lowercase().as_str(), "true" | "false"))
    {
        "boolean"
    } else {
        "text"
    }
}

fn is_number(v: &str) -> bool {
    let cleaned: String = v
        .chars()
        .filter(|c| !matches!(c, ',' | '¥' | '￥' | '円' | ' ' | '△' | '▲' | '%'))
        .collect();
    let cleaned = cleaned.trim_start_matches(['-', '+']);
    !cleaned.is_empty() && cleaned.parse::<f64>().is_ok()
}

fn is_date(v: &str) -> bool {
    let era = ["令和", "平成", "昭和"].iter().any(|e| v.starts_with(e));
    if era && v.contains('年') {
        return true;
    }
    let parts: Vec<&str> = v
        .split(['/', '-', '.', '年', '月', '日'])
        .filter(|p| !p.is_empty())
        .collect();
    parts.len() == 3
        && parts.iter().all(|p| p.chars().all(|c| c.is_ascii_digit()))
        && parts[0].len() == 4
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(table: &Table) -> Vec<(&str, &str)> {
        table
            .columns
            .iter()
            .map(|c| (c.name.as_str(), c.ty))
            .collect()
    }

    #[test]
    fn a_japanese_csv_gives_its_headers_and_their_types() {
        let csv = "請求書番号,取引先名,金額,請求日,備考\nA-1,株式会社山田商事,\"¥110,000\",2025/03/05,\"3月分, 事務用品\"\nA-2,北海道物産,\"33,000\",2025/03/03,\n";
        let tables = tables(csv.as_bytes(), Format::Csv).unwrap();
        assert_eq!(tables.len(), 1);
        assert_eq!(tables[0].sheet, None);
        assert_eq!(
            names(&tables[0]),
            [
                ("請求書番号", "text"),
                ("取引先名", "text"),
                ("金額", "number"),
                ("請求日", "date"),
                ("備考", "text"),
            ]
        );
    }

    #[test]
    fn a_shift_jis_csv_with_a_quoted_line_break_is_read() {
        let (bytes, _, _) = encoding_rs::SHIFT_JIS.encode("\"取引\n先\",金額\r\nA,1\r\n");
        let tables = tables(&bytes, Format::Csv).unwrap();
        assert_eq!(
            names(&tables[0]),
            [("取引\n先", "text"), ("金額", "number")]
        );
    }

    /// A 仕訳日記帳 exported by accounting software: CP932, three blank lines at the end, a
    /// formatted empty row (`,,,,,,`) and two trailing columns with no header or values.
    #[test]
    fn a_cp932_journal_with_blank_rows_and_empty_columns_gives_its_real_columns() {
        let text = "日付,伝票番号,借方勘定科目,借方金額,貸方勘定科目,貸方金額,摘要,,\r\n\
            2024/04/01,1,旅費交通費,1200,現金,1200,新幹線,,\r\n\
            ,,,,,,,,\r\n\
            2024/04/02,2,会議費,800,普通預金,800,,,\r\n\
            \r\n\r\n\r\n";
        let (bytes, _, _) = encoding_rs::SHIFT_JIS.encode(text);
        let tables = tables(&bytes, Format::Csv).unwrap();
        assert_eq!(
            names(&tables[0]),
            [
                ("日付", "date"),
                ("伝票番号", "number"),
                ("借方勘定科目", "text"),
                ("借方金額", "number"),
                ("貸方勘定科目", "text"),
                ("貸方金額", "number"),
                ("摘要", "text"),
            ]
        );
    }

    #[test]
    fn excel_unicode_text_is_read() {
        let bytes: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain(
                "取引先\t金額\r\nあさひ商事\t1000\r\n"
                    .encode_utf16()
                    .flat_map(u16::to_le_bytes),
            )
            .collect();
        let tables = tables(&bytes, Format::Csv).unwrap();
        assert_eq!(names(&tables[0]), [("取引先", "text"), ("金額", "number")]);
    }

    #[test]
    fn a_named_encoding_and_layout_are_used() {
        let (bytes, _, _) = encoding_rs::SHIFT_JIS.encode("売上明細\r\n得意先;金額\r\nA;1\r\n");
        let layout = Layout {
            skip_rows: 1,
            ..Layout::default()
        };
        let tables = tables_with(&bytes, Format::Csv, EncodingChoice::Cp932, &layout).unwrap();
        assert_eq!(names(&tables[0]), [("得意先", "text"), ("金額", "number")]);
        let err = tables_with(&bytes, Format::Csv, EncodingChoice::Utf8, &layout).unwrap_err();
        assert_eq!(err.code(), "ENCODING_MISMATCH");
    }

    #[test]
    fn a_pdf_has_no_tables() {
        let err = tables(b"%PDF-1.4", Format::Pdf).unwrap_err();
        assert_eq!(err.code(), "UNSUPPORTED_FORMAT");
    }
}
