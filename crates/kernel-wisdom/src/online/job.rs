//! The background tuning of one problem size: reads back the device copies of its first
//! launch (made on the application's queue, [`kw_capture::record::snapshot_before`]), writes
//! the capture, runs
//! `kw tune` on it in a child process (which itself measures every candidate in a worker
//! process under a watchdog: a hanging or crashing candidate is a failed result, never the
//! application's problem), compiles the winner, hands it to the launches and publishes it.

use super::shared::SizeFiles;
use super::watch::{Tuned, Watch};
use super::TuneSettings;
use kw_capture::record::Deferred;
use kw_capture::{CaptureJob, CaptureWriter, WriteOptions};
use kw_core::backend::Device;
use kw_core::config::Config;
use kw_core::kernel_def::KernelDef;
use kw_core::wisdom::{wisdom_file_name, WisdomFile, WisdomRecord};
use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Where the runtime finds the `kw` binary first.
pub const KW_BIN_ENV: &str = "KW_BIN";
/// Why a tuning ended when the application exits: not a failure (a later run tunes the
/// size), and not reported.
const EXITING: &str = "stopped: the application is exiting";
/// Time added to a tuning's wall-time limit (device time / share) before the runtime stops
/// it: the `kw tune` process's start, its first compile and the capture's load.
const GRACE: Duration = Duration::from_secs(180);
/// The name of the thread that reads the copies back, writes the capture and runs `kw tune`.
const TUNING_THREAD: &str = "kw-online-tuning";

/// What one size's online tuning did.
#[derive(Clone, Debug, PartialEq)]
pub struct OnlineReport {
    /// The tuning key.
    pub tuning_key: String,
    /// The problem size.
    pub problem_size: Vec<i64>,
    /// The configuration the application used (and verification compared against).
    pub in_use: Config,
    /// Its time in the tuning, milliseconds (when it was measured).
    pub in_use_ms: Option<f64>,
    /// The tuned configuration.
    pub tuned: Config,
    /// Its time, milliseconds.
    pub tuned_ms: f64,
    /// Configurations evaluated.
    pub evaluations: u64,
    /// Evaluation time and wall time of the tuning (`kw tune --max-share`'s account).
    pub busy: Option<(Duration, Duration)>,
    /// Shared ranks: the launch from which every process uses it.
    pub adopt_at: Option<u64>,
    /// The directory of the tuning's capture, results log and output (kept for `kw tune`
    /// to refine later).
    pub job_dir: PathBuf,
}

impl OnlineReport {
    /// Whether the tuning found the configuration in use best (nothing changes).
    pub fn kept(&self) -> bool {
        self.tuned.key() == self.in_use.key()
    }
}

static REPORTS: Mutex<Vec<OnlineReport>> = Mutex::new(Vec::new());
/// Held by the tuning that runs: one at a time per process, so that `KW_TUNE_SHARE` caps the
/// share of all of them together.
static TURN: Mutex<()> = Mutex::new(());
/// The `kw tune` processes running, each with its standard input: `kw tune
/// --stop-on-stdin-eof` stops (and stops its worker) when that closes, which the exit hook
/// does, and which happens too when the application dies.
static RUNNING: Mutex<Vec<Child>> = Mutex::new(Vec::new());

/// Every online tuning of this process that ended with a result, in order.
pub fn online_reports() -> Vec<OnlineReport> {
    REPORTS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// One size's tuning, handed to its thread.
pub(crate) struct Job {
    pub(crate) files: SizeFiles,
    pub(crate) settings: TuneSettings,
    pub(crate) watch: Arc<Watch>,
    pub(crate) def: Arc<KernelDef>,
    pub(crate) device: Arc<dyn Device>,
    pub(crate) in_use: Config,
    /// The wisdom the kernel selects from, handed to `kw tune` as priors: its search path
    /// and its application directory may differ from the child's, and embedded files (the
    /// library's shipped records) exist only in the application.
    pub(crate) priors: Vec<Prior>,
}

/// A wisdom file the kernel selects from, a prior of its online tuning.
#[derive(Clone, Debug)]
pub(crate) enum Prior {
    /// A file on disk.
    File(PathBuf),
    /// A file embedded in the program: its label and text (written into the job directory
    /// for `kw tune`).
    Embedded(String, &'static str),
}

/// `kw tune --prior`'s files for `priors`: the embedded ones are written into `dir` first.
/// A file gone since the wisdom was loaded, or one that cannot be written, is left out with a
/// warning: the tuning runs without that prior rather than not at all.
fn prior_files(priors: &[Prior], dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::with_capacity(priors.len());
    for (i, prior) in priors.iter().enumerate() {
        match prior {
            // `kw tune` runs in the job directory: a relative path names the application's.
            Prior::File(path) => {
                let path = std::path::absolute(path).unwrap_or(path.clone());
                if path.is_file() {
                    files.push(path);
                } else {
                    kw_core::diag::warn(&format!(
                        "online tuning: the wisdom file {} is gone; not a prior",
                        path.display()
                    ));
                }
            }
            Prior::Embedded(label, text) => {
                let path = dir.join(format!("prior-{i}.json"));
                let modes = kw_core::files::FileModes::get();
                match kw_core::files::write_atomic(&path, text.as_bytes(), modes) {
                    Ok(()) => files.push(path),
                    Err(e) => kw_core::diag::warn(&format!(
                        "online tuning: writing the prior {label} to {}: {e}; not a prior",
                        path.display()
                    )),
                }
            }
        }
    }
    files
}

/// Starts the tuning of `capture`'s launch on its own thread (and the exit hook that stops
/// it).
pub(crate) fn start(job: Job, capture: Deferred) {
    crate::capture::install_exit_hook();
    let spawned = std::thread::Builder::new()
        .name(TUNING_THREAD.into())
        .spawn(move || run(job, capture));
    if let Err(e) = spawned {
        kw_core::diag::error(&format!("online tuning: cannot start its thread: {e}"));
    }
}

fn run(job: Job, capture: Deferred) {
    let claim = job.watch.take_claim();
    // The copies first, whatever tuning runs now: their device memory is freed at once.
    let capture = capture
        .finish(&job.def, job.device.info())
        .map_err(|e| format!("reading the launch's copies back: {e}"));
    let _turn = TURN.lock().unwrap_or_else(PoisonError::into_inner);
    let what = job.files.describe();
    let shared = job.settings.ranks == super::TuneRanks::Shared;
    match capture.and_then(|c| tune(&job, &c)) {
        Ok(Some(report)) => {
            let share = report.busy.map_or(String::new(), |(b, w)| {
                format!(
                    ", device time {:.2} s in {:.2} s ({:.1}%)",
                    b.as_secs_f64(),
                    w.as_secs_f64(),
                    100.0 * b.as_secs_f64() / w.as_secs_f64().max(1e-9)
                )
            });
            let when = match report.adopt_at {
                Some(at) => format!("every process sharing the directory switches at launch {at}"),
                None => "launches switch now".into(),
            };
            if report.kept() {
                kw_core::diag::info(&format!(
                    "online tuning of {what}: the configuration in use, {{{}}}, is the best found \
                     ({:.4} ms) after {} evaluations{share}; launches keep it",
                    report.tuned, report.tuned_ms, report.evaluations
                ));
            } else {
                let before = report.in_use_ms.map_or(String::new(), |ms| {
                    format!(" (the configuration in use: {ms:.4} ms)")
                });
                kw_core::diag::info(&format!(
                    "online tuning of {what}: {{{}}} at {:.4} ms{before} after {} \
                     evaluations{share}; {when}",
                    report.tuned, report.tuned_ms, report.evaluations
                ));
            }
            REPORTS
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(report);
        }
        // Shared ranks: the launches learn the published result at their checkpoints.
        Ok(None) if shared => {}
        Ok(None) => job.watch.finished_without_result(),
        Err(why) if why == EXITING => job.watch.finished_without_result(),
        Err(why) => {
            job.watch.finished_without_result();
            if shared {
                if let Err(e) = job.files.mark_failed() {
                    kw_core::diag::error(&format!("online tuning of {what}: {e}"));
                }
            }
            kw_core::diag::warn(&format!(
                "online tuning of {what} ended without a result; the application keeps its \
                 configuration: {why}"
            ));
        }
    }
    drop(claim);
}

/// The tuning of the launch `c` captured; `Ok(None)`: nothing to do (another process
/// published a result already).
fn tune(job: &Job, c: &CaptureJob) -> Result<Option<OnlineReport>, String> {
    let shared = job.settings.ranks == super::TuneRanks::Shared;
    if !job.files.to_tune().map_err(|e| e.to_string())? {
        return Ok(None);
    }
    // Compressed on this thread alone: a writer thread per processor (the default) would
    // take the processors from the application's threads while it runs.
    let options = WriteOptions {
        threads: 1,
        ..WriteOptions::default()
    };
    let capture = CaptureWriter::new(options)
        .write(&c.dir, &c.file_stem, &c.metadata, &c.buffers)
        .map_err(|e| format!("writing the capture: {e}"))?
        .path;
    let kw = find_kw().ok_or_else(|| {
        format!(
            "the `kw` binary was not found (set {KW_BIN_ENV}, or put it on PATH or beside the \
             application)"
        )
    })?;
    let dir = &c.dir;
    let wisdom_dir = dir.join("wisdom");
    let out_path = dir.join("tune.out");
    let out = kw_core::files::FileModes::get()
        .create_new()
        .open(&out_path)
        .map_err(|e| format!("{}: {e}", out_path.display()))?;
    let priors = prior_files(&job.priors, dir);
    let s = &job.settings;
    let wall = s.budget.device_time.div_f64(s.share);
    let mut args: Vec<OsString> = vec!["tune".into(), capture.into_os_string()];
    if !priors.is_empty() {
        args.push("--prior".into());
        args.extend(priors.into_iter().map(PathBuf::into_os_string));
    }
    let mut text = |v: &[&str]| args.extend(v.iter().map(OsString::from));
    text(&["--budget", &s.budget.evaluations.to_string()]);
    text(&[
        "--max-device-time",
        &format!("{}ms", s.budget.device_time.as_millis()),
    ]);
    text(&["--max-share", &s.share.to_string()]);
    text(&["--time", &format!("{}ms", wall.as_millis().max(1))]);
    text(&["--device", &job.device.info().name]);
    text(&["--compile-threads", "1"]);
    // One timed run per configuration, after one warm-up, each waited for on its own:
    // `kw tune` enqueues a batch of runs without a host wait in between, and the
    // application's launches then wait behind the whole batch (on a GPU shared by time
    // slices, up to a slice) instead of behind one candidate's run.
    text(&["--warmup", "1", "--samples", "1", "--stop-on-stdin-eof"]);
    args.extend([
        "--wisdom-dir".into(),
        wisdom_dir.clone().into_os_string(),
        "--log".into(),
        dir.join("tune.jsonl").into_os_string(),
    ]);
    let child = spawn_tune(&kw, &args, dir, &out, s.share)
        .map_err(|e| format!("cannot run {}: {e}", kw.display()))?;
    // The search takes at most `wall`, and the confirmation after it as long again (paced
    // by the share, with a device-time budget of its own).
    let status = wait(child, 2 * wall + GRACE)?;
    let output = std::fs::read_to_string(&out_path).unwrap_or_default();
    if !status {
        return Err(format!(
            "`kw tune` failed; its output ({}): {}",
            out_path.display(),
            tail(&output)
        ));
    }
    let record = tuned_record(&wisdom_dir, &job.files)?;
    let config = record.config.clone();
    let spec = job
        .def
        .compile_spec(&config, Some(job.device.info()))
        .map_err(|e| format!("configuration {{{config}}}: {e}"))?;
    let kernel = job
        .device
        .compile(&spec.request())
        .map_err(|e| format!("compiling the tuned configuration {{{config}}}: {e}"))?;
    job.watch.tuned(Tuned {
        config: config.clone(),
        kernel,
    });
    let tuned_ms = record.objective.median_ms;
    let evaluations = record.provenance.evaluations;
    let adopt_at = job
        .files
        .publish(record, shared.then_some(s.period))
        .map_err(|e| format!("publishing the result: {e}"))?;
    job.watch.switch_now();
    // Published: the job keeps its capture, results log and output (for `kw tune` to
    // refine), not a second copy of the record.
    let _ = std::fs::remove_dir_all(&wisdom_dir);
    // The configuration in use found best: its time is the result's (a median of the
    // confirmation), not the search's single measurement of it.
    let in_use_ms = if config.key() == job.in_use.key() {
        Some(tuned_ms)
    } else {
        logged_time(&dir.join("tune.jsonl"), &job.in_use)
    };
    Ok(Some(OnlineReport {
        tuning_key: job.files.key.clone(),
        problem_size: job.files.size.clone(),
        in_use_ms,
        in_use: job.in_use.clone(),
        tuned: config,
        tuned_ms,
        evaluations,
        busy: share_line(&output),
        adopt_at,
        job_dir: dir.clone(),
    }))
}

/// The niceness that gives a process about `share` of a processor that a process of niceness
/// 0 wants too (Linux weighs niceness `n` by `1024 / 1.25^n`): 10 for a tenth, 0 from a half.
fn niceness(share: f64) -> u32 {
    let weight = share / (1.0 - share).max(1e-9);
    let n = -weight.max(1e-9).ln() / 1.25f64.ln();
    n.round().clamp(0.0, 19.0) as u32
}

/// Starts `kw tune` with `args` in `dir`, its output to `out`, its standard input a pipe (see
/// [`RUNNING`]). On Unix it runs under `nice` where that exists, at the niceness of the share
/// ([`niceness`]): its compiles, its capture's load and, on a CPU device, its candidates' runs
/// take the processors the application leaves, and about the share of those the application
/// wants, never the application's turn.
fn spawn_tune(
    kw: &Path,
    args: &[OsString],
    dir: &Path,
    out: &File,
    share: f64,
) -> std::io::Result<Child> {
    let run = |program: &Path, prefix: &[&std::ffi::OsStr]| -> std::io::Result<Child> {
        let mut cmd = Command::new(program);
        cmd.args(prefix)
            .args(args)
            .current_dir(dir)
            .env_remove(super::TUNE_ENV)
            .env_remove(crate::CAPTURE_ENV)
            .stdin(Stdio::piped())
            .stdout(out.try_clone()?)
            .stderr(out.try_clone()?);
        // The application's OpenCL platforms (an ICD loader cuts the list short in it).
        kw_core::child_env::restore_icd_env(&mut cmd);
        cmd.spawn()
    };
    // (A `kw` that does not exist is reported as such, not as `nice`'s failure.)
    if cfg!(unix) && kw.is_file() {
        let n = niceness(share).to_string();
        let prefix = ["-n".as_ref(), n.as_ref(), kw.as_os_str()];
        if let Ok(child) = run(Path::new("nice"), &prefix) {
            return Ok(child);
        }
    }
    run(kw, &[])
}

/// Waits for `kw tune`, stopping it past `limit`; true when it succeeded.
fn wait(child: Child, limit: Duration) -> Result<bool, String> {
    let pid = child.id();
    RUNNING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(child);
    let started = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let mut running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(i) = running.iter().position(|c| c.id() == pid) else {
            return Err(EXITING.into());
        };
        match running[i].try_wait() {
            Ok(Some(status)) => {
                // Ended: `wait` returns at once.
                let _ = running.swap_remove(i).wait();
                return Ok(status.success());
            }
            Ok(None) if started.elapsed() > limit => {
                let mut c = running.swap_remove(i);
                let _ = c.kill();
                let _ = c.wait();
                return Err(format!(
                    "`kw tune` ran past {} s and was stopped",
                    limit.as_secs()
                ));
            }
            Ok(None) => {}
            Err(e) => {
                let mut c = running.swap_remove(i);
                let _ = c.kill();
                let _ = c.wait();
                return Err(format!("waiting for `kw tune`: {e}"));
            }
        }
    }
}

/// Stops every `kw tune` still running (at exit: the application does not wait for them):
/// closes their standard input (they stop their workers and end), and kills those still
/// running a second later.
pub(crate) fn stop_all() {
    let mut running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
    for c in running.iter_mut() {
        drop(c.stdin.take());
    }
    let until = Instant::now() + Duration::from_secs(1);
    for mut c in running.drain(..) {
        while Instant::now() < until && matches!(c.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = c.kill();
        let _ = c.wait();
    }
}

/// The record `kw tune` wrote for this device and size.
fn tuned_record(wisdom_dir: &Path, files: &SizeFiles) -> Result<WisdomRecord, String> {
    let path = wisdom_dir.join(wisdom_file_name(&files.key));
    let file = WisdomFile::load(&path).map_err(|e| format!("no result: {e}"))?;
    file.records
        .into_iter()
        .find(|r| r.device.name == files.device && super::trim(&r.problem_size) == files.size)
        .ok_or_else(|| format!("{}: no record of this device and size", path.display()))
}

/// The time the results log gives `config`, if it was measured.
fn logged_time(log: &Path, config: &Config) -> Option<f64> {
    let text = std::fs::read_to_string(log).ok()?;
    text.lines().skip(1).find_map(|line| {
        let v: serde_json::Value = serde_json::from_str(line).ok()?;
        let c: Config = serde_json::from_value(v.get("config")?.clone()).ok()?;
        (c == *config)
            .then(|| v.get("objective")?.as_f64())
            .flatten()
    })
}

/// `kw tune --max-share`'s account: `device share: busy_s=B wall_s=W`.
fn share_line(output: &str) -> Option<(Duration, Duration)> {
    let line = output.lines().find(|l| l.contains("device share:"))?;
    let field = |name: &str| -> Option<Duration> {
        let rest = line.split(name).nth(1)?;
        let v: f64 = rest.split_whitespace().next()?.parse().ok()?;
        Duration::try_from_secs_f64(v).ok()
    };
    Some((field("busy_s=")?, field("wall_s=")?))
}

/// The last lines of an output, on one line.
fn tail(output: &str) -> String {
    let lines: Vec<&str> = output.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(4)..].join(" | ")
}

/// The `kw` binary: `KW_BIN`, else beside the application (or one directory up: cargo's
/// `examples/` and `deps/`), else on `PATH`.
fn find_kw() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(KW_BIN_ENV).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let name = format!("kw{}", std::env::consts::EXE_SUFFIX);
    let exe = std::env::current_exe().ok();
    let beside = exe
        .iter()
        .flat_map(|e| e.ancestors().skip(1).take(2))
        .map(|d| d.join(&name));
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|d| d.join(&name));
    beside.chain(on_path).find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_niceness_gives_about_the_share() {
        assert_eq!(niceness(0.1), 10);
        assert_eq!(niceness(0.25), 5);
        assert_eq!(niceness(0.5), 0);
        assert_eq!(niceness(1.0), 0);
        assert_eq!(niceness(0.001), 19);
        for share in [0.05, 0.1, 0.2, 0.3] {
            let w = 1024.0 / 1.25f64.powi(niceness(share) as i32);
            let got = w / (w + 1024.0);
            assert!((got - share).abs() < share * 0.15, "{share}: {got}");
        }
    }

    #[test]
    fn the_share_line_parses() {
        let out = "kw tune: ...\n  device share: busy_s=0.250000 wall_s=2.600000 cap=0.1\n";
        assert_eq!(
            share_line(out),
            Some((Duration::from_millis(250), Duration::from_millis(2600)))
        );
        assert_eq!(share_line("no such line"), None);
    }

    /// The kernel's wisdom reaches `kw tune` as files: one on disk by its absolute path
    /// (the child runs in the job directory), one that is gone not at all, an embedded one
    /// written into the job directory.
    #[test]
    fn priors_become_files_for_kw_tune() {
        let dir = std::env::temp_dir().join(format!(
            "kw-prior-files-{}-{}",
            std::process::id(),
            kw_core::files::nonce(7)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        // A file on disk, a file that is gone (left out), an embedded file (written).
        let file = dir.join("k.json");
        std::fs::write(dir.join("k.json"), "{}").unwrap();
        let priors = [
            Prior::File(file),
            Prior::File(dir.join("gone.json")),
            Prior::Embedded("embedded:k.json".into(), "{\"records\": []}"),
        ];
        let files = prior_files(&priors, &dir);
        assert_eq!(files.len(), 2, "{files:?}");
        assert_eq!(files[0], dir.join("k.json"));
        assert!(files[0].is_absolute());
        assert_eq!(files[1], dir.join("prior-2.json"));
        assert_eq!(
            std::fs::read_to_string(&files[1]).unwrap(),
            "{\"records\": []}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
