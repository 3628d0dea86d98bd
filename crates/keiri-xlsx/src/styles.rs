//! `xl/styles.xml` for the styling ops: a cell's new look is a new cell format (`xf`) derived
//! from its current one, with a derived font, fill or border.
//!
//! The part is never re-serialised. A derived element is compared (in a canonical form:
//! attributes sorted, whitespace ignored) with the existing ones and an identical one is reused;
//! only when none exists is it appended at the end of its list, with the list's `count`
//! updated. Every existing element keeps its bytes and its index, which is also what makes the
//! inverse op exact: pointing a cell back at its old index restores every attribute.

use std::collections::HashMap;

use quick_xml::events::Event;

use crate::xml;

/// The four lists a cell format refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListKind {
    Fonts = 0,
    Fills = 1,
    Borders = 2,
    CellXfs = 3,
}

const LIST_NAMES: [&[u8]; 4] = [b"fonts", b"fills", b"borders", b"cellXfs"];

#[derive(Debug, Default)]
struct List {
    /// The start tag's span, and whether it is self-closing.
    start_tag: Option<(usize, usize, bool)>,
    /// Where `</fonts>` (etc.) starts: new items are inserted there.
    end_tag: usize,
    items: Vec<(usize, usize)>,
    added: Vec<String>,
    /// Canonical form → index, built on first use.
    canon: Option<HashMap<String, usize>>,
}

/// What a styling op changes in a cell's format. Colours are ARGB (`FFRRGGBB`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct StyleChange {
    pub bold: Option<bool>,
    pub size: Option<f64>,
    pub font_color: Option<String>,
    pub fill_color: Option<String>,
    pub grid_border: bool,
    pub horizontal: Option<&'static str>,
    pub vertical: Option<&'static str>,
    pub wrap: Option<bool>,
    /// A number format code (`yyyy/mm/dd`): an existing `<numFmt>` with that code, or a new one.
    pub number_format: Option<&'static str>,
}

impl StyleChange {
    fn touches_font(&self) -> bool {
        self.bold.is_some() || self.size.is_some() || self.font_color.is_some()
    }

    fn touches_alignment(&self) -> bool {
        self.horizontal.is_some() || self.vertical.is_some() || self.wrap.is_some()
    }
}

/// The `<numFmts>` list: custom number formats, referred to by their `numFmtId`, not by
/// position.
#[derive(Debug, Default)]
struct NumFmts {
    /// The start tag's span, and whether it is self-closing.
    start_tag: Option<(usize, usize, bool)>,
    /// Where `</numFmts>` starts.
    end_tag: usize,
    /// (numFmtId, formatCode) of the existing formats.
    existing: Vec<(u32, String)>,
    added: Vec<(u32, String)>,
}

/// Custom number formats start at this id; lower ids are Excel's built-in formats.
const FIRST_CUSTOM_NUM_FMT: u32 = 164;

pub(crate) struct Styles {
    text: String,
    prefix: String,
    lists: [List; 4],
    num_fmts: NumFmts,
    /// The end of the root start tag: a missing `<numFmts>` goes after it when there is no
    /// `<fonts>` list to go before.
    root_end: usize,
    /// (xf index, change) → derived xf index, so a range of cells sharing a format derives once.
    memo: HashMap<(usize, String), usize>,
}

/// An element split into its start tag and its child elements (text between them dropped).
struct Element {
    start_tag: String,
    qname: String,
    children: Vec<(String, String)>,
}

impl Element {
    fn parse(text: &str) -> Option<Element> {
        let mut r = xml::reader(text);
        let mut depth = 0usize;
        let mut out: Option<Element> = None;
        let mut child_start = 0usize;
        let mut child_name = String::new();
        loop {
            let start = r.buffer_position() as usize;
            let event = r.read_event().ok()?;
            let end = r.buffer_position() as usize;
            match &event {
                Event::Start(e) | Event::Empty(e) => {
                    let empty = matches!(event, Event::Empty(_));
                    if depth == 0 {
                        out = Some(Element {
                            start_tag: text.get(start..end)?.to_string(),
                            qname: String::from_utf8_lossy(e.name().into_inner().as_bytes())
                                .into_owned(),
                            children: Vec::new(),
                        });
                        if empty {
                            return out;
                        }
                    } else if depth == 1 {
                        let name = String::from_utf8_lossy(xml::local(e)).into_owned();
                        if empty {
                            out.as_mut()?
                                .children
                                .push((name, text.get(start..end)?.to_string()));
                        } else {
                            child_start = start;
                            child_name = name;
                        }
                    }
                    if !empty {
                        depth += 1;
                    }
                }
                Event::End(_) => {
                    depth = depth.saturating_sub(1);
                    if depth == 1 {
                        let raw = text.get(child_start..end)?.to_string();
                        out.as_mut()?
                            .children
                            .push((std::mem::take(&mut child_name), raw));
                    } else if depth == 0 {
                        return out;
                    }
                }
                Event::Eof => return out,
                _ => {}
            }
        }
    }

    /// Replaces (or removes, with `None`) every child named `name`, inserting the new one in
    /// the position `order` gives it.
    fn set_child(&mut self, name: &str, new: Option<String>, order: &[&str]) {
        let rank = |n: &str| order.iter().position(|o| *o == n).unwrap_or(order.len());
        let existing = self.children.iter().position(|(n, _)| n == name);
        self.children.retain(|(n, _)| n != name);
        let Some(new) = new else { return };
        let at = match existing {
            Some(i) => i.min(self.children.len()),
            None => self
                .children
                .iter()
                .position(|(n, _)| rank(n) > rank(name))
                .unwrap_or(self.children.len()),
        };
        self.children.insert(at, (name.to_string(), new));
    }

    fn child(&self, name: &str) -> Option<&str> {
        self.children
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, raw)| raw.as_str())
    }

    fn render(&self, set: &[(&str, &str)]) -> String {
        if self.children.is_empty() {
            return xml::rewrite_start_tag(&self.start_tag, set, &[], true)
                .unwrap_or_else(|| self.start_tag.clone());
        }
        let mut out = xml::rewrite_start_tag(&self.start_tag, set, &[], false)
            .unwrap_or_else(|| self.start_tag.clone());
        for (_, raw) in &self.children {
            out.push_str(raw);
        }
        out.push_str(&format!("</{}>", self.qname));
        out
    }
}

const FONT_ORDER: &[&str] = &[
    "b",
    "i",
    "strike",
    "condense",
    "extend",
    "outline",
    "shadow",
    "u",
    "vertAlign",
    "sz",
    "color",
    "name",
    "family",
    "charset",
    "scheme",
];
const BORDER_ORDER: &[&str] = &[
    "start",
    "left",
    "end",
    "right",
    "top",
    "bottom",
    "diagonal",
    "vertical",
    "horizontal",
];
const XF_ORDER: &[&str] = &["alignment", "protection", "extLst"];

/// An element in a form where equal formats compare equal: attributes sorted, whitespace
/// between elements ignored.
fn canonical(text: &str) -> String {
    let mut r = xml::reader(text);
    let mut out = String::new();
    loop {
        match r.read_event() {
            Ok(Event::Start(e)) | Ok(Event::Empty(e)) => {
                let mut attrs: Vec<(String, String)> = e
                    .attributes()
                    .with_checks(false)
                    .flatten()
                    .map(|a| {
                        (
                            a.key.local_name().into_inner().to_string(),
                            a.value.to_string(),
                        )
                    })
                    .collect();
                attrs.sort();
                out.push('<');
                out.push_str(&String::from_utf8_lossy(xml::local(&e)));
                for (k, v) in attrs {
                    out.push_str(&format!(" {k}={v:?}"));
                }
                out.push('>');
            }
            Ok(Event::End(_)) => out.push_str("</>"),
            Ok(Event::Text(t)) => {
                let t = t.xml10_content();
                out.push_str(t.trim());
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    out
}

fn number_text(n: f64) -> String {
    crate::sheet::format_number(n)
}

impl Styles {
    /// Scans the part. `Err` is a reason the styling ops cannot use it.
    pub fn parse(text: String) -> Result<Styles, String> {
        let mut lists: [List; 4] = Default::default();
        let mut num_fmts = NumFmts::default();
        let mut in_num_fmts = false;
        let mut root_end = 0usize;
        let mut prefix = String::new();
        let mut r = xml::reader(&text);
        let mut depth = 0usize;
        let mut current: Option<usize> = None;
        let mut item_start = 0usize;
        loop {
            let start = r.buffer_position() as usize;
            let event = r
                .read_event()
                .map_err(|e| format!("styles.xml: {e} near byte {start}"))?;
            let end = r.buffer_position() as usize;
            match &event {
                Event::Start(e) | Event::Empty(e) => {
                    let empty = matches!(event, Event::Empty(_));
                    match depth {
                        0 => {
                            prefix = xml::prefix_of(e);
                            root_end = end;
                        }
                        1 if xml::local(e) == b"numFmts" => {
                            num_fmts.start_tag = Some((start, end, empty));
                            num_fmts.end_tag = end;
                            in_num_fmts = !empty;
                        }
                        2 if in_num_fmts && xml::local(e) == b"numFmt" => {
                            let id = xml::attr(e, b"numFmtId").and_then(|v| v.trim().parse().ok());
                            let code = xml::attr(e, b"formatCode").unwrap_or_default();
                            if let Some(id) = id {
                                num_fmts.existing.push((id, code));
                            }
                        }
                        1 => {
                            let name = xml::local(e);
                            if let Some(k) = LIST_NAMES.iter().position(|n| *n == name)
                                && let Some(list) = lists.get_mut(k)
                            {
                                list.start_tag = Some((start, end, empty));
                                list.end_tag = end;
                                if !empty {
                                    current = Some(k);
                                }
                            }
                        }
                        2 => {
                            if let Some(list) = current.and_then(|k| lists.get_mut(k)) {
                                if empty {
                                    list.items.push((start, end));
                                } else {
                                    item_start = start;
                                }
                            }
                        }
                        _ => {}
                    }
                    if !empty {
                        depth += 1;
                    }
                }
                Event::End(_) => {
                    depth = depth.saturating_sub(1);
                    if depth == 2 {
                        if let Some(list) = current.and_then(|k| lists.get_mut(k)) {
                            list.items.push((item_start, end));
                        }
                    } else if depth == 1 && in_num_fmts {
                        in_num_fmts = false;
                        num_fmts.end_tag = start;
                    } else if depth == 1
                        && let Some(list) = current.take().and_then(|k| lists.get_mut(k))
                    {
                        list.end_tag = start;
                    }
                }
                Event::Eof => break,
                _ => {}
            }
        }
        Ok(Styles {
            text,
            prefix,
            lists,
            num_fmts,
            root_end,
            memo: HashMap::new(),
        })
    }

    /// The `numFmtId` of cell format `xf` (0, General, when it has none or does not exist).
    pub fn number_format_id(&self, xf: usize) -> u32 {
        self.item(ListKind::CellXfs, xf)
            .and_then(|x| tag_attr(x, "numFmtId"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    }

    /// The id of the custom number format with `code`, appending one when there is none.
    fn number_format(&mut self, code: &str) -> u32 {
        let f = &mut self.num_fmts;
        if let Some((id, _)) = f.existing.iter().chain(&f.added).find(|(_, c)| c == code) {
            return *id;
        }
        let id = f
            .existing
            .iter()
            .chain(&f.added)
            .map(|(id, _)| id + 1)
            .max()
            .unwrap_or(0)
            .max(FIRST_CUSTOM_NUM_FMT);
        f.added.push((id, code.to_string()));
        id
    }

    /// The splice that adds the appended number formats (none when nothing was appended).
    fn num_fmts_splices(&self) -> Vec<(usize, usize, String)> {
        let f = &self.num_fmts;
        if f.added.is_empty() {
            return Vec::new();
        }
        let p = &self.prefix;
        let items: String = f
            .added
            .iter()
            .map(|(id, code)| {
                format!(
                    "<{p}numFmt numFmtId=\"{id}\" formatCode=\"{}\"/>",
                    xml::escape_attr(code)
                )
            })
            .collect();
        let count = f.existing.len() + f.added.len();
        match f.start_tag {
            Some((a, b, false)) => {
                let tag = self.text.get(a..b).unwrap_or("");
                let count = count.to_string();
                let mut out = Vec::new();
                if let Some(new) = xml::rewrite_start_tag(tag, &[("count", &count)], &[], false) {
                    out.push((a, b, new));
                }
                out.push((f.end_tag, f.end_tag, items));
                out
            }
            Some((a, b, true)) => vec![(
                a,
                b,
                format!("<{p}numFmts count=\"{count}\">{items}</{p}numFmts>"),
            )],
            None => {
                // `<numFmts>` is the first child of the style sheet.
                let at = self
                    .lists
                    .iter()
                    .filter_map(|l| l.start_tag.map(|(a, _, _)| a))
                    .min()
                    .unwrap_or(self.root_end);
                vec![(
                    at,
                    at,
                    format!("<{p}numFmts count=\"{count}\">{items}</{p}numFmts>"),
                )]
            }
        }
    }

    fn item(&self, kind: ListKind, index: usize) -> Option<&str> {
        let list = self.lists.get(kind as usize)?;
        match list.items.get(index) {
            Some((a, b)) => self.text.get(*a..*b),
            None => list
                .added
                .get(index.checked_sub(list.items.len())?)
                .map(String::as_str),
        }
    }

    /// The index of an element equal to `xml` in the list, appending it when there is none.
    fn intern(&mut self, kind: ListKind, xml: String) -> Result<usize, String> {
        let key = canonical(&xml);
        let Some(list) = self.lists.get_mut(kind as usize) else {
            return Err("unknown style list".to_string());
        };
        match list.start_tag {
            None => {
                return Err(format!(
                    "styles.xml has no <{}> list",
                    String::from_utf8_lossy(LIST_NAMES[kind as usize])
                ));
            }
            Some((_, _, true)) => {
                return Err(format!(
                    "styles.xml has an empty <{}/> list",
                    String::from_utf8_lossy(LIST_NAMES[kind as usize])
                ));
            }
            Some(_) => {}
        }
        if list.canon.is_none() {
            let map: HashMap<String, usize> = list
                .items
                .iter()
                .enumerate()
                .rev()
                .filter_map(|(i, (a, b))| self.text.get(*a..*b).map(|t| (canonical(t), i)))
                .collect();
            list.canon = Some(map);
        }
        let next = list.items.len() + list.added.len();
        let canon = list.canon.get_or_insert_with(HashMap::new);
        if let Some(&i) = canon.get(&key) {
            return Ok(i);
        }
        canon.insert(key, next);
        list.added.push(xml);
        Ok(next)
    }

    /// The cell format `xf` with `change` applied: an existing identical format, or a new one.
    pub fn derive(&mut self, xf: usize, change: &StyleChange) -> Result<usize, String> {
        let memo_key = (xf, format!("{change:?}"));
        if let Some(&i) = self.memo.get(&memo_key) {
            return Ok(i);
        }
        let p = self.prefix.clone();
        // A cell pointing past the list uses the default format, as Excel does.
        let base_xf = self
            .item(ListKind::CellXfs, xf)
            .or_else(|| self.item(ListKind::CellXfs, 0))
            .map(str::to_string)
            .ok_or("styles.xml has no cell formats")?;
        let mut elem =
            Element::parse(&base_xf).ok_or("a cell format in styles.xml is unreadable")?;
        let id = |name: &str| {
            tag_attr(&elem.start_tag, name)
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0)
        };
        let (font_id, border_id) = (id("fontId"), id("borderId"));
        let mut set: Vec<(&str, String)> = Vec::new();
        if change.touches_font() {
            let base = self
                .item(ListKind::Fonts, font_id)
                .or_else(|| self.item(ListKind::Fonts, 0))
                .map(str::to_string)
                .unwrap_or_else(|| format!("<{p}font/>"));
            let mut font = Element::parse(&base).ok_or("a font in styles.xml is unreadable")?;
            if let Some(bold) = change.bold {
                font.set_child("b", bold.then(|| format!("<{p}b/>")), FONT_ORDER);
            }
            if let Some(size) = change.size {
                font.set_child(
                    "sz",
                    Some(format!("<{p}sz val=\"{}\"/>", number_text(size))),
                    FONT_ORDER,
                );
            }
            if let Some(color) = &change.font_color {
                font.set_child(
                    "color",
                    Some(format!("<{p}color rgb=\"{color}\"/>")),
                    FONT_ORDER,
                );
            }
            let new = self.intern(ListKind::Fonts, font.render(&[]))?;
            set.push(("fontId", new.to_string()));
            set.push(("applyFont", "1".to_string()));
        }
        if let Some(color) = &change.fill_color {
            let fill = format!(
                "<{p}fill><{p}patternFill patternType=\"solid\"><{p}fgColor rgb=\"{color}\"/>\
                 <{p}bgColor rgb=\"{color}\"/></{p}patternFill></{p}fill>"
            );
            let new = self.intern(ListKind::Fills, fill)?;
            set.push(("fillId", new.to_string()));
            set.push(("applyFill", "1".to_string()));
        }
        if change.grid_border {
            let base = self
                .item(ListKind::Borders, border_id)
                .map(str::to_string)
                .unwrap_or_else(|| format!("<{p}border/>"));
            let mut border = Element::parse(&base).ok_or("a border in styles.xml is unreadable")?;
            // Thin black on the four sides, as ExStruct draws it; diagonals stay.
            for (side, drop) in [
                ("left", "start"),
                ("right", "end"),
                ("top", ""),
                ("bottom", ""),
            ] {
                if !drop.is_empty() {
                    border.set_child(drop, None, BORDER_ORDER);
                }
                border.set_child(
                    side,
                    Some(format!(
                        "<{p}{side} style=\"thin\"><{p}color rgb=\"FF000000\"/></{p}{side}>"
                    )),
                    BORDER_ORDER,
                );
            }
            let new = self.intern(ListKind::Borders, border.render(&[]))?;
            set.push(("borderId", new.to_string()));
            set.push(("applyBorder", "1".to_string()));
        }
        if let Some(code) = change.number_format {
            let id = self.number_format(code);
            set.push(("numFmtId", id.to_string()));
            set.push(("applyNumberFormat", "1".to_string()));
        }
        if change.touches_alignment() {
            let mut attrs: Vec<(&str, &str)> = Vec::new();
            if let Some(h) = change.horizontal {
                attrs.push(("horizontal", h));
            }
            if let Some(v) = change.vertical {
                attrs.push(("vertical", v));
            }
            if let Some(w) = change.wrap {
                attrs.push(("wrapText", if w { "1" } else { "0" }));
            }
            let tag = elem
                .child("alignment")
                .map(str::to_string)
                .unwrap_or_else(|| format!("<{p}alignment/>"));
            let new = xml::rewrite_start_tag(&tag, &attrs, &[], true)
                .ok_or("an alignment in styles.xml is unreadable")?;
            elem.set_child("alignment", Some(new), XF_ORDER);
            set.push(("applyAlignment", "1".to_string()));
        }
        let pairs: Vec<(&str, &str)> = set.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let new_xf = elem.render(&pairs);
        let index = self.intern(ListKind::CellXfs, new_xf)?;
        self.memo.insert(memo_key, index);
        Ok(index)
    }

    /// How many cell formats there are (including appended ones).
    pub fn xf_count(&self) -> usize {
        self.lists
            .get(ListKind::CellXfs as usize)
            .map_or(0, |l| l.items.len() + l.added.len())
    }

    /// Whether any element was appended.
    pub fn is_changed(&self) -> bool {
        self.lists.iter().any(|l| !l.added.is_empty()) || !self.num_fmts.added.is_empty()
    }

    /// The part with the appended elements and updated counts; everything else as it was.
    pub fn to_xml(&self) -> String {
        let mut splices = self.num_fmts_splices();
        for list in &self.lists {
            let Some((a, b, false)) = list.start_tag else {
                continue;
            };
            if list.added.is_empty() {
                continue;
            }
            let tag = self.text.get(a..b).unwrap_or("");
            let count = (list.items.len() + list.added.len()).to_string();
            if let Some(new) = xml::rewrite_start_tag(tag, &[("count", &count)], &[], false) {
                splices.push((a, b, new));
            }
            splices.push((list.end_tag, list.end_tag, list.added.concat()));
        }
        xml::splice(&self.text, splices)
    }
}

fn tag_attr(tag: &str, name: &str) -> Option<String> {
    let mut r = xml::reader(tag);
    match r.read_event().ok()? {
        Event::Start(e) | Event::Empty(e) => xml::attr(&e, name.as_bytes()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STYLES: &str = r#"<?xml version="1.0"?><styleSheet xmlns="m"><fonts count="2"><font><sz val="11"/><name val="Calibri"/></font><font><b/><sz val="11"/><name val="Calibri"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/></cellXfs></styleSheet>"#;

    #[test]
    fn an_identical_format_is_reused_and_a_new_one_appended() {
        let mut s = Styles::parse(STYLES.to_string()).unwrap();
        let bold = StyleChange {
            bold: Some(true),
            ..Default::default()
        };
        // Bold Calibri 11 exists as font 1 and xf 1: nothing is appended.
        assert_eq!(s.derive(0, &bold).unwrap(), 1);
        assert!(!s.is_changed());
        let yellow = StyleChange {
            fill_color: Some("FFFFFF00".into()),
            ..Default::default()
        };
        assert_eq!(s.derive(1, &yellow).unwrap(), 2);
        assert_eq!(s.derive(1, &yellow).unwrap(), 2);
        let out = s.to_xml();
        assert!(out.contains(r#"<fills count="3">"#), "{out}");
        assert!(
            out.contains(r#"<fill><patternFill patternType="solid"><fgColor rgb="FFFFFF00"/><bgColor rgb="FFFFFF00"/></patternFill></fill></fills>"#),
            "{out}"
        );
        assert!(
            out.contains(r#"<xf numFmtId="0" fontId="1" fillId="2" borderId="0" xfId="0" applyFont="1" applyFill="1"/></cellXfs>"#),
            "{out}"
        );
        // Everything before the first appended element is unchanged.
        let cut = STYLES.find("<fills").unwrap();
        assert_eq!(&out[..cut], &STYLES[..cut]);
    }

    #[test]
    fn alignment_and_borders_are_derived_from_the_current_format() {
        let mut s = Styles::parse(STYLES.to_string()).unwrap();
        let change = StyleChange {
            grid_border: true,
            horizontal: Some("center"),
            wrap: Some(true),
            ..Default::default()
        };
        assert_eq!(s.derive(1, &change).unwrap(), 2);
        let out = s.to_xml();
        assert!(out.contains(r#"<border><left style="thin"><color rgb="FF000000"/></left><right style="thin"><color rgb="FF000000"/></right><top style="thin"><color rgb="FF000000"/></top><bottom style="thin"><color rgb="FF000000"/></bottom><diagonal/></border></borders>"#), "{out}");
        assert!(out.contains(r#"<xf numFmtId="0" fontId="1" fillId="0" borderId="1" xfId="0" applyFont="1" applyBorder="1" applyAlignment="1"><alignment horizontal="center" wrapText="1"/></xf></cellXfs>"#), "{out}");
    }
}
