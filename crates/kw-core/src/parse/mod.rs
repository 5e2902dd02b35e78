//! The text form of [`Expr`]: C-style and Python-style operators in one language.
//!
//! Accepted, by increasing precedence:
//! `a if c else b`; `||` / `or`; `&&` / `and`; `not`; comparisons (`== != < <= > >=`, chainable as in
//! Python: `32 <= x * y <= 1024`); `+ -`; `* / // %`; unary `- + !`; `**` (right-associative);
//! atoms: numbers (`16`, `2.5`, `1e-3`), strings (`"a"` or `'a'`), `true`/`false`/`True`/`False`,
//! parameter names, function calls (`min max div_ceil round_up floor ceil round abs select ifelse`),
//! `args.NAME` / `args[I]`, `problem_size[I]` / `problem_size.x`, `device.ATTRIBUTE`, parentheses.
//! `!` binds like a C unary operator, `not` like Python's (below comparisons).

mod lexer;
mod parser;
#[cfg(test)]
mod tests;

use crate::expr::Expr;
pub(crate) use lexer::Tok;
pub(crate) use parser::{describe, Parser};
use thiserror::Error;

/// A syntax error, with the position (1-based column, in characters) where it was found.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("syntax error at column {column} of `{}`: {message}", excerpt(text, *column))]
pub struct ParseError {
    /// 1-based column (in characters) of the offending token.
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// The whole text that was parsed.
    pub text: String,
}

/// `text` as an error quotes it: whole up to 200 characters, else the 80 characters on each
/// side of `column` (1-based), with `...` where text is left out.
fn excerpt(text: &str, column: usize) -> String {
    const WHOLE: usize = 200;
    const SIDE: usize = 80;
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= WHOLE {
        return text.to_string();
    }
    let at = column.saturating_sub(1).min(chars.len());
    let from = at.saturating_sub(SIDE);
    let to = (at + SIDE).min(chars.len());
    format!(
        "{}{}{}",
        if from > 0 { "..." } else { "" },
        chars[from..to].iter().collect::<String>(),
        if to < chars.len() { "..." } else { "" }
    )
}

/// Deepest nesting of parentheses and prefix operators accepted (deeper input is an error,
/// not a stack overflow).
pub(crate) const MAX_DEPTH: usize = 200;

/// Most nodes a chained comparison may make once spelled out (`a < b < c` is `(a < b) &&
/// (b < c)`, its middle operand written twice): nested chains would double at each level.
pub(crate) const MAX_NODES: usize = 100_000;

/// Deepest expression tree accepted. A flat chain `a + b + ...` is parsed by a loop but
/// builds a tree as deep as it is long, and every walk of an [`Expr`] recurses over it
/// (evaluation, printing, serialisation, dropping). The limit keeps every accepted expression
/// readable again from its JSON form (serde_json refuses documents nested deeper than 128
/// levels; a node takes two) and from its printed form (200 parentheses): longer
/// chains are an error, never a stack overflow, except `and` / `or` chains, which are
/// associative and are grouped as a balanced tree instead. Restrictions in practice are a few
/// levels deep.
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
/// use kw_core::expr::Expr;
/// let e = Expr::parse("use_padding==0 or block_size_x % 32 != 0").unwrap();
/// assert_eq!(e.params(), vec!["use_padding", "block_size_x"]);
/// let err = Expr::parse("a + * b").unwrap_err();
/// assert_eq!(err.column, 5);
/// ```
pub fn parse(text: &str) -> Result<Expr, ParseError> {
    let mut p = Parser::new(text)?;
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

impl Expr {
    /// Parses the text form; see [`crate::parse`].
    pub fn parse(text: &str) -> Result<Expr, ParseError> {
        parse(text)
    }
}
