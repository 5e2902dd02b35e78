//! Capturing launches for offline tuning.
//!
//! When the `KW_CAPTURE` environment variable (read once, at the first launch) or
//! [`set_capture_settings`] selects a kernel by its tuning key, [`WisdomKernel::launch`]
//! records selected launches into capture files (`kw-capture` format, one `.kwcap` file per
//! launch): the kernel definition with its source, the configuration, the argument values,
//! every buffer (its declared length) before the launch and, for each buffer the definition
//! declares written (`Out`/`InOut`, changed or not) or the launch changed, its contents after
//! the launch (the reference output), the problem size, the device and provenance.
//! The metadata schema is [`kw_core::capture_meta::CaptureMetadata`].
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `KW_CAPTURE` | glob patterns (`*`, `?`) over tuning keys, comma-separated; `*` = all | off |
//! | `KW_CAPTURE_DIR` | where the files go | `captures` |
//! | `KW_CAPTURE_SKIP` | launches of each selected kernel to skip first | 0 |
//! | `KW_CAPTURE_LIMIT` | captures per kernel and problem size | 1 |
//! | `KW_CAPTURE_FORCE` | capture even when an exact wisdom record exists | off |
//!
//! An invalid value is reported once on standard error and disables capture; the application
//! keeps running. A capture failure (host memory, an unwritable directory, ...) never fails
//! the launch: it is reported once per kernel.
//!
//! The application thread pays for the device-to-host copies (before and after the launch,
//! which it waits for); compression and writing run on a background thread. Captures still
//! pending at exit are written by an exit hook (no call needed;
//! [`flush_captures`](crate::flush_captures) waits for them explicitly). Each capture written
//! prints one line (file, raw and compressed size); at `KW_LOG=debug`, each launch that is
//! not captured says why (exact wisdom, skip count, limit) once per kernel and size; at exit,
//! `KW_CAPTURE` patterns that matched no launched kernel are reported with the tuning keys
//! that were launched. Buffers are captured to their declared length
//! ([`KernelBuilder::buffer_len`](crate::KernelBuilder::buffer_len)).
//!
//! When capture is off, a launch pays one relaxed atomic load for it.
//!
//! [`WisdomKernel::launch`]: crate::WisdomKernel::launch

mod exit_hook;
mod glob;
mod settings;
mod state;

pub use glob::glob_match;
pub use settings::{
    CaptureSettings, SettingsError, CAPTURE_DIR_ENV, CAPTURE_ENV, CAPTURE_FORCE_ENV,
    CAPTURE_LIMIT_ENV, CAPTURE_SKIP_ENV, DEFAULT_CAPTURE_DIR,
};
pub(crate) use state::{active, report, submit, ticket};
pub use state::{capture_settings, flush_captures, set_capture_settings};
