//! `--max-share` and `--max-device-time`: a tuning run that shares the device with a running
//! application (online tuning, `KW_TUNE=online`) takes at most a share of the device's time
//! and at most a budget of evaluation time.
//!
//! The rule: an evaluation that took `d` is followed by a pause of `d * (1 - share) / share`
//! before anything else runs, so in every window made of whole evaluations and their pauses
//! (the run's whole time among them), evaluation time is at most `share` of the wall time; in
//! a window of any length `w`, at most `share * w` plus one evaluation. Evaluation time counts
//! the whole evaluation (compile wait, copies, verification, timed runs): an upper bound of
//! the device time it used. The pause is part of the evaluation's time in the results log.

use kw_core::space::Point;
use kw_tune::{EvalFailure, EvalResult, Evaluator};
use std::time::{Duration, Instant};

/// Throttles an evaluator to a share of the wall time and a budget of evaluation time.
pub(super) struct ShareThrottle<'a> {
    pub(super) inner: &'a mut dyn Evaluator,
    /// The largest share of wall time spent evaluating (in (0, 1]).
    share: f64,
    /// The evaluation time after which no evaluation starts.
    budget: Option<Duration>,
    /// Evaluation time so far.
    busy: Duration,
    first_start: Option<Instant>,
    last_end: Option<Instant>,
    /// The last evaluation's time.
    last: Duration,
}

impl<'a> ShareThrottle<'a> {
    pub(super) fn new(
        inner: &'a mut dyn Evaluator,
        share: f64,
        budget: Option<Duration>,
    ) -> ShareThrottle<'a> {
        ShareThrottle {
            inner,
            share,
            budget,
            busy: Duration::ZERO,
            first_start: None,
            last_end: None,
            last: Duration::ZERO,
        }
    }

    /// Evaluation time, and the wall time from the first evaluation's start to the end of the
    /// last one's pause.
    pub(super) fn usage(&self) -> (Duration, Duration) {
        let wall = match (self.first_start, self.last_end) {
            (Some(a), Some(b)) => b.saturating_duration_since(a),
            _ => Duration::ZERO,
        };
        (self.busy, wall)
    }
}

impl Evaluator for ShareThrottle<'_> {
    fn evaluate(&mut self, point: &Point) -> EvalResult {
        self.evaluate_any(std::slice::from_ref(point)).1
    }

    fn evaluate_any(&mut self, points: &[Point]) -> (usize, EvalResult) {
        if self.budget.is_some_and(|b| self.busy >= b) {
            return (
                0,
                Err(EvalFailure::interrupted(
                    "the evaluation-time budget (--max-device-time) is spent",
                )),
            );
        }
        let started = Instant::now();
        self.first_start.get_or_insert(started);
        let (chosen, result) = self.inner.evaluate_any(points);
        let took = started.elapsed();
        self.busy += took;
        self.last = took;
        // Until `took / share` after the start.
        let until = started + took.div_f64(self.share);
        let now = Instant::now();
        let interrupted = matches!(&result, Err(f) if f.interrupted);
        if until > now && !interrupted {
            std::thread::sleep(until - now);
        }
        self.last_end = Some(Instant::now());
        (chosen, result)
    }

    fn prefetch(&mut self, points: &[Point]) {
        self.inner.prefetch(points)
    }

    fn take_samples(&mut self) -> Option<Vec<f64>> {
        self.inner.take_samples()
    }

    fn ahead(&self) -> Option<usize> {
        self.inner.ahead()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_throttle_pauses_and_stops_at_the_budget() {
        let mut inner = |_: &Point| -> EvalResult {
            std::thread::sleep(Duration::from_millis(20));
            Ok(1.0)
        };
        let budget = Duration::from_millis(50);
        let mut t = ShareThrottle::new(&mut inner, 0.5, Some(budget));
        let p: Point = Vec::new();
        let began = Instant::now();
        let mut done = 0;
        while t.evaluate(&p).is_ok() {
            done += 1;
        }
        let (busy, wall) = t.usage();
        let last = t.last;
        // Every evaluation takes at least 20 ms: the budget stops the run once spent, never
        // before.
        assert!(
            done >= 1 && busy >= budget && busy - last < budget,
            "{busy:?} {last:?}"
        );
        // Each evaluation is followed by its pause: wall >= busy / share.
        assert!(
            wall + Duration::from_micros(1) >= busy.mul_f64(2.0),
            "{wall:?} {busy:?}"
        );
        assert!(began.elapsed() >= wall);
    }
}
