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

/// The most items a comprehension in an expression may make (each is written out).
pub const MAX_COMPREHENSION: usize = 10_000;
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

    /// `a op b op c ...` for `and` / `or` (and `sum`'s `+`): grouped from the left (`((a op b) op c)`), as
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

    /// Whether the next tokens are `in` or `not in`.
    fn at_in(&self) -> bool {
        self.is_kw("in")
            || (self.is_kw("not") && matches!(self.peek_at(1), Tok::Ident(w) if w == "in"))
    }

    fn comparison(&mut self) -> Result<Expr, ParseError> {
        let first = self.bit_or()?;
        let mut operands = vec![first];
        let mut ops = Vec::new();
        // `x in [...]` / `x not in [...]`: the membership test of the last operand, which
        // ends the chain.
        let mut membership = None;
        loop {
            let op = match self.peek() {
                Tok::Sym("==") => BinaryOp::Eq,
                Tok::Sym("!=") => BinaryOp::Ne,
                Tok::Sym("<") => BinaryOp::Lt,
                Tok::Sym("<=") => BinaryOp::Le,
                Tok::Sym(">") => BinaryOp::Gt,
                Tok::Sym(">=") => BinaryOp::Ge,
                _ if self.at_in() => {
                    let negated = self.is_kw("not");
                    if negated {
                        self.next();
                    }
                    self.next();
                    // After a comparison the item is written twice (`a < b in [..]` is
                    // `a < b and is_in(b, ..)`): checked as a chain's middle operands are.
                    if !ops.is_empty() {
                        self.check_chain_size(&operands, true)?;
                    }
                    let item = operands.last().expect("one operand").clone();
                    let test = self.membership(item)?;
                    membership = Some(if negated {
                        Expr::unary(UnaryOp::Not, test)
                    } else {
                        test
                    });
                    let more =
                        matches!(self.peek(), Tok::Sym("==" | "!=" | "<" | "<=" | ">" | ">="))
                            || self.at_in();
                    if more {
                        return Err(self.error(
                            "a comparison after `in [...]` is not supported: add parentheses"
                                .into(),
                        ));
                    }
                    break;
                }
                _ => break,
            };
            self.next();
            ops.push(op);
            operands.push(self.bit_or()?);
        }
        // Chained comparisons mean what Python means: a < b < c  ==  (a < b) and (b < c).
        // The middle operands are written twice: nested chains with compound middles double
        // at each level, so the size is checked before they are (24 levels took 6 GB).
        if ops.len() >= 2 {
            self.check_chain_size(&operands, false)?;
        }
        let mut result: Option<Expr> = None;
        let mut d = 0;
        let tests = ops
            .into_iter()
            .enumerate()
            .map(|(i, op)| {
                let mut cd = tree_depth(&operands[i]);
                self.join(op, operands[i].clone(), &mut cd, operands[i + 1].clone())
                    .map(|e| (e, cd))
            })
            .chain(membership.map(|m| {
                let depth = tree_depth(&m);
                Ok((m, depth))
            }));
        for test in tests {
            let (cmp, cd) = test?;
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

    /// Refuses a chained comparison whose operands, its middle ones written twice (and the
    /// last too when `last_twice`: an `in` follows), would pass [`MAX_NODES`]: nested chains
    /// with compound middles double at each level (24 levels took 6 GB).
    fn check_chain_size(&self, operands: &[Expr], last_twice: bool) -> Result<(), ParseError> {
        let nodes = |e: &Expr| {
            let mut n = 0usize;
            e.visit(&mut |_| n += 1);
            n
        };
        let end = if last_twice {
            operands.len()
        } else {
            operands.len() - 1
        };
        let twice: usize = operands[1.min(end)..end].iter().map(nodes).sum();
        let all: usize = operands.iter().map(nodes).sum();
        if all + twice > MAX_NODES {
            return Err(self.error(format!(
                "expression too large: more than {MAX_NODES} operations once its chained \
                 comparisons are spelled out (each middle operand is written twice)"
            )));
        }
        Ok(())
    }

    /// The test of `item`'s membership, just after `in`: of a list, tuple or set written out
    /// (`is_in(item, a, b)`) or of `range(...)` (`in_range(item, start, stop, step)`), every
    /// element evaluated, as Python builds the list first.
    fn membership(&mut self, item: Expr) -> Result<Expr, ParseError> {
        if self.is_kw("range") && matches!(self.peek_at(1), Tok::Sym("(")) {
            let at = self.pos;
            self.next();
            let mut args = self.call_args()?;
            if args.is_empty() || args.len() > 3 {
                self.pos = at;
                return Err(self.error(format!(
                    "`range` takes 1 to 3 arguments, got {}",
                    args.len()
                )));
            }
            if args.len() == 1 {
                args.insert(0, Expr::Lit(Value::Int(0)));
            }
            if args.len() == 2 {
                args.push(Expr::Lit(Value::Int(1)));
            }
            args.insert(0, item);
            return Ok(Expr::call(Func::InRange, args));
        }
        let Some(mut items) = self.collection()? else {
            return Err(self.error(format!(
                "`in` takes a list, a tuple or a set written out (`[1, 2, 4]`) or `range(...)`, \
                 found {}",
                describe(self.peek())
            )));
        };
        items.insert(0, item);
        Ok(Expr::call(Func::IsIn, items))
    }

    /// A list, tuple or set written out (`[a, b]`, `(a, b)`, `(a,)`, `{a, b}`), or `None` when
    /// none starts here. `(a)` is `a`, not a tuple, as in Python.
    fn collection(&mut self) -> Result<Option<Vec<Expr>>, ParseError> {
        let close = match self.peek() {
            Tok::Sym("[") => "]",
            Tok::Sym("(") => ")",
            Tok::Sym("{") => "}",
            _ => return Ok(None),
        };
        let open = self.pos;
        self.next();
        let mut items = Vec::new();
        let mut trailing_comma = false;
        while !self.is_sym(close) {
            items.push(self.ternary()?);
            if items.len() == 1 && close != ")" && self.is_kw("for") {
                let element = items.pop().expect("one item");
                let items = self.comprehension(element)?;
                self.expect_sym(close)?;
                return Ok(Some(items));
            }
            trailing_comma = self.is_sym(",");
            if !trailing_comma {
                break;
            }
            self.next();
        }
        self.expect_sym(close)?;
        if close == ")" && items.len() == 1 && !trailing_comma {
            self.pos = open;
            return Err(self.error(
                "`(x)` is not a tuple: write `(x,)` or `[x]` for a collection of one".into(),
            ));
        }
        Ok(Some(items))
    }

    /// The items of a list or set comprehension, at its `for`: `[2 ** i for i in range(4, 9)]`,
    /// `[a * i for i in [1, 2, 3] if i != 2]`. The iterable is a list of constants (written out,
    /// `range(...)`, another comprehension); each of its values is put for the loop variable
    /// in the element (which may name tuning parameters) and in the filter (which must not:
    /// it decides which items there are). At most [`MAX_COMPREHENSION`] items.
    fn comprehension(&mut self, element: Expr) -> Result<Vec<Expr>, ParseError> {
        self.next(); // `for`
        let var = match self.next() {
            Tok::Ident(v) => v,
            t => {
                return Err(self.error(format!(
                    "expected a loop variable after `for`, found {}",
                    describe(&t)
                )))
            }
        };
        if !self.is_kw("in") {
            return Err(self.error(format!("expected `in` after `for {var}`")));
        }
        self.next();
        let at = self.pos;
        let values = self.list_term().map_err(|mut e| {
            e.message = format!(
                "a comprehension's iterable must be a list of constants (it decides which \
                 items there are): {}",
                e.message
            );
            e
        })?;
        let filter = if self.is_kw("if") {
            self.next();
            Some((self.pos, self.or()?))
        } else {
            None
        };
        if values.len() > MAX_COMPREHENSION {
            self.pos = at;
            return Err(self.error(format!(
                "the comprehension has {} items; at most {MAX_COMPREHENSION} are taken",
                values.len()
            )));
        }
        let put = |e: &Expr, value: &Value| {
            let mut e = e.clone();
            e.visit_mut(&mut |node| {
                if matches!(node, Expr::Param(name) if *name == var) {
                    *node = Expr::Lit(value.clone());
                }
            });
            e
        };
        // Each item is the element written out: a nested comprehension in the element
        // multiplies, so the whole is bounded as every expression is ([`MAX_NODES`]).
        let nodes_of = |e: &Expr| {
            let mut n = 0usize;
            e.visit(&mut |_| n += 1);
            n
        };
        let per_item = nodes_of(&element);
        let mut nodes = 0usize;
        let mut items = Vec::new();
        for value in &values {
            if let Some((fat, f)) = &filter {
                let keep = put(f, value)
                    .eval(&crate::eval::EmptyScope)
                    .map_err(|err| {
                        self.pos = *fat;
                        self.error(format!(
                            "the comprehension's filter must be a constant for each item (it \
                         decides which items there are): {err}"
                        ))
                    })?;
                if !keep.truthy() {
                    continue;
                }
            }
            nodes = nodes.saturating_add(per_item);
            if nodes > MAX_NODES {
                self.pos = at;
                return Err(self.error(format!(
                    "expression too large: the comprehension writes out more than {MAX_NODES} \
                     operations"
                )));
            }
            items.push(put(&element, value));
        }
        Ok(items)
    }

    fn bit_or(&mut self) -> Result<Expr, ParseError> {
        self.left_assoc(&[("|", BinaryOp::BitOr)], Self::bit_xor)
    }

    fn bit_xor(&mut self) -> Result<Expr, ParseError> {
        self.left_assoc(&[("^", BinaryOp::BitXor)], Self::bit_and)
    }

    fn bit_and(&mut self) -> Result<Expr, ParseError> {
        self.left_assoc(&[("&", BinaryOp::BitAnd)], Self::shift)
    }

    fn shift(&mut self) -> Result<Expr, ParseError> {
        self.left_assoc(
            &[("<<", BinaryOp::Shl), (">>", BinaryOp::Shr)],
            Self::additive,
        )
    }

    /// `operand (op operand)*` for the operators `ops` of one precedence level, grouped from
    /// the left.
    fn left_assoc(
        &mut self,
        ops: &[(&str, BinaryOp)],
        operand: fn(&mut Self) -> Result<Expr, ParseError>,
    ) -> Result<Expr, ParseError> {
        let mut e = operand(self)?;
        let mut d = tree_depth(&e);
        loop {
            let Some(&(_, op)) = ops.iter().find(|(sym, _)| self.is_sym(sym)) else {
                return Ok(e);
            };
            self.next();
            let rhs = operand(self)?;
            e = self.join(op, e, &mut d, rhs)?;
        }
    }

    fn additive(&mut self) -> Result<Expr, ParseError> {
        self.left_assoc(&[("+", BinaryOp::Add), ("-", BinaryOp::Sub)], Self::term)
    }

    fn term(&mut self) -> Result<Expr, ParseError> {
        self.left_assoc(
            &[
                ("*", BinaryOp::Mul),
                ("/", BinaryOp::Div),
                ("//", BinaryOp::FloorDiv),
                ("%", BinaryOp::Mod),
            ],
            Self::unary,
        )
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
            Tok::Sym("~") => {
                self.next();
                Ok(Expr::unary(UnaryOp::BitNot, self.unary()?))
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

    /// The arguments of a call, from its `(` to its `)`.
    fn call_args(&mut self) -> Result<Vec<Expr>, ParseError> {
        self.expect_sym("(")?;
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
        Ok(args)
    }

    /// The single argument of `min([...])`, `any([...])` and the like: a collection written
    /// out, from the call's `(` to its `)`; `None` (nothing read) when another argument
    /// starts there.
    fn list_arg(&mut self) -> Result<Option<Vec<Expr>>, ParseError> {
        if !matches!(self.peek_at(1), Tok::Sym("[" | "{")) {
            return Ok(None);
        }
        self.expect_sym("(")?;
        let items = self.collection()?.expect("a collection starts here");
        self.expect_sym(")")?;
        Ok(Some(items))
    }

    fn arity_error(&mut self, start: usize, name: &str, func: Func, got: usize) -> ParseError {
        let (lo, hi) = func.arity();
        self.pos = start;
        // Named as written (`ifelse` is `select` by another name).
        self.error(format!(
            "`{name}` takes {} argument(s), got {got}",
            if hi == usize::MAX {
                format!("at least {lo}")
            } else if hi == lo {
                lo.to_string()
            } else {
                format!("{lo} or {hi}")
            },
        ))
    }

    /// A call of `func` (named `name` as written) with these arguments, their count checked.
    fn checked_call(
        &mut self,
        start: usize,
        name: &str,
        func: Func,
        args: Vec<Expr>,
    ) -> Result<Expr, ParseError> {
        let (lo, hi) = func.arity();
        if args.len() < lo || args.len() > hi {
            return Err(self.arity_error(start, name, func, args.len()));
        }
        Ok(Expr::call(func, args))
    }

    /// A call of `name`, at its `(`: a built-in function, or one of Python's that is written
    /// with them (`pow(a, b)` is `a ** b`, `any([a, b])` is `a or b` as bools, `sum([a, b])`
    /// is `0 + a + b`, `max([a, b])` is `max(a, b)`).
    fn call(&mut self, name: String, start: usize) -> Result<Expr, ParseError> {
        match name.as_str() {
            "pow" => {
                let mut args = self.call_args()?;
                if args.len() != 2 {
                    self.pos = start;
                    return Err(
                        self.error(format!("`pow` takes 2 arguments here, got {}", args.len()))
                    );
                }
                let exp = args.pop().expect("two arguments");
                let base = args.pop().expect("two arguments");
                return Ok(Expr::binary(BinaryOp::Pow, base, exp));
            }
            "len" => {
                let Some(items) = self.list_arg()? else {
                    self.pos = start;
                    return Err(
                        self.error("`len` takes a list written out here (`len([a, b])`)".into())
                    );
                };
                return Ok(Expr::Lit(Value::Int(items.len() as i64)));
            }
            "any" | "all" | "sum" => {
                let Some(items) = self.list_arg()? else {
                    self.pos = start;
                    return Err(self.error(format!(
                        "`{name}` takes a list written out here (`{name}([a, b])`)"
                    )));
                };
                if name == "sum" {
                    // `0 + a + b ...`, grouped balanced past the depth a long list would
                    // reach (as `and` / `or` chains are).
                    let mut operands = vec![Expr::Lit(Value::Int(0))];
                    operands.extend(items);
                    return self.logic_chain(BinaryOp::Add, operands);
                }
                let func = if name == "any" { Func::Any } else { Func::All };
                return Ok(Expr::call(func, items));
            }
            _ => {}
        }
        let func = Func::from_name(&name).ok_or_else(|| {
            let names = Func::ALL
                .iter()
                .map(|f| f.name())
                .chain(["ifelse", "pow", "any", "all", "sum", "len"]);
            self.pos = start;
            self.error(match closest(&name, names) {
                Some(s) => format!("unknown function `{name}` (did you mean `{s}`?)"),
                None => format!("unknown function `{name}`"),
            })
        })?;
        if matches!(func, Func::Min | Func::Max) {
            if let Some(items) = self.list_arg()? {
                if items.is_empty() {
                    self.pos = start;
                    return Err(self.error(format!("`{name}` of an empty list")));
                }
                return Ok(Expr::call(func, items));
            }
        }
        let args = self.call_args()?;
        self.checked_call(start, &name, func, args)
    }

    /// `math.NAME`, at its `.`: Python's `math` functions that kw has (`math.ceil` is `ceil`,
    /// `math.pow(a, b)` is `float(a ** b)`, `math.fabs` is `float(abs(x))`, `math.trunc` is
    /// `int`) and its constants `pi`, `e` and `tau`.
    fn math(&mut self, start: usize) -> Result<Expr, ParseError> {
        let at = self.pos + 1;
        let member = self.member()?;
        let constant = match member.as_str() {
            "pi" => Some(std::f64::consts::PI),
            "e" => Some(std::f64::consts::E),
            "tau" => Some(std::f64::consts::TAU),
            _ => None,
        };
        if let Some(c) = constant {
            return Ok(Expr::Lit(Value::Float(c)));
        }
        let written = format!("math.{member}");
        let func = match member.as_str() {
            "ceil" => Some(Func::Ceil),
            "floor" => Some(Func::Floor),
            "sqrt" => Some(Func::Sqrt),
            "exp" => Some(Func::Exp),
            "log" => Some(Func::Log),
            "log2" => Some(Func::Log2),
            "log10" => Some(Func::Log10),
            "trunc" => Some(Func::Int),
            "fabs" => Some(Func::Abs),
            _ => None,
        };
        if !self.is_sym("(") || (func.is_none() && member != "pow") {
            self.pos = at;
            return Err(self.error(format!(
                "`{written}` is not available (kw has math.ceil, floor, trunc, sqrt, exp, log, \
                 log2, log10, pow, fabs, pi, e, tau)"
            )));
        }
        let args = self.call_args()?;
        let Some(func) = func else {
            // math.pow
            let [base, exp]: [Expr; 2] = args.try_into().map_err(|args: Vec<Expr>| {
                self.pos = start;
                self.error(format!("`math.pow` takes 2 arguments, got {}", args.len()))
            })?;
            // In floats, as Python's `math.pow` (`math.pow(10, 20)` is 1e20).
            let float = |e| Expr::call(Func::Float, vec![e]);
            return Ok(Expr::binary(BinaryOp::Pow, float(base), float(exp)));
        };
        let e = self.checked_call(start, &written, func, args)?;
        Ok(if member == "fabs" {
            Expr::call(Func::Float, vec![e])
        } else {
            e
        })
    }

    fn named(&mut self, name: String, start: usize) -> Result<Expr, ParseError> {
        match name.as_str() {
            "true" | "True" => return Ok(Expr::Lit(Value::Bool(true))),
            "false" | "False" => return Ok(Expr::Lit(Value::Bool(false))),
            "and" | "or" | "not" | "if" | "else" | "in" => {
                self.pos = start;
                return Err(self.error(format!("expected a value, found keyword `{name}`")));
            }
            _ => {}
        }
        if name == "math" && self.is_sym(".") {
            return self.math(start);
        }
        if self.is_sym("(") {
            return self.call(name, start);
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
