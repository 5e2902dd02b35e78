//! [`ReplayError`]: why a capture cannot be replayed at all (per-configuration problems are
//! [`kw_tune::EvalFailure`]s instead: results, not errors).

use kw_core::device::BackendKind;
use std::path::PathBuf;
use thiserror::Error;

/// An error that stops the replay of one capture; always names the capture file.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// The capture file could not be opened, read or checked (the capture error names the
    /// file already).
    #[error("{source}")]
    Capture {
        /// The capture file.
        path: PathBuf,
        /// Why.
        source: Box<kw_capture::CaptureError>,
    },
    /// The capture's metadata is not a kernel-wisdom capture this version can replay.
    #[error("{path}: {message}")]
    Metadata {
        /// The capture file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The device belongs to another backend than the captured kernel.
    #[error(
        "{path}: kernel `{kernel}` is written for {expected}, but the device `{device}` is {found}"
    )]
    WrongBackend {
        /// The capture file.
        path: PathBuf,
        /// The kernel name.
        kernel: String,
        /// The kernel's backend.
        expected: BackendKind,
        /// The device's backend.
        found: BackendKind,
        /// The device's name.
        device: String,
    },
    /// An argument of the capture does not fit the kernel definition.
    #[error("{path}: kernel `{kernel}`: argument `{arg}`: {message}")]
    Argument {
        /// The capture file.
        path: PathBuf,
        /// The kernel name.
        kernel: String,
        /// The argument's name.
        arg: String,
        /// What is wrong.
        message: String,
    },
    /// The tuning space could not be built for the device.
    #[error("{path}: {source}")]
    Space {
        /// The capture file.
        path: PathBuf,
        /// Why.
        source: Box<kw_core::kernel_def::eval::DefError>,
    },
    /// A device operation (allocation, upload, copy) failed.
    #[error("{path}: kernel `{kernel}`: {what}: {source}")]
    Device {
        /// The capture file.
        path: PathBuf,
        /// The kernel name.
        kernel: String,
        /// What was being done.
        what: String,
        /// The backend's error.
        source: Box<kw_core::backend::BackendError>,
    },
    /// Reading the capture file for its checksum failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}
