//! The process-wide state of `KW_TUNE`: the settings (read once from the environment, or set
//! from code), the sizes recorded or being tuned, and the exit report.

use super::settings::{TuneMode, TuneRanks, TuneSettings};
use kw_core::diag;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard, Once, PoisonError};

const UNINIT: u8 = 0;
const OFF: u8 = 1;
const RECORD: u8 = 2;
const ONLINE: u8 = 3;

/// The mode: the only thing a launch looks at when `KW_TUNE` is off.
static MODE: AtomicU8 = AtomicU8::new(UNINIT);
static ENV_ONCE: Once = Once::new();
static CONTROL: Mutex<Control> = Mutex::new(Control::new());

/// A kernel (tuning key and device name) at a problem size.
pub(crate) type SizeKey = (String, String, [i64; 3]);

struct Control {
    settings: Option<TuneSettings>,
    /// Sizes captured by [`TuneMode::Record`] (listed at exit).
    recorded: BTreeSet<(String, [i64; 3])>,
    /// Sizes whose online tuning this process started (once per process).
    started: BTreeSet<SizeKey>,
}

impl Control {
    const fn new() -> Control {
        Control {
            settings: None,
            recorded: BTreeSet::new(),
            started: BTreeSet::new(),
        }
    }
}

fn control() -> MutexGuard<'static, Control> {
    CONTROL.lock().unwrap_or_else(PoisonError::into_inner)
}

fn install(mut settings: TuneSettings) {
    if settings.mode == TuneMode::Online && settings.dir.is_none() {
        diag::error(
            "KW_TUNE=online: no user data directory (HOME, XDG_DATA_HOME) for the online \
             wisdom; set KW_TUNE_DIR. Online tuning is off",
        );
        settings.mode = TuneMode::Off;
    }
    // At least 2: launch 1 (the capture, in the process that tunes) is never a checkpoint,
    // and no switch is ever published for it (see `shared`).
    settings.period = settings.period.max(2);
    let mode = match settings.mode {
        TuneMode::Off => OFF,
        TuneMode::Record => RECORD,
        TuneMode::Online => ONLINE,
    };
    control().settings = Some(settings);
    MODE.store(mode, Ordering::Release);
}

fn init_from_env() {
    ENV_ONCE.call_once(|| match TuneSettings::from_env() {
        Ok(s) => install(s),
        Err(e) => {
            diag::error(&format!("{e}; KW_TUNE is off"));
            install(TuneSettings::new(TuneMode::Off));
        }
    });
}

#[inline]
fn mode_byte() -> u8 {
    match MODE.load(Ordering::Acquire) {
        UNINIT => {
            init_from_env();
            MODE.load(Ordering::Acquire)
        }
        m => m,
    }
}

/// Whether launches without an exact wisdom record are recorded.
#[inline]
pub(crate) fn recording() -> bool {
    mode_byte() == RECORD
}

/// Whether such launches are tuned online.
#[inline]
pub(crate) fn online() -> bool {
    mode_byte() == ONLINE
}

/// Replaces the `KW_TUNE*` settings; called before the first launch, the variables are never
/// read. Sizes already being tuned go on; sizes already launched keep their selection until
/// their tuning ends.
pub fn set_tune_settings(settings: TuneSettings) {
    ENV_ONCE.call_once(|| {});
    install(settings);
}

/// Sets the mode only (the other settings from the environment, or as set before): what
/// the C API's `kw_set_tune_mode` calls.
pub fn set_tune_mode(mode: TuneMode) {
    let mut s = tune_settings();
    s.mode = mode;
    set_tune_settings(s);
}

/// Sets the coordination between processes only (see [`set_tune_mode`]).
pub fn set_tune_ranks(ranks: TuneRanks) {
    let mut s = tune_settings();
    s.ranks = ranks;
    set_tune_settings(s);
}

/// The settings in effect (read from the environment if nothing was set yet).
pub fn tune_settings() -> TuneSettings {
    init_from_env();
    control()
        .settings
        .clone()
        .unwrap_or_else(|| TuneSettings::new(TuneMode::Off))
}

/// [`TuneMode::Record`]: the capture directory for the first launch of this kernel and
/// size, `None` for later ones. Installs the exit hook that writes and lists them.
pub(crate) fn record_ticket(tuning_key: &str, problem_size: &[i64; 3]) -> Option<PathBuf> {
    let mut c = control();
    let dir = c.settings.as_ref()?.capture_dir.clone();
    if !c.recorded.insert((tuning_key.to_string(), *problem_size)) {
        return None;
    }
    crate::capture::install_exit_hook();
    Some(dir)
}

/// [`TuneMode::Online`]: true the first time this process asks for a kernel and size.
pub(crate) fn first_start(key: &SizeKey) -> bool {
    control().started.insert(key.clone())
}

/// Called by the exit hook: lists the sizes recorded, and stops the tuning still running.
pub(crate) fn at_exit() {
    super::job::stop_all();
    let c = control();
    if c.recorded.is_empty() {
        return;
    }
    let dir = c
        .settings
        .as_ref()
        .map_or_else(PathBuf::new, |s| s.capture_dir.clone());
    let list: Vec<String> = c
        .recorded
        .iter()
        .map(|(key, ps)| format!("`{key}` {}", super::size_text(ps)))
        .collect();
    diag::info(&format!(
        "KW_TUNE=record: {} kernel size(s) without an exact wisdom record were captured into \
         {} (tune them with `kw tune {}/*.kwcap`): {}",
        list.len(),
        dir.display(),
        dir.display(),
        list.join(", ")
    ));
}
