//! Measurement you can trust: before a winner is written, the best few candidates and the
//! default are measured again, interleaved (each round measures every one of them, in a
//! rotated order, so that drift and machine load hit all alike). The winner is the candidate
//! whose per-round speed-up over the default has the highest median; it is recorded only
//! when the whole distribution-free confidence interval of that median lies above 1 (it is
//! faster with the stated confidence); otherwise the default is recorded and the run says why.

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

/// The best `top` distinct successful configurations of `report` other than `default`,
/// best first.
pub fn candidates(report: &TuneReport, default: &Point, top: usize) -> Vec<Point> {
    let mut ok: Vec<(&Point, f64)> = report
        .history
        .iter()
        .filter(|e| &e.point != default)
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

/// Measures `default` and `candidates` over `rounds` interleaved rounds with `eval`, and
/// decides what to record. `Err`: the default failed when measured again (nothing can be
/// confirmed; the caller keeps the search's result and says so).
pub fn confirm(
    eval: &mut dyn Evaluator,
    default: &Point,
    candidates: &[Point],
    rounds: usize,
) -> Result<Confirmed, String> {
    let mut points = vec![default.clone()];
    points.extend(candidates.iter().filter(|p| *p != default).cloned());
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); points.len()];
    let mut failed = vec![false; points.len()];
    for round in 0..rounds {
        for k in 0..points.len() {
            let i = (k + round) % points.len();
            if failed[i] {
                continue;
            }
            match eval.evaluate(&points[i]) {
                Ok(ms) if ms.is_finite() && ms > 0.0 => times[i].push(ms),
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
    }
    let default_ms = median(&mut times[0].clone());
    // Per candidate: the rounds' speed-ups over the default (same round, adjacent in time).
    let mut best: Option<(usize, f64, f64, f64, f64)> = None;
    for i in 1..points.len() {
        if failed[i] || times[i].len() != times[0].len() {
            continue;
        }
        let mut ratios: Vec<f64> = times[0].iter().zip(&times[i]).map(|(d, c)| d / c).collect();
        let speedup = median(&mut ratios.clone());
        let (low, high, coverage) = median_interval(&mut ratios, TARGET_CONFIDENCE);
        if best.is_none_or(|b| speedup > b.1) {
            best = Some((i, speedup, low, high, coverage));
        }
    }
    let n = points.len() - 1;
    let what = format!("{n} candidate(s) and the default in {rounds} alternating round(s)");
    let default_record = |line: String| Confirmed {
        point: default.clone(),
        median_ms: default_ms,
        confirmation: Confirmation {
            rounds: rounds as u32,
            default_median_ms: default_ms,
            median_ms: default_ms,
            speedup: 1.0,
            speedup_low: 1.0,
            speedup_high: 1.0,
            confidence: 1.0,
        },
        line,
    };
    let Some((i, speedup, low, high, coverage)) = best else {
        return Ok(default_record(format!(
            "confirmation: {what}: no candidate measured again without failing; the default configuration is recorded"
        )));
    };
    let pct = (coverage * 100.0).floor();
    let cand_ms = median(&mut times[i].clone());
    if low > 1.0 {
        Ok(Confirmed {
            point: points[i].clone(),
            median_ms: cand_ms,
            confirmation: Confirmation {
                rounds: rounds as u32,
                default_median_ms: default_ms,
                median_ms: cand_ms,
                speedup,
                speedup_low: low,
                speedup_high: high,
                confidence: coverage,
            },
            line: format!(
                "confirmation: {what}: the best is {} than the default ({cand_ms:.4} ms against \
                 {default_ms:.4} ms; {pct}% interval of the speed-up {low:.3}x-{high:.3}x)",
                ratio_words(default_ms, cand_ms)
            ),
        })
    } else {
        Ok(default_record(format!(
            "confirmation: {what}: the best ({}, {pct}% interval of the speed-up \
             {low:.3}x-{high:.3}x) is not faster than the default with {pct}% confidence; \
             the default configuration is recorded ({default_ms:.4} ms)",
            ratio_words(default_ms, cand_ms)
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
        let c = confirm(&mut t, &d, &[a.clone(), b], 7).unwrap();
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
        let c = confirm(&mut t, &d, &[a], 5).unwrap();
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
        let c = confirm(&mut t, &d, std::slice::from_ref(&a), 10).unwrap();
        assert_eq!(c.point, a, "{}", c.line);
        assert_eq!(
            (c.confirmation.speedup_low, c.confirmation.speedup_high),
            (1.5, 1.5)
        );
        assert!(c.line.contains("97% interval"), "{}", c.line);
    }

    #[test]
    fn a_default_that_fails_again_is_an_error() {
        let (d, a) = (vec![0], vec![1]);
        let mut t = Table {
            ms: HashMap::from([(a.clone(), vec![1.0; 3])]),
            calls: 0,
        };
        assert!(confirm(&mut t, &d, &[a], 3)
            .unwrap_err()
            .contains("default failed"));
    }
}
