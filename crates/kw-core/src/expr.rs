//! [`Expr`]: the small expression language of kernel definitions and tuning-space restrictions.
//!
//! Expressions are built in Rust with operator overloading ([`param`], [`lit`], `+`, `*`,
//! [`Expr::lt`], ...), parsed from text ([`Expr::parse`], see [`crate::parse`]), printed back to
//! the same text ([`std::fmt::Display`]) and stored as JSON (the serde form is a stable
//! contract: captures carry expressions).
//!
//! ```
//! use kw_core::expr::{param, lit};
//! use kw_core::expr::Expr;
//! let e = (param("block_size_x") * param("block_size_y")).le(1024);
//! assert_eq!(e, Expr::parse("block_size_x * block_size_y <= 1024").unwrap());
//! assert_eq!(e.to_string(), "((block_size_x * block_size_y) <= 1024)");
//! # let _ = lit(1);
//! ```

use crate::value::Value;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A reference to a kernel argument, by position or by name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ArgRef {
    /// The argument at this position (0-based).
    Index(usize),
    /// The argument with this name.
    Name(String),
}

/// Attributes of the device an expression is evaluated for (`device.NAME` in text).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DeviceAttr {
    /// Maximum threads (work-items) in one block (work-group).
    MaxThreadsPerBlock,
    /// Maximum block size along x.
    MaxBlockDimX,
    /// Maximum block size along y.
    MaxBlockDimY,
    /// Maximum block size along z.
    MaxBlockDimZ,
    /// Shared (local) memory available to one block, in bytes.
    MaxSharedMemoryPerBlock,
    /// Number of multiprocessors (compute units).
    MultiprocessorCount,
    /// Warp (sub-group / wavefront) size.
    WarpSize,
    /// Compute capability as an integer (`90` for sm_90); 0 where the backend has none.
    ComputeCapability,
    /// Global memory in bytes.
    GlobalMemoryBytes,
}

impl DeviceAttr {
    /// Every attribute, in declaration order.
    pub const ALL: [DeviceAttr; 9] = [
        DeviceAttr::MaxThreadsPerBlock,
        DeviceAttr::MaxBlockDimX,
        DeviceAttr::MaxBlockDimY,
        DeviceAttr::MaxBlockDimZ,
        DeviceAttr::MaxSharedMemoryPerBlock,
        DeviceAttr::MultiprocessorCount,
        DeviceAttr::WarpSize,
        DeviceAttr::ComputeCapability,
        DeviceAttr::GlobalMemoryBytes,
    ];

    /// The attribute's name in text and JSON (`max_threads_per_block`).
    pub fn name(self) -> &'static str {
        match self {
            DeviceAttr::MaxThreadsPerBlock => "max_threads_per_block",
            DeviceAttr::MaxBlockDimX => "max_block_dim_x",
            DeviceAttr::MaxBlockDimY => "max_block_dim_y",
            DeviceAttr::MaxBlockDimZ => "max_block_dim_z",
            DeviceAttr::MaxSharedMemoryPerBlock => "max_shared_memory_per_block",
            DeviceAttr::MultiprocessorCount => "multiprocessor_count",
            DeviceAttr::WarpSize => "warp_size",
            DeviceAttr::ComputeCapability => "compute_capability",
            DeviceAttr::GlobalMemoryBytes => "global_memory_bytes",
        }
    }

    /// The attribute with this name, if any.
    pub fn from_name(name: &str) -> Option<DeviceAttr> {
        DeviceAttr::ALL.into_iter().find(|a| a.name() == name)
    }
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnaryOp {
    /// Arithmetic negation `-x`.
    Neg,
    /// Logical negation `!x` / `not x`.
    Not,
    /// Bitwise inversion `~x` (integers: `-x - 1`, as in Python).
    BitNot,
}

/// Binary operators. `/` is true division (as in Python: `7 / 2 == 3.5`); `//` is floor division.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BinaryOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (true division, float result)
    Div,
    /// `//` (floor division)
    FloorDiv,
    /// `%` (Python modulo: the result has the sign of the divisor)
    Mod,
    /// `**`
    Pow,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `&&` / `and` (short-circuit; a bool, as in C)
    And,
    /// `||` / `or` (short-circuit; a bool, as in C)
    Or,
    /// `&` (bitwise and of integers; of two bools a bool, as in Python)
    BitAnd,
    /// `|` (bitwise or)
    BitOr,
    /// `^` (bitwise exclusive or)
    BitXor,
    /// `<<` (left shift)
    Shl,
    /// `>>` (arithmetic right shift)
    Shr,
}

impl BinaryOp {
    /// The operator's text.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::FloorDiv => "//",
            BinaryOp::Mod => "%",
            BinaryOp::Pow => "**",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
        }
    }
}

/// Built-in functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Func {
    /// `min(a, b, ...)`
    Min,
    /// `max(a, b, ...)`
    Max,
    /// `div_ceil(a, b)`: integer division rounding up.
    DivCeil,
    /// `round_up(a, b)`: `a` rounded up to a multiple of `b`.
    RoundUp,
    /// `floor(x)` (int result)
    Floor,
    /// `ceil(x)` (int result)
    Ceil,
    /// `round(x)` (int result, halves to even as in Python); `round(x, n)` to `n` decimals
    Round,
    /// `abs(x)`
    Abs,
    /// `select(cond, a, b)` (also `ifelse`): `a` if `cond` else `b`, only the chosen side evaluated.
    Select,
    /// `int(x)`: an integer, as Python's (floats truncated toward zero, strings read).
    Int,
    /// `float(x)`: a float, as Python's.
    Float,
    /// `bool(x)`: the truth of `x`.
    Bool,
    /// `sqrt(x)` (float result; also `math.sqrt`)
    Sqrt,
    /// `exp(x)` (also `math.exp`)
    Exp,
    /// `log(x)` or `log(x, base)` (natural by default; also `math.log`)
    Log,
    /// `log2(x)` (also `math.log2`)
    Log2,
    /// `log10(x)` (also `math.log10`)
    Log10,
    /// `is_in(x, a, b, ...)`: whether `x` equals one of the others (Python's `x in [a, b]`,
    /// every element evaluated).
    IsIn,
    /// `in_range(x, start, stop, step)`: Python's `x in range(start, stop, step)`.
    InRange,
    /// `any([a, b, ...])`: whether one is true (every element evaluated).
    Any,
    /// `all([a, b, ...])`: whether all are true (every element evaluated).
    All,
}

impl Func {
    /// Every function.
    pub const ALL: [Func; 21] = [
        Func::Min,
        Func::Max,
        Func::DivCeil,
        Func::RoundUp,
        Func::Floor,
        Func::Ceil,
        Func::Round,
        Func::Abs,
        Func::Select,
        Func::Int,
        Func::Float,
        Func::Bool,
        Func::Sqrt,
        Func::Exp,
        Func::Log,
        Func::Log2,
        Func::Log10,
        Func::IsIn,
        Func::InRange,
        Func::Any,
        Func::All,
    ];

    /// The function's name in text.
    pub fn name(self) -> &'static str {
        match self {
            Func::Min => "min",
            Func::Max => "max",
            Func::DivCeil => "div_ceil",
            Func::RoundUp => "round_up",
            Func::Floor => "floor",
            Func::Ceil => "ceil",
            Func::Round => "round",
            Func::Abs => "abs",
            Func::Select => "select",
            Func::Int => "int",
            Func::Float => "float",
            Func::Bool => "bool",
            Func::Sqrt => "sqrt",
            Func::Exp => "exp",
            Func::Log => "log",
            Func::Log2 => "log2",
            Func::Log10 => "log10",
            Func::IsIn => "is_in",
            Func::InRange => "in_range",
            Func::Any => "any",
            Func::All => "all",
        }
    }

    /// The function with this name (`ifelse` is an alias of `select`).
    pub fn from_name(name: &str) -> Option<Func> {
        if name == "ifelse" {
            return Some(Func::Select);
        }
        Func::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Accepted argument counts (min, max).
    pub fn arity(self) -> (usize, usize) {
        match self {
            Func::Min | Func::Max => (1, usize::MAX),
            Func::DivCeil | Func::RoundUp => (2, 2),
            Func::Floor | Func::Ceil | Func::Abs => (1, 1),
            Func::Round => (1, 2),
            Func::Int | Func::Float | Func::Bool => (1, 1),
            Func::Sqrt | Func::Exp | Func::Log2 | Func::Log10 => (1, 1),
            Func::Log => (1, 2),
            Func::IsIn => (1, usize::MAX),
            Func::InRange => (4, 4),
            Func::Any | Func::All => (0, usize::MAX),
            Func::Select => (3, 3),
        }
    }
}

/// An expression tree. See the [module documentation](self).
///
/// JSON form (externally tagged, stable): `{"lit": 3}`, `{"param": "block_size_x"}`,
/// `{"arg": 0}` or `{"arg": "n"}`, `{"problem_size": 0}`, `{"device": "warp_size"}`,
/// `{"unary": {"op": "neg", "arg": E}}`, `{"binary": {"op": "add", "lhs": E, "rhs": E}}`,
/// `{"call": {"func": "min", "args": [E, ...]}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expr {
    /// A literal value.
    Lit(Value),
    /// A tuning parameter, by name.
    Param(String),
    /// A kernel argument's value (scalars) or element count (buffers).
    Arg(ArgRef),
    /// One axis of the problem size (0 = x, 1 = y, 2 = z).
    ProblemSize(usize),
    /// An attribute of the device.
    Device(DeviceAttr),
    /// A unary operation.
    Unary {
        /// The operator.
        op: UnaryOp,
        /// The operand.
        arg: Box<Expr>,
    },
    /// A binary operation.
    Binary {
        /// The operator.
        op: BinaryOp,
        /// Left operand.
        lhs: Box<Expr>,
        /// Right operand.
        rhs: Box<Expr>,
    },
    /// A call of a built-in function.
    Call {
        /// The function.
        func: Func,
        /// Its arguments.
        args: Vec<Expr>,
    },
}

/// The version of the JSON form of expressions (and of the documents that embed them).
pub const EXPR_FORMAT_VERSION: u32 = 1;

/// A literal expression.
pub fn lit(v: impl Into<Value>) -> Expr {
    Expr::Lit(v.into())
}

/// A reference to the tuning parameter `name`.
pub fn param(name: impl Into<String>) -> Expr {
    Expr::Param(name.into())
}

/// A reference to a kernel argument by name.
pub fn arg(name: impl Into<String>) -> Expr {
    Expr::Arg(ArgRef::Name(name.into()))
}

/// A reference to a kernel argument by position.
pub fn arg_at(index: usize) -> Expr {
    Expr::Arg(ArgRef::Index(index))
}

/// A reference to one problem-size axis (0 = x).
pub fn problem_size(axis: usize) -> Expr {
    Expr::ProblemSize(axis)
}

/// A reference to a device attribute.
pub fn device(attr: DeviceAttr) -> Expr {
    Expr::Device(attr)
}

/// `ifelse(cond, a, b)` (printed `select(cond, a, b)`): `a` if `cond` else `b`.
pub fn ifelse(cond: impl Into<Expr>, a: impl Into<Expr>, b: impl Into<Expr>) -> Expr {
    Expr::call(Func::Select, vec![cond.into(), a.into(), b.into()])
}

/// `min(a, b)`.
pub fn min(a: impl Into<Expr>, b: impl Into<Expr>) -> Expr {
    Expr::call(Func::Min, vec![a.into(), b.into()])
}

/// `max(a, b)`.
pub fn max(a: impl Into<Expr>, b: impl Into<Expr>) -> Expr {
    Expr::call(Func::Max, vec![a.into(), b.into()])
}

/// `div_ceil(a, b)`.
pub fn div_ceil(a: impl Into<Expr>, b: impl Into<Expr>) -> Expr {
    Expr::call(Func::DivCeil, vec![a.into(), b.into()])
}

/// `round_up(a, b)`.
pub fn round_up(a: impl Into<Expr>, b: impl Into<Expr>) -> Expr {
    Expr::call(Func::RoundUp, vec![a.into(), b.into()])
}

macro_rules! cmp_methods {
    ($($(#[$doc:meta])* $name:ident => $op:ident),* $(,)?) => {
        $( $(#[$doc])* pub fn $name(self, rhs: impl Into<Expr>) -> Expr {
            Expr::binary(BinaryOp::$op, self, rhs.into())
        } )*
    };
}

impl Expr {
    /// The expression as a message quotes it: whole up to 200 characters, else its first 200
    /// and `...` (a comprehension written out can print as hundreds of kilobytes).
    pub fn quoted(&self) -> String {
        const MOST: usize = 200;
        let text = self.to_string();
        match text.char_indices().nth(MOST) {
            Some((at, _)) => format!("{}...", &text[..at]),
            None => text,
        }
    }

    /// A binary expression.
    pub fn binary(op: BinaryOp, lhs: Expr, rhs: Expr) -> Expr {
        Expr::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        }
    }

    /// A unary expression.
    pub fn unary(op: UnaryOp, arg: Expr) -> Expr {
        Expr::Unary {
            op,
            arg: Box::new(arg),
        }
    }

    /// A function call.
    pub fn call(func: Func, args: Vec<Expr>) -> Expr {
        Expr::Call { func, args }
    }

    cmp_methods! {
        /// `self == rhs`
        eq_ => Eq,
        /// `self != rhs`
        ne_ => Ne,
        /// `self < rhs`
        lt => Lt,
        /// `self <= rhs`
        le => Le,
        /// `self > rhs`
        gt => Gt,
        /// `self >= rhs`
        ge => Ge,
        /// `self && rhs`
        and => And,
        /// `self || rhs`
        or => Or,
        /// `self // rhs` (floor division)
        floor_div => FloorDiv,
        /// `self ** rhs`
        pow => Pow,
    }

    /// Every parameter name the expression mentions, in first-mention order, without repeats.
    pub fn params(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.visit(&mut |e| {
            if let Expr::Param(n) = e {
                if !out.contains(&n.as_str()) {
                    out.push(n.as_str());
                }
            }
        });
        out
    }

    /// Calls `f` on this node and every node below it (pre-order).
    pub fn visit<'a>(&'a self, f: &mut impl FnMut(&'a Expr)) {
        f(self);
        match self {
            Expr::Unary { arg, .. } => arg.visit(f),
            Expr::Binary { lhs, rhs, .. } => {
                lhs.visit(f);
                rhs.visit(f);
            }
            Expr::Call { args, .. } => args.iter().for_each(|a| a.visit(f)),
            _ => {}
        }
    }

    /// Calls `f` on this node and every node below it (pre-order), mutably.
    pub fn visit_mut(&mut self, f: &mut impl FnMut(&mut Expr)) {
        f(self);
        match self {
            Expr::Unary { arg, .. } => arg.visit_mut(f),
            Expr::Binary { lhs, rhs, .. } => {
                lhs.visit_mut(f);
                rhs.visit_mut(f);
            }
            Expr::Call { args, .. } => args.iter_mut().for_each(|a| a.visit_mut(f)),
            _ => {}
        }
    }
}

impl fmt::Display for Expr {
    /// Prints the text form, fully parenthesised, so that `Expr::parse(&e.to_string()) == e`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Lit(v @ Value::Int(i)) if *i < 0 => write!(f, "({v})"),
            Expr::Lit(v @ Value::Float(x)) if x.is_sign_negative() => write!(f, "({v})"),
            Expr::Lit(v) => write!(f, "{v}"),
            Expr::Param(n) => f.write_str(n),
            Expr::Arg(ArgRef::Index(i)) => write!(f, "args[{i}]"),
            Expr::Arg(ArgRef::Name(n)) => write!(f, "args.{n}"),
            Expr::ProblemSize(i) => write!(f, "problem_size[{i}]"),
            Expr::Device(a) => write!(f, "device.{}", a.name()),
            // One pair of parentheses per operator (the operand prints its own when it needs
            // them), so that the printed form nests no deeper than the tree; a number gets its
            // own, or `-3` would read back as a negative literal.
            Expr::Unary {
                op: UnaryOp::Neg,
                arg,
            } if matches!(**arg, Expr::Lit(Value::Int(_) | Value::Float(_))) => {
                write!(f, "(-({arg}))")
            }
            Expr::Unary {
                op: UnaryOp::Neg,
                arg,
            } => write!(f, "(-{arg})"),
            Expr::Unary {
                op: UnaryOp::Not,
                arg,
            } => write!(f, "(!{arg})"),
            Expr::Unary {
                op: UnaryOp::BitNot,
                arg,
            } => write!(f, "(~{arg})"),
            Expr::Binary { op, lhs, rhs } => write!(f, "({lhs} {} {rhs})", op.symbol()),
            Expr::Call { func, args } => {
                // `any` and `all` take a list, as in Python.
                let list = matches!(func, Func::Any | Func::All);
                write!(f, "{}({}", func.name(), if list { "[" } else { "" })?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{a}")?;
                }
                f.write_str(if list { "])" } else { ")" })
            }
        }
    }
}

macro_rules! impl_from_lit {
    ($($t:ty),*) => { $( impl From<$t> for Expr { fn from(v: $t) -> Expr { Expr::Lit(v.into()) } } )* };
}
impl_from_lit!(i64, i32, u32, usize, f64, f32, bool, &str, String, Value);

macro_rules! impl_binop {
    ($($tr:ident $m:ident $op:ident),*) => {$(
        impl<R: Into<Expr>> std::ops::$tr<R> for Expr {
            type Output = Expr;
            fn $m(self, rhs: R) -> Expr { Expr::binary(BinaryOp::$op, self, rhs.into()) }
        }
        impl std::ops::$tr<Expr> for i64 {
            type Output = Expr;
            fn $m(self, rhs: Expr) -> Expr { Expr::binary(BinaryOp::$op, self.into(), rhs) }
        }
    )*};
}
impl_binop!(Add add Add, Sub sub Sub, Mul mul Mul, Div div Div, Rem rem Mod);

impl std::ops::Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        Expr::unary(UnaryOp::Neg, self)
    }
}

impl std::ops::Not for Expr {
    type Output = Expr;
    fn not(self) -> Expr {
        Expr::unary(UnaryOp::Not, self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_form_is_the_documented_one() {
        let e = (param("a") + 1).le(arg("n"));
        let text = serde_json::to_string(&e).unwrap();
        assert_eq!(
            text,
            r#"{"binary":{"op":"le","lhs":{"binary":{"op":"add","lhs":{"param":"a"},"rhs":{"lit":1}}},"rhs":{"arg":"n"}}}"#
        );
    }

    #[test]
    fn params_lists_each_name_once() {
        let e = param("x") * param("y") + param("x");
        assert_eq!(e.params(), vec!["x", "y"]);
    }
}
