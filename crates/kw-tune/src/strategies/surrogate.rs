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

use super::common::Memory;
use super::trees::{ExtraTrees, TreeParams};
use crate::evaluator::EvalResult;
use crate::strategy::Strategy;
use kw_core::rng::Rng;
use kw_core::space::Neighbourhood;
use kw_core::{space::Point, space::TuningSpace};
use std::collections::HashSet;

/// Settings of the model-based search.
#[derive(Clone, Copy, Debug)]
pub struct SurrogateParams {
    /// Random configurations before the model is used.
    pub initial: usize,
    /// Exploration offset of expected improvement, in log units.
    pub xi: f64,
    /// The trees' settings.
    pub trees: TreeParams,
    /// Random candidates per proposal.
    pub random_candidates: usize,
    /// Best points whose neighbourhoods are candidates.
    pub elite: usize,
    /// The best candidates from which the acquisition is hill-climbed.
    pub climb_starts: usize,
    /// Steps of each hill-climb.
    pub climb_steps: usize,
    /// Model-guided descent: propose neighbours of the descent centre while their expected
    /// improvement (log units) exceeds this; `None`: no descent.
    pub descent_threshold: Option<f64>,
    /// Fraction of a bounded budget, at its end, spent on the best predicted neighbours of the
    /// best configuration (0: none).
    pub endgame: f64,
    /// The model's features.
    pub features: Features,
    /// The initial design.
    pub design: Design,
    /// Every `sweep`-th model proposal is the best predicted unvisited neighbour of the best
    /// configuration (0: never).
    pub sweep: usize,
    /// Where two-step neighbourhoods are searched.
    pub two_step: TwoStep,
    /// The endgame pools the near configurations of this many best configurations (1: the
    /// best only).
    pub endgame_elite: usize,
    /// The endgame ranks its pool by one tree drawn at random per proposal (Thompson
    /// sampling) instead of the trees' mean, so that successive endgame picks spread over
    /// the configurations the model cannot tell apart.
    pub endgame_thompson: bool,
    /// The model's targets are the ranks of the results (0 the best, 1 the worst; failures
    /// rank last) instead of log(objective): only the order of the times matters.
    pub rank_targets: bool,
    /// Failed configurations are training samples at the worst value seen (otherwise the
    /// model sees successes only).
    pub model_failures: bool,
}

/// The features a surrogate model sees, each level adding to the one before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Features {
    /// Value indices only.
    Indices,
    /// Plus log2 of positive numeric values.
    Logs,
    /// Plus pairwise sums of those logs (products of the values).
    LogProducts,
    /// Plus pairwise differences of the logs (ratios of the values).
    LogRatios,
}

/// How the first configurations are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Design {
    /// Uniformly at random.
    Random,
    /// Maximin over normalised value indices.
    Maximin,
}

/// Where two-step neighbourhoods (two parameters changed) are searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TwoStep {
    /// Nowhere.
    Never,
    /// In the endgame.
    Endgame,
    /// In the endgame and in the descent (after the one-step neighbourhood has nothing
    /// above the threshold).
    EndgameAndDescent,
}

impl SurrogateParams {
    /// The settings of `surrogate`.
    pub fn surrogate() -> SurrogateParams {
        SurrogateParams {
            initial: 10,
            xi: 0.0,
            trees: TreeParams {
                trees: 24,
                min_split: 3,
                p_categorical: 0.5,
                ..TreeParams::default()
            },
            random_candidates: 200,
            elite: 5,
            climb_starts: 5,
            climb_steps: 10,
            descent_threshold: None,
            endgame: 0.0,
            features: Features::Indices,
            design: Design::Random,
            sweep: 0,
            two_step: TwoStep::Never,
            endgame_elite: 1,
            endgame_thompson: false,
            rank_targets: false,
            model_failures: true,
        }
    }

    /// The settings of `hybrid`.
    pub fn hybrid() -> SurrogateParams {
        SurrogateParams {
            descent_threshold: Some(0.001),
            endgame: 0.2,
            ..SurrogateParams::surrogate()
        }
    }

    /// The settings of `hybrid2`: `hybrid` with log2 value features and a
    /// two-step endgame.
    pub fn hybrid2() -> SurrogateParams {
        SurrogateParams {
            features: Features::Logs,
            two_step: TwoStep::Endgame,
            ..SurrogateParams::hybrid()
        }
    }

    /// The settings of `hybrid3`: `hybrid2` with a longer endgame (30% of the
    /// budget) over the near configurations of the two best, ranked by Thompson sampling, and
    /// 800 random candidates per global proposal.
    pub fn hybrid3() -> SurrogateParams {
        SurrogateParams {
            endgame: 0.3,
            endgame_elite: 2,
            endgame_thompson: true,
            random_candidates: 800,
            ..SurrogateParams::hybrid2()
        }
    }
}

/// Maps a point (value indices) to the model's features.
#[derive(Clone, Debug, Default)]
pub struct FeatureMap {
    /// Per parameter: log2 of each value, when the parameter's values are all positive numbers
    /// and there are at least three of them.
    logs: Vec<Option<Vec<f64>>>,
    /// Parameter pairs whose log sums (and maybe differences) are features.
    pairs: Vec<(usize, usize)>,
    diffs: bool,
    index_only: bool,
    /// A prior's score of each configuration (0 best, 1 worst; [`crate::prior`]), the last
    /// feature when given (0.5 for a configuration the prior does not hold).
    prior: Option<PriorScores>,
}

/// A prior's score of configurations: 0 best, 1 worst.
pub type PriorScores = std::sync::Arc<std::collections::HashMap<Point, f64>>;

impl FeatureMap {
    /// The map for `space` with the features `level` names.
    pub fn new(space: &TuningSpace, level: Features) -> FeatureMap {
        let logs: Vec<Option<Vec<f64>>> = space
            .params()
            .iter()
            .map(|p| {
                if level == Features::Indices || p.values.len() < 3 {
                    return None;
                }
                let v: Option<Vec<f64>> = p
                    .values
                    .iter()
                    .map(|v| v.as_f64().filter(|x| *x > 0.0).map(f64::log2))
                    .collect();
                v
            })
            .collect();
        let numeric: Vec<usize> = (0..logs.len()).filter(|&k| logs[k].is_some()).collect();
        let mut pairs = Vec::new();
        if level >= Features::LogProducts {
            for (a, &i) in numeric.iter().enumerate() {
                for &j in &numeric[a + 1..] {
                    pairs.push((i, j));
                }
            }
        }
        FeatureMap {
            logs,
            pairs,
            diffs: level >= Features::LogRatios,
            index_only: level == Features::Indices,
            prior: None,
        }
    }

    /// The features of `point`: value indices first (categorical-capable), then the rest.
    pub fn apply(&self, point: &Point) -> Vec<f64> {
        let mut f: Vec<f64> = point.iter().map(|&v| v as f64).collect();
        if let Some(prior) = &self.prior {
            f.push(prior.get(point).copied().unwrap_or(0.5));
        }
        if self.index_only {
            return f;
        }
        let lg = |k: usize| self.logs[k].as_ref().map(|l| l[point[k] as usize]);
        for k in 0..point.len() {
            if let Some(x) = lg(k) {
                f.push(x);
            }
        }
        for &(i, j) in &self.pairs {
            let (a, b) = (lg(i).unwrap_or(0.0), lg(j).unwrap_or(0.0));
            f.push(a + b);
            if self.diffs {
                f.push(a - b);
            }
        }
        f
    }
}

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
        self.memory.begin_ask();
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

/// The ranks of `values` scaled to 0..1 (0 the smallest; ties share the lower rank).
fn ranks(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let v: Vec<f64> = values.collect();
    let mut sorted = v.clone();
    sorted.sort_by(f64::total_cmp);
    let n = (v.len().max(2) - 1) as f64;
    v.iter()
        .map(|x| sorted.partition_point(|y| y < x) as f64 / n)
        .collect()
}

/// Expected improvement below `best` of a normal prediction (mean, sd).
pub fn expected_improvement(best: f64, mean: f64, sd: f64) -> f64 {
    let d = best - mean;
    if sd < 1e-12 {
        return d.max(0.0);
    }
    let z = d / sd;
    d * normal_cdf(z) + sd * normal_pdf(z)
}

fn normal_pdf(z: f64) -> f64 {
    (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// Standard normal CDF (Abramowitz & Stegun 7.1.26 erf; error below 1.5e-7).
fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_and_ei() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.96) - 0.975).abs() < 1e-3);
        assert!((normal_cdf(-1.96) - 0.025).abs() < 1e-3);
        assert!(expected_improvement(1.0, 0.0, 0.0) == 1.0);
        assert!(expected_improvement(0.0, 1.0, 1.0) > 0.0);
        assert!(expected_improvement(0.0, 1.0, 1.0) < expected_improvement(0.0, 1.0, 2.0));
    }
}
