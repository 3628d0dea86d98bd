//! Excel formula text: a tokenizer, a syntax check, reference shifting (fill and shared
//! formulas) and the file-format spellings of newer functions.
//!
//! Formulas are handled as token streams over the original text: every token that is not
//! changed is copied byte for byte, so a formula that needs no change comes out identical.
//! The text given to these functions is the formula body as stored in the file, without the
//! leading `=`.

use crate::a1::{MAX_COL, MAX_ROW, column_name, column_number};

mod check;
#[cfg(test)]
mod tests;

pub use check::{Facts, check};

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
pub(crate) fn render(
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

pub(crate) fn render_pos(p: Pos) -> String {
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
