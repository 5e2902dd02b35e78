//! Evaluating a [`KernelDef`] for one configuration, problem size and device: the problem
//! size from the arguments, the launch geometry, and the compiler defines.
//!
//! Everything here is allocation-free on success where the runtime's hot path needs it
//! ([`KernelDef::problem_size_for`], [`KernelDef::geometry`]).

use crate::backend::args::KernelArg;
use crate::config::Config;
use crate::device::DeviceInfo;
use crate::eval::{EvalError, Scope};
use crate::expr::{ArgRef, DeviceAttr, Expr};
use crate::kernel_def::{ArgKind, Grid, KernelDef};
use crate::space::{SpaceError, TuningSpace};
use crate::value::Value;
use thiserror::Error;

/// The values of a launch's arguments as expressions see them: a scalar's value, a buffer's
/// element count.
pub trait ArgValues {
    /// The value of the argument at `index`, if there is one.
    fn arg_value(&self, index: usize) -> Option<Value>;
}

impl ArgValues for [Value] {
    fn arg_value(&self, index: usize) -> Option<Value> {
        self.get(index).cloned()
    }
}

impl ArgValues for Vec<Value> {
    fn arg_value(&self, index: usize) -> Option<Value> {
        self.get(index).cloned()
    }
}

/// The scope a definition's expressions are evaluated in. Any part may be absent; naming an
/// absent part is an evaluation error.
#[derive(Clone, Copy)]
pub struct DefScope<'a> {
    /// The definition (resolves argument names and lists parameter names).
    pub def: &'a KernelDef,
    /// The configuration (parameter values).
    pub config: Option<&'a Config>,
    /// The launch's arguments.
    pub args: Option<&'a dyn ArgValues>,
    /// The problem size.
    pub problem_size: Option<&'a [i64; 3]>,
    /// The device.
    pub device: Option<&'a DeviceInfo>,
}

impl<'a> DefScope<'a> {
    /// A scope with only the definition (every name unresolved).
    pub fn new(def: &'a KernelDef) -> DefScope<'a> {
        DefScope {
            def,
            config: None,
            args: None,
            problem_size: None,
            device: None,
        }
    }
}

impl Scope for DefScope<'_> {
    fn param(&self, name: &str) -> Option<Value> {
        self.config?.get(name).cloned()
    }
    fn param_names(&self) -> Vec<String> {
        self.def.parameters.iter().map(|p| p.name.clone()).collect()
    }
    fn arg(&self, arg: &ArgRef) -> Option<Value> {
        let index = match arg {
            ArgRef::Index(i) => *i,
            ArgRef::Name(n) => self.def.arg_index(n)?,
        };
        self.args?.arg_value(index)
    }
    fn problem_size(&self, axis: usize) -> Option<i64> {
        self.problem_size?.get(axis).copied()
    }
    fn device(&self, attr: DeviceAttr) -> Option<Value> {
        self.device.map(|d| d.attr(attr))
    }
}

/// The launch geometry of one configuration for one problem size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Geometry {
    /// Number of blocks (work-groups) per axis.
    pub grid: [u32; 3],
    /// Threads (work-items) per block per axis.
    pub block: [u32; 3],
    /// Dynamic shared (local) memory per block, in bytes.
    pub shared_memory_bytes: u32,
    /// The `__local` arguments the backend inserts among the application's (OpenCL).
    pub local_args: LocalArgs,
}

/// The `__local` arguments of a launch: `(position in the kernel's parameter list, bytes)`,
/// by increasing position; at most [`LocalArgs::MAX`] (a fixed array keeps [`Geometry`]
/// `Copy`, so the launch path allocates nothing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LocalArgs {
    count: u8,
    slots: [(u32, u32); LocalArgs::MAX],
}

impl LocalArgs {
    /// The most `__local` arguments a kernel definition may declare.
    pub const MAX: usize = 8;

    /// From `(position, bytes)` pairs (sorted here); `None` when there are more than
    /// [`LocalArgs::MAX`] or two share a position.
    pub fn new(mut pairs: Vec<(u32, u32)>) -> Option<LocalArgs> {
        if pairs.len() > Self::MAX {
            return None;
        }
        pairs.sort_unstable();
        if pairs.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
        let mut out = LocalArgs {
            count: pairs.len() as u8, // at most MAX (8)
            ..LocalArgs::default()
        };
        for (slot, p) in out.slots.iter_mut().zip(pairs) {
            *slot = p;
        }
        Some(out)
    }

    /// The `(position, bytes)` pairs, by increasing position.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.slots[..usize::from(self.count)].iter().copied()
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        usize::from(self.count)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The bytes of the `__local` argument at kernel parameter `position`, if one is there.
    pub fn at(&self, position: usize) -> Option<u32> {
        self.iter()
            .find(|(p, _)| *p as usize == position)
            .map(|(_, b)| b)
    }
}

impl Geometry {
    /// Threads per block.
    pub fn threads_per_block(&self) -> u64 {
        self.block.iter().map(|&b| u64::from(b)).product()
    }
}

/// Why a definition could not be evaluated.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum DefError {
    /// An expression failed to evaluate.
    #[error("kernel `{kernel}`: {what} `{expr}`: {source}")]
    Eval {
        /// The kernel name.
        kernel: String,
        /// Which expression (`block_size[0]`).
        what: String,
        /// The expression, as text.
        expr: String,
        /// Why.
        source: Box<EvalError>,
    },
    /// An expression evaluated to an unusable value.
    #[error("kernel `{kernel}`: {what} `{expr}` is {value}: {reason}")]
    BadValue {
        /// The kernel name.
        kernel: String,
        /// Which expression.
        what: String,
        /// The expression, as text.
        expr: String,
        /// The value it had.
        value: String,
        /// What was expected.
        reason: &'static str,
    },
    /// The configuration needs more of a device resource than the device has: it cannot
    /// run there, whatever the arguments.
    #[error(
        "kernel `{kernel}`: {what} need {needed} bytes of local memory, more than the \
         device's {limit} ({limit_name})"
    )]
    DeviceLimit {
        /// The kernel name.
        kernel: String,
        /// What needs it (`the local arguments a: 64*M`).
        what: String,
        /// Bytes needed.
        needed: u64,
        /// The device's bytes.
        limit: u64,
        /// The limit's name in the backend's API (`CL_DEVICE_LOCAL_MEM_SIZE`).
        limit_name: &'static str,
    },
    /// The tuning space could not be built.
    #[error("kernel `{kernel}`: tuning space: {source}")]
    Space {
        /// The kernel name.
        kernel: String,
        /// Why.
        source: Box<SpaceError>,
    },
}

const AXES: [&str; 3] = ["[0]", "[1]", "[2]"];

impl KernelDef {
    fn eval_int_in(
        &self,
        what: &str,
        axis: Option<usize>,
        e: &Expr,
        scope: &DefScope<'_>,
    ) -> Result<i64, DefError> {
        e.eval_int(scope).map_err(|source| DefError::Eval {
            kernel: self.kernel_name.clone(),
            what: format!("{what}{}", axis.map_or("", |a| AXES[a])),
            expr: e.to_string(),
            source: Box::new(source),
        })
    }

    /// The `__local` arguments' `(position, bytes)` for a scope (every length at least one
    /// element: OpenCL refuses a local argument of 0 bytes).
    fn local_args_in(&self, scope: &DefScope<'_>) -> Result<LocalArgs, DefError> {
        if self.local_args.is_empty() {
            return Ok(LocalArgs::default());
        }
        let mut pairs = Vec::with_capacity(self.local_args.len());
        for l in &self.local_args {
            let what = format!("local argument `{}` length", l.name);
            let n = self.positive_u32(&what, None, &l.len, scope, false)?;
            let bytes = u64::from(n) * l.ty.size() as u64;
            let bytes = u32::try_from(bytes).map_err(|_| DefError::BadValue {
                kernel: self.kernel_name.clone(),
                what: what.clone(),
                expr: l.len.to_string(),
                value: n.to_string(),
                reason: "4 GiB or more of local memory",
            })?;
            pairs.push((u32::try_from(l.position).unwrap_or(u32::MAX), bytes));
        }
        // More than the device has (`CL_DEVICE_LOCAL_MEM_SIZE`): the configuration cannot run
        // there, which is an invalid configuration, not a failed launch.
        let total: u64 = pairs.iter().map(|&(_, b)| u64::from(b)).sum();
        if let Some(limit) = scope
            .device
            .map(|d| d.max_shared_memory_per_block)
            .filter(|&l| l > 0 && total > l)
        {
            return Err(DefError::DeviceLimit {
                kernel: self.kernel_name.clone(),
                what: format!(
                    "the local arguments ({})",
                    self.local_args
                        .iter()
                        .map(|l| format!("`{}`: {} elements", l.name, l.len))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                needed: total,
                limit,
                limit_name: "CL_DEVICE_LOCAL_MEM_SIZE",
            });
        }
        LocalArgs::new(pairs).ok_or_else(|| DefError::BadValue {
            kernel: self.kernel_name.clone(),
            what: "local arguments".into(),
            expr: String::new(),
            value: self.local_args.len().to_string(),
            reason: "at most 8 local arguments, each at its own position",
        })
    }

    fn positive_u32(
        &self,
        what: &str,
        axis: Option<usize>,
        e: &Expr,
        scope: &DefScope<'_>,
        allow_zero: bool,
    ) -> Result<u32, DefError> {
        let v = self.eval_int_in(what, axis, e, scope)?;
        let min = i64::from(!allow_zero);
        match u32::try_from(v) {
            Ok(x) if v >= min => Ok(x),
            _ => Err(DefError::BadValue {
                kernel: self.kernel_name.clone(),
                what: format!("{what}{}", axis.map_or("", |a| AXES[a])),
                expr: e.to_string(),
                value: v.to_string(),
                reason: match (v < min, allow_zero) {
                    (true, true) => "negative: a whole number from 0 to 2^32 - 1 is expected",
                    (true, false) => "below 1: a whole number from 1 to 2^32 - 1 is expected",
                    (false, _) => "too large: at most 2^32 - 1",
                },
            }),
        }
    }

    /// The number of elements buffer argument `index` must hold for a launch with these
    /// arguments and problem size: its declared length ([`crate::kernel_def::ArgDef::len`]), else the
    /// product of the problem size's axes. `None` for scalars.
    pub fn buffer_len_for(
        &self,
        index: usize,
        args: &dyn ArgValues,
        problem_size: &[i64; 3],
        device: Option<&DeviceInfo>,
    ) -> Result<Option<u64>, DefError> {
        let Some(a) = self.args.get(index).filter(|a| a.kind == ArgKind::Buffer) else {
            return Ok(None);
        };
        let bad = |expr: String, value: String| DefError::BadValue {
            kernel: self.kernel_name.clone(),
            what: format!("length of `{}`", a.name),
            expr,
            value,
            reason: "expected a length >= 0",
        };
        match &a.len {
            Some(e) => {
                let scope = DefScope {
                    args: Some(args),
                    problem_size: Some(problem_size),
                    device,
                    ..DefScope::new(self)
                };
                // The error's text is built only on failure: this runs on every launch.
                let v = e.eval_int(&scope).map_err(|source| DefError::Eval {
                    kernel: self.kernel_name.clone(),
                    what: format!("length of `{}`", a.name),
                    expr: e.to_string(),
                    source: Box::new(source),
                })?;
                u64::try_from(v)
                    .map(Some)
                    .map_err(|_| bad(e.to_string(), v.to_string()))
            }
            None => problem_size
                .iter()
                .try_fold(1u64, |acc, &v| acc.checked_mul(u64::try_from(v).ok()?))
                .map(Some)
                .ok_or_else(|| bad("problem size".into(), format!("{problem_size:?}"))),
        }
    }

    /// The first buffer argument of a launch holding fewer elements than the launch needs
    /// ([`KernelDef::buffer_len_for`]): `(index, elements held, elements needed)`.
    /// Allocation-free on success: every launch checks its buffers with it.
    pub fn first_short_buffer(
        &self,
        args: &[KernelArg<'_>],
        problem_size: &[i64; 3],
        device: Option<&DeviceInfo>,
    ) -> Result<Option<(usize, usize, u64)>, DefError> {
        let view = ArgView(args);
        for (index, a) in args.iter().enumerate() {
            let KernelArg::Buffer { len, .. } = a else {
                continue;
            };
            let required = self
                .buffer_len_for(index, &view, problem_size, device)?
                .unwrap_or(0);
            if (*len as u64) < required {
                return Ok(Some((index, *len, required)));
            }
        }
        Ok(None)
    }

    /// The elements a capture copies of each argument (0 for scalars): the whole buffer, its
    /// true length, whatever length is declared or derived. A declared length (or the default,
    /// the problem size's product) only says what the launch needs at least: a kernel may
    /// read past it (an `A` of m·k elements whose undeclared length defaults to m·n), and a
    /// capture cut to it would replay other data than the launch saw. Evaluates every length
    /// expression (their errors are this function's).
    pub fn buffer_lens(
        &self,
        args: &[KernelArg<'_>],
        problem_size: &[i64; 3],
        device: Option<&DeviceInfo>,
    ) -> Result<Vec<u64>, DefError> {
        let view = ArgView(args);
        (0..args.len())
            .map(|i| {
                // Evaluated for its errors; launches check the buffer against it first.
                self.buffer_len_for(i, &view, problem_size, device)?;
                Ok(match &args[i] {
                    KernelArg::Buffer { len, .. } => *len as u64,
                    KernelArg::Scalar(_) => 0,
                })
            })
            .collect()
    }

    /// The problem size of a launch: each axis evaluated over the arguments (missing axes
    /// are 1). Allocation-free on success.
    pub fn problem_size_for(
        &self,
        args: &dyn ArgValues,
        device: Option<&DeviceInfo>,
    ) -> Result<[i64; 3], DefError> {
        let scope = DefScope {
            args: Some(args),
            device,
            ..DefScope::new(self)
        };
        let mut out = [1i64; 3];
        for (axis, e) in self.problem_size.iter().enumerate().take(3) {
            let v = self.eval_int_in("problem_size", Some(axis), e, &scope)?;
            if v < 0 {
                return Err(DefError::BadValue {
                    kernel: self.kernel_name.clone(),
                    what: format!("problem_size{}", AXES[axis]),
                    expr: e.to_string(),
                    value: v.to_string(),
                    reason: "expected a size >= 0",
                });
            }
            out[axis] = v;
        }
        Ok(out)
    }

    /// The launch geometry for a configuration and problem size. Allocation-free on success.
    pub fn geometry(
        &self,
        config: &Config,
        problem_size: &[i64; 3],
        args: Option<&dyn ArgValues>,
        device: Option<&DeviceInfo>,
    ) -> Result<Geometry, DefError> {
        let scope = DefScope {
            def: self,
            config: Some(config),
            args,
            problem_size: Some(problem_size),
            device,
        };
        let mut block = [1u32; 3];
        for (axis, e) in self.block_size.iter().enumerate() {
            block[axis] = self.positive_u32("block_size", Some(axis), e, &scope, false)?;
        }
        let mut grid = [1u32; 3];
        match &self.grid {
            Grid::Blocks(g) => {
                for (axis, e) in g.iter().enumerate() {
                    grid[axis] = self.positive_u32("grid_size", Some(axis), e, &scope, true)?;
                }
            }
            Grid::Divisors(d) => {
                for (axis, e) in d.iter().enumerate() {
                    let div = self.positive_u32("grid_divisors", Some(axis), e, &scope, false)?;
                    let blocks = (problem_size[axis] as u64).div_ceil(u64::from(div));
                    grid[axis] = u32::try_from(blocks).map_err(|_| DefError::BadValue {
                        kernel: self.kernel_name.clone(),
                        what: format!("grid size{}", AXES[axis]),
                        expr: e.to_string(),
                        value: blocks.to_string(),
                        reason: "too many blocks",
                    })?;
                }
            }
        }
        let shared_memory_bytes =
            self.positive_u32("shared_memory", None, &self.shared_memory, &scope, true)?;
        let local_args = self.local_args_in(&scope)?;
        Ok(Geometry {
            grid,
            block,
            shared_memory_bytes,
            local_args,
        })
    }

    /// The `-D` defines of a configuration: every tuning parameter (when
    /// [`KernelDef::params_as_defines`]) then the declared defines, as `(name, C text)`.
    pub fn defines_for(
        &self,
        config: &Config,
        device: Option<&DeviceInfo>,
    ) -> Result<Vec<(String, String)>, DefError> {
        let scope = DefScope {
            config: Some(config),
            device,
            ..DefScope::new(self)
        };
        let mut out = Vec::new();
        if self.params_as_defines {
            for (name, v) in config.iter() {
                out.push((name.to_string(), v.c_literal()));
            }
        }
        for (name, e) in &self.defines {
            let v = e.eval(&scope).map_err(|source| DefError::Eval {
                kernel: self.kernel_name.clone(),
                what: format!("define {name}"),
                expr: e.to_string(),
                source: Box::new(source),
            })?;
            out.retain(|(n, _)| n != name);
            out.push((name.clone(), v.c_literal()));
        }
        Ok(out)
    }

    /// The template arguments of a configuration, as C++ text (CUDA).
    pub fn template_args_for(
        &self,
        config: &Config,
        device: Option<&DeviceInfo>,
    ) -> Result<Vec<String>, DefError> {
        let scope = DefScope {
            config: Some(config),
            device,
            ..DefScope::new(self)
        };
        self.template_args
            .iter()
            .enumerate()
            .map(|(i, e)| {
                e.eval(&scope)
                    .map(|v| v.c_literal())
                    .map_err(|source| DefError::Eval {
                        kernel: self.kernel_name.clone(),
                        what: format!("template_args[{i}]"),
                        expr: e.to_string(),
                        source: Box::new(source),
                    })
            })
            .collect()
    }

    /// The declared tuning space, with device attributes in restrictions resolved for
    /// `device`: the restrictions that depend on the launch (problem size, arguments) are
    /// left out ([`KernelDef::space_at`] has them; see [`crate::kernel_def::launch_check`]).
    pub fn space(&self, device: Option<&DeviceInfo>) -> Result<TuningSpace, DefError> {
        let scope = DefScope {
            device,
            ..DefScope::new(self)
        };
        TuningSpace::with_scope(self.parameters.clone(), self.static_restrictions(), &scope)
            .map_err(|source| DefError::Space {
                kernel: self.kernel_name.clone(),
                source: Box::new(source),
            })
    }

    /// The default configuration (every parameter at its default).
    pub fn default_config(&self) -> Config {
        Config(
            self.parameters
                .iter()
                .map(|p| (p.name.clone(), p.default.clone()))
                .collect(),
        )
    }
}

/// A launch's arguments as definition expressions see them ([`ArgValues`]): a scalar's value,
/// a buffer's element count.
///
/// #[derive(Clone, Copy)]
pub struct ArgView<'a>(pub &'a [KernelArg<'a>]);

impl ArgValues for ArgView<'_> {
    fn arg_value(&self, index: usize) -> Option<crate::value::Value> {
        match self.0.get(index)? {
            KernelArg::Buffer { len, .. } => {
                Some(crate::value::Value::Int(i64::try_from(*len).ok()?))
            }
            KernelArg::Scalar(s) => Some(s.to_value()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::test_device;
    use crate::kernel_def::sample_def;

    #[test]
    fn problem_size_geometry_and_defines() {
        let def = sample_def();
        let args = vec![
            Value::Int(1000),
            Value::Int(1000),
            Value::Int(1000),
            Value::Int(1000),
        ];
        let ps = def.problem_size_for(&args, None).unwrap();
        assert_eq!(ps, [1000, 1, 1]);
        let mut c = def.default_config();
        c.set("elems_per_thread", 4);
        let g = def.geometry(&c, &ps, None, None).unwrap();
        assert_eq!(g.block, [128, 1, 1]);
        assert_eq!(g.grid, [2, 1, 1]); // div_ceil(1000, 512)
        assert_eq!(g.shared_memory_bytes, 0);
        let d = def.defines_for(&c, None).unwrap();
        assert_eq!(
            d,
            vec![
                ("block_size_x".to_string(), "128".to_string()),
                ("elems_per_thread".to_string(), "4".to_string()),
                ("ELEMS".to_string(), "4".to_string()),
            ]
        );
        assert_eq!(def.space(Some(&test_device())).unwrap().len(), 11);
    }

    #[test]
    fn bad_values_are_errors_not_panics() {
        let mut def = sample_def();
        def.block_size[0] = crate::expr::param("block_size_x") - 1000;
        let c = def.default_config();
        let err = def.geometry(&c, &[10, 1, 1], None, None).unwrap_err();
        assert!(err.to_string().contains("block_size[0]"), "{err}");
        let err = def
            .problem_size_for(&vec![Value::Int(1)], None)
            .unwrap_err();
        assert!(err.to_string().contains("unknown argument"), "{err}");
    }
}
