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

use serde::{Deserialize, Deserializer, Serialize};

fn default_rtol() -> f64 {
    Tolerance::DEFAULT_RTOL
}

fn default_atol() -> f64 {
    Tolerance::DEFAULT_ATOL
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A tolerance value as stored (any number, as earlier versions wrote it, so that their files
/// keep loading); `null` (what a NaN or an infinity becomes in JSON, written by versions that
/// accepted `kw tune --rtol NaN`) is refused with a message that says so.
fn stored_value<'de, D: Deserializer<'de>>(d: D, name: &str) -> Result<f64, D::Error> {
    match Option::<f64>::deserialize(d)? {
        Some(v) => Ok(v),
        None => Err(serde::de::Error::custom(format!(
            "`{name}` is null, not a number (a NaN or infinite tolerance, as earlier versions \
             wrote from `kw tune --{name} NaN` or from a definition's tolerance, before such \
             values were refused): {}",
            ToleranceError::REQUIREMENT
        ))),
    }
}

fn stored_rtol<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    stored_value(d, "rtol")
}

fn stored_atol<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    stored_value(d, "atol")
}

/// A tolerance value that is not one: not a number, not finite, or negative.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ToleranceError {
    /// The text is not a number.
    #[error("{name} `{text}` is not a number: {}", ToleranceError::REQUIREMENT)]
    NotANumber {
        /// Which tolerance (`rtol`, `atol`).
        name: &'static str,
        /// The text given.
        text: String,
    },
    /// The value is NaN, infinite or negative.
    #[error(
        "{name} {value} is not a valid tolerance: {}",
        ToleranceError::REQUIREMENT
    )]
    Invalid {
        /// Which tolerance (`rtol`, `atol`).
        name: &'static str,
        /// The value given.
        value: f64,
    },
}

impl ToleranceError {
    /// What a tolerance must be.
    pub const REQUIREMENT: &'static str =
        "a tolerance is a finite number, 0 or more (e.g. 1e-5; 0 compares exactly)";
}

/// `value` when it is a valid tolerance (finite, 0 or more): `name` (`rtol`, `atol`) says
/// which in the error.
pub fn check_value(name: &'static str, value: f64) -> Result<f64, ToleranceError> {
    if value.is_finite() && value >= 0.0 {
        // -0.0 is 0.
        Ok(value.abs())
    } else {
        Err(ToleranceError::Invalid { name, value })
    }
}

/// Parses a tolerance given as text (a command line's `--rtol`/`--atol`): a finite number,
/// 0 or more; `NaN`, `inf` and negative numbers are refused.
pub fn parse_value(name: &'static str, text: &str) -> Result<f64, ToleranceError> {
    let value = text
        .trim()
        .parse::<f64>()
        .map_err(|_| ToleranceError::NotANumber {
            name,
            text: text.to_string(),
        })?;
    check_value(name, value)
}

/// [`parse_value`] for `rtol` (a `clap` value parser).
pub fn parse_rtol(text: &str) -> Result<f64, ToleranceError> {
    parse_value("rtol", text)
}

/// [`parse_value`] for `atol` (a `clap` value parser).
pub fn parse_atol(text: &str) -> Result<f64, ToleranceError> {
    parse_value("atol", text)
}

/// How one output buffer is compared with its reference (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tolerance {
    /// Relative tolerance, relative to the output's magnitude (its largest finite value).
    #[serde(default = "default_rtol", deserialize_with = "stored_rtol")]
    pub rtol: f64,
    /// Absolute tolerance.
    #[serde(default = "default_atol", deserialize_with = "stored_atol")]
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

    /// A tolerance of `rtol` (of the output's magnitude) and `atol`, NaN equal to NaN: each
    /// must be finite and 0 or more ([`ToleranceError`] otherwise). For values from users
    /// (command lines, bindings), which may be anything.
    pub fn new(rtol: f64, atol: f64) -> Result<Tolerance, ToleranceError> {
        Ok(Tolerance {
            rtol: check_value("rtol", rtol)?,
            atol: check_value("atol", atol)?,
            exact: false,
            nan_is_error: false,
        })
    }

    /// Checks that `rtol` and `atol` are finite and 0 or more (a tolerance made field by
    /// field, or read from a file, is not checked otherwise).
    pub fn validate(&self) -> Result<(), ToleranceError> {
        check_value("rtol", self.rtol)?;
        check_value("atol", self.atol)?;
        Ok(())
    }

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
    /// Overrides from user input (`kw tune --rtol/--atol/--nan-is-error`): a given `rtol` or
    /// `atol` must be finite and 0 or more ([`ToleranceError`] otherwise).
    pub fn new(
        rtol: Option<f64>,
        atol: Option<f64>,
        nan_is_error: Option<bool>,
    ) -> Result<ToleranceOverride, ToleranceError> {
        Ok(ToleranceOverride {
            rtol: rtol.map(|v| check_value("rtol", v)).transpose()?,
            atol: atol.map(|v| check_value("atol", v)).transpose()?,
            nan_is_error,
        })
    }

    /// Checks that the overridden `rtol` and `atol` are finite and 0 or more.
    pub fn validate(&self) -> Result<(), ToleranceError> {
        ToleranceOverride::new(self.rtol, self.atol, self.nan_is_error).map(drop)
    }

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

    #[test]
    fn user_values_must_be_finite_and_not_negative() {
        for text in ["NaN", "nan", "inf", "-inf", "-1", "-1e-9", "1e400", "x", ""] {
            let e = parse_rtol(text).expect_err(text).to_string();
            assert!(
                e.contains("rtol") && e.contains("finite number"),
                "{text}: {e}"
            );
        }
        assert_eq!(parse_atol("0"), Ok(0.0));
        assert_eq!(parse_atol("-0"), Ok(0.0));
        assert_eq!(parse_atol(" 1e-3 "), Ok(1e-3));
        assert!(Tolerance::new(f64::NAN, 0.0).is_err());
        assert!(Tolerance::new(1e-5, f64::INFINITY).is_err());
        assert!(Tolerance::new(1e-5, -1.0).is_err());
        assert_eq!(
            Tolerance::new(1e-4, 1e-6).unwrap().bound(1.0),
            1e-6 + 1e-4 * 1.0
        );
        let e = ToleranceOverride::new(None, Some(f64::NAN), None).unwrap_err();
        assert!(e.to_string().contains("atol NaN"), "{e}");
        assert!(ToleranceOverride::new(Some(0.5), None, Some(true)).is_ok());
        let made = ToleranceOverride {
            rtol: Some(-2.0),
            ..ToleranceOverride::default()
        };
        assert!(made.validate().is_err());
        assert!(Tolerance {
            rtol: f64::NAN,
            ..Tolerance::default()
        }
        .validate()
        .is_err());
    }

    #[test]
    fn stored_values_load_as_before_and_null_is_explained() {
        // Old files keep loading, negative values included (they were accepted).
        let t: Tolerance = serde_json::from_str(r#"{"rtol": -1.0, "atol": 0.5}"#).unwrap();
        assert_eq!((t.rtol, t.atol), (-1.0, 0.5));
        let t: Tolerance = serde_json::from_str(r#"{"atol": 0.5}"#).unwrap();
        assert_eq!(t.rtol, Tolerance::DEFAULT_RTOL);
        // What `--rtol NaN` wrote: refused, saying what it is.
        let e = serde_json::from_str::<Tolerance>(r#"{"rtol": null, "atol": 1e-6}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`rtol` is null") && e.contains("NaN"), "{e}");
        // A NaN serialises as null; a valid tolerance round-trips.
        let t = Tolerance::new(2e-5, 3e-6).unwrap();
        let back: Tolerance = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(back, t);
    }
}
