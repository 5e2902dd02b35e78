//! [`RecordError`]: why a launch was not captured (never an error of the launch itself).

use kw_core::backend::BackendError;
use std::path::PathBuf;

/// Why a launch could not be recorded. In an application the launch itself is unaffected:
/// the runtime reports these once per kernel.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// Copying a buffer argument to the host failed (before or after the launch), or the
    /// device could not be synchronised.
    #[error("copying argument {index} `{name}` to the host {when} the launch failed: {source}")]
    Copy {
        /// The argument's position.
        index: usize,
        /// Its declared name.
        name: String,
        /// `before` or `after`.
        when: &'static str,
        /// The backend's error.
        source: Box<BackendError>,
    },
    /// The device copies of the buffers (made on the launch's queue, read back later) failed:
    /// no device memory for them, or the copy or the read-back failed.
    #[error("copying the buffers on the device {when} the launch failed: {source}")]
    DeviceCopy {
        /// `before` or `after`.
        when: &'static str,
        /// The backend's error.
        source: Box<BackendError>,
    },
    /// Waiting for the launch failed.
    #[error("waiting for the captured launch failed: {0}")]
    Synchronize(#[source] Box<BackendError>),
    /// A buffer is too large for host memory.
    #[error("argument {index} `{name}`: {bytes} bytes do not fit in host memory")]
    HostMemory {
        /// The argument's position.
        index: usize,
        /// Its declared name.
        name: String,
        /// Its size in bytes.
        bytes: usize,
    },
    /// The capture directory cannot be created.
    #[error("cannot create the capture directory {dir}: {source}")]
    Directory {
        /// The directory.
        dir: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The metadata does not serialise (a bug).
    #[error("the capture metadata does not serialise to JSON: {0}")]
    Metadata(#[source] serde_json::Error),
    /// A launch recorded by [`capture_launch`](super::capture_launch) failed on the device.
    #[error("kernel `{kernel}`: {what} failed: {source}")]
    Launch {
        /// The kernel.
        kernel: String,
        /// What failed (`compiling`, `launching`, `allocating a buffer`).
        what: &'static str,
        /// The backend's error.
        source: Box<BackendError>,
    },
    /// The launch cannot be made: a definition for another backend or with problems, an
    /// invalid configuration, arguments that do not match the definition.
    #[error("kernel `{kernel}`: cannot record the launch: {reason}")]
    Invalid {
        /// The kernel.
        kernel: String,
        /// What is wrong.
        reason: String,
    },
    /// The definition cannot be evaluated for the launch (problem size, geometry, defines).
    #[error(transparent)]
    Definition(#[from] kw_core::kernel_def::eval::DefError),
    /// Writing the capture file failed.
    #[error("writing the capture {path}: {source}")]
    Write {
        /// The file (without extension).
        path: PathBuf,
        /// The writer's error.
        source: Box<crate::CaptureError>,
    },
    /// The background writer thread cannot be started.
    #[error("cannot start the background capture writer: {0}")]
    Writer(#[source] std::io::Error),
}
