//! T1 expression strings (`Size`, `GlobalSize`, `ProblemSize[i]`, `max(P)`): parsed into
//! the expression language, and the scope they are evaluated in.

use super::t1::T1Spec;
use crate::eval::Scope;
use crate::expr::{Expr, Func};

/// Scope of `Size` and `GlobalSize` expressions: the problem size only.
pub(super) struct SizeScope<'a>(pub(super) &'a [i64]);

impl Scope for SizeScope<'_> {
    /// An axis the file's `ProblemSize` lacks counts as 1; without a problem size (a file
    /// that gives only a `GlobalSize` over parameters) there is none.
    fn problem_size(&self, axis: usize) -> Option<i64> {
        if self.0.is_empty() {
            return None;
        }
        self.0.get(axis).copied().or(Some(1))
    }
}

/// Scope of the parameters' defaults (the `Default` configuration), without a problem size.
pub(super) struct DefaultsScope<'a>(pub(super) &'a [crate::space::Parameter]);

impl Scope for DefaultsScope<'_> {
    fn param(&self, name: &str) -> Option<crate::value::Value> {
        let p = self.0.iter().find(|p| p.name == name)?;
        Some(p.default.clone())
    }
}

/// Parses T1 expression text, as Python reads it: `ProblemSize` (the identifier, not inside a
/// string literal or a longer name such as `ProblemSizeFactor`) is the problem size
/// (`problem_size` in kw's expressions), and an `and` / `or` whose value is used (`(a or 16)
/// == 16`, not a condition) gives an operand as in Python ([`python_values`]). `as_value`:
/// the whole expression is a value (a size), not a condition.
pub(super) fn parse_t1(text: &str, as_value: bool) -> Result<Expr, crate::parse::ParseError> {
    const NAME: &str = "ProblemSize";
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut prev: Option<char> = None;
    // Columns (1-based, in characters of `out`) after which a rename added one character.
    let mut renamed_at: Vec<usize> = Vec::new();
    let mut column = 0; // characters of `out` so far
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if rest.starts_with(NAME)
                && !prev.is_some_and(ident)
                && !rest[NAME.len()..].chars().next().is_some_and(ident) =>
            {
                out.push_str("problem_size");
                column += "problem_size".len();
                renamed_at.push(column);
                rest = &rest[NAME.len()..];
                prev = Some('e');
                continue;
            }
            None => {}
        }
        out.push(c);
        column += 1;
        prev = Some(c);
        rest = &rest[c.len_utf8()..];
    }
    let as_written = |mut e: crate::parse::ParseError| {
        // The column in the text as written: one less per rename before it.
        e.column -= renamed_at.iter().filter(|&&at| at < e.column).count();
        e.text = text.to_string();
        e
    };
    let e = Expr::parse(&out).map_err(as_written)?;
    python_values(e, as_value).map_err(|message| crate::parse::ParseError {
        column: 1,
        message,
        text: text.to_string(),
    })
}

/// Python's `and` / `or` where their value is used: `a or b` is `a` when `a` is true, else
/// `b`; `a and b` is `a` when `a` is false, else `b` (kw's `&&` / `||` give a bool, as C's).
/// Written with `select` (`select(a, a, b)`, `select(a, b, a)`) only where the value is used
/// (an operand of a comparison, arithmetic, a function, or a value expression): a condition's
/// `and` / `or` stays as it is, and so does its printed form. `value`: `e`'s value is used.
fn python_values(e: Expr, value: bool) -> Result<Expr, String> {
    use crate::expr::{BinaryOp, UnaryOp};
    /// Whether `e`'s value is a bool whatever its operands (a comparison, a `not`, an `and` /
    /// `or` of such): Python's operand is then the bool C's `&&` gives, and nothing needs
    /// writing out (a chained comparison is an `and` of comparisons).
    fn boolish(e: &Expr) -> bool {
        match e {
            Expr::Binary { op, lhs, rhs } => match op {
                BinaryOp::Eq
                | BinaryOp::Ne
                | BinaryOp::Lt
                | BinaryOp::Le
                | BinaryOp::Gt
                | BinaryOp::Ge => true,
                BinaryOp::And
                | BinaryOp::Or
                | BinaryOp::BitAnd
                | BinaryOp::BitOr
                | BinaryOp::BitXor => boolish(lhs) && boolish(rhs),
                _ => false,
            },
            Expr::Call {
                func: Func::Bool | Func::IsIn | Func::InRange | Func::Any | Func::All,
                ..
            } => true,
            Expr::Unary {
                op: UnaryOp::Not, ..
            } => true,
            Expr::Lit(crate::value::Value::Bool(_)) => true,
            _ => false,
        }
    }
    fn walk(e: Expr, value: bool) -> Expr {
        match e {
            Expr::Binary { op, lhs, rhs } if matches!(op, BinaryOp::And | BinaryOp::Or) => {
                if !value || (boolish(&lhs) && boolish(&rhs)) {
                    return Expr::binary(op, walk(*lhs, false), walk(*rhs, false));
                }
                // The chain of this operator, in order (it is associative, Python's values
                // included), grouped balanced so that each operand is written a few times.
                let mut operands = Vec::new();
                let mut stack = vec![Expr::Binary { op, lhs, rhs }];
                while let Some(node) = stack.pop() {
                    match node {
                        Expr::Binary { op: o, lhs, rhs } if o == op => {
                            stack.push(*rhs);
                            stack.push(*lhs);
                        }
                        other => operands.push(walk(other, true)),
                    }
                }
                fn build(op: BinaryOp, mut items: Vec<Expr>) -> Expr {
                    if items.len() == 1 {
                        return items.pop().expect("one operand");
                    }
                    let right = build(op, items.split_off(items.len() / 2));
                    let left = build(op, items);
                    let args = match op {
                        BinaryOp::Or => vec![left.clone(), left, right],
                        _ => vec![left.clone(), right, left],
                    };
                    Expr::call(Func::Select, args)
                }
                build(op, operands)
            }
            Expr::Binary { op, lhs, rhs } => Expr::binary(op, walk(*lhs, true), walk(*rhs, true)),
            Expr::Unary { op, arg } => Expr::unary(op, walk(*arg, op != UnaryOp::Not)),
            Expr::Call { func, args } => {
                let args = args
                    .into_iter()
                    .enumerate()
                    .map(|(i, a)| {
                        // `select`'s condition is a condition; its results are what it gives.
                        let used = if func == Func::Select {
                            i > 0 && value
                        } else {
                            true
                        };
                        walk(a, used)
                    })
                    .collect();
                Expr::call(func, args)
            }
            leaf => leaf,
        }
    }
    let has_logic = {
        let mut found = false;
        e.visit(&mut |n| {
            found |= matches!(
                n,
                Expr::Binary {
                    op: BinaryOp::And | BinaryOp::Or,
                    ..
                }
            )
        });
        found
    };
    if !has_logic {
        return Ok(e);
    }
    /// The nodes [`walk`] would make (saturating): checked before it makes them, since each
    /// `and` / `or` used as a value writes its left side twice (nested, twice per level).
    fn cost(e: &Expr, value: bool) -> u64 {
        match e {
            Expr::Binary { op, lhs, rhs } if matches!(op, BinaryOp::And | BinaryOp::Or) => {
                if !value || (boolish(lhs) && boolish(rhs)) {
                    return 1u64
                        .saturating_add(cost(lhs, false))
                        .saturating_add(cost(rhs, false));
                }
                let mut operands = Vec::new();
                let mut stack = vec![e];
                while let Some(node) = stack.pop() {
                    match node {
                        Expr::Binary { op: o, lhs, rhs } if o == op => {
                            stack.push(rhs);
                            stack.push(lhs);
                        }
                        other => operands.push(cost(other, true)),
                    }
                }
                fn built(items: &[u64]) -> u64 {
                    if items.len() == 1 {
                        return items[0];
                    }
                    let (l, r) = items.split_at(items.len() / 2);
                    let (l, r) = (built(l), built(r));
                    1u64.saturating_add(l.saturating_mul(2)).saturating_add(r)
                }
                built(&operands)
            }
            Expr::Binary { lhs, rhs, .. } => 1u64
                .saturating_add(cost(lhs, true))
                .saturating_add(cost(rhs, true)),
            Expr::Unary { op, arg } => 1u64.saturating_add(cost(arg, *op != UnaryOp::Not)),
            Expr::Call { func, args } => args.iter().enumerate().fold(1u64, |acc, (i, a)| {
                let used = if *func == Func::Select {
                    i > 0 && value
                } else {
                    true
                };
                acc.saturating_add(cost(a, used))
            }),
            _ => 1,
        }
    }
    const MOST: u64 = 100_000;
    let too_complex =
        || "too complex: its `and` / `or` values, written as Python gives them, nest too deep";
    if cost(&e, value) > MOST {
        return Err(too_complex().into());
    }
    let out = walk(e, value);
    if crate::parse::tree_depth(&out) > crate::parse::MAX_TREE_DEPTH {
        return Err(too_complex().into());
    }
    Ok(out)
}

/// Parses a T1 expression string: `ProblemSize[i]` as the problem size, and `max(P)` /
/// `min(P)` of a single parameter `P` as its largest / smallest declared value.
pub(super) fn t1_expr(text: &str, spec: &T1Spec) -> Result<Expr, String> {
    let mut e = parse_t1(text, true).map_err(|e| e.to_string())?;
    let mut problem = None;
    e.visit_mut(&mut |node| {
        if let Expr::Call { func, args } = node {
            if let ([Expr::Param(name)], Func::Max | Func::Min) = (args.as_slice(), *func) {
                let Some(p) = spec.params.iter().find(|p| &p.name == name) else {
                    problem = Some(format!("`{name}` is not a tuning parameter"));
                    return;
                };
                let pick = p.values.iter().cloned().reduce(|a, b| {
                    let bigger = b.as_f64() > a.as_f64();
                    if bigger == (*func == Func::Max) {
                        b
                    } else {
                        a
                    }
                });
                if let Some(v) = pick {
                    *node = Expr::Lit(v);
                }
            }
        }
    });
    match problem {
        Some(p) => Err(p),
        None => Ok(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    #[test]
    fn problem_size_is_renamed_only_as_a_name() {
        let parse = |t: &str| parse_t1(t, false).unwrap();
        assert_eq!(
            parse("ProblemSize[0] % 32 == 0"),
            Expr::parse("problem_size[0] % 32 == 0").unwrap()
        );
        assert_eq!(
            parse("p == 'ProblemSize' and q != \"ProblemSize[0]\""),
            Expr::parse("p == 'ProblemSize' and q != \"ProblemSize[0]\"").unwrap()
        );
        assert_eq!(
            parse("ProblemSizeFactor * my_ProblemSize > 2"),
            Expr::parse("ProblemSizeFactor * my_ProblemSize > 2").unwrap()
        );
        // A string ending in an escaped backslash ends there.
        assert_eq!(
            parse(r"s != '\\' and ProblemSize[0] > 100000"),
            Expr::parse(r"s != '\\' and problem_size[0] > 100000").unwrap()
        );
        let e = parse_t1("ProblemSize[0] +", false).unwrap_err();
        assert_eq!(
            e.text, "ProblemSize[0] +",
            "the error quotes the text as written"
        );
        // Its column is the text's as written, renames before it counted out.
        let text = "ProblemSize[0] > 1 and ProblemSize[0] > 1 and a $ 2";
        let e = parse_t1(text, false).unwrap_err();
        assert_eq!(text.chars().nth(e.column - 1), Some('$'), "{e}");
    }

    struct Ab(i64, i64);
    impl Scope for Ab {
        fn param(&self, name: &str) -> Option<Value> {
            match name {
                "a" => Some(Value::Int(self.0)),
                "b" => Some(Value::Int(self.1)),
                _ => None,
            }
        }
    }

    /// Python's values where they are used (checked against CPython); a condition's
    /// `and` / `or` is left as written.
    #[test]
    fn and_or_give_python_values_where_used() {
        let count = |text: &str| {
            let e = parse_t1(text, false).unwrap();
            let mut n = 0;
            for a in [0, 1, 2] {
                for b in [16, 32, 64] {
                    n += e.eval_bool(&Ab(a, b)).unwrap() as usize;
                }
            }
            n
        };
        assert_eq!(count("(a and b) == 32"), 2);
        assert_eq!(count("(a or b) == 16"), 1);
        assert_eq!(count("(a or b or 7) + 1 == 3"), 3);
        assert_eq!(count("max(a and b, 20) == 32"), 2);
        assert_eq!(count("a == 1 and b == 16 or a == 2"), 4);
        let plain = "a > 0 and b < 64 or a == 0";
        assert_eq!(parse_t1(plain, false).unwrap(), Expr::parse(plain).unwrap());
        // As a size, the whole expression is a value.
        assert_eq!(
            parse_t1("a or 128", true).unwrap().eval(&Ab(0, 0)),
            Ok(Value::Int(128))
        );
        // A chained comparison used as a value is a bool: nothing written out, as Python.
        assert_eq!(count("(0 <= (0 <= a <= 1) <= 1) == 1"), 9);
        assert_eq!(count("((a < b < 40) or 0) == 1"), 6);
        // Nested chains with compound middles (each written twice) stop at a size, quickly.
        let mut nested = "(0 < a < 9 < a + 10)".to_string();
        for _ in 0..24 {
            nested = format!("(0 < {nested} < 9 < {nested} + 10)");
            if nested.len() > 1_000_000 {
                break;
            }
        }
        let e = parse_t1(&nested, false).unwrap_err();
        assert!(e.message.contains("too large"), "{}", e.message);
        // Nesting that would write an operand 2^40 times is refused, not built.
        let mut deep = "a".to_string();
        for i in 0..40 {
            deep = format!("({deep} {} b)", if i % 2 == 0 { "or" } else { "and" });
        }
        let e = parse_t1(&format!("{deep} + 1 > 0"), false).unwrap_err();
        assert!(e.message.contains("too complex"), "{e}");
    }
}
