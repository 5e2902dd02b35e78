//! [`Evaluator`]: turns a configuration into an objective value (lower is better) or a failure.

use kw_core::space::Point;
use std::fmt;

/// Why a configuration has no objective value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalFailure {
    /// The reason (e.g. `CompilationFailedConfig`, `wrong result`, `not in cache`).
    pub reason: String,
    /// A fatal failure stops the run instead of being recorded as the configuration's result
    /// (e.g. the device was lost); it says nothing about the configuration.
    pub fatal: bool,
    /// The evaluation was abandoned (Ctrl-C, the run's time is up): no result, nothing is
    /// logged, and the run stops.
    pub interrupted: bool,
}

impl EvalFailure {
    /// The configuration fails (a result: the strategy learns from it).
    pub fn new(reason: impl Into<String>) -> EvalFailure {
        EvalFailure {
            reason: reason.into(),
            fatal: false,
            interrupted: false,
        }
    }

    /// The evaluation could not be done at all; the run stops with an error.
    pub fn fatal(reason: impl Into<String>) -> EvalFailure {
        EvalFailure {
            reason: reason.into(),
            fatal: true,
            interrupted: false,
        }
    }

    /// The evaluation was abandoned before it had a result (Ctrl-C, the run's time is up, the
    /// evaluator gave up): the run stops without recording this configuration.
    pub fn interrupted(reason: impl Into<String>) -> EvalFailure {
        EvalFailure {
            reason: reason.into(),
            fatal: false,
            interrupted: true,
        }
    }
}

impl fmt::Display for EvalFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

/// The result of evaluating one configuration: its objective value or why it failed.
pub type EvalResult = Result<f64, EvalFailure>;

/// Evaluates configurations of one tuning space. It may be slow (compiling and running a
/// kernel) and may fail; the tuning loop calls it at most once per configuration.
pub trait Evaluator {
    /// Evaluates a valid point of the space: the objective value (lower is better, finite)
    /// or the failure.
    fn evaluate(&mut self, point: &Point) -> EvalResult;

    /// Evaluates one of `points` (the loop's queue, in order: valid points, none evaluated
    /// yet, at least one): the one that can start first, e.g. the first whose compile has
    /// finished, so that one slow compile does not hold up the others. Returns its position
    /// in `points` and its result. By default the first.
    fn evaluate_any(&mut self, points: &[Point]) -> (usize, EvalResult) {
        (0, self.evaluate(&points[0]))
    }

    /// Points the loop will evaluate soon, in order (never points already evaluated). An
    /// evaluator may start preparing them (e.g. compile on other threads) while it evaluates
    /// the current one; it must still be correct if some of them are never evaluated.
    fn prefetch(&mut self, _points: &[Point]) {}

    /// How many configurations the loop should keep queued (and prefetched) while this
    /// evaluator measures one: enough that the next compile is done when the device is free,
    /// and no more, since a proposal made further ahead is made knowing fewer results.
    /// `None` (the default): the loop's own lookahead ([`crate::Tuner::with_lookahead`]),
    /// which also caps this.
    fn ahead(&self) -> Option<usize> {
        None
    }

    /// The raw measurements behind the last [`Evaluator::evaluate`]'s objective (e.g. every
    /// timed sample in milliseconds), taken once; recorded in the results log.
    fn take_samples(&mut self) -> Option<Vec<f64>> {
        None
    }
}

impl<F: FnMut(&Point) -> EvalResult> Evaluator for F {
    fn evaluate(&mut self, point: &Point) -> EvalResult {
        self(point)
    }
}
