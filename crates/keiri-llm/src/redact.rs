//! Keeping secrets out of messages and logs.
//!
//! Two layers: every known secret (the configured keys, passwords in URLs, and any variable
//! whose name says it is a key) is replaced wherever it appears, raw or JSON-escaped; and
//! anything shaped like an OpenAI key (`sk-…`) or a bearer token is replaced even when we did
//! not know it, because a provider may echo a different key than the one we sent.

use std::fmt;

use crate::config::Env;

/// What a secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Shorter values are not treated as secrets: replacing every "1" or "yes" in a log would
/// destroy it, and no real key is this short.
const MIN_SECRET_LEN: usize = 6;

/// Replaces known secrets and key-shaped tokens in text.
#[derive(Clone, Default)]
pub struct Redactor {
    /// Longest first, so a secret that contains another is replaced whole.
    secrets: Vec<String>,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redactor")
            .field("secrets", &self.secrets.len())
            .finish()
    }
}

impl Redactor {
    /// A redactor for these secrets (values shorter than 6 characters are ignored).
    pub fn new<I, S>(secrets: I) -> Redactor
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut out = Redactor::default();
        out.add(secrets);
        out
    }

    /// Every value in `env` whose name marks it as secret (`*_KEY`, `*_TOKEN`, `*_SECRET`,
    /// `*_PASSWORD`), whether or not this crate uses it.
    pub fn from_env(env: &Env) -> Redactor {
        Redactor::new(
            env.iter()
                .filter(|(name, _)| is_secret_name(name))
                .map(|(_, value)| value.trim().to_string()),
        )
    }

    /// Adds more secrets.
    pub fn add<I, S>(&mut self, secrets: I)
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        for s in secrets {
            let s = s.into();
            if s.chars().count() < MIN_SECRET_LEN {
                continue;
            }
            // A value with quotes or backslashes appears escaped inside JSON lines.
            let escaped = serde_json::to_string(&s)
                .ok()
                .map(|q| q[1..q.len() - 1].to_string())
                .filter(|e| *e != s);
            for v in std::iter::once(s).chain(escaped) {
                if !self.secrets.contains(&v) {
                    self.secrets.push(v);
                }
            }
        }
        self.secrets
            .sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    }

    /// `self` and `other` together.
    pub fn merged(mut self, other: &Redactor) -> Redactor {
        self.add(other.secrets.iter().cloned());
        self
    }

    /// `text` with every secret and key-shaped token replaced by [`REDACTED`].
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for s in &self.secrets {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), REDACTED);
            }
        }
        redact_token_shapes(&out)
    }
}

fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["_KEY", "_TOKEN", "_SECRET", "_PASSWORD"]
        .iter()
        .any(|suffix| upper.ends_with(suffix))
        || upper == "PASSWORD"
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~' | '+' | '/' | '=')
}

/// Replaces `sk-` followed by at least 16 token characters, and the token after `Bearer `.
fn redact_token_shapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let next_sk = find_word_start(rest, "sk-");
        let next_bearer = find_word_start(rest, "Bearer ");
        let (at, prefix) = match (next_sk, next_bearer) {
            (None, None) => break,
            (Some(a), None) => (a, "sk-"),
            (None, Some(b)) => (b, "Bearer "),
            (Some(a), Some(b)) if a <= b => (a, "sk-"),
            (Some(_), Some(b)) => (b, "Bearer "),
        };
        let after = &rest[at + prefix.len()..];
        let token_len: usize = after
            .chars()
            .take_while(|c| is_token_char(*c))
            .map(char::len_utf8)
            .sum();
        let min = if prefix == "sk-" { 16 } else { 8 };
        out.push_str(&rest[..at]);
        if token_len >= min && !after[..token_len].starts_with(REDACTED) {
            if prefix == "Bearer " {
                out.push_str(prefix);
            }
            out.push_str(REDACTED);
        } else {
            out.push_str(prefix);
            out.push_str(&after[..token_len]);
        }
        rest = &after[token_len..];
    }
    out.push_str(rest);
    out
}

/// The first occurrence of `needle` that does not continue a longer token (so `task-…` does
/// not match `sk-`).
fn find_word_start(text: &str, needle: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = text[from..].find(needle) {
        let at = from + i;
        let prev = text[..at].chars().next_back();
        if prev.is_none_or(|c| !c.is_ascii_alphanumeric() && c != '-' && c != '_') {
            return Some(at);
        }
        from = at + needle.len();
    }
    None
}

/// A URL without user info, query or fragment; `<invalid url>` when it does not parse.
pub fn redact_url(raw: &str) -> String {
    match url::Url::parse(raw) {
        Ok(mut url) => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.set_query(None);
            url.set_fragment(None);
            let s = url.to_string();
            // `Url` normalises "http://h:1" to "http://h:1/"; keep what the user wrote.
            if raw.ends_with('/') {
                s
            } else {
                s.trim_end_matches('/').to_string()
            }
        }
        Err(_) => "<invalid url>".to_string(),
    }
}
