//! [`Stop`]: when a tuning run ends. Conditions combine with [`Stop::Any`] (or) and
//! [`Stop::All`] (and) into a tree.

use std::time::Duration;

/// The state of a run that stop conditions look at.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    /// Distinct configurations evaluated (failed ones included; revisits do not count).
    pub evaluations: u64,
    /// How many of them failed.
    pub failures: u64,
    /// Wall time of the run (for a resumed run, including the time logged before).
    pub elapsed: Duration,
    /// Valid configurations in the space.
    pub space_len: u128,
    /// The best objective value so far.
    pub best: Option<f64>,
    /// Evaluations since the best value last improved (or since the start).
    pub evaluations_since_improvement: u64,
    /// Wall time since the best value last improved (or since the start).
    pub time_since_improvement: Duration,
}

/// A stop condition: a leaf or an and/or combination.
#[derive(Clone, Debug, PartialEq)]
pub enum Stop {
    /// At least this many distinct configurations were evaluated.
    Evaluations(u64),
    /// The run took at least this long.
    WallTime(Duration),
    /// At least this fraction (0..=1) of the space was evaluated.
    SpaceFraction(f64),
    /// The best objective value is at most this target.
    Target(f64),
    /// The best value did not improve within this many evaluations.
    NoImprovementEvaluations(u64),
    /// The best value did not improve within this much time.
    NoImprovementTime(Duration),
    /// Stops when any of these stops (or); an empty list never stops.
    Any(Vec<Stop>),
    /// Stops when all of these stop (and); an empty list never stops.
    All(Vec<Stop>),
}

impl Stop {
    /// True when the run should stop now.
    pub fn reached(&self, p: &Progress) -> bool {
        match self {
            Stop::Evaluations(n) => p.evaluations >= *n,
            Stop::WallTime(t) => p.elapsed >= *t,
            Stop::SpaceFraction(f) => {
                p.space_len == 0 || p.evaluations as f64 >= f * p.space_len as f64
            }
            Stop::Target(t) => p.best.is_some_and(|b| b <= *t),
            Stop::NoImprovementEvaluations(n) => p.evaluations_since_improvement >= *n,
            Stop::NoImprovementTime(t) => p.time_since_improvement >= *t,
            Stop::Any(list) => list.iter().any(|s| s.reached(p)),
            Stop::All(list) => !list.is_empty() && list.iter().all(|s| s.reached(p)),
        }
    }

    /// `self or other`.
    pub fn or(self, other: Stop) -> Stop {
        match self {
            Stop::Any(mut list) => {
                list.push(other);
                Stop::Any(list)
            }
            s => Stop::Any(vec![s, other]),
        }
    }

    /// `self and other`.
    pub fn and(self, other: Stop) -> Stop {
        match self {
            Stop::All(mut list) => {
                list.push(other);
                Stop::All(list)
            }
            s => Stop::All(vec![s, other]),
        }
    }

    /// An upper bound on the evaluations still allowed, when the condition implies one
    /// (used as the batch-size hint for strategies); `None` when unbounded.
    pub fn remaining_evaluations(&self, p: &Progress) -> Option<u64> {
        match self {
            Stop::Evaluations(n) => Some(n.saturating_sub(p.evaluations)),
            Stop::SpaceFraction(f) => {
                let cap = (f * p.space_len as f64).ceil().max(0.0) as u64;
                Some(cap.saturating_sub(p.evaluations))
            }
            Stop::NoImprovementEvaluations(n) => {
                Some(n.saturating_sub(p.evaluations_since_improvement))
            }
            Stop::Any(list) => list.iter().filter_map(|s| s.remaining_evaluations(p)).min(),
            Stop::All(list) => {
                let bounds: Vec<Option<u64>> =
                    list.iter().map(|s| s.remaining_evaluations(p)).collect();
                if bounds.is_empty() || bounds.iter().any(Option::is_none) {
                    None
                } else {
                    bounds.into_iter().flatten().max()
                }
            }
            Stop::WallTime(_) | Stop::Target(_) | Stop::NoImprovementTime(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(evals: u64, best: Option<f64>, secs: u64) -> Progress {
        Progress {
            evaluations: evals,
            failures: 0,
            elapsed: Duration::from_secs(secs),
            space_len: 100,
            best,
            evaluations_since_improvement: evals / 2,
            time_since_improvement: Duration::from_secs(secs / 2),
        }
    }

    #[test]
    fn leaves() {
        let p = progress(50, Some(2.0), 10);
        assert!(Stop::Evaluations(50).reached(&p));
        assert!(!Stop::Evaluations(51).reached(&p));
        assert!(Stop::WallTime(Duration::from_secs(10)).reached(&p));
        assert!(!Stop::WallTime(Duration::from_secs(11)).reached(&p));
        assert!(Stop::SpaceFraction(0.5).reached(&p));
        assert!(!Stop::SpaceFraction(0.51).reached(&p));
        assert!(Stop::Target(2.0).reached(&p));
        assert!(!Stop::Target(1.9).reached(&p));
        assert!(!Stop::Target(1.0).reached(&progress(5, None, 0)));
        assert!(Stop::NoImprovementEvaluations(25).reached(&p));
        assert!(!Stop::NoImprovementEvaluations(26).reached(&p));
        assert!(Stop::NoImprovementTime(Duration::from_secs(5)).reached(&p));
        assert!(!Stop::NoImprovementTime(Duration::from_secs(6)).reached(&p));
    }

    #[test]
    fn combinations() {
        let p = progress(50, Some(2.0), 10);
        let yes = Stop::Evaluations(10);
        let no = Stop::Target(1.0);
        assert!(yes.clone().or(no.clone()).reached(&p));
        assert!(!yes.clone().and(no.clone()).reached(&p));
        assert!(yes.clone().and(yes.clone()).reached(&p));
        assert!(!no.clone().or(no.clone()).reached(&p));
        // (no or yes) and (yes and (no or yes))
        let tree = no
            .clone()
            .or(yes.clone())
            .and(yes.clone().and(no.clone().or(yes.clone())));
        assert!(tree.reached(&p));
        assert!(!Stop::Any(vec![]).reached(&p));
        assert!(!Stop::All(vec![]).reached(&p));
        assert!(!Stop::All(vec![yes.clone(), Stop::All(vec![no.clone()])]).reached(&p));
    }

    #[test]
    fn remaining() {
        let p = progress(50, Some(2.0), 10);
        assert_eq!(Stop::Evaluations(80).remaining_evaluations(&p), Some(30));
        let both = Stop::Evaluations(80).or(Stop::Evaluations(60));
        assert_eq!(both.remaining_evaluations(&p), Some(10));
        let and = Stop::Evaluations(80).and(Stop::Evaluations(60));
        assert_eq!(and.remaining_evaluations(&p), Some(30));
        let unbounded = Stop::Evaluations(80).and(Stop::Target(1.0));
        assert_eq!(unbounded.remaining_evaluations(&p), None);
        assert_eq!(Stop::SpaceFraction(1.0).remaining_evaluations(&p), Some(50));
    }
}
