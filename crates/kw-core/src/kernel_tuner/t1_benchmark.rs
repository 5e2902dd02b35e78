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
//! `Size` and `GlobalSize` strings are expressions of `ProblemSize[i]` and, as Kernel Tuner
//! evaluates them, of `max(PARAM)` / `min(PARAM)` over a parameter's values. Every parameter
//! is also a define, and `kernel_tuner` is defined as 1 (as Kernel Tuner does), so sources with
//! `#ifndef kernel_tuner` blocks compile.
//!
//! Supported: `Language` CUDA and OpenCL; `MemoryType` `Scalar` and `Vector`; the scalar
//! types int8..uint64, bool (as uint8), float, double, and their vector forms (`float4`, ...)
//! as buffers of the element type; `FillType` `Constant`, `Random` (`RandomSeed`, default 0:
//! the same seed gives the same data on every machine; Kernel Tuner's standard normal
//! distribution for floats), `BinaryRaw` (`DataSource` relative to the JSON file) and
//! `Generator` (`DataSource` an expression of the element index `i`). Anything else the file
//! asks for (HIP or Vulkan, `Local` or `Symbol` arguments, `half`, `Script`, `BinaryHDF`,
//! `ReferenceArguments`) is an error that names the file, the field and what is supported.
//! Nothing is silently ignored.

use super::t1::T1Spec;
use super::{parse_json, read_text, KtError};
use crate::device::BackendKind;
use crate::eval::Scope;
use crate::expr::{lit, param, Expr, Func};
use crate::kernel_def::{
    Access, ArgDef, ArgKind, Grid, KernelDef, KernelSource, KERNEL_DEF_FORMAT_VERSION,
};
use crate::scalar::{HostArg, ScalarType, ScalarValue};
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
}

fn fmt(path: &Path, message: String) -> KtError {
    KtError::format(path, message)
}

/// Scope of `Size` and `GlobalSize` expressions: the problem size only.
struct SizeScope<'a>(&'a [i64]);

impl Scope for SizeScope<'_> {
    fn problem_size(&self, axis: usize) -> Option<i64> {
        self.0.get(axis).copied().or(Some(1))
    }
}

/// Parses a T1 expression string: `ProblemSize[i]` as the problem size, and `max(P)` /
/// `min(P)` of a single parameter `P` as its largest / smallest declared value.
fn t1_expr(text: &str, spec: &T1Spec) -> Result<Expr, String> {
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

/// The element type and how many of them make one value of a T1 `Type`.
fn element_type(ty: &str) -> Result<(ScalarType, usize), String> {
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

impl T1Benchmark {
    /// Reads a T1 file and everything it refers to (kernel file, data files).
    pub fn load(path: &Path) -> Result<T1Benchmark, KtError> {
        let text = read_text(path)?;
        let json = parse_json(path, &text)?;
        let mut spec = T1Spec::from_json(path, &json)?;
        let mut notes = Vec::new();
        for p in &mut spec.params {
            if !p.values.contains(&p.default) {
                let first = p.values.first().cloned().unwrap_or(Value::Int(0));
                notes.push(format!(
                    "{}: the `Default` {} of `{}` is not among its `Values`; using {first}",
                    path.display(),
                    p.default,
                    p.name
                ));
                p.default = first;
            }
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
        let include_dirs = vec![crate::includes::parent_dir(&source_path)];
        let (headers, missing) = crate::includes::resolve(&source_text, &include_dirs);
        if let Some(name) = missing.first() {
            return Err(fmt(
                path,
                format!(
                    "`KernelSpecification.KernelFile` {}: `#include \"{name}\"` not found beside it",
                    source_path.display()
                ),
            ));
        }
        let mut flags = Vec::new();
        if let Some(opts) = field("CompilerOptions") {
            let list = opts.as_array().ok_or_else(|| {
                fmt(
                    path,
                    "`KernelSpecification.CompilerOptions` must be a list".into(),
                )
            })?;
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
        // The problem size.
        let problem: Option<Vec<i64>> = match field("ProblemSize") {
            None | Some(Json::Null) => None,
            Some(Json::Number(n)) => Some(vec![n.as_i64().unwrap_or(0)]),
            Some(Json::Array(a)) => Some(
                a.iter()
                    .map(|v| {
                        v.as_i64().ok_or_else(|| {
                            fmt(path, "`ProblemSize` entries must be integers".into())
                        })
                    })
                    .collect::<Result<_, _>>()?,
            ),
            Some(_) => {
                return Err(fmt(
                    path,
                    "`ProblemSize` must be an integer or a list".into(),
                ))
            }
        };
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
                Some(Json::Number(n)) => Ok(lit(n.as_i64().unwrap_or(1))),
                Some(Json::String(s)) => {
                    t1_expr(s, &spec).map_err(|e| fmt(path, format!("`{obj}.{axis}` `{s}`: {e}")))
                }
                Some(_) => Err(fmt(path, format!("`{obj}.{axis}` must be a string"))),
            }
        };
        let block = [
            axis_expr("LocalSize", "X", param("block_size_x"))?,
            axis_expr("LocalSize", "Y", lit(1))?,
            axis_expr("LocalSize", "Z", lit(1))?,
        ];
        let (problem_size, grid) = match &problem {
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
                let g = [
                    axis_expr("GlobalSize", "X", lit(1))?,
                    axis_expr("GlobalSize", "Y", lit(1))?,
                    axis_expr("GlobalSize", "Z", lit(1))?,
                ];
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
                let size: Vec<Expr> = if g.iter().all(|e| e.params().is_empty()) {
                    g.iter()
                        .map(|e| Expr::Lit(e.eval(&SizeScope(&[])).unwrap_or(Value::Int(1))))
                        .collect()
                } else {
                    vec![lit(1)]
                };
                (size, Grid::Blocks(blocks))
            }
        };
        let shared_memory = match field("SharedMemory") {
            None | Some(Json::Null) => lit(0),
            Some(Json::Number(n)) => lit(n.as_i64().unwrap_or(0)),
            Some(Json::String(s)) => {
                t1_expr(s, &spec).map_err(|e| fmt(path, format!("`SharedMemory` `{s}`: {e}")))?
            }
            Some(_) => return Err(fmt(path, "`SharedMemory` must be a number".into())),
        };
        if field("ReferenceArguments").is_some_and(|r| !r.is_null()) {
            return Err(fmt(
                path,
                "`ReferenceArguments` is not supported by this kw yet: the reference output is \
                 the output of the `Default` configuration (remove the field, or tune with \
                 --no-verify)"
                    .into(),
            ));
        }
        let probs = problem.clone().unwrap_or_default();
        let arguments = match field("Arguments") {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::Array(a)) => a.clone(),
            Some(_) => return Err(fmt(path, "`Arguments` must be a list".into())),
        };
        let mut args = Vec::new();
        let mut inputs = Vec::new();
        for (i, a) in arguments.iter().enumerate() {
            let name = a
                .get("Name")
                .and_then(Json::as_str)
                .map_or_else(|| format!("arg{i}"), String::from);
            let at = |m: String| fmt(path, format!("argument #{i} `{name}`: {m}"));
            let ty_text = a
                .get("Type")
                .and_then(Json::as_str)
                .ok_or_else(|| at("missing `Type`".into()))?;
            let (ty, lanes) = element_type(ty_text).map_err(|m| at(format!("`Type`: {m}")))?;
            let memory = a
                .get("MemoryType")
                .and_then(Json::as_str)
                .unwrap_or("Vector");
            let fill_value = a.get("FillValue").and_then(Json::as_f64).unwrap_or(0.0);
            match memory {
                "Scalar" => {
                    args.push(ArgDef {
                        name: name.clone(),
                        ty,
                        kind: ArgKind::Scalar,
                        access: Access::In,
                        len: None,
                    });
                    inputs.push(HostArg::Scalar(scalar_from(ty, fill_value)));
                    continue;
                }
                "Vector" => {}
                other => {
                    return Err(at(format!(
                        "`MemoryType` {other} is not supported by this kw yet (supported: \
                         Scalar, Vector)"
                    )))
                }
            }
            if a.get("MemType").and_then(Json::as_str) == Some("Constant") {
                return Err(at(
                    "`MemType: Constant` (a constant-memory symbol) is not supported by this kw \
                     yet"
                    .into(),
                ));
            }
            let count = match a.get("Size") {
                Some(Json::Number(n)) => n.as_i64().unwrap_or(-1),
                Some(Json::String(s)) => t1_expr(s, &spec)
                    .and_then(|e| e.eval(&SizeScope(&probs)).map_err(|e| e.to_string()))
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
            let fill = a
                .get("FillType")
                .and_then(Json::as_str)
                .unwrap_or("Constant");
            let bytes = match fill {
                "Constant" => {
                    let one = scalar_from(ty, fill_value);
                    one.bytes().repeat(elements)
                }
                "Random" => {
                    let seed = a.get("RandomSeed").and_then(Json::as_u64).unwrap_or(0);
                    notes.push(format!("argument `{name}`: random data, seed {seed}"));
                    let mut rng = crate::rng::Rng::new(seed);
                    let mut out = Vec::with_capacity(elements * ty.size());
                    for _ in 0..elements {
                        let v = if ty.is_float() {
                            normal(&mut rng)
                        } else {
                            (rng.below(201) as f64) - 100.0
                        };
                        out.extend_from_slice(scalar_from(ty, v).bytes());
                    }
                    out
                }
                "BinaryRaw" => {
                    let source = a
                        .get("DataSource")
                        .and_then(Json::as_str)
                        .ok_or_else(|| at("`FillType: BinaryRaw` needs a `DataSource`".into()))?;
                    let file = base.join(source);
                    let rules = crate::files::ReadRules::new("data file", 16 << 30);
                    let data = crate::files::read(&file, rules)
                        .map_err(|e| at(format!("`DataSource`: {e}")))?;
                    if data.len() != elements * ty.size() {
                        return Err(at(format!(
                            "`DataSource` {} holds {} bytes, `Size` {count} of `{ty_text}` needs {}",
                            file.display(),
                            data.len(),
                            elements * ty.size()
                        )));
                    }
                    data
                }
                "Generator" => {
                    let source = a.get("DataSource").and_then(Json::as_str).ok_or_else(|| {
                        at("`FillType: Generator` needs a `DataSource` expression of `i`".into())
                    })?;
                    let e = Expr::parse(source)
                        .map_err(|e| at(format!("`DataSource` `{source}`: {e}")))?;
                    let mut out = Vec::with_capacity(elements * ty.size());
                    for k in 0..elements {
                        let v = e
                            .eval(&IndexScope(k as i64))
                            .ok()
                            .and_then(|v| v.as_f64())
                            .ok_or_else(|| {
                                at(format!(
                                    "`DataSource` `{source}` gives no number at i = {k}"
                                ))
                            })?;
                        out.extend_from_slice(scalar_from(ty, v).bytes());
                    }
                    out
                }
                other => {
                    return Err(at(format!(
                        "`FillType` {other} is not supported (supported: Constant, Random, \
                         BinaryRaw, Generator)"
                    )))
                }
            };
            args.push(ArgDef {
                name: name.clone(),
                ty,
                kind: ArgKind::Buffer,
                access,
                len: Some(lit(elements as i64)),
            });
            inputs.push(HostArg::Buffer { ty, bytes });
        }
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
                        return Err(fmt(
                            path,
                            format!(
                                "`Budget` entry {t:?} = {v:?} is not understood (Types: \
                                     ConfigurationCount >= 1, TuningDuration > 0 seconds, \
                                     ConfigurationFraction in (0, 1])"
                            ),
                        ))
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
        };
        Ok(T1Benchmark {
            def,
            inputs,
            name,
            budget,
            notes,
        })
    }
}
