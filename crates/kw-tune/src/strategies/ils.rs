//! `ils`: iterated local search. First-improvement descent (adjacent values first, then any
//! value of one parameter), and at a local optimum a random perturbation of the best local
//! optimum, accepted when the descent from it finds something better.

use super::common::{random_walk, Memory};
use crate::evaluator::EvalResult;
use crate::strategy::Strategy;
use kw_core::rng::Rng;
use kw_core::space::Neighbourhood;
use kw_core::{space::Point, space::TuningSpace};

const PERTURB_STEPS: usize = 3;

/// Iterated local search.
#[derive(Debug)]
pub struct IteratedLocalSearch {
    rng: Rng,
    memory: Memory,
    /// The point the descent is at.
    current: Option<Point>,
    /// The last perturbation proposed (the descent restarts there).
    perturbation: Option<Point>,
}

impl IteratedLocalSearch {
    /// Iterated local search seeded with `seed`.
    pub fn new(seed: u64) -> IteratedLocalSearch {
        IteratedLocalSearch {
            rng: Rng::new(seed),
            memory: Memory::default(),
            current: None,
            perturbation: None,
        }
    }

    fn unvisited(&mut self, space: &TuningSpace, p: &Point) -> Option<Point> {
        for kind in [Neighbourhood::Adjacent, Neighbourhood::Hamming] {
            let n = self.memory.unvisited_neighbours(space, p, kind);
            if !n.is_empty() {
                return Some(n[self.rng.index(n.len())].clone());
            }
        }
        None
    }
}

impl Strategy for IteratedLocalSearch {
    fn name(&self) -> &str {
        "ils"
    }

    fn ask(&mut self, space: &TuningSpace, _hint: usize) -> Vec<Point> {
        let mut next = None;
        if let Some(cur) = self.current.clone() {
            next = self.unvisited(space, &cur);
            if next.is_none() {
                // Local optimum: perturb the best point and descend from there.
                if let Some((best, _)) = self.memory.best.clone() {
                    for _ in 0..16 {
                        let q = random_walk(space, &best, PERTURB_STEPS, &mut self.rng);
                        if !self.memory.seen(&q) {
                            self.perturbation = Some(q.clone());
                            next = Some(q);
                            break;
                        }
                        if let Some(n) = self.unvisited(space, &q) {
                            next = Some(n);
                            break;
                        }
                    }
                }
            }
        }
        let next = next.or_else(|| self.memory.random_unvisited(space, &mut self.rng));
        next.map(|p| vec![self.memory.propose(p)])
            .unwrap_or_default()
    }

    fn tell(&mut self, _space: &TuningSpace, point: &Point, result: &EvalResult) {
        self.memory.tell(point, result);
        let better = match &self.current {
            None => result.is_ok(),
            Some(cur) => result.as_ref().is_ok_and(|v| *v < self.memory.cost(cur)),
        };
        let perturbed = result.is_ok() && self.perturbation.as_ref() == Some(point);
        if perturbed {
            self.perturbation = None;
        }
        if better || perturbed {
            self.current = Some(point.clone());
        }
    }
}
