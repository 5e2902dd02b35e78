//! `kw simulate --suite`: a space that cannot be loaded (a cache file that is not JSON, one
//! with a time of 0) is reported, naming its file and the problem, and skipped; the other
//! spaces are scored, and the command fails at the end saying how many were skipped. When no
//! space can be loaded it is an error without results.

mod common;

use common::{kw_in, unique_dir, write_cache};
use std::path::Path;
use std::process::Output;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The spaces of `--json` rows, in order.
fn space_names(rows: &serde_json::Value) -> Vec<&str> {
    rows.as_array()
        .expect("array")
        .iter()
        .filter_map(|r| r["space"].as_str())
        .collect()
}

/// `kw simulate --suite suite` in `dir` with `extra` arguments.
fn simulate(dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "simulate",
        "--suite",
        "suite",
        "--strategy",
        "random",
        "--budget",
        "2",
        "--seeds",
        "1",
        "--threads",
        "1",
    ];
    args.extend(extra);
    kw_in(dir).args(&args).output().expect("run kw")
}

#[test]
fn a_bad_space_is_reported_and_skipped_and_the_run_fails_at_the_end() {
    let dir = unique_dir("simulate-suite-skip");
    let suite = dir.join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    write_cache(&suite, "toy_good.json", ["1", "2", "4"]);
    std::fs::write(suite.join("toy_unreadable.json"), "{ this is not JSON").unwrap();
    write_cache(&suite, "zero_dev.json", ["1", "0", "2"]);
    let broken = Path::new("suite").join("toy_unreadable.json");
    let zero = Path::new("suite").join("zero_dev.json");

    // JSON: the good space's rows (and the means over it alone), then the failure.
    let out = simulate(&dir, &["--json"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON results");
    let spaces = space_names(&rows);
    assert_eq!(spaces, ["toy_good", "family:toy", "mean"], "{rows}");
    // Each bad space: once, naming its file and the problem.
    let said = |space: &str| -> Vec<&str> {
        err.lines()
            .filter(|l| l.contains(&format!("skipping space `{space}`")))
            .collect()
    };
    let lines = said("toy_unreadable");
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].starts_with("kw simulate: "), "{err}");
    assert!(
        lines[0].contains(&format!("{}: not a valid JSON file", broken.display())),
        "{err}"
    );
    let lines = said("zero_dev");
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains(&format!("{}: configuration `2` (a=2)", zero.display()))
            && lines[0].contains("not a valid time"),
        "{err}"
    );
    assert!(said("toy_good").is_empty(), "{err}");
    assert!(err.contains("toy_good: 3 valid configurations"), "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("kw: error: suite: 2 space(s) could not be loaded")
            && last.contains("left out of the results: toy_unreadable, zero_dev"),
        "{err}"
    );

    // The table: the count of spaces scored and skipped.
    let out = simulate(&dir, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("suite suite: 1 spaces (2 skipped: see the errors)"),
        "{stdout}"
    );
    assert!(stdout.contains("toy_good"), "{stdout}");

    // Leave-one-device-out: the broken space of the family is no prior either (said once).
    let out = simulate(&dir, &["--spaces", "toy", "--prior-family", "--json"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        err.matches("skipping space `toy_unreadable`").count(),
        1,
        "{err}"
    );
    assert!(err.contains("reading it as a prior"), "{err}");
    assert!(!err.contains("zero_dev"), "{err}");
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON results");
    assert!(
        rows.as_array()
            .unwrap()
            .iter()
            .any(|r| r["space"] == "toy_good" && r["strategy"] == "random+prior"),
        "{rows}"
    );

    // Only bad spaces: an error, and no results.
    let out = simulate(&dir, &["--spaces", "toy_unreadable,zero", "--json"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        err.contains(
            "kw: error: suite: none of the 2 space(s) could be loaded: toy_unreadable, zero_dev"
        ),
        "{err}"
    );

    // Every space good: success.
    let out = simulate(&dir, &["--spaces", "toy_good", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The lines of `err` that say space `space` is skipped.
fn skip_lines<'a>(err: &'a str, space: &str) -> Vec<&'a str> {
    err.lines()
        .filter(|l| l.contains(&format!("skipping space `{space}`")))
        .collect()
}

/// A fresh test directory holding an empty `suite/`: the directory and the suite.
fn suite_dir(test: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = unique_dir(test);
    let suite = dir.join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    (dir, suite)
}

#[cfg(unix)]
#[test]
fn an_entry_named_like_a_space_that_is_not_a_regular_file_is_skipped() {
    let (dir, suite) = suite_dir("simulate-suite-not-file");
    write_cache(&suite, "toy_good.json", ["1", "2", "4"]);
    std::fs::create_dir(suite.join("fa_dir.json")).unwrap();
    std::os::unix::fs::symlink("nowhere.json", suite.join("fb_dangling.json")).unwrap();
    std::os::unix::fs::symlink("fc_loop.json", suite.join("fc_loop.json")).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(suite.join("fd_fifo.json"))
        .status();
    let has_fifo = fifo.is_ok_and(|s| s.success());

    let out = simulate(&dir, &["--json"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let mut bad = vec!["fa_dir", "fb_dangling", "fc_loop"];
    if has_fifo {
        bad.push("fd_fifo");
    }
    for space in &bad {
        let lines = skip_lines(&err, space);
        assert_eq!(lines.len(), 1, "{space}: {err}");
        let file = Path::new("suite").join(format!("{space}.json"));
        assert!(lines[0].contains(&file.display().to_string()), "{err}");
    }
    assert!(
        skip_lines(&err, "fa_dir")[0].contains("not a regular file"),
        "{err}"
    );
    if has_fifo {
        assert!(
            skip_lines(&err, "fd_fifo")[0].contains("not a regular file"),
            "{err}"
        );
    }
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.contains(&format!("{} space(s) could not be loaded", bad.len()))
            && last.contains("fa_dir, fb_dangling, fc_loop"),
        "{err}"
    );
    assert!(err.contains("toy_good: 3 valid configurations"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn a_family_t1_file_that_cannot_be_read_skips_the_family() {
    let (dir, suite) = suite_dir("simulate-suite-bad-t1");
    write_cache(&suite, "toy_good.json", ["1", "2", "4"]);
    write_cache(&suite, "fa_X.json", ["1", "2", "4"]);
    write_cache(&suite, "fa_Y.json", ["1", "2", "4"]);
    std::fs::create_dir(suite.join("fa_T1.json")).unwrap();
    write_cache(&suite, "fb_X.json", ["1", "2", "4"]);
    std::os::unix::fs::symlink("fb_T1.json", suite.join("fb_T1.json")).unwrap();

    let out = simulate(&dir, &["--json"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let t1 = Path::new("suite").join("fa_T1.json");
    for space in ["fa_X", "fa_Y"] {
        let lines = skip_lines(&err, space);
        assert_eq!(lines.len(), 1, "{err}");
        assert!(
            lines[0].contains(&format!("{}: not a regular file", t1.display())),
            "{err}"
        );
    }
    let lines = skip_lines(&err, "fb_X");
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains(&Path::new("suite").join("fb_T1.json").display().to_string()),
        "{err}"
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON results");
    assert!(
        rows.as_array()
            .unwrap()
            .iter()
            .all(|r| r["family"] != "fa" && r["family"] != "fb"),
        "{rows}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn spaces_that_match_nothing_are_an_error_naming_them() {
    let (dir, suite) = suite_dir("simulate-suite-unmatched");
    write_cache(&suite, "toy_good.json", ["1", "2", "4"]);
    write_cache(&suite, "toy_other.json", ["1", "2", "4"]);
    let out = simulate(&dir, &["--spaces", "toy,nope,toy_good,toy_gone"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(out.stdout.is_empty());
    assert!(
        err.contains("no space matches `nope`, `toy_gone` of --spaces"),
        "{err}"
    );
    // Matches by family and by exact name still work.
    let out = simulate(&dir, &["--spaces", "toy_good", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = simulate(&dir, &["--spaces", "toy", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON results");
    assert!(
        rows.as_array()
            .unwrap()
            .iter()
            .any(|r| r["space"] == "toy_other"),
        "{rows}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_family_is_the_longest_prefix_with_a_t1_file() {
    let (dir, suite) = suite_dir("simulate-suite-family");
    write_cache(&suite, "my_fam_X.json", ["1", "2", "4"]);
    std::fs::write(suite.join("my_fam_T1.json"), r#"["a != 2"]"#).unwrap();
    // A shorter prefix's T1 file is not the family's.
    std::fs::write(suite.join("my_T1.json"), r#"["a == 1"]"#).unwrap();
    // No T1 file of any prefix: the name up to its first `_`.
    write_cache(&suite, "other_fam_Y.json", ["1", "2", "4"]);

    let out = simulate(&dir, &["--json"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("my_fam_X: 2 valid configurations"), "{err}");
    assert!(err.contains("other_fam_Y: 3 valid configurations"), "{err}");
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON results");
    let family = |space: &str| -> String {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["space"] == space)
            .map(|r| r["family"].as_str().unwrap_or("").to_string())
            .unwrap_or_default()
    };
    assert_eq!(family("my_fam_X"), "my_fam", "{rows}");
    assert_eq!(family("other_fam_Y"), "other", "{rows}");
    let out = simulate(&dir, &["--spaces", "my_fam"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_space_in_both_json_and_json_gz_is_an_error_naming_both() {
    let (dir, suite) = suite_dir("simulate-suite-twice");
    write_cache(&suite, "toy_good.json", ["1", "2", "4"]);
    write_cache(&suite, "fa_X.json", ["1", "2", "4"]);
    write_cache(&suite, "fa_X.json.gz", ["1", "2", "4"]);
    let out = simulate(&dir, &["--json"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(out.stdout.is_empty());
    let json = Path::new("suite").join("fa_X.json");
    let gz = Path::new("suite").join("fa_X.json.gz");
    assert!(
        err.contains(&format!("`fa_X` ({} and {})", json.display(), gz.display())),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn configurations_missing_from_a_cache_are_warned_about() {
    let (dir, suite) = suite_dir("simulate-suite-missing");
    std::fs::write(
        suite.join("toy_part.json"),
        r#"{"tune_params_keys":["a"],"tune_params":{"a":[1,2,3]},"cache":{"1":{"a":1,"time":2}}}"#,
    )
    .unwrap();
    write_cache(&suite, "toy_full.json", ["1", "2", "4"]);
    let out = simulate(&dir, &["--json"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let file = Path::new("suite").join("toy_part.json");
    assert!(
        err.contains(&format!(
            "kw simulate: warning: {}: 2 of the 3 valid configurations",
            file.display()
        )),
        "{err}"
    );
    assert!(!err.contains("toy_full.json"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn errors_of_a_family_restrictions_name_the_t1_file() {
    let (dir, suite) = suite_dir("simulate-suite-t1-errors");
    write_cache(&suite, "toy_good.json", ["1", "2", "4"]);
    write_cache(&suite, "fa_X.json", ["1", "2", "4"]);
    std::fs::write(suite.join("fa_T1.json"), r#"["nosuch > 1"]"#).unwrap();
    write_cache(&suite, "fb_X.json", ["1", "2", "4"]);
    std::fs::write(suite.join("fb_T1.json"), r#"["a > 5"]"#).unwrap();
    let out = simulate(&dir, &["--json"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for fam in ["fa", "fb"] {
        let lines = skip_lines(&err, &format!("{fam}_X"));
        assert_eq!(lines.len(), 1, "{err}");
        let t1 = Path::new("suite").join(format!("{fam}_T1.json"));
        assert!(lines[0].contains(&t1.display().to_string()), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Options that mean nothing with (or without) the suite are refused before anything is read,
/// naming the options: `--t1` and `--restrictions-json` (the suite reads each family's T1
/// file), `--lookahead 0` (nothing would be proposed), `--lookahead` without the suite.
#[test]
fn options_that_make_no_sense_here_are_refused() {
    let dir = unique_dir("simulate-options");
    for (extra, needles) in [
        (
            vec!["--t1", "x_T1.json"],
            vec!["--t1", "--suite", "cannot be used with"],
        ),
        (
            vec!["--restrictions-json", "r.json"],
            vec!["--restrictions-json", "--suite"],
        ),
        (
            vec!["--lookahead", "0"],
            vec!["--lookahead", "give 1 (ask, evaluate, tell) to 1024"],
        ),
        (vec!["--lookahead", "5000"], vec!["--lookahead", "5000"]),
    ] {
        let out = simulate(&dir, &extra);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        for n in needles {
            assert!(err.contains(n), "{extra:?}: {err}");
        }
    }
    for extra in [
        ["--lookahead", "4"],
        ["--spaces", "pnpoly"],
        ["--prior-family", "--json"],
    ] {
        let out = kw_in(&dir)
            .args(["simulate", "c.json", "--budget", "2"])
            .args(extra)
            .output()
            .expect("run kw");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!("{} needs --suite DIR", extra[0])),
            "{err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A cache file that lacks entries for some valid configurations (a run cut short) is scored,
/// with a warning that counts them, on one space as in the suite.
#[test]
fn a_cache_missing_configurations_is_scored_with_a_warning() {
    let dir = unique_dir("simulate-missing");
    std::fs::write(
        dir.join("part.json"),
        r#"{"tune_params_keys":["a"],"tune_params":{"a":[1,2,3]},"cache":{"1":{"a":1,"time":2.0},"2":{"a":2,"time":1.0}}}"#,
    )
    .unwrap();
    let one = |cache: &str| {
        let args = [
            "simulate",
            cache,
            "--budget",
            "2",
            "--seeds",
            "1",
            "--threads",
            "1",
        ];
        kw_in(&dir).args(args).output().expect("run kw")
    };
    let out = one("part.json");
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("part.json: 1 of the 3 valid configurations of `part.json` have no entry")
            && err.contains("give them with --t1 or --restrictions-json"),
        "{err}"
    );
    // A whole cache says nothing of the kind.
    write_cache(&dir, "whole.json", ["2.0", "1.0", "3.0"]);
    let out = one("whole.json");
    assert!(out.status.success());
    assert!(!stderr(&out).contains("have no entry"), "{}", stderr(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A T4 results file (Kernel Tuner's, KTT's, `kw tune --t4`'s) is a measured space too: alone,
/// in a suite beside a cache file, and for `kw space stats`. KTT writes its numbers as strings.
#[test]
fn a_t4_results_file_simulates_and_counts() {
    let dir = unique_dir("simulate-t4");
    let suite = dir.join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    write_cache(&suite, "toy_good.json", ["1", "2", "4"]);
    let result = |bs: &str, invalidity: &str, t: f64| {
        serde_json::json!({
            "configuration": {"multiply_block_size": bs},
            "invalidity": invalidity,
            "objectives": ["time"],
            "measurements": [{"name": "time", "value": t, "unit": ""}],
        })
    };
    let t4 = serde_json::json!({
        "metadata": {"autotuner": "KTT", "device": "RTX 500"},
        "results": [
            result("32", "correct", 90.656),
            result("64", "correct", 62.816),
            result("128", "runtime", 0.0),
            result("256", "correct", 70.5),
        ],
        "schema_version": "1.0.0",
    });
    std::fs::write(suite.join("ktt_rtx500.json"), t4.to_string()).unwrap();
    let alone = kw_in(&dir)
        .args([
            "simulate",
            "suite/ktt_rtx500.json",
            "--strategy",
            "random",
            "--budget",
            "4",
            "--seeds",
            "2",
            "--threads",
            "1",
            "--json",
        ])
        .output()
        .expect("run kw");
    assert!(alone.status.success(), "{}", stderr(&alone));
    let rows: serde_json::Value = serde_json::from_slice(&alone.stdout).expect("JSON results");
    // Every configuration within the budget: the optimum found by every seed.
    assert_eq!(rows[0]["mean_fraction"], serde_json::json!(1.0), "{rows}");
    let out = simulate(&dir, &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON results");
    let spaces = space_names(&rows);
    assert!(spaces.contains(&"ktt_rtx500"), "{rows}");
    let stats = kw_in(&dir)
        .args(["space", "stats", "suite/ktt_rtx500.json"])
        .output()
        .expect("run kw");
    assert!(stats.status.success(), "{}", stderr(&stats));
    let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).expect("JSON stats");
    assert_eq!(stats["valid"], serde_json::json!(4), "{stats}");
    let _ = std::fs::remove_dir_all(&dir);
}
