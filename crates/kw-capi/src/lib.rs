//! # kw-capi: kernel-wisdom for C and C++ applications
//!
//! The C API (`include/kernel_wisdom.h`) and, over it, a header-only C++17 wrapper
//! (`include/kernel_wisdom.hpp`). A thin layer over the `kernel-wisdom` crate:
//! `kw_builder_*` is [`kernel_wisdom::KernelBuilder`] with every expression given as text
//! (parsed by kw-core's expression parser, `Expr::parse`); `kw_device_*` opens a device or
//! attaches to the application's OpenCL context + queue or CUDA context; `kw_kernel_*` is
//! [`kernel_wisdom::WisdomKernel`], launched on the application's stream or queue with its
//! device pointers / `cl_mem`s and scalars; `kw_library_*` is
//! [`kernel_wisdom::library::Library`] (the tuned routines, one call each). Capture (`KW_CAPTURE`, written at exit), wisdom
//! selection and `KW_LOG` behave as for Rust applications.
//!
//! Every function returns a `kw_status`; `kw_last_error()` gives the calling thread's last
//! message. No panic crosses the boundary: every entry point runs inside `catch_unwind`.
//! Handles are numbers in registries, never addresses: a null, freed or made-up handle is
//! an error (`KW_ERROR_NULL`, `KW_ERROR_HANDLE`), never undefined behaviour.
//!
//! Built as `libkernel_wisdom_c.{so,a}` (the library name `kernel_wisdom` belongs to the
//! Rust crate); `tools/install-capi.sh PREFIX` installs it as `libkernel_wisdom` with the
//! headers, `kernel_wisdom.pc` and the CMake package `kernel_wisdom`.
//!
//! The `unsafe extern "C"` functions' safety contract is the one kernel_wisdom.h states for
//! them (valid strings and arrays of the given lengths, live GPU handles).
//!
//! ## Layer
//!
//! Layer 3 (`docs/architecture.md`), beside `kw-cli`: depends on `kernel-wisdom` (with both
//! backend features) and `kw-core` only, and nothing in the workspace depends on it. With the
//! backend crates, it is where the design allows `unsafe`: the `extern "C"` functions take raw
//! pointers from C.
//!
//! ## Where to start reading
//!
//! `include/kernel_wisdom.h` (the contract), then `status.rs` (status codes, the thread's
//! last error, `guard` with `catch_unwind`), `handles.rs` (handles as registry numbers),
//! `ffi.rs` (reading C strings and arrays), and the entry points in `builder.rs`, `device.rs`
//! and `kernel.rs`; `include/kernel_wisdom.hpp` is the C++ wrapper over the C API. The tests
//! (`tests/c_programs.rs`) build C and C++ programs through the installed CMake package.
#![allow(clippy::missing_safety_doc)]

pub mod builder;
pub mod device;
pub mod ffi;
pub mod handles;
pub mod kernel;
pub mod library;
pub mod status;
pub mod tune;
pub mod types;

use status::{guard, last_error_ptr, ALL};
use std::ffi::{c_char, c_int};

/// `kw_last_error`: the message of the calling thread's last failed call ("" if none).
/// Valid until the next failing call on this thread.
#[no_mangle]
pub extern "C" fn kw_last_error() -> *const c_char {
    last_error_ptr()
}

/// `kw_status_name`: `"KW_ERROR_NULL"` for `KW_ERROR_NULL`, ...; `"KW_UNKNOWN"` otherwise.
#[no_mangle]
pub extern "C" fn kw_status_name(status: c_int) -> *const c_char {
    ALL.iter()
        .find(|s| **s as c_int == status)
        .map_or(c"KW_UNKNOWN".as_ptr(), |s| s.name().as_ptr())
}

/// `kw_version`: the library's version (`"0.1.0"`).
#[no_mangle]
pub extern "C" fn kw_version() -> *const c_char {
    static VERSION: &std::ffi::CStr = match std::ffi::CStr::from_bytes_with_nul(
        concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes(),
    ) {
        Ok(v) => v,
        Err(_) => c"unknown",
    };
    VERSION.as_ptr()
}

/// `kw_flush_captures`: waits until every pending capture is written (optional: they are
/// written at exit anyway).
#[no_mangle]
pub extern "C" fn kw_flush_captures() -> c_int {
    guard(|| {
        kernel_wisdom::flush_captures();
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use status::Status;
    use std::ffi::CStr;

    #[test]
    fn status_names_and_errors_reach_c() {
        // SAFETY: the library's own static strings.
        let name = |s: c_int| {
            unsafe { CStr::from_ptr(kw_status_name(s)) }
                .to_str()
                .unwrap()
        };
        assert_eq!(name(Status::Ok as c_int), "KW_OK");
        assert_eq!(name(Status::Expression as c_int), "KW_ERROR_EXPRESSION");
        assert_eq!(name(99), "KW_UNKNOWN");
        let status = guard(|| panic!("boom"));
        assert_eq!(status, Status::Internal as c_int);
        // SAFETY: the thread's last error, just set.
        let msg = unsafe { CStr::from_ptr(kw_last_error()) }.to_str().unwrap();
        assert!(
            msg.contains("boom") && msg.contains("internal error"),
            "{msg}"
        );
        // Where it happened is in the message (the panic itself printed nothing).
        assert!(msg.contains("src/lib.rs:"), "{msg}");
    }
}
