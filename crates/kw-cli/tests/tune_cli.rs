//! `kw tune` end to end through the binary on PoCL: a capture is tuned and a wisdom file
//! written; an interrupted-style partial run resumes from its log.

mod common;

fn kw(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .current_dir(dir)
        .env("KW_USER_WISDOM_DIR", dir.join("wisdom"))
        .env("KW_STATE_DIR", dir.join("state"))
        .args(args)
        .output()
        .expect("running kw")
}

/// A fresh directory for a test that tunes on OpenCL; `None` (after saying so) without it.
fn fresh_dir(name: &str) -> Option<std::path::PathBuf> {
    if kernel_wisdom::list_devices().is_err() {
        eprintln!("SKIPPED: no OpenCL platform");
        return None;
    }
    let dir = std::env::temp_dir().join(format!("kw-tune-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Some(dir)
}

#[test]
fn kw_tune_writes_a_wisdom_file_and_resumes() {
    let Some(dir) = fresh_dir("cli") else { return };
    let out = kw(
        &dir,
        &[
            "tune",
            "--bundled",
            "vector_add:4096",
            "--budget",
            "4",
            "--samples",
            "3",
            "--log",
            "run.jsonl",
            "--report-timing",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for needle in [
        "default configuration:",
        "speed-up over default:",
        "device busy:",
        "evaluations/s",
        "spread",
        "GB/s",
        "wisdom:",
    ] {
        assert!(stdout.contains(needle), "missing `{needle}` in:\n{stdout}");
    }
    let wisdom = std::fs::read_to_string(dir.join("wisdom/vector_add.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&wisdom).unwrap();
    let rec = &json["records"][0];
    assert_eq!(rec["provenance"]["evaluations"], 4);
    assert!(rec["provenance"]["capture_checksum"]
        .as_str()
        .unwrap()
        .starts_with("blake3:"));
    assert!(rec["objective"]["samples"].as_u64().unwrap() >= 1);

    // Resume the same log with a larger budget: only the new evaluations run.
    let capture = "captures/vector_add_4096.kwcap";
    let out = kw(
        &dir,
        &[
            "tune",
            capture,
            "--budget",
            "6",
            "--samples",
            "3",
            "--log",
            "run.jsonl",
            "--resume",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("6 evaluations (4 from the log)"),
        "{stdout}"
    );
    let log = std::fs::read_to_string(dir.join("run.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 1 + 6);
    // The first run's wisdom is this kernel's prior now (its best configuration, already in
    // the log, so not evaluated again). It was made on this device, so the neighbours of the
    // best configuration follow it.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("prior: 1 of 1 earlier results (1 source(s)) match this space")
            && stderr.contains("1 configuration(s) evaluated first")
            && stderr.contains("then up to 8 neighbours of the best configuration")
            && !stderr.contains("if one of the prior's last"),
        "{stderr}"
    );

    // A results log as an explicit prior, and --no-prior: (log, prior arguments, expected).
    for (log, prior, expect) in [
        (
            "two.jsonl",
            &["--prior", "run.jsonl"][..],
            Some("prior: 7 of 7 earlier results (2 source(s))"),
        ),
        ("three.jsonl", &["--no-prior"][..], None),
    ] {
        let mut args = vec![
            "tune",
            capture,
            "--budget",
            "2",
            "--samples",
            "3",
            "--log",
            log,
        ];
        args.extend_from_slice(prior);
        let out = kw(&dir, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        match expect {
            Some(text) => assert!(stderr.contains(text), "{stderr}"),
            None => assert!(!stderr.contains("prior:"), "{stderr}"),
        }
    }
}

/// The record keeps alternates: the fastest configuration of each launch grid other than the
/// best's, at most 1.5 times its time (from the results log), at most 8, on the record's clock.
#[test]
fn the_record_keeps_the_fastest_configuration_of_each_other_grid_as_alternates() {
    let Some(dir) = fresh_dir("alternates") else {
        return;
    };
    let out = kw(
        &dir,
        &[
            "tune",
            "--bundled",
            "vector_add:4096",
            "--budget",
            "16",
            "--samples",
            "3",
            "--strategy",
            "random",
            "--confirm-rounds",
            "0",
            "--no-prior",
            "--log",
            "run.jsonl",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let wisdom: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("wisdom/vector_add.json")).unwrap())
            .unwrap();
    let rec = &wisdom["records"][0];
    // vector_add's grid: 4096 elements in blocks of block_size_x x elems_per_thread.
    let blocks = |c: &serde_json::Value| {
        4096u64
            .div_ceil(c["block_size_x"].as_u64().unwrap() * c["elems_per_thread"].as_u64().unwrap())
    };
    let log = std::fs::read_to_string(dir.join("run.jsonl")).unwrap();
    let mut results: Vec<(serde_json::Value, f64)> = log
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter_map(|r| Some((r["config"].clone(), r["objective"].as_f64()?)))
        .collect();
    results.sort_by(|a, b| a.1.total_cmp(&b.1));
    let best = results
        .iter()
        .find(|(c, _)| c == &rec["config"])
        .unwrap()
        .clone();
    let mut grids = vec![blocks(&best.0)];
    let mut expected = Vec::new();
    for (c, t) in &results {
        if expected.len() == 8 || *t > 1.5 * best.1 {
            break;
        }
        if *t >= best.1 && !grids.contains(&blocks(c)) {
            grids.push(blocks(c));
            expected.push((
                c.clone(),
                rec["objective"]["median_ms"].as_f64().unwrap() * t / best.1,
            ));
        }
    }
    let got: Vec<(serde_json::Value, f64)> = rec["alternates"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| (x["config"].clone(), x["median_ms"].as_f64().unwrap()))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(got.len(), expected.len(), "{got:?} against {expected:?}");
    // None is faster than the record's own configuration.
    let own = rec["objective"]["median_ms"].as_f64().unwrap();
    assert!(got.iter().all(|(_, t)| *t >= own), "{got:?} against {own}");
    for ((gc, gt), (ec, et)) in got.iter().zip(&expected) {
        assert_eq!(gc, ec);
        assert!((gt - et).abs() <= 1e-9 * et, "{gt} against {et}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A library kernel's capture is tuned from the records shipped with the library (embedded
/// in `kw`) even with no wisdom file on disk; the same records given again as a file count
/// once.
#[test]
fn a_library_capture_is_seeded_by_the_shipped_wisdom() {
    let Some(index) = common::opencl_index() else {
        return;
    };
    let dir = common::unique_dir("tune-shipped-prior");
    let device = index.to_string();
    let captured = common::kw_in(&dir)
        .env("KW_CAPTURE", "kw_transpose")
        .env("KW_CAPTURE_DIR", dir.join("captures"))
        .args(["bench", "transpose", "--size", "96x64", "--runs", "1"])
        .args(["--device", &device])
        .output()
        .unwrap();
    assert!(
        captured.status.success(),
        "{}",
        String::from_utf8_lossy(&captured.stderr)
    );
    let capture = std::fs::read_dir(dir.join("captures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "kwcap"))
        .expect("a capture");
    let shipped = kernel_wisdom::library::defs::shipped_wisdom("transpose").unwrap();
    let json = serde_json::from_str::<serde_json::Value>(shipped).unwrap();
    let records = json["records"].as_array().unwrap();
    let expect = format!("earlier results ({} source(s))", records.len());
    let name = kernel_wisdom::list_devices().unwrap()[index]
        .info
        .name
        .clone();
    let shipped_here = records.iter().any(|r| r["device"]["name"] == name.as_str());
    let copy = dir.join("kw_transpose_copy.json");
    std::fs::write(&copy, shipped).unwrap();
    let capture = capture.to_str().unwrap();
    // Each run writes its own wisdom directory (a run's result is the next run's prior).
    for (run, extra) in [&[][..], &["--prior", copy.to_str().unwrap()][..]]
        .into_iter()
        .enumerate()
    {
        let out_dir = dir.join(format!("out{run}"));
        let mut args = vec!["tune", capture, "--device", &device, "--budget", "2"];
        args.extend_from_slice(&["--wisdom-dir", out_dir.to_str().unwrap()]);
        args.extend_from_slice(extra);
        let out = kw(&dir, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(stderr.contains(&expect), "{extra:?}: {stderr}");
        // The neighbours of the best follow: 8 misses in a row, ungated, where the shipped
        // records are this device's (the H100's, the H200's; not PoCL's), else 4, gated by
        // the prior's last results.
        let (local, gated) = if shipped_here { (8, false) } else { (4, true) };
        assert!(
            stderr.contains(&format!("then up to {local} neighbours")),
            "{extra:?}: {stderr}"
        );
        assert_eq!(
            stderr.contains("if one of the prior's last 8 results improved the best"),
            gated,
            "{extra:?}: {stderr}"
        );
    }
    let out = kw(
        &dir,
        &[
            "tune",
            capture,
            "--device",
            &device,
            "--budget",
            "2",
            "--no-prior",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !stderr.contains("prior:"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
