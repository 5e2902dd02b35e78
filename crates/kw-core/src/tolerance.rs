//! [`Tolerance`]: what "the same output" means when a configuration's result is verified
//! against a captured reference. Part of the kernel definition (per output buffer), so a
//! capture carries it; `kw tune --rtol/--atol/--nan-is-error` override it
//! ([`ToleranceOverride`]); the wisdom record says which tolerance verified it.
//!
//! The rule, for one output buffer with reference `want` and result `got`:
//! - integers: exactly equal;
//! - floats: element `i` matches when `got[i] == want[i]` (equal infinities included), or both
//!   are NaN (unless `nan_is_error`), or neither is NaN and
//!   `|got[i] - want[i]| <= atol + rtol * M`, where `M` is the **output's magnitude**: the
//!   largest finite `|want[j]|` over the whole buffer (computed in `f64`, unfused).
//!
//! Scaling by the output's magnitude rather than element by element accepts re-associated
//! sums (a dot product whose terms cancel to a small value carries the rounding error of its
//! large terms: a GEMM element of -0.08 next to elements of 17 may differ by 2e-6 between
//! a `mad` and a `mul` + `add` variant), while one wrong element still fails: the count is
//! per element, and a wrong value is off by far more than `rtol * M` (the default `rtol`
//! is 1e-5 of the largest value). `exact` makes every element compare exactly (a bound of 0).

use serde::{Deserialize, Serialize};

fn default_rtol() -> f64 {
    Tolerance::DEFAULT_RTOL
}

fn default_atol() -> f64 {
    Tolerance::DEFAULT_ATOL
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// How one output buffer is compared with its reference (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tolerance {
    /// Relative tolerance, relative to the output's magnitude (its largest finite value).
    #[serde(default = "default_rtol")]
    pub rtol: f64,
    /// Absolute tolerance.
    #[serde(default = "default_atol")]
    pub atol: f64,
    /// Compare exactly (floats too): `rtol` and `atol` are ignored.
    #[serde(default, skip_serializing_if = "is_false")]
    pub exact: bool,
    /// A NaN where the reference has a NaN is a mismatch (by default NaN equals NaN, as
    /// Kernel Tuner's `equal_nan`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub nan_is_error: bool,
}

impl Tolerance {
    /// The default relative tolerance (of the output's magnitude).
    pub const DEFAULT_RTOL: f64 = 1e-5;
    /// The default absolute tolerance.
    pub const DEFAULT_ATOL: f64 = 1e-6;

    /// Exact comparison.
    pub fn exact() -> Tolerance {
        Tolerance {
            exact: true,
            ..Tolerance::default()
        }
    }

    /// The largest `|got - want|` accepted for an output of magnitude `magnitude` (the
    /// largest finite `|want|`): `atol + rtol * magnitude` in `f64` (0 when exact).
    pub fn bound(&self, magnitude: f64) -> f64 {
        if self.exact {
            0.0
        } else {
            let scaled = self.rtol * magnitude;
            self.atol + scaled
        }
    }

    /// Whether NaN matches NaN.
    pub fn nan_equal(&self) -> bool {
        !self.nan_is_error
    }
}

impl Default for Tolerance {
    /// `rtol = 1e-5` (of the output's magnitude), `atol = 1e-6`, NaN equals NaN.
    fn default() -> Self {
        Tolerance {
            rtol: Tolerance::DEFAULT_RTOL,
            atol: Tolerance::DEFAULT_ATOL,
            exact: false,
            nan_is_error: false,
        }
    }
}

impl std::fmt::Display for Tolerance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.exact {
            write!(f, "exact")?;
        } else {
            write!(f, "atol {} + rtol {} x magnitude", self.atol, self.rtol)?;
        }
        if self.nan_is_error {
            write!(f, ", NaN is an error")?;
        }
        Ok(())
    }
}

/// What the command line overrides of every buffer's tolerance (`kw tune --rtol`, `--atol`,
/// `--nan-is-error`); `None` keeps the definition's value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToleranceOverride {
    /// Overrides `rtol` (and turns `exact` off).
    pub rtol: Option<f64>,
    /// Overrides `atol` (and turns `exact` off).
    pub atol: Option<f64>,
    /// Overrides `nan_is_error`.
    pub nan_is_error: Option<bool>,
}

impl ToleranceOverride {
    /// `base` with the overridden fields replaced.
    pub fn apply(&self, base: Tolerance) -> Tolerance {
        let mut t = base;
        if let Some(r) = self.rtol {
            t.rtol = r;
            t.exact = false;
        }
        if let Some(a) = self.atol {
            t.atol = a;
            t.exact = false;
        }
        if let Some(n) = self.nan_is_error {
            t.nan_is_error = n;
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_serde_and_overrides() {
        let t: Tolerance = serde_json::from_str("{}").unwrap();
        assert_eq!(t, Tolerance::default());
        assert_eq!(t.bound(10.0), 1e-6 + 1e-5 * 10.0);
        assert!(t.nan_equal());
        let text = serde_json::to_string(&Tolerance::exact()).unwrap();
        assert!(text.contains("\"exact\":true"), "{text}");
        assert_eq!(Tolerance::exact().bound(1e9), 0.0);
        let o = ToleranceOverride {
            atol: Some(1e-2),
            nan_is_error: Some(true),
            ..ToleranceOverride::default()
        };
        let t = o.apply(Tolerance::exact());
        assert!(!t.exact && t.nan_is_error);
        assert_eq!(t.atol, 1e-2);
        assert_eq!(t.rtol, Tolerance::DEFAULT_RTOL);
    }
}
