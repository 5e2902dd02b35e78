//! [`KernelBuilder`]: how an application declares a tunable kernel. The declaration is this
//! file; `source.rs` holds [`Source`] (files or text) and `build.rs` turns a declaration into a
//! checked definition ([`KernelBuilder::build`]).

use kw_core::expr::{lit, param};
use kw_core::kernel_def::check::DefProblem;
use kw_core::kernel_def::{LocalArgDef, SymbolDef};
use kw_core::tolerance::Tolerance;
use kw_core::{
    device::BackendKind, expr::Expr, kernel_def::Access, kernel_def::ArgDef, kernel_def::ArgKind,
    kernel_def::Grid, scalar::Scalar, scalar::ScalarType, space::Parameter, value::Value,
};
use std::collections::BTreeMap;
use std::path::PathBuf;

mod build;
mod source;

pub use source::Source;

/// Declares a tunable kernel: its source, tuning parameters, restrictions, launch geometry
/// and arguments, all as [`Expr`]essions over parameters, arguments and device attributes.
/// [`KernelBuilder::build`] checks everything and reports every problem at once.
///
/// ```no_run
/// use kernel_wisdom::{arg, KernelBuilder, Source, WisdomKernel, DeviceBuffer, open_default_device};
///
/// # fn main() -> Result<(), kernel_wisdom::Error> {
/// let mut b = KernelBuilder::new("vector_add", Source::file("kernels/vector_add.cl"));
/// let bx = b.tune("block_size_x", [32, 64, 128, 256], 128);
/// let ept = b.tune("elems_per_thread", [1, 2, 4], 1);
/// b.restriction((bx.clone() * ept.clone()).le(1024))
///     .problem_size([arg("n")])
///     .block_size(bx.clone(), 1, 1)
///     .grid_divisors(bx * ept, 1, 1)
///     .output::<f32>("c")
///     .input::<f32>("a")
///     .input::<f32>("b")
///     .scalar::<i32>("n");
/// let def = b.build()?;
///
/// let device = open_default_device()?; // KW_DEVICE=index or name substring
/// let kernel = WisdomKernel::new(def, device.clone())?;
/// let n = 1 << 20;
/// let a = DeviceBuffer::from_slice(device.as_ref(), &vec![1.0f32; n])?;
/// let b = DeviceBuffer::from_slice(device.as_ref(), &vec![2.0f32; n])?;
/// let c = DeviceBuffer::<f32>::new(device.as_ref(), n)?;
/// kernel.launch(&[c.arg(), a.arg(), b.arg(), (n as i32).into()])?;
/// assert_eq!(c.to_vec()?[0], 3.0);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct KernelBuilder {
    kernel_name: String,
    source: Source,
    backend: Option<BackendKind>,
    include_dirs: Vec<PathBuf>,
    params: Vec<Parameter>,
    restrictions: Vec<Expr>,
    problem_size: Vec<Expr>,
    block_size: [Expr; 3],
    grid: Option<Grid>,
    shared_memory: Expr,
    defines: BTreeMap<String, Expr>,
    params_as_defines: bool,
    template_args: Vec<Expr>,
    compiler_flags: Vec<String>,
    tuning_key: Option<String>,
    args: Vec<ArgDef>,
    buffer_lens: Vec<(String, Expr)>,
    tolerances: Vec<(String, Tolerance)>,
    objective: Option<kw_core::objective::ObjectiveDef>,
    local_args: Vec<LocalArgDef>,
    symbols: Vec<SymbolDef>,
    headers: Vec<kw_core::kernel_def::Header>,
    problems: Vec<DefProblem>,
}

impl KernelBuilder {
    /// A builder for kernel function `kernel_name` in `source`.
    pub fn new(kernel_name: impl Into<String>, source: Source) -> KernelBuilder {
        KernelBuilder {
            kernel_name: kernel_name.into(),
            source,
            backend: None,
            include_dirs: Vec::new(),
            params: Vec::new(),
            restrictions: Vec::new(),
            problem_size: Vec::new(),
            block_size: [lit(1), lit(1), lit(1)],
            grid: None,
            shared_memory: lit(0),
            defines: BTreeMap::new(),
            params_as_defines: true,
            template_args: Vec::new(),
            compiler_flags: Vec::new(),
            tuning_key: None,
            args: Vec::new(),
            buffer_lens: Vec::new(),
            tolerances: Vec::new(),
            objective: None,
            local_args: Vec::new(),
            symbols: Vec::new(),
            headers: Vec::new(),
            problems: Vec::new(),
        }
    }

    /// Sets the backend (by default: `.cu`/`.cuh` files are CUDA, everything else OpenCL).
    pub fn backend(&mut self, backend: BackendKind) -> &mut Self {
        self.backend = Some(backend);
        self
    }

    /// Adds a directory searched for `#include "..."` files (the source file's own directory
    /// is always searched). Included headers are embedded in the definition.
    pub fn include_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.include_dirs.push(dir.into());
        self
    }

    /// Declares a tuning parameter and returns an expression referring to it.
    pub fn tune<V: Into<Value>>(
        &mut self,
        name: &str,
        values: impl IntoIterator<Item = V>,
        default: impl Into<Value>,
    ) -> Expr {
        self.params
            .push(Parameter::new(name, values).with_default(default));
        param(name)
    }

    /// Declares a tuning parameter that is also passed as a define of the same name (the
    /// default for every parameter unless [`KernelBuilder::params_as_defines`] is off).
    pub fn tune_define<V: Into<Value>>(
        &mut self,
        name: &str,
        values: impl IntoIterator<Item = V>,
        default: impl Into<Value>,
    ) -> Expr {
        let p = self.tune(name, values, default);
        self.defines.insert(name.to_string(), p.clone());
        p
    }

    /// Whether every tuning parameter is passed as a define (on by default).
    pub fn params_as_defines(&mut self, on: bool) -> &mut Self {
        self.params_as_defines = on;
        self
    }

    /// Adds a restriction every configuration must satisfy. It may mention the problem size
    /// and the arguments (`problem_size(0) % param("MWG")`): then it is checked per launch
    /// ([`kw_core::kernel_def::launch_check`]): selection only uses configurations valid at the launch, and
    /// a launch where not even the default is valid is an [`Error::NoValidConfig`](crate::Error::NoValidConfig).
    pub fn restriction(&mut self, e: impl Into<Expr>) -> &mut Self {
        self.restrictions.push(e.into());
        self
    }

    /// Adds a restriction written as text (`"32 <= block_size_x * block_size_y <= 1024"`,
    /// Kernel Tuner's Python style is accepted). A parse error is reported by `build`.
    pub fn restriction_text(&mut self, text: &str) -> &mut Self {
        match Expr::parse(text) {
            Ok(e) => self.restrictions.push(e),
            Err(err) => self.problems.push(DefProblem {
                location: format!("restriction `{text}`"),
                message: err.to_string(),
            }),
        }
        self
    }

    /// The problem size: 1 to 3 expressions over the arguments (`arg("n")`).
    pub fn problem_size<E: Into<Expr>>(&mut self, axes: impl IntoIterator<Item = E>) -> &mut Self {
        self.problem_size = axes.into_iter().map(Into::into).collect();
        self
    }

    /// The block (work-group) size.
    pub fn block_size(
        &mut self,
        x: impl Into<Expr>,
        y: impl Into<Expr>,
        z: impl Into<Expr>,
    ) -> &mut Self {
        self.block_size = [x.into(), y.into(), z.into()];
        self
    }

    /// The grid as a number of blocks per axis.
    pub fn grid_size(
        &mut self,
        x: impl Into<Expr>,
        y: impl Into<Expr>,
        z: impl Into<Expr>,
    ) -> &mut Self {
        self.grid = Some(Grid::Blocks([x.into(), y.into(), z.into()]));
        self
    }

    /// The grid as divisors of the problem size: `blocks = div_ceil(problem_size, divisor)`.
    /// Without `grid_size` or `grid_divisors`, the divisors are the block size.
    pub fn grid_divisors(
        &mut self,
        x: impl Into<Expr>,
        y: impl Into<Expr>,
        z: impl Into<Expr>,
    ) -> &mut Self {
        self.grid = Some(Grid::Divisors([x.into(), y.into(), z.into()]));
        self
    }

    /// Dynamic shared (local) memory per block in bytes. OpenCL kernels receive it as a
    /// trailing `__local` pointer parameter (see the `kw-opencl` crate).
    pub fn shared_memory(&mut self, bytes: impl Into<Expr>) -> &mut Self {
        self.shared_memory = bytes.into();
        self
    }

    /// A preprocessor define `-DNAME=VALUE` whose value is an expression (parameters and
    /// device attributes only: defines are fixed at compile time).
    pub fn define(&mut self, name: &str, value: impl Into<Expr>) -> &mut Self {
        self.defines.insert(name.to_string(), value.into());
        self
    }

    /// Template arguments (CUDA).
    pub fn template_args<E: Into<Expr>>(&mut self, args: impl IntoIterator<Item = E>) -> &mut Self {
        self.template_args = args.into_iter().map(Into::into).collect();
        self
    }

    /// Extra compiler flags.
    pub fn compiler_flags<S: Into<String>>(
        &mut self,
        flags: impl IntoIterator<Item = S>,
    ) -> &mut Self {
        self.compiler_flags
            .extend(flags.into_iter().map(Into::into));
        self
    }

    /// The tuning key naming this kernel in captures and wisdom (default: the kernel name).
    pub fn tuning_key(&mut self, key: impl Into<String>) -> &mut Self {
        self.tuning_key = Some(key.into());
        self
    }

    /// Declares the next argument: a buffer of `T` with the given access.
    pub fn buffer<T: Scalar>(&mut self, name: &str, access: Access) -> &mut Self {
        self.buffer_of(name, T::TYPE, access)
    }

    /// Declares the next argument: a buffer of elements of type `ty` (known at run time, as
    /// in the C API) with the given access.
    pub fn buffer_of(&mut self, name: &str, ty: ScalarType, access: Access) -> &mut Self {
        self.args.push(ArgDef {
            name: name.to_string(),
            ty,
            kind: ArgKind::Buffer,
            access,
            len: None,
            tolerance: None,
        });
        self
    }

    /// Declares the next argument: a buffer of `T` the kernel reads.
    pub fn input<T: Scalar>(&mut self, name: &str) -> &mut Self {
        self.buffer::<T>(name, Access::In)
    }

    /// Declares the next argument: a buffer of `T` the kernel writes.
    pub fn output<T: Scalar>(&mut self, name: &str) -> &mut Self {
        self.buffer::<T>(name, Access::Out)
    }

    /// Declares the next argument: a buffer of `T` the kernel reads and writes.
    pub fn inout<T: Scalar>(&mut self, name: &str) -> &mut Self {
        self.buffer::<T>(name, Access::InOut)
    }

    /// Declares the next argument: a scalar of type `T`.
    pub fn scalar<T: Scalar>(&mut self, name: &str) -> &mut Self {
        self.scalar_of(name, T::TYPE)
    }

    /// Declares the next argument: a scalar of type `ty` (known at run time).
    pub fn scalar_of(&mut self, name: &str, ty: ScalarType) -> &mut Self {
        self.args.push(ArgDef {
            name: name.to_string(),
            ty,
            kind: ArgKind::Scalar,
            access: Access::In,
            len: None,
            tolerance: None,
        });
        self
    }

    /// Makes `text` the header `#include "name"` finds (before any include directory):
    /// headers of sources held in memory ([`Source::text`]), embedded in the definition.
    pub fn header(&mut self, name: &str, text: &str) -> &mut Self {
        self.headers.retain(|h| h.name != name);
        self.headers.push(kw_core::kernel_def::Header {
            name: name.to_string(),
            text: text.to_string(),
        });
        self
    }

    /// Declares the next kernel parameter: a `__local` memory argument (OpenCL) of `len`
    /// elements of `T`, an expression over the tuning parameters, arguments and problem size
    /// (e.g. `param("block_size_x") * 2`). The runtime passes it itself at this position of
    /// the kernel's parameter list: the application's launch arguments leave it out. Any
    /// number (up to 8) may stand anywhere among the arguments.
    pub fn local<T: Scalar>(&mut self, name: &str, len: impl Into<Expr>) -> &mut Self {
        self.local_of(name, T::TYPE, len)
    }

    /// [`KernelBuilder::local`] with the element type known at run time (as in the C API).
    pub fn local_of(&mut self, name: &str, ty: ScalarType, len: impl Into<Expr>) -> &mut Self {
        let position = self.args.len() + self.local_args.len();
        self.local_args.push(LocalArgDef {
            name: name.to_string(),
            position,
            ty,
            len: len.into(),
        });
        self
    }

    /// Declares a constant-memory symbol of the source (CUDA: `__constant__ T name[len];` at
    /// namespace scope). Set its contents with
    /// [`WisdomKernel::set_symbol`](crate::WisdomKernel::set_symbol) before the first
    /// launch; every configuration's module gets them, and captures carry them.
    pub fn constant_symbol<T: Scalar>(&mut self, name: &str, len: u64) -> &mut Self {
        self.constant_symbol_of(name, T::TYPE, len)
    }

    /// [`KernelBuilder::constant_symbol`] with the element type known at run time.
    pub fn constant_symbol_of(&mut self, name: &str, ty: ScalarType, len: u64) -> &mut Self {
        self.symbols.push(SymbolDef {
            name: name.to_string(),
            ty,
            len,
        });
        self
    }

    /// Declares how many elements buffer argument `name` must hold: an expression over the
    /// arguments (`arg("n")`), the problem size and the device. A launch with a shorter
    /// buffer is an [`Error::BufferTooShort`](crate::Error::BufferTooShort) and launches nothing; capture records the whole
    /// buffer (at least this many elements). Without it, a buffer must hold the product of
    /// the problem size's axes. Naming an argument that is not a declared buffer is reported by
    /// [`KernelBuilder::build`].
    pub fn buffer_len(&mut self, name: &str, len: impl Into<Expr>) -> &mut Self {
        self.buffer_lens.push((name.to_string(), len.into()));
        self
    }

    /// Declares how `kw tune` compares output buffer `name` with the captured reference
    /// (`Tolerance { atol: 1e-2, ..Default::default() }`, `Tolerance::exact()`, NaN as an
    /// error): carried in captures and written into wisdom records; `kw tune --rtol/--atol/
    /// --nan-is-error` override it. Without it, floats compare with the default tolerance,
    /// scaled by the output's magnitude ([`kw_core::tolerance`]), integers exactly.
    pub fn tolerance(&mut self, name: &str, tolerance: Tolerance) -> &mut Self {
        // A NaN, infinite or negative bound would verify nothing (or everything) and could not
        // be written to a wisdom record: a problem of the definition, reported by `build`.
        if let Err(e) = tolerance.validate() {
            self.problems.push(DefProblem {
                location: format!("tolerance of `{name}`"),
                message: e.to_string(),
            });
        }
        self.tolerances.push((name.to_string(), tolerance));
        self
    }

    /// What tuning optimises instead of the median time: `name` (`"GFLOP/s"`) and an
    /// expression over `time` (milliseconds), the problem size and the tuning parameters
    /// (`"2 * problem_size.x * problem_size.y * problem_size.z / (time * 1e6)"`), to maximise
    /// or minimise ([`kw_core::objective`]). `kw tune --objective` overrides it.
    pub fn objective(&mut self, name: &str, text: &str, maximize: bool) -> &mut Self {
        match kw_core::objective::ObjectiveDef::parse(name, text, maximize) {
            Ok(o) => self.objective = Some(o),
            Err(e) => self.problems.push(DefProblem {
                location: format!("objective `{name}`"),
                message: e.to_string(),
            }),
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kw_core::expr::arg;
    use kw_core::kernel_def::KernelDef;

    fn declared(typed: bool) -> KernelDef {
        let mut b = KernelBuilder::new("k", Source::text("k.cl", "__kernel void k() {}"));
        b.problem_size([arg("n")]);
        if typed {
            b.output::<f32>("c").inout::<u8>("m").scalar::<i64>("n");
        } else {
            b.buffer_of("c", ScalarType::F32, Access::Out)
                .buffer_of("m", ScalarType::U8, Access::InOut)
                .scalar_of("n", ScalarType::I64);
        }
        b.build().expect("a valid definition")
    }

    #[test]
    fn runtime_typed_arguments_match_the_generic_ones() {
        let (generic, runtime) = (declared(true), declared(false));
        assert_eq!(generic.args, runtime.args);
        assert_eq!(runtime.args[1].ty, ScalarType::U8);
        assert_eq!(runtime.args[1].access, Access::InOut);
        assert_eq!(runtime.args[2].kind, ArgKind::Scalar);
    }

    /// A NaN, infinite or negative tolerance (the C API passes raw numbers) is a problem of the
    /// definition, named at `build`, not a record that cannot be written later.
    #[test]
    fn a_tolerance_that_is_not_a_bound_is_refused_at_build() {
        for (rtol, atol) in [(f64::NAN, 0.0), (1e-5, f64::INFINITY), (-1e-5, 0.0)] {
            let mut b = KernelBuilder::new("k", Source::text("k.cl", "__kernel void k() {}"));
            b.problem_size([arg("n")])
                .output::<f32>("c")
                .scalar::<i32>("n")
                .tolerance(
                    "c",
                    Tolerance {
                        rtol,
                        atol,
                        ..Tolerance::default()
                    },
                );
            let e = b.build().unwrap_err().to_string();
            assert!(e.contains("tolerance of `c`"), "{rtol} {atol}: {e}");
        }
    }
}
