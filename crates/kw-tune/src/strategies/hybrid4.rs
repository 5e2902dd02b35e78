//! `hybrid4`: a pack search ([`super::pack`], the idea of `tabu_greywolf`) whose children are
//! screened by the extra-trees model of `hybrid3`, interleaved with `hybrid3`'s model-based
//! proposals (expected-improvement picks and the model-guided descent, without the endgame).
//!
//! - The first configurations are random; the model then picks the pack's members.
//! - A pack proposal makes several children of the next member and proposes the one the
//!   model ranks best (one tree of the forest drawn at random per proposal, i.e. Thompson
//!   sampling, so that the picks spread where the trees disagree): the pack keeps the search
//!   near the good configurations found so far, the model discards the children it expects
//!   to be slow.
//! - Every other proposal is `hybrid3`'s (global expected improvement or descent step); a
//!   good configuration it finds replaces the pack's worst member.
//! - The pack restarts (all members but the best replaced by model picks) when its best has
//!   not improved for some generations, so more budget keeps buying new regions.
//! - Nothing depends on the budget (no endgame): a longer run is the shorter one continued.
//!
//! Settings can be given in the name for experiments, e.g. `hybrid4:children=8:every=3`
//! (see [`Hybrid4Params::set`]).

use super::pack::{Pack, PackParams};
use super::surrogate::{Surrogate, SurrogateParams};
use crate::evaluator::EvalResult;
use crate::strategy::Strategy;
use kw_core::{Point, TuningSpace};

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
}

impl Hybrid4Params {
    /// The settings of `hybrid4`.
    pub fn hybrid4() -> Hybrid4Params {
        Hybrid4Params {
            model: SurrogateParams {
                endgame: 0.0,
                ..SurrogateParams::hybrid3()
            },
            pack: PackParams::greywolf(),
            children: 16,
            every: 2,
            thompson: true,
            inject: true,
        }
    }

    /// Sets `key` to `value` (for experiments): `children`, `every`, `thompson` (0/1),
    /// `inject` (0/1), `rank` (0/1: rank targets), `size`, `leaders`, `nudge`, `t0`,
    /// `cooling`, `stagnation`, `initial`, `candidates`.
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
            "rank" => self.model.rank_targets = u()? != 0,
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
}

impl Hybrid4 {
    /// `hybrid4`, seeded with `seed`.
    pub fn new(seed: u64) -> Hybrid4 {
        Hybrid4::with_params("hybrid4".into(), seed, Hybrid4Params::hybrid4())
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
        }
    }

    fn next(&mut self, space: &TuningSpace, hint: usize) -> Option<Point> {
        if self.base.memory().results.len() < self.base.params().initial {
            let p = self.random(space)?;
            self.pack.proposed(None, p.clone());
            return Some(p);
        }
        let Some((model, best)) = self.base.model() else {
            let p = self.random(space)?;
            self.pack.proposed(None, p.clone());
            return Some(p);
        };
        self.proposals += 1;
        let every = self.params.every;
        let model_turn = every == 1 || (every > 0 && self.proposals.is_multiple_of(every));
        if !model_turn && !self.pack.filling() {
            let fm = self.base.fmap();
            for _ in 0..64 {
                let (memory, rng) = self.base.parts();
                let Some(i) = self.pack.next_parent(memory, rng) else {
                    break;
                };
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
                let tree = (self.params.thompson && !model.is_empty())
                    .then(|| self.base.rng().index(model.len()));
                let pick = kids
                    .into_iter()
                    .map(|q| {
                        let x = fm.apply(&q);
                        let s = match tree {
                            Some(t) => model.predict_tree(t, &x),
                            None => model.predict(&x).0,
                        };
                        (s, q)
                    })
                    .min_by(|a, b| a.0.total_cmp(&b.0))
                    .map(|(_, q)| q)?;
                self.pack.proposed(Some(i), pick.clone());
                return Some(pick);
            }
        }
        let p = self
            .base
            .propose_with_model(space, &model, best, hint)
            .or_else(|| self.random(space))?;
        if self.pack.filling() {
            self.pack.proposed(None, p.clone());
        } else {
            self.global = Some(p.clone());
        }
        Some(p)
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

    fn anytime(&self) -> bool {
        true
    }
}
