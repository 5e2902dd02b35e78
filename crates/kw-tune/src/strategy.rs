//! [`Strategy`]: the ask/tell interface of search strategies.

use crate::evaluator::EvalResult;
use kw_core::{space::Point, space::TuningSpace};

/// A prior's score of configurations: 0 best, 1 worst (what [`crate::prior`] gives the
/// model-based strategies).
pub type PriorScores = std::sync::Arc<std::collections::HashMap<kw_core::space::Point, f64>>;

/// A search strategy over the valid configurations of a tuning space.
///
/// The loop alternates [`Strategy::ask`] (propose points to evaluate, possibly several at
/// once) and [`Strategy::tell`] (the result of one point). Contract:
/// - proposals are valid points of the space (never an invalid configuration);
/// - a strategy is told results in any order and may be told results of points it did not
///   propose (a resumed run replays a log), or not be told about some proposals at all (the
///   run stopped); it must cope with both;
/// - revisiting a point is allowed (the loop answers it from its cache, for free) but wastes
///   a round trip: strategies should avoid it;
/// - given the same seed and the same results, a strategy makes the same proposals;
/// - an empty proposal means the strategy has nothing left to propose.
pub trait Strategy {
    /// The strategy's registry name.
    fn name(&self) -> &str;

    /// Proposes points to evaluate next. `hint` is how many evaluations the loop can still
    /// accept right now (at least 1); proposing more is allowed, the surplus may be dropped.
    fn ask(&mut self, space: &TuningSpace, hint: usize) -> Vec<Point>;

    /// The result of one point: its objective value (lower is better) or its failure.
    fn tell(&mut self, space: &TuningSpace, point: &Point, result: &EvalResult);

    /// The result of a prior's configuration that was evaluated before this strategy's own
    /// proposals ([`crate::strategies::seeded`]). By default like [`Strategy::tell`]; a
    /// strategy with an initial design may keep that design whole, so that a prior adds to
    /// its exploration instead of replacing it.
    fn tell_prior(&mut self, space: &TuningSpace, point: &Point, result: &EvalResult) {
        self.tell(space, point, result);
    }

    /// How many of its first own evaluations are its initial design (chosen without
    /// looking at results); 0 by default.
    fn initial_design(&self) -> usize {
        0
    }

    /// A prior's score of configurations (0 best, 1 worst), given before the first
    /// [`Strategy::ask`]: a model-based strategy may use it as a feature. Ignored by default.
    fn set_prior_scores(&mut self, scores: PriorScores) {
        let _ = scores;
    }

    /// True when the proposals never depend on `hint` (the budget left): a run with a budget
    /// of `n` is then the first `n` evaluations of a run with any larger budget, which
    /// simulation uses to score several budgets with one run.
    fn anytime(&self) -> bool {
        false
    }
}
