//! Decoding text files (CSV, bank statements, HTTP bodies): strict `encoding_rs` decoding,
//! with `chardetng` breaking ties between legacy Japanese encodings.

use crate::block::BlockError;
use polars::prelude::*;

/// Decodes text in the encoding the spec's `encoding` input names (`auto`, `utf-8`,
/// `utf-8-sig`, `shift_jis`, `cp932`). Returns the text and the encoding used (`utf-8`,
/// `utf-8-sig`, `euc-jp` or `cp932`; Shift_JIS is decoded as its superset CP932, which is
/// what Japanese Windows software writes). The choice is [`decodings`]'s, which `csv.read`
/// uses on its streamed file too.
pub(crate) fn decode(bytes: &[u8], encoding: &str) -> Result<(String, &'static str), BlockError> {
    const SAMPLE: usize = 1 << 20;
    let sample = &bytes[..bytes.len().min(SAMPLE)];
    let (list, undecodable) = decodings(sample, sample.len() == bytes.len(), encoding)?;
    for decoding in list {
        let b = if decoding.skip_bom {
            bytes.strip_prefix(BOM).unwrap_or(bytes)
        } else {
            bytes
        };
        let (text, had_errors) = decoding.encoding.decode_without_bom_handling(b);
        if !had_errors {
            return Ok((text.into_owned(), decoding.name));
        }
    }
    Err(undecodable)
}

/// One way to decode the file: the encoding, the name `csv.read` reports, whether a UTF-8
/// BOM is skipped, and the error when the bytes do not decode.
pub(crate) struct Decoding {
    pub(crate) encoding: &'static encoding_rs::Encoding,
    pub(crate) name: &'static str,
    pub(crate) skip_bom: bool,
}

pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The decodings to try, in order, for the `encoding` input, judged from the first bytes of
/// the file (`sample`; `whole` when that is the entire file), and the error when none of
/// them decodes the file. The rules are [`decode`]'s: a named encoding is the only one
/// tried; `auto` takes a BOM as UTF-8, text that is UTF-8 as UTF-8, and otherwise lets
/// chardetng choose between EUC-JP and CP932 on the first MiB, CP932 being the last resort.
pub(crate) fn decodings(
    sample: &[u8],
    whole: bool,
    encoding: &str,
) -> Result<(Vec<Decoding>, BlockError), BlockError> {
    let undecodable = |name: &str| {
        BlockError::failed(
            format!("文字コード {name} として読めません"),
            format!("the file is not valid {name}"),
        )
        .with_hint(
            "encoding を auto にするか、正しい文字コードを指定してください",
            "set encoding to auto or to the file's real encoding",
        )
    };
    let utf8 = |name: &'static str| Decoding {
        encoding: encoding_rs::UTF_8,
        name,
        skip_bom: true,
    };
    let cp932 = Decoding {
        encoding: encoding_rs::SHIFT_JIS,
        name: "cp932",
        skip_bom: false,
    };
    match encoding.trim().to_ascii_lowercase().as_str() {
        "utf-8" | "utf8" => Ok((vec![utf8("utf-8")], undecodable("UTF-8"))),
        "utf-8-sig" => Ok((vec![utf8("utf-8-sig")], undecodable("UTF-8"))),
        "shift_jis" | "shift-jis" | "sjis" | "cp932" | "windows-31j" => {
            Ok((vec![cp932], undecodable("Shift_JIS/CP932")))
        }
        "auto" | "" => {
            if sample.starts_with(BOM) {
                return Ok((vec![utf8("utf-8-sig")], undecodable("UTF-8")));
            }
            let mut list = Vec::new();
            // A sample cut inside a character is still UTF-8 so far (`error_len` is None).
            let utf8_so_far = match std::str::from_utf8(sample) {
                Ok(_) => true,
                Err(e) => !whole && e.error_len().is_none(),
            };
            if utf8_so_far {
                list.push(Decoding {
                    encoding: encoding_rs::UTF_8,
                    name: "utf-8",
                    skip_bom: false,
                });
            }
            // Not UTF-8: Japanese files are then CP932 nearly always, EUC-JP sometimes;
            // chardetng decides between the legacy encodings by byte-pair statistics, which
            // settle long before the first MiB ends.
            let mut detector = chardetng::EncodingDetector::new();
            detector.feed(sample, whole);
            if detector.guess(Some(b"jp"), true) == encoding_rs::EUC_JP {
                list.push(Decoding {
                    encoding: encoding_rs::EUC_JP,
                    name: "euc-jp",
                    skip_bom: false,
                });
            }
            list.push(cp932);
            Ok((
                list,
                BlockError::failed(
                    "文字コードを判定できません",
                    "the text encoding could not be detected",
                )
                .with_hint("encoding を指定してください", "set the encoding input"),
            ))
        }
        other => Err(BlockError::input_invalid(
            "encoding",
            &format!("{other} は使えません（auto, utf-8, utf-8-sig, shift_jis, cp932）"),
            &format!("{other} is not one of auto, utf-8, utf-8-sig, shift_jis, cp932"),
        )),
    }
}
