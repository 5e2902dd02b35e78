//! How a configuration is measured: warm-up launches, then timed launches until a sample
//! count or a time budget is met; the objective is the median.

use std::time::Duration;

/// When results are compared with the captured reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyMode {
    /// Never (`--no-verify`).
    Off,
    /// After the last timed run (a missing restore shows there, since several runs precede it).
    Last,
    /// After every run, warm-ups included (slower; proves each run started from the input).
    EveryRun,
}

/// Measurement settings of the replay evaluator.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasureOptions {
    /// Untimed-for-the-objective launches before the timed ones.
    pub warmup: usize,
    /// At least this many timed launches (when the time budget runs out first).
    pub min_samples: usize,
    /// At most this many timed launches.
    pub max_samples: usize,
    /// Wall time per configuration after which no more samples are taken (beyond
    /// `min_samples`).
    pub time_budget: Duration,
    /// Verification.
    pub verify: VerifyMode,
    /// Overrides of the definition's per-buffer tolerances (`kw tune --rtol/--atol/
    /// --nan-is-error`); none by default.
    pub tolerance: crate::verify::ToleranceOverride,
}

impl Default for MeasureOptions {
    fn default() -> Self {
        MeasureOptions {
            warmup: 1,
            min_samples: 3,
            max_samples: 15,
            time_budget: Duration::from_millis(500),
            verify: VerifyMode::Last,
            tolerance: crate::verify::ToleranceOverride::default(),
        }
    }
}

/// The median of `values` (sorted in place); NaN for an empty slice.
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// `max / min - 1` of positive values: the spread of repeated measurements.
pub fn spread(values: &[f64]) -> f64 {
    let max = values.iter().copied().fold(f64::MIN, f64::max);
    let min = values.iter().copied().fold(f64::MAX, f64::min);
    if values.is_empty() || min <= 0.0 {
        return f64::NAN;
    }
    max / min - 1.0
}

#[cfg(test)]
mod tests {
    #[test]
    fn median_and_spread() {
        assert_eq!(super::median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(super::median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(super::median(&mut []).is_nan());
        assert!((super::spread(&[1.0, 1.02]) - 0.02).abs() < 1e-12);
    }
}
