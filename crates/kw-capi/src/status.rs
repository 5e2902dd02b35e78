//! Status codes, the thread-local last error, and the guard every entry point runs in: no
//! Rust panic crosses the C boundary.

use kernel_wisdom::{BackendError, Error};
use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// `kw_status` (kernel_wisdom.h): what every function returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Status {
    /// `KW_OK`
    Ok = 0,
    /// `KW_ERROR_NULL`: a null handle or pointer where one is required.
    Null = 1,
    /// `KW_ERROR_HANDLE`: a handle that was freed, never made, or is of another kind.
    Handle = 2,
    /// `KW_ERROR_INVALID`: an invalid value (unknown enum value, text that is not UTF-8, ...).
    Invalid = 3,
    /// `KW_ERROR_EXPRESSION`: expression text that does not parse.
    Expression = 4,
    /// `KW_ERROR_DEFINITION`: the kernel definition is invalid (every problem is listed).
    Definition = 5,
    /// `KW_ERROR_DEVICE`: no such device, no driver, or a kernel for another backend.
    Device = 6,
    /// `KW_ERROR_ARGUMENTS`: wrong argument count or type for the kernel.
    Arguments = 7,
    /// `KW_ERROR_BUFFER_TOO_SHORT`: a buffer shorter than the kernel's declared length.
    BufferTooShort = 8,
    /// `KW_ERROR_LAUNCH`: compiling or launching failed.
    Launch = 9,
    /// `KW_ERROR_BACKEND`: another driver error.
    Backend = 10,
    /// `KW_ERROR_INTERNAL`: a bug in kernel-wisdom (a caught panic).
    Internal = 11,
}

/// Every status, for `kw_status_name` and the tests.
pub const ALL: [Status; 12] = [
    Status::Ok,
    Status::Null,
    Status::Handle,
    Status::Invalid,
    Status::Expression,
    Status::Definition,
    Status::Device,
    Status::Arguments,
    Status::BufferTooShort,
    Status::Launch,
    Status::Backend,
    Status::Internal,
];

impl Status {
    /// The constant's name in kernel_wisdom.h.
    pub fn name(self) -> &'static std::ffi::CStr {
        match self {
            Status::Ok => c"KW_OK",
            Status::Null => c"KW_ERROR_NULL",
            Status::Handle => c"KW_ERROR_HANDLE",
            Status::Invalid => c"KW_ERROR_INVALID",
            Status::Expression => c"KW_ERROR_EXPRESSION",
            Status::Definition => c"KW_ERROR_DEFINITION",
            Status::Device => c"KW_ERROR_DEVICE",
            Status::Arguments => c"KW_ERROR_ARGUMENTS",
            Status::BufferTooShort => c"KW_ERROR_BUFFER_TOO_SHORT",
            Status::Launch => c"KW_ERROR_LAUNCH",
            Status::Backend => c"KW_ERROR_BACKEND",
            Status::Internal => c"KW_ERROR_INTERNAL",
        }
    }
}

/// An error on its way to C: a status and a message.
#[derive(Debug)]
pub struct CError {
    /// The status returned.
    pub status: Status,
    /// What `kw_last_error` returns.
    pub message: String,
}

impl CError {
    /// An error with a status and a message.
    pub fn new(status: Status, message: impl Into<String>) -> CError {
        CError {
            status,
            message: message.into(),
        }
    }
}

impl From<Error> for CError {
    fn from(e: Error) -> CError {
        let status = match &e {
            Error::Definition { .. } => Status::Definition,
            Error::BackendMismatch { .. } | Error::NoDevice { .. } | Error::Unsupported { .. } => {
                Status::Device
            }
            Error::ArgumentCount { .. } | Error::Argument { .. } | Error::Eval(_) => {
                Status::Arguments
            }
            Error::BufferTooShort { .. } => Status::BufferTooShort,
            Error::Config { .. } | Error::InvalidConfig { .. } | Error::NoValidConfig { .. } => {
                Status::Launch
            }
            Error::Symbol { .. } | Error::Shape { .. } => Status::Invalid,
            Error::Backend(b) => backend_status(b),
            _ => Status::Backend,
        };
        CError::new(status, e.to_string())
    }
}

impl From<BackendError> for CError {
    fn from(e: BackendError) -> CError {
        CError::new(backend_status(&e), e.to_string())
    }
}

fn backend_status(e: &BackendError) -> Status {
    match e {
        BackendError::Unavailable { .. } | BackendError::NoSuchDevice { .. } => Status::Device,
        BackendError::Compile { .. } | BackendError::Launch { .. } => Status::Launch,
        // An object of another context or backend (a buffer, a queue): the call's arguments.
        BackendError::Argument { .. } | BackendError::Foreign { .. } => Status::Arguments,
        _ => Status::Backend,
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
    /// How deep this thread is in [`guard`]s.
    static IN_GUARD: Cell<u32> = const { Cell::new(0) };
    /// Where the last panic inside a guard happened.
    static PANIC_AT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs (once) a panic hook that keeps panics inside a [`guard`] quiet: the C program's
/// standard error gets no Rust panic message or backtrace, the status and `kw_last_error`
/// say what happened and where. Panics elsewhere go to the hook that was there before.
fn quiet_panics_in_guards() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_GUARD.with(Cell::get) > 0 {
                let at = info.location().map(|l| l.to_string());
                PANIC_AT.with(|p| *p.borrow_mut() = at);
            } else {
                previous(info);
            }
        }));
    });
}

/// Records `message` as this thread's last error (NUL bytes would end it early: replaced).
pub fn set_last_error(message: &str) {
    let text = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// This thread's last error message; valid until the next failing call on this thread.
pub fn last_error_ptr() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// Runs an entry point's body: its error, or a panic, becomes a status and the thread's last
/// error; nothing unwinds into C.
pub fn guard(f: impl FnOnce() -> Result<(), CError>) -> c_int {
    quiet_panics_in_guards();
    IN_GUARD.with(|g| g.set(g.get() + 1));
    let result = catch_unwind(AssertUnwindSafe(f));
    IN_GUARD.with(|g| g.set(g.get() - 1));
    match result {
        Ok(Ok(())) => Status::Ok as c_int,
        Ok(Err(e)) => {
            set_last_error(&e.message);
            e.status as c_int
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(no message)".into());
            let at = PANIC_AT
                .with(|p| p.borrow_mut().take())
                .map_or_else(String::new, |l| format!(" at {l}"));
            set_last_error(&format!(
                "internal error in kernel-wisdom (a bug, please report it): {what}{at}"
            ));
            Status::Internal as c_int
        }
    }
}
