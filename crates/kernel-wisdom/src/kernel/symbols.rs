//! The constant-memory symbols of a [`WisdomKernel`](super::WisdomKernel): the contents the
//! application set, written into every module compiled so far and into each module compiled
//! later before it is launched; a captured launch records them.

use kw_core::backend::{BackendError, CompiledKernel, Device};
use kw_core::kernel_def::{check_symbol_value, KernelDef};
use kw_core::scalar::SymbolValue;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// The symbols' contents and the modules they were written into.
#[derive(Default)]
pub(crate) struct Symbols {
    state: Mutex<State>,
    /// Every declared symbol has been set (launches check this flag only).
    complete: AtomicBool,
}

#[derive(Default)]
struct State {
    values: Vec<SymbolValue>,
    modules: Vec<Arc<dyn CompiledKernel>>,
}

impl Symbols {
    /// Sets `value` (checked against its declaration in `def`) and writes it into every
    /// module compiled so far.
    pub(crate) fn set(
        &self,
        def: &KernelDef,
        device: &dyn Device,
        value: SymbolValue,
    ) -> Result<(), String> {
        let declared = def
            .symbols
            .iter()
            .find(|d| d.name == value.name)
            .ok_or_else(|| {
                let names: Vec<&str> = def.symbols.iter().map(|d| d.name.as_str()).collect();
                format!(
                    "no constant symbol `{}` is declared (declared: {})",
                    value.name,
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                )
            })?;
        check_symbol_value(declared, &value)?;
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        for m in &s.modules {
            device
                .write_symbol(m.as_ref(), &value.name, &value.bytes)
                .map_err(|e| e.to_string())?;
        }
        match s.values.iter_mut().find(|v| v.name == value.name) {
            Some(slot) => *slot = value,
            None => s.values.push(value),
        }
        let complete = def
            .symbols
            .iter()
            .all(|d| s.values.iter().any(|v| v.name == d.name));
        self.complete.store(complete, Ordering::Release);
        Ok(())
    }

    /// A module just compiled: it gets every symbol set so far, and later sets reach it.
    pub(crate) fn adopt(
        &self,
        device: &dyn Device,
        kernel: &Arc<dyn CompiledKernel>,
    ) -> Result<(), BackendError> {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        kw_core::backend::write_symbols(device, kernel.as_ref(), &s.values)?;
        s.modules.push(Arc::clone(kernel));
        Ok(())
    }

    /// The first declared symbol not set yet (`None` when all are).
    pub(crate) fn first_unset<'d>(&self, def: &'d KernelDef) -> Option<&'d str> {
        if def.symbols.is_empty() || self.complete.load(Ordering::Acquire) {
            return None;
        }
        let s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        def.symbols
            .iter()
            .find(|d| !s.values.iter().any(|v| v.name == d.name))
            .map(|d| d.name.as_str())
    }

    /// The contents set so far, in declaration order (what a capture records).
    pub(crate) fn values(&self, def: &KernelDef) -> Vec<SymbolValue> {
        let s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        def.symbols
            .iter()
            .filter_map(|d| s.values.iter().find(|v| v.name == d.name).cloned())
            .collect()
    }
}
