//! `exhaustive`: every configuration in index order (brute force).

use crate::evaluator::EvalResult;
use crate::strategy::Strategy;
use kw_core::{space::Point, space::TuningSpace};
use std::collections::HashSet;

/// Proposes configurations in index order, skipping those already told.
#[derive(Debug, Default)]
pub struct Exhaustive {
    next: u128,
    told: HashSet<Point>,
}

impl Exhaustive {
    /// A brute-force search (the seed is irrelevant).
    pub fn new(_seed: u64) -> Exhaustive {
        Exhaustive::default()
    }
}

impl Strategy for Exhaustive {
    fn name(&self) -> &str {
        "exhaustive"
    }

    fn ask(&mut self, space: &TuningSpace, hint: usize) -> Vec<Point> {
        // Proposals of an earlier batch that were not told were dropped: start again from the
        // first configuration not told.
        while self.next < space.len()
            && space
                .point_at(self.next)
                .is_some_and(|p| self.told.contains(&p))
        {
            self.next += 1;
        }
        let mut out = Vec::new();
        let mut i = self.next;
        while out.len() < hint.min(1024) && i < space.len() {
            if let Some(p) = space.point_at(i) {
                if !self.told.contains(&p) {
                    out.push(p);
                }
            }
            i += 1;
        }
        out
    }

    fn tell(&mut self, _space: &TuningSpace, point: &Point, _result: &EvalResult) {
        self.told.insert(point.clone());
    }
}
