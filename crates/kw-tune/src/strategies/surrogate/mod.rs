//! Model-based search: `surrogate` and `hybrid`.
//!
//! An extra-trees model ([`super::trees`]) of log(objective) over the value indices, refitted
//! after every result (failed configurations count as the worst value seen, so their regions
//! are avoided), proposes the configuration of highest expected improvement among random
//! unvisited configurations and the unvisited neighbours of the best ones, refined by greedy
//! hill-climbs on the acquisition. Ported from the strategy lab
//! (`/work/scratch/strategy-lab/src/surrogate.rs`, "et:cat=0.5", its winner), whose settings are
//! kept: 10 random configurations first, 24 trees, nodes of 3+ samples split, categorical
//! splits half of the time, 200 random candidates, neighbourhoods of the 5 best, 5 climbs of up
//! to 10 steps.
//!
//! `hybrid` (the base of `hybrid2`, `hybrid3` and, without its endgame, of `hybrid4`) adds two things measured in
//! this framework:
//! - a model-guided descent: while some unvisited neighbour of the descent centre has an
//!   expected improvement above [`SurrogateParams::descent_threshold`], the best of them is
//!   proposed; a better result moves the centre. Only when the model expects nothing more
//!   there does a global proposal (as above) restart the descent from where it lands. This is
//!   iterated local search whose neighbour order and stopping are decided by the model;
//! - an endgame: in the last [`SurrogateParams::endgame`] fraction of a bounded budget, the
//!   unvisited neighbour of the best configuration with the best predicted value is proposed
//!   (`hybrid2` and `hybrid3` widen this: see [`SurrogateParams::two_step`],
//!   [`SurrogateParams::endgame_elite`], [`SurrogateParams::endgame_thompson`]).
//!
//! Files: this one the strategy ([`Surrogate`]); `params.rs` its settings, `features.rs` what
//! the model sees, `acquisition.rs` expected improvement and ranks.

mod acquisition;
mod features;
mod params;

pub use features::FeatureMap;
pub use params::{Design, Features, SurrogateParams, TwoStep};

use crate::evaluator::EvalResult;
use crate::strategies::common::Memory;
use crate::strategies::trees::ExtraTrees;
use crate::strategy::{PriorScores, Strategy};
use acquisition::{expected_improvement, ranks};
use kw_core::rng::Rng;
use kw_core::space::Neighbourhood;
use kw_core::{space::Point, space::TuningSpace};
use std::collections::HashSet;

/// Model-based search with an extra-trees surrogate and expected improvement.
#[derive(Debug)]
pub struct Surrogate {
    name: &'static str,
    rng: Rng,
    memory: Memory,
    params: SurrogateParams,
    /// Centre of the model-guided descent.
    current: Option<Point>,
    /// The last global proposal: the descent restarts there.
    restart: Option<Point>,
    /// The feature map, built at the first ask.
    fmap: Option<FeatureMap>,
    /// A prior's scores, a feature of the model when given.
    prior: Option<PriorScores>,
    /// Model proposals made (for the periodic sweep).
    proposals: usize,
}

impl Surrogate {
    /// `surrogate`, seeded with `seed`.
    pub fn new(seed: u64) -> Surrogate {
        Surrogate::with_params("surrogate", seed, SurrogateParams::surrogate())
    }

    /// `hybrid`, seeded with `seed`.
    pub fn hybrid(seed: u64) -> Surrogate {
        Surrogate::with_params("hybrid", seed, SurrogateParams::hybrid())
    }

    /// A model-based search with explicit settings, registered as `name`.
    pub fn with_params(name: &'static str, seed: u64, params: SurrogateParams) -> Surrogate {
        Surrogate {
            name,
            rng: Rng::new(seed),
            memory: Memory::default(),
            params,
            current: None,
            restart: None,
            fmap: None,
            prior: None,
            proposals: 0,
        }
    }

    /// What the search knows.
    pub(crate) fn memory(&self) -> &Memory {
        &self.memory
    }

    /// The search's random generator.
    pub(crate) fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    /// What the search knows and its random generator, at once.
    pub(crate) fn parts(&mut self) -> (&Memory, &mut Rng) {
        (&self.memory, &mut self.rng)
    }

    /// The settings.
    pub(crate) fn params(&self) -> &SurrogateParams {
        &self.params
    }

    /// Builds the feature map at the first call.
    pub(crate) fn prepare(&mut self, space: &TuningSpace) {
        if self.fmap.is_none() {
            let mut fm = FeatureMap::new(space, self.params.features);
            fm.prior = self.prior.clone();
            self.fmap = Some(fm);
        }
    }

    /// Makes a prior's scores a feature of the model (before the first ask).
    pub(crate) fn set_prior_scores(&mut self, scores: PriorScores) {
        if let Some(fm) = &mut self.fmap {
            fm.prior = Some(scores.clone());
        }
        self.prior = Some(scores);
    }

    /// Marks `point` as proposed.
    pub(crate) fn propose(&mut self, point: Point) -> Point {
        self.memory.propose(point)
    }

    pub(crate) fn fmap(&self) -> FeatureMap {
        self.fmap.clone().unwrap_or_default()
    }

    /// The model and the best log-objective, once there are two successes.
    pub(crate) fn model(&mut self) -> Option<(ExtraTrees, f64)> {
        let succ = &self.memory.successes;
        if succ.len() < 2 {
            return None;
        }
        let logs: Vec<f64> = if self.params.rank_targets {
            ranks(succ.iter().map(|(_, v)| *v))
        } else {
            succ.iter().map(|(_, v)| v.ln()).collect()
        };
        let lo = logs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let fm = self.fmap();
        let mut x: Vec<Vec<f64>> = succ.iter().map(|(p, _)| fm.apply(p)).collect();
        let mut y = logs;
        let failures = if self.params.model_failures {
            &self.memory.failures[..]
        } else {
            &[]
        };
        for p in failures {
            x.push(fm.apply(p));
            y.push(hi);
        }
        let mut tp = self.params.trees;
        if self.params.features > Features::Indices {
            tp.cat_features = self.memory.successes[0].0.len();
        }
        Some((ExtraTrees::fit(&x, &y, tp, &mut self.rng), lo))
    }

    /// The unvisited configurations near (see [`Self::near`]) the `k` best successes, each once,
    /// in order of the best first; and the set of them.
    fn near_best(&self, space: &TuningSpace, k: usize, two: bool) -> (Vec<Point>, HashSet<Point>) {
        let mut elite: Vec<&(Point, f64)> = self.memory.successes.iter().collect();
        elite.sort_by(|a, b| a.1.total_cmp(&b.1));
        let mut set: HashSet<Point> = HashSet::new();
        let mut out = Vec::new();
        for (p, _) in elite.into_iter().take(k) {
            for q in self.near(space, p, two) {
                if set.insert(q.clone()) {
                    out.push(q);
                }
            }
        }
        (out, set)
    }

    fn candidates(&mut self, space: &TuningSpace) -> Vec<Point> {
        let (mut out, mut set) = self.near_best(space, self.params.elite, false);
        for _ in 0..self.params.random_candidates {
            match self.memory.random_unvisited(space, &mut self.rng) {
                Some(q) => {
                    if set.insert(q.clone()) {
                        out.push(q);
                    }
                }
                None => break,
            }
        }
        out
    }

    /// An initial-design point: of 50 random unvisited points, the one farthest (sum of
    /// normalised value-index differences, minimum over the points seen) from those seen.
    fn maximin(&mut self, space: &TuningSpace) -> Option<Point> {
        let sizes: Vec<f64> = space
            .params()
            .iter()
            .map(|p| (p.values.len().max(2) - 1) as f64)
            .collect();
        let seen: Vec<Point> = self
            .memory
            .results
            .keys()
            .chain(self.memory.pending.iter())
            .cloned()
            .collect();
        let mut best: Option<(f64, Point)> = None;
        for _ in 0..50 {
            let Some(q) = self.memory.random_unvisited(space, &mut self.rng) else {
                break;
            };
            let d = seen
                .iter()
                .map(|p| {
                    p.iter()
                        .zip(&q)
                        .zip(&sizes)
                        .map(|((&a, &b), &n)| (a as f64 - b as f64).abs() / n)
                        .sum::<f64>()
                })
                .fold(f64::INFINITY, f64::min);
            if best.as_ref().is_none_or(|(b, _)| d > *b) {
                best = Some((d, q));
            }
        }
        best.map(|(_, q)| q)
    }

    /// The unvisited points one or two Hamming steps from `point` (two only when `two`).
    fn near(&self, space: &TuningSpace, point: &Point, two: bool) -> Vec<Point> {
        if !two {
            return self
                .memory
                .unvisited_neighbours(space, point, Neighbourhood::Hamming);
        }
        let mut set: HashSet<Point> = HashSet::new();
        let mut out = Vec::new();
        for n in space.neighbours(point, Neighbourhood::Hamming) {
            for m in space
                .neighbours(&n, Neighbourhood::Hamming)
                .into_iter()
                .chain(std::iter::once(n.clone()))
            {
                if m != *point && !self.memory.seen(&m) && set.insert(m.clone()) {
                    out.push(m);
                }
            }
        }
        out
    }

    /// The endgame's proposal: of the configurations one (or two) Hamming steps from the
    /// [`SurrogateParams::endgame_elite`] best, the best predicted (by the trees' mean, or by
    /// one random tree with [`SurrogateParams::endgame_thompson`]).
    fn endgame_pick(&mut self, space: &TuningSpace, model: &ExtraTrees) -> Option<Point> {
        let fm = self.fmap();
        let k = self.params.endgame_elite.max(1);
        let (pool, _) = self.near_best(space, k, self.params.two_step >= TwoStep::Endgame);
        let tree = (self.params.endgame_thompson && !model.is_empty())
            .then(|| self.rng.index(model.len()));
        pool.into_iter()
            .map(|q| {
                let x = fm.apply(&q);
                let score = match tree {
                    Some(t) => model.predict_tree(t, &x),
                    None => model.predict(&x).0,
                };
                (score, q)
            })
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, q)| q)
    }

    /// The model's proposal: endgame, descent step or global pick.
    pub(crate) fn propose_with_model(
        &mut self,
        space: &TuningSpace,
        model: &ExtraTrees,
        best: f64,
        hint: usize,
    ) -> Option<Point> {
        let fm = self.fmap();
        let told = self.memory.results.len();
        self.proposals += 1;
        let endgame = (hint as f64) < self.params.endgame * (told + hint) as f64
            || (self.params.sweep > 0 && self.proposals.is_multiple_of(self.params.sweep));
        if endgame {
            if let Some(q) = self.endgame_pick(space, model) {
                return Some(q);
            }
        }
        let xi = self.params.xi;
        let acquisition = |q: &Point| {
            let (m, s) = model.predict(&fm.apply(q));
            // Ties (no expected improvement anywhere) go to the best predicted mean.
            expected_improvement(best - xi, m, s) - 1e-9 * m
        };
        if let Some(threshold) = self.params.descent_threshold {
            if self.current.is_none() {
                self.current = self.memory.best.as_ref().map(|(p, _)| p.clone());
            }
            if let Some(cur) = self.current.clone() {
                let step = self
                    .memory
                    .unvisited_neighbours(space, &cur, Neighbourhood::Hamming)
                    .into_iter()
                    .map(|q| (acquisition(&q), q))
                    .filter(|(a, _)| *a > threshold)
                    .max_by(|a, b| a.0.total_cmp(&b.0));
                if let Some((_, q)) = step {
                    return Some(q);
                }
                if self.params.two_step >= TwoStep::EndgameAndDescent {
                    let step = self
                        .near(space, &cur, true)
                        .into_iter()
                        .map(|q| (acquisition(&q), q))
                        .filter(|(a, _)| *a > threshold)
                        .max_by(|a, b| a.0.total_cmp(&b.0));
                    if let Some((_, q)) = step {
                        return Some(q);
                    }
                }
            }
        }
        let mut scored: Vec<(f64, Point)> = self
            .candidates(space)
            .into_iter()
            .map(|q| (acquisition(&q), q))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut pick = scored.first().cloned();
        // Greedy hill-climbs on the acquisition from the best candidates.
        for (a0, q0) in scored.iter().take(self.params.climb_starts) {
            let mut cur = (*a0, q0.clone());
            for _ in 0..self.params.climb_steps {
                let mut improved = false;
                for n in self
                    .memory
                    .unvisited_neighbours(space, &cur.1, Neighbourhood::Hamming)
                {
                    let a = acquisition(&n);
                    if a > cur.0 {
                        cur = (a, n);
                        improved = true;
                    }
                }
                if !improved {
                    break;
                }
            }
            if pick.as_ref().is_none_or(|(b, _)| cur.0 > *b) {
                pick = Some(cur);
            }
        }
        let pick = pick.map(|(_, q)| q);
        if self.params.descent_threshold.is_some() {
            self.restart = pick.clone();
        }
        pick
    }
}

impl Strategy for Surrogate {
    fn name(&self) -> &str {
        self.name
    }

    fn ask(&mut self, space: &TuningSpace, hint: usize) -> Vec<Point> {
        self.prepare(space);
        let model = if self.memory.results.len() < self.params.initial {
            None
        } else {
            self.model()
        };
        let next = match model {
            Some((model, best)) => self
                .propose_with_model(space, &model, best, hint)
                .or_else(|| self.memory.random_unvisited(space, &mut self.rng)),
            None if self.params.design == Design::Maximin => self.maximin(space),
            None => self.memory.random_unvisited(space, &mut self.rng),
        };
        next.map(|p| vec![self.memory.propose(p)])
            .unwrap_or_default()
    }

    fn tell(&mut self, _space: &TuningSpace, point: &Point, result: &EvalResult) {
        self.memory.tell(point, result);
        let Ok(v) = result else { return };
        if self.restart.as_ref() == Some(point) {
            self.restart = None;
            self.current = Some(point.clone());
        } else if self
            .current
            .as_ref()
            .is_some_and(|c| *v < self.memory.cost(c))
        {
            self.current = Some(point.clone());
        }
    }
}
