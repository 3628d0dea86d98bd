//! Text helpers shared by blocks of several categories.

use std::path::Path;

use serde_json::Value as Json;
use unicode_normalization::UnicodeNormalization;

/// What a warning says after the examples it shows (`shown` of `count` items): ` ほか N 件`
/// and ` and N more`, or nothing when it showed them all.
pub(crate) fn and_more(count: usize, shown: usize) -> (String, String) {
    match count.saturating_sub(shown) {
        0 => (String::new(), String::new()),
        more => (format!(" ほか {more} 件"), format!(" and {more} more")),
    }
}

/// The text excerpt of an extracted evidence file, or the reason it has none.
pub(crate) fn excerpt(
    path: &Path,
    bytes: &[u8],
    max_chars: usize,
) -> Result<Option<String>, String> {
    let Ok(format) = keiri_docs::Format::from_path(path) else {
        return Ok(None);
    };
    let opts = keiri_docs::ExtractOptions {
        max_chars: Some(max_chars),
        ..keiri_docs::ExtractOptions::default()
    };
    keiri_docs::extract_bytes(bytes, format, &opts)
        .map(|e| Some(e.normalized()))
        .map_err(|e| e.code().to_owned())
}

pub(crate) fn text(v: Option<&Json>) -> String {
    match v {
        None | Some(Json::Null) => String::new(),
        Some(Json::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

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

/// The form of a company or person name used for comparison: NFKC (full-width letters and
/// digits and half-width kana fold to one form, `㈱` becomes `(株)`), hiragana as katakana and
/// small kana as large ones (bank transfers spell ｼｮｳｼﾞ as ｼﾖｳｼﾞ), lowercase, legal-form
/// words and their bank-transfer abbreviations removed (株式会社, (株), ｶ), …), spaces and
/// punctuation dropped.
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
