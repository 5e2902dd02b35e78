//! Measurement you can trust: before a winner is written, the best few candidates, the
//! default and the configuration in use (the one the capture was made with) are measured
//! again, interleaved (each round measures every one of them, in a rotated order, so that
//! drift and machine load hit all alike). The baseline is the configuration in use when there
//! is one, else the default. The winner is the contender whose per-round speed-up over the
//! baseline has the highest median; it is recorded only when the whole distribution-free
//! confidence interval of that median lies above 1 (it is faster with the stated confidence);
//! otherwise the baseline is recorded and the run says why. The record's confirmation is
//! against the default.

use kw_core::diag::ratio_words;
use kw_core::space::Point;
use kw_core::wisdom::Confirmation;
use kw_tune::{Evaluator, TuneReport};

/// The confidence asked of the interval.
pub const TARGET_CONFIDENCE: f64 = 0.95;

/// What the confirmation decided.
#[derive(Debug)]
pub struct Confirmed {
    /// The configuration to record (the winner, or the default).
    pub point: Point,
    /// Its median time over the rounds (ms).
    pub median_ms: f64,
    /// The record's confirmation (for the default: its own time against itself).
    pub confirmation: Confirmation,
    /// The summary line.
    pub line: String,
}

/// `sum_{i<k} C(n, i) / 2^n`: the chance that fewer than `k` of `n` fair coins land heads.
fn binomial_below(n: usize, k: usize) -> f64 {
    let mut c = 1.0f64; // C(n, 0)
    let mut sum = 0.0;
    for i in 0..k.min(n + 1) {
        sum += c;
        c = c * (n - i) as f64 / (i + 1) as f64;
    }
    sum / 2f64.powi(n as i32)
}

/// The distribution-free confidence interval of the median of `values` (sorted here):
/// `[x(k), x(n+1-k)]` for the largest `k` whose coverage `1 - 2 P(Bin(n, 1/2) < k)` reaches
/// `target`, else `k = 1` (the whole range). Returns `(low, high, coverage)`.
pub fn median_interval(values: &mut [f64], target: f64) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        return (f64::NAN, f64::NAN, 0.0);
    }
    let coverage = |k: usize| 1.0 - 2.0 * binomial_below(n, k);
    let mut k = 1;
    while k < n.div_ceil(2) && coverage(k + 1) >= target {
        k += 1;
    }
    (values[k - 1], values[n - k], coverage(k))
}

/// The median of `values` (sorted here).
fn median(values: &mut [f64]) -> f64 {
    kw_replay::median(values)
}

/// The best `top` distinct successful configurations of `report` other than `default` and
/// `in_use`, best first.
pub fn candidates(
    report: &TuneReport,
    default: &Point,
    in_use: Option<&Point>,
    top: usize,
) -> Vec<Point> {
    let mut ok: Vec<(&Point, f64)> = report
        .history
        .iter()
        .filter(|e| &e.point != default && Some(&e.point) != in_use)
        .filter_map(|e| e.result.as_ref().ok().map(|v| (&e.point, *v)))
        .collect();
    ok.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut out: Vec<Point> = Vec::new();
    for (p, _) in ok {
        if out.len() == top {
            break;
        }
        if !out.contains(p) {
            out.push(p.clone());
        }
    }
    out
}

/// The per-round speed-ups of `cand` over `base` (same round, adjacent in time): their
/// median, and its interval `(low, high, coverage)`.
fn speedup(base: &[f64], cand: &[f64]) -> (f64, f64, f64, f64) {
    let mut ratios: Vec<f64> = base.iter().zip(cand).map(|(b, c)| b / c).collect();
    let median_ratio = median(&mut ratios.clone());
    let (low, high, coverage) = median_interval(&mut ratios, TARGET_CONFIDENCE);
    (median_ratio, low, high, coverage)
}

/// Measures `default`, `in_use` (the configuration the capture was made with, the one the
/// application uses, when it is not the default) and `candidates` over `rounds` interleaved
/// rounds with `eval`, and decides what to record. The baseline is the configuration in use
/// when there is one (and it did not fail again), else the default: a candidate is recorded
/// only when the whole confidence interval of its median speed-up over the baseline lies
/// above 1, so a search's best by a single noisy sample (online tuning takes one per
/// candidate) never replaces what the application uses unless it is faster round by round.
/// The record's confirmation is always against the default. An interrupted evaluation (the
/// device-time budget of `--max-device-time` spent, Ctrl-C) ends the rounds: the decision is
/// made on the whole rounds before it. `Err`: the default failed when measured again, or no
/// round was whole (nothing can be confirmed; the caller keeps the search's result and says
/// so).
pub fn confirm(
    eval: &mut dyn Evaluator,
    default: &Point,
    in_use: Option<&Point>,
    candidates: &[Point],
    rounds: usize,
) -> Result<Confirmed, String> {
    let in_use = in_use.filter(|p| *p != default);
    let mut points = vec![default.clone()];
    points.extend(in_use.cloned());
    for p in candidates {
        if !points.contains(p) {
            points.push(p.clone());
        }
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); points.len()];
    let mut failed = vec![false; points.len()];
    let mut whole = 0;
    'rounds: for round in 0..rounds {
        for k in 0..points.len() {
            let i = (k + round) % points.len();
            if failed[i] {
                continue;
            }
            match eval.evaluate(&points[i]) {
                Err(f) if f.interrupted => {
                    // This round is not whole: its times are dropped.
                    for t in &mut times {
                        t.truncate(whole);
                    }
                    if whole == 0 {
                        return Err(format!("no round completed: {}", f.reason));
                    }
                    break 'rounds;
                }
                Ok(ms) if kw_core::objective::valid_time(ms) => times[i].push(ms),
                Ok(ms) => {
                    failed[i] = true;
                    if i == 0 {
                        return Err(format!("the default measured {ms} ms"));
                    }
                }
                Err(f) => {
                    failed[i] = true;
                    if i == 0 {
                        return Err(format!("the default failed: {}", f.reason));
                    }
                }
            }
        }
        whole = round + 1;
    }
    let rounds = whole;
    let complete = |i: usize| !failed[i] && times[i].len() == times[0].len();
    // The baseline: the configuration in use (index 1) when it was measured in every round.
    let base = if in_use.is_some() && complete(1) {
        1
    } else {
        0
    };
    let base_name = if base == 1 {
        "the configuration in use"
    } else {
        "the default"
    };
    let base_record = if base == 1 {
        "the configuration in use"
    } else {
        "the default configuration"
    };
    let default_ms = median(&mut times[0].clone());
    let base_ms = median(&mut times[base].clone());
    // The contender with the highest median speed-up over the baseline.
    let mut best: Option<(usize, f64, f64, f64, f64)> = None;
    for i in (0..points.len()).filter(|&i| i != base && complete(i)) {
        let (ratio, low, high, coverage) = speedup(&times[base], &times[i]);
        if best.is_none_or(|b| ratio > b.1) {
            best = Some((i, ratio, low, high, coverage));
        }
    }
    let n = points.len() - 1 - usize::from(in_use.is_some());
    let what = match in_use {
        Some(_) => format!(
            "{n} candidate(s), the configuration in use and the default in {rounds} alternating round(s)"
        ),
        None => format!("{n} candidate(s) and the default in {rounds} alternating round(s)"),
    };
    // The record of configuration `i`, its confirmation against the default.
    let record = |i: usize, line: String| {
        let ms = median(&mut times[i].clone());
        let (ratio, low, high, coverage) = if i == 0 {
            (1.0, 1.0, 1.0, 1.0)
        } else {
            speedup(&times[0], &times[i])
        };
        Confirmed {
            point: points[i].clone(),
            median_ms: ms,
            confirmation: Confirmation {
                rounds: rounds as u32,
                default_median_ms: default_ms,
                median_ms: ms,
                speedup: ratio,
                speedup_low: low,
                speedup_high: high,
                confidence: coverage,
            },
            line,
        }
    };
    let kept = |why: String| {
        let against_default = if base == 0 {
            String::new()
        } else {
            format!(", {} than the default", ratio_words(default_ms, base_ms))
        };
        record(
            base,
            format!(
                "confirmation: {what}: {why}; {base_record} is recorded ({base_ms:.4} ms{against_default})"
            ),
        )
    };
    let Some((i, _, low, high, coverage)) = best else {
        return Ok(kept(
            "no other configuration measured again without failing".into(),
        ));
    };
    let pct = (coverage * 100.0).floor();
    let cand_ms = median(&mut times[i].clone());
    let best_name = if i == 0 { "the default" } else { "the best" };
    if low > 1.0 {
        let against_default = if base == 0 || i == 0 {
            String::new()
        } else {
            format!("; {} than the default", ratio_words(default_ms, cand_ms))
        };
        let line = format!(
            "confirmation: {what}: {best_name} is {} than {base_name} ({cand_ms:.4} ms against \
             {base_ms:.4} ms; {pct}% interval of the speed-up {low:.3}x-{high:.3}x){against_default}",
            ratio_words(base_ms, cand_ms)
        );
        Ok(record(i, line))
    } else {
        Ok(kept(format!(
            "{best_name} ({}, {pct}% interval of the speed-up {low:.3}x-{high:.3}x) is not \
             faster than {base_name} with {pct}% confidence",
            ratio_words(base_ms, cand_ms)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kw_tune::{EvalFailure, EvalResult};
    use std::collections::HashMap;

    #[test]
    fn intervals_are_order_statistics_with_their_coverage() {
        let mut five = [5.0, 1.0, 3.0, 2.0, 4.0];
        let (lo, hi, c) = median_interval(&mut five, 0.95);
        assert_eq!((lo, hi), (1.0, 5.0));
        assert!((c - 0.9375).abs() < 1e-12, "{c}");
        let mut ten: Vec<f64> = (1..=10).map(f64::from).collect();
        let (lo, hi, c) = median_interval(&mut ten, 0.95);
        assert_eq!((lo, hi), (2.0, 9.0));
        assert!((c - (1.0 - 2.0 * 11.0 / 1024.0)).abs() < 1e-12, "{c}");
    }

    /// Times per configuration, the same every round except where `noise` says.
    struct Table {
        ms: HashMap<Point, Vec<f64>>,
        calls: usize,
    }

    impl Evaluator for Table {
        fn evaluate(&mut self, p: &Point) -> EvalResult {
            self.calls += 1;
            match self.ms.get_mut(p) {
                Some(v) if !v.is_empty() => Ok(v.remove(0)),
                _ => Err(EvalFailure::new("not in the table")),
            }
        }
    }

    #[test]
    fn a_winner_faster_in_every_round_is_recorded() {
        let (d, a, b) = (vec![0], vec![1], vec![2]);
        let mut t = Table {
            ms: HashMap::from([
                (d.clone(), vec![2.0, 2.1, 1.9, 2.0, 2.05, 1.95, 2.0]),
                (a.clone(), vec![1.0, 1.1, 0.9, 1.0, 1.0, 1.0, 1.05]),
                (b.clone(), vec![1.9; 7]),
            ]),
            calls: 0,
        };
        let c = confirm(&mut t, &d, None, &[a.clone(), b], 7).unwrap();
        assert_eq!(t.calls, 21, "every configuration once per round");
        assert_eq!(c.point, a);
        assert!(c.confirmation.speedup_low > 1.0);
        assert!((c.confirmation.confidence - (1.0 - 2.0 / 128.0)).abs() < 1e-12);
        assert!(c.line.contains("2.00x faster"), "{}", c.line);
    }

    #[test]
    fn a_winner_within_the_noise_records_the_default() {
        let (d, a) = (vec![0], vec![1]);
        let mut t = Table {
            ms: HashMap::from([
                (d.clone(), vec![1.0, 1.0, 1.0, 1.0, 1.0]),
                // Faster in four rounds, slower in one: not with 93% confidence.
                (a.clone(), vec![0.9, 0.95, 1.1, 0.9, 0.92]),
            ]),
            calls: 0,
        };
        let c = confirm(&mut t, &d, None, &[a], 5).unwrap();
        assert_eq!(c.point, d);
        assert_eq!(c.confirmation.speedup, 1.0);
        assert!(c.line.contains("not faster than the default"), "{}", c.line);
        assert!(c.line.contains("1.09x faster"), "{}", c.line);
    }

    #[test]
    fn one_stray_round_of_ten_does_not_decide() {
        let (d, a) = (vec![0], vec![1]);
        let mut slow = vec![1.0; 10];
        slow[4] = 1.6; // one round where the candidate was hit by the machine
        let mut t = Table {
            ms: HashMap::from([(d.clone(), vec![1.5; 10]), (a.clone(), slow)]),
            calls: 0,
        };
        let c = confirm(&mut t, &d, None, std::slice::from_ref(&a), 10).unwrap();
        assert_eq!(c.point, a, "{}", c.line);
        assert_eq!(
            (c.confirmation.speedup_low, c.confirmation.speedup_high),
            (1.5, 1.5)
        );
        assert!(c.line.contains("97% interval"), "{}", c.line);
    }

    /// The device-time budget spent in the middle of a round: the decision is made on the
    /// whole rounds, and the record says how many.
    #[test]
    fn an_interrupted_confirmation_decides_on_its_whole_rounds() {
        struct Budget {
            table: Table,
            left: usize,
        }
        impl Evaluator for Budget {
            fn evaluate(&mut self, p: &Point) -> EvalResult {
                if self.left == 0 {
                    return Err(EvalFailure::interrupted("budget spent"));
                }
                self.left -= 1;
                self.table.evaluate(p)
            }
        }
        let (d, a) = (vec![0], vec![1]);
        let table = || Table {
            ms: HashMap::from([(d.clone(), vec![2.0; 10]), (a.clone(), vec![1.0; 10])]),
            calls: 0,
        };
        // 13 evaluations: 6 whole rounds of two, the 7th cut.
        let mut b = Budget {
            table: table(),
            left: 13,
        };
        let c = confirm(&mut b, &d, None, std::slice::from_ref(&a), 10).unwrap();
        assert_eq!(c.point, a, "{}", c.line);
        assert_eq!(c.confirmation.rounds, 6);
        assert!(c.line.contains("in 6 alternating round(s)"), "{}", c.line);
        // Cut in the first round: nothing to decide on.
        let mut b = Budget {
            table: table(),
            left: 1,
        };
        let e = confirm(&mut b, &d, None, &[a], 10).unwrap_err();
        assert!(e.contains("no round completed: budget spent"), "{e}");
    }

    #[test]
    fn a_default_that_fails_again_is_an_error() {
        let (d, a) = (vec![0], vec![1]);
        let mut t = Table {
            ms: HashMap::from([(a.clone(), vec![1.0; 3])]),
            calls: 0,
        };
        assert!(confirm(&mut t, &d, None, &[a], 3)
            .unwrap_err()
            .contains("default failed"));
    }

    /// With a configuration in use, a candidate replaces it only when faster than it round
    /// by round; the record's speed-up stays the one over the default.
    #[test]
    fn the_configuration_in_use_is_the_baseline() {
        let (d, u, a) = (vec![0], vec![1], vec![2]);
        // `a` beats the default in every round and the configuration in use in four of
        // seven: within the noise, so the configuration in use is kept.
        let noisy = |t: Vec<f64>| Table {
            ms: HashMap::from([
                (d.clone(), vec![2.0; 7]),
                (u.clone(), vec![1.0; 7]),
                (a.clone(), t),
            ]),
            calls: 0,
        };
        let mut t = noisy(vec![0.9, 1.1, 0.95, 1.05, 0.9, 1.1, 0.97]);
        let c = confirm(&mut t, &d, Some(&u), std::slice::from_ref(&a), 7).unwrap();
        assert_eq!(t.calls, 21);
        assert_eq!(c.point, u, "{}", c.line);
        assert_eq!(c.confirmation.speedup, 2.0, "against the default");
        assert!(
            c.line.contains(
                "the configuration in use is recorded (1.0000 ms, 2.00x faster than the default)"
            ),
            "{}",
            c.line
        );
        // Faster than the configuration in use in every round: recorded.
        let mut t = noisy(vec![0.5; 7]);
        let c = confirm(&mut t, &d, Some(&u), std::slice::from_ref(&a), 7).unwrap();
        assert_eq!(c.point, a, "{}", c.line);
        assert_eq!(c.confirmation.speedup, 4.0, "against the default");
        assert!(
            c.line
                .contains("the best is 2.00x faster than the configuration in use")
                && c.line.ends_with("; 4.00x faster than the default"),
            "{}",
            c.line
        );
        // The application used a configuration slower than the default: the default wins.
        let mut t = Table {
            ms: HashMap::from([(d.clone(), vec![1.0; 7]), (u.clone(), vec![3.0; 7])]),
            calls: 0,
        };
        let c = confirm(&mut t, &d, Some(&u), &[], 7).unwrap();
        assert_eq!(c.point, d, "{}", c.line);
        assert!(c.line.contains("the default is 3.00x faster"), "{}", c.line);
        // The configuration in use fails when measured again: the default is the baseline.
        let mut t = Table {
            ms: HashMap::from([(d.clone(), vec![2.0; 7]), (a.clone(), vec![1.0; 7])]),
            calls: 0,
        };
        let c = confirm(&mut t, &d, Some(&u), std::slice::from_ref(&a), 7).unwrap();
        assert_eq!(c.point, a, "{}", c.line);
        assert!(c.line.contains("than the default"), "{}", c.line);
    }
}
