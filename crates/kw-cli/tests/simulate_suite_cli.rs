//! `kw simulate --suite`: every space of a directory, per space, family and mean, as JSON.

use std::path::PathBuf;

/// The shared measured spaces (`../shared` relative to the workspace root), if present.
fn shared_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/tuning-spaces"
    ));
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("SKIPPED: ../shared not found");
        None
    }
}

#[test]
fn suite_scores_every_selected_space_with_a_mean() {
    let Some(dir) = shared_dir() else { return };
    let out = kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .args(["simulate", "--suite"])
        .arg(&dir)
        .args([
            "--spaces",
            "pnpoly_RTX_3090,convolution_A100",
            "--strategy",
            "tabu_greywolf,random",
            "--budgets",
            "10,20",
            "--seeds",
            "2",
            "--threads",
            "1",
            "--json",
        ])
        .output()
        .expect("run kw");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let rows = rows.as_array().expect("array");
    let spaces: std::collections::BTreeSet<&str> =
        rows.iter().filter_map(|r| r["space"].as_str()).collect();
    for s in [
        "pnpoly_RTX_3090",
        "convolution_A100",
        "family:pnpoly",
        "mean",
    ] {
        assert!(spaces.contains(s), "{s} missing: {spaces:?}");
    }
    // 2 strategies x 2 budgets x (2 spaces + 2 families + mean).
    assert_eq!(rows.len(), 2 * 2 * 5);
    for r in rows {
        let f = r["mean_fraction"].as_f64().expect("fraction");
        assert!((0.0..=1.0).contains(&f), "{r}");
        assert!(r["area"].as_f64().expect("area") <= 1.0, "{r}");
    }
    let bad = kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .args(["simulate", "--suite"])
        .arg(&dir)
        .args(["--spaces", "nosuchfamily", "--budget", "5"])
        .output()
        .expect("run kw");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("nosuchfamily"));
}

/// `kw simulate --prior`: a shared space seeded by the other GPUs of its family, end to end:
/// the runs with the prior start from its best (so they are at least as good from the first
/// evaluations), and the matching is reported.
#[test]
fn simulate_with_a_prior_from_other_gpus_of_the_family() {
    let Some(dir) = shared_dir() else { return };
    let out = kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .arg("simulate")
        .arg(dir.join("convolution_A6000.json.gz"))
        .arg("--t1")
        .arg(dir.join("convolution_T1.json"))
        .arg("--prior")
        .arg(dir.join("convolution_A4000.json.gz"))
        .arg(dir.join("convolution_A100.json.gz"))
        .args(["--strategy", "hybrid5", "--budgets", "3,12", "--seeds", "3"])
        .args(["--threads", "1", "--json"])
        .output()
        .expect("run kw");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("results match this space") && stderr.contains("evaluated first"),
        "{stderr}"
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let rows = rows.as_array().expect("array");
    let mean = |strategy: &str, budget: u64| -> f64 {
        rows.iter()
            .find(|r| r["strategy"] == strategy && r["budget"] == budget)
            .and_then(|r| r["mean_fraction"].as_f64())
            .unwrap_or_else(|| panic!("no row {strategy} {budget}: {rows:?}"))
    };
    let name = "hybrid5";
    // The A4000's best is near-optimal on the A6000 (fraction 0.95+ in the shared data); the
    // first 3 random configurations are not.
    assert!(mean(&format!("{name}+prior"), 3) > 0.9, "{rows:?}");
    assert!(
        mean(name, 3) < mean(&format!("{name}+prior"), 3),
        "{rows:?}"
    );
    assert!(mean(&format!("{name}+prior"), 12) >= mean(&format!("{name}+prior"), 3));
}
