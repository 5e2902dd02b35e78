//! Inputs at the edges of what `kw report` and `kw simulate` accept: objective values near
//! `f64::MAX` (the report's axes once looped forever over them), seed counts and ranges that
//! cannot be listed, budgets too large to hold a curve of, and measured times of 0 or below.

mod common;

use common::{kw_in, unique_dir, write_cache};
use std::path::Path;
use std::process::Output;

/// The header line of a results log over one parameter `a` with values 1 to 4.
const LOG_HEADER: &str = r#"{"format":"kw-tune-log","version":1,"fingerprint":"0","params":[{"name":"a","values":[1,2,3,4]}],"strategy":"random","seed":0,"kernel_name":"k","device_name":"d","problem_size":[8],"capture_checksum":"x","default_key":"1","objective":"time"}"#;

/// A record line of that log: configuration `a = n` (point `n - 1`) with `objective` and
/// `elapsed` seconds (JSON number text).
fn record(n: usize, objective: &str, elapsed: &str) -> String {
    format!(
        r#"{{"eval":{n},"key":"{n}","point":[{p}],"config":{{"a":{n}}},"objective":{objective},"elapsed_s":{elapsed},"eval_s":0.1,"samples":[1.0]}}"#,
        p = n - 1
    )
}

/// The stderr of `out` as text.
fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `kw` in `dir` with `args`.
fn kw(dir: &Path, args: &[&str]) -> Output {
    kw_in(dir).args(args).output().expect("run kw")
}

/// A report over objectives spanning 1e-320 to 1e308 is written; the values that cannot be
/// drawn are named in a note. Before the fix this never returned (plotters' logarithmic ticks
/// stepped through an infinite number of decades), so a regression shows as this test
/// hanging. A line whose wall time is 1e308 s is no evaluation's: left out when the log is
/// read (`LogRecord::check_times`), and said on the page.
#[test]
fn report_of_a_log_with_huge_objectives_finishes() {
    let dir = unique_dir("report-huge");
    let log = [
        LOG_HEADER.to_string(),
        record(1, "1e308", "0.1"),
        record(2, "0.01", "0.2"),
        record(3, "1e307", "0.3"),
        record(4, "1e-320", "0.4"),
        record(4, "1.0", "1e308"),
    ]
    .join("\n");
    std::fs::write(dir.join("huge.jsonl"), log + "\n").unwrap();
    let out = kw(&dir, &["report", "huge.jsonl", "-o", "r"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(dir.join("r/index.html")).expect("the report");
    assert!(html.contains("<svg"), "no figure drawn");
    assert!(
        html.contains("3 objective value(s) are not finite or outside the drawable range"),
        "no note of the values left out"
    );
    assert!(
        html.contains("1 malformed line(s) of the log, or with values no evaluation can have"),
        "no note of the line left out"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn simulate_refuses_seed_counts_and_ranges_it_cannot_run() {
    let dir = unique_dir("simulate-seeds");
    write_cache(&dir, "small.json", ["1", "2", "3"]);
    let sim = |extra: &[&str]| {
        let mut args = vec!["simulate", "small.json", "--strategy", "random"];
        args.extend(extra);
        kw(&dir, &args)
    };
    // Too many seeds to list: refused before anything runs (it once aborted, out of memory).
    let out = sim(&["--budget", "3", "--seeds", "4294967296"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--seeds"), "{}", stderr(&out));
    assert!(stderr(&out).contains("1..=100000"), "{}", stderr(&out));
    let out = sim(&["--budget", "3", "--seeds", "0"]);
    assert!(!out.status.success(), "{}", stderr(&out));
    // Seeds past the largest u64 (they once wrapped around to no run at all, exit 0).
    let out = sim(&[
        "--budget",
        "3",
        "--first-seed",
        "18446744073709551615",
        "--seeds",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--first-seed 18446744073709551615 with --seeds 2"),
        "{}",
        stderr(&out)
    );
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Budgets too large for the curves kept per run.
    for flag in ["--budget", "--budgets"] {
        let out = sim(&[flag, "2000000", "--seeds", "1"]);
        assert_eq!(out.status.code(), Some(2), "{flag}: {}", stderr(&out));
        assert!(stderr(&out).contains("1..=1000000"), "{}", stderr(&out));
    }
    // The largest first seed that still fits runs.
    let out = sim(&[
        "--budget",
        "3",
        "--first-seed",
        "18446744073709551613",
        "--seeds",
        "2",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(rows[0]["mean_fraction"].as_f64(), Some(1.0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn simulate_refuses_times_of_zero_or_below_and_keeps_failures() {
    let dir = unique_dir("simulate-times");
    for (name, bad) in [("zero.json", "0"), ("negative.json", "-1.5")] {
        write_cache(&dir, name, [bad, "1", "2"]);
        let out = kw(
            &dir,
            &[
                "simulate",
                name,
                "--strategy",
                "random,exhaustive",
                "--budget",
                "2",
                "--seeds",
                "3",
            ],
        );
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!("{name}: configuration `1` (a=1): `time` {bad}")),
            "{err}"
        );
        assert!(err.contains("not a valid time"), "{err}");
        assert!(
            out.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    // Failed configurations as Kernel Tuner writes them still load.
    write_cache(&dir, "failed.json", [r#""InvalidConfig""#, "1", "2"]);
    let out = kw(
        &dir,
        &[
            "simulate",
            "failed.json",
            "--strategy",
            "exhaustive",
            "--budget",
            "3",
            "--seeds",
            "2",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(rows[0]["mean_fraction"].as_f64(), Some(1.0));
    // A suite holding such a file names it.
    let suite = dir.join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    write_cache(&suite, "toy_dev.json", ["1", "0", "2"]);
    let out = kw(
        &dir,
        &[
            "simulate",
            "--suite",
            "suite",
            "--budgets",
            "2",
            "--seeds",
            "1",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("toy_dev.json: configuration `2` (a=2)"),
        "{}",
        stderr(&out)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
