//! `pso`: particle swarm optimisation in the space of value indices. Positions are rounded to
//! the nearest value indices and repaired to the nearest valid configuration; a particle whose
//! rounded position was already evaluated steps to an unvisited neighbour.

use super::common::{repair, Memory};
use crate::evaluator::EvalResult;
use crate::strategy::Strategy;
use kw_core::rng::Rng;
use kw_core::space::Neighbourhood;
use kw_core::{space::Point, space::TuningSpace};

const PARTICLES: usize = 10;
const INERTIA: f64 = 0.5;
const C_PERSONAL: f64 = 1.5;
const C_SOCIAL: f64 = 1.5;

#[derive(Clone, Debug)]
struct Particle {
    position: Vec<f64>,
    velocity: Vec<f64>,
    best: Option<(Point, f64)>,
    /// The point proposed for this particle's current move.
    proposed: Option<Point>,
}

/// Particle swarm optimisation. Failed configurations never become a personal or global best.
#[derive(Debug)]
pub struct ParticleSwarm {
    rng: Rng,
    memory: Memory,
    swarm: Vec<Particle>,
}

impl ParticleSwarm {
    /// A particle swarm seeded with `seed`.
    pub fn new(seed: u64) -> ParticleSwarm {
        ParticleSwarm {
            rng: Rng::new(seed),
            memory: Memory::default(),
            swarm: Vec::new(),
        }
    }

    fn place(&mut self, space: &TuningSpace, target: &Point) -> Option<Point> {
        let p = repair(space, target, &mut self.rng)?;
        if !self.memory.seen(&p) {
            return Some(p);
        }
        let n = self
            .memory
            .unvisited_neighbours(space, &p, Neighbourhood::Hamming);
        if !n.is_empty() {
            return Some(n[self.rng.index(n.len())].clone());
        }
        self.memory.random_unvisited(space, &mut self.rng)
    }
}

impl Strategy for ParticleSwarm {
    fn name(&self) -> &str {
        "pso"
    }

    fn ask(&mut self, space: &TuningSpace, _hint: usize) -> Vec<Point> {
        let sizes: Vec<f64> = space
            .params()
            .iter()
            .map(|p| p.values.len() as f64)
            .collect();
        if self.swarm.is_empty() {
            for _ in 0..PARTICLES {
                let Some(p) = self.memory.random_unvisited(space, &mut self.rng) else {
                    break;
                };
                let velocity = sizes
                    .iter()
                    .map(|s| (self.rng.f64() - 0.5) * s * 0.5)
                    .collect();
                self.swarm.push(Particle {
                    position: p.iter().map(|&v| v as f64).collect(),
                    velocity,
                    best: None,
                    proposed: Some(self.memory.propose(p)),
                });
            }
            return self
                .swarm
                .iter()
                .filter_map(|p| p.proposed.clone())
                .collect();
        }
        let global = self.memory.best.clone();
        let mut out = Vec::new();
        for i in 0..self.swarm.len() {
            if let Some(p) = &self.swarm[i].proposed {
                if self.memory.get(p).is_none() {
                    // Not told (dropped): propose it again.
                    out.push(self.memory.propose(p.clone()));
                    continue;
                }
            }
            let mut part = self.swarm[i].clone();
            let pbest = part.best.as_ref().map(|(p, _)| p.clone());
            for k in 0..sizes.len() {
                let r1 = self.rng.f64();
                let r2 = self.rng.f64();
                let x = part.position[k];
                let pb = pbest.as_ref().map_or(x, |p| p[k] as f64);
                let gb = global.as_ref().map_or(x, |(p, _)| p[k] as f64);
                let v = INERTIA * part.velocity[k]
                    + C_PERSONAL * r1 * (pb - x)
                    + C_SOCIAL * r2 * (gb - x);
                let vmax = (sizes[k] / 2.0).max(1.0);
                part.velocity[k] = v.clamp(-vmax, vmax);
                part.position[k] = (x + part.velocity[k]).clamp(0.0, sizes[k] - 1.0);
            }
            let target: Point = part.position.iter().map(|x| x.round() as u32).collect();
            part.proposed = self.place(space, &target);
            if let Some(p) = &part.proposed {
                // The particle is where its configuration is.
                part.position = p.iter().map(|&v| v as f64).collect();
                out.push(self.memory.propose(p.clone()));
            }
            self.swarm[i] = part;
        }
        out
    }

    fn tell(&mut self, _space: &TuningSpace, point: &Point, result: &EvalResult) {
        self.memory.tell(point, result);
        let Ok(v) = result else { return };
        for part in &mut self.swarm {
            if part.proposed.as_ref() == Some(point)
                && part.best.as_ref().is_none_or(|(_, b)| v < b)
            {
                part.best = Some((point.clone(), *v));
            }
        }
    }
}
