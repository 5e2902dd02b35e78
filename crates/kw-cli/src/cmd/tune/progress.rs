//! Progress, and giving up when the first configurations all fail to compile or when the
//! captured configuration does not reproduce its own reference (an inconsistent capture:
//! every configuration would fail verification).
//!
//! On a terminal, a live line (indicatif): evaluations, failures, best so far, time left.
//! Otherwise (a log file, a batch job) a plain line on standard error every
//! [`PROGRESS_INTERVAL_ENV`] seconds (default 10), with the same facts.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kw_core::space::Point;
use kw_tune::{EvalFailure, EvalResult, Evaluator};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Seconds between plain progress lines when standard error is not a terminal (`0`: a line
/// after every evaluation).
pub(super) const PROGRESS_INTERVAL_ENV: &str = "KW_PROGRESS_INTERVAL";

/// The live line on a terminal (hidden elsewhere); `total`: evaluations this run may make.
pub(super) fn bar(label: &str, total: Option<u64>) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix} [{elapsed_precise}] {bar:30} {pos}/{len} evals, {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_prefix(label.to_string());
    bar
}

/// The run's pace: evaluations done, time left, and when the next plain line is due.
pub(super) struct Pace {
    label: String,
    started: Instant,
    deadline: Option<Instant>,
    total: Option<u64>,
    done: u64,
    /// Plain lines (not a terminal): the interval and when the last was printed.
    plain: Option<(Duration, Option<Instant>)>,
    /// More words for the progress text (a run on several devices: evaluations by device).
    pub(super) detail: String,
}

/// The time between plain lines: [`PROGRESS_INTERVAL_ENV`] seconds, else 10 (an invalid
/// value is said once).
fn interval() -> Duration {
    let secs = match std::env::var(PROGRESS_INTERVAL_ENV) {
        Ok(v) => match v.trim().parse::<f64>() {
            // At most a year: a larger Duration would not be made.
            Ok(x) if x.is_finite() && x >= 0.0 => x.min(365.0 * 86400.0),
            _ => {
                kw_core::diag::warn_once(&format!(
                    "invalid {PROGRESS_INTERVAL_ENV}={v:?} (expected seconds, 0 or more); \
                     using 10"
                ));
                10.0
            }
        },
        Err(_) => 10.0,
    };
    kw_core::duration::saturating_secs(secs)
}

impl Pace {
    /// `total`: evaluations this run may make; `deadline`: when its time is up.
    pub(super) fn new(label: &str, total: Option<u64>, deadline: Option<Instant>) -> Pace {
        let plain = (!std::io::stderr().is_terminal()).then(|| (interval(), None));
        Pace {
            label: label.to_string(),
            started: Instant::now(),
            deadline,
            total,
            done: 0,
            plain,
            detail: String::new(),
        }
    }

    /// Plain lines even on a terminal (runs side by side, whose live lines would collide).
    pub(super) fn plain_lines(mut self) -> Pace {
        if self.plain.is_none() {
            self.plain = Some((interval(), None));
        }
        self
    }

    /// The time left: the shorter of the deadline and the remaining evaluations at the
    /// pace so far.
    fn left(&self, now: Instant) -> String {
        let by_deadline = self.deadline.map(|d| d.saturating_duration_since(now));
        let by_count = self.total.filter(|_| self.done > 0).map(|t| {
            let each = now.duration_since(self.started).as_secs_f64() / self.done as f64;
            kw_core::duration::saturating_secs(each * t.saturating_sub(self.done) as f64)
        });
        match by_deadline.into_iter().chain(by_count).min() {
            Some(d) if d.as_secs() == 0 => "under 1 s left".into(),
            Some(d) => format!("about {} left", human_duration(d)),
            None => "time left unknown".into(),
        }
    }

    /// Counts one evaluation; returns the progress text, and prints a plain line when one
    /// is due.
    fn tick(&mut self, failures: u64, best: &str) -> String {
        self.done += 1;
        let now = Instant::now();
        let text = format!(
            "failures {failures}, best {best}, {}{}",
            self.left(now),
            self.detail
        );
        if let Some((every, last)) = &mut self.plain {
            if last.is_none_or(|l| now.duration_since(l) >= *every) {
                *last = Some(now);
                let of = self.total.map_or(String::new(), |t| format!("/{t}"));
                eprintln!(
                    "kw tune: {}: {}{of} evaluations, {text}",
                    self.label, self.done
                );
            }
        }
        text
    }
}

/// `45 s`, `3 min 20 s`, `1 h 5 min`.
fn human_duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, s / 60 % 60),
    }
}

/// How many configurations in a row that all fail to compile stop a run that has no success
/// yet (the kernel or its definition is broken, not a configuration).
pub(super) const COMPILE_GIVE_UP: u64 = 8;

/// What the run watches in its results: the progress bar and plain lines, failures, the best
/// so far, giving up when the first [`COMPILE_GIVE_UP`] configurations all fail to compile,
/// and a captured configuration that does not reproduce its own reference. One device's run
/// feeds it through [`WithProgress`]; a run on several devices from its results as they come.
pub(super) struct Watch<'a> {
    pub(super) bar: &'a ProgressBar,
    pub(super) pace: Pace,
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

impl Watch<'_> {
    /// Why no more configuration should be evaluated, if so.
    pub(super) fn halted(&self) -> Option<&'static str> {
        if self.gave_up {
            Some("every configuration failed to compile")
        } else if self.inconsistent.is_some() {
            Some("the captured configuration does not reproduce the capture's reference")
        } else {
            None
        }
    }

    /// Takes one result in (an interrupted evaluation is not counted).
    pub(super) fn observe(&mut self, point: &Point, r: &EvalResult) {
        if let Err(f) = r {
            if self.captured.as_ref() == Some(point) && f.reason.starts_with("wrong result") {
                self.inconsistent = Some(f.reason.clone());
            }
        }
        match r {
            Ok(v) => {
                self.best = Some(self.best.map_or(*v, |b| b.min(*v)));
                self.compile_failures = 0;
            }
            Err(f) if f.interrupted => return,
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
            (Some(b), Some(o)) => format!("{} {}", kw_core::diag::figure(o.score(b)), o.name),
            (Some(b), None) => format!("{} ms", kw_core::diag::figure(b)),
        };
        let text = self.pace.tick(self.failures, &best);
        self.bar.set_message(text);
    }
}

/// An evaluator that feeds every result to a [`Watch`], and evaluates nothing more once it
/// has given up.
pub(super) struct WithProgress<'a, 'b> {
    pub(super) inner: &'a mut dyn Evaluator,
    pub(super) watch: Watch<'b>,
}

impl Evaluator for WithProgress<'_, '_> {
    fn evaluate(&mut self, point: &Point) -> EvalResult {
        self.evaluate_any(std::slice::from_ref(point)).1
    }

    fn evaluate_any(&mut self, points: &[Point]) -> (usize, EvalResult) {
        if let Some(why) = self.watch.halted() {
            return (0, Err(EvalFailure::interrupted(why)));
        }
        let (i, r) = self.inner.evaluate_any(points);
        if let Some(point) = points.get(i) {
            self.watch.observe(point, &r);
        }
        (i, r)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_left_is_the_shorter_of_deadline_and_pace() {
        let now = Instant::now();
        let mut p = Pace::new("k", Some(10), Some(now + Duration::from_secs(100)));
        p.started = now - Duration::from_secs(4);
        p.done = 2; // 2 s each, 8 left: 16 s, before the deadline
        assert_eq!(p.left(now), "about 16 s left");
        p.total = None;
        assert_eq!(p.left(now), "about 1 min 40 s left");
        p.deadline = None;
        assert_eq!(p.left(now), "time left unknown");
        assert_eq!(human_duration(Duration::from_secs(3900)), "1 h 5 min");
    }
}
