//! Tuning for an objective other than the time ([`kw_core::objective`]): the definition's, or
//! `kw tune --objective EXPR [--objective-name NAME] [--maximize]`. The search minimises a
//! score (the objective's value, negated when maximised); every configuration's median time
//! is kept for the wisdom record.

use super::args::TuneArgs;
use anyhow::{Context, Result};
use kw_core::kernel_def::KernelDef;
use kw_core::objective::{ObjectiveDef, TIME};
use kw_core::space::{Point, TuningSpace};
use kw_tune::{EvalFailure, EvalResult, Evaluator};
use std::collections::HashMap;

/// The objective of this run: the command line's, else the definition's, else `None` (time).
/// The name `time` belongs to the median time: a results log's header names its values'
/// objective, and a log of `time` holds positive times in milliseconds (what reading it
/// checks), never another objective's scores.
pub(super) fn chosen(args: &TuneArgs, def: &KernelDef) -> Result<Option<ObjectiveDef>> {
    let Some(text) = &args.objective else {
        if let Some(o) = def.objective.as_ref().filter(|o| o.name == TIME) {
            anyhow::bail!(
                "kernel `{}`: its definition's objective `{}` is named `{TIME}`, the name of \
                 the median time; give it another name, or override it with --objective and \
                 --objective-name",
                def.kernel_name,
                o.expr
            );
        }
        return Ok(def.objective.clone());
    };
    let name = args.objective_name.as_deref().unwrap_or(text);
    if name == TIME {
        let fix = if args.objective_name.is_some() {
            "give --objective-name another name"
        } else {
            "name it with --objective-name"
        };
        anyhow::bail!(
            "--objective `{text}`: the name `{TIME}` is the median time's (to tune for the \
             time, leave --objective out); {fix}"
        );
    }
    let o = ObjectiveDef::parse(name, text, args.maximize)
        .with_context(|| format!("--objective `{text}`"))?;
    if let Some(unknown) = o.unknown_name(def) {
        anyhow::bail!(
            "--objective `{text}`: unknown name `{unknown}` (it may use `time`, in \
             milliseconds, the problem size and the parameters of `{}`)",
            def.kernel_name
        );
    }
    Ok(Some(o))
}

/// An evaluator whose results are the objective's scores (lower is better) instead of times.
pub(super) struct ObjectiveEval<'a> {
    inner: &'a mut dyn Evaluator,
    objective: ObjectiveDef,
    def: &'a KernelDef,
    space: &'a TuningSpace,
    problem_size: [i64; 3],
    /// Every successful configuration's median time (ms).
    pub(super) times: HashMap<Point, f64>,
}

impl<'a> ObjectiveEval<'a> {
    pub(super) fn new(
        inner: &'a mut dyn Evaluator,
        objective: ObjectiveDef,
        def: &'a KernelDef,
        space: &'a TuningSpace,
        problem_size: [i64; 3],
    ) -> ObjectiveEval<'a> {
        ObjectiveEval {
            inner,
            objective,
            def,
            space,
            problem_size,
            times: HashMap::new(),
        }
    }
}

impl Evaluator for ObjectiveEval<'_> {
    fn evaluate(&mut self, point: &Point) -> EvalResult {
        self.evaluate_any(std::slice::from_ref(point)).1
    }

    fn evaluate_any(&mut self, points: &[Point]) -> (usize, EvalResult) {
        let (i, r) = self.inner.evaluate_any(points);
        (i, r.and_then(|ms| self.score(&points[i], ms)))
    }
    fn prefetch(&mut self, points: &[Point]) {
        self.inner.prefetch(points)
    }
    fn take_samples(&mut self) -> Option<Vec<f64>> {
        self.inner.take_samples()
    }

    fn ahead(&self) -> Option<usize> {
        self.inner.ahead()
    }
}

impl ObjectiveEval<'_> {
    /// The objective of `point` measured at `ms`.
    fn score(&mut self, point: &Point, ms: f64) -> EvalResult {
        self.times.insert(point.clone(), ms);
        let config = self.space.config(point);
        let o = &self.objective;
        match o.value(self.def, &config, &self.problem_size, ms) {
            Ok(v) if v.is_finite() => Ok(o.score(v)),
            Ok(v) => Err(EvalFailure::new(format!("objective `{}` is {v}", o.name))),
            Err(e) => Err(EvalFailure::new(format!("objective `{}`: {e}", o.name))),
        }
    }
}
