//! `kw tune --devices` on PoCL, which shows two CPU devices of one model with
//! `POCL_DEVICES="pthread pthread"` (set on every `kw` run here): two captures are shared out
//! and both tuned; one capture's exhaustive search on two devices evaluates every
//! configuration exactly once and finds what one device finds; a device that fails mid-run
//! (`KW_EVAL_WORKER_FAULT`) is dropped and the run goes on (a shared search on the other
//! device; a capture of its own resumed from its log on another device); a run killed mid-way resumes
//! without evaluating anything twice; devices of two models (PoCL's `pthread` and `basic`)
//! tune separately, a log and a wisdom record each; `--device` and `--devices` conflict. Skipped (said so)
//! without an OpenCL device.

use kernel_wisdom::{open_device, DeviceSelector, KernelBuilder, Source};
use kw_capture::record::{capture_launch, HostArg};
use kw_core::kernel_def::KernelDef;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod common;
use common::{kw_in, opencl_index, unique_dir};

/// `y = 2x` with a tunable block size and an idle parameter `pad` (more configurations);
/// `wrong = 1` writes `3x` (fails verification): 6 block sizes x `pads`, plus 2 wrong ones.
fn scale_def(pads: &[i64]) -> KernelDef {
    let src = r#"
__kernel void scale(__global float* y, __global const float* x, const int n) {
    int i = get_global_id(0);
    if (i < n) { y[i] = (wrong ? 3.0f : 2.0f) * x[i] + (float)(pad - pad); }
}"#;
    let mut b = KernelBuilder::new("scale", Source::text("scale.cl", src));
    let bx = b.tune("block_size_x", [8, 16, 32, 64, 128, 256], 64);
    b.tune("pad", pads.to_vec(), pads[0]);
    b.tune("wrong", [0, 1], 0);
    b.restriction_text(&format!(
        "wrong == 0 or (block_size_x <= 16 and pad == {})",
        pads[0]
    ));
    b.problem_size([kernel_wisdom::arg("n")])
        .block_size(bx.clone(), 1, 1)
        .grid_divisors(bx, 1, 1)
        .output::<f32>("y")
        .input::<f32>("x")
        .scalar::<i32>("n");
    let mut def = b.build().expect("the definition builds");
    def.tuning_key = "devices_scale".into();
    def
}

/// A capture of `scale_def(pads)` with `n` elements in `dir`.
fn capture(dir: &Path, name: &str, pads: &[i64], n: usize) -> PathBuf {
    let index = opencl_index().expect("an OpenCL device");
    let device = open_device(&DeviceSelector::Index(index)).expect("opening the device");
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let args = [
        HostArg::buffer(&vec![0f32; n]),
        HostArg::buffer(&x),
        HostArg::scalar(n as i32),
    ];
    capture_launch(dir, name, &scale_def(pads), None, device.as_ref(), &args).expect("capturing")
}

/// `kw` in `dir` with two PoCL devices, short measurements and no confirmation.
fn kw(dir: &Path) -> Command {
    let mut cmd = kw_in(dir);
    cmd.env("POCL_DEVICES", "pthread pthread")
        .env("KW_PROGRESS_INTERVAL", "0")
        .env_remove("KW_DEVICE")
        .env_remove("KW_DEVICES")
        .args([
            "tune",
            "--strategy",
            "exhaustive",
            "--confirm-rounds",
            "0",
            "--samples",
            "3",
            "--sample-time-ms",
            "20",
            "--no-prior",
        ]);
    cmd
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The records of a results log (header and torn lines left out).
fn records(log: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v.get("key").is_some())
        .collect()
}

/// Each configuration's key with whether it succeeded, asserting none is logged twice.
fn outcomes(log: &Path) -> BTreeMap<String, bool> {
    let mut seen = BTreeMap::new();
    for r in records(log) {
        let key = r["key"].as_str().expect("a key").to_string();
        let ok = r["objective"].is_number();
        assert!(
            seen.insert(key.clone(), ok).is_none(),
            "{key} evaluated twice in {}",
            log.display()
        );
    }
    seen
}

/// The devices named by a log's records.
fn devices_of(log: &Path) -> BTreeSet<String> {
    records(log)
        .iter()
        .filter_map(|r| r["device"].as_str().map(str::to_string))
        .collect()
}

/// The number of valid configurations of `scale_def(pads)`.
fn configurations(pads: &[i64]) -> usize {
    6 * pads.len() + 2
}

fn two_devices() -> bool {
    let out = kw_in(&std::env::temp_dir())
        .env("POCL_DEVICES", "pthread pthread")
        .args(["devices", "--json"])
        .output()
        .expect("running kw devices");
    let text = String::from_utf8_lossy(&out.stdout);
    let n = text.matches("\"opencl\"").count();
    if n < 2 {
        eprintln!("SKIPPED: POCL_DEVICES=\"pthread pthread\" shows {n} OpenCL device(s), not 2");
    }
    n >= 2
}

#[test]
fn two_captures_on_two_devices_are_both_tuned() {
    if opencl_index().is_none() || !two_devices() {
        return;
    }
    let dir = unique_dir("devices-two-captures");
    let a = capture(&dir, "a", &[0], 256);
    let b = capture(&dir, "b", &[0], 512);
    let out = kw(&dir)
        .args(["--devices", "all", "--log", "logs"])
        .arg(&a)
        .arg(&b)
        .output()
        .expect("kw tune");
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    // Each device took one capture.
    assert!(all.contains("devices_scale on device 0"), "{all}");
    assert!(all.contains("devices_scale on device 1"), "{all}");
    for c in [&a, &b] {
        let stem = c.file_stem().unwrap().to_string_lossy().into_owned();
        let log = dir.join("logs").join(format!("{stem}.tune.jsonl"));
        assert_eq!(outcomes(&log).len(), configurations(&[0]), "{all}");
    }
    let wisdom: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("wisdom/devices_scale.json")).expect("wisdom"),
    )
    .expect("wisdom JSON");
    let text = wisdom.to_string();
    assert!(
        text.contains("256") && text.contains("512"),
        "a record per problem size: {text}"
    );
}

#[test]
fn one_search_on_two_devices_evaluates_each_configuration_once_as_one_device_does() {
    if opencl_index().is_none() || !two_devices() {
        return;
    }
    let dir = unique_dir("devices-one-search");
    let pads = [0, 1];
    let c = capture(&dir, "s", &pads, 256);
    let two = kw(&dir)
        .args(["--devices", "all", "--log", "two.jsonl"])
        .arg(&c)
        .output()
        .expect("kw tune");
    assert!(two.status.success(), "{}", text(&two));
    let one = kw(&dir)
        .args(["--device", "0", "--log", "one.jsonl"])
        .arg(&c)
        .output()
        .expect("kw tune");
    assert!(one.status.success(), "{}", text(&one));
    let (two_log, one_log) = (dir.join("two.jsonl"), dir.join("one.jsonl"));
    let on_two = outcomes(&two_log);
    assert_eq!(on_two.len(), configurations(&pads), "{}", text(&two));
    // The same configurations, the same ones valid (the two wrong ones fail on both).
    assert_eq!(on_two, outcomes(&one_log));
    assert_eq!(on_two.values().filter(|ok| !**ok).count(), 2);
    let devices = devices_of(&two_log);
    assert_eq!(
        devices,
        BTreeSet::from(["device 0".to_string(), "device 1".to_string()]),
        "both devices evaluated: {}",
        text(&two)
    );
    assert!(
        devices_of(&one_log).is_empty(),
        "one device: no device field"
    );
    let summary = String::from_utf8_lossy(&two.stdout);
    assert!(summary.contains("devices: device 0 "), "{summary}");
}

#[test]
fn a_device_that_fails_is_dropped_and_the_run_goes_on() {
    if opencl_index().is_none() || !two_devices() {
        return;
    }
    let dir = unique_dir("devices-fault");
    let pads = [0, 1, 2];
    let c = capture(&dir, "f", &pads, 256);
    let marker = dir.join("device-1-failed");
    // Device 1 fails as its worker starts: it is dropped at its first configuration, which
    // goes to device 0 (deterministic: both devices get a configuration at once). A device
    // that fails mid-run, after evaluations, is the next test's (and kw-tune's tests').
    let out = kw(&dir)
        .env("KW_EVAL_WORKER_FAULT", format!("1:0:{}", marker.display()))
        .args(["--devices", "0,1", "--log", "f.jsonl"])
        .arg(&c)
        .output()
        .expect("kw tune");
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(marker.exists(), "the fault was injected: {all}");
    assert!(
        all.contains("device 1 (") && all.contains("failed and is dropped"),
        "{all}"
    );
    assert!(all.contains("the run goes on with 1 device(s)"), "{all}");
    let log = dir.join("f.jsonl");
    let logged = outcomes(&log); // asserts that nothing is logged twice
    assert_eq!(logged.len(), configurations(&pads), "{all}");
    assert!(
        all.contains("the configuration it was measuring goes to another device"),
        "{all}"
    );
    assert_eq!(
        devices_of(&log),
        BTreeSet::from(["device 0".to_string()]),
        "{all}"
    );
    // Nothing failed but the two wrong configurations: the one device 1 held was not blamed.
    assert_eq!(logged.values().filter(|ok| !**ok).count(), 2, "{all}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("(dropped: the device failed"),
        "{all}"
    );
    assert!(dir.join("wisdom/devices_scale.json").exists(), "{all}");
}

#[test]
fn a_capture_whose_device_fails_goes_on_from_its_log_on_another_device() {
    if opencl_index().is_none() || !two_devices() {
        return;
    }
    let dir = unique_dir("devices-fault-queue");
    let pads = [0, 1];
    let a = capture(&dir, "a", &pads, 256);
    let b = capture(&dir, "b", &pads, 512);
    let marker = dir.join("device-1-failed");
    // Device 1 takes the second capture and fails at its third evaluation.
    let out = kw(&dir)
        .env("KW_EVAL_WORKER_FAULT", format!("1:3:{}", marker.display()))
        .args(["--devices", "all", "--log", "logs"])
        .arg(&a)
        .arg(&b)
        .output()
        .expect("kw tune");
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(marker.exists(), "the fault was injected: {all}");
    assert!(
        all.contains("device 1 (") && all.contains("goes on from its log on another device"),
        "{all}"
    );
    for c in [&a, &b] {
        let stem = c.file_stem().unwrap().to_string_lossy().into_owned();
        let log = dir.join("logs").join(format!("{stem}.tune.jsonl"));
        // Complete, nothing twice: the second capture's first evaluations are resumed.
        assert_eq!(outcomes(&log).len(), configurations(&pads), "{all}");
    }
    let wisdom = std::fs::read_to_string(dir.join("wisdom/devices_scale.json")).expect("wisdom");
    assert!(wisdom.contains("256") && wisdom.contains("512"), "{wisdom}");
}

#[test]
fn a_run_killed_mid_way_resumes_without_evaluating_anything_twice() {
    if opencl_index().is_none() || !two_devices() {
        return;
    }
    let dir = unique_dir("devices-resume");
    let pads = [0, 1, 2, 3, 4];
    let c = capture(&dir, "r", &pads, 256);
    let log = dir.join("r.jsonl");
    let mut child = kw(&dir)
        .args(["--devices", "all", "--log", "r.jsonl"])
        .arg(&c)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("kw tune");
    // Killed (SIGKILL: no clean-up at all) once a few evaluations are logged.
    loop {
        if records(&log).len() >= 4 || child.try_wait().expect("waiting").is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    let before = outcomes(&log).len();
    let resumed = kw(&dir)
        .args(["--devices", "all", "--log", "r.jsonl", "--resume"])
        .arg(&c)
        .output()
        .expect("kw tune --resume");
    let all = text(&resumed);
    assert!(resumed.status.success(), "{all}");
    assert!(
        all.contains(&format!("({before} from the log)")),
        "the logged evaluations are replayed: {all}"
    );
    assert_eq!(outcomes(&log).len(), configurations(&pads), "{all}");
}

#[test]
fn devices_of_two_models_tune_separately_with_a_log_and_a_record_each() {
    if opencl_index().is_none() || !two_devices() {
        return;
    }
    let dir = unique_dir("devices-two-models");
    let c = capture(&dir, "m", &[0], 256);
    // PoCL's `basic` and `pthread` drivers: two devices of different names (two models).
    let out = kw(&dir)
        .env("POCL_DEVICES", "pthread basic")
        .args(["--devices", "all", "--log", "m.jsonl"])
        .arg(&c)
        .output()
        .expect("kw tune");
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    let logs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the test directory")
        .map(|e| e.expect("an entry").path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("m.") && name.ends_with(".jsonl")
        })
        .collect();
    assert_eq!(logs.len(), 2, "a log per model: {logs:?}\n{all}");
    for log in &logs {
        // Each model searched the whole space on its own device.
        assert_eq!(outcomes(log).len(), configurations(&[0]), "{all}");
        assert!(devices_of(log).is_empty(), "one device per model: {all}");
    }
    let wisdom = std::fs::read_to_string(dir.join("wisdom/devices_scale.json")).expect("wisdom");
    assert!(
        wisdom.contains("basic-") && wisdom.contains("pthread-"),
        "a record per model: {wisdom}"
    );
}

#[test]
fn device_and_devices_conflict() {
    let dir = unique_dir("devices-conflict");
    let out = kw(&dir)
        .args(["--device", "0", "--devices", "all", "x.kwcap"])
        .output()
        .expect("kw tune");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--device") && err.contains("--devices") && err.contains("cannot be used"),
        "{err}"
    );
    let out = kw(&dir)
        .env("KW_DEVICES", "0,x")
        .arg("x.kwcap")
        .output()
        .expect("kw tune");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("KW_DEVICES `0,x`: `x` is not a device index"),
        "{err}"
    );
}
