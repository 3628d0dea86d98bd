//! The row-expression language of the blocks that evaluate an expression per row
//! (`transforms.filter_rows`'s `condition`, `transforms.compute_columns`' `expr`,
//! `control.policy_enforce`'s `condition` and `when`): its tokenizer, parser and
//! [`columns`], the columns an expression reads.
//!
//! Column names are bare words (Japanese included; `` `a b` `` or `[a b]` for names with
//! spaces or operators); numbers, strings, `true`/`false`/`null`, `+ - * /`, comparisons
//! (`== != > >= < <=`, `=` too), `and`/`or`/`not` (`&&`/`||`/`!`), `in [..]`/`not in [..]`,
//! and the functions `contains`, `starts_with`, `ends_with`, `is_empty`, `round`, `floor`,
//! `ceil`, `abs`, `if`, `days_between`, `concat`, `len`, and `name_key` (a company or
//! person name in the form names are compared in: width, kana and legal forms folded, so
//! `name_key("(株)ﾔﾏﾀﾞ")` equals `name_key("株式会社ヤマダ")`).
//!
//! This is not the language of a node's `when` (see [`crate::expr`]: `${…}` references, no
//! bare names). It lives here, not in the runtime, so that the column check before a run
//! ([`crate::columns`]) reads an expression with the very parser the runtime evaluates it
//! with; keiri-run holds only the evaluator. The language has no assignment, no loops and no
//! access outside the row, so a plan cannot smuggle code in.

use serde_json::Value as J;

/// Folds full-width ASCII (`０-９`, `Ａ-Ｚ`, `，`, `．`, `／`, `（`…), the ideographic space
/// and the dash look-alikes to ASCII, and expands the one-character era names (`㋿`, `㍻`…).
/// Half-width text is returned unchanged, without allocating a different string.
pub fn fold_width(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\u{FF01}'..='\u{FF5E}' => out.push(char::from_u32(c as u32 - 0xFEE0).unwrap_or(c)),
            '\u{3000}' => out.push(' '),
            // MINUS SIGN, HYPHEN, NON-BREAKING HYPHEN, FIGURE DASH, EN DASH: all read as '-'.
            '\u{2212}' | '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' => out.push('-'),
            '\u{FFE5}' => out.push('¥'),
            '\u{32FF}' => out.push_str("令和"),
            '\u{337B}' => out.push_str("平成"),
            '\u{337C}' => out.push_str("昭和"),
            '\u{337D}' => out.push_str("大正"),
            '\u{337E}' => out.push_str("明治"),
            _ => out.push(c),
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Literal(J),
    Column(String),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    In(Box<Expr>, Vec<Expr>, bool),
    Call(String, Vec<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UnaryOp {
    Neg,
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BinOp {
    Or,
    And,
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Str(String),
    Ident(String),
    Quoted(String),
    Op(&'static str),
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
}

const FUNCTIONS: &[&str] = &[
    "contains",
    "starts_with",
    "ends_with",
    "is_empty",
    "round",
    "floor",
    "ceil",
    "abs",
    "if",
    "days_between",
    "concat",
    "len",
    "name_key",
];

fn is_ident_char(c: char) -> bool {
    !c.is_whitespace() && !"()[],+-*/<>=!\"'`&|".contains(c)
}

fn tokenize(src: &str) -> Result<Vec<Tok>, String> {
    tokenize_spanned(src).map(|(toks, _)| toks)
}

/// Where a token lies: `[start, end)` in characters of the folded text.
type Span = (usize, usize);

/// The tokens of `src` and where each lies: `[start, end)` in characters of the folded text
/// ([`fold_width`]).
fn tokenize_spanned(src: &str) -> Result<(Vec<Tok>, Vec<Span>), String> {
    // Full-width operators and digits (＞＝, １００) are common in Japanese text.
    let folded = fold_width(src);
    let chars: Vec<char> = folded.chars().collect();
    let mut out = Vec::new();
    let mut spans = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < chars.len() {
        // Every pass pushes at most one token: the one pushed last ends where this pass starts.
        if spans.len() < out.len() {
            spans.push((start, i));
        }
        start = i;
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let two: String = chars[i..chars.len().min(i + 2)].iter().collect();
        let op2 = match two.as_str() {
            "==" => Some("=="),
            "!=" => Some("!="),
            ">=" => Some(">="),
            "<=" => Some("<="),
            "&&" => Some("and"),
            "||" => Some("or"),
            "<>" => Some("!="),
            _ => None,
        };
        if let Some(op) = op2 {
            out.push(Tok::Op(op));
            i += 2;
            continue;
        }
        match c {
            '(' => out.push(Tok::LParen),
            ')' => out.push(Tok::RParen),
            '[' => {
                // `[name]` right after an operator or at the start is a quoted column name
                // when it holds no comma or quote; otherwise it opens a list.
                let close = chars[i..].iter().position(|&c| c == ']').map(|p| p + i);
                let previous_is_in =
                    matches!(out.last(), Some(Tok::Ident(w)) if w.eq_ignore_ascii_case("in"));
                match close {
                    Some(end)
                        if !previous_is_in
                            && !chars[i + 1..end]
                                .iter()
                                .any(|c| matches!(c, ',' | '"' | '\'')) =>
                    {
                        out.push(Tok::Quoted(chars[i + 1..end].iter().collect()));
                        i = end + 1;
                        continue;
                    }
                    _ => out.push(Tok::LBracket),
                }
            }
            ']' => out.push(Tok::RBracket),
            ',' => out.push(Tok::Comma),
            '+' => out.push(Tok::Op("+")),
            '-' => out.push(Tok::Op("-")),
            '*' => out.push(Tok::Op("*")),
            '/' => out.push(Tok::Op("/")),
            '>' => out.push(Tok::Op(">")),
            '<' => out.push(Tok::Op("<")),
            '=' => out.push(Tok::Op("==")),
            '!' => out.push(Tok::Op("not")),
            '"' | '\'' | '`' => {
                let mut j = i + 1;
                let mut s = String::new();
                while j < chars.len() && chars[j] != c {
                    if chars[j] == '\\' && j + 1 < chars.len() {
                        j += 1;
                    }
                    s.push(chars[j]);
                    j += 1;
                }
                if j >= chars.len() {
                    return Err(format!("unclosed {c} at column {}", i + 1));
                }
                out.push(if c == '`' {
                    Tok::Quoted(s)
                } else {
                    Tok::Str(s)
                });
                i = j + 1;
                continue;
            }
            c if c.is_ascii_digit()
                || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit())) =>
            {
                let mut j = i;
                while j < chars.len()
                    && (chars[j].is_ascii_digit() || chars[j] == '.' || chars[j] == ',')
                {
                    // A comma followed by three digits is a thousands separator (1,000).
                    if chars[j] == ',' {
                        let three = chars
                            .get(j + 1..j + 4)
                            .is_some_and(|s| s.iter().all(|d| d.is_ascii_digit()));
                        let then_no_digit = chars.get(j + 4).is_none_or(|d| !d.is_ascii_digit());
                        if !(three && then_no_digit) {
                            break;
                        }
                    }
                    j += 1;
                }
                let text: String = chars[i..j].iter().filter(|&&c| c != ',').collect();
                let n: f64 = text
                    .parse()
                    .map_err(|_| format!("bad number {text} at column {}", i + 1))?;
                out.push(Tok::Num(n));
                i = j;
                continue;
            }
            c if is_ident_char(c) => {
                let mut j = i;
                while j < chars.len() && is_ident_char(chars[j]) {
                    j += 1;
                }
                out.push(Tok::Ident(chars[i..j].iter().collect()));
                i = j;
                continue;
            }
            other => return Err(format!("unexpected {other:?} at column {}", i + 1)),
        }
        i += 1;
    }
    if spans.len() < out.len() {
        spans.push((start, chars.len()));
    }
    Ok((out, spans))
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn bump(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn is_word(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(w)) if w.eq_ignore_ascii_case(word))
            || matches!(self.peek(), Some(Tok::Op(op)) if *op == word)
    }

    fn expect(&mut self, tok: &Tok, what: &str) -> Result<(), String> {
        if self.peek() == Some(tok) {
            self.pos += 1;
            Ok(())
        } else {
            Err(format!("expected {what}"))
        }
    }

    fn or(&mut self) -> Result<Expr, String> {
        let mut left = self.and()?;
        while self.is_word("or") {
            self.pos += 1;
            left = Expr::Binary(BinOp::Or, Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut left = self.not()?;
        while self.is_word("and") {
            self.pos += 1;
            left = Expr::Binary(BinOp::And, Box::new(left), Box::new(self.not()?));
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Expr, String> {
        if self.is_word("not") {
            self.pos += 1;
            return Ok(Expr::Unary(UnaryOp::Not, Box::new(self.not()?)));
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Expr, String> {
        let left = self.sum()?;
        let negated_in = self.is_word("not")
            && matches!(self.toks.get(self.pos + 1), Some(Tok::Ident(w)) if w.eq_ignore_ascii_case("in"));
        if negated_in || self.is_word("in") {
            self.pos += if negated_in { 2 } else { 1 };
            let close = match self.bump() {
                Some(Tok::LBracket) => Tok::RBracket,
                Some(Tok::LParen) => Tok::RParen,
                _ => return Err("expected [ after in".into()),
            };
            let mut items = Vec::new();
            if self.peek() != Some(&close) {
                loop {
                    items.push(self.sum()?);
                    if self.peek() == Some(&Tok::Comma) {
                        self.pos += 1;
                    } else {
                        break;
                    }
                }
            }
            self.expect(&close, "] after the list")?;
            return Ok(Expr::In(Box::new(left), items, negated_in));
        }
        let op = match self.peek() {
            Some(Tok::Op("==")) => BinOp::Eq,
            Some(Tok::Op("!=")) => BinOp::Ne,
            Some(Tok::Op(">")) => BinOp::Gt,
            Some(Tok::Op(">=")) => BinOp::Ge,
            Some(Tok::Op("<")) => BinOp::Lt,
            Some(Tok::Op("<=")) => BinOp::Le,
            _ => return Ok(left),
        };
        self.pos += 1;
        Ok(Expr::Binary(op, Box::new(left), Box::new(self.sum()?)))
    }

    fn sum(&mut self) -> Result<Expr, String> {
        let mut left = self.product()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Op("+")) => BinOp::Add,
                Some(Tok::Op("-")) => BinOp::Sub,
                _ => return Ok(left),
            };
            self.pos += 1;
            left = Expr::Binary(op, Box::new(left), Box::new(self.product()?));
        }
    }

    fn product(&mut self) -> Result<Expr, String> {
        let mut left = self.unary()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Op("*")) => BinOp::Mul,
                Some(Tok::Op("/")) => BinOp::Div,
                _ => return Ok(left),
            };
            self.pos += 1;
            left = Expr::Binary(op, Box::new(left), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.peek() == Some(&Tok::Op("-")) {
            self.pos += 1;
            return Ok(Expr::Unary(UnaryOp::Neg, Box::new(self.unary()?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, String> {
        match self.bump() {
            Some(Tok::Num(n)) => Ok(Expr::Literal(number_literal(n))),
            Some(Tok::Str(s)) => Ok(Expr::Literal(J::String(s))),
            Some(Tok::Quoted(s)) => Ok(Expr::Column(s)),
            Some(Tok::LParen) => {
                let e = self.or()?;
                self.expect(&Tok::RParen, ")")?;
                Ok(e)
            }
            Some(Tok::Ident(w)) => {
                if self.peek() == Some(&Tok::LParen)
                    && FUNCTIONS.contains(&w.to_ascii_lowercase().as_str())
                {
                    self.pos += 1;
                    let mut args = Vec::new();
                    if self.peek() != Some(&Tok::RParen) {
                        loop {
                            args.push(self.or()?);
                            if self.peek() == Some(&Tok::Comma) {
                                self.pos += 1;
                            } else {
                                break;
                            }
                        }
                    }
                    self.expect(&Tok::RParen, ") after the arguments")?;
                    return Ok(Expr::Call(w.to_ascii_lowercase(), args));
                }
                match w.to_ascii_lowercase().as_str() {
                    "true" => Ok(Expr::Literal(J::Bool(true))),
                    "false" => Ok(Expr::Literal(J::Bool(false))),
                    "null" | "none" => Ok(Expr::Literal(J::Null)),
                    _ => Ok(Expr::Column(w)),
                }
            }
            Some(other) => Err(format!("unexpected {other:?}")),
            None => Err("the expression ends too early".into()),
        }
    }
}

/// Parses an expression; the error says where and why.
pub fn parse(src: &str) -> Result<Expr, String> {
    let toks = tokenize(src)?;
    let mut p = Parser { toks, pos: 0 };
    let e = p.or()?;
    if p.pos < p.toks.len() {
        return Err(format!(
            "unexpected {:?} after the expression",
            p.toks[p.pos]
        ));
    }
    check_calls(&e)?;
    Ok(e)
}

fn check_calls(e: &Expr) -> Result<(), String> {
    match e {
        Expr::Call(name, args) => {
            let ok = match name.as_str() {
                "is_empty" | "floor" | "ceil" | "abs" | "len" | "name_key" => args.len() == 1,
                "round" => matches!(args.len(), 1 | 2),
                "contains" | "starts_with" | "ends_with" | "days_between" => args.len() == 2,
                "if" => args.len() == 3,
                "concat" => true,
                _ => false,
            };
            if !ok {
                return Err(format!("{name}() takes a different number of arguments"));
            }
            args.iter().try_for_each(check_calls)
        }
        Expr::Unary(_, a) => check_calls(a),
        Expr::Binary(_, a, b) => {
            check_calls(a)?;
            check_calls(b)
        }
        Expr::In(a, items, _) => {
            check_calls(a)?;
            items.iter().try_for_each(check_calls)
        }
        Expr::Literal(_) | Expr::Column(_) => Ok(()),
    }
}

/// Every column the expression reads, in order of appearance.
pub fn columns(e: &Expr, out: &mut Vec<String>) {
    match e {
        Expr::Column(c) => {
            if !out.contains(c) {
                out.push(c.clone());
            }
        }
        Expr::Literal(_) => {}
        Expr::Unary(_, a) => columns(a, out),
        Expr::Binary(_, a, b) => {
            columns(a, out);
            columns(b, out);
        }
        Expr::In(a, items, _) => {
            columns(a, out);
            items.iter().for_each(|i| columns(i, out));
        }
        Expr::Call(_, args) => args.iter().for_each(|a| columns(a, out)),
    }
}

/// A number literal as JSON: whole numbers as integers, so `請求額 - 100` stays integral.
fn number_literal(x: f64) -> J {
    if x.fract() == 0.0 && x.abs() < 9e15 {
        J::from(x as i64)
    } else {
        serde_json::Number::from_f64(x).map_or(J::Null, J::Number)
    }
}

/// The columns `src` reads, in order of appearance, or why it does not parse.
pub fn columns_of(src: &str) -> Result<Vec<String>, String> {
    let e = parse(src)?;
    let mut out = Vec::new();
    columns(&e, &mut out);
    Ok(out)
}

/// The words that are never a bare column name.
const KEYWORDS: &[&str] = &["and", "or", "not", "in", "true", "false", "null", "none"];

/// `name` as the expression language writes a column: bare when it reads back as exactly that
/// column, else between backticks (`` `a b` ``, with `\` before a backtick or backslash).
pub fn quote_column(name: &str) -> String {
    let bare = !name.is_empty()
        && name.chars().all(is_ident_char)
        && !name.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && !KEYWORDS.contains(&name.to_ascii_lowercase().as_str())
        && fold_width(name) == name;
    if bare {
        return name.to_string();
    }
    let mut out = String::from("`");
    for c in name.chars() {
        if matches!(c, '`' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('`');
    out
}

/// `src` with every reference to column `from` made a reference to column `to`; the rest of
/// the text (spacing, operators, other names, `${…}` references) is kept as written. An error
/// when `src` does not parse, or when the result would not read `to` where `src` read `from`
/// (a name the language cannot write exactly, such as one with full-width letters, which it
/// folds).
pub fn rename_column(src: &str, from: &str, to: &str) -> Result<String, String> {
    let before = columns_of(src)?;
    if !before.iter().any(|c| c == from) {
        return Err(format!("the expression does not read the column {from:?}"));
    }
    let (toks, spans) = tokenize_spanned(src)?;
    // Where each character of the folded text came from in `src` (folding turns one
    // character into one or two), and one past the end.
    let mut origin = Vec::new();
    let source: Vec<char> = src.chars().collect();
    for (k, c) in source.iter().enumerate() {
        let mut one = [0u8; 4];
        origin.extend(std::iter::repeat_n(
            k,
            fold_width(c.encode_utf8(&mut one)).chars().count(),
        ));
    }
    origin.push(source.len());
    let mut out = String::new();
    let mut at = 0;
    for (k, (tok, &(start, end))) in toks.iter().zip(&spans).enumerate() {
        let name = match tok {
            Tok::Quoted(w) => w,
            Tok::Ident(w)
                if !(KEYWORDS.contains(&w.to_ascii_lowercase().as_str())
                    || (toks.get(k + 1) == Some(&Tok::LParen)
                        && FUNCTIONS.contains(&w.to_ascii_lowercase().as_str()))) =>
            {
                w
            }
            _ => continue,
        };
        if name != from {
            continue;
        }
        let (Some(&s), Some(&e)) = (origin.get(start), origin.get(end)) else {
            return Err(format!("cannot place {from:?} in the expression"));
        };
        out.extend(&source[at..s]);
        out.push_str(&quote_column(to));
        at = e;
    }
    out.extend(&source[at.min(source.len())..]);
    let mut want = Vec::new();
    for c in before {
        let c = if c == from { to.to_string() } else { c };
        if !want.contains(&c) {
            want.push(c);
        }
    }
    match columns_of(&out) {
        Ok(got) if got == want => Ok(out),
        _ => Err(format!(
            "the column {to:?} cannot be written into the expression exactly"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_in_order_of_appearance() {
        let cases: &[(&str, &[&str])] = &[
            ("amout <= 100000", &["amout"]),
            (
                "金額 >= 100000 and 勘定科目 == \"交際費\"",
                &["金額", "勘定科目"],
            ),
            ("if(請求額 > 入金額, '未収', '済')", &["請求額", "入金額"]),
            ("`a b` * 2 + [c d] - a", &["a b", "c d", "a"]),
            ("x in ['y', z] and is_empty(x)", &["x", "z"]),
            ("true and null == 1", &[]),
            ("ＡＢ ＞ １", &["AB"]),
        ];
        for (src, want) in cases {
            let got = columns_of(src).unwrap();
            assert_eq!(
                got,
                want.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                "{src}"
            );
        }
        assert!(columns_of("金額 >=").is_err());
        assert!(columns_of("system('x')").is_err());
    }

    #[test]
    fn renaming_a_column_keeps_the_rest_of_the_text() {
        let cases: &[(&str, &str, &str, &str)] = &[
            (
                "requester != approver",
                "approver",
                "承認者",
                "requester != 承認者",
            ),
            (
                "not is_empty(approver)  and approver!=requester",
                "approver",
                "承認者",
                "not is_empty(承認者)  and 承認者!=requester",
            ),
            // A function of the same name stays a function; a string stays a string.
            (
                "len(len) > 0 and x == 'len'",
                "len",
                "長さ",
                "len(長さ) > 0 and x == 'len'",
            ),
            // A name the language cannot write bare is quoted; a quoted one is found.
            (
                "`order date` <= due",
                "order date",
                "発注 日",
                "`発注 日` <= due",
            ),
            ("[a b] + a", "a", "and", "[a b] + `and`"),
            ("a > 1", "a", "2026年度", "`2026年度` > 1"),
            ("a > 1", "a", "x`y", "`x\\`y` > 1"),
            // References and full-width text around it are kept as written.
            (
                "amount >= ${vars.approval_threshold} and 金額＞１",
                "amount",
                "金額",
                "金額 >= ${vars.approval_threshold} and 金額＞１",
            ),
            ("㋿ == 1 or a == 2", "a", "b", "㋿ == 1 or b == 2"),
        ];
        for (src, from, to, want) in cases {
            assert_eq!(rename_column(src, from, to).as_deref(), Ok(*want), "{src}");
        }
        // Full-width letters fold: the language cannot name that column exactly.
        assert!(rename_column("a > 1", "a", "ＡＢ").is_err());
        assert!(rename_column("a >", "a", "b").is_err());
        // Nothing to rename is an error, never the expression unchanged as if it were done.
        assert!(rename_column("b > 1", "a", "c").is_err());
        assert!(rename_column("len(b) > 1", "len", "c").is_err());
    }
}
