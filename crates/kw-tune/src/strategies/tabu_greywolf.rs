//! `tabu_greywolf`: our implementation of the idea of Kernel Tuner's `adaptive_tabu_greywolf`
//! (the peer's best strategy on the shared spaces), so that it is in every table without
//! Python. A pack of 8 configurations ([`super::pack`]): 8 random ones first, then from the
//! 9th evaluation on, children of the members built from the 3 best, accepted by a rank-based
//! annealing test, with a tabu on everything evaluated and restarts when the best stalls.
//! It ignores the budget, so more budget only extends the run.

use super::common::Memory;
use super::pack::{Pack, PackParams};
use crate::evaluator::EvalResult;
use crate::strategy::Strategy;
use kw_core::rng::Rng;
use kw_core::{space::Point, space::TuningSpace};

/// The tabu grey-wolf pack search.
#[derive(Debug)]
pub struct TabuGreyWolf {
    rng: Rng,
    memory: Memory,
    pack: Pack,
}

impl TabuGreyWolf {
    /// `tabu_greywolf` seeded with `seed`.
    pub fn new(seed: u64) -> TabuGreyWolf {
        TabuGreyWolf::with_params(seed, PackParams::greywolf())
    }

    /// The pack search with explicit settings.
    pub fn with_params(seed: u64, params: PackParams) -> TabuGreyWolf {
        TabuGreyWolf {
            rng: Rng::new(seed),
            memory: Memory::default(),
            pack: Pack::new(params),
        }
    }

    fn next(&mut self, space: &TuningSpace) -> Option<Point> {
        // A bounded number of tries: in a nearly exhausted space children may all be seen.
        for _ in 0..64 {
            if self.pack.filling() {
                break;
            }
            let Some(i) = self.pack.next_parent(&self.memory, &mut self.rng) else {
                break;
            };
            match self.pack.child(space, &self.memory, &mut self.rng, i) {
                Some(c) => {
                    self.pack.proposed(Some(i), c.clone());
                    return Some(c);
                }
                None => self.pack.skip(i),
            }
        }
        let p = self.memory.random_unvisited(space, &mut self.rng)?;
        self.pack.proposed(None, p.clone());
        Some(p)
    }
}

impl Strategy for TabuGreyWolf {
    fn name(&self) -> &str {
        "tabu_greywolf"
    }

    fn ask(&mut self, space: &TuningSpace, _hint: usize) -> Vec<Point> {
        self.memory.begin_ask();
        self.next(space)
            .map(|p| vec![self.memory.propose(p)])
            .unwrap_or_default()
    }

    fn tell(&mut self, _space: &TuningSpace, point: &Point, result: &EvalResult) {
        self.memory.tell(point, result);
        self.pack.told(&self.memory, &mut self.rng, point);
    }

    fn anytime(&self) -> bool {
        true
    }
}
