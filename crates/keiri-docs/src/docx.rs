//! `.docx` text: paragraphs and tables of the main document part, in document order.
//!
//! The XML is read with a pull parser (no tree, no recursion), so deep nesting costs a
//! `Vec` entry, not stack. Elements are matched by local name, which also covers Strict OOXML
//! (other namespace URIs, same names). Table rows become tab-separated lines; text inside a
//! table cell is joined with spaces so one row stays one line. Drawings, VML pictures, deleted
//! text, field instructions and the `mc:Fallback` copies of drawings are skipped.

use quick_xml::Reader;
use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::Event;

use crate::error::{Error, Result};
use crate::zipguard::{self, ZipLimits};

const FORMAT: &str = "docx";

/// The text of a `.docx` file, and whether it was cut at `max_chars`.
pub(crate) fn extract(bytes: &[u8], max_chars: Option<usize>) -> Result<(String, bool)> {
    let limits = ZipLimits::default();
    let mut archive = zipguard::open(bytes, FORMAT, &limits)?;
    let main = main_part_name(&mut archive, &limits)?;
    let xml = zipguard::read_entry(&mut archive, &main, FORMAT, &limits)?
        .ok_or_else(|| Error::corrupt(FORMAT, format!("missing main document part {main}")))?;
    let xml = std::str::from_utf8(xml.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&xml))
        .map_err(|_| Error::corrupt(FORMAT, "main document part is not UTF-8"))?;
    document_text(xml, max_chars)
}

/// Finds the main document part through the package relationships (it is almost always
/// `word/document.xml`, but the relationship is what Word itself follows).
fn main_part_name(
    archive: &mut zip::ZipArchive<std::io::Cursor<&[u8]>>,
    limits: &ZipLimits,
) -> Result<String> {
    const DEFAULT: &str = "word/document.xml";
    let small = ZipLimits {
        max_entry_bytes: 1024 * 1024,
        ..*limits
    };
    let Some(rels) = zipguard::read_entry(archive, "_rels/.rels", FORMAT, &small)? else {
        return Ok(DEFAULT.to_string());
    };
    let Ok(rels) = std::str::from_utf8(&rels) else {
        return Ok(DEFAULT.to_string());
    };
    let mut reader = Reader::from_str(rels);
    loop {
        match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) if e.local_name().as_ref() == "Relationship" => {
                let mut is_main = false;
                let mut target = None;
                for attr in e.attributes().flatten() {
                    let value = attr
                        .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                        .map(|v| v.into_owned())
                        .unwrap_or_default();
                    match attr.key.local_name().as_ref() {
                        "Type" => is_main = value.ends_with("/officeDocument"),
                        "Target" => target = Some(value),
                        _ => {}
                    }
                }
                if let (true, Some(t)) = (is_main, target) {
                    return Ok(t.trim_start_matches('/').to_string());
                }
            }
            Ok(Event::Eof) | Err(_) => return Ok(DEFAULT.to_string()),
            _ => {}
        }
    }
}

/// Elements whose whole content is not document text.
fn is_skipped(name: &str) -> bool {
    matches!(
        name,
        "pPr"
            | "rPr"
            | "sectPr"
            | "tblPr"
            | "tblGrid"
            | "trPr"
            | "tcPr"
            | "drawing"
            | "pict"
            | "object"
            | "Fallback"
            | "delText"
            | "instrText"
            | "del"
            | "moveFrom"
    )
}

struct Table {
    row: Vec<String>,
    cell: Option<String>,
}

struct Builder {
    out: String,
    chars: usize,
    max_chars: Option<usize>,
    truncated: bool,
    tables: Vec<Table>,
    paragraph: String,
}

impl Builder {
    fn in_table(&self) -> bool {
        !self.tables.is_empty()
    }

    fn push_text(&mut self, s: &str) {
        if self.in_table() {
            // Tabs and line breaks would break the one-row-one-line layout.
            for c in s.chars() {
                self.paragraph
                    .push(if c == '\t' || c == '\n' { ' ' } else { c });
            }
        } else {
            self.paragraph.push_str(s);
        }
    }

    fn end_paragraph(&mut self) {
        let text = std::mem::take(&mut self.paragraph);
        match self.tables.last_mut() {
            Some(table) => {
                let cell = table.cell.get_or_insert_with(String::new);
                let text = text.trim();
                if !text.is_empty() {
                    if !cell.is_empty() {
                        cell.push(' ');
                    }
                    cell.push_str(text);
                }
            }
            None => self.emit_line(&text),
        }
    }

    fn end_cell(&mut self) {
        if let Some(table) = self.tables.last_mut() {
            let cell = table.cell.take().unwrap_or_default();
            table.row.push(cell);
        }
    }

    fn end_row(&mut self) {
        let depth = self.tables.len();
        let Some(table) = self.tables.last_mut() else {
            return;
        };
        let mut row = std::mem::take(&mut table.row);
        while row.last().is_some_and(String::is_empty) {
            row.pop();
        }
        if depth > 1 {
            // A nested table is flattened into the enclosing cell.
            let joined = row.join(" ");
            if let Some(outer) = self.tables.get_mut(depth - 2) {
                let cell = outer.cell.get_or_insert_with(String::new);
                if !joined.is_empty() {
                    if !cell.is_empty() {
                        cell.push_str(" / ");
                    }
                    cell.push_str(&joined);
                }
            }
        } else {
            let line = row.join("\t");
            self.emit_line(&line);
        }
    }

    fn emit_line(&mut self, line: &str) {
        if self.truncated {
            return;
        }
        let needed = line.chars().count() + usize::from(!self.out.is_empty());
        if let Some(max) = self.max_chars
            && self.chars + needed > max
        {
            let room = max.saturating_sub(self.chars + usize::from(!self.out.is_empty()));
            if room > 0 {
                if !self.out.is_empty() {
                    self.out.push('\n');
                }
                self.out.extend(line.chars().take(room));
            }
            self.chars = max;
            self.truncated = true;
            return;
        }
        if !self.out.is_empty() {
            self.out.push('\n');
        }
        self.out.push_str(line);
        self.chars += needed;
    }
}

/// Converts the main document XML to text.
pub(crate) fn document_text(xml: &str, max_chars: Option<usize>) -> Result<(String, bool)> {
    let mut reader = Reader::from_str(xml);
    reader.config_mut().check_end_names = false;
    let mut b = Builder {
        out: String::new(),
        chars: 0,
        max_chars,
        truncated: false,
        tables: Vec::new(),
        paragraph: String::new(),
    };
    let mut skip_depth = 0usize;
    let mut in_text = false;
    let mut in_body = false;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| Error::corrupt(FORMAT, format!("XML error: {e}")))?;
        if b.truncated {
            break;
        }
        match event {
            Event::Start(e) => {
                let name = e.local_name();
                let name = name.as_ref();
                if skip_depth > 0 {
                    skip_depth += 1;
                    continue;
                }
                if is_skipped(name) {
                    skip_depth = 1;
                    continue;
                }
                match name {
                    "body" => in_body = true,
                    "t" => in_text = true,
                    "tbl" if in_body => b.tables.push(Table {
                        row: Vec::new(),
                        cell: None,
                    }),
                    "tc" => {
                        if let Some(t) = b.tables.last_mut() {
                            t.cell = Some(String::new());
                        }
                    }
                    _ => {}
                }
            }
            Event::Empty(e) => {
                if skip_depth > 0 || !in_body {
                    continue;
                }
                match e.local_name().as_ref() {
                    "tab" | "ptab" => b.push_text("\t"),
                    "br" | "cr" => b.push_text("\n"),
                    "noBreakHyphen" => b.push_text("-"),
                    "p" => b.end_paragraph(),
                    "tc" => b.end_cell(),
                    _ => {}
                }
            }
            Event::End(e) => {
                if skip_depth > 0 {
                    skip_depth -= 1;
                    continue;
                }
                match e.local_name().as_ref() {
                    "body" => in_body = false,
                    "t" => in_text = false,
                    "p" if in_body => b.end_paragraph(),
                    "tc" => b.end_cell(),
                    "tr" => b.end_row(),
                    "tbl" => {
                        b.tables.pop();
                    }
                    _ => {}
                }
            }
            Event::Text(t) if in_text && skip_depth == 0 => b.push_text(&t.xml10_content()),
            Event::CData(t) if in_text && skip_depth == 0 => b.push_text(&t.xml10_content()),
            Event::GeneralRef(r) if in_text && skip_depth == 0 => {
                if let Ok(Some(c)) = r.resolve_char_ref() {
                    let mut buf = [0u8; 4];
                    b.push_text(c.encode_utf8(&mut buf));
                } else if let Some(s) = resolve_predefined_entity(&r) {
                    b.push_text(s);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok((b.out, b.truncated))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(body: &str, expect: &str) {
        let xml = format!(
            r#"<?xml version="1.0"?><w:document xmlns:w="urn:w"><w:body>{body}</w:body></w:document>"#
        );
        let (text, truncated) = document_text(&xml, None).unwrap();
        assert_eq!(text, expect);
        assert!(!truncated);
    }

    fn p(s: &str) -> String {
        format!("<w:p><w:r><w:t>{s}</w:t></w:r></w:p>")
    }

    #[test]
    fn paragraphs_and_tables_in_order() {
        check(&p("a"), "a");
        check(&format!("{}{}", p("a"), p("b")), "a\nb");
        check("<w:p/>", "");
        check(
            &format!(
                "{}<w:tbl><w:tblPr><w:tblW/></w:tblPr><w:tr><w:tc>{}</w:tc><w:tc>{}</w:tc></w:tr>\
                 <w:tr><w:tc>{}{}</w:tc><w:tc/></w:tr></w:tbl>{}",
                p("before"),
                p("品目"),
                p("金額"),
                p("紙"),
                p("A4"),
                p("after")
            ),
            "before\n品目\t金額\n紙 A4\nafter",
        );
        check(
            "<w:p><w:pPr><w:tabs><w:tab w:val=\"left\"/></w:tabs></w:pPr>\
             <w:r><w:t>x</w:t><w:tab/><w:t>y</w:t><w:br/><w:t xml:space=\"preserve\"> z &amp; &#x41;</w:t></w:r></w:p>",
            "x\ty\n z & A",
        );
        check(
            "<w:p><w:r><w:t>keep</w:t></w:r><w:del><w:r><w:delText>gone</w:delText></w:r></w:del>\
             <w:r><w:drawing><w:t>img</w:t></w:drawing></w:r></w:p>",
            "keep",
        );
        // A nested table is flattened into its cell.
        check(
            &format!(
                "<w:tbl><w:tr><w:tc>{}<w:tbl><w:tr><w:tc>{}</w:tc><w:tc>{}</w:tc></w:tr></w:tbl></w:tc>\
                 <w:tc>{}</w:tc></w:tr></w:tbl>",
                p("outer"),
                p("i1"),
                p("i2"),
                p("right")
            ),
            "outer / i1 i2\tright",
        );
    }

    #[test]
    fn max_chars_cuts() {
        let xml = format!(
            "<w:document><w:body>{}{}</w:body></w:document>",
            p("abcdef"),
            p("ghij")
        );
        assert_eq!(
            document_text(&xml, Some(8)).unwrap(),
            ("abcdef\ng".to_string(), true)
        );
    }
}
