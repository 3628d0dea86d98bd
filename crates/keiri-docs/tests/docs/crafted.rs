//! Real workbooks with one declared number changed: what crashed `keiri extract`, `keiri serve`
//! and `keiri mcp` before (an aborting 51 GB reservation, calamine's arithmetic overflow) is
//! `CORRUPT_FILE` for that file now, and the other files of the call still extract.

use std::io::{Read, Write};
use std::path::Path;

use keiri_docs::{ExtractRequest, Format};

use super::{Workspace, extract, fixtures_dir};

/// `bytes` (a zip) with the text of entry `name` passed through `edit`; every other entry is
/// copied as it was.
pub fn with_entry(bytes: &[u8], name: &str, edit: impl Fn(&str) -> String) -> Vec<u8> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let mut found = false;
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).unwrap();
        let entry_name = entry.name().unwrap().to_string();
        let mut data = Vec::new();
        entry.read_to_end(&mut data).unwrap();
        if entry_name == name {
            let edited = edit(std::str::from_utf8(&data).unwrap());
            assert_ne!(
                edited.as_bytes(),
                data,
                "the edit of {name} changed nothing"
            );
            data = edited.into_bytes();
            found = true;
        }
        out.start_file(
            entry_name,
            zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated),
        )
        .unwrap();
        out.write_all(&data).unwrap();
    }
    assert!(found, "no entry {name}");
    out.finish().unwrap().into_inner()
}

fn fixture(rel: &str) -> Vec<u8> {
    std::fs::read(fixtures_dir().join(rel)).unwrap()
}

/// payroll_pivot.xlsx declaring 2,147,483,647 shared strings (it has 52): calamine reserved
/// ~51 GB for them and the allocator aborted the process.
pub fn unique_count_bomb() -> Vec<u8> {
    with_entry(
        &fixture("accounting/payroll_pivot.xlsx"),
        "xl/sharedStrings.xml",
        |xml| xml.replace("uniqueCount=\"52\"", "uniqueCount=\"2147483647\""),
    )
}

/// multi_sheet_ja.xlsx with one more digit group in its first sheet's dimension: calamine 0.38
/// overflows a `u32` reading the row number ("attempt to multiply with overflow").
pub fn calamine_overflow() -> Vec<u8> {
    with_entry(
        &fixture("accounting/multi_sheet_ja.xlsx"),
        "xl/worksheets/sheet1.xml",
        |xml| {
            xml.replace(
                "<dimension ref=\"A1:D4\"",
                "<dimension ref=\"A1:D99999999999\"",
            )
        },
    )
}

fn check(bytes: &[u8], expect: &str) {
    let err = extract(bytes, Format::Xlsx).unwrap_err();
    assert_eq!(err.code(), expect, "{err}");
    // Refused by our checks, not by the panic guard after calamine panicked.
    assert!(!err.to_string().contains("reader failed"), "{err}");
}

#[test]
fn unique_count_of_two_billion_is_a_corrupt_file() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    check(&unique_count_bomb(), "CORRUPT_FILE");
    // The same count from the generated workbook, and a `count` no file could hold.
    let book = super::generate::xlsx(&[("S", vec![vec![super::generate::t("a")]])]);
    let bomb = with_entry(&book, "xl/sharedStrings.xml", |xml| {
        xml.replace("uniqueCount=\"1\"", "uniqueCount=\"2147483647\"")
    });
    check(&bomb, "CORRUPT_FILE");
    let lie = with_entry(&book, "xl/sharedStrings.xml", |xml| {
        xml.replace("count=\"1\" ", "count=\"4294967296\" ")
    });
    check(&lie, "CORRUPT_FILE");
}

#[test]
fn calamine_overflow_file_is_a_corrupt_file() {
    if keiri_testkit::skip_without_shared("fixtures/accounting/multi_sheet_ja.xlsx") {
        return;
    }
    check(&calamine_overflow(), "CORRUPT_FILE");
    let sheet = "xl/worksheets/sheet1.xml";
    let book = fixture("accounting/multi_sheet_ja.xlsx");
    for (from, to) in [
        // Column letters past a u32 (26^7 > 2^32).
        ("<c r=\"B1\"", "<c r=\"AAAAAAAB1\""),
        ("<row r=\"2\"", "<row r=\"99999999999\""),
        // calamine subtracts start from end.
        ("<dimension ref=\"A1:D4\"", "<dimension ref=\"D4:A1\""),
        ("<c r=\"B1\"", "<c r=\"XFE1\""),
    ] {
        let bad = with_entry(&book, sheet, |xml| xml.replacen(from, to, 1));
        let err = extract(&bad, Format::Xlsx).unwrap_err();
        assert_eq!(err.code(), "CORRUPT_FILE", "{to}: {err}");
    }
}

/// The upstream bug this crate works around, reproduced on calamine itself: when this test
/// fails, calamine has fixed it — pin the fixed version and update
/// `docs/upstream/calamine-overflow.md`. Only builds with overflow checks panic (the dev and
/// test profiles); release builds wrap silently.
#[test]
fn calamine_0_38_still_overflows_on_the_file() {
    if keiri_testkit::skip_without_shared("fixtures/") {
        return;
    }
    use calamine::Reader;
    let bytes = calamine_overflow();
    let result = std::panic::catch_unwind(|| {
        let mut book = calamine::Xlsx::new(std::io::Cursor::new(bytes)).unwrap();
        book.worksheet_cells_reader("入力データ").map(|_| ())
    });
    if cfg!(debug_assertions) {
        assert!(result.is_err(), "calamine no longer panics: {result:?}");
    }
}

#[test]
fn a_crafted_workbook_does_not_stop_the_batch() {
    if keiri_testkit::skip_without_shared("fixtures/accounting/multi_sheet_ja.xlsx") {
        return;
    }
    let ws = Workspace::new();
    ws.put("bomb.xlsx", &unique_count_bomb());
    ws.put("overflow.xlsx", &calamine_overflow());
    ws.put("good.xlsx", &fixture("accounting/multi_sheet_ja.xlsx"));
    let req = ExtractRequest {
        file_paths: ["bomb.xlsx", "overflow.xlsx", "good.xlsx"]
            .map(String::from)
            .to_vec(),
        ..ExtractRequest::default()
    };
    let out = keiri_docs::extract_files(&ws.policy, &req, &ws.cache).unwrap();
    let res = out.json().unwrap();
    let codes: Vec<(&str, &str)> = res
        .errors
        .iter()
        .map(|e| (e.file_path.as_deref().unwrap(), e.code.as_str()))
        .collect();
    assert_eq!(
        codes,
        [
            ("bomb.xlsx", "CORRUPT_FILE"),
            ("overflow.xlsx", "CORRUPT_FILE")
        ]
    );
    assert_eq!(res.files.len(), 1);
    assert!(
        res.files[0].text.contains("データID"),
        "{}",
        res.files[0].text
    );
}

/// The crafted seeds of the fuzz corpus (a small generated workbook with the same two
/// changes; `fuzz/make_binary_seeds.py` writes them) are refused the same way.
#[test]
fn crafted_seeds_in_the_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/xlsx");
    for (name, part, marker) in [
        (
            "unique-count-2147483647.xlsx",
            "xl/sharedStrings.xml",
            "uniqueCount=\"2147483647\"",
        ),
        (
            "calamine-overflow-dimension.xlsx",
            "xl/worksheets/sheet1.xml",
            "<dimension ref=\"A1:D99999999999\"/>",
        ),
        (
            "unique-count-in-a-first-sst.xlsx",
            "xl/sharedStrings.xml",
            "<sst uniqueCount=\"2147483647\">",
        ),
        (
            "calamine-overflow-after-stray-end-tag.xlsx",
            "xl/worksheets/sheet1.xml",
            "<x></y><dimension ref=\"A1:D99999999999\"/>",
        ),
        (
            "calamine-overflow-sheet-not-named-xml.xlsx",
            "xl/worksheets/sheet1.dat",
            "<dimension ref=\"A1:D99999999999\"/>",
        ),
    ] {
        let seed = std::fs::read(dir.join(name)).unwrap();
        let mut archive = zip::ZipArchive::new(std::io::Cursor::new(&seed[..])).unwrap();
        let mut xml = String::new();
        archive
            .by_name(part)
            .unwrap()
            .read_to_string(&mut xml)
            .unwrap();
        assert!(xml.contains(marker), "{name}: {part} lacks {marker}");
        check(&seed, "CORRUPT_FILE");
    }
    let good = std::fs::read(dir.join("invoice.xlsx")).unwrap();
    assert!(extract(&good, Format::Xlsx).unwrap().text.contains("品目"));
}

/// The panic guards turn a parser's panic into `CORRUPT_FILE` only while panics unwind; a
/// `panic = "abort"` in any profile of the workspace would make every guarded panic a crash.
#[test]
fn no_profile_aborts_on_panic() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let text = std::fs::read_to_string(manifest).unwrap();
    let mut section = String::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.to_string();
        } else if section.starts_with("[profile") {
            let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            assert!(
                !compact.starts_with("panic=\"abort\""),
                "{section} sets panic = \"abort\": the parser panic guards need unwinding"
            );
        }
    }
}
