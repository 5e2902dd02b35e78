//! Defects found by fuzzing the `kw` binary, through the binary (tuning on PoCL):
//! - `kw tune --rtol/--atol` took NaN, infinities and negative values, and wrote `null` into
//!   the wisdom record, which no kw could read back;
//! - `kw tune --resume` trusted the objective values of the results log (a time of -1 ms won
//!   and was written into the wisdom);
//! - `kw wisdom show/ls/explain` left out invalid records without a word.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

/// `kw` in `dir`, with every per-user directory inside it.
fn kw(dir: &Path, args: &[&str]) -> Output {
    kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .current_dir(dir)
        .env("KW_USER_WISDOM_DIR", dir.join("user-wisdom"))
        .env("KW_STATE_DIR", dir.join("state"))
        .env("KW_CACHE_DIR", dir.join("cache"))
        .env("KW_TUNE_DIR", dir.join("online"))
        .env("KW_WISDOM_PATH", dir.join("no-such-wisdom-dir"))
        .args(args)
        .output()
        .expect("running kw")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn both(o: &Output) -> String {
    format!("{}\n{}", stdout(o), stderr(o))
}

/// A vector_add capture on the first OpenCL device in a fresh directory: the directory, the
/// capture and the device index; `None` (after saying so) without an OpenCL device.
fn setup(name: &str) -> Option<(PathBuf, String, String)> {
    let index = common::opencl_index()?;
    let dir = common::unique_dir(&format!("fuzz-regressions-{name}"));
    let device = kernel_wisdom::open_device(&kernel_wisdom::DeviceSelector::Index(index))
        .expect("opening the OpenCL device");
    let capture = common::capture_vector_add(&dir, "va", 4096, device.as_ref());
    Some((
        dir,
        capture.to_str().unwrap().to_string(),
        index.to_string(),
    ))
}

/// `kw tune` arguments of a short, unconfirmed run without priors on device `idx`.
fn short<'a>(capture: &'a str, idx: &'a str, budget: &'a str) -> Vec<&'a str> {
    vec![
        "tune",
        capture,
        "--device",
        idx,
        "--budget",
        budget,
        "--samples",
        "2",
        "--warmup",
        "0",
        "--compile-threads",
        "1",
        "--confirm-rounds",
        "0",
        "--no-prior",
        "--strategy",
        "random",
    ]
}

/// Defect 1: `--rtol`/`--atol` that are NaN, infinite or negative are refused before anything
/// runs, with a message naming the option and what it must be; nothing is written. A valid
/// value still tunes, and its record reads back.
#[test]
fn tune_refuses_tolerances_that_are_not_finite_non_negative_numbers() {
    let Some((dir, capture, idx)) = setup("tolerance") else {
        return;
    };
    for (flag, value) in [
        ("--rtol", "NaN"),
        ("--atol", "NaN"),
        ("--rtol", "nan"),
        ("--rtol", "inf"),
        ("--rtol", "-1"),
        ("--atol", "-1e-6"),
        ("--rtol", "1e999"),
        ("--atol", "-inf"),
        ("--rtol", "--budget"),
    ] {
        let mut args = short(&capture, &idx, "2");
        args.extend([flag, value, "--wisdom-dir", "W", "--log", "refused.jsonl"]);
        let out = kw(&dir, &args);
        let said = both(&out);
        assert!(!out.status.success(), "{flag} {value} accepted:\n{said}");
        assert_eq!(out.status.code(), Some(2), "a usage error: {said}");
        assert!(
            said.contains(flag) && said.contains("finite number, 0 or more"),
            "{flag} {value}:\n{said}"
        );
        assert!(!dir.join("W").exists(), "{flag} {value}: wisdom written");
        assert!(!dir.join("refused.jsonl").exists(), "{flag} {value}: tuned");
    }
    // Also as `--flag=VALUE`.
    for arg in ["--rtol=-0.5", "--atol=-inf", "--atol=NaN"] {
        let mut args = short(&capture, &idx, "2");
        args.extend([arg, "--wisdom-dir", "W"]);
        let out = kw(&dir, &args);
        assert!(!out.status.success(), "{arg}: {}", both(&out));
        assert!(
            both(&out).contains("finite number, 0 or more"),
            "{arg}: {}",
            both(&out)
        );
        assert!(!dir.join("W").exists(), "{arg}: wisdom written");
    }

    // Valid values tune; the record says them and reads back.
    let mut args = short(&capture, &idx, "2");
    args.extend([
        "--rtol",
        "1e-4",
        "--atol",
        "0",
        "--wisdom-dir",
        "W",
        "--log",
        "ok.jsonl",
    ]);
    let out = kw(&dir, &args);
    assert!(out.status.success(), "{}", both(&out));
    let text = std::fs::read_to_string(dir.join("W/vector_add.json")).unwrap();
    assert!(!text.contains("null"), "{text}");
    assert!(text.contains("\"rtol\": 0.0001"), "{text}");
    let out = kw(&dir, &["wisdom", "show", "W/vector_add.json"]);
    assert!(out.status.success(), "{}", both(&out));
    assert!(stdout(&out).contains("1 record)"), "{}", both(&out));
    assert!(!stderr(&out).contains("skipped"), "{}", both(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Rewrites every objective value of the log at `path` (record lines only) with `value`.
fn rewrite_objectives(path: &Path, value: f64) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = Vec::new();
    let mut rewritten = 0;
    for (i, line) in text.lines().enumerate() {
        if i == 0 {
            out.push(line.to_string());
            continue;
        }
        let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["objective"].is_number() {
            v["objective"] = serde_json::json!(value);
            rewritten += 1;
        }
        out.push(v.to_string());
    }
    std::fs::write(path, out.join("\n") + "\n").unwrap();
    rewritten
}

/// Defect 2: a results log whose objective values are not times (-1 ms, 0 ms) is not trusted
/// on `--resume`: each such line is dropped with a warning naming the log, the line and the
/// value (as a malformed line is), the configurations are measured again, and the wisdom
/// record holds a real time.
#[test]
fn resume_drops_log_lines_whose_time_is_not_a_positive_number() {
    let Some((dir, capture, idx)) = setup("resume") else {
        return;
    };
    for (value, shown) in [(-1.0, "objective -1 "), (0.0, "objective 0 ")] {
        let wisdom = format!("W{}", value as i64);
        let mut first = short(&capture, &idx, "3");
        first.extend(["--log", "run.jsonl", "--wisdom-dir", "first-wisdom"]);
        let out = kw(&dir, &first);
        assert!(out.status.success(), "{}", both(&out));
        let n = rewrite_objectives(&dir.join("run.jsonl"), value);
        assert!(n > 0, "no evaluation succeeded");
        let mut again = short(&capture, &idx, "3");
        again.extend(["--log", "run.jsonl", "--resume", "--wisdom-dir", &wisdom]);
        let out = kw(&dir, &again);
        let said = both(&out);
        assert!(out.status.success(), "{said}");
        assert!(
            !said.contains("-1.0000 ms") && !said.contains(" 0.0000 ms"),
            "{said}"
        );
        let err = stderr(&out);
        assert!(err.contains("run.jsonl: dropped"), "{err}");
        assert!(err.contains("line 2: ") && err.contains(shown), "{err}");
        assert!(err.contains("not a valid time"), "{err}");
        // The record is real and reads back.
        let path = dir.join(&wisdom).join("vector_add.json");
        let file = kw_core::wisdom::WisdomFile::load(&path).unwrap();
        assert!(file.rejected.is_empty(), "{:?}", file.rejected);
        assert_eq!(file.records.len(), 1);
        assert!(file.records[0].objective.median_ms > 0.0);
        let out = kw(&dir, &["wisdom", "show", path.to_str().unwrap()]);
        assert!(stdout(&out).contains("1 record)"), "{}", both(&out));
        // A later run writes to the same wisdom directory without complaint.
        let mut later = short(&capture, &idx, "1");
        later.extend(["--log", "later.jsonl", "--wisdom-dir", &wisdom]);
        let out = kw(&dir, &later);
        assert!(out.status.success(), "{}", both(&out));
        std::fs::remove_file(dir.join("later.jsonl")).unwrap();
        std::fs::remove_file(dir.join("run.jsonl")).unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A maximised objective's log holds negated values (scores): they are valid, and resuming it
/// drops nothing. The name `time` is the median time's and is refused for another objective.
#[test]
fn resume_keeps_the_scores_of_a_maximised_objective() {
    let Some((dir, capture, idx)) = setup("scores") else {
        return;
    };
    let objective = [
        "--objective",
        "elems_per_thread * 1000 + 0 * time",
        "--objective-name",
        "work",
        "--maximize",
        "--log",
        "work.jsonl",
        "--wisdom-dir",
        "W",
    ];
    let mut first = short(&capture, &idx, "3");
    first.extend(objective);
    let out = kw(&dir, &first);
    assert!(out.status.success(), "{}", both(&out));
    let log = std::fs::read_to_string(dir.join("work.jsonl")).unwrap();
    assert!(log.contains("\"objective\":-"), "{log}");
    let mut again = short(&capture, &idx, "4");
    again.extend(objective);
    again.push("--resume");
    let out = kw(&dir, &again);
    assert!(out.status.success(), "{}", both(&out));
    assert!(!stderr(&out).contains("dropped"), "{}", both(&out));
    // The same name for another expression, or the other direction: refused.
    let mut other = short(&capture, &idx, "5");
    other.extend(objective);
    let at = other.len() - 8;
    other[at] = "elems_per_thread * 2000 + 0 * time";
    other.push("--resume");
    let out = kw(&dir, &other);
    assert!(!out.status.success(), "{}", both(&out));
    assert!(
        both(&out).contains("objective's expression"),
        "{}",
        both(&out)
    );
    // A budget below the log's results is said.
    let mut fewer = short(&capture, &idx, "2");
    fewer.extend(objective);
    fewer.push("--resume");
    let out = kw(&dir, &fewer);
    assert!(out.status.success(), "{}", both(&out));
    assert!(
        stderr(&out).contains("more than --budget 2"),
        "{}",
        both(&out)
    );

    let mut named_time = short(&capture, &idx, "2");
    named_time.extend(["--objective", "time * 2", "--objective-name", "time"]);
    let out = kw(&dir, &named_time);
    assert!(!out.status.success(), "{}", both(&out));
    assert!(both(&out).contains("the median time's"), "{}", both(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A wisdom record as JSON (`median_ms` and the rest given as JSON text).
fn record(config: &str, size: &str, device: &str, median_ms: &str, extra: &str) -> String {
    format!(
        r#"{{"config": {config}, "problem_size": {size}, {device}
            "objective": {{"median_ms": {median_ms}, "samples": 3}},
            "space": {{"hash": "h", "parameters": [{{"name": "block_size_x", "values": [32, 64], "default": 64}}]}}{extra}}}"#
    )
}

const DEVICE: &str = r#""device": {"name": "Dev", "backend": "opencl", "architecture": "a"},"#;

/// Defect 3: `kw wisdom show`, `ls` and `explain` say on standard error which records they
/// skipped and why (the reasons `kw wisdom merge` gives), number the records by their place
/// in the file, and exit 0.
#[test]
fn wisdom_show_ls_and_explain_say_which_records_were_skipped() {
    let dir = common::unique_dir("fuzz-regressions-skipped");
    std::fs::create_dir_all(dir.join("w")).unwrap();
    let good = r#"{"block_size_x": 64}"#;
    let records = [
        // #1: missing device.
        record(good, "[1024]", "", "1.0", ""),
        // #2: valid.
        record(good, "[1024]", DEVICE, "1.0", ""),
        // #3: missing space.
        format!(
            r#"{{"config": {good}, "problem_size": [2048], {DEVICE} "objective": {{"median_ms": 1.0, "samples": 3}}}}"#
        ),
        // #4: negative time.
        record(good, "[4096]", DEVICE, "-1.0", ""),
        // #5: "NaN" as a string.
        record(good, "[4096]", DEVICE, "\"NaN\"", ""),
        // #6: a problem size of zeros.
        record(good, "[0, 0]", DEVICE, "1.0", ""),
        // #7: a null configuration value.
        record(r#"{"block_size_x": null}"#, "[8192]", DEVICE, "1.0", ""),
        // #8: a tolerance of null (what `--rtol NaN` wrote).
        record(
            good,
            "[16384]",
            DEVICE,
            "1.0",
            r#", "provenance": {"tolerances": {"c": {"rtol": null, "atol": 1e-6}}}"#,
        ),
        // #9: loads, but its value is not declared in its own space.
        record(r#"{"block_size_x": 48}"#, "[1024]", DEVICE, "0.5", ""),
    ];
    let text = format!(
        r#"{{"format": "kernel-wisdom", "version": 1, "tuning_key": "k", "records": [{}]}}"#,
        records.join(",\n")
    );
    std::fs::write(dir.join("w/k.json"), text).unwrap();

    // What merge says about each record (the reference).
    let out = kw(&dir, &["wisdom", "merge", "merged", "w/k.json"]);
    assert!(out.status.success(), "{}", both(&out));
    // Each names its file (with several inputs, "record #1" alone names none).
    let merge_reasons: Vec<String> = stderr(&out)
        .lines()
        .filter_map(|l| l.split_once("left out a record of `k`: w/k.json: "))
        .map(|(_, why)| why.to_string())
        .collect();
    assert_eq!(merge_reasons.len(), 8, "{}", both(&out));
    assert!(merge_reasons.iter().any(|w| w.starts_with("record #9: ")));
    let rejected: Vec<&String> = merge_reasons
        .iter()
        .filter(|w| !w.starts_with("record #9: "))
        .collect();
    assert_eq!(rejected.len(), 7, "{merge_reasons:?}");
    for n in [1, 3, 4, 5, 6, 7, 8] {
        assert!(
            rejected
                .iter()
                .any(|w| w.starts_with(&format!("record #{n}: "))),
            "record #{n}: {merge_reasons:?}"
        );
    }

    // show: the same reasons on standard error, the records numbered by their place.
    let out = kw(&dir, &["wisdom", "show", "w/k.json"]);
    assert!(out.status.success(), "{}", both(&out));
    let (so, se) = (stdout(&out), stderr(&out));
    for why in &merge_reasons {
        let why = why.strip_prefix("record #9: ").unwrap_or(why);
        assert!(se.contains(why), "show does not say {why:?}:\n{se}");
    }
    assert!(
        se.contains("w/k.json: skipped record #4: objective -1 ms"),
        "{se}"
    );
    assert!(se.contains("record #9 cannot be used"), "{se}");
    assert!(
        so.contains("(tuning key `k`, 1 usable record, 8 skipped"),
        "{so}"
    );
    assert!(so.contains("\n#2 ") && so.contains("\n#9 "), "{so}");
    assert!(!so.contains("\n#1 "), "{so}");
    // By tuning key on a search path: said once, by the command.
    let out = kw(&dir, &["wisdom", "show", "k", "--dir", "w"]);
    assert!(out.status.success(), "{}", both(&out));
    let se = stderr(&out);
    assert_eq!(se.matches("record #4: ").count(), 1, "{se}");
    assert!(se.contains("kw wisdom show: warning:"), "{se}");

    // ls: a warning per skipped record, and the count says it.
    let out = kw(&dir, &["wisdom", "ls", "w"]);
    assert!(out.status.success(), "{}", both(&out));
    let (so, se) = (stdout(&out), stderr(&out));
    for why in rejected.iter() {
        assert!(se.contains(why.as_str()), "ls does not say {why:?}:\n{se}");
    }
    // Record #9 loads but cannot be used (an undeclared value): skipped too, and said.
    assert!(so.contains("1 (8 skipped)"), "{so}");
    assert!(se.contains("record #9 cannot be used"), "{se}");

    // explain: the same warnings; its own account numbers records by their place too.
    let out = kw(
        &dir,
        &[
            "wisdom",
            "explain",
            "w/k.json",
            "--device",
            "Dev",
            "--backend",
            "opencl",
            "--problem-size",
            "1024",
        ],
    );
    assert!(out.status.success(), "{}", both(&out));
    let (so, se) = (stdout(&out), stderr(&out));
    for why in rejected.iter() {
        assert!(
            se.contains(why.as_str()),
            "explain does not say {why:?}:\n{se}"
        );
    }
    assert!(so.contains("chosen: record #2 "), "{so}");
    assert!(so.contains("skipped: record #9: value 48"), "{so}");
    assert!(so.contains("(1 usable record, 8 skipped"), "{so}");

    // A file with nothing wrong: no warning.
    let out = kw(&dir, &["wisdom", "show", "merged/k.json"]);
    assert!(out.status.success(), "{}", both(&out));
    assert!(!stderr(&out).contains("warning"), "{}", both(&out));
    assert!(stdout(&out).contains("1 record)"), "{}", both(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `kw log export` overwrote whatever its outputs named, the results log itself included, and
/// wrote the Kernel Tuner cache in place (an interrupted export left part of a file). Now the
/// log and an existing file are refused before anything is written (`--force` replaces an
/// existing output, never the log), both outputs in one file too, and the count is of
/// distinct configurations.
#[test]
fn log_export_never_overwrites_the_log_or_an_existing_file_unasked() {
    let dir = std::env::temp_dir().join(format!("kw-fuzz-export-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let header = r#"{"format":"kw-tune-log","version":1,"fingerprint":"f","params":[{"name":"bs","values":[32,64]}],"strategy":"random","seed":0,"kernel_name":"k","device_name":"GPU","problem_size":[4096],"capture_checksum":"blake3:00","default_key":"32","objective":"time"}"#;
    let eval = |n: u32, ms: f64| {
        format!(
            r#"{{"eval":{n},"key":"32","point":[0],"config":{{"bs":32}},"objective":{ms},"elapsed_s":1.0,"eval_s":1.0,"samples":[{ms}]}}"#
        )
    };
    let log_text = format!("{header}\n{}\n{}\n", eval(1, 0.5), eval(2, 0.6));
    std::fs::write(dir.join("run.tune.jsonl"), &log_text).unwrap();
    let log = "run.tune.jsonl";
    for args in [
        vec!["log", "export", log, "--kt-cache", log],
        vec![
            "log",
            "export",
            log,
            "--kt-cache",
            "./run.tune.jsonl",
            "--force",
        ],
        vec!["log", "export", log, "--t4", log, "--force"],
    ] {
        let o = kw(&dir, &args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", both(&o));
        assert!(
            stderr(&o).contains("is the results log being exported"),
            "{}",
            both(&o)
        );
    }
    let o = kw(
        &dir,
        &[
            "log",
            "export",
            log,
            "--kt-cache",
            "x.json",
            "--t4",
            "x.json",
        ],
    );
    assert!(
        stderr(&o).contains("given as both --kt-cache and --t4"),
        "{}",
        both(&o)
    );
    assert!(!dir.join("x.json").exists());
    std::fs::write(dir.join("kt.json"), "keep me").unwrap();
    let o = kw(&dir, &["log", "export", log, "--kt-cache", "kt.json"]);
    assert!(
        stderr(&o).contains("kt.json: exists; not overwriting it"),
        "{}",
        both(&o)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("kt.json")).unwrap(),
        "keep me"
    );
    assert_eq!(std::fs::read_to_string(dir.join(log)).unwrap(), log_text);
    let o = kw(
        &dir,
        &["log", "export", log, "--kt-cache", "kt.json", "--force"],
    );
    assert!(o.status.success(), "{}", both(&o));
    assert!(
        stderr(&o).contains("1 configurations written to kt.json"),
        "{}",
        both(&o)
    );
    let cache: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("kt.json")).unwrap()).unwrap();
    assert_eq!(cache["cache"].as_object().unwrap().len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `kw capture ls` and `kw wisdom ls` exited 0 when an entry could not be read, and
/// `kw cache clear --dir` left a `.lock` in a folder that was no cache. Now the listings print
/// every entry and then fail, naming the count; the folder is left as it was.
#[test]
fn listings_fail_on_unreadable_entries_and_clear_leaves_no_lock_behind() {
    let dir = common::unique_dir("fuzz-listings");
    std::fs::create_dir_all(dir.join("caps")).unwrap();
    std::fs::write(dir.join("caps/broken.kwcap"), b"not a capture").unwrap();
    let o = kw(&dir, &["capture", "ls", "caps"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(stdout(&o).contains("broken.kwcap"), "{}", both(&o));
    assert!(stdout(&o).contains("UNREADABLE"), "{}", both(&o));
    assert!(
        stderr(&o).contains("1 of 1 capture files in caps cannot be read"),
        "{}",
        both(&o)
    );

    std::fs::create_dir_all(dir.join("w")).unwrap();
    std::fs::write(dir.join("w/broken.json"), b"{").unwrap();
    let o = kw(&dir, &["wisdom", "ls", "w"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(stdout(&o).contains("INVALID"), "{}", both(&o));
    assert!(
        stderr(&o).contains("1 of 1 wisdom files cannot be read"),
        "{}",
        both(&o)
    );

    std::fs::create_dir_all(dir.join("photos")).unwrap();
    std::fs::write(dir.join("photos/a.jpg"), b"x").unwrap();
    let o = kw(&dir, &["cache", "clear", "--dir", "photos"]);
    assert!(o.status.success(), "{}", both(&o));
    assert!(stdout(&o).contains("removed 0 entries"), "{}", both(&o));
    let left: Vec<_> = std::fs::read_dir(dir.join("photos"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("a.jpg")]);
}

/// `kw tune --t4 OUT` wrote over whatever OUT named (the capture, the results log, the wisdom
/// file, an earlier file), and `--log` naming the wisdom file moved the wisdom aside and then
/// waited forever on its own lock. Now a log or T4 file that would take the place of a
/// capture, of each other or of a wisdom file is refused before anything runs, and an earlier
/// T4 file is kept aside as an earlier log is.
#[test]
fn tune_outputs_never_take_the_place_of_a_capture_a_log_or_wisdom() {
    let Some((dir, capture, idx)) = setup("tune-outputs") else {
        return;
    };
    let before = std::fs::read(dir.join(&capture)).unwrap();
    let refused = |extra: &[&str], says: &str| {
        let mut args = short(&capture, &idx, "1");
        args.extend(["--wisdom-dir", "w"]);
        args.extend(extra);
        let o = kw(&dir, &args);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {}", both(&o));
        assert!(stderr(&o).contains(says), "{extra:?}: {}", both(&o));
    };
    refused(&["--t4", &capture], "is a capture being tuned");
    refused(&["--log", &capture], "is a capture being tuned");
    refused(
        &["--log", "w/vector_add.json"],
        "is in the wisdom directory",
    );
    refused(
        &["--t4", "./w/vector_add.json"],
        "is in the wisdom directory",
    );
    refused(
        &["--log", "run.jsonl", "--t4", "run.jsonl"],
        "is the results log of",
    );
    assert_eq!(std::fs::read(dir.join(&capture)).unwrap(), before);
    assert!(!dir.join("w").exists() || std::fs::read_dir(dir.join("w")).unwrap().count() == 0);

    std::fs::write(dir.join("t4.json"), "earlier results").unwrap();
    let mut args = short(&capture, &idx, "1");
    args.extend(["--wisdom-dir", "w", "--log", "run.jsonl", "--t4", "t4.json"]);
    let o = kw(&dir, &args);
    assert!(o.status.success(), "{}", both(&o));
    assert!(
        stderr(&o).contains("t4.json existed; kept it as t4.prev1.json"),
        "{}",
        both(&o)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("t4.prev1.json")).unwrap(),
        "earlier results"
    );
    let t4: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("t4.json")).unwrap()).unwrap();
    assert!(t4.is_object(), "{t4}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A Kernel Tuner cache given as `--prior` with a time of 0 or below was used without a word,
/// and that configuration evaluated first (`kw simulate CACHE` refuses such a file). Now the
/// prior is refused the same way, naming the file and the configuration.
#[test]
fn a_prior_with_a_time_of_zero_or_below_is_refused() {
    let dir = common::unique_dir("fuzz-prior-time");
    let space = r#"{"tune_params_keys":["a"],"tune_params":{"a":[1,2,3]},"cache":{"1":{"a":1,"time":2.0},"2":{"a":2,"time":1.0},"3":{"a":3,"time":3.0}}}"#;
    std::fs::write(dir.join("space.json"), space).unwrap();
    std::fs::write(
        dir.join("prior.json"),
        space.replace(r#""time":3.0"#, r#""time":-1.0"#),
    )
    .unwrap();
    let simulate = |prior: &str| {
        kw(
            &dir,
            &[
                "simulate",
                "space.json",
                "--budget",
                "2",
                "--seeds",
                "1",
                "--prior",
                prior,
            ],
        )
    };
    let o = simulate("prior.json");
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let err = stderr(&o);
    assert!(err.contains("prior.json"), "{err}");
    assert!(
        err.contains("configuration `3`") && err.contains("-1"),
        "{err}"
    );
    let o = simulate("space.json");
    assert!(o.status.success(), "{}", both(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Fuzz round 4: `kw simulate` scored a minimised objective's negative values (fractions
/// above 1, -inf, NaN), matched no numpy-written `16.0` to its `16`, and said neither which
/// file's conditions left no configuration nor why no entry counted.
#[test]
fn simulate_refuses_non_positive_values_and_names_what_leaves_nothing() {
    let dir = common::unique_dir("fuzz-simulate-values");
    let simulate = |args: &[&str]| {
        let mut all = vec!["simulate", "--budget", "2", "--seeds", "1"];
        all.extend_from_slice(args);
        kw(&dir, &all)
    };
    let cache = |values: [&str; 3]| {
        format!(
            r#"{{"objective":"GFLOP/s","tune_params_keys":["a"],"tune_params":{{"a":[1,2,3]}},"cache":{{"1":{{"a":1,"GFLOP/s":{}}},"2":{{"a":2,"GFLOP/s":{}}},"3":{{"a":3,"GFLOP/s":{}}}}}}}"#,
            values[0], values[1], values[2]
        )
    };
    std::fs::write(dir.join("neg.json"), cache(["-3", "2", "0"])).unwrap();
    let o = simulate(&["neg.json"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let err = stderr(&o);
    assert!(
        err.contains("neg.json") && err.contains("is not positive"),
        "{err}"
    );
    // Higher is better: scored as value found over the best value, never above 1.
    let max = cache(["10", "40", "20"]).replacen('{', r#"{"objective_higher_is_better":true,"#, 1);
    std::fs::write(dir.join("max.json"), max).unwrap();
    let o = kw(
        &dir,
        &[
            "simulate", "max.json", "--budget", "3", "--seeds", "2", "--json",
        ],
    );
    assert!(o.status.success(), "{}", both(&o));
    let out = stdout(&o);
    assert!(out.contains("\"mean_fraction\":1.0"), "{out}");
    // Entries written as floats match integer values.
    let floats = r#"{"tune_params_keys":["a"],"tune_params":{"a":[16,32]},"cache":{"16":{"a":16.0,"time":2.0},"32":{"a":32.0,"time":1.0}}}"#;
    std::fs::write(dir.join("floats.json"), floats).unwrap();
    let o = simulate(&["floats.json"]);
    assert!(o.status.success(), "{}", both(&o));
    // Every value a failure: the message says what counts as one.
    let failed = r#"{"tune_params_keys":["a"],"tune_params":{"a":[1,2]},"cache":{"1":{"a":1,"time":1e20},"2":{"a":2,"time":"InvalidConfig"}}}"#;
    std::fs::write(dir.join("failed.json"), failed).unwrap();
    let o = simulate(&["failed.json"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let err = stderr(&o);
    assert!(err.contains("failed.json") && err.contains("1e20"), "{err}");
    // Conditions that leave nothing: the T1 file is named.
    let t1 = r#"{"ConfigurationSpace":{"TuningParameters":[{"Name":"a","Type":"int","Values":"[1, 2, 3]","Default":1}],"Conditions":[{"Expression":"a > 5","Parameters":["a"]}]}}"#;
    std::fs::write(dir.join("none_T1.json"), t1).unwrap();
    std::fs::write(
        dir.join("time.json"),
        cache(["3", "2", "1"]).replace("GFLOP/s", "time"),
    )
    .unwrap();
    let o = simulate(&["time.json", "--t1", "none_T1.json"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let err = stderr(&o);
    assert!(
        err.contains("none_T1.json") && err.contains("no valid configuration"),
        "{err}"
    );
    // As a prior, a minimised objective's values need only be finite (ranks).
    let o = simulate(&["time.json", "--prior", "neg.json"]);
    assert!(o.status.success(), "{}", both(&o));
    // A higher-is-better file with a 0 still counts as a space; simulating it is refused.
    let zero = cache(["10", "0", "20"]).replacen('{', r#"{"objective_higher_is_better":true,"#, 1);
    std::fs::write(dir.join("zero.json"), zero).unwrap();
    let o = kw(&dir, &["space", "stats", "zero.json"]);
    assert!(o.status.success(), "{}", both(&o));
    let o = simulate(&["zero.json"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(stderr(&o).contains("higher is better"), "{}", both(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `kw report` on a maximised objective's log called its best "not comparable" with the
/// default and drew an empty histogram without a word.
#[test]
fn a_report_on_a_maximised_log_compares_and_says_what_it_draws() {
    let dir = common::unique_dir("fuzz-report-max");
    let header = r#"{"format":"kw-tune-log","version":1,"fingerprint":"60019aa4a9fb05ff","params":[{"name":"block_size_x","values":[16,32]},{"name":"mode","values":[0,1,2]}],"strategy":"random","seed":0,"kernel_name":"scale","device_name":"pocl","problem_size":[256],"default_key":"16,0","objective":"GFLOP/s","maximize":true}"#;
    let lines = [
        r#"{"eval":1,"key":"16,0","point":[0,0],"config":{"block_size_x":16,"mode":0},"objective":-10.0,"elapsed_s":0.2,"eval_s":0.1}"#,
        r#"{"eval":2,"key":"32,1","point":[1,1],"config":{"block_size_x":32,"mode":1},"objective":-40.0,"elapsed_s":0.3,"eval_s":0.1}"#,
        r#"{"eval":3,"key":"32,2","point":[1,2],"config":{"block_size_x":32,"mode":2},"objective":-20.0,"elapsed_s":0.4,"eval_s":0.1}"#,
    ];
    std::fs::write(
        dir.join("max.tune.jsonl"),
        format!("{header}\n{}\n", lines.join("\n")),
    )
    .unwrap();
    let o = kw(&dir, &["report", "max.tune.jsonl", "-o", "rep"]);
    assert!(o.status.success(), "{}", both(&o));
    let html = std::fs::read_to_string(dir.join("rep").join("index.html")).unwrap();
    assert!(
        html.contains("4.00x faster"),
        "the best's value is 4x the default's"
    );
    assert!(html.contains("The objective is maximised"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Fuzz round 5: a value list written as literals or a JSON array passed the 1,000,000-value
/// limit (only `range()` was checked), and a vector type by value (`float4` scalar) was passed
/// as one lane.
#[test]
fn t1_value_limits_hold_however_written_and_vector_scalars_are_refused() {
    let dir = common::unique_dir("fuzz-t1-limits");
    let values: Vec<String> = (0..=1_000_000).map(|i| i.to_string()).collect();
    let t1 = format!(
        r#"{{"ConfigurationSpace":{{"TuningParameters":[{{"Name":"a","Type":"int","Values":[{}],"Default":0}}],"Conditions":[]}}}}"#,
        values.join(",")
    );
    std::fs::write(dir.join("big_T1.json"), t1).unwrap();
    let o = kw(&dir, &["space", "stats", "big_T1.json"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(
        stderr(&o).contains("has 1000001 values, more than 1000000"),
        "{}",
        both(&o)
    );
    std::fs::write(
        dir.join("k.cl"),
        "__kernel void k(__global float* out, const float4 s, const int n) { int i = get_global_id(0); if (i < n) out[i] = s.y; }",
    )
    .unwrap();
    let t1 = r#"{"ConfigurationSpace":{"TuningParameters":[{"Name":"block_size_x","Type":"int","Values":"[32, 64]","Default":32}],"Conditions":[]},
      "KernelSpecification":{"Language":"OpenCL","KernelName":"k","KernelFile":"k.cl","GlobalSize":{"X":"ProblemSize[0]"},"LocalSize":{"X":"block_size_x"},"ProblemSize":[256],
      "Arguments":[{"Name":"out","Type":"float","MemoryType":"Vector","AccessType":"WriteOnly","FillType":"Constant","FillValue":0.0,"Size":256,"Output":1},
                   {"Name":"s","Type":"float4","MemoryType":"Scalar","FillValue":2.0},
                   {"Name":"n","Type":"int32","MemoryType":"Scalar","FillValue":256}]}}"#;
    std::fs::write(dir.join("vec_T1.json"), t1).unwrap();
    let o = kw(&dir, &["tune", "--t1", "vec_T1.json", "--budget", "1"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let err = stderr(&o);
    assert!(err.contains("`s`") && err.contains("not by value"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `kw space stats` printed a product past 128 bits as 2^128 - 1, as if it were exact.
#[test]
fn a_product_past_128_bits_is_printed_as_its_order() {
    let dir = common::unique_dir("fuzz-space-product");
    let params: Vec<String> = (0..100)
        .map(|i| format!(r#"{{"Name":"p{i}","Type":"int","Values":"[1, 2, 3]","Default":1}}"#))
        .collect();
    let conds: Vec<String> = (0..99)
        .map(|i| {
            format!(
                r#"{{"Expression":"p{i} <= p{}","Parameters":["p{i}","p{}"]}}"#,
                i + 1,
                i + 1
            )
        })
        .collect();
    let t1 = format!(
        r#"{{"ConfigurationSpace":{{"TuningParameters":[{}],"Conditions":[{}]}}}}"#,
        params.join(","),
        conds.join(",")
    );
    std::fs::write(dir.join("chain_T1.json"), t1).unwrap();
    let o = kw(&dir, &["space", "stats", "chain_T1.json"]);
    assert!(o.status.success(), "{}", both(&o));
    let json: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let product = json["product"].as_f64().unwrap();
    assert!((product / 3f64.powi(100) - 1.0).abs() < 1e-9, "{product}");
    assert_eq!(json["valid"], serde_json::json!(5151));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `kw simulate --suite` skipped a cache whose file name is not UTF-8 without a word. Now it
/// is named and left out like any space that cannot be loaded (exit 1).
#[cfg(unix)]
#[test]
fn a_suite_names_a_space_whose_file_name_is_not_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let dir = common::unique_dir("fuzz-suite-utf8");
    let space = r#"{"tune_params_keys":["a"],"tune_params":{"a":[1,2,3]},"cache":{"1":{"a":1,"time":2.0},"2":{"a":2,"time":1.0},"3":{"a":3,"time":3.0}}}"#;
    std::fs::create_dir_all(dir.join("s")).unwrap();
    std::fs::write(dir.join("s/good_X.json"), space).unwrap();
    let bad = std::ffi::OsStr::from_bytes(b"bad\xffname_X.json");
    std::fs::write(dir.join("s").join(bad), space).unwrap();
    std::fs::write(dir.join("s/.json"), space).unwrap();
    let o = kw(
        &dir,
        &[
            "simulate",
            "--suite",
            "s",
            "--budgets",
            "2",
            "--seeds",
            "1",
            "--threads",
            "1",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(
        stderr(&o).contains("the file name is not UTF-8"),
        "{}",
        both(&o)
    );
    assert!(stdout(&o).contains("good_X"), "{}", both(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A record's bad alternate (a time of 0, its own configuration, an undeclared value) made
/// the whole record invalid, or passed unsaid; `kw report` left out invalid records without a
/// word. Now only the alternate is left out, and `ls`, `merge` and `report` say so.
#[test]
fn bad_alternates_cost_only_themselves_and_are_said() {
    let dir = common::unique_dir("fuzz-alternates");
    std::fs::create_dir_all(dir.join("w")).unwrap();
    let alternates = r#", "alternates": [
        {"config": {"block_size_x": 32}, "median_ms": 0},
        {"config": {"block_size_x": 64}, "median_ms": 2.0},
        {"config": {"block_size_x": 48}, "median_ms": 2.0},
        {"config": {"block_size_x": 32}, "median_ms": "NaN"}]"#;
    let file = format!(
        r#"{{"format": "kernel-wisdom", "version": 1, "tuning_key": "k", "records": [{}, {}]}}"#,
        record(
            r#"{"block_size_x": 64}"#,
            "[1024]",
            DEVICE,
            "1.0",
            alternates
        ),
        record(r#"{"block_size_x": 64}"#, "[2048]", DEVICE, "-1.0", ""),
    );
    std::fs::write(dir.join("w/k.json"), file).unwrap();
    let o = kw(&dir, &["wisdom", "ls", "w"]);
    assert!(o.status.success(), "{}", both(&o));
    assert!(stdout(&o).contains("1 (1 skipped)"), "{}", both(&o));
    let err = stderr(&o);
    for why in [
        "record #1: alternate #1 (block_size_x=32) left out: 0 ms is not a positive finite time",
        "record #1: alternate #2 (block_size_x=64) left out: it is the record's own configuration",
        "record #1: alternate #3 (block_size_x=48) left out: value 48 of `block_size_x`",
        "record #1: alternate #4 left out: invalid type: string \"NaN\", expected f64",
    ] {
        assert!(err.contains(why), "{why}: {err}");
    }
    let o = kw(&dir, &["wisdom", "merge", "out", "w"]);
    assert!(o.status.success(), "{}", both(&o));
    assert!(
        stderr(&o).contains("alternate #1 (block_size_x=32) left out"),
        "{}",
        both(&o)
    );
    assert!(
        stdout(&o).contains("2 record(s) read -> 1 record(s), 1 left out"),
        "{}",
        both(&o)
    );
    let o = kw(&dir, &["report", "w", "-o", "r"]);
    assert!(o.status.success(), "{}", both(&o));
    let err = stderr(&o);
    assert!(err.contains("skipped record #2: objective -1 ms"), "{err}");
    assert!(
        err.contains("alternate #3 (block_size_x=48) left out"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Fuzz round 2: `kw wisdom merge` wrote one key's file and then failed on a damaged file of
/// another key in the output (now found before anything is written); `kw cache stats` called a
/// cache the runtime refuses healthy; `kw log export` without an output asked for `--kt-cache`
/// only, though `--t4` alone does.
#[test]
fn merge_checks_every_output_first_cache_says_refused_export_needs_an_output() {
    let dir = common::unique_dir("fuzz-round2");
    let file = |key: &str| {
        format!(
            r#"{{"format": "kernel-wisdom", "version": 1, "tuning_key": "{key}", "records": [{}]}}"#,
            record(r#"{"block_size_x": 64}"#, "[1024]", DEVICE, "1.0", "")
        )
    };
    std::fs::create_dir_all(dir.join("in")).unwrap();
    std::fs::create_dir_all(dir.join("out")).unwrap();
    std::fs::write(dir.join("in/a.json"), file("a")).unwrap();
    std::fs::write(dir.join("in/b.json"), file("b")).unwrap();
    std::fs::write(dir.join("out/b.json"), "garbage").unwrap();
    let o = kw(&dir, &["wisdom", "merge", "out", "in"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(stderr(&o).contains("b.json"), "{}", both(&o));
    assert!(!dir.join("out/a.json").exists(), "nothing written");

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(dir.join("cache")).unwrap();
        std::fs::set_permissions(dir.join("cache"), std::fs::Permissions::from_mode(0o777))
            .unwrap();
        let o = kw(&dir, &["cache", "stats", "--dir", "cache"]);
        assert!(
            stderr(&o).contains("the runtime does not use this cache")
                && stderr(&o).contains("writable by others"),
            "{}",
            both(&o)
        );
    }

    let o = kw(&dir, &["log", "export", "run.jsonl"]);
    assert_eq!(o.status.code(), Some(2), "{}", both(&o));
    assert!(
        stderr(&o).contains("--kt-cache") && stderr(&o).contains("--t4"),
        "{}",
        both(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Fuzz round 3: `kw wisdom merge` rewrote one key's file before finding that another key's
/// lock file could not be used (now checked first); `kw tune` let two captures of one file
/// name share a results log, and `--log` name a wisdom lock file.
#[test]
fn merge_checks_lock_files_first_and_tune_refuses_shared_or_lock_outputs() {
    let Some((dir, capture, idx)) = setup("round3") else {
        return;
    };
    let file = |key: &str, ms: &str| {
        format!(
            r#"{{"format": "kernel-wisdom", "version": 1, "tuning_key": "{key}", "records": [{}]}}"#,
            record(r#"{"block_size_x": 64}"#, "[1024]", DEVICE, ms, "")
        )
    };
    for d in ["in", "out"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    std::fs::write(dir.join("in/a.json"), file("a", "0.5")).unwrap();
    std::fs::write(dir.join("in/b.json"), file("b", "0.5")).unwrap();
    std::fs::write(dir.join("out/a.json"), file("a", "1.0")).unwrap();
    std::fs::create_dir(dir.join("out/b.json.lock")).unwrap();
    let before = std::fs::read(dir.join("out/a.json")).unwrap();
    let o = kw(&dir, &["wisdom", "merge", "out", "in"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(stderr(&o).contains("b.json.lock"), "{}", both(&o));
    assert_eq!(std::fs::read(dir.join("out/a.json")).unwrap(), before);

    std::fs::create_dir_all(dir.join("other")).unwrap();
    let twin = dir
        .join("other")
        .join(std::path::Path::new(&capture).file_name().unwrap());
    std::fs::copy(dir.join(&capture), &twin).unwrap();
    let mut args = short(&capture, &idx, "1");
    args.extend([twin.to_str().unwrap(), "--wisdom-dir", "w"]);
    let o = kw(&dir, &args);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(
        stderr(&o).contains("have the same file name"),
        "{}",
        both(&o)
    );

    let mut args = short(&capture, &idx, "1");
    args.extend(["--wisdom-dir", "w", "--log", "w/vector_add.json.lock"]);
    let o = kw(&dir, &args);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(
        stderr(&o).contains("is in the wisdom directory"),
        "{}",
        both(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `kw report` wrote its page and exited 0 when an input could not be read at all (a damaged
/// capture, a wisdom file that is no JSON): the failure was said only inside the HTML.
#[test]
fn report_says_unreadable_inputs_in_its_exit_status() {
    let dir = common::unique_dir("fuzz-report-unreadable");
    std::fs::write(dir.join("broken.kwcap"), b"not a capture at all").unwrap();
    std::fs::create_dir_all(dir.join("w")).unwrap();
    std::fs::write(
        dir.join("w").join("kw_x.json"),
        b"{\"format\": \"kernel-wisdom\", ",
    )
    .unwrap();
    let o = kw(&dir, &["report", "broken.kwcap", "w", "-o", "rep"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let err = stderr(&o);
    assert!(err.contains("broken.kwcap"), "{err}");
    assert!(err.contains("kw_x.json"), "{err}");
    assert!(err.contains("2 of the inputs could not be read"), "{err}");
    let html = std::fs::read_to_string(dir.join("rep").join("index.html"))
        .expect("the report is still written");
    assert!(html.contains("unreadable"), "the page says it too");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `kw wisdom merge` carried none of an input's fields that this kw does not read (a newer
/// kw's, a hand edit's) into the merged file, without a word (the output's own files were
/// already said).
#[test]
fn merge_names_the_fields_of_an_input_it_leaves_out() {
    let dir = common::unique_dir("fuzz-merge-unknown");
    let text = format!(
        r#"{{"format": "kernel-wisdom", "version": 1, "tuning_key": "k", "comment": "by hand", "records": [{}]}}"#,
        record(
            r#"{"block_size_x": 64}"#,
            "[1024]",
            DEVICE,
            "1.0",
            r#", "energy_j": 3.5"#
        )
    );
    std::fs::write(dir.join("in.json"), &text).unwrap();
    let o = kw(&dir, &["wisdom", "merge", "out", "in.json"]);
    assert!(o.status.success(), "{}", both(&o));
    let err = stderr(&o);
    assert!(
        err.contains("in.json: the merged file leaves out 2 field(s) this kw does not read")
            && err.contains("comment, records[0].energy_j"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("in.json")).unwrap(),
        text,
        "the input stays as it was"
    );
    // An input with no such field merges without the warning.
    let o = kw(&dir, &["wisdom", "merge", "out2", "out"]);
    assert!(o.status.success(), "{}", both(&o));
    assert!(!stderr(&o).contains("does not read"), "{}", both(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `kw report` waited for ever on a FIFO given as an input (or in a directory given), opening
/// it to read its first line before any check.
#[cfg(unix)]
#[test]
fn report_refuses_a_fifo_without_waiting() {
    let dir = common::unique_dir("fuzz-report-fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(dir.join("x.jsonl"))
        .status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("SKIPPED: mkfifo is not available");
        return;
    }
    let mut child = kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .current_dir(&dir)
        .args(["report", "x.jsonl", "-o", "rep"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("running kw");
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            panic!("kw report is still waiting on the FIFO after 120 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("x.jsonl"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `kw simulate` walked every configuration of the space to count those the cache lacks: a
/// sparse cache of a space of 10^12 (a random search's) never finished.
#[test]
fn simulate_counts_a_sparse_cache_of_a_huge_space_at_once() {
    let dir = common::unique_dir("fuzz-simulate-sparse");
    let names: Vec<String> = (0..12).map(|i| format!("p{i}")).collect();
    let values = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]";
    let tune_params: Vec<String> = names.iter().map(|n| format!("\"{n}\": {values}")).collect();
    let entry = |v: usize, time: f64| {
        let fields: Vec<String> = names.iter().map(|n| format!("\"{n}\": {v}")).collect();
        let key = vec![v.to_string(); names.len()].join(",");
        format!("\"{key}\": {{{}, \"time\": {time}}}", fields.join(", "))
    };
    let cache = format!(
        r#"{{"device_name": "D", "kernel_name": "k", "problem_size": [64], "tune_params_keys": [{}],
"tune_params": {{{}}}, "objective": "time", "cache": {{{}, {}, {}}}}}"#,
        names
            .iter()
            .map(|n| format!("\"{n}\""))
            .collect::<Vec<_>>()
            .join(", "),
        tune_params.join(", "),
        entry(1, 2.0),
        entry(2, 1.5),
        entry(3, 3.0)
    );
    std::fs::write(dir.join("sparse.json"), cache).unwrap();
    let o = kw(
        &dir,
        &[
            "simulate",
            "sparse.json",
            "--budget",
            "5",
            "--seeds",
            "1",
            "--threads",
            "1",
        ],
    );
    assert!(o.status.success(), "{}", both(&o));
    assert!(
        stderr(&o).contains("999999999997 of the 1000000000000 valid configurations"),
        "{}",
        both(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `kw wisdom explain KEY` and `show KEY` read only the first file of the key on the search
/// path, where the runtime reads them all (the earliest step wins): a per-user file hid the
/// project's exact-size record. `show` printed a file's control characters to the terminal.
#[test]
fn explain_and_show_read_every_file_on_the_path_and_print_no_control_characters() {
    let dir = common::unique_dir("fuzz-explain-path");
    let file = |size: &str, device: &str| {
        format!(
            r#"{{"format": "kernel-wisdom", "version": 1, "tuning_key": "k", "records": [{}]}}"#,
            record(r#"{"block_size_x": 32}"#, size, device, "1.0", "")
        )
    };
    for (d, size) in [("a", "[4096]"), ("b", "[10]")] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
        std::fs::write(dir.join(d).join("k.json"), file(size, DEVICE)).unwrap();
    }
    let args = |cmd: &'static str| {
        let mut a = vec!["wisdom", cmd, "k", "--dir", "a", "--dir", "b"];
        if cmd == "explain" {
            a.extend([
                "--device",
                "Dev",
                "--backend",
                "opencl",
                "--problem-size",
                "10",
            ]);
        }
        a
    };
    let o = kw(&dir, &args("explain"));
    assert!(o.status.success(), "{}", both(&o));
    let out = stdout(&o);
    assert!(out.starts_with("wisdom for `k`: b/k.json"), "{out}");
    assert!(out.contains("at step 1"), "{out}");
    assert!(
        out.contains("also on the search path: a/k.json (1 record): its best match is at step 2"),
        "{out}"
    );
    let o = kw(&dir, &args("show"));
    assert!(o.status.success(), "{}", both(&o));
    let out = stdout(&o);
    assert!(
        out.contains("a/k.json") && out.contains("b/k.json"),
        "{out}"
    );
    // A device name with an escape sequence and a line break.
    let evil = r#""device": {"name": "D\u001b[31mRED\r\nFAKE", "backend": "opencl", "architecture": "a\u0007"},"#;
    std::fs::create_dir_all(dir.join("c")).unwrap();
    std::fs::write(dir.join("c").join("k.json"), file("[64]", evil)).unwrap();
    let o = kw(&dir, &["wisdom", "show", "c/k.json"]);
    assert!(o.status.success(), "{}", both(&o));
    let out = stdout(&o);
    assert!(
        !out.contains('\u{1b}') && !out.contains('\u{7}') && !out.contains('\r'),
        "{out:?}"
    );
    assert!(out.contains("D?[31mRED??FAKE"), "{out:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `kw report` drew a wisdom record that no selection uses (a value its space does not
/// declare) in its selection maps and tables, as if the runtime picked it.
#[test]
fn report_leaves_out_records_no_selection_uses() {
    let dir = common::unique_dir("fuzz-report-unusable");
    std::fs::create_dir_all(dir.join("w")).unwrap();
    let text = format!(
        r#"{{"format": "kernel-wisdom", "version": 1, "tuning_key": "k", "records": [{}, {}]}}"#,
        record(r#"{"block_size_x": 64}"#, "[4096]", DEVICE, "1.0", ""),
        record(r#"{"block_size_x": 777}"#, "[16]", DEVICE, "0.1", "")
    );
    std::fs::write(dir.join("w/k.json"), text).unwrap();
    let o = kw(&dir, &["report", "w", "-o", "rep"]);
    assert!(o.status.success(), "{}", both(&o));
    assert!(
        stderr(&o).contains("record #2 cannot be used"),
        "{}",
        both(&o)
    );
    let html = std::fs::read_to_string(dir.join("rep").join("index.html")).unwrap();
    assert!(
        html.contains("record #2 cannot be used"),
        "the page says it"
    );
    assert!(!html.contains("block_size_x=777"), "the record is drawn");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `kw simulate --json` file kept in a directory given to `kw report` was read as a wisdom
/// file and reported unreadable (and, since unreadable inputs fail the report, failed it).
#[test]
fn report_takes_simulation_output_kept_in_a_directory() {
    let dir = common::unique_dir("fuzz-report-simdir");
    std::fs::create_dir_all(dir.join("d")).unwrap();
    std::fs::write(
        dir.join("d/scores.json"),
        r#"[{"budget":5,"max_fraction":0.92,"mean_fraction":0.82,"min_fraction":0.72,"optimum_hits":0,"seeds":2,"strategy":"hybrid6"}]"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("d/k.json"),
        format!(
            r#"{{"format": "kernel-wisdom", "version": 1, "tuning_key": "k", "records": [{}]}}"#,
            record(r#"{"block_size_x": 64}"#, "[4096]", DEVICE, "1.0", "")
        ),
    )
    .unwrap();
    // Other JSON beside them (a Kernel Tuner cache) is no input of the report: skipped.
    std::fs::write(
        dir.join("d/kt_cache.json"),
        r#"{"device_name": "D", "kernel_name": "k", "tune_params_keys": ["a"], "cache": {}}"#,
    )
    .unwrap();
    let o = kw(&dir, &["report", "d", "-o", "rep"]);
    assert!(o.status.success(), "{}", both(&o));
    assert!(
        stderr(&o).contains("kt_cache.json: not a wisdom file"),
        "{}",
        both(&o)
    );
    let html = std::fs::read_to_string(dir.join("rep").join("index.html")).unwrap();
    assert!(html.contains("hybrid6"), "the scores are drawn");
    assert!(!html.contains("not a valid wisdom file"), "read as wisdom");
    let _ = std::fs::remove_dir_all(&dir);
}
