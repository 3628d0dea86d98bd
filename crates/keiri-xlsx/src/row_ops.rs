//! The row and sheet ops of a roll-forward job, as an accountant does it in Excel: copy last
//! period's sheet, find the row whose key is X and write some of its columns, add rows after
//! the last one. Their fields are here (the contract); `patch::rows` and `patch::copy` apply
//! them.
//!
//! Columns are named the way the sheet names them: by the header text in `header_row`
//! (compared after NFKC normalisation, trimming and folding inner whitespace, so `社員番号`,
//! ` 社員番号 ` and a full-width `ＩＤ` find their columns), or by a column letter. Keys are
//! compared the same way, and a number cell `1001` matches the key `"1001"` or `1001`.

use std::collections::{BTreeMap, HashMap};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use unicode_normalization::UnicodeNormalization;

use crate::contract::CellValue;
use crate::sheet::{Content, SheetDoc};

/// One row to write: column (header text or letter) → value. `null` clears the cell.
pub type RowValues = BTreeMap<String, Option<CellValue>>;

/// What `update_rows_by_key` does with a key no row of the sheet has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnMissing {
    /// The op fails, naming the keys (nothing is written).
    #[default]
    Error,
    /// The row is appended after the last row, as `append_rows` appends it.
    Append,
    /// The row is left out, with a warning naming the keys.
    Skip,
}

/// Where an appended row's styles and formulas come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CopyStyleFrom {
    /// The row above: its cell styles, and its formulas shifted down (the columns the row
    /// gives values for excepted).
    #[default]
    Last,
    /// Nothing: only the given values are written.
    None,
}

/// `update_rows_by_key`: finds each row by its key cell and writes the named columns. Each
/// item of `rows` holds the key under the key column's name (the header text or letter given
/// as `key_column`) and the values to write under their columns' names. A key found in more
/// than one row, or given twice, is an error; so is a column the header row does not have.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateRowsByKey {
    #[serde(default)]
    pub sheet: String,
    /// The row holding the column headers (1-based; default 1). Keys are searched below it.
    #[serde(default = "first_row")]
    pub header_row: u32,
    /// The key column: its header text, or its letter.
    pub key_column: String,
    // `rows` (`{"<key column>": key, "<column>": value, ...}`) is described on the struct:
    // set_dimensions has a field of the same name, and the block spec shows one description.
    pub rows: Vec<RowValues>,
    /// A key no row has: `error` (default), `append` or `skip`.
    #[serde(default)]
    pub on_missing: OnMissing,
    /// With `on_missing: append`: whether totals over the table are extended to the appended
    /// rows (see `append_rows`; default `true`).
    #[serde(default = "yes")]
    pub extend_ranges: bool,
    /// A fill colour (`#D9D9D9`) for each row found, as a leaver's row is greyed out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill_color: Option<String>,
    /// The columns `fill_color` paints (`A:P`); default: from the first to the last header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill_columns: Option<String>,
}

/// `append_rows`: writes rows after the last row holding a value (formula-only rows of a
/// template are filled in place), each carrying the styles and the shifted formulas of the row
/// above (`copy_style_from: last`, the default). A last row that totals the rows above it is
/// an error (the new rows would be left out of its total); formulas elsewhere on the sheet that
/// sum a range ending at the old last row are named in a warning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppendRows {
    #[serde(default)]
    pub sheet: String,
    /// The row holding the column headers (1-based). Without it, columns are named by letter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_row: Option<u32>,
    // `rows` (`{"<column>": value, ...}`): see `UpdateRowsByKey::rows`.
    pub rows: Vec<RowValues>,
    /// `last` (default): styles and shifted formulas of the row above; `none`: values only.
    #[serde(default)]
    pub copy_style_from: CopyStyleFrom,
    /// Whether formulas outside the table that add up its rows (`=SUM(H6:H12)`) are extended
    /// to the appended rows (default `true`, as an accountant extends a total by hand); with
    /// `false` they are left and named in a warning.
    #[serde(default = "yes")]
    pub extend_ranges: bool,
}

fn yes() -> bool {
    true
}

/// `copy_sheet`: a copy of worksheet `sheet` (alias `source`) under a new name — values, formulas, styles, merges,
/// column widths, row heights, conditional formats, data validations, print settings and the
/// defined names scoped to it. Drawings, comments, tables and other parts the sheet relates to
/// are not copied; a warning names each one left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CopySheet {
    // The sheet to copy (alias `source`); not a doc comment, as the block spec shows the first
    // description of `sheet` for every op.
    #[serde(default)]
    pub sheet: String,
    /// The new sheet's name (aliases `name`, `target`).
    pub new_sheet: String,
    /// Where the copy goes among the tabs, 1-based (default: after the last).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<u32>,
}

fn first_row() -> u32 {
    1
}

/// Header and key text as compared: NFKC (full-width digits and letters, half-width kana),
/// trimmed, inner whitespace folded to one space, and case folded — Excel's own lookups
/// (`VLOOKUP`, `MATCH`) ignore case, and an accountant expects `emp005` to find `EMP005`.
pub(crate) fn normalise_key(text: &str) -> String {
    let folded: String = text.nfkc().collect();
    folded
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// A key given in a request, as compared (`None` for an empty key).
pub(crate) fn key_of(value: &CellValue) -> Option<String> {
    let text = match value {
        CellValue::Text(s) => normalise_key(s),
        CellValue::Typed(t) => normalise_key(match t {
            crate::contract::TypedValue::Date(s)
            | crate::contract::TypedValue::Datetime(s)
            | crate::contract::TypedValue::Text(s) => s,
        }),
        CellValue::Int(n) => n.to_string(),
        CellValue::Float(f) => crate::sheet::format_number(*f),
        CellValue::Bool(b) => if *b { "true" } else { "false" }.to_string(),
    };
    (!text.is_empty()).then_some(text)
}

/// A column given by letters only (`A`, `AB`), within the sheet's columns.
pub(crate) fn column_letters(name: &str) -> Option<u32> {
    let t = name.trim();
    if t.is_empty() || t.len() > 3 || !t.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    crate::a1::column_number(&t.to_ascii_uppercase())
}

impl UpdateRowsByKey {
    pub(crate) fn validate(&self) -> Result<(), String> {
        check_header_row(self.header_row)?;
        if self.key_column.trim().is_empty() {
            return Err("update_rows_by_key key_column must not be empty".to_string());
        }
        if let Some(color) = &self.fill_color {
            crate::design::argb(color, "fill_color")?;
        }
        if let Some(columns) = &self.fill_columns {
            column_span(columns)?;
        }
        let key = normalise_key(&self.key_column);
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for (n, row) in self.rows.iter().enumerate() {
            let given = row
                .iter()
                .find(|(k, _)| normalise_key(k) == key)
                .map(|(_, v)| v);
            let Some(Some(value)) = given else {
                return Err(format!(
                    "update_rows_by_key rows[{n}] has no key under {:?}",
                    self.key_column
                ));
            };
            let Some(k) = key_of(value) else {
                return Err(format!(
                    "update_rows_by_key rows[{n}] has an empty key under {:?}",
                    self.key_column
                ));
            };
            if let Some(first) = seen.insert(k.clone(), n) {
                return Err(format!(
                    "update_rows_by_key rows[{first}] and rows[{n}] both have the key {k:?}; \
                     give each key once"
                ));
            }
            if row.len() < 2 {
                return Err(format!(
                    "update_rows_by_key rows[{n}] (key {k:?}) names no column to write"
                ));
            }
        }
        Ok(())
    }
}

impl AppendRows {
    pub(crate) fn validate(&self) -> Result<(), String> {
        if let Some(h) = self.header_row {
            check_header_row(h)?;
        }
        if let Some(n) = self.rows.iter().position(BTreeMap::is_empty) {
            return Err(format!("append_rows rows[{n}] names no column"));
        }
        if self.header_row.is_none()
            && let Some(name) = self
                .rows
                .iter()
                .flat_map(BTreeMap::keys)
                .find(|k| column_letters(k).is_none())
        {
            return Err(format!(
                "append_rows: {name:?} is not a column letter; give header_row to name \
                 columns by their header text"
            ));
        }
        Ok(())
    }
}

impl CopySheet {
    pub(crate) fn validate(&self) -> Result<(), String> {
        crate::book::check_sheet_name(&self.new_sheet)?;
        if self.position == Some(0) {
            return Err("copy_sheet position is 1-based; 1 is the first tab".to_string());
        }
        Ok(())
    }
}

/// `A:P` (or `C`) as the first and last column number.
pub(crate) fn column_span(text: &str) -> Result<(u32, u32), String> {
    let (a, b) = text.split_once(':').unwrap_or((text, text));
    match (column_letters(a), column_letters(b)) {
        (Some(x), Some(y)) => Ok((x.min(y), x.max(y))),
        _ => Err(format!(
            "fill_columns {text:?} is not a column span such as A:P"
        )),
    }
}

/// The header row of a sheet: normalised header text → the columns that carry it.
pub(crate) struct Headers {
    pub(crate) row: Option<u32>,
    by_name: HashMap<String, Vec<u32>>,
}

impl Headers {
    /// The headers of `row` (text, numbers, a formula's cached text).
    pub(crate) fn read(doc: &SheetDoc, sst: &[String], row: u32) -> Headers {
        let mut by_name: HashMap<String, Vec<u32>> = HashMap::new();
        for (col, content) in doc.row_cells(row, sst) {
            if let Some(text) = cell_text(&content) {
                by_name.entry(text).or_default().push(col);
            }
        }
        Headers {
            row: Some(row),
            by_name,
        }
    }

    /// No header row: columns are named by letter only.
    pub(crate) fn letters_only() -> Headers {
        Headers {
            row: None,
            by_name: HashMap::new(),
        }
    }

    /// The first and last column with a header.
    pub(crate) fn span(&self) -> Option<(u32, u32)> {
        let cols = self.by_name.values().flatten();
        Some((*cols.clone().min()?, *cols.max()?))
    }

    /// The column a request names: its header text, else its letter.
    pub(crate) fn column(&self, sheet: &str, name: &str) -> Result<u32, String> {
        let key = normalise_key(name);
        if let Some(cols) = self.by_name.get(&key) {
            return match cols.as_slice() {
                [one] => Ok(*one),
                many => Err(format!(
                    "the header {name:?} is in columns {} of {sheet}; name the column by its \
                     letter",
                    many.iter()
                        .map(|c| crate::a1::column_name(*c))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            };
        }
        if let Some(col) = column_letters(name) {
            return Ok(col);
        }
        let mut known: Vec<(&u32, &String)> = self
            .by_name
            .iter()
            .flat_map(|(n, cols)| cols.iter().map(move |c| (c, n)))
            .collect();
        known.sort();
        let known: Vec<String> = known.into_iter().map(|(_, n)| format!("{n:?}")).collect();
        Err(match self.row {
            Some(row) => format!(
                "{sheet} has no column {name:?} in its header row {row} (headers: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ),
            None => format!("{name:?} is not a column letter"),
        })
    }
}

/// A cell's text as a header or key compares it (`None`: empty, or nothing to compare).
pub(crate) fn cell_text(content: &Content) -> Option<String> {
    let text = match content {
        Content::Text(s) | Content::Date(s) => normalise_key(s),
        Content::Number(n) => crate::sheet::format_number(*n),
        Content::Bool(b) => if *b { "true" } else { "false" }.to_string(),
        Content::Formula {
            cached: Some(c), ..
        } => normalise_key(&c.v),
        _ => return None,
    };
    (!text.is_empty()).then_some(text)
}

fn check_header_row(row: u32) -> Result<(), String> {
    if row == 0 || row >= crate::a1::MAX_ROW {
        return Err(format!(
            "header_row {row} is outside the sheet's rows 1..{}",
            crate::a1::MAX_ROW - 1
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_headers_compare_as_an_accountant_reads_them() {
        assert_eq!(normalise_key(" ＥＭＰ００１ "), "emp001");
        assert_eq!(normalise_key("Emp001"), normalise_key("EMP001"));
        assert_eq!(normalise_key("社員\u{3000}番号"), "社員 番号");
        assert_eq!(normalise_key("ｼｬｲﾝ"), "シャイン");
        assert_eq!(key_of(&CellValue::Int(1001)), Some("1001".to_string()));
        assert_eq!(key_of(&CellValue::Float(1001.0)), Some("1001".to_string()));
        assert_eq!(key_of(&CellValue::Text("  ".into())), None);
        assert_eq!(column_letters("b"), Some(2));
        assert_eq!(column_letters("XFD"), Some(16_384));
        assert_eq!(column_letters("XFE"), None);
        assert_eq!(column_letters("社員番号"), None);
    }
}
