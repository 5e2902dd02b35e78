//! [`T1Benchmark`]: the benchmark a T1 file describes (the auto-tuning community's
//! `TuningSchema.json`), as a [`KernelDef`] plus the argument data to launch it with, so that
//! it becomes an ordinary capture (`kw capture from-t1`) and everything downstream (`kw tune`,
//! replay on another machine, wisdom, merge) works unchanged.
//!
//! Launch geometry follows Kernel Tuner's reading of T1 files when the file gives a
//! `ProblemSize`: the grid is the problem size divided by the product of `GridDivX/Y/Z`
//! (default `block_size_x`/`_y`/`_z`, as Kernel Tuner's `grid_div_*`), the block is
//! `LocalSize`. Without `ProblemSize`, `GlobalSize` is the grid in blocks
//! (`GlobalSizeType: CUDA`) or in threads (`OpenCL`, divided by `LocalSize`, rounded up).
//! KTT's launch `Modifiers` change those sizes by tuning parameters (`t1_modifiers`).
//! `Size` and `GlobalSize` strings are expressions of `ProblemSize[i]` and, as Kernel Tuner
//! evaluates them, of `max(PARAM)` / `min(PARAM)` over a parameter's values. Every parameter
//! is also a define, and `kernel_tuner` is defined as 1 (as Kernel Tuner does), so sources with
//! `#ifndef kernel_tuner` blocks compile.
//!
//! Supported: `Language` CUDA and OpenCL; `MemoryType` `Scalar`, `Vector`, `Local` (OpenCL
//! `__local` arguments at their position, sized by `Size`, an expression that may use the
//! tuning parameters) and `Symbol` (constant memory, CUDA; Kernel Tuner's `MemType: Constant`
//! on a `Vector` means the same); `ReferenceArguments` (the expected contents of a written
//! buffer, filled like an argument; other outputs are checked against the `Default`
//! configuration's output); the scalar
//! types int8..uint64, bool (as uint8), float, double, and their vector forms (`float4`, ...)
//! as buffers of the element type (KTT's names, `Float`, `UnsignedInt`, ..., too); `FillType`
//! `Constant`, `Random` (`RandomSeed`, default the argument's position: the same seed gives the
//! same data on every machine; with a `FillValue`, KTT's values drawn evenly from 0 to it, else
//! Kernel Tuner's standard normal distribution for floats, integers in -100..=100),
//! `Ascending` (KTT: `FillValue`, `FillValue + 1`, ...), `BinaryRaw` (`DataSource` relative to
//! the JSON file) and `Generator` (`DataSource` an expression of the element index `i`); a
//! reference's KTT `ValidationMethod` and `ValidationThreshold` as its target's tolerance. Anything else the file
//! asks for (HIP or Vulkan, `half`, `Script`, `BinaryHDF`, a symbol in OpenCL) is an error
//! that names the file, the field and what is supported.
//! Nothing is silently ignored: a `Default` not among its `Values` is replaced by the first
//! value, and fields this reader does not use (`Search`, `BenchmarkConfig`, `Misc`,
//! `GlobalSize` beside a `ProblemSize`, ...) are listed, both in [`T1Benchmark::notes`].

use super::t1::T1Spec;
use super::t1_args::{argument, T1Arg};
use super::t1_expr::{t1_expr, DefaultsScope};
use super::t1_modifiers;
use super::{parse_json, read_text, KtError};
use crate::device::BackendKind;
use crate::expr::{lit, param, Expr, Func};
use crate::kernel_def::{Grid, KernelDef, KernelSource, KERNEL_DEF_FORMAT_VERSION};
use crate::scalar::{HostArg, SymbolValue};
use crate::value::Value;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// The file's `Budget`, for `kw tune` (the command line overrides it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct T1Budget {
    /// `ConfigurationCount`.
    pub evaluations: Option<u64>,
    /// `TuningDuration`, in seconds.
    pub seconds: Option<f64>,
    /// `ConfigurationFraction` of the space.
    pub fraction: Option<f64>,
}

/// A T1 benchmark: the kernel's definition, its arguments' data, and what the file said.
#[derive(Clone, Debug)]
pub struct T1Benchmark {
    /// The definition (source embedded).
    pub def: KernelDef,
    /// One input per argument of `def`, in order.
    pub inputs: Vec<HostArg>,
    /// The benchmark's name (`General.BenchmarkName`, else the kernel name).
    pub name: String,
    /// The budget the file asks for.
    pub budget: T1Budget,
    /// Notes for the user: fixed data errors, the random seeds used.
    pub notes: Vec<String>,
    /// The contents of the constant-memory symbols `def.symbols`, in order.
    pub symbols: Vec<SymbolValue>,
    /// Expected outputs from `ReferenceArguments`: `(index into def.args, contents)`; the
    /// other written buffers' reference is the `Default` configuration's output.
    pub references: Vec<(usize, Vec<u8>)>,
}

/// The include directories of `flags` (`-IDIR`, `-I DIR` in one entry, or `-I` then `DIR`),
/// in order, and the other flags as they are; a `-I` without a directory is an error.
fn include_options(flags: &[String]) -> Result<(Vec<String>, Vec<String>), String> {
    let mut dirs = Vec::new();
    let mut rest = Vec::new();
    let mut entries = flags.iter();
    while let Some(f) = entries.next() {
        match f.trim().strip_prefix("-I").map(str::trim) {
            Some("") => match entries.next().map(|d| d.trim()) {
                Some(dir) if !dir.is_empty() && !dir.starts_with('-') => dirs.push(dir.into()),
                other => {
                    return Err(format!(
                        "`CompilerOptions`: `-I` is followed by {}, not a directory",
                        other.map_or_else(|| "nothing".to_string(), |o| format!("`{o}`"))
                    ))
                }
            },
            Some(dir) => dirs.push(dir.to_string()),
            None => rest.push(f.clone()),
        }
    }
    Ok((dirs, rest))
}

/// `ReferenceArguments`: each names (`TargetName`) a written buffer argument and fills its
/// expected contents as an argument is filled (its type and size are the target's). KTT's
/// `ValidationMethod` and `ValidationThreshold` become the target's tolerance
/// ([`validation_tolerance`]).
fn reference_arguments(
    path: &Path,
    refs: Option<&Json>,
    args: &mut [crate::kernel_def::ArgDef],
    inputs: &[HostArg],
    base: &Path,
    notes: &mut Vec<String>,
) -> Result<Vec<(usize, Vec<u8>)>, KtError> {
    let list = match refs {
        None | Some(Json::Null) => return Ok(Vec::new()),
        Some(Json::Array(a)) => a,
        Some(_) => return Err(fmt(path, "`ReferenceArguments` must be a list".into())),
    };
    let mut out: Vec<(usize, Vec<u8>)> = Vec::new();
    for (i, r) in list.iter().enumerate() {
        let name = r.get("Name").and_then(Json::as_str).unwrap_or("");
        let at = |m: String| {
            fmt(
                path,
                format!("`ReferenceArguments` #{} `{name}`: {m}", i + 1),
            )
        };
        let target = r
            .get("TargetName")
            .and_then(Json::as_str)
            .ok_or_else(|| at("missing `TargetName`".into()))?;
        let index = args
            .iter()
            .position(|a| a.name == target)
            .ok_or_else(|| at(format!("`TargetName` `{target}` is not a buffer argument")))?;
        if let Some(tolerance) = validation_tolerance(r, notes, name).map_err(&at)? {
            if args[index].ty.is_float() {
                args[index].tolerance = Some(tolerance);
            } else {
                notes.push(format!(
                    "reference `{name}`: `ValidationThreshold` is not used: `{target}` is of \
                     an integer type ({}), which kw compares exactly",
                    args[index].ty
                ));
            }
        }
        let (arg, input) = (&args[index], &inputs[index]);
        let HostArg::Buffer { ty, bytes } = input else {
            return Err(at(format!(
                "`TargetName` `{target}` is a scalar, not an output"
            )));
        };
        if arg.access == crate::kernel_def::Access::In {
            return Err(at(format!(
                "`TargetName` `{target}` is not written (`AccessType` ReadOnly, or `Output` 0)"
            )));
        }
        if out.iter().any(|(k, _)| *k == index) {
            return Err(at(format!("`TargetName` `{target}` has two references")));
        }
        let elements = bytes.len() / ty.size().max(1);
        let data = super::t1_args::fill(r, *ty, elements, 1000 + i as u64, base, name, notes)
            .map_err(at)?;
        out.push((index, data));
    }
    Ok(out)
}

/// KTT's comparison of a reference argument (`ValidationMethod`, `ValidationThreshold`) as
/// the output's tolerance: `SideBySideComparison` (KTT's default: each element within the
/// threshold) is an absolute tolerance; `SideBySideRelativeComparison` (each element within
/// the threshold of its own value) a relative one, which kw takes of the output's largest
/// value (looser on small elements, said in a note); `AbsoluteDifference` (the sum of the
/// differences within the threshold) is taken per element (looser, said in a note). `None`
/// when the reference gives neither field.
fn validation_tolerance(
    r: &Json,
    notes: &mut Vec<String>,
    name: &str,
) -> Result<Option<crate::tolerance::Tolerance>, String> {
    let method = r.get("ValidationMethod").filter(|m| !m.is_null());
    let threshold = r.get("ValidationThreshold").filter(|t| !t.is_null());
    if method.is_none() && threshold.is_none() {
        return Ok(None);
    }
    let t = match threshold {
        None => {
            return Err(
                "`ValidationMethod` without a `ValidationThreshold`: give the threshold".into(),
            )
        }
        // A number, or a string holding one (as a `FillValue` is read).
        Some(t) => t
            .as_f64()
            .or_else(|| t.as_str().and_then(|s| s.trim().parse::<f64>().ok()))
            .filter(|t| t.is_finite() && *t >= 0.0)
            .ok_or_else(|| {
                format!(
                    "`ValidationThreshold` {} is not a finite number, 0 or more",
                    crate::diag::one_line(&t.to_string(), 40)
                )
            })?,
    };
    let method = match method {
        None => "SideBySideComparison",
        Some(m) => m
            .as_str()
            .ok_or_else(|| format!("`ValidationMethod` {m} is not a string"))?,
    };
    let tolerance = |rtol: f64, atol: f64| {
        crate::tolerance::Tolerance::new(rtol, atol).map_err(|e| e.to_string())
    };
    Ok(Some(match method {
        "SideBySideComparison" => tolerance(0.0, t)?,
        "SideBySideRelativeComparison" => {
            notes.push(format!(
                "reference `{name}`: `SideBySideRelativeComparison` {t} is checked as {t} of \
                 the output's largest value (kw's relative tolerance), not of each element's"
            ));
            tolerance(t, 0.0)?
        }
        "AbsoluteDifference" => {
            notes.push(format!(
                "reference `{name}`: `AbsoluteDifference` {t} (a sum over the elements in KTT) \
                 is checked per element"
            ));
            tolerance(0.0, t)?
        }
        other => {
            return Err(format!(
                "`ValidationMethod` {other:?} is not supported (supported: \
                 SideBySideComparison, SideBySideRelativeComparison, AbsoluteDifference)"
            ))
        }
    }))
}

/// The largest `LocalSize` axis taken: a work-group or block dimension is far smaller on
/// every device (1024 on NVIDIA GPUs), and a larger number is a mistake, not a size.
const MAX_LOCAL: i64 = i32::MAX as i64;

/// The largest `GlobalSize` axis taken: 2^53, the largest whole number every JSON reader
/// holds exactly (a `GlobalSize` axis also becomes a problem size and a buffer length).
const MAX_GLOBAL: i64 = 1 << 53;

/// `v` as a size axis: a whole number from 1 to `max` (`16.0` is 16), else why not, in words
/// that follow the value ("is not a whole number", "is below 1", "is too large (at most N)").
fn whole_size(v: &Value, max: i64) -> Result<i64, String> {
    let n = match *v {
        Value::Int(i) => i as f64,
        Value::Float(f) if f.is_finite() && f.fract() == 0.0 => f,
        Value::Float(_) => return Err("is not a whole number".into()),
        _ => return Err("is not a number".into()),
    };
    if n < 1.0 {
        Err("is below 1".into())
    } else if n > max as f64 {
        Err(format!("is too large (at most {max})"))
    } else {
        Ok(n as i64)
    }
}

fn fmt(path: &Path, message: String) -> KtError {
    KtError::format(path, message)
}

/// The fields of a T1 file that this reader does not use, as one note (`None` when none).
/// The fields of an argument this reader reads (`t1_args`).
const ARGUMENT_KEYS: &[&str] = &[
    "Name",
    "Type",
    "MemoryType",
    "MemType",
    "AccessType",
    "FillType",
    "FillValue",
    "Size",
    "DataSource",
    "RandomSeed",
    "Output",
];

/// The fields of a reference argument this reader reads ([`reference_arguments`]; its type
/// and size are its target's).
const REFERENCE_KEYS: &[&str] = &[
    "Name",
    "TargetName",
    "FillType",
    "FillValue",
    "DataSource",
    "RandomSeed",
    "ValidationMethod",
    "ValidationThreshold",
];

fn unused_fields(path: &Path, json: &Json) -> Option<String> {
    const TOP: &[&str] = &[
        "General",
        "ConfigurationSpace",
        "KernelSpecification",
        "Budget",
    ];
    const KERNEL: &[&str] = &[
        "Language",
        "CompilerOptions",
        "BenchmarkName",
        "KernelName",
        "KernelFile",
        "GlobalSizeType",
        "LocalSize",
        "GlobalSize",
        "GridDivX",
        "GridDivY",
        "GridDivZ",
        "ProblemSize",
        "SharedMemory",
        "Arguments",
        "ReferenceArguments",
        "Modifiers",
    ];
    let mut unused: Vec<String> = Vec::new();
    let keys = |v: &Json| -> Vec<String> {
        v.as_object()
            .map_or_else(Vec::new, |o| o.keys().cloned().collect())
    };
    for k in keys(json) {
        if !TOP.contains(&k.as_str()) {
            unused.push(k);
        }
    }
    if let Some(ks) = json.get("KernelSpecification") {
        for k in keys(ks) {
            // `Stream: null` and an absent device say nothing.
            let empty = ks.get(&k).is_some_and(Json::is_null);
            if !KERNEL.contains(&k.as_str()) && !empty {
                unused.push(format!("KernelSpecification.{k}"));
            }
        }
        // The fields of arguments and references this reader does not read (KTT's `Order`,
        // `TypeSize`): each name once, with how many entries give it.
        for (list, known) in [
            ("Arguments", ARGUMENT_KEYS),
            ("ReferenceArguments", REFERENCE_KEYS),
        ] {
            let mut seen: Vec<(String, usize)> = Vec::new();
            for entry in ks.get(list).and_then(Json::as_array).into_iter().flatten() {
                for k in keys(entry) {
                    if known.contains(&k.as_str()) {
                        continue;
                    }
                    match seen.iter_mut().find(|(n, _)| *n == k) {
                        Some((_, count)) => *count += 1,
                        None => seen.push((k, 1)),
                    }
                }
            }
            for (k, count) in seen {
                unused.push(format!("KernelSpecification.{list}[].{k} ({count}x)"));
            }
        }
        if ks.get("ProblemSize").is_some_and(|p| !p.is_null()) && ks.get("GlobalSize").is_some() {
            unused.push(
                "KernelSpecification.GlobalSize (the grid comes from ProblemSize and GridDiv*, \
                 as Kernel Tuner reads T1 files)"
                    .into(),
            );
        }
    }
    (!unused.is_empty())
        .then(|| format!("{}: not used by kw: {}", path.display(), unused.join(", ")))
}

impl T1Benchmark {
    /// Reads a T1 file and everything it refers to (kernel file, data files).
    pub fn load(path: &Path) -> Result<T1Benchmark, KtError> {
        let text = read_text(path)?;
        let json = parse_json(path, &text)?;
        let mut spec = T1Spec::from_json(path, &json)?.with_valid_default(path, &json);
        let mut notes = std::mem::take(&mut spec.notes);
        notes.extend(unused_fields(path, &json));
        // The schema's version: 1 is the one this reader follows; another is read the same
        // way, said once.
        match json.get("General").and_then(|g| g.get("FormatVersion")) {
            None => {}
            Some(v) if v.as_u64() == Some(1) => {}
            Some(v) => notes.push(format!(
                "{}: General.FormatVersion is {v}; this reader follows version 1 of the T1 \
                 format and reads the file as such",
                path.display()
            )),
        }
        let ks = json
            .get("KernelSpecification")
            .ok_or_else(|| fmt(path, "missing `KernelSpecification`".into()))?;
        let field = |name: &str| ks.get(name);
        let text_field = |name: &str| -> Result<&str, KtError> {
            field(name).and_then(Json::as_str).ok_or_else(|| {
                fmt(
                    path,
                    format!("`KernelSpecification.{name}` is missing or not a string"),
                )
            })
        };
        let backend = match text_field("Language")? {
            "CUDA" => BackendKind::Cuda,
            "OpenCL" => BackendKind::Opencl,
            other => {
                return Err(fmt(
                    path,
                    format!(
                        "`KernelSpecification.Language` {other} is not supported (supported: \
                         CUDA, OpenCL)"
                    ),
                ))
            }
        };
        let kernel_name = text_field("KernelName")?.to_string();
        let kernel_file = text_field("KernelFile")?;
        let base = path.parent().unwrap_or(Path::new("."));
        let source_path: PathBuf = base.join(kernel_file);
        let rules = crate::files::ReadRules::new("kernel source", crate::files::caps::SOURCE);
        let source_text = crate::files::read_to_string(&source_path, rules).map_err(|e| {
            fmt(
                path,
                format!("`KernelSpecification.KernelFile`: cannot read {e}"),
            )
        })?;
        let mut flags = Vec::new();
        // A list of options; one string (KTT writes that too) is its options split at spaces.
        let one_string: Vec<Json>;
        if let Some(opts) = field("CompilerOptions").filter(|o| !o.is_null()) {
            let list = match opts {
                Json::Array(list) => list,
                Json::String(text) => {
                    one_string = text.split_whitespace().map(Json::from).collect();
                    &one_string
                }
                _ => {
                    return Err(fmt(
                        path,
                        "`KernelSpecification.CompilerOptions` must be a list of strings (or \
                         one string of options)"
                            .into(),
                    ))
                }
            };
            for o in list {
                flags.push(
                    o.as_str()
                        .ok_or_else(|| {
                            fmt(path, "`CompilerOptions` entries must be strings".into())
                        })?
                        .to_string(),
                );
            }
        }
        // Headers are looked up in the `-I` directories of `CompilerOptions` (relative to
        // the T1 file, as Kernel Tuner's compiler takes them from its script's directory),
        // and for `#include "..."` beside the kernel file first; an `#include <...>` found in
        // none is left to the compiler (a system header). They are embedded in the
        // definition, so the `-I` options, whose paths mean nothing on another machine, are
        // not passed on.
        let (searched, flags) = include_options(&flags).map_err(|m| fmt(path, m))?;
        let include_dirs: Vec<PathBuf> = searched.iter().map(|d| base.join(d)).collect();
        let (headers, missing) = crate::includes::resolve_in(
            &source_text,
            &[crate::includes::parent_dir(&source_path)],
            &include_dirs,
        );
        if let Some((name, why)) = missing.first() {
            let why = why.clone().unwrap_or_else(|| {
                let also = if searched.is_empty() {
                    String::new()
                } else {
                    format!(" or in the `-I` directories {searched:?} of `CompilerOptions`")
                };
                format!("not found beside it{also}")
            });
            return Err(fmt(
                path,
                format!(
                    "`KernelSpecification.KernelFile` {}: `#include \"{name}\"`: {why}",
                    source_path.display()
                ),
            ));
        }
        // The problem size.
        let problem = super::t1::problem_size(ks).map_err(|m| fmt(path, m))?;
        if let Some(p) = &problem {
            if p.is_empty() || p.iter().any(|&a| a < 1) {
                return Err(fmt(
                    path,
                    format!("`ProblemSize` {p:?} must have axes of at least 1"),
                ));
            }
        }
        let axis_expr = |obj: &str, axis: &str, default: Expr| -> Result<Expr, KtError> {
            match field(obj).and_then(|o| o.get(axis)) {
                None | Some(Json::Null) => Ok(default),
                // A whole number of at least 1 (`16.0` too, as `SharedMemory` takes it).
                Some(Json::Number(n)) => {
                    let v = n
                        .as_i64()
                        .map_or_else(|| Value::Float(n.as_f64().unwrap_or(f64::NAN)), Value::Int);
                    let max = if obj == "LocalSize" {
                        MAX_LOCAL
                    } else {
                        MAX_GLOBAL
                    };
                    whole_size(&v, max)
                        .map(lit)
                        .map_err(|why| fmt(path, format!("`{obj}.{axis}` {n} {why}")))
                }
                Some(Json::String(s)) => {
                    t1_expr(s, &spec).map_err(|e| fmt(path, format!("`{obj}.{axis}` `{s}`: {e}")))
                }
                Some(_) => Err(fmt(path, format!("`{obj}.{axis}` must be a string"))),
            }
        };
        // KTT's launch modifiers.
        let (mods, unused_keys) = t1_modifiers::read(field("Modifiers"), &spec.params)
            .map_err(|why| fmt(path, format!("`KernelSpecification.Modifiers` {why}")))?;
        if !unused_keys.is_empty() {
            notes.push(format!(
                "{}: not used by kw: KernelSpecification.Modifiers {}",
                path.display(),
                unused_keys.join(", ")
            ));
        }
        // Without a `LocalSize`: 1 in a KTT file (it has `Modifiers`, even none), else
        // Kernel Tuner's `block_size_x`, or its default of 256 threads when that is not a
        // tuning parameter.
        let ktt = field("Modifiers").is_some_and(|m| !m.is_null());
        let local_x = if ktt {
            lit(1)
        } else if spec.params.iter().any(|p| p.name == "block_size_x") {
            param("block_size_x")
        } else {
            let given = field("LocalSize")
                .and_then(|l| l.get("X"))
                .is_some_and(|x| !x.is_null());
            if !given {
                notes.push(format!(
                    "{}: no `LocalSize.X` and no `block_size_x` parameter: blocks of 256 \
                     threads in X (Kernel Tuner's default)",
                    path.display()
                ));
            }
            lit(256)
        };
        let block = t1_modifiers::apply(
            &mods,
            false,
            [
                axis_expr("LocalSize", "X", local_x)?,
                axis_expr("LocalSize", "Y", lit(1))?,
                axis_expr("LocalSize", "Z", lit(1))?,
            ],
        );
        // The global size when it is constant (the problem size of a file without one).
        let mut constant_global: Option<Vec<i64>> = None;
        let (problem_size, grid) = match &problem {
            Some(_) if mods.iter().any(|m| m.global) => {
                return Err(fmt(
                    path,
                    "`KernelSpecification.Modifiers` of `Type` Global change a `GlobalSize`; \
                     this file gives a `ProblemSize` (the grid then comes from it and \
                     `GridDiv*`, as Kernel Tuner reads T1 files): give a `GlobalSize` instead"
                        .into(),
                ))
            }
            Some(p) => {
                let div = |key: &str, default: &str| -> Result<Expr, KtError> {
                    let names: Vec<String> = match field(key) {
                        None | Some(Json::Null) => {
                            if spec.params.iter().any(|q| q.name == default) {
                                vec![default.to_string()]
                            } else {
                                Vec::new()
                            }
                        }
                        Some(Json::Array(a)) => a
                            .iter()
                            .map(|v| v.as_str().map(String::from))
                            .collect::<Option<_>>()
                            .ok_or_else(|| {
                                fmt(path, format!("`{key}` must be a list of expressions"))
                            })?,
                        Some(Json::String(s)) => vec![s.clone()],
                        Some(_) => return Err(fmt(path, format!("`{key}` must be a list"))),
                    };
                    let mut e = lit(1);
                    for n in names {
                        let part = t1_expr(&n, &spec)
                            .map_err(|err| fmt(path, format!("`{key}` `{n}`: {err}")))?;
                        e = e * part;
                    }
                    Ok(e)
                };
                let sizes: Vec<Expr> = p.iter().map(|&a| lit(a)).collect();
                (
                    sizes,
                    Grid::Divisors([
                        div("GridDivX", "block_size_x")?,
                        div("GridDivY", "block_size_y")?,
                        div("GridDivZ", "block_size_z")?,
                    ]),
                )
            }
            None => {
                let base = [
                    axis_expr("GlobalSize", "X", lit(1))?,
                    axis_expr("GlobalSize", "Y", lit(1))?,
                    axis_expr("GlobalSize", "Z", lit(1))?,
                ];
                let g = t1_modifiers::apply(&mods, true, base.clone());
                let cuda_type = match field("GlobalSizeType").and_then(Json::as_str) {
                    None => backend == BackendKind::Cuda,
                    Some("CUDA") => true,
                    Some("OpenCL") => false,
                    Some(other) => {
                        return Err(fmt(
                            path,
                            format!(
                                "`GlobalSizeType` {other} is not supported (supported: CUDA, \
                                 OpenCL)"
                            ),
                        ))
                    }
                };
                let blocks = if cuda_type {
                    g.clone()
                } else {
                    [0, 1, 2].map(|i| Expr::Call {
                        func: Func::DivCeil,
                        args: vec![g[i].clone(), block[i].clone()],
                    })
                };
                // The problem size: the global size when it does not depend on parameters.
                // Each axis a whole number of at least 1 (at the `Default` configuration when
                // it depends on parameters): a benchmark of nothing is refused.
                let mut size = Vec::with_capacity(3);
                for (e, axis) in g.iter().zip(["X", "Y", "Z"]) {
                    let v = e.eval(&DefaultsScope(&spec.params));
                    match v.as_ref().map(|v| whole_size(v, MAX_GLOBAL)) {
                        Ok(Ok(n)) => size.push(lit(n)),
                        _ => {
                            let got = match v {
                                Ok(v) => format!(
                                    "is {v}, which {}",
                                    whole_size(&v, MAX_GLOBAL).err().unwrap_or_default()
                                ),
                                Err(err) => format!("cannot be evaluated: {err}"),
                            };
                            let at = if e.params().is_empty() {
                                ""
                            } else {
                                " at the `Default` configuration"
                            };
                            return Err(fmt(
                                path,
                                format!(
                                    "`GlobalSize.{axis}` `{e}`{at} {got}: a global size must \
                                     be a whole number from 1 to {MAX_GLOBAL}"
                                ),
                            ));
                        }
                    }
                }
                // Over parameters (KTT's `Modifiers` divide it): the problem is the global
                // size before them, when that is constant, so that two sizes of one kernel
                // are two problem sizes (two wisdom records), not both 1.
                let constant_of = |es: &[Expr]| -> Option<Vec<i64>> {
                    es.iter()
                        .map(|e| {
                            e.params()
                                .is_empty()
                                .then(|| e.eval(&DefaultsScope(&spec.params)).ok())
                                .flatten()
                                .and_then(|v| whole_size(&v, MAX_GLOBAL).ok())
                        })
                        .collect()
                };
                match constant_of(&g).or_else(|| constant_of(&base)) {
                    Some(axes) => {
                        size = axes.iter().map(|&n| lit(n)).collect();
                        constant_global = Some(axes);
                    }
                    // A global size over parameters alone (`N // WG` blocks): the problem is
                    // its work-items at the `Default` configuration, so that two sizes are
                    // still two problem sizes.
                    None => {
                        let mut items = Vec::with_capacity(3);
                        for i in 0..3 {
                            let n = size[i].eval(&DefaultsScope(&spec.params));
                            let per_block = if cuda_type {
                                block[i].eval(&DefaultsScope(&spec.params))
                            } else {
                                Ok(Value::Int(1))
                            };
                            match (n, per_block) {
                                (Ok(Value::Int(n)), Ok(Value::Int(b))) => {
                                    items.push(n.saturating_mul(b).clamp(1, MAX_GLOBAL))
                                }
                                _ => items.push(1),
                            }
                        }
                        notes.push(format!(
                            "`GlobalSize` depends on parameters: the problem size is its \
                             work-items at the `Default` configuration, {}",
                            items
                                .iter()
                                .map(i64::to_string)
                                .collect::<Vec<_>>()
                                .join(" x ")
                        ));
                        size = items.into_iter().map(lit).collect();
                    }
                }
                (size, Grid::Blocks(blocks))
            }
        };
        let shared_memory = match field("SharedMemory") {
            None | Some(Json::Null) => lit(0),
            // A whole number of bytes, 0 or more (4096.0 too, as the other fields take it).
            Some(Json::Number(n)) => match n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && (0.0..9.0e15).contains(f))
                    .map(|f| f as u64)
            }) {
                Some(bytes) if i64::try_from(bytes).is_ok() => lit(bytes as i64),
                _ => {
                    return Err(fmt(
                        path,
                        format!("`SharedMemory` {n}: give a whole number of bytes, 0 to 2^63 - 1"),
                    ))
                }
            },
            Some(Json::String(s)) => {
                t1_expr(s, &spec).map_err(|e| fmt(path, format!("`SharedMemory` `{s}`: {e}")))?
            }
            Some(_) => {
                return Err(fmt(
                    path,
                    "`SharedMemory` must be a number of bytes or an expression".into(),
                ))
            }
        };
        // `ProblemSize[i]` in an argument's `Size`: the file's problem size, else its
        // constant global size (a `GlobalSize` over parameters gives none: an error there).
        let probs = problem.clone().or(constant_global).unwrap_or_default();
        let arguments = match field("Arguments") {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::Array(a)) => a.clone(),
            Some(_) => return Err(fmt(path, "`Arguments` must be a list".into())),
        };
        let (mut args, mut inputs, mut local_args) = (Vec::new(), Vec::new(), Vec::new());
        let (mut symbols, mut symbol_values) = (Vec::new(), Vec::new());
        let mut position = 0;
        for (i, a) in arguments.iter().enumerate() {
            match argument(
                path, backend, &spec, &probs, base, i, position, a, &mut notes,
            )? {
                T1Arg::Kernel(arg, input) => {
                    args.push(arg);
                    inputs.push(input);
                    position += 1;
                }
                T1Arg::Local(l) => {
                    local_args.push(l);
                    position += 1;
                }
                T1Arg::Symbol(d, v) => {
                    symbols.push(d);
                    symbol_values.push(v);
                }
            }
        }
        if !symbols.is_empty() && backend != BackendKind::Cuda {
            return Err(fmt(
                path,
                format!(
                    "argument `{}` is a constant-memory symbol, which kw sets from the host in \
                     CUDA only (in OpenCL, declare it a `__constant` pointer argument with \
                     `MemoryType: Vector`)",
                    symbols[0].name
                ),
            ));
        }
        let references = reference_arguments(
            path,
            field("ReferenceArguments"),
            &mut args,
            &inputs,
            base,
            &mut notes,
        )?;
        let name = json
            .get("General")
            .and_then(|g| g.get("BenchmarkName"))
            .and_then(Json::as_str)
            .map_or_else(|| kernel_name.clone(), String::from);
        let mut budget = T1Budget::default();
        if let Some(list) = json.get("Budget").and_then(Json::as_array) {
            for b in list {
                let value = b.get("BudgetValue").and_then(Json::as_f64);
                match (b.get("Type").and_then(Json::as_str), value) {
                    (Some("ConfigurationCount"), Some(v)) if v >= 1.0 => {
                        budget.evaluations = Some(v as u64)
                    }
                    (Some("TuningDuration"), Some(v)) if v > 0.0 => budget.seconds = Some(v),
                    (Some("ConfigurationFraction"), Some(v)) if v > 0.0 && v <= 1.0 => {
                        budget.fraction = Some(v)
                    }
                    (t, v) => {
                        let t = t.map_or_else(|| "(no `Type`)".to_string(), |t| format!("`{t}`"));
                        let v = v.map_or_else(|| "(no number)".to_string(), |v| v.to_string());
                        return Err(fmt(
                            path,
                            format!(
                                "`Budget` entry {t} = {v} is not understood (Types: \
                                     ConfigurationCount >= 1, TuningDuration > 0 seconds, \
                                     ConfigurationFraction in (0, 1])"
                            ),
                        ));
                    }
                }
            }
        }
        let mut defines = std::collections::BTreeMap::new();
        defines.insert("kernel_tuner".to_string(), lit(1));
        let def = KernelDef {
            format_version: KERNEL_DEF_FORMAT_VERSION,
            backend,
            source: KernelSource {
                file_name: Path::new(kernel_file)
                    .file_name()
                    .map_or_else(|| kernel_file.to_string(), |n| n.to_string_lossy().into()),
                text: source_text,
                headers,
            },
            kernel_name: kernel_name.clone(),
            template_args: Vec::new(),
            compiler_flags: flags,
            defines,
            params_as_defines: true,
            parameters: spec.params,
            restrictions: spec.restrictions,
            tuning_key: name.clone(),
            problem_size,
            block_size: block,
            grid,
            shared_memory,
            args,
            objective: None,
            local_args,
            symbols,
        };
        Ok(T1Benchmark {
            def,
            inputs,
            name,
            budget,
            notes,
            symbols: symbol_values,
            references,
        })
    }
}
