//! Capturing launches for offline tuning.
//!
//! When the `KW_CAPTURE` environment variable (read once, at the first launch) or
//! [`set_capture_settings`] selects a kernel by its tuning key, [`WisdomKernel::launch`]
//! records selected launches into capture files (`kw-capture` format, one `.kwcap` file per
//! launch): the kernel definition with its source, the configuration, the argument values,
//! every buffer before the launch and, for each buffer the definition declares written
//! (`Out`/`InOut`, changed or not) or the launch changed, its contents after the launch (the
//! reference output), the problem size, the device and provenance.
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
//! which it waits for); compression and writing run on a background thread. **Call
//! [`flush_captures`](crate::flush_captures) before the application exits**: Rust never drops
//! statics, so captures still being written when `main` returns would be lost.
//!
//! When capture is off, a launch pays one relaxed atomic load for it.
//!
//! [`WisdomKernel::launch`]: crate::WisdomKernel::launch

mod error;
mod glob;
mod provenance;
pub(crate) mod record;
mod settings;
mod state;

pub use error::CaptureFailure;
pub use glob::glob_match;
pub use provenance::{host_name, TOOL_VERSION};
pub use record::{input_frame_name, output_frame_name};
pub use settings::{
    CaptureSettings, SettingsError, CAPTURE_DIR_ENV, CAPTURE_ENV, CAPTURE_FORCE_ENV,
    CAPTURE_LIMIT_ENV, CAPTURE_SKIP_ENV, DEFAULT_CAPTURE_DIR,
};
pub(crate) use state::{active, report, ticket};
pub use state::{capture_settings, flush_captures, set_capture_settings};
