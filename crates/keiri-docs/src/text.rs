//! Plain-text decoding (`.txt`, `.md`, `.csv`): one decoder for design time and run time.
//!
//! Japanese offices produce UTF-8, UTF-8 with a BOM, UTF-16 with a BOM (Excel's 「Unicode
//! テキスト」), Shift_JIS/CP932 and sometimes EUC-JP. Every candidate is decoded *strictly*: a
//! byte sequence that is not valid in an encoding rules that encoding out, and if none fits
//! the file is an error instead of mojibake.
//!
//! The `auto` rule, the same for a document preview, a CSV's schema at design time and
//! keiri-run's `csv.read` (see [`candidates`]):
//! 1. a BOM decides: UTF-8, UTF-16LE or UTF-16BE;
//! 2. else UTF-8 when the file's head is valid UTF-8 (so far);
//! 3. else CP932 and EUC-JP, in the order [`japanese_order`] gives when both fit the head.
//!
//! Each candidate is tried in turn over the whole file: a file that is UTF-8 for its first MiB
//! and CP932 after it is read as CP932, whether the reader holds the bytes ([`decode`]) or
//! streams them ([`StreamDecoder`], restarted per candidate).
//!
//! Encodings are named in one vocabulary, [`TextEncoding::name`] (`utf-8`, `utf-8-sig`,
//! `utf-16le`, `utf-16be`, `cp932`, `euc-jp`): the names `csv.read`'s `encoding` input accepts,
//! so a detected name can be written into a plan as it is.

use std::io::{Read, Seek, SeekFrom};

use encoding_rs::{EUC_JP, Encoding, SHIFT_JIS, UTF_8, UTF_16BE, UTF_16LE};
use serde::Serialize;

use crate::error::{Error, Result};

/// An encoding this crate decodes text in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(into = "&'static str")]
pub enum TextEncoding {
    /// UTF-8 without a BOM (a BOM, if any, is dropped).
    Utf8,
    /// UTF-8 with a BOM (the BOM is dropped).
    Utf8Sig,
    /// UTF-16 little-endian (Excel's 「Unicode テキスト」); a BOM is dropped.
    Utf16Le,
    /// UTF-16 big-endian; a BOM is dropped.
    Utf16Be,
    /// Windows' Japanese code page (Shift_JIS with the NEC and IBM extensions); plain
    /// Shift_JIS is read as CP932, its superset.
    Cp932,
    /// EUC-JP (Unix systems).
    EucJp,
}

impl TextEncoding {
    /// The name reported everywhere (`csv.read`'s `encoding` output, extraction and metrics
    /// results) and accepted by [`EncodingChoice::parse`].
    pub const fn name(self) -> &'static str {
        match self {
            TextEncoding::Utf8 => "utf-8",
            TextEncoding::Utf8Sig => "utf-8-sig",
            TextEncoding::Utf16Le => "utf-16le",
            TextEncoding::Utf16Be => "utf-16be",
            TextEncoding::Cp932 => "cp932",
            TextEncoding::EucJp => "euc-jp",
        }
    }

    fn encoding(self) -> &'static Encoding {
        match self {
            TextEncoding::Utf8 | TextEncoding::Utf8Sig => UTF_8,
            TextEncoding::Utf16Le => UTF_16LE,
            TextEncoding::Utf16Be => UTF_16BE,
            TextEncoding::Cp932 => SHIFT_JIS,
            TextEncoding::EucJp => EUC_JP,
        }
    }

    /// Whether a leading BOM of this encoding is dropped (never for the legacy encodings,
    /// which have none: their bytes are text).
    fn drops_bom(self) -> bool {
        !matches!(self, TextEncoding::Cp932 | TextEncoding::EucJp)
    }

    fn decoder(self) -> encoding_rs::Decoder {
        if self.drops_bom() {
            self.encoding().new_decoder_with_bom_removal()
        } else {
            self.encoding().new_decoder_without_bom_handling()
        }
    }
}

impl std::fmt::Display for TextEncoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl From<TextEncoding> for &'static str {
    fn from(encoding: TextEncoding) -> &'static str {
        encoding.name()
    }
}

/// The encoding a caller asks for: detected ([`EncodingChoice::Auto`]) or named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum EncodingChoice {
    #[default]
    Auto,
    /// UTF-8; a BOM, if there is one, is dropped.
    Utf8,
    /// UTF-8 with a BOM (dropped; a file without one is read too).
    Utf8Sig,
    /// UTF-16: the BOM tells the byte order, little-endian without one (as Excel writes).
    Utf16,
    Utf16Le,
    Utf16Be,
    /// `shift_jis`, `cp932`, `windows-31j`: all read as CP932.
    Cp932,
    EucJp,
}

impl EncodingChoice {
    /// The names [`EncodingChoice::parse`] accepts, as a block spec lists them (aliases such
    /// as `utf8`, `sjis` and `ms932` are accepted too).
    pub const NAMES: &'static [&'static str] = &[
        "auto",
        "utf-8",
        "utf-8-sig",
        "shift_jis",
        "cp932",
        "windows-31j",
        "euc-jp",
        "utf-16",
        "utf-16le",
        "utf-16be",
    ];

    /// The choice `name` stands for (case-insensitive, `_` and `-` alike; empty is `auto`).
    pub fn parse(name: &str) -> Option<EncodingChoice> {
        let name = name.trim().to_ascii_lowercase().replace('_', "-");
        Some(match name.as_str() {
            "" | "auto" => EncodingChoice::Auto,
            "utf-8" | "utf8" => EncodingChoice::Utf8,
            "utf-8-sig" | "utf8-sig" => EncodingChoice::Utf8Sig,
            "utf-16" | "utf16" => EncodingChoice::Utf16,
            "utf-16le" | "utf-16-le" | "utf16le" => EncodingChoice::Utf16Le,
            "utf-16be" | "utf-16-be" | "utf16be" => EncodingChoice::Utf16Be,
            "shift-jis" | "sjis" | "cp932" | "ms932" | "windows-31j" => EncodingChoice::Cp932,
            "euc-jp" | "eucjp" => EncodingChoice::EucJp,
            _ => return None,
        })
    }
}

/// How many leading bytes of a file decide the order of the `auto` candidates (the whole
/// file is still decoded by each candidate it is tried with).
pub const DETECT_BYTES: usize = 1 << 20;

/// Text decoded from bytes, with the encoding it was read in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedText {
    pub text: String,
    /// [`TextEncoding::name`] of the encoding used.
    pub encoding: String,
}

/// How many leading bytes the binary sniffing looks at; enough to see a file's nature without
/// scanning a large file twice.
const SNIFF_BYTES: usize = 64 * 1024;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";
const UTF16LE_BOM: &[u8] = b"\xFF\xFE";
const UTF16BE_BOM: &[u8] = b"\xFE\xFF";

/// The encodings to try for a file whose first bytes are `head` (its first [`DETECT_BYTES`],
/// `whole` when that is the entire file), in order: each is tried over the whole file and
/// the first that decodes it wins. A named choice is the only candidate (`utf-16` picks its
/// byte order from the BOM). Empty when `auto` finds no candidate (the head is neither UTF-8
/// nor CP932 nor EUC-JP).
pub fn candidates(head: &[u8], whole: bool, choice: EncodingChoice) -> Vec<TextEncoding> {
    match choice {
        EncodingChoice::Utf8 => vec![TextEncoding::Utf8],
        EncodingChoice::Utf8Sig => vec![TextEncoding::Utf8Sig],
        EncodingChoice::Utf16 if head.starts_with(UTF16BE_BOM) => vec![TextEncoding::Utf16Be],
        EncodingChoice::Utf16 | EncodingChoice::Utf16Le => vec![TextEncoding::Utf16Le],
        EncodingChoice::Utf16Be => vec![TextEncoding::Utf16Be],
        EncodingChoice::Cp932 => vec![TextEncoding::Cp932],
        EncodingChoice::EucJp => vec![TextEncoding::EucJp],
        EncodingChoice::Auto => auto_candidates(head, whole),
    }
}

fn auto_candidates(head: &[u8], whole: bool) -> Vec<TextEncoding> {
    if head.starts_with(UTF8_BOM) {
        return vec![TextEncoding::Utf8Sig];
    }
    if head.starts_with(UTF16LE_BOM) {
        return vec![TextEncoding::Utf16Le];
    }
    if head.starts_with(UTF16BE_BOM) {
        return vec![TextEncoding::Utf16Be];
    }
    let mut list = Vec::new();
    if fits(UTF_8, head, whole) {
        list.push(TextEncoding::Utf8);
    }
    match (fits(SHIFT_JIS, head, whole), fits(EUC_JP, head, whole)) {
        (true, true) => list.extend(japanese_order(head)),
        (true, false) => list.push(TextEncoding::Cp932),
        (false, true) => list.push(TextEncoding::EucJp),
        (false, false) => {}
    }
    list
}

/// Whether `head` is valid in `encoding` so far: only an invalid sequence rules it out, not
/// a character cut by the end of the head (unless the head is the whole file).
fn fits(encoding: &'static Encoding, head: &[u8], whole: bool) -> bool {
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let mut out = String::with_capacity(
        decoder
            .max_utf8_buffer_length_without_replacement(head.len())
            .unwrap_or(head.len().saturating_mul(3)),
    );
    let (result, _) = decoder.decode_to_string_without_replacement(head, &mut out, whole);
    matches!(result, encoding_rs::DecoderResult::InputEmpty)
}

/// How many characters of a head the CP932/EUC-JP comparison scores.
const SCORE_CHARS: usize = 16 * 1024;

/// CP932 and EUC-JP in the order to try them for a head both decode: EUC-JP first only when
/// its reading looks more like Japanese text than CP932's.
///
/// Bytes that are valid in both are nearly always short or made of half-width katakana and
/// kanji: `ﾄﾘﾋｷｻｷ` in CP932 is `椿坊桟` in EUC-JP, and `金額` in EUC-JP is `ｶ箋ﾛ` in CP932. A
/// statistical web-page detector (chardetng) calls the first EUC-JP when told the text is
/// Japanese and the second CP932 when not; neither fits files from accounting software, where
/// half-width katakana is common. So each reading is scored by what Japanese business text
/// is made of: kana, full-width symbols and JIS level-1 kanji count for their bytes,
/// half-width katakana for its one byte, level-2 kanji for nothing, and anything else (private
/// use, box drawing, Greek, Cyrillic, vendor extensions) against; a half-width voiced mark
/// counts only after a kana that takes one. CP932, by far the more
/// common encoding of Japanese exports, wins a tie. No rule gets every short byte string
/// right; this one is the only one, so a file is read the same way everywhere.
pub fn japanese_order(head: &[u8]) -> [TextEncoding; 2] {
    let score = |encoding: &'static Encoding| {
        let mut decoder = encoding.new_decoder_without_bom_handling();
        let mut text = String::with_capacity(head.len().min(SCORE_CHARS * 4) * 3 + 16);
        // Malformed input cannot occur (both fit); a cut character at the end is ignored.
        let _ = decoder.decode_to_string_without_replacement(
            &head[..head.len().min(SCORE_CHARS * 4)],
            &mut text,
            false,
        );
        let mut previous = ' ';
        let mut total = 0i64;
        for c in text.chars().take(SCORE_CHARS) {
            total += japanese_weight(previous, c);
            previous = c;
        }
        total
    };
    if score(EUC_JP) > score(SHIFT_JIS) {
        [TextEncoding::EucJp, TextEncoding::Cp932]
    } else {
        [TextEncoding::Cp932, TextEncoding::EucJp]
    }
}

/// How much `c`, after `previous`, looks like Japanese business text (see
/// [`japanese_order`]).
fn japanese_weight(previous: char, c: char) -> i64 {
    match c {
        c if c.is_ascii() => 0,
        // Half-width voiced marks count only after a kana that takes them (ｳ, ｶ–ﾄ, ﾊ–ﾎ).
        '\u{FF9E}' | '\u{FF9F}' => {
            if matches!(previous, '\u{FF73}' | '\u{FF76}'..='\u{FF84}' | '\u{FF8A}'..='\u{FF8E}') {
                2
            } else {
                -2
            }
        }
        // Half-width punctuation (｡｢｣､･) is rare in data; ｦ and the small kana are neutral.
        '\u{FF61}'..='\u{FF65}' => -1,
        '\u{FF66}'..='\u{FF6F}' => 0,
        '\u{FF70}'..='\u{FF9D}' => 1,
        '\u{3041}'..='\u{3096}' | '\u{30A1}'..='\u{30FC}' => 2,
        c => {
            // The JIS X 0208 row, from the character's EUC-JP bytes: rows 1–3 are symbols,
            // full-width digits and letters, rows 16–47 level-1 kanji, 48–84 level-2 kanji.
            let mut utf8 = [0u8; 4];
            let mut bytes = [0u8; 8];
            let mut encoder = EUC_JP.new_encoder();
            let (result, _, written) = encoder.encode_from_utf8_without_replacement(
                c.encode_utf8(&mut utf8),
                &mut bytes,
                true,
            );
            if !matches!(result, encoding_rs::EncoderResult::InputEmpty) || written != 2 {
                return -2;
            }
            match bytes[0] {
                0xA1..=0xA3 | 0xB0..=0xCF => 2,
                0xD0..=0xF4 => 0,
                _ => -2,
            }
        }
    }
}

/// Decodes a document's `bytes` with the `auto` rule, refusing binary content (a PDF or an
/// executable renamed `.txt`): `BINARY_CONTENT`, or `UNKNOWN_ENCODING` when no candidate
/// decodes the bytes.
pub fn decode(bytes: &[u8]) -> Result<DecodedText> {
    let head = &bytes[..bytes.len().min(DETECT_BYTES)];
    let list = auto_candidates(head, head.len() == bytes.len());
    // A BOM skips the byte sniffing (UTF-16 text is full of NUL bytes); its text is checked.
    let bom = matches!(
        list.first(),
        Some(TextEncoding::Utf8Sig | TextEncoding::Utf16Le | TextEncoding::Utf16Be)
    );
    if !bom {
        sniff_binary(bytes)?;
    }
    let (text, encoding) = decode_first(bytes, &list).ok_or(Error::UnknownEncoding)?;
    if bom {
        check_not_binary_text(&text)?;
    }
    Ok(DecodedText {
        text,
        encoding: encoding.name().to_string(),
    })
}

/// Decodes `bytes` as `choice` says, with no binary sniffing (a table file's bytes, read as
/// `csv.read` reads them). A named encoding that does not fit is
/// [`Error::EncodingMismatch`] with the encoding `auto` would use, if any.
pub fn decode_as(bytes: &[u8], choice: EncodingChoice) -> Result<(String, TextEncoding)> {
    let head = &bytes[..bytes.len().min(DETECT_BYTES)];
    let whole = head.len() == bytes.len();
    if let Some(found) = decode_first(bytes, &candidates(head, whole, choice)) {
        return Ok(found);
    }
    if choice == EncodingChoice::Auto {
        return Err(Error::UnknownEncoding);
    }
    let named = candidates(head, whole, choice)
        .first()
        .copied()
        .unwrap_or(TextEncoding::Utf8);
    Err(Error::EncodingMismatch {
        named,
        detected: decode_first(bytes, &auto_candidates(head, whole)).map(|(_, e)| e),
    })
}

/// The text of `bytes` in the first of `list` that decodes them strictly.
fn decode_first(bytes: &[u8], list: &[TextEncoding]) -> Option<(String, TextEncoding)> {
    list.iter()
        .find_map(|&encoding| Some((decode_whole(bytes, encoding)?, encoding)))
}

/// Texts from this size up are decoded in pieces on every core ([`decode_whole`]).
const PARALLEL_BYTES: usize = 1 << 20;

/// The text of `bytes` in `encoding`, strictly (`None` at the first byte sequence invalid in
/// it). A large text in an encoding whose line feed byte is never part of another character
/// (UTF-8, CP932, EUC-JP: their multi-byte characters' bytes are all above `0x3F`) is
/// decoded in pieces cut after a line feed, one per core, and the pieces joined: every
/// character ends at a cut, so each piece decodes on its own to the text its bytes give in
/// the whole, and a piece that is invalid is a whole that is (a character cut short before
/// a line feed is invalid either way). Only the first piece may start with a BOM to drop.
/// A CP932 bank statement of 60 MB took 0.35 s on one core.
fn decode_whole(bytes: &[u8], encoding: TextEncoding) -> Option<String> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    decode_on(bytes, encoding, cores)
}

/// [`decode_whole`] on `cores` cores.
fn decode_on(bytes: &[u8], encoding: TextEncoding, cores: usize) -> Option<String> {
    let cuts = line_cuts(bytes, encoding, cores);
    if cuts.len() < 2 {
        let mut text = String::new();
        StreamDecoder::new(encoding)
            .decode(bytes, true, &mut text)
            .ok()?;
        return Some(text);
    }
    let pieces: Vec<(usize, usize)> = cuts
        .iter()
        .zip(cuts.iter().skip(1).chain([&bytes.len()]))
        .map(|(&start, &end)| (start, end))
        .collect();
    let texts = crate::parallel::map(&pieces, pieces.len(), |&(start, end)| {
        let mut decoder = if start == 0 {
            StreamDecoder::new(encoding)
        } else {
            StreamDecoder {
                decoder: encoding.encoding().new_decoder_without_bom_handling(),
                encoding,
            }
        };
        let mut text = String::new();
        decoder.decode(&bytes[start..end], true, &mut text).ok()?;
        Some(text)
    });
    let texts: Vec<String> = texts.into_iter().collect::<Option<_>>()?;
    let mut text = String::with_capacity(texts.iter().map(String::len).sum());
    for piece in &texts {
        text.push_str(piece);
    }
    Some(text)
}

/// Where the pieces of `bytes` start when decoded on `cores` cores: just after a line feed,
/// about evenly; only the start for a short text, one on one core, or an encoding whose
/// line feed byte may be part of a character (UTF-16).
fn line_cuts(bytes: &[u8], encoding: TextEncoding, cores: usize) -> Vec<usize> {
    let mut cuts = vec![0];
    let cut_safe = !matches!(encoding, TextEncoding::Utf16Le | TextEncoding::Utf16Be);
    if bytes.len() < PARALLEL_BYTES || cores < 2 || !cut_safe {
        return cuts;
    }
    let size = bytes.len().div_ceil(cores);
    let mut start = 0;
    while start + size < bytes.len() {
        let Some(feed) = bytes[start + size..].iter().position(|&b| b == b'\n') else {
            break;
        };
        start += size + feed + 1;
        if start >= bytes.len() {
            break;
        }
        cuts.push(start);
    }
    cuts
}

/// The encoding `auto` reads a stream in: the first candidate (judged from its head) that
/// decodes the whole stream, which is read again from the start for each candidate. `None`
/// when none does. For the hint of a named encoding that failed.
pub fn detect_stream<R: Read + Seek>(reader: &mut R) -> std::io::Result<Option<TextEncoding>> {
    reader.seek(SeekFrom::Start(0))?;
    let mut head = Vec::new();
    reader
        .by_ref()
        .take(DETECT_BYTES as u64 + 1)
        .read_to_end(&mut head)?;
    let whole = head.len() <= DETECT_BYTES;
    head.truncate(DETECT_BYTES);
    let mut block = vec![0u8; 1 << 16];
    let mut text = String::new();
    'candidates: for encoding in auto_candidates(&head, whole) {
        reader.seek(SeekFrom::Start(0))?;
        let mut decoder = StreamDecoder::new(encoding);
        loop {
            let n = read_full(reader, &mut block)?;
            text.clear();
            if decoder.decode(&block[..n], n == 0, &mut text).is_err() {
                continue 'candidates;
            }
            if n == 0 {
                return Ok(Some(encoding));
            }
        }
    }
    Ok(None)
}

/// Reads until `buffer` is full or the stream ends; the number of bytes read (fewer than
/// `buffer.len()` only at the end). A read `Interrupted` by a signal is retried.
pub fn read_full(reader: &mut impl Read, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match reader.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// A strict decoder of one encoding for text read in pieces, so a large file is never held:
/// a byte sequence invalid in the encoding is [`Error::EncodingMismatch`], never a
/// replacement character, and the caller tries the next of [`candidates`] from the start.
/// A BOM of the encoding is dropped even when a piece ends inside it.
pub struct StreamDecoder {
    decoder: encoding_rs::Decoder,
    encoding: TextEncoding,
}

impl StreamDecoder {
    pub fn new(encoding: TextEncoding) -> StreamDecoder {
        StreamDecoder {
            decoder: encoding.decoder(),
            encoding,
        }
    }

    /// The encoding this decoder reads.
    pub fn encoding(&self) -> TextEncoding {
        self.encoding
    }

    /// Appends the text of `piece` to `out`; `last` for the stream's final piece (a
    /// character left incomplete is then an error).
    pub fn decode(&mut self, mut piece: &[u8], last: bool, out: &mut String) -> Result<()> {
        loop {
            let room = self
                .decoder
                .max_utf8_buffer_length_without_replacement(piece.len())
                .unwrap_or(piece.len().saturating_mul(3))
                .max(16);
            out.reserve(room);
            let (result, read) = self
                .decoder
                .decode_to_string_without_replacement(piece, out, last);
            piece = &piece[read..];
            match result {
                encoding_rs::DecoderResult::InputEmpty => return Ok(()),
                encoding_rs::DecoderResult::OutputFull => {}
                encoding_rs::DecoderResult::Malformed(..) => {
                    return Err(Error::EncodingMismatch {
                        named: self.encoding,
                        detected: None,
                    });
                }
            }
        }
    }
}

/// The `auto` candidates for a document whose first bytes are `head`, after the binary
/// sniffing [`decode`] does, and whether the text must still be checked for binary content
/// (a BOM skips the byte sniffing; see [`check_not_binary_text`]).
pub(crate) fn document_candidates(head: &[u8], whole: bool) -> Result<(Vec<TextEncoding>, bool)> {
    let list = auto_candidates(head, whole);
    let bom = matches!(
        list.first(),
        Some(TextEncoding::Utf8Sig | TextEncoding::Utf16Le | TextEncoding::Utf16Be)
    );
    if !bom {
        sniff_binary(head)?;
    }
    Ok((list, bom))
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

/// Refuses decoded text that is clearly binary (NULs, many control characters), for text
/// whose bytes were not sniffed because a BOM named the encoding.
pub(crate) fn check_not_binary_text(text: &str) -> Result<()> {
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

    /// About 2.4 MB of journal lines made of `words`, lines of every length from 1 to 96
    /// words so the cuts fall after lines of every kind.
    fn journal_lines(words: &[&str]) -> String {
        let mut text = String::new();
        let mut i = 0usize;
        while text.len() < 2_400_000 {
            for j in 0..(i % 96 + 1) {
                text.push_str(words[(i + j * 7) % words.len()]);
            }
            text.push_str(if i.is_multiple_of(3) { "\r\n" } else { "\n" });
            i += 1;
        }
        text
    }

    /// Words of a CP932 export: NEC and IBM extensions (①, 髙), half-width kana, and the
    /// characters CP932 maps apart from Shift_JIS (－, ～).
    const CP932_WORDS: [&str; 8] = [
        "旅費交通費",
        "ｶﾌﾞｼｷｶﾞｲｼｬ",
        "①②",
        "髙橋",
        "－",
        "～",
        "a",
        "1,000",
    ];

    #[test]
    fn a_large_text_decodes_in_pieces_to_the_text_it_decodes_to_whole() {
        let text = journal_lines(&CP932_WORDS);
        let (cp932, _, lossy) = SHIFT_JIS.encode(&text);
        assert!(!lossy);
        // EUC-JP has no NEC or IBM extensions.
        let euc_text = journal_lines(&["売掛金", "ｶﾌﾞｼｷｶﾞｲｼｬ", "高橋", "※", "a", "1,000"]);
        let (euc, _, lossy) = EUC_JP.encode(&euc_text);
        assert!(!lossy);
        // UTF-8 with a U+FEFF opening a line now and then: text, not a BOM, past the start.
        let utf8_text = journal_lines(&["売掛金", "\u{FEFF}", "①", "😀", "¥", "a"]);
        let utf8_sig = [b"\xEF\xBB\xBF".as_slice(), utf8_text.as_bytes()].concat();
        let cases: [(&[u8], TextEncoding, &str); 4] = [
            (&cp932, TextEncoding::Cp932, &text),
            (&euc, TextEncoding::EucJp, &euc_text),
            (utf8_text.as_bytes(), TextEncoding::Utf8, &utf8_text),
            (&utf8_sig, TextEncoding::Utf8Sig, &utf8_text),
        ];
        for (bytes, encoding, text) in cases {
            for cores in [2, 3, 5, 16] {
                let cuts = line_cuts(bytes, encoding, cores);
                assert_eq!(cuts.len(), cores, "{encoding} on {cores}");
                assert!(cuts[1..].iter().all(|&c| bytes[c - 1] == b'\n'));
                // Every U+FEFF of the text is kept; only the leading BOM is dropped.
                assert!(
                    decode_on(bytes, encoding, cores).as_deref() == Some(text),
                    "{encoding} on {cores}"
                );
            }
        }
        // UTF-16 is never cut: its line feed is two bytes, and 0x0A may be half of another.
        let utf16: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        assert_eq!(line_cuts(&utf16, TextEncoding::Utf16Le, 4), [0]);
        // Too short to cut.
        assert_eq!(line_cuts(&cp932[..1000], TextEncoding::Cp932, 4), [0]);
    }

    #[test]
    fn a_piece_that_does_not_decode_fails_the_whole() {
        let text = journal_lines(&CP932_WORDS);
        let (cp932, _, _) = SHIFT_JIS.encode(&text);
        // A CP932 lead byte before a line feed (a character cut short) just before the
        // second piece, where each piece alone would end on a complete character but for it;
        // then a byte CP932 does not define (0xA0) in the last piece.
        let cuts = line_cuts(&cp932, TextEncoding::Cp932, 2);
        let mut cut_short = cp932.to_vec();
        cut_short.insert(cuts[1] - 1, 0x88);
        let mut undefined = cp932.to_vec();
        let line_start = undefined[..undefined.len() - 10]
            .iter()
            .rposition(|&b| b == b'\n')
            .unwrap()
            + 1;
        undefined.insert(line_start, 0xA0);
        for bytes in [cut_short, undefined] {
            for cores in [1, 2, 4] {
                assert_eq!(
                    decode_on(&bytes, TextEncoding::Cp932, cores),
                    None,
                    "{cores}"
                );
            }
            assert!(matches!(
                decode_as(&bytes, EncodingChoice::Cp932),
                Err(Error::EncodingMismatch { .. })
            ));
        }
    }

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
        check(b"abc", Ok(("abc", "utf-8")));
        check("請求書".as_bytes(), Ok(("請求書", "utf-8")));
        check(b"\xEF\xBB\xBFa,b", Ok(("a,b", "utf-8-sig")));
        check(b"\xFF\xFEa\0b\0", Ok(("ab", "utf-16le")));
        check(b"\xFE\xFF\0a\0b", Ok(("ab", "utf-16be")));
        // 請求書,金額 in Shift_JIS.
        let (sjis, _, _) = SHIFT_JIS.encode("請求書,金額\r\n株式会社テスト,1000\r\n");
        check(
            &sjis,
            Ok(("請求書,金額\r\n株式会社テスト,1000\r\n", "cp932")),
        );
        let (euc, _, _) = EUC_JP.encode("経理部の請求書です。よろしくお願いします。");
        check(
            &euc,
            Ok(("経理部の請求書です。よろしくお願いします。", "euc-jp")),
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
        // Neither UTF-8 nor CP932 nor EUC-JP (0xA0 is no character or lead byte in either).
        check(b"abc\xA0\xA0", Err("UNKNOWN_ENCODING"));
    }

    #[test]
    fn names_parse_to_choices() {
        for (name, choice) in [
            ("auto", EncodingChoice::Auto),
            ("", EncodingChoice::Auto),
            ("UTF-8", EncodingChoice::Utf8),
            ("utf_8_sig", EncodingChoice::Utf8Sig),
            ("Shift_JIS", EncodingChoice::Cp932),
            ("windows-31j", EncodingChoice::Cp932),
            ("cp932", EncodingChoice::Cp932),
            ("euc-jp", EncodingChoice::EucJp),
            ("utf-16", EncodingChoice::Utf16),
            ("utf-16le", EncodingChoice::Utf16Le),
            ("UTF-16BE", EncodingChoice::Utf16Be),
        ] {
            assert_eq!(EncodingChoice::parse(name), Some(choice), "{name}");
        }
        assert_eq!(EncodingChoice::parse("latin1"), None);
        for name in EncodingChoice::NAMES {
            assert!(EncodingChoice::parse(name).is_some(), "{name}");
        }
    }

    #[test]
    fn a_named_encoding_that_does_not_fit_names_the_one_that_does() {
        let (sjis, _, _) = SHIFT_JIS.encode("日付,金額\r\n");
        let err = decode_as(&sjis, EncodingChoice::Utf8).unwrap_err();
        assert_eq!(err.code(), "ENCODING_MISMATCH");
        assert!(matches!(
            err,
            Error::EncodingMismatch {
                named: TextEncoding::Utf8,
                detected: Some(TextEncoding::Cp932)
            }
        ));
        let utf16 = [b"\xFF\xFE".as_slice(), &[b'a', 0, b'\t', 0, b'b', 0]].concat();
        assert_eq!(
            decode_as(&utf16, EncodingChoice::Utf16).unwrap(),
            ("a\tb".to_string(), TextEncoding::Utf16Le)
        );
        // A UTF-16 file without a BOM, named: little-endian, as Excel writes it.
        assert_eq!(
            decode_as(&[b'a', 0, b'b', 0], EncodingChoice::Utf16).unwrap(),
            ("ab".to_string(), TextEncoding::Utf16Le)
        );
    }

    /// Bytes valid in both CP932 and EUC-JP: each reading is scored, CP932 winning a tie.
    #[test]
    fn cp932_and_euc_jp_ambiguities_are_settled_by_the_japanese_reading() {
        let cases: [(&[u8], &str, &str); 5] = [
            // ﾄﾘﾋｷｻｷ,ﾒｲ (half-width katakana, CP932) is 椿坊桟,匆 in EUC-JP.
            (
                b"\xC4\xD8\xCB\xB7\xBB\xB7,\xD2\xB2\r\n",
                "cp932",
                "ﾄﾘﾋｷｻｷ,ﾒｲ\r\n",
            ),
            // 金額,摘要 (EUC-JP) is ｶ箋ﾛ,ﾅｦﾍﾗ in CP932.
            (
                b"\xB6\xE2\xB3\xDB,\xC5\xA6\xCD\xD7\r\n",
                "euc-jp",
                "金額,摘要\r\n",
            ),
            // ｺｰﾄﾞ (CP932) is 紺爪 in EUC-JP: the voiced mark after ﾄ tips it.
            (b"\xBA\xB0\xC4\xDE\r\n", "cp932", "ｺｰﾄﾞ\r\n"),
            // 伝票 (EUC-JP) is ﾅﾁﾉｼ in CP932: two level-1 kanji against four half-width
            // kana, a tie that CP932 wins (the rule's known limit).
            (b"\xC5\xC1\xC9\xBC\r\n", "cp932", "ﾅﾁﾉｼ\r\n"),
            // ASCII only: UTF-8.
            (b"a,b\r\n", "utf-8", "a,b\r\n"),
        ];
        for (bytes, encoding, text) in cases {
            check(bytes, Ok((text, encoding)));
        }
    }

    #[test]
    fn a_stream_is_decoded_in_any_pieces_as_in_one() {
        let (sjis, _, _) = SHIFT_JIS.encode("日付,摘要\r\n2024/04/01,新幹線 東京－大阪\r\n");
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("日付\t金額\r\n".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        for (bytes, encoding) in [
            (&sjis[..], TextEncoding::Cp932),
            (&utf16[..], TextEncoding::Utf16Le),
        ] {
            let whole = decode_as(bytes, EncodingChoice::Auto).unwrap();
            assert_eq!(whole.1, encoding);
            for size in [1, 2, 3, 5] {
                let mut decoder = StreamDecoder::new(encoding);
                let mut text = String::new();
                for piece in bytes.chunks(size) {
                    decoder.decode(piece, false, &mut text).unwrap();
                }
                decoder.decode(&[], true, &mut text).unwrap();
                assert_eq!(text, whole.0, "{encoding} in pieces of {size}");
            }
        }
        let mut reader = std::io::Cursor::new(sjis.clone());
        assert_eq!(
            detect_stream(&mut reader).unwrap(),
            Some(TextEncoding::Cp932)
        );
    }
}
