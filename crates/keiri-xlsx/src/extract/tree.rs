//! A small element tree for the drawing, chart and diagram parts, which are read as nested
//! structures (anchors holding groups holding shapes) rather than spliced like worksheets.
//! Names are kept without their prefix; the tree is bounded in nodes and depth so a hostile
//! part cannot exhaust memory or the stack.

use quick_xml::events::{BytesStart, Event};

use crate::xml::{self, TextBuf};

/// Elements one part may hold before it is refused.
const MAX_NODES: usize = 500_000;
/// Nesting a part may have before it is refused.
const MAX_DEPTH: usize = 256;

#[derive(Debug, Default)]
pub(crate) struct Node {
    /// The local name (`sp` for `<xdr:sp>`).
    pub name: String,
    /// Attributes by local name, values unescaped.
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Node>,
    /// The element's own text (not its descendants').
    pub text: String,
}

impl Node {
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn child(&self, name: &str) -> Option<&Node> {
        self.children.iter().find(|c| c.name == name)
    }

    pub fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Node> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// The descendant reached by following child names in order.
    pub fn path(&self, names: &[&str]) -> Option<&Node> {
        let mut node = self;
        for name in names {
            node = node.child(name)?;
        }
        Some(node)
    }

    /// The text of the descendant at `names`, if present.
    pub fn path_text(&self, names: &[&str]) -> Option<&str> {
        self.path(names).map(|n| n.text.as_str())
    }

    /// Every descendant (depth first, document order) with this name.
    pub fn descendants<'a>(&'a self, name: &str, out: &mut Vec<&'a Node>) {
        for c in &self.children {
            if c.name == name {
                out.push(c);
            }
            c.descendants(name, out);
        }
    }

    /// Text runs (`a:t`) joined per paragraph (`a:p`), paragraphs joined with a line break.
    pub fn paragraph_text(&self) -> String {
        let mut paragraphs = Vec::new();
        self.descendants("p", &mut paragraphs);
        if paragraphs.is_empty() {
            let mut runs = Vec::new();
            self.descendants("t", &mut runs);
            return runs.iter().map(|t| t.text.as_str()).collect::<String>();
        }
        let lines: Vec<String> = paragraphs
            .iter()
            .map(|p| {
                let mut runs = Vec::new();
                p.descendants("t", &mut runs);
                runs.iter().map(|t| t.text.as_str()).collect::<String>()
            })
            .collect();
        lines.join("\n")
    }
}

fn local_name(raw: &[u8]) -> String {
    let local = match raw.iter().rposition(|&b| b == b':') {
        Some(i) => &raw[i + 1..],
        None => raw,
    };
    String::from_utf8_lossy(local).into_owned()
}

fn node_of(e: &BytesStart<'_>) -> Node {
    let mut attrs = Vec::new();
    for a in e.attributes().with_checks(false).flatten() {
        let key = a.key.into_inner().as_bytes();
        if key.starts_with(b"xmlns") {
            continue;
        }
        let value = a
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map(|v| v.into_owned())
            .unwrap_or_else(|_| a.value.to_string());
        attrs.push((local_name(key), value));
    }
    Node {
        name: String::from_utf8_lossy(xml::local(e)).into_owned(),
        attrs,
        children: Vec::new(),
        text: String::new(),
    }
}

/// Parses a part into its root element. `Err` is the reason the part is unreadable.
pub(crate) fn parse(text: &str) -> Result<Node, String> {
    let mut r = xml::reader(text);
    let mut stack: Vec<Node> = Vec::new();
    let mut root: Option<Node> = None;
    let mut count = 0usize;
    loop {
        let event = r.read_event().map_err(|e| e.to_string())?;
        match &event {
            Event::Start(e) | Event::Empty(e) => {
                count += 1;
                if count > MAX_NODES {
                    return Err(format!("more than {MAX_NODES} elements"));
                }
                let node = node_of(e);
                if matches!(event, Event::Start(_)) {
                    if stack.len() >= MAX_DEPTH {
                        return Err(format!("elements nested deeper than {MAX_DEPTH}"));
                    }
                    stack.push(node);
                } else {
                    match stack.last_mut() {
                        Some(parent) => parent.children.push(node),
                        None => root = Some(node),
                    }
                }
            }
            Event::End(_) => {
                let Some(node) = stack.pop() else {
                    return Err("an end tag without a start".to_string());
                };
                match stack.last_mut() {
                    Some(parent) => parent.children.push(node),
                    None => root = Some(node),
                }
            }
            Event::Eof => break,
            _ => {
                if let Some(top) = stack.last_mut() {
                    let mut buf = TextBuf::default();
                    if buf.push(&event) {
                        top.text.push_str(&buf.text);
                    }
                }
            }
        }
    }
    if !stack.is_empty() {
        return Err("the part ends inside an element".to_string());
    }
    root.ok_or_else(|| "no root element".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_a_tree_with_local_names() {
        let root = parse(
            r#"<x:a xmlns:x="u" xmlns:r="r"><x:b r:id="rId1" n="1">t&amp;u</x:b><x:c/></x:a>"#,
        )
        .unwrap();
        assert_eq!(root.name, "a");
        let b = root.child("b").unwrap();
        assert_eq!(b.attr("id"), Some("rId1"));
        assert_eq!(b.text, "t&u");
        assert!(root.child("c").is_some());
    }

    #[test]
    fn refuses_broken_and_deep_parts() {
        assert!(parse("<a><b></a>").is_err());
        assert!(parse("<a>").is_err());
        let deep = "<a>".repeat(MAX_DEPTH + 1) + &"</a>".repeat(MAX_DEPTH + 1);
        assert!(parse(&deep).unwrap_err().contains("deeper"));
    }
}
