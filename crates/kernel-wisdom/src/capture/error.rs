//! [`CaptureFailure`]: why a launch was not captured (never an error of the launch itself).

use kw_core::backend::BackendError;
use std::path::PathBuf;

/// Why a selected launch could not be captured. The launch itself is unaffected: these are
/// reported on standard error (once per kernel) and, for writing, by
/// [`flush_captures`](crate::flush_captures).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CaptureFailure {
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
        /// The directory (`KW_CAPTURE_DIR`).
        dir: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The metadata does not serialise (a bug).
    #[error("the capture metadata does not serialise to JSON: {0}")]
    Metadata(#[source] serde_json::Error),
    /// The background writer thread cannot be started.
    #[error("cannot start the background capture writer: {0}")]
    Writer(#[source] std::io::Error),
}
