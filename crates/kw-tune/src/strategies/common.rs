//! Building blocks shared by the strategies: the memory of results, unvisited sampling and
//! neighbourhoods, all on the space's own index and neighbour operations (so every proposal is
//! a valid configuration).

use crate::evaluator::EvalResult;
use kw_core::rng::Rng;
use kw_core::space::Neighbourhood;
use kw_core::{space::Point, space::TuningSpace};
use std::collections::{HashMap, HashSet};

/// Random tries before [`Memory::random_unvisited`] falls back to a scan.
const SAMPLE_TRIES: usize = 64;

/// What a strategy knows: every result it was told, and the points it proposed but was not
/// told about yet (so that one batch never holds a point twice).
#[derive(Clone, Debug, Default)]
pub struct Memory {
    /// Told results: `Some(objective)` or `None` for a failure.
    pub results: HashMap<Point, Option<f64>>,
    /// Proposed, not yet told. Kept across asks: with a lookahead the loop asks again while
    /// earlier proposals are still queued, and a strategy that proposed them again would
    /// starve the queue (and with it the compile threads).
    pub pending: HashSet<Point>,
    /// The best point and value told so far.
    pub best: Option<(Point, f64)>,
    /// Successful results in the order told: (point, objective).
    pub successes: Vec<(Point, f64)>,
    /// Failed points in the order told.
    pub failures: Vec<Point>,
}

impl Memory {
    /// Records a result; returns true when it improved the best value.
    pub fn tell(&mut self, point: &Point, result: &EvalResult) -> bool {
        self.pending.remove(point);
        if self.results.contains_key(point) {
            return false;
        }
        let value = result.as_ref().ok().copied();
        self.results.insert(point.clone(), value);
        match value {
            Some(v) => {
                self.successes.push((point.clone(), v));
                if self.best.as_ref().is_none_or(|(_, b)| v < *b) {
                    self.best = Some((point.clone(), v));
                    return true;
                }
                false
            }
            None => {
                self.failures.push(point.clone());
                false
            }
        }
    }

    /// True when the point was told or is pending.
    pub fn seen(&self, point: &Point) -> bool {
        self.results.contains_key(point) || self.pending.contains(point)
    }

    /// The told result of a point: `Some(Some(v))`, `Some(None)` (failed) or `None` (unknown).
    pub fn get(&self, point: &Point) -> Option<Option<f64>> {
        self.results.get(point).copied()
    }

    /// The cost used for comparisons: the objective, or +inf for failures and unknowns.
    pub fn cost(&self, point: &Point) -> f64 {
        self.get(point).flatten().unwrap_or(f64::INFINITY)
    }

    /// Marks a point as proposed.
    pub fn propose(&mut self, point: Point) -> Point {
        self.pending.insert(point.clone());
        point
    }

    /// How many points were told or are pending.
    pub fn known(&self) -> u128 {
        (self.results.len() + self.pending.len()) as u128
    }

    /// A uniformly random point not seen yet, or `None` when every point was told.
    /// Samples first; in a nearly exhausted space it scans from a random index. When every
    /// point not told is pending it returns a pending one (a proposal the loop dropped is not
    /// lost; one still queued there is answered from its queue).
    pub fn random_unvisited(&self, space: &TuningSpace, rng: &mut Rng) -> Option<Point> {
        if self.results.len() as u128 >= space.len() {
            return None;
        }
        for _ in 0..SAMPLE_TRIES {
            let p = space.sample(rng)?;
            if !self.seen(&p) {
                return Some(p);
            }
        }
        let len = space.len();
        let start = rng.below_u128(len);
        let scan = || {
            (0..len)
                .map(move |k| (start + k) % len)
                .filter_map(|i| space.point_at(i))
        };
        scan()
            .find(|p| !self.seen(p))
            .or_else(|| scan().find(|p| !self.results.contains_key(p)))
    }

    /// The valid neighbours of `point` not seen yet.
    pub fn unvisited_neighbours(
        &self,
        space: &TuningSpace,
        point: &Point,
        kind: Neighbourhood,
    ) -> Vec<Point> {
        space
            .neighbours(point, kind)
            .into_iter()
            .filter(|p| !self.seen(p))
            .collect()
    }
}

/// A random valid point near `point`: `steps` random moves to a Hamming neighbour.
pub fn random_walk(space: &TuningSpace, point: &Point, steps: usize, rng: &mut Rng) -> Point {
    let mut p = point.clone();
    for _ in 0..steps {
        let n = space.neighbours(&p, Neighbourhood::Hamming);
        if n.is_empty() {
            break;
        }
        p = n[rng.index(n.len())].clone();
    }
    p
}

/// The valid point closest to `target` (value indices, possibly invalid) by the number of
/// differing parameters, searching outward through Hamming neighbourhoods; ties are broken at
/// random. Falls back to a random valid point.
pub fn repair(space: &TuningSpace, target: &Point, rng: &mut Rng) -> Option<Point> {
    if space.contains(target) {
        return Some(target.clone());
    }
    let mut frontier = vec![target.clone()];
    let mut seen: HashSet<Point> = HashSet::new();
    seen.insert(target.clone());
    for _ in 0..3 {
        let mut valid = Vec::new();
        let mut next = Vec::new();
        for p in &frontier {
            for k in 0..p.len() {
                let n = space.params()[k].values.len() as u32;
                for v in 0..n {
                    if v == p[k] {
                        continue;
                    }
                    let mut q = p.clone();
                    q[k] = v;
                    if seen.insert(q.clone()) {
                        if space.contains(&q) {
                            valid.push(q);
                        } else if next.len() < 4096 {
                            next.push(q);
                        }
                    }
                }
            }
        }
        if !valid.is_empty() {
            return Some(valid.swap_remove(rng.index(valid.len())));
        }
        frontier = next;
    }
    space.sample(rng)
}
