//! Writes pending captures when the process exits, with no call from the application.
//!
//! Rust never drops statics, so the background writer would be killed mid-file at exit. The
//! C library's `atexit` runs its handlers on every normal exit path (returning from `main`,
//! `std::process::exit`, `exit` from C code, a panic unwinding out of `main`); the handler
//! waits for the writer. Paths that skip handlers (`_exit`, a fatal signal) leave no file
//! that looks valid: captures are written under a temporary name and renamed when complete.

use std::sync::{Once, OnceLock};

extern "C" {
    fn atexit(callback: extern "C" fn()) -> std::ffi::c_int;
}

/// What runs at exit (the first handler installed).
static HANDLER: OnceLock<fn()> = OnceLock::new();

extern "C" fn on_exit() {
    if let Some(&handler) = HANDLER.get() {
        // A panic must not unwind into C.
        let _ = std::panic::catch_unwind(handler);
    }
}

/// Installs `handler` to run at exit (once per process: later calls change nothing).
pub(crate) fn install(handler: fn()) {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let _ = HANDLER.set(handler);
        // SAFETY: `atexit` is the C library's; `on_exit` is an `extern "C"` function with no
        // arguments that never unwinds.
        let status = unsafe { atexit(on_exit) };
        if status != 0 {
            kw_core::diag::warn(
                "could not install the exit hook: call kernel_wisdom::flush_captures() before \
                 exiting, or pending captures are lost",
            );
        }
    });
}
