//! `KW_TUNE`: what the runtime does for a launch that no exact wisdom record covers (its
//! configuration came from another size, another device or the default; selection step 2 or
//! later).
//!
//! - `record`: the first such launch of each kernel and size is captured into
//!   `KW_CAPTURE_DIR` (the capture machinery, `crate::capture`) and listed at exit, for
//!   `kw tune` on a tuning node. Nothing else changes.
//! - `online`: the first such launch is captured into a private job directory of the online
//!   wisdom directory (`KW_TUNE_DIR`), and a background thread runs `kw tune` on it in a child
//!   process (`online/job.rs`), bounded by `KW_TUNE_BUDGET` and `KW_TUNE_SHARE`. The application's
//!   launches never wait: they keep their configuration until the tuned one is compiled,
//!   then switch (`online/watch.rs`). The result is published in the online directory, which the
//!   selection reads in later runs (the last directory of the search path).
//! - `KW_TUNE_RANKS=shared`: processes sharing the online directory use the same
//!   configuration at every launch count (`online/shared.rs` states and proves the rule).
//!
//! The user documentation is `docs/online-tuning.md`.

pub(crate) mod job;
mod settings;
pub(crate) mod shared;
mod state;
pub(crate) mod watch;

pub use job::{online_reports, OnlineReport, KW_BIN_ENV};
pub use settings::{
    default_online_dir, parse_mode, parse_ranks, TuneBudget, TuneMode, TuneRanks, TuneSettings,
    DEFAULT_DEVICE_TIME, DEFAULT_EVALUATIONS, DEFAULT_PERIOD, DEFAULT_SHARE, TUNE_BUDGET_ENV,
    TUNE_DIR_ENV, TUNE_ENV, TUNE_RANKS_ENV, TUNE_SHARE_ENV,
};
pub(crate) use state::{at_exit, first_start, online, record_ticket, recording};
pub use state::{set_tune_mode, set_tune_ranks, set_tune_settings, tune_settings};

use std::path::PathBuf;

/// The online wisdom directory as a wisdom search directory: read by every process (after
/// `KW_WISDOM_PATH` and the application's directory), except those tuning online with
/// shared ranks, which use its records only through [`shared`]'s rule. `None` when it does
/// not exist.
pub(crate) fn search_dir() -> Option<PathBuf> {
    let s = tune_settings();
    if s.mode == TuneMode::Online && s.ranks == TuneRanks::Shared {
        return None;
    }
    s.dir.filter(|d| d.is_dir())
}

/// A problem size without trailing 1s (at least one axis).
pub(crate) fn trim(size: &[i64]) -> Vec<i64> {
    let mut end = size.len();
    while end > 1 && size[end - 1] == 1 {
        end -= 1;
    }
    size[..end].to_vec()
}

/// `1000x20`.
pub(crate) fn size_text(size: &[i64]) -> String {
    let axes: Vec<String> = trim(size).iter().map(i64::to_string).collect();
    axes.join("x")
}
