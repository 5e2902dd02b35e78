//! [`ReplayEvaluator`]: the [`kw_tune::Evaluator`] that replays a capture. For each
//! configuration: take it from the compile pool (compiled ahead), restore the written
//! buffers before every run, warm up, time launches with device events, verify against the
//! captured reference. A wrong result, a failed compile or a failed launch is a failed
//! configuration with its reason; a failed restore or read-back is fatal (the device is gone).

use crate::ahead::Ahead;
use crate::compile::CompilePool;
use crate::measure::{median, MeasureOptions, VerifyMode};
use crate::session::ReplaySession;
use kw_core::backend::CompiledKernel;
use kw_core::compile_cache::{CacheStats, CompileCache};
use kw_core::{config::Config, space::Point};
use kw_tune::{EvalFailure, EvalResult, Evaluator};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Counters of a replay run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReplayStats {
    /// Configurations evaluated.
    pub evaluations: u64,
    /// Launches (warm-up and timed).
    pub launches: u64,
    /// Launches whose output was verified and matched.
    pub verified_runs: u64,
    /// Of those, the ones compared on the device (the comparison kernel; see
    /// [`crate::ReplaySession::verify_at`] for when the host is chosen).
    pub verified_on_device: u64,
    /// Device time of all launches, warm-ups included.
    pub busy: Duration,
    /// Time the measuring thread waited for the compiler.
    pub compile_wait: Duration,
    /// Wall time since the evaluator was created.
    pub wall: Duration,
    /// CPU time of the compile threads (compiler runs and cache loads).
    pub compile_cpu: Duration,
    /// Compiles that ran the compiler (configurations and the comparison kernels).
    pub compiles: u64,
    /// Compiles served from the on-disk compile cache.
    pub cache_hits: u64,
    /// Time the cache hits took to read and load.
    pub cache_load: Duration,
    /// Cache entries found damaged, foreign or refused by the driver, recompiled and replaced.
    pub cache_replaced: u64,
    /// Host time of verification (device comparison, or read-back and host comparison).
    pub verify: Duration,
    /// Host time of restoring the written buffers before each run.
    pub restore: Duration,
    /// Start-up of evaluation worker processes (`kw tune`'s isolation): opening the device
    /// and loading the capture, part of [`ReplayStats::host_time`]; zero for an evaluator
    /// in process, whose session was loaded before it.
    pub start: Duration,
}

impl ReplayStats {
    /// Device-busy time over wall time (0..=1).
    pub fn busy_fraction(&self) -> f64 {
        let wall = self.wall.as_secs_f64();
        if wall > 0.0 {
            self.busy.as_secs_f64() / wall
        } else {
            0.0
        }
    }

    /// Wall time not spent waiting for the compiler, in launches, verifying or restoring:
    /// the host's own share (scheduling, worker start-up ([`ReplayStats::start`]), loading
    /// the capture, ...).
    pub fn host_time(&self) -> Duration {
        self.wall
            .saturating_sub(self.compile_wait)
            .saturating_sub(self.busy)
            .saturating_sub(self.verify)
            .saturating_sub(self.restore)
    }

    /// Evaluations per second of wall time.
    pub fn evals_per_second(&self) -> f64 {
        let wall = self.wall.as_secs_f64();
        if wall > 0.0 {
            self.evaluations as f64 / wall
        } else {
            0.0
        }
    }
}

/// The earlier of two snapshots of one compile cache's counters (they only grow: the
/// earlier counted fewer events).
fn earlier(a: Option<CacheStats>, b: Option<CacheStats>) -> Option<CacheStats> {
    let events = |s: &CacheStats| s.compiles + s.hits + s.misses + s.rejected + s.load_failures;
    match (a, b) {
        (Some(a), Some(b)) => Some(if events(&b) < events(&a) { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// One measured configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// Median of the samples (ms).
    pub median_ms: f64,
    /// Every timed sample (ms).
    pub samples: Vec<f64>,
}

/// Replays one capture under many configurations.
pub struct ReplayEvaluator {
    session: Arc<ReplaySession>,
    options: MeasureOptions,
    pool: CompilePool,
    kernels: HashMap<u128, Arc<dyn CompiledKernel>>,
    last_samples: Option<Vec<f64>>,
    stats: ReplayStats,
    started: Instant,
    /// The queue depth asked of the tuning loop.
    ahead: Ahead,
    /// A configuration taken from the pool by [`ReplayEvaluator::wait_compiled`], not yet
    /// measured.
    ready: Option<(u128, crate::compile::Compiled)>,
    /// The device's compile cache and its counters when the evaluator started.
    cache: Option<(Arc<CompileCache>, CacheStats)>,
    /// Called once per measurement, when its first launch has finished
    /// ([`ReplayEvaluator::on_first_launch`]).
    first_launch: Option<Box<dyn FnMut() + Send>>,
}

impl ReplayEvaluator {
    /// An evaluator over `session` with `compile_threads` compile threads.
    pub fn new(
        session: Arc<ReplaySession>,
        options: MeasureOptions,
        compile_threads: usize,
    ) -> ReplayEvaluator {
        let pool = CompilePool::new(
            session.device().clone(),
            Arc::new(session.def().clone()),
            compile_threads,
        );
        ReplayEvaluator::with_pool(session, options, pool)
    }

    /// An evaluator over `session` that takes its kernels from `pool`, a pool already
    /// compiling for the session's kernel and device (started, for instance, while the
    /// session loaded, with configurations submitted by [`CompilePool::prefetch`] on the
    /// same tuning space).
    pub fn with_pool(
        session: Arc<ReplaySession>,
        options: MeasureOptions,
        pool: CompilePool,
    ) -> ReplayEvaluator {
        // Counted from before the session compiled its comparison kernels or the pool its
        // first configuration, whichever came first.
        let baseline = earlier(session.cache_baseline(), pool.cache_baseline());
        let cache = session
            .device()
            .compile_cache()
            .map(|c| (c.clone(), baseline.unwrap_or_default()));
        ReplayEvaluator {
            session,
            options,
            kernels: HashMap::new(),
            last_samples: None,
            stats: ReplayStats::default(),
            started: Instant::now(),
            ahead: Ahead::new(pool.threads()),
            ready: None,
            pool,
            cache,
            first_launch: None,
        }
    }

    /// Calls `hook` in each measurement once its first launch has finished. A driver may
    /// compile at a configuration's first launch (PoCL builds its work-group function then):
    /// a worker process tells `kw tune`, which gives that launch a limit of its own.
    pub fn on_first_launch(&mut self, hook: Box<dyn FnMut() + Send>) {
        self.first_launch = Some(hook);
    }

    /// Tells the hook, if `first` (then no longer).
    fn first_launch_done(&mut self, first: &mut bool) {
        if std::mem::take(first) {
            if let Some(hook) = &mut self.first_launch {
                hook();
            }
        }
    }

    /// Waits until one of `points` is compiled (or failed to compile): the first whose
    /// compile has finished, else the first to finish (the first of `points` when none was
    /// submitted), counted as compile wait. Returns its position; the next
    /// [`Evaluator::evaluate`] of it only measures. A worker process tells `kw tune` the
    /// compile is done, so that its evaluation time limit counts the launches, not the
    /// compiler.
    pub fn wait_compiled(&mut self, points: &[Point]) -> usize {
        let keys: Vec<u128> = points.iter().map(|p| self.key(p)).collect();
        let held = |k: &u128, s: &Self| {
            s.kernels.contains_key(k) || s.ready.as_ref().is_some_and(|(r, _)| r == k)
        };
        if let Some(i) = keys.iter().position(|k| held(k, self)) {
            return i;
        }
        let started = Instant::now();
        let configs: Vec<Config> = points
            .iter()
            .map(|p| self.session.space().config(p))
            .collect();
        let jobs: Vec<(u128, &Config)> = keys.iter().copied().zip(&configs).collect();
        let i = self.pool.first_done(&jobs, true).unwrap_or(0);
        let (compiled, _) = self.pool.take(keys[i], &configs[i]);
        self.stats.compile_wait += started.elapsed();
        self.ready = Some((keys[i], compiled));
        i
    }

    /// The session.
    pub fn session(&self) -> &Arc<ReplaySession> {
        &self.session
    }

    /// The counters so far.
    pub fn stats(&self) -> ReplayStats {
        let mut s = self.stats.clone();
        s.wall = self.started.elapsed();
        s.compile_cpu = self.pool.cpu_time();
        if let Some((cache, at_start)) = &self.cache {
            let now = cache.stats();
            s.compiles = now.compiles - at_start.compiles;
            s.cache_hits = now.hits - at_start.hits;
            s.cache_load = now.load_time.saturating_sub(at_start.load_time);
            s.cache_replaced =
                (now.rejected + now.load_failures) - (at_start.rejected + at_start.load_failures);
        }
        s
    }

    fn key(&self, point: &Point) -> u128 {
        self.session.space().index_of(point).unwrap_or(u128::MAX)
    }

    /// Runs the restore and one timed launch, verifying when asked. Errors are
    /// `(fatal, reason)`.
    fn run_once(
        &mut self,
        kernel: &dyn CompiledKernel,
        geometry: &kw_core::kernel_def::eval::Geometry,
        verify: bool,
    ) -> Result<f64, EvalFailure> {
        let restoring = Instant::now();
        self.session
            .restore()
            .map_err(|e| EvalFailure::fatal(format!("restoring the buffers: {e}")))?;
        self.stats.restore += restoring.elapsed();
        let ms = self
            .session
            .launch_timed(kernel, geometry)
            .map_err(|e| EvalFailure::new(format!("launch failed: {e}")))?;
        self.stats.launches += 1;
        self.stats.busy += Duration::from_secs_f64(ms.max(0.0) / 1000.0);
        self.check_guards()?;
        if verify {
            self.verify()?;
        }
        Ok(ms)
    }

    /// `runs` restores and timed launches, enqueued without a host wait between runs.
    fn run_batch(
        &mut self,
        kernel: &dyn CompiledKernel,
        geometry: &kw_core::kernel_def::eval::Geometry,
        runs: usize,
    ) -> Result<Vec<f64>, EvalFailure> {
        if runs == 0 {
            return Ok(Vec::new());
        }
        let times = self
            .session
            .run_timed(kernel, geometry, runs)
            .map_err(|e| EvalFailure::new(format!("launch failed: {e}")))?;
        self.stats.launches += runs as u64;
        let busy: f64 = times.iter().map(|ms| ms.max(0.0)).sum();
        self.stats.busy += Duration::from_secs_f64(busy / 1000.0);
        Ok(times)
    }

    /// Reads the buffers' guard regions (`crate::guard`): a changed byte is an out-of-bounds
    /// write, a failure even when the output is right.
    fn check_guards(&mut self) -> Result<(), EvalFailure> {
        let started = Instant::now();
        let verdict = self.session.check_guards();
        self.stats.verify += started.elapsed();
        match verdict {
            Ok(None) => Ok(()),
            Ok(Some(reason)) => Err(EvalFailure::new(reason)),
            Err(e) => Err(EvalFailure::fatal(format!(
                "reading the guard regions: {e}"
            ))),
        }
    }

    /// Compares the outputs with the captured reference (timed).
    fn verify(&mut self) -> Result<(), EvalFailure> {
        let started = Instant::now();
        let verdict = self.session.verify(self.options.tolerance);
        self.stats.verify += started.elapsed();
        match verdict {
            Ok(None) => {
                self.stats.verified_runs += 1;
                if self.session.verifies_on_device() {
                    self.stats.verified_on_device += 1;
                }
                Ok(())
            }
            Ok(Some(reason)) => Err(EvalFailure::new(format!("wrong result: {reason}"))),
            Err(e) => Err(EvalFailure::fatal(format!("reading the output: {e}"))),
        }
    }

    /// Measures a configuration (compiled through the pool): warm-ups, timed samples,
    /// verification.
    pub fn measure(&mut self, point: &Point) -> Result<Measurement, EvalFailure> {
        let config: Config = self.session.space().config(point);
        let key = self.key(point);
        let geometry = self
            .session
            .geometry(&config)
            .map_err(|e| EvalFailure::new(format!("invalid configuration: {e}")))?;
        // A grid with an empty axis launches nothing (a T1 global size a parameter divides
        // to 0): no output to compare, so it is said as such, not as a wrong result.
        if geometry.grid.contains(&0) {
            return Err(EvalFailure::new(format!(
                "invalid configuration: its launch is empty (a grid of {:?} blocks): it does \
                 no work",
                geometry.grid
            )));
        }
        let kernel = match self.kernels.get(&key) {
            Some(k) => k.clone(),
            None => {
                let compiled = match self.ready.take() {
                    Some((k, compiled)) if k == key => compiled,
                    _ => {
                        let (compiled, waited) = self.pool.take(key, &config);
                        self.stats.compile_wait += waited;
                        compiled
                    }
                };
                let k = compiled.map_err(EvalFailure::new)?;
                self.kernels.insert(key, k.clone());
                k
            }
        };
        let every = self.options.verify == VerifyMode::EveryRun;
        let max = self.options.max_samples.max(1);
        let min = self.options.min_samples.clamp(1, max);
        let mut samples = Vec::new();
        // The first launch is told once ([`ReplayEvaluator::on_first_launch`]).
        let mut first = true;
        if every {
            // One run at a time, each verified.
            for _ in 0..self.options.warmup {
                self.run_once(kernel.as_ref(), &geometry, true)?;
                self.first_launch_done(&mut first);
            }
            let started = Instant::now();
            while samples.len() < max
                && (samples.len() < min || started.elapsed() < self.options.time_budget)
            {
                samples.push(self.run_once(kernel.as_ref(), &geometry, true)?);
                self.first_launch_done(&mut first);
            }
        } else {
            // Batches enqueued without a host wait per run: the warm-ups, then the least
            // number of samples, then as many more as the time budget allows (estimated from
            // the first batch).
            if self.options.warmup > 0 {
                self.run_batch(kernel.as_ref(), &geometry, self.options.warmup)?;
                self.first_launch_done(&mut first);
            }
            let started = Instant::now();
            samples = self.run_batch(kernel.as_ref(), &geometry, min)?;
            self.first_launch_done(&mut first);
            let per_run = started.elapsed().as_secs_f64() / min as f64;
            let left = self
                .options
                .time_budget
                .saturating_sub(started.elapsed())
                .as_secs_f64();
            let more = if per_run > 0.0 {
                ((left / per_run) as usize).min(max - min)
            } else {
                max - min
            };
            if more > 0 {
                samples.extend(self.run_batch(kernel.as_ref(), &geometry, more)?);
            }
            self.check_guards()?;
            if self.options.verify == VerifyMode::Last {
                self.verify()?;
            }
        }
        let median_ms = median(&mut samples.clone());
        // A time is a positive number of milliseconds (results logs, wisdom records and the
        // confirmation take nothing else, `kw_core::objective::valid_time`): a median of 0 is
        // below the device timer's resolution.
        if !kw_core::objective::valid_time(median_ms) {
            return Err(EvalFailure::new(format!(
                "measured {median_ms} ms: below the device timer's resolution (give the \
                 launch more work)"
            )));
        }
        Ok(Measurement { median_ms, samples })
    }

    /// One evaluation: measured, its failure leaving the buffers restored and the device
    /// checked.
    fn measure_one(&mut self, point: &Point) -> EvalResult {
        self.stats.evaluations += 1;
        let m = self.measure(point);
        // Compiled kernels are kept only while a configuration may be measured again.
        let key = self.key(point);
        if self.kernels.len() > 64 {
            self.kernels.retain(|k, _| *k == key);
        }
        match m {
            Ok(m) => {
                self.last_samples = Some(m.samples);
                Ok(m.median_ms)
            }
            Err(f) => {
                self.last_samples = None;
                // No configuration is judged on another's damage: every buffer (inputs and
                // guard regions included) is restored after a failure, and the device must
                // still work (a failed launch may have lost the context: a CUDA sticky error).
                if let Err(e) = self.session.restore_all() {
                    return Err(EvalFailure::fatal(format!(
                        "{}; then restoring the buffers failed: {e}",
                        f.reason
                    )));
                }
                if let Err(e) = self.session.device().synchronize() {
                    return Err(EvalFailure::fatal(format!(
                        "{}; then the device failed: {e}",
                        f.reason
                    )));
                }
                Err(f)
            }
        }
    }
}

impl Evaluator for ReplayEvaluator {
    fn evaluate(&mut self, point: &Point) -> EvalResult {
        self.evaluate_any(std::slice::from_ref(point)).1
    }

    fn evaluate_any(&mut self, points: &[Point]) -> (usize, EvalResult) {
        if points.is_empty() {
            return (0, Err(EvalFailure::new("no configuration to evaluate")));
        }
        let (began, waited) = (Instant::now(), self.stats.compile_wait);
        let chosen = self.wait_compiled(points);
        let result = self.measure_one(&points[chosen]);
        self.ahead.observe(
            self.stats.compile_wait.saturating_sub(waited),
            began.elapsed(),
        );
        (chosen, result)
    }

    fn prefetch(&mut self, points: &[Point]) {
        self.pool.prefetch(self.session.space(), points);
    }

    fn ahead(&self) -> Option<usize> {
        Some(self.ahead.depth())
    }

    fn take_samples(&mut self) -> Option<Vec<f64>> {
        self.last_samples.take()
    }
}
