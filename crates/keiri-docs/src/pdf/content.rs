//! Content-stream interpretation for text (§9.4): text state, matrices, `Tj`/`TJ`/`'`/`"`,
//! Form XObjects. Glyph positions decide where words and lines break; text is emitted in
//! content-stream order, which is reading order for the office producers we target.

use std::collections::HashMap;
use std::rc::Rc;

use super::file::{Document, Page};
use super::font::Font;
use super::lexer::{Dict, Lexer, Object, ParseError, Token};
use crate::error::{Error, Result};

/// Operators interpreted per document; a larger count means a hostile or broken file.
pub(crate) const MAX_OPERATORS: usize = 20_000_000;
/// Nested Form XObjects.
const MAX_FORM_DEPTH: usize = 12;
/// Saved graphics states (`q`) kept; deeper pushes are ignored rather than grown without end.
const MAX_STATE_STACK: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Matrix([f64; 6]);

impl Matrix {
    const IDENTITY: Matrix = Matrix([1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);

    fn from_operands(ops: &[Object]) -> Option<Matrix> {
        if ops.len() < 6 {
            return None;
        }
        let v: Vec<f64> = ops[ops.len() - 6..]
            .iter()
            .filter_map(Object::as_f64)
            .collect();
        let arr: [f64; 6] = v.try_into().ok()?;
        Some(Matrix(arr))
    }

    fn translate(tx: f64, ty: f64) -> Matrix {
        Matrix([1.0, 0.0, 0.0, 1.0, tx, ty])
    }

    /// `self × other` (PDF's row-vector convention: apply `self` first).
    fn mul(&self, other: &Matrix) -> Matrix {
        let [a1, b1, c1, d1, e1, f1] = self.0;
        let [a2, b2, c2, d2, e2, f2] = other.0;
        Matrix([
            a1 * a2 + b1 * c2,
            a1 * b2 + b1 * d2,
            c1 * a2 + d1 * c2,
            c1 * b2 + d1 * d2,
            e1 * a2 + f1 * c2 + e2,
            e1 * b2 + f1 * d2 + f2,
        ])
    }

    fn apply(&self, x: f64, y: f64) -> (f64, f64) {
        let [a, b, c, d, e, f] = self.0;
        (x * a + y * c + e, x * b + y * d + f)
    }
}

#[derive(Debug, Clone)]
struct State {
    ctm: Matrix,
    font: Option<Rc<Font>>,
    size: f64,
    char_spacing: f64,
    word_spacing: f64,
    h_scale: f64,
    leading: f64,
    rise: f64,
}

/// Accumulates text, deciding spaces and line breaks from glyph positions.
#[derive(Debug)]
pub(crate) struct Sink {
    pub out: String,
    pub chars: usize,
    pub max_chars: Option<usize>,
    pub truncated: bool,
    /// End of the last glyph, in device space, with the font size and baseline direction.
    last: Option<LastGlyph>,
}

#[derive(Debug, Clone, Copy)]
struct LastGlyph {
    x: f64,
    y: f64,
    size: f64,
    dir: (f64, f64),
}

impl Sink {
    pub fn new(max_chars: Option<usize>) -> Sink {
        Sink {
            out: String::new(),
            chars: 0,
            max_chars,
            truncated: false,
            last: None,
        }
    }

    fn push(&mut self, s: &str) {
        for c in s.chars() {
            if self.truncated {
                return;
            }
            if c.is_control() && c != '\t' {
                continue;
            }
            if c == ' ' && (self.out.is_empty() || self.out.ends_with([' ', '\n'])) {
                continue;
            }
            if self.max_chars.is_some_and(|m| self.chars >= m) {
                self.truncated = true;
                return;
            }
            self.out.push(c);
            self.chars += 1;
        }
    }

    /// Ends the current line (no empty lines are produced).
    pub fn newline(&mut self) {
        while self.out.ends_with(' ') {
            self.out.pop();
            self.chars -= 1;
        }
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            if self.max_chars.is_some_and(|m| self.chars >= m) {
                self.truncated = true;
                return;
            }
            self.out.push('\n');
            self.chars += 1;
        }
        self.last = None;
    }

    /// Called before a glyph run starting at device position (x, y).
    fn position(&mut self, x: f64, y: f64, size: f64, dir: (f64, f64)) {
        if let Some(last) = self.last {
            let (dx, dy) = (x - last.x, y - last.y);
            let along = dx * last.dir.0 + dy * last.dir.1;
            let across = -dx * last.dir.1 + dy * last.dir.0;
            let em = last.size.max(size).max(0.01);
            if across.abs() > 0.5 * em {
                self.newline();
            } else if along > 0.2 * em {
                self.push(" ");
            }
        }
        self.last = Some(LastGlyph { x, y, size, dir });
    }

    fn advance_to(&mut self, x: f64, y: f64) {
        if let Some(last) = self.last.as_mut() {
            last.x = x;
            last.y = y;
        }
    }
}

/// Interprets the pages' content streams into `sink`.
pub(crate) struct Interpreter<'d, 'a> {
    doc: &'d Document<'a>,
    fonts: HashMap<u32, Rc<Font>>,
    pub operators: usize,
    pub unmapped: usize,
    forms: Vec<u32>,
}

impl<'d, 'a> Interpreter<'d, 'a> {
    pub fn new(doc: &'d Document<'a>) -> Self {
        Interpreter {
            doc,
            fonts: HashMap::new(),
            operators: 0,
            unmapped: 0,
            forms: Vec::new(),
        }
    }

    pub fn page(&mut self, page: &Page, sink: &mut Sink) -> Result<()> {
        let content = self.page_content(&page.dict)?;
        let resources = self.resources(page.resources.as_ref());
        let state = State {
            ctm: Matrix::IDENTITY,
            font: None,
            size: 0.0,
            char_spacing: 0.0,
            word_spacing: 0.0,
            h_scale: 1.0,
            leading: 0.0,
            rise: 0.0,
        };
        self.run(&content, &resources, state, sink)?;
        sink.newline();
        Ok(())
    }

    fn page_content(&self, page: &Dict) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        let contents = match page.get(b"Contents") {
            Some(o) => self.doc.resolve(o)?,
            None => return Ok(out),
        };
        let parts = match contents {
            Object::Array(items) => items,
            other => vec![other],
        };
        for part in parts {
            if let Object::Stream(s) = self.doc.resolve(&part)? {
                out.extend_from_slice(&self.doc.decode_stream(&s)?);
                // Streams of one page are concatenated; a token must not run across the seam.
                out.push(b'\n');
            }
        }
        Ok(out)
    }

    fn resources(&self, resources: Option<&Object>) -> Dict {
        match resources.map(|r| self.doc.resolve(r)) {
            Some(Ok(Object::Dict(d))) => d,
            _ => Dict::default(),
        }
    }

    fn font(&mut self, resources: &Dict, name: &[u8]) -> Option<Rc<Font>> {
        let fonts = self.doc.get_key(resources, b"Font").ok()?;
        let entry = fonts.as_dict()?.get(name)?.clone();
        if let Object::Ref(num, _) = entry {
            if let Some(f) = self.fonts.get(&num) {
                return Some(f.clone());
            }
            let dict = self.doc.resolve(&entry).ok()?;
            let font = Rc::new(Font::load(self.doc, dict.as_dict()?));
            self.fonts.insert(num, font.clone());
            return Some(font);
        }
        let dict = self.doc.resolve(&entry).ok()?;
        Some(Rc::new(Font::load(self.doc, dict.as_dict()?)))
    }

    fn run(
        &mut self,
        content: &[u8],
        resources: &Dict,
        mut state: State,
        sink: &mut Sink,
    ) -> Result<()> {
        let mut lx = Lexer::new(content, 0);
        let mut operands: Vec<Object> = Vec::new();
        let mut stack: Vec<State> = Vec::new();
        let mut tm = Matrix::IDENTITY;
        let mut tlm = Matrix::IDENTITY;
        while let Some(token) = lx.next_token() {
            if sink.truncated {
                return Ok(());
            }
            self.operators += 1;
            if self.operators > MAX_OPERATORS {
                return Err(Error::StructureLimit(format!(
                    "more than {MAX_OPERATORS} content operators"
                )));
            }
            let op = match token {
                Token::Keyword(op) => op,
                Token::ArrayEnd | Token::DictEnd => continue,
                other => {
                    match lx.object_from(other, 0) {
                        Ok(o) => {
                            if operands.len() >= 64 {
                                operands.remove(0);
                            }
                            operands.push(o);
                        }
                        Err(ParseError::TooDeep) => {
                            return Err(Error::StructureLimit("operands nested too deep".into()));
                        }
                        Err(ParseError::Syntax) => operands.clear(),
                    }
                    continue;
                }
            };
            let num = |i: usize| -> f64 {
                operands
                    .len()
                    .checked_sub(i)
                    .and_then(|k| operands.get(k))
                    .and_then(Object::as_f64)
                    .unwrap_or(0.0)
            };
            match op {
                b"q" if stack.len() < MAX_STATE_STACK => {
                    stack.push(state.clone());
                }
                b"Q" => {
                    if let Some(s) = stack.pop() {
                        state = s;
                    }
                }
                b"cm" => {
                    if let Some(m) = Matrix::from_operands(&operands) {
                        state.ctm = m.mul(&state.ctm);
                    }
                }
                b"BT" => {
                    tm = Matrix::IDENTITY;
                    tlm = Matrix::IDENTITY;
                }
                b"Tf" => {
                    state.size = num(1);
                    let name = operands
                        .len()
                        .checked_sub(2)
                        .and_then(|k| operands.get(k))
                        .and_then(Object::as_name);
                    state.font = name.and_then(|n| self.font(resources, n));
                }
                b"Tc" => state.char_spacing = num(1),
                b"Tw" => state.word_spacing = num(1),
                b"Tz" => state.h_scale = num(1) / 100.0,
                b"TL" => state.leading = num(1),
                b"Ts" => state.rise = num(1),
                b"Td" => {
                    tlm = Matrix::translate(num(2), num(1)).mul(&tlm);
                    tm = tlm;
                }
                b"TD" => {
                    state.leading = -num(1);
                    tlm = Matrix::translate(num(2), num(1)).mul(&tlm);
                    tm = tlm;
                }
                b"Tm" => {
                    if let Some(m) = Matrix::from_operands(&operands) {
                        tlm = m;
                        tm = m;
                    }
                }
                b"T*" => {
                    tlm = Matrix::translate(0.0, -state.leading).mul(&tlm);
                    tm = tlm;
                }
                b"Tj" | b"'" | b"\"" => {
                    if op != b"Tj" {
                        if op == b"\"" {
                            state.word_spacing = num(3);
                            state.char_spacing = num(2);
                        }
                        tlm = Matrix::translate(0.0, -state.leading).mul(&tlm);
                        tm = tlm;
                    }
                    if let Some(Object::String(s)) = operands.last() {
                        self.show(s, &state, &mut tm, sink);
                    }
                }
                b"TJ" => {
                    if let Some(Object::Array(items)) = operands.last() {
                        for item in items {
                            match item {
                                Object::String(s) => self.show(s, &state, &mut tm, sink),
                                other => {
                                    let adjust = other.as_f64().unwrap_or(0.0);
                                    let tx = -adjust / 1000.0 * state.size * state.h_scale;
                                    tm = Matrix::translate(tx, 0.0).mul(&tm);
                                }
                            }
                        }
                    }
                }
                b"Do" => {
                    if let Some(name) = operands.last().and_then(Object::as_name) {
                        let name = name.to_vec();
                        self.form(resources, &name, &state, sink)?;
                    }
                }
                b"BI" => skip_inline_image(&mut lx),
                _ => {}
            }
            operands.clear();
        }
        Ok(())
    }

    fn show(&mut self, bytes: &[u8], state: &State, tm: &mut Matrix, sink: &mut Sink) {
        let font = state
            .font
            .clone()
            .unwrap_or_else(|| Rc::new(Font::fallback()));
        let glyphs = font.decode(bytes, &mut self.unmapped);
        let start = Matrix::translate(0.0, state.rise).mul(tm).mul(&state.ctm);
        let (x, y) = start.apply(0.0, 0.0);
        let [_, _, c, d, ..] = start.0;
        let size = (state.size * (c * c + d * d).sqrt()).abs();
        let [a, b, ..] = start.0;
        let norm = (a * a + b * b).sqrt();
        let dir = if norm > 1e-9 {
            (a / norm, b / norm)
        } else {
            (1.0, 0.0)
        };
        sink.position(x, y, size, dir);
        for g in glyphs {
            if let Some(t) = &g.text {
                sink.push(t);
            }
            let mut tx = g.width / 1000.0 * state.size + state.char_spacing;
            if g.is_space_code {
                tx += state.word_spacing;
            }
            *tm = Matrix::translate(tx * state.h_scale, 0.0).mul(tm);
        }
        let end = Matrix::translate(0.0, state.rise).mul(tm).mul(&state.ctm);
        let (ex, ey) = end.apply(0.0, 0.0);
        sink.advance_to(ex, ey);
    }

    fn form(
        &mut self,
        resources: &Dict,
        name: &[u8],
        state: &State,
        sink: &mut Sink,
    ) -> Result<()> {
        let Ok(xobjects) = self.doc.get_key(resources, b"XObject") else {
            return Ok(());
        };
        let Some(entry) = xobjects.as_dict().and_then(|d| d.get(name)).cloned() else {
            return Ok(());
        };
        let num = match entry {
            Object::Ref(n, _) => n,
            _ => return Ok(()),
        };
        // A form that (directly or not) draws itself would recurse forever.
        if self.forms.contains(&num) || self.forms.len() >= MAX_FORM_DEPTH {
            return Ok(());
        }
        let Object::Stream(stream) = self.doc.get(num)? else {
            return Ok(());
        };
        if stream.dict.name(b"Subtype") != Some(b"Form") {
            return Ok(());
        }
        let content = self.doc.decode_stream(&stream)?;
        let own = match stream.dict.get(b"Resources") {
            Some(r) => self.resources(Some(r)),
            None => resources.clone(),
        };
        let mut inner = state.clone();
        if let Some(Object::Array(m)) = stream.dict.get(b"Matrix")
            && let Some(m) = Matrix::from_operands(m)
        {
            inner.ctm = m.mul(&state.ctm);
        }
        self.forms.push(num);
        let result = self.run(&content, &own, inner, sink);
        self.forms.pop();
        result
    }
}

/// Skips an inline image: its dictionary up to `ID`, then binary data up to `EI`.
fn skip_inline_image(lx: &mut Lexer<'_>) {
    while let Some(t) = lx.next_token() {
        if t == Token::Keyword(b"ID") {
            break;
        }
    }
    let data = lx.data;
    let mut i = lx.pos + 1;
    while i + 2 <= data.len() {
        if &data[i..i + 2] == b"EI"
            && data
                .get(i.wrapping_sub(1))
                .is_some_and(|&b| super::lexer::is_whitespace(b))
            && data
                .get(i + 2)
                .is_none_or(|&b| super::lexer::is_whitespace(b))
        {
            lx.pos = i + 2;
            return;
        }
        i += 1;
    }
    lx.pos = data.len();
}
