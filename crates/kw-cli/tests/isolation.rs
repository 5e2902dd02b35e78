//! Isolated evaluation on PoCL, through the `kw` binary: a configuration that hangs and one
//! that crashes its worker are failed results with their reasons, the run goes on in a fresh
//! worker and writes wisdom for the best valid configuration; `--time` and Ctrl-C stop a hung
//! evaluation without recording it; `--resume` does not evaluate a logged hang again. On a
//! CUDA device (skipped without one; `tools/gpu.sh isolation` runs it on the H100), the
//! same with `__trap()` and an illegal address, and the run's own CUDA context survives.

use kernel_wisdom::{list_devices, open_device, DeviceSelector, KernelBuilder, Source};
use kw_capture::record::{capture_launch, HostArg};
use kw_core::{device::BackendKind, kernel_def::KernelDef};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

mod common;
use common::{opencl_index, quick};

/// `scale`: `y = 2x`; `mode = 1` loops forever, `mode = 2` traps (the worker dies of
/// SIGILL/SIGABRT), `mode = 3` requires work-groups of 64 (its launches with 32 fail, the
/// device unharmed). `bx` = 16 exists only with mode 0, so the space has 4 configurations.
fn faulty_def(modes: &[i64]) -> KernelDef {
    let src = r#"
#if mode == 3
__attribute__((reqd_work_group_size(64, 1, 1)))
#endif
__kernel void scale(__global float* y, __global const float* x, const int n) {
    int i = get_global_id(0);
#if mode == 1
    while (n > 0) { y[0] += 1.0f; }
#elif mode == 2
    __builtin_trap();
#endif
    if (i < n) { y[i] = 2.0f * x[i]; }
}"#;
    let mut b = KernelBuilder::new("scale", Source::text("scale.cl", src));
    let bx = b.tune("block_size_x", [16, 32], 32);
    b.tune("mode", modes.to_vec(), 0);
    b.restriction_text("mode == 0 or block_size_x == 32");
    b.problem_size([kernel_wisdom::arg("n")])
        .block_size(bx.clone(), 1, 1)
        .grid_divisors(bx, 1, 1)
        .output::<f32>("y")
        .input::<f32>("x")
        .scalar::<i32>("n");
    let mut def = b.build().unwrap();
    def.tuning_key = format!("faulty_{}", modes.len());
    def
}

fn setup(name: &str, modes: &[i64]) -> Option<(PathBuf, PathBuf, usize)> {
    let index = opencl_index()?;
    let dir = std::env::temp_dir().join(format!("kw-isolation-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let device = open_device(&DeviceSelector::Index(index)).unwrap();
    let n = 256usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let args = [
        HostArg::buffer(&vec![0f32; n]),
        HostArg::buffer(&x),
        HostArg::scalar(n as i32),
    ];
    let capture =
        capture_launch(&dir, name, &faulty_def(modes), None, device.as_ref(), &args).unwrap();
    Some((dir, capture, index))
}

/// The `kw` binary: `KW_BIN` when set (packaged runs on a GPU machine), else cargo's.
fn kw_bin() -> PathBuf {
    std::env::var_os("KW_BIN")
        .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_kw")), PathBuf::from)
}

fn kw(dir: &Path, args: &[&str]) -> Output {
    kw_core::child_env::command(kw_bin())
        .current_dir(dir)
        .env("KW_USER_WISDOM_DIR", dir.join("wisdom"))
        .env("KW_STATE_DIR", dir.join("state"))
        .args(args)
        .output()
        .expect("running kw")
}

fn log_records(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn mode_of(r: &serde_json::Value) -> i64 {
    r["config"]["mode"].as_i64().unwrap()
}

/// One test at a time: a hung kernel spins on every PoCL thread and would starve the
/// evaluations of another test into their time limits.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[test]
fn a_failed_launch_that_leaves_the_device_working_keeps_the_worker() {
    let _serial = serial();
    let Some((dir, capture, index)) = setup("launch", &[0, 3]) else {
        return;
    };
    let idx = index.to_string();
    let mut args = vec!["tune", capture.to_str().unwrap(), "--budget", "10"];
    args.extend(quick(&idx));
    let out = kw(&dir, &args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let records = log_records(&dir.join("run.jsonl"));
    assert_eq!(records.len(), 3, "{records:?}");
    for r in &records {
        match mode_of(r) {
            0 => assert!(r["objective"].as_f64().is_some(), "{r}"),
            _ => assert!(
                r["failure"].as_str().unwrap().starts_with("launch failed"),
                "{r}"
            ),
        }
    }
    // The worker checked its device after the failure and went on: no fresh worker (and
    // none of the compiles it held lost).
    assert!(!stderr.contains("were replaced"), "{stderr}");
}

#[test]
fn a_hang_and_a_crash_are_failed_results_and_tuning_finishes() {
    let _serial = serial();
    let Some((dir, capture, index)) = setup("faults", &[0, 1, 2]) else {
        return;
    };
    let capture = capture.to_str().unwrap();
    let idx = index.to_string();
    let common = quick(&idx);
    let mut args = vec!["tune", capture, "--eval-timeout", "6s", "--budget", "10"];
    args.extend(common.iter().copied());
    let out = kw(&dir, &args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let records = log_records(&dir.join("run.jsonl"));
    assert_eq!(records.len(), 4, "every configuration evaluated once");
    for r in &records {
        let failure = r["failure"].as_str();
        match mode_of(r) {
            0 => assert!(r["objective"].as_f64().is_some(), "{r}"),
            1 => assert!(failure.unwrap().starts_with("timed out"), "{r}"),
            _ => assert!(failure.unwrap().starts_with("crashed"), "{r}"),
        }
    }
    let wisdom = std::fs::read_to_string(dir.join("wisdom/faulty_3.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&wisdom).unwrap();
    assert_eq!(json["records"][0]["config"]["mode"], 0, "{wisdom}");
    assert!(stderr.contains("worker(s) were replaced"), "{stderr}");

    // Resuming evaluates nothing again: the hang and the crash are in the log.
    let mut args = vec![
        "tune",
        capture,
        "--eval-timeout",
        "6s",
        "--resume",
        "--budget",
        "10",
    ];
    args.extend(common.iter().copied());
    let out = kw(&dir, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(log_records(&dir.join("run.jsonl")).len(), 4);
}

/// `--time` ends a run during a hung evaluation (no limit of its own would end it soon):
/// the hung configuration is not recorded; a resume with a short limit records it as timed
/// out, and a further resume does not evaluate it again.
#[test]
fn time_stops_a_hung_evaluation_and_resume_records_the_hang_once() {
    let _serial = serial();
    let Some((dir, capture, index)) = setup("time", &[0, 1]) else {
        return;
    };
    let capture = capture.to_str().unwrap();
    let idx = index.to_string();
    let mut common = quick(&idx).to_vec();
    common.extend(["--strategy", "random"]);
    // 3 configurations; the hang is found within them. The evaluation limit (10 min) is far
    // beyond the run's time (4 s): only --time can end the hang.
    let mut args = vec!["tune", capture, "--eval-timeout", "10m", "--time", "4s"];
    args.extend(common.iter().copied());
    let out = kw(&dir, &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let records = log_records(&dir.join("run.jsonl"));
    assert!(
        records.iter().all(|r| mode_of(r) == 0),
        "the interrupted hang is not recorded: {records:?}\n{stderr}"
    );
    // Resume with a short limit: the hang is recorded as timed out...
    let mut args = vec![
        "tune",
        capture,
        "--eval-timeout",
        "5s",
        "--resume",
        "--budget",
        "3",
    ];
    args.extend(common.iter().copied());
    let out = kw(&dir, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let records = log_records(&dir.join("run.jsonl"));
    let hangs: Vec<_> = records.iter().filter(|r| mode_of(r) == 1).collect();
    assert_eq!(hangs.len(), 1, "{records:?}");
    assert!(hangs[0]["failure"]
        .as_str()
        .unwrap()
        .starts_with("timed out"));
    // ... once: a further resume proposes it no more.
    let out = kw(&dir, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(log_records(&dir.join("run.jsonl")).len(), records.len());
}

/// Ctrl-C (SIGINT to `kw tune` only, as a terminal would send to its foreground process)
/// stops a hung evaluation: exit status 130, the hang not recorded, the resume command shown.
#[cfg(unix)]
#[test]
fn ctrl_c_stops_a_hung_evaluation() {
    let _serial = serial();
    let Some((dir, capture, index)) = setup("ctrlc", &[0, 1]) else {
        return;
    };
    let idx = index.to_string();
    let child = kw_core::child_env::command(kw_bin())
        .current_dir(&dir)
        .env("KW_USER_WISDOM_DIR", dir.join("wisdom"))
        .env("KW_STATE_DIR", dir.join("state"))
        .args([
            "tune",
            capture.to_str().unwrap(),
            "--device",
            &idx,
            "--samples",
            "2",
            "--warmup",
            "0",
            "--eval-timeout",
            "10m",
            "--log",
            "run.jsonl",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the default configuration is logged and the next (a hang, or the other
    // valid configuration) is under way, then interrupt.
    let log = dir.join("run.jsonl");
    for _ in 0..600 {
        if std::fs::read_to_string(&log).is_ok_and(|t| t.lines().count() >= 2) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let pid = child.id().to_string();
    let status = kw_core::child_env::command("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let records = log_records(&log);
    if records.len() == 3 {
        // The run had ended before the signal (the hang was not reached): nothing to test.
        eprintln!("SKIPPED: the run ended before Ctrl-C");
        return;
    }
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("Resume with"), "{stderr}");
    assert!(
        records.iter().all(|r| r["failure"].is_null()),
        "{records:?}"
    );
}

const FAULTY_CU: &str = r#"
extern "C" __global__ void scale(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#if fault == 1
    while (n > 0) { y[0] += 1.0f; }
#elif fault == 2
    __trap();
#elif fault == 3
    ((float*)0x100)[(long long)i * 65536] = 1.0f;
#endif
    if (i < n) { y[i] = 2.0f * x[i]; }
}"#;

/// On CUDA: a hang, `__trap()` and an illegal address (each kills its worker's context) are
/// failed results; the wisdom is the valid best; `--report-timing` then measures in the
/// `kw tune` process itself, on its own CUDA context, which the faults did not touch.
#[test]
fn cuda_trap_and_illegal_address_are_failed_results() {
    let _serial = serial();
    let Some(d) = list_devices()
        .ok()
        .and_then(|l| l.into_iter().find(|d| d.info.backend == BackendKind::Cuda))
    else {
        eprintln!("SKIPPED: no CUDA device");
        return;
    };
    let dir = std::env::temp_dir().join(format!("kw-isolation-cuda-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let device = open_device(&DeviceSelector::Index(d.index)).unwrap();
    let mut b = KernelBuilder::new("scale", Source::text("scale.cu", FAULTY_CU));
    let bx = b.tune("block_size_x", [64, 128], 128);
    // Not `mode`: a `-Dmode=...` define rewrites NVRTC's built-in headers (their
    // functions have parameters named `mode`) and nothing compiles.
    b.tune("fault", [0i64, 1, 2, 3], 0);
    b.restriction_text("fault == 0 or block_size_x == 128");
    b.problem_size([kernel_wisdom::arg("n")])
        .block_size(bx.clone(), 1, 1)
        .grid_divisors(bx, 1, 1)
        .output::<f32>("y")
        .input::<f32>("x")
        .scalar::<i32>("n");
    let mut def = b.build().unwrap();
    def.tuning_key = "faulty_cuda".into();
    let n = 1 << 16;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let args = [
        HostArg::buffer(&vec![0f32; n]),
        HostArg::buffer(&x),
        HostArg::scalar(n as i32),
    ];
    let capture = capture_launch(&dir, "faulty_cuda", &def, None, device.as_ref(), &args).unwrap();
    let idx = d.index.to_string();
    let out = kw(
        &dir,
        &[
            "tune",
            capture.to_str().unwrap(),
            "--device",
            &idx,
            "--eval-timeout",
            "5s",
            "--budget",
            "10",
            "--log",
            "run.jsonl",
            "--report-timing",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}\n{stderr}");
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let records = log_records(&dir.join("run.jsonl"));
    assert_eq!(records.len(), 5, "{records:?}");
    for r in &records {
        println!("{r}");
        let failure = r["failure"].as_str();
        match r["config"]["fault"].as_i64().unwrap() {
            0 => assert!(r["objective"].as_f64().is_some(), "{r}"),
            1 => assert!(failure.unwrap().starts_with("timed out"), "{r}"),
            // A trap or an illegal address: the launch fails (the context is lost) or the
            // worker dies; either way a failed result, and a fresh worker continues.
            _ => assert!(failure.is_some(), "{r}"),
        }
    }
    let wisdom = std::fs::read_to_string(dir.join("wisdom/faulty_cuda.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&wisdom).unwrap();
    assert_eq!(json["records"][0]["config"]["fault"], 0, "{wisdom}");
    // Measured in the kw tune process after the faults: its context is intact.
    assert!(stdout.contains("spread"), "{stdout}");
}
