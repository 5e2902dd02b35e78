//! T1 expression strings (`Size`, `GlobalSize`, `ProblemSize[i]`, `max(P)`): parsed into
//! the expression language, and the scope they are evaluated in.

use super::t1::T1Spec;
use crate::eval::Scope;
use crate::expr::{Expr, Func};

/// Scope of `Size` and `GlobalSize` expressions: the problem size only.
pub(super) struct SizeScope<'a>(pub(super) &'a [i64]);

impl Scope for SizeScope<'_> {
    fn problem_size(&self, axis: usize) -> Option<i64> {
        self.0.get(axis).copied().or(Some(1))
    }
}

/// Parses T1 expression text, where `ProblemSize` (the identifier, not inside a string
/// literal or a longer name such as `ProblemSizeFactor`) is the problem size
/// (`problem_size` in kw's expressions).
pub(super) fn parse_t1(text: &str) -> Result<Expr, crate::parse::ParseError> {
    const NAME: &str = "ProblemSize";
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    let mut prev: Option<char> = None;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        match quote {
            Some(q) if c == q && prev != Some('\\') => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if rest.starts_with(NAME)
                && !prev.is_some_and(ident)
                && !rest[NAME.len()..].chars().next().is_some_and(ident) =>
            {
                out.push_str("problem_size");
                rest = &rest[NAME.len()..];
                prev = Some('e');
                continue;
            }
            None => {}
        }
        out.push(c);
        prev = Some(c);
        rest = &rest[c.len_utf8()..];
    }
    Expr::parse(&out).map_err(|mut e| {
        e.text = text.to_string();
        e
    })
}

/// Parses a T1 expression string: `ProblemSize[i]` as the problem size, and `max(P)` /
/// `min(P)` of a single parameter `P` as its largest / smallest declared value.
pub(super) fn t1_expr(text: &str, spec: &T1Spec) -> Result<Expr, String> {
    let mut e = parse_t1(text).map_err(|e| e.to_string())?;
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

    #[test]
    fn problem_size_is_renamed_only_as_a_name() {
        assert_eq!(
            parse_t1("ProblemSize[0] % 32 == 0").unwrap(),
            Expr::parse("problem_size[0] % 32 == 0").unwrap()
        );
        assert_eq!(
            parse_t1("p == 'ProblemSize' and q != \"ProblemSize[0]\"").unwrap(),
            Expr::parse("p == 'ProblemSize' and q != \"ProblemSize[0]\"").unwrap()
        );
        assert_eq!(
            parse_t1("ProblemSizeFactor * my_ProblemSize > 2").unwrap(),
            Expr::parse("ProblemSizeFactor * my_ProblemSize > 2").unwrap()
        );
        let e = parse_t1("ProblemSize[0] +").unwrap_err();
        assert_eq!(
            e.text, "ProblemSize[0] +",
            "the error quotes the text as written"
        );
    }
}
