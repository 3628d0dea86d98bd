//! The syntax check: a recursive-descent parser of formula token streams against Excel's
//! grammar, and what it learns about a formula on the way.

use super::*;

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
