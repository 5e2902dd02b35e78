//! `random`: uniform sampling without replacement (the baseline).

use super::common::Memory;
use crate::evaluator::EvalResult;
use crate::strategy::Strategy;
use kw_core::rng::Rng;
use kw_core::{space::Point, space::TuningSpace};

/// Proposes uniformly random unvisited configurations.
#[derive(Debug)]
pub struct RandomSearch {
    rng: Rng,
    memory: Memory,
}

impl RandomSearch {
    /// A random search seeded with `seed`.
    pub fn new(seed: u64) -> RandomSearch {
        RandomSearch {
            rng: Rng::new(seed),
            memory: Memory::default(),
        }
    }
}

impl Strategy for RandomSearch {
    fn name(&self) -> &str {
        "random"
    }

    fn ask(&mut self, space: &TuningSpace, hint: usize) -> Vec<Point> {
        let mut out = Vec::new();
        for _ in 0..hint.min(64) {
            match self.memory.random_unvisited(space, &mut self.rng) {
                Some(p) => out.push(self.memory.propose(p)),
                None => break,
            }
        }
        out
    }

    fn tell(&mut self, _space: &TuningSpace, point: &Point, result: &EvalResult) {
        self.memory.tell(point, result);
    }
}
