//! Turning OpenCL status codes into [`BackendError`]s.

use kw_core::backend::BackendError;
use kw_core::device::BackendKind;
use opencl3::error_codes::{ClError, DLOPEN_FUNCTION_NOT_AVAILABLE, DLOPEN_RUNTIME_LOAD_FAILED};

/// `CL_PLATFORM_NOT_FOUND_KHR`: the ICD loader found no platform.
const CL_PLATFORM_NOT_FOUND_KHR: i32 = -1001;

/// The error's name and code, e.g. `CL_INVALID_WORK_GROUP_SIZE (-54)`.
pub(crate) fn describe(e: ClError) -> String {
    format!("{e} ({})", e.0)
}

/// A generic API failure.
pub(crate) fn api(op: &'static str, e: ClError) -> BackendError {
    if let Some(u) = unavailable(&e) {
        return u;
    }
    BackendError::Api {
        op,
        message: describe(e),
    }
}

/// The "no OpenCL platform" error, if `e` means the library or a platform is missing.
pub(crate) fn unavailable(e: &ClError) -> Option<BackendError> {
    let reason = match e.0 {
        DLOPEN_RUNTIME_LOAD_FAILED => "the OpenCL library (libOpenCL) could not be loaded",
        DLOPEN_FUNCTION_NOT_AVAILABLE => "the OpenCL library lacks a required function",
        CL_PLATFORM_NOT_FOUND_KHR => "the OpenCL ICD loader found no platform",
        _ => return None,
    };
    Some(no_platform(reason))
}

/// [`BackendError::Unavailable`] for OpenCL.
pub(crate) fn no_platform(reason: &str) -> BackendError {
    BackendError::Unavailable {
        backend: BackendKind::Opencl,
        reason: reason.to_string(),
    }
}
