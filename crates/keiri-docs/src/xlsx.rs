//! `.xlsx`/`.xlsm` text through calamine: one sheet, one window of cells, tab-separated rows.
//!
//! calamine's dense `Range` would allocate rows × columns cells, so a two-cell workbook with
//! `A1` and `XFD1048576` would ask for 17 billion cells. We use its streaming cell reader
//! instead and keep only the cells inside the window we render. Every XML entry calamine may
//! parse is first inflated through a counter ([`zipguard::verify_entries`]) so a zip bomb is
//! refused before calamine allocates anything, and the counts and cell references the parts
//! declare are checked on the way ([`crate::bounds`]): calamine 0.38 reserves memory by the
//! shared strings' `uniqueCount` and converts cell references with unchecked arithmetic.

use std::fmt::Write as _;
use std::io::Cursor;

use calamine::{DataRef, Reader, Xlsx, XlsxError};

use crate::bounds::Declared;
use crate::error::{Error, Result};
use crate::zipguard::{self, ZipLimits};

const FORMAT: &str = "xlsx";

/// What part of a workbook to render.
#[derive(Debug, Clone, Default)]
pub(crate) struct SheetOptions<'a> {
    /// Sheet name, or a 1-based index written `#2`; the first worksheet by default.
    pub sheet: Option<&'a str>,
    /// An A1 range such as `A1:F40`; the top-left window of the used range by default.
    pub range: Option<&'a str>,
    pub max_rows: u32,
    pub max_cols: u32,
    pub max_chars: Option<usize>,
}

/// A rendered sheet.
#[derive(Debug, Clone)]
pub(crate) struct SheetText {
    pub text: String,
    pub sheet: String,
    pub sheet_names: Vec<String>,
    /// The range that was rendered (A1 notation), if the sheet has data.
    pub rendered_range: Option<String>,
    /// The bounding box of all non-empty cells (A1 notation), if any.
    pub used_range: Option<String>,
    /// Why the text is shorter than the sheet, if it is.
    pub cut: Option<String>,
}

/// Opens a workbook with calamine once the package has passed our checks: every part calamine
/// may parse inflated through the zip-bomb counter, and the counts and cell references it
/// declares inside Excel's limits ([`crate::bounds`]). Every caller of calamine on untrusted
/// bytes opens through here (the runtime's `excel.read_workbook` too); calamine's own parsing
/// should still run behind a panic guard.
pub fn open_workbook(bytes: &[u8]) -> Result<Xlsx<Cursor<&[u8]>>> {
    let limits = ZipLimits::default();
    let mut archive = zipguard::open(bytes, FORMAT, &limits)?;
    zipguard::verify_entries(
        &mut archive,
        FORMAT,
        &limits,
        |name| {
            let lower = name.to_ascii_lowercase();
            (lower.ends_with(".xml") || lower.ends_with(".rels")) && !lower.contains("/media/")
        },
        &mut Declared::default(),
    )?;
    Xlsx::new(Cursor::new(bytes)).map_err(xlsx_error)
}

fn xlsx_error(e: XlsxError) -> Error {
    match e {
        XlsxError::Password => Error::Encrypted,
        XlsxError::Zip(z) => zipguard::zip_error(FORMAT, z),
        other => Error::corrupt(FORMAT, other.to_string()),
    }
}

/// Renders one sheet of the workbook in `bytes`.
pub(crate) fn extract(bytes: &[u8], opts: &SheetOptions<'_>) -> Result<SheetText> {
    let mut workbook = open_workbook(bytes)?;
    let names = workbook.sheet_names();
    let window = opts.range.map(parse_range).transpose()?;
    let candidates: Vec<String> = match opts.sheet {
        Some(wanted) => vec![resolve_sheet(&names, wanted)?],
        None => names.clone(),
    };
    let mut last_error = None;
    for name in candidates {
        match read_cells(&mut workbook, &name, window, opts) {
            Ok(cells) => {
                let mut sheet = render(cells, window, opts);
                sheet.sheet = name;
                sheet.sheet_names = names;
                return Ok(sheet);
            }
            // A chart sheet or dialog sheet is not a worksheet; the default picks the first
            // sheet that is.
            Err(XlsxError::NotAWorksheet(_)) if opts.sheet.is_none() => continue,
            Err(e) => {
                last_error = Some(e);
                break;
            }
        }
    }
    match last_error {
        Some(e) => Err(xlsx_error(e)),
        None => Ok(SheetText {
            text: String::new(),
            sheet: String::new(),
            sheet_names: names,
            rendered_range: None,
            used_range: None,
            cut: None,
        }),
    }
}

/// One cell's value as a workbook holds it (for comparing two workbooks cell by cell).
#[derive(Debug, Clone, PartialEq)]
pub enum CellData {
    Int(i64),
    Float(f64),
    Bool(bool),
    /// Text, and dates, durations and errors as text (dates as `YYYY-MM-DD`).
    Text(String),
}

/// One worksheet's non-empty cells: its name and `(row, col, value)`, rows and columns
/// 0-based, in the order the sheet stores them.
pub type SheetCells = (String, Vec<(u32, u32, CellData)>);

/// Every worksheet's non-empty cells.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkbookCells {
    pub sheets: Vec<SheetCells>,
    /// More than `max_cells` cells: the rest were not read.
    pub truncated: bool,
}

/// Reads the cell values of every worksheet of the workbook in `bytes`, at most `max_cells`
/// in all, through the same zip and part bounds as the text extraction. Formulas are read as
/// the values their writer cached.
pub fn workbook_cells(bytes: &[u8], max_cells: usize) -> Result<WorkbookCells> {
    crate::guard::parse(FORMAT, || {
        let mut workbook = open_workbook(bytes)?;
        let is_1904 = workbook.has_1904_epoch();
        let mut out = WorkbookCells::default();
        let mut count = 0usize;
        for name in workbook.sheet_names() {
            let mut reader = match workbook.worksheet_cells_reader(&name) {
                Ok(reader) => reader,
                Err(XlsxError::NotAWorksheet(_)) => continue,
                Err(e) => return Err(xlsx_error(e)),
            };
            let mut cells = Vec::new();
            while let Some(cell) = reader.next_cell().map_err(xlsx_error)? {
                let (row, col) = cell.get_position();
                let value = match cell.get_value() {
                    DataRef::Int(i) => CellData::Int(*i),
                    DataRef::Float(f) => CellData::Float(*f),
                    DataRef::Bool(b) => CellData::Bool(*b),
                    other => match format_value(other, is_1904) {
                        Some(text) => CellData::Text(text),
                        None => continue,
                    },
                };
                if count >= max_cells {
                    out.truncated = true;
                    break;
                }
                count += 1;
                cells.push((row, col, value));
            }
            out.sheets.push((name, cells));
            if out.truncated {
                break;
            }
        }
        Ok(out)
    })
}

/// A rectangle of one worksheet to read: rows and columns 0-based, inclusive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellWindow {
    pub sheet: String,
    pub rows: (u32, u32),
    pub cols: (u32, u32),
}

/// One non-empty cell of a [`CellWindow`]: its value as the workbook holds it (for a formula,
/// the value its writer cached; `None` when none was cached) and its formula, if it has one
/// (without the leading `=`, as the file stores it).
#[derive(Debug, Clone, PartialEq)]
pub struct WindowCell {
    pub row: u32,
    pub col: u32,
    pub value: Option<CellData>,
    pub formula: Option<String>,
}

/// The cells of each window, in the order of `windows`: `(sheet, cells)`. A window on a sheet
/// the workbook does not have (or on a chart sheet) gives no cells. The caller bounds the
/// windows' size; the reader streams the sheet and keeps only the cells inside them, so a
/// large sheet costs time, not memory. Same zip and part bounds as [`workbook_cells`].
pub fn workbook_window(
    bytes: &[u8],
    windows: &[CellWindow],
) -> Result<Vec<(String, Vec<WindowCell>)>> {
    crate::guard::parse(FORMAT, || {
        let mut workbook = open_workbook(bytes)?;
        let is_1904 = workbook.has_1904_epoch();
        let names = workbook.sheet_names();
        let mut out = Vec::with_capacity(windows.len());
        for window in windows {
            let mut cells = Vec::new();
            if !names.contains(&window.sheet) {
                out.push((window.sheet.clone(), cells));
                continue;
            }
            let mut reader = match workbook.worksheet_cells_reader(&window.sheet) {
                Ok(reader) => reader,
                Err(XlsxError::NotAWorksheet(_)) => {
                    out.push((window.sheet.clone(), cells));
                    continue;
                }
                Err(e) => return Err(xlsx_error(e)),
            };
            let inside = |(row, col): (u32, u32)| {
                (window.rows.0..=window.rows.1).contains(&row)
                    && (window.cols.0..=window.cols.1).contains(&col)
            };
            while let Some(cell) = reader.next_cell_with_formula().map_err(xlsx_error)? {
                // Rows are stored in ascending order (ECMA-376 18.3.1.73): past the window's
                // last row nothing more can fall inside it.
                if cell.pos.0 > window.rows.1 {
                    break;
                }
                if !inside(cell.pos) {
                    continue;
                }
                let value = match &cell.value {
                    DataRef::Int(i) => Some(CellData::Int(*i)),
                    DataRef::Float(f) => Some(CellData::Float(*f)),
                    DataRef::Bool(b) => Some(CellData::Bool(*b)),
                    other => format_value(other, is_1904).map(CellData::Text),
                };
                let formula = cell.formula.filter(|f| !f.is_empty());
                if value.is_none() && formula.is_none() {
                    continue;
                }
                cells.push(WindowCell {
                    row: cell.pos.0,
                    col: cell.pos.1,
                    value,
                    formula,
                });
            }
            out.push((window.sheet.clone(), cells));
        }
        Ok(out)
    })
}

fn resolve_sheet(names: &[String], wanted: &str) -> Result<String> {
    if let Some(name) = names.iter().find(|n| n.as_str() == wanted) {
        return Ok(name.clone());
    }
    if let Some(index) = wanted
        .strip_prefix('#')
        .and_then(|n| n.parse::<usize>().ok())
        && let Some(name) = index.checked_sub(1).and_then(|i| names.get(i))
    {
        return Ok(name.clone());
    }
    Err(Error::SheetNotFound(wanted.to_string()))
}

/// A rectangle of zero-based (row, column) positions, inclusive.
type Rect = ((u32, u32), (u32, u32));

struct Cells {
    cells: Vec<((u32, u32), String)>,
    /// Bounding box of every non-empty cell seen, kept or not.
    used: Option<Rect>,
    dropped: bool,
}

fn read_cells(
    workbook: &mut Xlsx<Cursor<&[u8]>>,
    sheet: &str,
    window: Option<Rect>,
    opts: &SheetOptions<'_>,
) -> std::result::Result<Cells, XlsxError> {
    let is_1904 = workbook.has_1904_epoch();
    let mut reader = workbook.worksheet_cells_reader(sheet)?;
    let max_kept = (opts.max_rows as usize)
        .saturating_mul(opts.max_cols as usize)
        .max(1);
    let mut out = Cells {
        cells: Vec::new(),
        used: None,
        dropped: false,
    };
    let mut first_row: Option<u32> = None;
    while let Some(cell) = reader.next_cell()? {
        let (row, col) = cell.get_position();
        let Some(value) = format_value(cell.get_value(), is_1904) else {
            continue;
        };
        out.used = Some(match out.used {
            None => ((row, col), (row, col)),
            Some(((r0, c0), (r1, c1))) => ((r0.min(row), c0.min(col)), (r1.max(row), c1.max(col))),
        });
        let keep = match window {
            Some(((r0, c0), (r1, c1))) => row >= r0 && row <= r1 && col >= c0 && col <= c1,
            None => {
                // Rows arrive in order in every writer we know; the first non-empty row
                // anchors the window, and columns are trimmed when rendering.
                let top = *first_row.get_or_insert(row);
                row >= top && row - top < opts.max_rows
            }
        };
        if keep && out.cells.len() < max_kept.saturating_mul(4) {
            out.cells.push(((row, col), value));
        } else {
            out.dropped = true;
        }
    }
    Ok(out)
}

fn render(cells: Cells, window: Option<Rect>, opts: &SheetOptions<'_>) -> SheetText {
    let Cells {
        mut cells,
        used,
        dropped,
    } = cells;
    cells.sort_by_key(|(pos, _)| *pos);
    let rect = match (window, used) {
        (Some(w), _) => Some(w),
        (None, None) => None,
        (None, Some(((r0, _), (r1, c1)))) => {
            let c0 = cells.iter().map(|((_, c), _)| *c).min().unwrap_or(0);
            let r1 = r1.min(r0.saturating_add(opts.max_rows.saturating_sub(1)));
            let c1 = c1.min(c0.saturating_add(opts.max_cols.saturating_sub(1)));
            Some(((r0, c0), (r1, c1)))
        }
    };
    let mut sheet = SheetText {
        text: String::new(),
        sheet: String::new(),
        sheet_names: Vec::new(),
        rendered_range: rect.map(|((r0, c0), (r1, c1))| {
            format!("{}{}:{}{}", col_name(c0), r0 + 1, col_name(c1), r1 + 1)
        }),
        used_range: used.map(|((r0, c0), (r1, c1))| {
            format!("{}{}:{}{}", col_name(c0), r0 + 1, col_name(c1), r1 + 1)
        }),
        cut: None,
    };
    let Some(((r0, c0), (r1, c1))) = rect else {
        return sheet;
    };
    let mut chars = 0usize;
    let mut lines: Vec<String> = Vec::new();
    cells.retain(|((r, c), _)| *r >= r0 && *r <= r1 && *c >= c0 && *c <= c1);
    // Render up to the last row that has data inside the window, not to an empty tail.
    let last_row = cells.last().map_or(r0, |((r, _), _)| *r);
    let mut iter = cells.into_iter().peekable();
    let mut truncated_chars = false;
    for row in r0..=last_row.min(r1) {
        let mut line = String::new();
        let mut col = c0;
        while let Some(((r, c), _)) = iter.peek() {
            if *r != row {
                break;
            }
            let c = *c;
            while col < c {
                line.push('\t');
                col += 1;
            }
            if let Some((_, v)) = iter.next() {
                line.push_str(&v);
            }
        }
        let needed = line.chars().count() + usize::from(!lines.is_empty());
        if let Some(max) = opts.max_chars
            && chars + needed > max
        {
            let room = max.saturating_sub(chars + usize::from(!lines.is_empty()));
            if room > 0 {
                lines.push(line.chars().take(room).collect());
            }
            truncated_chars = true;
            break;
        }
        chars += needed;
        lines.push(line);
    }
    sheet.text = lines.join("\n");
    let beyond =
        used.is_some_and(|((_, _), (ur1, uc1))| window.is_none() && (ur1 > r1 || uc1 > c1));
    sheet.cut = if truncated_chars {
        Some("max_chars".to_string())
    } else if beyond || (dropped && window.is_none()) {
        Some(format!(
            "window of {} rows x {} columns (used range {})",
            opts.max_rows,
            opts.max_cols,
            sheet.used_range.clone().unwrap_or_default()
        ))
    } else {
        None
    };
    sheet
}

/// A cell as text, or `None` for an empty cell. Line breaks and tabs inside a cell become
/// spaces so that one row stays one line.
fn format_value(value: &DataRef<'_>, is_1904: bool) -> Option<String> {
    let s = match value {
        DataRef::Empty => return None,
        DataRef::String(s) => clean(s),
        DataRef::SharedString(s) => clean(s),
        DataRef::Int(i) => i.to_string(),
        DataRef::Float(f) => format_number(*f),
        DataRef::Bool(b) => if *b { "TRUE" } else { "FALSE" }.to_string(),
        DataRef::DateTime(dt) => {
            if dt.is_duration() {
                format_duration(dt.as_f64())
            } else {
                format_serial_date(dt.as_f64(), is_1904)
            }
        }
        DataRef::DateTimeIso(s) | DataRef::DurationIso(s) => clean(s),
        DataRef::Error(e) => e.to_string(),
    };
    if s.is_empty() { None } else { Some(s) }
}

fn clean(s: &str) -> String {
    s.chars()
        .map(|c| {
            if matches!(c, '\t' | '\n' | '\r') {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// Numbers the way Excel's General format shows them: integers without a fraction, others in
/// the shortest form that round-trips.
pub(crate) fn format_number(f: f64) -> String {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

fn format_duration(days: f64) -> String {
    let total = (days * 86_400.0).round();
    if !total.is_finite() {
        return String::new();
    }
    let total = total as i64;
    let sign = if total < 0 { "-" } else { "" };
    let t = total.unsigned_abs();
    format!("{sign}{}:{:02}:{:02}", t / 3600, (t / 60) % 60, t % 60)
}

/// An Excel serial date as ISO 8601 (`2024-03-31`, or with a time when it has one).
pub(crate) fn format_serial_date(serial: f64, is_1904: bool) -> String {
    if !serial.is_finite() || !(0.0..3_000_000.0).contains(&serial) {
        return format_number(serial);
    }
    let mut days = serial.floor() as i64;
    let mut seconds = ((serial - serial.floor()) * 86_400.0).round() as i64;
    if seconds >= 86_400 {
        days += 1;
        seconds -= 86_400;
    }
    // Days since 1970-01-01. The 1900 system counts a 29 February 1900 that never existed
    // (Lotus compatibility), so serials from 61 on are one day ahead.
    let unix_days = if is_1904 {
        days - 24_107
    } else if days >= 61 {
        days - 25_569
    } else {
        days - 25_568
    };
    let (y, m, d) = civil_from_days(unix_days);
    let mut out = format!("{y:04}-{m:02}-{d:02}");
    if seconds > 0 {
        let _ = write!(
            out,
            " {:02}:{:02}:{:02}",
            seconds / 3600,
            (seconds / 60) % 60,
            seconds % 60
        );
    }
    out
}

/// Gregorian (year, month, day) of a day count since 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Zero-based column index to letters (`0` → `A`, `26` → `AA`).
pub(crate) fn col_name(col: u32) -> String {
    keiri_xlsx::column_name(col.saturating_add(1))
}

/// Parses `A1` or `A1:F40` (with optional `$`) into a zero-based inclusive rectangle.
pub(crate) fn parse_range(s: &str) -> Result<Rect> {
    let bad = || Error::InvalidCellRange(s.to_string());
    let mut parts = s.trim().split(':');
    let first = parse_cell(parts.next().ok_or_else(bad)?).ok_or_else(bad)?;
    let second = match parts.next() {
        Some(p) => parse_cell(p).ok_or_else(bad)?,
        None => first,
    };
    if parts.next().is_some() {
        return Err(bad());
    }
    let (r0, r1) = (first.0.min(second.0), first.0.max(second.0));
    let (c0, c1) = (first.1.min(second.1), first.1.max(second.1));
    Ok(((r0, c0), (r1, c1)))
}

/// Zero-based (row, column) of an A1 cell (`$` and surrounding spaces allowed), by keiri-xlsx's
/// parser, the one every crate reads cell references with.
fn parse_cell(s: &str) -> Option<(u32, u32)> {
    let cell = keiri_xlsx::CellRef::parse(s.trim())?;
    Some((cell.row - 1, cell.col - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        fn check(s: &str, expect: Option<Rect>) {
            assert_eq!(parse_range(s).ok(), expect, "{s}");
        }
        check("A1", Some(((0, 0), (0, 0))));
        check("B2:D10", Some(((1, 1), (9, 3))));
        check("$D$10:B2", Some(((1, 1), (9, 3))));
        check(
            "XFD1048576",
            Some(((1_048_575, 16_383), (1_048_575, 16_383))),
        );
        check("A0", None);
        check("1A", None);
        check("A1:B2:C3", None);
        check("XFE1", None);
        check("", None);
    }

    #[test]
    fn columns_and_dates() {
        for (c, name) in [
            (0, "A"),
            (25, "Z"),
            (26, "AA"),
            (701, "ZZ"),
            (702, "AAA"),
            (16_383, "XFD"),
        ] {
            assert_eq!(col_name(c), name);
        }
        for (serial, is_1904, text) in [
            (1.0, false, "1900-01-01"),
            (59.0, false, "1900-02-28"),
            (61.0, false, "1900-03-01"),
            (45_382.0, false, "2024-03-31"),
            (45_382.5, false, "2024-03-31 12:00:00"),
            (0.0, true, "1904-01-01"),
        ] {
            assert_eq!(format_serial_date(serial, is_1904), text, "{serial}");
        }
        assert_eq!(format_number(5000.0), "5000");
        assert_eq!(format_number(0.1), "0.1");
        assert_eq!(format_duration(1.5), "36:00:00");
    }
}
