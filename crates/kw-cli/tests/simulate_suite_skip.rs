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
    let spaces: Vec<&str> = rows
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|r| r["space"].as_str())
        .collect();
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
