//! [`Tuner::run_parallel`]: one search on several lanes (devices) at once: every
//! configuration evaluated once across the lanes and the log, the same best as one lane, a
//! lane whose device fails is dropped and the configuration it held goes to another, and a
//! resumed log is not evaluated again.

mod common;

use common::{small_objective, small_space};
use kw_core::space::{Point, TuningSpace};
use kw_tune::log::{read_log, LogHeader};
use kw_tune::{
    strategies, EvalFailure, EvalResult, Evaluator, Lane, LaneEvent, ResultsLog, Stop, Tuner,
};
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

fn temp(name: &str) -> PathBuf {
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!("kw-tune-par-{}-{nonce}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

/// Points held by the devices of a test now, and those offered to two at once.
type Held = std::sync::Arc<std::sync::Mutex<(HashSet<Point>, Vec<Point>)>>;

/// The small objective, failing fatally (its device lost) from its `die_at`-th call on.
struct Device {
    space: TuningSpace,
    calls: u64,
    die_at: Option<u64>,
    seen: Vec<Point>,
    /// Evaluations running now across the devices of a test, and the most at once.
    busy: Option<std::sync::Arc<(AtomicUsize, AtomicUsize)>>,
    /// `evaluate_any` measures the last of the points it is offered (as if compiled first),
    /// and asks for this queue depth ([`Evaluator::ahead`]); `None`: the trait's defaults.
    any: Option<usize>,
    /// The number of points each `evaluate_any` call was offered.
    offered: Vec<usize>,
    /// The points every device of a test holds now, and the points offered to two devices at
    /// once (checked after the run: a panic in a lane's thread would hang the loop).
    held: Option<Held>,
}

impl Device {
    fn new(die_at: Option<u64>) -> Device {
        Device {
            space: small_space(),
            calls: 0,
            die_at,
            seen: Vec::new(),
            busy: None,
            any: None,
            offered: Vec::new(),
            held: None,
        }
    }
}

impl Evaluator for Device {
    fn evaluate(&mut self, point: &Point) -> EvalResult {
        self.calls += 1;
        if self.die_at.is_some_and(|d| self.calls >= d) {
            return Err(EvalFailure::fatal("device lost"));
        }
        self.seen.push(point.clone());
        if let Some(b) = &self.busy {
            let now = b.0.fetch_add(1, Ordering::SeqCst) + 1;
            b.1.fetch_max(now, Ordering::SeqCst);
        }
        // Let the other lanes run meanwhile.
        std::thread::sleep(std::time::Duration::from_millis(2));
        if let Some(b) = &self.busy {
            b.0.fetch_sub(1, Ordering::SeqCst);
        }
        small_objective(&self.space, point)
    }

    fn evaluate_any(&mut self, points: &[Point]) -> (usize, EvalResult) {
        if self.any.is_none() {
            return (0, self.evaluate(&points[0]));
        }
        self.offered.push(points.len());
        if let Some(held) = &self.held {
            let (h, twice) = &mut *held.lock().expect("lock");
            for p in points {
                if !h.insert(p.clone()) {
                    twice.push(p.clone());
                }
            }
        }
        let last = points.len() - 1;
        let result = self.evaluate(&points[last]);
        if let Some(held) = &self.held {
            let (h, _) = &mut *held.lock().expect("lock");
            for p in points {
                h.remove(p);
            }
        }
        (last, result)
    }

    fn ahead(&self) -> Option<usize> {
        self.any
    }
}

/// One lane per device, named by its index.
fn lanes(devices: &mut [Device]) -> Vec<Lane<'_>> {
    devices
        .iter_mut()
        .enumerate()
        .map(|(i, d)| Lane {
            name: i.to_string(),
            evaluator: d,
        })
        .collect()
}

fn run(
    space: &TuningSpace,
    devices: &mut [Device],
    stop: Stop,
    log: Option<&PathBuf>,
    events: &mut Vec<String>,
) -> kw_tune::TuneReport {
    run_with("exhaustive", space, devices, stop, log, events)
}

fn run_with(
    name: &str,
    space: &TuningSpace,
    devices: &mut [Device],
    stop: Stop,
    log: Option<&PathBuf>,
    events: &mut Vec<String>,
) -> kw_tune::TuneReport {
    let mut strategy = strategies::create(name, 0).expect("strategy");
    let mut tuner = Tuner::new(space, stop).with_lookahead(3);
    if let Some(path) = log {
        let header = LogHeader::new(space).with_strategy("exhaustive", 0);
        let (log, records) = if path.exists() {
            ResultsLog::resume(path, space, &header).expect("resume")
        } else {
            (ResultsLog::create(path, &header).expect("log"), Vec::new())
        };
        tuner = tuner.resume(log, records);
    }
    let mut lanes = lanes(devices);
    let (report, lanes) = tuner
        .run_parallel(&mut *strategy, &mut lanes, &mut |e| {
            if let LaneEvent::Dropped { lane, retried, .. } = e {
                events.push(format!("dropped {lane} retried {}", retried.is_some()));
            }
            true
        })
        .expect("parallel run");
    let total: u64 = lanes.iter().map(|l| l.evaluations).sum();
    assert_eq!(total, report.progress.evaluations - report.replayed);
    report
}

#[test]
fn two_lanes_evaluate_every_configuration_once_with_the_one_lane_best() {
    let space = small_space();
    let log = temp("two.jsonl");
    let mut devices = vec![Device::new(None), Device::new(None)];
    let report = run(
        &space,
        &mut devices,
        Stop::Evaluations(u64::MAX),
        Some(&log),
        &mut Vec::new(),
    );
    let n = space.len() as usize;
    assert_eq!(report.progress.evaluations as usize, n);
    let all: Vec<&Point> = devices.iter().flat_map(|d| &d.seen).collect();
    assert_eq!(all.len(), n, "each configuration evaluated once");
    assert_eq!(all.iter().collect::<HashSet<_>>().len(), n);
    assert!(
        devices.iter().all(|d| !d.seen.is_empty()),
        "both lanes worked"
    );
    let records = read_log(&log).expect("log").records;
    assert_eq!(records.len(), n);
    assert_eq!(
        records.iter().map(|r| &r.key).collect::<HashSet<_>>().len(),
        n
    );
    assert!(records.iter().all(|r| r.device.is_some()));
    // One lane: the same best.
    let mut one = vec![Device::new(None)];
    let single = run(
        &space,
        &mut one,
        Stop::Evaluations(u64::MAX),
        None,
        &mut Vec::new(),
    );
    assert_eq!(single.best, report.best);
}

#[test]
fn a_failed_lane_is_dropped_and_its_configuration_goes_to_the_other() {
    let space = small_space();
    let mut devices = vec![Device::new(None), Device::new(Some(4))];
    let mut events = Vec::new();
    let report = run(
        &space,
        &mut devices,
        Stop::Evaluations(u64::MAX),
        None,
        &mut events,
    );
    assert_eq!(events, vec!["dropped 1 retried true".to_string()]);
    let n = space.len() as usize;
    assert_eq!(report.progress.evaluations as usize, n);
    let all: Vec<&Point> = devices.iter().flat_map(|d| &d.seen).collect();
    assert_eq!(all.iter().collect::<HashSet<_>>().len(), n);
    assert_eq!(all.len(), n, "nothing evaluated twice");
    assert_eq!(devices[1].seen.len(), 3);
}

#[test]
fn a_budget_is_kept_and_a_resumed_log_is_not_evaluated_again() {
    let space = small_space();
    let log = temp("resume.jsonl");
    let mut first = vec![Device::new(None), Device::new(None)];
    let report = run(
        &space,
        &mut first,
        Stop::Evaluations(7),
        Some(&log),
        &mut Vec::new(),
    );
    assert_eq!(report.progress.evaluations, 7);
    let mut second = vec![Device::new(None), Device::new(None)];
    let report = run(
        &space,
        &mut second,
        Stop::Evaluations(u64::MAX),
        Some(&log),
        &mut Vec::new(),
    );
    assert_eq!(report.replayed, 7);
    let n = space.len() as usize;
    let records = read_log(&log).expect("log").records;
    assert_eq!(records.len(), n);
    assert_eq!(
        records.iter().map(|r| &r.key).collect::<HashSet<_>>().len(),
        n
    );
    let again: usize = second.iter().map(|d| d.seen.len()).sum();
    assert_eq!(again, n - 7);
}

/// Checks that no configuration was evaluated twice across `devices` and that every
/// evaluation was recorded; returns how many there were.
fn evaluated_once(name: &str, devices: &[Device], report: &kw_tune::TuneReport) -> usize {
    let all: Vec<&Point> = devices.iter().flat_map(|d| &d.seen).collect();
    let distinct = all.iter().collect::<HashSet<_>>().len();
    assert_eq!(
        distinct,
        all.len(),
        "{name}: a configuration evaluated twice"
    );
    assert_eq!(
        report.progress.evaluations as usize,
        all.len(),
        "{name}: every evaluation recorded"
    );
    all.len()
}

#[test]
fn every_strategy_runs_on_three_lanes_without_evaluating_twice() {
    let space = small_space();
    for name in strategies::all() {
        let busy = std::sync::Arc::new((AtomicUsize::new(0), AtomicUsize::new(0)));
        let mut devices = vec![Device::new(None), Device::new(None), Device::new(None)];
        for d in &mut devices {
            d.busy = Some(busy.clone());
        }
        let report = run_with(
            name,
            &space,
            &mut devices,
            Stop::Evaluations(30),
            None,
            &mut Vec::new(),
        );
        let n = evaluated_once(name, &devices, &report);
        assert!(n <= 30, "{name}: the budget is kept ({n} evaluations)");
        assert!(report.best.is_some(), "{name}: a best configuration");
        // Not asserted (timing): how many lanes the strategy kept busy at once.
        eprintln!(
            "{name}: {n} evaluations, at most {} at once",
            busy.1.load(Ordering::SeqCst)
        );
    }
}

#[test]
fn a_lane_is_not_idle_while_the_strategy_waits_for_its_design() {
    // `hybrid6` proposes its initial design (10), then waits for results: with 16 queued per
    // lane, the first lane reserves the whole design and the second takes from its
    // reservation (`next_point` steals) instead of idling.
    let space = small_space();
    let mut devices = vec![Device::new(None), Device::new(None)];
    let mut strategy = strategies::create("hybrid6", 0).expect("strategy");
    let mut lanes = lanes(&mut devices);
    let (report, lanes) = Tuner::new(&space, Stop::Evaluations(10))
        .with_lookahead(16)
        .run_parallel(&mut *strategy, &mut lanes, &mut |_| true)
        .expect("parallel run");
    assert_eq!(report.progress.evaluations, 10);
    assert!(
        lanes.iter().all(|l| l.evaluations > 0),
        "both lanes evaluated part of the design: {lanes:?}"
    );
}

#[test]
fn a_lane_measures_the_configuration_ready_first_and_keeps_the_others() {
    // Each device measures the last of the points it is offered (the one "compiled first")
    // and asks for 4 queued (the run's lookahead, 3, caps it); the others stay its own:
    // never offered to two devices at once, never evaluated twice, the budget kept.
    let space = small_space();
    let held: Held = Default::default();
    for name in ["exhaustive", "random", "hybrid6"] {
        let mut devices = vec![Device::new(None), Device::new(None)];
        for d in &mut devices {
            d.any = Some(4);
            d.held = Some(held.clone());
        }
        let report = run_with(
            name,
            &space,
            &mut devices,
            Stop::Evaluations(40),
            None,
            &mut Vec::new(),
        );
        let n = evaluated_once(name, &devices, &report);
        assert_eq!(n, 40.min(space.len() as usize), "{name}: the budget");
        let offered: Vec<usize> = devices.iter().flat_map(|d| d.offered.clone()).collect();
        assert!(
            offered.iter().all(|&n| (1..=3).contains(&n)),
            "{name}: at most the lookahead: {offered:?}"
        );
        assert!(
            offered.iter().any(|&n| n > 1),
            "{name}: later configurations offered: {offered:?}"
        );
        let twice = &held.lock().expect("lock").1;
        assert!(
            twice.is_empty(),
            "{name}: offered to two devices: {twice:?}"
        );
    }
}

#[test]
fn a_failed_lane_gives_back_the_configurations_it_held() {
    // The device that fails held several configurations; the other device evaluates them
    // all, each once.
    let space = small_space();
    let mut devices = vec![Device::new(None), Device::new(Some(5))];
    for d in &mut devices {
        d.any = Some(4);
    }
    let mut events = Vec::new();
    let report = run(
        &space,
        &mut devices,
        Stop::Evaluations(u64::MAX),
        None,
        &mut events,
    );
    assert_eq!(events, vec!["dropped 1 retried true".to_string()]);
    assert!(
        devices[1].offered.last().is_some_and(|&n| n > 1),
        "the failed device held several: {:?}",
        devices[1].offered
    );
    let n = space.len() as usize;
    assert_eq!(report.progress.evaluations as usize, n);
    let all: Vec<&Point> = devices.iter().flat_map(|d| &d.seen).collect();
    assert_eq!(all.len(), n, "nothing evaluated twice");
    assert_eq!(all.iter().collect::<HashSet<_>>().len(), n);
}
