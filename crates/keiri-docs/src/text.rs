//! Plain-text decoding (`.txt`, `.md`, `.csv`): encoding detection without mojibake.
//!
//! Japanese offices produce UTF-8, UTF-8 with a BOM, UTF-16 with a BOM (Excel's "Unicode
//! text"), Shift_JIS/CP932 and sometimes EUC-JP. Every candidate is decoded *strictly*: a byte
//! sequence that is not valid in an encoding rules that encoding out, and if none fits we
//! return [`Error::UnknownEncoding`] instead of guessing and producing mojibake.

use std::borrow::Cow;

use encoding_rs::{EUC_JP, Encoding, SHIFT_JIS, UTF_16BE, UTF_16LE};

use crate::error::{Error, Result};

/// Text decoded from bytes, with the encoding that was detected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedText {
    pub text: String,
    /// `UTF-8`, `UTF-8 (BOM)`, `UTF-16LE (BOM)`, `UTF-16BE (BOM)`, `Shift_JIS`, `EUC-JP`, or
    /// another WHATWG encoding name when the statistical detector picked it.
    pub encoding: String,
}

/// How many leading bytes the binary sniffing looks at; enough to see a file's nature without
/// scanning a large file twice.
const SNIFF_BYTES: usize = 64 * 1024;

/// Decodes `bytes` as text, detecting the encoding.
pub fn decode(bytes: &[u8]) -> Result<DecodedText> {
    if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        let text = std::str::from_utf8(rest).map_err(|_| Error::UnknownEncoding)?;
        check_not_binary_text(text)?;
        return Ok(DecodedText {
            text: text.to_string(),
            encoding: "UTF-8 (BOM)".into(),
        });
    }
    for (bom, encoding, name) in [
        (&b"\xFF\xFE"[..], UTF_16LE, "UTF-16LE (BOM)"),
        (&b"\xFE\xFF"[..], UTF_16BE, "UTF-16BE (BOM)"),
    ] {
        if let Some(rest) = bytes.strip_prefix(bom) {
            let text = strict(encoding, rest).ok_or(Error::UnknownEncoding)?;
            check_not_binary_text(&text)?;
            return Ok(DecodedText {
                text: text.into_owned(),
                encoding: name.into(),
            });
        }
    }
    sniff_binary(bytes)?;
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Ok(DecodedText {
            text: text.to_string(),
            encoding: "UTF-8".into(),
        });
    }
    let sjis = strict(SHIFT_JIS, bytes);
    let euc = strict(EUC_JP, bytes);
    let chosen = match (sjis, euc) {
        (Some(s), Some(e)) => {
            // Both decode cleanly (common for short texts made of kana); the statistical
            // detector, which knows Japanese byte-pair frequencies, breaks the tie.
            if guess(bytes) == EUC_JP {
                Some((e, "EUC-JP"))
            } else {
                Some((s, "Shift_JIS"))
            }
        }
        (Some(s), None) => Some((s, "Shift_JIS")),
        (None, Some(e)) => Some((e, "EUC-JP")),
        (None, None) => None,
    };
    if let Some((text, name)) = chosen {
        return Ok(DecodedText {
            text: text.into_owned(),
            encoding: name.into(),
        });
    }
    let other = guess(bytes);
    let text = strict(other, bytes).ok_or(Error::UnknownEncoding)?;
    Ok(DecodedText {
        text: text.into_owned(),
        encoding: other.name().to_string(),
    })
}

/// A strict decoder for a text file read in pieces, for files too large to hold: the encoding
/// is chosen from the file's head as [`decode`] chooses it for a whole file, then every piece
/// is decoded strictly (a byte sequence invalid in that encoding is
/// [`Error::UnknownEncoding`], never a replacement character).
pub(crate) struct StreamDecoder {
    decoder: encoding_rs::Decoder,
    /// The BOM bytes still to drop from the first piece.
    bom: usize,
    /// Whether the first decoded piece must still be checked for binary content (a BOM
    /// skips the byte sniffing, as in [`decode`]).
    check_text: bool,
    pub(crate) encoding: &'static str,
}

impl StreamDecoder {
    /// Chooses the encoding from `head`, the file's first bytes (at least [`SNIFF_BYTES`] when
    /// the file has them).
    pub(crate) fn new(head: &[u8]) -> Result<StreamDecoder> {
        let with = |encoding: &'static Encoding, name: &'static str, bom: usize| StreamDecoder {
            decoder: encoding.new_decoder_without_bom_handling(),
            bom,
            check_text: bom > 0,
            encoding: name,
        };
        if head.starts_with(b"\xEF\xBB\xBF") {
            return Ok(with(encoding_rs::UTF_8, "UTF-8 (BOM)", 3));
        }
        if head.starts_with(b"\xFF\xFE") {
            return Ok(with(UTF_16LE, "UTF-16LE (BOM)", 2));
        }
        if head.starts_with(b"\xFE\xFF") {
            return Ok(with(UTF_16BE, "UTF-16BE (BOM)", 2));
        }
        sniff_binary(head)?;
        // The head may end inside a character: only an invalid sequence rules an encoding out.
        let fits = |encoding: &'static Encoding| {
            let mut decoder = encoding.new_decoder_without_bom_handling();
            let mut out = String::with_capacity(
                decoder
                    .max_utf8_buffer_length_without_replacement(head.len())
                    .unwrap_or(head.len() * 3),
            );
            let (result, _) = decoder.decode_to_string_without_replacement(head, &mut out, false);
            !matches!(result, encoding_rs::DecoderResult::Malformed(..))
        };
        if fits(encoding_rs::UTF_8) {
            return Ok(with(encoding_rs::UTF_8, "UTF-8", 0));
        }
        let chosen = match (fits(SHIFT_JIS), fits(EUC_JP)) {
            (true, true) if guess(head) == EUC_JP => Some((EUC_JP, "EUC-JP")),
            (true, _) => Some((SHIFT_JIS, "Shift_JIS")),
            (false, true) => Some((EUC_JP, "EUC-JP")),
            (false, false) => None,
        };
        if let Some((encoding, name)) = chosen {
            return Ok(with(encoding, name, 0));
        }
        let other = guess(head);
        if fits(other) {
            return Ok(with(other, other.name(), 0));
        }
        Err(Error::UnknownEncoding)
    }

    /// Decodes the next piece into `out` (cleared first); `last` for the file's final piece.
    pub(crate) fn decode(&mut self, piece: &[u8], last: bool, out: &mut String) -> Result<()> {
        let skip = self.bom.min(piece.len());
        self.bom -= skip;
        let piece = &piece[skip..];
        out.clear();
        out.reserve(
            self.decoder
                .max_utf8_buffer_length_without_replacement(piece.len())
                .ok_or(Error::UnknownEncoding)?,
        );
        let (result, _) = self
            .decoder
            .decode_to_string_without_replacement(piece, out, last);
        match result {
            encoding_rs::DecoderResult::InputEmpty => {}
            // The buffer was reserved for the worst case, so neither can happen on valid input.
            encoding_rs::DecoderResult::OutputFull | encoding_rs::DecoderResult::Malformed(..) => {
                return Err(Error::UnknownEncoding);
            }
        }
        if self.check_text && !out.is_empty() {
            self.check_text = false;
            check_not_binary_text(out)?;
        }
        Ok(())
    }
}

fn strict<'a>(encoding: &'static Encoding, bytes: &'a [u8]) -> Option<Cow<'a, str>> {
    encoding.decode_without_bom_handling_and_without_replacement(bytes)
}

fn guess(bytes: &[u8]) -> &'static Encoding {
    let mut detector = chardetng::EncodingDetector::new();
    detector.feed(bytes, true);
    detector.guess(None, false)
}

/// Magic numbers of binary formats that someone may rename to `.txt` or `.csv`.
const BINARY_MAGIC: &[&[u8]] = &[
    b"%PDF-",
    b"PK\x03\x04",
    b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1",
    b"\x7FELF",
    b"MZ",
    b"\x89PNG",
    b"\xFF\xD8\xFF",
    b"GIF8",
    b"\x1F\x8B",
];

/// Refuses bytes that are clearly not text: a known binary signature, a NUL byte, or many
/// control characters in the first [`SNIFF_BYTES`].
fn sniff_binary(bytes: &[u8]) -> Result<()> {
    if BINARY_MAGIC
        .iter()
        .any(|m| bytes.starts_with(m) && m.len() > 2)
    {
        return Err(Error::BinaryContent);
    }
    let head = &bytes[..bytes.len().min(SNIFF_BYTES)];
    if head.contains(&0) {
        return Err(Error::BinaryContent);
    }
    let controls = head.iter().filter(|&&b| is_suspicious_control(b)).count();
    if head.len() >= 16 && controls * 10 > head.len() {
        return Err(Error::BinaryContent);
    }
    Ok(())
}

fn check_not_binary_text(text: &str) -> Result<()> {
    let head: Vec<char> = text.chars().take(SNIFF_BYTES).collect();
    if head.contains(&'\0') {
        return Err(Error::BinaryContent);
    }
    let controls = head
        .iter()
        .filter(|&&c| c.is_ascii() && is_suspicious_control(c as u8))
        .count();
    if head.len() >= 16 && controls * 10 > head.len() {
        return Err(Error::BinaryContent);
    }
    Ok(())
}

/// C0 controls that do not occur in text files (tab, LF, FF, CR and ESC, used by some old
/// printer-oriented exports, are allowed).
fn is_suspicious_control(b: u8) -> bool {
    matches!(b, 0x00..=0x08 | 0x0E..=0x1A | 0x1C..=0x1F | 0x7F)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(bytes: &[u8], expect: std::result::Result<(&str, &str), &str>) {
        match (decode(bytes), expect) {
            (Ok(d), Ok((text, enc))) => {
                assert_eq!((d.text.as_str(), d.encoding.as_str()), (text, enc));
            }
            (Err(e), Err(code)) => assert_eq!(e.code(), code),
            (got, want) => panic!("decode({bytes:?}) = {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn encodings() {
        check(b"abc", Ok(("abc", "UTF-8")));
        check("請求書".as_bytes(), Ok(("請求書", "UTF-8")));
        check(b"\xEF\xBB\xBFa,b", Ok(("a,b", "UTF-8 (BOM)")));
        check(b"\xFF\xFEa\0b\0", Ok(("ab", "UTF-16LE (BOM)")));
        check(b"\xFE\xFF\0a\0b", Ok(("ab", "UTF-16BE (BOM)")));
        // 請求書,金額 in Shift_JIS.
        let (sjis, _, _) = SHIFT_JIS.encode("請求書,金額\r\n株式会社テスト,1000\r\n");
        check(
            &sjis,
            Ok(("請求書,金額\r\n株式会社テスト,1000\r\n", "Shift_JIS")),
        );
        let (euc, _, _) = EUC_JP.encode("経理部の請求書です。よろしくお願いします。");
        check(
            &euc,
            Ok(("経理部の請求書です。よろしくお願いします。", "EUC-JP")),
        );
    }

    #[test]
    fn binary_is_refused() {
        check(b"%PDF-1.4 junk", Err("BINARY_CONTENT"));
        check(b"text\0with nul", Err("BINARY_CONTENT"));
        check(b"\x7FELF\x02\x01\x01", Err("BINARY_CONTENT"));
        check(
            &[1u8, 2, 3, 4, 5, 6, 7, 8, 14, 15, 16, 17, 18, 19, 20, 21, 22],
            Err("BINARY_CONTENT"),
        );
        check(b"\xFF\xFE\0\0\0\0", Err("BINARY_CONTENT"));
        check(b"\xEF\xBB\xBF\xFF", Err("UNKNOWN_ENCODING"));
    }
}
