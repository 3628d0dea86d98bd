//! Excel formula text: a tokenizer, a syntax check, reference shifting (fill and shared
//! formulas) and the file-format spellings of newer functions.
//!
//! Formulas are handled as token streams over the original text: every token that is not
//! changed is copied byte for byte, so a formula that needs no change comes out identical.
//! The text given to these functions is the formula body as stored in the file, without the
//! leading `=`.

use crate::a1::{MAX_COL, MAX_ROW, column_name, column_number};

/// Why a formula does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub message: String,
    /// Byte offset in the formula body.
    pub at: usize,
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (at character {})", self.message, self.at + 1)
    }
}

fn syntax(message: impl Into<String>, at: usize) -> SyntaxError {
    SyntaxError {
        message: message.into(),
        at,
    }
}

/// One end of a reference: a column and row, each relative or absolute (`$`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub col: u32,
    pub col_abs: bool,
    pub row: u32,
    pub row_abs: bool,
}

/// A whole-column or whole-row bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Axis {
    pub n: u32,
    pub abs: bool,
}

/// The part of a reference after any sheet prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefArea {
    Cell(Pos),
    Range(Pos, Pos),
    Columns(Axis, Axis),
    Rows(Axis, Axis),
    /// `Sheet1!#REF!`: a reference Excel already lost.
    Lost,
}

/// A sheet prefix: `Sheet1!`, `'My sheet'!`, `Sheet1:Sheet3!`, `[1]Sheet1!`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefix {
    /// The external workbook (`1` in `[1]Sheet1!A1`), if any.
    pub external: Option<String>,
    /// The sheet name, unquoted; empty for `[1]!Name`.
    pub sheet: String,
    /// The last sheet of a 3-D reference.
    pub last_sheet: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub prefix: Option<Prefix>,
    pub area: RefArea,
    /// Byte offset (in the formula) where the area starts, after the prefix.
    pub area_start: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Number,
    Text,
    Bool,
    /// An error literal such as `#DIV/0!`.
    Error,
    /// A function name; the `(` is the next token.
    Function,
    /// A defined name, LET/LAMBDA parameter or other identifier, with any sheet prefix.
    Name(Option<Prefix>),
    Reference(Reference),
    /// A table reference such as `Table1[Amount]`.
    Structured,
    /// An operator: `+ - * / ^ & = < > <= >= <> % : @` and the spill `#`.
    Op,
    Comma,
    Semicolon,
    Open,
    Close,
    OpenBrace,
    CloseBrace,
    Space,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

impl Token {
    pub fn text<'a>(&self, formula: &'a str) -> &'a str {
        formula.get(self.start..self.end).unwrap_or("")
    }
}

const ERROR_LITERALS: &[&str] = &[
    "#NULL!",
    "#DIV/0!",
    "#VALUE!",
    "#REF!",
    "#NAME?",
    "#NUM!",
    "#N/A",
    "#GETTING_DATA",
    "#SPILL!",
    "#CALC!",
    "#FIELD!",
    "#BLOCKED!",
    "#CONNECT!",
    "#BUSY!",
    "#UNKNOWN!",
];

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || c == '\\'
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '.' | '\\' | '?')
}

struct Lexer<'a> {
    f: &'a str,
    tokens: Vec<Token>,
}

impl<'a> Lexer<'a> {
    fn char_at(&self, i: usize) -> Option<char> {
        self.f.get(i..).and_then(|s| s.chars().next())
    }

    fn push(&mut self, kind: Kind, start: usize, end: usize) {
        self.tokens.push(Token { kind, start, end });
    }

    /// Whether the previous non-space token ends an operand (so `#` after it is the spill
    /// operator, not the start of an error literal).
    fn after_operand(&self) -> bool {
        self.tokens
            .iter()
            .rev()
            .find(|t| t.kind != Kind::Space)
            .is_some_and(|t| {
                matches!(
                    t.kind,
                    Kind::Reference(_) | Kind::Name(_) | Kind::Close | Kind::Structured
                )
            })
    }

    /// True if a reference may end at `i`: nothing that would extend a name follows.
    fn boundary(&self, i: usize) -> bool {
        match self.char_at(i) {
            None => true,
            Some(c) => !(is_ident_char(c) || matches!(c, '(' | '!' | '[' | '$')),
        }
    }

    fn scan_ident(&self, start: usize) -> usize {
        let mut i = start;
        while let Some(c) = self.char_at(i) {
            if is_ident_char(c) {
                i += c.len_utf8();
            } else {
                break;
            }
        }
        i
    }

    fn scan_col(&self, start: usize) -> Option<(Axis, usize)> {
        let b = self.f.as_bytes();
        let mut i = start;
        let abs = b.get(i) == Some(&b'$');
        if abs {
            i += 1;
        }
        let s = i;
        while i < b.len() && b[i].is_ascii_alphabetic() && i - s < 4 {
            i += 1;
        }
        let n = column_number(self.f.get(s..i)?)?;
        Some((Axis { n, abs }, i))
    }

    fn scan_row(&self, start: usize) -> Option<(Axis, usize)> {
        let b = self.f.as_bytes();
        let mut i = start;
        let abs = b.get(i) == Some(&b'$');
        if abs {
            i += 1;
        }
        let s = i;
        while i < b.len() && b[i].is_ascii_digit() && i - s < 8 {
            i += 1;
        }
        let digits = self.f.get(s..i)?;
        if digits.is_empty() || digits.starts_with('0') {
            return None;
        }
        let n: u32 = digits.parse().ok()?;
        (n <= MAX_ROW).then_some((Axis { n, abs }, i))
    }

    fn scan_pos(&self, start: usize) -> Option<(Pos, usize)> {
        let (col, i) = self.scan_col(start)?;
        let (row, j) = self.scan_row(i)?;
        Some((
            Pos {
                col: col.n,
                col_abs: col.abs,
                row: row.n,
                row_abs: row.abs,
            },
            j,
        ))
    }

    /// A reference area starting at `start`, if one is there.
    fn scan_area(&self, start: usize) -> Option<(RefArea, usize)> {
        if let Some((p, j)) = self.scan_pos(start) {
            if self.char_at(j) == Some(':')
                && let Some((q, k)) = self.scan_pos(j + 1)
                && self.boundary(k)
            {
                return Some((RefArea::Range(p, q), k));
            }
            if self.boundary(j) {
                return Some((RefArea::Cell(p), j));
            }
        }
        if let Some((a, j)) = self.scan_col(start)
            && self.char_at(j) == Some(':')
            && let Some((b, k)) = self.scan_col(j + 1)
            && self.boundary(k)
        {
            return Some((RefArea::Columns(a, b), k));
        }
        if let Some((a, j)) = self.scan_row(start)
            && self.char_at(j) == Some(':')
            && let Some((b, k)) = self.scan_row(j + 1)
            && self.boundary(k)
        {
            return Some((RefArea::Rows(a, b), k));
        }
        None
    }

    /// What follows a sheet prefix ending just before `i`.
    fn after_prefix(
        &mut self,
        start: usize,
        i: usize,
        prefix: Prefix,
    ) -> Result<usize, SyntaxError> {
        if let Some(rest) = self.f.get(i..)
            && rest.len() >= 5
            && rest
                .get(..5)
                .is_some_and(|s| s.eq_ignore_ascii_case("#REF!"))
        {
            let kind = Kind::Reference(Reference {
                prefix: Some(prefix),
                area: RefArea::Lost,
                area_start: i,
            });
            self.push(kind, start, i + 5);
            return Ok(i + 5);
        }
        if let Some((area, end)) = self.scan_area(i) {
            let kind = Kind::Reference(Reference {
                prefix: Some(prefix),
                area,
                area_start: i,
            });
            self.push(kind, start, end);
            return Ok(end);
        }
        match self.char_at(i) {
            Some(c) if is_ident_start(c) => {
                let end = self.scan_ident(i);
                let kind = if self.char_at(end) == Some('(') {
                    Kind::Function
                } else {
                    Kind::Name(Some(prefix))
                };
                self.push(kind, start, end);
                Ok(end)
            }
            _ => Err(syntax(
                "expected a reference or name after the sheet name",
                i,
            )),
        }
    }

    fn string_literal(&mut self, start: usize) -> Result<usize, SyntaxError> {
        let b = self.f.as_bytes();
        let mut i = start + 1;
        loop {
            match b.get(i) {
                None => return Err(syntax("unterminated text (missing closing \")", start)),
                Some(b'"') if b.get(i + 1) == Some(&b'"') => i += 2,
                Some(b'"') => {
                    self.push(Kind::Text, start, i + 1);
                    return Ok(i + 1);
                }
                Some(_) => i += 1,
            }
        }
    }

    fn quoted_prefix(&mut self, start: usize) -> Result<usize, SyntaxError> {
        let b = self.f.as_bytes();
        let mut i = start + 1;
        let mut name = String::new();
        loop {
            match b.get(i) {
                None => return Err(syntax("unterminated quoted sheet name", start)),
                Some(b'\'') if b.get(i + 1) == Some(&b'\'') => {
                    name.push('\'');
                    i += 2;
                }
                Some(b'\'') => {
                    i += 1;
                    break;
                }
                Some(_) => {
                    let c = self.char_at(i).unwrap_or('\u{fffd}');
                    name.push(c);
                    i += c.len_utf8().max(1);
                }
            }
        }
        if b.get(i) != Some(&b'!') {
            return Err(syntax("a quoted sheet name must be followed by !", i));
        }
        let prefix = split_prefix(&name);
        self.after_prefix(start, i + 1, prefix)
    }

    /// `[1]Sheet1!A1`, `[Book.xlsx]Sheet1!A1`, `[1]!Name`, or a table reference without a
    /// table name (`[@Amount]`) when no sheet prefix follows.
    fn bracket(&mut self, start: usize) -> Result<usize, SyntaxError> {
        let close = match self.f.get(start..).and_then(|s| s.find(']')) {
            Some(p) => start + p,
            None => return Err(syntax("unterminated [", start)),
        };
        let book = self.f.get(start + 1..close).unwrap_or("").to_string();
        let after = close + 1;
        if self.char_at(after) == Some('!') {
            let prefix = Prefix {
                external: Some(book),
                sheet: String::new(),
                last_sheet: None,
            };
            return self.after_prefix(start, after + 1, prefix);
        }
        let sheet_end = self.scan_ident(after);
        if sheet_end > after && self.char_at(sheet_end) == Some('!') && !book.contains('[') {
            let sheet = self.f.get(after..sheet_end).unwrap_or("").to_string();
            let prefix = Prefix {
                external: Some(book),
                sheet,
                last_sheet: None,
            };
            return self.after_prefix(start, sheet_end + 1, prefix);
        }
        let end = self.balanced_brackets(start)?;
        self.push(Kind::Structured, start, end);
        Ok(end)
    }

    fn balanced_brackets(&self, start: usize) -> Result<usize, SyntaxError> {
        let b = self.f.as_bytes();
        let mut depth = 0usize;
        let mut i = start;
        while i < b.len() {
            match b[i] {
                b'[' => depth += 1,
                b']' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Ok(i + 1);
                    }
                }
                // An apostrophe escapes the next character inside table specifiers.
                b'\'' => i += 1,
                _ => {}
            }
            i += 1;
        }
        Err(syntax("unterminated [", start))
    }

    fn number(&mut self, start: usize) -> Result<usize, SyntaxError> {
        let b = self.f.as_bytes();
        let mut i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        }
        if i == start || (i == start + 1 && b[start] == b'.') {
            return Err(syntax("malformed number", start));
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            let mut j = i + 1;
            if matches!(b.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            let digits = j;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if j == digits {
                return Err(syntax("malformed number exponent", i));
            }
            i = j;
        }
        if self
            .char_at(i)
            .is_some_and(|c| is_ident_char(c) && c != '.')
        {
            return Err(syntax("malformed number", start));
        }
        self.push(Kind::Number, start, i);
        Ok(i)
    }

    fn identifier(&mut self, start: usize) -> Result<usize, SyntaxError> {
        let end = self.scan_ident(start);
        match self.char_at(end) {
            Some('(') => {
                self.push(Kind::Function, start, end);
                Ok(end)
            }
            Some('!') => {
                let sheet = self.f.get(start..end).unwrap_or("").to_string();
                self.after_prefix(
                    start,
                    end + 1,
                    Prefix {
                        external: None,
                        sheet,
                        last_sheet: None,
                    },
                )
            }
            Some('[') => {
                let close = self.balanced_brackets(end)?;
                self.push(Kind::Structured, start, close);
                Ok(close)
            }
            Some(':') => {
                // `Sheet1:Sheet3!A1` — a 3-D prefix — or a range between names.
                let second_end = self.scan_ident(end + 1);
                if second_end > end + 1 && self.char_at(second_end) == Some('!') {
                    let prefix = Prefix {
                        external: None,
                        sheet: self.f.get(start..end).unwrap_or("").to_string(),
                        last_sheet: Some(self.f.get(end + 1..second_end).unwrap_or("").to_string()),
                    };
                    return self.after_prefix(start, second_end + 1, prefix);
                }
                self.name_or_bool(start, end);
                Ok(end)
            }
            _ => {
                self.name_or_bool(start, end);
                Ok(end)
            }
        }
    }

    fn name_or_bool(&mut self, start: usize, end: usize) {
        let text = self.f.get(start..end).unwrap_or("");
        let kind = if text.eq_ignore_ascii_case("TRUE") || text.eq_ignore_ascii_case("FALSE") {
            Kind::Bool
        } else {
            Kind::Name(None)
        };
        self.push(kind, start, end);
    }

    fn run(mut self) -> Result<Vec<Token>, SyntaxError> {
        let mut i = 0;
        while let Some(c) = self.char_at(i) {
            let start = i;
            i = match c {
                ' ' | '\n' | '\r' | '\t' => {
                    let mut j = i;
                    while matches!(self.char_at(j), Some(' ' | '\n' | '\r' | '\t')) {
                        j += 1;
                    }
                    self.push(Kind::Space, start, j);
                    j
                }
                '"' => self.string_literal(start)?,
                '\'' => self.quoted_prefix(start)?,
                '[' => self.bracket(start)?,
                '#' => {
                    let rest = self.f.get(start..).unwrap_or("");
                    let literal = ERROR_LITERALS.iter().find(|e| {
                        rest.len() >= e.len()
                            && rest
                                .get(..e.len())
                                .is_some_and(|s| s.eq_ignore_ascii_case(e))
                    });
                    match literal {
                        Some(e) if !self.after_operand() => {
                            self.push(Kind::Error, start, start + e.len());
                            start + e.len()
                        }
                        _ if self.after_operand() => {
                            self.push(Kind::Op, start, start + 1);
                            start + 1
                        }
                        _ => return Err(syntax("unknown error value", start)),
                    }
                }
                '(' | ')' | '{' | '}' | ',' | ';' => {
                    let kind = match c {
                        '(' => Kind::Open,
                        ')' => Kind::Close,
                        '{' => Kind::OpenBrace,
                        '}' => Kind::CloseBrace,
                        ',' => Kind::Comma,
                        _ => Kind::Semicolon,
                    };
                    self.push(kind, start, start + 1);
                    start + 1
                }
                '<' | '>' => {
                    let next = self.char_at(start + 1);
                    let len = match (c, next) {
                        ('<', Some('=' | '>')) | ('>', Some('=')) => 2,
                        _ => 1,
                    };
                    self.push(Kind::Op, start, start + len);
                    start + len
                }
                '+' | '-' | '*' | '/' | '^' | '&' | '=' | '%' | ':' | '@' => {
                    self.push(Kind::Op, start, start + 1);
                    start + 1
                }
                '$' => match self.scan_area(start) {
                    Some((area, end)) => {
                        let r = Reference {
                            prefix: None,
                            area,
                            area_start: start,
                        };
                        self.push(Kind::Reference(r), start, end);
                        end
                    }
                    None => return Err(syntax("malformed reference", start)),
                },
                '0'..='9' => match self.scan_area(start) {
                    Some((area @ RefArea::Rows(..), end)) => {
                        let r = Reference {
                            prefix: None,
                            area,
                            area_start: start,
                        };
                        self.push(Kind::Reference(r), start, end);
                        end
                    }
                    _ => self.number(start)?,
                },
                '.' => self.number(start)?,
                c if is_ident_start(c) => match self.scan_area(start) {
                    Some((area, end)) => {
                        let r = Reference {
                            prefix: None,
                            area,
                            area_start: start,
                        };
                        self.push(Kind::Reference(r), start, end);
                        end
                    }
                    None => self.identifier(start)?,
                },
                other => return Err(syntax(format!("unexpected character {other:?}"), start)),
            };
        }
        Ok(self.tokens)
    }
}

/// `Sheet1`, `Sheet1:Sheet3`, `[1]Sheet1`, `C:\dir\[Book.xlsx]Sheet1` (quoted prefix content).
fn split_prefix(name: &str) -> Prefix {
    let (external, rest) = match (name.rfind('['), name.rfind(']')) {
        (Some(open), Some(close)) if open < close => (
            Some(name.get(..close + 1).unwrap_or("").to_string()),
            name.get(close + 1..).unwrap_or(""),
        ),
        _ => (None, name),
    };
    match rest.split_once(':') {
        Some((a, b)) if external.is_none() => Prefix {
            external,
            sheet: a.to_string(),
            last_sheet: Some(b.to_string()),
        },
        _ => Prefix {
            external,
            sheet: rest.to_string(),
            last_sheet: None,
        },
    }
}

/// Splits a formula body into tokens.
pub fn tokenize(formula: &str) -> Result<Vec<Token>, SyntaxError> {
    Lexer {
        f: formula,
        tokens: Vec::new(),
    }
    .run()
}

/// Rebuilds the text, replacing the tokens `replace` returns text for.
fn render(
    formula: &str,
    tokens: &[Token],
    mut replace: impl FnMut(usize, &Token) -> Option<String>,
) -> String {
    let mut out = String::with_capacity(formula.len() + 8);
    let mut last = 0;
    for (i, t) in tokens.iter().enumerate() {
        if let Some(new) = replace(i, t) {
            out.push_str(formula.get(last..t.start).unwrap_or(""));
            out.push_str(&new);
            last = t.end;
        }
    }
    out.push_str(formula.get(last..).unwrap_or(""));
    out
}

fn render_pos(p: Pos) -> String {
    format!(
        "{}{}{}{}",
        if p.col_abs { "$" } else { "" },
        column_name(p.col),
        if p.row_abs { "$" } else { "" },
        p.row
    )
}

fn shift_axis(a: Axis, by: i64, max: u32) -> Option<Axis> {
    if a.abs {
        return Some(a);
    }
    let n = i64::from(a.n) + by;
    (1..=i64::from(max)).contains(&n).then_some(Axis {
        n: n as u32,
        abs: false,
    })
}

fn shift_pos(p: Pos, rows: i64, cols: i64) -> Option<Pos> {
    let col = shift_axis(
        Axis {
            n: p.col,
            abs: p.col_abs,
        },
        cols,
        MAX_COL,
    )?;
    let row = shift_axis(
        Axis {
            n: p.row,
            abs: p.row_abs,
        },
        rows,
        MAX_ROW,
    )?;
    Some(Pos {
        col: col.n,
        col_abs: col.abs,
        row: row.n,
        row_abs: row.abs,
    })
}

/// The area moved by an offset, as text; `None` if it leaves the sheet.
fn shift_area(area: RefArea, rows: i64, cols: i64) -> Option<String> {
    Some(match area {
        RefArea::Cell(p) => render_pos(shift_pos(p, rows, cols)?),
        RefArea::Range(p, q) => {
            format!(
                "{}:{}",
                render_pos(shift_pos(p, rows, cols)?),
                render_pos(shift_pos(q, rows, cols)?)
            )
        }
        RefArea::Columns(a, b) => {
            let a = shift_axis(a, cols, MAX_COL)?;
            let b = shift_axis(b, cols, MAX_COL)?;
            format!(
                "{}{}:{}{}",
                if a.abs { "$" } else { "" },
                column_name(a.n),
                if b.abs { "$" } else { "" },
                column_name(b.n)
            )
        }
        RefArea::Rows(a, b) => {
            let a = shift_axis(a, rows, MAX_ROW)?;
            let b = shift_axis(b, rows, MAX_ROW)?;
            format!(
                "{}{}:{}{}",
                if a.abs { "$" } else { "" },
                a.n,
                if b.abs { "$" } else { "" },
                b.n
            )
        }
        RefArea::Lost => "#REF!".to_string(),
    })
}

/// A formula moved by an offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shifted {
    pub text: String,
    /// References (as originally written) that left the sheet and became `#REF!`.
    pub lost: Vec<String>,
}

/// Moves every relative reference by `rows`/`cols`, as Excel does when a formula is filled or
/// copied. Absolute parts (`$`) stay; a reference pushed off the sheet becomes `#REF!` (keeping
/// its sheet prefix). Names, table references and text are untouched.
pub fn shift(formula: &str, rows: i64, cols: i64) -> Result<Shifted, SyntaxError> {
    let tokens = tokenize(formula)?;
    if rows == 0 && cols == 0 {
        return Ok(Shifted {
            text: formula.to_string(),
            lost: Vec::new(),
        });
    }
    let mut lost = Vec::new();
    let text = render(formula, &tokens, |_, t| {
        let Kind::Reference(r) = &t.kind else {
            return None;
        };
        let prefix = formula.get(t.start..r.area_start).unwrap_or("");
        let area = formula.get(r.area_start..t.end).unwrap_or("");
        match shift_area(r.area, rows, cols) {
            Some(new) if new == area => None,
            Some(new) => Some(format!("{prefix}{new}")),
            None => {
                lost.push(t.text(formula).to_string());
                Some(format!("{prefix}#REF!"))
            }
        }
    });
    Ok(Shifted { text, lost })
}

/// Functions added to Excel after the 2007 file format; in a file they must be spelled with
/// the `_xlfn.` prefix (and FILTER/SORT also `_xlws.`), or Excel shows `#NAME?`.
const FUTURE_FUNCTIONS: &[&str] = &[
    "ACOT",
    "ACOTH",
    "AGGREGATE",
    "ARABIC",
    "ARRAYTOTEXT",
    "BASE",
    "BETA.DIST",
    "BETA.INV",
    "BINOM.DIST",
    "BINOM.DIST.RANGE",
    "BINOM.INV",
    "BITAND",
    "BITLSHIFT",
    "BITOR",
    "BITRSHIFT",
    "BITXOR",
    "BYCOL",
    "BYROW",
    "CEILING.MATH",
    "CEILING.PRECISE",
    "CHISQ.DIST",
    "CHISQ.DIST.RT",
    "CHISQ.INV",
    "CHISQ.INV.RT",
    "CHISQ.TEST",
    "CHOOSECOLS",
    "CHOOSEROWS",
    "COMBINA",
    "CONCAT",
    "CONFIDENCE.NORM",
    "CONFIDENCE.T",
    "COT",
    "COTH",
    "COVARIANCE.P",
    "COVARIANCE.S",
    "CSC",
    "CSCH",
    "DAYS",
    "DECIMAL",
    "DROP",
    "ERF.PRECISE",
    "ERFC.PRECISE",
    "EXPAND",
    "EXPON.DIST",
    "F.DIST",
    "F.DIST.RT",
    "F.INV",
    "F.INV.RT",
    "F.TEST",
    "FILTERXML",
    "FLOOR.MATH",
    "FLOOR.PRECISE",
    "FORECAST.ETS",
    "FORECAST.ETS.CONFINT",
    "FORECAST.ETS.SEASONALITY",
    "FORECAST.ETS.STAT",
    "FORECAST.LINEAR",
    "FORMULATEXT",
    "GAMMA",
    "GAMMA.DIST",
    "GAMMA.INV",
    "GAMMALN.PRECISE",
    "GAUSS",
    "GROUPBY",
    "HSTACK",
    "HYPGEOM.DIST",
    "IFNA",
    "IFS",
    "IMAGE",
    "IMCOSH",
    "IMCOT",
    "IMCSC",
    "IMCSCH",
    "IMSEC",
    "IMSECH",
    "IMSINH",
    "IMTAN",
    "ISFORMULA",
    "ISOMITTED",
    "ISOWEEKNUM",
    "LAMBDA",
    "LET",
    "LOGNORM.DIST",
    "LOGNORM.INV",
    "MAKEARRAY",
    "MAP",
    "MAXIFS",
    "MINIFS",
    "MODE.MULT",
    "MODE.SNGL",
    "MUNIT",
    "NEGBINOM.DIST",
    "NETWORKDAYS.INTL",
    "NORM.DIST",
    "NORM.INV",
    "NORM.S.DIST",
    "NORM.S.INV",
    "NUMBERVALUE",
    "PDURATION",
    "PERCENTILE.EXC",
    "PERCENTILE.INC",
    "PERCENTOF",
    "PERCENTRANK.EXC",
    "PERCENTRANK.INC",
    "PERMUTATIONA",
    "PHI",
    "PIVOTBY",
    "POISSON.DIST",
    "QUARTILE.EXC",
    "QUARTILE.INC",
    "RANDARRAY",
    "RANK.AVG",
    "RANK.EQ",
    "REDUCE",
    "REGEXEXTRACT",
    "REGEXREPLACE",
    "REGEXTEST",
    "RRI",
    "SCAN",
    "SEC",
    "SECH",
    "SEQUENCE",
    "SHEET",
    "SHEETS",
    "SKEW.P",
    "SORTBY",
    "STDEV.P",
    "STDEV.S",
    "SWITCH",
    "T.DIST",
    "T.DIST.2T",
    "T.DIST.RT",
    "T.INV",
    "T.INV.2T",
    "T.TEST",
    "TAKE",
    "TEXTAFTER",
    "TEXTBEFORE",
    "TEXTJOIN",
    "TEXTSPLIT",
    "TOCOL",
    "TOROW",
    "TRIMRANGE",
    "UNICHAR",
    "UNICODE",
    "UNIQUE",
    "VALUETOTEXT",
    "VAR.P",
    "VAR.S",
    "VSTACK",
    "WEBSERVICE",
    "WEIBULL.DIST",
    "WORKDAY.INTL",
    "WRAPCOLS",
    "WRAPROWS",
    "XLOOKUP",
    "XMATCH",
    "XOR",
    "Z.TEST",
];

/// Functions that also carry the worksheet-function namespace prefix.
const WORKSHEET_FUTURE_FUNCTIONS: &[&str] = &["FILTER", "SORT"];

/// The formula as Excel stores it: newer functions get `_xlfn.` (`_xlfn._xlws.` for FILTER and
/// SORT) and LET/LAMBDA parameters `_xlpm.`. A formula that does not tokenize is returned as is.
pub fn to_file_spelling(formula: &str) -> String {
    let Ok(tokens) = tokenize(formula) else {
        return formula.to_string();
    };
    let params = lambda_params(formula, &tokens);
    render(formula, &tokens, |i, t| match &t.kind {
        Kind::Function => {
            let name = t.text(formula);
            if name.contains('.') && name.to_ascii_uppercase().starts_with("_XL") {
                return None;
            }
            let upper = name.to_ascii_uppercase();
            if WORKSHEET_FUTURE_FUNCTIONS.contains(&upper.as_str()) {
                Some(format!("_xlfn._xlws.{name}"))
            } else if FUTURE_FUNCTIONS.binary_search(&upper.as_str()).is_ok() {
                Some(format!("_xlfn.{name}"))
            } else {
                None
            }
        }
        Kind::Name(None) if params.contains(&i) => Some(format!("_xlpm.{}", t.text(formula))),
        _ => None,
    })
}

/// The formula with the file-format prefixes removed, as a formula engine or a person reads it.
pub fn strip_file_prefixes(formula: &str) -> String {
    let Ok(tokens) = tokenize(formula) else {
        return formula.to_string();
    };
    render(formula, &tokens, |_, t| {
        let text = t.text(formula);
        match &t.kind {
            Kind::Function | Kind::Name(None) => {
                let mut rest = text;
                loop {
                    let lower = rest.get(..6).map(str::to_ascii_lowercase);
                    match lower.as_deref() {
                        Some("_xlfn." | "_xlws." | "_xlpm.") => rest = rest.get(6..).unwrap_or(""),
                        _ => break,
                    }
                }
                (rest.len() != text.len()).then(|| rest.to_string())
            }
            _ => None,
        }
    })
}

/// A whole-column or whole-row reference, one-based and inclusive, for
/// [`bound_whole_references_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WholeArea {
    /// Columns `from..=to` (`A:K` is `Columns(1, 11)`).
    Columns(u32, u32),
    /// Rows `from..=to`.
    Rows(u32, u32),
}

/// The formula with whole-column (`A:K`) and whole-row (`1:3`) references limited: `bound`
/// gives the last row a whole-column reference keeps, or the last column of a whole-row one.
/// For the formula engine only: it materialises every cell of a range, so `VLOOKUP(x, A:K, …)`
/// would otherwise walk a million rows; cells past the data are empty, so lookups and
/// aggregates give the same result. `bound` gets the reference's sheet prefix (`None` for the
/// formula's own sheet), so each reference can be bounded by the data of its own sheet and
/// columns rather than by the largest extent anywhere in the workbook.
pub fn bound_whole_references_with(
    formula: &str,
    bound: impl Fn(Option<&Prefix>, WholeArea) -> u32,
) -> String {
    let Ok(tokens) = tokenize(formula) else {
        return formula.to_string();
    };
    render(formula, &tokens, |_, t| {
        let Kind::Reference(r) = &t.kind else {
            return None;
        };
        let prefix = formula.get(t.start..r.area_start).unwrap_or("");
        let dollar = |abs: bool| if abs { "$" } else { "" };
        match r.area {
            RefArea::Columns(a, b) => {
                let area = WholeArea::Columns(a.n.min(b.n), a.n.max(b.n));
                let rows = bound(r.prefix.as_ref(), area).clamp(1, MAX_ROW);
                Some(format!(
                    "{prefix}{}{}$1:{}{}${rows}",
                    dollar(a.abs),
                    column_name(a.n),
                    dollar(b.abs),
                    column_name(b.n)
                ))
            }
            RefArea::Rows(a, b) => {
                let area = WholeArea::Rows(a.n.min(b.n), a.n.max(b.n));
                let cols = bound(r.prefix.as_ref(), area).clamp(1, MAX_COL);
                Some(format!(
                    "{prefix}$A{}{}:${}{}{}",
                    dollar(a.abs),
                    a.n,
                    column_name(cols),
                    dollar(b.abs),
                    b.n
                ))
            }
            _ => None,
        }
    })
}

/// How many cells the references of a formula cover (a whole column counts a million rows):
/// an estimate of the work an engine that materialises ranges does for it. A formula that does
/// not tokenize counts as one cell.
pub(crate) fn referenced_cells(formula: &str) -> u64 {
    let Ok(tokens) = tokenize(formula) else {
        return 1;
    };
    let span = |a: u32, b: u32| u64::from(a.abs_diff(b)) + 1;
    tokens
        .iter()
        .map(|t| match &t.kind {
            Kind::Reference(r) => match r.area {
                RefArea::Cell(_) | RefArea::Lost => 1,
                RefArea::Range(a, b) => span(a.row, b.row) * span(a.col, b.col),
                RefArea::Columns(a, b) => span(a.n, b.n) * u64::from(MAX_ROW),
                RefArea::Rows(a, b) => span(a.n, b.n) * u64::from(MAX_COL),
            },
            _ => 0,
        })
        .fold(0u64, u64::saturating_add)
}

/// Indexes of Name tokens that are LET/LAMBDA parameters (or uses of them) inside their call.
fn lambda_params(formula: &str, tokens: &[Token]) -> Vec<usize> {
    struct Call {
        let_call: bool,
        start: usize,
        depth: usize,
        arg: usize,
        arg_tokens: Vec<usize>,
        candidates: Vec<(usize, String)>,
    }
    let mut out = Vec::new();
    let mut calls: Vec<Call> = Vec::new();
    let mut depth = 0usize;
    let mut pending: Option<bool> = None;
    for (i, t) in tokens.iter().enumerate() {
        match &t.kind {
            Kind::Function => {
                let upper = t.text(formula).to_ascii_uppercase();
                let bare = upper.trim_start_matches("_XLFN.");
                pending = match bare {
                    "LET" => Some(true),
                    "LAMBDA" => Some(false),
                    _ => None,
                };
            }
            Kind::Open => {
                depth += 1;
                if let Some(let_call) = pending.take() {
                    calls.push(Call {
                        let_call,
                        start: i,
                        depth,
                        arg: 0,
                        arg_tokens: Vec::new(),
                        candidates: Vec::new(),
                    });
                }
            }
            Kind::Comma | Kind::Close => {
                if let Some(call) = calls.last_mut()
                    && call.depth == depth
                {
                    if let [only] = call.arg_tokens.as_slice()
                        && let Some(tok) = tokens.get(*only)
                        && matches!(tok.kind, Kind::Name(None))
                    {
                        call.candidates
                            .push((call.arg, tok.text(formula).to_ascii_uppercase()));
                    }
                    call.arg_tokens.clear();
                    call.arg += 1;
                }
                if t.kind == Kind::Close {
                    if let Some(call) = calls.last()
                        && call.depth == depth
                        && let Some(call) = calls.pop()
                    {
                        let last_arg = call.arg.saturating_sub(1);
                        let names: Vec<&String> = call
                            .candidates
                            .iter()
                            .filter(|(arg, _)| *arg < last_arg && (!call.let_call || arg % 2 == 0))
                            .map(|(_, n)| n)
                            .collect();
                        for (j, tok) in tokens.iter().enumerate().take(i).skip(call.start) {
                            if matches!(tok.kind, Kind::Name(None))
                                && names
                                    .iter()
                                    .any(|n| **n == tok.text(formula).to_ascii_uppercase())
                            {
                                out.push(j);
                            }
                        }
                    }
                    depth = depth.saturating_sub(1);
                }
            }
            Kind::Space => {}
            _ => {
                if let Some(call) = calls.last_mut()
                    && call.depth == depth
                {
                    call.arg_tokens.push(i);
                }
            }
        }
        if !matches!(t.kind, Kind::Function | Kind::Space) {
            pending = None;
        }
    }
    out
}

/// What a syntax check learned about a formula.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// Sheets the formula names (not external ones), first and last of 3-D references.
    pub sheets: Vec<String>,
    /// Error literals written in the formula (`#REF!`, …), including lost references.
    pub error_literals: Vec<String>,
    /// A division by a literal zero.
    pub divides_by_zero: bool,
    /// A construct the formula engine does not evaluate (external workbooks, 3-D references,
    /// table references, the intersection or spill operator), if any.
    pub unsupported: Option<&'static str>,
}

/// Parses a formula body against Excel's grammar.
pub fn check(formula: &str) -> Result<Facts, SyntaxError> {
    if formula.trim().is_empty() {
        return Err(syntax("empty formula", 0));
    }
    let tokens = tokenize(formula)?;
    let mut facts = Facts::default();
    for t in &tokens {
        match &t.kind {
            Kind::Reference(r) => {
                if let Some(p) = &r.prefix {
                    if p.external.is_some() {
                        facts
                            .unsupported
                            .get_or_insert("a reference to another workbook");
                    } else {
                        facts.sheets.push(p.sheet.clone());
                        if let Some(last) = &p.last_sheet {
                            facts.sheets.push(last.clone());
                            facts.unsupported.get_or_insert("a 3-D reference");
                        }
                    }
                }
                if r.area == RefArea::Lost {
                    facts.error_literals.push("#REF!".to_string());
                }
            }
            Kind::Name(Some(p)) => {
                if p.external.is_some() {
                    facts
                        .unsupported
                        .get_or_insert("a reference to another workbook");
                } else {
                    facts.sheets.push(p.sheet.clone());
                }
            }
            Kind::Structured => {
                facts.unsupported.get_or_insert("a table reference");
            }
            Kind::Error => facts
                .error_literals
                .push(t.text(formula).to_ascii_uppercase()),
            _ => {}
        }
    }
    let significant: Vec<&Token> = tokens.iter().filter(|t| t.kind != Kind::Space).collect();
    let spaced: Vec<bool> = {
        let mut v = Vec::with_capacity(significant.len());
        let mut prev_space = false;
        for t in &tokens {
            if t.kind == Kind::Space {
                prev_space = true;
            } else {
                v.push(prev_space);
                prev_space = false;
            }
        }
        v
    };
    let mut parser = Parser {
        f: formula,
        toks: significant,
        spaced,
        pos: 0,
        depth: 0,
        facts: &mut facts,
    };
    parser.expr(false)?;
    if let Some(t) = parser.toks.get(parser.pos) {
        return Err(syntax(format!("unexpected {:?}", t.text(formula)), t.start));
    }
    Ok(facts)
}

const MAX_NESTING: usize = 200;

struct Parser<'t, 'f> {
    f: &'t str,
    toks: Vec<&'t Token>,
    spaced: Vec<bool>,
    pos: usize,
    depth: usize,
    facts: &'f mut Facts,
}

impl Parser<'_, '_> {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.pos).copied()
    }

    fn peek_op(&self) -> Option<&str> {
        self.peek()
            .filter(|t| t.kind == Kind::Op)
            .map(|t| t.text(self.f))
    }

    fn end_pos(&self) -> usize {
        self.f.len()
    }

    fn here(&self) -> usize {
        self.peek().map_or(self.end_pos(), |t| t.start)
    }

    fn starts_operand(t: &Token) -> bool {
        matches!(
            t.kind,
            Kind::Number
                | Kind::Text
                | Kind::Bool
                | Kind::Error
                | Kind::Function
                | Kind::Name(_)
                | Kind::Reference(_)
                | Kind::Structured
                | Kind::Open
                | Kind::OpenBrace
        )
    }

    fn expr(&mut self, in_group: bool) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(syntax("formula is nested too deeply", self.here()));
        }
        self.unary()?;
        while let Some(t) = self.peek() {
            match &t.kind {
                Kind::Op
                    if matches!(
                        t.text(self.f),
                        "+" | "-"
                            | "*"
                            | "/"
                            | "^"
                            | "&"
                            | "="
                            | "<"
                            | ">"
                            | "<="
                            | ">="
                            | "<>"
                            | ":"
                    ) =>
                {
                    let is_div = t.text(self.f) == "/";
                    self.pos += 1;
                    if is_div {
                        self.note_zero_divisor();
                    }
                    self.unary()?;
                }
                Kind::Comma if in_group => {
                    self.pos += 1;
                    self.unary()?;
                }
                _ if Self::starts_operand(t) && self.spaced.get(self.pos) == Some(&true) => {
                    self.facts
                        .unsupported
                        .get_or_insert("the intersection operator");
                    self.unary()?;
                }
                _ => break,
            }
        }
        self.depth -= 1;
        Ok(())
    }

    /// Notes `x / 0` where the divisor is a literal zero that nothing binds more tightly.
    fn note_zero_divisor(&mut self) {
        let Some(t) = self.peek() else { return };
        if t.kind != Kind::Number || t.text(self.f).parse::<f64>().ok() != Some(0.0) {
            return;
        }
        let next = self.toks.get(self.pos + 1);
        let binds_tighter = next.is_some_and(|n| n.kind == Kind::Op && n.text(self.f) == "^");
        if !binds_tighter {
            self.facts.divides_by_zero = true;
        }
    }

    fn unary(&mut self) -> Result<(), SyntaxError> {
        while matches!(self.peek_op(), Some("+" | "-" | "@")) {
            self.pos += 1;
        }
        self.primary()?;
        while let Some(op) = self.peek_op() {
            match op {
                "%" => self.pos += 1,
                "#" => {
                    self.facts.unsupported.get_or_insert("the spill operator");
                    self.pos += 1;
                }
                _ => break,
            }
        }
        Ok(())
    }

    fn expect(&mut self, kind: Kind, what: &str) -> Result<(), SyntaxError> {
        match self.peek() {
            Some(t) if t.kind == kind => {
                self.pos += 1;
                Ok(())
            }
            _ => Err(syntax(format!("missing {what}"), self.here())),
        }
    }

    fn primary(&mut self) -> Result<(), SyntaxError> {
        let Some(t) = self.peek() else {
            return Err(syntax(
                "the formula ends where a value was expected",
                self.end_pos(),
            ));
        };
        match &t.kind {
            Kind::Number
            | Kind::Text
            | Kind::Bool
            | Kind::Error
            | Kind::Name(_)
            | Kind::Reference(_)
            | Kind::Structured => {
                self.pos += 1;
                Ok(())
            }
            Kind::Function => {
                self.pos += 1;
                self.expect(Kind::Open, "( after the function name")?;
                if self.peek().is_some_and(|t| t.kind == Kind::Close) {
                    self.pos += 1;
                    return Ok(());
                }
                loop {
                    if self.peek().is_none() {
                        return Err(syntax(
                            "missing ) at the end of a function call",
                            self.end_pos(),
                        ));
                    }
                    if !self
                        .peek()
                        .is_some_and(|t| matches!(t.kind, Kind::Comma | Kind::Close))
                    {
                        self.expr(false)?;
                    }
                    match self.peek().map(|t| &t.kind) {
                        Some(Kind::Comma) => self.pos += 1,
                        Some(Kind::Close) => {
                            self.pos += 1;
                            return Ok(());
                        }
                        _ => return Err(syntax("missing ) or , in a function call", self.here())),
                    }
                }
            }
            Kind::Open => {
                self.pos += 1;
                self.expr(true)?;
                self.expect(Kind::Close, ")")
            }
            Kind::OpenBrace => {
                self.pos += 1;
                loop {
                    if self.peek_op() == Some("-") {
                        self.pos += 1;
                    }
                    match self.peek().map(|t| &t.kind) {
                        Some(Kind::Number | Kind::Text | Kind::Bool | Kind::Error) => self.pos += 1,
                        _ => {
                            return Err(syntax(
                                "an array constant holds only numbers, text, booleans and errors",
                                self.here(),
                            ));
                        }
                    }
                    match self.peek().map(|t| &t.kind) {
                        Some(Kind::Comma | Kind::Semicolon) => self.pos += 1,
                        Some(Kind::CloseBrace) => {
                            self.pos += 1;
                            return Ok(());
                        }
                        _ => return Err(syntax("missing } in an array constant", self.here())),
                    }
                }
            }
            _ => Err(syntax(format!("unexpected {:?}", t.text(self.f)), t.start)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_shift(input: &str, rows: i64, cols: i64, expect: &str) {
        let got = shift(input, rows, cols).unwrap();
        assert_eq!(got.text, expect, "shift({input:?}, {rows}, {cols})");
    }

    #[test]
    fn shifts_relative_parts_only() {
        check_shift("A1+B2", 1, 1, "B2+C3");
        check_shift("$A1+A$1+$A$1", 2, 2, "$A3+C$1+$A$1");
        check_shift("SUM(A1:B3)*2", 3, 0, "SUM(A4:B6)*2");
        check_shift("SUM(A:A)+SUM(1:1)", 1, 1, "SUM(B:B)+SUM(2:2)");
        check_shift("SUM($A:$A)", 0, 5, "SUM($A:$A)");
        check_shift("Sheet2!A1+'My Sheet'!B2", 1, 0, "Sheet2!A2+'My Sheet'!B3");
        check_shift("入力!C3*2", 1, 0, "入力!C4*2");
        check_shift("\"A1\"&A1", 1, 0, "\"A1\"&A2");
        check_shift("LOG10(A1)", 1, 0, "LOG10(A2)");
        check_shift(
            "_xlfn.IFS(B10>=85,\"A\",TRUE,\"D\")",
            1,
            0,
            "_xlfn.IFS(B11>=85,\"A\",TRUE,\"D\")",
        );
        check_shift("Table1[Amount]+A1", 1, 0, "Table1[Amount]+A2");
        check_shift("MyName+A1", 0, 1, "MyName+B1");
        check_shift("A1", -1, 0, "#REF!");
        check_shift("Sheet2!A1+1", 0, -1, "Sheet2!#REF!+1");
        check_shift("SUM(A1:A3)", -1, 0, "SUM(#REF!)");
        check_shift("XFD1", 0, 1, "#REF!");
        check_shift("A1 + B1", 0, 0, "A1 + B1");
    }

    #[test]
    fn reports_lost_references() {
        let s = shift("A1+$B$1+C2", -1, 0).unwrap();
        assert_eq!(s.text, "#REF!+$B$1+C1");
        assert_eq!(s.lost, ["A1"]);
    }

    fn check_syntax(input: &str, expect: Result<(), &str>) {
        match (check(input), expect) {
            (Ok(_), Ok(())) => {}
            (Err(e), Err(want)) => {
                assert!(e.message.contains(want), "{input:?}: {e} lacks {want:?}")
            }
            (got, want) => panic!("{input:?}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn syntax_check() {
        check_syntax("SUM(A1:A3)", Ok(()));
        check_syntax("IF(A1,,1)", Ok(()));
        check_syntax("SUM(1,)", Ok(()));
        check_syntax("-A1%", Ok(()));
        check_syntax("{1,2;3,-4}", Ok(()));
        check_syntax("(A1,B1)", Ok(()));
        check_syntax("A1:A3 B1:B3", Ok(()));
        check_syntax("'Sheet 1'!A1&\"x\"\"y\"", Ok(()));
        check_syntax("NOW()", Ok(()));
        check_syntax("SUM(1,", Err("missing )"));
        check_syntax("(1", Err("missing )"));
        check_syntax("1++", Err("ends where a value"));
        check_syntax("=1", Err("unexpected"));
        check_syntax("SUM(1))", Err("unexpected"));
        check_syntax("\"abc", Err("unterminated text"));
        check_syntax("'abc", Err("unterminated quoted"));
        check_syntax("A1 ¤ B1", Err("unexpected character"));
        check_syntax("#FOO!", Err("unknown error"));
        check_syntax("{A1}", Err("array constant"));
        check_syntax("", Err("empty"));
        check_syntax(&"(".repeat(500), Err("nested too deeply"));
    }

    #[test]
    fn facts() {
        let f = check("Missing!A1+#REF!+A1/0+x/0^2").unwrap();
        assert_eq!(f.sheets, ["Missing"]);
        assert_eq!(f.error_literals, ["#REF!"]);
        assert!(f.divides_by_zero);
        assert!(!check("A1/0.5").unwrap().divides_by_zero);
        assert_eq!(
            check("[1]Sheet1!A1").unwrap().unsupported,
            Some("a reference to another workbook")
        );
        assert_eq!(check("SUM(Jan:Mar!A1)").unwrap().sheets, ["Jan", "Mar"]);
        assert_eq!(
            check("Table1[Col]").unwrap().unsupported,
            Some("a table reference")
        );
    }

    fn bound_whole_references(formula: &str, rows: u32, cols: u32) -> String {
        bound_whole_references_with(formula, |_, area| match area {
            WholeArea::Columns(..) => rows,
            WholeArea::Rows(..) => cols,
        })
    }

    #[test]
    fn whole_references_are_bounded_for_the_engine() {
        assert_eq!(
            bound_whole_references("VLOOKUP(A2,'2024.9'!A:K,2,FALSE)+SUM($B:$B)", 500, 30),
            "VLOOKUP(A2,'2024.9'!A$1:K$500,2,FALSE)+SUM($B$1:$B$500)"
        );
        assert_eq!(
            bound_whole_references("SUM(2:3)+A1", 500, 30),
            "SUM($A2:$AD3)+A1"
        );
        assert_eq!(bound_whole_references("\"A:A\"", 5, 5), "\"A:A\"");
        let by_area = |_: Option<&Prefix>, area| match area {
            WholeArea::Columns(1, 1) => 7,
            WholeArea::Columns(..) => 70,
            WholeArea::Rows(..) => 3,
        };
        assert_eq!(
            bound_whole_references_with("SUM(A:A)+SUM(S!C:B)+SUM(5:5)", by_area),
            "SUM(A$1:A$7)+SUM(S!C$1:B$70)+SUM($A5:$C5)"
        );
    }

    #[test]
    fn referenced_cells_estimate_the_engine_work() {
        assert_eq!(referenced_cells("1+2"), 0);
        assert_eq!(referenced_cells("A1+S!B2"), 2);
        assert_eq!(referenced_cells("SUM(B3:A1)"), 6);
        assert_eq!(referenced_cells("SUM(A:B)"), 2 * 1_048_576);
        assert_eq!(referenced_cells("SUM(1:1)"), 16_384);
        assert_eq!(referenced_cells("SUM(A1:XFD1048576)"), 1_048_576 * 16_384);
    }

    #[test]
    fn file_spelling_round_trip() {
        assert_eq!(
            to_file_spelling("IFS(A1>1,1,TRUE,2)"),
            "_xlfn.IFS(A1>1,1,TRUE,2)"
        );
        assert_eq!(to_file_spelling("_xlfn.IFS(A1>1,1)"), "_xlfn.IFS(A1>1,1)");
        assert_eq!(
            to_file_spelling("filter(A1:A3,A1:A3>0)"),
            "_xlfn._xlws.filter(A1:A3,A1:A3>0)"
        );
        assert_eq!(
            to_file_spelling("SUM(A1)+xlookup(1,A:A,B:B)"),
            "SUM(A1)+_xlfn.xlookup(1,A:A,B:B)"
        );
        assert_eq!(
            to_file_spelling("LET(x,1,y,2,x+y+z)"),
            "_xlfn.LET(_xlpm.x,1,_xlpm.y,2,_xlpm.x+_xlpm.y+z)"
        );
        assert_eq!(
            to_file_spelling("LAMBDA(a,a*2)(3)"),
            "_xlfn.LAMBDA(_xlpm.a,_xlpm.a*2)(3)"
        );
        assert_eq!(
            strip_file_prefixes("_xlfn.LET(_xlpm.x,1,_xlpm.x+1)"),
            "LET(x,1,x+1)"
        );
        assert_eq!(
            strip_file_prefixes("_xlfn._xlws.SORT(A1:A3)"),
            "SORT(A1:A3)"
        );
        assert!(
            FUTURE_FUNCTIONS.windows(2).all(|w| w[0] < w[1]),
            "the list must stay sorted"
        );
    }
}
