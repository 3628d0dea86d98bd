//! Small XML helpers over quick-xml: attribute access by local name, text collection, escaping
//! (including SpreadsheetML's `_xHHHH_` escapes) and rewriting one start tag.

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

/// A reader over a part's text with the settings every scan here uses.
pub fn reader(text: &str) -> Reader<&[u8]> {
    let mut r = Reader::from_reader(text.as_bytes());
    let config = r.config_mut();
    config.trim_text(false);
    config.check_end_names = true;
    config.expand_empty_elements = false;
    r
}

/// The local name of an element (`c` for both `<c>` and `<x:c>`).
pub fn local<'a>(e: &'a BytesStart<'_>) -> &'a [u8] {
    let full = e.name().into_inner().as_bytes();
    match full.iter().rposition(|&b| b == b':') {
        Some(i) => &full[i + 1..],
        None => full,
    }
}

/// The element's prefix with its colon (`x:`), or empty.
pub fn prefix_of(e: &BytesStart<'_>) -> String {
    let full = e.name().into_inner().as_bytes();
    match full.iter().rposition(|&b| b == b':') {
        Some(i) => String::from_utf8_lossy(&full[..=i]).into_owned(),
        None => String::new(),
    }
}

/// The unescaped value of the attribute with this local name (any prefix), if present.
pub fn attr(e: &BytesStart<'_>, name: &[u8]) -> Option<String> {
    for a in e.attributes().with_checks(false).flatten() {
        let key = a.key.into_inner().as_bytes();
        let local = match key.iter().rposition(|&b| b == b':') {
            Some(i) if !key.starts_with(b"xmlns") => &key[i + 1..],
            Some(_) => continue,
            None => key,
        };
        if local == name {
            return Some(
                a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                    .map(|v| v.into_owned())
                    .unwrap_or_else(|_| a.value.into_owned()),
            );
        }
    }
    None
}

/// Collects the text of an element from Text, CData and entity reference events.
#[derive(Default)]
pub struct TextBuf {
    pub text: String,
}

impl TextBuf {
    /// Adds the event's text; returns false if the event carries none.
    pub fn push(&mut self, event: &Event<'_>) -> bool {
        match event {
            Event::Text(t) => {
                self.text.push_str(&t.xml10_content());
                true
            }
            Event::CData(t) => {
                self.text.push_str(&t.xml10_content());
                true
            }
            Event::GeneralRef(r) => {
                match r.resolve_char_ref() {
                    Ok(Some(c)) => self.text.push(c),
                    _ => match &**r {
                        "amp" => self.text.push('&'),
                        "lt" => self.text.push('<'),
                        "gt" => self.text.push('>'),
                        "quot" => self.text.push('"'),
                        "apos" => self.text.push('\''),
                        other => {
                            // An undeclared entity cannot appear in a valid part; keep it
                            // visible rather than dropping text.
                            self.text.push('&');
                            self.text.push_str(other);
                            self.text.push(';');
                        }
                    },
                }
                true
            }
            _ => false,
        }
    }
}

/// Escapes element text.
pub fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
    out
}

/// Escapes an attribute value for double quotes.
pub fn escape_attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            _ => out.push(c),
        }
    }
    out
}

fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

fn hex4_at(s: &str, i: usize) -> Option<u32> {
    let b = s.as_bytes();
    if b.get(i) != Some(&b'_') || b.get(i + 1) != Some(&b'x') || b.get(i + 6) != Some(&b'_') {
        return None;
    }
    let hex = s.get(i + 2..i + 6)?;
    if !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(hex, 16).ok()
}

/// Encodes text for a SpreadsheetML string: characters XML cannot hold become `_xHHHH_`, and a
/// literal `_xHHHH_` gets its underscore escaped so it reads back unchanged.
pub fn encode_xstring(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.char_indices() {
        if c == '_' && hex4_at(s, i).is_some() {
            out.push_str("_x005F_");
        } else if is_xml_char(c) {
            out.push(c);
        } else {
            out.push_str(&format!("_x{:04X}_", u32::from(c)));
        }
    }
    out
}

/// Decodes `_xHHHH_` escapes in a SpreadsheetML string.
pub fn decode_xstring(s: &str) -> String {
    if !s.contains("_x") {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if let Some(code) = hex4_at(s, i)
            && let Some(c) = char::from_u32(code)
        {
            out.push(c);
            i += 7;
            continue;
        }
        match s.get(i..).and_then(|r| r.chars().next()) {
            Some(c) => {
                out.push(c);
                i += c.len_utf8();
            }
            None => break,
        }
    }
    out
}

/// Rewrites one start tag: attributes keep their order and raw text, `set` replaces or appends
/// values (given unescaped), `remove` drops attributes (by qualified name). `empty` chooses
/// between `<x ... />` and `<x ...>`.
pub fn rewrite_start_tag(
    tag: &str,
    set: &[(&str, &str)],
    remove: &[&str],
    empty: bool,
) -> Option<String> {
    let mut r = reader(tag);
    let e = match r.read_event().ok()? {
        Event::Start(e) | Event::Empty(e) => e,
        _ => return None,
    };
    let name = String::from_utf8_lossy(e.name().into_inner().as_bytes()).into_owned();
    let mut out = format!("<{name}");
    let mut done: Vec<&str> = Vec::new();
    for a in e.attributes().with_checks(false).flatten() {
        let key = String::from_utf8_lossy(a.key.into_inner().as_bytes()).into_owned();
        if remove.contains(&key.as_str()) {
            continue;
        }
        if let Some((k, v)) = set.iter().find(|(k, _)| *k == key) {
            out.push_str(&format!(" {k}=\"{}\"", escape_attr(v)));
            done.push(k);
            continue;
        }
        let raw: &str = &a.value;
        if raw.contains('"') {
            out.push_str(&format!(" {key}='{raw}'"));
        } else {
            out.push_str(&format!(" {key}=\"{raw}\""));
        }
    }
    for (k, v) in set {
        if !done.contains(k) {
            out.push_str(&format!(" {k}=\"{}\"", escape_attr(v)));
        }
    }
    out.push_str(if empty { "/>" } else { ">" });
    Some(out)
}

/// Applies non-overlapping byte-range replacements, sorted by position (zero-length ranges
/// insert; ties keep the given order).
pub fn splice(text: &str, mut edits: Vec<(usize, usize, String)>) -> String {
    edits.sort_by_key(|(start, end, _)| (*start, *end));
    let extra: usize = edits.iter().map(|(_, _, s)| s.len()).sum();
    let mut out = String::with_capacity(text.len() + extra);
    let mut last = 0;
    for (start, end, new) in edits {
        if start < last {
            continue;
        }
        out.push_str(text.get(last..start).unwrap_or(""));
        out.push_str(&new);
        last = end;
    }
    out.push_str(text.get(last..).unwrap_or(""));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xstring_round_trip() {
        for s in [
            "plain",
            "tab\there",
            "ctl\u{1}x",
            "_x0041_",
            "a_x12",
            "日本語_x00ZZ_",
        ] {
            let enc = encode_xstring(s);
            assert!(enc.chars().all(is_xml_char), "{enc:?}");
            assert_eq!(decode_xstring(&enc), s, "via {enc:?}");
        }
        assert_eq!(decode_xstring("A_x000D_B"), "A\rB");
    }

    #[test]
    fn rewrites_tags() {
        let t = rewrite_start_tag(
            r#"<row r="3" spans="1:3" x14ac:dyDescent="0.45">"#,
            &[("spans", "1:5")],
            &[],
            false,
        );
        assert_eq!(
            t.as_deref(),
            Some(r#"<row r="3" spans="1:5" x14ac:dyDescent="0.45">"#)
        );
        let t = rewrite_start_tag(
            r#"<calcPr calcId="191029"/>"#,
            &[("fullCalcOnLoad", "1")],
            &[],
            true,
        );
        assert_eq!(
            t.as_deref(),
            Some(r#"<calcPr calcId="191029" fullCalcOnLoad="1"/>"#)
        );
        let t = rewrite_start_tag(r#"<a b='say "hi"' c="1" />"#, &[], &["c"], true);
        assert_eq!(t.as_deref(), Some(r#"<a b='say "hi"'/>"#));
    }

    #[test]
    fn splices_in_order() {
        let s = splice(
            "abcdef",
            vec![
                (4, 5, "E".into()),
                (1, 1, "+".into()),
                (2, 3, String::new()),
            ],
        );
        assert_eq!(s, "a+bdEf");
    }
}
