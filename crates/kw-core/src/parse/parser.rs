//! The parser: text tokens to an [`Expr`], by precedence climbing.

use super::lexer::lex;
use super::{tree_depth, ParseError, Tok, MAX_DEPTH, MAX_NODES, MAX_TREE_DEPTH};
use crate::did_you_mean::closest;
use crate::expr::{ArgRef, BinaryOp, DeviceAttr, Expr, Func, UnaryOp};
use crate::value::Value;

/// A recursive-descent parser over the tokens of one text.
pub(crate) struct Parser<'t> {
    pub(crate) toks: Vec<(Tok, usize)>,
    pub(crate) pos: usize,
    pub(crate) text: &'t str,
    pub(crate) depth: usize,
}

pub(crate) fn describe(t: &Tok) -> String {
    match t {
        Tok::Int(i) => format!("number `{i}`"),
        Tok::Float(f) => format!("number `{f}`"),
        Tok::Str(s) => format!("string {s:?}"),
        Tok::Ident(s) => format!("name `{s}`"),
        Tok::Sym(s) => format!("`{s}`"),
        Tok::End => "end of input".into(),
    }
}

impl<'t> Parser<'t> {
    /// A parser at the first token of `text`.
    pub(crate) fn new(text: &'t str) -> Result<Parser<'t>, ParseError> {
        Ok(Parser {
            toks: lex(text)?.toks,
            pos: 0,
            text,
            depth: 0,
        })
    }
}

impl Parser<'_> {
    pub(crate) fn peek(&self) -> &Tok {
        &self.toks[self.pos].0
    }
    pub(crate) fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)].0
    }
    pub(crate) fn next(&mut self) -> Tok {
        let t = self.toks[self.pos].0.clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }
    pub(crate) fn error(&self, message: String) -> ParseError {
        ParseError {
            column: self.toks[self.pos].1 + 1,
            message,
            text: self.text.to_string(),
        }
    }
    pub(crate) fn is_sym(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Sym(x) if *x == s)
    }
    pub(crate) fn is_kw(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Ident(x) if x == s)
    }
    pub(crate) fn expect_sym(&mut self, s: &str) -> Result<(), ParseError> {
        if self.is_sym(s) {
            self.next();
            Ok(())
        } else {
            Err(self.error(format!("expected `{s}`, found {}", describe(self.peek()))))
        }
    }

    pub(crate) fn ternary(&mut self) -> Result<Expr, ParseError> {
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

    pub(crate) fn or(&mut self) -> Result<Expr, ParseError> {
        let mut operands = vec![self.and()?];
        while self.is_sym("||") || self.is_kw("or") {
            self.next();
            operands.push(self.and()?);
        }
        self.logic_chain(BinaryOp::Or, operands)
    }

    fn and(&mut self) -> Result<Expr, ParseError> {
        let mut operands = vec![self.not()?];
        while self.is_sym("&&") || self.is_kw("and") {
            self.next();
            operands.push(self.not()?);
        }
        self.logic_chain(BinaryOp::And, operands)
    }

    /// `a op b op c ...` for `and` / `or`: grouped from the left (`((a op b) op c)`), as
    /// always; a chain too long for that depth (`a == 0 or a == 1 or ...` over 48 values) is
    /// grouped as a balanced tree instead, which means the same (`and` / `or` are associative,
    /// Python's value semantics included, and operands are still evaluated left to right).
    fn logic_chain(&self, op: BinaryOp, operands: Vec<Expr>) -> Result<Expr, ParseError> {
        let depths: Vec<usize> = operands.iter().map(tree_depth).collect();
        let left_deep = depths.iter().skip(1).fold(depths[0], |d, &r| d.max(r) + 1);
        if left_deep <= MAX_TREE_DEPTH {
            let mut it = operands.into_iter();
            let mut e = it.next().expect("one operand");
            let mut d = depths[0];
            for rhs in it {
                e = self.join(op, e, &mut d, rhs)?;
            }
            return Ok(e);
        }
        fn balanced(op: BinaryOp, mut items: Vec<Expr>) -> Expr {
            if items.len() == 1 {
                return items.pop().expect("one operand");
            }
            let right = items.split_off(items.len() / 2);
            Expr::binary(op, balanced(op, items), balanced(op, right))
        }
        let e = balanced(op, operands);
        if tree_depth(&e) > MAX_TREE_DEPTH {
            return Err(self.error(format!(
                "expression too deep: more than {MAX_TREE_DEPTH} nested operations"
            )));
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
        // The middle operands are written twice: nested chains with compound middles double
        // at each level, so the size is checked before they are (24 levels took 6 GB).
        if ops.len() >= 2 {
            let nodes = |e: &Expr| {
                let mut n = 0usize;
                e.visit(&mut |_| n += 1);
                n
            };
            let middle: usize = operands[1..operands.len() - 1].iter().map(nodes).sum();
            let all: usize = operands.iter().map(nodes).sum();
            if all + middle > MAX_NODES {
                return Err(self.error(format!(
                    "expression too large: more than {MAX_NODES} operations once its chained \
                     comparisons are spelled out (each middle operand is written twice)"
                )));
            }
        }
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
                // Named as written (`ifelse` is `select` by another name).
                return Err(self.error(format!(
                    "`{name}` takes {} argument(s), got {}",
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
