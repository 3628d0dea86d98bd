//! `excel.read_workbook`: its inputs and outputs are in `block_specs/input/excel.read_workbook.yaml`.

use super::{column_letter, read_bytes};
use crate::block::ProgressUnit;
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::kit::steps::Steps;
use crate::jp;
use crate::value::Row;
use serde_json::{Value as J, json};
use std::collections::BTreeMap;

/// Zero-based (row, column) of an A1 cell, by keiri-xlsx's parser.
fn parse_cell(s: &str) -> Option<(u32, u32)> {
    let cell = keiri_xlsx::CellRef::parse(s.trim())?;
    Some((cell.row - 1, cell.col - 1))
}

/// Cells a sheet may hold before we refuse it (a hostile file could declare millions).
const MAX_CELLS: usize = 20_000_000;

fn excel_read_workbook(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let path = inputs.require_str("path")?;
    let header_row = inputs.i64("header_row")?.unwrap_or(1);
    let header_row = u32::try_from(header_row).map_err(|_| {
        BlockError::input_invalid("header_row", "0以上の整数が必要です", "expected 0 or more")
    })?;
    let skip_empty = inputs.bool("skip_empty_rows")?.unwrap_or(true);
    let formula_mode = match inputs.str("value_mode")?.unwrap_or("value") {
        "value" => false,
        "formula" => true,
        other => {
            return Err(BlockError::input_invalid(
                "value_mode",
                &format!("{other} は使えません（value, formula）"),
                &format!("{other} is not value or formula"),
            ));
        }
    };
    let range = match inputs.str("range")? {
        None => None,
        Some(r) => {
            let (a, b) = r.split_once(':').unwrap_or((r, r));
            match (parse_cell(a), parse_cell(b)) {
                (Some(start), Some(end)) => Some((start, end)),
                _ => {
                    return Err(BlockError::input_invalid(
                        "range",
                        "A1形式の範囲（例 A3:K500）が必要です",
                        "expected an A1 range such as A3:K500",
                    ));
                }
            }
        }
    };
    let sheet_wanted = inputs.get("sheet").map(|v| v.to_json());
    let (_, bytes) = read_bytes(ctx, path)?;
    let corrupt = |detail: String| {
        BlockError::failed(
            format!("Excelファイルを読めません（CORRUPT_FILE）: {detail}"),
            format!("cannot read the workbook (CORRUPT_FILE): {detail}"),
        )
    };
    // calamine parses untrusted XML; a panic in it must not end the run.
    let read = keiri_fs::catch_panic(|| read_sheet(&bytes, sheet_wanted.as_ref(), formula_mode));
    let (sheet, sheet_names, cells) = match read {
        Ok(Ok(found)) => found,
        Ok(Err(SheetError::NotFound(names))) => {
            let list = names.join(", ");
            let wanted = match &sheet_wanted {
                Some(J::String(name)) => name.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            };
            return Err(BlockError::failed(
                format!("{path} にシート「{wanted}」がありません（あるシート: {list}）"),
                format!("{path} has no sheet \"{wanted}\" (its sheets: {list})"),
            )
            .with_hint(
                format!("sheet を次のどれかにしてください: {list}"),
                format!("set sheet to one of: {list}"),
            ));
        }
        Ok(Err(SheetError::Corrupt(e))) => return Err(corrupt(e)),
        Err(panic) => return Err(corrupt(format!("the parser panicked ({panic})"))),
    };
    let ((r0, c0), (r1, c1)) = match range {
        Some(r) => r,
        None => cells
            .keys()
            .fold(None, |acc: Option<((u32, u32), (u32, u32))>, &(r, c)| {
                Some(match acc {
                    None => ((r, c), (r, c)),
                    Some(((a, b), (x, y))) => ((a.min(r), b.min(c)), (x.max(r), y.max(c))),
                })
            })
            .unwrap_or_default(),
    };
    // The header row is one-based in the sheet; with a range it still names a sheet row.
    let header_index = if header_row == 0 {
        None
    } else {
        Some(header_row - 1)
    };
    let mut columns: Vec<String> = Vec::new();
    for c in c0..=c1 {
        let name = header_index
            .and_then(|h| cells.get(&(h, c)))
            .map(|v| match v {
                J::String(s) => s.trim().to_owned(),
                other => other.to_string(),
            })
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| column_letter(c));
        // Two columns with one header name would overwrite each other's cells.
        let mut unique = name.clone();
        let mut n = 2;
        while columns.contains(&unique) {
            unique = format!("{name}_{n}");
            n += 1;
        }
        columns.push(unique);
    }
    let first_data = match header_index {
        Some(h) => (h + 1).max(r0),
        None => r0,
    };
    let mut rows: Vec<Row> = Vec::new();
    if !cells.is_empty() {
        let mut steps = Steps::new(
            ctx,
            ProgressUnit::Rows,
            usize::try_from(r1.saturating_sub(first_data) + 1).ok(),
        );
        for r in first_data..=r1 {
            steps.next()?;
            let mut row = Row::new();
            let mut any = false;
            for (i, c) in (c0..=c1).enumerate() {
                let v = cells.get(&(r, c)).cloned().unwrap_or(J::Null);
                any |= !v.is_null();
                row.insert(columns[i].clone(), v);
            }
            if any || !skip_empty {
                rows.push(row);
            }
        }
    }
    let range_text = format!(
        "{}{}:{}{}",
        column_letter(c0),
        r0 + 1,
        column_letter(c1),
        r1 + 1
    );
    let summary =
        json!({"sheet": sheet, "rows": rows.len(), "columns": columns.len(), "range": range_text});
    Ok(Outputs::new()
        .with("rows", rows)
        .with("columns", json!(columns))
        .with("sheet_names", json!(sheet_names))
        .with("summary", summary))
}

builtin!("excel.read_workbook", excel_read_workbook);

enum SheetError {
    NotFound(Vec<String>),
    Corrupt(String),
}

type SheetCells = (String, Vec<String>, BTreeMap<(u32, u32), J>);

fn read_sheet(
    bytes: &[u8],
    wanted: Option<&J>,
    formula_mode: bool,
) -> Result<SheetCells, SheetError> {
    use calamine::{DataRef, Reader};
    let corrupt = |e: calamine::XlsxError| SheetError::Corrupt(e.to_string());
    // The checked open: zip bombs, impossible counts and references outside the grid are
    // refused before calamine reads them (it reserves and converts without checks).
    let mut workbook =
        keiri_docs::open_workbook(bytes).map_err(|e| SheetError::Corrupt(e.to_string()))?;
    let names = workbook.sheet_names();
    let sheet = match wanted {
        None => names.first().cloned(),
        Some(J::Number(n)) => n.as_u64().and_then(|i| names.get(i as usize).cloned()),
        Some(J::String(s)) => names
            .iter()
            .find(|n| n.as_str() == s)
            .cloned()
            .or_else(|| s.parse::<usize>().ok().and_then(|i| names.get(i).cloned())),
        Some(_) => None,
    }
    .ok_or_else(|| SheetError::NotFound(names.clone()))?;
    let is_1904 = workbook.has_1904_epoch();
    let mut reader = workbook.worksheet_cells_reader(&sheet).map_err(corrupt)?;
    let mut cells = BTreeMap::new();
    while let Some(cell) = reader.next_cell_with_formula().map_err(corrupt)? {
        if cells.len() >= MAX_CELLS {
            return Err(SheetError::Corrupt(format!("more than {MAX_CELLS} cells")));
        }
        let value = match (&cell.formula, formula_mode) {
            (Some(f), true) if !f.is_empty() => J::String(format!("={f}")),
            _ => match &cell.value {
                DataRef::Empty => continue,
                DataRef::String(s) => J::String(s.clone()),
                DataRef::SharedString(s) => J::String((*s).to_owned()),
                DataRef::Int(i) => J::from(*i),
                DataRef::Float(f) if f.fract() == 0.0 && f.abs() < 9e15 => J::from(*f as i64),
                DataRef::Float(f) => crate::value::float_json(*f),
                DataRef::Bool(b) => J::Bool(*b),
                DataRef::DateTime(dt) if !dt.is_duration() => {
                    let serial = dt.as_f64() + if is_1904 { 1462.0 } else { 0.0 };
                    match jp::excel_serial_date(serial) {
                        Some(d) if serial.fract() == 0.0 => {
                            J::String(d.format("%Y-%m-%d").to_string())
                        }
                        Some(d) => {
                            let secs = (serial.fract() * 86_400.0).round() as u32;
                            J::String(format!(
                                "{} {:02}:{:02}:{:02}",
                                d.format("%Y-%m-%d"),
                                secs / 3600,
                                secs / 60 % 60,
                                secs % 60
                            ))
                        }
                        None => crate::value::float_json(dt.as_f64()),
                    }
                }
                DataRef::DateTime(dt) => crate::value::float_json(dt.as_f64()),
                DataRef::DateTimeIso(s) | DataRef::DurationIso(s) => J::String(s.clone()),
                DataRef::Error(e) => J::String(format!("#{e:?}")),
            },
        };
        if matches!(&value, J::String(s) if s.is_empty()) {
            continue;
        }
        cells.insert(cell.pos, value);
    }
    Ok((sheet, names, cells))
}
