//! The evaluation worker of `kw tune` (hidden subcommand `kw __eval-worker`): one process that
//! loads a capture and measures the configurations it is sent, so that a configuration that
//! hangs or crashes takes down only the worker ([`super::isolated`] is the other side).
//!
//! Protocol: JSON lines. `kw tune` writes [`Request`]s to the worker's stdin; the worker
//! answers on stdout with lines `@kw-worker {json}` ([`Reply`]): `loading` once the device is
//! open and the capture's metadata read (or `start_failed`), then, once the capture is
//! loaded, `ready` (or `start_failed`), then one `result` per `evaluate`. Prefetches may
//! come from `loading` on: their configurations compile while the capture loads; an
//! `evaluate` that comes before `ready` is answered after it. Other stdout lines (a
//! kernel's `printf`) are ignored by the reader. The worker exits when its stdin closes, even
//! while a launch hangs (a separate thread watches stdin).

use anyhow::Result;
use clap::Args;
use kernel_wisdom::{open_listed, resolve, DeviceSelector};
use kw_core::space::Point;
use kw_replay::{
    CompilePool, MeasureOptions, ReplayError, ReplayEvaluator, ReplaySession, ToleranceOverride,
    VerifyMode,
};
use kw_tune::Evaluator;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A device failure on demand, for tests of `kw tune --devices` (no GPU can be made to fail
/// on purpose): `INDEX:N:MARKER` makes the worker of device INDEX (as `kw devices` numbers
/// it) abort at its N-th evaluation after writing the file MARKER, and every later worker of
/// that device fail to start while MARKER exists (N = 0: the first fails to start, too).
/// Unset, nothing is read.
pub const FAULT_ENV: &str = "KW_EVAL_WORKER_FAULT";

/// The injected fault for the device `index`: `(N, MARKER)`.
fn fault_for(index: usize) -> Option<(u64, PathBuf)> {
    let text = std::env::var(FAULT_ENV).ok()?;
    let mut parts = text.splitn(3, ':');
    let device: usize = parts.next()?.trim().parse().ok()?;
    let n: u64 = parts.next()?.trim().parse().ok()?;
    let marker = PathBuf::from(parts.next()?);
    (device == index).then_some((n, marker))
}

/// The prefix of every reply line on the worker's stdout.
pub const REPLY_PREFIX: &str = "@kw-worker ";

/// What `kw tune` asks of a worker.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "op")]
pub enum Request {
    /// Configurations that will be evaluated soon: compile them ahead.
    Prefetch {
        /// The points.
        points: Vec<Point>,
    },
    /// Measure one configuration.
    Evaluate {
        /// The point.
        point: Point,
    },
    /// Measure one of these configurations: the first whose compile has finished (else the
    /// first to finish); `compiled` names it.
    EvaluateAny {
        /// The points, in the tuning loop's order.
        points: Vec<Point>,
    },
}

/// The worker's counters so far (see [`kw_replay::ReplayStats`]).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct WireStats {
    /// Launches.
    pub launches: u64,
    /// Verified launches.
    pub verified_runs: u64,
    /// Device-busy seconds.
    pub busy_s: f64,
    /// Seconds the measuring thread waited for the compiler.
    pub compile_wait_s: f64,
    /// CPU seconds of the compile threads.
    pub compile_cpu_s: f64,
    /// Verified launches compared on the device.
    #[serde(default)]
    pub verified_on_device: u64,
    /// Compiles that ran the compiler.
    #[serde(default)]
    pub compiles: u64,
    /// Compiles served from the on-disk compile cache.
    #[serde(default)]
    pub cache_hits: u64,
    /// Seconds the cache hits took.
    #[serde(default)]
    pub cache_load_s: f64,
    /// Cache entries replaced (damaged, foreign or refused by the driver).
    #[serde(default)]
    pub cache_replaced: u64,
    /// Host seconds of verification.
    #[serde(default)]
    pub verify_s: f64,
    /// Host seconds of restores.
    #[serde(default)]
    pub restore_s: f64,
    /// Seconds of worker start-up (opening the device, loading the capture).
    #[serde(default)]
    pub start_s: f64,
}

impl WireStats {
    /// The counters of a replay evaluator.
    pub fn of(s: &kw_replay::ReplayStats) -> WireStats {
        WireStats {
            launches: s.launches,
            verified_runs: s.verified_runs,
            verified_on_device: s.verified_on_device,
            busy_s: s.busy.as_secs_f64(),
            compile_wait_s: s.compile_wait.as_secs_f64(),
            compile_cpu_s: s.compile_cpu.as_secs_f64(),
            compiles: s.compiles,
            cache_hits: s.cache_hits,
            cache_load_s: s.cache_load.as_secs_f64(),
            cache_replaced: s.cache_replaced,
            verify_s: s.verify.as_secs_f64(),
            restore_s: s.restore.as_secs_f64(),
            start_s: s.start.as_secs_f64(),
        }
    }

    /// Adds another worker's counters.
    pub fn add(&mut self, o: &WireStats) {
        self.launches += o.launches;
        self.verified_runs += o.verified_runs;
        self.verified_on_device += o.verified_on_device;
        self.busy_s += o.busy_s;
        self.compile_wait_s += o.compile_wait_s;
        self.compile_cpu_s += o.compile_cpu_s;
        self.compiles += o.compiles;
        self.cache_hits += o.cache_hits;
        self.cache_load_s += o.cache_load_s;
        self.cache_replaced += o.cache_replaced;
        self.verify_s += o.verify_s;
        self.restore_s += o.restore_s;
        self.start_s += o.start_s;
    }
}

/// A worker's answer.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "reply")]
pub enum Reply {
    /// The device is open and the capture's metadata read: the capture loads now, and
    /// prefetches compile meanwhile. `ready` or `start_failed` follows, before any result.
    Loading {
        /// The identity of the device opened (`kernel_wisdom::ListedDevice::identity`).
        #[serde(default)]
        device: String,
    },
    /// The capture is loaded.
    Ready {
        /// Seconds from the worker's start to now (opening the device, loading the capture).
        start_s: f64,
        /// The worker says `launched` after each configuration's first launch: an OpenCL
        /// driver may compile then (PoCL does), so that launch has a limit of its own. False
        /// on CUDA (a module is loaded at its compile) and from workers before it.
        #[serde(default)]
        first_launch: bool,
    },
    /// The capture could not be loaded (not the fault of any configuration).
    StartFailed {
        /// Why.
        reason: String,
    },
    /// The configuration of the `evaluate` in progress is compiled (or failed to compile):
    /// its launches start now.
    Compiled {
        /// Its position in `evaluate_any`'s points (0 for `evaluate`).
        #[serde(default)]
        index: usize,
    },
    /// The first launch of the configuration `compiled` named has finished (a driver may
    /// compile at the first launch: PoCL does): `kw tune`'s evaluation time limit counts
    /// from here, the first launch having had a limit of its own. Workers before it never
    /// sent it.
    Launched,
    /// The result of one `evaluate`.
    Result {
        /// The objective (median ms) when it succeeded.
        objective: Option<f64>,
        /// The timed samples.
        samples: Option<Vec<f64>>,
        /// The failure reason when it failed.
        failure: Option<String>,
        /// The failure says the device is unusable (not the configuration's fault).
        fatal: bool,
        /// The worker's counters after this evaluation.
        stats: WireStats,
    },
}

/// Arguments of `kw __eval-worker` (written by `kw tune`, not by people).
#[derive(Args, Clone, Debug)]
pub struct WorkerArgs {
    /// The capture.
    #[arg(long)]
    pub capture: PathBuf,
    /// The device: `kw tune` passes the identity of the one it opened
    /// (`kernel_wisdom::ListedDevice::identity`); an index or name substring works too.
    #[arg(long)]
    pub device: String,
    /// Warm-up launches.
    #[arg(long)]
    pub warmup: usize,
    /// Least timed launches.
    #[arg(long)]
    pub min_samples: usize,
    /// Most timed launches.
    #[arg(long)]
    pub max_samples: usize,
    /// Time budget of the timed launches (ms).
    #[arg(long)]
    pub sample_time_ms: u64,
    /// Verify the last run against the reference.
    #[arg(long)]
    pub verify: bool,
    /// Relative tolerance (overrides the definition's).
    #[arg(long)]
    pub rtol: Option<f64>,
    /// Absolute tolerance (overrides the definition's).
    #[arg(long)]
    pub atol: Option<f64>,
    /// NaN where the reference has NaN is an error.
    #[arg(long)]
    pub nan_is_error: bool,
    /// Compile threads.
    #[arg(long)]
    pub compile_threads: usize,
}

impl WorkerArgs {
    /// The measurement options these arguments describe.
    pub fn options(&self) -> MeasureOptions {
        MeasureOptions {
            warmup: self.warmup,
            min_samples: self.min_samples,
            max_samples: self.max_samples,
            time_budget: Duration::from_millis(self.sample_time_ms),
            verify: if self.verify {
                VerifyMode::Last
            } else {
                VerifyMode::Off
            },
            tolerance: ToleranceOverride {
                rtol: self.rtol,
                atol: self.atol,
                nan_is_error: self.nan_is_error.then_some(true),
            },
        }
    }

    /// The command-line words of these arguments (after the subcommand).
    pub fn to_args(&self) -> Vec<String> {
        let mut v = vec![
            "--capture".to_string(),
            self.capture.display().to_string(),
            "--device".into(),
            self.device.clone(),
            "--warmup".into(),
            self.warmup.to_string(),
            "--min-samples".into(),
            self.min_samples.to_string(),
            "--max-samples".into(),
            self.max_samples.to_string(),
            "--sample-time-ms".into(),
            self.sample_time_ms.to_string(),
            "--compile-threads".into(),
            self.compile_threads.to_string(),
        ];
        if self.verify {
            v.push("--verify".into());
        }
        for (flag, value) in [("--rtol", self.rtol), ("--atol", self.atol)] {
            if let Some(x) = value {
                v.extend([flag.to_string(), x.to_string()]);
            }
        }
        if self.nan_is_error {
            v.push("--nan-is-error".into());
        }
        v
    }
}

fn reply(out: &mut impl Write, r: &Reply) -> std::io::Result<()> {
    let text = serde_json::to_string(r).map_err(std::io::Error::other)?;
    writeln!(out, "{REPLY_PREFIX}{text}")?;
    out.flush()
}

/// What the worker's main loop waits for.
enum Event {
    /// A request line from `kw tune`.
    Line(String),
    /// The capture finished loading (or failed to).
    Loaded(Box<Result<ReplaySession, ReplayError>>),
}

/// Replies to one evaluation of one of `points`: `compiled` once one is compiled, then its
/// result.
fn evaluate(
    out: &mut impl Write,
    eval: &mut ReplayEvaluator,
    points: &[Point],
    start_s: f64,
) -> std::io::Result<()> {
    if points.is_empty() {
        return Err(std::io::Error::other("evaluate_any without points"));
    }
    let index = eval.wait_compiled(points);
    reply(out, &Reply::Compiled { index })?;
    let result = eval.evaluate(&points[index]);
    let samples = eval.take_samples();
    let stats = WireStats {
        start_s,
        ..WireStats::of(&eval.stats())
    };
    let r = match result {
        Ok(ms) => Reply::Result {
            objective: Some(ms),
            samples,
            failure: None,
            fatal: false,
            stats,
        },
        Err(f) => Reply::Result {
            objective: None,
            samples: None,
            failure: Some(f.reason),
            fatal: f.fatal,
            stats,
        },
    };
    reply(out, &r)
}

/// Runs the worker until its stdin closes.
///
/// It opens the device and reads the capture's metadata, starts the compile pool and replies
/// `loading`; the capture then loads on another thread while prefetched configurations
/// compile. Once it is loaded the worker replies `ready` (or `start_failed`), before the
/// result of any evaluation that came meanwhile.
pub fn run(args: WorkerArgs) -> Result<()> {
    let began = Instant::now();
    let (tx, rx) = std::sync::mpsc::channel::<Event>();
    let lines = tx.clone();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        for line in stdin.lock().lines() {
            let Ok(l) = line else { break };
            if lines.send(Event::Line(l)).is_err() {
                break;
            }
        }
        // `kw tune` closed the pipe or is gone: leave now, even if a launch hangs.
        std::process::exit(0);
    });
    let mut out = std::io::stdout().lock();
    let mut fault = None;
    let opened = resolve(&DeviceSelector::parse(&args.device), None)
        .and_then(|listed| {
            fault = fault_for(listed.index);
            Ok((open_listed(&listed)?, listed.identity()))
        })
        .map_err(anyhow::Error::from)
        .and_then(|opened| match &fault {
            Some((n, marker)) if *n == 0 || marker.exists() => {
                let _ = std::fs::write(marker, b"failed\n");
                Err(anyhow::anyhow!(
                    "the device failed ({FAULT_ENV}: {} exists)",
                    marker.display()
                ))
            }
            _ => Ok(opened),
        })
        .and_then(|(device, id)| {
            let (meta, space) = ReplaySession::inspect(&args.capture, device.info())?;
            Ok((device, id, meta, space))
        });
    let (device, device_id, meta, space) = match opened {
        Ok(o) => o,
        Err(e) => {
            let reason = crate::error_text(&e);
            reply(&mut out, &Reply::StartFailed { reason })?;
            return Ok(());
        }
    };
    let mut pool = Some(CompilePool::new(
        device.clone(),
        Arc::new(meta.kernel),
        args.compile_threads.max(1),
    ));
    reply(&mut out, &Reply::Loading { device: device_id })?;
    let capture = args.capture.clone();
    std::thread::spawn(move || {
        let load = || ReplaySession::load(&capture, device);
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(load)) {
            Ok(loaded) => {
                let _ = tx.send(Event::Loaded(Box::new(loaded)));
            }
            // The panic's message is on stderr: `kw tune` reports the worker's death, with
            // it, as a failed start.
            Err(_) => std::process::exit(101),
        }
    });
    let mut eval: Option<ReplayEvaluator> = None;
    let mut start_s = 0.0;
    // Evaluations that came while the capture loaded (`kw tune` sends one at a time).
    let mut waiting: Vec<Vec<Point>> = Vec::new();
    for event in rx {
        match event {
            Event::Loaded(loaded) => match *loaded {
                Ok(session) => {
                    start_s = began.elapsed().as_secs_f64();
                    let pool = pool.take().expect("the capture loads once");
                    let e = eval.insert(ReplayEvaluator::with_pool(
                        Arc::new(session),
                        args.options(),
                        pool,
                    ));
                    // Written from this thread, which holds `out` (standard output's lock
                    // is reentrant); a failed write shows as the worker's death.
                    let first_launch =
                        e.session().device().info().backend == kw_core::device::BackendKind::Opencl;
                    if first_launch {
                        e.on_first_launch(Box::new(|| {
                            let _ = reply(&mut std::io::stdout().lock(), &Reply::Launched);
                        }));
                    }
                    reply(
                        &mut out,
                        &Reply::Ready {
                            start_s,
                            first_launch,
                        },
                    )?;
                    for points in waiting.drain(..) {
                        evaluate(&mut out, e, &points, start_s)?;
                    }
                }
                Err(e) => {
                    let reason = crate::error_text(&anyhow::Error::from(e));
                    reply(&mut out, &Reply::StartFailed { reason })?;
                    return Ok(());
                }
            },
            Event::Line(line) => {
                let request = match serde_json::from_str(&line) {
                    Ok(Request::Evaluate { point }) => Request::EvaluateAny {
                        points: vec![point],
                    },
                    Ok(r) => r,
                    Err(e) => anyhow::bail!("bad request `{line}`: {e}"),
                };
                if let (Request::EvaluateAny { .. }, Some((n, marker))) = (&request, &mut fault) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        let _ = std::fs::write(&*marker, b"failed\n");
                        eprintln!("kw: {FAULT_ENV}: the device fails now");
                        std::process::abort();
                    }
                }
                match (request, &mut eval, &pool) {
                    (Request::Prefetch { points }, Some(e), _) => e.prefetch(&points),
                    (Request::Prefetch { points }, None, Some(p)) => p.prefetch(&space, &points),
                    (Request::EvaluateAny { points }, Some(e), _) => {
                        evaluate(&mut out, e, &points, start_s)?
                    }
                    (Request::EvaluateAny { points }, None, _) => waiting.push(points),
                    (Request::Evaluate { .. }, _, _) => unreachable!("made an evaluate_any above"),
                    (Request::Prefetch { .. }, None, None) => {
                        unreachable!("the pool moves into the evaluator")
                    }
                }
            }
        }
    }
    Ok(())
}
