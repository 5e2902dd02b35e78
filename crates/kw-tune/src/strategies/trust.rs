//! [`PriorShare::Trust`](crate::prior::PriorShare::Trust): a strategy told of a prior's
//! results proposes while it pays; when it stops paying, the same strategy never told of the
//! prior takes over for good. Trust in the prior is decided by what the run itself sees: the
//! told strategy keeps the lead only while its proposals keep improving the best so far
//! (prior results included).
//!
//! With `mix` (the default) the told strategy counts the prior's results as its initial
//! design and proposes right after them, alternating with the blind strategy's random
//! design, so a good prior is exploited within the first evaluations. A prior of fewer
//! configurations than the design (a wisdom record or two) leaves the told strategy with
//! random proposals to make: they rarely improve, so the blind strategy soon takes over.

use crate::evaluator::EvalResult;
use crate::prior::TrustSettings;
use crate::strategy::Strategy;
use kw_core::{space::Point, space::TuningSpace};
use std::collections::HashSet;

/// The blind fallback of a seeded strategy and what decides when it takes over.
pub(super) struct Trust {
    /// The same strategy (same seed), never told of the prior.
    blind: Box<dyn Strategy>,
    settings: TrustSettings,
    /// The blind strategy's initial design (with `mix`, proposed by it, alternating with
    /// the told strategy's proposals).
    design: usize,
    /// The best objective value so far (prior results included).
    best: f64,
    /// The told strategy's results (after the design) since the best last improved.
    stale: usize,
    /// Own results so far (distinct points).
    own: HashSet<Point>,
    /// Points the blind strategy proposed.
    blind_asked: HashSet<Point>,
    /// Points the blind strategy was told.
    blind_told: HashSet<Point>,
    /// With `mix`: the blind strategy's design proposal is next.
    blind_turn: bool,
}

impl Trust {
    pub(super) fn new(blind: Box<dyn Strategy>, settings: TrustSettings) -> Trust {
        Trust {
            design: blind.initial_design(),
            blind,
            settings,
            best: f64::INFINITY,
            stale: 0,
            own: HashSet::new(),
            blind_asked: HashSet::new(),
            blind_told: HashSet::new(),
            blind_turn: false,
        }
    }

    /// True once the blind strategy has taken over.
    pub(super) fn switched(&self) -> bool {
        self.stale >= self.settings.patience
    }

    /// True while the blind strategy's initial design is incomplete.
    fn designing(&self) -> bool {
        self.blind_told.len() < self.design
    }

    /// The next proposal, once the prior's configurations are all proposed: the told
    /// strategy's (`told`) until the blind one takes over.
    pub(super) fn ask(
        &mut self,
        told: &mut dyn Strategy,
        local: &mut dyn FnMut() -> Option<Point>,
        space: &TuningSpace,
        hint: usize,
    ) -> Vec<Point> {
        let design_turn = self.settings.mix && self.designing() && {
            self.blind_turn = !self.blind_turn;
            !self.blind_turn
        };
        if !design_turn {
            if let Some(p) = local() {
                return vec![p];
            }
        }
        if !(self.switched() || design_turn) {
            return told.ask(space, hint);
        }
        let points = self.blind.ask(space, hint);
        self.blind_asked.extend(points.iter().cloned());
        points
    }

    /// A result: `own` when it is not a prior configuration's first result.
    pub(super) fn tell(
        &mut self,
        space: &TuningSpace,
        point: &Point,
        result: &EvalResult,
        own: bool,
    ) {
        let improved = matches!(result, Ok(v) if *v < self.best);
        if let Ok(v) = result {
            self.best = self.best.min(*v);
        }
        if !own {
            return;
        }
        let first = self.own.insert(point.clone());
        let switched = self.switched();
        // Without `mix` the told strategy proposes the design: its first own results.
        let design = if self.settings.mix {
            self.blind_asked.contains(point)
        } else {
            first && self.own.len() <= self.design
        };
        if first && !switched && !design {
            self.stale = if improved { 0 } else { self.stale + 1 };
        }
        let shared =
            switched || design || self.blind_asked.contains(point) || !self.settings.forget;
        if shared && self.blind_told.insert(point.clone()) {
            self.blind.tell(space, point, result);
        }
    }
}
