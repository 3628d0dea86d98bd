//! Structure-aware inputs for the `.xlsx`/`.docx` harnesses: a seed package is unzipped, the
//! XML of one part is edited with the shared mutator (extreme numbers, SpreadsheetML tokens,
//! cut and repeated pieces) and the package is zipped again, so the parsers behind the zip
//! layer see the damage (random bytes over compressed data mostly stop at the CRC check). Needs
//! `super::fuzz_support` and the `zip` crate.
#![allow(dead_code)]

use std::io::{Read, Write};

use proptest::prelude::*;

use super::fuzz_support::{self, Edit};

/// Tokens of SpreadsheetML and WordprocessingML that parsers branch on.
pub const TOKENS: &[&[u8]] = &[
    b"<row r=\"1048577\">",
    b"<c r=\"XFD1048576\"><v>1</v></c>",
    b"<c r=\"AAAAAAAA1\" t=\"s\"><v>0</v></c>",
    b"<c t=\"s\"><v>4294967295</v></c>",
    b"<c t=\"e\"><v>#REF!</v></c>",
    b"<c t=\"d\"><v>9999-99-99</v></c>",
    b"<c t=\"inlineStr\"><is><t>x</t></is></c>",
    b"<f t=\"shared\" si=\"2147483647\" ref=\"A1:B99999999999\">A1</f>",
    b"<f t=\"array\" ref=\"B2:A1\">A1</f>",
    b"<dimension ref=\"A1:XFD1048576\"/>",
    b"<mergeCell ref=\"A1:XFD1048576\"/>",
    b"<sst uniqueCount=\"2147483647\">",
    b"<si><t>",
    b"</t></si>",
    b"<sheetData>",
    b"</sheetData>",
    b"</row>",
    b"<w:p><w:r><w:t>",
    b"</w:t></w:r></w:p>",
    b"<w:tbl><w:tr><w:tc>",
    b"<w:tc>",
    b"&amp;",
    b"&#0;",
    b"&#xFFFFFFFF;",
    b"_x0000_",
    b"<![CDATA[",
    b"<!DOCTYPE x [<!ENTITY a \"aaaaaaaaaa\">]>",
    b"\xEF\xBB\xBF",
    b"\xFF\xFE",
];

/// The entries of a zip (name, inflated bytes, at most 4 MiB each), or `None` if it is not one.
pub fn unzip(bytes: &[u8]) -> Option<Vec<(String, Vec<u8>)>> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).ok()?;
    let mut out = Vec::with_capacity(archive.len());
    for i in 0..archive.len() {
        let entry = archive.by_index(i).ok()?;
        let name = entry.name().ok()?.to_string();
        let mut data = Vec::new();
        entry.take(4 << 20).read_to_end(&mut data).ok()?;
        out.push((name, data));
    }
    Some(out)
}

pub fn zip(entries: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in entries {
        if w.start_file(name.as_str(), options).is_err() || w.write_all(data).is_err() {
            continue;
        }
    }
    w.finish().map(|c| c.into_inner()).unwrap_or_default()
}

/// A seed package with edits to the XML of 1–3 of its parts (mostly), or plain byte edits of the
/// whole file, or arbitrary bytes.
pub fn input(seeds: Vec<Vec<u8>>, max_len: usize) -> impl Strategy<Value = Vec<u8>> {
    let packages: Vec<Vec<(String, Vec<u8>)>> = seeds.iter().filter_map(|s| unzip(s)).collect();
    assert!(!packages.is_empty(), "no zip among the seeds");
    let part_edits = prop::collection::vec(
        (
            any::<prop::sample::Index>(),
            prop::collection::vec(fuzz_support::edit(), 1..6),
        ),
        1..4,
    );
    prop_oneof![
        6 => (prop::sample::select(packages), part_edits).prop_map(move |(mut parts, edits)| {
            for (which, edits) in edits {
                let at = which.index(parts.len());
                let edited = apply_xml(&parts[at].1, &edits, max_len);
                parts[at].1 = edited;
            }
            zip(&parts)
        }),
        2 => fuzz_support::input(seeds, TOKENS, max_len),
    ]
}

fn apply_xml(xml: &[u8], edits: &[Edit], max_len: usize) -> Vec<u8> {
    fuzz_support::apply(xml, edits, TOKENS, max_len.max(xml.len()))
}
