//! Properties of the shared tokenizer.

use keiri_search::tokenize;
use keiri_search::tokenize::{is_cjk, normalize};
use proptest::prelude::*;

/// Strings mixing kanji, hiragana, katakana, Latin letters, digits, full-width forms and
/// separators.
fn mixed_text() -> impl Strategy<Value = String> {
    let pieces = prop_oneof![
        "[請求書重複検出仕訳勘定科目消込]{1,4}",
        "[ぁ-ゖ]{1,3}",
        "[ァ-ヺー]{1,3}",
        "[A-Za-z]{1,6}",
        "[0-9]{1,3}",
        "[Ａ-Ｚａ-ｚ０-９]{1,3}",
        "[ｦ-ﾝ]{1,3}",
        "[ 、。・,._()（）\\-]{1,2}",
    ];
    proptest::collection::vec(pieces, 0..8).prop_map(|v| v.concat())
}

proptest! {
    #[test]
    fn every_cjk_character_and_adjacent_pair_is_a_token(text in mixed_text()) {
        let tokens = tokenize(&text);
        let normalized: Vec<char> = normalize(&text).chars().collect();
        for (i, c) in normalized.iter().enumerate() {
            if !is_cjk(*c) {
                continue;
            }
            prop_assert!(tokens.contains(&c.to_string()), "{c} missing from {tokens:?}");
            if let Some(next) = normalized.get(i + 1).filter(|n| is_cjk(**n)) {
                let pair = format!("{c}{next}");
                prop_assert!(tokens.contains(&pair), "{pair} missing from {tokens:?}");
            }
        }
    }

    #[test]
    fn latin_words_are_lowercased_whole_words(text in mixed_text()) {
        let tokens = tokenize(&text);
        let normalized = normalize(&text);
        let words: Vec<&str> = normalized
            .split(|c: char| !c.is_alphanumeric() || is_cjk(c))
            .filter(|w| !w.is_empty())
            .collect();
        let latin_tokens: Vec<&String> =
            tokens.iter().filter(|t| !t.chars().any(is_cjk)).collect();
        prop_assert_eq!(latin_tokens.len(), words.len(), "{:?} vs {:?}", latin_tokens, words);
        for (token, word) in latin_tokens.iter().zip(&words) {
            prop_assert_eq!(token.as_str(), *word);
            prop_assert_eq!(token.to_lowercase(), token.as_str());
        }
    }

    #[test]
    fn arbitrary_input_never_panics(text in any::<String>()) {
        let tokens = tokenize(&text);
        prop_assert!(tokens.iter().all(|t| !t.is_empty()));
    }
}

fn check(input: &str, expect: &[&str]) {
    assert_eq!(tokenize(input), expect, "tokenize({input:?})");
}

#[test]
fn examples() {
    check(
        "請求書CSVから重複を検出",
        &[
            "請", "請求", "求", "求書", "書", "csv", "か", "から", "ら", "ら重", "重", "重複",
            "複", "複を", "を", "を検", "検", "検出", "出",
        ],
    );
    check(
        "Ｅｘｃｅｌレポート",
        &["excel", "レ", "レポ", "ポ", "ポー", "ー", "ート", "ト"],
    );
    check("Three-Way Match", &["three", "way", "match"]);
    check(
        "令和6年4月1日",
        &["令", "令和", "和", "6", "年", "4", "月", "1", "日"],
    );
}
