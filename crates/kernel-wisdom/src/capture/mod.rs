//! Capturing launches for offline tuning (documented in the crate root).

mod exit_hook;
mod glob;
mod settings;
mod state;

pub(crate) use exit_hook::install as install_exit_hook;
pub use glob::glob_match;
pub use settings::{
    CaptureSettings, SettingsError, CAPTURE_DIR_ENV, CAPTURE_ENV, CAPTURE_FORCE_ENV,
    CAPTURE_LIMIT_ENV, CAPTURE_SKIP_ENV, DEFAULT_CAPTURE_DIR,
};
pub(crate) use state::{active, report, submit, ticket};
pub use state::{capture_settings, flush_captures, set_capture_settings};
