//! One `kw tune` per results log (issue #28), through the binary on PoCL: a second run on a
//! log that a running `kw tune` holds is refused at once, naming the running process, and
//! neither renames nor changes the log; once the first run ends (here by Ctrl-C) the log
//! resumes. A log with torn lines in the middle and at the end resumes with a warning and
//! loses only those lines.

use kernel_wisdom::{open_device, DeviceSelector, KernelBuilder, Source};
use kw_capture::record::{capture_launch, HostArg};
use kw_core::kernel_def::KernelDef;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

fn kw(dir: &Path, args: &[&str]) -> Output {
    kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .current_dir(dir)
        .env("KW_USER_WISDOM_DIR", dir.join("wisdom"))
        .env("KW_STATE_DIR", dir.join("state"))
        .args(args)
        .output()
        .expect("running kw")
}

mod common;
use common::{opencl_index, quick};

/// `y = 2x`; its other configuration (`hang = 1`) loops forever: a run that holds its log
/// for as long as the test needs, with no timing involved. The default (`hang = 0`, what
/// the capture launches and the tuner evaluates first) is fine.
fn hanging_def() -> KernelDef {
    let src = r#"
__kernel void scale(__global float* y, __global const float* x, const int n) {
    int i = get_global_id(0);
#if hang == 1
    while (n > 0) { y[0] += 1.0f; }
#endif
    if (i < n) { y[i] = 2.0f * x[i]; }
}"#;
    let mut b = KernelBuilder::new("scale", Source::text("scale.cl", src));
    let bx = b.tune("block_size_x", [32], 32);
    b.tune("hang", [0i64, 1], 0);
    b.problem_size([kernel_wisdom::arg("n")])
        .block_size(bx.clone(), 1, 1)
        .grid_divisors(bx, 1, 1)
        .output::<f32>("y")
        .input::<f32>("x")
        .scalar::<i32>("n");
    let mut def = b.build().unwrap();
    def.tuning_key = "scale_lock".into();
    def
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kw-tune-lock-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[cfg(unix)]
#[test]
fn a_second_kw_tune_on_a_held_log_is_refused_naming_the_running_process() {
    let Some(index) = opencl_index() else {
        return;
    };
    let dir = fresh_dir("held");
    let device = open_device(&DeviceSelector::Index(index)).unwrap();
    let n = 256usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let args = [
        HostArg::buffer(&vec![0f32; n]),
        HostArg::buffer(&x),
        HostArg::scalar(n as i32),
    ];
    let capture = capture_launch(&dir, "scale", &hanging_def(), None, device.as_ref(), &args)
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let idx = index.to_string();
    let common = quick(&idx);
    // The first run: after the default configuration, the other one hangs (10 minutes
    // before its time limit).
    let first = kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .current_dir(&dir)
        .env("KW_USER_WISDOM_DIR", dir.join("wisdom"))
        .env("KW_STATE_DIR", dir.join("state"))
        .args(["tune", &capture, "--eval-timeout", "10m"])
        .args(common)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = first.id();
    // Wait until it holds the log and is in the hung evaluation: its lock file names it and
    // its log has the header and the default's record (the hang is not logged until it
    // ends).
    let lock_file = dir.join("run.jsonl.lock");
    let log = dir.join("run.jsonl");
    let mut held = false;
    for _ in 0..2400 {
        let named = std::fs::read_to_string(&lock_file)
            .is_ok_and(|t| t.contains(&format!("\"pid\":{pid}")));
        let logged = std::fs::read_to_string(&log).is_ok_and(|t| t.lines().count() >= 2);
        if named && logged {
            held = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(held, "the first kw tune never took its log");
    let before = std::fs::read(&log).unwrap();

    // A second run on the same log, new or resumed: refused, naming the first.
    for extra in [&[][..], &["--resume"][..]] {
        let mut argv = vec!["tune", capture.as_str(), "--eval-timeout", "5s"];
        argv.extend(extra);
        argv.extend(common);
        let out = kw(&dir, &argv);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{extra:?}: {stderr}");
        assert!(
            stderr.contains("another tuning run is using this results log")
                && stderr.contains(&format!("pid {pid} on host")),
            "{extra:?}: {stderr}"
        );
        assert!(stderr.contains("run.jsonl"), "{stderr}");
    }
    assert_eq!(std::fs::read(&log).unwrap(), before, "the log is untouched");
    assert!(
        !dir.join("run.prev1.jsonl").exists(),
        "the held log was not renamed aside"
    );

    // Ctrl-C ends the first run (during its hung evaluation); the log is free again and
    // resumes: the hang becomes a timed-out result and the default wins.
    let status = kw_core::child_env::command("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = first.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut argv = vec!["tune", capture.as_str(), "--eval-timeout", "3s", "--resume"];
    argv.extend(common);
    let out = kw(&dir, &argv);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let wisdom = std::fs::read_to_string(dir.join("wisdom/scale_lock.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&wisdom).unwrap();
    assert_eq!(json["records"][0]["config"]["hang"], 0, "{wisdom}");
    // Released: the lock file names no one.
    assert_eq!(std::fs::read_to_string(&lock_file).unwrap(), "");
}

fn records(log: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[test]
fn a_log_with_torn_lines_resumes_with_a_warning_and_loses_only_them() {
    if opencl_index().is_none() {
        return;
    }
    let dir = fresh_dir("torn");
    let common = [
        "--budget",
        "5",
        "--samples",
        "2",
        "--warmup",
        "0",
        "--strategy",
        "random",
        "--compile-threads",
        "1",
        "--log",
        "run.jsonl",
        // The resumed run searches as the first did: no prior (the first run's wisdom would
        // add the neighbours of its best).
        "--no-prior",
    ];
    let mut argv = vec!["tune", "--bundled", "vector_add:4096"];
    argv.extend(common);
    let out = kw(&dir, &argv);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = dir.join("run.jsonl");
    let whole = records(&log);
    assert_eq!(whole.len(), 5);
    // Record 2 torn in the middle of its line; a fragment of a record at the end.
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut torn: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    torn[2] = lines[2][..lines[2].len() / 2].to_string();
    let mut torn = torn.join("\n");
    torn.push('\n');
    torn.push_str(&lines[5][..30]);
    std::fs::write(&log, torn).unwrap();

    let mut argv = vec!["tune", "captures/vector_add_4096.kwcap", "--resume"];
    argv.extend(common);
    let out = kw(&dir, &argv);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("run.jsonl: dropped 2 torn or malformed line(s)")
            && stderr.contains("line 3: not a record")
            && stderr.contains("line 7: an unterminated last line"),
        "{stderr}"
    );
    // Only the torn record was measured again: the same five configurations, the four
    // whole records as they were.
    let after = records(&log);
    assert_eq!(after.len(), 5, "{after:?}");
    let keys = |r: &[serde_json::Value]| {
        let mut k: Vec<String> = r.iter().map(|x| x["key"].to_string()).collect();
        k.sort();
        k
    };
    assert_eq!(keys(&after), keys(&whole));
    for i in [0, 2, 3, 4] {
        assert_eq!(after[if i == 0 { 0 } else { i - 1 }], whole[i]);
    }
    assert_eq!(after[4]["key"], whole[1]["key"]);
}
