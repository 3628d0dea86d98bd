//! The safe subset of `when` expressions: comparisons, `and`/`or`/`not`, literals and
//! `${…}` references. Everything else (calls, arithmetic, attribute access, bare names) is
//! rejected with its position, because a plan is data and must not smuggle code into the
//! runner. [`check`] is what the validator uses; [`evaluate`] is the one evaluator of the
//! dry-run and the runtime.

use serde_json::Value;

use crate::resolve::{self, Lookup, ResolveError};

/// Why an expression is outside the safe subset; `column` is 1-based within the expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExprError {
    pub column: usize,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ref,
    Literal,
    And,
    Or,
    Not,
    Cmp,
    In,
    LParen,
    RParen,
    End,
}

/// Tokens with their start and end (char indexes into the source).
fn tokenize(src: &str) -> Result<Vec<(Token, usize, usize)>, ExprError> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let err = |col: usize, message: String| ExprError {
        column: col + 1,
        message,
    };
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '$' && chars.get(i + 1) == Some(&'{') {
            match chars[i..].iter().position(|&c| c == '}') {
                Some(end) => {
                    i += end + 1;
                    out.push((Token::Ref, start, i));
                    continue;
                }
                None => return Err(err(start, "unclosed ${".into())),
            }
        }
        if c == '\'' || c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != c {
                if chars[j] == '\\' {
                    j += 1;
                }
                j += 1;
            }
            if j >= chars.len() {
                return Err(err(start, "unclosed string literal".into()));
            }
            i = j + 1;
            out.push((Token::Literal, start, i));
            continue;
        }
        if c.is_ascii_digit() || (c == '-' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            i += 1;
            while i < chars.len()
                && (chars[i].is_ascii_digit() || chars[i] == '.' || chars[i] == '_')
            {
                i += 1;
            }
            out.push((Token::Literal, start, i));
            continue;
        }
        let two: String = chars[i..chars.len().min(i + 2)].iter().collect();
        match two.as_str() {
            "==" | "!=" | "<=" | ">=" => {
                i += 2;
                out.push((Token::Cmp, start, i));
                continue;
            }
            "&&" => {
                i += 2;
                out.push((Token::And, start, i));
                continue;
            }
            "||" => {
                i += 2;
                out.push((Token::Or, start, i));
                continue;
            }
            _ => {}
        }
        match c {
            '<' | '>' => {
                i += 1;
                out.push((Token::Cmp, start, i));
                continue;
            }
            '!' => {
                i += 1;
                out.push((Token::Not, start, i));
                continue;
            }
            '(' => {
                i += 1;
                out.push((Token::LParen, start, i));
                continue;
            }
            ')' => {
                i += 1;
                out.push((Token::RParen, start, i));
                continue;
            }
            _ => {}
        }
        if c.is_alphabetic() || c == '_' {
            let mut j = i;
            while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            let word: String = chars[i..j].iter().collect();
            let token = match word.as_str() {
                "and" => Token::And,
                "or" => Token::Or,
                "not" => Token::Not,
                "in" => Token::In,
                "true" | "false" | "null" | "True" | "False" | "None" => Token::Literal,
                _ => {
                    let next = chars[j..].iter().find(|c| !c.is_whitespace());
                    let what = if next == Some(&'(') {
                        "function calls are"
                    } else {
                        "bare names are"
                    };
                    return Err(err(
                        start,
                        format!("{what} not allowed ({word}); use ${{node.alias}} or ${{vars.x}}"),
                    ));
                }
            };
            i = j;
            out.push((token, start, i));
            continue;
        }
        return Err(err(
            start,
            format!("character {c:?} is not allowed in a condition"),
        ));
    }
    out.push((Token::End, chars.len(), chars.len()));
    Ok(out)
}

struct Parser {
    tokens: Vec<(Token, usize, usize)>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> &Token {
        self.tokens.get(self.at).map_or(&Token::End, |t| &t.0)
    }
    fn column(&self) -> usize {
        self.tokens.get(self.at).map_or(0, |t| t.1) + 1
    }
    fn bump(&mut self) {
        self.at += 1;
    }
    fn fail<T>(&self, message: &str) -> Result<T, ExprError> {
        Err(ExprError {
            column: self.column(),
            message: message.to_string(),
        })
    }

    fn or(&mut self) -> Result<(), ExprError> {
        self.and()?;
        while *self.peek() == Token::Or {
            self.bump();
            self.and()?;
        }
        Ok(())
    }
    fn and(&mut self) -> Result<(), ExprError> {
        self.not()?;
        while *self.peek() == Token::And {
            self.bump();
            self.not()?;
        }
        Ok(())
    }
    fn not(&mut self) -> Result<(), ExprError> {
        if *self.peek() == Token::Not {
            self.bump();
            return self.not();
        }
        self.comparison()
    }
    fn comparison(&mut self) -> Result<(), ExprError> {
        self.primary()?;
        match self.peek() {
            Token::Cmp | Token::In => {
                self.bump();
                self.primary()
            }
            Token::Not if self.tokens.get(self.at + 1).map(|t| &t.0) == Some(&Token::In) => {
                self.bump();
                self.bump();
                self.primary()
            }
            _ => Ok(()),
        }
    }
    fn primary(&mut self) -> Result<(), ExprError> {
        match self.peek() {
            Token::Ref | Token::Literal => {
                self.bump();
                Ok(())
            }
            Token::LParen => {
                self.bump();
                self.or()?;
                if *self.peek() != Token::RParen {
                    return self.fail("expected )");
                }
                self.bump();
                Ok(())
            }
            Token::End => self.fail("the condition ends too early"),
            _ => self.fail("expected a value, a reference or ("),
        }
    }
}

/// Checks that `src` is in the safe subset.
pub fn check(src: &str) -> Result<(), ExprError> {
    if src.trim().is_empty() {
        return Err(ExprError {
            column: 1,
            message: "the condition is empty".into(),
        });
    }
    let tokens = tokenize(src)?;
    let mut p = Parser { tokens, at: 0 };
    p.or()?;
    if *p.peek() != Token::End {
        return p.fail("unexpected text after the condition");
    }
    Ok(())
}

/// Why a condition could not be evaluated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// The condition is outside the safe subset (see [`check`]).
    #[error("column {}: {}", .0.column, .0.message)]
    Syntax(ExprError),
    /// A reference in it does not resolve.
    #[error(transparent)]
    Reference(#[from] ResolveError),
    /// Two values that cannot be compared (`"a" < 1`), or `in` on a scalar.
    #[error("column {column}: {message}")]
    Type { column: usize, message: String },
}

/// Evaluates a condition to true or false. References are resolved with [`resolve`]'s
/// lookup (the one resolver); the right side of `and`/`or` is only resolved when needed.
///
/// Truthiness follows the YAML/JSON reading a user expects: `null`, `false`, `0`, `""`,
/// `[]` and `{}` are false. `==` compares numbers by value (`1 == 1.0`); `<`, `>`, `<=`,
/// `>=` need two numbers or two strings; `a in b` looks in a list, a string or an object's
/// keys.
///
/// [`resolve`]: crate::resolve
pub fn evaluate<L: Lookup + ?Sized>(src: &str, lookup: &L) -> Result<bool, EvalError> {
    check(src).map_err(EvalError::Syntax)?;
    let tokens = tokenize(src).map_err(EvalError::Syntax)?;
    let mut e = Evaluator {
        chars: src.chars().collect(),
        tokens,
        at: 0,
        lookup,
    };
    let v = e.or(false)?;
    Ok(truthy(&v))
}

/// Whether a value counts as true in a condition.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

struct Evaluator<'l, L: ?Sized> {
    chars: Vec<char>,
    tokens: Vec<(Token, usize, usize)>,
    at: usize,
    lookup: &'l L,
}

impl<L: Lookup + ?Sized> Evaluator<'_, L> {
    fn peek(&self) -> &Token {
        self.tokens.get(self.at).map_or(&Token::End, |t| &t.0)
    }
    fn text(&self) -> String {
        self.tokens
            .get(self.at)
            .map(|t| self.chars[t.1..t.2].iter().collect())
            .unwrap_or_default()
    }
    fn column(&self) -> usize {
        self.tokens.get(self.at).map_or(0, |t| t.1) + 1
    }

    // `skip` evaluates the syntax only (the short-circuited side of and/or).
    fn or(&mut self, skip: bool) -> Result<Value, EvalError> {
        let mut v = self.and(skip)?;
        while *self.peek() == Token::Or {
            self.at += 1;
            let done = skip || truthy(&v);
            let rhs = self.and(done)?;
            if !done {
                v = Value::Bool(truthy(&rhs));
            } else {
                v = Value::Bool(true);
            }
        }
        Ok(v)
    }
    fn and(&mut self, skip: bool) -> Result<Value, EvalError> {
        let mut v = self.not(skip)?;
        while *self.peek() == Token::And {
            self.at += 1;
            let done = skip || !truthy(&v);
            let rhs = self.not(done)?;
            v = Value::Bool(!done && truthy(&rhs));
        }
        Ok(v)
    }
    fn not(&mut self, skip: bool) -> Result<Value, EvalError> {
        if *self.peek() == Token::Not {
            self.at += 1;
            let v = self.not(skip)?;
            return Ok(Value::Bool(!truthy(&v)));
        }
        self.comparison(skip)
    }
    fn comparison(&mut self, skip: bool) -> Result<Value, EvalError> {
        let lhs = self.primary(skip)?;
        let column = self.column();
        let op = match self.peek() {
            Token::Cmp => self.text(),
            Token::In => "in".to_string(),
            Token::Not if self.tokens.get(self.at + 1).map(|t| &t.0) == Some(&Token::In) => {
                self.at += 1;
                "not in".to_string()
            }
            _ => return Ok(lhs),
        };
        self.at += 1;
        let rhs = self.primary(skip)?;
        if skip {
            return Ok(Value::Null);
        }
        let type_error = |message: String| EvalError::Type { column, message };
        let result = match op.as_str() {
            "==" => json_eq(&lhs, &rhs),
            "!=" => !json_eq(&lhs, &rhs),
            "in" | "not in" => {
                let found = match &rhs {
                    Value::Array(items) => items.iter().any(|i| json_eq(i, &lhs)),
                    Value::String(s) => lhs.as_str().is_some_and(|l| s.contains(l)),
                    Value::Object(m) => lhs.as_str().is_some_and(|l| m.contains_key(l)),
                    other => {
                        return Err(type_error(format!(
                            "`in` needs a list, a string or an object, not {other}"
                        )));
                    }
                };
                found == (op == "in")
            }
            _ => {
                let ordering = match (&lhs, &rhs) {
                    (Value::Number(a), Value::Number(b)) => a.as_f64().partial_cmp(&b.as_f64()),
                    (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
                    _ => None,
                };
                let Some(ordering) = ordering else {
                    return Err(type_error(format!("cannot compare {lhs} {op} {rhs}")));
                };
                match op.as_str() {
                    "<" => ordering.is_lt(),
                    ">" => ordering.is_gt(),
                    "<=" => ordering.is_le(),
                    _ => ordering.is_ge(),
                }
            }
        };
        Ok(Value::Bool(result))
    }
    fn primary(&mut self, skip: bool) -> Result<Value, EvalError> {
        let text = self.text();
        match self.peek() {
            Token::Ref => {
                self.at += 1;
                if skip {
                    return Ok(Value::Null);
                }
                Ok(resolve::resolve_json(&Value::String(text), self.lookup)?)
            }
            Token::Literal => {
                self.at += 1;
                Ok(literal(&text))
            }
            Token::LParen => {
                self.at += 1;
                let v = self.or(skip)?;
                // `check` has already verified the closing parenthesis.
                self.at += 1;
                Ok(v)
            }
            _ => Err(EvalError::Syntax(ExprError {
                column: self.column(),
                message: "expected a value, a reference or (".into(),
            })),
        }
    }
}

fn literal(text: &str) -> Value {
    match text {
        "true" | "True" => return Value::Bool(true),
        "false" | "False" => return Value::Bool(false),
        "null" | "None" => return Value::Null,
        _ => {}
    }
    if let Some(quote) = text.chars().next().filter(|c| *c == '\'' || *c == '"') {
        let inner = &text[1..text.len() - quote.len_utf8()];
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some(other) => out.push(other),
                    None => {}
                }
            } else {
                out.push(c);
            }
        }
        return Value::String(out);
    }
    let digits = text.replace('_', "");
    if let Ok(i) = digits.parse::<i64>() {
        return Value::from(i);
    }
    digits
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(Value::String(text.to_string()), Value::Number)
}

/// JSON equality with numbers compared by value.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_case(src: &str, expect: Result<(), usize>) {
        assert_eq!(check(src).map_err(|e| e.column), expect, "{src}");
    }

    #[test]
    fn accepts_the_safe_subset() {
        for ok in [
            "${a.approved}",
            "${a.approved} == true",
            "${a.total} > 100000 and not ${b.flag}",
            "(${a.x} != 'done') || ${vars.force}",
            "${a.kind} in ['x']"
                .replace("['x']", "${vars.kinds}")
                .as_str(),
            "true",
            "${a.n} >= -1.5",
            "\"承認済み\" == ${a.status}",
        ] {
            check_case(ok, Ok(()));
        }
    }

    #[test]
    fn rejects_everything_else_with_position() {
        check_case("__import__('os')", Err(1));
        check_case("${a.x} + 1", Err(8));
        check_case("${a.x} == len(${b.y})", Err(11));
        check_case("${a.x} ==", Err(10));
        check_case("(${a.x}", Err(8));
        check_case("", Err(1));
        check_case("${a.x} ${b.y}", Err(8));
        check_case("'abc", Err(1));
    }

    struct Vars(Value);

    impl Lookup for Vars {
        type Value = Value;
        fn lookup(&self, raw: &str, target: &crate::refs::Target) -> Result<Value, ResolveError> {
            let found = match target {
                crate::refs::Target::Var { name, .. } => self.0.get(name).cloned(),
                _ => None,
            };
            found.ok_or(ResolveError::Unresolved { raw: raw.into() })
        }
        fn literal(&self, value: Value) -> Value {
            value
        }
        fn to_json(&self, _raw: &str, value: Value) -> Result<Value, ResolveError> {
            Ok(value)
        }
    }

    fn eval_case(src: &str, expect: Result<bool, &str>) {
        let vars = Vars(serde_json::json!({
            "n": 3, "f": 1.5, "s": "承認済み", "empty": "", "list": ["a", "b"],
            "obj": {"k": 1}, "yes": true, "none": null
        }));
        let got = evaluate(src, &vars).map_err(|e| e.to_string());
        assert_eq!(got, expect.map_err(str::to_string), "{src}");
    }

    #[test]
    fn evaluates_conditions() {
        eval_case("${vars.n} == 3", Ok(true));
        eval_case("${vars.n} == 3.0", Ok(true));
        eval_case("${vars.n} > 2 and ${vars.f} <= 1.5", Ok(true));
        eval_case("${vars.n} < 2 or not ${vars.yes}", Ok(false));
        eval_case("${vars.s} == '承認済み'", Ok(true));
        eval_case("\"a\" in ${vars.list}", Ok(true));
        eval_case("'c' not in ${vars.list}", Ok(true));
        eval_case("'k' in ${vars.obj}", Ok(true));
        eval_case("'認' in ${vars.s}", Ok(true));
        eval_case("${vars.empty}", Ok(false));
        eval_case("${vars.none} == null", Ok(true));
        eval_case("(${vars.n} != 3) || ${vars.list}", Ok(true));
        eval_case("!${vars.yes}", Ok(false));
        eval_case("-1_000 < 0", Ok(true));
    }

    #[test]
    fn short_circuit_skips_the_unneeded_reference() {
        eval_case("false and ${vars.missing}", Ok(false));
        eval_case("true or ${vars.missing}", Ok(true));
        eval_case(
            "true and ${vars.missing}",
            Err("unresolved reference ${vars.missing}"),
        );
    }

    #[test]
    fn evaluation_errors() {
        eval_case(
            "${vars.s} < 1",
            Err("column 11: cannot compare \"承認済み\" < 1"),
        );
        eval_case(
            "1 in 2",
            Err("column 3: `in` needs a list, a string or an object, not 2"),
        );
        eval_case(
            "len(${vars.s})",
            Err("column 1: function calls are not allowed (len); use ${node.alias} or ${vars.x}"),
        );
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,80}") {
            let _ = check(&s);
        }
    }
}
