//! The compile phase of a [`WisdomKernel`]: a new problem size prepared once (selected,
//! compiled, remembered), each configuration compiled once (outside any shared lock), an
//! explicit configuration checked and compiled, and a failing configuration remembered.

use super::{CompileResult, CompileSlot, ConfigFailure, Selected, WisdomKernel};
use crate::error::Error;
use kw_core::backend::{BackendError, KernelArg};
use kw_core::config::Config;
use std::sync::{Arc, PoisonError};

impl WisdomKernel {
    /// Compiles one configuration of the space (once: later launches of it reuse the
    /// result) without launching it: warms a configuration up ahead of its first launch, or
    /// reports why it does not compile.
    pub fn compile_config(&self, config: &Config) -> Result<(), Error> {
        self.validate(config)?;
        self.compiled_for(config)
            .map(drop)
            .map_err(|source| self.config_error(config, source))
    }

    /// An explicit configuration (not the selection) for a launch of this size: checked
    /// against the space and this launch's restrictions, then compiled.
    pub(super) fn explicit(
        &self,
        config: &Config,
        ps: &[i64; 3],
        args: &[KernelArg<'_>],
    ) -> Result<Selected, Error> {
        self.validate(config)?;
        self.valid_at(config, ps, Some(args))?;
        self.make_selected(config.clone(), ps)
    }

    pub(super) fn validate(&self, config: &Config) -> Result<(), Error> {
        let invalid = |reason: String| Error::InvalidConfig {
            kernel: self.def.kernel_name.clone(),
            config: config.key(),
            reason,
        };
        self.space.check_config(config).map(drop).map_err(invalid)
    }

    /// A backend's error of a configuration's compile or launch; an argument the backend
    /// refuses (a buffer of another device or context) is the arguments' fault, whatever the
    /// configuration, and said as such.
    pub(super) fn config_error(&self, config: &Config, source: BackendError) -> Error {
        if source.is_arguments_fault() {
            return Error::Backend(source);
        }
        Error::Config {
            kernel: self.def.kernel_name.clone(),
            config: config.key(),
            source: Box::new(source),
        }
    }

    /// Selects, compiles and caches the configuration of a new problem size, once: a thread
    /// that arrives while another prepares the same size waits for it and takes its result
    /// (or, if it failed, tries again itself).
    pub(super) fn prepare(
        &self,
        ps: &[i64; 3],
        args: &[KernelArg<'_>],
    ) -> Result<Arc<Selected>, Error> {
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
    pub(super) fn prepare_now(
        &self,
        ps: &[i64; 3],
        args: &[KernelArg<'_>],
    ) -> Result<Arc<Selected>, Error> {
        let mut selected = self.select_and_compile(ps, args)?;
        self.online_watch(&mut selected, ps);
        let selected = Arc::new(selected);
        self.by_size
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(*ps, Arc::clone(&selected));
        Ok(selected)
    }

    pub(super) fn make_selected(&self, config: Config, ps: &[i64; 3]) -> Result<Selected, Error> {
        let kernel = self
            .compiled_for(&config)
            .map_err(|source| self.config_error(&config, source))?;
        let geometry = if self.geometry_uses_args {
            None
        } else {
            Some(self.config_geometry(&config, ps, None)?)
        };
        Ok(Selected {
            config,
            kernel,
            geometry,
            exact_wisdom: false,
            watch: None,
        })
    }

    pub(super) fn record_failure(&self, config: &Config, ps: &[i64; 3], e: &Error) {
        let text = format!(
            "kernel `{}`: configuration {{{config}}} failed for problem size {ps:?}; using \
             another instead (the wisdom record's own where this was its alternate, else the \
             default configuration). {e}",
            self.def.kernel_name
        );
        // Warned once per configuration (a record selected at many sizes fails at each: a
        // compile failure is remembered, a launch is tried again, as another size may fit);
        // the later failures are debug lines, and all are in `failures`.
        let once = format!("failed configuration {} {config}", self.def.tuning_key);
        if kw_core::diag::once(&once) {
            kw_core::diag::warn(&text);
        } else {
            kw_core::diag::debug(&text);
        }
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
    pub(super) fn compiled_for(&self, config: &Config) -> CompileResult {
        self.compile_slot(config)
            .get_or_init(|| self.compile(config))
            .clone()
    }

    /// The compile slot of a configuration (made empty when new).
    pub(super) fn compile_slot(&self, config: &Config) -> CompileSlot {
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
}
