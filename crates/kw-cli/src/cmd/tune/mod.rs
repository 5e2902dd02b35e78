//! `kw tune CAPTURE...`: replays each capture on a device under many configurations
//! (default configuration first), verified against the captured output, logs every
//! evaluation, prints a summary and adds the best configuration to the kernel's wisdom file.
//! Configurations are measured in worker processes under a watchdog ([`super::isolated`]):
//! a hang or a crash is a failed result. Ctrl-C stops at once (a hung evaluation included,
//! which is then not recorded) and prints the command that resumes.

mod args;
mod device;
mod objective;
mod one;
mod prior;
mod progress;
pub mod report;

pub use args::{parse_duration, TuneArgs};
pub use device::open_for as device_for;

use anyhow::{bail, Context, Result};
use args::stop_condition;
use device::bundled_capture;
use kw_core::wisdom::check_writable;
use kw_tune::{strategies, Stop, StopReason};
use one::tune_one;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

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

fn log_path_for(args: &TuneArgs, capture: &Path, several: bool) -> PathBuf {
    let stem = capture
        .file_stem()
        .map_or("capture".into(), |s| s.to_string_lossy().into_owned());
    match &args.log {
        Some(p) if several => p.join(format!("{stem}.tune.jsonl")),
        Some(p) => p.clone(),
        None => PathBuf::from(format!("{stem}.tune.jsonl")),
    }
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

pub fn run(args: TuneArgs) -> Result<()> {
    let stop = stop_condition(&args)?;
    strategies::create(&args.strategy, args.seed)?;
    if let Some(t) = &args.eval_timeout {
        if parse_duration(t)?.is_zero() {
            bail!("--eval-timeout must be more than 0");
        }
    }
    // Found now, not after an hour of tuning.
    check_writable(&args.wisdom_dir).context("the wisdom directory (--wisdom-dir)")?;
    let mut captures = args.captures.clone();
    if let Some(spec) = &args.bundled {
        captures.push(bundled_capture(spec, args.device.as_deref())?);
    }
    // Stop conditions of T1 files' budgets, by capture.
    let mut t1_stops: Vec<(PathBuf, Stop)> = Vec::new();
    for file in &args.t1 {
        let (capture, budget) = t1_capture(file, args.device.as_deref())?;
        if let (false, Some(s)) = (args.has_stop(), args::t1_stop(&budget)) {
            t1_stops.push((capture.clone(), s));
        }
        captures.push(capture);
    }
    let cancel = cancel_flag();
    let several = captures.len() > 1;
    if several {
        if let Some(dir) = &args.log {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
    }
    let mut failed: Vec<String> = Vec::new();
    for capture in &captures {
        let log_path = log_path_for(&args, capture, several);
        let stop = t1_stops
            .iter()
            .find(|(c, _)| c == capture)
            .map_or(&stop, |(_, s)| s);
        let outcome = match tune_one(&args, capture, &log_path, stop, &cancel) {
            Ok(o) => o,
            Err(e) => {
                // One bad capture does not stop the batch; the exit status says it failed.
                eprintln!(
                    "kw tune: error: tuning {}: {}",
                    capture.display(),
                    crate::error_text(&e)
                );
                failed.push(format!("{}: {}", capture.display(), crate::error_text(&e)));
                continue;
            }
        };
        if outcome.reason == StopReason::Cancelled {
            eprintln!(
                "kw tune: stopped; the results log {} is kept. Resume with:\n  {}",
                log_path.display(),
                resume_command(&captures)
            );
            std::process::exit(130);
        }
        if !outcome.wrote_wisdom {
            failed.push(format!(
                "{}: no configuration succeeded, no wisdom written",
                capture.display()
            ));
        }
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

/// The capture of a T1 file for `--t1`: `captures/<benchmark>-<hash>.kwcap`, named by the
/// BLAKE3 hash of the file's bytes, made once (as `kw capture from-t1`) and reused while the
/// file is unchanged; and the file's budget.
fn t1_capture(
    file: &Path,
    device: Option<&str>,
) -> Result<(PathBuf, kw_core::kernel_tuner::T1Budget)> {
    let rules = kw_core::files::ReadRules::new("T1 file", kw_core::files::caps::DOCUMENT);
    let bytes = kw_core::files::read(file, rules)?;
    let bench = kw_core::kernel_tuner::T1Benchmark::load(file)?;
    let hash = kw_core::files::content_hash(&bytes);
    let stem: String = bench
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = Path::new("captures").join(format!("{stem}-{}.kwcap", &hash[..12]));
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
        crate::cmd::capture::from_t1(file, &path, device)?;
        eprintln!("kw tune: {}: captured {}", file.display(), path.display());
    }
    Ok((path, bench.budget))
}
