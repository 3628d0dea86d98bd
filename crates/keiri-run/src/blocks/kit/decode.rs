//! Decoding text files (CSV, bank statements, HTTP bodies) with keiri-docs' decoder, the one
//! design time uses: strict (a wrong guess is an error, never mojibake), with one rule for
//! `auto` (BOM, UTF-8, then CP932 or EUC-JP by keiri-docs' scored Japanese rule).

use crate::block::BlockError;

/// The encoding the spec's `encoding` input names (keiri-docs' names: `auto`, `utf-8`,
/// `utf-8-sig`, `shift_jis`/`cp932`/`windows-31j`, `euc-jp`, `utf-16`, `utf-16le`,
/// `utf-16be`).
pub(crate) fn encoding_choice(name: &str) -> Result<keiri_docs::EncodingChoice, BlockError> {
    keiri_docs::EncodingChoice::parse(name).ok_or_else(|| {
        let names = keiri_docs::EncodingChoice::NAMES.join(", ");
        BlockError::input_invalid(
            "encoding",
            &format!("{name} は使えません（{names}）"),
            &format!("{name} is not one of {names}"),
        )
    })
}

/// The error for a file that `named` does not decode, whose hint names the encoding that
/// does (`detected`, found by the `auto` rule), if any.
pub(crate) fn undecodable(
    named: keiri_docs::TextEncoding,
    detected: Option<keiri_docs::TextEncoding>,
) -> BlockError {
    let shown = named.name().to_ascii_uppercase();
    let error = BlockError::failed(
        format!("文字コード {shown} として読めません"),
        format!("the file is not valid {shown}"),
    );
    match detected {
        Some(works) => error.with_hint(
            format!(
                "このファイルは {works} で読めます。encoding を {works} か auto にしてください"
            ),
            format!("the file reads as {works}: set encoding to {works} or auto"),
        ),
        None => error.with_hint(
            "encoding を auto にするか、正しい文字コードを指定してください",
            "set encoding to auto or to the file's real encoding",
        ),
    }
}

pub(crate) fn undetectable() -> BlockError {
    BlockError::failed(
        "文字コードを判定できません",
        "the text encoding could not be detected",
    )
    .with_hint("encoding を指定してください", "set the encoding input")
}

/// Decodes text in the encoding the spec's `encoding` input names, with keiri-docs' decoder
/// (the one design time uses). Returns the text and the encoding used.
pub(crate) fn decode(bytes: &[u8], encoding: &str) -> Result<(String, &'static str), BlockError> {
    match keiri_docs::text::decode_as(bytes, encoding_choice(encoding)?) {
        Ok((text, used)) => Ok((text, used.name())),
        Err(keiri_docs::Error::EncodingMismatch { named, detected }) => {
            Err(undecodable(named, detected))
        }
        Err(_) => Err(undetectable()),
    }
}
