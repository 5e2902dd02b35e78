//! Adaptive trust in a prior (`PriorShare::Trust`, the default): the strategy told of the
//! prior's results keeps proposing only while its proposals improve the best so far; when
//! they stop paying, the same strategy never told of the prior takes over, knowing the
//! initial design but (with `forget`) not the told strategy's proposals in the prior's basin.

use kw_core::space::{Parameter, Point, TuningSpace};
use kw_core::{config::Config, value::Value};
use kw_tune::prior::{
    PriorParams, PriorShare, PriorSource, TrustSettings, DEFAULT_GATE, DEFAULT_LOCAL,
    SAME_DEVICE_LOCAL,
};
use kw_tune::strategies::seeded::Seeded;
use kw_tune::{EvalResult, Strategy};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// What a scripted strategy was told: `(point, told as a prior result)`.
type Told = Rc<RefCell<Vec<(Point, bool)>>>;

/// Proposes its script in order, skipping points it was told; records what it is told.
struct Scripted {
    script: Vec<Point>,
    told: Told,
    design: usize,
}

impl Strategy for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn ask(&mut self, _space: &TuningSpace, _hint: usize) -> Vec<Point> {
        let told = self.told.borrow();
        let next = self
            .script
            .iter()
            .find(|p| told.iter().all(|(q, _)| q != *p))
            .cloned();
        next.into_iter().collect()
    }
    fn tell(&mut self, _space: &TuningSpace, point: &Point, _result: &EvalResult) {
        self.told.borrow_mut().push((point.clone(), false));
    }
    fn tell_prior(&mut self, _space: &TuningSpace, point: &Point, _result: &EvalResult) {
        self.told.borrow_mut().push((point.clone(), true));
    }
    fn initial_design(&self) -> usize {
        self.design
    }
}

fn points(xs: impl IntoIterator<Item = u32>) -> Vec<Point> {
    xs.into_iter().map(|x| vec![x]).collect()
}

/// A space of one parameter `x` = 0..40.
fn space() -> TuningSpace {
    TuningSpace::new(vec![Parameter::new("x", 0..40i64)], vec![]).expect("space")
}

struct Run {
    proposed: Vec<Point>,
    told_arm: Vec<(Point, bool)>,
    blind_arm: Vec<(Point, bool)>,
}

fn settings(patience: usize, forget: bool, mix: bool) -> TrustSettings {
    TrustSettings {
        patience,
        forget,
        mix,
        stop: 0,
        local: 0,
        local_mix: false,
        gate: 0,
        guided: false,
    }
}

/// Seeds `told_script` with the prior point 20 (value 2) and a blind fallback, both with a
/// design of 3 (points 0, 1, 2, value 10 each); runs `steps` evaluations of `values`.
fn run(told_script: Vec<Point>, values: &HashMap<u32, f64>, forget: bool, steps: usize) -> Run {
    run_with(told_script, values, settings(4, forget, false), steps)
}

fn run_with(
    told_script: Vec<Point>,
    values: &HashMap<u32, f64>,
    trust: TrustSettings,
    steps: usize,
) -> Run {
    let space = space();
    let (told, blind) = (Told::default(), Told::default());
    let design = points(0..3);
    // With `mix` the told strategy has no design of its own (the prior is its design).
    let own_design = if trust.mix { vec![] } else { design.clone() };
    let inner = Scripted {
        script: own_design.into_iter().chain(told_script).collect(),
        told: told.clone(),
        design: 3,
    };
    let fallback = Scripted {
        script: design.into_iter().chain(points(30..40)).collect(),
        told: blind.clone(),
        design: 3,
    };
    let share = PriorShare::Trust(trust);
    let mut seeded = Seeded::with_blind(
        Box::new(inner),
        Some(Box::new(fallback)),
        points([20]),
        share,
    );
    let mut proposed = Vec::new();
    for _ in 0..steps {
        let p = seeded.ask(&space, 1).pop().expect("a proposal");
        let value = values.get(&p[0]).copied().unwrap_or(10.0);
        seeded.tell(&space, &p, &Ok(value));
        proposed.push(p);
    }
    let told_arm = told.borrow().clone();
    let blind_arm = blind.borrow().clone();
    Run {
        proposed,
        told_arm,
        blind_arm,
    }
}

/// The told strategy searches the prior's basin (21..) without beating the prior's best:
/// after 4 such proposals the blind strategy takes over for good. It never hears of the
/// prior, and with `forget` not of the told strategy's proposals either, only of the design.
#[test]
fn a_prior_that_does_not_pay_is_dropped_for_the_blind_strategy() {
    let mut values: HashMap<u32, f64> = (21..30).map(|x| (x, 3.0)).collect();
    values.insert(20, 2.0);
    let r = run(points(21..30), &values, true, 12);
    assert_eq!(
        r.proposed,
        points([20, 0, 1, 2, 21, 22, 23, 24, 30, 31, 32, 33]),
        "prior, design, 4 told proposals without improvement, then the blind strategy's"
    );
    assert_eq!(r.told_arm[0], (vec![20], true), "told the prior's result");
    assert!(r.told_arm.iter().skip(1).all(|(_, prior)| !prior));
    let blind: Vec<Point> = r.blind_arm.iter().map(|(p, _)| p.clone()).collect();
    assert_eq!(blind, points([0, 1, 2, 30, 31, 32, 33]));
    assert!(r.blind_arm.iter().all(|(_, prior)| !prior));

    // Without `forget` the blind strategy hears of the told strategy's proposals too (never
    // of the prior), and takes over at the same point.
    let r = run(points(21..30), &values, false, 10);
    assert_eq!(r.proposed[8..], points([30, 31])[..]);
    let blind: Vec<Point> = r.blind_arm.iter().map(|(p, _)| p.clone()).collect();
    assert_eq!(blind, points([0, 1, 2, 21, 22, 23, 24, 30, 31]));
}

/// The told strategy's proposals near the prior's best keep improving on it (values 1.9,
/// 1.8, ... against the prior's 2.0): it keeps the lead, and the blind strategy never
/// proposes; an improvement after 3 stale proposals resets the count.
#[test]
fn a_prior_that_pays_keeps_the_told_strategy() {
    let mut values: HashMap<u32, f64> = (21..30)
        .map(|x| (x, 2.0 - 0.1 * f64::from(x - 20)))
        .collect();
    values.insert(20, 2.0);
    let r = run(points(21..30), &values, true, 13);
    assert_eq!(
        r.proposed,
        points([20, 0, 1, 2, 21, 22, 23, 24, 25, 26, 27, 28, 29])
    );
    let blind: Vec<Point> = r.blind_arm.iter().map(|(p, _)| p.clone()).collect();
    assert_eq!(blind, points([0, 1, 2]), "only the design");

    // 3 stale proposals (values 3.0), then one that beats the prior: still the told one.
    let mut values: HashMap<u32, f64> = (21..24).map(|x| (x, 3.0)).collect();
    values.insert(20, 2.0);
    values.insert(24, 1.5);
    let r = run(points(21..30), &values, true, 12);
    assert_eq!(
        r.proposed[4..],
        points([21, 22, 23, 24, 25, 26, 27, 28])[..]
    );
    // ...and 4 stale ones after it hand over.
    let r = run(points(21..30), &values, true, 14);
    assert_eq!(r.proposed[12..], points([30, 31])[..]);
}

/// The default seeds with trust, mixed, patience 1 (chosen by leave-one-device-out on
/// seeds 100..159, `docs/strategies.md`); the settings parse.
#[test]
fn the_default_share_is_trust_and_parses() {
    let want = PriorShare::Trust(TrustSettings {
        local: DEFAULT_LOCAL,
        gate: DEFAULT_GATE,
        guided: true,
        ..settings(1, true, true)
    });
    assert_eq!(PriorParams::default().share, want);
    assert_eq!(PriorParams::parse("").expect("parse").share, want);
    // `share=` sets the share alone: `mix1` is the default without the neighbours.
    assert_eq!(
        PriorParams::parse("share=mix1").expect("parse").share,
        PriorShare::Trust(settings(1, true, true))
    );
    assert_eq!(
        PriorParams::parse("share=mix1:local=4:gate=8:guided=1")
            .expect("parse")
            .share,
        want
    );
    let p = PriorParams::parse("take=8:share=forget4").expect("parse");
    assert_eq!(p.take, 8);
    assert_eq!(p.share, PriorShare::Trust(settings(4, true, false)));
    assert_eq!(
        PriorParams::parse("share=trust8").expect("parse").share,
        PriorShare::Trust(settings(8, false, false))
    );
    assert!(PriorParams::parse("share=trustx").is_err());
    let local = |text: &str| match PriorParams::parse(text).expect("parse").share {
        PriorShare::Trust(t) => (t.local, t.local_mix),
        other => panic!("{text}: {other:?}"),
    };
    assert_eq!(local("local=8"), (8, false));
    assert_eq!(local("share=mix2:localmix=4"), (4, true));
    assert!(PriorParams::parse("share=blind:local=8").is_err());
    let gate = |text: &str| match PriorParams::parse(text).expect("parse").share {
        PriorShare::Trust(t) => (t.local, t.gate),
        other => panic!("{text}: {other:?}"),
    };
    assert_eq!(gate("local=8:gate=8"), (8, 8));
    assert!(PriorParams::parse("share=blind:gate=8")
        .unwrap_err()
        .contains("`gate`"));
    assert!(PriorParams::parse("share=mix1:gate=8")
        .unwrap_err()
        .contains("give `local` above 0 too"));
}

/// The chosen settings climb from the prior's best: with other devices' results only when
/// the prior was still improving (the gate), the neighbours the prior ranks best first; with
/// the device's own always, in the seed's order.
#[test]
fn neighbours_are_ungated_for_a_prior_of_the_same_device() {
    let source = |device: &str| PriorSource {
        label: format!("wisdom ({device})"),
        kernel: String::new(),
        device: device.to_string(),
        problem_size: Vec::new(),
        results: vec![(Config(vec![("x".into(), Value::Int(3))]), Some(1.0))],
    };
    let climb = |p: PriorParams| match p.share {
        PriorShare::Trust(t) => (t.local, t.gate, t.guided),
        other => panic!("{other:?}"),
    };
    let h100 = "NVIDIA H100 80GB HBM3";
    let sources = [source("NVIDIA A100-PCIE-40GB"), source(h100)];
    assert_eq!(
        climb(PriorParams::for_device(&sources, h100)),
        (SAME_DEVICE_LOCAL, 0, false)
    );
    let gated = (DEFAULT_LOCAL, DEFAULT_GATE, true);
    assert_eq!(climb(PriorParams::for_device(&sources[..1], h100)), gated);
    assert_eq!(climb(PriorParams::for_device(&[source("")], "")), gated);
    assert_eq!(
        PriorParams::for_device(&sources[..1], h100),
        PriorParams::default()
    );
}

/// With `mix`, the told strategy is told the prior as its own design and proposes right
/// after it, alternating with the blind strategy's design; only its own proposals count
/// towards the patience (here 2), and the blind strategy hears only of its design.
#[test]
fn mixed_the_design_alternates_with_the_told_strategy() {
    let mut values: HashMap<u32, f64> = (21..30).map(|x| (x, 3.0)).collect();
    values.insert(20, 2.0);
    let r = run_with(points(21..30), &values, settings(2, true, true), 9);
    assert_eq!(r.proposed, points([20, 21, 0, 22, 1, 2, 30, 31, 32]));
    assert_eq!(r.told_arm[0], (vec![20], false), "the prior as its design");
    let blind: Vec<Point> = r.blind_arm.iter().map(|(p, _)| p.clone()).collect();
    assert_eq!(blind, points([0, 1, 2, 30, 31, 32]));

    // Paying (each proposal better than the last), it keeps every other proposal until the
    // design is complete, then all of them.
    let values: HashMap<u32, f64> = (20..30)
        .map(|x| (x, 2.0 - 0.1 * f64::from(x - 20)))
        .collect();
    let r = run_with(points(21..30), &values, settings(2, true, true), 10);
    assert_eq!(r.proposed, points([20, 21, 0, 22, 1, 23, 2, 24, 25, 26]));
}

/// `stop=N`: the prior's configurations stop after N in a row that do not improve the best
/// so far; the first one improves (from nothing), as does any better one.
#[test]
fn the_prior_stops_after_configurations_that_do_not_improve() {
    let space = space();
    let prior = points([20, 21, 22, 23, 24, 25, 26]);
    // 21 improves on 20; 22 and 23 do not (stop=2 ends the prior there); 24 would improve.
    let values = HashMap::from([(20, 5.0), (21, 4.0), (22, 6.0), (23, 4.5), (24, 1.0)]);
    let proposed = |stop: usize| {
        let inner = Scripted {
            script: points(30..40),
            told: Told::default(),
            design: 3,
        };
        let fallback = Scripted {
            script: points(0..3).into_iter().chain(points(10..20)).collect(),
            told: Told::default(),
            design: 3,
        };
        let mut trust = settings(1, true, true);
        trust.stop = stop;
        let mut seeded = Seeded::with_blind(
            Box::new(inner),
            Some(Box::new(fallback)),
            prior.clone(),
            PriorShare::Trust(trust),
        );
        let mut out = Vec::new();
        for _ in 0..8 {
            let p = seeded.ask(&space, 1).pop().expect("a proposal");
            let value = values.get(&p[0]).copied().unwrap_or(10.0);
            seeded.tell(&space, &p, &Ok(value));
            out.push(p[0]);
        }
        out
    };
    assert_eq!(
        proposed(0)[..7],
        [20, 21, 22, 23, 24, 25, 26],
        "all of the prior"
    );
    let stopped = proposed(2);
    assert_eq!(stopped[..4], [20, 21, 22, 23]);
    assert!(
        stopped[4..].iter().all(|x| !(24..=26).contains(x)),
        "{stopped:?}"
    );
    assert!(PriorParams::parse("share=blind:stop=3").is_err());
    assert_eq!(
        PriorParams::parse("share=mix1:stop=3").unwrap().share,
        PriorShare::Trust(TrustSettings {
            stop: 3,
            ..settings(1, true, true)
        })
    );
}

/// `local` (the default with a prior of the device being tuned): after the prior, adjacent
/// neighbours of the best point so far, climbing while they improve (20 → 21 → 22 → 23) and
/// stopping after `local` in a row that do not (24; 23 has no other fresh neighbour). The
/// neighbours count as the prior's: the told strategy, patience 1, is not judged on 19 or 24
/// and still makes its first proposal (35) after the climb, alternating with the blind design.
#[test]
fn neighbours_of_the_best_climb_after_the_prior_while_they_improve() {
    let values: HashMap<u32, f64> = [(20, 5.0), (19, 6.0), (21, 4.0), (22, 3.0), (23, 2.0)]
        .into_iter()
        .collect();
    let trust = TrustSettings {
        local: 2,
        ..settings(1, true, true)
    };
    let r = run_with(points([35, 36]), &values, trust, 8);
    // Which neighbour of 20 comes first is the strategy's random choice.
    let either = [
        points([20, 21, 22, 23, 24, 35, 0, 1]),
        points([20, 19, 21, 22, 23, 24, 35, 0]),
    ];
    assert!(
        either.contains(&r.proposed),
        "prior, climb, then the told strategy: {:?}",
        r.proposed
    );
}

/// `local=N` stops after N neighbours in a row that do not improve the best, though more
/// are fresh; with neighbours asked ahead, those in flight count until their results come.
#[test]
fn the_climb_stops_after_local_misses_in_a_row() {
    let values: HashMap<u32, f64> = [(20, 5.0)].into_iter().collect();
    for (limit, neighbours) in [(1, 1), (2, 2)] {
        let trust = TrustSettings {
            local: limit,
            ..settings(1, true, true)
        };
        let r = run_with(points([35, 36]), &values, trust, 4);
        let tried: Vec<u32> = r.proposed[1..1 + neighbours].iter().map(|p| p[0]).collect();
        assert!(
            tried.iter().all(|x| [19, 21].contains(x)),
            "local={limit}: {:?}",
            r.proposed
        );
        assert_eq!(r.proposed[0], vec![20]);
        assert_eq!(
            r.proposed[1 + neighbours],
            vec![35],
            "local={limit}: {:?}",
            r.proposed
        );
    }
    // Asked ahead (no result yet): one neighbour in flight with `local=1`, then the told
    // strategy's proposal, not a second neighbour.
    let space = space();
    let (told, blind) = (Told::default(), Told::default());
    let inner = Scripted {
        script: points([35, 36]),
        told: told.clone(),
        design: 3,
    };
    let fallback = Scripted {
        script: points(0..3),
        told: blind,
        design: 3,
    };
    let trust = TrustSettings {
        local: 1,
        ..settings(1, true, true)
    };
    let mut seeded = Seeded::with_blind(
        Box::new(inner),
        Some(Box::new(fallback)),
        points([20]),
        PriorShare::Trust(trust),
    );
    let first = seeded.ask(&space, 1).pop().unwrap();
    seeded.tell(&space, &first, &Ok(5.0));
    let ahead: Vec<Point> = (0..2).flat_map(|_| seeded.ask(&space, 1)).collect();
    assert!([vec![19], vec![21]].contains(&ahead[0]), "{ahead:?}");
    assert_eq!(ahead[1], vec![35], "{ahead:?}");
}

/// The neighbours' order comes from the run's seed: over seeds, both neighbours of the
/// prior's point come first.
#[test]
fn the_neighbours_order_follows_the_seed() {
    let space = space();
    let trust = TrustSettings {
        local: 2,
        ..settings(1, true, true)
    };
    let first_neighbour = |seed: u64| {
        let inner = Scripted {
            script: points([35]),
            told: Told::default(),
            design: 3,
        };
        let blind = Scripted {
            script: points(0..3),
            told: Told::default(),
            design: 3,
        };
        let mut s = Seeded::with_blind(
            Box::new(inner),
            Some(Box::new(blind)),
            points([20]),
            PriorShare::Trust(trust),
        )
        .seeded(seed);
        let p = s.ask(&space, 1).pop().unwrap();
        s.tell(&space, &p, &Ok(5.0));
        s.ask(&space, 1).pop().unwrap()[0]
    };
    let firsts: std::collections::BTreeSet<u32> = (0..16).map(first_neighbour).collect();
    assert_eq!(firsts, [19, 21].into_iter().collect());
    assert_eq!(
        first_neighbour(7),
        first_neighbour(7),
        "the same seed, the same order"
    );
}

/// Without `local` the told strategy proposes right after the prior.
#[test]
fn without_local_the_told_strategy_follows_the_prior() {
    let values: HashMap<u32, f64> = [(20, 5.0), (21, 4.0)].into_iter().collect();
    let r = run_with(points([35, 36]), &values, settings(1, true, true), 3);
    assert_eq!(r.proposed, points([20, 35, 0]));
}

/// `gate=N`: the climb starts only when one of the prior's last N results improved the best
/// (a prior whose best came early and was never beaten again climbs nowhere), and it waits
/// for the prior's results in flight before it decides.
#[test]
fn the_gate_calls_the_climb_off_when_the_prior_stopped_improving() {
    let space = space();
    let values: HashMap<u32, f64> = [(20, 2.0), (5, 6.0), (6, 7.0), (7, 8.0)]
        .into_iter()
        .collect();
    let value = |p: &Point| values.get(&p[0]).copied().unwrap_or(10.0);
    let seeded_with = |prior: Vec<Point>, gate: usize| {
        let trust = TrustSettings {
            local: 4,
            gate,
            ..settings(1, true, true)
        };
        let inner = Scripted {
            script: points([35, 36]),
            told: Told::default(),
            design: 3,
        };
        let fallback = Scripted {
            script: points(0..3),
            told: Told::default(),
            design: 3,
        };
        Seeded::with_blind(
            Box::new(inner),
            Some(Box::new(fallback)),
            prior,
            PriorShare::Trust(trust),
        )
    };
    // What follows the prior's configurations, each told before the next is asked.
    let after_prior = |prior: Vec<Point>, gate: usize| {
        let n = prior.len();
        let mut s = seeded_with(prior, gate);
        for _ in 0..n {
            let p = s.ask(&space, 1).pop().unwrap();
            s.tell(&space, &p, &Ok(value(&p)));
        }
        s.ask(&space, 1).pop().unwrap()
    };
    let neighbour = |p: &Point| [vec![19], vec![21]].contains(p);
    // The best first, then three that do not improve it: with gate=3 no climb, with gate=4
    // (or none) the climb.
    let early = points([20, 5, 6, 7]);
    assert_eq!(after_prior(early.clone(), 3), vec![35]);
    assert!(neighbour(&after_prior(early.clone(), 4)));
    assert!(neighbour(&after_prior(early, 0)));
    // The best last: the climb whatever the gate.
    assert!(neighbour(&after_prior(points([5, 6, 7, 20]), 1)));
    // Asked ahead: the prior's four in flight; the best's result (20) is in, the others' are
    // not: the climb waits (the told strategy proposes meanwhile); once they are in, the gate
    // decides (one of the last 4 improved: the climb).
    let mut s = seeded_with(points([20, 5, 6, 7]), 4);
    let ahead: Vec<Point> = (0..4).flat_map(|_| s.ask(&space, 1)).collect();
    assert_eq!(ahead, points([20, 5, 6, 7]));
    s.tell(&space, &ahead[0], &Ok(value(&ahead[0])));
    let meanwhile = s.ask(&space, 1).pop().unwrap();
    assert_eq!(
        meanwhile,
        vec![35],
        "no neighbour while the prior is in flight"
    );
    for p in &ahead[1..] {
        s.tell(&space, p, &Ok(value(p)));
    }
    let next = s.ask(&space, 1).pop().unwrap();
    assert!(neighbour(&next), "{next:?}");
    // With `stop`, the prior's configurations left are never evaluated: the gate decides on
    // those that were (20, then 5 and 6 without improving: stopped after 2, climb at gate 3).
    let trust = TrustSettings {
        local: 4,
        gate: 3,
        stop: 2,
        ..settings(1, true, true)
    };
    let mut s = Seeded::with_blind(
        Box::new(Scripted {
            script: points([35, 36]),
            told: Told::default(),
            design: 3,
        }),
        Some(Box::new(Scripted {
            script: points(0..3),
            told: Told::default(),
            design: 3,
        })),
        points([20, 5, 6, 7, 8]),
        PriorShare::Trust(trust),
    );
    for want in [20, 5, 6] {
        let p = s.ask(&space, 1).pop().unwrap();
        assert_eq!(p, vec![want]);
        s.tell(&space, &p, &Ok(value(&p)));
    }
    let next = s.ask(&space, 1).pop().unwrap();
    assert!(
        neighbour(&next),
        "the climb after a stopped prior: {next:?}"
    );
}

/// `guided=1`: the climb tries first the neighbour the prior's sources rank best (mean rank
/// fraction), whatever the seed; without it, the seed's order (both neighbours come first
/// over seeds). Through `prior::map` and `strategies::create_seeded`, as `kw tune` and
/// `kw simulate` build it.
#[test]
fn a_guided_climb_tries_the_neighbour_the_prior_ranks_best_first() {
    let space = space();
    let x = |v: i64| {
        let mut c = Config::default();
        c.set("x", Value::Int(v));
        c
    };
    // Two sources: both rank 20 best; 21 beats 19 on both.
    let source = |label: &str, t19: f64, t21: f64| PriorSource {
        label: label.into(),
        kernel: String::new(),
        device: label.into(),
        problem_size: Vec::new(),
        results: vec![
            (x(20), Some(1.0)),
            (x(21), Some(t21)),
            (x(19), Some(t19)),
            (x(5), Some(9.0)),
        ],
    };
    let sources = [source("a", 3.0, 2.0), source("b", 5.0, 4.0)];
    let first_neighbour = |settings: &str, seed: u64| {
        let params = PriorParams::parse(settings).expect("settings");
        let mut mapped = kw_tune::prior::map(&sources, &space, params);
        // Only the prior's best is evaluated first; the climb starts from it.
        mapped.points.truncate(1);
        let seeding = mapped.seeding();
        let mut s = kw_tune::strategies::create_seeded("random", seed, &seeding).expect("seeded");
        let p = s.ask(&space, 1).pop().unwrap();
        assert_eq!(p, vec![20]);
        s.tell(&space, &p, &Ok(5.0));
        s.ask(&space, 1).pop().unwrap()[0]
    };
    let guided: std::collections::BTreeSet<u32> = (0..16)
        .map(|seed| first_neighbour("share=mix1:local=2:guided=1", seed))
        .collect();
    assert_eq!(guided, [21].into_iter().collect());
    let unguided: std::collections::BTreeSet<u32> = (0..16)
        .map(|seed| first_neighbour("share=mix1:local=2", seed))
        .collect();
    assert_eq!(unguided, [19, 21].into_iter().collect());
    assert!(PriorParams::parse("share=mix1:guided=1")
        .unwrap_err()
        .contains("give `local` above 0 too"));
    for text in [
        "local=4:guided=no",
        "local=4:guided=2",
        "local=4:guided=",
        "feature=yes",
    ] {
        assert!(
            PriorParams::parse(text).unwrap_err().contains("0 or 1"),
            "{text}"
        );
    }
    assert!(PriorParams::parse("local=4:localmix=2")
        .unwrap_err()
        .contains("set one thing"));
    assert!(PriorParams::parse("local=4:local=2")
        .unwrap_err()
        .contains("given twice"));
    assert!(PriorParams::parse("local=0:guided=1")
        .unwrap_err()
        .contains("`local` above 0"));
    // `local=0` turns the climb off, with the default gate and order.
    for text in ["local=0", "local=0:gate=0", "local=0:guided=0"] {
        match PriorParams::parse(text).expect(text).share {
            PriorShare::Trust(t) => {
                assert_eq!((t.local, t.gate, t.guided), (0, 0, false), "{text}")
            }
            other => panic!("{text}: {other:?}"),
        }
    }
}
