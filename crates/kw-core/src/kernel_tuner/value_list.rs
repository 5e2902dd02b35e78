//! Kernel Tuner's parameter value lists: Python list expressions evaluated to values.

use crate::expr::Expr;
use crate::parse::{describe, ParseError, Parser, Tok};
use crate::value::Value;

/// Evaluates a Python list expression as Kernel Tuner T1 files write parameter values:
/// `[16, 32, 64]`, `[32 * i for i in range(1, 32)]`, `[1] + [2 * i for i in range(1, 11)]`,
/// `list(range(1, 5))`, `range(0, 64, 8)`, comprehensions with an `if` filter.
///
/// ```
/// use kw_core::{kernel_tuner::parse_value_list, value::Value};
/// let v = parse_value_list("[1] + [2 * i for i in range(1, 4)]").unwrap();
/// assert_eq!(v, vec![Value::Int(1), Value::Int(2), Value::Int(4), Value::Int(6)]);
/// ```
pub fn parse_value_list(text: &str) -> Result<Vec<Value>, ParseError> {
    let mut p = Parser::new(text)?;
    let mut out = p.list_term()?;
    while p.is_sym("+") {
        p.next();
        let at = p.pos;
        out.extend(p.list_term()?);
        if out.len() > MAX_VALUES {
            p.pos = at;
            return Err(p.error(format!(
                "the list has more than {MAX_VALUES} values (a parameter to tune has far fewer)"
            )));
        }
    }
    match p.peek() {
        Tok::End => Ok(out),
        t => Err(p.error(format!("unexpected {} after the list", describe(t)))),
    }
}

/// The most values a list (and each `range()` in it) may hold: a tuning parameter has far
/// fewer, and a list of many `range()` terms must not exhaust memory before it is refused.
pub const MAX_VALUES: usize = 1_000_000;

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

    /// A list of constants: `[...]` written out or a comprehension, `range(...)`,
    /// `list(...)` (also the iterable of a comprehension in a restriction).
    pub(crate) fn list_term(&mut self) -> Result<Vec<Value>, ParseError> {
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
            if out.len() >= MAX_VALUES {
                self.pos = at;
                return Err(self.error(format!(
                    "range() is too long (more than {MAX_VALUES} values)"
                )));
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
    use crate::value::Value;

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
        // Many ranges, each within the limit, are refused together before memory runs out.
        let many = vec!["range(0, 900000)"; 60].join(" + ");
        let e = l(&many).unwrap_err().to_string();
        assert!(e.contains("more than 1000000 values"), "{e}");
        assert!(l("range(0, 1000001)")
            .unwrap_err()
            .to_string()
            .contains("too long"));
        assert_eq!(l("range(0, 1000000)").unwrap().len(), 1_000_000);
    }
}
