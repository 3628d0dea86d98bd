//! The one lexical tokenizer of Keiri Studio, shared by retrieval and the chat router.
//!
//! Text is NFKC-normalised (full-width Latin and digits become ASCII, half-width katakana
//! becomes full-width) and lowercased. Then:
//!
//! * a run of letters or digits outside the CJK scripts is one word (`Excel` → `excel`,
//!   `shift_jis` → `shift`, `jis`);
//! * a run of kanji, hiragana and katakana yields every single character and every adjacent
//!   pair (`請求書` → `請`, `請求`, `求`, `求書`, `書`), because Japanese has no spaces and a
//!   dictionary segmenter would add a large dependency and still miss accounting terms; the
//!   bigrams carry the precision and the single characters the recall.
//!
//! Everything else (punctuation, symbols, spaces) separates tokens.

use tantivy::tokenizer::{Token as TantivyToken, TokenStream, Tokenizer};
use unicode_normalization::UnicodeNormalization;

/// The name under which [`KeiriTokenizer`] is registered in a tantivy index.
pub const TOKENIZER_NAME: &str = "keiri";

/// What a token is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TokenKind {
    /// A whole Latin (or other non-CJK) word or number.
    Word,
    /// One kanji, hiragana or katakana character.
    CjkChar,
    /// Two adjacent CJK characters.
    CjkBigram,
}

/// One token with its byte span in the *normalised* text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub text: String,
    pub kind: TokenKind,
    pub start: usize,
    pub end: usize,
}

/// Tokenizes `text` into lowercase words, CJK characters and CJK bigrams, in text order.
pub fn tokenize(text: &str) -> Vec<String> {
    tokenize_detailed(text)
        .into_iter()
        .map(|t| t.text)
        .collect()
}

/// Like [`tokenize`], keeping each token's kind and span (in the normalised text).
pub fn tokenize_detailed(text: &str) -> Vec<Token> {
    let normalized = normalize(text);
    let mut tokens = Vec::new();
    let mut word_start: Option<usize> = None;
    // The previous CJK character and its byte offset, while inside a CJK run.
    let mut prev_cjk: Option<(char, usize)> = None;

    for (offset, c) in normalized.char_indices() {
        if is_cjk(c) {
            if let Some(start) = word_start.take() {
                push_word(&mut tokens, &normalized, start, offset);
            }
            if let Some((p, p_offset)) = prev_cjk {
                tokens.push(Token {
                    text: format!("{p}{c}"),
                    kind: TokenKind::CjkBigram,
                    start: p_offset,
                    end: offset + c.len_utf8(),
                });
            }
            tokens.push(Token {
                text: c.to_string(),
                kind: TokenKind::CjkChar,
                start: offset,
                end: offset + c.len_utf8(),
            });
            prev_cjk = Some((c, offset));
        } else if c.is_alphanumeric() {
            prev_cjk = None;
            if word_start.is_none() {
                word_start = Some(offset);
            }
        } else {
            prev_cjk = None;
            if let Some(start) = word_start.take() {
                push_word(&mut tokens, &normalized, start, offset);
            }
        }
    }
    if let Some(start) = word_start {
        push_word(&mut tokens, &normalized, start, normalized.len());
    }
    tokens
}

/// NFKC then lowercase: the normal form every token is taken from.
pub fn normalize(text: &str) -> String {
    text.nfkc().flat_map(char::to_lowercase).collect()
}

fn push_word(tokens: &mut Vec<Token>, text: &str, start: usize, end: usize) {
    if let Some(word) = text.get(start..end) {
        tokens.push(Token {
            text: word.to_string(),
            kind: TokenKind::Word,
            start,
            end,
        });
    }
}

/// Kanji (with the iteration marks 々 〆 ヶ), hiragana and katakana (with the prolonged sound
/// mark ー). The katakana middle dot ・ separates words, so it is not included.
pub fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3005}' | '\u{3006}' | '\u{3007}'      // 々 〆 〇
        | '\u{3041}'..='\u{309F}'                  // hiragana (incl. ゝゞ)
        | '\u{30A1}'..='\u{30FA}'                  // katakana letters
        | '\u{30FC}'..='\u{30FF}'                  // ー ヽ ヾ ヿ
        | '\u{31F0}'..='\u{31FF}'                  // katakana phonetic extensions
        | '\u{3400}'..='\u{4DBF}'                  // CJK extension A
        | '\u{4E00}'..='\u{9FFF}'                  // CJK unified ideographs
        | '\u{F900}'..='\u{FAFF}'                  // compatibility ideographs
        | '\u{20000}'..='\u{3134F}'                // extensions B–G
    )
}

/// The tokenizer registered in tantivy under [`TOKENIZER_NAME`]; it produces exactly the
/// tokens of [`tokenize`], so the index and the query agree by construction.
#[derive(Debug, Clone, Default)]
pub struct KeiriTokenizer;

/// The token stream of [`KeiriTokenizer`]: the tokens are computed up front because the
/// bigram pass looks one character back.
#[derive(Debug)]
pub struct KeiriTokenStream {
    tokens: Vec<TantivyToken>,
    next: usize,
}

impl Tokenizer for KeiriTokenizer {
    type TokenStream<'a> = KeiriTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> KeiriTokenStream {
        let tokens = tokenize_detailed(text)
            .into_iter()
            .enumerate()
            .map(|(position, t)| TantivyToken {
                offset_from: t.start,
                offset_to: t.end,
                position,
                text: t.text,
                position_length: 1,
            })
            .collect();
        KeiriTokenStream { tokens, next: 0 }
    }
}

impl TokenStream for KeiriTokenStream {
    fn advance(&mut self) -> bool {
        if self.next < self.tokens.len() {
            self.next += 1;
            true
        } else {
            false
        }
    }

    fn token(&self) -> &TantivyToken {
        // `advance` is called before `token` by contract; before that (or past the end)
        // the last token, or a static empty one, is returned rather than panicking.
        self.tokens
            .get(self.next.saturating_sub(1))
            .unwrap_or(&EMPTY_TOKEN)
    }

    fn token_mut(&mut self) -> &mut TantivyToken {
        if self.tokens.is_empty() {
            self.tokens.push(TantivyToken::default());
        }
        let index = self.next.saturating_sub(1).min(self.tokens.len() - 1);
        &mut self.tokens[index]
    }
}

static EMPTY_TOKEN: TantivyToken = TantivyToken {
    offset_from: 0,
    offset_to: 0,
    position: usize::MAX,
    text: String::new(),
    position_length: 1,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expect: &[&str]) {
        assert_eq!(tokenize(input), expect, "tokenize({input:?})");
    }

    #[test]
    fn words_and_bigrams() {
        check("請求書", &["請", "請求", "求", "求書", "書"]);
        check(
            "Excel レポート",
            &["excel", "レ", "レポ", "ポ", "ポー", "ー", "ート", "ト"],
        );
        check(
            "請求書CSVから",
            &["請", "請求", "求", "求書", "書", "csv", "か", "から", "ら"],
        );
        check("ＣＳＶ ｶﾅ", &["csv", "カ", "カナ", "ナ"]);
        check("shift_jis, UTF-8", &["shift", "jis", "utf", "8"]);
        check(
            "発注書・検収",
            &["発", "発注", "注", "注書", "書", "検", "検収", "収"],
        );
        check("", &[]);
        check("  ... !!", &[]);
    }

    #[test]
    fn tantivy_stream_matches_tokenize() {
        let mut tokenizer = KeiriTokenizer;
        let mut stream = tokenizer.token_stream("重複 invoice");
        let mut seen = Vec::new();
        while stream.advance() {
            seen.push(stream.token().text.clone());
        }
        assert_eq!(seen, tokenize("重複 invoice"));
        assert!(!stream.advance());
    }
}
