//! The text form of [`Expr`]: C-style and Python-style operators in one language.
//!
//! Accepted, by increasing precedence:
//! `a if c else b`; `||` / `or`; `&&` / `and`; `not`; comparisons (`== != < <= > >=`, chainable as in
//! Python: `32 <= x * y <= 1024`); `+ -`; `* / // %`; unary `- + !`; `**` (right-associative);
//! atoms: numbers (`16`, `2.5`, `1e-3`), strings (`"a"` or `'a'`), `true`/`false`/`True`/`False`,
//! parameter names, function calls (`min max div_ceil round_up floor ceil round abs select ifelse`),
//! `args.NAME` / `args[I]`, `problem_size[I]` / `problem_size.x`, `device.ATTRIBUTE`, parentheses.
//! `!` binds like a C unary operator, `not` like Python's (below comparisons).

use crate::expr::{ArgRef, BinaryOp, DeviceAttr, Expr, Func, UnaryOp};
use crate::suggest::closest;
use crate::value::Value;
use thiserror::Error;

/// A syntax error, with the position (1-based column, in characters) where it was found.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("syntax error at column {column} of `{text}`: {message}")]
pub struct ParseError {
    /// 1-based column (in characters) of the offending token.
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// The whole text that was parsed.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(u128),
    Float(f64),
    Str(String),
    Ident(String),
    Sym(&'static str),
    End,
}

const SYMBOLS: [&str; 24] = [
    "**", "//", "==", "!=", "<=", ">=", "&&", "||", "+", "-", "*", "/", "%", "<", ">", "!", "(",
    ")", "[", "]", ",", ".", "?", ":",
];

struct Lexer {
    toks: Vec<(Tok, usize)>,
}

fn lex(text: &str) -> Result<Lexer, ParseError> {
    let chars: Vec<char> = text.chars().collect();
    let err = |col: usize, m: String| ParseError {
        column: col + 1,
        message: m,
        text: text.to_string(),
    };
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            let mut s = String::new();
            let mut is_float = false;
            while i < chars.len() {
                let d = chars[i];
                if d.is_ascii_digit() {
                    s.push(d);
                } else if d == '_' {
                } else if d == '.' && !is_float && !s.contains('e') {
                    is_float = true;
                    s.push(d);
                } else if (d == 'e' || d == 'E') && !s.contains('e') {
                    is_float = true;
                    s.push('e');
                    if matches!(chars.get(i + 1), Some('+') | Some('-')) {
                        i += 1;
                        s.push(chars[i]);
                    }
                } else {
                    break;
                }
                i += 1;
            }
            let tok = if is_float {
                let f: f64 = s
                    .parse()
                    .map_err(|_| err(start, format!("malformed number `{s}`")))?;
                if !f.is_finite() {
                    // JSON (captures, definitions) cannot hold it: refused here.
                    return Err(err(start, format!("number `{s}` is too large for 64 bits")));
                }
                Tok::Float(f)
            } else {
                Tok::Int(
                    s.parse()
                        .map_err(|_| err(start, format!("integer `{s}` is too large")))?,
                )
            };
            toks.push((tok, start));
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            toks.push((Tok::Ident(chars[start..i].iter().collect()), start));
            continue;
        }
        if c == '"' || c == '\'' {
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(err(start, "unterminated string".into())),
                    Some(&q) if q == c => break,
                    Some('\\') => {
                        i += 1;
                        match chars.get(i) {
                            Some('n') => s.push('\n'),
                            Some('t') => s.push('\t'),
                            Some('r') => s.push('\r'),
                            Some('0') => s.push('\0'),
                            Some(&o @ ('\\' | '"' | '\'')) => s.push(o),
                            // `\u{1f}`: how strings print (Rust's escapes), so they read back.
                            Some('u') if chars.get(i + 1) == Some(&'{') => {
                                let close = chars[i..]
                                    .iter()
                                    .position(|&ch| ch == '}')
                                    .map(|p| i + p)
                                    .filter(|&p| p > i + 2 && p <= i + 8);
                                let ch = close.and_then(|p| {
                                    let hex: String = chars[i + 2..p].iter().collect();
                                    u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32)
                                });
                                match (ch, close) {
                                    (Some(ch), Some(p)) => {
                                        s.push(ch);
                                        i = p;
                                    }
                                    _ => {
                                        return Err(err(i, "bad \\u{...} escape in string".into()))
                                    }
                                }
                            }
                            _ => return Err(err(i, "unknown escape in string".into())),
                        }
                    }
                    Some(&o) => s.push(o),
                }
                i += 1;
            }
            i += 1;
            toks.push((Tok::Str(s), start));
            continue;
        }
        let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
        match SYMBOLS.iter().find(|s| rest.starts_with(**s)) {
            Some(s) => {
                toks.push((Tok::Sym(s), start));
                i += s.chars().count();
            }
            None => return Err(err(start, format!("unexpected character `{c}`"))),
        }
    }
    toks.push((Tok::End, chars.len()));
    Ok(Lexer { toks })
}

struct Parser<'t> {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    text: &'t str,
    depth: usize,
}

/// Deepest nesting of parentheses and prefix operators accepted (deeper input is an error,
/// not a stack overflow).
const MAX_DEPTH: usize = 200;

/// Deepest expression tree accepted. A flat chain `a + b + ...` is parsed by a loop but
/// builds a tree as deep as it is long, and every walk of an [`Expr`] recurses over it
/// (evaluation, printing, serialisation, dropping). The limit keeps every accepted expression
/// readable again from its JSON form (serde_json refuses documents nested deeper than 128
/// levels; a node takes two) and from its printed form ([`MAX_DEPTH`] parentheses): longer
/// chains are an error, never a stack overflow. Restrictions in practice are a few levels deep.
pub const MAX_TREE_DEPTH: usize = 48;

/// The depth of an expression tree (a leaf is 1), computed without recursion.
pub fn tree_depth(e: &Expr) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(e, 1usize)];
    while let Some((e, d)) = stack.pop() {
        deepest = deepest.max(d);
        match e {
            Expr::Unary { arg, .. } => stack.push((arg, d + 1)),
            Expr::Binary { lhs, rhs, .. } => {
                stack.push((lhs, d + 1));
                stack.push((rhs, d + 1));
            }
            Expr::Call { args, .. } => stack.extend(args.iter().map(|a| (a, d + 1))),
            _ => {}
        }
    }
    deepest
}

/// Parses an expression from text.
///
/// ```
/// use kw_core::Expr;
/// let e = Expr::parse("use_padding==0 or block_size_x % 32 != 0").unwrap();
/// assert_eq!(e.params(), vec!["use_padding", "block_size_x"]);
/// let err = Expr::parse("a + * b").unwrap_err();
/// assert_eq!(err.column, 5);
/// ```
pub fn parse(text: &str) -> Result<Expr, ParseError> {
    let lexer = lex(text)?;
    let mut p = Parser {
        toks: lexer.toks,
        pos: 0,
        text,
        depth: 0,
    };
    let e = p.ternary()?;
    // Chains are checked as they are built; nesting of prefix operators and conditionals
    // (bounded by MAX_DEPTH) is checked here, so that the printed form reads back too.
    if tree_depth(&e) > MAX_TREE_DEPTH {
        return Err(ParseError {
            column: 1,
            message: format!("expression too deep: more than {MAX_TREE_DEPTH} nested operations"),
            text: text.to_string(),
        });
    }
    match p.peek() {
        Tok::End => Ok(e),
        t => Err(p.error(format!("unexpected {} after the expression", describe(t)))),
    }
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Int(i) => format!("number `{i}`"),
        Tok::Float(f) => format!("number `{f}`"),
        Tok::Str(s) => format!("string {s:?}"),
        Tok::Ident(s) => format!("name `{s}`"),
        Tok::Sym(s) => format!("`{s}`"),
        Tok::End => "end of input".into(),
    }
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].0
    }
    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)].0
    }
    fn next(&mut self) -> Tok {
        let t = self.toks[self.pos].0.clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }
    fn error(&self, message: String) -> ParseError {
        ParseError {
            column: self.toks[self.pos].1 + 1,
            message,
            text: self.text.to_string(),
        }
    }
    fn is_sym(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Sym(x) if *x == s)
    }
    fn is_kw(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Ident(x) if x == s)
    }
    fn expect_sym(&mut self, s: &str) -> Result<(), ParseError> {
        if self.is_sym(s) {
            self.next();
            Ok(())
        } else {
            Err(self.error(format!("expected `{s}`, found {}", describe(self.peek()))))
        }
    }

    fn ternary(&mut self) -> Result<Expr, ParseError> {
        self.enter()?;
        let e = self.ternary_inner();
        self.leave();
        e
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.depth -= 1;
            return Err(self.error(format!("expression nested deeper than {MAX_DEPTH} levels")));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Joins `lhs` (of depth `*lhs_depth`) and `rhs` with `op`, refusing a tree deeper than
    /// [`MAX_TREE_DEPTH`].
    fn join(
        &self,
        op: BinaryOp,
        lhs: Expr,
        lhs_depth: &mut usize,
        rhs: Expr,
    ) -> Result<Expr, ParseError> {
        let d = (*lhs_depth).max(tree_depth(&rhs)) + 1;
        if d > MAX_TREE_DEPTH {
            return Err(self.error(format!(
                "expression too deep: more than {MAX_TREE_DEPTH} nested operations (a long chain of operators?)"
            )));
        }
        *lhs_depth = d;
        Ok(Expr::binary(op, lhs, rhs))
    }

    fn ternary_inner(&mut self) -> Result<Expr, ParseError> {
        let a = self.or()?;
        if self.is_kw("if") {
            self.next();
            let c = self.or()?;
            if !self.is_kw("else") {
                return Err(self.error("expected `else`".into()));
            }
            self.next();
            let b = self.ternary()?;
            return Ok(Expr::call(Func::Select, vec![c, a, b]));
        }
        Ok(a)
    }

    fn or(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.and()?;
        let mut d = tree_depth(&e);
        while self.is_sym("||") || self.is_kw("or") {
            self.next();
            let rhs = self.and()?;
            e = self.join(BinaryOp::Or, e, &mut d, rhs)?;
        }
        Ok(e)
    }

    fn and(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.not()?;
        let mut d = tree_depth(&e);
        while self.is_sym("&&") || self.is_kw("and") {
            self.next();
            let rhs = self.not()?;
            e = self.join(BinaryOp::And, e, &mut d, rhs)?;
        }
        Ok(e)
    }

    fn not(&mut self) -> Result<Expr, ParseError> {
        if self.is_kw("not") {
            self.next();
            self.enter()?;
            let inner = self.not();
            self.leave();
            return Ok(Expr::unary(UnaryOp::Not, inner?));
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Expr, ParseError> {
        let first = self.additive()?;
        let mut operands = vec![first];
        let mut ops = Vec::new();
        loop {
            let op = match self.peek() {
                Tok::Sym("==") => BinaryOp::Eq,
                Tok::Sym("!=") => BinaryOp::Ne,
                Tok::Sym("<") => BinaryOp::Lt,
                Tok::Sym("<=") => BinaryOp::Le,
                Tok::Sym(">") => BinaryOp::Gt,
                Tok::Sym(">=") => BinaryOp::Ge,
                _ => break,
            };
            self.next();
            ops.push(op);
            operands.push(self.additive()?);
        }
        // Chained comparisons mean what Python means: a < b < c  ==  (a < b) and (b < c).
        let mut result: Option<Expr> = None;
        let mut d = 0;
        for (i, op) in ops.into_iter().enumerate() {
            let mut cd = tree_depth(&operands[i]);
            let cmp = self.join(op, operands[i].clone(), &mut cd, operands[i + 1].clone())?;
            result = Some(match result {
                None => {
                    d = cd;
                    cmp
                }
                Some(r) => self.join(BinaryOp::And, r, &mut d, cmp)?,
            });
        }
        Ok(result.unwrap_or_else(|| operands.pop().expect("one operand")))
    }

    fn additive(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.term()?;
        let mut d = tree_depth(&e);
        loop {
            let op = match self.peek() {
                Tok::Sym("+") => BinaryOp::Add,
                Tok::Sym("-") => BinaryOp::Sub,
                _ => return Ok(e),
            };
            self.next();
            let rhs = self.term()?;
            e = self.join(op, e, &mut d, rhs)?;
        }
    }

    fn term(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.unary()?;
        let mut d = tree_depth(&e);
        loop {
            let op = match self.peek() {
                Tok::Sym("*") => BinaryOp::Mul,
                Tok::Sym("/") => BinaryOp::Div,
                Tok::Sym("//") => BinaryOp::FloorDiv,
                Tok::Sym("%") => BinaryOp::Mod,
                _ => return Ok(e),
            };
            self.next();
            let rhs = self.unary()?;
            e = self.join(op, e, &mut d, rhs)?;
        }
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        self.enter()?;
        let e = self.unary_inner();
        self.leave();
        e
    }

    fn unary_inner(&mut self) -> Result<Expr, ParseError> {
        match self.peek() {
            Tok::Sym("-") => {
                self.next();
                // `-5` is a negative literal, unless `**` follows (Python: -2**2 == -(2**2)).
                let literal_follows = matches!(self.peek(), Tok::Int(_) | Tok::Float(_))
                    && !matches!(self.peek_at(1), Tok::Sym("**"));
                if literal_follows {
                    let col = self.pos;
                    return match self.next() {
                        Tok::Int(m) if m <= i64::MAX as u128 + 1 => {
                            Ok(Expr::Lit(Value::Int((m as i128).wrapping_neg() as i64)))
                        }
                        Tok::Float(f) => Ok(Expr::Lit(Value::Float(-f))),
                        _ => {
                            self.pos = col;
                            Err(self.error("integer literal is too large for 64 bits".into()))
                        }
                    };
                }
                Ok(Expr::unary(UnaryOp::Neg, self.unary()?))
            }
            Tok::Sym("+") => {
                self.next();
                self.unary()
            }
            Tok::Sym("!") => {
                self.next();
                Ok(Expr::unary(UnaryOp::Not, self.unary()?))
            }
            _ => self.power(),
        }
    }

    fn power(&mut self) -> Result<Expr, ParseError> {
        let base = self.atom()?;
        if self.is_sym("**") {
            self.next();
            let exp = self.unary()?;
            return Ok(Expr::binary(BinaryOp::Pow, base, exp));
        }
        Ok(base)
    }

    fn index(&mut self) -> Result<usize, ParseError> {
        self.expect_sym("[")?;
        let i = match self.next() {
            Tok::Int(i) if i < 1 << 20 => i as usize,
            t => return Err(self.error(format!("expected an index, found {}", describe(&t)))),
        };
        self.expect_sym("]")?;
        Ok(i)
    }

    fn member(&mut self) -> Result<String, ParseError> {
        self.expect_sym(".")?;
        match self.next() {
            Tok::Ident(n) => Ok(n),
            t => Err(self.error(format!("expected a name after `.`, found {}", describe(&t)))),
        }
    }

    fn atom(&mut self) -> Result<Expr, ParseError> {
        let start = self.pos;
        match self.next() {
            Tok::Int(i) => i64::try_from(i)
                .map(|i| Expr::Lit(Value::Int(i)))
                .map_err(|_| {
                    self.pos = start;
                    self.error("integer literal is too large for 64 bits".into())
                }),
            Tok::Float(f) => Ok(Expr::Lit(Value::Float(f))),
            Tok::Str(s) => Ok(Expr::Lit(Value::Str(s))),
            Tok::Sym("(") => {
                let e = self.ternary()?;
                self.expect_sym(")")?;
                Ok(e)
            }
            Tok::Ident(name) => self.named(name, start),
            t => {
                self.pos = start;
                Err(self.error(format!("expected a value, found {}", describe(&t))))
            }
        }
    }

    fn named(&mut self, name: String, start: usize) -> Result<Expr, ParseError> {
        match name.as_str() {
            "true" | "True" => return Ok(Expr::Lit(Value::Bool(true))),
            "false" | "False" => return Ok(Expr::Lit(Value::Bool(false))),
            "and" | "or" | "not" | "if" | "else" => {
                self.pos = start;
                return Err(self.error(format!("expected a value, found keyword `{name}`")));
            }
            _ => {}
        }
        if self.is_sym("(") {
            let func = Func::from_name(&name).ok_or_else(|| {
                let names = Func::ALL.iter().map(|f| f.name()).chain(["ifelse"]);
                self.pos = start;
                self.error(match closest(&name, names) {
                    Some(s) => format!("unknown function `{name}` (did you mean `{s}`?)"),
                    None => format!("unknown function `{name}`"),
                })
            })?;
            self.next();
            let mut args = Vec::new();
            if !self.is_sym(")") {
                loop {
                    args.push(self.ternary()?);
                    if self.is_sym(",") {
                        self.next();
                    } else {
                        break;
                    }
                }
            }
            self.expect_sym(")")?;
            let (lo, hi) = func.arity();
            if args.len() < lo || args.len() > hi {
                self.pos = start;
                return Err(self.error(format!(
                    "`{}` takes {} argument(s), got {}",
                    func.name(),
                    if hi == usize::MAX {
                        format!("at least {lo}")
                    } else {
                        lo.to_string()
                    },
                    args.len()
                )));
            }
            return Ok(Expr::call(func, args));
        }
        let dotted = self.is_sym(".") || self.is_sym("[");
        match name.as_str() {
            "args" if dotted => {
                if self.is_sym("[") {
                    Ok(Expr::Arg(ArgRef::Index(self.index()?)))
                } else {
                    Ok(Expr::Arg(ArgRef::Name(self.member()?)))
                }
            }
            "problem_size" if dotted => {
                if self.is_sym("[") {
                    return Ok(Expr::ProblemSize(self.index()?));
                }
                let at = self.pos + 1;
                match self.member()?.as_str() {
                    "x" => Ok(Expr::ProblemSize(0)),
                    "y" => Ok(Expr::ProblemSize(1)),
                    "z" => Ok(Expr::ProblemSize(2)),
                    other => {
                        self.pos = at;
                        Err(self.error(format!("problem_size has axes x, y, z, not `{other}`")))
                    }
                }
            }
            "device" if self.is_sym(".") => {
                let at = self.pos + 1;
                let attr = self.member()?;
                DeviceAttr::from_name(&attr)
                    .map(Expr::Device)
                    .ok_or_else(|| {
                        self.pos = at;
                        let names = DeviceAttr::ALL.iter().map(|a| a.name());
                        self.error(match closest(&attr, names) {
                            Some(s) => {
                                format!("unknown device attribute `{attr}` (did you mean `{s}`?)")
                            }
                            None => format!("unknown device attribute `{attr}`"),
                        })
                    })
            }
            _ => Ok(Expr::Param(name)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{lit, param};

    #[test]
    fn precedence_and_python_forms() {
        let p = |s: &str| parse(s).unwrap();
        assert_eq!(p("1 + 2 * 3"), lit(1) + lit(2) * lit(3));
        assert_eq!(p("-2 ** 2"), -(lit(2).pow(2)));
        assert_eq!(p("2 ** -1"), lit(2).pow(-1));
        assert_eq!(
            p("a and not b or c"),
            param("a").and(!param("b")).or(param("c"))
        );
        assert_eq!(p("a && !b || c"), p("a and not b or c"));
        assert_eq!(
            p("32 <= x * y <= 1024"),
            lit(32)
                .le(param("x") * param("y"))
                .and((param("x") * param("y")).le(1024))
        );
        assert_eq!(p("x // 2"), param("x").floor_div(2));
        assert_eq!(
            p("a if c else b"),
            crate::expr::ifelse(param("c"), param("a"), param("b"))
        );
        assert_eq!(p("problem_size.y"), Expr::ProblemSize(1));
        assert_eq!(
            p("args[2] + args.n"),
            crate::expr::arg_at(2) + crate::expr::arg("n")
        );
        assert_eq!(p("device.warp_size"), Expr::Device(DeviceAttr::WarpSize));
        assert_eq!(p(r#"'a\'b' + "c""#), lit("a'b") + lit("c"));
    }

    #[test]
    fn errors_name_the_position() {
        let e = parse("a + * b").unwrap_err();
        assert_eq!(
            (e.column, e.message.as_str()),
            (5, "expected a value, found `*`")
        );
        let e = parse("(a + b").unwrap_err();
        assert_eq!(e.column, 7);
        let e = parse("minn(a, b)").unwrap_err();
        assert!(e.message.contains("did you mean `min`"), "{e}");
        let e = parse("device.warpsize").unwrap_err();
        assert!(e.message.contains("warp_size"), "{e}");
        assert_eq!(parse("a $ b").unwrap_err().column, 3);
        assert!(parse("'abc").is_err());
        assert!(parse("99999999999999999999").is_err());
        assert!(parse("").is_err());
        assert!(parse("div_ceil(1)").is_err());
        let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(parse(&deep).unwrap_err().message.contains("nested deeper"));
        assert!(parse(&"-".repeat(100_000)).is_err());
        assert!(parse(&"not ".repeat(100_000)).is_err());
    }

    #[test]
    fn min_int_literal() {
        assert_eq!(parse("-9223372036854775808").unwrap(), lit(i64::MIN));
    }
}

/// Evaluates a Python list expression as Kernel Tuner T1 files write parameter values:
/// `[16, 32, 64]`, `[32 * i for i in range(1, 32)]`, `[1] + [2 * i for i in range(1, 11)]`,
/// `list(range(1, 5))`, `range(0, 64, 8)`, comprehensions with an `if` filter.
///
/// ```
/// use kw_core::{parse::parse_value_list, Value};
/// let v = parse_value_list("[1] + [2 * i for i in range(1, 4)]").unwrap();
/// assert_eq!(v, vec![Value::Int(1), Value::Int(2), Value::Int(4), Value::Int(6)]);
/// ```
pub fn parse_value_list(text: &str) -> Result<Vec<Value>, ParseError> {
    let lexer = lex(text)?;
    let mut p = Parser {
        toks: lexer.toks,
        pos: 0,
        text,
        depth: 0,
    };
    let mut out = p.list_term()?;
    while p.is_sym("+") {
        p.next();
        out.extend(p.list_term()?);
    }
    match p.peek() {
        Tok::End => Ok(out),
        t => Err(p.error(format!("unexpected {} after the list", describe(t)))),
    }
}

/// Scope with one loop variable (list comprehensions).
struct LoopVar<'a> {
    name: &'a str,
    value: Value,
}

impl crate::eval::Scope for LoopVar<'_> {
    fn param(&self, name: &str) -> Option<Value> {
        (name == self.name).then(|| self.value.clone())
    }
    fn param_names(&self) -> Vec<String> {
        vec![self.name.to_string()]
    }
}

impl Parser<'_> {
    fn eval_here(
        &self,
        e: &Expr,
        scope: &dyn crate::eval::Scope,
        at: usize,
    ) -> Result<Value, ParseError> {
        e.eval(scope).map_err(|err| ParseError {
            column: self.toks[at].1 + 1,
            message: err.to_string(),
            text: self.text.to_string(),
        })
    }

    fn list_term(&mut self) -> Result<Vec<Value>, ParseError> {
        if self.is_kw("range") {
            return self.range();
        }
        if self.is_kw("list") && matches!(self.peek_at(1), Tok::Sym("(")) {
            self.next();
            self.next();
            let v = self.list_term()?;
            self.expect_sym(")")?;
            return Ok(v);
        }
        self.expect_sym("[")?;
        if self.is_sym("]") {
            self.next();
            return Ok(Vec::new());
        }
        let at = self.pos;
        let first = self.ternary()?;
        if self.is_kw("for") {
            self.next();
            let var = match self.next() {
                Tok::Ident(v) => v,
                t => {
                    return Err(
                        self.error(format!("expected a loop variable, found {}", describe(&t)))
                    )
                }
            };
            if !self.is_kw("in") {
                return Err(self.error("expected `in`".into()));
            }
            self.next();
            let items = self.list_term()?;
            let filter = if self.is_kw("if") {
                self.next();
                Some((self.pos, self.or()?))
            } else {
                None
            };
            self.expect_sym("]")?;
            let mut out = Vec::new();
            for value in items {
                let scope = LoopVar { name: &var, value };
                if let Some((fat, f)) = &filter {
                    if !self.eval_here(f, &scope, *fat)?.truthy() {
                        continue;
                    }
                }
                out.push(self.eval_here(&first, &scope, at)?);
            }
            return Ok(out);
        }
        let mut out = vec![self.eval_here(&first, &crate::eval::EmptyScope, at)?];
        while self.is_sym(",") {
            self.next();
            if self.is_sym("]") {
                break;
            }
            let at = self.pos;
            let e = self.ternary()?;
            out.push(self.eval_here(&e, &crate::eval::EmptyScope, at)?);
        }
        self.expect_sym("]")?;
        Ok(out)
    }

    fn range(&mut self) -> Result<Vec<Value>, ParseError> {
        let at = self.pos;
        self.next();
        self.expect_sym("(")?;
        let mut bounds = Vec::new();
        loop {
            let eat = self.pos;
            let e = self.ternary()?;
            match self.eval_here(&e, &crate::eval::EmptyScope, eat)? {
                Value::Int(i) => bounds.push(i),
                v => {
                    self.pos = eat;
                    return Err(self.error(format!("range() takes ints, not {}", v.type_name())));
                }
            }
            if self.is_sym(",") {
                self.next();
            } else {
                break;
            }
        }
        self.expect_sym(")")?;
        let (start, stop, step) = match bounds[..] {
            [stop] => (0, stop, 1),
            [start, stop] => (start, stop, 1),
            [start, stop, step] if step != 0 => (start, stop, step),
            _ => {
                self.pos = at;
                return Err(self.error("range() takes 1 to 3 arguments and a non-zero step".into()));
            }
        };
        let mut out = Vec::new();
        let mut i = start;
        while (step > 0 && i < stop) || (step < 0 && i > stop) {
            if out.len() >= 10_000_000 {
                self.pos = at;
                return Err(self.error("range() is too long".into()));
            }
            out.push(Value::Int(i));
            i = match i.checked_add(step) {
                Some(n) => n,
                None => break,
            };
        }
        Ok(out)
    }
}

#[cfg(test)]
mod list_tests {
    use super::parse_value_list as l;
    use crate::Value;

    fn ints(v: &[i64]) -> Vec<Value> {
        v.iter().map(|&i| Value::Int(i)).collect()
    }

    #[test]
    fn python_list_expressions() {
        assert_eq!(l("[16, 32, 48]").unwrap(), ints(&[16, 32, 48]));
        assert_eq!(
            l("[32 * i for i in range(1, 4)]").unwrap(),
            ints(&[32, 64, 96])
        );
        assert_eq!(
            l("[1] + [2 * i for i in range(1, 3)]").unwrap(),
            ints(&[1, 2, 4])
        );
        assert_eq!(l("list(range(3))").unwrap(), ints(&[0, 1, 2]));
        assert_eq!(l("range(10, 0, -4)").unwrap(), ints(&[10, 6, 2]));
        assert_eq!(
            l("[i for i in range(8) if i % 3 == 0]").unwrap(),
            ints(&[0, 3, 6])
        );
        assert_eq!(l("[2**i for i in range(3)]").unwrap(), ints(&[1, 2, 4]));
        assert_eq!(
            l("['float', \"double\"]").unwrap(),
            vec![Value::Str("float".into()), Value::Str("double".into())]
        );
        assert_eq!(l("[]").unwrap(), ints(&[]));
    }

    #[test]
    fn list_errors_name_the_position() {
        assert_eq!(l("[1, 2").unwrap_err().column, 6);
        assert!(l("[i for j in range(3)]")
            .unwrap_err()
            .message
            .contains("unknown parameter `i`"));
        assert!(l("range(1, 2, 0)").is_err());
        assert!(l("[1] +").is_err());
    }
}
