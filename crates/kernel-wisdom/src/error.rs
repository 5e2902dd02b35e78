//! [`Error`](enum@Error): what building a definition or launching a kernel can fail with.

use kw_core::backend::BackendError;
use kw_core::kernel_def::check::{format_problems, DefProblem};
use kw_core::{device::BackendKind, kernel_def::eval::DefError};
use thiserror::Error;

/// Errors of the runtime, with the kernel (and configuration) they concern. `Debug` prints
/// the same readable message as `Display`, so that `fn main() -> Result<(), Error>` reports
/// errors in words.
#[derive(Error)]
#[non_exhaustive]
pub enum Error {
    /// The kernel definition has problems; every one found is listed.
    #[error("kernel `{kernel}`: invalid definition ({} problem(s)):\n{}", .problems.len(), format_problems(.problems))]
    Definition {
        /// The kernel name.
        kernel: String,
        /// Every problem found.
        problems: Vec<DefProblem>,
    },
    /// The definition is for another backend than the device.
    #[error("kernel `{kernel}` is written for {def}, but the device is an {device} device")]
    BackendMismatch {
        /// The kernel name.
        kernel: String,
        /// The definition's backend.
        def: BackendKind,
        /// The device's backend.
        device: BackendKind,
    },
    /// A launch got the wrong number of arguments.
    #[error("kernel `{kernel}`: {given} argument(s) given, the kernel takes {expected}")]
    ArgumentCount {
        /// The kernel name.
        kernel: String,
        /// How many were given.
        given: usize,
        /// How many the definition declares.
        expected: usize,
    },
    /// A buffer argument holds fewer elements than the kernel uses (its declared length, see
    /// [`crate::KernelBuilder::buffer_len`]); nothing was launched.
    #[error(
        "kernel `{kernel}`: buffer argument {index} `{name}` holds {len} element(s), the \
         launch needs {required} ({length}); nothing was launched"
    )]
    BufferTooShort {
        /// The kernel name.
        kernel: String,
        /// The argument's position.
        index: usize,
        /// The argument's name.
        name: String,
        /// The elements the buffer holds.
        len: usize,
        /// The elements the launch needs.
        required: u64,
        /// Where the length comes from (the declared expression, or the default).
        length: String,
    },
    /// A launch argument does not match its declaration.
    #[error("kernel `{kernel}`: argument {index} `{name}`: expected {expected}, got {got}")]
    Argument {
        /// The kernel name.
        kernel: String,
        /// Its position.
        index: usize,
        /// Its declared name.
        name: String,
        /// What the definition declares (`buffer of f32`).
        expected: String,
        /// What was passed.
        got: String,
    },
    /// A configuration failed to compile (the source carries the build log).
    #[error("kernel `{kernel}`: configuration {{{config}}} failed: {source}")]
    Config {
        /// The kernel name.
        kernel: String,
        /// The configuration's key.
        config: String,
        /// The backend's error (for compile errors: with the full build log).
        source: Box<BackendError>,
    },
    /// A configuration that is not part of the tuning space.
    #[error("kernel `{kernel}`: {{{config}}} is not a valid configuration: {reason}")]
    InvalidConfig {
        /// The kernel name.
        kernel: String,
        /// The configuration's key.
        config: String,
        /// Why.
        reason: String,
    },
    /// No configuration is valid at this launch: the selected records and the default
    /// configuration all break a restriction that depends on the problem size or the
    /// arguments. Nothing was launched.
    #[error("kernel `{kernel}`: no valid configuration at problem size {problem_size:?}: the default configuration {{{config}}} is not valid there ({reason}), and no wisdom record valid there matched")]
    NoValidConfig {
        /// The kernel name.
        kernel: String,
        /// The launch's problem size.
        problem_size: [i64; 3],
        /// The default configuration's key.
        config: String,
        /// Why the default is not valid.
        reason: String,
    },
    /// A library routine was called with buffers or sizes that do not fit each other.
    #[error("library routine `{routine}`: {message}")]
    Shape {
        /// The routine.
        routine: &'static str,
        /// What does not fit.
        message: String,
    },
    /// A library routine that the device's backend does not offer (`gemm_f16` is CUDA-only).
    #[error("library routine `{routine}` is {only}-only; the device is an {device} device")]
    Unsupported {
        /// The routine.
        routine: &'static str,
        /// The backend it is written for.
        only: BackendKind,
        /// The device's backend.
        device: BackendKind,
    },
    /// A constant-memory symbol could not be set, or a launch needs one not set yet.
    #[error("kernel `{kernel}`: constant symbol `{name}`: {message}")]
    Symbol {
        /// The kernel name.
        kernel: String,
        /// The symbol's name.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// Evaluating the definition failed (problem size, geometry, defines).
    #[error(transparent)]
    Eval(#[from] DefError),
    /// A backend error outside compilation (device selection, launch, memory).
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// The device selection (`KW_DEVICE` or a selector) matched nothing.
    #[error("no device matches {selector}; devices: {available}")]
    NoDevice {
        /// The selection, e.g. `KW_DEVICE="a100"`.
        selector: String,
        /// The available devices.
        available: String,
    },
    /// A launch could not be recorded into a capture.
    #[error(transparent)]
    Capture(#[from] kw_capture::record::RecordError),
    /// [`LaunchOptions`](crate::LaunchOptions) that do not go together (a timed launch on
    /// the application's queue).
    #[error("kernel `{kernel}`: {reason}")]
    LaunchOptions {
        /// The kernel name.
        kernel: String,
        /// What does not go together.
        reason: String,
    },
    /// `kw tune --bundled`'s demo kernel and size cannot be understood.
    #[error("bundled kernel `{spec}`: {reason}")]
    BundledSpec {
        /// The `NAME[:SIZE]` asked for.
        spec: String,
        /// What is wrong.
        reason: String,
    },
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl Error {
    /// Whether the launch's arguments are at fault whatever the configuration
    /// ([`BackendError::is_arguments_fault`]).
    pub fn is_arguments_fault(&self) -> bool {
        matches!(self, Error::Backend(b) if b.is_arguments_fault())
    }
}
