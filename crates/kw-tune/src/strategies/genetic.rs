//! `genetic`: a steady (μ+λ) genetic algorithm on value indices: tournament selection,
//! uniform crossover, per-gene mutation, children repaired to the nearest valid configuration.

use super::common::{repair, Memory};
use crate::evaluator::EvalResult;
use crate::strategy::Strategy;
use kw_core::rng::Rng;
use kw_core::space::Neighbourhood;
use kw_core::{space::Point, space::TuningSpace};

const POPULATION: usize = 20;
const TOURNAMENT: usize = 3;

/// A genetic algorithm. Failed configurations rank last, so they die out.
#[derive(Debug)]
pub struct Genetic {
    rng: Rng,
    memory: Memory,
    population: Vec<Point>,
    generation: Vec<Point>,
}

impl Genetic {
    /// A genetic algorithm seeded with `seed`.
    pub fn new(seed: u64) -> Genetic {
        Genetic {
            rng: Rng::new(seed),
            memory: Memory::default(),
            population: Vec::new(),
            generation: Vec::new(),
        }
    }

    fn select(&mut self) -> Point {
        let mut best: Option<&Point> = None;
        for _ in 0..TOURNAMENT {
            let c = &self.population[self.rng.index(self.population.len())];
            if best.is_none_or(|b| self.memory.cost(c) < self.memory.cost(b)) {
                best = Some(c);
            }
        }
        best.cloned().unwrap_or_default()
    }

    fn child(&mut self, space: &TuningSpace) -> Option<Point> {
        let a = self.select();
        let b = self.select();
        let n = a.len();
        let mut c: Point = (0..n)
            .map(|k| if self.rng.chance(0.5) { a[k] } else { b[k] })
            .collect();
        for (k, gene) in c.iter_mut().enumerate() {
            let values = space.params()[k].values.len() as u32;
            if values > 1 && self.rng.chance(1.0 / n as f64) {
                *gene = self.rng.below(values as u64) as u32;
            }
        }
        let mut c = repair(space, &c, &mut self.rng)?;
        for _ in 0..8 {
            if !self.memory.seen(&c) {
                return Some(c);
            }
            let next = self
                .memory
                .unvisited_neighbours(space, &c, Neighbourhood::Hamming);
            if !next.is_empty() {
                return Some(next[self.rng.index(next.len())].clone());
            }
            let all = space.neighbours(&c, Neighbourhood::Hamming);
            if all.is_empty() {
                break;
            }
            c = all[self.rng.index(all.len())].clone();
        }
        self.memory.random_unvisited(space, &mut self.rng)
    }

    /// Survivors: the best distinct points among the population and the evaluated generation.
    fn select_survivors(&mut self) {
        let mut pool: Vec<Point> = self.population.drain(..).collect();
        pool.extend(
            self.generation
                .drain(..)
                .filter(|p| self.memory.get(p).is_some()),
        );
        pool.sort_by(|a, b| self.memory.cost(a).total_cmp(&self.memory.cost(b)));
        pool.dedup();
        pool.truncate(POPULATION);
        self.population = pool;
    }
}

impl Strategy for Genetic {
    fn name(&self) -> &str {
        "genetic"
    }

    fn ask(&mut self, space: &TuningSpace, _hint: usize) -> Vec<Point> {
        let untold: Vec<Point> = self
            .generation
            .iter()
            .filter(|p| self.memory.get(p).is_none())
            .cloned()
            .collect();
        if !untold.is_empty() {
            for p in &untold {
                self.memory.propose(p.clone());
            }
            return untold;
        }
        if self.population.is_empty() && self.generation.is_empty() {
            // Initial population: random configurations.
            let mut init = Vec::new();
            for _ in 0..POPULATION {
                if let Some(p) = self.memory.random_unvisited(space, &mut self.rng) {
                    init.push(self.memory.propose(p));
                }
            }
            self.generation = init.clone();
            return init;
        }
        self.select_survivors();
        if self.population.is_empty() {
            return Vec::new();
        }
        let mut children = Vec::new();
        for _ in 0..POPULATION {
            if let Some(c) = self.child(space) {
                children.push(self.memory.propose(c));
            }
        }
        self.generation = children.clone();
        children
    }

    fn tell(&mut self, _space: &TuningSpace, point: &Point, result: &EvalResult) {
        self.memory.tell(point, result);
        if !self.generation.contains(point) && !self.population.contains(point) {
            // A result we did not ask for (a resumed log): let it compete.
            self.population.push(point.clone());
        }
    }
}
