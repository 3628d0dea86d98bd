//! `matching/*`: the builtins that pair rows of two (or three) tables or find duplicates in
//! one — exact keys, fuzzy scores, duplicate invoices, bank deposits against receivables,
//! the three-way match of orders, receipts and invoices, and semantic top-K.
//!
//! Every block reads rows (a table or a JSON array of objects) and returns JSON: the
//! results are pairs and groups of rows, which are not tables. `duplicate_invoices` and
//! `bank_reconciliation` read a table column by column ([`RowSource`]): only the columns
//! they compare, each distinct text parsed once, and only the rows they return become JSON.
//!
//! Names are compared after [`normalize_party_name`] (in `kit/text.rs`, which the row
//! expressions' `name_key` uses too): NFKC (full-width letters and digits
//! and half-width kana fold to one form, `㈱` becomes `(株)`), legal-form words and their
//! bank-transfer abbreviations removed (株式会社, (株), ｶ), …), hiragana folded to katakana
//! and small kana to large ones (bank transfers spell ｼｮｳｼﾞ as ｼﾖｳｼﾞ), spaces and
//! punctuation dropped. Similarity of two normalised names is Jaro–Winkler from `strsim`
//! (a small, well-kept crate already in the dependency tree through clap): it rewards a
//! shared prefix, which is how Japanese company names vary (山田商事 / 山田商事東京支店).
//!
//! Dependencies and why: `strsim` (string similarity, see above), `unicode-normalization`
//! (NFKC), `keiri-search` (the BM25 index and, when configured, the embedder behind
//! `matching.semantic_topk`, so the runtime ranks text the same way the planner does),
//! `foldhash` (the matching loops' hash maps, see [`FastMap`]).

mod bank_reconciliation;
mod blocking;
mod duplicate_invoices;
mod evidence_lookup;
mod exact_match;
mod fuzzy_match;
mod grid;
mod jaro;
mod semantic_topk;
mod three_way_match;

use std::collections::{HashMap, HashSet};

use chrono::NaiveDate;
use polars::prelude::{DataFrame, IdxCa, IdxSize};
use serde_json::{Map, Value as Json};
use unicode_normalization::UnicodeNormalization;

use super::invalid;
use crate::block::{BlockError, Inputs, Outputs};
use crate::blocks::kit::memo::Memo;
use crate::blocks::kit::numbers::num_json;
pub(crate) use crate::blocks::kit::text::normalize_party_name;
use crate::jp::{NegativeMarkers, parse_amount, parse_date};
use crate::value::{Row, Value, column_to_json, table_error, table_to_rows};

/// The hash maps of the matching loops, keyed by ids, cells and short texts of the user's own
/// files: foldhash (already built for hashbrown) hashes such keys several times faster than
/// the standard SipHash, whose resistance to crafted keys buys nothing here.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;
type FastSet<T> = HashSet<T, foldhash::fast::RandomState>;

// ---------------------------------------------------------------------------------------
// Shared helpers

/// Similarity (0 to 1) of two names after normalisation; 1 when equal.
pub(crate) fn name_similarity(a: &str, b: &str) -> f64 {
    normalized_name_similarity(&normalize_party_name(a), &normalize_party_name(b))
}

/// [`name_similarity`] of two names already through [`normalize_party_name`], for a block
/// that compares each name many times.
pub(crate) fn normalized_name_similarity(a: &str, b: &str) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    if a == b {
        return 1.0;
    }
    jaro::jaro_winkler(a, b)
}

/// A key as compared: surrounding spaces trimmed and, when asked, NFKC and lowercase.
fn key_text(v: Option<&Json>, normalize: bool) -> Option<String> {
    let text = match v? {
        Json::Null => return None,
        Json::String(s) => s.clone(),
        Json::Number(n) => n.to_string(),
        Json::Bool(b) => b.to_string(),
        other => other.to_string(),
    };
    let text = if normalize {
        text.nfkc().collect::<String>().trim().to_lowercase()
    } else {
        text.trim().to_string()
    };
    (!text.is_empty()).then_some(text)
}

/// A cell as text for messages and similarity.
fn cell_text(v: Option<&Json>) -> String {
    match v {
        None | Some(Json::Null) => String::new(),
        Some(Json::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// An amount or quantity cell: JSON numbers as they are, text through the Japanese amount
/// parser (`¥1,234`, `1,234円`, `△500`, full-width digits).
fn number(v: Option<&Json>) -> Option<f64> {
    match v? {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => parse_amount(s, &NegativeMarkers::default()).ok().flatten(),
        _ => None,
    }
}

/// A date cell: ISO text, slashes, 和暦 — whatever the Japanese date parser reads.
fn date(v: Option<&Json>) -> Option<NaiveDate> {
    match v? {
        Json::String(s) => parse_date(s),
        // A workbook date cell read as its serial number, or 20250331 read as a number.
        Json::Number(n) => {
            parse_date(&n.to_string()).or_else(|| n.as_f64().and_then(crate::jp::excel_serial_date))
        }
        _ => None,
    }
}

/// The rows a matching block reads, in the form they came: a table is read column by column
/// — only the columns the block compares, each distinct text once — and only the rows the
/// block returns become JSON. Turning a million-row table into JSON rows first cost most of a
/// run's time and memory. What the block sees of a cell is what it saw of the row's cell
/// (the cell as [`table_to_rows`] gives it), so the two forms give the same results.
enum RowSource<'a> {
    Table(&'a DataFrame),
    Rows(Vec<Row>),
}

impl<'a> RowSource<'a> {
    /// The required input `key`: a table as it is, anything else as rows (with the errors of
    /// [`Inputs::rows`]).
    fn of(inputs: &'a Inputs, key: &str) -> Result<RowSource<'a>, BlockError> {
        match inputs.get(key) {
            Some(Value::Table(df)) => Ok(RowSource::Table(df)),
            _ => inputs.rows(key).map(RowSource::Rows),
        }
    }

    fn len(&self) -> usize {
        match self {
            RowSource::Table(df) => df.height(),
            RowSource::Rows(rows) => rows.len(),
        }
    }

    /// `read` of every row's cell as text ([`cell_text`]: empty for a missing or null cell),
    /// in row order; as `self.cells(name, |v| read(&cell_text(v)))`, `read` given the empty
    /// text first. A text column gives `read` each distinct text once, remembered without
    /// bound and by reference into the column: for a `read` that keeps every distinct text
    /// itself (`Names::id`), past the bounded memo of [`RowSource::cells`] each row's text
    /// was copied twice and looked up twice (a million customer names are more than its
    /// 65,536).
    fn texts<T: Copy>(
        &self,
        name: &str,
        mut read: impl FnMut(&str) -> T,
    ) -> Result<Vec<T>, BlockError> {
        let column = match self {
            RowSource::Table(df) => df.column(name).ok().and_then(|c| c.str().ok()),
            RowSource::Rows(_) => None,
        };
        let Some(column) = column else {
            return self.cells(name, |v| read(&cell_text(v)));
        };
        let null = read("");
        let mut seen: FastMap<&str, T> = FastMap::default();
        Ok(column
            .iter()
            .map(|text| match text {
                None => null,
                Some(text) => *seen.entry(text).or_insert_with(|| read(text)),
            })
            .collect())
    }

    /// `read(row.get(name))` for every row, in row order. A text column gives `read` each
    /// distinct text once (in order of first appearance); a column the table lacks is
    /// `read(None)` on every row, as a row without the key.
    fn cells<T: Clone>(
        &self,
        name: &str,
        mut read: impl FnMut(Option<&Json>) -> T,
    ) -> Result<Vec<T>, BlockError> {
        let df = match self {
            RowSource::Rows(rows) => return Ok(rows.iter().map(|r| read(r.get(name))).collect()),
            RowSource::Table(df) => df,
        };
        let Ok(column) = df.column(name) else {
            return Ok(vec![read(None); df.height()]);
        };
        let Ok(texts) = column.str() else {
            return Ok(column_to_json(column)?
                .iter()
                .map(|cell| read(Some(cell)))
                .collect());
        };
        let null = read(Some(&Json::Null));
        // `read` gives a text the same value each time (`Names::id` is idempotent), so the
        // bounded memo gives every row its value.
        let mut seen: Memo<&str, T> = Memo::default();
        Ok(texts
            .iter()
            .map(|text| match text {
                None => null.clone(),
                Some(text) => seen.get_or(text, || read(Some(&Json::String(text.to_owned())))),
            })
            .collect())
    }

    /// The rows at `indices`, in that order, as JSON rows.
    fn rows_at(&self, indices: &[usize]) -> Result<Vec<Row>, BlockError> {
        match self {
            RowSource::Rows(rows) => Ok(indices.iter().map(|&i| rows[i].clone()).collect()),
            RowSource::Table(df) => table_to_rows(&take_rows(df, indices)?),
        }
    }

    /// The rows at `indices`, in that order, as the source holds rows: a table's are a table
    /// (its columns and their types kept, and its columns even when no row is taken), JSON
    /// rows' are JSON rows.
    fn take(&self, indices: &[usize]) -> Result<Value, BlockError> {
        match self {
            RowSource::Rows(_) => Ok(rows_json(self.rows_at(indices)?).into()),
            RowSource::Table(df) => Ok(Value::Table(take_rows(df, indices)?)),
        }
    }
}

/// The rows of `df` at `indices`, as a table.
fn take_rows(df: &DataFrame, indices: &[usize]) -> Result<DataFrame, BlockError> {
    let at = IdxCa::from_vec("at".into(), indices.iter().map(|&i| i as IdxSize).collect());
    df.take(&at).map_err(|e| table_error(&e))
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// A JSON object of these keys and values, in this order, the values moved in. `json!` is not
/// used for objects holding rows: it turns each value expression into a value with
/// `serde_json::to_value`, a deep copy of every row (the whole of `clusters` or `matches` once
/// more in memory, and most of the time spent building them).
fn object<const N: usize>(fields: [(&str, Json); N]) -> Json {
    Json::Object(
        fields
            .into_iter()
            .map(|(key, value)| (key.to_string(), value))
            .collect(),
    )
}

fn rows_json(rows: Vec<Row>) -> Json {
    Json::Array(rows.into_iter().map(Json::Object).collect())
}

/// A column pair: a string names the same column on both sides, an object `{left, right}`.
fn column_pair(item: &Json, key: &str) -> Result<ColumnPair, BlockError> {
    match item {
        Json::String(s) if !s.trim().is_empty() => Ok((s.clone(), s.clone(), Map::new())),
        Json::Object(map) => {
            let left = map.get("left").and_then(Json::as_str);
            let right = map.get("right").and_then(Json::as_str);
            let field = map.get("field").and_then(Json::as_str);
            match (left.or(field), right.or(field).or(left)) {
                (Some(l), Some(r)) => Ok((l.to_string(), r.to_string(), map.clone())),
                _ => Err(invalid(
                    format!("{key} の各要素には left と right の列名が必要です"),
                    format!("each item of {key} needs left and right column names"),
                )),
            }
        }
        _ => Err(invalid(
            format!("{key} の要素は列名の文字列か {{left, right}} です"),
            format!("items of {key} are column names or {{left, right}} objects"),
        )),
    }
}

/// A left column, a right column and the pair's own options.
type ColumnPair = (String, String, Map<String, Json>);

fn column_pairs(inputs: &Inputs, key: &str) -> Result<Vec<ColumnPair>, BlockError> {
    match inputs.json(key) {
        None => Ok(Vec::new()),
        Some(Json::Array(items)) => items.iter().map(|i| column_pair(i, key)).collect(),
        Some(other) => column_pair(&other, key).map(|p| vec![p]),
    }
}

fn outputs(pairs: Vec<(&str, Json)>) -> Outputs {
    let mut out = Outputs::default();
    for (k, v) in pairs {
        out.0.insert(k.to_string(), v.into());
    }
    out
}

fn items(inputs: &Inputs, key: &str) -> Result<Vec<Json>, BlockError> {
    match inputs.get(key) {
        None => Err(invalid(
            format!("{key} は必須です"),
            format!("{key} is required"),
        )),
        Some(v) => match v.to_json() {
            Json::Array(items) => Ok(items),
            _ => Err(invalid(
                format!("{key} は行または文字列の配列です"),
                format!("{key} must be an array of rows or strings"),
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn party_names_fold_legal_forms_width_and_kana() {
        for (a, b) in [
            ("株式会社山田商事", "山田商事"),
            ("(株)山田商事", "山田商事"),
            ("㈱山田商事", "山田商事"),
            ("（株）　山田商事", "山田商事"),
            ("ｶ)ﾔﾏﾀﾞｼｮｳｼﾞ", "ヤマダシヨウジ"),
            ("やまだしょうじ", "ヤマダシヨウジ"),
            ("ＡＢＣ　Ｔｒａｄｉｎｇ", "abctrading"),
        ] {
            assert_eq!(normalize_party_name(a), b, "{a}");
        }
    }
}
