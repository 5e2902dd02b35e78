//! [`Tuner::with_lookahead`]: the queue stays as deep as asked while a strategy proposes
//! ahead of its results (each proposal compiled ahead by a real evaluator), no deeper than
//! the evaluator asks for ([`Evaluator::ahead`]), and the evaluator may take any queued
//! point first ([`Evaluator::evaluate_any`]).

use kw_core::space::{Parameter, Point, TuningSpace};
use kw_tune::{strategies, EvalResult, Evaluator, Stop, TuneReport, Tuner};
use std::collections::HashSet;

/// 4096 configurations, no restriction.
fn space() -> TuningSpace {
    let p = |n: &str| Parameter::new(n, [1, 2, 4, 8, 16, 32, 64, 128]);
    TuningSpace::new(vec![p("a"), p("b"), p("c"), p("d")], vec![]).expect("space")
}

/// A smooth objective with one optimum; records how many prefetched points were waiting
/// (prefetched, not yet evaluated) at each evaluation.
struct Queue {
    space: TuningSpace,
    waiting: HashSet<Point>,
    depths: Vec<usize>,
    ahead: Option<usize>,
    /// Take the last of the candidates `evaluate_any` is offered (the first by default).
    last: bool,
    /// How many candidates each `evaluate_any` was offered.
    offered: Vec<usize>,
}

impl Evaluator for Queue {
    fn prefetch(&mut self, points: &[Point]) {
        self.waiting.extend(points.iter().cloned());
    }

    fn evaluate(&mut self, point: &Point) -> EvalResult {
        self.depths.push(self.waiting.len());
        self.waiting.remove(point);
        let c = self.space.config(point);
        let get = |n: &str| c.get(n).and_then(|v| v.as_f64()).unwrap_or(1.0).log2();
        Ok(1.0 + (get("a") - 5.0).powi(2) + (get("b") - 2.0).powi(2) + get("c") * 0.3 + get("d"))
    }

    fn evaluate_any(&mut self, points: &[Point]) -> (usize, EvalResult) {
        self.offered.push(points.len());
        let i = if self.last { points.len() - 1 } else { 0 };
        (i, self.evaluate(&points[i]))
    }

    fn ahead(&self) -> Option<usize> {
        self.ahead
    }
}

fn run(strategy: &str, lookahead: usize, ahead: Option<usize>, last: bool) -> (Queue, TuneReport) {
    let space = space();
    let mut s = strategies::create(strategy, 7).expect("strategy");
    let mut ev = Queue {
        space: space.clone(),
        waiting: HashSet::new(),
        depths: Vec::new(),
        ahead,
        last,
        offered: Vec::new(),
    };
    let report = Tuner::new(&space, Stop::Evaluations(200))
        .with_lookahead(lookahead)
        .run(s.as_mut(), &mut ev)
        .expect("run");
    assert_eq!(report.progress.evaluations, 200, "{strategy}");
    (ev, report)
}

fn depths(strategy: &str, lookahead: usize, ahead: Option<usize>) -> Vec<usize> {
    run(strategy, lookahead, ahead, false).0.depths
}

#[test]
fn model_based_strategies_keep_the_queue_full() {
    // Before the fix, a strategy forgot its pending proposals at every ask, proposed queued
    // points again, and the queue drained to 5-8 of 16 (the compile threads idle).
    for strategy in ["hybrid6", "hybrid3", "surrogate", "annealing", "ils"] {
        let d = depths(strategy, 16, None);
        // Every evaluation but the last 16 (the budget ends the queue) has 16 waiting, after
        // the initial design for `hybrid6`, which waits for the design's results before its
        // model proposes.
        let from = if strategy == "hybrid6" { 10 } else { 0 };
        let steady = &d[from..d.len() - 16];
        assert!(d[..from].iter().all(|&k| k <= 10), "{strategy}: {d:?}");
        let short = steady.iter().filter(|&&k| k < 16).count();
        assert_eq!(short, 0, "{strategy}: queue depths {d:?}");
    }
}

#[test]
fn the_evaluator_asks_for_less_and_the_lookahead_caps_it() {
    let d = depths("hybrid6", 16, Some(3));
    assert!(d.iter().all(|&k| k <= 3), "{d:?}");
    assert!(d[10..180].iter().all(|&k| k == 3), "{d:?}");
    let d = depths("hybrid6", 4, Some(40));
    assert!(d.iter().all(|&k| k <= 4), "{d:?}");
    assert!(d[10..180].iter().all(|&k| k == 4), "{d:?}");
}

#[test]
fn the_evaluator_may_take_any_queued_point_first() {
    let (ev, report) = run("hybrid6", 16, None, true);
    // Offered the queue up to the depth: 16 at a time once the design is in.
    assert!(
        ev.offered.iter().all(|&n| (1..=16).contains(&n)),
        "{:?}",
        ev.offered
    );
    assert!(
        ev.offered.iter().filter(|&&n| n == 16).count() > 100,
        "{:?}",
        ev.offered
    );
    // Every evaluation recorded is the point evaluated (taken last), each point once, each
    // one prefetched first.
    let points: Vec<&Point> = report.history.iter().map(|e| &e.point).collect();
    let unique: HashSet<&Point> = points.iter().copied().collect();
    assert_eq!(unique.len(), 200);
    assert!(ev.waiting.iter().all(|p| !unique.contains(p)));
    let best = report.best.expect("a best").1;
    let min = report
        .history
        .iter()
        .filter_map(|e| e.result.as_ref().ok().copied())
        .fold(f64::INFINITY, f64::min);
    assert_eq!(best, min);
    // With one queued, only the front is offered.
    let (ev, _) = run("hybrid6", 1, None, true);
    assert!(ev.offered.iter().all(|&n| n == 1), "{:?}", ev.offered);
}

#[test]
fn a_prior_point_the_strategy_also_proposed_is_told_to_it_and_the_run_goes_on() {
    // On a small space with many prior points queued ahead, the strategy's random design
    // proposes some of them again while they wait in the queue; their results must reach it
    // as its own, or `hybrid6` waits for them forever and the run ends early.
    use kw_tune::prior::{PriorShare, Seeding, TrustSettings};
    let small = TuningSpace::new(
        vec![
            kw_core::space::Parameter::new("a", [1, 2, 4, 8]),
            kw_core::space::Parameter::new("b", [1, 2, 4, 8]),
        ],
        vec![],
    )
    .expect("space");
    let trust = PriorShare::Trust(TrustSettings {
        patience: 1,
        forget: true,
        mix: true,
        stop: 0,
        local: 0,
        local_mix: false,
        gate: 0,
        guided: false,
    });
    for share in [PriorShare::Blind, PriorShare::Late(100), trust] {
        for seed in 0..20 {
            let prior: Vec<Point> = small.iter().step_by(2).take(6).collect();
            let seeding = Seeding {
                points: prior,
                share,
                scores: None,
                climb: None,
            };
            let mut s = strategies::create_seeded("hybrid6", seed, &seeding).expect("strategy");
            let mut ev = Queue {
                space: small.clone(),
                waiting: HashSet::new(),
                depths: Vec::new(),
                ahead: None,
                last: false,
                offered: Vec::new(),
            };
            let report = Tuner::new(&small, Stop::Evaluations(14))
                .with_lookahead(16)
                .run(s.as_mut(), &mut ev)
                .expect("run");
            assert_eq!(
                report.progress.evaluations, 14,
                "{share:?} seed {seed}: stopped early ({:?})",
                report.reason
            );
        }
    }
}

#[test]
fn the_initial_points_are_evaluated_first_in_order() {
    // Even by an evaluator that always takes the last candidate it is offered.
    let space = space();
    let initial: Vec<Point> = space.iter().skip(100).step_by(37).take(2).collect();
    let mut s = strategies::create("hybrid6", 3).expect("strategy");
    let mut ev = Queue {
        space: space.clone(),
        waiting: HashSet::new(),
        depths: Vec::new(),
        ahead: None,
        last: true,
        offered: Vec::new(),
    };
    let report = Tuner::new(&space, Stop::Evaluations(30))
        .with_lookahead(16)
        .with_initial(initial.clone())
        .run(s.as_mut(), &mut ev)
        .expect("run");
    let first: Vec<Point> = report
        .history
        .iter()
        .take(2)
        .map(|e| e.point.clone())
        .collect();
    assert_eq!(first, initial);
    assert_eq!(&ev.offered[..2], &[1, 1]);
    assert!(ev.offered[2..].iter().any(|&n| n > 1), "{:?}", ev.offered);
}

/// A strategy that waits for its proposals' results before proposing more (proposes nothing
/// while any is outstanding), as a prior's climb asked ahead does.
struct Patient {
    outstanding: usize,
    next: u32,
}

impl kw_tune::Strategy for Patient {
    fn name(&self) -> &str {
        "patient"
    }
    fn ask(&mut self, space: &TuningSpace, _hint: usize) -> Vec<Point> {
        if self.outstanding > 0 {
            return Vec::new();
        }
        let points: Vec<Point> = (0..2)
            .filter_map(|k| space.point_at(u128::from(self.next + k)))
            .collect();
        self.next += 2;
        self.outstanding = points.len();
        points
    }
    fn tell(&mut self, _space: &TuningSpace, _point: &Point, _result: &EvalResult) {
        self.outstanding = self.outstanding.saturating_sub(1);
    }
}

/// A strategy that proposed nothing while its proposals were queued, then more once their
/// results were in: the tuner asked it again when the queue drained. It spun for ever there
/// (found through `kw tune --resume` with the default strategy and a prior).
#[test]
fn a_strategy_waiting_for_its_results_is_asked_again_when_the_queue_drains() {
    let (done, finished) = std::sync::mpsc::channel();
    // In a thread: the defect was a loop that never ended, which must fail, not hang.
    std::thread::spawn(move || {
        let space = space();
        let mut s = Patient {
            outstanding: 0,
            next: 0,
        };
        let mut ev = Queue {
            space: space.clone(),
            waiting: HashSet::new(),
            depths: Vec::new(),
            ahead: None,
            last: false,
            offered: Vec::new(),
        };
        let report = Tuner::new(&space, Stop::Evaluations(10))
            .with_lookahead(4)
            .run(&mut s, &mut ev)
            .expect("run");
        let _ = done.send(report.progress.evaluations);
    });
    let evaluations = finished
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the tuner finishes 10 evaluations (it spun with an empty queue)");
    assert_eq!(evaluations, 10);
}
