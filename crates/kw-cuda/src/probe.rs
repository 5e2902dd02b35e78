//! Is there a CUDA driver? Answered once per process, without panicking.
//!
//! cudarc's dynamic loading panics on the first driver call when `libcuda.so` cannot be
//! found. So before any call we ask cudarc's own loader whether one of its candidate names
//! opens (`cudarc::driver::sys::is_culib_present`, the same list its `culib()` then uses),
//! and only then call `cuInit`, inside `catch_unwind` in case a symbol is missing from an old
//! driver. Every failure becomes [`BackendError::Unavailable`] ("no CUDA driver: ...").

use crate::error::driver_message;
use cudarc::driver::{result, sys};
use kw_core::backend::BackendError;
use kw_core::device::BackendKind;
use std::sync::OnceLock;

/// What the driver told us at initialisation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriverVersion {
    /// `cuDriverGetVersion`: 1000 * major + 10 * minor (`12080` is CUDA 12.8).
    pub raw: i32,
}

impl DriverVersion {
    /// The CUDA major version the driver supports.
    pub fn major(self) -> i32 {
        self.raw / 1000
    }

    /// The CUDA minor version the driver supports.
    pub fn minor(self) -> i32 {
        (self.raw % 1000) / 10
    }
}

impl std::fmt::Display for DriverVersion {
    /// `CUDA 12.8`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CUDA {}.{}", self.major(), self.minor())
    }
}

/// Loads and initialises the driver (once); the reason it is unusable otherwise.
pub fn driver() -> Result<DriverVersion, BackendError> {
    static STATE: OnceLock<Result<DriverVersion, String>> = OnceLock::new();
    STATE
        .get_or_init(init)
        .clone()
        .map_err(|reason| BackendError::Unavailable {
            backend: BackendKind::Cuda,
            reason,
        })
}

fn init() -> Result<DriverVersion, String> {
    // SAFETY: `is_culib_present` only dlopens (and closes) candidate library names; loading
    // libcuda runs its initialisers, which have no preconditions.
    if !unsafe { sys::is_culib_present() } {
        return Err("no CUDA driver (libcuda.so not found by the dynamic loader)".into());
    }
    let outcome = std::panic::catch_unwind(|| -> Result<i32, String> {
        result::init()
            .map_err(|e| format!("no CUDA driver: cuInit failed: {}", driver_message(e)))?;
        let mut v = 0;
        // SAFETY: a valid out-pointer; the driver is initialised.
        unsafe { sys::cuDriverGetVersion(&mut v) }
            .result()
            .map_err(|e| format!("cuDriverGetVersion failed: {}", driver_message(e)))?;
        Ok(v)
    });
    match outcome {
        Ok(Ok(raw)) => Ok(DriverVersion { raw }),
        Ok(Err(reason)) => Err(reason),
        Err(panic) => Err(format!(
            "no usable CUDA driver: {}",
            panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("the driver library could not be used")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_as_major_minor() {
        let v = DriverVersion { raw: 12080 };
        assert_eq!((v.major(), v.minor()), (12, 8));
        assert_eq!(v.to_string(), "CUDA 12.8");
        assert_eq!(DriverVersion { raw: 13000 }.to_string(), "CUDA 13.0");
    }
}
