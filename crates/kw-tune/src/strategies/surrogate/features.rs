//! [`FeatureMap`]: what the model sees of a configuration (value indices, log2 of numeric
//! values, log sums and differences of parameter pairs, a prior's score).

use super::params::Features;
use crate::strategy::PriorScores;
use kw_core::{space::Point, space::TuningSpace};

/// Maps a point (value indices) to the model's features.
#[derive(Clone, Debug, Default)]
pub struct FeatureMap {
    /// Per parameter: log2 of each value, when the parameter's values are all positive numbers
    /// and there are at least three of them.
    logs: Vec<Option<Vec<f64>>>,
    /// Parameter pairs whose log sums (and maybe differences) are features.
    pairs: Vec<(usize, usize)>,
    diffs: bool,
    index_only: bool,
    /// A prior's score of each configuration (0 best, 1 worst; [`crate::prior`]), the last
    /// feature when given (0.5 for a configuration the prior does not hold).
    pub(super) prior: Option<PriorScores>,
}

impl FeatureMap {
    /// The map for `space` with the features `level` names.
    pub fn new(space: &TuningSpace, level: Features) -> FeatureMap {
        let logs: Vec<Option<Vec<f64>>> = space
            .params()
            .iter()
            .map(|p| {
                if level == Features::Indices || p.values.len() < 3 {
                    return None;
                }
                let v: Option<Vec<f64>> = p
                    .values
                    .iter()
                    .map(|v| v.as_f64().filter(|x| *x > 0.0).map(f64::log2))
                    .collect();
                v
            })
            .collect();
        let numeric: Vec<usize> = (0..logs.len()).filter(|&k| logs[k].is_some()).collect();
        let mut pairs = Vec::new();
        if level >= Features::LogProducts {
            for (a, &i) in numeric.iter().enumerate() {
                for &j in &numeric[a + 1..] {
                    pairs.push((i, j));
                }
            }
        }
        FeatureMap {
            logs,
            pairs,
            diffs: level >= Features::LogRatios,
            index_only: level == Features::Indices,
            prior: None,
        }
    }

    /// The features of `point`: value indices first (categorical-capable), then the rest.
    pub fn apply(&self, point: &Point) -> Vec<f64> {
        let mut f: Vec<f64> = point.iter().map(|&v| v as f64).collect();
        if let Some(prior) = &self.prior {
            f.push(prior.get(point).copied().unwrap_or(0.5));
        }
        if self.index_only {
            return f;
        }
        let lg = |k: usize| self.logs[k].as_ref().map(|l| l[point[k] as usize]);
        for k in 0..point.len() {
            if let Some(x) = lg(k) {
                f.push(x);
            }
        }
        for &(i, j) in &self.pairs {
            let (a, b) = (lg(i).unwrap_or(0.0), lg(j).unwrap_or(0.0));
            f.push(a + b);
            if self.diffs {
                f.push(a - b);
            }
        }
        f
    }
}
