//! [`WisdomKernel`]: a tunable kernel bound to a device, launched by its arguments.
//!
//! The kernel's phases, one file each: `select.rs` (which configuration a problem size
//! uses), `compile.rs` (each configuration compiled once; a new size prepared once),
//! `launch.rs` (the launch paths: memo, full path, capture, fallback; explicit and timed
//! launches), with `options.rs` ([`LaunchOptions`]), `shape_memo.rs` (the hot path's
//! lookups), `symbols.rs` (constant-memory symbols) and `online.rs` (sizes tuned online).
//! This file holds the type, its constructor, its accessors and the argument checks.

use crate::error::Error;
use crate::wisdom::{search_path, WisdomSource};
use kw_core::backend::{BackendError, CompiledKernel, Device, DeviceEvent, KernelArg};
use kw_core::device::BackendKind;
use kw_core::kernel_def::eval::{ArgValues, ArgView};
use kw_core::{
    config::Config, expr::Expr, kernel_def::eval::DefError, kernel_def::eval::Geometry,
    kernel_def::ArgKind, kernel_def::KernelDef, space::TuningSpace,
};
use shape_memo::{FastMap, ShapeMemo};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};

mod compile;
mod launch;
mod online;
mod options;
mod select;
mod shape_memo;
mod symbols;

pub use options::{LaunchOptions, Launched};

/// A function that may pick a configuration for a problem size (the wisdom layer installs
/// one); `None` means "use the default".
pub type ConfigSelector = dyn Fn(&[i64; 3]) -> Option<Config> + Send + Sync;

/// A configuration that failed and was replaced by the default.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigFailure {
    /// The configuration that failed.
    pub config: Config,
    /// The problem size it was selected for.
    pub problem_size: [i64; 3],
    /// What went wrong (for compile errors: with the build log).
    pub error: String,
}

/// What a problem size launches: a configuration, its compiled kernel and (when the geometry
/// does not depend on argument values) its geometry.
struct Selected {
    config: Config,
    kernel: Arc<dyn CompiledKernel>,
    geometry: Option<Geometry>,
    /// The selection found a wisdom record for exactly this device and problem size (capture
    /// then needs `KW_CAPTURE_FORCE`). The wisdom selection sets it; `false` until then.
    exact_wisdom: bool,
    /// Online tuning of this size (`KW_TUNE=online`): its launches take the full path.
    watch: Option<Arc<crate::online::watch::Watch>>,
}

/// The launch arguments as expressions see them: buffers as element counts, scalars as values.
type CompileResult = Result<Arc<dyn CompiledKernel>, BackendError>;
/// A launch's completion, where the backend gives one.
type Event = Box<dyn DeviceEvent>;

/// One configuration's compile: empty while it runs, then its result for good. Threads that
/// need the configuration meanwhile wait on this cell only.
type CompileSlot = Arc<OnceLock<CompileResult>>;

/// Held by the thread that selects and compiles a new problem size; other threads asking for
/// the same size wait on it, then find the size prepared.
type SizeSlot = Arc<Mutex<()>>;

/// A tunable kernel on one device. [`WisdomKernel::launch`] derives the problem size from
/// the arguments, selects a configuration for it ([`WisdomKernel::select_config`]), compiles
/// it once per configuration and launches it.
///
/// After the first launch of a problem size, a launch checks the arguments, evaluates the
/// problem size, looks the size up under a read lock (shared by all threads, never held
/// while compiling) and enqueues: no allocation, no file access, no compiler.
///
/// Under load: a new problem size is selected once (threads launching the same new size
/// meanwhile wait for that selection and its compile, nothing else); each configuration is
/// compiled once, outside any shared lock, so configurations compile in parallel and a new
/// size whose configuration is already compiled never waits for another configuration's
/// compile.
///
/// Failure policy: if the selected configuration fails to compile or launch, the failure is
/// reported as a warning (`KW_LOG`), remembered ([`WisdomKernel::failures`]) and the default configuration is
/// used for that problem size from then on. Only a failing default is an error.
///
/// ```no_run
/// use kernel_wisdom::{demo_kernels, open_default_device, DeviceBuffer, LaunchOptions, WisdomKernel};
///
/// # fn main() -> Result<(), kernel_wisdom::Error> {
/// let device = open_default_device()?;
/// let kernel = WisdomKernel::new(demo_kernels::opencl::vector_add()?, device.clone())?;
/// let n = 100_000;
/// let a = DeviceBuffer::from_slice(device.as_ref(), &vec![1.5f32; n])?;
/// let b = DeviceBuffer::from_slice(device.as_ref(), &vec![2.0f32; n])?;
/// let c = DeviceBuffer::<f32>::new(device.as_ref(), n)?;
/// // Arguments in declaration order: buffers by reference, scalars by value.
/// kernel.launch(&[c.arg(), a.arg(), b.arg(), (n as i32).into()])?;
/// assert!(c.to_vec()?.iter().all(|&x| x == 3.5));
///
/// // Another configuration, explicitly (what a tuner does); errors carry the build log.
/// let mut config = kernel.default_config().clone();
/// config.set("elems_per_thread", 4);
/// let args = [c.arg(), a.arg(), b.arg(), (n as i32).into()];
/// kernel.launch_with(&args, LaunchOptions::new().config(&config))?;
/// # Ok(()) }
/// ```
pub struct WisdomKernel {
    def: Arc<KernelDef>,
    /// `def` with argument names resolved to indices: what launches evaluate (the problem
    /// size, buffer lengths, geometry); a failure is evaluated again on `def`, whose text the
    /// error then quotes.
    launch_def: KernelDef,
    device: Arc<dyn Device>,
    space: TuningSpace,
    default_config: Config,
    geometry_uses_args: bool,
    /// Some restriction depends on the launch (problem size or arguments).
    launch_restricted: bool,
    /// Some restriction mentions an argument.
    args_restricted: bool,
    selector: Option<Arc<ConfigSelector>>,
    /// The application's wisdom directory (`None`: `./wisdom`).
    wisdom_dir: Option<std::path::PathBuf>,
    /// The wisdom, loaded at first use (so that `with_wisdom_dir` loads and reports only the
    /// directories actually searched).
    wisdom: OnceLock<WisdomSource>,
    /// Wisdom files embedded in the program (`(label, JSON)`), searched after the path.
    embedded: Vec<(String, &'static str)>,
    /// Problem size -> what launches of that size use.
    by_size: RwLock<FastMap<[i64; 3], Arc<Selected>>>,
    /// Argument shapes launched before -> their checked problem size and selection.
    by_shape: ShapeMemo<([i64; 3], Arc<Selected>)>,
    /// Problem sizes being prepared right now (removed when prepared).
    preparing: Mutex<HashMap<[i64; 3], SizeSlot>>,
    /// Configuration key -> its compile (running or done). The lock only guards the map.
    compiled: Mutex<HashMap<String, CompileSlot>>,
    failures: Mutex<Vec<ConfigFailure>>,
    /// The constant-memory symbols' contents, and the modules they were written into.
    symbols: symbols::Symbols,
}

impl WisdomKernel {
    /// Binds a definition to a device, checking it against the device's limits. The wisdom
    /// files are read at the first selection (the first launch, or [`WisdomKernel::choice`] /
    /// [`WisdomKernel::wisdom`]), from the directories in effect then
    /// ([`WisdomKernel::with_wisdom_dir`]); their problems are reported at that point.
    pub fn new(def: KernelDef, device: Arc<dyn Device>) -> Result<WisdomKernel, Error> {
        let info = device.info();
        if def.backend != info.backend {
            return Err(Error::BackendMismatch {
                kernel: def.kernel_name.clone(),
                def: def.backend,
                device: info.backend,
            });
        }
        let problems = def.check(Some(info));
        if !problems.is_empty() {
            return Err(Error::Definition {
                kernel: def.kernel_name.clone(),
                problems,
            });
        }
        let space = def.space(Some(info))?;
        let mut geometry_uses_args = false;
        let geometry_exprs = def.block_size.iter().chain(match &def.grid {
            kw_core::kernel_def::Grid::Blocks(g) | kw_core::kernel_def::Grid::Divisors(g) => {
                g.iter()
            }
        });
        let local_lens = def.local_args.iter().map(|l| &l.len);
        for e in geometry_exprs
            .chain(std::iter::once(&def.shared_memory))
            .chain(local_lens)
        {
            e.visit(&mut |n| geometry_uses_args |= matches!(n, Expr::Arg(_)));
        }
        let default_config = def.default_config();
        let launch_restricted = def.has_launch_restrictions();
        let args_restricted = def.launch_restrictions_use_args();
        Ok(WisdomKernel {
            default_config,
            launch_def: def.with_arg_names_resolved(),
            wisdom_dir: None,
            wisdom: OnceLock::new(),
            embedded: Vec::new(),
            def: Arc::new(def),
            device,
            space,
            geometry_uses_args,
            launch_restricted,
            args_restricted,
            selector: None,
            by_size: RwLock::new(FastMap::default()),
            by_shape: ShapeMemo::new(),
            preparing: Mutex::new(HashMap::new()),
            compiled: Mutex::new(HashMap::new()),
            failures: Mutex::new(Vec::new()),
            symbols: symbols::Symbols::default(),
        })
    }

    /// Sets the constant-memory symbol `name` (declared with
    /// [`KernelBuilder::constant_symbol`](crate::KernelBuilder::constant_symbol)) to `data`:
    /// written into every configuration's module compiled so far, at once (after the work
    /// already on the device's own stream), and into each module compiled later before its
    /// first launch. Launches enqueued after this call read it; a capture records it. Every
    /// declared symbol must be set before the first launch. `data` may be shorter than the
    /// symbol (the rest keeps its contents), never longer.
    pub fn set_symbol<T: kw_core::scalar::Scalar>(
        &self,
        name: &str,
        data: &[T],
    ) -> Result<(), Error> {
        self.set_symbol_value(kw_core::scalar::SymbolValue::new(name, data))
    }

    /// [`WisdomKernel::set_symbol`] with the contents as a [`SymbolValue`] (element type and
    /// bytes; what the C API passes).
    ///
    /// [`SymbolValue`]: kw_core::scalar::SymbolValue
    pub fn set_symbol_value(&self, value: kw_core::scalar::SymbolValue) -> Result<(), Error> {
        let name = value.name.clone();
        self.symbols
            .set(&self.def, self.device.as_ref(), value)
            .map_err(|message| Error::Symbol {
                kernel: self.def.kernel_name.clone(),
                name,
                message,
            })
    }

    /// Refuses a launch while a declared constant symbol is not set.
    #[inline]
    fn check_symbols_set(&self) -> Result<(), Error> {
        match self.symbols.first_unset(&self.def) {
            None => Ok(()),
            Some(name) => Err(Error::Symbol {
                kernel: self.def.kernel_name.clone(),
                name: name.to_string(),
                message: "is not set: call `set_symbol` before the first launch".into(),
            }),
        }
    }

    /// Installs the function that picks a configuration per problem size (the wisdom layer's
    /// hook). Configurations it returns that are not in the tuning space are ignored with a
    /// warning. Problem sizes already launched keep their configuration.
    pub fn with_selector(
        mut self,
        selector: impl Fn(&[i64; 3]) -> Option<Config> + Send + Sync + 'static,
    ) -> WisdomKernel {
        self.selector = Some(Arc::new(selector));
        self
    }

    /// Adds a wisdom file embedded in the program (`json`, the text of a `KEY.json` wisdom
    /// file; `label` names it in messages), searched after the directories of the search
    /// path: an application with no wisdom files on disk still selects its records, and a
    /// file on the path wins over it where both match at the same selection step.
    pub fn with_embedded_wisdom(mut self, label: &str, json: &'static str) -> WisdomKernel {
        self.embedded.push((label.to_string(), json));
        self.wisdom = OnceLock::new();
        self
    }

    /// Uses `dir` as the application's wisdom directory (searched after `KW_WISDOM_PATH`)
    /// instead of `./wisdom`. Problem sizes already launched keep their configuration.
    pub fn with_wisdom_dir(mut self, dir: impl AsRef<std::path::Path>) -> WisdomKernel {
        self.wisdom_dir = Some(dir.as_ref().to_path_buf());
        self.wisdom = OnceLock::new();
        self
    }

    /// The wisdom loaded for this kernel (file and records).
    pub fn wisdom(&self) -> &WisdomSource {
        self.wisdom.get_or_init(|| {
            WisdomSource::load_with(
                &self.def.tuning_key,
                &search_path(self.wisdom_dir.as_deref()),
                &self.embedded,
                self.device.info(),
                &self.space,
                &self.default_config,
            )
        })
    }

    /// The definition.
    pub fn def(&self) -> &KernelDef {
        &self.def
    }

    /// The backend of the kernel's device (and definition).
    #[inline]
    pub fn backend(&self) -> BackendKind {
        self.launch_def.backend
    }

    /// The device.
    pub fn device(&self) -> &Arc<dyn Device> {
        &self.device
    }

    /// The tuning space (restrictions resolved for this device).
    pub fn space(&self) -> &TuningSpace {
        &self.space
    }

    /// The default configuration.
    pub fn default_config(&self) -> &Config {
        &self.default_config
    }

    /// The configurations that failed and were replaced by the default.
    pub fn failures(&self) -> Vec<ConfigFailure> {
        self.failures
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many configurations were compiled (or failed to compile) so far; compiles still
    /// running are not counted.
    pub fn compiled_count(&self) -> usize {
        self.compiled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .filter(|slot| slot.get().is_some())
            .count()
    }

    /// The configuration that a launch of this problem size uses (once launched).
    pub fn config_for(&self, problem_size: &[i64; 3]) -> Option<Config> {
        let map = self.by_size.read().unwrap_or_else(PoisonError::into_inner);
        map.get(problem_size).map(|s| s.config.clone())
    }

    /// The problem size of a launch with these arguments.
    pub fn problem_size(&self, args: &[KernelArg<'_>]) -> Result<[i64; 3], Error> {
        self.check_args(args)?;
        let info = Some(self.device.info());
        self.evaluate(|def| def.problem_size_for(&ArgView(args), info))
    }

    /// Evaluates launch-time expressions with `f` on the definition whose argument names are
    /// resolved to indices; if that fails, again on the definition as written, so that the
    /// error quotes the user's text.
    #[inline]
    fn evaluate<T>(&self, f: impl Fn(&KernelDef) -> Result<T, DefError>) -> Result<T, Error> {
        f(&self.launch_def).or_else(|_| Ok(f(&self.def)?))
    }

    /// The launch geometry of `config` ([`WisdomKernel::evaluate`]); a configuration that
    /// needs more than the device has (local memory) is an invalid configuration, as the
    /// backend's own check at the launch says for the kernel's own local arrays.
    fn config_geometry(
        &self,
        config: &Config,
        ps: &[i64; 3],
        values: Option<&dyn ArgValues>,
    ) -> Result<Geometry, Error> {
        let info = Some(self.device.info());
        self.launch_def
            .geometry(config, ps, values, info)
            .or_else(|_| self.def.geometry(config, ps, values, info))
            .map_err(|e| match e {
                DefError::DeviceLimit { .. } => Error::InvalidConfig {
                    kernel: self.def.kernel_name.clone(),
                    config: config.key(),
                    reason: e.to_string(),
                },
                e => Error::Eval(e),
            })
    }

    /// The problem size, after checking the arguments and every buffer's length.
    fn checked_problem_size(&self, args: &[KernelArg<'_>]) -> Result<[i64; 3], Error> {
        self.check_symbols_set()?;
        let ps = self.problem_size(args)?;
        let info = Some(self.device.info());
        let short = self.evaluate(|def| def.first_short_buffer(args, &ps, info))?;
        match short {
            Some((index, len, required)) => Err(self.too_short(index, len, required)),
            None => Ok(ps),
        }
    }

    #[cold]
    fn too_short(&self, index: usize, len: usize, required: u64) -> Error {
        let d = &self.def.args[index];
        Error::BufferTooShort {
            kernel: self.def.kernel_name.clone(),
            index,
            name: d.name.clone(),
            len,
            required,
            length: d.len.as_ref().map_or_else(
                || "by default the problem size's product; declare it with `buffer_len`".into(),
                |e| format!("its declared length `{e}`"),
            ),
        }
    }

    /// Checks the arguments against the declaration (count, buffer/scalar, element type).
    fn check_args(&self, args: &[KernelArg<'_>]) -> Result<(), Error> {
        if args.len() != self.def.args.len() {
            return Err(Error::ArgumentCount {
                kernel: self.def.kernel_name.clone(),
                given: args.len(),
                expected: self.def.args.len(),
            });
        }
        for (index, (a, d)) in args.iter().zip(&self.def.args).enumerate() {
            let kind_ok = matches!(
                (a, d.kind),
                (KernelArg::Buffer { .. }, ArgKind::Buffer)
                    | (KernelArg::Scalar(_), ArgKind::Scalar)
            );
            if !kind_ok || a.scalar_type() != d.ty {
                let expected = match d.kind {
                    ArgKind::Buffer => format!("buffer of {}", d.ty),
                    ArgKind::Scalar => format!("scalar {}", d.ty),
                };
                return Err(Error::Argument {
                    kernel: self.def.kernel_name.clone(),
                    index,
                    name: d.name.clone(),
                    expected,
                    got: a.describe(),
                });
            }
        }
        Ok(())
    }
}
