//! Cell values as the diff, the inverse ops and the `*_if` comparisons see them, and the
//! conversion of dates into Excel date serials.

use unicode_normalization::UnicodeNormalization;

use crate::contract::{CellValue, PatchValue, TypedValue, ValueKind};
use crate::dates::{self, DateTime};
use crate::formula;
use crate::sheet::Content;

/// The value an inverse op writes back for a cell's old content. Text that looks like an ISO
/// date is given the `text` kind, so that undoing a patch does not turn it into a date.
pub(super) fn inverse_value(c: &Content) -> Option<CellValue> {
    match c {
        Content::Text(t) | Content::Date(t) if dates::parse_date(t).is_some() => {
            Some(CellValue::Typed(TypedValue::Text(t.clone())))
        }
        other => plain_value(other),
    }
}

/// A cell's value as a scalar (`None` for empty cells and formulas).
fn plain_value(c: &Content) -> Option<CellValue> {
    match c {
        Content::Empty | Content::Formula { .. } => None,
        Content::Number(n) => Some(CellValue::number(*n)),
        Content::Bool(b) => Some(CellValue::Bool(*b)),
        Content::Text(t) | Content::Error(t) | Content::Date(t) => Some(CellValue::Text(t.clone())),
    }
}

/// A cell's content as the diff shows it.
pub(super) fn patch_value(c: &Content) -> Option<PatchValue> {
    match c {
        Content::Empty => None,
        Content::Formula { text, .. } => Some(PatchValue {
            kind: ValueKind::Formula,
            value: Some(CellValue::Text(format!("={text}"))),
        }),
        other => Some(PatchValue {
            kind: ValueKind::Value,
            value: plain_value(other),
        }),
    }
}

/// A date a value asks to write: the parsed date, the diff kind, the number format a cell
/// without one gets, and the ISO text the diff shows.
pub(super) struct DateWrite {
    pub date: DateTime,
    pub kind: ValueKind,
    pub format: &'static str,
    pub text: String,
}

/// Whether `v` is written as a date: `Some(Err)` is a `date`/`datetime` kind whose text is not
/// one. Plain text is a date only when it is exactly a real `YYYY-MM-DD` date.
pub(super) fn date_write(v: &CellValue) -> Option<Result<DateWrite, String>> {
    let date = |date, text: &str| DateWrite {
        date,
        kind: ValueKind::Date,
        format: dates::DATE_FORMAT,
        text: text.to_string(),
    };
    match v {
        CellValue::Text(t) => dates::parse_date(t).map(|d| Ok(date(d, t))),
        CellValue::Typed(TypedValue::Date(t)) => Some(
            dates::parse_date(t.trim())
                .map(|d| date(d, t.trim()))
                .ok_or_else(|| format!("the date {t:?} is not a date written as YYYY-MM-DD")),
        ),
        CellValue::Typed(TypedValue::Datetime(t)) => Some(
            dates::parse_datetime(t)
                .map(|d| DateWrite {
                    date: d,
                    kind: ValueKind::Datetime,
                    format: dates::DATETIME_FORMAT,
                    text: t.trim().to_string(),
                })
                .ok_or_else(|| {
                    format!(
                        "the datetime {t:?} is not a date and time written as \
                         YYYY-MM-DDTHH:MM[:SS] (or YYYY-MM-DD)"
                    )
                }),
        ),
        _ => None,
    }
}

pub(super) fn show(v: &CellValue) -> String {
    match v {
        CellValue::Bool(b) => b.to_string(),
        CellValue::Int(i) => i.to_string(),
        CellValue::Float(f) => f.to_string(),
        CellValue::Text(t) | CellValue::Typed(TypedValue::Text(t)) => format!("{t:?}"),
        CellValue::Typed(TypedValue::Date(t)) => format!("the date {t}"),
        CellValue::Typed(TypedValue::Datetime(t)) => format!("the datetime {t}"),
    }
}

pub(super) fn describe(c: &Content) -> String {
    match c {
        Content::Empty => "an empty cell".to_string(),
        Content::Number(n) => show(&CellValue::number(*n)),
        Content::Text(t) | Content::Error(t) | Content::Date(t) => format!("{t:?}"),
        Content::Bool(b) => b.to_string(),
        Content::Formula { text, .. } => format!("the formula ={text}"),
    }
}

/// A value reduced for `*_if` comparisons: empty and `""` are the same; numbers compare as
/// numbers (`1 == 1.0`); text compares after Unicode NFC; a date compares as its serial.
#[derive(Debug, PartialEq)]
enum Normal {
    Empty,
    Number(f64),
    Text(String),
    Bool(bool),
}

fn normal_of_value(v: Option<&CellValue>, date1904: bool) -> Normal {
    match v {
        None => Normal::Empty,
        Some(CellValue::Text(t) | CellValue::Typed(TypedValue::Text(t))) if t.is_empty() => {
            Normal::Empty
        }
        Some(CellValue::Text(t) | CellValue::Typed(TypedValue::Text(t))) => {
            Normal::Text(t.nfc().collect())
        }
        Some(CellValue::Int(i)) => Normal::Number(*i as f64),
        Some(CellValue::Float(f)) => Normal::Number(*f),
        Some(CellValue::Bool(b)) => Normal::Bool(*b),
        Some(v @ CellValue::Typed(TypedValue::Date(t) | TypedValue::Datetime(t))) => {
            match date_write(v).and_then(Result::ok) {
                Some(d) => dates::serial(d.date, date1904)
                    .map_or_else(|_| Normal::Text(t.clone()), Normal::Number),
                None => Normal::Text(t.clone()),
            }
        }
    }
}

/// Whether a cell holds the `expected` value of a `*_if` op. Plain text that is an ISO date
/// matches that text or the date's serial (what writing it would have stored).
pub(super) fn matches_expected(
    current: &Content,
    expected: Option<&CellValue>,
    date1904: bool,
) -> bool {
    let want = normal_of_value(expected, date1904);
    match current {
        Content::Formula { text, .. } => {
            // A formula matches its text, with or without the file-format prefixes.
            let written = Normal::Text(format!("={text}").nfc().collect());
            let plain = Normal::Text(
                format!("={}", formula::strip_file_prefixes(text))
                    .nfc()
                    .collect(),
            );
            want == written || want == plain
        }
        other => {
            let have = normal_of_value(plain_value(other).as_ref(), date1904);
            if have == want {
                return true;
            }
            match expected {
                Some(CellValue::Text(t)) => dates::parse_date(t)
                    .and_then(|d| dates::serial(d, date1904).ok())
                    .is_some_and(|serial| have == Normal::Number(serial)),
                _ => false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(current: Content, expected: Option<CellValue>, want: bool) {
        assert_eq!(
            matches_expected(&current, expected.as_ref(), false),
            want,
            "{current:?} vs {expected:?}"
        );
    }

    #[test]
    fn expected_values_are_normalised() {
        check(Content::Empty, None, true);
        check(Content::Empty, Some(CellValue::Text(String::new())), true);
        check(Content::Number(1.0), Some(CellValue::Int(1)), true);
        check(Content::Number(1.5), Some(CellValue::Float(1.5)), true);
        check(
            Content::Number(1.0),
            Some(CellValue::Text("1".into())),
            false,
        );
        // が as one code point (NFC) and as か + combining mark (NFD).
        check(
            Content::Text("\u{304C}".into()),
            Some(CellValue::Text("\u{304B}\u{3099}".into())),
            true,
        );
        check(Content::Text("a".into()), None, false);
        check(Content::Bool(true), Some(CellValue::Bool(true)), true);
        let f = Content::Formula {
            text: "_xlfn.IFS(A1,1)".into(),
            array: None,
            cached: None,
        };
        check(f.clone(), Some(CellValue::Text("=IFS(A1,1)".into())), true);
        check(f, Some(CellValue::Text("=_xlfn.IFS(A1,1)".into())), true);
        // A date compares as its serial; an ISO text also matches the text itself.
        let date = |t: &str| Some(CellValue::Typed(TypedValue::Date(t.into())));
        check(Content::Number(45747.0), date("2025-03-31"), true);
        check(Content::Number(45748.0), date("2025-03-31"), false);
        check(
            Content::Text("2025-03-31".into()),
            date("2025-03-31"),
            false,
        );
        check(
            Content::Number(45747.0),
            Some(CellValue::Text("2025-03-31".into())),
            true,
        );
        check(
            Content::Text("2025-03-31".into()),
            Some(CellValue::Text("2025-03-31".into())),
            true,
        );
        let text = Some(CellValue::Typed(TypedValue::Text("2025-03-31".into())));
        check(Content::Number(45747.0), text.clone(), false);
        check(Content::Text("2025-03-31".into()), text, true);
    }
}
