//! [`BackendError`]: what backends report, typed, with the context needed to act on it.

use crate::device::BackendKind;
use thiserror::Error;

/// Errors of backends: typed, with the context needed to act on them.
#[derive(Debug, Clone, Error)]
#[non_exhaustive]
pub enum BackendError {
    /// The backend's driver or runtime library is missing, or it has no platform/device.
    #[error("no {backend} platform: {reason}")]
    Unavailable {
        /// The backend.
        backend: BackendKind,
        /// Why (library not found, no platform, ...).
        reason: String,
    },
    /// The backend was left out of this build (a cargo feature of `kernel-wisdom` / `kw-cli`).
    #[error("built without {backend} support: enable the `{feature}` cargo feature")]
    NotBuilt {
        /// The backend.
        backend: BackendKind,
        /// The feature that builds it in.
        feature: &'static str,
    },
    /// No device matched a selection.
    #[error("no {backend} device matches {selector} (available: {available})")]
    NoSuchDevice {
        /// The backend.
        backend: BackendKind,
        /// The selection (`index 3`, `name containing "A100"`).
        selector: String,
        /// The devices there are.
        available: String,
    },
    /// The kernel failed to compile; `log` is the compiler's full build log.
    #[error("kernel `{kernel}` ({file}) failed to compile with options `{options}`: {reason}\nbuild log:\n{log}")]
    Compile {
        /// The kernel name.
        kernel: String,
        /// The source file name.
        file: String,
        /// The compiler options used.
        options: String,
        /// The driver's error.
        reason: String,
        /// The full build log.
        log: String,
    },
    /// A launch argument does not fit the kernel.
    #[error("kernel `{kernel}`: argument {index}: {message}")]
    Argument {
        /// The kernel name.
        kernel: String,
        /// The argument's position.
        index: usize,
        /// What is wrong.
        message: String,
    },
    /// A constant-memory symbol could not be written.
    #[error("kernel `{kernel}`: constant symbol `{name}`: {message}")]
    Symbol {
        /// The kernel name.
        kernel: String,
        /// The symbol's name.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// A launch failed.
    #[error("kernel `{kernel}`: launch with grid {grid:?} x block {block:?} failed: {message}")]
    Launch {
        /// The kernel name.
        kernel: String,
        /// Blocks per axis.
        grid: [u32; 3],
        /// Threads per block per axis.
        block: [u32; 3],
        /// The driver's error.
        message: String,
    },
    /// A buffer larger than the device can allocate at once
    /// ([`DeviceInfo::max_alloc_bytes`](crate::device::DeviceInfo::max_alloc_bytes)).
    #[error(
        "a buffer of {bytes} bytes is larger than the {backend} device's largest allocation, \
         {limit} bytes ({limit_name}): use a smaller problem or a device with more memory"
    )]
    AllocTooLarge {
        /// The backend.
        backend: BackendKind,
        /// Bytes asked for.
        bytes: u64,
        /// The device's limit.
        limit: u64,
        /// Where the limit comes from (`CL_DEVICE_MAX_MEM_ALLOC_SIZE`).
        limit_name: &'static str,
    },
    /// A host <-> device transfer would leave the buffer.
    #[error("{op} of {bytes} bytes at offset {offset} is outside a buffer of {len} bytes")]
    OutOfRange {
        /// `write`, `read` or `copy`.
        op: &'static str,
        /// Bytes asked for.
        bytes: usize,
        /// Offset asked for.
        offset: usize,
        /// The buffer's length in bytes.
        len: usize,
    },
    /// An object of another backend (or another device) was passed.
    #[error("{what} does not belong to this {backend} device{}", hint_suffix(hint))]
    Foreign {
        /// The backend.
        backend: BackendKind,
        /// What was passed (`kernel`, `buffer for argument 2`).
        what: String,
        /// Why, and what to do instead (empty: nothing to add).
        hint: String,
    },
    /// Any other driver call failed.
    #[error("{op} failed: {message}")]
    Api {
        /// The operation (`clCreateBuffer`, `cuMemAlloc`).
        op: &'static str,
        /// The driver's error.
        message: String,
    },
}

impl BackendError {
    /// Whether the launch's arguments are at fault whatever the configuration: an argument
    /// the backend refuses (its type against the kernel's parameter, a buffer of another
    /// device or context).
    pub fn is_arguments_fault(&self) -> bool {
        matches!(
            self,
            BackendError::Argument { .. } | BackendError::Foreign { .. }
        )
    }
}

/// `": hint"`, or nothing for an empty hint.
fn hint_suffix(hint: &str) -> String {
    if hint.is_empty() {
        String::new()
    } else {
        format!(": {hint}")
    }
}
