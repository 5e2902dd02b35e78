//! [`Tuner::run_parallel`]: one search evaluated on several devices at once (`kw tune
//! --devices`, devices of one model). Each device is a [`Lane`]: an evaluator driven by its
//! own thread. The loop (this thread) owns the strategy, the run's state and the results log:
//! whenever a lane is free it takes the next configuration (asking the strategy for more while
//! others are in flight, so the strategy sees the same "asked before told" pattern as
//! [`Tuner::with_lookahead`]), and every result is recorded, appended to the one log (with the
//! device that measured it) and told to the strategy as it arrives. A configuration is never
//! in flight twice and never evaluated twice: the pending set (in flight and reserved) is
//! checked before a proposal is handed out.
//!
//! Each lane is fed as [`Tuner::run`] feeds its one evaluator: the configurations reserved
//! for it are prefetched (compiled ahead), as many as its evaluator asks for
//! ([`Evaluator::ahead`], at most the lookahead), and it measures whichever of them is ready
//! first ([`Evaluator::evaluate_any`]; the run's initial configurations go alone). The ones it
//! did not take stay its own, held while it measures, so no other lane takes them.
//!
//! A lane whose evaluator reports a fatal failure (its device cannot run a worker any more)
//! is dropped; the configuration it was given goes to another device once (a device that
//! cannot start is not the configuration's fault), and is recorded as failed if its second
//! device fails too. The run goes on while one lane lives ([`TuneError::DevicesFailed`] when
//! none does).

use super::{RunState, StopReason, TuneReport, Tuner, STALL_ROUNDS};
use crate::error::TuneError;
use crate::evaluator::{EvalFailure, EvalResult, Evaluator};
use crate::log::LogRecord;
use crate::strategy::Strategy;
use kw_core::space::Point;
use std::collections::{HashSet, VecDeque};
use std::sync::mpsc;
use std::time::Instant;

/// One device of a parallel run: its name (in the log and messages) and its evaluator.
pub struct Lane<'e> {
    /// The device's name as the log and messages give it (e.g. `0` or `1: NVIDIA H100`).
    pub name: String,
    /// The device's evaluator.
    pub evaluator: &'e mut (dyn Evaluator + Send),
}

/// What one lane did in a parallel run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LaneReport {
    /// The lane's name.
    pub name: String,
    /// Evaluations it recorded.
    pub evaluations: u64,
    /// Why it was dropped, if it was.
    pub dropped: Option<String>,
}

/// What the loop tells its observer.
#[derive(Debug)]
pub enum LaneEvent<'p> {
    /// A result, recorded and logged.
    Result {
        /// The lane's index.
        lane: usize,
        /// The configuration.
        point: &'p Point,
        /// Its result.
        result: &'p EvalResult,
    },
    /// A lane was dropped (its device failed); `retried` names the configuration handed to
    /// another device, if any.
    Dropped {
        /// The lane's index.
        lane: usize,
        /// Why.
        reason: &'p str,
        /// The configuration it held that goes to another device.
        retried: Option<&'p Point>,
    },
}

/// Configurations for a lane: it measures one of `candidates` (the first, or one compiled
/// sooner), and prefetches `prefetch` (the candidates it has not been sent before).
struct Job {
    candidates: Vec<Point>,
    prefetch: Vec<Point>,
}

/// A lane's answer: the configuration it measured (`candidates[chosen]`) and its result.
struct Done {
    lane: usize,
    point: Point,
    result: EvalResult,
    samples: Option<Vec<f64>>,
    eval_s: f64,
}

/// What a lane's thread sends back: its result, or the evaluator's position out of range.
struct Answer {
    lane: usize,
    candidates: Vec<Point>,
    chosen: usize,
    result: EvalResult,
    samples: Option<Vec<f64>>,
    eval_s: f64,
    /// The evaluator's queue depth after this evaluation ([`Evaluator::ahead`]).
    ahead: Option<usize>,
}

/// The configurations handed out or queued: never proposed to a second lane.
struct Pending {
    queue: VecDeque<Point>,
    reserved: Vec<VecDeque<Point>>,
    /// Each lane's candidates while it measures (empty: free).
    in_flight: Vec<Vec<Point>>,
    /// The strategy returned nothing at its last ask (reset when it is told a result).
    exhausted: bool,
    stalls: u32,
}

impl Pending {
    fn contains(&self, p: &Point) -> bool {
        self.queue.contains(p)
            || self.reserved.iter().any(|r| r.contains(p))
            || self.in_flight.iter().flatten().any(|q| q == p)
    }

    /// Configurations handed out or reserved (the queue's not included).
    fn taken(&self) -> usize {
        self.reserved.iter().map(VecDeque::len).sum::<usize>()
            + self.in_flight.iter().map(Vec::len).sum::<usize>()
    }

    fn count(&self) -> usize {
        self.queue.len() + self.taken()
    }

    /// Lanes measuring now.
    fn busy(&self) -> usize {
        self.in_flight.iter().filter(|c| !c.is_empty()).count()
    }

    /// The last configuration reserved for the lane holding the most (for a free lane when
    /// nothing else is left).
    fn steal(&mut self) -> Option<Point> {
        self.reserved
            .iter_mut()
            .max_by_key(|r| r.len())
            .and_then(VecDeque::pop_back)
    }
}

impl Tuner<'_> {
    /// Runs `strategy` on several devices at once, one evaluation in flight per lane, until
    /// the stop condition holds; `observe` sees every result and every dropped lane, and
    /// returns false to stop handing out configurations (the ones in flight still finish).
    /// A resumed log ([`Tuner::resume`]) is told to the strategy first, whole.
    pub fn run_parallel(
        &mut self,
        strategy: &mut dyn Strategy,
        lanes: &mut [Lane<'_>],
        observe: &mut dyn FnMut(LaneEvent<'_>) -> bool,
    ) -> Result<(TuneReport, Vec<LaneReport>), TuneError> {
        if self.space.is_empty() {
            return Err(TuneError::EmptySpace);
        }
        let mut state = RunState::new(self.space, std::mem::take(&mut self.replay));
        state.drain_replay(strategy);
        let mut reports: Vec<LaneReport> = lanes
            .iter()
            .map(|l| LaneReport {
                name: l.name.clone(),
                ..LaneReport::default()
            })
            .collect();
        let initial: Vec<Point> = std::mem::take(&mut self.initial)
            .into_iter()
            .filter(|p| self.space.contains(p))
            .collect();
        let mut pending = Pending {
            queue: initial.iter().cloned().collect(),
            reserved: vec![VecDeque::new(); lanes.len()],
            in_flight: vec![Vec::new(); lanes.len()],
            exhausted: false,
            stalls: 0,
        };
        // Each lane's queue depth: its evaluator's wish, at most the lookahead.
        let mut depth = vec![self.lookahead.max(1); lanes.len()];
        std::thread::scope(|scope| {
            let (done_tx, done_rx) = mpsc::channel::<Answer>();
            let mut jobs: Vec<Option<mpsc::Sender<Job>>> = Vec::new();
            for (i, lane) in lanes.iter_mut().enumerate() {
                let (tx, rx) = mpsc::channel::<Job>();
                jobs.push(Some(tx));
                let done = done_tx.clone();
                let evaluator = &mut *lane.evaluator;
                scope.spawn(move || {
                    for job in rx {
                        if !job.prefetch.is_empty() {
                            evaluator.prefetch(&job.prefetch);
                        }
                        let started = Instant::now();
                        let (chosen, result) = evaluator.evaluate_any(&job.candidates);
                        let samples = evaluator.take_samples();
                        let finished = Answer {
                            lane: i,
                            candidates: job.candidates,
                            chosen,
                            result,
                            samples,
                            eval_s: started.elapsed().as_secs_f64(),
                            ahead: evaluator.ahead(),
                        };
                        if done.send(finished).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(done_tx);
            let mut stopped: Option<StopReason> = None;
            let mut retried: HashSet<u128> = HashSet::new();
            loop {
                // Hand out configurations to free lanes.
                while stopped.is_none() {
                    if let Some(r) = self.stop_now(&mut state) {
                        stopped = Some(r);
                        break;
                    }
                    // A free lane, one with configurations reserved first.
                    let free = |i: &usize| jobs[*i].is_some() && pending.in_flight[*i].is_empty();
                    let Some(lane) = (0..jobs.len())
                        .filter(free)
                        .max_by_key(|&i| (!pending.reserved[i].is_empty(), usize::MAX - i))
                    else {
                        break;
                    };
                    // A configuration reserved for it, else a new one if the stop condition
                    // leaves room.
                    let point = match pending.reserved[lane].pop_front() {
                        Some(p) => Some(p),
                        None if self.room(&state, &pending) == 0 => match pending.steal() {
                            Some(p) => Some(p),
                            None => break,
                        },
                        None => self.next_point(&mut state, strategy, &mut pending, true)?,
                    };
                    let Some(point) = point else {
                        if pending.busy() == 0 {
                            stopped = Some(if pending.stalls >= STALL_ROUNDS {
                                StopReason::StrategyStalled
                            } else if state.progress.evaluations as u128 >= self.space.len() {
                                StopReason::SpaceExhausted
                            } else {
                                StopReason::StrategyExhausted
                            });
                        }
                        break;
                    };
                    let first = initial.contains(&point);
                    pending.in_flight[lane] = vec![point];
                    let reserve = depth[lane] - 1;
                    let mut prefetch = Vec::new();
                    while pending.reserved[lane].len() < reserve && self.room(&state, &pending) > 0
                    {
                        match self.next_point(&mut state, strategy, &mut pending, false)? {
                            Some(p) => {
                                prefetch.push(p.clone());
                                pending.reserved[lane].push_back(p);
                            }
                            None => break,
                        }
                    }
                    // It may measure a reserved configuration first (one compiled sooner),
                    // unless the first is an initial one (the captured and default
                    // configurations: their results are the run's references). While other
                    // lanes are idle, it holds only its share of the reservation: they may
                    // take the rest (`steal`) while the strategy waits for results.
                    if !first {
                        let idle = (0..jobs.len())
                            .filter(|&i| {
                                i != lane && jobs[i].is_some() && pending.in_flight[i].is_empty()
                            })
                            .count();
                        let share = (pending.reserved[lane].len() / (idle + 1)).min(reserve);
                        // An initial configuration goes alone (it may be reserved here after
                        // a lane failed with it queued).
                        let later = pending.reserved[lane]
                            .iter()
                            .take(share)
                            .take_while(|p| !initial.contains(p))
                            .count();
                        let held: Vec<Point> = pending.reserved[lane].drain(..later).collect();
                        pending.in_flight[lane].extend(held);
                    }
                    let candidates = pending.in_flight[lane].clone();
                    let sent = jobs[lane].as_ref().is_some_and(|tx| {
                        tx.send(Job {
                            candidates,
                            prefetch,
                        })
                        .is_ok()
                    });
                    if !sent {
                        // The lane's thread ended (it cannot, short of a panic): drop it.
                        jobs[lane] = None;
                        for p in std::mem::take(&mut pending.in_flight[lane])
                            .into_iter()
                            .rev()
                        {
                            pending.queue.push_front(p);
                        }
                    }
                }
                if pending.busy() == 0 {
                    break;
                }
                let Ok(answer) = done_rx.recv() else {
                    break;
                };
                let lane = answer.lane;
                pending.in_flight[lane].clear();
                if let Some(a) = answer.ahead {
                    depth[lane] = a.clamp(1, self.lookahead.max(1));
                }
                let done = self.take_answer(answer, &reports[lane].name, &mut pending)?;
                let index = self.space.index_of(&done.point);
                match done.result {
                    Err(f) if f.interrupted => {
                        stopped.get_or_insert(if self.cancelled() {
                            StopReason::Cancelled
                        } else {
                            StopReason::Condition
                        });
                    }
                    Err(f) if f.fatal => {
                        jobs[lane] = None;
                        reports[lane].dropped = Some(f.reason.clone());
                        let back: Vec<Point> = pending.reserved[lane].drain(..).collect();
                        for p in back.into_iter().rev() {
                            pending.queue.push_front(p);
                        }
                        let others = jobs.iter().any(Option::is_some);
                        let again = others && index.is_some_and(|i| retried.insert(i));
                        if again {
                            pending.queue.push_front(done.point.clone());
                        }
                        let event = LaneEvent::Dropped {
                            lane,
                            reason: &f.reason,
                            retried: again.then_some(&done.point),
                        };
                        if !observe(event) {
                            stopped.get_or_insert(StopReason::Condition);
                        }
                        if !others {
                            let reasons = reports
                                .iter()
                                .filter_map(|r| {
                                    r.dropped.as_ref().map(|d| format!("{}: {d}", r.name))
                                })
                                .collect::<Vec<_>>()
                                .join("; ");
                            return Err(TuneError::DevicesFailed { reasons });
                        }
                        if !again {
                            // Its second device failed with it too: the configuration's.
                            let failure = EvalFailure::new(format!(
                                "crashed: two devices failed with it in flight ({})",
                                f.reason
                            ));
                            let keep = self.record(
                                &mut state,
                                strategy,
                                &mut reports,
                                observe,
                                done_of(lane, done.point, Err(failure), None, done.eval_s),
                            )?;
                            pending.exhausted = false;
                            if !keep {
                                stopped.get_or_insert(StopReason::Condition);
                            }
                        }
                    }
                    result => {
                        let finished = done_of(lane, done.point, result, done.samples, done.eval_s);
                        let keep =
                            self.record(&mut state, strategy, &mut reports, observe, finished)?;
                        pending.exhausted = false;
                        pending.stalls = 0;
                        if !keep {
                            stopped.get_or_insert(StopReason::Condition);
                        }
                    }
                }
            }
            drop(jobs); // the lanes' threads end
            state.tick();
            let reason = stopped.unwrap_or(StopReason::StrategyExhausted);
            Ok((
                TuneReport {
                    best: state.best,
                    history: state.history,
                    replayed: state.replayed,
                    revisits: state.revisits,
                    progress: state.progress,
                    reason,
                },
                reports,
            ))
        })
    }

    /// The configuration a lane measured; the candidates it did not take go back to its
    /// reservation, in order, ahead of what it holds.
    fn take_answer(
        &self,
        answer: Answer,
        device: &str,
        pending: &mut Pending,
    ) -> Result<Done, TuneError> {
        let Answer {
            lane,
            mut candidates,
            chosen,
            result,
            samples,
            eval_s,
            ..
        } = answer;
        if chosen >= candidates.len() {
            return Err(TuneError::Fatal {
                config: self.space.kt_key(&candidates[0]),
                reason: format!(
                    "the evaluator of device {device} chose position {chosen} of {} configurations",
                    candidates.len()
                ),
            });
        }
        let point = candidates.remove(chosen);
        for p in candidates.into_iter().rev() {
            pending.reserved[lane].push_front(p);
        }
        Ok(done_of(lane, point, result, samples, eval_s))
    }

    /// Why no more configuration is handed out, if none is.
    fn stop_now(&self, state: &mut RunState<'_>) -> Option<StopReason> {
        state.tick();
        if state.progress.evaluations as u128 >= self.space.len() {
            Some(StopReason::SpaceExhausted)
        } else if self.stop.reached(&state.progress) {
            Some(StopReason::Condition)
        } else if self.cancelled() {
            Some(StopReason::Cancelled)
        } else {
            None
        }
    }

    /// How many more configurations may be handed out now: the evaluations the stop
    /// condition and the space leave, less those pending.
    fn room(&self, state: &RunState<'_>, pending: &Pending) -> usize {
        let left = self.space.len() - state.progress.evaluations as u128;
        let allowed = self
            .stop
            .remaining_evaluations(&state.progress)
            .map_or(left, |r| (r as u128).min(left));
        let taken = pending.taken() as u128;
        allowed.saturating_sub(taken).min(usize::MAX as u128) as usize
    }

    /// The next configuration nobody holds: from the queue, else from the strategy (asked
    /// for as many as are pending plus one, so that proposals it repeats because their
    /// results are not told yet leave room for a new one); with `steal`, when the strategy
    /// has nothing new, one reserved for another lane. `None`: nothing new now.
    fn next_point(
        &self,
        state: &mut RunState<'_>,
        strategy: &mut dyn Strategy,
        pending: &mut Pending,
        steal: bool,
    ) -> Result<Option<Point>, TuneError> {
        loop {
            while let Some(p) = pending.queue.pop_front() {
                let Some(index) = self.space.index_of(&p) else {
                    continue;
                };
                if state.answer_cached(strategy, &p, index) {
                    continue;
                }
                if !pending.contains(&p) {
                    return Ok(Some(p));
                }
            }
            if pending.exhausted || pending.stalls >= STALL_ROUNDS {
                return Ok(steal.then(|| pending.steal()).flatten());
            }
            let proposals = strategy.ask(self.space, pending.count() + 1);
            if proposals.is_empty() {
                pending.exhausted = true;
                return Ok(steal.then(|| pending.steal()).flatten());
            }
            let mut fresh = 0;
            for point in proposals {
                if state.check_proposal(strategy, &point)?.1 {
                    continue;
                }
                if !pending.contains(&point) {
                    pending.queue.push_back(point);
                    fresh += 1;
                }
            }
            if fresh == 0 {
                if let Some(p) = steal.then(|| pending.steal()).flatten() {
                    return Ok(Some(p));
                }
                pending.stalls += 1;
                if pending.busy() > 0 {
                    return Ok(None); // wait for a result, then ask again
                }
            }
        }
    }

    /// Records one finished evaluation: the run's state, the log (with the lane's device),
    /// the strategy and the observer. Returns the observer's answer.
    fn record(
        &mut self,
        state: &mut RunState<'_>,
        strategy: &mut dyn Strategy,
        reports: &mut [LaneReport],
        observe: &mut dyn FnMut(LaneEvent<'_>) -> bool,
        done: Done,
    ) -> Result<bool, TuneError> {
        let result = match done.result {
            Ok(v) if !v.is_finite() => Err(EvalFailure::new(format!("non-finite objective {v}"))),
            other => other,
        };
        state.record(done.point.clone(), result, false);
        state.tick();
        reports[done.lane].evaluations += 1;
        let result = state.last_result();
        if let Some(log) = &mut self.log {
            log.append(&LogRecord {
                eval: state.progress.evaluations,
                key: self.space.kt_key(&done.point),
                config: self.space.config(&done.point),
                objective: result.as_ref().ok().copied(),
                failure: result.as_ref().err().map(|f| f.reason.clone()),
                elapsed_s: state.progress.elapsed.as_secs_f64(),
                eval_s: done.eval_s,
                point: done.point.clone(),
                samples: done.samples,
                device: Some(reports[done.lane].name.clone()),
            })?;
        }
        strategy.tell(self.space, &done.point, &result);
        Ok(observe(LaneEvent::Result {
            lane: done.lane,
            point: &done.point,
            result: &result,
        }))
    }
}

fn done_of(
    lane: usize,
    point: Point,
    result: EvalResult,
    samples: Option<Vec<f64>>,
    eval_s: f64,
) -> Done {
    Done {
        lane,
        point,
        result,
        samples,
        eval_s,
    }
}
