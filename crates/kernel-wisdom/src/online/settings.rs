//! [`TuneSettings`]: what `KW_TUNE` asks for (record the sizes wisdom misses, or tune them
//! while the application runs), parsed from the `KW_TUNE*` environment variables or built in
//! code.

use crate::capture::{CAPTURE_DIR_ENV, DEFAULT_CAPTURE_DIR};
use crate::SettingsError;
use std::path::PathBuf;
use std::time::Duration;

/// `off` (default), `record` or `online`.
pub const TUNE_ENV: &str = "KW_TUNE";
/// Per problem size: `EVALS`, `TIME` or both, comma-separated (`32,10s`; `evals=32,time=10s`).
pub const TUNE_BUDGET_ENV: &str = "KW_TUNE_BUDGET";
/// The largest share of the device's time tuning takes (`0.1` or `10%`).
pub const TUNE_SHARE_ENV: &str = "KW_TUNE_SHARE";
/// Where online results are written and read (default: [`default_online_dir`]).
pub const TUNE_DIR_ENV: &str = "KW_TUNE_DIR";
/// `shared`: processes sharing [`TUNE_DIR_ENV`] use identical configurations at every launch
/// count (one tunes, all switch at the same launch); `own` (default): each process for itself.
pub const TUNE_RANKS_ENV: &str = "KW_TUNE_RANKS";

/// Evaluations per problem size by default: on the recorded tuning spaces the default
/// strategy reaches on average 0.88 of the best configuration's performance after 25
/// evaluations and 0.93 after 50 without a prior, 0.97 and 0.98 with other GPUs' results as
/// prior (`docs/strategies.md`); 32 buys most of that while a size's tuning stays short
/// (`docs/online-tuning.md`).
pub const DEFAULT_EVALUATIONS: u64 = 32;
/// Device time per problem size by default (evaluations counted whole, compile waits
/// included): at the default share, at most 100 s of wall time per size.
pub const DEFAULT_DEVICE_TIME: Duration = Duration::from_secs(10);
/// The default largest share of the device's time taken by tuning.
pub const DEFAULT_SHARE: f64 = 0.1;
/// Launches between two checkpoints of a size being tuned with [`TuneRanks::Shared`].
pub const DEFAULT_PERIOD: u64 = 100;

/// What the runtime does for a launch whose configuration no exact wisdom record decided
/// (selection step 2 or later: another size, another device, the default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TuneMode {
    /// Nothing (the default).
    Off,
    /// Capture the first such launch of each kernel and size into the capture directory, and
    /// list them at exit (for `kw tune` on a tuning node).
    Record,
    /// Tune such a size in the background while the application runs, and switch to the
    /// result.
    Online,
}

impl TuneMode {
    /// `off`, `record` or `online` (the `KW_TUNE` spelling).
    pub fn as_str(self) -> &'static str {
        match self {
            TuneMode::Off => "off",
            TuneMode::Record => "record",
            TuneMode::Online => "online",
        }
    }
}

/// Whether processes that share the online directory coordinate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TuneRanks {
    /// Each process tunes and switches on its own (the default).
    Own,
    /// One process tunes a size; every process switches at the same launch count
    /// (documented in `docs/online-tuning.md`).
    Shared,
}

impl TuneRanks {
    /// `own` or `shared` (the `KW_TUNE_RANKS` spelling).
    pub fn as_str(self) -> &'static str {
        match self {
            TuneRanks::Own => "own",
            TuneRanks::Shared => "shared",
        }
    }
}

/// The budget of one problem size's online tuning.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TuneBudget {
    /// Configurations evaluated at most.
    pub evaluations: u64,
    /// Evaluation time (device time, counted whole) at most.
    pub device_time: Duration,
}

impl Default for TuneBudget {
    fn default() -> TuneBudget {
        TuneBudget {
            evaluations: DEFAULT_EVALUATIONS,
            device_time: DEFAULT_DEVICE_TIME,
        }
    }
}

/// The settings of recording and online tuning.
///
/// ```
/// use kernel_wisdom::{set_tune_settings, TuneMode, TuneSettings};
/// let mut s = TuneSettings::new(TuneMode::Online);
/// s.dir = Some(std::env::temp_dir().join("my-online-wisdom"));
/// s.share = 0.05;
/// set_tune_settings(s);
/// # set_tune_settings(TuneSettings::new(TuneMode::Off));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TuneSettings {
    /// What to do.
    pub mode: TuneMode,
    /// Coordination between processes sharing [`TuneSettings::dir`].
    pub ranks: TuneRanks,
    /// Per problem size.
    pub budget: TuneBudget,
    /// The largest share of the device's time (0, 1].
    pub share: f64,
    /// The online wisdom directory (`None`: no user data directory was found; online tuning
    /// is then off, with a message).
    pub dir: Option<PathBuf>,
    /// Where [`TuneMode::Record`] writes its captures (`KW_CAPTURE_DIR`, default `captures`).
    pub capture_dir: PathBuf,
    /// Launches between checkpoints with [`TuneRanks::Shared`] (at least 2).
    pub period: u64,
}

/// The default online wisdom directory: `$XDG_DATA_HOME/kernel-wisdom/online`, else
/// `$HOME/.local/share/kernel-wisdom/online` (macOS: `~/Library/Application
/// Support/kernel-wisdom/online`; Windows: `%LOCALAPPDATA%\kernel-wisdom\online`).
pub fn default_online_dir() -> Option<PathBuf> {
    let var = |n: &str| {
        std::env::var_os(n)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base = if cfg!(windows) {
        var("LOCALAPPDATA")
    } else if cfg!(target_os = "macos") {
        var("HOME").map(|h| h.join("Library").join("Application Support"))
    } else {
        var("XDG_DATA_HOME").or_else(|| var("HOME").map(|h| h.join(".local").join("share")))
    };
    base.map(|b| b.join("kernel-wisdom").join("online"))
}

impl TuneSettings {
    /// `mode` with the defaults: own ranks, [`TuneBudget::default`], [`DEFAULT_SHARE`],
    /// [`default_online_dir`], `captures`, [`DEFAULT_PERIOD`].
    pub fn new(mode: TuneMode) -> TuneSettings {
        TuneSettings {
            mode,
            ranks: TuneRanks::Own,
            budget: TuneBudget::default(),
            share: DEFAULT_SHARE,
            dir: default_online_dir(),
            capture_dir: PathBuf::from(DEFAULT_CAPTURE_DIR),
            period: DEFAULT_PERIOD,
        }
    }

    /// The settings from the process environment (`KW_TUNE`, `KW_TUNE_BUDGET`,
    /// `KW_TUNE_SHARE`, `KW_TUNE_DIR`, `KW_TUNE_RANKS`, `KW_CAPTURE_DIR`).
    pub fn from_env() -> Result<TuneSettings, SettingsError> {
        TuneSettings::from_vars(|name| {
            std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
        })
    }

    /// The settings from variables looked up by `get`.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<TuneSettings, SettingsError> {
        let set = |var: &str| get(var).filter(|v| !v.trim().is_empty());
        let invalid = |var: &'static str, value: &str, reason: String| SettingsError {
            var,
            value: value.to_string(),
            reason,
        };
        let mode = match set(TUNE_ENV) {
            None => TuneMode::Off,
            Some(v) => parse_mode(&v).map_err(|r| invalid(TUNE_ENV, &v, r))?,
        };
        let mut s = TuneSettings::new(mode);
        if let Some(v) = set(TUNE_RANKS_ENV) {
            s.ranks = parse_ranks(&v).map_err(|r| invalid(TUNE_RANKS_ENV, &v, r))?;
        }
        if let Some(v) = set(TUNE_BUDGET_ENV) {
            s.budget = parse_budget(&v).map_err(|r| invalid(TUNE_BUDGET_ENV, &v, r))?;
        }
        if let Some(v) = set(TUNE_SHARE_ENV) {
            s.share =
                kw_core::duration::parse_share(&v).map_err(|r| invalid(TUNE_SHARE_ENV, &v, r))?;
        }
        if let Some(v) = get(TUNE_DIR_ENV).filter(|v| !v.is_empty()) {
            s.dir = Some(PathBuf::from(v));
        }
        if let Some(v) = get(CAPTURE_DIR_ENV).filter(|v| !v.is_empty()) {
            s.capture_dir = PathBuf::from(v);
        }
        Ok(s)
    }
}

/// `off`, `record`, `online` (case-insensitive; `0`/`none` mean off).
pub fn parse_mode(text: &str) -> Result<TuneMode, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "" | "off" | "0" | "none" => Ok(TuneMode::Off),
        "record" => Ok(TuneMode::Record),
        "online" => Ok(TuneMode::Online),
        _ => Err("expected off, record or online".into()),
    }
}

/// `own` or `shared`.
pub fn parse_ranks(text: &str) -> Result<TuneRanks, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "own" | "" => Ok(TuneRanks::Own),
        "shared" => Ok(TuneRanks::Shared),
        _ => Err("expected own or shared".into()),
    }
}

/// `32`, `10s`, `32,10s`, `evals=32,time=10s`: what is not given keeps its default.
fn parse_budget(text: &str) -> Result<TuneBudget, String> {
    let mut b = TuneBudget::default();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (key, value) = match item.split_once('=') {
            Some((k, v)) => (Some(k.trim()), v.trim()),
            None => (None, item),
        };
        let as_count = value.parse::<u64>();
        match (key, as_count) {
            (Some("evals" | "evaluations"), Ok(n)) | (None, Ok(n)) if n > 0 => b.evaluations = n,
            (Some("evals" | "evaluations"), _) | (None, Ok(_)) => {
                return Err(format!("`{item}`: at least one evaluation"))
            }
            (Some("time"), _) | (None, Err(_)) => {
                b.device_time = kw_core::duration::parse_duration(value)?;
                if b.device_time.is_zero() {
                    return Err(format!("`{item}`: a device time above zero"));
                }
            }
            (Some(other), _) => return Err(format!("unknown budget item `{other}`")),
        }
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn parse(vars: &[(&str, &str)]) -> Result<TuneSettings, SettingsError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        TuneSettings::from_vars(|k| map.get(k).cloned())
    }

    #[test]
    fn defaults_and_values() {
        let d = parse(&[]).unwrap();
        assert_eq!(d.mode, TuneMode::Off);
        assert_eq!(d.budget, TuneBudget::default());
        let s = parse(&[
            (TUNE_ENV, "Online"),
            (TUNE_RANKS_ENV, "shared"),
            (TUNE_BUDGET_ENV, "evals=5, time=2s"),
            (TUNE_SHARE_ENV, "25%"),
            (TUNE_DIR_ENV, "/tmp/o"),
            (CAPTURE_DIR_ENV, "/tmp/c"),
        ])
        .unwrap();
        assert_eq!((s.mode, s.ranks), (TuneMode::Online, TuneRanks::Shared));
        assert_eq!(s.budget.evaluations, 5);
        assert_eq!(s.budget.device_time, Duration::from_secs(2));
        assert_eq!(s.share, 0.25);
        assert_eq!(s.dir, Some(PathBuf::from("/tmp/o")));
        assert_eq!(s.capture_dir, PathBuf::from("/tmp/c"));
        let r = parse(&[(TUNE_ENV, "record"), (TUNE_BUDGET_ENV, "500ms")]).unwrap();
        assert_eq!(r.mode, TuneMode::Record);
        assert_eq!(r.budget.device_time, Duration::from_millis(500));
        assert_eq!(r.budget.evaluations, DEFAULT_EVALUATIONS);
    }

    #[test]
    fn invalid_values_name_the_variable() {
        for (var, value) in [
            (TUNE_ENV, "sometimes"),
            (TUNE_RANKS_ENV, "all"),
            (TUNE_BUDGET_ENV, "0"),
            (TUNE_BUDGET_ENV, "cost=3"),
            (TUNE_BUDGET_ENV, "5d"),
            (TUNE_SHARE_ENV, "0"),
            (TUNE_SHARE_ENV, "150%"),
        ] {
            let e = parse(&[(TUNE_ENV, "online"), (var, value)]).unwrap_err();
            assert_eq!(e.var, var, "{e}");
        }
    }
}
