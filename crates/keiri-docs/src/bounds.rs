//! Our own checks of the numbers a workbook declares, run on every XML part while
//! [`crate::zipguard::verify_entries`] inflates it, before calamine parses anything.
//!
//! calamine trusts what a file says: it reserves the shared-string table from `uniqueCount`
//! (a 2 KB file declaring 2,147,483,647 strings asks for ~51 GB and the allocator aborts the
//! process — no `catch_unwind` can stop that), and it converts cell references to numbers with
//! unchecked arithmetic (`A1:B99999999999` overflows a `u32`; see
//! `docs/upstream/calamine-overflow.md`). So we refuse, as `CORRUPT_FILE`:
//!
//! * a `<sst>` whose `uniqueCount` is more than its part's inflated size can hold (every string
//!   item takes at least the 5 bytes of `<si/>`), or whose `count` (references from cells) is
//!   more than the bytes of all parts together;
//! * a `<dimension ref>`, `<row r>`, `<c r>` or shared-formula `<f ref>` that is not a cell
//!   reference inside Excel's grid (1,048,576 rows × 16,384 columns), or a range whose end is
//!   before its start.
//!
//! Elements are matched by local name in every part, as calamine does (it follows the
//! workbook's relationships, which may point anywhere in the package). A dimension is not
//! checked against the part's size: a sparse sheet with `A1` and `XFD1048576` legitimately
//! declares the whole grid in a few hundred bytes, and our reader never allocates by it.
//! A part that is not well-formed XML is left to calamine, except the shared-string part: its
//! counts must be readable, or the file is refused. The scan reads XML with calamine's reader
//! settings (no end-name or comment checks), so it gives up on a part only where calamine's
//! own parse of it fails: everything calamine reads, we have checked.

use std::collections::HashSet;
use std::io::BufRead;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use crate::error::{Error, Result};

/// Excel's grid.
pub(crate) const MAX_ROWS: u32 = 1_048_576;
pub(crate) const MAX_COLS: u32 = 16_384;
/// The smallest shared-string item, `<si/>`.
const MIN_STRING_ITEM_BYTES: u64 = 5;

const FORMAT: &str = "xlsx";

/// What a scan of the parts has seen so far.
#[derive(Debug, Default)]
pub(crate) struct Declared {
    /// The largest `count` of any shared-string table.
    string_references: u64,
    /// The file names (lowercase, the last path component) of the parts the package's
    /// relationships point at, except images and external targets. calamine follows
    /// relationships to any part name, so a worksheet stored as `sheet1.dat` is parsed as XML
    /// all the same and must be scanned too.
    targets: HashSet<String>,
}

impl Declared {
    /// Scans one part: checks every declared number it can read. Stops at the first XML
    /// error; the caller drains and measures the rest of the part.
    pub(crate) fn scan(&mut self, name: &str, part: &mut dyn BufRead) -> Result<Part> {
        let strings_part = name.to_ascii_lowercase().ends_with("sharedstrings.xml");
        let mut xml = Reader::from_reader(part);
        // calamine's own reader settings (`xlsx::xml_reader`), so this scan stops at an XML
        // error only where calamine's parse stops too: with quick-xml's default end-name check,
        // a stray `</>` ended our scan while calamine read on to an overflowing reference.
        let config = xml.config_mut();
        config.check_end_names = false;
        config.check_comments = false;
        config.expand_empty_elements = true;
        config.trim_text(false);
        let mut buf = Vec::with_capacity(1024);
        let mut out = Part::default();
        loop {
            buf.clear();
            let event = match xml.read_event_into(&mut buf) {
                Ok(event) => event,
                Err(e) if strings_part && out.unique_strings.is_none() => {
                    return Err(Error::corrupt(
                        FORMAT,
                        format!("{name} is not readable XML ({e})"),
                    ));
                }
                Err(_) => return Ok(out),
            };
            match event {
                Event::Start(e) | Event::Empty(e) => self.element(name, &e, &mut out)?,
                Event::Eof => return Ok(out),
                _ => {}
            }
        }
    }

    fn element(&mut self, part: &str, e: &BytesStart<'_>, out: &mut Part) -> Result<()> {
        let attr = |key: &str| -> Result<Option<String>> {
            match e.try_get_attribute(key) {
                Ok(a) => Ok(a.map(|a| a.value.into_owned())),
                Err(err) => Err(Error::corrupt(
                    FORMAT,
                    format!("{part}: a bad attribute ({err})"),
                )),
            }
        };
        match e.local_name().as_ref() {
            "sst" => {
                let unique = attr("uniqueCount")?
                    .map(|v| count(part, "uniqueCount", &v))
                    .transpose()?;
                // calamine reserves by the first `<sst>` it meets, so a later one must not
                // hide a bigger count: keep the largest.
                out.unique_strings = out.unique_strings.max(Some(unique.unwrap_or(0)));
                if let Some(total) = attr("count")? {
                    let total = count(part, "count", &total)?;
                    self.string_references = self.string_references.max(total);
                }
            }
            "dimension" => {
                if let Some(r) = attr("ref")? {
                    range(part, "dimension", &r)?;
                }
            }
            "row" => {
                if let Some(r) = attr("r")? {
                    let ok = r.bytes().all(|b| b.is_ascii_digit())
                        && r.parse::<u32>().is_ok_and(|n| (1..=MAX_ROWS).contains(&n));
                    if !ok {
                        return Err(outside(part, "row number", &r));
                    }
                }
            }
            "c" => {
                if let Some(r) = attr("r")? {
                    cell(&r).ok_or_else(|| outside(part, "cell reference", &r))?;
                }
            }
            "f" => {
                if let Some(r) = attr("ref")? {
                    range(part, "formula range", &r)?;
                }
            }
            "Relationship" => {
                let external = attr("TargetMode")?.is_some_and(|m| m == "External");
                let image = attr("Type")?.is_some_and(|t| t.ends_with("/image"));
                if !external
                    && !image
                    && let Some(target) = attr("Target")?
                {
                    // Both the raw and the unescaped name: over-scanning costs an inflate.
                    let unescaped = quick_xml::escape::unescape(&target)
                        .map(|u| u.into_owned())
                        .unwrap_or_default();
                    for t in [target, unescaped] {
                        if let Some(name) = file_name(&t) {
                            self.targets.insert(name);
                        }
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Whether a relationship points at a part with `name`'s file name (see
    /// [`Declared::targets`]).
    pub(crate) fn is_target(&self, name: &str) -> bool {
        file_name(name).is_some_and(|n| self.targets.contains(&n))
    }

    /// Checks what a part declared against its inflated size.
    pub(crate) fn finish_part(&self, name: &str, part: &Part, size: u64) -> Result<()> {
        if let Some(unique) = part.unique_strings
            && unique.saturating_mul(MIN_STRING_ITEM_BYTES) > size
        {
            return Err(Error::corrupt(
                FORMAT,
                format!(
                    "{name} declares uniqueCount={unique} shared strings, more than its {size} \
                     bytes can hold"
                ),
            ));
        }
        Ok(())
    }

    /// Checks what the package declared against the inflated size of all scanned parts.
    pub(crate) fn finish(&self, total: u64) -> Result<()> {
        if self.string_references > total {
            return Err(Error::corrupt(
                FORMAT,
                format!(
                    "the shared-string table declares count={} references, more than the {total} \
                     bytes of the workbook's parts can hold",
                    self.string_references
                ),
            ));
        }
        Ok(())
    }
}

/// What one part declared.
#[derive(Debug, Default)]
pub(crate) struct Part {
    /// `uniqueCount` of a `<sst>` in this part (0 when absent).
    unique_strings: Option<u64>,
}

/// The last component of a part name or relationship target, lowercase (zip paths are
/// matched without case, as calamine does).
fn file_name(path: &str) -> Option<String> {
    let name = path.rsplit(['/', '\\']).next()?;
    (!name.is_empty()).then(|| name.to_ascii_lowercase())
}

fn count(part: &str, what: &str, value: &str) -> Result<u64> {
    value
        .trim()
        .parse::<u64>()
        .map_err(|_| Error::corrupt(FORMAT, format!("{part}: {what}={value:?} is not a count")))
}

fn outside(part: &str, what: &str, value: &str) -> Error {
    let shown: String = value.chars().take(40).collect();
    Error::corrupt(
        FORMAT,
        format!(
            "{part}: {what} {shown:?} is not inside Excel's grid ({MAX_ROWS} rows x {MAX_COLS} \
             columns)"
        ),
    )
}

/// `A1` or `A1:C3`, inside the grid and in order.
fn range(part: &str, what: &str, value: &str) -> Result<()> {
    let mut ends = value.split(':');
    let first = ends.next().and_then(cell);
    let last = match ends.next() {
        Some(s) => cell(s),
        None => first,
    };
    match (first, last, ends.next()) {
        (Some((r0, c0)), Some((r1, c1)), None) if r0 <= r1 && c0 <= c1 => Ok(()),
        _ => Err(outside(part, what, value)),
    }
}

/// A cell reference (`B7`, letters in either case, as calamine reads them) as one-based
/// (row, column), or `None` if it is not one or lies outside the grid.
pub(crate) fn cell(s: &str) -> Option<(u32, u32)> {
    let split = s.find(|c: char| c.is_ascii_digit())?;
    let (letters, digits) = s.split_at(split);
    if letters.is_empty() || letters.len() > 3 || digits.len() > 7 {
        return None;
    }
    let mut col: u32 = 0;
    for b in letters.bytes() {
        if !b.is_ascii_alphabetic() {
            return None;
        }
        col = col * 26 + u32::from(b.to_ascii_uppercase() - b'A' + 1);
    }
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let row: u32 = digits.parse().ok()?;
    ((1..=MAX_ROWS).contains(&row) && col <= MAX_COLS).then_some((row, col))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(name: &str, xml: &str) -> Result<()> {
        let mut declared = Declared::default();
        let part = declared.scan(name, &mut xml.as_bytes())?;
        declared.finish_part(name, &part, xml.len() as u64)?;
        declared.finish(xml.len() as u64)
    }

    #[test]
    fn relationship_targets_are_parts_to_scan() {
        let mut declared = Declared::default();
        let rels = "<Relationships>\
            <Relationship Id=\"rId1\" Type=\"x/worksheet\" Target=\"worksheets/Sheet1.DAT\"/>\
            <Relationship Id=\"rId2\" Type=\"x/worksheet\" Target=\"/xl/s&#50;.bin\"/>\
            <Relationship Id=\"rId3\" Type=\"x/image\" Target=\"../media/image1.png\"/>\
            <Relationship Id=\"rId4\" Type=\"x/hyperlink\" Target=\"http://e/a.xml\" TargetMode=\"External\"/>\
            </Relationships>";
        declared
            .scan("xl/_rels/workbook.xml.rels", &mut rels.as_bytes())
            .unwrap();
        assert!(declared.is_target("xl/worksheets/sheet1.dat"));
        assert!(declared.is_target("xl/s2.bin"));
        assert!(!declared.is_target("xl/media/image1.png"));
        assert!(!declared.is_target("a.xml"));
        assert!(!declared.is_target("xl/worksheets/"));
    }

    #[test]
    fn declared_numbers() {
        let sheet = |inner: &str| {
            format!(
                "<worksheet><dimension ref=\"A1:C3\"/><sheetData>{inner}</sheetData></worksheet>"
            )
        };
        let ok = |name: &str, xml: &str| assert!(scan(name, xml).is_ok(), "{xml}");
        let bad = |name: &str, xml: &str| {
            let err = scan(name, xml).unwrap_err();
            assert_eq!(err.code(), "CORRUPT_FILE", "{xml}");
        };
        ok(
            "xl/worksheets/sheet1.xml",
            &sheet(
                "<row r=\"1\"><c r=\"A1\"/><c r=\"xfd1\"/></row><row r=\"1048576\"><c r=\"XFD1048576\"><f t=\"shared\" ref=\"A1:B2\" si=\"0\"/></c></row><c/>",
            ),
        );
        bad("s.xml", &sheet("<row r=\"1048577\"/>"));
        bad("s.xml", &sheet("<row r=\"0\"/>"));
        bad("s.xml", &sheet("<row r=\"99999999999\"/>"));
        bad("s.xml", &sheet("<c r=\"XFE1\"/>"));
        bad("s.xml", &sheet("<c r=\"AAAAAAAA1\"/>"));
        bad("s.xml", &sheet("<c r=\"A99999999999\"/>"));
        bad("s.xml", &sheet("<c r=\"1\"/>"));
        bad("s.xml", &sheet("<c r=\"$A$1\"/>"));
        bad("s.xml", &sheet("<c r=\"A1\"><f ref=\"B2:A1\"/></c>"));
        bad(
            "s.xml",
            "<worksheet><dimension ref=\"A1:B99999999999\"/></worksheet>",
        );
        // A mismatched or nameless end tag does not stop calamine's reader, so it must not
        // stop the scan (found by fuzz_xlsx_extract).
        bad(
            "s.xml",
            "<worksheet><c r=\"C1\"><v>9</></c></y><dimension ref=\"A1:D99999999999\"/></worksheet>",
        );
        bad(
            "s.xml",
            "<worksheet><!-- a -- b --><c r=\"A99999999999\"/></worksheet>",
        );
        bad("s.xml", "<worksheet><dimension ref=\"B2:A1\"/></worksheet>");
        bad(
            "s.xml",
            "<worksheet><dimension ref=\"A1:B2:C3\"/></worksheet>",
        );
        // Broken XML elsewhere is calamine's to report.
        ok("s.xml", "<worksheet><row r=\"1\"></worksheet>");

        let sst = |attrs: &str| format!("<sst {attrs}><si><t>a</t></si><si/></sst>");
        ok(
            "xl/sharedStrings.xml",
            &sst("count=\"2\" uniqueCount=\"2\""),
        );
        ok("xl/sharedStrings.xml", &sst(""));
        bad(
            "xl/sharedStrings.xml",
            &sst("count=\"2\" uniqueCount=\"2147483647\""),
        );
        bad(
            "xl/sharedStrings.xml",
            &sst("count=\"2147483647\" uniqueCount=\"2\""),
        );
        bad("xl/sharedStrings.xml", &sst("uniqueCount=\"-1\""));
        bad("xl/sharedStrings.xml", "<sst uniqueCount=\"1\"");
        // calamine reserves by the first `<sst>`; a second, modest one must not hide it (found
        // by fuzz_xlsx_extract: the process aborted asking for 51 GB).
        bad(
            "xl/sharedStrings.xml",
            &format!(
                "\u{f}?xml <sst uniqueCount=\"2147483647\">?>{}",
                sst("count=\"2\" uniqueCount=\"2\"")
            ),
        );
    }
}
