//! Evaluation of [`Expr`] in a [`Scope`]: typed errors, never a panic.
//!
//! Semantics follow Python where Kernel Tuner restrictions need it: `/` is true division,
//! `//` floors, `%` takes the sign of the divisor, `round` rounds halves to even, bools count
//! as 0/1 in arithmetic, `and`/`or` short-circuit. Integer arithmetic is overflow-checked.

use crate::did_you_mean::closest;
use crate::expr::{ArgRef, BinaryOp, DeviceAttr, Expr, Func, UnaryOp};
use crate::value::Value;
use std::cmp::Ordering;
use thiserror::Error;

/// What names in an expression resolve to. Every method has a default that resolves nothing.
pub trait Scope {
    /// The value of tuning parameter `name`.
    fn param(&self, name: &str) -> Option<Value> {
        let _ = name;
        None
    }
    /// The names of the known parameters (used to suggest a fix for an unknown name).
    fn param_names(&self) -> Vec<String> {
        Vec::new()
    }
    /// The value of an argument (a scalar's value, a buffer's element count).
    fn arg(&self, arg: &ArgRef) -> Option<Value> {
        let _ = arg;
        None
    }
    /// One axis of the problem size.
    fn problem_size(&self, axis: usize) -> Option<i64> {
        let _ = axis;
        None
    }
    /// A device attribute.
    fn device(&self, attr: DeviceAttr) -> Option<Value> {
        let _ = attr;
        None
    }
}

/// A scope that resolves nothing (for constant expressions).
pub struct EmptyScope;
impl Scope for EmptyScope {}

/// Why an expression could not be evaluated.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum EvalError {
    /// A parameter name that the scope does not know.
    #[error("unknown parameter `{name}`{}", suggestion_text(.suggestion))]
    UnknownParam {
        /// The name used.
        name: String,
        /// The closest known name, if one is close.
        suggestion: Option<String>,
    },
    /// An argument that the scope does not know.
    #[error("unknown argument `{0}`")]
    UnknownArg(String),
    /// A problem-size axis that is not available.
    #[error("problem size axis {0} is not available here")]
    NoProblemSize(usize),
    /// A device attribute that is not available.
    #[error("device attribute `{0}` is not available here")]
    NoDevice(&'static str),
    /// An operator applied to values of the wrong types.
    #[error("type mismatch: `{op}` cannot take {operands}")]
    TypeMismatch {
        /// The operator or function.
        op: String,
        /// The operand types, e.g. `int and string`.
        operands: String,
    },
    /// Division or modulo by zero.
    #[error("division by zero in `{0}`")]
    DivisionByZero(String),
    /// Integer overflow.
    #[error("integer overflow in `{0}`")]
    Overflow(String),
    /// A float result out of range (Python's `OverflowError`: `3.5 ** 1100`, `exp(1000)`).
    #[error("`{0}`: the result is out of the range of a float")]
    FloatOverflow(String),
    /// A value outside what an operation takes: `sqrt(-1)`, `log(0)`, a negative shift,
    /// `int("x")` (Python's `ValueError`).
    #[error("invalid value in `{op}`: {reason}")]
    InvalidValue {
        /// The operator or function.
        op: String,
        /// What is wrong.
        reason: String,
    },
    /// A function called with the wrong number of arguments.
    #[error("`{func}` takes {expected} argument(s), got {got}")]
    Arity {
        /// The function.
        func: &'static str,
        /// What it takes.
        expected: String,
        /// How many it got.
        got: usize,
    },
}

fn suggestion_text(s: &Option<String>) -> String {
    match s {
        Some(s) => format!(" (did you mean `{s}`?)"),
        None => String::new(),
    }
}

impl Expr {
    /// Evaluates the expression in `scope`.
    ///
    /// ```
    /// use kw_core::{expr::Expr, value::Value, eval::EmptyScope};
    /// let v = Expr::parse("7 // 2 + 7 % -3").unwrap().eval(&EmptyScope).unwrap();
    /// assert_eq!(v, Value::Int(3 + -2));
    /// ```
    pub fn eval(&self, scope: &dyn Scope) -> Result<Value, EvalError> {
        match self {
            Expr::Lit(v) => Ok(v.clone()),
            Expr::Param(name) => scope.param(name).ok_or_else(|| EvalError::UnknownParam {
                name: name.clone(),
                suggestion: closest(name, scope.param_names().iter().map(String::as_str)),
            }),
            Expr::Arg(a) => scope.arg(a).ok_or_else(|| {
                EvalError::UnknownArg(match a {
                    ArgRef::Index(i) => format!("#{i}"),
                    ArgRef::Name(n) => n.clone(),
                })
            }),
            Expr::ProblemSize(i) => scope
                .problem_size(*i)
                .map(Value::Int)
                .ok_or(EvalError::NoProblemSize(*i)),
            Expr::Device(a) => scope.device(*a).ok_or(EvalError::NoDevice(a.name())),
            Expr::Unary { op, arg } => unary(*op, arg.eval(scope)?),
            Expr::Binary { op, lhs, rhs } => match op {
                // A bool, as C's `&&` / `||` (a define or a template argument of `a && b` is
                // `true` or `false`). Python's operand-valued `and` / `or`, where a T1 file uses
                // the value (`(a or 16) == 16`), is written with `select` when T1 text is read
                // (`crate::kernel_tuner`).
                BinaryOp::And => {
                    let l = lhs.eval(scope)?;
                    Ok(Value::Bool(l.truthy() && rhs.eval(scope)?.truthy()))
                }
                BinaryOp::Or => {
                    let l = lhs.eval(scope)?;
                    Ok(Value::Bool(l.truthy() || rhs.eval(scope)?.truthy()))
                }
                _ => binary(*op, lhs.eval(scope)?, rhs.eval(scope)?),
            },
            Expr::Call { func, args } => call(*func, args, scope),
        }
    }

    /// Evaluates the expression as a condition (Python truthiness).
    pub fn eval_bool(&self, scope: &dyn Scope) -> Result<bool, EvalError> {
        Ok(self.eval(scope)?.truthy())
    }

    /// Evaluates the expression as an integer (floats must be integral; bools are 0/1).
    pub fn eval_int(&self, scope: &dyn Scope) -> Result<i64, EvalError> {
        match self.eval(scope)? {
            Value::Int(i) => Ok(i),
            Value::Bool(b) => Ok(b as i64),
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(f as i64),
            // A whole number too large to be exact (an argument of type u64 above 2^63 - 1
            // reaches expressions as a float): said as such, not as "a float".
            Value::Float(f) if f.fract() == 0.0 => Err(EvalError::TypeMismatch {
                op: format!("integer expression `{self}`"),
                operands: format!(
                    "{f:e}, a number too large to be an exact integer (below 9e15; a u64 \
                     argument above 2^63 - 1 is a float to expressions)"
                ),
            }),
            v => Err(EvalError::TypeMismatch {
                op: format!("integer expression `{self}`"),
                operands: v.type_name().into(),
            }),
        }
    }
}

/// A number operand: bools become ints, as in Python.
enum Num {
    I(i64),
    F(f64),
}

fn num(v: &Value) -> Option<Num> {
    match v {
        Value::Int(i) => Some(Num::I(*i)),
        Value::Bool(b) => Some(Num::I(*b as i64)),
        Value::Float(f) => Some(Num::F(*f)),
        Value::Str(_) => None,
    }
}

fn mismatch(op: &str, a: &Value, b: Option<&Value>) -> EvalError {
    EvalError::TypeMismatch {
        op: op.to_string(),
        operands: match b {
            Some(b) => format!("{} and {}", a.type_name(), b.type_name()),
            None => a.type_name().to_string(),
        },
    }
}

fn unary(op: UnaryOp, v: Value) -> Result<Value, EvalError> {
    match op {
        UnaryOp::Not => Ok(Value::Bool(!v.truthy())),
        UnaryOp::BitNot => match v {
            Value::Int(i) => Ok(Value::Int(!i)),
            Value::Bool(b) => Ok(Value::Int(!(b as i64))),
            _ => Err(mismatch("~", &v, None)),
        },
        UnaryOp::Neg => match num(&v) {
            Some(Num::I(i)) => i
                .checked_neg()
                .map(Value::Int)
                .ok_or_else(|| EvalError::Overflow("-".into())),
            Some(Num::F(f)) => Ok(Value::Float(-f)),
            None => Err(mismatch("-", &v, None)),
        },
    }
}

fn binary(op: BinaryOp, a: Value, b: Value) -> Result<Value, EvalError> {
    use BinaryOp::*;
    let sym = op.symbol();
    match op {
        Eq => return Ok(Value::Bool(equal(&a, &b))),
        Ne => return Ok(Value::Bool(!equal(&a, &b))),
        Lt | Le | Gt | Ge => {
            let ord = compare(&a, &b).ok_or_else(|| mismatch(sym, &a, Some(&b)))?;
            return Ok(Value::Bool(match op {
                Lt => ord == Ordering::Less,
                Le => ord != Ordering::Greater,
                Gt => ord == Ordering::Greater,
                _ => ord != Ordering::Less,
            }));
        }
        _ => {}
    }
    if let (Add, Value::Str(x), Value::Str(y)) = (op, &a, &b) {
        return Ok(Value::Str(format!("{x}{y}")));
    }
    if matches!(op, BitAnd | BitOr | BitXor | Shl | Shr) {
        return bitwise(op, &a, &b);
    }
    let (x, y) = match (num(&a), num(&b)) {
        (Some(x), Some(y)) => (x, y),
        _ => return Err(mismatch(sym, &a, Some(&b))),
    };
    let overflow = || EvalError::Overflow(sym.into());
    let zero = || EvalError::DivisionByZero(sym.into());
    match (x, y) {
        (Num::I(x), Num::I(y)) => match op {
            Add => x.checked_add(y).map(Value::Int).ok_or_else(overflow),
            Sub => x.checked_sub(y).map(Value::Int).ok_or_else(overflow),
            Mul => x.checked_mul(y).map(Value::Int).ok_or_else(overflow),
            Div if y == 0 => Err(zero()),
            Div => Ok(Value::Float(x as f64 / y as f64)),
            FloorDiv | Mod if y == 0 => Err(zero()),
            FloorDiv => {
                let q = x.checked_div(y).ok_or_else(overflow)?;
                Ok(Value::Int(if (x % y != 0) && ((x < 0) != (y < 0)) {
                    q - 1
                } else {
                    q
                }))
            }
            Mod => {
                let r = x.checked_rem(y).unwrap_or(0);
                Ok(Value::Int(if r != 0 && ((r < 0) != (y < 0)) {
                    r + y
                } else {
                    r
                }))
            }
            Pow if y >= 0 => u32::try_from(y)
                .ok()
                .and_then(|e| x.checked_pow(e))
                .map(Value::Int)
                .ok_or_else(overflow),
            Pow if x == 0 => Err(zero()),
            Pow => Ok(Value::Float((x as f64).powf(y as f64))),
            _ => unreachable!("comparisons and logic are handled above"),
        },
        (x, y) => {
            let (x, y) = (to_f(x), to_f(y));
            Ok(Value::Float(match op {
                Add => x + y,
                Sub => x - y,
                Mul => x * y,
                Div | FloorDiv | Mod if y == 0.0 => return Err(zero()),
                Div => x / y,
                FloorDiv => py_divmod(x, y).0,
                Mod => py_divmod(x, y).1,
                Pow if x == 0.0 && y < 0.0 => return Err(zero()),
                Pow => {
                    let r = x.powf(y);
                    // Python raises where the result is out of range; a negative number to a
                    // fractional power is a complex number there, which nothing here takes.
                    if r.is_infinite() && x.is_finite() && y.is_finite() {
                        return Err(EvalError::FloatOverflow(sym.into()));
                    }
                    if r.is_nan() && !x.is_nan() && !y.is_nan() {
                        return Err(EvalError::InvalidValue {
                            op: sym.into(),
                            reason: format!("{x} to the power {y} is not a real number"),
                        });
                    }
                    r
                }
                _ => unreachable!("comparisons and logic are handled above"),
            }))
        }
    }
}

/// `&`, `|`, `^`, `<<`, `>>` as Python's, on integers (bools are 0/1; `&`, `|`, `^` of two
/// bools give a bool). A float is a type error; a negative shift count, a value error.
fn bitwise(op: BinaryOp, a: &Value, b: &Value) -> Result<Value, EvalError> {
    use BinaryOp::*;
    let sym = op.symbol();
    if let (Value::Bool(x), Value::Bool(y), BitAnd | BitOr | BitXor) = (a, b, op) {
        return Ok(Value::Bool(match op {
            BitAnd => x & y,
            BitOr => x | y,
            _ => x ^ y,
        }));
    }
    let int = |v: &Value| match v {
        Value::Int(i) => Some(*i),
        Value::Bool(b) => Some(*b as i64),
        _ => None,
    };
    let (Some(x), Some(y)) = (int(a), int(b)) else {
        return Err(mismatch(sym, a, Some(b)));
    };
    Ok(Value::Int(match op {
        BitAnd => x & y,
        BitOr => x | y,
        BitXor => x ^ y,
        Shl | Shr if y < 0 => {
            return Err(EvalError::InvalidValue {
                op: sym.into(),
                reason: "negative shift count".into(),
            })
        }
        Shl if x == 0 => 0,
        Shl => {
            // Exact or an overflow: Python's integers do not wrap.
            let shifted = u32::try_from(y)
                .ok()
                .filter(|&n| n < 64)
                .map(|n| x << n)
                .filter(|&r| (r >> y) == x);
            shifted.ok_or_else(|| EvalError::Overflow(sym.into()))?
        }
        _ => x >> y.min(63),
    }))
}

/// Python's `x in range(start, stop, step)`: the bounds must be integers (bools are 0/1) and
/// the step not 0; a number is in the range when it equals one of its elements.
fn in_range(x: &Value, start: &Value, stop: &Value, step: &Value) -> Result<Value, EvalError> {
    let int = |v: &Value| match v {
        Value::Int(i) => Ok(*i as i128),
        Value::Bool(b) => Ok(*b as i128),
        _ => Err(EvalError::TypeMismatch {
            op: "range".into(),
            operands: format!("{} (it takes integers)", v.type_name()),
        }),
    };
    let (start, stop, step) = (int(start)?, int(stop)?, int(step)?);
    if step == 0 {
        return Err(EvalError::InvalidValue {
            op: "range".into(),
            reason: "its step must not be 0".into(),
        });
    }
    let Some(x) = num(x) else {
        return Ok(Value::Bool(false));
    };
    // The elements are integers: a float is one of them only when it is a whole number,
    // compared as the integer it is (exactly).
    let x = match x {
        Num::I(i) => i as i128,
        Num::F(f) if f.fract() == 0.0 && f.abs() < 1e38 => f as i128,
        Num::F(_) => return Ok(Value::Bool(false)),
    };
    let within = if step > 0 {
        start <= x && x < stop
    } else {
        stop < x && x <= start
    };
    Ok(Value::Bool(within && (x - start) % step == 0))
}

/// Python's `divmod` of floats (CPython's `float_divmod`, `y` not 0): the remainder from
/// `fmod`, with the sign of `y`, and the quotient from it, so that `1 % 0.1` is
/// 0.09999999999999995 and `1 // 0.1` is 9.0 as in Python (`x - y * floor(x / y)` gives 0 and 10).
fn py_divmod(x: f64, y: f64) -> (f64, f64) {
    let mut m = x % y; // fmod
    let mut div = (x - m) / y;
    if m != 0.0 {
        if (y < 0.0) != (m < 0.0) {
            m += y;
            div -= 1.0;
        }
    } else {
        m = 0.0_f64.copysign(y);
    }
    let floordiv = if div != 0.0 {
        let f = div.floor();
        if div - f > 0.5 {
            f + 1.0
        } else {
            f
        }
    } else {
        0.0_f64.copysign(x / y)
    };
    (floordiv, m)
}

fn to_f(n: Num) -> f64 {
    match n {
        Num::I(i) => i as f64,
        Num::F(f) => f,
    }
}

fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Str(_), _) | (_, Value::Str(_)) => false,
        _ => compare(a, b) == Some(Ordering::Equal),
    }
}

fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => Some(x.cmp(y)),
        _ => match (num(a)?, num(b)?) {
            (Num::I(x), Num::I(y)) => Some(x.cmp(&y)),
            (Num::I(x), Num::F(y)) => int_float_cmp(x, y),
            (Num::F(x), Num::I(y)) => int_float_cmp(y, x).map(Ordering::reverse),
            (Num::F(x), Num::F(y)) => x.partial_cmp(&y),
        },
    }
}

/// Python's `int(text)` of a decimal: a sign, then digits with single underscores between
/// them (`1_000`; `1_`, `_1` and `1__0` are not numbers).
/// `None` when it is not a number; `Some(None)` when it is one beyond 64 bits.
fn python_int(text: &str) -> Option<Option<i64>> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    let well_formed = !digits.is_empty()
        && digits
            .split('_')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
    if !well_formed {
        return None;
    }
    Some(text.replace('_', "").parse().ok())
}

/// Python's `round(x, n)`: an integer stays one (rounded to a multiple of `10^-n`, halves to
/// even), a float is rounded to `n` decimals as its exact value says (`round(2.675, 2)` is
/// 2.67: the float is a little below 2.675).
fn round_to(x: &Value, n: &Value) -> Result<Value, EvalError> {
    let n = match n {
        Value::Int(i) => *i,
        Value::Bool(b) => *b as i64,
        _ => return Err(mismatch("round", x, Some(n))),
    };
    match num(x) {
        Some(Num::I(i)) if n >= 0 => Ok(Value::Int(i)),
        Some(Num::I(i)) => {
            // |i| < 10^19 / 2: nothing is left past 19 digits (at 19, 6e18 rounds to 10^19,
            // which overflows below).
            if n < -19 {
                return Ok(Value::Int(0));
            }
            let p = 10i128.pow((-n) as u32);
            let (q, r) = ((i as i128).div_euclid(p), (i as i128).rem_euclid(p));
            let up = 2 * r > p || (2 * r == p && q % 2 != 0);
            let rounded = (q + up as i128) * p;
            i64::try_from(rounded)
                .map(Value::Int)
                .map_err(|_| EvalError::Overflow("round".into()))
        }
        Some(Num::F(f)) if !f.is_finite() || n > 340 => Ok(Value::Float(f)),
        Some(Num::F(f)) if n >= 0 => {
            // Formatting rounds the exact binary value, halves to even.
            let text = format!("{f:.prec$}", prec = n as usize);
            Ok(Value::Float(text.parse().unwrap_or(f)))
        }
        // Past 308 digits every finite float rounds to a zero of its sign.
        Some(Num::F(f)) if n < -308 => Ok(Value::Float(0.0 * f)),
        Some(Num::F(f)) => {
            let k = (-n) as u32;
            let r = if f.abs() < 9.2e18 && k <= 18 {
                // Exactly: the float's whole part and fraction against 10^k, halves to even.
                let floor = f.floor();
                let (m, frac) = (floor as i128, f - floor);
                let p = 10i128.pow(k);
                let (q, rem) = (m.div_euclid(p), m.rem_euclid(p));
                // rem + frac against p / 2 (p is even): above it when 2 * rem passes p, or
                // meets it with a fraction; a tie (no fraction) goes to the even multiple.
                let twice = 2 * rem;
                let up = twice > p || (twice == p && (frac > 0.0 || q % 2 != 0));
                ((q + up as i128) * p) as f64
            } else {
                let p = 10f64.powi(k as i32);
                (f / p).round_ties_even() * p
            };
            if r.is_infinite() {
                return Err(EvalError::FloatOverflow("round".into()));
            }
            Ok(Value::Float(r))
        }
        None => Err(mismatch("round", x, None)),
    }
}

/// An integer against a float, exactly, as Python compares them (`2**53 + 1 == 2.0**53` is
/// false there; converting the integer to a float would round it).
fn int_float_cmp(i: i64, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    // 2^63 and -2^63 are exact floats: beyond them every i64 is below or above.
    if f >= 9_223_372_036_854_775_808.0 {
        return Some(Ordering::Less);
    }
    if f < -9_223_372_036_854_775_808.0 {
        return Some(Ordering::Greater);
    }
    let whole = f.trunc();
    Some(i.cmp(&(whole as i64)).then_with(|| {
        // Equal whole parts: the float's fraction decides.
        0.0_f64.partial_cmp(&(f - whole)).unwrap_or(Ordering::Equal)
    }))
}

fn call(func: Func, args: &[Expr], scope: &dyn Scope) -> Result<Value, EvalError> {
    let (lo, hi) = func.arity();
    if args.len() < lo || args.len() > hi {
        return Err(EvalError::Arity {
            func: func.name(),
            expected: if hi == usize::MAX {
                format!("at least {lo}")
            } else if hi == lo {
                lo.to_string()
            } else {
                format!("{lo} or {hi}")
            },
            got: args.len(),
        });
    }
    if func == Func::Select {
        return if args[0].eval(scope)?.truthy() {
            args[1].eval(scope)
        } else {
            args[2].eval(scope)
        };
    }
    let vals = args
        .iter()
        .map(|a| a.eval(scope))
        .collect::<Result<Vec<_>, _>>()?;
    let name = func.name();
    match func {
        Func::Min | Func::Max => {
            let mut best = vals[0].clone();
            for v in &vals[1..] {
                let ord = compare(v, &best).ok_or_else(|| mismatch(name, v, Some(&best)))?;
                let better = if func == Func::Min {
                    ord == Ordering::Less
                } else {
                    ord == Ordering::Greater
                };
                if better {
                    best = v.clone();
                }
            }
            Ok(best)
        }
        Func::DivCeil | Func::RoundUp => {
            let (a, b) = match (num(&vals[0]), num(&vals[1])) {
                (Some(Num::I(a)), Some(Num::I(b))) => (a, b),
                _ => return Err(mismatch(name, &vals[0], Some(&vals[1]))),
            };
            if b == 0 {
                return Err(EvalError::DivisionByZero(name.into()));
            }
            let neg_a = a
                .checked_neg()
                .ok_or_else(|| EvalError::Overflow(name.into()))?;
            let q = binary(BinaryOp::FloorDiv, Value::Int(neg_a), Value::Int(b))?;
            let q = unary(UnaryOp::Neg, q)?;
            if func == Func::DivCeil {
                Ok(q)
            } else {
                binary(BinaryOp::Mul, q, Value::Int(b))
            }
        }
        Func::Round if vals.len() == 2 => round_to(&vals[0], &vals[1]),
        Func::Floor | Func::Ceil | Func::Round | Func::Abs => match num(&vals[0]) {
            Some(Num::I(i)) if func == Func::Abs => i
                .checked_abs()
                .map(Value::Int)
                .ok_or_else(|| EvalError::Overflow(name.into())),
            Some(Num::I(i)) => Ok(Value::Int(i)),
            Some(Num::F(f)) if func == Func::Abs => Ok(Value::Float(f.abs())),
            Some(Num::F(f)) => {
                let r = match func {
                    Func::Floor => f.floor(),
                    Func::Ceil => f.ceil(),
                    _ => f.round_ties_even(),
                };
                if r.is_finite() && r.abs() < 9.2e18 {
                    Ok(Value::Int(r as i64))
                } else {
                    Err(EvalError::Overflow(name.into()))
                }
            }
            None => Err(mismatch(name, &vals[0], None)),
        },
        Func::Bool => Ok(Value::Bool(vals[0].truthy())),
        Func::Any => Ok(Value::Bool(vals.iter().any(Value::truthy))),
        Func::All => Ok(Value::Bool(vals.iter().all(Value::truthy))),
        Func::IsIn => Ok(Value::Bool(vals[1..].iter().any(|v| equal(&vals[0], v)))),
        Func::InRange => in_range(&vals[0], &vals[1], &vals[2], &vals[3]),
        Func::Int => match &vals[0] {
            Value::Int(i) => Ok(Value::Int(*i)),
            Value::Bool(b) => Ok(Value::Int(*b as i64)),
            Value::Float(f) if f.is_nan() => Err(EvalError::InvalidValue {
                op: name.into(),
                reason: "cannot convert NaN to an integer".into(),
            }),
            Value::Float(f) if f.trunc().abs() < 9.2e18 => Ok(Value::Int(f.trunc() as i64)),
            Value::Float(_) => Err(EvalError::Overflow(name.into())),
            Value::Str(s) => match python_int(s.trim()) {
                Some(Some(i)) => Ok(Value::Int(i)),
                Some(None) => Err(EvalError::Overflow(name.into())),
                None => Err(EvalError::InvalidValue {
                    op: name.into(),
                    reason: format!("{s:?} is not a whole number"),
                }),
            },
        },
        Func::Float => match &vals[0] {
            Value::Str(s) => {
                s.trim()
                    .parse::<f64>()
                    .map(Value::Float)
                    .map_err(|_| EvalError::InvalidValue {
                        op: name.into(),
                        reason: format!("{s:?} is not a number"),
                    })
            }
            v => Ok(Value::Float(num(v).map(to_f).expect("not a string"))),
        },
        Func::Sqrt | Func::Exp | Func::Log | Func::Log2 | Func::Log10 => {
            let x = match num(&vals[0]) {
                Some(n) => to_f(n),
                None => return Err(mismatch(name, &vals[0], None)),
            };
            let domain = |reason: &str| EvalError::InvalidValue {
                op: name.into(),
                reason: reason.into(),
            };
            let log = |x: f64| {
                if x > 0.0 {
                    Ok(x.ln())
                } else {
                    Err(domain(
                        "math domain error (the logarithm of a number not above 0)",
                    ))
                }
            };
            let r = match func {
                Func::Sqrt if x < 0.0 => {
                    return Err(domain("math domain error (a negative number)"))
                }
                Func::Sqrt => x.sqrt(),
                Func::Exp => x.exp(),
                Func::Log2 => log(x).map(|_| x.log2())?,
                Func::Log10 => log(x).map(|_| x.log10())?,
                _ => match vals.get(1) {
                    None => log(x)?,
                    Some(base) => {
                        let base = num(base)
                            .map(to_f)
                            .ok_or_else(|| mismatch(name, &vals[0], Some(base)))?;
                        let d = log(base)?;
                        if d == 0.0 {
                            return Err(EvalError::DivisionByZero(name.into()));
                        }
                        log(x)? / d
                    }
                },
            };
            if r.is_infinite() && x.is_finite() {
                return Err(EvalError::FloatOverflow(name.into()));
            }
            Ok(Value::Float(r))
        }
        Func::Select => unreachable!("handled above"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(s: &str) -> Result<Value, EvalError> {
        Expr::parse(s).unwrap().eval(&EmptyScope)
    }

    #[test]
    fn python_arithmetic() {
        assert_eq!(ev("7 / 2").unwrap(), Value::Float(3.5));
        assert_eq!(ev("-7 // 2").unwrap(), Value::Int(-4));
        assert_eq!(ev("-7 % 3").unwrap(), Value::Int(2));
        assert_eq!(ev("7 % -3").unwrap(), Value::Int(-2));
        assert_eq!(ev("2 ** 10").unwrap(), Value::Int(1024));
        assert_eq!(ev("round(2.5)").unwrap(), Value::Int(2));
        assert_eq!(ev("round(3.5)").unwrap(), Value::Int(4));
        assert_eq!(ev("div_ceil(10, 4)").unwrap(), Value::Int(3));
        assert_eq!(ev("round_up(10, 4)").unwrap(), Value::Int(12));
        assert_eq!(ev("True + 1").unwrap(), Value::Int(2));
        assert_eq!(ev("1 == 1.0").unwrap(), Value::Bool(true));
        assert_eq!(ev("'a' == 1").unwrap(), Value::Bool(false));
        assert_eq!(ev("32 <= 4 * 8 <= 1024").unwrap(), Value::Bool(true));
        assert_eq!(ev("select(1 < 2, 10, 1 // 0)").unwrap(), Value::Int(10));
        assert_eq!(ev("max(1, 2.5, 2)").unwrap(), Value::Float(2.5));
    }

    /// Values checked against CPython 3.11.
    #[test]
    fn c_and_or_and_python_float_divmod() {
        // `and` / `or` are C's here (a bool); T1 text gets Python's through `select`.
        assert_eq!(ev("2 and 16").unwrap(), Value::Bool(true));
        assert_eq!(ev("0 or 16").unwrap(), Value::Bool(true));
        assert_eq!(
            ev("0 and 1 // 0").unwrap(),
            Value::Bool(false),
            "short-circuit"
        );
        for (e, want) in [
            ("1 % 0.1", 0.09999999999999995),
            ("1 // 0.1", 9.0),
            ("-1 % 0.3", 0.19999999999999996),
            ("-1 // 0.3", -4.0),
            ("5.5 % -2", -0.5),
            ("5.5 // -2", -3.0),
            ("7.5 // 2.5", 3.0),
            ("0.3 % 0.1", 0.09999999999999998),
            ("0.3 // 0.1", 2.0),
        ] {
            assert_eq!(ev(e).unwrap(), Value::Float(want), "{e}");
        }
        let Value::Float(z) = ev("-0.0 % 2.0").unwrap() else {
            panic!()
        };
        assert!(z == 0.0 && z.is_sign_positive());
        let Value::Float(z) = ev("0.0 // -3.0").unwrap() else {
            panic!()
        };
        assert!(z == 0.0 && z.is_sign_negative());
    }

    #[test]
    fn typed_errors() {
        assert_eq!(ev("1 // 0"), Err(EvalError::DivisionByZero("//".into())));
        assert_eq!(ev("1 % 0"), Err(EvalError::DivisionByZero("%".into())));
        assert_eq!(ev("1.0 / 0"), Err(EvalError::DivisionByZero("/".into())));
        assert_eq!(
            ev("9223372036854775807 + 1"),
            Err(EvalError::Overflow("+".into()))
        );
        assert_eq!(
            ev("-9223372036854775808 // -1"),
            Err(EvalError::Overflow("//".into()))
        );
        assert!(matches!(ev("'a' * 2"), Err(EvalError::TypeMismatch { .. })));
        assert!(matches!(ev("'a' < 2"), Err(EvalError::TypeMismatch { .. })));
        let no_args = Expr::call(Func::Min, vec![]);
        assert!(matches!(
            no_args.eval(&EmptyScope),
            Err(EvalError::Arity { .. })
        ));
        assert!(matches!(ev("2 ** 100"), Err(EvalError::Overflow(_))));
    }

    /// Python's forms that Kernel Tuner restrictions use beyond arithmetic: membership,
    /// bitwise operators, conversions, `math`, and built-ins over a list; each value as
    /// CPython 3 gives it (a = 6, b = 3, c = 0).
    #[test]
    fn python_membership_bitwise_conversions_and_math() {
        let cases: &[(&str, Value)] = &[
            ("a in [1,2,6]", Value::Bool(true)),
            ("a not in (1,2)", Value::Bool(true)),
            ("a in (6,)", Value::Bool(true)),
            ("a in {1, 2}", Value::Bool(false)),
            ("a in []", Value::Bool(false)),
            ("b in range(4)", Value::Bool(true)),
            ("a in range(0, 10, 3)", Value::Bool(true)),
            ("a in range(1, 10, 3)", Value::Bool(false)),
            ("a in range(10, 0, -2)", Value::Bool(true)),
            ("a in range(10, 6, -2)", Value::Bool(false)),
            ("a in range(0, 10, b)", Value::Bool(true)),
            ("a in range(c, 10, 4)", Value::Bool(false)),
            ("'x' in range(4)", Value::Bool(false)),
            ("2.5 in range(4)", Value::Bool(false)),
            ("2.0 in range(4)", Value::Bool(true)),
            ("1 < a in [6]", Value::Bool(true)),
            ("a & 1 == 0", Value::Bool(true)),
            ("a | b", Value::Int(7)),
            ("a ^ b", Value::Int(5)),
            ("1 << a", Value::Int(64)),
            ("a >> 1", Value::Int(3)),
            ("-a >> 1", Value::Int(-3)),
            ("-a >> 100", Value::Int(-1)),
            ("~a", Value::Int(-7)),
            ("~True", Value::Int(-2)),
            ("a & b | c ^ 1", Value::Int(3)),
            ("a << 2 + 1", Value::Int(48)),
            ("True & False", Value::Bool(false)),
            ("True | 2", Value::Int(3)),
            ("(a & (a - 1)) == 0", Value::Bool(false)),
            ("int(7/2)", Value::Int(3)),
            ("int(-7/2)", Value::Int(-3)),
            ("int(' 42 ')", Value::Int(42)),
            ("float(a) / 4", Value::Float(1.5)),
            ("float('2.5')", Value::Float(2.5)),
            ("bool(c)", Value::Bool(false)),
            ("pow(2, a)", Value::Int(64)),
            ("math.ceil(a/4)", Value::Int(2)),
            ("math.floor(-a/4)", Value::Int(-2)),
            ("math.sqrt(16)", Value::Float(4.0)),
            ("math.log2(8)", Value::Float(3.0)),
            ("math.log(8, 2)", Value::Float(3.0)),
            ("math.log10(1000)", Value::Float(3.0)),
            ("math.pow(2, 3)", Value::Float(8.0)),
            ("math.fabs(-3)", Value::Float(3.0)),
            ("math.trunc(-2.7)", Value::Int(-2)),
            ("max([a, b, 7])", Value::Int(7)),
            ("min({a, b})", Value::Int(3)),
            ("any([c, 0])", Value::Bool(false)),
            ("all([a, b])", Value::Bool(true)),
            ("all([])", Value::Bool(true)),
            ("sum([a, b, True])", Value::Int(10)),
            ("len([a, b, c])", Value::Int(3)),
            ("0x10 + 0o17 + 0b1_01", Value::Int(16 + 15 + 5)),
            ("1_000 + 1e1_0 / 1e10", Value::Float(1001.0)),
            // Integers and floats compare exactly (2^53 + 1 is not 2.0^53).
            ("9007199254740993 == 9007199254740992.0", Value::Bool(false)),
            ("9007199254740993 > 9007199254740992.0", Value::Bool(true)),
            (
                "9223372036854775807 == 9223372036854775807.0",
                Value::Bool(false),
            ),
            (
                "9223372036854775807 < 9223372036854775807.0",
                Value::Bool(true),
            ),
            ("-3 < -2.5", Value::Bool(true)),
            ("-3 == -3.0", Value::Bool(true)),
            ("2 > 2.5", Value::Bool(false)),
            ("round(2.675, 2)", Value::Float(2.67)),
            ("round(2.5, 0)", Value::Float(2.0)),
            ("round(1250, -2)", Value::Int(1200)),
            ("round(1350, -2)", Value::Int(1400)),
            ("round(-1250, -2)", Value::Int(-1200)),
            ("round(a, 1)", Value::Int(6)),
            ("round(0.125, 2)", Value::Float(0.12)),
            ("round(123.456, -1)", Value::Float(120.0)),
            ("round(125.5, -1)", Value::Float(130.0)),
            ("round(125.0, -1)", Value::Float(120.0)),
            ("round(-125.0, -1)", Value::Float(-120.0)),
            ("round(-125.5, -1)", Value::Float(-130.0)),
            ("round(135.0, -1)", Value::Float(140.0)),
            ("round(1.5, -9223372036854775808)", Value::Float(0.0)),
            ("round(123.0, -400)", Value::Float(0.0)),
            ("round(6000000000000000000, -20)", Value::Int(0)),
        ];
        struct Abc;
        impl Scope for Abc {
            fn param(&self, name: &str) -> Option<Value> {
                let v = match name {
                    "a" => 6,
                    "b" => 3,
                    "c" => 0,
                    _ => return None,
                };
                Some(Value::Int(v))
            }
        }
        for (text, want) in cases {
            let e = Expr::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let got = e.eval(&Abc).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(&got, want, "{text}");
            // The printed form reads back as the same tree.
            assert_eq!(Expr::parse(&e.to_string()).unwrap(), e, "{text}");
        }
        let invalid = |text: &str| matches!(ev(text), Err(EvalError::InvalidValue { .. }));
        assert!(invalid("1 << -1"));
        assert!(invalid("math.sqrt(-1)"));
        assert!(invalid("math.log(0)"));
        assert!(invalid("int('x')"));
        assert!(invalid("int('1_')") && invalid("int('-_1')") && invalid("int('1__0')"));
        assert!(matches!(
            ev("round(6000000000000000000, -19)"),
            Err(EvalError::Overflow(_))
        ));
        assert!(matches!(
            ev("round(1.6e308, -308)"),
            Err(EvalError::FloatOverflow(_))
        ));
        assert!(matches!(
            ev("int('99999999999999999999')"),
            Err(EvalError::Overflow(_))
        ));
        assert!(matches!(
            ev("9007199254740992.0 in range(9007199254740993, 9007199254740995)"),
            Ok(Value::Bool(false))
        ));
        assert_eq!(ev("int(' -1_000 ')").unwrap(), Value::Int(-1000));
        assert!(invalid("(-8.0) ** 0.5"));
        assert!(matches!(ev("1 << 64"), Err(EvalError::Overflow(_))));
        assert!(matches!(
            ev("3.5 ** 1100"),
            Err(EvalError::FloatOverflow(_))
        ));
        assert!(matches!(
            ev("math.exp(1000)"),
            Err(EvalError::FloatOverflow(_))
        ));
        // Python builds a list (or a range) before it looks for the item in it: every
        // element is evaluated, the item first.
        assert!(matches!(
            ev("1 in [1, 1 // 0]"),
            Err(EvalError::DivisionByZero(_))
        ));
        assert!(matches!(
            ev("(1 // 0) in []"),
            Err(EvalError::DivisionByZero(_))
        ));
        assert!(matches!(
            ev("any([True, 1 // 0])"),
            Err(EvalError::DivisionByZero(_))
        ));
        assert!(matches!(
            ev("1 in range(4, 1 // 0)"),
            Err(EvalError::DivisionByZero(_))
        ));
        assert!(matches!(
            ev("1 in range(2.5)"),
            Err(EvalError::TypeMismatch { .. })
        ));
        assert!(invalid("1 in range(0, 8, 0)"));
        assert_eq!(ev("math.pow(10, 20)").unwrap(), Value::Float(1e20));
        assert!(matches!(
            ev("math.log(8, 1)"),
            Err(EvalError::DivisionByZero(_))
        ));
        assert!(matches!(ev("1.5 & 1"), Err(EvalError::TypeMismatch { .. })));
        assert!(matches!(ev("~1.5"), Err(EvalError::TypeMismatch { .. })));
        for bad in [
            "a in 3",
            "a in (3)",
            "a in [1] == b",
            "math.gamma(3)",
            "any(a, b)",
            "pow(2, 3, 5)",
            "max([])",
            "math.log(1, 2, 3)",
            "0x",
            "0b102",
            "0xfffffffffffffffffffffffffffffffff",
            "0x1__f",
            "1__0",
            "1_ + 2",
            "1_e5",
            "0x_",
            "0b1_",
        ] {
            assert!(Expr::parse(bad).is_err(), "{bad} should not parse");
        }
    }

    struct Names;
    impl Scope for Names {
        fn param_names(&self) -> Vec<String> {
            vec!["block_size_x".into(), "tile_size".into()]
        }
    }

    #[test]
    fn unknown_names_suggest_the_closest() {
        let err = Expr::parse("block_sizex > 1")
            .unwrap()
            .eval(&Names)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown parameter `block_sizex` (did you mean `block_size_x`?)"
        );
    }
}
