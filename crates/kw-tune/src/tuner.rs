//! [`Tuner`]: the tuning loop. It asks the strategy for points, evaluates each distinct
//! configuration at most once (revisits are answered from its cache and cost nothing), tells
//! the strategy every result, logs every evaluation and stops when the [`Stop`] condition holds.

mod parallel;
pub use parallel::{Lane, LaneEvent, LaneReport};

use crate::error::TuneError;
use crate::evaluator::{EvalFailure, EvalResult, Evaluator};
use crate::log::{LogRecord, ResultsLog};
use crate::stop::{Progress, Stop};
use crate::strategy::Strategy;
use kw_core::{space::Point, space::TuningSpace};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Rounds in a row in which a strategy proposes only visited points before the loop gives up.
const STALL_ROUNDS: u32 = 10_000;

/// Why a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The stop condition was reached.
    Condition,
    /// Every valid configuration was evaluated.
    SpaceExhausted,
    /// The strategy proposed nothing more.
    StrategyExhausted,
    /// The strategy kept proposing only visited configurations.
    StrategyStalled,
    /// The cancellation flag was set (e.g. Ctrl-C); the run stopped after the evaluation in
    /// progress, and every finished evaluation is logged.
    Cancelled,
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StopReason::Condition => "its stop condition was reached",
            StopReason::SpaceExhausted => "every valid configuration was evaluated",
            StopReason::StrategyExhausted => "the strategy proposed nothing more",
            StopReason::StrategyStalled => {
                "the strategy proposed only configurations already evaluated"
            }
            StopReason::Cancelled => "cancelled",
        })
    }
}

/// One evaluated configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// The configuration.
    pub point: Point,
    /// Its result.
    pub result: EvalResult,
}

/// The outcome of a run.
#[derive(Clone, Debug)]
pub struct TuneReport {
    /// The best configuration and its objective value, if any succeeded.
    pub best: Option<(Point, f64)>,
    /// The evaluations in order (replayed ones from a resumed log included).
    pub history: Vec<Evaluation>,
    /// Of those, how many came from a resumed log.
    pub replayed: u64,
    /// Proposals answered from the cache (not evaluated, not counted).
    pub revisits: u64,
    /// The final progress.
    pub progress: Progress,
    /// Why the run ended.
    pub reason: StopReason,
}

/// The tuning loop over one space.
#[derive(Debug)]
pub struct Tuner<'a> {
    space: &'a TuningSpace,
    stop: Stop,
    log: Option<ResultsLog>,
    replay: Vec<LogRecord>,
    initial: Vec<Point>,
    lookahead: usize,
    cancel: Option<Arc<AtomicBool>>,
}

impl<'a> Tuner<'a> {
    /// A loop over `space` that ends when `stop` holds (or the space is exhausted).
    pub fn new(space: &'a TuningSpace, stop: Stop) -> Tuner<'a> {
        Tuner {
            space,
            stop,
            log: None,
            replay: Vec::new(),
            initial: Vec::new(),
            lookahead: 1,
            cancel: None,
        }
    }

    /// Appends every evaluation to `log`.
    pub fn with_log(mut self, log: ResultsLog) -> Tuner<'a> {
        self.log = Some(log);
        self
    }

    /// Evaluates these points first, before asking the strategy (e.g. the default
    /// configuration, so that the speed-up over it is known). Invalid points are skipped.
    pub fn with_initial(mut self, points: Vec<Point>) -> Tuner<'a> {
        self.initial = points;
        self
    }

    /// Keeps up to `k` proposals queued: while one is evaluated, the next ones are known and
    /// handed to [`Evaluator::prefetch`] (e.g. to compile them on other threads). The strategy
    /// is asked again while fewer than `k` are queued, before it is told the pending results
    /// (its contract allows this); `1` (the default) asks only when the queue is empty. The
    /// same `k` with the same seed makes the same run, so resume with the same `k`. An
    /// evaluator may ask for less ([`Evaluator::ahead`]; the replay evaluators ask for what
    /// keeps the device busy), which makes the run depend on its timings.
    pub fn with_lookahead(mut self, k: usize) -> Tuner<'a> {
        self.lookahead = k.max(1);
        self
    }

    /// Stops cleanly after the evaluation in progress once `flag` is set
    /// ([`StopReason::Cancelled`]).
    pub fn with_cancel(mut self, flag: Arc<AtomicBool>) -> Tuner<'a> {
        self.cancel = Some(flag);
        self
    }

    /// Continues an interrupted run: `records` (from [`ResultsLog::resume`]) are replayed to
    /// the strategy without evaluating them again, then the run goes on, appending to `log`.
    ///
    /// While the strategy proposes logged configurations (as it does with the same seed) they
    /// are answered from the log in the strategy's own order, so the run continues exactly as
    /// the interrupted one would have (where the evaluator neither shortens the lookahead nor
    /// takes queued points out of order, both of which depend on timings). If it proposes
    /// anything else, all remaining logged results are told to it first; no configuration is
    /// evaluated twice either way.
    pub fn resume(mut self, log: ResultsLog, records: Vec<LogRecord>) -> Tuner<'a> {
        self.log = Some(log);
        self.replay = records;
        self
    }

    fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|f| f.load(Ordering::SeqCst))
    }

    /// How many more evaluations the run can take now (at least 1).
    fn hint(&self, progress: &Progress) -> usize {
        let left = self.space.len() - progress.evaluations as u128;
        self.stop
            .remaining_evaluations(progress)
            .map_or(left, |r| (r as u128).min(left))
            .clamp(1, usize::MAX as u128) as usize
    }

    /// Runs `strategy` with `evaluator` until the stop condition holds.
    pub fn run(
        &mut self,
        strategy: &mut dyn Strategy,
        evaluator: &mut dyn Evaluator,
    ) -> Result<TuneReport, TuneError> {
        if self.space.is_empty() {
            return Err(TuneError::EmptySpace);
        }
        let mut state = RunState::new(self.space, std::mem::take(&mut self.replay));
        let mut queue: VecDeque<Point> = std::mem::take(&mut self.initial)
            .into_iter()
            .filter(|p| self.space.contains(p))
            .collect();
        // The initial points compile first, ahead of the strategy's.
        let initial: Vec<Point> = queue
            .iter()
            .filter(|p| {
                self.space
                    .index_of(p)
                    .is_some_and(|i| !state.replay.contains_key(&i))
            })
            .cloned()
            .collect();
        if !initial.is_empty() {
            evaluator.prefetch(&initial);
        }
        let mut exhausted = false;
        let mut stalls = 0u32;
        let reason = loop {
            if state.progress.evaluations as u128 >= self.space.len() {
                break StopReason::SpaceExhausted;
            }
            state.tick();
            if self.stop.reached(&state.progress) {
                break StopReason::Condition;
            }
            if self.cancelled() {
                break StopReason::Cancelled;
            }
            // Fill the queue: ask when it is empty, or ahead while it is short (as far ahead
            // as the evaluator needs, at most the lookahead).
            let hint = self.hint(&state.progress);
            let depth = evaluator
                .ahead()
                .map_or(self.lookahead, |a| a.clamp(1, self.lookahead));
            if !exhausted && (queue.is_empty() || (queue.len() < depth && queue.len() < hint)) {
                let proposals = strategy.ask(self.space, hint.saturating_sub(queue.len()).max(1));
                if proposals.is_empty() {
                    if queue.is_empty() {
                        if state.replay_pending() {
                            state.drain_replay(strategy);
                            continue;
                        }
                        break StopReason::StrategyExhausted;
                    }
                    exhausted = true;
                }
                let before = queue.len();
                let mut fresh = Vec::new();
                for point in proposals {
                    let (index, revisit) = state.check_proposal(strategy, &point)?;
                    if revisit {
                        continue;
                    } else if !queue.contains(&point) {
                        if !state.replay.contains_key(&index) {
                            fresh.push(point.clone());
                        }
                        queue.push_back(point);
                    }
                }
                if !fresh.is_empty() {
                    evaluator.prefetch(&fresh);
                }
                if queue.is_empty() {
                    stalls += 1;
                    if stalls >= STALL_ROUNDS {
                        break StopReason::StrategyStalled;
                    }
                    continue;
                }
                if queue.len() > before && queue.len() < depth.min(hint) && !exhausted {
                    continue; // keep filling before evaluating
                }
            }
            let Some(point) = queue.pop_front() else {
                // A strategy that proposed nothing while proposals were queued may have been
                // waiting for their results (a prior's climb asked ahead): ask it again now
                // that they are in (it spun here for ever, the queue empty, never asking).
                exhausted = false;
                continue;
            };
            let Some(index) = self.space.index_of(&point) else {
                continue;
            };
            if state.answer_cached(strategy, &point, index) {
                // Evaluated meanwhile (an initial point the strategy proposed too).
                continue;
            }
            if let Some(record) = state.take_replayed(index) {
                state.record(point.clone(), record.result(), true);
                let result = state.last_result();
                strategy.tell(self.space, &point, &result);
                stalls = 0;
                continue;
            }
            if state.replay_pending() {
                // The strategy left the logged path: tell it everything logged first.
                queue.push_front(point);
                state.drain_replay(strategy);
                stalls = 0;
                continue;
            }
            // The evaluator may take a later queued point first (one already compiled), of
            // those it was asked to prepare; the initial points go first, in order (the
            // captured and default configurations: their results are the run's references).
            let later = if initial.contains(&point) {
                0
            } else {
                depth.saturating_sub(1)
            };
            let mut candidates = vec![point];
            candidates.extend(
                queue
                    .iter()
                    .take(later)
                    .filter(|p| {
                        self.space
                            .index_of(p)
                            .is_some_and(|i| !state.cache.contains_key(&i))
                    })
                    .cloned(),
            );
            let Some(chosen) = self.evaluate_one(&mut state, strategy, evaluator, &candidates)?
            else {
                // Abandoned: Ctrl-C, the run's time is up, or the evaluator gave up.
                break if self.cancelled() {
                    StopReason::Cancelled
                } else {
                    StopReason::Condition
                };
            };
            if chosen > 0 {
                // The front point waits for its turn again.
                queue.retain(|p| *p != candidates[chosen]);
                queue.push_front(candidates.swap_remove(0));
            }
            exhausted = false;
            stalls = 0;
        };
        state.tick();
        Ok(TuneReport {
            best: state.best,
            history: state.history,
            replayed: state.replayed,
            revisits: state.revisits,
            progress: state.progress,
            reason,
        })
    }

    /// Evaluates one of `candidates` (new points, the first the queue's front;
    /// [`Evaluator::evaluate_any`]), records and logs it, and tells the strategy. Returns the
    /// position of the one evaluated, or `None` when the evaluation was interrupted
    /// ([`EvalFailure::interrupted`]): nothing is recorded.
    fn evaluate_one(
        &mut self,
        state: &mut RunState<'_>,
        strategy: &mut dyn Strategy,
        evaluator: &mut dyn Evaluator,
        candidates: &[Point],
    ) -> Result<Option<usize>, TuneError> {
        let started = Instant::now();
        let (chosen, result) = evaluator.evaluate_any(candidates);
        let Some(point) = candidates.get(chosen).cloned() else {
            return Err(TuneError::Fatal {
                config: self.space.kt_key(&candidates[0]),
                reason: format!(
                    "the evaluator chose position {chosen} of {} configurations",
                    candidates.len()
                ),
            });
        };
        let result = match result {
            Err(f) if f.interrupted => return Ok(None),
            Ok(v) if v.is_finite() => Ok(v),
            Ok(v) => Err(EvalFailure::new(format!("non-finite objective {v}"))),
            Err(f) if f.fatal => {
                return Err(TuneError::Fatal {
                    config: self.space.kt_key(&point),
                    reason: f.reason,
                })
            }
            Err(f) => Err(f),
        };
        let samples = evaluator.take_samples();
        let eval_s = started.elapsed().as_secs_f64();
        state.record(point.clone(), result, false);
        state.tick();
        if let Some(log) = &mut self.log {
            let result = state.last_result();
            log.append(&LogRecord {
                eval: state.progress.evaluations,
                key: self.space.kt_key(&point),
                config: self.space.config(&point),
                objective: result.as_ref().ok().copied(),
                failure: result.as_ref().err().map(|f| f.reason.clone()),
                elapsed_s: state.progress.elapsed.as_secs_f64(),
                eval_s,
                point: point.clone(),
                samples,
                device: None,
            })?;
        }
        let result = state.last_result();
        strategy.tell(self.space, &point, &result);
        Ok(Some(chosen))
    }
}

/// The mutable state of one run.
struct RunState<'s> {
    space: &'s TuningSpace,
    cache: HashMap<u128, EvalResult>,
    history: Vec<Evaluation>,
    best: Option<(Point, f64)>,
    progress: Progress,
    replay: HashMap<u128, LogRecord>,
    replay_order: VecDeque<u128>,
    replayed: u64,
    revisits: u64,
    started: Instant,
    offset: Duration,
    improved_at: Duration,
    improved_eval: u64,
}

impl<'s> RunState<'s> {
    fn new(space: &'s TuningSpace, records: Vec<LogRecord>) -> RunState<'s> {
        let offset = records
            .iter()
            .map(|r| r.elapsed_s)
            .fold(0.0f64, f64::max)
            .max(0.0);
        let mut replay = HashMap::new();
        let mut replay_order = VecDeque::new();
        for r in records {
            // Records of points that are no longer valid (changed restrictions) are skipped.
            if let Some(i) = space.index_of(&r.point) {
                if replay.insert(i, r).is_none() {
                    replay_order.push_back(i);
                }
            }
        }
        RunState {
            space,
            cache: HashMap::new(),
            history: Vec::new(),
            best: None,
            progress: Progress {
                space_len: space.len(),
                ..Progress::default()
            },
            replay,
            replay_order,
            replayed: 0,
            revisits: 0,
            started: Instant::now(),
            offset: kw_core::duration::saturating_secs(offset),
            improved_at: Duration::ZERO,
            improved_eval: 0,
        }
    }

    /// A proposal's index (an invalid proposal is the strategy's bug:
    /// [`TuneError::InvalidProposal`]), and whether it was answered from the cache: a revisit,
    /// counted and told again.
    fn check_proposal(
        &mut self,
        strategy: &mut dyn Strategy,
        point: &Point,
    ) -> Result<(u128, bool), TuneError> {
        let index = self
            .space
            .index_of(point)
            .ok_or_else(|| TuneError::InvalidProposal {
                strategy: strategy.name().to_string(),
                point: format!("{point:?}"),
            })?;
        Ok((index, self.answer_cached(strategy, point, index)))
    }

    /// Answers `point` (at `index`) from the cache if it was evaluated: a revisit, counted
    /// and told to the strategy again. False when it was not evaluated.
    fn answer_cached(&mut self, strategy: &mut dyn Strategy, point: &Point, index: u128) -> bool {
        match self.cache.get(&index) {
            Some(result) => {
                self.revisits += 1;
                strategy.tell(self.space, point, result);
                true
            }
            None => false,
        }
    }

    fn replay_pending(&self) -> bool {
        !self.replay.is_empty()
    }

    fn take_replayed(&mut self, index: u128) -> Option<LogRecord> {
        self.replay.remove(&index)
    }

    /// Tells the strategy every logged result it has not been told yet, in log order.
    fn drain_replay(&mut self, strategy: &mut dyn Strategy) {
        while let Some(i) = self.replay_order.pop_front() {
            if let Some(record) = self.replay.remove(&i) {
                let point = record.point.clone();
                self.record(point.clone(), record.result(), true);
                let result = self.last_result();
                strategy.tell(self.space, &point, &result);
            }
        }
    }

    fn tick(&mut self) {
        let now = self.offset + self.started.elapsed();
        self.progress.elapsed = now;
        self.progress.time_since_improvement = now.saturating_sub(self.improved_at);
        self.progress.evaluations_since_improvement =
            self.progress.evaluations - self.improved_eval;
    }

    fn record(&mut self, point: Point, result: EvalResult, replayed: bool) {
        let Some(index) = self.space.index_of(&point) else {
            return;
        };
        self.progress.evaluations += 1;
        if replayed {
            self.replayed += 1;
        }
        match &result {
            Ok(v) => {
                if self.best.as_ref().is_none_or(|(_, b)| v < b) {
                    self.best = Some((point.clone(), *v));
                    self.progress.best = Some(*v);
                    self.improved_eval = self.progress.evaluations;
                    self.improved_at = self.offset + self.started.elapsed();
                }
            }
            Err(_) => self.progress.failures += 1,
        }
        self.cache.insert(index, result.clone());
        self.history.push(Evaluation { point, result });
        self.tick();
    }

    fn last_result(&self) -> EvalResult {
        self.history
            .last()
            .map(|e| e.result.clone())
            .unwrap_or_else(|| Err(EvalFailure::new("no evaluation")))
    }
}
