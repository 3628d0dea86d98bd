//! The OPC package: zip entries, `[Content_Types].xml`, relationship parts and `workbook.xml`.
//!
//! Entries that a patch does not change are copied with `raw_copy_file`: their compressed bytes,
//! CRC, timestamps and attributes go to the new zip unchanged, so they are byte-identical even
//! before decompression.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{Cursor, Read, Write};
use std::sync::Arc;

use quick_xml::events::Event;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use crate::error::Error;
use crate::xml;

/// Largest part we decompress into memory; a zip bomb stops here instead of exhausting memory.
const MAX_PART_BYTES: u64 = 1 << 30;
/// All parts one patch decompresses together (the preflight check reads every worksheet): a
/// package of many parts each just under [`MAX_PART_BYTES`] stops here.
const MAX_TOTAL_PART_BYTES: u64 = 2 << 30;

pub(crate) struct Package {
    pub display: String,
    /// The archive over the input bytes; cloning it is cheap (the bytes are shared), which
    /// lets reads and the save work from `&self`.
    archive: ZipArchive<Cursor<Arc<[u8]>>>,
    /// Entry names in archive order.
    names: Vec<String>,
    /// Lower-cased name → index (part names are case-insensitive in OPC).
    index: HashMap<String, usize>,
    /// Bytes decompressed so far, against [`MAX_TOTAL_PART_BYTES`].
    inflated: std::sync::atomic::AtomicU64,
}

/// Writes a new part's content into the (compressing) zip stream.
pub(crate) type PartWriter<'a> = Box<dyn Fn(&mut dyn Write) -> std::io::Result<()> + 'a>;

/// New content for a part: bytes, or a writer that streams it (a worksheet is written straight
/// into the compressor rather than built as one more copy in memory).
pub(crate) enum NewPart<'a> {
    Bytes(Vec<u8>),
    Stream(PartWriter<'a>),
}

/// What a save changes in the package.
#[derive(Default)]
pub(crate) struct Changes<'a> {
    /// Entry index → new content.
    pub replaced: BTreeMap<usize, NewPart<'a>>,
    /// Entry indexes left out.
    pub removed: HashSet<usize>,
    /// New entries, appended in this order.
    pub added: Vec<(String, NewPart<'a>)>,
}

impl Package {
    pub fn open(display: &str, bytes: Arc<[u8]>) -> Result<Package, Error> {
        let archive = ZipArchive::new(Cursor::new(bytes))
            .map_err(|e| Error::unreadable(display, format!("not a zip package ({e})")))?;
        let mut names = Vec::with_capacity(archive.len());
        let mut index = HashMap::with_capacity(archive.len());
        for (i, raw) in archive.file_names_raw().enumerate() {
            let name = String::from_utf8_lossy(raw).into_owned();
            index.entry(name.to_lowercase()).or_insert(i);
            names.push(name);
        }
        Ok(Package {
            display: display.to_string(),
            archive,
            names,
            index,
            inflated: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// The entry index of a part (`xl/workbook.xml`, no leading slash), case-insensitively.
    pub fn find(&self, part: &str) -> Option<usize> {
        let key = part.trim_start_matches('/').to_lowercase();
        self.index.get(&key).copied().or_else(|| {
            let decoded = percent_decode(&key);
            (decoded != key)
                .then(|| self.index.get(&decoded).copied())
                .flatten()
        })
    }

    pub fn name(&self, index: usize) -> &str {
        self.names.get(index).map_or("", String::as_str)
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The decompressed bytes of an entry.
    pub fn read_index(&self, index: usize) -> Result<Vec<u8>, Error> {
        let display = self.display.clone();
        let name = self.name(index).to_string();
        let mut archive = self.archive.clone();
        let mut file = archive
            .by_index(index)
            .map_err(|e| Error::unreadable(&display, format!("{name}: {e}")))?;
        if file.size() > MAX_PART_BYTES {
            return Err(Error::unreadable(
                &display,
                format!("{name} is larger than {MAX_PART_BYTES} bytes"),
            ));
        }
        use std::sync::atomic::Ordering;
        let before = self.inflated.load(Ordering::Relaxed);
        let room = MAX_TOTAL_PART_BYTES.saturating_sub(before);
        if file.size() > room {
            return Err(total_limit(&display));
        }
        // The declared size can lie: reserve at most 1 MiB up front and let the vector grow
        // with what really inflates.
        let mut out = Vec::with_capacity(usize::try_from(file.size().min(1 << 20)).unwrap_or(0));
        (&mut file)
            .take(MAX_PART_BYTES.min(room) + 1)
            .read_to_end(&mut out)
            .map_err(|e| Error::unreadable(&display, format!("{name}: {e}")))?;
        if out.len() as u64 > MAX_PART_BYTES {
            return Err(Error::unreadable(
                &display,
                format!("{name} is larger than {MAX_PART_BYTES} bytes"),
            ));
        }
        if out.len() as u64 > room {
            return Err(total_limit(&display));
        }
        self.inflated.fetch_add(out.len() as u64, Ordering::Relaxed);
        Ok(out)
    }

    /// A part as UTF-8 text (a UTF-8 byte order mark is kept; other encodings are refused).
    pub fn read_text(&self, part: &str) -> Result<Option<String>, Error> {
        let Some(i) = self.find(part) else {
            return Ok(None);
        };
        let bytes = self.read_index(i)?;
        if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
            return Err(Error::unreadable(
                &self.display,
                format!("{part} is UTF-16, which is not supported"),
            ));
        }
        String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| Error::unreadable(&self.display, format!("{part} is not valid UTF-8")))
    }

    /// Builds the new package: changed entries recompressed with their original names and
    /// timestamps, every other entry copied raw, new entries appended.
    pub fn write(&self, changes: &Changes<'_>) -> Result<Vec<u8>, Error> {
        let backend =
            |e: zip::result::ZipError| Error::Backend(format!("writing the package: {e}"));
        let io = |e: std::io::Error| Error::Backend(format!("writing the package: {e}"));
        let mut archive = self.archive.clone();
        let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
        let comment = archive.comment().to_vec();
        for i in 0..self.names.len() {
            if changes.removed.contains(&i) {
                continue;
            }
            if let Some(content) = changes.replaced.get(&i) {
                let modified = archive.by_index_raw(i).map_err(backend)?.last_modified();
                let mut options = deflate_options();
                if let Some(m) = modified {
                    options = options.last_modified_time(m);
                }
                writer
                    .start_file(self.names[i].clone(), options)
                    .map_err(backend)?;
                write_part(&mut writer, content).map_err(io)?;
            } else {
                let f = archive.by_index_raw(i).map_err(backend)?;
                writer.raw_copy_file(f).map_err(backend)?;
            }
        }
        for (name, content) in &changes.added {
            writer
                .start_file(name.clone(), deflate_options())
                .map_err(backend)?;
            write_part(&mut writer, content).map_err(io)?;
        }
        if !comment.is_empty() {
            writer
                .set_raw_comment(comment.into_boxed_slice())
                .map_err(backend)?;
        }
        Ok(writer.finish().map_err(backend)?.into_inner())
    }
}

/// Parts are at most [`MAX_PART_BYTES`] when read and grow only by the edited cells, so they
/// stay far below the 4 GiB that would need zip64 headers.
fn deflate_options() -> SimpleFileOptions {
    SimpleFileOptions::default().compression_method(CompressionMethod::Deflated)
}

fn write_part(writer: &mut dyn Write, content: &NewPart<'_>) -> std::io::Result<()> {
    match content {
        NewPart::Bytes(bytes) => writer.write_all(bytes),
        NewPart::Stream(produce) => {
            // Deflate works best on larger writes than the many small row pieces.
            let mut buffered = std::io::BufWriter::with_capacity(64 * 1024, writer);
            produce(&mut buffered)?;
            buffered.flush()
        }
    }
}

fn total_limit(display: &str) -> Error {
    Error::unreadable(
        display,
        format!("its parts decompress to more than {MAX_TOTAL_PART_BYTES} bytes together"),
    )
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(hex) = s.get(i + 1..i + 3)
            && let Ok(v) = u8::from_str_radix(hex, 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Resolves a relationship target against its source part (`xl/workbook.xml` +
/// `worksheets/sheet1.xml` → `xl/worksheets/sheet1.xml`; absolute targets start at the root).
pub(crate) fn resolve_target(source_part: &str, target: &str) -> String {
    let mut parts: Vec<&str> = if target.starts_with('/') {
        Vec::new()
    } else {
        let dir = source_part.rsplit_once('/').map_or("", |(d, _)| d);
        dir.split('/').filter(|s| !s.is_empty()).collect()
    };
    for seg in target.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    parts.join("/")
}

/// The relationships part of a part: `xl/workbook.xml` → `xl/_rels/workbook.xml.rels`.
pub(crate) fn rels_part_of(part: &str) -> String {
    match part.rsplit_once('/') {
        Some((dir, file)) => format!("{dir}/_rels/{file}.rels"),
        None => format!("_rels/{part}.rels"),
    }
}

/// One `<Relationship>`.
#[derive(Debug, Clone)]
pub(crate) struct Rel {
    pub id: String,
    pub rel_type: String,
    pub target: String,
    pub external: bool,
    pub span: (usize, usize),
}

impl Rel {
    /// The last segment of the type URI (`worksheet`, `calcChain`, …); works for both the
    /// transitional and the strict namespaces.
    pub fn kind(&self) -> &str {
        self.rel_type.rsplit('/').next().unwrap_or("")
    }
}

/// A parsed relationships part.
pub(crate) struct Rels {
    pub text: String,
    pub rels: Vec<Rel>,
    /// Offset of the closing `</Relationships>` (new relationships go before it).
    pub end_tag: usize,
    pub prefix: String,
    /// The span of a self-closing `<Relationships/>` root, which must be opened to add to it.
    pub empty_root: Option<(usize, usize)>,
}

impl Rels {
    /// The splice that adds `new` relationship elements.
    pub fn insertion(&self, new: String) -> (usize, usize, String) {
        match self.empty_root {
            Some((start, end)) => {
                let tag = self.text.get(start..end).unwrap_or("");
                let open = xml::rewrite_start_tag(tag, &[], &[], false).unwrap_or_default();
                (
                    start,
                    end,
                    format!("{open}{new}</{}Relationships>", self.prefix),
                )
            }
            None => (self.end_tag, self.end_tag, new),
        }
    }
}

pub(crate) fn parse_rels(display: &str, part: &str, text: String) -> Result<Rels, Error> {
    let bad = |e: String| Error::unreadable(display, format!("{part}: {e}"));
    let mut r = xml::reader(&text);
    let mut rels = Vec::new();
    let mut end_tag = None;
    let mut prefix = String::new();
    let mut empty_root = None;
    loop {
        let start = r.buffer_position() as usize;
        match r.read_event().map_err(|e| bad(e.to_string()))? {
            Event::Start(e) if xml::local(&e) == b"Relationships" => prefix = xml::prefix_of(&e),
            Event::Empty(e) if xml::local(&e) == b"Relationships" => {
                prefix = xml::prefix_of(&e);
                empty_root = Some((start, r.buffer_position() as usize));
                end_tag = Some(start);
            }
            Event::Start(e) | Event::Empty(e) if xml::local(&e) == b"Relationship" => {
                let end = r.buffer_position() as usize;
                rels.push(Rel {
                    id: xml::attr(&e, b"Id").unwrap_or_default(),
                    rel_type: xml::attr(&e, b"Type").unwrap_or_default(),
                    target: xml::attr(&e, b"Target").unwrap_or_default(),
                    external: xml::attr(&e, b"TargetMode").is_some_and(|m| m == "External"),
                    span: (start, end),
                });
            }
            Event::End(e) if e.local_name().into_inner().as_bytes() == b"Relationship" => {
                if let Some(last) = rels.last_mut() {
                    last.span.1 = r.buffer_position() as usize;
                }
            }
            Event::End(e) if e.local_name().into_inner().as_bytes() == b"Relationships" => {
                end_tag = Some(start)
            }
            Event::Eof => break,
            _ => {}
        }
    }
    let end_tag = end_tag.ok_or_else(|| bad("no closing </Relationships>".to_string()))?;
    Ok(Rels {
        text,
        rels,
        end_tag,
        prefix,
        empty_root,
    })
}

/// A parsed `[Content_Types].xml`.
pub(crate) struct ContentTypes {
    pub text: String,
    /// `(part name without leading slash, lower-cased; span)` of every `<Override>`.
    pub overrides: Vec<(String, (usize, usize))>,
    pub end_tag: usize,
    pub prefix: String,
}

pub(crate) fn parse_content_types(display: &str, text: String) -> Result<ContentTypes, Error> {
    let bad = |e: String| Error::unreadable(display, format!("[Content_Types].xml: {e}"));
    let mut r = xml::reader(&text);
    let mut overrides = Vec::new();
    let mut end_tag = None;
    let mut prefix = String::new();
    loop {
        let start = r.buffer_position() as usize;
        match r.read_event().map_err(|e| bad(e.to_string()))? {
            Event::Start(e) | Event::Empty(e) if xml::local(&e) == b"Types" => {
                prefix = xml::prefix_of(&e)
            }
            Event::Start(e) | Event::Empty(e) if xml::local(&e) == b"Override" => {
                let part = xml::attr(&e, b"PartName").unwrap_or_default();
                let key = part.trim_start_matches('/').to_lowercase();
                overrides.push((key, (start, r.buffer_position() as usize)));
            }
            Event::End(e) if e.local_name().into_inner().as_bytes() == b"Override" => {
                if let Some(last) = overrides.last_mut() {
                    last.1.1 = r.buffer_position() as usize;
                }
            }
            Event::End(e) if e.local_name().into_inner().as_bytes() == b"Types" => {
                end_tag = Some(start)
            }
            Event::Eof => break,
            _ => {}
        }
    }
    let end_tag = end_tag.ok_or_else(|| bad("no closing </Types>".to_string()))?;
    Ok(ContentTypes {
        text,
        overrides,
        end_tag,
        prefix,
    })
}

/// One `<sheet>` of `workbook.xml`.
#[derive(Debug, Clone)]
pub(crate) struct SheetEntry {
    pub name: String,
    pub sheet_id: u32,
    pub rid: String,
    pub span: (usize, usize),
}

/// One `<definedName>`.
#[derive(Debug, Clone)]
pub(crate) struct DefinedName {
    pub name: String,
    pub local_sheet: Option<u32>,
    pub formula: String,
    /// The whole element, and its start tag.
    pub span: (usize, usize),
    pub start_tag: (usize, usize),
    pub empty: bool,
}

/// The parts of `workbook.xml` a patch reads or edits.
pub(crate) struct WorkbookXml {
    pub text: String,
    /// The SpreadsheetML main namespace (transitional or strict).
    pub main_ns: String,
    /// The officeDocument relationships namespace and a prefix bound to it on the root.
    pub rel_ns: String,
    pub rel_prefix: Option<String>,
    pub elem_prefix: String,
    pub sheets: Vec<SheetEntry>,
    /// Between the `<sheets>` start tag and `</sheets>`.
    pub sheets_inner: (usize, usize),
    pub defined_names: Vec<DefinedName>,
    /// The `<calcPr>` start tag: span, self-closing, `iterate` set.
    pub calc_pr: Option<((usize, usize), bool, bool)>,
    /// Where a missing `<calcPr>` goes (after sheets/definedNames, per the schema order).
    pub calc_pr_insert: usize,
    pub date1904: bool,
    /// `<workbookView>` start tags: span, self-closing.
    pub views: Vec<((usize, usize), bool)>,
}

const TRANSITIONAL_MAIN: &str = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
const TRANSITIONAL_REL: &str =
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const STRICT_REL: &str = "http://purl.oclc.org/ooxml/officeDocument/relationships";

pub(crate) fn parse_workbook(
    display: &str,
    part: &str,
    text: String,
) -> Result<WorkbookXml, Error> {
    let bad = |e: String| Error::unreadable(display, format!("{part}: {e}"));
    let mut r = xml::reader(&text);
    let mut wb = WorkbookXml {
        text: String::new(),
        main_ns: TRANSITIONAL_MAIN.to_string(),
        rel_ns: TRANSITIONAL_REL.to_string(),
        rel_prefix: None,
        elem_prefix: String::new(),
        sheets: Vec::new(),
        sheets_inner: (0, 0),
        defined_names: Vec::new(),
        calc_pr: None,
        calc_pr_insert: 0,
        date1904: false,
        views: Vec::new(),
    };
    let mut depth = 0usize;
    let mut sheets_start = None;
    let mut current_name: Option<(DefinedName, xml::TextBuf)> = None;
    loop {
        let start = r.buffer_position() as usize;
        let event = r.read_event().map_err(|e| bad(e.to_string()))?;
        let end = r.buffer_position() as usize;
        if let Some((_, buf)) = current_name.as_mut()
            && buf.push(&event)
        {
            continue;
        }
        match &event {
            Event::Start(e) | Event::Empty(e) => {
                let empty = matches!(event, Event::Empty(_));
                let name = xml::local(e);
                if depth == 0 {
                    wb.elem_prefix = xml::prefix_of(e);
                    for a in e.attributes().with_checks(false).flatten() {
                        let key = a.key.into_inner().as_bytes();
                        let value = a.value.to_string();
                        if key == b"xmlns" {
                            wb.main_ns = value;
                        } else if let Some(p) = key.strip_prefix(b"xmlns:") {
                            if value == TRANSITIONAL_REL || value == STRICT_REL {
                                wb.rel_ns = value.clone();
                                wb.rel_prefix = Some(String::from_utf8_lossy(p).into_owned());
                            } else if wb.elem_prefix.as_bytes().strip_suffix(b":") == Some(p) {
                                wb.main_ns = value;
                            }
                        }
                    }
                    if wb.main_ns.contains("purl.oclc.org") && wb.rel_prefix.is_none() {
                        wb.rel_ns = STRICT_REL.to_string();
                    }
                } else if depth == 1 {
                    match name {
                        b"sheets" => sheets_start = Some(end),
                        b"workbookPr" => {
                            wb.date1904 =
                                xml::attr(e, b"date1904").is_some_and(|v| v == "1" || v == "true");
                        }
                        b"functionGroups" | b"externalReferences" | b"definedNames" if empty => {
                            wb.calc_pr_insert = wb.calc_pr_insert.max(end);
                        }
                        b"calcPr" => {
                            let iterate =
                                xml::attr(e, b"iterate").is_some_and(|v| v == "1" || v == "true");
                            wb.calc_pr = Some(((start, end), empty, iterate));
                        }
                        _ => {}
                    }
                } else if depth == 2 {
                    match name {
                        b"sheet" => wb.sheets.push(SheetEntry {
                            name: xml::attr(e, b"name").unwrap_or_default(),
                            sheet_id: xml::attr(e, b"sheetId")
                                .and_then(|v| v.parse().ok())
                                .unwrap_or(0),
                            rid: rel_id(e).unwrap_or_default(),
                            span: (start, end),
                        }),
                        b"workbookView" => wb.views.push(((start, end), empty)),
                        b"definedName" => {
                            let dn = DefinedName {
                                name: xml::attr(e, b"name").unwrap_or_default(),
                                local_sheet: xml::attr(e, b"localSheetId")
                                    .and_then(|v| v.parse().ok()),
                                formula: String::new(),
                                span: (start, end),
                                start_tag: (start, end),
                                empty,
                            };
                            if empty {
                                wb.defined_names.push(dn);
                            } else {
                                current_name = Some((dn, xml::TextBuf::default()));
                            }
                        }
                        _ => {}
                    }
                }
                if !empty {
                    depth += 1;
                }
            }
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                let name = e.local_name().into_inner().as_bytes();
                if depth == 2
                    && name == b"definedName"
                    && let Some((mut dn, buf)) = current_name.take()
                {
                    dn.formula = buf.text;
                    dn.span.1 = end;
                    wb.defined_names.push(dn);
                }
                if depth == 1 {
                    match name {
                        b"sheets" => {
                            wb.sheets_inner = (sheets_start.unwrap_or(start), start);
                            wb.calc_pr_insert = wb.calc_pr_insert.max(end);
                        }
                        b"functionGroups" | b"externalReferences" | b"definedNames" => {
                            wb.calc_pr_insert = wb.calc_pr_insert.max(end);
                        }
                        _ => {}
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if wb.sheets.is_empty() || sheets_start.is_none() {
        return Err(bad("no <sheets> in the workbook".to_string()));
    }
    wb.text = text;
    Ok(wb)
}

/// The `r:id` of a `<sheet>`: the `id` attribute in any namespace prefix.
fn rel_id(e: &quick_xml::events::BytesStart<'_>) -> Option<String> {
    for a in e.attributes().with_checks(false).flatten() {
        let key = a.key.into_inner().as_bytes();
        if key.ends_with(b":id") && !key.starts_with(b"xmlns") {
            return Some(a.value.to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_targets() {
        for (src, target, want) in [
            (
                "xl/workbook.xml",
                "worksheets/sheet1.xml",
                "xl/worksheets/sheet1.xml",
            ),
            (
                "xl/workbook.xml",
                "/xl/worksheets/sheet1.xml",
                "xl/worksheets/sheet1.xml",
            ),
            (
                "xl/worksheets/sheet1.xml",
                "../drawings/drawing1.xml",
                "xl/drawings/drawing1.xml",
            ),
            ("", "xl/workbook.xml", "xl/workbook.xml"),
        ] {
            assert_eq!(resolve_target(src, target), want);
        }
        assert_eq!(
            rels_part_of("xl/workbook.xml"),
            "xl/_rels/workbook.xml.rels"
        );
        assert_eq!(percent_decode("a%20b"), "a b");
    }
}
