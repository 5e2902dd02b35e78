//! [`ObjectiveDef`]: what tuning optimises. By default the kernel's median time (lower is
//! better); a definition (or `kw tune --objective`) may name an expression over `time` (the
//! median time in milliseconds), the problem size and the tuning parameters, with a
//! direction: `2 * problem_size.x * problem_size.y * problem_size.z / (time * 1e6)` is GFLOP/s
//! of a GEMM, to maximise. Kernels whose work depends on the parameters (temporal tiling in
//! stencils) are compared by throughput, not time. The wisdom record stores the objective and
//! its value; selection compares records of the same objective by it.

use crate::expr::Expr;
use serde::{Deserialize, Serialize};

/// The name an objective expression gives the median time, in milliseconds.
pub const TIME: &str = "time";

/// Whether `ms` is a valid measured time: a positive finite number of milliseconds. The one
/// rule for every time kw measures, logs, simulates, confirms or stores in a wisdom record: a
/// median of 0 is below the device timer's resolution (and would make ratios to it, such as
/// a simulation's fraction of the optimum, meaningless), and NaN, infinities and negative
/// values are never times.
pub fn valid_time(ms: f64) -> bool {
    ms.is_finite() && ms > 0.0
}

/// Whether `value` is a valid value of the objective named `objective`: for [`TIME`] a
/// [`valid_time`]; for any other objective (a value, or a score negated when maximised) any
/// finite number.
pub fn valid_value(objective: &str, value: f64) -> bool {
    if objective == TIME {
        valid_time(value)
    } else {
        value.is_finite()
    }
}

/// An objective: a name, an expression over `time`, the problem size and the parameters, and
/// a direction. Its value for a configuration of a definition: [`ObjectiveDef::value`]
/// (in `kernel_def/objective.rs`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ObjectiveDef {
    /// Its name (`GFLOP/s`), shown in summaries and stored in wisdom records.
    pub name: String,
    /// The expression.
    pub expr: Expr,
    /// Higher is better (throughput); by default lower is better.
    #[serde(default)]
    pub maximize: bool,
}

impl ObjectiveDef {
    /// An objective parsed from expression text.
    pub fn parse(
        name: &str,
        text: &str,
        maximize: bool,
    ) -> Result<ObjectiveDef, crate::parse::ParseError> {
        Ok(ObjectiveDef {
            name: name.to_string(),
            expr: Expr::parse(text)?,
            maximize,
        })
    }

    /// `value` as a score where lower is better (what the search minimises).
    pub fn score(&self, value: f64) -> f64 {
        if self.maximize {
            -value
        } else {
            value
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel_def::sample_def;

    #[test]
    fn a_time_is_positive_and_finite_another_value_finite() {
        for ms in [1e-300, 5e-324, 0.001, 1.0, 1e300, f64::MAX] {
            assert!(valid_time(ms), "{ms}");
            assert!(valid_value(TIME, ms), "{ms}");
        }
        for ms in [0.0, -0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(!valid_time(ms), "{ms}");
            assert!(!valid_value(TIME, ms), "{ms}");
        }
        // Another objective's value (a score: negated when maximised) may be 0 or below.
        for v in [0.0, -0.0, -500.0, 1.0, f64::MIN] {
            assert!(valid_value("GFLOP/s", v), "{v}");
        }
        for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(!valid_value("GFLOP/s", v), "{v}");
        }
    }

    #[test]
    fn throughput_over_time_size_and_parameters() {
        let def = sample_def();
        let o = ObjectiveDef::parse(
            "elements/ms",
            "problem_size.x * elems_per_thread / time",
            true,
        )
        .unwrap();
        let mut c = def.default_config();
        c.set("elems_per_thread", 2);
        let v = o.value(&def, &c, &[1000, 1, 1], 4.0).unwrap();
        assert_eq!(v, 500.0);
        assert_eq!(o.score(v), -500.0);
        assert_eq!(o.unknown_name(&def), None);
        let bad = ObjectiveDef::parse("x", "flops / time", false).unwrap();
        assert_eq!(bad.unknown_name(&def).as_deref(), Some("flops"));
        let text = serde_json::to_string(&o).unwrap();
        assert_eq!(serde_json::from_str::<ObjectiveDef>(&text).unwrap(), o);
        // In a definition: checked like every expression.
        let mut d = sample_def();
        d.objective = Some(bad);
        let problems = crate::kernel_def::check::format_problems(&d.check(None));
        assert!(problems.contains("unknown name `flops`"), "{problems}");
    }

    /// Records tuned for the same objective compare by it (higher is better when maximised);
    /// otherwise by time.
    #[test]
    fn records_compare_by_their_common_objective() {
        use crate::wisdom::Objective;
        let gflops = |ms: f64, value: f64| Objective {
            median_ms: ms,
            samples: 3,
            name: Some("GFLOP/s".into()),
            value: Some(value),
            maximize: true,
            confirmation: None,
        };
        // Slower but more work done: better by throughput.
        let (a, b) = gflops(2.0, 300.0).scores(&gflops(1.0, 200.0));
        assert!(a < b);
        let plain = Objective {
            median_ms: 1.0,
            samples: 3,
            ..Objective::default()
        };
        assert_eq!(gflops(2.0, 300.0).scores(&plain), (2.0, 1.0));
        // Records written before the field load as time records.
        let old: Objective = serde_json::from_str(r#"{"median_ms": 1.5, "samples": 4}"#).unwrap();
        assert_eq!((old.name, old.value, old.maximize), (None, None, false));
    }
}
