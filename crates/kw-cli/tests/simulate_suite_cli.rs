//! `kw simulate --suite`: every space of a directory, per space, family and mean, as JSON.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn suite_scores_every_selected_space_with_a_mean() {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/tuning-spaces"
    ));
    if !dir.is_dir() {
        println!("SKIPPED: ../shared not found");
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_kw"))
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
    let bad = Command::new(env!("CARGO_BIN_EXE_kw"))
        .args(["simulate", "--suite"])
        .arg(&dir)
        .args(["--spaces", "nosuchfamily", "--budget", "5"])
        .output()
        .expect("run kw");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("nosuchfamily"));
}
