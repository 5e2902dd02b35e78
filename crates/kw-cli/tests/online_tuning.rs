//! `KW_TUNE` on PoCL, through child processes that run the application loop of
//! [`child_app`] (this test binary run again with `KW_ONLINE_CHILD` set): record mode writes
//! exactly the sizes without an exact wisdom record; online mode writes records that the
//! next process selects at step 1, within its share of the device's time; a candidate that
//! computes a wrong result or hangs is never selected; two processes sharing a directory
//! with `KW_TUNE_RANKS=shared` use identical configuration sequences. Skipped (said on
//! stderr) without an OpenCL device.

use kernel_wisdom::{
    arg, online_reports, open_device, set_tune_settings, DeviceBuffer, DeviceSelector,
    KernelBuilder, Source, TuneSettings, WisdomKernel,
};
use kw_core::kernel_def::KernelDef;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

const CHILD: &str = "KW_ONLINE_CHILD";

mod common;
use common::opencl_index;

/// A tuning parameter: name, values, default.
type Param = (&'static str, &'static [i64], i64);

/// `scale`: `y = 2x`. `slow = 1` (the default) computes it 400 times over, so the tuned
/// configuration differs from the default. `faulty`: `mode = 1` never ends, `mode = 2`
/// writes `3x` (fast and wrong), `mode = 0` (the default) is right.
fn def(kind: &str) -> KernelDef {
    let (name, src, params): (&str, &str, &[Param]) = match kind {
        "scale" => (
            "scale",
            r#"
__kernel void scale(__global float* y, __global const float* x, const int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float v = 0.0f;
#if slow
    for (int k = 0; k < 400; k++) { v += x[(i + k) % n] * 1e-30f; }
#endif
    y[i] = 2.0f * x[i] + v * 0.0f;
}"#,
            &[("block_size_x", &[16, 32, 64], 32), ("slow", &[0, 1], 1)],
        ),
        _ => (
            "faulty",
            r#"
__kernel void faulty(__global float* y, __global const float* x, const int n) {
    int i = get_global_id(0);
    if (i >= n) return;
#if mode == 1
    while (n > 0) { y[0] += 1.0f; }
#endif
    y[i] = (mode == 2 ? 3.0f : 2.0f) * x[i];
}"#,
            &[("block_size_x", &[16, 32], 32), ("mode", &[0, 1, 2], 0)],
        ),
    };
    let mut b = KernelBuilder::new(name, Source::text(format!("{name}.cl"), src));
    let mut bx = None;
    for (p, values, default) in params {
        let e = b.tune(p, values.to_vec(), *default);
        if *p == "block_size_x" {
            bx = Some(e);
        }
    }
    let bx = bx.expect("a block size");
    b.problem_size([arg("n")])
        .block_size(bx.clone(), 1, 1)
        .grid_divisors(bx, 1, 1)
        .output::<f32>("y")
        .input::<f32>("x")
        .scalar::<i32>("n");
    b.build().unwrap()
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The application loop of the child processes (returns at once in a normal test run).
///
/// It launches the kernel `KW_TEST_KERNEL` at the sizes `KW_TEST_SIZES` in turn and prints,
/// on lines starting with `KWT`, the configuration in use at the first launch of each size
/// and at every launch where it changes (`KWT change SIZE LAUNCH CONFIG`), then the online
/// reports. `KW_ONLINE_CHILD` is the role: `fixed` runs `KW_TEST_LAUNCHES` launches per size; `tune` runs
/// until every size changed configuration or was reported tuned, then `KW_TEST_AFTER` more
/// launches (at most `KW_TEST_SECONDS`); `choice` prints the selection of each size.
#[test]
fn child_app() {
    let Some(role) = var(CHILD) else {
        return;
    };
    let mut settings = TuneSettings::from_env().unwrap();
    if let Some(p) = var("KW_TEST_PERIOD") {
        settings.period = p.parse().unwrap();
    }
    set_tune_settings(settings);
    let index: usize = var("KW_TEST_DEVICE").unwrap().parse().unwrap();
    let device = open_device(&DeviceSelector::Index(index)).unwrap();
    let kernel = WisdomKernel::new(def(&var("KW_TEST_KERNEL").unwrap()), device.clone()).unwrap();
    let sizes: Vec<usize> = var("KW_TEST_SIZES")
        .unwrap()
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    if role == "choice" {
        for &n in &sizes {
            let c = kernel.choice(&[n as i64]);
            let file = c.file.map_or(String::new(), |f| f.display().to_string());
            println!("KWT choice {n} {} {} {file}", c.step as u8, c.config);
        }
        return;
    }
    // `tune` runs until its condition or `KW_TEST_SECONDS`, not a count of launches: a
    // release build's million launches on PoCL took 14 s, less than two hanging candidates'
    // time limits, and the job was cancelled before its report.
    let launches: u64 = var("KW_TEST_LAUNCHES")
        .map_or(if role == "tune" { u64::MAX } else { 1_000_000 }, |v| {
            v.parse().unwrap()
        });
    let after: u64 = var("KW_TEST_AFTER").map_or(0, |v| v.parse().unwrap());
    let seconds: f64 = var("KW_TEST_SECONDS").map_or(600.0, |v| v.parse().unwrap());
    struct Work {
        n: usize,
        x: DeviceBuffer<f32>,
        y: DeviceBuffer<f32>,
        config: Option<String>,
        changed: bool,
    }
    let mut work: Vec<Work> = sizes
        .iter()
        .map(|&n| {
            let x: Vec<f32> = (0..n).map(|i| (i % 97) as f32).collect();
            Work {
                n,
                x: DeviceBuffer::from_slice(device.as_ref(), &x).unwrap(),
                y: DeviceBuffer::new(device.as_ref(), n).unwrap(),
                config: None,
                changed: false,
            }
        })
        .collect();
    let shared = var("KW_TUNE_RANKS").as_deref() == Some("shared");
    let began = Instant::now();
    let mut done_at: Option<u64> = None;
    for launch in 1..=launches {
        for w in &mut work {
            kernel
                .launch(&[w.y.arg(), w.x.arg(), (w.n as i32).into()])
                .unwrap();
            let now = kernel.config_for(&[w.n as i64, 1, 1]).unwrap().to_string();
            match &w.config {
                None => println!("KWT start {} {now}", w.n),
                Some(c) if *c != now => {
                    println!(
                        "KWT change {} {launch} {now} {:.3}",
                        w.n,
                        began.elapsed().as_secs_f64()
                    );
                    w.changed = true;
                }
                _ => {}
            }
            w.config = Some(now);
        }
        if launch % 32 == 0 {
            device.synchronize().unwrap();
        }
        if role == "tune" && done_at.is_none() {
            // Own ranks: until the result is reported (it may equal the configuration in
            // use). Shared ranks: until the switch at the published launch (the process that
            // did not tune has no report).
            let changed = work.iter().all(|w| w.changed);
            let reported = online_reports().len() >= work.len();
            if (shared && changed) || (!shared && reported) {
                done_at = Some(launch);
            }
        }
        if done_at.is_some_and(|d| launch >= d + after.max(1))
            || began.elapsed().as_secs_f64() > seconds
        {
            break;
        }
    }
    device.synchronize().unwrap();
    for w in &work {
        let y = w.y.to_vec().unwrap();
        let wrong = (0..w.n).filter(|&i| y[i] != 2.0 * (i % 97) as f32).count();
        println!(
            "KWT final {} {} wrong={wrong}",
            w.n,
            w.config.as_deref().unwrap_or("-")
        );
    }
    for r in online_reports() {
        let (busy, wall) = r.busy.unwrap_or_default();
        println!(
            "KWT report {} {} busy={} wall={} evaluations={} adopt_at={} job={}",
            r.problem_size[0],
            r.tuned,
            busy.as_secs_f64(),
            wall.as_secs_f64(),
            r.evaluations,
            r.adopt_at.map_or(-1, |a| a as i64),
            r.job_dir.display()
        );
    }
}

/// One test at a time: a hung kernel spins on every PoCL thread.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn temp(name: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("kw-online-{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The child process, with a clean `KW_*` environment plus `vars`.
fn child(dir: &Path, role: &str, vars: &[(&str, String)]) -> Command {
    let mut cmd = kw_core::child_env::command(std::env::current_exe().unwrap());
    cmd.args(["--exact", "child_app", "--nocapture", "--test-threads=1"])
        .current_dir(dir);
    for (k, _) in std::env::vars() {
        if k.starts_with("KW_") {
            cmd.env_remove(k);
        }
    }
    cmd.env(CHILD, role)
        .env("KW_BIN", env!("CARGO_BIN_EXE_kw"))
        .env("KW_WISDOM_PATH", dir.join("no-wisdom"));
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd
}

/// The `KWT` lines of a child's output (after checking that it succeeded).
fn lines(out: &Output) -> Vec<Vec<String>> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
    stdout
        .lines()
        // The test harness may print `test child_app ... ` on the same line.
        .filter_map(|l| l.find("KWT ").map(|i| &l[i + 4..]))
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

fn field<'a>(words: &'a [String], name: &str) -> &'a str {
    words
        .iter()
        .find_map(|w| w.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no {name} in {words:?}"))
}

#[test]
fn record_mode_captures_exactly_the_sizes_without_an_exact_record() {
    let _serial = serial();
    let Some(index) = opencl_index() else {
        return;
    };
    let dir = temp("record");
    // An exact record for size 4096 on this device, made by tuning a capture offline.
    let device = open_device(&DeviceSelector::Index(index)).unwrap();
    let kernel = WisdomKernel::new(def("scale"), device.clone()).unwrap();
    let space = kernel.space().clone();
    let mut config = kernel.default_config().clone();
    config.set("slow", 0);
    let record = kw_core::wisdom::WisdomRecord {
        config,
        problem_size: vec![4096],
        device: kw_core::wisdom::WisdomDevice::of(device.info()),
        objective: kw_core::wisdom::Objective {
            median_ms: 0.01,
            samples: 3,
            ..Default::default()
        },
        space: kw_core::wisdom::SpaceFingerprint::of(&space),
        provenance: Default::default(),
        alternates: Vec::new(),
    };
    let wisdom = dir.join("wisdom");
    kw_core::wisdom::add_record(
        &wisdom,
        "scale",
        record,
        kw_core::wisdom::ReplacePolicy::Always,
    )
    .unwrap();
    let out = child(
        &dir,
        "fixed",
        &[
            ("KW_TUNE", "record".into()),
            ("KW_CAPTURE_DIR", dir.join("captures").display().to_string()),
            ("KW_WISDOM_PATH", wisdom.display().to_string()),
            ("KW_TEST_DEVICE", index.to_string()),
            ("KW_TEST_KERNEL", "scale".into()),
            ("KW_TEST_SIZES", "4096,1000,3000".into()),
            ("KW_TEST_LAUNCHES", "5".into()),
        ],
    )
    .output()
    .unwrap();
    let words = lines(&out);
    assert!(
        words.iter().all(|w| w[0] != "final" || w[3] == "wrong=0"),
        "{words:?}"
    );
    let mut sizes: Vec<Vec<i64>> = std::fs::read_dir(dir.join("captures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "kwcap"))
        .map(|p| {
            let meta: kw_core::capture_meta::CaptureMetadata = kw_capture::Capture::open(&p)
                .unwrap()
                .metadata_as()
                .unwrap();
            meta.problem_size
        })
        .collect();
    sizes.sort();
    assert_eq!(
        sizes,
        vec![vec![1000], vec![3000]],
        "one capture per missing size"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("KW_TUNE=record: 2 kernel size(s)")
            && stderr.contains("`scale` 1000")
            && stderr.contains("`scale` 3000"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Online tuning of `kind` at `size` in a child; its `KWT` lines.
fn tune_online(dir: &Path, kind: &str, size: usize, extra: &[(&str, String)]) -> Vec<Vec<String>> {
    let index = opencl_index().expect("checked by the caller");
    let mut vars = vec![
        ("KW_TUNE", "online".to_string()),
        ("KW_TUNE_DIR", dir.join("online").display().to_string()),
        ("KW_TEST_DEVICE", index.to_string()),
        ("KW_TEST_KERNEL", kind.into()),
        ("KW_TEST_SIZES", size.to_string()),
        ("KW_TEST_AFTER", "20".into()),
        ("KW_TEST_SECONDS", "400".into()),
    ];
    vars.extend(extra.iter().map(|(k, v)| (*k, v.clone())));
    lines(&child(dir, "tune", &vars).output().unwrap())
}

#[test]
fn online_results_are_selected_at_step_1_next_time_within_the_share() {
    let _serial = serial();
    let Some(index) = opencl_index() else {
        return;
    };
    let dir = temp("online");
    let share = 0.25;
    // The application's own wisdom (`./wisdom`, not on the child's search path): a record
    // of another size, slow; the size tuned online selects it (step 2), and its tuning is
    // handed it as a prior.
    let device = open_device(&DeviceSelector::Index(index)).unwrap();
    let kernel = WisdomKernel::new(def("scale"), device).unwrap();
    let mut config = kernel.default_config().clone();
    config.set("block_size_x", 16);
    let record = kw_core::wisdom::WisdomRecord {
        config,
        problem_size: vec![8192],
        device: kw_core::wisdom::WisdomDevice::of(kernel.device().info()),
        objective: kw_core::wisdom::Objective {
            median_ms: 1.0,
            samples: 3,
            ..Default::default()
        },
        space: kw_core::wisdom::SpaceFingerprint::of(kernel.space()),
        provenance: Default::default(),
        alternates: Vec::new(),
    };
    kw_core::wisdom::add_record(
        &dir.join("wisdom"),
        "scale",
        record,
        kw_core::wisdom::ReplacePolicy::Always,
    )
    .unwrap();
    let words = tune_online(
        &dir,
        "scale",
        2048,
        &[
            ("KW_TUNE_BUDGET", "6,60s".into()),
            ("KW_TUNE_SHARE", share.to_string()),
        ],
    );
    let report = words.iter().find(|w| w[0] == "report").expect("a report");
    assert!(
        report[2].contains("slow=0"),
        "the fast configuration won: {report:?}"
    );
    let start = words.iter().find(|w| w[0] == "start").expect("a start");
    assert!(start[2].contains("block_size_x=16"), "{start:?}");
    let change = words.iter().find(|w| w[0] == "change").expect("a switch");
    assert_eq!(change[3], report[2], "{words:?}");
    let job = std::path::PathBuf::from(field(report, "job"));
    let tune_out = std::fs::read_to_string(job.join("tune.out")).unwrap();
    assert!(
        tune_out.contains("prior: 1 of 1 earlier results (1 source(s))"),
        "the application's wisdom is the tuning's prior: {tune_out}"
    );
    let final_line = words.iter().find(|w| w[0] == "final").unwrap();
    assert_eq!(
        (final_line[2].as_str(), final_line[3].as_str()),
        (report[2].as_str(), "wrong=0")
    );
    // The share: evaluation time within `share` of the tuning's window (kw tune's account),
    // and of the time the application ran until it switched (measured by the application).
    let busy: f64 = field(report, "busy").parse().unwrap();
    let wall: f64 = field(report, "wall").parse().unwrap();
    let switched_after: f64 = change[4].parse().unwrap();
    assert!(busy > 0.0 && busy <= share * wall + 1e-6, "{report:?}");
    assert!(
        busy <= share * switched_after,
        "{busy} s busy, switched after {switched_after} s"
    );
    // The record: online provenance, in the online directory.
    let file = kw_core::wisdom::WisdomFile::load(&dir.join("online").join("scale.json")).unwrap();
    assert_eq!(file.records.len(), 1);
    let r = &file.records[0];
    assert!(
        r.provenance.is_online() && r.provenance.adopt_at.is_none(),
        "{r:?}"
    );
    assert_eq!(
        (r.problem_size.clone(), r.config.to_string()),
        (vec![2048], report[2].clone())
    );
    // The next process (no KW_TUNE) selects it at step 1 from the online directory.
    let next = child(
        &dir,
        "choice",
        &[
            ("KW_TUNE_DIR", dir.join("online").display().to_string()),
            ("KW_TEST_DEVICE", index.to_string()),
            ("KW_TEST_KERNEL", "scale".into()),
            ("KW_TEST_SIZES", "2048".into()),
        ],
    )
    .output()
    .unwrap();
    let choice = lines(&next);
    assert_eq!(
        choice[0][..4],
        ["choice", "2048", "1", report[2].as_str()],
        "{choice:?}"
    );
    assert!(choice[0][4].ends_with("scale.json") && choice[0][4].contains("online"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn wrong_or_hanging_candidates_are_never_selected() {
    let _serial = serial();
    if opencl_index().is_none() {
        return;
    }
    let dir = temp("faulty");
    let words = tune_online(
        &dir,
        "faulty",
        1024,
        &[
            ("KW_TUNE_BUDGET", "6,120s".into()),
            ("KW_TUNE_SHARE", "1".into()),
        ],
    );
    let report = words
        .iter()
        .find(|w| w[0] == "report")
        .unwrap_or_else(|| panic!("a report: {words:?}"));
    assert!(report[2].contains("mode=0"), "{report:?}");
    let final_line = words.iter().find(|w| w[0] == "final").unwrap();
    assert!(
        final_line[2].contains("mode=0") && final_line[3] == "wrong=0",
        "{words:?}"
    );
    // Both faulty modes were tried, and failed for their reasons.
    let log = std::fs::read_to_string(Path::new(field(report, "job")).join("tune.jsonl")).unwrap();
    let mut failures: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for line in log.lines().skip(1) {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        let mode = r["config"]["mode"].as_i64().unwrap();
        if let Some(f) = r["failure"].as_str() {
            failures.entry(mode).or_default().push(f.to_string());
        }
    }
    assert!(!failures.contains_key(&0), "{failures:?}");
    assert!(
        failures[&1].iter().all(|f| f.starts_with("timed out")),
        "{failures:?}"
    );
    assert!(
        failures[&2].iter().all(|f| f.starts_with("wrong result")),
        "{failures:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shared_ranks_use_identical_configuration_sequences() {
    let _serial = serial();
    let Some(index) = opencl_index() else {
        return;
    };
    let dir = temp("shared");
    let vars = || {
        vec![
            ("KW_TUNE", "online".to_string()),
            ("KW_TUNE_RANKS", "shared".into()),
            ("KW_TUNE_DIR", dir.join("online").display().to_string()),
            ("KW_TUNE_BUDGET", "6,60s".into()),
            ("KW_TUNE_SHARE", "0.5".into()),
            ("KW_TEST_PERIOD", "25".into()),
            ("KW_TEST_DEVICE", index.to_string()),
            ("KW_TEST_KERNEL", "scale".into()),
            ("KW_TEST_SIZES", "3000".into()),
            ("KW_TEST_AFTER", "60".into()),
            ("KW_TEST_SECONDS", "400".into()),
        ]
    };
    let ranks: Vec<_> = (0..2)
        .map(|_| {
            child(&dir, "tune", &vars())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<Vec<Vec<String>>> = ranks
        .into_iter()
        .map(|c| lines(&c.wait_with_output().unwrap()))
        .collect();
    // Each rank: its configuration at the first launch and at every change (launch index).
    let sequence = |words: &[Vec<String>]| -> Vec<(String, String)> {
        words
            .iter()
            .filter_map(|w| match w[0].as_str() {
                "start" => Some(("1".to_string(), w[2].clone())),
                "change" => Some((w[2].clone(), w[3].clone())),
                _ => None,
            })
            .collect()
    };
    let (a, b) = (sequence(&outs[0]), sequence(&outs[1]));
    eprintln!("rank 0: {a:?}\nrank 1: {b:?}");
    assert_eq!(a, b, "identical sequences");
    assert_eq!(a.len(), 2, "one switch: {a:?}");
    assert!(a[1].1.contains("slow=0"), "{a:?}");
    // One process tuned (ran `kw tune`); the switch is the launch its record names.
    let tuned = std::fs::read_dir(dir.join("online").join("jobs"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().join("tune.out").exists())
        .count();
    assert_eq!(tuned, 1);
    for report in outs.iter().flatten().filter(|w| w[0] == "report") {
        assert_eq!(field(report, "adopt_at"), a[1].0);
    }
    let file = kw_core::wisdom::WisdomFile::load(&dir.join("online").join("scale.json")).unwrap();
    let adopt_at = file.records[0].provenance.adopt_at.unwrap();
    assert_eq!(adopt_at.to_string(), a[1].0);
    assert_eq!(adopt_at % 25, 0, "a checkpoint");
    let _ = std::fs::remove_dir_all(&dir);
}
