//! The shape of a table file: the header row of a CSV, or of each sheet of a workbook, with
//! the type the first values of each column suggest. Plans are checked against it (a node
//! naming a column the file lacks) and the planner is told it; this module only reads.

use serde::Serialize;

use crate::error::{Error, Result};
use crate::extract::Format;
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

/// The tables of a CSV or workbook in `bytes`; other formats are `UnsupportedFormat`.
pub fn tables(bytes: &[u8], format: Format) -> Result<Vec<Table>> {
    match format {
        Format::Csv => {
            let text = crate::text::decode(bytes)?.text;
            Ok(vec![csv_table(&text)])
        }
        Format::Xlsx | Format::Xlsm => workbook_tables(bytes),
        other => Err(Error::UnsupportedFormat(format!("{other:?}"))),
    }
}

fn csv_table(text: &str) -> Table {
    let delimiter = sniff_delimiter(text);
    let records = csv_records(text, delimiter, SAMPLE_ROWS + 1);
    let mut rows = records.into_iter();
    let header: Vec<String> = rows.next().unwrap_or_default();
    let sample: Vec<Vec<String>> = rows.collect();
    let columns = header
        .iter()
        .enumerate()
        .map(|(i, name)| Column {
            name: name.trim().to_string(),
            ty: guess(sample.iter().filter_map(|r| r.get(i)).map(String::as_str)),
        })
        .collect();
    Table {
        sheet: None,
        columns,
    }
}

/// Tab when the first line has tabs and no commas (a TSV saved as .csv), else comma.
fn sniff_delimiter(text: &str) -> char {
    let first = text.lines().next().unwrap_or_default();
    if first.contains('\t') && !first.contains(',') {
        '\t'
    } else {
        ','
    }
}

/// The first `max` records of RFC 4180 text: quoted fields may hold the delimiter, doubled
/// quotes and line breaks.
fn csv_records(text: &str, delimiter: char, max: usize) -> Vec<Vec<String>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    field.push('"');
                    chars.next();
                }
                '"' => quoted = false,
                other => field.push(other),
            }
            continue;
        }
        match c {
            '"' if field.is_empty() => quoted = true,
            c if c == delimiter => record.push(std::mem::take(&mut field)),
            '\r' => {}
            '\n' => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
                if records.len() >= max {
                    return records;
                }
            }
            other => field.push(other),
        }
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    records
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

    #[test]
    fn a_pdf_has_no_tables() {
        let err = tables(b"%PDF-1.4", Format::Pdf).unwrap_err();
        assert_eq!(err.code(), "UNSUPPORTED_FORMAT");
    }
}
