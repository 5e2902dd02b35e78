//! The acquisition arithmetic: expected improvement of a normal prediction, and ranks.

/// The ranks of `values` scaled to 0..1 (0 the smallest; ties share the lower rank).
pub(super) fn ranks(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let v: Vec<f64> = values.collect();
    let mut sorted = v.clone();
    sorted.sort_by(f64::total_cmp);
    let n = (v.len().max(2) - 1) as f64;
    v.iter()
        .map(|x| sorted.partition_point(|y| y < x) as f64 / n)
        .collect()
}

/// Expected improvement below `best` of a normal prediction (mean, sd).
pub(super) fn expected_improvement(best: f64, mean: f64, sd: f64) -> f64 {
    let d = best - mean;
    if sd < 1e-12 {
        return d.max(0.0);
    }
    let z = d / sd;
    d * normal_cdf(z) + sd * normal_pdf(z)
}

fn normal_pdf(z: f64) -> f64 {
    (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// Standard normal CDF (Abramowitz & Stegun 7.1.26 erf; error below 1.5e-7).
fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_and_ei() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.96) - 0.975).abs() < 1e-3);
        assert!((normal_cdf(-1.96) - 0.025).abs() < 1e-3);
        assert!(expected_improvement(1.0, 0.0, 0.0) == 1.0);
        assert!(expected_improvement(0.0, 1.0, 1.0) > 0.0);
        assert!(expected_improvement(0.0, 1.0, 1.0) < expected_improvement(0.0, 1.0, 2.0));
    }
}
