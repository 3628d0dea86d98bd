//! The XML of single cells and new rows: rendering a cell's content, parsing a `<c>` element,
//! and the shared string table.

use quick_xml::events::Event;

use super::{CellXml, Content, Edit, FormulaXml};
use crate::a1::{CellRef, column_name};
use crate::xml::{self, TextBuf};

/// A `<row>` for a row number the sheet did not have (empty when no cell needs writing).
pub(super) fn new_row(
    p: &str,
    number: u32,
    edits: &[(CellRef, &Edit)],
    height: Option<f64>,
) -> String {
    let cells: String = edits
        .iter()
        .filter_map(|(at, e)| render_cell(p, *at, e.style.as_deref(), &e.content))
        .collect();
    let ht = height
        .map(|h| format!(" ht=\"{}\" customHeight=\"1\"", format_number(h)))
        .unwrap_or_default();
    if cells.is_empty() {
        if ht.is_empty() {
            return String::new();
        }
        return format!("<{p}row r=\"{number}\"{ht}/>");
    }
    format!("<{p}row r=\"{number}\"{ht}>{cells}</{p}row>")
}

/// Whether a row start tag has no attribute but its number and spans.
pub(super) fn only_row_number(tag: &str) -> bool {
    let mut r = xml::reader(tag);
    match r.read_event() {
        Ok(quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e)) => e
            .attributes()
            .with_checks(false)
            .all(|a| a.is_ok_and(|a| matches!(a.key.local_name().into_inner(), "r" | "spans"))),
        _ => false,
    }
}

pub(super) fn tag_attr(tag: &str, name: &[u8]) -> Option<String> {
    let mut r = xml::reader(tag);
    match r.read_event().ok()? {
        Event::Start(e) | Event::Empty(e) => xml::attr(&e, name),
        _ => None,
    }
}

/// A `<c>` with its start tag rewritten: `r` added for an implicit cell, `s` set (0 removes it).
pub(super) fn rewrite_cell_tag(
    cell_xml: &str,
    at: CellRef,
    implicit: bool,
    style: Option<u32>,
) -> String {
    let Some(tag_end) = cell_xml.find('>') else {
        return cell_xml.to_string();
    };
    let empty = cell_xml.get(..tag_end).is_some_and(|t| t.ends_with('/'));
    let tag = cell_xml.get(..=tag_end).unwrap_or("");
    let r = at.to_a1();
    let s = style.map(|s| s.to_string());
    let mut set: Vec<(&str, &str)> = Vec::new();
    let mut remove: Vec<&str> = Vec::new();
    if implicit {
        set.push(("r", &r));
    }
    match (style, &s) {
        (Some(0), _) => remove.push("s"),
        (Some(_), Some(text)) => set.push(("s", text)),
        _ => {}
    }
    match xml::rewrite_start_tag(tag, &set, &remove, empty) {
        Some(new) => format!("{new}{}", cell_xml.get(tag_end + 1..).unwrap_or("")),
        None => cell_xml.to_string(),
    }
}

/// A number as SpreadsheetML stores it: the shortest text that reads back to the same double.
pub(crate) fn format_number(n: f64) -> String {
    let a = n.abs();
    if n == 0.0 {
        "0".to_string()
    } else if (1e-6..1e15).contains(&a) {
        format!("{n}")
    } else {
        format!("{n:E}")
    }
}

/// The `<c>` element for a content, or `None` for an empty unstyled cell (it is left out).
pub(super) fn render_cell(
    p: &str,
    at: CellRef,
    style: Option<&str>,
    content: &Content,
) -> Option<String> {
    let r = format!("{}{}", column_name(at.col), at.row);
    let s = style
        .map(|s| format!(" s=\"{}\"", xml::escape_attr(s)))
        .unwrap_or_default();
    Some(match content {
        Content::Empty => {
            style?;
            format!("<{p}c r=\"{r}\"{s}/>")
        }
        Content::Number(n) => format!(
            "<{p}c r=\"{r}\"{s}><{p}v>{}</{p}v></{p}c>",
            format_number(*n)
        ),
        Content::Bool(b) => format!(
            "<{p}c r=\"{r}\"{s} t=\"b\"><{p}v>{}</{p}v></{p}c>",
            u8::from(*b)
        ),
        Content::Text(t) => {
            let space = if t.trim() != t || t.contains('\n') {
                " xml:space=\"preserve\""
            } else {
                ""
            };
            let body = xml::escape_text(&xml::encode_xstring(t));
            format!(
                "<{p}c r=\"{r}\"{s} t=\"inlineStr\"><{p}is><{p}t{space}>{body}</{p}t></{p}is></{p}c>"
            )
        }
        Content::Error(e) => format!(
            "<{p}c r=\"{r}\"{s} t=\"e\"><{p}v>{}</{p}v></{p}c>",
            xml::escape_text(e)
        ),
        Content::Date(d) => format!(
            "<{p}c r=\"{r}\"{s} t=\"d\"><{p}v>{}</{p}v></{p}c>",
            xml::escape_text(d)
        ),
        Content::Formula {
            text,
            array,
            cached,
        } => {
            let t = cached
                .as_ref()
                .and_then(|c| c.t.as_deref())
                .map(|t| format!(" t=\"{}\"", xml::escape_attr(t)))
                .unwrap_or_default();
            let f = match array {
                Some(a) => format!(
                    "<{p}f t=\"array\" ref=\"{}\">{}</{p}f>",
                    a.to_a1(),
                    xml::escape_text(text)
                ),
                None => format!("<{p}f>{}</{p}f>", xml::escape_text(text)),
            };
            let v = cached
                .as_ref()
                .map(|c| format!("<{p}v>{}</{p}v>", xml::escape_text(&c.v)))
                .unwrap_or_default();
            format!("<{p}c r=\"{r}\"{s}{t}>{f}{v}</{p}c>")
        }
    })
}

/// Parses one `<c>` element.
pub(super) fn parse_cell(text: &str) -> Option<CellXml> {
    let mut r = xml::reader(text);
    let mut out = CellXml::default();
    let mut depth = 0usize;
    let mut buf: Option<TextBuf> = None;
    let mut target = "";
    let mut in_phonetic = 0usize;
    loop {
        let event = r.read_event().ok()?;
        if in_phonetic == 0
            && let Some(b) = buf.as_mut()
            && b.push(&event)
        {
            continue;
        }
        match &event {
            Event::Start(e) | Event::Empty(e) => {
                let empty = matches!(event, Event::Empty(_));
                match (depth, xml::local(e)) {
                    (0, b"c") => {
                        out.style = xml::attr(e, b"s");
                        out.t = xml::attr(e, b"t");
                    }
                    (1, b"v") if !empty => {
                        buf = Some(TextBuf::default());
                        target = "v";
                    }
                    (1, b"v") => out.v = Some(String::new()),
                    (1, b"f") => {
                        out.f = Some(FormulaXml {
                            t: xml::attr(e, b"t"),
                            si: xml::attr(e, b"si").and_then(|v| v.parse().ok()),
                            range: xml::attr(e, b"ref"),
                            text: String::new(),
                        });
                        if !empty {
                            buf = Some(TextBuf::default());
                            target = "f";
                        }
                    }
                    (1, b"is") => out.inline = Some(String::new()),
                    (_, b"rPh") if !empty => in_phonetic += 1,
                    (_, b"t") if !empty && in_phonetic == 0 && out.inline.is_some() => {
                        buf = Some(TextBuf::default());
                        target = "t";
                    }
                    _ => {}
                }
                if !empty {
                    depth += 1;
                }
            }
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                let name = e.local_name().into_inner().as_bytes();
                if name == b"rPh" {
                    in_phonetic = in_phonetic.saturating_sub(1);
                }
                if let Some(b) = buf.take() {
                    match target {
                        "v" => out.v = Some(b.text),
                        "f" => {
                            if let Some(f) = out.f.as_mut() {
                                f.text = b.text;
                            }
                        }
                        _ => {
                            if let Some(s) = out.inline.as_mut() {
                                s.push_str(&xml::decode_xstring(&b.text));
                            }
                        }
                    }
                }
                if depth == 0 {
                    return Some(out);
                }
            }
            Event::Eof => return Some(out),
            _ => {}
        }
    }
}

/// The shared string table: the plain text of every `<si>` (phonetic runs left out).
pub(crate) fn parse_shared_strings(text: &str) -> Result<Vec<String>, String> {
    let mut r = xml::reader(text);
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    let mut buf: Option<TextBuf> = None;
    let mut in_phonetic = 0usize;
    loop {
        let event = r.read_event().map_err(|e| e.to_string())?;
        if let Some(b) = buf.as_mut()
            && b.push(&event)
        {
            continue;
        }
        match &event {
            Event::Start(e) => match xml::local(e) {
                b"si" => current = Some(String::new()),
                b"rPh" => in_phonetic += 1,
                b"t" if in_phonetic == 0 && current.is_some() => buf = Some(TextBuf::default()),
                _ => {}
            },
            Event::Empty(e) if xml::local(e) == b"si" => out.push(String::new()),
            Event::End(e) => match e.local_name().into_inner().as_bytes() {
                b"t" => {
                    if let (Some(b), Some(s)) = (buf.take(), current.as_mut()) {
                        s.push_str(&xml::decode_xstring(&b.text));
                    }
                }
                b"rPh" => in_phonetic = in_phonetic.saturating_sub(1),
                b"si" => out.push(current.take().unwrap_or_default()),
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(out)
}
