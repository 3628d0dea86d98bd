//! Row expressions of `transforms.filter_rows` and `transforms.compute_columns`:
//! column names as bare words (Japanese included; `` `a b` `` or `[a b]` for names with
//! spaces or operators), numbers, strings, `true`/`false`/`null`, `+ - * /`, comparisons
//! (`== != > >= < <=`, `=` too), `and`/`or`/`not` (`&&`/`||`/`!`), `in [..]`/`not in [..]`,
//! and the functions `contains`, `starts_with`, `ends_with`, `is_empty`, `round`, `floor`,
//! `ceil`, `abs`, `if`, `days_between`, `concat`, `len`.
//!
//! Values are dynamically typed the way accounting data is: a CSV cell `"1,200"` or `"¥1,200"`
//! compares and adds as the number 1200 (through [`crate::jp::parse_amount`]), a null cell
//! equals `""`, and two texts that are both numbers compare as numbers. The language has no
//! assignment, no loops and no access outside the row, so a plan cannot smuggle code in.

use serde_json::Value as J;

use crate::jp;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expr {
    Literal(J),
    Column(String),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    In(Box<Expr>, Vec<Expr>, bool),
    Call(String, Vec<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum UnaryOp {
    Neg,
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum BinOp {
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
];

fn is_ident_char(c: char) -> bool {
    !c.is_whitespace() && !"()[],+-*/<>=!\"'`&|".contains(c)
}

fn tokenize(src: &str) -> Result<Vec<Tok>, String> {
    // Full-width operators and digits (＞＝, １００) are common in Japanese text.
    let folded = jp::fold_width(src);
    let chars: Vec<char> = folded.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
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
    Ok(out)
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
            Some(Tok::Num(n)) => Ok(Expr::Literal(number(n))),
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
pub(crate) fn parse(src: &str) -> Result<Expr, String> {
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
                "is_empty" | "floor" | "ceil" | "abs" | "len" => args.len() == 1,
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
pub(crate) fn columns(e: &Expr, out: &mut Vec<String>) {
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

/// A float as JSON: whole numbers as integers, so `請求額 - 入金額` of integers stays integral.
pub(crate) fn number(x: f64) -> J {
    if x.fract() == 0.0 && x.abs() < 9e15 {
        J::from(x as i64)
    } else {
        crate::value::float_json(x)
    }
}

/// A cell as a number: numbers, and texts that read as amounts (`"1,200"`, `"¥1,200"`, `"△500"`).
pub(crate) fn to_number(v: &J) -> Option<f64> {
    match v {
        J::Number(n) => n.as_f64(),
        J::String(s) => jp::parse_amount(s, &jp::NegativeMarkers::default())
            .ok()
            .flatten(),
        J::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
}

/// A cell as text (null is empty).
pub(crate) fn to_text(v: &J) -> String {
    match v {
        J::Null => String::new(),
        J::String(s) => s.clone(),
        J::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9e15 => (f as i64).to_string(),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

fn truthy(v: &J) -> bool {
    match v {
        J::Null => false,
        J::Bool(b) => *b,
        J::Number(n) => n.as_f64().is_some_and(|x| x != 0.0),
        J::String(s) => !s.is_empty(),
        J::Array(a) => !a.is_empty(),
        J::Object(o) => !o.is_empty(),
    }
}

fn is_empty(v: &J) -> bool {
    match v {
        J::Null => true,
        J::String(s) => s.trim().is_empty(),
        _ => false,
    }
}

/// Orders two cells: numerically when both read as numbers, else as text.
fn compare(a: &J, b: &J) -> std::cmp::Ordering {
    if let (J::Bool(x), J::Bool(y)) = (a, b) {
        return x.cmp(y);
    }
    // A number against text compares as numbers only if the text reads as one.
    let numeric = matches!(a, J::Number(_))
        || matches!(b, J::Number(_))
        || (looks_numeric(a) && looks_numeric(b));
    if numeric && let (Some(x), Some(y)) = (to_number(a), to_number(b)) {
        return x.total_cmp(&y);
    }
    to_text(a).cmp(&to_text(b))
}

fn looks_numeric(v: &J) -> bool {
    matches!(v, J::String(s) if !s.trim().is_empty() && to_number(v).is_some())
}

fn equal(a: &J, b: &J) -> bool {
    if is_empty(a) || is_empty(b) {
        return is_empty(a) && is_empty(b);
    }
    compare(a, b) == std::cmp::Ordering::Equal
}

/// Evaluates `e` on one row; `get` reads a column.
pub(crate) fn eval(e: &Expr, get: &dyn Fn(&str) -> J) -> Result<J, String> {
    Ok(match e {
        Expr::Literal(v) => v.clone(),
        Expr::Column(c) => get(c),
        Expr::Unary(UnaryOp::Not, a) => J::Bool(!truthy(&eval(a, get)?)),
        Expr::Unary(UnaryOp::Neg, a) => {
            let v = eval(a, get)?;
            if is_empty(&v) {
                J::Null
            } else {
                number(-to_number(&v).ok_or_else(|| format!("{} is not a number", to_text(&v)))?)
            }
        }
        Expr::Binary(BinOp::And, a, b) => J::Bool(truthy(&eval(a, get)?) && truthy(&eval(b, get)?)),
        Expr::Binary(BinOp::Or, a, b) => J::Bool(truthy(&eval(a, get)?) || truthy(&eval(b, get)?)),
        Expr::Binary(op, a, b) => {
            let (x, y) = (eval(a, get)?, eval(b, get)?);
            match op {
                BinOp::Eq => J::Bool(equal(&x, &y)),
                BinOp::Ne => J::Bool(!equal(&x, &y)),
                BinOp::Gt | BinOp::Ge | BinOp::Lt | BinOp::Le => {
                    // An empty cell is not greater or smaller than anything.
                    if is_empty(&x) || is_empty(&y) {
                        return Ok(J::Bool(false));
                    }
                    let o = compare(&x, &y);
                    J::Bool(match op {
                        BinOp::Gt => o.is_gt(),
                        BinOp::Ge => o.is_ge(),
                        BinOp::Lt => o.is_lt(),
                        _ => o.is_le(),
                    })
                }
                _ => {
                    if is_empty(&x) || is_empty(&y) {
                        return Ok(J::Null);
                    }
                    let nx =
                        to_number(&x).ok_or_else(|| format!("{} is not a number", to_text(&x)))?;
                    let ny =
                        to_number(&y).ok_or_else(|| format!("{} is not a number", to_text(&y)))?;
                    match op {
                        BinOp::Add => number(nx + ny),
                        BinOp::Sub => number(nx - ny),
                        BinOp::Mul => number(nx * ny),
                        _ => {
                            if ny == 0.0 {
                                return Err("division by zero".into());
                            }
                            number(nx / ny)
                        }
                    }
                }
            }
        }
        Expr::In(a, items, negated) => {
            let x = eval(a, get)?;
            let mut found = false;
            for item in items {
                if equal(&x, &eval(item, get)?) {
                    found = true;
                    break;
                }
            }
            J::Bool(found != *negated)
        }
        Expr::Call(name, args) => call(name, args, get)?,
    })
}

fn call(name: &str, args: &[Expr], get: &dyn Fn(&str) -> J) -> Result<J, String> {
    let arg = |i: usize| eval(&args[i], get);
    let num = |v: &J| to_number(v).ok_or_else(|| format!("{} is not a number", to_text(v)));
    Ok(match name {
        "if" => {
            if truthy(&arg(0)?) {
                arg(1)?
            } else {
                arg(2)?
            }
        }
        "is_empty" => J::Bool(is_empty(&arg(0)?)),
        "contains" => J::Bool(to_text(&arg(0)?).contains(&to_text(&arg(1)?))),
        "starts_with" => J::Bool(to_text(&arg(0)?).starts_with(&to_text(&arg(1)?))),
        "ends_with" => J::Bool(to_text(&arg(0)?).ends_with(&to_text(&arg(1)?))),
        "len" => J::from(to_text(&arg(0)?).chars().count()),
        "concat" => J::String(
            args.iter()
                .map(|a| eval(a, get).map(|v| to_text(&v)))
                .collect::<Result<String, _>>()?,
        ),
        "abs" | "floor" | "ceil" | "round" => {
            let v = arg(0)?;
            if is_empty(&v) {
                return Ok(J::Null);
            }
            let x = num(&v)?;
            match name {
                "abs" => number(x.abs()),
                "floor" => number(x.floor()),
                "ceil" => number(x.ceil()),
                _ => {
                    let digits = match args.get(1) {
                        Some(d) => num(&eval(d, get)?)? as i32,
                        None => 0,
                    };
                    let scale = 10f64.powi(digits);
                    // Half away from zero (四捨五入), not banker's rounding.
                    number(jp::Rounding::Round.apply(x * scale) / scale)
                }
            }
        }
        "days_between" => {
            let (a, b) = (arg(0)?, arg(1)?);
            if is_empty(&a) || is_empty(&b) {
                return Ok(J::Null);
            }
            let date = |v: &J| {
                jp::parse_date(&to_text(v)).ok_or_else(|| format!("{} is not a date", to_text(v)))
            };
            J::from((date(&b)? - date(&a)?).num_days())
        }
        other => return Err(format!("unknown function {other}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(src: &str, row: J) -> Result<J, String> {
        let e = parse(src)?;
        eval(&e, &|c| row.get(c).cloned().unwrap_or(J::Null))
    }

    #[test]
    fn cases() {
        let row = json!({"金額": "120,000", "勘定科目": "交際費", "取引先": "", "請求額": 1100, "入金額": 1000,
                         "請求日": "2024-04-01", "入金日": "令和6年4月30日", "a b": 2});
        let cases: &[(&str, J)] = &[
            ("金額 >= 100000 and 勘定科目 == \"交際費\"", json!(true)),
            (
                "金額 > 200000 or 勘定科目 in ['会議費', '交際費']",
                json!(true),
            ),
            ("勘定科目 not in ['交際費']", json!(false)),
            ("取引先 != \"\"", json!(false)),
            ("is_empty(取引先)", json!(true)),
            ("contains(勘定科目, '交際')", json!(true)),
            ("請求額 - 入金額", json!(100)),
            ("round(請求額 / 3)", json!(367)),
            ("if(請求額 > 入金額, '未収', '済')", json!("未収")),
            ("days_between(請求日, 入金日)", json!(29)),
            ("concat(勘定科目, '-', 請求額)", json!("交際費-1100")),
            ("`a b` * 2", json!(4)),
            ("[a b] * 2", json!(4)),
            ("金額 ＞＝ １００，０００", json!(true)),
            ("not (請求額 < 入金額)", json!(true)),
        ];
        for (src, expect) in cases {
            assert_eq!(run(src, row.clone()).as_ref(), Ok(expect), "{src}");
        }
    }

    #[test]
    fn errors() {
        assert!(parse("金額 >=").is_err());
        assert!(parse("system('x')").is_err());
        assert!(parse("round(1, 2, 3)").is_err());
        assert!(run("1 / 0", json!({})).is_err());
    }
}
