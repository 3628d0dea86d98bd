//! The PDF file structure (§7.5): cross-reference tables and streams, object streams, the
//! page tree, and a repair scan for files whose cross-reference data is broken.
//!
//! Every walk that follows references carries a visited set or a depth bound: `/Prev` chains
//! that point back at themselves, page trees whose `/Kids` contain an ancestor, and `/Length`
//! entries that refer to their own stream all end instead of looping.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use super::filters::{self, Budget, FilterError};
use super::lexer::{Dict, Lexer, Object, ParseError, Stream, Token};
use crate::error::{Error, Result};

const FORMAT: &str = "pdf";
/// Cross-reference sections followed through `/Prev`.
const MAX_XREF_SECTIONS: usize = 256;
/// Reference hops when resolving one value.
const MAX_RESOLVE_DEPTH: usize = 32;
/// Pages collected from the page tree.
pub(crate) const MAX_PAGES: usize = 100_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    Offset(usize),
    Compressed { container: u32, index: u32 },
}

/// A decoded object stream: its data and where each object starts.
struct ObjectStream {
    data: Rc<Vec<u8>>,
    offsets: Vec<(u32, usize)>,
}

/// A loaded PDF. Objects are parsed lazily and cached.
pub(crate) struct Document<'a> {
    data: &'a [u8],
    xref: HashMap<u32, Entry>,
    trailer: Dict,
    cache: RefCell<HashMap<u32, Object>>,
    object_streams: RefCell<HashMap<u32, Option<Rc<ObjectStream>>>>,
    budget: RefCell<Budget>,
    resolving: RefCell<HashSet<u32>>,
}

impl<'a> Document<'a> {
    /// Parses the cross-reference data of `data`.
    pub fn load(data: &'a [u8], budget: Budget) -> Result<Self> {
        let head = &data[..data.len().min(1024)];
        if find(head, b"%PDF-").is_none() {
            return Err(Error::corrupt(FORMAT, "no %PDF- header"));
        }
        let mut doc = Document {
            data,
            xref: HashMap::new(),
            trailer: Dict::default(),
            cache: RefCell::new(HashMap::new()),
            object_streams: RefCell::new(HashMap::new()),
            budget: RefCell::new(budget),
            resolving: RefCell::new(HashSet::new()),
        };
        let parsed = doc.read_xref_chain();
        if doc.is_encrypted() {
            return Err(Error::Encrypted);
        }
        // Offsets that point at the wrong place are common in files edited by hand or by
        // broken tools; if the catalog or the pages cannot be reached, rebuild from a scan.
        let usable =
            parsed.is_ok() && doc.catalog().is_some() && doc.pages().is_ok_and(|p| !p.is_empty());
        if !usable {
            doc.repair()?;
        }
        if doc.is_encrypted() {
            return Err(Error::Encrypted);
        }
        if doc.catalog().is_none() {
            return Err(Error::corrupt(FORMAT, "no document catalog"));
        }
        Ok(doc)
    }

    fn is_encrypted(&self) -> bool {
        self.trailer
            .get(b"Encrypt")
            .is_some_and(|e| !matches!(e, Object::Null))
    }

    fn startxref(&self) -> Option<usize> {
        let tail_start = self.data.len().saturating_sub(4096);
        let tail = &self.data[tail_start..];
        let at = rfind(tail, b"startxref")? + tail_start + b"startxref".len();
        match Lexer::new(self.data, at).next_token() {
            Some(Token::Int(i)) => usize::try_from(i).ok(),
            _ => None,
        }
    }

    fn read_xref_chain(&mut self) -> std::result::Result<(), ()> {
        let mut next = self.startxref();
        let mut seen = HashSet::new();
        let mut first = true;
        while let Some(offset) = next {
            if !seen.insert(offset) || seen.len() > MAX_XREF_SECTIONS || offset >= self.data.len() {
                break;
            }
            let trailer = self.read_xref_section(offset)?;
            if let Some(stm) = trailer.get(b"XRefStm").and_then(Object::as_int) {
                // A hybrid file: the stream holds the compressed entries of this section.
                if let Ok(offset) = usize::try_from(stm) {
                    let _ = self.read_xref_stream(offset);
                }
            }
            next = trailer
                .get(b"Prev")
                .and_then(Object::as_int)
                .and_then(|p| usize::try_from(p).ok());
            if first {
                self.trailer = trailer;
                first = false;
            }
        }
        if first { Err(()) } else { Ok(()) }
    }

    /// Reads one section (table or stream) at `offset`; earlier-read (newer) entries win.
    fn read_xref_section(&mut self, offset: usize) -> std::result::Result<Dict, ()> {
        let mut lx = Lexer::new(self.data, offset);
        match lx.next_token() {
            Some(Token::Keyword(b"xref")) => self.read_xref_table(&mut lx),
            Some(Token::Int(_)) => self.read_xref_stream(offset),
            _ => Err(()),
        }
    }

    fn read_xref_table(&mut self, lx: &mut Lexer<'a>) -> std::result::Result<Dict, ()> {
        loop {
            let save = lx.pos;
            match lx.next_token() {
                Some(Token::Int(start)) => {
                    let Some(Token::Int(count)) = lx.next_token() else {
                        return Err(());
                    };
                    let (Ok(start), Ok(count)) = (u32::try_from(start), usize::try_from(count))
                    else {
                        return Err(());
                    };
                    // Each entry takes at least 18 bytes, so a larger count is a lie.
                    if count > self.data.len().saturating_sub(lx.pos) / 18 + 1 {
                        return Err(());
                    }
                    for i in 0..count {
                        let (
                            Some(Token::Int(off)),
                            Some(Token::Int(_gen)),
                            Some(Token::Keyword(kind)),
                        ) = (lx.next_token(), lx.next_token(), lx.next_token())
                        else {
                            return Err(());
                        };
                        let Some(num) = start.checked_add(i as u32) else {
                            return Err(());
                        };
                        if kind == b"n"
                            && let Ok(off) = usize::try_from(off)
                        {
                            self.xref.entry(num).or_insert(Entry::Offset(off));
                        }
                    }
                }
                Some(Token::Keyword(b"trailer")) => {
                    let Some(Token::DictStart) = lx.next_token() else {
                        return Err(());
                    };
                    return lx.parse_dict_body(1).map_err(|_| ());
                }
                _ => {
                    lx.pos = save;
                    return Err(());
                }
            }
        }
    }

    fn read_xref_stream(&mut self, offset: usize) -> std::result::Result<Dict, ()> {
        let (_, object) = self.parse_indirect_at(offset).map_err(|_| ())?;
        let Object::Stream(stream) = object else {
            return Err(());
        };
        let dict = &stream.dict;
        if dict.name(b"Type") != Some(b"XRef") {
            return Err(());
        }
        let data = self.decode_stream(&stream).map_err(|_| ())?;
        let widths: Vec<usize> = match dict.get(b"W") {
            Some(Object::Array(a)) => a
                .iter()
                .map(|w| w.as_int().unwrap_or(0).clamp(0, 8) as usize)
                .collect(),
            _ => return Err(()),
        };
        if widths.len() < 3 {
            return Err(());
        }
        let row = widths[0] + widths[1] + widths[2];
        if row == 0 {
            return Err(());
        }
        let size = dict
            .get(b"Size")
            .and_then(Object::as_int)
            .unwrap_or(0)
            .max(0);
        let index: Vec<i64> = match dict.get(b"Index") {
            Some(Object::Array(a)) => a.iter().filter_map(Object::as_int).collect(),
            _ => vec![0, size],
        };
        let mut rows = data.chunks_exact(row);
        for pair in index.chunks_exact(2) {
            let (Ok(start), Ok(count)) = (u32::try_from(pair[0]), u32::try_from(pair[1])) else {
                break;
            };
            for i in 0..count {
                let Some(r) = rows.next() else { break };
                let field = |from: usize, width: usize, default: u64| -> u64 {
                    if width == 0 {
                        return default;
                    }
                    r[from..from + width]
                        .iter()
                        .fold(0u64, |acc, &b| acc << 8 | u64::from(b))
                };
                let kind = field(0, widths[0], 1);
                let f2 = field(widths[0], widths[1], 0);
                let f3 = field(widths[0] + widths[1], widths[2], 0);
                let Some(num) = start.checked_add(i) else {
                    break;
                };
                let entry = match kind {
                    1 => usize::try_from(f2).ok().map(Entry::Offset),
                    2 => match (u32::try_from(f2), u32::try_from(f3)) {
                        (Ok(container), Ok(index)) => Some(Entry::Compressed { container, index }),
                        _ => None,
                    },
                    _ => None,
                };
                if let Some(e) = entry {
                    self.xref.entry(num).or_insert(e);
                }
            }
        }
        Ok(stream.dict.clone())
    }

    /// Rebuilds the cross-reference data by scanning for `n g obj` headers, as viewers do for
    /// damaged files. The last definition of an object number wins.
    fn repair(&mut self) -> Result<()> {
        self.xref.clear();
        self.cache.borrow_mut().clear();
        let data = self.data;
        let mut i = 0;
        let mut trailer: Option<Dict> = None;
        while let Some(found) = find(&data[i..], b"obj") {
            let at = i + found;
            i = at + 3;
            let after_ok = data.get(at + 3).is_none_or(|&b| !b.is_ascii_alphanumeric());
            if !after_ok {
                continue;
            }
            if let Some((num, start)) = object_header_before(data, at) {
                self.xref.insert(num, Entry::Offset(start));
            }
        }
        // Trailers of every revision, last one first.
        let mut j = data.len();
        while let Some(found) = rfind(&data[..j], b"trailer") {
            let mut lx = Lexer::new(data, found + b"trailer".len());
            if let Some(Token::DictStart) = lx.next_token()
                && let Ok(d) = lx.parse_dict_body(1)
                && d.get(b"Root").is_some()
            {
                trailer = Some(d);
                break;
            }
            j = found;
        }
        let mut numbers: Vec<u32> = self.xref.keys().copied().collect();
        numbers.sort_unstable();
        // Objects kept in object streams are found through the streams themselves.
        for &num in &numbers {
            let Ok(obj) = self.get(num) else { continue };
            if let Object::Stream(s) = &obj {
                match s.dict.name(b"Type") {
                    Some(b"ObjStm") => {
                        if let Some(os) = self.object_stream(num) {
                            for (index, (inner, _)) in os.offsets.iter().enumerate() {
                                self.xref.entry(*inner).or_insert(Entry::Compressed {
                                    container: num,
                                    index: index as u32,
                                });
                            }
                        }
                    }
                    Some(b"XRef") if trailer.is_none() && s.dict.get(b"Root").is_some() => {
                        trailer = Some(s.dict.clone());
                    }
                    _ => {}
                }
            }
        }
        let trailer = match trailer {
            Some(t) => t,
            None => {
                // No trailer at all: look for the catalog itself.
                let mut numbers: Vec<u32> = self.xref.keys().copied().collect();
                numbers.sort_unstable();
                let root = numbers.into_iter().find(|&n| {
                    self.get(n).ok().and_then(|o| {
                        o.as_dict()
                            .and_then(|d| d.name(b"Type"))
                            .map(<[u8]>::to_vec)
                    }) == Some(b"Catalog".to_vec())
                });
                match root {
                    Some(n) => Dict(vec![(b"Root".to_vec(), Object::Ref(n, 0))]),
                    None => {
                        return Err(Error::corrupt(
                            FORMAT,
                            "no cross-reference data and no catalog",
                        ));
                    }
                }
            }
        };
        self.trailer = trailer;
        self.cache.borrow_mut().clear();
        Ok(())
    }

    /// Parses `n g obj <object> [stream … endstream]` at `offset`.
    fn parse_indirect_at(&self, offset: usize) -> Result<(u32, Object)> {
        let mut lx = Lexer::new(self.data, offset);
        let (Some(Token::Int(num)), Some(Token::Int(_)), Some(Token::Keyword(b"obj"))) =
            (lx.next_token(), lx.next_token(), lx.next_token())
        else {
            return Err(Error::corrupt(
                FORMAT,
                format!("no object at offset {offset}"),
            ));
        };
        let num = u32::try_from(num).map_err(|_| Error::corrupt(FORMAT, "bad object number"))?;
        let object = lx.parse_object(0).map_err(parse_error)?;
        if let (Object::Dict(dict), Some(Token::Keyword(b"stream"))) = (&object, lx.next_token()) {
            let mut start = lx.pos;
            // The keyword is followed by CRLF or LF (a lone CR is tolerated).
            if self.data.get(start) == Some(&b'\r') {
                start += 1;
            }
            if self.data.get(start) == Some(&b'\n') {
                start += 1;
            }
            let end = self.stream_end(dict, start);
            return Ok((
                num,
                Object::Stream(Rc::new(Stream {
                    dict: dict.clone(),
                    data: start..end,
                })),
            ));
        }
        Ok((num, object))
    }

    /// Where stream data that starts at `start` ends: `/Length` if it is plausible, else the
    /// next `endstream`.
    fn stream_end(&self, dict: &Dict, start: usize) -> usize {
        let length = match dict.get(b"Length") {
            Some(Object::Int(n)) => usize::try_from(*n).ok(),
            Some(Object::Ref(num, _)) => self
                .get(*num)
                .ok()
                .and_then(|o| o.as_int())
                .and_then(|n| usize::try_from(n).ok()),
            _ => None,
        };
        if let Some(len) = length
            && let Some(end) = start.checked_add(len)
            && end <= self.data.len()
        {
            let tail = &self.data[end..self.data.len().min(end + 32)];
            if find(tail, b"endstream").is_some() {
                return end;
            }
        }
        match find(&self.data[start.min(self.data.len())..], b"endstream") {
            Some(rel) => {
                let mut end = start + rel;
                // Drop the end-of-line marker that precedes the keyword.
                if end > start && self.data[end - 1] == b'\n' {
                    end -= 1;
                }
                if end > start && self.data[end - 1] == b'\r' {
                    end -= 1;
                }
                end
            }
            None => self.data.len(),
        }
    }

    /// The object with number `num` (any generation), or `Null` if it does not exist.
    pub fn get(&self, num: u32) -> Result<Object> {
        if let Some(o) = self.cache.borrow().get(&num) {
            return Ok(o.clone());
        }
        if !self.resolving.borrow_mut().insert(num) {
            // Resolving this object needs itself (a /Length that points at its own stream).
            return Ok(Object::Null);
        }
        let result = self.load_object(num);
        self.resolving.borrow_mut().remove(&num);
        let object = result?;
        self.cache.borrow_mut().insert(num, object.clone());
        Ok(object)
    }

    fn load_object(&self, num: u32) -> Result<Object> {
        match self.xref.get(&num).copied() {
            None => Ok(Object::Null),
            Some(Entry::Offset(offset)) => match self.parse_indirect_at(offset) {
                Ok((found, object)) if found == num => Ok(object),
                Ok(_) | Err(Error::Corrupt { .. }) => Ok(Object::Null),
                Err(e) => Err(e),
            },
            Some(Entry::Compressed { container, index }) => {
                let Some(os) = self.object_stream(container) else {
                    return Ok(Object::Null);
                };
                let Some(&(found, start)) = os.offsets.get(index as usize) else {
                    return Ok(Object::Null);
                };
                let Some(start) = (found == num)
                    .then_some(start)
                    .or_else(|| os.offsets.iter().find(|(n, _)| *n == num).map(|(_, s)| *s))
                else {
                    return Ok(Object::Null);
                };
                let mut lx = Lexer::new(&os.data, start);
                match lx.parse_object(0) {
                    Ok(o) => Ok(o),
                    Err(ParseError::TooDeep) => Err(parse_error(ParseError::TooDeep)),
                    Err(ParseError::Syntax) => Ok(Object::Null),
                }
            }
        }
    }

    fn object_stream(&self, container: u32) -> Option<Rc<ObjectStream>> {
        if let Some(cached) = self.object_streams.borrow().get(&container) {
            return cached.clone();
        }
        // The container must be a plain object: one inside another object stream is illegal
        // and would let a file build a loop.
        let parsed = match self.xref.get(&container) {
            Some(Entry::Offset(_)) => self.parse_object_stream(container),
            _ => None,
        };
        self.object_streams
            .borrow_mut()
            .insert(container, parsed.clone());
        parsed
    }

    fn parse_object_stream(&self, container: u32) -> Option<Rc<ObjectStream>> {
        let Ok(Object::Stream(stream)) = self.get(container) else {
            return None;
        };
        let data = self.decode_stream(&stream).ok()?;
        let n = stream
            .dict
            .get(b"N")
            .and_then(Object::as_int)?
            .clamp(0, 1_000_000) as usize;
        let first = usize::try_from(stream.dict.get(b"First").and_then(Object::as_int)?).ok()?;
        let mut lx = Lexer::new(&data, 0);
        let mut offsets = Vec::with_capacity(n.min(data.len() / 4 + 1));
        for _ in 0..n {
            let (Some(Token::Int(num)), Some(Token::Int(off))) = (lx.next_token(), lx.next_token())
            else {
                break;
            };
            let (Ok(num), Ok(off)) = (u32::try_from(num), usize::try_from(off)) else {
                break;
            };
            offsets.push((num, first.saturating_add(off)));
        }
        Some(Rc::new(ObjectStream {
            data: Rc::new(data),
            offsets,
        }))
    }

    /// Follows references until a direct object.
    pub fn resolve(&self, object: &Object) -> Result<Object> {
        let mut current = object.clone();
        for _ in 0..MAX_RESOLVE_DEPTH {
            match current {
                Object::Ref(num, _) => current = self.get(num)?,
                other => return Ok(other),
            }
        }
        Ok(Object::Null)
    }

    /// Resolves `dict[key]`.
    pub fn get_key(&self, dict: &Dict, key: &[u8]) -> Result<Object> {
        match dict.get(key) {
            Some(o) => self.resolve(o),
            None => Ok(Object::Null),
        }
    }

    /// Decodes a stream's data within the document's budget. Image codecs yield `Ok(None)`.
    pub fn decode_stream(&self, stream: &Stream) -> Result<Vec<u8>> {
        let raw = self.data.get(stream.data.clone()).unwrap_or(&[]);
        let mut budget = self.budget.borrow_mut();
        match filters::decode(&stream.dict, raw, &mut budget) {
            Ok(d) => Ok(d),
            Err(FilterError::Unsupported) => Ok(Vec::new()),
            Err(FilterError::TooLarge { limit }) => Err(Error::DecompressionLimit {
                limit: limit as u64,
                what: format!("pdf stream (document budget {} bytes)", budget.total),
            }),
        }
    }

    pub fn catalog(&self) -> Option<Dict> {
        let root = self.trailer.get(b"Root")?;
        match self.resolve(root).ok()? {
            Object::Dict(d) => Some(d),
            _ => None,
        }
    }

    /// The pages in order, each with its inherited `/Resources`, capped at [`MAX_PAGES`].
    pub fn pages(&self) -> Result<Vec<Page>> {
        let catalog = self
            .catalog()
            .ok_or_else(|| Error::corrupt(FORMAT, "no catalog"))?;
        let root = catalog.get(b"Pages").cloned().unwrap_or(Object::Null);
        let mut pages = Vec::new();
        let mut visited: HashSet<u32> = HashSet::new();
        // An explicit stack instead of recursion: page trees can be deep.
        let mut stack: Vec<(Object, Option<Object>)> = vec![(root, None)];
        while let Some((node_ref, inherited)) = stack.pop() {
            if let Object::Ref(num, _) = node_ref
                && !visited.insert(num)
            {
                continue;
            }
            let node = match self.resolve(&node_ref)? {
                Object::Dict(d) => d,
                Object::Stream(s) => s.dict.clone(),
                _ => continue,
            };
            let resources = node.get(b"Resources").cloned().or(inherited);
            let kids = match self.get_key(&node, b"Kids")? {
                Object::Array(k) => Some(k),
                _ => None,
            };
            match (node.name(b"Type"), kids) {
                (Some(b"Pages"), Some(kids)) | (None, Some(kids)) => {
                    for kid in kids.into_iter().rev() {
                        stack.push((kid, resources.clone()));
                    }
                }
                _ => {
                    pages.push(Page {
                        dict: node,
                        resources,
                    });
                    if pages.len() >= MAX_PAGES {
                        break;
                    }
                }
            }
        }
        Ok(pages)
    }
}

/// A page dictionary and its (possibly inherited) resources.
#[derive(Debug, Clone)]
pub(crate) struct Page {
    pub dict: Dict,
    pub resources: Option<Object>,
}

fn parse_error(e: ParseError) -> Error {
    match e {
        ParseError::TooDeep => Error::StructureLimit(format!(
            "objects nested deeper than {}",
            super::lexer::MAX_DEPTH
        )),
        ParseError::Syntax => Error::corrupt(FORMAT, "malformed object"),
    }
}

/// If `obj_at` is the `obj` keyword of an `n g obj` header, the object number and where the
/// header starts.
fn object_header_before(data: &[u8], obj_at: usize) -> Option<(u32, usize)> {
    let mut i = obj_at;
    let skip_ws = |i: &mut usize| {
        while *i > 0 && super::lexer::is_whitespace(data[*i - 1]) {
            *i -= 1;
        }
    };
    let digits = |i: &mut usize| -> Option<usize> {
        let end = *i;
        while *i > 0 && data[*i - 1].is_ascii_digit() && end - *i < 10 {
            *i -= 1;
        }
        (end > *i).then_some(end)
    };
    let before = i;
    skip_ws(&mut i);
    if i == before {
        return None;
    }
    digits(&mut i)?;
    let before = i;
    skip_ws(&mut i);
    if i == before {
        return None;
    }
    let num_end = digits(&mut i)?;
    if i > 0
        && !super::lexer::is_whitespace(data[i - 1])
        && !super::lexer::is_delimiter(data[i - 1])
    {
        return None;
    }
    let num: u32 = std::str::from_utf8(&data[i..num_end]).ok()?.parse().ok()?;
    Some((num, i))
}

pub(crate) fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    let first = needle[0];
    let mut i = 0;
    while i + needle.len() <= haystack.len() {
        match haystack[i..].iter().position(|&b| b == first) {
            Some(p) => {
                i += p;
                if haystack.get(i..i + needle.len()) == Some(needle) {
                    return Some(i);
                }
                i += 1;
            }
            None => return None,
        }
    }
    None
}

fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    (0..=haystack.len() - needle.len())
        .rev()
        .find(|&i| &haystack[i..i + needle.len()] == needle)
}
