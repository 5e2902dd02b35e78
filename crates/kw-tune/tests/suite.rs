//! `kw_tune::suite`: finding the spaces of a directory, the random-search baseline and the
//! scores per budget.

mod common;

use common::shared_dir;
use kw_tune::simulate::Simulation;
use kw_tune::suite;

#[test]
fn discovers_the_shared_spaces_and_their_restrictions() {
    let Some(dir) = shared_dir() else { return };
    let entries = suite::discover(&dir).expect("discover");
    assert!(entries.len() >= 15, "{} spaces", entries.len());
    assert!(entries.iter().all(|e| !e.name.ends_with("_T1")));
    let conv = entries
        .iter()
        .find(|e| e.name == "convolution_A100")
        .expect("convolution_A100");
    assert_eq!(conv.family, "convolution");
    assert_eq!(
        conv.t1.as_deref(),
        Some(dir.join("convolution_T1.json").as_path())
    );
    let mut families: Vec<&str> = entries.iter().map(|e| e.family.as_str()).collect();
    families.dedup();
    for f in ["convold", "convolution", "dedispersion", "pnpoly"] {
        assert!(families.contains(&f), "{f} missing from {families:?}");
    }
}

#[test]
fn an_empty_directory_is_an_error_naming_it() {
    let dir = std::env::temp_dir().join(format!("kw-suite-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let err = suite::discover(&dir).expect_err("no spaces");
    assert!(
        err.to_string().contains(&dir.display().to_string()),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn random_baseline_matches_random_search() {
    let Some(dir) = shared_dir() else { return };
    let sim = Simulation::load(&dir.join("pnpoly_RTX_3090.json.gz"), None).expect("load");
    let curve = suite::random_curve(&sim, 50);
    assert!(
        curve.windows(2).all(|w| w[1] >= w[0] - 1e-12),
        "not monotone"
    );
    // One evaluation: the mean fraction over the space (failures count 0).
    let total = sim.space.len() as f64;
    let mean: f64 = sim
        .space
        .iter()
        .map(|p| match sim.evaluator.result(&p) {
            Some(Ok(t)) => sim.optimum / *t,
            _ => 0.0,
        })
        .sum::<f64>()
        / total;
    assert!((curve[0] - mean).abs() < 1e-9, "{} vs {mean}", curve[0]);
    // 200 seeded random runs land near the expectation (standard error about 0.004).
    let seeds: Vec<u64> = (0..200).collect();
    let cells = suite::score(
        &sim,
        &curve,
        "random",
        &Default::default(),
        suite::Runs {
            budgets: &[10, 50],
            seeds: &seeds,
            threads: 2,
            lookahead: 1,
        },
    )
    .expect("score");
    for (cell, expected) in cells.iter().zip([curve[9], curve[49]]) {
        assert!(
            (cell.mean() - expected).abs() < 0.02,
            "budget {}: {} vs {expected}",
            cell.budget,
            cell.mean()
        );
        assert!(cell.area().abs() < 0.15, "area of random {}", cell.area());
    }
}

#[test]
fn anytime_scores_equal_separate_runs() {
    let Some(dir) = shared_dir() else { return };
    let sim = Simulation::load(&dir.join("pnpoly_RTX_3090.json.gz"), None).expect("load");
    let curve = suite::random_curve(&sim, 40);
    let seeds = [3, 4];
    let joint = suite::score(
        &sim,
        &curve,
        "tabu_greywolf",
        &Default::default(),
        suite::Runs {
            budgets: &[20, 40],
            seeds: &seeds,
            threads: 1,
            lookahead: 1,
        },
    )
    .expect("joint");
    let alone = suite::score(
        &sim,
        &curve,
        "tabu_greywolf",
        &Default::default(),
        suite::Runs {
            budgets: &[20],
            seeds: &seeds,
            threads: 1,
            lookahead: 1,
        },
    )
    .expect("alone");
    assert_eq!(joint[0], alone[0]);
    assert!(joint[1].mean() >= joint[0].mean());
}
