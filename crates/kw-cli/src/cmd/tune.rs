//! `kw tune CAPTURE...`: replays each capture on a device under many configurations
//! (default configuration first), verified against the captured output, logs every
//! evaluation, prints a summary and adds the best configuration to the kernel's wisdom file.
//! Configurations are measured in worker processes under a watchdog ([`super::isolated`]):
//! a hang or a crash is a failed result. Ctrl-C stops at once (a hung evaluation included,
//! which is then not recorded) and prints the command that resumes.

use super::isolated::{EvalTimeout, IsolatedEvaluator};
use super::tune_report::{objective_of, print_summary, print_timing, TimingReport};
use super::worker::WorkerArgs;
use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kernel_wisdom::{bundled, list_devices, open_device, DeviceSelector};
use kw_core::wisdom::{add_record, check_writable, ReplacePolicy};
use kw_core::{backend::Device, device::BackendKind, space::Point};
use kw_replay::{
    capture_checksum, MeasureOptions, ReplayEvaluator, ReplaySession, ReplayStats, Tolerance,
    VerifyMode,
};
use kw_tune::{
    strategies, EvalFailure, EvalResult, Evaluator, LogHeader, ResultsLog, Stop, StopReason, Tuner,
};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

#[derive(Args)]
pub struct TuneArgs {
    /// Capture files (.kwcap) to tune, one after the other.
    #[arg(required_unless_present = "bundled")]
    captures: Vec<PathBuf>,
    /// Capture a bundled kernel here first and tune it (on CUDA when a CUDA device exists):
    /// `vector_add[:N]`, `stencil2d[:WxH]` or `stencil2d-wide[:WxH]` (its space widened to
    /// 232 configurations): a self-contained measurement.
    #[arg(long)]
    bundled: Option<String>,
    /// Search strategy (`kw simulate --strategy all` compares them on recorded spaces).
    #[arg(long, default_value = strategies::DEFAULT)]
    strategy: String,
    /// The strategy's seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Stop after N evaluations (distinct configurations, failed ones included).
    #[arg(long)]
    budget: Option<u64>,
    /// Stop after this much wall time per kernel (`90s`, `15m`, `1h`; default 15m when no
    /// other stop condition is given).
    #[arg(long)]
    time: Option<String>,
    /// More stop conditions, any of which stops: `fraction=0.5`, `target=MS`,
    /// `no-improvement=N`, `no-improvement-time=5m` (comma-separated).
    #[arg(long)]
    stop: Option<String>,
    /// The device: an index or a name substring (default: KW_DEVICE, else the first device of
    /// the capture's backend).
    #[arg(long)]
    device: Option<String>,
    /// Where wisdom files are written.
    #[arg(long, default_value = "wisdom")]
    wisdom_dir: PathBuf,
    /// The results log (JSON lines); with several captures, a directory for one log each.
    /// Default: `<capture name>.tune.jsonl` in the current directory.
    #[arg(long)]
    log: Option<PathBuf>,
    /// Continue from the results log instead of starting over.
    #[arg(long)]
    resume: bool,
    /// Do not compare outputs with the captured reference (the summary and the wisdom record
    /// then say UNVERIFIED).
    #[arg(long)]
    no_verify: bool,
    /// Tune a capture that lacks a reference output for a buffer the kernel writes (kw tune
    /// refuses such a capture otherwise). Outputs that have a reference are still verified;
    /// the summary and the wisdom record say UNVERIFIED, with the reason.
    #[arg(long)]
    allow_unverified: bool,
    /// Relative tolerance for float outputs.
    #[arg(long, default_value_t = Tolerance::default().rtol)]
    rtol: f64,
    /// Absolute tolerance for float outputs.
    #[arg(long, default_value_t = Tolerance::default().atol)]
    atol: f64,
    /// Warm-up launches per configuration.
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// Timed launches per configuration (at most; fewer when --sample-time runs out).
    #[arg(long, default_value_t = 15)]
    samples: usize,
    /// Time budget per configuration for timed launches, in milliseconds.
    #[arg(long, default_value_t = 500)]
    sample_time_ms: u64,
    /// Compile threads (default: CPUs - 1).
    #[arg(long)]
    compile_threads: Option<usize>,
    /// Also measure the default configuration again (spread) and a device copy (bandwidth).
    #[arg(long)]
    report_timing: bool,
    /// Time limit of one evaluation (`30s`, `2m`); past it the configuration is a failure
    /// ("timed out"). Default: 10 times the default configuration's evaluation, at least 10 s
    /// (120 s for the default configuration itself).
    #[arg(long)]
    eval_timeout: Option<String>,
    /// Measure in this process instead of a worker process: no time limit, and a
    /// configuration that crashes ends the run (for measuring the cost of isolation).
    #[arg(long)]
    no_isolation: bool,
}

/// How many configurations in a row that all fail to compile stop a run that has no success
/// yet (the kernel or its definition is broken, not a configuration).
const COMPILE_GIVE_UP: u64 = 8;

/// Parses `90`, `90s`, `15m`, `1h`, `250ms`.
pub fn parse_duration(text: &str) -> Result<Duration> {
    let t = text.trim();
    let (num, unit) = t.split_at(t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len()));
    let v: f64 = num
        .trim()
        .parse()
        .with_context(|| format!("bad duration `{text}`"))?;
    let secs = match unit {
        "" | "s" => v,
        "ms" => v / 1e3,
        "m" | "min" => v * 60.0,
        "h" => v * 3600.0,
        _ => bail!("bad duration unit in `{text}` (use ms, s, m or h)"),
    };
    if !(secs.is_finite() && secs >= 0.0) {
        bail!("bad duration `{text}`");
    }
    Ok(Duration::from_secs_f64(secs))
}

fn stop_condition(args: &TuneArgs) -> Result<Stop> {
    let mut list = Vec::new();
    if let Some(n) = args.budget {
        list.push(Stop::Evaluations(n));
    }
    if let Some(t) = &args.time {
        list.push(Stop::WallTime(parse_duration(t)?));
    }
    for item in args
        .stop
        .iter()
        .flat_map(|s| s.split(','))
        .filter(|s| !s.trim().is_empty())
    {
        let (k, v) = item
            .split_once('=')
            .with_context(|| format!("bad --stop item `{item}`"))?;
        let num = || {
            v.trim()
                .parse::<f64>()
                .with_context(|| format!("bad number in `{item}`"))
        };
        list.push(match k.trim() {
            "evals" | "evaluations" => Stop::Evaluations(num()? as u64),
            "time" => Stop::WallTime(parse_duration(v)?),
            "fraction" => {
                let f = num()?;
                if !(f > 0.0 && f <= 1.0) {
                    bail!("bad --stop item `{item}`: a fraction of the space is in (0, 1]");
                }
                Stop::SpaceFraction(f)
            }
            "target" => {
                let t = num()?;
                if !t.is_finite() {
                    bail!("bad --stop item `{item}`: the target is a finite time in ms");
                }
                Stop::Target(t)
            }
            "no-improvement" => Stop::NoImprovementEvaluations(num()? as u64),
            "no-improvement-time" => Stop::NoImprovementTime(parse_duration(v)?),
            other => bail!("unknown --stop condition `{other}`"),
        });
    }
    if list.is_empty() {
        list.push(Stop::WallTime(Duration::from_secs(15 * 60)));
    }
    Ok(if list.len() == 1 {
        list.remove(0)
    } else {
        Stop::Any(list)
    })
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

/// Opens the device to tune on: the one `selector` (or `KW_DEVICE`) names, else the first of
/// `backend`. Also returns its index (what evaluation workers are given).
fn open_for(backend: BackendKind, selector: Option<&str>) -> Result<Arc<dyn Device>> {
    Ok(open_indexed(backend, selector)?.0)
}

fn open_indexed(backend: BackendKind, selector: Option<&str>) -> Result<(Arc<dyn Device>, String)> {
    let selector = match selector {
        Some(s) => Some(DeviceSelector::parse(s)),
        None => std::env::var(kernel_wisdom::DEVICE_ENV)
            .ok()
            .map(|s| DeviceSelector::parse(&s)),
    };
    let selector = match selector {
        Some(s) => s,
        None => {
            let d = kernel_wisdom::first_device_of(backend)
                .with_context(|| format!("no {backend} device to replay on"))?;
            DeviceSelector::Index(d.index)
        }
    };
    let text = match &selector {
        DeviceSelector::Index(i) => i.to_string(),
        DeviceSelector::Name(n) => n.clone(),
    };
    Ok((open_device(&selector)?, text))
}

fn backend_of(path: &Path) -> Result<BackendKind> {
    let c = kw_capture::Capture::open(path)?;
    let meta: kw_core::capture_meta::CaptureMetadata = c.metadata_as()?;
    Ok(meta.kernel.backend)
}

/// Writes the capture asked for by `--bundled`, on the GPU when there is one (CUDA first,
/// else OpenCL: PoCL on machines without a GPU) unless a device was named.
fn bundled_capture(spec: &str, selector: Option<&str>) -> Result<PathBuf> {
    let has_cuda = list_devices()
        .map(|d| d.iter().any(|d| d.info.backend == BackendKind::Cuda))
        .unwrap_or(false);
    let preferred = if has_cuda
        && selector.is_none()
        && std::env::var_os(kernel_wisdom::DEVICE_ENV).is_none()
    {
        BackendKind::Cuda
    } else {
        BackendKind::Opencl
    };
    let device = open_for(preferred, selector)?;
    let path = bundled::capture(spec, device.as_ref(), Path::new("captures"))?;
    eprintln!("kw tune: captured {}", path.display());
    Ok(path)
}

/// Updates the progress bar after every evaluation, and gives up when the first
/// [`COMPILE_GIVE_UP`] configurations all fail to compile.
struct WithProgress<'a> {
    inner: &'a mut dyn Evaluator,
    bar: &'a ProgressBar,
    failures: u64,
    best: Option<f64>,
    /// Evaluations in a row, with no success yet, that failed to compile; the first error.
    compile_failures: u64,
    first_compile_error: Option<String>,
    gave_up: bool,
}

impl Evaluator for WithProgress<'_> {
    fn evaluate(&mut self, point: &Point) -> EvalResult {
        if self.gave_up {
            return Err(EvalFailure::interrupted(
                "every configuration failed to compile",
            ));
        }
        let r = self.inner.evaluate(point);
        match &r {
            Ok(v) => {
                self.best = Some(self.best.map_or(*v, |b| b.min(*v)));
                self.compile_failures = 0;
            }
            Err(f) if f.interrupted => return r,
            Err(f) => {
                self.failures += 1;
                if self.best.is_none() && f.reason.starts_with("compile failed") {
                    self.compile_failures += 1;
                    self.first_compile_error
                        .get_or_insert_with(|| f.reason.clone());
                    self.gave_up = self.compile_failures >= COMPILE_GIVE_UP;
                } else {
                    self.compile_failures = 0;
                }
            }
        }
        self.bar.inc(1);
        let best = self.best.map_or("-".to_string(), |b| format!("{b:.4} ms"));
        self.bar
            .set_message(format!("failures {}, best {best}", self.failures));
        r
    }
    fn prefetch(&mut self, points: &[Point]) {
        self.inner.prefetch(points)
    }
    fn take_samples(&mut self) -> Option<Vec<f64>> {
        self.inner.take_samples()
    }
}

/// The run's wall-time limit, if its stop condition has one that alone stops it.
fn wall_limit(stop: &Stop) -> Option<Duration> {
    match stop {
        Stop::WallTime(t) => Some(*t),
        Stop::Any(list) => list.iter().filter_map(wall_limit).min(),
        _ => None,
    }
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
        let outcome = match tune_one(&args, capture, &log_path, &stop, &cancel) {
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

/// How one capture's tuning ended.
struct Outcome {
    reason: StopReason,
    wrote_wisdom: bool,
}

fn tune_one(
    args: &TuneArgs,
    capture: &Path,
    log_path: &Path,
    stop: &Stop,
    cancel: &Arc<AtomicBool>,
) -> Result<Outcome> {
    let (device, device_text) = open_indexed(backend_of(capture)?, args.device.as_deref())?;
    let info = device.info().clone();
    // Isolated: this process only reads the capture's metadata; workers replay it.
    let session = if args.no_isolation {
        Some(Arc::new(ReplaySession::load(capture, device.clone())?))
    } else {
        None
    };
    let (meta, space) = match &session {
        Some(s) => (s.metadata().clone(), s.space().clone()),
        None => ReplaySession::inspect(capture, &info)?,
    };
    let space = &space;
    let def = meta.kernel.clone();
    let has_reference = meta.args.iter().any(|a| a.output.is_some());
    eprintln!(
        "kw tune: {} ({} configurations) on {}",
        def.tuning_key,
        space.len(),
        info.summary()
    );
    let unverified = unverified_reason(args, capture, &meta)?;
    if let Some(reason) = &unverified {
        eprintln!("kw tune: warning: tuning UNVERIFIED: {reason}");
    }
    let verify = !args.no_verify && has_reference;
    let options = MeasureOptions {
        warmup: args.warmup,
        min_samples: 3.min(args.samples.max(1)),
        max_samples: args.samples.max(1),
        time_budget: Duration::from_millis(args.sample_time_ms),
        verify: if verify {
            VerifyMode::Last
        } else {
            VerifyMode::Off
        },
        tolerance: Tolerance {
            rtol: args.rtol,
            atol: args.atol,
        },
    };
    let threads = args
        .compile_threads
        .unwrap_or_else(kw_replay::CompilePool::default_threads);
    let mut header = LogHeader::new(space).with_strategy(&args.strategy, args.seed);
    header.kernel_name = Some(def.kernel_name.clone());
    header.device_name = Some(info.name.clone());
    header.problem_size = Some(meta.problem_size.clone());
    let checksum = capture_checksum(capture)?;
    header.capture_checksum = Some(checksum.clone());
    let (log, records) = if args.resume {
        ResultsLog::resume(log_path, space, &header)?
    } else {
        let (log, kept) = ResultsLog::create_keeping(log_path, &header)?;
        if let Some(old) = kept {
            eprintln!(
                "kw tune: {} existed; kept it as {} (use --resume to continue a log)",
                log_path.display(),
                old.display()
            );
        }
        (log, Vec::new())
    };
    let default = space
        .point(&def.default_config())
        .map_err(anyhow::Error::msg)?;
    // The run's wall-time limit, less what the resumed log already spent, interrupts even a
    // hung evaluation.
    let spent = records.iter().map(|r| r.elapsed_s).fold(0.0f64, f64::max);
    let deadline = wall_limit(stop).map(|t| {
        std::time::Instant::now() + t.saturating_sub(Duration::from_secs_f64(spent.max(0.0)))
    });
    let fixed_timeout = args
        .eval_timeout
        .as_deref()
        .map(parse_duration)
        .transpose()?;
    let default_key = space.kt_key(&default);
    let default_logged_s = records
        .iter()
        .find(|r| r.key == default_key && r.objective.is_some())
        .map(|r| r.eval_s);
    let mut in_process = session
        .as_ref()
        .map(|s| ReplayEvaluator::new(s.clone(), options.clone(), threads));
    let mut isolated = if in_process.is_none() {
        let exe = std::env::current_exe().context("finding the kw executable for the workers")?;
        let worker_args = WorkerArgs {
            capture: capture.to_path_buf(),
            device: device_text,
            warmup: options.warmup,
            min_samples: options.min_samples,
            max_samples: options.max_samples,
            sample_time_ms: args.sample_time_ms,
            verify,
            rtol: args.rtol,
            atol: args.atol,
            compile_threads: threads,
        };
        let mut e = IsolatedEvaluator::new(
            exe,
            worker_args,
            EvalTimeout::new(fixed_timeout),
            cancel.clone(),
            deadline,
        );
        if let Some(s) = default_logged_s {
            e.learn_timeout(Duration::from_secs_f64(s.max(0.0)));
        }
        Some(e)
    } else {
        None
    };
    let inner: &mut dyn Evaluator = match (&mut in_process, &mut isolated) {
        (Some(e), _) => e,
        (None, Some(e)) => e,
        (None, None) => unreachable!("one evaluator is made"),
    };
    let bar = ProgressBar::with_draw_target(
        stop.remaining_evaluations(&Default::default()),
        ProgressDrawTarget::stderr(),
    );
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix} [{elapsed_precise}] {bar:30} {pos}/{len} evals, {msg} (ETA {eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_prefix(def.tuning_key.clone());
    let mut strategy = strategies::create(&args.strategy, args.seed)?;
    let mut wrapped = WithProgress {
        inner,
        bar: &bar,
        failures: 0,
        best: None,
        compile_failures: 0,
        first_compile_error: None,
        gave_up: false,
    };
    let report = {
        let mut tuner = Tuner::new(space, stop.clone())
            .resume(log, records)
            .with_initial(vec![default.clone()])
            .with_lookahead(threads + 1)
            .with_cancel(cancel.clone());
        tuner.run(strategy.as_mut(), &mut wrapped)?
    };
    let (gave_up, first_compile_error) = (wrapped.gave_up, wrapped.first_compile_error.take());
    bar.finish_and_clear();
    let stats = match (&in_process, &isolated) {
        (Some(e), _) => e.stats(),
        (_, Some(e)) => e.stats(),
        _ => ReplayStats::default(),
    };
    if let Some(e) = &isolated {
        if e.starts > 1 {
            eprintln!(
                "kw tune: {} evaluation worker(s) were replaced after a hang or crash",
                e.starts - 1
            );
        }
    }
    drop(isolated); // its worker is stopped before anything else uses the device
    print_summary(&def.tuning_key, space, &report, &default, &stats);
    match &unverified {
        Some(reason) => println!("  verification: UNVERIFIED ({reason})"),
        None => println!("  verification: every output checked against the captured reference"),
    }
    if gave_up {
        eprintln!(
            "kw tune: stopped: the first {COMPILE_GIVE_UP} configurations all failed to compile \
             (is the kernel or its definition broken?). The first error:\n  {}",
            first_compile_error.as_deref().unwrap_or("?")
        );
    }
    if args.report_timing {
        // In process (the workers are gone); the default configuration was measured fine.
        let session = match session {
            Some(s) => s,
            None => Arc::new(ReplaySession::load(capture, device.clone())?),
        };
        let mut eval = match in_process {
            Some(e) => e,
            None => ReplayEvaluator::new(session.clone(), options, 1),
        };
        let repeat = match (objective_of(&report, &default), eval.measure(&default)) {
            (Some(a), Ok(m)) => Some((a, m.median_ms)),
            _ => None,
        };
        let kernel = report
            .best
            .as_ref()
            .map(|(_, ms)| (session.bytes_moved(), *ms));
        let copy = session.copy_bandwidth(20)?;
        print_timing(&TimingReport {
            repeat,
            kernel,
            copy,
        });
    }
    if report.reason == StopReason::Cancelled {
        return Ok(Outcome {
            reason: report.reason,
            wrote_wisdom: false,
        });
    }
    let Some((best, ms)) = &report.best else {
        eprintln!("kw tune: no configuration succeeded; no wisdom written");
        if !gave_up {
            if let Some(e) = first_compile_error {
                eprintln!("kw tune: the first compile error: {e}");
            }
        }
        return Ok(Outcome {
            reason: report.reason,
            wrote_wisdom: false,
        });
    };
    let key = space.kt_key(best);
    let samples = kw_tune::log::read_log(log_path)?
        .records
        .iter()
        .find(|r| r.key == key)
        .and_then(|r| r.samples.as_ref().map(Vec::len))
        .unwrap_or(0);
    let record = kw_replay::tuned_record(
        &meta,
        &info,
        space,
        space.config(best),
        *ms,
        samples,
        kw_replay::TuningRun {
            strategy: &args.strategy,
            evaluations: report.progress.evaluations,
            capture,
            capture_checksum: checksum,
            unverified: unverified.clone(),
        },
    );
    let (path, outcome) = add_record(
        &args.wisdom_dir,
        &def.tuning_key,
        record,
        ReplacePolicy::IfBetter,
    )?;
    println!("  wisdom: {} ({outcome:?})", path.display());
    Ok(Outcome {
        reason: report.reason,
        wrote_wisdom: true,
    })
}

/// Why this run is unverified (`None`: every written buffer is checked against the
/// capture's reference). A capture without a full reference is refused unless the user asked
/// for an unverified run (`--allow-unverified`, or `--no-verify`, which turns checking off).
fn unverified_reason(
    args: &TuneArgs,
    capture: &Path,
    meta: &kw_core::capture_meta::CaptureMetadata,
) -> Result<Option<String>> {
    if args.no_verify {
        return Ok(Some(
            "--no-verify: outputs not compared with the captured reference".into(),
        ));
    }
    match kw_replay::reference_gap(meta) {
        Some(gap) if !args.allow_unverified => bail!(
            "{}: refusing to tune without a reference: {gap}, so a configuration that \
             computes wrong results could win. Re-capture the launch with this version (it \
             records every Out/InOut buffer), or pass --allow-unverified to tune it anyway \
             (the summary and the wisdom record then say UNVERIFIED)",
            capture.display()
        ),
        gap => Ok(gap),
    }
}
