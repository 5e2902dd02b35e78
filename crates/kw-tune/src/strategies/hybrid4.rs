//! `hybrid4`, `hybrid5` and `hybrid6` (the default strategy, see `docs/strategies.md`): `hybrid3`'s
//! model-based search for the first evaluations, then a pack search ([`super::pack`], the idea
//! of Kernel Tuner's `adaptive_tabu_greywolf`, loosely) seeded with the best configurations found, alternating with the model's
//! proposals; `hybrid5` makes every 5th proposal after the first 20 a uniformly random
//! unvisited configuration; `hybrid6` is `hybrid5` without the pack (the model makes every
//! other proposal). Settings chosen by leave-one-family-out on the shared suite.
//!
//! - 10 random configurations, then `hybrid3`'s proposals (expected improvement over random
//!   candidates and the neighbours of the best, and the model-guided descent; *no* endgame)
//!   up to [`Hybrid4Params::early`] = 20 evaluations.
//! - Then the pack (8 members: the 8 best so far) takes every other proposal: a child of the
//!   next member built from the 3 best, accepted by a test on ranks only; the other proposals
//!   stay the model's, and one that beats the pack's worst member replaces it.
//! - The model ignores failed configurations (it models the successes; the tabu keeps failures
//!   from being proposed again); it is refitted when the results grew by 2% (every proposal
//!   up to 50 results, every 8th at 400), which keeps the overhead near 1 ms per proposal.
//! - The pack restarts (all but the best replaced by the model's picks) when its best has not
//!   improved for 12 generations, so more budget keeps buying new regions; nothing depends on
//!   the budget (a longer run is the shorter one continued).
//!
//! Settings can be given in the name for experiments, e.g. `hybrid4:children=8:every=3`
//! (see [`Hybrid4Params::set`]): `children > 1` screens that many children by the model.

use super::pack::{Pack, PackParams};
use super::surrogate::{Surrogate, SurrogateParams};
use super::trees::ExtraTrees;
use crate::evaluator::EvalResult;
use crate::strategy::Strategy;
use kw_core::{space::Point, space::TuningSpace};
use std::rc::Rc;

/// `hybrid5`'s exploration period: every 5th proposal after the early phase is random.
pub const HYBRID5_EXPLORE: usize = 5;

/// Settings of `hybrid4`.
#[derive(Clone, Copy, Debug)]
pub struct Hybrid4Params {
    /// The model-based search (its endgame is never used).
    pub model: SurrogateParams,
    /// The pack.
    pub pack: PackParams,
    /// Children made per pack proposal; the model picks one.
    pub children: usize,
    /// Every `every`-th proposal is a model-based one, the others pack proposals (0: pack only,
    /// 1: model only).
    pub every: usize,
    /// Children are ranked by one random tree (Thompson sampling) instead of the forest's mean.
    pub thompson: bool,
    /// A model-based proposal better than the pack's worst member replaces it.
    pub inject: bool,
    /// Evaluations made by model-based proposals alone before the pack starts, seeded with the
    /// best configurations found by then.
    pub early: usize,
    /// How many of the best configurations seed the pack after the early phase (the rest of
    /// the pack is filled like after a restart).
    pub seed_elite: usize,
    /// New members (filling the pack, after a restart) are random configurations instead of
    /// model-based proposals.
    pub fill_random: bool,
    /// The model is refitted when the results grew by this fraction since the last fit (at
    /// least one new result): every proposal early, every 8th at 400 results with 0.02.
    pub refit: f64,
    /// After the early phase, every `explore`-th proposal is a uniformly random unvisited
    /// configuration (0: never).
    pub explore: usize,
}

impl Hybrid4Params {
    /// The settings of `hybrid4`.
    pub fn hybrid4() -> Hybrid4Params {
        Hybrid4Params {
            model: SurrogateParams {
                endgame: 0.0,
                model_failures: false,
                ..SurrogateParams::hybrid3()
            },
            pack: PackParams::greywolf(),
            children: 1,
            every: 2,
            thompson: true,
            inject: true,
            early: 20,
            seed_elite: usize::MAX,
            fill_random: false,
            refit: 0.02,
            explore: 0,
        }
    }

    /// The settings of `hybrid5` (the default strategy): `hybrid4` where, after the early
    /// phase, every [`HYBRID5_EXPLORE`]-th proposal is a uniformly random unvisited
    /// configuration (chosen by leave-one-family-out on the shared suite, `docs/strategies.md`).
    pub fn hybrid5() -> Hybrid4Params {
        Hybrid4Params {
            explore: HYBRID5_EXPLORE,
            ..Hybrid4Params::hybrid4()
        }
    }

    /// The settings of `hybrid6` (the default strategy): `hybrid5` without the pack, every
    /// proposal after the early phase the model's or (every [`HYBRID5_EXPLORE`]-th) a random
    /// one. Chosen by leave-one-family-out: in every fold the other three families chose it
    /// and it held on three of the four families left out (`docs/strategies.md`).
    pub fn hybrid6() -> Hybrid4Params {
        Hybrid4Params {
            every: 1,
            ..Hybrid4Params::hybrid5()
        }
    }

    /// Sets `key` to `value` (for experiments): `children`, `every`, `thompson` (0/1),
    /// `inject` (0/1), `rank` (0/1: rank targets), `size`, `leaders`, `nudge`, `t0`,
    /// `cooling`, `stagnation`, `initial`, `candidates`, `explore`.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let f = || {
            value
                .parse::<f64>()
                .map_err(|_| format!("`{key}={value}`: not a number"))
        };
        let u = || {
            value
                .parse::<usize>()
                .map_err(|_| format!("`{key}={value}`: not a whole number"))
        };
        match key {
            "children" => self.children = u()?.max(1),
            "every" => self.every = u()?,
            "thompson" => self.thompson = u()? != 0,
            "inject" => self.inject = u()? != 0,
            "early" => self.early = u()?,
            "seedelite" => self.seed_elite = u()?.max(1),
            "fillrandom" => self.fill_random = u()? != 0,
            "refit" => self.refit = f()?,
            "explore" => self.explore = u()?,
            "rank" => self.model.rank_targets = u()? != 0,
            "failures" => self.model.model_failures = u()? != 0,
            "size" => self.pack.size = u()?.max(2),
            "leaders" => self.pack.leaders = u()?.max(1),
            "nudge" => self.pack.nudge = f()?,
            "t0" => self.pack.t0 = f()?,
            "cooling" => self.pack.cooling = f()?,
            "stagnation" => self.pack.stagnation = u()?,
            "initial" => self.model.initial = u()?.max(2),
            "candidates" => self.model.random_candidates = u()?,
            _ => return Err(format!("unknown setting `{key}`")),
        }
        Ok(())
    }
}

/// The pack search screened by the model.
#[derive(Debug)]
pub struct Hybrid4 {
    name: String,
    base: Surrogate,
    pack: Pack,
    params: Hybrid4Params,
    proposals: usize,
    /// The last model-based proposal (a candidate for the pack).
    global: Option<Point>,
    /// The model, its best target value and the number of results it was fitted on.
    model: Option<(Rc<ExtraTrees>, f64, usize)>,
    /// Results of a prior's configurations ([`Strategy::tell_prior`]): not part of the
    /// initial design or the early phase, which count this strategy's own evaluations.
    prior: usize,
}

impl Hybrid4 {
    /// `hybrid4`, seeded with `seed`.
    pub fn new(seed: u64) -> Hybrid4 {
        Hybrid4::with_params("hybrid4".into(), seed, Hybrid4Params::hybrid4())
    }

    /// `hybrid5` (the default strategy), seeded with `seed`.
    pub fn hybrid5(seed: u64) -> Hybrid4 {
        Hybrid4::with_params("hybrid5".into(), seed, Hybrid4Params::hybrid5())
    }

    /// `hybrid6` (the default strategy), seeded with `seed`.
    pub fn hybrid6(seed: u64) -> Hybrid4 {
        Hybrid4::with_params("hybrid6".into(), seed, Hybrid4Params::hybrid6())
    }

    /// `hybrid4` with explicit settings, registered as `name`.
    pub fn with_params(name: String, seed: u64, params: Hybrid4Params) -> Hybrid4 {
        Hybrid4 {
            name,
            base: Surrogate::with_params("hybrid4", seed, params.model),
            pack: Pack::new(params.pack),
            params,
            proposals: 0,
            global: None,
            model: None,
            prior: 0,
        }
    }

    fn next(&mut self, space: &TuningSpace, hint: usize) -> Option<Point> {
        let told = self.base.memory().results.len();
        let own = told.saturating_sub(self.prior);
        if own < self.base.params().initial {
            // With a lookahead the loop asks again before it tells: once the whole design
            // is proposed, wait for its results (the loop evaluates what it holds and asks
            // again) instead of proposing random configurations a model could choose.
            let pending = self.base.memory().pending.len();
            if pending > 0 && own + pending >= self.base.params().initial {
                return None;
            }
            let p = self.random(space)?;
            if self.params.early == 0 {
                self.pack.proposed(None, p.clone());
            }
            return Some(p);
        }
        if own < self.params.early {
            return self.model_proposal(space, hint, told);
        }
        if self.params.early > 0 && self.pack.members().is_empty() {
            let mut elite = self.base.memory().successes.clone();
            elite.sort_by(|a, b| a.1.total_cmp(&b.1));
            self.pack.seed(
                elite
                    .into_iter()
                    .take(self.params.seed_elite)
                    .map(|(p, _)| p),
            );
        }
        self.proposals += 1;
        if self.params.explore > 0 && self.proposals.is_multiple_of(self.params.explore) {
            if let Some(p) = self.random(space) {
                self.global = Some(p.clone());
                return Some(p);
            }
        }
        let every = self.params.every;
        let model_turn = every == 1 || (every > 0 && self.proposals.is_multiple_of(every));
        if self.pack.filling() {
            let p = if self.params.fill_random {
                self.random(space)
            } else {
                self.model_proposal(space, hint, told)
            }?;
            self.pack.proposed(None, p.clone());
            return Some(p);
        }
        if !model_turn {
            if let Some(p) = self.pack_proposal(space, told) {
                return Some(p);
            }
        }
        let p = self.model_proposal(space, hint, told)?;
        self.global = Some(p.clone());
        Some(p)
    }

    /// `hybrid3`'s proposal (expected improvement or a descent step), or a random one while
    /// there is no model.
    fn model_proposal(&mut self, space: &TuningSpace, hint: usize, told: usize) -> Option<Point> {
        match self.current_model(told) {
            Some((model, best)) => self
                .base
                .propose_with_model(space, &model, best, hint)
                .or_else(|| self.random(space)),
            None => self.random(space),
        }
    }

    /// A child of the next pack member: of [`Hybrid4Params::children`] children, the one the
    /// model ranks best.
    fn pack_proposal(&mut self, space: &TuningSpace, told: usize) -> Option<Point> {
        let model = if self.params.children > 1 {
            self.current_model(told).map(|(m, _)| m)
        } else {
            None
        };
        let fm = self.base.fmap();
        for _ in 0..64 {
            let (memory, rng) = self.base.parts();
            let i = self.pack.next_parent(memory, rng)?;
            let mut kids: Vec<Point> = Vec::new();
            for _ in 0..self.params.children * 2 {
                if kids.len() >= self.params.children {
                    break;
                }
                if let Some(c) = self.pack.child(space, memory, rng, i) {
                    if !kids.contains(&c) {
                        kids.push(c);
                    }
                }
            }
            if kids.is_empty() {
                self.pack.skip(i);
                continue;
            }
            let pick = match &model {
                Some(model) if kids.len() > 1 => {
                    let tree = (self.params.thompson && !model.is_empty())
                        .then(|| self.base.rng().index(model.len()));
                    kids.into_iter()
                        .map(|q| {
                            let x = fm.apply(&q);
                            let s = match tree {
                                Some(t) => model.predict_tree(t, &x),
                                None => model.predict(&x).0,
                            };
                            (s, q)
                        })
                        .min_by(|a, b| a.0.total_cmp(&b.0))
                        .map(|(_, q)| q)?
                }
                _ => kids.swap_remove(0),
            };
            self.pack.proposed(Some(i), pick.clone());
            return Some(pick);
        }
        None
    }

    /// The model, refitted when the results grew by [`Hybrid4Params::refit`] since the last
    /// fit; its best target value is kept current.
    fn current_model(&mut self, told: usize) -> Option<(Rc<ExtraTrees>, f64)> {
        let due = self.model.as_ref().is_none_or(|(_, _, at)| {
            told >= at + ((*at as f64 * self.params.refit) as usize).max(1)
        });
        if due {
            self.model = self.base.model().map(|(m, best)| (Rc::new(m), best, told));
        }
        let (m, lo, _) = self.model.as_ref()?;
        let best = match self.base.memory().best.as_ref() {
            Some((_, v)) if !self.params.model.rank_targets => lo.min(v.ln()),
            _ => *lo,
        };
        Some((Rc::clone(m), best))
    }

    fn random(&mut self, space: &TuningSpace) -> Option<Point> {
        let (memory, rng) = self.base.parts();
        memory.random_unvisited(space, rng)
    }
}

impl Strategy for Hybrid4 {
    fn name(&self) -> &str {
        &self.name
    }

    fn ask(&mut self, space: &TuningSpace, hint: usize) -> Vec<Point> {
        self.base.prepare(space);
        self.next(space, hint)
            .map(|p| vec![self.base.propose(p)])
            .unwrap_or_default()
    }

    fn tell(&mut self, space: &TuningSpace, point: &Point, result: &EvalResult) {
        self.base.tell(space, point, result);
        if self.global.as_ref() == Some(point) {
            self.global = None;
            if self.params.inject {
                self.pack.inject(self.base.memory(), point);
            }
        }
        let (memory, rng) = self.base.parts();
        self.pack.told(memory, rng, point);
    }

    fn initial_design(&self) -> usize {
        self.base.params().initial
    }

    fn set_prior_scores(&mut self, scores: crate::strategy::PriorScores) {
        self.base.set_prior_scores(scores);
    }

    fn tell_prior(&mut self, space: &TuningSpace, point: &Point, result: &EvalResult) {
        if !self.base.memory().results.contains_key(point) {
            self.prior += 1;
        }
        self.tell(space, point, result);
    }

    fn anytime(&self) -> bool {
        true
    }
}
