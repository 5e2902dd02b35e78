//! `kw tune CAPTURE...`: replays each capture on a device under many configurations
//! (default configuration first), verified against the captured output, logs every
//! evaluation, prints a summary and adds the best configuration to the kernel's wisdom file.
//! Configurations are measured in worker processes under a watchdog ([`super::isolated`]):
//! a hang or a crash is a failed result. Ctrl-C stops at once (a hung evaluation included,
//! which is then not recorded) and prints the command that resumes.

mod args;
mod confirm;
mod device;
mod device_set;
mod lanes;
mod multi;
mod objective;
mod one;
mod prior;
mod progress;
pub mod report;
mod share;

pub use args::{parse_duration, TuneArgs};

use anyhow::{bail, Context, Result};
use args::stop_condition;
use device::bundled_capture;
use kw_core::wisdom::check_writable;
use kw_tune::{strategies, Stop, StopReason};
use one::tune_one;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// Held while a capture's summary is printed: runs side by side (`--devices`) print whole
/// summaries, not interleaved lines.
fn output_lock() -> MutexGuard<'static, ()> {
    static OUTPUT: Mutex<()> = Mutex::new(());
    OUTPUT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn cancel_flag() -> Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        let installed = ctrlc::set_handler(move || {
            if f.swap(true, Ordering::SeqCst) {
                std::process::exit(130); // a second Ctrl-C: stop now
            }
            eprintln!("\nkw tune: interrupted, stopping (Ctrl-C again to abort at once)");
        });
        if let Err(e) = installed {
            eprintln!("kw tune: warning: cannot handle Ctrl-C ({e})");
        }
        flag
    })
    .clone()
}

/// A capture's file name without its extension (`capture` when it has none).
fn file_stem(capture: &Path) -> String {
    capture
        .file_stem()
        .map_or("capture".into(), |s| s.to_string_lossy().into_owned())
}

/// Whether an output option (`--log`, `--t4`) names a directory for one file per capture:
/// with several captures, or when it is a directory already or written as one (`out/`), so
/// that the same option means the same with one capture as with several.
fn output_dir(path: &Path, several: bool) -> bool {
    several
        || path.is_dir()
        || path
            .as_os_str()
            .to_string_lossy()
            .ends_with(std::path::MAIN_SEPARATOR)
        || matches!(
            path.components().next_back(),
            Some(std::path::Component::CurDir | std::path::Component::ParentDir)
        )
}

fn log_path_for(args: &TuneArgs, capture: &Path, several: bool) -> PathBuf {
    let stem = file_stem(capture);
    match &args.log {
        Some(p) if output_dir(p, several) => p.join(format!("{stem}.tune.jsonl")),
        Some(p) => p.clone(),
        None => args.log_dir().join(format!("{stem}.tune.jsonl")),
    }
}

/// The T4 results file of `capture` (`--t4`), if asked for.
fn t4_path_for(args: &TuneArgs, capture: &Path, several: bool) -> Option<PathBuf> {
    args.t4.as_ref().map(|t4| {
        if output_dir(t4, several) {
            t4.join(format!("{}.t4.json", file_stem(capture)))
        } else {
            t4.clone()
        }
    })
}

/// Makes the directories `--log` and `--t4` write into and checks that they take files,
/// before anything runs (a T4 file is written after the search: a directory missing then
/// lost the run's export).
fn prepare_outputs(args: &TuneArgs, several: bool) -> Result<()> {
    for (option, path) in [("--log", &args.log), ("--t4", &args.t4)] {
        let Some(path) = path else { continue };
        let dir = if output_dir(path, several) {
            path.as_path()
        } else {
            kw_core::files::parent_dir(path)
        };
        kw_core::files::FileModes::get()
            .create_dir_all(dir)
            .with_context(|| format!("{option} {}: creating {}", path.display(), dir.display()))?;
        // The pid and the clock: a probe a crashed run left behind is never this one's.
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let probe = dir.join(format!(".kw-write-check-{}-{nonce}", std::process::id()));
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&probe)
            .with_context(|| {
                format!(
                    "{option} {}: cannot write in {}",
                    path.display(),
                    dir.display()
                )
            })?;
        let _ = std::fs::remove_file(&probe);
    }
    Ok(())
}

/// Refuses, before anything runs, a results log or T4 file that would take the place of a
/// capture being tuned, of each other, or of a wisdom file (a `.json` file in the wisdom
/// directory, which the runtime reads as wisdom; the run's own wisdom file shares its lock
/// with a log there, so the run would wait on itself).
fn check_outputs(args: &TuneArgs, captures: &[PathBuf], several: bool) -> Result<()> {
    use kw_core::files::same_file;
    let wisdom_dir = args.wisdom_dir()?;
    // A wisdom file or its lock file (`KEY.json.lock`, which every writer of it takes).
    let in_wisdom_dir = |p: &Path| {
        p.extension().is_some_and(|e| e == "json" || e == "lock")
            && same_file(kw_core::files::parent_dir(p), &wisdom_dir)
    };
    // Two captures of one file name in other directories would share a log (and a T4 file):
    // the second would move the first's aside, and --resume would refuse it.
    let mut logs: Vec<(PathBuf, &PathBuf)> = Vec::new();
    for capture in captures {
        let log = log_path_for(args, capture, several);
        if let Some((_, other)) = logs.iter().find(|(l, _)| same_file(l, &log)) {
            bail!(
                "{} and {} have the same file name, so their results logs would be one file ({}); \
                 rename one of them, or tune them in separate runs with --log",
                other.display(),
                capture.display(),
                log.display()
            );
        }
        logs.push((log, capture));
    }
    for capture in captures {
        let log = log_path_for(args, capture, several);
        let t4 = t4_path_for(args, capture, several);
        let outputs = [
            ("--log", args.log.is_some().then_some(&log)),
            ("--t4", t4.as_ref()),
        ];
        for (option, out) in outputs {
            let Some(out) = out else { continue };
            if captures.iter().any(|c| same_file(out, c)) {
                bail!(
                    "{option} {}: is a capture being tuned; not writing over it (choose another file)",
                    out.display()
                );
            }
            if let Some(input) = args
                .prior
                .iter()
                .chain(&args.t1)
                .find(|p| same_file(out, p))
            {
                bail!(
                    "{option} {}: is {} given as an input (--prior or --t1); choose another file",
                    out.display(),
                    input.display()
                );
            }
            if std::fs::metadata(out).is_ok_and(|m| !m.is_file()) {
                bail!(
                    "{option} {}: exists and is not a regular file (a directory, device or FIFO)",
                    out.display()
                );
            }
            if in_wisdom_dir(out) {
                bail!(
                    "{option} {}: is in the wisdom directory {}, where a .json file is read as \
                     wisdom and a .lock file guards one; choose another place",
                    out.display(),
                    wisdom_dir.display()
                );
            }
        }
        if let Some(t4) = &t4 {
            if same_file(t4, &log) {
                bail!(
                    "--t4 {}: is the results log of {}; give each its own file",
                    t4.display(),
                    capture.display()
                );
            }
        }
    }
    Ok(())
}

fn resume_command(captures: &[PathBuf]) -> String {
    let mut words: Vec<String> = std::env::args().collect();
    if let Some(i) = words.iter().position(|w| w == "--bundled") {
        words.drain(i..(i + 2).min(words.len()));
        words.extend(captures.iter().map(|c| c.display().to_string()));
    }
    if !words.iter().any(|w| w == "--resume") {
        words.push("--resume".into());
    }
    words
        .iter()
        .map(|w| {
            if w.is_empty() || w.contains(|c: char| c.is_whitespace() || "'\"$\\`".contains(c)) {
                format!("'{}'", w.replace('\'', "'\\''"))
            } else {
                w.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The checks of option values that need no file or device (stop conditions, tolerances, the
/// strategy, timeouts): `kw tune` makes them before anything runs, `kw slurm` on the options it
/// passes on to every task before it writes anything.
pub fn check_options(args: &TuneArgs) -> Result<Stop> {
    let stop = stop_condition(args)?;
    // A NaN, infinite or negative --rtol/--atol is refused before anything runs (it would
    // be written into the wisdom record as `null`, which no kw can read).
    args.tolerance()?;
    strategies::create(&args.strategy, args.seed)?;
    if let Some(t) = &args.eval_timeout {
        if parse_duration(t)?.is_zero() {
            bail!("--eval-timeout must be more than 0");
        }
    }
    Ok(stop)
}

/// One line of the failed captures' summary: `CAPTURE[ on DEVICE]: ERROR`, the capture named
/// once where the error begins with it.
fn failure_line(capture: &std::path::Path, on: &str, e: &anyhow::Error) -> String {
    let text = crate::error_text(e);
    let name = capture.display().to_string();
    if on.is_empty() && text.starts_with(&format!("{name}: ")) {
        text
    } else {
        format!("{name}{on}: {text}")
    }
}

pub fn run(args: TuneArgs) -> Result<()> {
    if args.captures.is_empty() && args.t1.is_empty() && args.bundled.is_none() {
        bail!(
            "nothing to tune: give capture files (`kw tune captures/*.kwcap`; \
             `KW_CAPTURE=KERNEL ./app` writes them), a T1 file (`kw tune --t1 FILE`) or a \
             bundled kernel (`kw tune --bundled vector_add`)"
        );
    }
    let stop = check_options(&args)?;
    // A prior that cannot be read (missing, a FIFO, a directory) is found before a results
    // log is moved aside.
    for file in &args.prior {
        // "--prior FILE: cannot read it: ...".
        kw_tune::prior::check_readable(file).map_err(|e| anyhow::anyhow!("--{e}"))?;
    }
    // Found now, not after an hour of tuning.
    check_writable(&args.wisdom_dir()?).context("the wisdom directory (--wisdom-dir)")?;
    if args.log.is_none() {
        let dir = args.log_dir();
        if !dir.as_os_str().is_empty() {
            kw_core::files::FileModes::get()
                .create_dir_all(&dir)
                .with_context(|| format!("creating the results log directory {}", dir.display()))?;
        }
    }
    let mut captures = args.captures.clone();
    if let Some(spec) = &args.bundled {
        captures.push(bundled_capture(spec, args.device.as_deref())?);
    }
    // Stop conditions of T1 files' budgets, by capture.
    let mut t1_stops: Vec<(PathBuf, Stop)> = Vec::new();
    for file in &args.t1 {
        let (capture, budget) = t1_capture(
            file,
            args.device.as_deref(),
            args.reference_config.as_deref(),
        )?;
        if let (false, Some(s)) = (args.has_stop(), args::t1_stop(&budget)) {
            t1_stops.push((capture.clone(), s));
        }
        captures.push(capture);
    }
    // A capture named twice is tuned once (each run would add its record to the same slot).
    let mut seen = std::collections::HashSet::new();
    captures.retain(|c| {
        let id = std::fs::canonicalize(c).unwrap_or_else(|_| c.clone());
        let first = seen.insert(id);
        if !first {
            eprintln!(
                "kw tune: note: {} is named twice; tuning it once",
                c.display()
            );
        }
        first
    });
    let several = captures.len() > 1;
    check_outputs(&args, &captures, several)?;
    let cancel = cancel_flag();
    if args.stop_on_stdin_eof {
        // The parent (an application tuning online) ended or let go: stop as Ctrl-C does,
        // which stops a hung evaluation's worker too.
        let flag = cancel.clone();
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
            flag.store(true, Ordering::SeqCst);
        });
    }
    prepare_outputs(&args, several)?;
    let mut failed: Vec<String> = Vec::new();
    let stop_of = |capture: &Path| {
        t1_stops
            .iter()
            .find(|(c, _)| c == capture)
            .map_or(&stop, |(_, s)| s)
            .clone()
    };
    let set = device_set::DeviceSet::from_args(args.devices.as_deref(), args.device.as_deref())?;
    let mut refused = Vec::new();
    let plan = set.as_ref().map(|set| {
        let task = |capture: &Path, model: Option<String>| multi::Task {
            capture: capture.to_path_buf(),
            log: multi::for_model(&log_path_for(&args, capture, several), model.as_deref()),
            stop: stop_of(capture),
            model,
            suspect: None,
        };
        multi::plan(set, &captures, &task, &mut refused)
    });
    for (capture, e) in refused {
        let line = failure_line(&capture, "", &e);
        eprintln!("kw tune: error: tuning {line}");
        failed.push(line);
    }
    let mut cancelled = None;
    let mut finish = |task: &multi::Task, devices: &[kernel_wisdom::ListedDevice], outcome| {
        let on = device_set::on_devices(devices);
        let stopped = finish_capture(&args, task, &on, outcome, several, &mut failed);
        if stopped {
            cancelled.get_or_insert_with(|| task.log.clone());
        }
        stopped
    };
    match plan {
        // One device in all: exactly the `--device` path.
        Some(plan) if !(plan.len() == 1 && plan[0].0.len() == 1) => {
            let args = TuneArgs {
                workers: plan.iter().map(|(devices, _)| devices.len()).sum(),
                ..args.clone()
            };
            multi::run(&args, plan, &cancel, &mut |(t, d, o)| {
                finish(&t, &d, o);
            });
        }
        plan => {
            let mut args = args.clone();
            if let Some((devices, _)) = plan.as_ref().and_then(|p| p.first()) {
                args.device = Some(devices[0].identity());
            }
            let tasks: Vec<multi::Task> = match plan {
                Some(mut p) => p.pop().map(|(_, t)| t).unwrap_or_default(),
                None => captures
                    .iter()
                    .map(|c| multi::Task {
                        capture: c.clone(),
                        log: log_path_for(&args, c, several),
                        stop: stop_of(c),
                        model: None,
                        suspect: None,
                    })
                    .collect(),
            };
            for task in &tasks {
                let outcome = tune_one(&args, &task.capture, &task.log, &task.stop, &cancel, &[]);
                if finish(task, &[], outcome) {
                    break;
                }
            }
        }
    }
    if let Some(log_path) = cancelled {
        eprintln!(
            "kw tune: stopped; the results log {} is kept. Resume with:\n  {}",
            log_path.display(),
            resume_command(&captures)
        );
        std::process::exit(130);
    }
    if !failed.is_empty() {
        bail!(
            "{} of {} capture(s) failed:\n  {}",
            failed.len(),
            captures.len(),
            failed.join("\n  ")
        );
    }
    Ok(())
}

/// After one capture's run: its T4 export, and what failed. Returns true when the run was
/// cancelled (Ctrl-C).
fn finish_capture(
    args: &TuneArgs,
    task: &multi::Task,
    on: &str,
    outcome: Result<one::Outcome>,
    several: bool,
    failed: &mut Vec<String>,
) -> bool {
    let capture = &task.capture;
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            // One bad capture does not stop the batch; the exit status says it failed.
            let line = failure_line(capture, on, &e);
            eprintln!("kw tune: error: tuning {line}");
            failed.push(line);
            return false;
        }
    };
    if let Some(out) = t4_path_for(args, capture, several) {
        let out = multi::for_model(&out, task.model.as_deref());
        // An earlier run's results are kept, as an earlier log is; if they cannot be, the
        // new ones are not written over them.
        let kept = match kw_core::files::keep_aside(&out) {
            Ok(Some(old)) => {
                eprintln!(
                    "kw tune: {} existed; kept it as {}",
                    out.display(),
                    old.display()
                );
                true
            }
            Ok(None) => true,
            Err(e) => {
                failed.push(format!(
                    "{}: keeping the existing {} aside (the T4 results were not written): {e}",
                    capture.display(),
                    out.display()
                ));
                false
            }
        };
        if kept {
            match kw_tune::export::export_log_t4(&task.log, &out) {
                Ok(n) => eprintln!("kw tune: {n} results written to {} (T4)", out.display()),
                Err(e) => failed.push(format!("{}: writing T4 results: {e}", capture.display())),
            }
        }
    }
    if outcome.reason == StopReason::Cancelled {
        return true;
    }
    if !outcome.wrote_wisdom {
        failed.push(format!(
            "{}{on}: no configuration succeeded, no wisdom written",
            capture.display()
        ));
    }
    false
}

/// The capture of a T1 file for `--t1`: `captures/<benchmark>-<hash>.kwcap`, named by the
/// BLAKE3 hash of everything the benchmark is made of (the definition with its kernel
/// source, every argument's and symbol's data, the reference outputs), made once (as `kw
/// capture from-t1`) and reused while none of it changes; and the file's budget.
fn t1_capture(
    file: &Path,
    device: Option<&str>,
    reference_config: Option<&str>,
) -> Result<(PathBuf, kw_core::kernel_tuner::T1Budget)> {
    let bench = kw_core::kernel_tuner::T1Benchmark::load(file)?;
    let reference = reference_config
        .map(|t| crate::cmd::capture::parse_config(&bench.def, t))
        .transpose()
        .with_context(|| format!("{}: --reference-config", file.display()))?;
    let hash = t1_hash(&bench, reference.as_ref());
    // The name the capture writer gives it (`sanitize_stem`), so that it is found again.
    let stem = kw_capture::sanitize_stem(&format!("{}-{}", bench.name, &hash[..12]));
    let path = Path::new("captures").join(format!("{stem}.kwcap"));
    if path.exists() {
        eprintln!(
            "kw tune: {}: using its capture {}",
            file.display(),
            path.display()
        );
    } else {
        kw_core::files::FileModes::get()
            .create_dir_all(Path::new("captures"))
            .context("creating captures/")?;
        let written =
            crate::cmd::capture::capture_t1(file, &bench, &path, device, reference.as_ref())?;
        eprintln!(
            "kw tune: {}: captured {}",
            file.display(),
            written.display()
        );
        return Ok((written, bench.budget));
    }
    Ok((path, bench.budget))
}

/// The BLAKE3 hash (hex) of a T1 benchmark's contents: its definition (kernel source and
/// headers included), all its data, and the configuration whose output is the reference.
fn t1_hash(
    bench: &kw_core::kernel_tuner::T1Benchmark,
    reference: Option<&kw_core::config::Config>,
) -> String {
    use kw_core::scalar::HostArg;
    let mut h = blake3::Hasher::new();
    if let Some(c) = reference {
        h.update(b"reference config").update(c.key().as_bytes());
    }
    h.update(bench.def.to_json().as_bytes());
    for input in &bench.inputs {
        match input {
            HostArg::Buffer { bytes, .. } => h.update(b"buffer").update(bytes),
            HostArg::Scalar(v) => h.update(b"scalar").update(v.bytes()),
        };
    }
    for s in &bench.symbols {
        h.update(s.name.as_bytes()).update(&s.bytes);
    }
    for (index, bytes) in &bench.references {
        h.update(&index.to_le_bytes()).update(bytes);
    }
    h.finalize().to_hex().to_string()
}
