//! Every registered strategy: exact budget, no repeats, only valid proposals, reproducible.

mod common;

use common::{shared_dir, simulation, small_objective, small_space};
use kw_core::space::TuningSpace;
use kw_tune::strategies;
use kw_tune::tuner::{StopReason, TuneReport};
use kw_tune::{Evaluator, Stop, Tuner};
use std::collections::HashSet;

fn run(
    space: &TuningSpace,
    ev: &mut dyn Evaluator,
    name: &str,
    seed: u64,
    budget: u64,
) -> TuneReport {
    let mut strategy = strategies::create(name, seed).expect("registered");
    Tuner::new(space, Stop::Evaluations(budget))
        .run(&mut *strategy, ev)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn check(space: &TuningSpace, report: &TuneReport, name: &str, budget: u64) {
    let expected = budget.min(space.len() as u64);
    assert_eq!(report.progress.evaluations, expected, "{name}: budget");
    assert_eq!(report.history.len() as u64, expected, "{name}: history");
    let distinct: HashSet<_> = report.history.iter().map(|e| &e.point).collect();
    assert_eq!(
        distinct.len(),
        report.history.len(),
        "{name}: repeated a configuration"
    );
    for e in &report.history {
        assert!(space.contains(&e.point), "{name}: invalid {:?}", e.point);
    }
    let failures = report.history.iter().filter(|e| e.result.is_err()).count() as u64;
    assert_eq!(
        report.progress.failures, failures,
        "{name}: failures counted"
    );
}

#[test]
fn every_strategy_on_a_small_space() {
    let space = small_space();
    for name in strategies::names() {
        for budget in [1, 7, 25] {
            let mut ev = |p: &kw_core::space::Point| small_objective(&space, p);
            let a = run(&space, &mut ev, name, 3, budget);
            check(&space, &a, name, budget);
            let b = run(&space, &mut ev, name, 3, budget);
            let pa: Vec<_> = a.history.iter().map(|e| &e.point).collect();
            let pb: Vec<_> = b.history.iter().map(|e| &e.point).collect();
            assert_eq!(pa, pb, "{name}: not reproducible by seed");
        }
        // A budget beyond the space: every configuration once, then the space is exhausted.
        let mut ev = |p: &kw_core::space::Point| small_objective(&space, p);
        let all = run(&space, &mut ev, name, 1, 10_000);
        check(&space, &all, name, 10_000);
        assert_eq!(all.reason, StopReason::SpaceExhausted, "{name}");
    }
}

#[test]
fn every_strategy_on_measured_spaces() {
    let Some(dir) = shared_dir() else { return };
    for which in ["convolution", "pnpoly"] {
        let sim = simulation(&dir, which);
        for name in strategies::names() {
            let mut ev = sim.evaluator.clone();
            let a = run(&sim.space, &mut ev, name, 11, 60);
            check(&sim.space, &a, name, 60);
            let mut ev = sim.evaluator.clone();
            let b = run(&sim.space, &mut ev, name, 11, 60);
            let pa: Vec<_> = a.history.iter().map(|e| &e.point).collect();
            let pb: Vec<_> = b.history.iter().map(|e| &e.point).collect();
            assert_eq!(pa, pb, "{name} on {which}: not reproducible by seed");
            let mut ev = sim.evaluator.clone();
            let c = run(&sim.space, &mut ev, name, 12, 60);
            if name != "exhaustive" {
                let pc: Vec<_> = c.history.iter().map(|e| &e.point).collect();
                assert_ne!(pa, pc, "{name} on {which}: the seed changes nothing");
            }
        }
    }
}

#[test]
fn default_beats_random_on_convolution() {
    let Some(dir) = shared_dir() else { return };
    let sim = simulation(&dir, "convolution");
    let random = kw_tune::simulate::benchmark(&sim, "random", 100, 5).expect("random");
    let default = kw_tune::simulate::benchmark(&sim, strategies::DEFAULT, 100, 5).expect("default");
    assert!(
        default.mean() > random.mean() + 0.05,
        "default {} vs random {}",
        default.mean(),
        random.mean()
    );
}

#[test]
fn anytime_strategies_ignore_the_budget() {
    // A strategy that says it ignores the budget makes, with a budget of n, exactly the first
    // n evaluations of a longer run: what `kw simulate --suite` relies on.
    let space = small_space();
    let mut checked = 0;
    for name in strategies::names() {
        if !strategies::create(name, 0).expect("registered").anytime() {
            continue;
        }
        checked += 1;
        for seed in [1, 2] {
            let mut ev = |p: &kw_core::space::Point| small_objective(&space, p);
            let short = run(&space, &mut ev, name, seed, 17);
            let long = run(&space, &mut ev, name, seed, 40);
            let ps: Vec<_> = short.history.iter().map(|e| &e.point).collect();
            let pl: Vec<_> = long.history.iter().take(17).map(|e| &e.point).collect();
            assert_eq!(ps, pl, "{name}: the budget changed the proposals");
        }
    }
    assert!(checked >= 2, "tabu_greywolf and hybrid4 are anytime");
}

#[test]
fn anytime_prefix_on_a_measured_space() {
    let Some(dir) = shared_dir() else { return };
    let sim = simulation(&dir, "convolution");
    for name in ["tabu_greywolf", "hybrid4", "hybrid5", "hybrid6"] {
        let mut ev = sim.evaluator.clone();
        let short = run(&sim.space, &mut ev, name, 5, 30);
        let mut ev = sim.evaluator.clone();
        let long = run(&sim.space, &mut ev, name, 5, 45);
        let ps: Vec<_> = short.history.iter().map(|e| &e.point).collect();
        let pl: Vec<_> = long.history.iter().take(30).map(|e| &e.point).collect();
        assert_eq!(ps, pl, "{name}: the budget changed the proposals");
    }
}

#[test]
fn strategy_settings_in_the_name() {
    let space = small_space();
    let mut ev = |p: &kw_core::space::Point| small_objective(&space, p);
    let r = run(
        &space,
        &mut ev,
        "hybrid4:children=4:every=3:early=12",
        7,
        25,
    );
    check(&space, &r, "hybrid4 with settings", 25);
    let r = run(&space, &mut ev, "hybrid5:explore=3", 7, 25);
    check(&space, &r, "hybrid5 with settings", 25);
    for bad in [
        "hybrid4:children=x",
        "hybrid4:nonsense=1",
        "hybrid5:explore=-1",
    ] {
        let err = strategies::create(bad, 0).err().expect("refused");
        assert!(err.to_string().contains(bad), "{err}");
    }
}
