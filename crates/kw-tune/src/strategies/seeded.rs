//! A strategy seeded by a prior ([`crate::prior`]): the prior's best configurations, mapped
//! into this space, are proposed first; then the strategy it wraps runs. What it is told of
//! the prior's results is [`PriorShare`]. By default ([`PriorShare::Trust`]) it is
//! told them and keeps proposing while its proposals improve the best so far; when they stop
//! paying, the same strategy never told of the prior takes over. Told for good, the default
//! strategy's model settles in the prior's basin where that basin is not the optimum's (on
//! convolution_A100, whose optimum the other GPUs rank near 400th, it reached 0.70 / 0.77 /
//! 0.84 of the optimum at 50 / 100 / 200 evaluations against 0.75 / 0.84 / 0.95 alone, seeds
//! 100..119; `docs/strategies.md`).

use super::trust::Trust;
use crate::evaluator::EvalResult;
use crate::prior::{PriorShare, TrustSettings};
use crate::strategy::Strategy;
use kw_core::rng::Rng;
use kw_core::space::{Neighbourhood, Point, TuningSpace};
use std::collections::HashSet;

/// A strategy whose first proposals are a prior's configurations.
pub struct Seeded {
    name: String,
    inner: Box<dyn Strategy>,
    /// Prior configurations not proposed yet, best last.
    queue: Vec<Point>,
    /// Every point told so far (a resumed run may have evaluated prior points already).
    told: HashSet<Point>,
    /// The prior's points.
    prior: HashSet<Point>,
    /// What the wrapped strategy is told of their results.
    share: PriorShare,
    /// Points the wrapped strategy was told.
    inner_told: HashSet<Point>,
    /// Points the wrapped strategy (or the blind fallback) proposed: a prior point among
    /// them, proposed again while it waited in the loop's queue, is their own result.
    asked: HashSet<Point>,
    /// Prior results withheld from it so far (`PriorShare::Late`).
    withheld: Vec<(Point, EvalResult)>,
    /// Its own results so far.
    own: usize,
    /// [`PriorShare::Trust`]: the fallback when the told strategy stops paying.
    trust: Option<Trust>,
    /// The best result so far, and the prior's results in a row since it last improved
    /// ([`TrustSettings::stop`], [`TrustSettings::gate`]).
    best: f64,
    prior_stale: usize,
    /// The prior's configurations handed out whose results have not come.
    prior_out: HashSet<Point>,
    /// [`TrustSettings::local`].
    local: Local,
}

impl Seeded {
    /// `inner` seeded with `prior` (valid points of the space, best first), told of their
    /// results as `share` says.
    pub fn new(inner: Box<dyn Strategy>, prior: Vec<Point>, share: PriorShare) -> Seeded {
        Seeded::with_blind(inner, None, prior, share)
    }

    /// Like [`Seeded::new`]; with [`PriorShare::Trust`], `blind` is the same strategy (same
    /// seed), never told of the prior, that takes over when the told one stops paying
    /// (without it, `Trust` is `Extra`).
    pub fn with_blind(
        inner: Box<dyn Strategy>,
        blind: Option<Box<dyn Strategy>>,
        prior: Vec<Point>,
        share: PriorShare,
    ) -> Seeded {
        let trust = match (share, blind) {
            (PriorShare::Trust(settings), Some(blind)) => Some(Trust::new(blind, settings)),
            _ => None,
        };
        let local = match share {
            PriorShare::Trust(t) => t.local,
            _ => 0,
        };
        let mut queue = prior;
        queue.reverse();
        Seeded {
            name: format!("{}+prior", inner.name()),
            inner,
            prior: queue.iter().cloned().collect(),
            queue,
            told: HashSet::new(),
            share,
            inner_told: HashSet::new(),
            asked: HashSet::new(),
            withheld: Vec::new(),
            own: 0,
            trust,
            best: f64::INFINITY,
            prior_stale: 0,
            prior_out: HashSet::new(),
            local: Local::new(local),
        }
    }

    /// The order in which the neighbours of the best are tried ([`TrustSettings::local`])
    /// drawn from `seed` (the run's seed; a fixed one otherwise).
    pub fn seeded(mut self, seed: u64) -> Seeded {
        self.local.rng = Rng::new(seed ^ LOCAL_SEED);
        self
    }

    /// The neighbours of the best are tried best scored first (0 best; one without a score
    /// counts as 0.5), ties in the seed's order ([`TrustSettings::guided`]); `None` keeps
    /// the seed's order.
    pub fn with_climb_order(mut self, scores: Option<crate::strategy::PriorScores>) -> Seeded {
        self.local.order = scores;
        self
    }
}

/// Mixed into the seed of the neighbours' order.
const LOCAL_SEED: u64 = 0x10ca1;

impl std::fmt::Debug for Seeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Seeded")
            .field("name", &self.name)
            .field("queue", &self.queue.len())
            .finish()
    }
}

/// [`TrustSettings::local`]: adjacent neighbours of the best point so far, while they
/// improve it. Counted by results, not proposals: with proposals asked ahead (`kw tune`'s
/// lookahead) the neighbours in flight count as misses until their results come.
struct Local {
    /// The most results in a row that do not improve the best point (0: off).
    limit: usize,
    /// The best point so far.
    best_point: Option<Point>,
    /// Neighbour results in a row that did not improve it.
    misses: usize,
    /// Neighbours proposed whose results have not come.
    in_flight: HashSet<Point>,
    /// Every neighbour proposed.
    asked: HashSet<Point>,
    /// No neighbour is proposed any more.
    done: bool,
    /// No neighbour is proposed yet ([`TrustSettings::gate`] waits for the prior's results).
    held: bool,
    rng: Rng,
    /// The prior's scores that order the neighbours ([`Seeded::with_climb_order`]).
    order: Option<crate::strategy::PriorScores>,
}

impl Local {
    fn new(limit: usize) -> Local {
        Local {
            limit,
            best_point: None,
            misses: 0,
            in_flight: HashSet::new(),
            asked: HashSet::new(),
            done: limit == 0,
            held: false,
            rng: Rng::new(LOCAL_SEED),
            order: None,
        }
    }

    /// A neighbour of the best point so far that is none of `seen`'s points; it joins
    /// `prior` (its result is told as the prior's). `None` when the climb is over, or waits
    /// for results in flight.
    fn propose(
        &mut self,
        space: &TuningSpace,
        seen: [&HashSet<Point>; 2],
        prior: &mut HashSet<Point>,
    ) -> Option<Point> {
        if self.done || self.held || self.misses + self.in_flight.len() >= self.limit {
            return None;
        }
        let best = self.best_point.as_ref()?;
        let fresh: Vec<Point> = space
            .neighbours(best, Neighbourhood::Adjacent)
            .into_iter()
            .filter(|p| !prior.contains(p) && seen.iter().all(|s| !s.contains(p)))
            .collect();
        if fresh.is_empty() {
            // Every neighbour of the best is known: the climb is over, unless one in
            // flight moves the best.
            self.done = self.in_flight.is_empty();
            return None;
        }
        let fresh = match &self.order {
            None => fresh,
            Some(scores) => {
                let score = |p: &Point| scores.get(p).copied().unwrap_or(0.5);
                let least = fresh.iter().map(score).fold(f64::INFINITY, f64::min);
                fresh.into_iter().filter(|p| score(p) <= least).collect()
            }
        };
        let p = fresh[self.rng.index(fresh.len())].clone();
        prior.insert(p.clone());
        self.asked.insert(p.clone());
        self.in_flight.insert(p.clone());
        Some(p)
    }

    /// A result: a new best moves the climb there; a neighbour's result counts.
    fn tell(&mut self, point: &Point, improved: bool) {
        if improved {
            self.best_point = Some(point.clone());
        }
        if self.in_flight.remove(point) {
            self.misses = if improved { 0 } else { self.misses + 1 };
            if self.misses >= self.limit {
                self.done = true;
            }
        }
        if self.done {
            // The prior's scores are no longer needed (a whole space's, for a big prior).
            self.order = None;
        }
    }
}

impl Seeded {
    /// [`TrustSettings::gate`]: before the first neighbour, once every prior result is in,
    /// the climb is called off unless one of the last `gate` of them improved the best. While
    /// prior results are in flight (proposals asked ahead), the climb waits.
    fn gate_climb(&mut self) {
        let PriorShare::Trust(TrustSettings { gate, .. }) = self.share else {
            return;
        };
        if gate == 0 || self.local.done || !self.local.asked.is_empty() {
            return;
        }
        let waiting = !self.prior_out.is_empty();
        self.local.held = waiting;
        if !waiting && self.prior_stale >= gate {
            self.local.done = true;
        }
    }
}

impl Strategy for Seeded {
    fn name(&self) -> &str {
        &self.name
    }

    fn ask(&mut self, space: &TuningSpace, hint: usize) -> Vec<Point> {
        while let Some(p) = self.queue.pop() {
            if !self.told.contains(&p) && space.contains(&p) {
                self.prior_out.insert(p.clone());
                return vec![p];
            }
        }
        let local_mix = matches!(self.share, PriorShare::Trust(t) if t.local_mix);
        self.gate_climb();
        let seen = [&self.told, &self.asked];
        if !local_mix {
            if let Some(p) = self.local.propose(space, seen, &mut self.prior) {
                return vec![p];
            }
        }
        let (local, prior) = (&mut self.local, &mut self.prior);
        let mut neighbour = None;
        let points = match &mut self.trust {
            Some(t) => t.ask(
                &mut *self.inner,
                &mut || {
                    neighbour = local_mix
                        .then(|| local.propose(space, seen, prior))
                        .flatten();
                    neighbour.clone()
                },
                space,
                hint,
            ),
            None => self.inner.ask(space, hint),
        };
        // A neighbour (`local_mix`) is the prior's, not the strategy's own.
        let own = points.iter().filter(|p| neighbour.as_ref() != Some(*p));
        self.asked.extend(own.cloned());
        points
    }

    fn tell(&mut self, space: &TuningSpace, point: &Point, result: &EvalResult) {
        let first = self.told.insert(point.clone());
        self.prior_out.remove(point);
        let own = !self.prior.contains(point) || !first || self.asked.contains(point);
        let improved = matches!(result, Ok(v) if *v < self.best);
        if let (Ok(v), true) = (result, improved) {
            self.best = *v;
        }
        self.local.tell(point, improved);
        if !own {
            self.prior_stale = if improved { 0 } else { self.prior_stale + 1 };
        }
        if let PriorShare::Trust(TrustSettings { stop, .. }) = self.share {
            if !own && stop > 0 && self.prior_stale >= stop {
                self.queue.clear();
            }
        }
        if own {
            // Its own proposal (a prior point it proposed again is answered from the cache).
            if self.inner_told.insert(point.clone()) {
                self.own += 1;
            }
            self.inner.tell(space, point, result);
        } else {
            match self.share {
                PriorShare::Blind => {}
                PriorShare::Late(_) => self.withheld.push((point.clone(), result.clone())),
                // The prior as its initial design.
                PriorShare::Design | PriorShare::Trust(TrustSettings { mix: true, .. }) => {
                    self.inner_told.insert(point.clone());
                    self.inner.tell(space, point, result)
                }
                PriorShare::Extra | PriorShare::Trust(_) => {
                    self.inner_told.insert(point.clone());
                    self.inner.tell_prior(space, point, result)
                }
            }
        }
        if let Some(t) = &mut self.trust {
            t.tell(space, point, result, own);
        }
        if let PriorShare::Late(after) = self.share {
            if self.own >= after {
                for (p, r) in std::mem::take(&mut self.withheld) {
                    if self.inner_told.insert(p.clone()) {
                        self.inner.tell(space, &p, &r);
                    }
                }
            }
        }
    }

    fn anytime(&self) -> bool {
        self.inner.anytime()
    }
}
