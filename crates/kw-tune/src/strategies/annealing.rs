//! `annealing`: simulated annealing over Hamming neighbourhoods, with the Metropolis rule on
//! log-objective differences, geometric cooling and restarts from the best when stuck.

use super::common::Memory;
use crate::evaluator::EvalResult;
use crate::strategy::Strategy;
use kw_core::rng::Rng;
use kw_core::space::Neighbourhood;
use kw_core::{space::Point, space::TuningSpace};

const T_START: f64 = 0.5;
const T_MIN: f64 = 0.005;
const COOLING: f64 = 0.97;
const STUCK: u32 = 25;

/// Simulated annealing. A failed neighbour is never accepted.
#[derive(Debug)]
pub struct Annealing {
    rng: Rng,
    memory: Memory,
    current: Option<(Point, f64)>,
    temperature: f64,
    since_improvement: u32,
}

impl Annealing {
    /// Simulated annealing seeded with `seed`.
    pub fn new(seed: u64) -> Annealing {
        Annealing {
            rng: Rng::new(seed),
            memory: Memory::default(),
            current: None,
            temperature: T_START,
            since_improvement: 0,
        }
    }
}

impl Strategy for Annealing {
    fn name(&self) -> &str {
        "annealing"
    }

    fn ask(&mut self, space: &TuningSpace, _hint: usize) -> Vec<Point> {
        if self.since_improvement >= STUCK {
            // Restart: reheat and continue from the best point found.
            self.since_improvement = 0;
            self.temperature = T_START;
            self.current = self.memory.best.clone();
        }
        let mut next = None;
        // Every neighbour of the current point may be known: then walk on through known,
        // successful neighbours (free) for a while before jumping somewhere random.
        for _ in 0..32 {
            let Some((p, _)) = &self.current else { break };
            let n = self
                .memory
                .unvisited_neighbours(space, p, Neighbourhood::Hamming);
            if !n.is_empty() {
                next = Some(n[self.rng.index(n.len())].clone());
                break;
            }
            let known: Vec<Point> = space
                .neighbours(p, Neighbourhood::Hamming)
                .into_iter()
                .filter(|q| self.memory.cost(q).is_finite())
                .collect();
            if known.is_empty() {
                break;
            }
            let q = known[self.rng.index(known.len())].clone();
            let c = self.memory.cost(&q);
            self.current = Some((q, c));
        }
        if next.is_none() {
            next = self.memory.random_unvisited(space, &mut self.rng);
        }
        next.map(|p| vec![self.memory.propose(p)])
            .unwrap_or_default()
    }

    fn tell(&mut self, _space: &TuningSpace, point: &Point, result: &EvalResult) {
        if self.memory.tell(point, result) {
            self.since_improvement = 0;
        } else {
            self.since_improvement += 1;
        }
        let Ok(v) = result else { return };
        let accept = match &self.current {
            None => true,
            Some((_, cur)) => {
                let delta = v.ln() - cur.ln();
                delta <= 0.0 || self.rng.chance((-delta / self.temperature).exp())
            }
        };
        if accept {
            self.current = Some((point.clone(), *v));
        }
        self.temperature = (self.temperature * COOLING).max(T_MIN);
    }
}
