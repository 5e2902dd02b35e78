//! [`WisdomKernel`]: a tunable kernel bound to a device, launched by its arguments.

use crate::capture;
use crate::error::Error;
use crate::launch_memo::{ArgShape, FastMap, ShapeMemo};
use crate::wisdom::{search_path, WisdomSource};
use kw_capture::record;
use kw_core::backend::{
    ArgView, BackendError, CompiledKernel, Device, DeviceEvent, KernelArg, Queue,
};
use kw_core::device::BackendKind;
use kw_core::{
    config::Config, def_eval::DefError, def_eval::Geometry, expr::Expr, kernel_def::ArgKind,
    kernel_def::KernelDef, space::TuningSpace,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};

mod online;
mod select;
mod symbols;

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
/// use kernel_wisdom::{bundled, open_default_device, DeviceBuffer, WisdomKernel};
///
/// # fn main() -> Result<(), kernel_wisdom::Error> {
/// let device = open_default_device()?;
/// let kernel = WisdomKernel::new(bundled::vector_add()?, device.clone())?;
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
/// kernel.launch_with_config(&config, &[c.arg(), a.arg(), b.arg(), (n as i32).into()])?;
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

    /// Launches with the configuration selected for the arguments' problem size, on the
    /// device's own queue or stream (asynchronous: synchronise the device or read a buffer
    /// to wait). Same as [`WisdomKernel::launch_on`] with [`Queue::DEFAULT`].
    ///
    /// If capture selects this launch (`KW_CAPTURE`, see the crate documentation), the buffer
    /// arguments are copied to the host before and after it (so this call waits for the
    /// launch) and the capture is written in the background; a capture failure is reported
    /// on standard error and never changes this call's result.
    ///
    /// A problem size with a negative axis is an error ([`Error::Eval`], naming the kernel
    /// and the size); one with an empty axis (0) launches nothing and returns `Ok` (nothing
    /// is compiled or captured either).
    pub fn launch(&self, args: &[KernelArg<'_>]) -> Result<(), Error> {
        self.enqueue(Queue::DEFAULT, args, false).map(drop)
    }

    /// Launches on the application's stream or queue (`kw_cuda::stream_queue`,
    /// `kw_opencl::queue`, `kw_opencl::queue_after`, or a raw handle through
    /// `Queue::cuda_raw` / `Queue::opencl_raw`), after the events the queue names. Buffer
    /// arguments may be the application's memory (`kw_cuda::slice_arg`,
    /// `kw_opencl::buffer_arg`, `RawMem`). Every buffer is checked against its declared
    /// length first: a shorter one is an [`Error::BufferTooShort`] and nothing is launched.
    pub fn launch_on(&self, queue: Queue<'_>, args: &[KernelArg<'_>]) -> Result<(), Error> {
        self.enqueue(queue, args, false).map(drop)
    }

    /// [`WisdomKernel::launch_on`], returning the launch's completion event where the
    /// backend has one (OpenCL: a `kw_opencl::ClEvent`, whose `.0` is the `opencl3` event;
    /// CUDA: `None`, record your own event on your stream).
    pub fn launch_on_with_event(
        &self,
        queue: Queue<'_>,
        args: &[KernelArg<'_>],
    ) -> Result<Option<Box<dyn DeviceEvent>>, Error> {
        self.enqueue(queue, args, true)
    }

    fn enqueue(
        &self,
        queue: Queue<'_>,
        args: &[KernelArg<'_>],
        want_event: bool,
    ) -> Result<Option<Box<dyn DeviceEvent>>, Error> {
        // Arguments of a shape launched before: their problem size was evaluated and every
        // buffer checked then, with the same result (see `launch_memo`), and their selection
        // is compiled: launch it (under the memo's read lock: no reference count touched).
        self.check_symbols_set()?;
        let mut shape = ArgShape::EMPTY;
        let memoised = shape.set(args);
        if memoised && !capture::active() {
            let hit = self.by_shape.with(&shape, |(ps, selected)| {
                (selected.watch.is_none())
                    .then(|| self.launch_selected(queue, selected, ps, args, want_event))
            });
            if let Some(Some(Ok(event))) = hit {
                return Ok(event);
            }
            // Not launched before, or the launch failed: the full path below (which falls
            // back to the default configuration when the selected one fails).
        }
        let ps = self.checked_problem_size(args)?;
        if ps.contains(&0) {
            self.empty_launch(&ps);
            return Ok(None);
        }
        let cached = {
            let map = self.by_size.read().unwrap_or_else(PoisonError::into_inner);
            map.get(&ps).cloned()
        };
        let selected = match cached {
            Some(s) if self.still_valid(&s.config, &ps, args) => s,
            // Restrictions over argument values refuse this size's selection for these
            // arguments: a selection for this launch alone.
            Some(_) => Arc::new(self.select_and_compile(&ps, args)?),
            None => self.prepare(&ps, args)?,
        };
        if memoised {
            self.by_shape.remember(&shape, (ps, Arc::clone(&selected)));
        }
        if capture::active() {
            if let Some(dir) = capture::ticket(&self.def.tuning_key, &ps, selected.exact_wisdom) {
                return self.launch_captured(queue, &selected, &ps, args, dir, want_event);
            }
        }
        if let Some(watch) = &selected.watch {
            return self.launch_watched(queue, &selected, watch, &ps, args, want_event);
        }
        if !selected.exact_wisdom && crate::online::recording() {
            if let Some(dir) = crate::online::record_ticket(&self.def.tuning_key, &ps) {
                return self.launch_captured(queue, &selected, &ps, args, dir, want_event);
            }
        }
        self.launch_or_fall_back(queue, &selected, &ps, args, want_event)
            .map(|(_, event)| event)
    }

    /// A launch whose problem size has an empty axis (0 elements): there is nothing to do,
    /// so nothing is selected, compiled, launched or captured, and the launch succeeds (as a
    /// loop over no elements does; drivers refuse a grid of 0 blocks). A negative axis is an
    /// error of [`KernelDef::problem_size_for`].
    #[cold]
    fn empty_launch(&self, ps: &[i64; 3]) {
        if kw_core::diag::debug_enabled() {
            kw_core::diag::debug(&format!(
                "kernel `{}`: problem size {ps:?} is empty: nothing launched",
                self.def.kernel_name
            ));
        }
    }

    /// Launches `selected`; if it fails and is not the default, falls back to the default
    /// configuration for this problem size. Returns the fallback when one was used.
    fn launch_or_fall_back(
        &self,
        queue: Queue<'_>,
        selected: &Selected,
        ps: &[i64; 3],
        args: &[KernelArg<'_>],
        want_event: bool,
    ) -> Result<(Option<Arc<Selected>>, Option<Event>), Error> {
        match self.launch_selected(queue, selected, ps, args, want_event) {
            Err(e) if selected.config != self.default_config => {
                self.record_failure(&selected.config, ps, &e);
                let default = self.default_at(ps, Some(args))?;
                let fallback = Arc::new(self.make_selected(default, ps)?);
                self.by_size
                    .write()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(*ps, Arc::clone(&fallback));
                // Shapes of this size pointed at the replaced selection.
                self.by_shape.clear();
                let event = self.launch_selected(queue, &fallback, ps, args, want_event)?;
                Ok((Some(fallback), event))
            }
            other => other.map(|event| (None, event)),
        }
    }

    /// A launch that capture selected: copies before, launch, copies after, hand-off to the
    /// background writer. Capture failures are reported, never returned.
    fn launch_captured(
        &self,
        queue: Queue<'_>,
        selected: &Selected,
        ps: &[i64; 3],
        args: &[KernelArg<'_>],
        dir: std::path::PathBuf,
        want_event: bool,
    ) -> Result<Option<Box<dyn DeviceEvent>>, Error> {
        let sink = |job, _: &Config| capture::submit(job);
        self.launch_recorded(queue, selected, ps, args, dir, want_event, sink)
    }

    /// [`WisdomKernel::launch_captured`] handing the capture (and the configuration launched)
    /// to `sink`.
    #[allow(clippy::too_many_arguments)]
    fn launch_recorded(
        &self,
        queue: Queue<'_>,
        selected: &Selected,
        ps: &[i64; 3],
        args: &[KernelArg<'_>],
        dir: std::path::PathBuf,
        want_event: bool,
        sink: impl FnOnce(kw_capture::CaptureJob, &Config) -> Result<(), record::RecordError>,
    ) -> Result<Option<Box<dyn DeviceEvent>>, Error> {
        let key = &self.def.tuning_key;
        let device = self.device.as_ref();
        let lens = self.def.buffer_lens(args, ps, Some(device.info()))?;
        let before = record::before_launch(dir, &self.def, device, queue, args, &lens)
            .map(|b| b.with_symbols(self.symbols.values(&self.def)))
            .inspect_err(|e| capture::report(key, e))
            .ok();
        let (fallback, event) = self.launch_or_fall_back(queue, selected, ps, args, want_event)?;
        if let Some(before) = before {
            let config = &fallback.as_deref().unwrap_or(selected).config;
            let job = record::after_launch(before, &self.def, device, queue, config, ps, args);
            if let Err(e) = job.and_then(|job| sink(job, config)) {
                capture::report(key, &e);
            }
        }
        Ok(event)
    }

    /// Compiles one configuration of the space (once: later launches of it reuse the
    /// result) without launching it: warms a configuration up ahead of its first launch, or
    /// reports why it does not compile.
    pub fn compile_config(&self, config: &Config) -> Result<(), Error> {
        self.validate(config)?;
        self.compiled_for(config)
            .map(drop)
            .map_err(|source| self.config_error(config, source))
    }

    /// Launches one given configuration, without fallback (what a tuner or a test does).
    pub fn launch_with_config(&self, config: &Config, args: &[KernelArg<'_>]) -> Result<(), Error> {
        let ps = self.checked_problem_size(args)?;
        if ps.contains(&0) {
            self.validate(config)?;
            self.empty_launch(&ps);
            return Ok(());
        }
        let selected = self.explicit(config, &ps, args)?;
        self.launch_selected(Queue::DEFAULT, &selected, &ps, args, false)
            .map(drop)
    }

    /// Launches one given configuration, waits, and returns its device time in milliseconds.
    pub fn launch_timed_with_config(
        &self,
        config: &Config,
        args: &[KernelArg<'_>],
    ) -> Result<f64, Error> {
        let ps = self.checked_problem_size(args)?;
        let selected = self.explicit(config, &ps, args)?;
        let g = self.geometry_of(&selected, &ps, args)?;
        self.device
            .launch_timed(selected.kernel.as_ref(), &g, args)
            .map_err(|source| self.config_error(&selected.config, source))
    }

    fn explicit(
        &self,
        config: &Config,
        ps: &[i64; 3],
        args: &[KernelArg<'_>],
    ) -> Result<Selected, Error> {
        self.validate(config)?;
        self.valid_at(config, ps, Some(args))?;
        let kernel = self
            .compiled_for(config)
            .map_err(|source| self.config_error(config, source))?;
        let geometry = if self.geometry_uses_args {
            None
        } else {
            Some(
                self.def
                    .geometry(config, ps, None, Some(self.device.info()))?,
            )
        };
        Ok(Selected {
            config: config.clone(),
            kernel,
            geometry,
            exact_wisdom: false,
            watch: None,
        })
    }

    fn validate(&self, config: &Config) -> Result<(), Error> {
        let invalid = |reason: String| Error::InvalidConfig {
            kernel: self.def.kernel_name.clone(),
            config: config.key(),
            reason,
        };
        self.space.check_config(config).map(drop).map_err(invalid)
    }

    fn config_error(&self, config: &Config, source: BackendError) -> Error {
        Error::Config {
            kernel: self.def.kernel_name.clone(),
            config: config.key(),
            source: Box::new(source),
        }
    }

    fn geometry_of(
        &self,
        s: &Selected,
        ps: &[i64; 3],
        args: &[KernelArg<'_>],
    ) -> Result<Geometry, Error> {
        match s.geometry {
            Some(g) => Ok(g),
            None => {
                let (args, info) = (Some(&ArgView(args) as _), Some(self.device.info()));
                self.evaluate(|def| def.geometry(&s.config, ps, args, info))
            }
        }
    }

    #[inline]
    fn launch_selected(
        &self,
        queue: Queue<'_>,
        s: &Selected,
        ps: &[i64; 3],
        args: &[KernelArg<'_>],
        want_event: bool,
    ) -> Result<Option<Box<dyn DeviceEvent>>, Error> {
        let g = self.geometry_of(s, ps, args)?;
        self.device
            .launch_on(queue, s.kernel.as_ref(), &g, args, want_event)
            .map_err(|source| self.config_error(&s.config, source))
    }

    /// Selects, compiles and caches the configuration of a new problem size, once: a thread
    /// that arrives while another prepares the same size waits for it and takes its result
    /// (or, if it failed, tries again itself).
    fn prepare(&self, ps: &[i64; 3], args: &[KernelArg<'_>]) -> Result<Arc<Selected>, Error> {
        let slot = Arc::clone(
            self.preparing
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(*ps)
                .or_default(),
        );
        let _turn = slot.lock().unwrap_or_else(PoisonError::into_inner);
        let done = {
            let map = self.by_size.read().unwrap_or_else(PoisonError::into_inner);
            map.get(ps).cloned()
        };
        let result = match done {
            Some(s) => Ok(s),
            None => self.prepare_now(ps, args),
        };
        if result.is_ok() {
            // Later threads find the size in `by_size`; the slot is no longer needed.
            self.preparing
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(ps);
        }
        result
    }

    /// [`WisdomKernel::prepare`]'s work, by the one thread whose turn it is.
    fn prepare_now(&self, ps: &[i64; 3], args: &[KernelArg<'_>]) -> Result<Arc<Selected>, Error> {
        let mut selected = self.select_and_compile(ps, args)?;
        self.online_watch(&mut selected, ps);
        let selected = Arc::new(selected);
        self.by_size
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(*ps, Arc::clone(&selected));
        Ok(selected)
    }

    fn make_selected(&self, config: Config, ps: &[i64; 3]) -> Result<Selected, Error> {
        let kernel = self
            .compiled_for(&config)
            .map_err(|source| self.config_error(&config, source))?;
        let geometry = if self.geometry_uses_args {
            None
        } else {
            Some(
                self.def
                    .geometry(&config, ps, None, Some(self.device.info()))?,
            )
        };
        Ok(Selected {
            config,
            kernel,
            geometry,
            exact_wisdom: false,
            watch: None,
        })
    }

    fn record_failure(&self, config: &Config, ps: &[i64; 3], e: &Error) {
        kw_core::diag::warn(&format!(
            "kernel `{}`: configuration {{{config}}} failed for problem size {ps:?}; using the \
             default configuration instead. {e}",
            self.def.kernel_name
        ));
        self.failures
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(ConfigFailure {
                config: config.clone(),
                problem_size: *ps,
                error: e.to_string(),
            });
    }

    /// The compiled kernel of a configuration: compiled once, failures remembered too. The
    /// map's lock is held only to find the configuration's slot; the compile runs outside it,
    /// and a thread that needs a configuration being compiled waits for that compile only.
    fn compiled_for(&self, config: &Config) -> CompileResult {
        self.compile_slot(config)
            .get_or_init(|| self.compile(config))
            .clone()
    }

    /// The compile slot of a configuration (made empty when new).
    fn compile_slot(&self, config: &Config) -> CompileSlot {
        Arc::clone(
            self.compiled
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(config.key())
                .or_default(),
        )
    }

    fn compile(&self, config: &Config) -> CompileResult {
        let spec = self
            .def
            .compile_spec(config, Some(self.device.info()))
            .map_err(|e| BackendError::Compile {
                kernel: self.def.kernel_name.clone(),
                file: self.def.source.file_name.clone(),
                options: String::new(),
                reason: e.to_string(),
                log: String::new(),
            })?;
        let kernel = self.device.compile(&spec.request())?;
        if !self.def.symbols.is_empty() {
            self.symbols.adopt(self.device.as_ref(), &kernel)?;
        }
        Ok(kernel)
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
