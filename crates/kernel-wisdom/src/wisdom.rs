//! Wisdom at launch: the records of a kernel's wisdom file, and the choice of a configuration
//! per problem size (the five steps of [`kw_core::wisdom::select`]).
//!
//! Search path: the directories in `KW_WISDOM_PATH` (separated like `PATH`), then the
//! application's wisdom directory ([`crate::WisdomKernel::with_wisdom_dir`]; `./wisdom` by
//! default). The first file found for the tuning key that loads wins; a corrupt file is
//! reported once and skipped. `KW_DEVICE_NAME` makes the selection use another device name
//! (the wisdom of a similar GPU). `KW_LOG=debug` prints every selection and its reasons.

use kw_core::wisdom::{explain, find_wisdom_file, select, Query, Step, WisdomRecord};
use kw_core::{Config, DeviceInfo, TuningSpace};
use std::path::{Path, PathBuf};

/// Directories searched before the application's own (`:`-separated on Unix).
pub const WISDOM_PATH_ENV: &str = "KW_WISDOM_PATH";
/// Overrides the device name used for selection.
pub const DEVICE_NAME_ENV: &str = "KW_DEVICE_NAME";
/// `debug` prints each selection with its reasons (see [`crate::diag`]).
pub const LOG_ENV: &str = crate::diag::LOG_ENV;

/// The default application wisdom directory.
pub const DEFAULT_WISDOM_DIR: &str = "wisdom";

/// The configuration chosen for a problem size, and why.
#[derive(Clone, Debug)]
pub struct Choice {
    /// The configuration.
    pub config: Config,
    /// The step that decided (step 5: the default configuration).
    pub step: Step,
    /// The record chosen, if any.
    pub record: Option<WisdomRecord>,
    /// The wisdom file it came from.
    pub file: Option<PathBuf>,
}

/// The wisdom of one kernel on one device, loaded once.
#[derive(Debug)]
pub struct WisdomSource {
    file: Option<PathBuf>,
    records: Vec<WisdomRecord>,
    /// `usable[i]`: record i's configuration is valid in the current space.
    usable: Vec<Result<(), String>>,
    query: Query,
    default_config: Config,
}

use crate::diag::debug_enabled;

/// Reports a warning once per process (keyed by the message).
fn report_once(message: String) {
    crate::diag::warn_once(message);
}

/// The search path: `KW_WISDOM_PATH`'s directories, then `app_dir` (or `./wisdom`).
pub fn search_path(app_dir: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os(WISDOM_PATH_ENV)
        .map(|p| {
            std::env::split_paths(&p)
                .filter(|d| !d.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    dirs.push(app_dir.map_or_else(|| PathBuf::from(DEFAULT_WISDOM_DIR), Path::to_path_buf));
    dirs
}

impl WisdomSource {
    /// Loads the wisdom of `tuning_key` from `dirs` for `device`. Never fails: problems are
    /// reported once and leave the kernel on its default configuration.
    pub fn load(
        tuning_key: &str,
        dirs: &[PathBuf],
        device: &DeviceInfo,
        space: &TuningSpace,
        default_config: &Config,
    ) -> WisdomSource {
        let (found, errors) = find_wisdom_file(tuning_key, dirs);
        for e in errors {
            report_once(format!("skipping a corrupt wisdom file: {e}"));
        }
        let (file, records) = match found {
            Some((path, f)) => (Some(path), f.records),
            None => (None, Vec::new()),
        };
        let usable: Vec<Result<(), String>> = records
            .iter()
            .map(|r| r.check_against(space).map(|_| ()))
            .collect();
        for (i, u) in usable.iter().enumerate() {
            if let (Err(why), Some(path)) = (u, &file) {
                report_once(format!(
                    "{}: ignoring record #{} of `{tuning_key}` (the kernel's tuning space changed?): {why}",
                    path.display(),
                    i + 1
                ));
            }
        }
        let device_name = std::env::var(DEVICE_NAME_ENV)
            .ok()
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| device.name.clone());
        WisdomSource {
            file,
            records,
            usable,
            query: Query {
                device_name,
                architecture: device.architecture.clone(),
                backend: device.backend.as_str().to_string(),
                problem_size: Vec::new(),
            },
            default_config: default_config.clone(),
        }
    }

    /// The wisdom file in use, if one was found.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// The records of that file.
    pub fn records(&self) -> &[WisdomRecord] {
        &self.records
    }

    /// The configuration for a problem size (trailing 1s are ignored).
    pub fn choose(&self, problem_size: &[i64]) -> Choice {
        let mut query = self.query.clone();
        query.problem_size = problem_size.to_vec();
        let mut index = 0;
        let selection = select(&self.records, &query, |_| {
            let r = self.usable[index].clone();
            index += 1;
            r
        });
        if debug_enabled() && !self.records.is_empty() {
            eprint!(
                "kernel-wisdom: selection in {}:\n{}",
                self.file.as_deref().unwrap_or(Path::new("?")).display(),
                explain(&self.records, &query, &selection)
            );
        }
        match selection.record {
            Some(i) => Choice {
                config: self.records[i].config.clone(),
                step: selection.step,
                record: Some(self.records[i].clone()),
                file: self.file.clone(),
            },
            None => Choice {
                config: self.default_config.clone(),
                step: Step::Default,
                record: None,
                file: self.file.clone(),
            },
        }
    }
}
