//! Capturing launches for offline tuning (documented in the crate root).

mod exit_hook;
mod glob;
mod settings;
mod state;

pub use settings::{
    CaptureSettings, SettingsError, CAPTURE_DIR_ENV, CAPTURE_ENV, CAPTURE_FORCE_ENV,
    CAPTURE_LIMIT_ENV, CAPTURE_SKIP_ENV, DEFAULT_CAPTURE_DIR,
};
pub(crate) use state::{active, install_exit_hook, report, submit, ticket};
pub use state::{capture_settings, flush_captures, set_capture_settings};
