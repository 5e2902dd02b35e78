//! `tabu_greywolf`: Kernel Tuner's `adaptive_tabu_greywolf` (ATGW; Willemsen, van Stein,
//! van Werkhoven, "Automated Algorithm Design for Auto-Tuning Optimizers", 2025), rendered
//! faithfully so that the peer is in every table without Python. Written from its published
//! description and source (Apache-2.0); no code is copied.
//!
//! - A pack of 8 random configurations. Each generation, the 3 best (alpha, beta, delta)
//!   survive; every other member gets one child that takes each parameter from alpha, beta,
//!   delta or itself (uniformly). With probability `0.2 (1 + s/80)` (at most 0.5; `s` the
//!   generations without a new best) the child is shaken: 15% of the time one parameter gets
//!   the value of a random configuration, else it moves to a random neighbour (every
//!   parameter at most one value away). It is repaired to a valid neighbour (else a random
//!   configuration), and when it is among the last 24 evaluated (the tabu list) it moves to a
//!   random Hamming neighbour.
//! - A child replaces its parent when not worse, or by the Metropolis test on the *objective
//!   values* (`exp(-(child - parent) / T)`), `T = max(1e-4, exp(-5 c / 5000))` with `c` the
//!   evaluations asked for so far (revisits included), plus 0.2 every 40 stagnant generations.
//!   A failure is the largest finite value.
//! - After 80 generations without a new best, the 3 worst members are replaced by random
//!   configurations.
//!
//! Like the original, children may be configurations evaluated before: those are answered
//! from the run's cache, for free (Kernel Tuner's budget counts distinct configurations too).
//! Where Kernel Tuner ends the run (5000 proposals, which a small space can take without
//! reaching the budget), this one goes on with random unvisited configurations. The budget is never read (it only scales Kernel
//! Tuner's temperature through its fixed `budget` option of 5000), so a longer run is the
//! shorter one continued.

use super::common::Memory;
use crate::evaluator::EvalResult;
use crate::strategy::Strategy;
use kw_core::rng::Rng;
use kw_core::space::Neighbourhood;
use kw_core::{space::Point, space::TuningSpace};
use std::collections::VecDeque;

const PACK: usize = 8;
const LEADERS: usize = 3;
const TABU: usize = PACK * 3;
const SHAKE: f64 = 0.2;
const JUMP: f64 = 0.15;
const STAGNATION: usize = 80;
/// `ceil(8 * 0.3)` members replaced at a restart.
const RESTART: usize = 3;
const T_DECAY: f64 = 5.0;
const T_MIN: f64 = 1e-4;
/// Kernel Tuner's `budget` option: evaluations asked for before the run ends.
const CALLS: usize = 5000;

/// What the proposal awaiting its result is.
#[derive(Clone, Debug)]
enum Pending {
    /// A new member (initial pack, restart).
    Member(Point),
    /// The child of the generation's current member.
    Child(Point),
}

/// One generation in progress.
#[derive(Clone, Debug)]
struct Generation {
    /// The pack at its start, best first.
    order: Vec<(Point, f64)>,
    /// The member whose turn it is.
    at: usize,
    /// The next pack.
    next: Vec<(Point, f64)>,
    temperature: f64,
    shake: f64,
}

/// The adaptive tabu grey-wolf pack search.
#[derive(Debug)]
pub struct TabuGreyWolf {
    rng: Rng,
    pack: Vec<(Point, f64)>,
    tabu: VecDeque<Point>,
    generation: Option<Generation>,
    pending: Option<Pending>,
    calls: usize,
    best: f64,
    stagnant: usize,
    /// Every configuration told (for the random configurations after [`CALLS`] proposals).
    memory: Memory,
}

impl TabuGreyWolf {
    /// `tabu_greywolf` seeded with `seed`.
    pub fn new(seed: u64) -> TabuGreyWolf {
        TabuGreyWolf {
            rng: Rng::new(seed),
            pack: Vec::new(),
            tabu: VecDeque::new(),
            generation: None,
            pending: None,
            calls: 0,
            best: f64::INFINITY,
            stagnant: 0,
            memory: Memory::default(),
        }
    }

    fn next(&mut self, space: &TuningSpace) -> Option<Pending> {
        if self.calls >= CALLS {
            return self
                .memory
                .random_unvisited(space, &mut self.rng)
                .map(Pending::Member);
        }
        if let Some(p) = &self.pending {
            return Some(p.clone()); // proposed but not told (dropped): ask again
        }
        if self.pack.len() < PACK {
            return space.sample(&mut self.rng).map(Pending::Member);
        }
        loop {
            let generation = match &mut self.generation {
                Some(g) => g,
                None => {
                    let g = self.start_generation();
                    self.generation.insert(g)
                }
            };
            let leaders: Vec<Point> = generation.order[..LEADERS.min(generation.order.len())]
                .iter()
                .map(|(p, _)| p.clone())
                .collect();
            while generation.at < generation.order.len()
                && leaders.contains(&generation.order[generation.at].0)
            {
                generation
                    .next
                    .push(generation.order[generation.at].clone());
                generation.at += 1;
            }
            if generation.at < generation.order.len() {
                let (parent, shake) = (generation.order[generation.at].0.clone(), generation.shake);
                let child = self.child(space, &leaders, &parent, shake);
                return Some(Pending::Child(child));
            }
            self.end_generation();
            if self.pack.len() < PACK {
                return space.sample(&mut self.rng).map(Pending::Member);
            }
        }
    }

    fn start_generation(&mut self) -> Generation {
        let frac = self.calls as f64 / CALLS as f64;
        let mut temperature = (-T_DECAY * frac).exp().max(T_MIN);
        if self.stagnant > 0 && self.stagnant.is_multiple_of((STAGNATION / 2).max(1)) {
            temperature += 0.2;
        }
        let shake = (SHAKE * (1.0 + self.stagnant as f64 / STAGNATION as f64)).min(0.5);
        self.pack.sort_by(|a, b| a.1.total_cmp(&b.1));
        Generation {
            order: self.pack.clone(),
            at: 0,
            next: Vec::new(),
            temperature,
            shake,
        }
    }

    fn end_generation(&mut self) {
        let Some(g) = self.generation.take() else {
            return;
        };
        self.pack = g.next;
        self.pack.sort_by(|a, b| a.1.total_cmp(&b.1));
        if self.pack[0].1 < self.best {
            self.best = self.pack[0].1;
            self.stagnant = 0;
        } else {
            self.stagnant += 1;
        }
        if self.stagnant >= STAGNATION {
            self.pack.truncate(PACK - RESTART); // refilled by random members
        }
    }

    fn child(
        &mut self,
        space: &TuningSpace,
        leaders: &[Point],
        parent: &Point,
        shake: f64,
    ) -> Point {
        let rng = &mut self.rng;
        let mut child: Point = (0..parent.len())
            .map(|i| {
                let pick = rng.index(leaders.len() + 1);
                leaders.get(pick).unwrap_or(parent)[i]
            })
            .collect();
        if rng.chance(shake) {
            if rng.chance(JUMP) {
                let i = rng.index(child.len());
                if let Some(r) = space.sample(rng) {
                    child[i] = r[i];
                }
            } else if let Some(n) = adjacent_neighbour(space, &child, rng) {
                child = n;
            }
        }
        if !space.contains(&child) {
            child = adjacent_neighbour(space, &child, rng)
                .or_else(|| {
                    space
                        .neighbours(&child, Neighbourhood::Hamming)
                        .into_iter()
                        .next()
                })
                .or_else(|| space.sample(rng))
                .unwrap_or(child);
        }
        if self.tabu.contains(&child) {
            let n = space.neighbours(&child, Neighbourhood::Hamming);
            if !n.is_empty() {
                child = n[rng.index(n.len())].clone();
            }
        }
        child
    }
}

/// A random valid configuration with every parameter at most one value away from `point`'s
/// (at least one different), by rejection; `None` when 64 tries found none.
fn adjacent_neighbour(space: &TuningSpace, point: &Point, rng: &mut Rng) -> Option<Point> {
    for _ in 0..64 {
        let mut q = point.clone();
        for (k, v) in q.iter_mut().enumerate() {
            let n = space.params()[k].values.len() as u32;
            let lo = v.saturating_sub(1);
            let hi = (*v + 1).min(n.saturating_sub(1));
            *v = lo + rng.index((hi - lo + 1) as usize) as u32;
        }
        if q != *point && space.contains(&q) {
            return Some(q);
        }
    }
    None
}

impl Strategy for TabuGreyWolf {
    fn name(&self) -> &str {
        "tabu_greywolf"
    }

    fn ask(&mut self, space: &TuningSpace, _hint: usize) -> Vec<Point> {
        let Some(p) = self.next(space) else {
            return Vec::new();
        };
        let point = match &p {
            Pending::Member(q) | Pending::Child(q) => q.clone(),
        };
        self.pending = Some(p);
        vec![point]
    }

    fn tell(&mut self, _space: &TuningSpace, point: &Point, result: &EvalResult) {
        self.memory.tell(point, result);
        let matches = match &self.pending {
            Some(Pending::Member(q)) | Some(Pending::Child(q)) => q == point,
            None => false,
        };
        if !matches {
            return; // a result it did not ask for (a resumed run's log): not part of the pack
        }
        let value = result.as_ref().ok().copied().unwrap_or(f64::MAX);
        self.calls += 1;
        if self.tabu.len() == TABU {
            self.tabu.pop_front();
        }
        self.tabu.push_back(point.clone());
        match self.pending.take() {
            Some(Pending::Member(_)) if self.pack.len() >= PACK => {} // after CALLS
            Some(Pending::Member(p)) => {
                self.pack.push((p, value));
                if self.pack.len() == PACK {
                    self.pack.sort_by(|a, b| a.1.total_cmp(&b.1));
                    self.best = self.pack[0].1;
                    self.stagnant = 0;
                }
            }
            Some(Pending::Child(p)) => {
                let Some(g) = &mut self.generation else {
                    return;
                };
                let (parent, old) = g.order[g.at].clone();
                let delta = value - old;
                let accept = delta <= 0.0 || self.rng.chance((-delta / g.temperature).exp());
                g.next.push(if accept { (p, value) } else { (parent, old) });
                g.at += 1;
            }
            None => {}
        }
    }

    fn anytime(&self) -> bool {
        true
    }
}
