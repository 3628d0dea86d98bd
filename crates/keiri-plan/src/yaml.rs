//! YAML loading with limits and source positions.
//!
//! Documents are parsed with `saphyr-parser` (pure safe Rust, YAML 1.2) into a
//! `serde_json::Value`, because every later step (validation with JSON pointers, DTOs,
//! dry-run) works on JSON-shaped data. Building the value ourselves from parser events lets
//! us (1) record the line and column of every node under its JSON pointer, so findings can
//! be shown in the editor, and (2) bound alias expansion while it happens, so a "billion
//! laughs" document is refused before it can use memory. Scalars are resolved with the
//! YAML 1.2 core schema, like `yaml_serde`, which we use for writing.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};
use serde_json::{Map, Number, Value};

/// Documents larger than this are refused before parsing.
pub const MAX_DOCUMENT_BYTES: usize = 4 * 1024 * 1024;
/// The most nodes a document may expand to, counting alias expansions.
pub const MAX_EXPANDED_NODES: usize = 1_000_000;
/// The deepest nesting accepted.
pub const MAX_DEPTH: usize = 128;

/// A YAML load failure with where it happened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum YamlError {
    #[error("document is {size} bytes, over the limit of {limit} bytes")]
    TooLarge { size: usize, limit: usize },
    #[error("yaml syntax error at line {line}, column {column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    #[error(
        "aliases expand past {limit} nodes at line {line} (a YAML alias bomb?); refusing the document"
    )]
    AliasBomb { line: usize, limit: usize },
    #[error("nesting deeper than {limit} levels at line {line}")]
    TooDeep { line: usize, limit: usize },
    #[error("unknown alias at line {line}")]
    UnknownAlias { line: usize },
    #[error("mapping key at line {line}, column {column} is not a scalar")]
    ComplexKey { line: usize, column: usize },
    #[error("duplicate key {key:?} at line {line}, column {column}")]
    DuplicateKey {
        key: String,
        line: usize,
        column: usize,
    },
    #[error("the document is empty")]
    Empty,
}

impl YamlError {
    /// The 1-based line and column the error points at, when known.
    pub fn position(&self) -> Option<(usize, usize)> {
        match self {
            YamlError::Syntax { line, column, .. }
            | YamlError::ComplexKey { line, column }
            | YamlError::DuplicateKey { line, column, .. } => Some((*line, *column)),
            YamlError::AliasBomb { line, .. }
            | YamlError::TooDeep { line, .. }
            | YamlError::UnknownAlias { line } => Some((*line, 1)),
            YamlError::TooLarge { .. } | YamlError::Empty => None,
        }
    }
}

/// 1-based line and column of a node in the source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// Where each node of a loaded document came from, keyed by JSON pointer (`""` is the root).
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    positions: HashMap<String, Position>,
}

impl SourceMap {
    /// The position of the node at `pointer`, or of its nearest ancestor that has one.
    pub fn locate(&self, pointer: &str) -> Option<Position> {
        let mut p = pointer;
        loop {
            if let Some(pos) = self.positions.get(p) {
                return Some(*pos);
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return None,
            }
        }
    }
}

/// A parsed document: its value and the source map.
#[derive(Debug, Clone)]
pub struct Document {
    pub value: Value,
    pub source_map: SourceMap,
}

fn position(span: &Span) -> Position {
    Position {
        line: span.start.line(),
        column: span.start.col() + 1,
    }
}

/// Escapes one JSON pointer segment (RFC 6901).
pub fn escape_pointer(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// The segment [`escape_pointer`] escaped, as it was.
pub fn unescape_pointer(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

enum Frame {
    Seq(Vec<Value>, Option<usize>, usize),
    Map(
        Map<String, Value>,
        Option<usize>,
        Option<(String, Position)>,
        usize,
    ),
}

struct Builder<'m> {
    stack: Vec<Frame>,
    anchors: HashMap<usize, (Value, usize)>,
    pointers: Vec<String>,
    map: &'m mut SourceMap,
    expanded: usize,
    root: Option<Value>,
}

impl Builder<'_> {
    fn current_pointer(&self) -> String {
        self.pointers.last().cloned().unwrap_or_default()
    }

    /// The pointer a new child value at the current position gets.
    fn child_pointer(&self) -> Option<String> {
        let parent = self.current_pointer();
        match self.stack.last() {
            None => Some(String::new()),
            Some(Frame::Seq(items, ..)) => Some(format!("{parent}/{}", items.len())),
            Some(Frame::Map(_, _, Some((key, _)), _)) => {
                Some(format!("{parent}/{}", escape_pointer(key)))
            }
            Some(Frame::Map(_, _, None, _)) => None,
        }
    }

    /// Adds a finished value to its parent; `size` counts its nodes for the alias budget.
    fn push_value(
        &mut self,
        value: Value,
        size: usize,
        anchor: Option<usize>,
        pos: Position,
    ) -> Result<(), YamlError> {
        if let Some(id) = anchor.filter(|id| *id > 0) {
            self.anchors.insert(id, (value.clone(), size));
        }
        match self.stack.last_mut() {
            None => {
                self.root = Some(value);
                Ok(())
            }
            Some(Frame::Seq(items, _, count)) => {
                items.push(value);
                *count += size;
                Ok(())
            }
            Some(Frame::Map(map, _, pending, count)) => match pending.take() {
                Some((key, key_pos)) => {
                    if map.contains_key(&key) {
                        return Err(YamlError::DuplicateKey {
                            key,
                            line: key_pos.line,
                            column: key_pos.column,
                        });
                    }
                    map.insert(key, value);
                    *count += size;
                    Ok(())
                }
                None => match value {
                    Value::String(key) => {
                        *pending = Some((key, pos));
                        Ok(())
                    }
                    Value::Null => {
                        *pending = Some(("null".into(), pos));
                        Ok(())
                    }
                    Value::Bool(b) => {
                        *pending = Some((b.to_string(), pos));
                        Ok(())
                    }
                    Value::Number(n) => {
                        *pending = Some((n.to_string(), pos));
                        Ok(())
                    }
                    _ => Err(YamlError::ComplexKey {
                        line: pos.line,
                        column: pos.column,
                    }),
                },
            },
        }
    }

    fn is_key_position(&self) -> bool {
        matches!(self.stack.last(), Some(Frame::Map(_, _, None, _)))
    }
}

/// Parses one YAML document into JSON-shaped data with positions, enforcing the limits.
pub fn parse(text: &str) -> Result<Document, YamlError> {
    if text.len() > MAX_DOCUMENT_BYTES {
        return Err(YamlError::TooLarge {
            size: text.len(),
            limit: MAX_DOCUMENT_BYTES,
        });
    }
    let mut source_map = SourceMap::default();
    let mut b = Builder {
        stack: Vec::new(),
        anchors: HashMap::new(),
        pointers: Vec::new(),
        map: &mut source_map,
        expanded: 0,
        root: None,
    };
    let mut documents = 0usize;
    for item in Parser::new_from_str(text) {
        let (event, span) = item.map_err(|e| YamlError::Syntax {
            line: e.marker().line(),
            column: e.marker().col() + 1,
            message: e.info().to_string(),
        })?;
        let pos = position(&span);
        match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(YamlError::Syntax {
                        line: pos.line,
                        column: pos.column,
                        message: "more than one document in the stream".into(),
                    });
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                b.expanded += 1;
                let tag_suffix = tag.as_ref().map(|t| t.suffix.clone());
                let value = resolve_scalar(&text, style, tag_suffix.as_deref());
                if !b.is_key_position()
                    && let Some(p) = b.child_pointer()
                {
                    b.map.positions.insert(p, pos);
                }
                b.push_value(value, 1, Some(anchor), pos)?;
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if b.stack.len() >= MAX_DEPTH {
                    return Err(YamlError::TooDeep {
                        line: pos.line,
                        limit: MAX_DEPTH,
                    });
                }
                if b.is_key_position() {
                    return Err(YamlError::ComplexKey {
                        line: pos.line,
                        column: pos.column,
                    });
                }
                let pointer = b.child_pointer().unwrap_or_default();
                b.map.positions.insert(pointer.clone(), pos);
                b.pointers.push(pointer);
                b.expanded += 1;
                let anchor = Some(anchor).filter(|a| *a > 0);
                if matches!(event, Event::SequenceStart(..)) {
                    b.stack.push(Frame::Seq(Vec::new(), anchor, 1));
                } else {
                    b.stack.push(Frame::Map(Map::new(), anchor, None, 1));
                }
            }
            Event::SequenceEnd | Event::MappingEnd => {
                b.pointers.pop();
                let (value, anchor, size) = match b.stack.pop() {
                    Some(Frame::Seq(items, anchor, size)) => (Value::Array(items), anchor, size),
                    Some(Frame::Map(map, anchor, _, size)) => (Value::Object(map), anchor, size),
                    None => continue,
                };
                b.push_value(value, size, anchor, pos)?;
            }
            Event::Alias(id) => {
                let Some((value, size)) = b.anchors.get(&id).cloned() else {
                    return Err(YamlError::UnknownAlias { line: pos.line });
                };
                b.expanded = b.expanded.saturating_add(size);
                if b.expanded > MAX_EXPANDED_NODES {
                    return Err(YamlError::AliasBomb {
                        line: pos.line,
                        limit: MAX_EXPANDED_NODES,
                    });
                }
                if !b.is_key_position()
                    && let Some(p) = b.child_pointer()
                {
                    b.map.positions.insert(p, pos);
                }
                b.push_value(value, size, None, pos)?;
            }
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => {}
        }
        if b.expanded > MAX_EXPANDED_NODES {
            return Err(YamlError::AliasBomb {
                line: pos.line,
                limit: MAX_EXPANDED_NODES,
            });
        }
    }
    let value = b.root.take().ok_or(YamlError::Empty)?;
    Ok(Document { value, source_map })
}

/// YAML 1.2 core schema resolution of one scalar.
fn resolve_scalar(text: &str, style: ScalarStyle, tag: Option<&str>) -> Value {
    match tag {
        Some("str") => return Value::String(text.to_string()),
        Some("null") => return Value::Null,
        Some("bool") => return Value::Bool(matches!(text, "true" | "True" | "TRUE")),
        Some("int") | Some("float") => {
            return resolve_number(text).unwrap_or_else(|| Value::String(text.to_string()));
        }
        _ => {}
    }
    if style != ScalarStyle::Plain {
        return Value::String(text.to_string());
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        _ => resolve_number(text).unwrap_or_else(|| Value::String(text.to_string())),
    }
}

fn resolve_number(text: &str) -> Option<Value> {
    let t = text.trim();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    let unsigned = t.strip_prefix(['-', '+']).unwrap_or(t);
    if digits(unsigned) {
        if let Ok(i) = t.parse::<i64>() {
            return Some(Value::Number(i.into()));
        }
        if let Ok(u) = t.parse::<u64>() {
            return Some(Value::Number(u.into()));
        }
    }
    if let Some(hex) = t.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16)
            .ok()
            .map(|i| Value::Number(i.into()));
    }
    if let Some(oct) = t.strip_prefix("0o") {
        return i64::from_str_radix(oct, 8)
            .ok()
            .map(|i| Value::Number(i.into()));
    }
    match unsigned {
        ".inf" | ".Inf" | ".INF" | ".nan" | ".NaN" | ".NAN" => return None,
        _ => {}
    }
    // A float per the core schema: [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some((a, b)) => (a.is_empty() && digits(b)) || (digits(a) && (b.is_empty() || digits(b))),
        None => digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
    if mantissa_ok && exponent_ok && (mantissa.contains('.') || exponent.is_some()) {
        return t
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(text: &str, expect: Value) {
        assert_eq!(parse(text).unwrap().value, expect, "{text}");
    }

    #[test]
    fn scalars_follow_the_core_schema() {
        check(
            "a: 1\nb: 1.5\nc: true\nd: ~\ne: '1'\nf: 請求書\ng: 1e3\nh: yes\ni: 0x1F",
            json!({
                "a": 1, "b": 1.5, "c": true, "d": null, "e": "1", "f": "請求書", "g": 1000.0,
                "h": "yes", "i": 31
            }),
        );
        check(
            "- 007\n- -3\n- .5\n- 1.\n- 1_000\n- 12:30",
            json!([7, -3, 0.5, 1.0, "1_000", "12:30"]),
        );
        check(
            "a: !!str 12\nb: \"${x.y}\"",
            json!({"a": "12", "b": "${x.y}"}),
        );
    }

    #[test]
    fn anchors_and_aliases_expand() {
        check(
            "a: &x {k: 1}\nb: *x\n",
            json!({"a": {"k": 1}, "b": {"k": 1}}),
        );
    }

    #[test]
    fn positions_are_recorded_by_pointer() {
        let doc = parse("id: p\ngraph:\n  - id: n1\n    in:\n      rows: 3\n").unwrap();
        let at = |p: &str| doc.source_map.locate(p).map(|p| (p.line, p.column));
        assert_eq!(at("/id"), Some((1, 5)));
        assert_eq!(at("/graph/0/id"), Some((3, 9)));
        assert_eq!(at("/graph/0/in/rows"), Some((5, 13)));
        // A pointer with no node of its own falls back to its nearest ancestor.
        assert_eq!(at("/graph/0/in/missing"), Some((5, 7)));
    }

    #[test]
    fn alias_bomb_is_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let prev = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
            ));
        }
        assert!(matches!(parse(&text), Err(YamlError::AliasBomb { .. })));
    }

    #[test]
    fn limits_and_errors() {
        let big = "a: ".to_string() + &"x".repeat(MAX_DOCUMENT_BYTES);
        assert!(matches!(parse(&big), Err(YamlError::TooLarge { .. })));
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(matches!(parse(&deep), Err(YamlError::TooDeep { .. })));
        assert!(matches!(parse("a: [1, 2"), Err(YamlError::Syntax { .. })));
        assert!(matches!(
            parse("a: 1\na: 2\n"),
            Err(YamlError::DuplicateKey { line: 2, .. })
        ));
        assert!(matches!(parse(""), Err(YamlError::Empty)));
        assert!(matches!(
            parse("a: 1\n---\nb: 2\n"),
            Err(YamlError::Syntax { .. })
        ));
        assert!(matches!(
            parse("? [a]\n: 1\n"),
            Err(YamlError::ComplexKey { .. })
        ));
    }

    proptest::proptest! {
        #[test]
        fn parse_never_panics(s in "\\PC{0,200}") {
            let _ = parse(&s);
        }
    }
}
