//! The loop's stop conditions and caching, the simulation evaluator, and log export.

mod common;

use common::{shared_dir, simulation, small_objective, small_space};
use kw_core::kernel_tuner::{CacheFile, Outcome};
use kw_core::space::Point;
use kw_core::space::TuningSpace;
use kw_tune::log::LogHeader;
use kw_tune::simulate::NOT_IN_CACHE;
use kw_tune::strategies;
use kw_tune::tuner::StopReason;
use kw_tune::{EvalResult, Evaluator, ResultsLog, Stop, Strategy, Tuner};
use std::time::Duration;

/// Proposes the same points over and over, then new ones.
struct Repeater {
    seq: Vec<u128>,
    at: usize,
}

impl Strategy for Repeater {
    fn name(&self) -> &str {
        "repeater"
    }
    fn ask(&mut self, space: &TuningSpace, _hint: usize) -> Vec<Point> {
        let i = self.seq.get(self.at).copied();
        self.at += 1;
        i.and_then(|i| space.point_at(i)).into_iter().collect()
    }
    fn tell(&mut self, _space: &TuningSpace, _point: &Point, _result: &EvalResult) {}
}

#[test]
fn revisits_are_free_and_not_evaluated() {
    let space = small_space();
    let mut calls = 0;
    let mut ev = |p: &Point| {
        calls += 1;
        small_objective(&space, p)
    };
    let mut s = Repeater {
        seq: vec![0, 1, 0, 0, 1, 2, 1, 3],
        at: 0,
    };
    let report = Tuner::new(&space, Stop::Evaluations(100))
        .run(&mut s, &mut ev)
        .expect("run");
    assert_eq!(calls, 4);
    assert_eq!(report.progress.evaluations, 4);
    assert_eq!(report.revisits, 4);
    assert_eq!(report.reason, StopReason::StrategyExhausted);
}

fn run_with(stop: Stop) -> kw_tune::TuneReport {
    let space = small_space();
    let mut ev = |p: &Point| small_objective(&space, p);
    let mut s = strategies::create("random", 9).expect("random");
    Tuner::new(&space, stop).run(&mut *s, &mut ev).expect("run")
}

#[test]
fn stop_conditions_in_the_loop() {
    let space = small_space();
    assert_eq!(run_with(Stop::Evaluations(10)).progress.evaluations, 10);
    let frac = run_with(Stop::SpaceFraction(0.5)).progress.evaluations as f64;
    assert_eq!(frac, (space.len() as f64 * 0.5).ceil());
    // Target: stops at the first evaluation reaching it.
    let r = run_with(Stop::Target(2.0).or(Stop::Evaluations(1000)));
    assert!(r.best.as_ref().is_some_and(|(_, b)| *b <= 2.0));
    let last = r.history.last().and_then(|e| e.result.clone().ok());
    assert_eq!(last, r.best.as_ref().map(|(_, b)| *b));
    // And: both must hold.
    let r = run_with(Stop::Evaluations(20).and(Stop::NoImprovementEvaluations(5)));
    assert!(r.progress.evaluations >= 20 || r.reason == StopReason::SpaceExhausted);
    assert!(
        r.progress.evaluations_since_improvement >= 5 || r.reason == StopReason::SpaceExhausted
    );
    // Or of evaluations: the smaller wins.
    assert_eq!(
        run_with(Stop::Evaluations(30).or(Stop::Evaluations(12)))
            .progress
            .evaluations,
        12
    );
    // Wall time zero stops before any evaluation; combined with `and` it needs the other too.
    assert_eq!(
        run_with(Stop::WallTime(Duration::ZERO))
            .progress
            .evaluations,
        0
    );
    let r = run_with(Stop::WallTime(Duration::ZERO).and(Stop::Evaluations(8)));
    assert_eq!(r.progress.evaluations, 8);
    let r = run_with(Stop::NoImprovementTime(Duration::from_secs(3600)).or(Stop::Evaluations(9)));
    assert_eq!(r.progress.evaluations, 9);
}

#[test]
fn simulation_evaluator_and_export_round_trip() {
    let Some(dir) = shared_dir() else { return };
    let sim = simulation(&dir, "convolution");
    assert_eq!(sim.space.len(), 4362);
    assert!((sim.optimum - 0.5536).abs() < 1e-3, "{}", sim.optimum);
    let mut ev = sim.evaluator.clone();
    // The space without restrictions holds configurations the cache does not.
    let free = TuningSpace::new(sim.cache.params.clone(), vec![]).expect("space");
    let absent = free
        .iter()
        .find(|p| !sim.space.contains(p))
        .expect("an invalid configuration");
    assert_eq!(
        ev.evaluate(&absent).expect_err("absent").reason,
        NOT_IN_CACHE
    );
    // Export a run's log and read it back as a cache file.
    let path = std::env::temp_dir().join(format!("kw-export-{}.jsonl", std::process::id()));
    let out = path.with_extension("json");
    let mut header = LogHeader::new(&sim.space).with_strategy("hybrid", 0);
    header.kernel_name = Some(sim.cache.kernel_name.clone());
    header.device_name = Some(sim.cache.device_name.clone());
    let log = ResultsLog::create(&path, &header).expect("log");
    let mut s = strategies::create("random", 4).expect("random");
    let report = Tuner::new(&sim.space, Stop::Evaluations(300))
        .with_log(log)
        .run(&mut *s, &mut ev)
        .expect("run");
    assert_eq!(
        kw_tune::export::export_log(&path, &out).expect("export"),
        300
    );
    let back = CacheFile::load(&out).expect("read back");
    assert_eq!(back.entries.len(), 300);
    assert_eq!(back.device_name, sim.cache.device_name);
    let failures = back
        .entries
        .iter()
        .filter(|e| matches!(e.outcome, Outcome::Failed(_)))
        .count() as u64;
    assert_eq!(failures, report.progress.failures);
    assert!(failures > 0, "300 random configurations include failures");
    // The exported file simulates: its entries answer exactly as the original.
    let back_sim = kw_tune::simulate::SimulationEvaluator::new(&sim.space, &back);
    for e in &report.history {
        let mut b = back_sim.clone();
        assert_eq!(b.evaluate(&e.point), e.result);
    }
    // The T4 export reads back too (a T4 file is read as a cache file): the same values, and
    // a failure where the run failed.
    let t4 = path.with_extension("t4.json");
    assert_eq!(
        kw_tune::export::export_log_t4(&path, &t4).expect("export T4"),
        300
    );
    let back = CacheFile::load(&t4).expect("read the T4 file back");
    assert_eq!(back.entries.len(), 300);
    // The parameters in the space's order (`metadata.parameters`), as in the cache export, so
    // both exports make the same space.
    let names =
        |c: &CacheFile| -> Vec<String> { c.params.iter().map(|p| p.name.clone()).collect() };
    assert_eq!(names(&back), names(&sim.cache));
    assert_eq!(back.device_name, sim.cache.device_name);
    let t4_sim = kw_tune::simulate::SimulationEvaluator::new(&sim.space, &back);
    for e in &report.history {
        let got = t4_sim.clone().evaluate(&e.point);
        match (&got, &e.result) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{:?}", e.point),
            (Err(_), Err(_)) => {}
            _ => panic!("{:?}: {got:?} against {:?}", e.point, e.result),
        }
    }
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&out);
    let _ = std::fs::remove_file(&t4);
}

/// A maximised objective's log holds scores (the values negated): the export writes the
/// values and `objective_higher_is_better`, which reads back as reciprocals (lower is better
/// in every entry), so the fraction of the optimum is the value found over the best value;
/// negative values without that mark are refused by the simulation, not scored above 1.
#[test]
fn a_maximised_objective_exports_and_simulates_as_higher_is_better() {
    let space = small_space();
    let path = std::env::temp_dir().join(format!(
        "kw-export-max-{}-{}.jsonl",
        std::process::id(),
        kw_core::files::nonce(6)
    ));
    let out = path.with_extension("json");
    let mut header = LogHeader::new(&space).with_strategy("random", 0);
    header.objective = "GFLOP/s".into();
    header.maximize = true;
    let log = ResultsLog::create(&path, &header).expect("log");
    let mut s = strategies::create("random", 3).expect("random");
    // Scores: the negated values of a throughput that is highest at bx = 64, by = 2.
    let sp = space.clone();
    let mut ev = move |p: &Point| small_objective(&sp, p).map(|t| -100.0 / t);
    let report = Tuner::new(&space, Stop::Evaluations(20))
        .with_log(log)
        .run(&mut *s, &mut ev)
        .expect("run");
    kw_tune::export::export_log(&path, &out).expect("export");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(json["objective_higher_is_better"], serde_json::json!(true));
    let values: Vec<f64> = json["cache"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(|r| r["GFLOP/s"].as_f64())
        .collect();
    assert!(
        !values.is_empty() && values.iter().all(|v| *v > 0.0),
        "{values:?}"
    );
    let back = CacheFile::load(&out).expect("read back");
    assert!(back.higher_is_better);
    let (_, best_score) = report.best.expect("a success");
    let best_value = -best_score;
    assert!(
        (back.optimum().unwrap() - 1.0 / best_value).abs() < 1e-12,
        "{:?} against {best_value}",
        back.optimum()
    );
    kw_tune::simulate::check_measured(&out, &back).expect("positive values");
    // The T4 file holds the values too, and says which way is better.
    let contents = kw_tune::log::read_log(&path).expect("read the log");
    let t4 = kw_tune::export::t4_json(&contents.header, &contents.records);
    assert_eq!(
        t4["metadata"]["objective_higher_is_better"],
        serde_json::json!(true)
    );
    let measured: Vec<f64> = t4["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["measurements"][0]["value"].as_f64())
        .collect();
    assert!(
        !measured.is_empty() && measured.iter().all(|v| *v > 0.0),
        "{measured:?}"
    );

    // The same values without the mark (a log exported before it): negative, refused.
    let mut unmarked = json.clone();
    unmarked
        .as_object_mut()
        .unwrap()
        .remove("objective_higher_is_better");
    for rec in unmarked["cache"].as_object_mut().unwrap().values_mut() {
        if let Some(v) = rec["GFLOP/s"].as_f64() {
            rec["GFLOP/s"] = serde_json::json!(-v);
        }
    }
    std::fs::write(&out, unmarked.to_string()).unwrap();
    let cache = CacheFile::load(&out).expect("a cache");
    let e = kw_tune::simulate::check_measured(&out, &cache)
        .expect_err("negative values")
        .to_string();
    assert!(
        e.contains("is not positive") && e.contains("objective_higher_is_better"),
        "{e}"
    );
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&out);
}
