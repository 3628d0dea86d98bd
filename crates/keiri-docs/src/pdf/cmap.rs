//! CMaps: code-space ranges (how many bytes make one character code) and `ToUnicode`
//! mappings (§9.10.3). Ranges are stored, not expanded, so a `bfrange` covering 65,536 codes
//! costs one entry.

use std::collections::HashMap;

use super::lexer::{Lexer, Token};

/// Entries (chars + ranges) one CMap may hold.
const MAX_ENTRIES: usize = 200_000;

#[derive(Debug, Clone, Default)]
pub(crate) struct CMap {
    /// (byte length, low, high).
    pub codespace: Vec<(usize, u32, u32)>,
    chars: HashMap<(usize, u32), String>,
    /// (byte length, low, high, destination for `low`, or one destination per code).
    ranges: Vec<(usize, u32, u32, RangeDest)>,
}

#[derive(Debug, Clone)]
enum RangeDest {
    /// UTF-16 units for the first code; the last unit is incremented along the range.
    Start(Vec<u16>),
    List(Vec<String>),
}

impl CMap {
    /// Parses a CMap program. Unknown or broken parts are skipped.
    pub fn parse(data: &[u8]) -> CMap {
        let mut cmap = CMap::default();
        let mut lx = Lexer::new(data, 0);
        let mut entries = 0usize;
        while let Some(token) = lx.next_token() {
            if entries > MAX_ENTRIES {
                break;
            }
            match token {
                Token::Keyword(b"begincodespacerange") => {
                    while let Some((lo, hi)) = pair(&mut lx, b"endcodespacerange") {
                        if lo.len() == hi.len() && (1..=4).contains(&lo.len()) {
                            cmap.codespace.push((lo.len(), be(&lo), be(&hi)));
                        }
                        entries += 1;
                    }
                }
                Token::Keyword(b"beginbfchar") => {
                    while let Some(src) = string_or_end(&mut lx, b"endbfchar") {
                        let dest = match lx.next_token() {
                            Some(Token::String(d)) => utf16be(&d),
                            Some(Token::Name(n)) => {
                                super::font::glyph_to_unicode(&n).unwrap_or_default()
                            }
                            _ => break,
                        };
                        if (1..=4).contains(&src.len()) {
                            cmap.chars.insert((src.len(), be(&src)), dest);
                        }
                        entries += 1;
                    }
                }
                Token::Keyword(b"beginbfrange") => {
                    while let Some((lo, hi)) = pair(&mut lx, b"endbfrange") {
                        let dest = match lx.next_token() {
                            Some(Token::String(d)) => RangeDest::Start(
                                d.chunks(2)
                                    .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))
                                    .collect(),
                            ),
                            Some(Token::ArrayStart) => {
                                let mut list = Vec::new();
                                while let Some(Token::String(d)) = lx.next_token() {
                                    list.push(utf16be(&d));
                                    entries += 1;
                                    if entries > MAX_ENTRIES {
                                        break;
                                    }
                                }
                                RangeDest::List(list)
                            }
                            _ => break,
                        };
                        if lo.len() == hi.len() && (1..=4).contains(&lo.len()) {
                            let (lo_v, hi_v) = (be(&lo), be(&hi));
                            if lo_v <= hi_v {
                                cmap.ranges.push((lo.len(), lo_v, hi_v, dest));
                            }
                        }
                        entries += 1;
                    }
                }
                // Nothing else in a CMap matters for text.
                _ => {}
            }
        }
        cmap
    }

    /// Unicode text for `code` of `len` bytes, if mapped.
    pub fn lookup(&self, len: usize, code: u32) -> Option<String> {
        if let Some(s) = self.chars.get(&(len, code)) {
            return Some(s.clone());
        }
        for (l, lo, hi, dest) in &self.ranges {
            if *l != len || code < *lo || code > *hi {
                continue;
            }
            let offset = code - lo;
            return match dest {
                RangeDest::Start(units) => {
                    let mut units = units.clone();
                    if let Some(last) = units.last_mut() {
                        *last = last.wrapping_add(offset as u16);
                    }
                    Some(String::from_utf16_lossy(&units))
                }
                RangeDest::List(list) => list.get(offset as usize).cloned(),
            };
        }
        None
    }

    pub fn is_empty(&self) -> bool {
        self.chars.is_empty() && self.ranges.is_empty()
    }

    /// Splits `bytes` into character codes using the code-space ranges. A byte sequence that
    /// matches no range is taken one byte at a time, as the spec's fallback says.
    pub fn split_codes(&self, bytes: &[u8], default_len: usize) -> Vec<(usize, u32)> {
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            let mut matched = None;
            if self.codespace.is_empty() {
                matched = Some(default_len.min(bytes.len() - i).max(1));
            } else {
                for len in 1..=4 {
                    let Some(chunk) = bytes.get(i..i + len) else {
                        break;
                    };
                    let v = be(chunk);
                    if self
                        .codespace
                        .iter()
                        .any(|(l, lo, hi)| *l == len && v >= *lo && v <= *hi)
                    {
                        matched = Some(len);
                        break;
                    }
                }
            }
            let len = matched.unwrap_or(1);
            out.push((len, be(&bytes[i..i + len])));
            i += len;
        }
        out
    }
}

fn be(bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .take(4)
        .fold(0u32, |acc, &b| acc << 8 | u32::from(b))
}

fn utf16be(bytes: &[u8]) -> String {
    let units: Vec<u16> = bytes
        .chunks(2)
        .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))
        .collect();
    String::from_utf16_lossy(&units)
}

fn string_or_end(lx: &mut Lexer<'_>, end: &[u8]) -> Option<Vec<u8>> {
    match lx.next_token()? {
        Token::String(s) => Some(s),
        Token::Keyword(k) if k == end => None,
        _ => None,
    }
}

fn pair(lx: &mut Lexer<'_>, end: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let lo = string_or_end(lx, end)?;
    let hi = string_or_end(lx, end)?;
    Some((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CMAP: &str = "/CIDInit /ProcSet findresource begin 12 dict begin begincmap
        /CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def
        1 begincodespacerange <0000> <FFFF> endcodespacerange
        2 beginbfchar <0003> <0020> <0010> <8ACB> endbfchar
        2 beginbfrange <0020> <0022> <6C42> <0030> <0031> [<66F8> <D83DDE00>] endbfrange
        endcmap CMapName currentdict /CMap defineresource pop end end";

    #[test]
    fn to_unicode() {
        let cmap = CMap::parse(CMAP.as_bytes());
        let check = |code: u32, expect: Option<&str>| {
            assert_eq!(cmap.lookup(2, code).as_deref(), expect, "{code:04X}");
        };
        check(0x0003, Some(" "));
        check(0x0010, Some("請"));
        check(0x0020, Some("求"));
        check(0x0022, Some("汄"));
        check(0x0030, Some("書"));
        check(0x0031, Some("😀"));
        check(0x0040, None);
        assert_eq!(
            cmap.split_codes(&[0, 0x10, 0, 0x20, 7], 2),
            vec![(2, 0x10), (2, 0x20), (1, 7)]
        );
    }
}
