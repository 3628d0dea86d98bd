//! PDF tokens and objects (ISO 32000-1 §7.2–7.3), parsed from untrusted bytes.
//!
//! Nesting is bounded by [`MAX_DEPTH`] so a file made of ten thousand `[` cannot exhaust the
//! stack, literal strings are scanned iteratively, and every read is bounds-checked: the
//! parser returns `None`/an error on malformed input and never panics.

use std::ops::Range;
use std::rc::Rc;

/// Deepest array/dictionary nesting we accept; real files stay far below it.
pub(crate) const MAX_DEPTH: usize = 64;

/// A PDF object. Streams keep the byte range of their (still encoded) data in the file, or
/// own their bytes when they come from a decoded object stream.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Object {
    Null,
    Bool(bool),
    Int(i64),
    Real(f64),
    String(Vec<u8>),
    Name(Vec<u8>),
    Array(Vec<Object>),
    Dict(Dict),
    Ref(u32, u16),
    Stream(Rc<Stream>),
}

/// A dictionary; small and read a few keys at a time, so a vector beats a map.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Dict(pub Vec<(Vec<u8>, Object)>);

impl Dict {
    pub fn get(&self, key: &[u8]) -> Option<&Object> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn name(&self, key: &[u8]) -> Option<&[u8]> {
        match self.get(key) {
            Some(Object::Name(n)) => Some(n),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stream {
    pub dict: Dict,
    pub data: Range<usize>,
}

impl Object {
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Object::Int(i) => Some(*i),
            Object::Real(r) if r.is_finite() => Some(*r as i64),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Object::Int(i) => Some(*i as f64),
            Object::Real(r) if r.is_finite() => Some(*r),
            _ => None,
        }
    }

    pub fn as_name(&self) -> Option<&[u8]> {
        match self {
            Object::Name(n) => Some(n),
            _ => None,
        }
    }

    pub fn as_dict(&self) -> Option<&Dict> {
        match self {
            Object::Dict(d) => Some(d),
            Object::Stream(s) => Some(&s.dict),
            _ => None,
        }
    }
}

/// A token of the PDF syntax.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Token<'a> {
    Int(i64),
    Real(f64),
    String(Vec<u8>),
    Name(Vec<u8>),
    ArrayStart,
    ArrayEnd,
    DictStart,
    DictEnd,
    /// A bare word: `obj`, `R`, `true`, an operator such as `Tj`, …
    Keyword(&'a [u8]),
}

pub(crate) fn is_whitespace(b: u8) -> bool {
    matches!(b, 0 | 9 | 10 | 12 | 13 | 32)
}

pub(crate) fn is_delimiter(b: u8) -> bool {
    matches!(
        b,
        b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%'
    )
}

fn is_regular(b: u8) -> bool {
    !is_whitespace(b) && !is_delimiter(b)
}

/// Why parsing an object failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ParseError {
    /// Malformed or truncated syntax.
    Syntax,
    /// Nesting deeper than [`MAX_DEPTH`].
    TooDeep,
}

/// A cursor over PDF bytes.
#[derive(Debug, Clone)]
pub(crate) struct Lexer<'a> {
    pub data: &'a [u8],
    pub pos: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(data: &'a [u8], pos: usize) -> Self {
        Lexer {
            data,
            pos: pos.min(data.len()),
        }
    }

    pub fn peek_byte(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    /// Skips whitespace and `%` comments.
    pub fn skip_ws(&mut self) {
        while let Some(b) = self.peek_byte() {
            if is_whitespace(b) {
                self.pos += 1;
            } else if b == b'%' {
                while let Some(c) = self.peek_byte() {
                    if c == b'\n' || c == b'\r' {
                        break;
                    }
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
    }

    /// The next token, or `None` at the end of the data. Stray `)`, `>` and braces are
    /// returned as keywords so a caller can skip them.
    pub fn next_token(&mut self) -> Option<Token<'a>> {
        self.skip_ws();
        let b = self.peek_byte()?;
        match b {
            b'/' => {
                self.pos += 1;
                Some(Token::Name(self.read_name()))
            }
            b'(' => {
                self.pos += 1;
                Some(Token::String(self.read_literal_string()))
            }
            b'<' => {
                if self.data.get(self.pos + 1) == Some(&b'<') {
                    self.pos += 2;
                    Some(Token::DictStart)
                } else {
                    self.pos += 1;
                    Some(Token::String(self.read_hex_string()))
                }
            }
            b'>' => {
                if self.data.get(self.pos + 1) == Some(&b'>') {
                    self.pos += 2;
                    Some(Token::DictEnd)
                } else {
                    self.pos += 1;
                    Some(Token::Keyword(&self.data[self.pos - 1..self.pos]))
                }
            }
            b'[' => {
                self.pos += 1;
                Some(Token::ArrayStart)
            }
            b']' => {
                self.pos += 1;
                Some(Token::ArrayEnd)
            }
            b')' | b'{' | b'}' => {
                self.pos += 1;
                Some(Token::Keyword(&self.data[self.pos - 1..self.pos]))
            }
            b'0'..=b'9' | b'+' | b'-' | b'.' => Some(self.read_number()),
            _ => {
                let start = self.pos;
                while self.peek_byte().is_some_and(is_regular) {
                    self.pos += 1;
                }
                Some(Token::Keyword(&self.data[start..self.pos]))
            }
        }
    }

    fn read_name(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        while let Some(b) = self.peek_byte() {
            if !is_regular(b) {
                break;
            }
            self.pos += 1;
            if b == b'#' {
                let hex = self.data.get(self.pos..self.pos + 2).and_then(|h| {
                    let h = std::str::from_utf8(h).ok()?;
                    u8::from_str_radix(h, 16).ok()
                });
                if let Some(v) = hex {
                    out.push(v);
                    self.pos += 2;
                    continue;
                }
            }
            out.push(b);
        }
        out
    }

    fn read_number(&mut self) -> Token<'a> {
        let start = self.pos;
        while self
            .peek_byte()
            .is_some_and(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.'))
        {
            self.pos += 1;
        }
        let text = &self.data[start..self.pos];
        // Be lenient like viewers: "--5" or "1.2.3" are taken by their longest valid prefix.
        let s = std::str::from_utf8(text).unwrap_or("0");
        let mut s = s.trim_start_matches(['+']);
        while s.starts_with("--") {
            s = &s[1..];
        }
        if !s.contains('.')
            && let Ok(i) = s.parse::<i64>()
        {
            return Token::Int(i);
        }
        let mut end = s.len();
        while end > 0 {
            if let Ok(f) = s[..end].parse::<f64>() {
                return if f.is_finite() {
                    Token::Real(f)
                } else {
                    Token::Real(0.0)
                };
            }
            end -= 1;
        }
        Token::Real(0.0)
    }

    fn read_literal_string(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut depth = 1usize;
        while let Some(b) = self.peek_byte() {
            self.pos += 1;
            match b {
                b'(' => {
                    depth += 1;
                    out.push(b);
                }
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                    out.push(b);
                }
                b'\\' => {
                    let Some(e) = self.peek_byte() else { break };
                    self.pos += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'\r' => {
                            if self.peek_byte() == Some(b'\n') {
                                self.pos += 1;
                            }
                        }
                        b'\n' => {}
                        b'0'..=b'7' => {
                            let mut v = u32::from(e - b'0');
                            for _ in 0..2 {
                                match self.peek_byte() {
                                    Some(d @ b'0'..=b'7') => {
                                        v = v * 8 + u32::from(d - b'0');
                                        self.pos += 1;
                                    }
                                    _ => break,
                                }
                            }
                            out.push((v & 0xFF) as u8);
                        }
                        other => out.push(other),
                    }
                }
                b'\r' => {
                    if self.peek_byte() == Some(b'\n') {
                        self.pos += 1;
                    }
                    out.push(b'\n');
                }
                _ => out.push(b),
            }
        }
        out
    }

    fn read_hex_string(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut high: Option<u8> = None;
        while let Some(b) = self.peek_byte() {
            self.pos += 1;
            if b == b'>' {
                break;
            }
            let v = match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                b'A'..=b'F' => b - b'A' + 10,
                _ => continue,
            };
            match high.take() {
                Some(h) => out.push(h << 4 | v),
                None => high = Some(v),
            }
        }
        if let Some(h) = high {
            out.push(h << 4);
        }
        out
    }

    /// Parses one object. Indirect references (`n g R`) are recognised by looking ahead.
    pub fn parse_object(&mut self, depth: usize) -> Result<Object, ParseError> {
        let token = self.next_token().ok_or(ParseError::Syntax)?;
        self.object_from(token, depth)
    }

    pub fn object_from(&mut self, token: Token<'a>, depth: usize) -> Result<Object, ParseError> {
        if depth > MAX_DEPTH {
            return Err(ParseError::TooDeep);
        }
        Ok(match token {
            Token::Int(i) => {
                let save = self.pos;
                if let (Ok(num), Some(Token::Int(generation))) =
                    (u32::try_from(i), self.next_token())
                    && let (Ok(generation), Some(Token::Keyword(b"R"))) =
                        (u16::try_from(generation), self.next_token())
                {
                    return Ok(Object::Ref(num, generation));
                }
                self.pos = save;
                Object::Int(i)
            }
            Token::Real(r) => Object::Real(r),
            Token::String(s) => Object::String(s),
            Token::Name(n) => Object::Name(n),
            Token::ArrayStart => {
                let mut items = Vec::new();
                loop {
                    match self.next_token() {
                        None => return Err(ParseError::Syntax),
                        Some(Token::ArrayEnd) => break,
                        Some(t) => items.push(self.object_from(t, depth + 1)?),
                    }
                }
                Object::Array(items)
            }
            Token::DictStart => Object::Dict(self.parse_dict_body(depth + 1)?),
            Token::Keyword(b"true") => Object::Bool(true),
            Token::Keyword(b"false") => Object::Bool(false),
            Token::Keyword(b"null") => Object::Null,
            Token::ArrayEnd | Token::DictEnd | Token::Keyword(_) => return Err(ParseError::Syntax),
        })
    }

    /// Parses dictionary entries after `<<` up to and including `>>`.
    pub fn parse_dict_body(&mut self, depth: usize) -> Result<Dict, ParseError> {
        if depth > MAX_DEPTH {
            return Err(ParseError::TooDeep);
        }
        let mut entries = Vec::new();
        loop {
            match self.next_token() {
                None => return Err(ParseError::Syntax),
                Some(Token::DictEnd) => break,
                Some(Token::Name(key)) => {
                    let value = match self.next_token() {
                        None => return Err(ParseError::Syntax),
                        Some(Token::DictEnd) => {
                            entries.push((key, Object::Null));
                            break;
                        }
                        Some(t) => match self.object_from(t, depth) {
                            Ok(v) => v,
                            Err(ParseError::TooDeep) => return Err(ParseError::TooDeep),
                            // A broken value is dropped, the rest of the dictionary kept.
                            Err(ParseError::Syntax) => Object::Null,
                        },
                    };
                    entries.push((key, value));
                }
                // Junk where a key should be: skip it, as viewers do.
                Some(_) => {}
            }
        }
        Ok(Dict(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(src: &str, expect: Result<Object, ParseError>) {
        let mut lx = Lexer::new(src.as_bytes(), 0);
        assert_eq!(lx.parse_object(0), expect, "{src}");
    }

    fn name(s: &str) -> Object {
        Object::Name(s.as_bytes().to_vec())
    }

    #[test]
    fn objects() {
        check("42", Ok(Object::Int(42)));
        check("-3.5", Ok(Object::Real(-3.5)));
        check(".5", Ok(Object::Real(0.5)));
        check("--7", Ok(Object::Int(-7)));
        check("/A#20B", Ok(name("A B")));
        check(
            "(a\\(b\\)c (nested) \\101\\n)",
            Ok(Object::String(b"a(b)c (nested) A\n".to_vec())),
        );
        check("<48 65 6C6C 6F>", Ok(Object::String(b"Hello".to_vec())));
        check("<1>", Ok(Object::String(vec![0x10])));
        check("12 0 R", Ok(Object::Ref(12, 0)));
        check(
            "[1 2 0 R /N]",
            Ok(Object::Array(vec![
                Object::Int(1),
                Object::Ref(2, 0),
                name("N"),
            ])),
        );
        check(
            "<< /Type /Page /Kids [] /Bad ) /Len 3 >>",
            Ok(Object::Dict(Dict(vec![
                (b"Type".to_vec(), name("Page")),
                (b"Kids".to_vec(), Object::Array(vec![])),
                (b"Bad".to_vec(), Object::Null),
                (b"Len".to_vec(), Object::Int(3)),
            ]))),
        );
        check("[1 2", Err(ParseError::Syntax));
        check(&"[".repeat(10_000), Err(ParseError::TooDeep));
        check(&"<< /K ".repeat(10_000), Err(ParseError::TooDeep));
        // A dictionary where a key should be is skipped token by token, not recursed into.
        check(&"<<".repeat(10_000), Err(ParseError::Syntax));
    }
}
