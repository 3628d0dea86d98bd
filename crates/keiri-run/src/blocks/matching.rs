//! `matching/*`: the builtins that pair rows of two (or three) tables or find duplicates in
//! one — exact keys, fuzzy scores, duplicate invoices, bank deposits against receivables,
//! the three-way match of orders, receipts and invoices, and semantic top-K.
//!
//! Every block reads rows (a table or a JSON array of objects) and returns JSON: the
//! results are pairs and groups of rows, which are not tables.
//!
//! Names are compared after [`normalize_party_name`]: NFKC (full-width letters and digits
//! and half-width kana fold to one form, `㈱` becomes `(株)`), legal-form words and their
//! bank-transfer abbreviations removed (株式会社, (株), ｶ), …), hiragana folded to katakana
//! and small kana to large ones (bank transfers spell ｼｮｳｼﾞ as ｼﾖｳｼﾞ), spaces and
//! punctuation dropped. Similarity of two normalised names is Jaro–Winkler from `strsim`
//! (a small, well-kept crate already in the dependency tree through clap): it rewards a
//! shared prefix, which is how Japanese company names vary (山田商事 / 山田商事東京支店).
//!
//! Dependencies and why: `strsim` (string similarity, see above), `unicode-normalization`
//! (NFKC), `keiri-search` (the BM25 index and, when configured, the embedder behind
//! `matching.semantic_topk`, so the runtime ranks text the same way the planner does).

use std::collections::{BTreeMap, HashMap};

use chrono::NaiveDate;
use serde_json::{Map, Value as Json, json};
use unicode_normalization::UnicodeNormalization;

use super::{cancelled, invalid};
use crate::block::{BlockContext, BlockError, ErrorCode, Inputs, Outputs, Registry};
use crate::jp::{NegativeMarkers, parse_amount, parse_date};
use crate::value::Row;

/// Adds the `matching/*` builtins.
pub fn register(registry: &mut Registry) {
    registry.insert("matching.exact_match", exact_match);
    registry.insert("matching.fuzzy_match", fuzzy_match);
    registry.insert("matching.duplicate_invoices", duplicate_invoices);
    registry.insert("matching.bank_reconciliation", bank_reconciliation);
    registry.insert("matching.three_way_match", three_way_match);
    registry.insert("matching.semantic_topk", semantic_topk);
}

// ---------------------------------------------------------------------------------------
// Shared helpers

/// Legal-form words and their abbreviations, after NFKC and kana folding. Longer forms come
/// first so that `株式会社` is removed before anything inside it could match.
const LEGAL_FORMS: &[&str] = &[
    "カブシキガイシヤ",
    "ユウゲンガイシヤ",
    "ゴウドウガイシヤ",
    "株式会社",
    "有限会社",
    "合同会社",
    "合資会社",
    "合名会社",
    "一般社団法人",
    "一般財団法人",
    "(株)",
    "(有)",
    "(同)",
    "(資)",
    "(名)",
    "(カ)",
    "(ユ)",
    "(ド)",
    "カ)",
    "(カ",
    "ユ)",
    "(ユ",
    "ド)",
    "(ド",
];

/// The form of a company or person name used for comparison (see the module docs).
pub(crate) fn normalize_party_name(name: &str) -> String {
    let folded: String = name
        .nfkc()
        .map(|c| {
            // Hiragana → katakana, so ヤマダ and やまだ compare equal.
            if ('\u{3041}'..='\u{3096}').contains(&c) {
                char::from_u32(c as u32 + 0x60).unwrap_or(c)
            } else {
                c
            }
        })
        .map(large_kana)
        .flat_map(char::to_lowercase)
        .collect();
    let mut s = folded;
    for form in LEGAL_FORMS {
        if s.contains(form) {
            s = s.replace(form, "");
        }
    }
    s.chars()
        .filter(|c| !c.is_whitespace() && !"・.,、。'\"()（）「」".contains(*c))
        .collect()
}

/// Small katakana as their large forms; bank transfer names are written without small kana.
fn large_kana(c: char) -> char {
    match c {
        'ァ' => 'ア',
        'ィ' => 'イ',
        'ゥ' => 'ウ',
        'ェ' => 'エ',
        'ォ' => 'オ',
        'ッ' => 'ツ',
        'ャ' => 'ヤ',
        'ュ' => 'ユ',
        'ョ' => 'ヨ',
        'ヮ' => 'ワ',
        'ヵ' => 'カ',
        'ヶ' => 'ケ',
        other => other,
    }
}

/// Similarity (0 to 1) of two names after normalisation; 1 when equal.
pub(crate) fn name_similarity(a: &str, b: &str) -> f64 {
    let (a, b) = (normalize_party_name(a), normalize_party_name(b));
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    if a == b {
        return 1.0;
    }
    strsim::jaro_winkler(&a, &b)
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

/// A number as JSON: an integer when it is one (amounts in yen), else a float rounded to
/// four decimals so sums of cents do not print as 0.30000000000000004.
pub(crate) fn num_json(x: f64) -> Json {
    let r = (x * 10_000.0).round() / 10_000.0;
    if r.fract() == 0.0 && r.abs() < 9.0e15 {
        json!(r as i64)
    } else {
        json!(r)
    }
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
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

// ---------------------------------------------------------------------------------------
// matching.exact_match

fn exact_match(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let left = inputs.rows("left")?;
    let right = inputs.rows("right")?;
    let keys = column_pairs(inputs, "keys")?;
    if keys.is_empty() {
        return Err(invalid(
            "照合キー keys を1つ以上指定してください",
            "keys needs at least one column",
        ));
    }
    let compare = column_pairs(inputs, "compare")?;
    let normalize = inputs.bool("normalize_keys")?.unwrap_or(true);

    let key_of = |row: &Row, left_side: bool| -> Option<Vec<String>> {
        keys.iter()
            .map(|(l, r, _)| key_text(row.get(if left_side { l } else { r }), normalize))
            .collect()
    };
    let mut by_key: HashMap<Vec<String>, Vec<usize>> = HashMap::new();
    for (j, row) in right.iter().enumerate() {
        if let Some(k) = key_of(row, false) {
            by_key.entry(k).or_default().push(j);
        }
    }
    // Right rows are consumed in order, so two left rows with one key meet two right rows.
    let mut used_right = vec![false; right.len()];
    let mut matches = Vec::new();
    let mut unmatched_left = Vec::new();
    let mut difference_count = 0usize;
    let mut amount_difference = 0.0;
    for row in &left {
        cancelled(ctx)?;
        let found = key_of(row, true).and_then(|k| {
            by_key
                .get(&k)
                .and_then(|js| js.iter().copied().find(|&j| !used_right[j]))
        });
        let Some(j) = found else {
            unmatched_left.push(row.clone());
            continue;
        };
        used_right[j] = true;
        let other = &right[j];
        let mut differences = Vec::new();
        for (l, r, options) in &compare {
            let tolerance = options
                .get("tolerance")
                .and_then(Json::as_f64)
                .unwrap_or(0.0);
            let (lv, rv) = (row.get(l), other.get(r));
            match (number(lv), number(rv)) {
                (Some(a), Some(b)) => {
                    let d = a - b;
                    if d.abs() > tolerance + 1e-9 {
                        amount_difference += d;
                        differences.push(json!({
                            "field": l, "left": num_json(a), "right": num_json(b),
                            "difference": num_json(d),
                        }));
                    }
                }
                _ => {
                    if key_text(lv, normalize) != key_text(rv, normalize) {
                        differences.push(json!({
                            "field": l,
                            "left": lv.cloned().unwrap_or(Json::Null),
                            "right": rv.cloned().unwrap_or(Json::Null),
                        }));
                    }
                }
            }
        }
        if !differences.is_empty() {
            difference_count += 1;
        }
        matches.push(json!({"left": row, "right": other, "differences": differences}));
    }
    let unmatched_right: Vec<Row> = right
        .iter()
        .zip(&used_right)
        .filter(|(_, used)| !**used)
        .map(|(r, _)| r.clone())
        .collect();
    let summary = json!({
        "match_count": matches.len(),
        "difference_count": difference_count,
        "unmatched_left_count": unmatched_left.len(),
        "unmatched_right_count": unmatched_right.len(),
        "amount_difference_total": num_json(amount_difference),
    });
    Ok(outputs(vec![
        ("matches", Json::Array(matches)),
        ("unmatched_left", rows_json(unmatched_left)),
        ("unmatched_right", rows_json(unmatched_right)),
        ("summary", summary),
    ]))
}

// ---------------------------------------------------------------------------------------
// matching.fuzzy_match

#[derive(Clone, Copy, PartialEq)]
enum FieldKind {
    Text,
    Amount,
    Date,
    Exact,
}

struct FuzzyField {
    left: String,
    right: String,
    kind: FieldKind,
    weight: f64,
}

fn fuzzy_fields(inputs: &Inputs) -> Result<Vec<FuzzyField>, BlockError> {
    let pairs = column_pairs(inputs, "fields")?;
    if pairs.is_empty() {
        return Err(invalid(
            "比べる項目 fields を1つ以上指定してください",
            "fields needs at least one item",
        ));
    }
    pairs
        .into_iter()
        .map(|(left, right, options)| {
            let kind = match options.get("kind").and_then(Json::as_str).unwrap_or("text") {
                "text" => FieldKind::Text,
                "amount" => FieldKind::Amount,
                "date" => FieldKind::Date,
                "exact" => FieldKind::Exact,
                other => {
                    return Err(invalid(
                        format!("fields の kind {other:?} は text/amount/date/exact のどれかです"),
                        format!("fields kind {other:?} must be text, amount, date or exact"),
                    ));
                }
            };
            let weight = options.get("weight").and_then(Json::as_f64).unwrap_or(1.0);
            if !(weight.is_finite() && weight >= 0.0) {
                return Err(invalid(
                    "fields の weight は0以上の数です",
                    "fields weight must be a number of at least 0",
                ));
            }
            Ok(FuzzyField {
                left,
                right,
                kind,
                weight,
            })
        })
        .collect()
}

fn fuzzy_match(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let left = inputs.rows("left")?;
    let right = inputs.rows("right")?;
    let fields = fuzzy_fields(inputs)?;
    let threshold = inputs.f64("threshold")?.unwrap_or(0.85);
    let amount_tolerance = inputs.f64("amount_tolerance")?.unwrap_or(0.0);
    let date_tolerance = inputs.i64("date_tolerance_days")?.unwrap_or(0);
    let one_to_one = inputs.bool("one_to_one")?.unwrap_or(true);
    let block_on = column_pairs(inputs, "block_on")?;
    let total_weight: f64 = fields.iter().map(|f| f.weight).sum();
    if total_weight <= 0.0 {
        return Err(invalid(
            "fields の weight の合計が0です",
            "the weights of fields sum to 0",
        ));
    }

    // Field score: text is the name similarity; amount, date and exact are 1 within the
    // tolerance and 0 outside, so a score reads as "how many weighted fields agree".
    let field_score = |f: &FuzzyField, l: &Row, r: &Row| -> f64 {
        let (lv, rv) = (l.get(&f.left), r.get(&f.right));
        match f.kind {
            FieldKind::Text => name_similarity(&cell_text(lv), &cell_text(rv)),
            FieldKind::Amount => match (number(lv), number(rv)) {
                (Some(a), Some(b)) if (a - b).abs() <= amount_tolerance + 1e-9 => 1.0,
                _ => 0.0,
            },
            FieldKind::Date => match (date(lv), date(rv)) {
                (Some(a), Some(b)) if (a - b).num_days().abs() <= date_tolerance => 1.0,
                _ => 0.0,
            },
            FieldKind::Exact => match (key_text(lv, true), key_text(rv, true)) {
                (Some(a), Some(b)) if a == b => 1.0,
                _ => 0.0,
            },
        }
    };
    let block_key = |row: &Row, left_side: bool| -> Option<Vec<String>> {
        block_on
            .iter()
            .map(|(l, r, _)| key_text(row.get(if left_side { l } else { r }), true))
            .collect()
    };

    let mut candidates: Vec<(usize, usize, f64, Map<String, Json>)> = Vec::new();
    for (i, l) in left.iter().enumerate() {
        cancelled(ctx)?;
        let lk = block_key(l, true);
        for (j, r) in right.iter().enumerate() {
            if !block_on.is_empty() && (lk.is_none() || lk != block_key(r, false)) {
                continue;
            }
            let mut per_field = Map::new();
            let mut sum = 0.0;
            for f in &fields {
                let s = round4(field_score(f, l, r));
                sum += s * f.weight;
                per_field.insert(f.left.clone(), num_json(s));
            }
            let score = round4(sum / total_weight);
            if score + 1e-9 >= threshold {
                candidates.push((i, j, score, per_field));
            }
        }
    }
    let chosen: Vec<(usize, usize, f64, Map<String, Json>)> = if one_to_one {
        // Greedy on the best score first: the usual assignment for record linkage, and it
        // is deterministic (ties go to the earlier left row, then the earlier right row).
        candidates.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)).then(a.1.cmp(&b.1)));
        let mut used_l = vec![false; left.len()];
        let mut used_r = vec![false; right.len()];
        let mut picked = Vec::new();
        for c in candidates {
            if !used_l[c.0] && !used_r[c.1] {
                used_l[c.0] = true;
                used_r[c.1] = true;
                picked.push(c);
            }
        }
        picked.sort_by_key(|c| c.0);
        picked
    } else {
        candidates.sort_by(|a, b| a.0.cmp(&b.0).then(b.2.total_cmp(&a.2)).then(a.1.cmp(&b.1)));
        candidates
    };
    let mut matched_l = vec![false; left.len()];
    let mut matched_r = vec![false; right.len()];
    let mut scores = Vec::new();
    let matches: Vec<Json> = chosen
        .into_iter()
        .map(|(i, j, score, per_field)| {
            matched_l[i] = true;
            matched_r[j] = true;
            scores.push(score);
            json!({"left": left[i], "right": right[j], "score": num_json(score), "field_scores": per_field})
        })
        .collect();
    let unmatched_left: Vec<Row> = left
        .iter()
        .zip(&matched_l)
        .filter(|(_, m)| !**m)
        .map(|(r, _)| r.clone())
        .collect();
    let unmatched_right: Vec<Row> = right
        .iter()
        .zip(&matched_r)
        .filter(|(_, m)| !**m)
        .map(|(r, _)| r.clone())
        .collect();
    let distribution = if scores.is_empty() {
        json!({"min": null, "mean": null, "max": null})
    } else {
        let min = scores.iter().copied().fold(f64::INFINITY, f64::min);
        let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mean = scores.iter().sum::<f64>() / scores.len() as f64;
        json!({"min": num_json(min), "mean": num_json(mean), "max": num_json(max)})
    };
    let summary = json!({
        "match_count": matches.len(),
        "unmatched_left_count": unmatched_left.len(),
        "unmatched_right_count": unmatched_right.len(),
        "score_distribution": distribution,
    });
    Ok(outputs(vec![
        ("matches", Json::Array(matches)),
        ("unmatched_left", rows_json(unmatched_left)),
        ("unmatched_right", rows_json(unmatched_right)),
        ("summary", summary),
    ]))
}

// ---------------------------------------------------------------------------------------
// matching.duplicate_invoices

/// Why two invoices look like one, strongest first (the order decides a cluster's reason).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum DuplicateReason {
    /// Same vendor, invoice number, amount and date: the same invoice entered twice.
    ExactDuplicate,
    /// Same invoice number and amount (dates or vendor spelling differ).
    SameInvoiceNo,
    /// Same vendor and amount, invoice numbers with two characters swapped (a typo).
    SimilarInvoiceNo,
    /// Same vendor and amount within the date window (no invoice numbers to compare).
    SameVendorAmount,
}

impl DuplicateReason {
    fn as_str(self) -> &'static str {
        match self {
            DuplicateReason::ExactDuplicate => "exact_duplicate",
            DuplicateReason::SameInvoiceNo => "same_invoice_no",
            DuplicateReason::SimilarInvoiceNo => "similar_invoice_no",
            DuplicateReason::SameVendorAmount => "same_vendor_amount",
        }
    }
}

/// Two invoice numbers this similar (normalised Levenshtein) and with the same characters
/// are the same number mistyped: one swap in a 10-character number is 0.8.
const INVOICE_NO_SIMILARITY: f64 = 0.8;

/// Whether two invoice numbers hold the same characters in a different order: the keying
/// error that turns 08812 into 08821. A number differing in one digit is not counted,
/// because consecutive invoices of a monthly contract (CL-031, CL-021) differ exactly so.
fn is_transposition(a: &str, b: &str) -> bool {
    let mut x: Vec<char> = a.chars().collect();
    let mut y: Vec<char> = b.chars().collect();
    x.sort_unstable();
    y.sort_unstable();
    a != b && x == y
}

fn invoice_no_key(v: Option<&Json>) -> Option<String> {
    key_text(v, true).map(|s| s.chars().filter(|c| c.is_alphanumeric()).collect())
}

fn duplicate_invoices(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let rows = inputs.rows("rows")?;
    let vendor_field = inputs.str("vendor_field")?.unwrap_or("vendor").to_string();
    let amount_field = inputs.str("amount_field")?.unwrap_or("amount").to_string();
    let date_field = inputs
        .str("date_field")?
        .unwrap_or("invoice_date")
        .to_string();
    let number_field = inputs.str("invoice_no_field")?.map(str::to_string);
    let window = inputs.i64("date_window_days")?.unwrap_or(30);
    let amount_tolerance = inputs.f64("amount_tolerance")?.unwrap_or(0.0);
    let vendor_threshold = inputs.f64("vendor_similarity")?.unwrap_or(0.9);

    struct Inv {
        vendor: String,
        amount: Option<f64>,
        date: Option<NaiveDate>,
        number: Option<String>,
    }
    let invs: Vec<Inv> = rows
        .iter()
        .map(|r| Inv {
            vendor: cell_text(r.get(&vendor_field)),
            amount: number(r.get(&amount_field)),
            date: date(r.get(&date_field)),
            number: number_field.as_ref().and_then(|f| invoice_no_key(r.get(f))),
        })
        .collect();

    // Every pair is compared: invoice lists are thousands of rows, not millions, and a
    // blocking key would miss exactly the vendor-spelling variants this block is for.
    let n = invs.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let mut pair_best: Vec<Option<(DuplicateReason, f64)>> = vec![None; n];
    for i in 0..n {
        cancelled(ctx)?;
        for j in (i + 1)..n {
            let (a, b) = (&invs[i], &invs[j]);
            let (Some(x), Some(y)) = (a.amount, b.amount) else {
                continue;
            };
            let amount_diff = (x - y).abs();
            if amount_diff > amount_tolerance + 1e-9 {
                continue;
            }
            let days = match (a.date, b.date) {
                (Some(d1), Some(d2)) => (d1 - d2).num_days().abs(),
                _ => continue,
            };
            if days > window {
                continue;
            }
            let vendor_sim = name_similarity(&a.vendor, &b.vendor);
            let same_vendor = vendor_sim + 1e-9 >= vendor_threshold;
            let number_sim = match (&a.number, &b.number) {
                (Some(p), Some(q)) => Some(strsim::normalized_levenshtein(p, q)),
                _ => None,
            };
            let typo = match (&a.number, &b.number) {
                (Some(p), Some(q)) => is_transposition(p, q),
                _ => false,
            };
            let reason = match number_sim {
                Some(s) if s >= 1.0 && same_vendor && amount_diff == 0.0 && days == 0 => {
                    DuplicateReason::ExactDuplicate
                }
                Some(s) if s >= 1.0 => DuplicateReason::SameInvoiceNo,
                Some(s) if s + 1e-9 >= INVOICE_NO_SIMILARITY && typo && same_vendor => {
                    DuplicateReason::SimilarInvoiceNo
                }
                Some(_) => continue,
                None if same_vendor => DuplicateReason::SameVendorAmount,
                None => continue,
            };
            let amount_sim = if x.abs().max(y.abs()) > 0.0 {
                1.0 - amount_diff / x.abs().max(y.abs())
            } else {
                1.0
            };
            let date_sim = if window > 0 {
                1.0 - days as f64 / window as f64
            } else {
                1.0
            };
            let mut parts = vec![vendor_sim, amount_sim, date_sim];
            parts.extend(number_sim);
            let score = round4(parts.iter().sum::<f64>() / parts.len() as f64);
            for k in [i, j] {
                let better = match pair_best[k] {
                    None => true,
                    Some((r, s)) => reason < r || (reason == r && score > s),
                };
                if better {
                    pair_best[k] = Some((reason, score));
                }
            }
            let (ri, rj) = (find(&mut parent, i), find(&mut parent, j));
            if ri != rj {
                parent[ri.max(rj)] = ri.min(rj);
            }
        }
    }

    // Clusters in order of their first row; a cluster's reason and score are its best pair's.
    let mut cluster_of_root: BTreeMap<usize, usize> = BTreeMap::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for (i, best) in pair_best.iter().enumerate() {
        if best.is_none() {
            continue;
        }
        let root = find(&mut parent, i);
        let id = *cluster_of_root.entry(root).or_insert_with(|| {
            members.push(Vec::new());
            members.len()
        });
        members[id - 1].push(i);
    }
    let mut clusters = Vec::new();
    let mut duplicates = Vec::new();
    let mut at_risk = 0.0;
    for (k, idx) in members.iter().enumerate() {
        let id = k + 1;
        let (reason, score) = idx.iter().filter_map(|&i| pair_best[i]).fold(
            (DuplicateReason::SameVendorAmount, 0.0),
            |(r, s), (r2, s2)| {
                if r2 < r || (r2 == r && s2 > s) {
                    (r2, s2)
                } else {
                    (r, s)
                }
            },
        );
        let mut cluster_rows = Vec::new();
        for (pos, &i) in idx.iter().enumerate() {
            if pos > 0 {
                // The first invoice of a cluster is the one to pay; the rest are at risk.
                at_risk += invs[i].amount.unwrap_or(0.0);
            }
            let mut row = rows[i].clone();
            row.insert("cluster_id".into(), json!(id));
            row.insert("reason".into(), json!(reason.as_str()));
            cluster_rows.push(Json::Object(rows[i].clone()));
            duplicates.push(row);
        }
        clusters.push(json!({
            "cluster_id": id, "reason": reason.as_str(), "score": num_json(score), "rows": cluster_rows,
        }));
    }
    // Duplicates in input order, like the invoice list they came from.
    let mut order: Vec<(usize, Row)> = Vec::new();
    let mut it = duplicates.into_iter();
    for idx in &members {
        for &i in idx {
            if let Some(row) = it.next() {
                order.push((i, row));
            }
        }
    }
    order.sort_by_key(|(i, _)| *i);
    let duplicates: Vec<Row> = order.into_iter().map(|(_, r)| r).collect();
    let summary = json!({
        "cluster_count": clusters.len(),
        "row_count": duplicates.len(),
        "amount_at_risk": num_json(at_risk),
    });
    Ok(outputs(vec![
        ("clusters", Json::Array(clusters)),
        ("duplicates", rows_json(duplicates)),
        ("summary", summary),
    ]))
}

// ---------------------------------------------------------------------------------------
// matching.bank_reconciliation

/// Words a bank puts before the payer's name on a transfer line.
const TRANSFER_PREFIXES: &[&str] = &["振込入金", "振込", "フリコミ", "振替入金", "入金"];

/// Largest number of one customer's open invoices searched for a combined payment; 2^12
/// subsets is instant, and a customer with more open invoices pays them one by one.
const MAX_COMBINED: usize = 12;

fn payer_name(description: &str) -> String {
    let folded: String = description.nfkc().collect();
    let mut s = folded.trim();
    for prefix in TRANSFER_PREFIXES {
        if let Some(rest) = s.strip_prefix(prefix) {
            s = rest.trim_start();
        }
    }
    s.to_string()
}

fn bank_reconciliation(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let deposits = inputs.rows("deposits")?;
    let receivables = inputs.rows("receivables")?;
    let customer_field = inputs
        .str("customer_field")?
        .unwrap_or("customer")
        .to_string();
    let kana_field = Some(
        inputs
            .str("customer_kana_field")?
            .unwrap_or("customer_kana")
            .to_string(),
    );
    let amount_field = inputs.str("amount_field")?.unwrap_or("amount").to_string();
    let due_field = inputs
        .str("due_date_field")?
        .unwrap_or("due_date")
        .to_string();
    let fee_tolerance = inputs.f64("fee_tolerance")?.unwrap_or(880.0);
    let allow_combined = inputs.bool("allow_combined")?.unwrap_or(true);
    let name_threshold = inputs.f64("name_threshold")?.unwrap_or(0.8);
    let window = inputs.i64("date_window_days")?.unwrap_or(60);

    let rec_amount: Vec<Option<f64>> = receivables
        .iter()
        .map(|r| number(r.get(&amount_field)))
        .collect();
    let rec_due: Vec<Option<NaiveDate>> = receivables
        .iter()
        .map(|r| date(r.get(&due_field)))
        .collect();
    let mut open = vec![true; receivables.len()];

    let mut matches = Vec::new();
    let mut unmatched = Vec::new();
    let (mut deposit_total, mut cleared_count, mut cleared_amount, mut fee_total) =
        (0.0, 0usize, 0.0, 0.0);
    for dep in &deposits {
        cancelled(ctx)?;
        let Some(amount) = number(dep.get("amount")) else {
            unmatched.push(dep.clone());
            continue;
        };
        deposit_total += amount;
        let dep_date = date(dep.get("date"));
        let payer = payer_name(&cell_text(dep.get("description")));
        let within_window = |k: usize| match (dep_date, rec_due[k]) {
            (Some(d), Some(due)) => (d - due).num_days().abs() <= window,
            // Without dates on either side the window cannot exclude the invoice.
            _ => true,
        };
        // Name similarity of the payer to each open receivable (best of name and kana).
        let sims: Vec<f64> = receivables
            .iter()
            .map(|r| {
                let by_name = name_similarity(&payer, &cell_text(r.get(&customer_field)));
                let by_kana = kana_field
                    .as_ref()
                    .map_or(0.0, |f| name_similarity(&payer, &cell_text(r.get(f))));
                by_name.max(by_kana)
            })
            .collect();
        let candidates: Vec<usize> = (0..receivables.len())
            .filter(|&k| {
                open[k]
                    && rec_amount[k].is_some()
                    && within_window(k)
                    && sims[k] + 1e-9 >= name_threshold
            })
            .collect();
        let fits = |total: f64| -> Option<f64> {
            let diff = total - amount;
            (diff.abs() < 0.005 || (diff > 0.0 && diff <= fee_tolerance + 1e-9)).then_some(diff)
        };
        let closeness = |k: usize| match (dep_date, rec_due[k]) {
            (Some(d), Some(due)) => (d - due).num_days().abs(),
            _ => i64::MAX,
        };
        // 1. One invoice: exact before fee-short, then the closest due date.
        let mut best: Option<(Vec<usize>, f64)> = None;
        let mut singles: Vec<(usize, f64)> = candidates
            .iter()
            .filter_map(|&k| fits(rec_amount[k].unwrap_or(0.0)).map(|d| (k, d)))
            .collect();
        singles.sort_by(|a, b| {
            (a.1.abs() >= 0.005)
                .cmp(&(b.1.abs() >= 0.005))
                .then(closeness(a.0).cmp(&closeness(b.0)))
                .then(a.0.cmp(&b.0))
        });
        if let Some(&(k, d)) = singles.first() {
            best = Some((vec![k], d));
        }
        // 2. Several invoices of one customer paid together.
        if best.is_none() && allow_combined {
            let mut by_customer: BTreeMap<String, Vec<usize>> = BTreeMap::new();
            for &k in &candidates {
                by_customer
                    .entry(normalize_party_name(&cell_text(
                        receivables[k].get(&customer_field),
                    )))
                    .or_default()
                    .push(k);
            }
            let mut found: Option<(Vec<usize>, f64)> = None;
            for group in by_customer.values() {
                let mut group = group.clone();
                group.sort_by_key(|&k| (rec_due[k], k));
                group.truncate(MAX_COMBINED);
                for size in 2..=group.len() {
                    for subset in subsets(group.len(), size) {
                        let ks: Vec<usize> = subset.iter().map(|&p| group[p]).collect();
                        let total: f64 = ks.iter().map(|&k| rec_amount[k].unwrap_or(0.0)).sum();
                        if let Some(d) = fits(total) {
                            let better = match &found {
                                None => true,
                                Some((_, fd)) => fd.abs() >= 0.005 && d.abs() < 0.005,
                            };
                            if better {
                                found = Some((ks, d));
                            }
                        }
                    }
                    if found.as_ref().is_some_and(|(_, d)| d.abs() < 0.005) {
                        break;
                    }
                }
                if found.is_some() {
                    break;
                }
            }
            best = found;
        }
        let Some((ks, diff)) = best else {
            unmatched.push(dep.clone());
            continue;
        };
        let name_sim = ks.iter().map(|&k| sims[k]).fold(1.0, f64::min);
        let exact = diff.abs() < 0.005;
        // Confidence: the weakest name similarity, less for a fee-short or combined payment.
        let fee_factor = if exact { 1.0 } else { 0.9 };
        let combined_factor = if ks.len() > 1 { 0.9 } else { 1.0 };
        let confidence = round4(name_sim * fee_factor * combined_factor);
        for &k in &ks {
            open[k] = false;
        }
        cleared_count += 1;
        cleared_amount += amount;
        if !exact {
            fee_total += diff;
        }
        let recs: Vec<Json> = ks
            .iter()
            .map(|&k| Json::Object(receivables[k].clone()))
            .collect();
        matches.push(json!({
            "deposit": dep,
            "receivables": recs,
            "difference": num_json(if exact { 0.0 } else { diff }),
            "difference_reason": if exact { "none" } else { "transfer_fee" },
            "confidence": num_json(confidence),
        }));
    }
    let open_rows: Vec<Row> = receivables
        .iter()
        .zip(&open)
        .filter(|(_, o)| **o)
        .map(|(r, _)| r.clone())
        .collect();
    let open_amount: f64 = receivables
        .iter()
        .zip(&open)
        .filter(|(_, o)| **o)
        .filter_map(|(r, _)| number(r.get(&amount_field)))
        .sum();
    let unmatched_amount: f64 = unmatched
        .iter()
        .filter_map(|d| number(d.get("amount")))
        .sum();
    let summary = json!({
        "deposit_count": deposits.len(),
        "deposit_amount": num_json(deposit_total),
        "cleared_count": cleared_count,
        "cleared_amount": num_json(cleared_amount),
        "unmatched_deposit_count": unmatched.len(),
        "unmatched_deposit_amount": num_json(unmatched_amount),
        "open_receivable_count": open_rows.len(),
        "open_receivable_amount": num_json(open_amount),
        "fee_difference_total": num_json(fee_total),
    });
    Ok(outputs(vec![
        ("matches", Json::Array(matches)),
        ("unmatched_deposits", rows_json(unmatched)),
        ("open_receivables", rows_json(open_rows)),
        ("summary", summary),
    ]))
}

/// All `size`-element subsets of `0..n` as sorted index lists, in lexicographic order.
fn subsets(n: usize, size: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut current = Vec::with_capacity(size);
    fn go(
        start: usize,
        n: usize,
        size: usize,
        current: &mut Vec<usize>,
        out: &mut Vec<Vec<usize>>,
    ) {
        if current.len() == size {
            out.push(current.clone());
            return;
        }
        for i in start..n {
            current.push(i);
            go(i + 1, n, size, current, out);
            current.pop();
        }
    }
    go(0, n, size, &mut current, &mut out);
    out
}

// ---------------------------------------------------------------------------------------
// matching.three_way_match

fn three_way_match(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let orders = inputs.rows("purchase_orders")?;
    let receipts = inputs.rows("receipts")?;
    let invoices = inputs.rows("invoices")?;
    let map = match inputs.json("field_map") {
        None => None,
        Some(Json::Object(m)) => Some(m),
        Some(_) => {
            return Err(BlockError::input_invalid(
                "field_map",
                "列名の対応のオブジェクトが必要です",
                "expected an object of column names",
            ));
        }
    };
    let name = |k: &str| -> String {
        map.as_ref()
            .and_then(|m| m.get(k))
            .and_then(Json::as_str)
            .unwrap_or(k)
            .to_string()
    };
    let (f_po, f_item, f_qty, f_price, f_amount) = (
        name("po_no"),
        name("item"),
        name("quantity"),
        name("unit_price"),
        name("amount"),
    );
    let qty_tol = inputs.f64("quantity_tolerance")?.unwrap_or(0.0);
    let rate = inputs.f64("price_tolerance_rate")?.unwrap_or(0.0);
    let amount_tol = inputs.f64("amount_tolerance")?.unwrap_or(0.0);

    let key = |r: &Row| -> Option<(String, String)> {
        Some((
            key_text(r.get(&f_po), true)?,
            key_text(r.get(&f_item), true).unwrap_or_default(),
        ))
    };
    let mut po_by_key: HashMap<(String, String), usize> = HashMap::new();
    for (i, r) in orders.iter().enumerate() {
        if let Some(k) = key(r) {
            po_by_key.entry(k).or_insert(i);
        }
    }
    // Receipts of one order line are summed: partial deliveries are normal.
    let mut received: HashMap<(String, String), (f64, usize)> = HashMap::new();
    let mut receipt_order: Vec<(String, String)> = Vec::new();
    for (i, r) in receipts.iter().enumerate() {
        if let Some(k) = key(r) {
            let e = received.entry(k.clone()).or_insert_with(|| {
                receipt_order.push(k.clone());
                (0.0, i)
            });
            e.0 += number(r.get(&f_qty)).unwrap_or(0.0);
        }
    }
    let mut invoiced: HashMap<(String, String), bool> = HashMap::new();
    let mut matches = Vec::new();
    let mut exceptions: Vec<Json> = Vec::new();
    let mut by_type: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut difference_total = 0.0;
    let mut push = |exceptions: &mut Vec<Json>,
                    kind: &'static str,
                    po_no: &Json,
                    item: &Json,
                    amount: f64,
                    detail: String,
                    rows: Json| {
        *by_type.entry(kind).or_default() += 1;
        exceptions.push(json!({
            "po_no": po_no, "item": item, "type": kind, "detail": detail,
            "amount": num_json(amount), "rows": rows,
        }));
    };
    for inv in &invoices {
        cancelled(ctx)?;
        let po_no = inv.get(&f_po).cloned().unwrap_or(Json::Null);
        let item = inv.get(&f_item).cloned().unwrap_or(Json::Null);
        let inv_qty = number(inv.get(&f_qty)).unwrap_or(0.0);
        let inv_amount = number(inv.get(&f_amount)).unwrap_or(0.0);
        let Some(k) = key(inv) else {
            push(
                &mut exceptions,
                "missing_po",
                &po_no,
                &item,
                inv_amount,
                "請求書に発注番号がありません".into(),
                json!({"po": null, "receipt": null, "invoice": inv}),
            );
            continue;
        };
        invoiced.insert(k.clone(), true);
        let Some(&pi) = po_by_key.get(&k) else {
            push(
                &mut exceptions,
                "missing_po",
                &po_no,
                &item,
                inv_amount,
                format!(
                    "発注 {} / {} がない請求です",
                    cell_text(Some(&po_no)),
                    cell_text(Some(&item))
                ),
                json!({"po": null, "receipt": null, "invoice": inv}),
            );
            continue;
        };
        let po = &orders[pi];
        let receipt = received.get(&k).map(|(_, first)| &receipts[*first]);
        let rows = json!({"po": po, "receipt": receipt, "invoice": inv});
        let Some(&(rec_qty, _)) = received.get(&k) else {
            push(
                &mut exceptions,
                "missing_receipt",
                &po_no,
                &item,
                inv_amount,
                "検収（入荷）の記録がない請求です".into(),
                rows,
            );
            continue;
        };
        let po_qty = number(po.get(&f_qty)).unwrap_or(0.0);
        let po_price = number(po.get(&f_price)).unwrap_or(0.0);
        let inv_price = number(inv.get(&f_price)).unwrap_or(inv_amount / inv_qty.max(1.0));
        let mut problems = 0;
        let mut exact = true;
        // Over-invoicing: more than was ordered (quantity beyond tolerance).
        if inv_qty > po_qty + qty_tol + 1e-9 {
            let over = (inv_qty - po_qty) * po_price;
            difference_total += over;
            push(
                &mut exceptions,
                "over_invoiced",
                &po_no,
                &item,
                over,
                format!(
                    "請求数量 {} が発注数量 {} を超えています",
                    num_json(inv_qty),
                    num_json(po_qty)
                ),
                rows.clone(),
            );
            problems += 1;
        } else if (inv_qty - rec_qty).abs() > qty_tol + 1e-9 {
            let diff = (inv_qty - rec_qty) * po_price;
            difference_total += diff.abs();
            push(
                &mut exceptions,
                "quantity_mismatch",
                &po_no,
                &item,
                diff.abs(),
                format!(
                    "請求数量 {} と検収数量 {} が違います",
                    num_json(inv_qty),
                    num_json(rec_qty)
                ),
                rows.clone(),
            );
            problems += 1;
        } else if inv_qty != rec_qty {
            exact = false;
        }
        let price_diff = inv_price - po_price;
        let price_allowed = po_price.abs() * rate;
        if price_diff.abs() > price_allowed + 1e-9 {
            let diff = price_diff * inv_qty;
            difference_total += diff.abs();
            push(
                &mut exceptions,
                "price_mismatch",
                &po_no,
                &item,
                diff.abs(),
                format!(
                    "請求単価 {} と発注単価 {} が違います",
                    num_json(inv_price),
                    num_json(po_price)
                ),
                rows.clone(),
            );
            problems += 1;
        } else {
            if price_diff.abs() > 1e-9 {
                exact = false;
            }
            // Amount: the invoice total against the order price for the invoiced quantity.
            let expected = po_price * inv_qty;
            let diff = inv_amount - expected;
            if diff.abs() > expected.abs() * rate + amount_tol + 1e-9 {
                difference_total += diff.abs();
                push(
                    &mut exceptions,
                    "amount_mismatch",
                    &po_no,
                    &item,
                    diff.abs(),
                    format!(
                        "請求金額 {} が発注単価×数量 {} と違います",
                        num_json(inv_amount),
                        num_json(expected)
                    ),
                    rows.clone(),
                );
                problems += 1;
            } else if diff.abs() > 1e-9 {
                exact = false;
            }
        }
        if problems == 0 {
            matches.push(json!({
                "po": po, "receipt": receipt, "invoice": inv,
                "status": if exact { "matched" } else { "within_tolerance" },
            }));
        }
    }
    // Received but never invoiced, and received without an order.
    for k in &receipt_order {
        let Some(&(rec_qty, first)) = received.get(k) else {
            continue;
        };
        let receipt = &receipts[first];
        let po_no = receipt.get(&f_po).cloned().unwrap_or(Json::Null);
        let item = receipt.get(&f_item).cloned().unwrap_or(Json::Null);
        match po_by_key.get(k) {
            None => push(
                &mut exceptions,
                "missing_po",
                &po_no,
                &item,
                0.0,
                "発注のない検収です".into(),
                json!({"po": null, "receipt": receipt, "invoice": null}),
            ),
            Some(&pi) if !invoiced.contains_key(k) => {
                let po = &orders[pi];
                let amount = rec_qty * number(po.get(&f_price)).unwrap_or(0.0);
                push(
                    &mut exceptions,
                    "missing_invoice",
                    &po_no,
                    &item,
                    amount,
                    "検収済みで請求がありません（未着の請求書・未払計上の確認）".into(),
                    json!({"po": po, "receipt": receipt, "invoice": null}),
                );
            }
            Some(_) => {}
        }
    }
    let matched = matches.iter().filter(|m| m["status"] == "matched").count();
    let summary = json!({
        "match_count": matches.len(),
        "matched_count": matched,
        "within_tolerance_count": matches.len() - matched,
        "exception_count": exceptions.len(),
        "exceptions_by_type": by_type,
        "difference_total": num_json(difference_total),
    });
    Ok(outputs(vec![
        ("matches", Json::Array(matches)),
        ("exceptions", Json::Array(exceptions)),
        ("summary", summary),
    ]))
}

// ---------------------------------------------------------------------------------------
// matching.semantic_topk

fn item_text(item: &Json, fields: &[String]) -> String {
    match item {
        Json::String(s) => s.clone(),
        Json::Object(map) if !fields.is_empty() => fields
            .iter()
            .map(|f| cell_text(map.get(f)))
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" "),
        Json::Object(map) => map
            .values()
            .filter_map(|v| v.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    }
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

fn semantic_topk(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    use keiri_search::{DocKind, Document, Index, Mode, Query};
    let queries = items(inputs, "queries")?;
    let candidates = items(inputs, "candidates")?;
    let query_fields = inputs.strings("query_fields")?.unwrap_or_default();
    let candidate_fields = inputs.strings("candidate_fields")?.unwrap_or_default();
    let top_k = usize::try_from(inputs.i64("top_k")?.unwrap_or(5).max(0)).unwrap_or(0);
    let min_score = inputs.f64("min_score")?.unwrap_or(0.0);
    let model = inputs.str("model")?.map(str::to_string);

    let docs: Vec<Document> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let text = item_text(c, &candidate_fields);
            let mut d = Document::new(DocKind::Block, &format!("c{i}"), "candidate");
            d.description = text.clone();
            d.passages = vec![text];
            d
        })
        .collect();
    // An embedder is used only when the plan names a model: a run must not change its
    // results because of a developer's environment. Without one the ranking is BM25 on the
    // same tokenizer the planner uses (CJK bigrams), which handles 品名/摘要 well.
    let embedder = match &model {
        Some(m) => {
            let mut config = keiri_search::EmbedConfig::from_env(|k| std::env::var(k).ok());
            if let Some(keiri_search::embed::OpenAiEndpoint::OpenAi { model, .. }) =
                &mut config.openai
            {
                *model = m.clone();
            }
            let mut notes = Vec::new();
            keiri_search::select_embedder(&config, &mut notes)
        }
        None => None,
    };
    let mode = if embedder.is_some() {
        Mode::Dense
    } else {
        Mode::Bm25
    };
    let index = Index::build(docs, embedder, &Default::default()).map_err(|e| {
        BlockError::new(
            ErrorCode::BlockFailed,
            format!("候補の索引を作れませんでした: {e}"),
            format!("could not index the candidates: {e}"),
        )
    })?;
    let mut matches = Vec::new();
    let mut unmatched = Vec::new();
    for q in &queries {
        cancelled(ctx)?;
        let text = item_text(q, &query_fields);
        let mut query = Query::new(text).with_mode(mode);
        query.clauses = false;
        let ranking = index.rank(&query).map_err(|e| {
            BlockError::new(
                ErrorCode::BlockFailed,
                format!("候補の順位付けに失敗しました: {e}"),
                format!("ranking the candidates failed: {e}"),
            )
        })?;
        // BM25 scores are unbounded; the score shown is the share of the best candidate's,
        // so the best is 1 and min_score cuts the tail relative to it. A dense score is the
        // cosine similarity itself.
        let best = ranking
            .scored
            .first()
            .map_or(0.0, |s| s.bm25 + s.vocabulary);
        let scored: Vec<Json> = ranking
            .scored
            .iter()
            .map(|s| {
                let score = match s.dense {
                    Some(d) => f64::from(d),
                    None if best > 0.0 => f64::from((s.bm25 + s.vocabulary) / best),
                    None => 0.0,
                };
                (s.ord, round4(score))
            })
            .filter(|(_, score)| *score > 0.0 && *score + 1e-9 >= min_score)
            .take(top_k)
            .map(|(ord, score)| json!({"item": candidates[ord], "score": num_json(score)}))
            .collect();
        if scored.is_empty() {
            unmatched.push(q.clone());
        } else {
            matches.push(json!({"query": q, "candidates": scored}));
        }
    }
    Ok(outputs(vec![
        ("matches", Json::Array(matches)),
        ("unmatched", Json::Array(unmatched)),
    ]))
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
