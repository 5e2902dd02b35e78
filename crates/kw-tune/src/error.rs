//! [`TuneError`]: everything that can go wrong while tuning, with context.

use std::path::PathBuf;
use thiserror::Error;

/// An error of the tuning engine.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TuneError {
    /// A results log could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A results log is malformed.
    #[error("{path}:{line}: {message}")]
    LogFormat {
        /// The file.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A results log belongs to another tuning space.
    #[error("{path}: the log was written for space {found}, this space is {expected} (different parameters or values)")]
    SpaceMismatch {
        /// The file.
        path: PathBuf,
        /// The fingerprint of the current space.
        expected: String,
        /// The fingerprint in the log.
        found: String,
    },
    /// A new log would replace an existing one (logs are never truncated).
    #[error("{path}: a results log already exists; continue it with --resume, or move it away to start over")]
    LogExists {
        /// The file.
        path: PathBuf,
    },
    /// Another run holds the results log's lock (`LogLock`): two runs
    /// never write one log.
    #[error("{path}: another tuning run is using this results log ({}); wait for it to end, or give this run another log (--log). The lock is {lock_file}, released when that process ends", holder.as_ref().map_or_else(|| "its pid is not recorded yet".to_string(), |h| format!("{h}")))]
    LogLocked {
        /// The log.
        path: PathBuf,
        /// The lock file.
        lock_file: PathBuf,
        /// The process holding it, when its lock file names it.
        holder: Option<crate::lock_holder::LockHolder>,
    },
    /// A results log was written for another capture, problem size, device or kernel.
    #[error("{path}: the log was written for another {field} ({logged}, this run: {current}); refusing to mix measurements")]
    LogMismatch {
        /// The file.
        path: PathBuf,
        /// What differs.
        field: &'static str,
        /// The value in the log.
        logged: String,
        /// The value of this run.
        current: String,
    },
    /// No strategy of this name.
    #[error("unknown strategy `{name}` (known: {known})")]
    UnknownStrategy {
        /// The requested name.
        name: String,
        /// The registered names, comma-separated.
        known: String,
    },
    /// A strategy's settings (`name:key=value:...`) could not be read.
    #[error("strategy `{name}`: {message}")]
    StrategyOption {
        /// The strategy's name with its settings.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// A suite directory holds no measured space.
    #[error("{dir}: no measured space (`<family>_<device>.json.gz` or `.json`) found")]
    EmptySuite {
        /// The directory.
        dir: PathBuf,
    },
    /// The evaluator reported a fatal failure that stops the run.
    #[error("evaluation of {config} failed fatally: {reason}")]
    Fatal {
        /// The configuration (Kernel Tuner key).
        config: String,
        /// The evaluator's reason.
        reason: String,
    },
    /// Every device of a run on several devices failed ([`crate::tuner::Lane`]).
    #[error("every device failed: {reasons}")]
    DevicesFailed {
        /// Each device with why it was dropped.
        reasons: String,
    },
    /// A strategy proposed a configuration that is not valid in the space (a strategy bug).
    #[error("strategy `{strategy}` proposed an invalid configuration {point}")]
    InvalidProposal {
        /// The strategy's name.
        strategy: String,
        /// The point (value indices).
        point: String,
    },
    /// A prior (earlier results of the kernel) could not be read.
    #[error("prior {path}: {message}")]
    Prior {
        /// The file.
        path: PathBuf,
        /// Why it is not a Kernel Tuner cache file, results log or wisdom file.
        message: String,
    },
    /// The space has no valid configuration.
    #[error("the tuning space has no valid configuration")]
    EmptySpace,
    /// A simulation's cache holds no successful configuration of the space.
    #[error("the cache file holds no successful configuration of the space")]
    NoSuccess,
    /// A Kernel Tuner file could not be read.
    #[error(transparent)]
    KernelTuner(#[from] kw_core::kernel_tuner::KtError),
    /// The tuning space could not be built.
    #[error("building the tuning space: {0}")]
    Space(#[from] kw_core::space::SpaceError),
}

impl TuneError {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> TuneError {
        TuneError::Io {
            path: path.into(),
            source,
        }
    }
}
