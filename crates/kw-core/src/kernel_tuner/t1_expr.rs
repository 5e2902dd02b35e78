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

/// Parses a T1 expression string: `ProblemSize[i]` as the problem size, and `max(P)` /
/// `min(P)` of a single parameter `P` as its largest / smallest declared value.
pub(super) fn t1_expr(text: &str, spec: &T1Spec) -> Result<Expr, String> {
    let text = text.replace("ProblemSize", "problem_size");
    let mut e = Expr::parse(&text).map_err(|e| e.to_string())?;
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
