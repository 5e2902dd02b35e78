//! Typed errors of capture files: every variant names the file it is about.

use std::path::PathBuf;

/// Everything that can go wrong while writing, reading or verifying a capture file.
///
/// Each variant carries the path of the file concerned and says what is wrong; the `Display`
/// text always starts with the path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CaptureError {
    /// An operating-system error (open, read, write, fsync, rename, map, ...).
    #[error("{path}: {op}: {source}")]
    Io {
        /// The file or directory concerned.
        path: PathBuf,
        /// What was being done, e.g. "writing" or "renaming into place".
        op: &'static str,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The file does not start with the capture magic bytes: it is not a capture file.
    #[error("{path}: not a kernel-wisdom capture file (bad magic bytes)")]
    BadMagic {
        /// The file concerned.
        path: PathBuf,
    },
    /// The file's format version is not one this library reads.
    #[error("{path}: unsupported capture format version {found} (this library reads version {supported})")]
    UnsupportedVersion {
        /// The file concerned.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// The version this library reads and writes.
        supported: u32,
    },
    /// The file is shorter than its own layout says: it was cut off.
    #[error("{path}: truncated capture file: {detail}")]
    Truncated {
        /// The file concerned.
        path: PathBuf,
        /// What is missing.
        detail: String,
    },
    /// The header (prefix fields, JSON text or frame table) is malformed.
    #[error("{path}: corrupt capture header: {detail}")]
    BadHeader {
        /// The file concerned.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// A checksum does not match the bytes it covers.
    #[error("{path}: checksum mismatch: {what}")]
    ChecksumMismatch {
        /// The file concerned.
        path: PathBuf,
        /// Which bytes (header, buffer chunk, buffer contents).
        what: String,
    },
    /// A compressed frame could not be decompressed, or decompressed to the wrong length.
    #[error("{path}: buffer `{buffer}`: cannot decompress: {detail}")]
    Decompress {
        /// The file concerned.
        path: PathBuf,
        /// The buffer being read.
        buffer: String,
        /// What went wrong.
        detail: String,
    },
    /// No buffer of that name is in the capture.
    #[error("{path}: no buffer named `{name}` in this capture")]
    UnknownBuffer {
        /// The file concerned.
        path: PathBuf,
        /// The name asked for.
        name: String,
    },
    /// A buffer's raw length cannot be allocated on this host.
    #[error("{path}: buffer `{buffer}`: cannot allocate {len} bytes")]
    OutOfMemory {
        /// The file concerned.
        path: PathBuf,
        /// The buffer being read.
        buffer: String,
        /// Its raw length.
        len: u64,
    },
    /// The writer was given something it cannot store (duplicate buffer names, metadata that
    /// does not serialise, ...).
    #[error("{path}: invalid capture input: {detail}")]
    InvalidInput {
        /// The file that was to be written.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// The background writer's thread is gone (it panicked); the job was not written.
    #[error("{path}: the background capture writer stopped: {detail}")]
    WriterStopped {
        /// The file that was to be written.
        path: PathBuf,
        /// What happened.
        detail: String,
    },
}

impl CaptureError {
    /// The file or directory this error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            CaptureError::Io { path, .. }
            | CaptureError::BadMagic { path }
            | CaptureError::UnsupportedVersion { path, .. }
            | CaptureError::Truncated { path, .. }
            | CaptureError::BadHeader { path, .. }
            | CaptureError::ChecksumMismatch { path, .. }
            | CaptureError::Decompress { path, .. }
            | CaptureError::UnknownBuffer { path, .. }
            | CaptureError::OutOfMemory { path, .. }
            | CaptureError::InvalidInput { path, .. }
            | CaptureError::WriterStopped { path, .. } => path,
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, op: &'static str, source: std::io::Error) -> Self {
        CaptureError::Io {
            path: path.into(),
            op,
            source,
        }
    }
}

/// Result type of this crate.
pub type Result<T, E = CaptureError> = std::result::Result<T, E>;
