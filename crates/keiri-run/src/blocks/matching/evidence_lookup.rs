//! `matching.evidence_lookup`: its inputs and outputs are in
//! `block_specs/matching/matching.evidence_lookup.yaml`.
//!
//! Each ledger row's document number (an invoice number) is looked up in the evidence files'
//! names and texts, both folded the same way (NFKC, capitals, no spaces, hyphens or
//! underscores): `INV-2025-0301` is found in 「請求書番号：ＩＮＶ－２０２５－０３０１」. With an
//! amount column, the evidence that holds the number must also show the amount (written
//! 110,000 or 110000) or the row is listed as not agreeing. A number too short to be told
//! apart from other figures (under four characters) is not looked up: the row is listed as
//! missing with that reason and a warning says so. Evidence without text (a scanned image)
//! can hold no number: such files are counted in the summary.

use super::{number, rows_json};
use crate::block::ProgressUnit;
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::kit::steps::Steps;
use crate::blocks::kit::text::text;
use crate::value::Row;
use serde_json::{Value as Json, json};
use unicode_normalization::UnicodeNormalization;

/// The shortest folded number that is looked up.
const MIN_NUMBER_CHARS: usize = 4;

fn evidence_lookup(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let rows = inputs.rows("rows")?;
    let files = inputs.rows("files")?;
    let number_field = inputs
        .str("number_field")?
        .unwrap_or("invoice_no")
        .to_string();
    let amount_field = inputs
        .str("amount_field")?
        .filter(|f| !f.trim().is_empty())
        .map(str::to_string);
    crate::value::require_columns(
        &rows,
        std::iter::once(number_field.as_str()).chain(amount_field.as_deref()),
    )?;
    // Each file's name, its name and text folded for numbers, and its text in NFKC for
    // amounts (spaces kept: `20 48400` are two figures).
    let folded: Vec<(String, String, String)> = files
        .iter()
        .map(|f| {
            let name = text(f.get("name").or_else(|| f.get("entry")));
            let body = text(f.get("text_excerpt"));
            let keyed = fold(&format!("{name}\n{body}"));
            (name, keyed, body.nfkc().collect())
        })
        .collect();
    let without_text = files
        .iter()
        .filter(|f| text(f.get("text_excerpt")).trim().is_empty())
        .count();
    let mut used = vec![false; files.len()];
    let (mut found, mut missing, mut disagree) = (Vec::new(), Vec::new(), Vec::new());
    let mut too_short = 0;
    let mut steps = Steps::new(ctx, ProgressUnit::Rows, Some(rows.len()));
    for row in &rows {
        steps.next()?;
        let key = fold(&text(row.get(&number_field)));
        if key.chars().count() < MIN_NUMBER_CHARS {
            too_short += usize::from(!key.is_empty());
            let reason = if key.is_empty() {
                "番号がありません"
            } else {
                "番号が短すぎて探せません"
            };
            missing.push(with(row, &[("reason", json!(reason))]));
            continue;
        }
        let hits: Vec<usize> = (0..files.len())
            .filter(|&i| folded[i].1.contains(&key))
            .collect();
        if hits.is_empty() {
            missing.push(with(row, &[("reason", json!("証憑が見つかりません"))]));
            continue;
        }
        for &i in &hits {
            used[i] = true;
        }
        let names: Vec<&str> = hits.iter().map(|&i| folded[i].0.as_str()).collect();
        let agrees = amount_field.as_ref().map(|field| {
            amount_texts(row.get(field))
                .iter()
                .any(|a| hits.iter().any(|&i| holds_number(&folded[i].2, a)))
        });
        let extra = [
            ("evidence_files", json!(names.join(", "))),
            ("amount_agrees", json!(agrees)),
        ];
        if agrees == Some(false) {
            disagree.push(with(row, &extra));
        }
        found.push(with(row, &extra));
    }
    ctx.calls.warn_rows_skipped(
        too_short,
        rows.len(),
        (
            &format!("番号（{number_field}）が {MIN_NUMBER_CHARS} 文字より短いため証憑を探していません（missing に入れました）"),
            &format!("were not looked up: their number ({number_field}) is shorter than {MIN_NUMBER_CHARS} characters (they are in missing)"),
        ),
    );
    ctx.calls.warn_if_mostly_flagged(
        missing.len(),
        rows.len(),
        ("証憑の見つからない行", "rows without evidence"),
    );
    let unused: Vec<Row> = files
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|(f, _)| f.clone())
        .collect();
    let summary = json!({
        "rows": rows.len(),
        "found": found.len(),
        "missing": missing.len(),
        "amount_disagrees": disagree.len(),
        "files": files.len(),
        "files_unused": unused.len(),
        "files_without_text": without_text,
    });
    Ok(Outputs::new()
        .with("found", rows_json(found))
        .with("missing", rows_json(missing))
        .with("amount_mismatch", rows_json(disagree))
        .with("unused_files", rows_json(unused))
        .with("summary", summary))
}

builtin!("matching.evidence_lookup", evidence_lookup);

/// `row` with `extra` columns added.
fn with(row: &Row, extra: &[(&str, Json)]) -> Row {
    let mut out = row.clone();
    for (k, v) in extra {
        out.insert((*k).to_string(), v.clone());
    }
    out
}

/// Text as numbers and names are compared: NFKC (full-width letters and digits as ASCII),
/// capitals, without spaces, hyphens, underscores or long-vowel marks.
fn fold(text: &str) -> String {
    text.nfkc()
        .flat_map(char::to_uppercase)
        .filter(|c| !c.is_whitespace() && !matches!(c, '-' | '_' | 'ー' | '−' | '‐'))
        .collect()
}

/// Whether `text` holds `number` as a whole figure: not inside a longer one (100,000 is not
/// in 1,100,000 nor in 100,0000), while a comma that is no thousands separator is a boundary
/// (48400 in the CSV line `A4,20,48400`).
fn holds_number(text: &str, number: &str) -> bool {
    let leading_digits = number.chars().take_while(char::is_ascii_digit).count();
    text.match_indices(number).any(|(at, found)| {
        let mut before = text[..at].chars().rev();
        let joined_before = match before.next() {
            Some(c) if c.is_ascii_digit() => true,
            // `1,` before `100,000`: a thousands separator when a digit precedes it and the
            // number's first group has three digits.
            Some(',') => before.next().is_some_and(|c| c.is_ascii_digit()) && leading_digits == 3,
            _ => false,
        };
        let mut after = text[at + found.len()..].chars();
        let joined_after = match after.next() {
            Some(c) if c.is_ascii_digit() => true,
            // `,000` after `1,100`: a separator when three digits and no fourth follow.
            Some(',') => {
                let next: Vec<char> = after.take(4).collect();
                next.len() >= 3
                    && next[..3].iter().all(char::is_ascii_digit)
                    && !next.get(3).is_some_and(char::is_ascii_digit)
            }
            _ => false,
        };
        !joined_before && !joined_after
    })
}

/// The ways an evidence file may write `amount` (after NFKC): with thousands separators and
/// without (110,000 and 110000). Empty when the cell is not a number.
fn amount_texts(amount: Option<&Json>) -> Vec<String> {
    let Some(x) = amount.and_then(|a| number(Some(a))) else {
        return Vec::new();
    };
    if x.fract() != 0.0 {
        return vec![format!("{x}")];
    }
    let plain = format!("{}", x.abs() as i64);
    let mut grouped = String::new();
    for (i, c) in plain.chars().enumerate() {
        if i > 0 && (plain.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    vec![grouped, plain]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_amounts_fold_as_evidence_writes_them() {
        assert_eq!(
            fold("請求書番号：ＩＮＶ－２０２５－０３０１"),
            "請求書番号:INV20250301"
        );
        assert_eq!(fold("inv_2025 0301"), "INV20250301");
        assert_eq!(
            amount_texts(Some(&json!("¥110,000"))),
            ["110,000", "110000"]
        );
        assert_eq!(
            amount_texts(Some(&json!(1_234_567))),
            ["1,234,567", "1234567"]
        );
        assert_eq!(amount_texts(Some(&json!(500))), ["500", "500"]);
        assert!(amount_texts(Some(&json!("なし"))).is_empty());
        assert!(holds_number("合計金額¥110,000(税込)", "110,000"));
        assert!(!holds_number("合計1,100,000円", "100,000"));
        assert!(!holds_number("合計100,0000円", "100,000"));
        assert!(holds_number("110000円", "110000"));
        assert!(holds_number(
            "TJ-2025-08812,コピー用紙 A4,20,48400\n",
            "48400"
        ));
        assert!(holds_number("48400,20,x", "48400"));
        assert!(holds_number("A4 20 48400", "48400"));
        assert!(!holds_number("1,100,000", "1,100"));
    }
}
