//! The safe subset of `when` expressions: comparisons, `and`/`or`/`not`, literals and
//! `${…}` references. Everything else (calls, arithmetic, attribute access, bare names) is
//! rejected with its position, because a plan is data and must not smuggle code into the
//! runner.

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

fn tokenize(src: &str) -> Result<Vec<(Token, usize)>, ExprError> {
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
                    out.push((Token::Ref, start));
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
            out.push((Token::Literal, start));
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
            out.push((Token::Literal, start));
            continue;
        }
        let two: String = chars[i..chars.len().min(i + 2)].iter().collect();
        match two.as_str() {
            "==" | "!=" | "<=" | ">=" => {
                i += 2;
                out.push((Token::Cmp, start));
                continue;
            }
            "&&" => {
                i += 2;
                out.push((Token::And, start));
                continue;
            }
            "||" => {
                i += 2;
                out.push((Token::Or, start));
                continue;
            }
            _ => {}
        }
        match c {
            '<' | '>' => {
                i += 1;
                out.push((Token::Cmp, start));
                continue;
            }
            '!' => {
                i += 1;
                out.push((Token::Not, start));
                continue;
            }
            '(' => {
                i += 1;
                out.push((Token::LParen, start));
                continue;
            }
            ')' => {
                i += 1;
                out.push((Token::RParen, start));
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
            out.push((token, start));
            continue;
        }
        return Err(err(
            start,
            format!("character {c:?} is not allowed in a condition"),
        ));
    }
    out.push((Token::End, chars.len()));
    Ok(out)
}

struct Parser {
    tokens: Vec<(Token, usize)>,
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

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,80}") {
            let _ = check(&s);
        }
    }
}
