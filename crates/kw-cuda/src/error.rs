//! Turning driver errors into [`BackendError`]s with context.

use cudarc::driver::DriverError;
use kw_core::backend::BackendError;

/// `CUDA_ERROR_OUT_OF_MEMORY: out of memory`.
pub(crate) fn driver_message(e: DriverError) -> String {
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    match e.error_string() {
        Ok(s) => format!("{name}: {}", s.to_string_lossy()),
        Err(_) => name,
    }
}

/// A failed driver call as [`BackendError::Api`].
pub(crate) fn api(op: &'static str) -> impl Fn(DriverError) -> BackendError {
    move |e| BackendError::Api {
        op,
        message: driver_message(e),
    }
}
