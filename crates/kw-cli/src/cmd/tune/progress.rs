//! The progress bar, and giving up when the first configurations all fail to compile or
//! when the captured configuration does not reproduce its own reference (an inconsistent
//! capture: every configuration would fail verification).

use indicatif::ProgressBar;
use kw_core::space::Point;
use kw_tune::{EvalFailure, EvalResult, Evaluator};

/// How many configurations in a row that all fail to compile stop a run that has no success
/// yet (the kernel or its definition is broken, not a configuration).
pub(super) const COMPILE_GIVE_UP: u64 = 8;

/// Updates the progress bar after every evaluation, and gives up when the first
/// [`COMPILE_GIVE_UP`] configurations all fail to compile.
pub(super) struct WithProgress<'a> {
    pub(super) inner: &'a mut dyn Evaluator,
    pub(super) bar: &'a ProgressBar,
    pub(super) failures: u64,
    pub(super) best: Option<f64>,
    /// Evaluations in a row, with no success yet, that failed to compile; the first error.
    pub(super) compile_failures: u64,
    pub(super) first_compile_error: Option<String>,
    pub(super) gave_up: bool,
    /// The configuration the capture was made with (evaluated first), if in the space.
    pub(super) captured: Option<Point>,
    /// Why the captured configuration failed verification: the capture is inconsistent.
    pub(super) inconsistent: Option<String>,
    /// The objective the results are scores of (`None`: times in ms).
    pub(super) objective: Option<kw_core::objective::ObjectiveDef>,
}

impl Evaluator for WithProgress<'_> {
    fn evaluate(&mut self, point: &Point) -> EvalResult {
        if self.gave_up {
            return Err(EvalFailure::interrupted(
                "every configuration failed to compile",
            ));
        }
        if self.inconsistent.is_some() {
            return Err(EvalFailure::interrupted(
                "the captured configuration does not reproduce the capture's reference",
            ));
        }
        let r = self.inner.evaluate(point);
        if let Err(f) = &r {
            if self.captured.as_ref() == Some(point) && f.reason.starts_with("wrong result") {
                self.inconsistent = Some(f.reason.clone());
            }
        }
        match &r {
            Ok(v) => {
                self.best = Some(self.best.map_or(*v, |b| b.min(*v)));
                self.compile_failures = 0;
            }
            Err(f) if f.interrupted => return r,
            Err(f) => {
                self.failures += 1;
                if self.best.is_none() && f.reason.starts_with("compile failed") {
                    self.compile_failures += 1;
                    self.first_compile_error
                        .get_or_insert_with(|| f.reason.clone());
                    self.gave_up = self.compile_failures >= COMPILE_GIVE_UP;
                } else {
                    self.compile_failures = 0;
                }
            }
        }
        self.bar.inc(1);
        let best = match (self.best, &self.objective) {
            (None, _) => "-".to_string(),
            (Some(b), Some(o)) => format!("{:.4} {}", o.score(b), o.name),
            (Some(b), None) => format!("{b:.4} ms"),
        };
        self.bar
            .set_message(format!("failures {}, best {best}", self.failures));
        r
    }
    fn prefetch(&mut self, points: &[Point]) {
        self.inner.prefetch(points)
    }
    fn take_samples(&mut self) -> Option<Vec<f64>> {
        self.inner.take_samples()
    }
}
