//! One argument of a T1 benchmark: its declaration and its data, filled as the file says
//! (see [`super::T1Benchmark`] for what is supported).

use super::t1::T1Spec;
use super::t1_expr::{t1_expr, SizeScope};
use super::KtError;
use crate::eval::Scope;
use crate::expr::{lit, Expr};
use crate::kernel_def::{Access, ArgDef, ArgKind, LocalArgDef, SymbolDef};
use crate::scalar::{HostArg, ScalarType, ScalarValue, SymbolValue};
use crate::value::Value;
use serde_json::Value as Json;
use std::path::Path;

/// The element type and how many of them make one value of a T1 `Type`. Names are read
/// without regard to case, and KTT's names (`Char`, `UnsignedChar`, `Short`, `Int`,
/// `UnsignedInt`, `Long`, `UnsignedLong`: 8 to 64 bits) are the sized integers they mean.
fn element_type(ty: &str) -> Result<(ScalarType, usize), String> {
    let lower = ty.to_ascii_lowercase();
    let ty = match lower.as_str() {
        "char" => "int8",
        "unsignedchar" => "uint8",
        "short" => "int16",
        "unsignedshort" => "uint16",
        "unsignedint" => "uint32",
        "long" => "int64",
        "unsignedlong" => "uint64",
        other => other,
    };
    let (base, lanes) = match ty.find(|c: char| c.is_ascii_digit()) {
        Some(i)
            if ty.starts_with("float") || ty.starts_with("double") || ty.starts_with("half") =>
        {
            let lanes: usize = ty[i..]
                .parse()
                .map_err(|_| format!("unknown type `{ty}`"))?;
            (&ty[..i], lanes)
        }
        _ => (ty, 1),
    };
    let scalar =
        match base {
            "bool" | "uint8" => ScalarType::U8,
            "int8" => ScalarType::I8,
            "int16" => ScalarType::I16,
            "uint16" => ScalarType::U16,
            "int32" | "int" => ScalarType::I32,
            "uint32" | "uint" => ScalarType::U32,
            "int64" => ScalarType::I64,
            "uint64" => ScalarType::U64,
            "float" => ScalarType::F32,
            "double" => ScalarType::F64,
            "half" => return Err(
                "`half` arguments are not supported by this kw (supported: bool, int8..uint64, \
                 float, double and their vector forms)"
                    .into(),
            ),
            other => {
                return Err(format!(
                    "unknown type `{other}` (supported: bool, int8, uint8, int16, uint16, int32, \
                 uint32, int64, uint64, float, double, and float2..float16, double2..double16)"
                ))
            }
        };
    if ![1, 2, 3, 4, 8, 16].contains(&lanes) {
        return Err(format!("unknown vector type `{ty}`"));
    }
    Ok((scalar, lanes))
}

/// One value of `ty` from a JSON number, as the bytes of that type.
/// `v` as a value of `ty`, refused when it does not fit: an integer type takes whole numbers
/// within its range, a float type finite values within its range (and infinities or NaN).
fn checked_scalar(ty: ScalarType, v: f64) -> Result<ScalarValue, String> {
    // [lo, end): `end` is exclusive, so that 2^63 and 2^64 (what i64::MAX and u64::MAX round
    // to as f64) are out of range instead of clamped by `as`.
    let (lo, end): (f64, f64) = match ty {
        ScalarType::I8 => (-128.0, 128.0),
        ScalarType::I16 => (-32768.0, 32768.0),
        ScalarType::I32 => (-2147483648.0, 2147483648.0),
        ScalarType::I64 => (-(2f64.powi(63)), 2f64.powi(63)),
        ScalarType::U8 => (0.0, 256.0),
        ScalarType::U16 => (0.0, 65536.0),
        ScalarType::U32 => (0.0, 4294967296.0),
        ScalarType::U64 => (0.0, 2f64.powi(64)),
        ScalarType::F32 if v.is_finite() && v.abs() > f64::from(f32::MAX) => {
            return Err(format!("{v} does not fit {ty}"))
        }
        ScalarType::F32 | ScalarType::F64 => return Ok(scalar_from(ty, v)),
    };
    if !(v.is_finite() && v.fract() == 0.0 && v >= lo && v < end) {
        return Err(format!(
            "{v} does not fit {ty} (whole numbers from {lo} to below {end})"
        ));
    }
    Ok(scalar_from(ty, v))
}

/// An argument's `FillValue`: a number (or a string holding one); 0 when absent.
fn fill_value(a: &Json) -> Result<f64, String> {
    match a.get("FillValue") {
        None | Some(Json::Null) => Ok(0.0),
        Some(Json::Number(n)) => n
            .as_f64()
            .ok_or_else(|| format!("`FillValue` {n} is not a number")),
        Some(Json::String(t)) => t
            .trim()
            .parse::<f64>()
            .map_err(|_| format!("`FillValue` {t:?} is not a number")),
        Some(Json::Bool(b)) => Ok(if *b { 1.0 } else { 0.0 }),
        Some(other) => Err(format!("`FillValue` {other} is not a number")),
    }
}

/// A JSON number given as a count (`Size`): a whole number, else a message.
fn whole_number(n: &serde_json::Number) -> Result<i64, String> {
    n.as_i64()
        .or_else(|| {
            n.as_f64()
                .filter(|v| v.fract() == 0.0 && v.abs() < 9.0e18)
                .map(|v| v as i64)
        })
        .ok_or_else(|| {
            if n.as_f64().is_some_and(|v| v.fract() == 0.0) {
                format!("`Size` {n} is too large")
            } else {
                format!("`Size` {n} is not a whole number")
            }
        })
}

/// `v` as a value of `ty`, cut as `as` casts do (the caller checks the range where a file
/// gave the value: [`checked_scalar`]).
fn scalar_from(ty: ScalarType, v: f64) -> ScalarValue {
    match ty {
        ScalarType::I8 => ScalarValue::new(v as i8),
        ScalarType::I16 => ScalarValue::new(v as i16),
        ScalarType::I32 => ScalarValue::new(v as i32),
        ScalarType::I64 => ScalarValue::new(v as i64),
        ScalarType::U8 => ScalarValue::new(v as u8),
        ScalarType::U16 => ScalarValue::new(v as u16),
        ScalarType::U32 => ScalarValue::new(v as u32),
        ScalarType::U64 => ScalarValue::new(v as u64),
        ScalarType::F32 => ScalarValue::new(v as f32),
        ScalarType::F64 => ScalarValue::new(v),
    }
}

/// `v` as a message shows it: in exponent notation from 10^15 up (not 300 digits).
fn short_number(v: f64) -> String {
    if v.is_finite() && v.abs() >= 1e15 {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// A standard normal sample (Box-Muller), from a generator that never changes.
fn normal(rng: &mut crate::rng::Rng) -> f64 {
    let u1 = (rng.f64()).max(f64::MIN_POSITIVE);
    let u2 = rng.f64();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Scope of a `Generator` expression: the element index `i`.
struct IndexScope(i64);

impl Scope for IndexScope {
    fn param(&self, name: &str) -> Option<Value> {
        (name == "i").then_some(Value::Int(self.0))
    }
    fn param_names(&self) -> Vec<String> {
        vec!["i".into()]
    }
}

/// One entry of a T1 file's `Arguments`.
pub(super) enum T1Arg {
    /// An argument the kernel takes and the launch passes: its declaration and data.
    Kernel(ArgDef, HostArg),
    /// A `__local` argument (`MemoryType: Local`): the runtime passes it, sized by `Size`.
    Local(LocalArgDef),
    /// A constant-memory symbol (`MemoryType: Symbol`, or Kernel Tuner's `MemType: Constant`
    /// on a `Vector` in CUDA): not a kernel parameter; set by name before the launches.
    Symbol(SymbolDef, SymbolValue),
}

/// Reads argument #`i` (`a`) of the file at `path`: its declaration and its data. `probs` is
/// the problem size, `base` the file's directory, `position` its place among the kernel's
/// parameters (symbols are not parameters), `backend` the file's language; notes for the
/// user go to `notes`.
#[allow(clippy::too_many_arguments)]
pub(super) fn argument(
    path: &Path,
    backend: crate::device::BackendKind,
    spec: &T1Spec,
    probs: &[i64],
    base: &Path,
    i: usize,
    position: usize,
    a: &Json,
    notes: &mut Vec<String>,
) -> Result<T1Arg, KtError> {
    let name = a
        .get("Name")
        .and_then(Json::as_str)
        .map_or_else(|| format!("arg{i}"), String::from);
    let at = |m: String| KtError::format(path, format!("`Arguments` #{} `{name}`: {m}", i + 1));
    let ty_text = a
        .get("Type")
        .and_then(Json::as_str)
        .ok_or_else(|| at("missing `Type`".into()))?;
    let (ty, lanes) = element_type(ty_text).map_err(|m| at(format!("`Type`: {m}")))?;
    let memory = a
        .get("MemoryType")
        .and_then(Json::as_str)
        .unwrap_or("Vector");
    // Kernel Tuner's `MemType: Constant` on a vector: in CUDA a `__constant__` symbol set from
    // the host; in OpenCL the kernel's `__constant` pointer parameter, an ordinary buffer.
    let constant = a.get("MemType").and_then(Json::as_str) == Some("Constant")
        && backend == crate::device::BackendKind::Cuda;
    match memory {
        // A vector by value (`float4 s`) would be passed as one of its lanes.
        "Scalar" if lanes > 1 => {
            return Err(at(format!(
                "`Type` `{ty_text}` with `MemoryType` `Scalar`: vector types are supported for \
                 buffers only, not by value"
            )))
        }
        "Scalar" => {
            let arg = ArgDef {
                name: name.clone(),
                ty,
                kind: ArgKind::Scalar,
                access: Access::In,
                len: None,
                tolerance: None,
            };
            let value = fill_value(a)
                .and_then(|v| checked_scalar(ty, v).map_err(|m| format!("`FillValue` {m}")))
                .map_err(at)?;
            return Ok(T1Arg::Kernel(arg, HostArg::Scalar(value)));
        }
        "Local" => {
            let len = match a.get("Size") {
                Some(Json::Number(n)) => lit(whole_number(n).map_err(at)?),
                Some(Json::String(s)) => {
                    t1_expr(s, spec).map_err(|m| at(format!("`Size` `{s}`: {m}")))?
                }
                _ => return Err(at("missing `Size` (elements of local memory)".into())),
            };
            let len = if lanes == 1 {
                len
            } else {
                len * lit(lanes as i64)
            };
            return Ok(T1Arg::Local(LocalArgDef {
                name,
                position,
                ty,
                len,
            }));
        }
        "Vector" | "Symbol" => {}
        other => {
            return Err(at(format!(
                "`MemoryType` {other} is not supported (supported: Scalar, Vector, Local, \
                 Symbol)"
            )))
        }
    }
    let count = match a.get("Size") {
        Some(Json::Number(n)) => whole_number(n).map_err(at)?,
        Some(Json::String(s)) => t1_expr(s, spec)
            .and_then(|e| e.eval(&SizeScope(probs)).map_err(|e| e.to_string()))
            .and_then(|v| v.as_int().ok_or_else(|| format!("{v} is not an integer")))
            .map_err(|m| at(format!("`Size` `{s}`: {m}")))?,
        _ => return Err(at("missing `Size`".into())),
    };
    let elements = usize::try_from(count)
        .ok()
        .filter(|&c| c > 0)
        .and_then(|c| c.checked_mul(lanes))
        .filter(|&c| c.saturating_mul(ty.size()) <= (16usize << 30))
        .ok_or_else(|| at(format!("`Size` {count} is not a size from 1 to 16 GiB")))?;
    let bytes = fill(a, ty, elements, i as u64, base, &name, notes).map_err(at)?;
    if memory == "Symbol" || constant {
        let def = SymbolDef {
            name: name.clone(),
            ty,
            len: elements as u64,
        };
        return Ok(T1Arg::Symbol(def, SymbolValue { name, ty, bytes }));
    }
    let access = match a.get("AccessType").and_then(Json::as_str) {
        None | Some("ReadOnly") => Access::In,
        Some("WriteOnly") => Access::Out,
        Some("ReadWrite") => Access::InOut,
        Some(other) => return Err(at(format!("unknown `AccessType` {other}"))),
    };
    // `Output: 0` on a written buffer: not verified (Kernel Tuner's `answer` None).
    let access = match (access, a.get("Output").and_then(Json::as_i64)) {
        (Access::Out | Access::InOut, Some(0)) => {
            notes.push(format!(
                "argument `{name}` is written but `Output` is 0: it is not verified"
            ));
            Access::In
        }
        (acc, _) => acc,
    };
    let arg = ArgDef {
        name,
        ty,
        kind: ArgKind::Buffer,
        access,
        len: Some(lit(elements as i64)),
        tolerance: None,
    };
    Ok(T1Arg::Kernel(arg, HostArg::Buffer { ty, bytes }))
}

/// The contents of `elements` values of `ty` as `a` (an argument or a reference argument)
/// asks: its `FillType` with `FillValue`, `RandomSeed` (default `seed`) or `DataSource`
/// (relative to `base`). Errors are messages for the caller to place.
pub(super) fn fill(
    a: &Json,
    ty: ScalarType,
    elements: usize,
    seed: u64,
    base: &Path,
    name: &str,
    notes: &mut Vec<String>,
) -> Result<Vec<u8>, String> {
    let fill = a
        .get("FillType")
        .and_then(Json::as_str)
        .unwrap_or("Constant");
    Ok(match fill {
        "Constant" => {
            let one = checked_scalar(ty, fill_value(a)?).map_err(|m| format!("`FillValue` {m}"))?;
            one.bytes().repeat(elements)
        }
        "Random" => {
            // Without a seed, the argument's position: arguments differ from each other, and
            // every machine makes the same data.
            let seed = a.get("RandomSeed").and_then(Json::as_u64).unwrap_or(seed);
            // A `FillValue` is KTT's bound: values drawn evenly from 0 to it (positions,
            // masses: data a kernel may need positive); whole numbers from 0 to it (both
            // included) for an integer type. Without one (or 0), Kernel Tuner's standard
            // normal for floats, integers in -100..=100.
            let bound = match a.get("FillValue") {
                None | Some(Json::Null) => None,
                Some(_) => Some(fill_value(a)?).filter(|b| *b != 0.0),
            };
            if let Some(b) = bound {
                // The bound itself is checked, once: every value drawn lies between it and 0.
                let shown = short_number(b);
                if !b.is_finite() {
                    return Err(format!("`FillValue` {shown} is not a finite bound"));
                }
                let edge = if ty.is_float() { b } else { b.trunc() };
                checked_scalar(ty, edge).map_err(|_| {
                    format!("`FillValue` bound {shown}: values up to it do not fit {ty}")
                })?;
            }
            let drawn = match bound {
                Some(b) if ty.is_float() => format!(
                    "drawn evenly from 0 to {} (`FillValue`, as KTT reads it)",
                    short_number(b)
                ),
                Some(b) => format!(
                    "whole numbers drawn evenly from 0 to {} (`FillValue`)",
                    short_number(b.trunc())
                ),
                None if ty.is_float() => "standard normal".to_string(),
                None => "integers from -100 to 100".to_string(),
            };
            notes.push(format!(
                "argument `{name}`: random data, seed {seed}, {drawn}"
            ));
            let mut rng = crate::rng::Rng::new(seed);
            let mut out = Vec::with_capacity(elements * ty.size());
            for _ in 0..elements {
                let one = match bound {
                    Some(b) if ty.is_float() => scalar_from(ty, rng.f64() * b),
                    Some(b) => {
                        // 0 ..= |b| (as u64: up to 2^64 - 1), signed as the bound.
                        let top = b.trunc().abs();
                        let k = if top >= 2f64.powi(64) - 1.0 {
                            rng.next_u64()
                        } else {
                            rng.below(top as u64 + 1)
                        };
                        let v = (k as f64).min(top);
                        scalar_from(ty, if b < 0.0 { -v } else { v })
                    }
                    None if ty.is_float() => scalar_from(ty, normal(&mut rng)),
                    None => scalar_from(ty, (rng.below(201) as f64) - 100.0),
                };
                out.extend_from_slice(one.bytes());
            }
            out
        }
        "Ascending" => {
            // KTT: `FillValue`, `FillValue + 1`, ...
            let start = fill_value(a)?;
            let last = start + elements.saturating_sub(1) as f64;
            if ty == ScalarType::F32 && start.abs().max(last.abs()) > 16_777_216.0 {
                notes.push(format!(
                    "argument `{name}`: `FillType: Ascending` from {} to {}: float holds \
                     whole numbers exactly only up to 2^24, so values past it repeat",
                    short_number(start),
                    short_number(last)
                ));
            }
            let mut out = Vec::with_capacity(elements * ty.size());
            for k in 0..elements {
                let v = start + k as f64;
                let one = checked_scalar(ty, v)
                    .map_err(|m| format!("`FillType: Ascending` at element {k}: {m}"))?;
                out.extend_from_slice(one.bytes());
            }
            out
        }
        "BinaryRaw" => {
            let source = a
                .get("DataSource")
                .and_then(Json::as_str)
                .ok_or("`FillType: BinaryRaw` needs a `DataSource`")?;
            let file = base.join(source);
            let rules = crate::files::ReadRules::new("data file", 16 << 30);
            let data =
                crate::files::read(&file, rules).map_err(|e| format!("`DataSource`: {e}"))?;
            if data.len() != elements * ty.size() {
                return Err(format!(
                    "`DataSource` {} holds {} bytes, {elements} values of {ty} need {}",
                    file.display(),
                    data.len(),
                    elements * ty.size()
                ));
            }
            data
        }
        "Generator" => {
            let source = a
                .get("DataSource")
                .and_then(Json::as_str)
                .ok_or("`FillType: Generator` needs a `DataSource` expression of `i`")?;
            let e = Expr::parse(source).map_err(|e| format!("`DataSource` `{source}`: {e}"))?;
            let mut out = Vec::with_capacity(elements * ty.size());
            for k in 0..elements {
                let v = e
                    .eval(&IndexScope(k as i64))
                    .ok()
                    .and_then(|v| v.as_f64())
                    .ok_or_else(|| format!("`DataSource` `{source}` gives no number at i = {k}"))?;
                let one = checked_scalar(ty, v)
                    .map_err(|m| format!("`DataSource` `{source}` at i = {k}: {m}"))?;
                out.extend_from_slice(one.bytes());
            }
            out
        }
        other => {
            return Err(format!(
                "`FillType` {other} is not supported (supported: Constant, Random, \
                 Ascending, BinaryRaw, Generator)"
            ))
        }
    })
}
