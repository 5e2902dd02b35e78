//! The process-wide capture state: the settings (read once from the environment, or set from
//! code), the per-kernel launch counters, and the background writer. Failures are reported
//! once per kernel and process through `kw_core::diag`.

use super::exit_hook;
use super::settings::CaptureSettings;
use kw_capture::record::RecordError;
use kw_capture::{BackgroundWriter, CaptureError, CaptureJob, WriteOptions, WrittenCapture};
use kw_core::diag;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard, Once, OnceLock, PoisonError};

const UNINIT: u8 = 0;
const OFF: u8 = 1;
const ON: u8 = 2;

/// Whether capture is on: the only thing a launch looks at when it is off.
static STATE: AtomicU8 = AtomicU8::new(UNINIT);
/// Reads the environment once (or is consumed by [`set_capture_settings`]).
static ENV_ONCE: Once = Once::new();
static CONTROL: Mutex<Control> = Mutex::new(Control::new());
/// The background writer, started at the first capture.
static WRITER: OnceLock<Mutex<Option<BackgroundWriter>>> = OnceLock::new();

/// Settings and counters, behind [`CONTROL`].
struct Control {
    settings: Option<CaptureSettings>,
    /// Launches seen per tuning key (selected kernels only).
    launches: BTreeMap<String, u64>,
    /// Captures started per tuning key and problem size.
    captured: BTreeMap<(String, [i64; 3]), u64>,
    /// Every tuning key launched while capture was on (for the exit report).
    keys: BTreeSet<String>,
    /// The patterns that selected at least one launched kernel.
    matched: BTreeSet<usize>,
}

impl Control {
    const fn new() -> Control {
        Control {
            settings: None,
            launches: BTreeMap::new(),
            captured: BTreeMap::new(),
            keys: BTreeSet::new(),
            matched: BTreeSet::new(),
        }
    }
}

fn control() -> MutexGuard<'static, Control> {
    CONTROL.lock().unwrap_or_else(PoisonError::into_inner)
}

fn install(settings: Option<CaptureSettings>) {
    let mut c = control();
    let on = settings.is_some();
    *c = Control::new();
    c.settings = settings;
    STATE.store(if on { ON } else { OFF }, Ordering::Relaxed);
}

fn init_from_env() {
    ENV_ONCE.call_once(|| match CaptureSettings::from_env() {
        Ok(s) => install(s),
        Err(e) => {
            diag::error(&format!("{e}; capture is disabled"));
            install(None);
        }
    });
}

/// Whether capture is on. One relaxed atomic load once the settings are known; the first call
/// reads the `KW_CAPTURE*` environment variables.
#[inline]
pub(crate) fn active() -> bool {
    match STATE.load(Ordering::Relaxed) {
        OFF => false,
        ON => true,
        _ => {
            init_from_env();
            STATE.load(Ordering::Relaxed) == ON
        }
    }
}

/// Replaces the capture settings (`None`: capture off). Takes precedence over the
/// environment: called before the first launch, the `KW_CAPTURE*` variables are never read.
/// Resets the SKIP and LIMIT counters (failures stay reported once per kernel and process).
pub fn set_capture_settings(settings: Option<CaptureSettings>) {
    ENV_ONCE.call_once(|| {});
    install(settings);
}

/// The capture settings in effect (read from the environment if nothing was set yet).
pub fn capture_settings() -> Option<CaptureSettings> {
    init_from_env();
    control().settings.clone()
}

/// Decides whether this launch is captured; if so, counts it and returns the directory.
///
/// `exact_wisdom_exists`: the selection found a wisdom record for exactly this device and
/// problem size; such launches are captured only with `force`.
pub(crate) fn ticket(
    tuning_key: &str,
    problem_size: &[i64; 3],
    exact_wisdom_exists: bool,
) -> Option<PathBuf> {
    let mut c = control();
    let s = c.settings.as_ref()?;
    let matched: Vec<usize> = (0..s.patterns.len())
        .filter(|&i| super::glob::glob_match(&s.patterns[i], tuning_key))
        .collect();
    let (skip, limit, dir, force) = (s.skip, s.limit, s.dir.clone(), s.force);
    if !c.keys.contains(tuning_key) {
        c.keys.insert(tuning_key.to_string());
        install_exit_hook();
    }
    if matched.is_empty() {
        return None;
    }
    c.matched.extend(matched);
    if exact_wisdom_exists && !force {
        // Asked for but not done: said at the default level, once per kernel and size.
        if diag::once(&format!("capture-exact {tuning_key} {problem_size:?}")) {
            diag::info(&format!(
                "kernel `{tuning_key}`, problem size {problem_size:?}: not captured: an exact \
                 wisdom record exists for this device and size (KW_CAPTURE_FORCE=1 captures \
                 anyway)"
            ));
        }
        return None;
    }
    let seen = c.launches.entry(tuning_key.to_string()).or_insert(0);
    *seen += 1;
    if *seen <= skip {
        let why = "skipped (KW_CAPTURE_SKIP)";
        explain(tuning_key, problem_size, why);
        return None;
    }
    let n = c
        .captured
        .entry((tuning_key.to_string(), *problem_size))
        .or_insert(0);
    if *n >= limit {
        let why = "the capture limit for this size is reached (KW_CAPTURE_LIMIT)";
        explain(tuning_key, problem_size, why);
        return None;
    }
    *n += 1;
    Some(dir)
}

/// At debug level: why a launch was not captured (once per kernel, size and reason).
fn explain(tuning_key: &str, problem_size: &[i64; 3], why: &'static str) {
    if diag::debug_enabled()
        && diag::once(&format!("capture-skip {tuning_key} {problem_size:?} {why}"))
    {
        diag::debug(&format!(
            "kernel `{tuning_key}`, problem size {problem_size:?}: launch not captured: {why}"
        ));
    }
}

/// The patterns of `KW_CAPTURE` that selected no launched kernel, for the exit report.
fn unmatched_report(c: &Control) -> Option<String> {
    let s = c.settings.as_ref()?;
    let unmatched: Vec<&str> = s
        .patterns
        .iter()
        .enumerate()
        .filter(|(i, _)| !c.matched.contains(i))
        .map(|(_, p)| p.as_str())
        .collect();
    if unmatched.is_empty() || c.keys.is_empty() {
        return None;
    }
    let keys: Vec<&str> = c.keys.iter().map(String::as_str).collect();
    Some(format!(
        "capture pattern(s) {} matched no kernel; the tuning keys launched were: {}",
        unmatched
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", "),
        keys.join(", ")
    ))
}

/// Installs [`at_exit`] as the exit hook (once per process).
pub(crate) fn install_exit_hook() {
    exit_hook::install(at_exit);
}

/// What the exit hook does: writes every pending capture and reports patterns that matched
/// nothing.
fn at_exit() {
    flush_captures();
    crate::online::at_exit();
    if let Some(message) = unmatched_report(&control()) {
        diag::warn(&message);
    }
}

/// One line per capture written: the file, raw and compressed sizes.
fn announce(r: &Result<WrittenCapture, CaptureError>) {
    if let Ok(w) = r {
        diag::info(&format!(
            "capture written: {} ({} raw, {} compressed)",
            w.path.display(),
            diag::bytes(w.sizes.raw_len),
            diag::bytes(w.sizes.file_len)
        ));
    }
}

/// Reports a capture failure on standard error, once per tuning key.
pub(crate) fn report(tuning_key: &str, failure: &RecordError) {
    diag::error_once(
        &format!("capture-failure {tuning_key}"),
        &format!(
            "kernel `{tuning_key}`: launch not captured (the launch itself is unaffected; \
             further capture failures of this kernel are not reported): {failure}"
        ),
    );
}

/// Hands a capture to the background writer (started on first use).
pub(crate) fn submit(job: CaptureJob) -> Result<(), RecordError> {
    let mut w = WRITER
        .get_or_init(|| Mutex::new(None))
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let writer = match &mut *w {
        Some(w) => w,
        None => w.insert(
            BackgroundWriter::with_notify(WriteOptions::default(), announce)
                .map_err(RecordError::Writer)?,
        ),
    };
    writer.submit(job);
    Ok(())
}

/// Waits until every capture handed to the background writer is on disk and returns the
/// paths written (or why a capture could not be written), in launch order, since the last
/// call. Failures are also reported on standard error.
///
/// Captures still pending when the process exits are written by an exit hook (installed at
/// the first launch while capture is on; it runs on every exit path that runs `atexit`
/// handlers: returning from `main`, `std::process::exit`, a panic in `main`), so an
/// application needs no call. Call it to know the files written, or before an exit that
/// skips those handlers (`_exit`, a signal). Cheap when nothing was captured.
pub fn flush_captures() -> Vec<Result<PathBuf, CaptureError>> {
    let Some(w) = WRITER.get() else {
        return Vec::new();
    };
    let w = w.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(writer) = w.as_ref() else {
        return Vec::new();
    };
    writer
        .flush()
        .into_iter()
        .map(|r| {
            r.map(|written| written.path).inspect_err(|e| {
                diag::error(&format!("capture not written: {e}"));
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The only unit test touching the process-wide settings (tests run in parallel).
    #[test]
    fn skip_limit_force_and_patterns() {
        let mut s = CaptureSettings::new(["k?", "other"]);
        s.skip = 2;
        s.limit = 2;
        set_capture_settings(Some(s.clone()));
        assert!(active());
        assert_eq!(capture_settings(), Some(s.clone()));
        let a = [10, 1, 1];
        let b = [20, 1, 1];
        assert_eq!(ticket("kx", &a, false), None, "launch 1 skipped");
        assert_eq!(ticket("kx", &b, false), None, "launch 2 skipped");
        assert!(ticket("kx", &a, false).is_some(), "launch 3");
        assert!(ticket("kx", &a, false).is_some(), "limit 2 per size");
        assert_eq!(ticket("kx", &a, false), None, "limit reached");
        assert!(ticket("kx", &b, false).is_some(), "another size");
        assert_eq!(ticket("kxy", &a, false), None, "not selected");
        // Exact wisdom: not captured unless forced (and then counted as usual).
        assert_eq!(ticket("other", &a, true), None);
        assert_eq!(ticket("other", &a, true), None);
        assert_eq!(ticket("other", &a, true), None);
        s.force = true;
        s.skip = 0;
        set_capture_settings(Some(s));
        assert!(ticket("other", &a, true).is_some());
        set_capture_settings(None);
        assert!(!active());
        assert_eq!(ticket("other", &b, false), None);
    }
}
