//! Results logs: an interrupted run resumes where it stopped and ends like an uninterrupted one.

mod common;

use common::{shared_dir, simulation, small_objective, small_space};
use kw_core::{space::Point, space::TuningSpace};
use kw_tune::log::{read_log, LogHeader};
use kw_tune::strategies;
use kw_tune::{EvalFailure, EvalResult, Evaluator, ResultsLog, Stop, TuneError, Tuner};
use std::io::Write;
use std::path::PathBuf;

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kw-tune-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

/// An evaluator that counts calls and dies (fatally) after `die_after` calls.
struct Flaky<E> {
    inner: E,
    calls: u64,
    die_after: Option<u64>,
}

impl<E: Evaluator> Evaluator for Flaky<E> {
    fn evaluate(&mut self, point: &Point) -> EvalResult {
        if self.die_after.is_some_and(|d| self.calls >= d) {
            return Err(EvalFailure::fatal("device lost"));
        }
        self.calls += 1;
        self.inner.evaluate(point)
    }
}

fn interrupted_then_resumed<E: Evaluator + Clone>(
    space: &TuningSpace,
    evaluator: E,
    name: &str,
    budget: u64,
    die_after: u64,
    file: &str,
) {
    let seed = 5;
    let stop = Stop::Evaluations(budget);
    // Uninterrupted.
    let mut s = strategies::create(name, seed).expect("strategy");
    let mut ev = evaluator.clone();
    let full = Tuner::new(space, stop.clone())
        .run(&mut *s, &mut ev)
        .expect("full run");
    // Interrupted: the evaluator dies after `die_after` evaluations.
    let path = temp(file);
    let header = LogHeader::new(space).with_strategy(name, seed);
    let log = ResultsLog::create(&path, &header).expect("create log");
    let mut s = strategies::create(name, seed).expect("strategy");
    let mut flaky = Flaky {
        inner: evaluator.clone(),
        calls: 0,
        die_after: Some(die_after),
    };
    let err = Tuner::new(space, stop.clone())
        .with_log(log)
        .run(&mut *s, &mut flaky)
        .expect_err("the run is interrupted");
    assert!(matches!(err, TuneError::Fatal { .. }), "{err}");
    // A crash in the middle of writing a line leaves a fragment.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(b"{\"eval\": 99, \"key\": \"1,2"))
        .expect("append fragment");
    assert_eq!(
        read_log(&path).expect("read").records.len() as u64,
        die_after
    );
    // Resume with a fresh strategy (same seed): logged results are not evaluated again.
    let (log, records) = ResultsLog::resume(&path, space, &header).expect("resume");
    assert_eq!(records.len() as u64, die_after);
    let mut s = strategies::create(name, seed).expect("strategy");
    let mut counting = Flaky {
        inner: evaluator,
        calls: 0,
        die_after: None,
    };
    let resumed = Tuner::new(space, stop)
        .resume(log, records)
        .run(&mut *s, &mut counting)
        .expect("resumed run");
    assert_eq!(
        counting.calls,
        budget - die_after,
        "{name}: re-evaluated logged results"
    );
    assert_eq!(resumed.replayed, die_after);
    assert_eq!(resumed.progress.evaluations, budget);
    let points = |r: &kw_tune::TuneReport| {
        r.history
            .iter()
            .map(|e| e.point.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        points(&resumed),
        points(&full),
        "{name}: resumed run differs"
    );
    assert_eq!(resumed.best, full.best, "{name}: different final result");
    // The log now holds the whole run, once each, and nothing of the fragment.
    let contents = read_log(&path).expect("read");
    assert_eq!(contents.records.len() as u64, budget);
    let logged: Vec<Point> = contents.records.iter().map(|r| r.point.clone()).collect();
    assert_eq!(logged, points(&full));
    let _ = std::fs::remove_file(&path);
}

#[test]
fn resume_small_space_every_strategy() {
    let space = small_space();
    let sp = space.clone();
    let ev = move |p: &Point| small_objective(&sp, p);
    for name in strategies::names() {
        interrupted_then_resumed(
            &space,
            ev.clone(),
            name,
            30,
            13,
            &format!("small-{name}.jsonl"),
        );
    }
}

#[test]
fn resume_measured_space() {
    let Some(dir) = shared_dir() else { return };
    let sim = simulation(&dir, "convolution");
    for name in ["hybrid", "genetic", "ils"] {
        interrupted_then_resumed(
            &sim.space,
            sim.evaluator.clone(),
            name,
            80,
            37,
            &format!("conv-{name}.jsonl"),
        );
    }
}

#[test]
fn resume_refuses_another_space() {
    let space = small_space();
    let path = temp("other.jsonl");
    let other = kw_core::space::TuningSpace::new(
        vec![kw_core::space::Parameter::new("x", [1, 2, 3])],
        vec![],
    )
    .expect("space");
    ResultsLog::create(&path, &LogHeader::new(&other)).expect("create");
    let err = ResultsLog::resume(&path, &space, &LogHeader::new(&space)).expect_err("mismatch");
    assert!(matches!(err, TuneError::SpaceMismatch { .. }), "{err}");
    let _ = std::fs::remove_file(&path);
}
