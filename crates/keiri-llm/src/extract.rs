//! Finding the JSON value in a model's free-form answer.
//!
//! Models asked for "JSON only" still wrap it: in a ```json fence, after a sentence, before a
//! note. [`extract_json`] tries, in order: the whole text; each fenced block; each balanced
//! `{…}` or `[…]` span. The work is bounded (input size, number of spans tried), so hostile
//! output cannot make it slow, and it never panics.

use serde_json::Value;

/// Longer answers are not searched.
pub const MAX_EXTRACT_BYTES: usize = 8 * 1024 * 1024;
/// At most this many `{`/`[` starting points are tried.
const MAX_SPANS: usize = 64;

/// How the JSON was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// The whole answer is JSON.
    Whole,
    /// Inside a ``` fence.
    Fenced,
    /// A balanced span inside other text.
    Embedded,
}

/// The first JSON value in `text`, and how it was found.
pub fn extract_json(text: &str) -> Option<(Value, Found)> {
    if text.len() > MAX_EXTRACT_BYTES {
        return None;
    }
    let trimmed = text.trim().trim_start_matches('\u{feff}');
    if let Ok(v) = serde_json::from_str::<Value>(trimmed) {
        return Some((v, Found::Whole));
    }
    for block in fenced_blocks(text) {
        if let Ok(v) = serde_json::from_str::<Value>(block.trim()) {
            return Some((v, Found::Fenced));
        }
    }
    embedded(text).map(|v| (v, Found::Embedded))
}

/// The contents of ``` fences, in order (the info string after the opening fence, such as
/// `json`, is skipped; an unclosed fence runs to the end).
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after_ticks = &rest[open + 3..];
        let body_start = after_ticks.find('\n').map(|i| i + 1).unwrap_or(0);
        // An opening fence with JSON on the same line (```{"a":1}```) has no info string.
        let info = &after_ticks[..body_start];
        let body_start = if info.trim_start().starts_with(['{', '[']) {
            0
        } else {
            body_start
        };
        let body = &after_ticks[body_start..];
        match body.find("```") {
            Some(close) => {
                out.push(&body[..close]);
                rest = &body[close + 3..];
            }
            None => {
                out.push(body);
                break;
            }
        }
    }
    out
}

/// The first balanced `{…}`/`[…]` span that parses.
fn embedded(text: &str) -> Option<Value> {
    let bytes = text.as_bytes();
    let mut tried = 0;
    let mut i = 0;
    while i < bytes.len() && tried < MAX_SPANS {
        if bytes[i] == b'{' || bytes[i] == b'[' {
            tried += 1;
            if let Some(end) = balanced_end(bytes, i)
                && let Ok(v) = serde_json::from_str::<Value>(&text[i..=end])
            {
                return Some(v);
            }
        }
        i += 1;
    }
    None
}

/// The index of the bracket closing the one at `start`, skipping strings. ASCII brackets and
/// quotes never occur inside a multi-byte UTF-8 sequence, so byte indexes are char boundaries.
fn balanced_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut stack: Vec<u8> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => stack.push(b'}'),
            b'[' => stack.push(b']'),
            b'}' | b']' => {
                if stack.pop() != Some(b) {
                    return None;
                }
                if stack.is_empty() {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}
