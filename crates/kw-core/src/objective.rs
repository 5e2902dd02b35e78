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
