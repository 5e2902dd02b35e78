//! The population core of `hybrid4` and `hybrid5`: a small pack of evaluated
//! configurations whose few best lead. Each generation, every other member gets a child that
//! takes each parameter from one of the leaders or from the member itself, sometimes nudged
//! to an adjacent value, repaired to the nearest valid configuration and kicked one parameter
//! away when it was evaluated already (a tabu on everything seen). The child replaces its
//! parent when it is better, or by a simulated-annealing test on the *ranks* of the two among
//! all results (order only: the scale of the times, slow tails and failures do not matter).
//! When the best has not improved for a number of generations the pack restarts: all but the
//! best member are replaced by new configurations.
//!
//! The idea is that of Kernel Tuner's `adaptive_tabu_greywolf`, loosely: rank-based
//! acceptance, a tabu on everything seen and full restarts are this pack's own (the faithful
//! rendering is `tabu_greywolf`, [`super::tabu_greywolf`]).

use super::common::{repair, Memory};
use kw_core::rng::Rng;
use kw_core::space::Neighbourhood;
use kw_core::{space::Point, space::TuningSpace};

/// Settings of the pack.
#[derive(Clone, Copy, Debug)]
pub struct PackParams {
    /// Members.
    pub size: usize,
    /// Leaders (the best members), whose values children take.
    pub leaders: usize,
    /// Probability that a child's parameter is nudged to an adjacent value.
    pub nudge: f64,
    /// Initial temperature of the rank-based acceptance test (rank differences are in 0..1).
    pub t0: f64,
    /// Temperature factor per generation.
    pub cooling: f64,
    /// Generations without a new best before the pack restarts (0: never).
    pub stagnation: usize,
}

impl PackParams {
    /// The settings `hybrid4` uses.
    pub fn greywolf() -> PackParams {
        PackParams {
            size: 8,
            leaders: 3,
            nudge: 0.1,
            t0: 0.1,
            cooling: 0.95,
            stagnation: 12,
        }
    }
}

/// The pack's state.
#[derive(Clone, Debug)]
pub struct Pack {
    params: PackParams,
    members: Vec<Point>,
    leaders: Vec<Point>,
    /// Members still to get a child this generation.
    queue: Vec<usize>,
    /// The proposal awaiting its result: the member it is a child of (`None`: a new member).
    pending: Option<(Option<usize>, Point)>,
    temperature: f64,
    best: f64,
    stale: usize,
    /// Restarts so far.
    pub restarts: usize,
}

impl Pack {
    /// An empty pack.
    pub fn new(params: PackParams) -> Pack {
        Pack {
            params,
            members: Vec::new(),
            leaders: Vec::new(),
            queue: Vec::new(),
            pending: None,
            temperature: params.t0,
            best: f64::INFINITY,
            stale: 0,
            restarts: 0,
        }
    }

    /// True while the pack is (re)filling: the next proposal should be a new member.
    pub fn filling(&self) -> bool {
        self.members.len() < self.params.size
    }

    /// Fills the pack with evaluated configurations (e.g. the best found so far), up to its size.
    pub fn seed(&mut self, points: impl IntoIterator<Item = Point>) {
        for p in points {
            if !self.filling() {
                break;
            }
            if !self.members.contains(&p) {
                self.members.push(p);
            }
        }
    }

    /// The members (evaluated configurations).
    pub fn members(&self) -> &[Point] {
        &self.members
    }

    /// Starts the next generation when the current one is done; returns the member whose
    /// child is to be proposed next.
    pub fn next_parent(&mut self, memory: &Memory, rng: &mut Rng) -> Option<usize> {
        if self.members.is_empty() {
            return None;
        }
        if self.queue.is_empty() {
            self.new_generation(memory, rng);
            if self.filling() {
                return None;
            }
        }
        self.queue.last().copied()
    }

    fn new_generation(&mut self, memory: &Memory, rng: &mut Rng) {
        let mut order: Vec<usize> = (0..self.members.len()).collect();
        order.sort_by(|&a, &b| {
            memory
                .cost(&self.members[a])
                .total_cmp(&memory.cost(&self.members[b]))
        });
        let best = memory.cost(&self.members[order[0]]);
        if best < self.best {
            self.best = best;
            self.stale = 0;
        } else {
            self.stale += 1;
        }
        if self.params.stagnation > 0 && self.stale >= self.params.stagnation {
            // Restart: keep the best member only; the caller refills the pack.
            self.members = vec![self.members[order[0]].clone()];
            self.leaders.clear();
            self.queue.clear();
            self.stale = 0;
            self.temperature = self.params.t0;
            self.restarts += 1;
            return;
        }
        let leaders = self.params.leaders.min(order.len());
        self.leaders = order[..leaders]
            .iter()
            .map(|&i| self.members[i].clone())
            .collect();
        let mut queue: Vec<usize> = order[leaders..].to_vec();
        if queue.is_empty() {
            queue = order.clone();
        }
        rng.shuffle(&mut queue);
        self.queue = queue;
        self.temperature *= self.params.cooling;
    }

    /// A child of member `i` that was not seen yet (or `None` when none could be found).
    pub fn child(
        &self,
        space: &TuningSpace,
        memory: &Memory,
        rng: &mut Rng,
        i: usize,
    ) -> Option<Point> {
        let parent = self.members.get(i)?;
        let mut c = parent.clone();
        for (k, gene) in c.iter_mut().enumerate() {
            let pick = rng.index(self.leaders.len() + 1);
            if pick < self.leaders.len() {
                *gene = self.leaders[pick][k];
            }
            let n = space.params()[k].values.len() as u32;
            if n > 1 && rng.chance(self.params.nudge) {
                *gene = if *gene == 0 || (*gene + 1 < n && rng.chance(0.5)) {
                    *gene + 1
                } else {
                    *gene - 1
                };
            }
        }
        let c = repair(space, &c, rng)?;
        if !memory.seen(&c) {
            return Some(c);
        }
        // Tabu: kick it one parameter away, or a few random steps when every neighbour was seen.
        let next = memory.unvisited_neighbours(space, &c, Neighbourhood::Hamming);
        if !next.is_empty() {
            return Some(next[rng.index(next.len())].clone());
        }
        for steps in 2..5 {
            let q = super::common::random_walk(space, &c, steps, rng);
            if !memory.seen(&q) {
                return Some(q);
            }
        }
        None
    }

    /// Records that `point` was proposed as a child of member `parent` (`None`: as a new member).
    pub fn proposed(&mut self, parent: Option<usize>, point: Point) {
        self.pending = Some((parent, point));
    }

    /// Gives up on member `i`'s child this generation (none could be made).
    pub fn skip(&mut self, i: usize) {
        self.queue.retain(|&q| q != i);
    }

    /// Replaces the worst member by `point` (evaluated elsewhere) when it is better and not a
    /// member already.
    pub fn inject(&mut self, memory: &Memory, point: &Point) {
        if self.filling() || self.members.contains(point) {
            return;
        }
        let cost = memory.cost(point);
        let worst = (0..self.members.len()).max_by(|&a, &b| {
            memory
                .cost(&self.members[a])
                .total_cmp(&memory.cost(&self.members[b]))
        });
        if let Some(w) = worst {
            if cost < memory.cost(&self.members[w]) {
                self.members[w] = point.clone();
            }
        }
    }

    /// The result of `point` is in `memory`: a new member joins, a child replaces its parent
    /// when better or by the annealing test.
    pub fn told(&mut self, memory: &Memory, rng: &mut Rng, point: &Point) {
        let Some((parent, p)) = self.pending.take() else {
            return;
        };
        if p != *point {
            self.pending = Some((parent, p));
            return;
        }
        let Some(i) = parent else {
            if self.filling() {
                self.members.push(p);
            }
            return;
        };
        self.queue.retain(|&q| q != i);
        let Some(old) = self.members.get(i) else {
            return;
        };
        let (new_cost, old_cost) = (memory.cost(&p), memory.cost(old));
        let accept = if new_cost < old_cost {
            true
        } else if new_cost.is_infinite() {
            false
        } else {
            let n = memory.results.len().max(1) as f64;
            let delta = (rank(memory, new_cost) - rank(memory, old_cost)) / n;
            rng.chance((-delta / self.temperature.max(1e-9)).exp())
        };
        if accept {
            self.members[i] = p;
        }
    }
}

/// How many told results are better than `cost` (failures count as worse than anything).
fn rank(memory: &Memory, cost: f64) -> f64 {
    if cost.is_infinite() {
        return memory.results.len() as f64;
    }
    memory.successes.iter().filter(|(_, v)| *v < cost).count() as f64
}
