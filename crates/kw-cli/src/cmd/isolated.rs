//! [`IsolatedEvaluator`]: `kw tune`'s evaluator that measures each configuration in a worker
//! process ([`super::worker`]) under a watchdog. A configuration that runs past its time
//! limit, or that kills the worker (segfault, abort, illegal address, lost context), is a
//! failed result with its reason; the next evaluation starts a fresh worker. Ctrl-C and the
//! run's `--time` are noticed within [`POLL`] even while a launch hangs.

use super::worker::{Reply, Request, WireStats, WorkerArgs, REPLY_PREFIX};
use kw_core::space::Point;
use kw_replay::ReplayStats;
use kw_tune::{EvalFailure, EvalResult, Evaluator};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How often the watchdog looks at Ctrl-C, the run's deadline and the time limit.
pub const POLL: Duration = Duration::from_millis(100);
/// The least per-evaluation time limit derived from the default configuration.
pub const TIMEOUT_FLOOR: Duration = Duration::from_secs(10);
/// The derived limit is this many times the default configuration's evaluation time.
pub const TIMEOUT_FACTOR: u32 = 10;
/// The limit before the default configuration's time is known (its own evaluation), and for
/// a worker to load the capture.
pub const FIRST_TIMEOUT: Duration = Duration::from_secs(120);
/// The limit on the wait for a configuration's compile, before its launches (the evaluation
/// time limit counts from the worker's `compiled`): a compile of a heavily unrolled
/// configuration takes seconds while others compile beside it, and is no hang.
pub const COMPILE_TIMEOUT: Duration = Duration::from_secs(600);
/// The least time limit of a configuration's first launch, in which a driver may compile
/// (PoCL builds its work-group function then), unless `--eval-timeout` sets one.
pub const FIRST_LAUNCH_TIMEOUT: Duration = Duration::from_secs(60);
/// Lines of a dead worker's stderr kept for its failure reason.
const STDERR_TAIL: usize = 3;

/// The per-evaluation time limit: fixed (`--eval-timeout`) or derived from the default
/// configuration's evaluation time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EvalTimeout {
    fixed: Option<Duration>,
    derived: Option<Duration>,
}

impl EvalTimeout {
    /// A limit set by the user, or (None) one derived from the first successful evaluation.
    pub fn new(fixed: Option<Duration>) -> EvalTimeout {
        EvalTimeout {
            fixed,
            derived: None,
        }
    }

    /// The limit now.
    pub fn limit(&self) -> Duration {
        self.fixed.or(self.derived).unwrap_or(FIRST_TIMEOUT)
    }

    /// Learns from a successful evaluation that took `took` (the first one learned is the
    /// default configuration's: it is evaluated first).
    pub fn learn(&mut self, took: Duration) {
        if self.derived.is_none() {
            self.derived = Some(derive_timeout(took));
        }
    }
}

/// The limit derived from the default configuration's evaluation time:
/// [`TIMEOUT_FACTOR`] times it, at least [`TIMEOUT_FLOOR`].
pub fn derive_timeout(default_eval: Duration) -> Duration {
    (default_eval * TIMEOUT_FACTOR).max(TIMEOUT_FLOOR)
}

/// One running worker.
struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    replies: Receiver<String>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    stats: WireStats,
    /// It replied `loading`: `ready` (or `start_failed`) is still to come.
    loading: bool,
    /// It says `launched` after a configuration's first launch (its `ready` said so).
    tells_first_launch: bool,
}

/// How waiting for a reply ended.
enum Waited {
    Reply(Reply),
    Died(String),
    TimedOut(Duration),
    Cancelled,
    Deadline,
}

impl Worker {
    fn spawn(exe: &PathBuf, args: &WorkerArgs) -> std::io::Result<Worker> {
        let mut cmd = Command::new(exe);
        cmd.arg("__eval-worker")
            .args(args.to_args())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Shared mode (`--max-share`) holds in the worker too, which does the transfers.
        let gentle = kw_core::backend::gentle_chunk();
        if gentle > 0 {
            cmd.env("KW_GENTLE_CHUNK", gentle.to_string());
        }
        // The OpenCL platforms this process started with (an ICD loader cuts the list short).
        kw_core::child_env::restore_icd_env(&mut cmd);
        #[cfg(unix)]
        {
            // Its own process group: the terminal's Ctrl-C goes to `kw tune` only, which then
            // stops the worker itself (a worker killed by the signal would read as a crash).
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        let mut child = cmd.spawn()?;
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, replies) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(json) = line.strip_prefix(REPLY_PREFIX) {
                    if tx.send(json.to_string()).is_err() {
                        break;
                    }
                }
            }
        });
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let tail = stderr_tail.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if line.trim().is_empty() {
                    continue;
                }
                let mut t = tail.lock().unwrap_or_else(PoisonError::into_inner);
                if t.len() == STDERR_TAIL {
                    t.pop_front();
                }
                t.push_back(line);
            }
        });
        Ok(Worker {
            stdin: child.stdin.take(),
            child,
            replies,
            stderr_tail,
            stats: WireStats::default(),
            loading: false,
            tells_first_launch: false,
        })
    }

    fn send(&mut self, request: &Request) -> bool {
        let Some(stdin) = self.stdin.as_mut() else {
            return false;
        };
        let line = serde_json::to_string(request).expect("requests serialise");
        writeln!(stdin, "{line}")
            .and_then(|()| stdin.flush())
            .is_ok()
    }

    /// Waits for one reply while watching the worker, Ctrl-C, the deadline and `limit`.
    fn wait(&mut self, limit: Duration, cancel: &AtomicBool, deadline: Option<Instant>) -> Waited {
        let started = Instant::now();
        loop {
            match self.replies.recv_timeout(POLL) {
                Ok(line) => {
                    return match serde_json::from_str(&line) {
                        Ok(r) => Waited::Reply(r),
                        Err(e) => Waited::Died(format!("sent a bad reply ({e})")),
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return Waited::Died(self.death()),
                Err(RecvTimeoutError::Timeout) => {}
            }
            if cancel.load(Ordering::SeqCst) {
                return Waited::Cancelled;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Waited::Deadline;
            }
            if started.elapsed() >= limit {
                return Waited::TimedOut(limit);
            }
        }
    }

    /// Why the worker ended (its exit status and the last lines it wrote to stderr).
    fn death(&mut self) -> String {
        let status = match self.child.wait() {
            Ok(s) => describe_status(s),
            Err(e) => format!("its status is unknown ({e})"),
        };
        // The stderr reader may still be draining the pipe.
        std::thread::sleep(Duration::from_millis(20));
        let tail = self
            .stderr_tail
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect::<Vec<_>>()
            .join(" | ");
        if tail.is_empty() {
            status
        } else {
            format!("{status}; its last messages: {tail}")
        }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Closes its stdin (it exits) and waits a moment before killing it.
    fn shutdown(&mut self) {
        self.stdin = None;
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.kill();
    }
}

/// An exit status in words: `killed by signal 11 (SIGSEGV)`, `exit status 134`.
fn describe_status(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            let name = match sig {
                4 => " (SIGILL)",
                6 => " (SIGABRT)",
                7 => " (SIGBUS)",
                8 => " (SIGFPE)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                _ => "",
            };
            return format!("the worker was killed by signal {sig}{name}");
        }
    }
    match status.code() {
        Some(c) => format!("the worker exited with status {c}"),
        None => format!("the worker ended ({status})"),
    }
}

/// Measures configurations in worker processes under a watchdog.
pub struct IsolatedEvaluator {
    exe: PathBuf,
    args: WorkerArgs,
    worker: Option<Worker>,
    timeout: EvalTimeout,
    cancel: Arc<AtomicBool>,
    deadline: Option<Instant>,
    last_samples: Option<Vec<f64>>,
    /// Counters of workers that ended.
    ended: WireStats,
    evaluations: u64,
    /// Workers started.
    pub starts: u64,
    /// False once a worker failed to start (a fatal failure then stops the run).
    worker_can_start: bool,
    started: Instant,
    /// The queue depth asked of the tuning loop (the worker's compile waits decide).
    ahead: kw_replay::Ahead,
    /// Points prefetched and not evaluated yet, oldest first (sent again to a fresh worker).
    outstanding: std::collections::VecDeque<Point>,
}

impl IsolatedEvaluator {
    /// Workers run `exe __eval-worker ARGS`; `cancel` (Ctrl-C) and `deadline` (the run's
    /// time) interrupt an evaluation within [`POLL`].
    pub fn new(
        exe: PathBuf,
        args: WorkerArgs,
        timeout: EvalTimeout,
        cancel: Arc<AtomicBool>,
        deadline: Option<Instant>,
    ) -> IsolatedEvaluator {
        IsolatedEvaluator {
            exe,
            ahead: kw_replay::Ahead::new(args.compile_threads),
            outstanding: std::collections::VecDeque::new(),
            args,
            worker: None,
            timeout,
            cancel,
            deadline,
            last_samples: None,
            ended: WireStats::default(),
            evaluations: 0,
            starts: 0,
            worker_can_start: true,
            started: Instant::now(),
        }
    }

    /// Replaces the run's deadline (`None`: none), e.g. to confirm a winner after the
    /// search used the run's time.
    pub fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }

    /// Learns the default configuration's evaluation time from a resumed log.
    pub fn learn_timeout(&mut self, took: Duration) {
        self.timeout.learn(took);
    }

    /// The counters of every worker of these evaluators so far (one, or one per device of a
    /// run on several devices): sums, and the longest wall time.
    pub fn combined_stats<'e>(all: impl IntoIterator<Item = &'e IsolatedEvaluator>) -> ReplayStats {
        let mut s = WireStats::default();
        let (mut evaluations, mut wall) = (0, Duration::ZERO);
        for e in all {
            s.add(&e.ended);
            if let Some(w) = &e.worker {
                s.add(&w.stats);
            }
            evaluations += e.evaluations;
            wall = wall.max(e.started.elapsed());
        }
        let secs = Duration::from_secs_f64;
        ReplayStats {
            evaluations,
            launches: s.launches,
            verified_runs: s.verified_runs,
            verified_on_device: s.verified_on_device,
            busy: secs(s.busy_s),
            compile_wait: secs(s.compile_wait_s),
            wall,
            compile_cpu: secs(s.compile_cpu_s),
            compiles: s.compiles,
            cache_hits: s.cache_hits,
            cache_load: secs(s.cache_load_s),
            cache_replaced: s.cache_replaced,
            verify: secs(s.verify_s),
            restore: secs(s.restore_s),
            start: secs(s.start_s),
        }
    }

    /// Stops the current worker (its counters are kept).
    fn retire(&mut self, kill: bool) {
        if let Some(mut w) = self.worker.take() {
            if kill {
                w.kill();
            } else {
                w.shutdown();
            }
            self.ended.add(&w.stats);
        }
    }

    /// Starts a worker when none runs: it opens the device, reads the capture's metadata and
    /// says it is loading the capture (prefetches may be sent; [`Self::ensure_loaded`] waits
    /// for the load).
    fn ensure_worker(&mut self) -> Result<(), EvalFailure> {
        if self.worker.is_some() {
            return Ok(());
        }
        let started = self.start_worker();
        if started.as_ref().is_err_and(|f| f.fatal) {
            self.worker_can_start = false;
        }
        started
    }

    fn start_worker(&mut self) -> Result<(), EvalFailure> {
        let mut w = Worker::spawn(&self.exe, &self.args).map_err(|e| {
            EvalFailure::fatal(format!(
                "cannot start the evaluation worker {}: {e}",
                self.exe.display()
            ))
        })?;
        self.starts += 1;
        // What the last worker was compiling ahead, not evaluated yet, compiles again here.
        if !self.outstanding.is_empty() {
            let _ = w.send(&Request::Prefetch {
                points: self.outstanding.iter().cloned().collect(),
            });
        }
        self.await_start(&mut w, true)?;
        self.worker = Some(w);
        Ok(())
    }

    /// Waits (up to [`FIRST_TIMEOUT`]) for a worker's start reply: `ready`, or, when
    /// `accept_loading`, `loading` (the capture loads while prefetches compile; `ready`
    /// follows). Kills it when it failed to start: every failure here is the worker's, never
    /// a configuration's.
    fn await_start(&self, w: &mut Worker, accept_loading: bool) -> Result<(), EvalFailure> {
        let waited = w.wait(FIRST_TIMEOUT, &self.cancel, self.deadline);
        let failure = match waited {
            Waited::Reply(Reply::Loading { device }) if accept_loading => {
                kw_core::diag::debug(&format!("evaluation worker opened {device}"));
                // Given an identity, the worker must have opened exactly that device.
                if self.args.device.starts_with("id:") && device != self.args.device {
                    w.kill();
                    return Err(EvalFailure::fatal(format!(
                        "the evaluation worker opened {device}, not {}",
                        self.args.device
                    )));
                }
                w.loading = true;
                return Ok(());
            }
            Waited::Reply(Reply::Ready {
                start_s,
                first_launch,
            }) => {
                w.loading = false;
                w.stats.start_s = start_s;
                w.tells_first_launch = first_launch;
                return Ok(());
            }
            Waited::Reply(Reply::StartFailed { reason }) => EvalFailure::fatal(reason),
            Waited::Reply(other) => EvalFailure::fatal(format!(
                "the evaluation worker answered {other:?} before it was ready"
            )),
            Waited::Died(why) => {
                return Err(EvalFailure::fatal(format!(
                    "the evaluation worker failed to start: {why}"
                )))
            }
            Waited::TimedOut(t) => EvalFailure::fatal(format!(
                "the evaluation worker did not load the capture within {} s",
                t.as_secs()
            )),
            Waited::Cancelled => EvalFailure::interrupted("interrupted"),
            Waited::Deadline => EvalFailure::interrupted("the run's time is up"),
        };
        w.kill();
        Err(failure)
    }

    /// Starts a worker and waits until it has loaded the capture, so that the first
    /// evaluation's time is the configuration's own (a run throttled to a share of the device
    /// counts evaluation time).
    pub fn preload(&mut self) -> Result<(), EvalFailure> {
        self.ensure_worker()?;
        self.ensure_loaded()
    }

    /// Waits for the current worker to finish loading the capture, if it still loads. A
    /// failure is a start failure (fatal; a worker that failed to load is not started again).
    fn ensure_loaded(&mut self) -> Result<(), EvalFailure> {
        let Some(mut w) = self.worker.take_if(|w| w.loading) else {
            return Ok(());
        };
        match self.await_start(&mut w, false) {
            Ok(()) => {
                self.worker = Some(w);
                Ok(())
            }
            Err(f) => {
                if f.fatal {
                    self.worker_can_start = false;
                }
                self.ended.add(&w.stats);
                Err(f)
            }
        }
    }

    /// One evaluation of one of `points` (the worker takes the first compiled) in the current
    /// (or a fresh) worker; `chosen` is set to the position of the one evaluated (the first
    /// until the worker says otherwise).
    fn evaluate_once(&mut self, points: &[Point], chosen: &mut usize) -> EvalResult {
        *chosen = 0;
        self.last_samples = None;
        self.ensure_worker()?;
        // Sent at once: a worker that still loads the capture evaluates it once loaded. One
        // that ended while loading (the request could not be sent) failed to start.
        let sent = self
            .worker
            .as_mut()
            .expect("a worker runs")
            .send(&Request::EvaluateAny {
                points: points.to_vec(),
            });
        self.ensure_loaded()?;
        let whole = Instant::now();
        let mut began = whole;
        let mut compiled = false;
        let limit = self.timeout.limit();
        let w = self.worker.as_mut().expect("a worker runs");
        // An OpenCL driver may compile at the first launch (PoCL: seconds, more while
        // compiles run beside it): where the worker says when it ended, that launch has a
        // limit of its own, unless the user set one.
        let two_phases = w.tells_first_launch;
        let mut launched = !two_phases;
        let first_limit = match self.timeout.fixed {
            Some(fixed) => fixed,
            None => limit.max(FIRST_LAUNCH_TIMEOUT),
        };
        let waited = if sent {
            // The compile under its own limit, the first launch under its own, then the
            // launches under the evaluation's.
            match w.wait(limit.max(COMPILE_TIMEOUT), &self.cancel, self.deadline) {
                Waited::Reply(Reply::Compiled { index }) if index < points.len() => {
                    *chosen = index;
                    compiled = true;
                    began = Instant::now();
                    if launched {
                        w.wait(limit, &self.cancel, self.deadline)
                    } else {
                        match w.wait(first_limit, &self.cancel, self.deadline) {
                            Waited::Reply(Reply::Launched) => {
                                launched = true;
                                // The limit learned is of the launches after the first.
                                began = Instant::now();
                                w.wait(limit, &self.cancel, self.deadline)
                            }
                            other => other,
                        }
                    }
                }
                other => other,
            }
        } else {
            Waited::Died(w.death())
        };
        match waited {
            Waited::Reply(Reply::Result {
                objective,
                samples,
                failure,
                fatal,
                stats,
            }) => {
                self.evaluations += 1;
                // The worker's counters are its own since it started.
                let waited = stats.compile_wait_s - w.stats.compile_wait_s;
                let waited = if waited >= 0.0 {
                    waited
                } else {
                    stats.compile_wait_s
                };
                self.ahead
                    .observe(Duration::from_secs_f64(waited.max(0.0)), whole.elapsed());
                w.stats = stats;
                match (objective, failure) {
                    (_, Some(reason)) if fatal => {
                        // The device is unusable in this worker: a fresh one may do better,
                        // but the configuration is not to blame; the run stops.
                        self.retire(true);
                        Err(EvalFailure::fatal(reason))
                    }
                    // The worker checked that its device still works after the failure (a
                    // failed launch may lose a CUDA context: `fatal` then), so it goes on
                    // with the compiles it holds.
                    (_, Some(reason)) => Err(EvalFailure::new(reason)),
                    (Some(ms), None) => {
                        self.timeout.learn(began.elapsed());
                        self.last_samples = samples;
                        Ok(ms)
                    }
                    (None, None) => Err(EvalFailure::new("no objective (not a finite time)")),
                }
            }
            Waited::Reply(other) => {
                self.retire(true);
                Err(EvalFailure::new(format!(
                    "the evaluation worker answered {other:?} instead of a result"
                )))
            }
            Waited::Died(why) => {
                self.evaluations += 1;
                self.retire(true);
                if self.cancel.load(Ordering::SeqCst) {
                    return Err(EvalFailure::interrupted("interrupted"));
                }
                Err(EvalFailure::new(format!("crashed: {why}")))
            }
            Waited::TimedOut(t) if sent && !compiled => {
                self.evaluations += 1;
                self.retire(true);
                Err(EvalFailure::new(format!(
                    "timed out: not compiled within {:.1} s",
                    t.as_secs_f64()
                )))
            }
            Waited::TimedOut(t) if !launched => {
                self.evaluations += 1;
                self.retire(true);
                Err(EvalFailure::new(format!(
                    "timed out: its first launch did not finish within {:.1} s (the first \
                     launch's time limit, which includes a driver's compile at that launch; \
                     --eval-timeout)",
                    t.as_secs_f64()
                )))
            }
            Waited::TimedOut(t) => {
                self.evaluations += 1;
                self.retire(true);
                Err(EvalFailure::new(format!(
                    "timed out: no result within {:.1} s of its launches{} (the evaluation \
                     time limit; --eval-timeout)",
                    t.as_secs_f64(),
                    if two_phases { " after the first" } else { "" }
                )))
            }
            Waited::Cancelled => {
                self.retire(true);
                Err(EvalFailure::interrupted("interrupted"))
            }
            Waited::Deadline => {
                self.retire(true);
                Err(EvalFailure::interrupted("the run's time is up"))
            }
        }
    }
}

impl Evaluator for IsolatedEvaluator {
    fn evaluate(&mut self, point: &Point) -> EvalResult {
        self.evaluate_any(std::slice::from_ref(point)).1
    }

    fn evaluate_any(&mut self, points: &[Point]) -> (usize, EvalResult) {
        if points.is_empty() {
            return (0, Err(EvalFailure::new("no configuration to evaluate")));
        }
        let mut chosen = 0;
        let result = match self.evaluate_once(points, &mut chosen) {
            // The worker's device failed (e.g. a CUDA context lost to the previous
            // configuration): once more in a fresh worker. Failing so again, the
            // configuration itself breaks the device: a failed result, the run goes on.
            Err(f) if f.fatal && self.worker_can_start => {
                let point = std::slice::from_ref(&points[chosen]);
                match self.evaluate_once(point, &mut 0) {
                    Err(again) if again.fatal && self.worker_can_start => {
                        Err(EvalFailure::new(format!(
                            "crashed: the device failed in two fresh workers: {}",
                            again.reason
                        )))
                    }
                    other => other,
                }
            }
            other => other,
        };
        self.outstanding.retain(|p| *p != points[chosen]);
        (chosen, result)
    }

    fn prefetch(&mut self, points: &[Point]) {
        // Kept: twice what the loop queues (a point another device took, with `--devices`,
        // is never evaluated here and ages out).
        self.outstanding.extend(points.iter().cloned());
        let keep = 2 * (self.args.compile_threads.max(1) + 1);
        if self.outstanding.len() > keep {
            let extra = self.outstanding.len() - keep;
            self.outstanding.drain(..extra);
        }
        if self.ensure_worker().is_err() {
            return; // evaluate reports it
        }
        if let Some(w) = self.worker.as_mut() {
            let _ = w.send(&Request::Prefetch {
                points: points.to_vec(),
            });
        }
    }

    fn take_samples(&mut self) -> Option<Vec<f64>> {
        self.last_samples.take()
    }

    fn ahead(&self) -> Option<usize> {
        Some(self.ahead.depth())
    }
}

impl Drop for IsolatedEvaluator {
    fn drop(&mut self) {
        self.retire(false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_derived_from_the_default_with_a_floor() {
        let mut t = EvalTimeout::new(None);
        assert_eq!(t.limit(), FIRST_TIMEOUT);
        t.learn(Duration::from_millis(50));
        assert_eq!(t.limit(), TIMEOUT_FLOOR);
        t.learn(Duration::from_secs(30)); // only the first (the default's) counts
        assert_eq!(t.limit(), TIMEOUT_FLOOR);
        let mut slow = EvalTimeout::new(None);
        slow.learn(Duration::from_secs(3));
        assert_eq!(slow.limit(), Duration::from_secs(30));
        let mut fixed = EvalTimeout::new(Some(Duration::from_secs(2)));
        fixed.learn(Duration::from_secs(3));
        assert_eq!(fixed.limit(), Duration::from_secs(2));
    }
}
