//! Fonts as far as text extraction needs them: how bytes split into character codes, what
//! Unicode text each code stands for, and how wide it is (for word and line breaks).
//!
//! Order of preference for a code's text (§9.10.2): the font's `ToUnicode` CMap; for simple
//! fonts, the encoding (base encoding plus `/Differences` glyph names); for composite fonts,
//! the predefined CMap when it is Unicode-, Shift_JIS- or EUC-based. A code nothing maps is
//! dropped and counted, never replaced by a guess.

use encoding_rs::{EUC_JP, Encoding, MACINTOSH, SHIFT_JIS, WINDOWS_1252};

use super::cmap::CMap;
use super::file::Document;
use super::lexer::{Dict, Object};

#[derive(Debug, Clone)]
enum CodeText {
    /// Codes are single bytes mapped through a 256-entry table.
    Simple(Box<[Option<char>; 256]>),
    /// Codes are UTF-16BE units (the `Uni…-UCS2`/`UTF16` CMaps).
    Utf16,
    /// Codes are bytes of a legacy multi-byte encoding (`…-RKSJ-…`, `EUC-…`).
    Legacy(&'static Encoding),
    /// No mapping besides `ToUnicode` (Identity-H without one yields nothing).
    None,
}

/// A loaded font.
#[derive(Debug, Clone)]
pub(crate) struct Font {
    composite: bool,
    /// Code-space ranges for splitting strings into codes.
    codespace: CMap,
    to_unicode: Option<CMap>,
    code_text: CodeText,
    widths: Widths,
}

#[derive(Debug, Clone)]
enum Widths {
    Simple {
        first: u32,
        widths: Vec<f64>,
        missing: f64,
    },
    Composite {
        default: f64,
        ranges: Vec<(u32, u32, WidthSpec)>,
    },
}

#[derive(Debug, Clone)]
enum WidthSpec {
    Each(Vec<f64>),
    Same(f64),
}

/// One decoded character code.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Glyph {
    pub text: Option<String>,
    /// Advance width in text space units (thousandths of the font size / 1000).
    pub width: f64,
    /// A single-byte code 32, to which word spacing applies.
    pub is_space_code: bool,
}

impl Font {
    /// A font for text drawn without a valid `Tf` (so nothing is lost): Latin-1-like bytes.
    pub fn fallback() -> Font {
        Font {
            composite: false,
            codespace: CMap::default(),
            to_unicode: None,
            code_text: CodeText::Simple(Box::new(table(WINDOWS_1252))),
            widths: Widths::Simple {
                first: 0,
                widths: Vec::new(),
                missing: 500.0,
            },
        }
    }

    /// Loads the font dictionary `dict`.
    pub fn load(doc: &Document<'_>, dict: &Dict) -> Font {
        let subtype = dict.name(b"Subtype").unwrap_or(b"Type1");
        let to_unicode = match doc.get_key(dict, b"ToUnicode") {
            Ok(Object::Stream(s)) => doc
                .decode_stream(&s)
                .ok()
                .map(|d| CMap::parse(&d))
                .filter(|c| !c.is_empty()),
            _ => None,
        };
        if subtype == b"Type0" {
            return Self::load_composite(doc, dict, to_unicode);
        }
        let mut codes = simple_encoding(doc, dict, subtype);
        if to_unicode.is_none() && codes.iter().all(Option::is_none) {
            codes = table(WINDOWS_1252);
        }
        let first = doc
            .get_key(dict, b"FirstChar")
            .ok()
            .and_then(|o| o.as_int())
            .unwrap_or(0)
            .clamp(0, 255) as u32;
        let widths = match doc.get_key(dict, b"Widths") {
            Ok(Object::Array(a)) => a
                .iter()
                .take(256)
                .map(|w| doc.resolve(w).ok().and_then(|w| w.as_f64()).unwrap_or(0.0))
                .collect(),
            _ => Vec::new(),
        };
        let missing = match doc.get_key(dict, b"FontDescriptor") {
            Ok(Object::Dict(fd)) => fd.get(b"MissingWidth").and_then(Object::as_f64),
            _ => None,
        }
        .filter(|w| *w > 0.0)
        .unwrap_or(if widths.is_empty() { 500.0 } else { 0.0 });
        Font {
            composite: false,
            codespace: CMap::default(),
            to_unicode,
            code_text: CodeText::Simple(Box::new(codes)),
            widths: Widths::Simple {
                first,
                widths,
                missing,
            },
        }
    }

    fn load_composite(doc: &Document<'_>, dict: &Dict, to_unicode: Option<CMap>) -> Font {
        let (codespace, code_text) = match doc.get_key(dict, b"Encoding") {
            Ok(Object::Name(name)) => predefined_cmap(&name),
            Ok(Object::Stream(s)) => {
                let cmap = doc
                    .decode_stream(&s)
                    .ok()
                    .map(|d| CMap::parse(&d))
                    .unwrap_or_default();
                (cmap, CodeText::None)
            }
            _ => (two_byte_codespace(), CodeText::None),
        };
        let codespace = if codespace.codespace.is_empty() {
            match &to_unicode {
                Some(tu) if !tu.codespace.is_empty() => {
                    let mut c = CMap::default();
                    c.codespace = tu.codespace.clone();
                    c
                }
                _ => two_byte_codespace(),
            }
        } else {
            codespace
        };
        let descendant = match doc.get_key(dict, b"DescendantFonts") {
            Ok(Object::Array(a)) => a.first().and_then(|d| doc.resolve(d).ok()),
            _ => None,
        };
        let mut default = 1000.0;
        let mut ranges = Vec::new();
        if let Some(Object::Dict(d)) = descendant {
            default = d.get(b"DW").and_then(Object::as_f64).unwrap_or(1000.0);
            if let Ok(Object::Array(w)) = doc.get_key(&d, b"W") {
                ranges = parse_cid_widths(doc, &w);
            }
        }
        Font {
            composite: true,
            codespace,
            to_unicode,
            code_text,
            widths: Widths::Composite { default, ranges },
        }
    }

    /// Splits a shown string into glyphs.
    pub fn decode(&self, bytes: &[u8], unmapped: &mut usize) -> Vec<Glyph> {
        let codes = if self.composite {
            self.codespace.split_codes(bytes, 2)
        } else {
            bytes.iter().map(|&b| (1, u32::from(b))).collect()
        };
        codes
            .into_iter()
            .map(|(len, code)| {
                let text = self.text_for(len, code);
                if text.is_none() {
                    *unmapped += 1;
                }
                Glyph {
                    text,
                    width: self.width(code),
                    is_space_code: len == 1 && code == 32,
                }
            })
            .collect()
    }

    fn text_for(&self, len: usize, code: u32) -> Option<String> {
        if let Some(s) = self.to_unicode.as_ref().and_then(|tu| tu.lookup(len, code)) {
            // Some producers map glyphs to U+0000 or other controls; treat as unmapped.
            if !s.is_empty() && !s.chars().all(|c| c.is_control() && c != '\t') {
                return Some(s);
            }
        }
        let bytes: Vec<u8> = code.to_be_bytes()[4 - len.min(4)..].to_vec();
        match &self.code_text {
            CodeText::Simple(t) => t.get(code as usize).copied().flatten().map(String::from),
            CodeText::Utf16 => {
                let units: Vec<u16> = bytes
                    .chunks(2)
                    .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))
                    .collect();
                String::from_utf16(&units).ok()
            }
            CodeText::Legacy(enc) => enc
                .decode_without_bom_handling_and_without_replacement(&bytes)
                .map(|s| s.into_owned()),
            CodeText::None => None,
        }
        .filter(|s| !s.is_empty() && !s.chars().all(char::is_control))
    }

    fn width(&self, code: u32) -> f64 {
        match &self.widths {
            Widths::Simple {
                first,
                widths,
                missing,
            } => code
                .checked_sub(*first)
                .and_then(|i| widths.get(i as usize).copied())
                .filter(|w| *w > 0.0)
                .unwrap_or(*missing),
            Widths::Composite { default, ranges } => {
                for (lo, hi, spec) in ranges {
                    if code >= *lo && code <= *hi {
                        return match spec {
                            WidthSpec::Same(w) => *w,
                            WidthSpec::Each(list) => {
                                list.get((code - lo) as usize).copied().unwrap_or(*default)
                            }
                        };
                    }
                }
                *default
            }
        }
    }
}

fn two_byte_codespace() -> CMap {
    let mut c = CMap::default();
    c.codespace.push((2, 0, 0xFFFF));
    c
}

/// Code spaces and meaning of the predefined CMaps office PDFs use (§9.7.5.2).
fn predefined_cmap(name: &[u8]) -> (CMap, CodeText) {
    let name = String::from_utf8_lossy(name);
    let mut c = CMap::default();
    if name.starts_with("Identity") {
        c.codespace.push((2, 0, 0xFFFF));
        (c, CodeText::None)
    } else if name.contains("UCS2") {
        c.codespace.push((2, 0, 0xFFFF));
        (c, CodeText::Utf16)
    } else if name.contains("UTF16") {
        c.codespace.push((2, 0, 0xD7FF));
        c.codespace.push((4, 0xD800_DC00, 0xDBFF_DFFF));
        c.codespace.push((2, 0xE000, 0xFFFF));
        (c, CodeText::Utf16)
    } else if name.contains("RKSJ") {
        c.codespace.push((1, 0x00, 0x80));
        c.codespace.push((2, 0x8140, 0x9FFC));
        c.codespace.push((1, 0xA0, 0xDF));
        c.codespace.push((2, 0xE040, 0xFCFC));
        (c, CodeText::Legacy(SHIFT_JIS))
    } else if name.starts_with("EUC") {
        c.codespace.push((1, 0x00, 0x80));
        c.codespace.push((2, 0x8EA0, 0x8EDF));
        c.codespace.push((3, 0x8F_A1A1, 0x8F_FEFE));
        c.codespace.push((2, 0xA1A1, 0xFEFE));
        (c, CodeText::Legacy(EUC_JP))
    } else {
        c.codespace.push((2, 0, 0xFFFF));
        (c, CodeText::None)
    }
}

fn parse_cid_widths(doc: &Document<'_>, w: &[Object]) -> Vec<(u32, u32, WidthSpec)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < w.len() && out.len() < 100_000 {
        let Some(first) = w[i].as_int().and_then(|v| u32::try_from(v).ok()) else {
            break;
        };
        match w.get(i + 1).map(|o| doc.resolve(o).unwrap_or(Object::Null)) {
            Some(Object::Array(list)) => {
                let list: Vec<f64> = list.iter().map(|x| x.as_f64().unwrap_or(0.0)).collect();
                let last = first.saturating_add(list.len().saturating_sub(1) as u32);
                out.push((first, last, WidthSpec::Each(list)));
                i += 2;
            }
            Some(other) => {
                let (Some(last), Some(width)) = (
                    other.as_int().and_then(|v| u32::try_from(v).ok()),
                    w.get(i + 2).and_then(Object::as_f64),
                ) else {
                    break;
                };
                out.push((first, last, WidthSpec::Same(width)));
                i += 3;
            }
            None => break,
        }
    }
    out
}

fn simple_encoding(doc: &Document<'_>, dict: &Dict, subtype: &[u8]) -> [Option<char>; 256] {
    let default_base = || {
        if subtype == b"TrueType" {
            table(WINDOWS_1252)
        } else {
            standard_encoding()
        }
    };
    match doc.get_key(dict, b"Encoding") {
        Ok(Object::Name(n)) => base_encoding(&n).unwrap_or_else(default_base),
        Ok(Object::Dict(enc)) => {
            let mut codes = enc
                .name(b"BaseEncoding")
                .and_then(base_encoding)
                .unwrap_or_else(default_base);
            if let Ok(Object::Array(diffs)) = doc.get_key(&enc, b"Differences") {
                let mut code: Option<usize> = None;
                for item in diffs {
                    match item {
                        Object::Int(c) => code = usize::try_from(c).ok(),
                        Object::Name(name) => {
                            if let Some(c) = code {
                                if let Some(slot) = codes.get_mut(c) {
                                    *slot = glyph_to_unicode(&name).and_then(|s| s.chars().next());
                                }
                                code = Some(c + 1);
                            }
                        }
                        _ => {}
                    }
                }
            }
            codes
        }
        _ => default_base(),
    }
}

fn base_encoding(name: &[u8]) -> Option<[Option<char>; 256]> {
    match name {
        b"WinAnsiEncoding" => Some(table(WINDOWS_1252)),
        b"MacRomanEncoding" => Some(table(MACINTOSH)),
        b"StandardEncoding" => Some(standard_encoding()),
        _ => None,
    }
}

/// A single-byte code table from an `encoding_rs` encoding; control codes map to nothing.
fn table(encoding: &'static Encoding) -> [Option<char>; 256] {
    let mut t = [None; 256];
    for (code, slot) in t.iter_mut().enumerate() {
        let byte = [code as u8];
        if let Some(s) = encoding.decode_without_bom_handling_and_without_replacement(&byte) {
            *slot = s.chars().next().filter(|c| !c.is_control());
        }
    }
    t
}

/// Adobe StandardEncoding: ASCII with curly quotes, plus its own upper half.
fn standard_encoding() -> [Option<char>; 256] {
    let mut t = [None; 256];
    for code in 0x20u8..0x7F {
        t[usize::from(code)] = Some(char::from(code));
    }
    t[0x27] = Some('\u{2019}');
    t[0x60] = Some('\u{2018}');
    const HIGH: &[(u8, char)] = &[
        (0xA1, '¡'),
        (0xA2, '¢'),
        (0xA3, '£'),
        (0xA4, '⁄'),
        (0xA5, '¥'),
        (0xA6, 'ƒ'),
        (0xA7, '§'),
        (0xA8, '¤'),
        (0xA9, '\''),
        (0xAA, '“'),
        (0xAB, '«'),
        (0xAC, '‹'),
        (0xAD, '›'),
        (0xAE, 'ﬁ'),
        (0xAF, 'ﬂ'),
        (0xB1, '–'),
        (0xB2, '†'),
        (0xB3, '‡'),
        (0xB4, '·'),
        (0xB6, '¶'),
        (0xB7, '•'),
        (0xB8, '‚'),
        (0xB9, '„'),
        (0xBA, '”'),
        (0xBB, '»'),
        (0xBC, '…'),
        (0xBD, '‰'),
        (0xBF, '¿'),
        (0xC1, '`'),
        (0xC2, '´'),
        (0xC3, 'ˆ'),
        (0xC4, '˜'),
        (0xC5, '¯'),
        (0xC6, '˘'),
        (0xC7, '˙'),
        (0xC8, '¨'),
        (0xCA, '˚'),
        (0xCB, '¸'),
        (0xCD, '˝'),
        (0xCE, '˛'),
        (0xCF, 'ˇ'),
        (0xD0, '—'),
        (0xE1, 'Æ'),
        (0xE3, 'ª'),
        (0xE8, 'Ł'),
        (0xE9, 'Ø'),
        (0xEA, 'Œ'),
        (0xEB, 'º'),
        (0xF1, 'æ'),
        (0xF5, 'ı'),
        (0xF8, 'ł'),
        (0xF9, 'ø'),
        (0xFA, 'œ'),
        (0xFB, 'ß'),
    ];
    for &(code, c) in HIGH {
        t[usize::from(code)] = Some(c);
    }
    t
}

/// Glyph names of WinAnsiEncoding's codes 0x20–0xFF, in code order (`.` = undefined); used
/// to read `/Differences`.
const WIN_ANSI_NAMES: &str = "space exclam quotedbl numbersign dollar percent ampersand quotesingle \
parenleft parenright asterisk plus comma hyphen period slash zero one two three four five six seven \
eight nine colon semicolon less equal greater question at A B C D E F G H I J K L M N O P Q R S T U \
V W X Y Z bracketleft backslash bracketright asciicircum underscore grave a b c d e f g h i j k l m \
n o p q r s t u v w x y z braceleft bar braceright asciitilde . Euro . quotesinglbase florin \
quotedblbase ellipsis dagger daggerdbl circumflex perthousand Scaron guilsinglleft OE . Zcaron . . \
quoteleft quoteright quotedblleft quotedblright bullet endash emdash tilde trademark scaron \
guilsinglright oe . zcaron Ydieresis space exclamdown cent sterling currency yen brokenbar section \
dieresis copyright ordfeminine guillemotleft logicalnot hyphen registered macron degree plusminus \
twosuperior threesuperior acute mu paragraph periodcentered cedilla onesuperior ordmasculine \
guillemotright onequarter onehalf threequarters questiondown Agrave Aacute Acircumflex Atilde \
Adieresis Aring AE Ccedilla Egrave Eacute Ecircumflex Edieresis Igrave Iacute Icircumflex Idieresis \
Eth Ntilde Ograve Oacute Ocircumflex Otilde Odieresis multiply Oslash Ugrave Uacute Ucircumflex \
Udieresis Yacute Thorn germandbls agrave aacute acircumflex atilde adieresis aring ae ccedilla egrave \
eacute ecircumflex edieresis igrave iacute icircumflex idieresis eth ntilde ograve oacute ocircumflex \
otilde odieresis divide oslash ugrave uacute ucircumflex udieresis yacute thorn ydieresis";

/// Glyph names outside WinAnsiEncoding that office fonts use.
const EXTRA_NAMES: &[(&str, char)] = &[
    ("fi", 'ﬁ'),
    ("fl", 'ﬂ'),
    ("ff", 'ﬀ'),
    ("ffi", 'ﬃ'),
    ("ffl", 'ﬄ'),
    ("minus", '−'),
    ("fraction", '⁄'),
    ("dotlessi", 'ı'),
    ("Lslash", 'Ł'),
    ("lslash", 'ł'),
    ("nbspace", '\u{A0}'),
    ("sfthyphen", '\u{AD}'),
    ("bullet", '•'),
    ("quotesingle", '\''),
    ("ring", '˚'),
    ("caron", 'ˇ'),
    ("breve", '˘'),
    ("dotaccent", '˙'),
    ("hungarumlaut", '˝'),
    ("ogonek", '˛'),
    ("yen", '¥'),
];

/// The Unicode text of an Adobe glyph name: `A`, `uni8ACB`, `u1F600`, or a known name.
pub(crate) fn glyph_to_unicode(name: &[u8]) -> Option<String> {
    let name = std::str::from_utf8(name).ok()?;
    // "a.sc" or "T_h" variants: the part before the first period names the base glyph.
    let base = name.split('.').next().unwrap_or(name);
    if let Some(hex) = base.strip_prefix("uni")
        && hex.len() >= 4
        && hex.len() % 4 == 0
    {
        let units: Option<Vec<u16>> = (0..hex.len() / 4)
            .map(|i| u16::from_str_radix(hex.get(i * 4..i * 4 + 4)?, 16).ok())
            .collect();
        return units.and_then(|u| String::from_utf16(&u).ok());
    }
    if let Some(hex) = base.strip_prefix('u')
        && (4..=6).contains(&hex.len())
        && let Some(c) = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32)
    {
        return Some(c.to_string());
    }
    if base.len() == 1 && base.chars().all(|c| c.is_ascii_alphabetic()) {
        return Some(base.to_string());
    }
    if let Some((_, c)) = EXTRA_NAMES.iter().find(|(n, _)| *n == base) {
        return Some(c.to_string());
    }
    let (_, code) = WIN_ANSI_NAMES
        .split_whitespace()
        .zip(0x20u8..=0xFF)
        .find(|(n, _)| *n == base)?;
    WINDOWS_1252
        .decode_without_bom_handling_and_without_replacement(&[code])
        .map(|s| s.into_owned())
        .filter(|s| !s.chars().all(char::is_control))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glyph_names() {
        fn check(name: &str, expect: Option<&str>) {
            assert_eq!(
                glyph_to_unicode(name.as_bytes()).as_deref(),
                expect,
                "{name}"
            );
        }
        check("A", Some("A"));
        check("space", Some(" "));
        check("zero", Some("0"));
        check("quoteright", Some("’"));
        check("Euro", Some("€"));
        check("eacute", Some("é"));
        check("ydieresis", Some("ÿ"));
        check("uni8ACB", Some("請"));
        check("uni00410042", Some("AB"));
        check("u1F600", Some("😀"));
        check("fi", Some("ﬁ"));
        check("a.sc", Some("a"));
        check("g123", None);
        check(".notdef", None);
    }

    #[test]
    fn name_table_is_aligned() {
        // 224 names for codes 0x20..=0xFF; a shifted list would break every lookup above 'space'.
        assert_eq!(WIN_ANSI_NAMES.split_whitespace().count(), 224);
        let win = table(WINDOWS_1252);
        for (name, code) in WIN_ANSI_NAMES.split_whitespace().zip(0x20usize..) {
            if name != "." && code != 0xA0 && code != 0xAD {
                assert_eq!(
                    glyph_to_unicode(name.as_bytes()).and_then(|s| s.chars().next()),
                    win[code],
                    "{name}"
                );
            }
        }
    }
}
