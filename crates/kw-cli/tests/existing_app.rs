//! An existing OpenCL application (its own context, queue, buffers and kernels), instrumented
//! with kernel-wisdom — `crates/kernel-wisdom/examples/04_existing_opencl_app.rs`, run in a
//! child process (this test binary, re-executed) — goes through the whole loop on PoCL:
//! results identical to a CPU reference; with `KW_CAPTURE`, a capture exists after the child
//! exits without calling `flush_captures`; `kw tune` on it writes wisdom; the next run of the
//! application selects the tuned record (exact device and size). A too-short buffer is a typed
//! error and the application keeps running; a mistyped `KW_CAPTURE` pattern is reported.

#[path = "../../kernel-wisdom/examples/04_existing_opencl_app.rs"]
#[allow(dead_code)]
mod app;

#[path = "../../kernel-wisdom/examples/05_existing_cudarc_app.rs"]
#[allow(dead_code)]
mod cuda_app;

use std::path::{Path, PathBuf};
use std::process::Output;

const CHILD_ENV: &str = "KW_EXISTING_APP_CHILD";

/// The `kw` binary: `KW_BIN` when set (a test binary copied to another machine), else the
/// one cargo built.
fn kw_bin() -> PathBuf {
    std::env::var_os("KW_BIN")
        .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_kw")), PathBuf::from)
}

/// The child: runs the application and prints its report (a no-op in an ordinary run).
#[test]
fn child_app() {
    match std::env::var(CHILD_ENV).as_deref() {
        Ok("opencl") => {
            let r = app::run().expect("the application failed");
            println!(
                "REPORT config={} step={} wrong={}",
                r.config, r.step, r.wrong
            );
            println!("TOO_SHORT {}", r.too_short);
        }
        Ok("cuda") => {
            let r = cuda_app::run().expect("the application failed");
            println!(
                "REPORT config={} step={} wrong={}",
                r.config, r.step, r.wrong
            );
        }
        _ => {}
    }
}

fn run_app(dir: &Path, vars: &[(&str, &str)]) -> (String, String) {
    run_child(dir, "opencl", vars)
}

fn run_child(dir: &Path, which: &str, vars: &[(&str, &str)]) -> (String, String) {
    let mut cmd = kw_core::child_env::command(std::env::current_exe().expect("test binary path"));
    cmd.args(["--exact", "child_app", "--nocapture", "--test-threads=1"])
        .current_dir(dir)
        .env("KW_USER_WISDOM_DIR", dir.join("wisdom"))
        .env("KW_STATE_DIR", dir.join("state"))
        .env(CHILD_ENV, which)
        .env("KW_EXAMPLE_N", "4096")
        .env("KW_EXAMPLE_PLATFORM", "Portable Computing Language");
    for v in [
        "KW_CAPTURE",
        "KW_CAPTURE_DIR",
        "KW_LOG",
        "KW_WISDOM_PATH",
        "KW_DEVICE",
    ] {
        cmd.env_remove(v);
    }
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("running the application");
    check(&out, "application");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn check(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `key=value` from the child's `REPORT` line.
fn report_field(stdout: &str, key: &str) -> String {
    let line = stdout
        .lines()
        .find_map(|l| l.find("REPORT ").map(|at| &l[at..]))
        .unwrap_or_else(|| panic!("no report in:\n{stdout}"));
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in {line}"))
        .to_string()
}

fn captures(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.map(|e| e.expect("entry").path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

fn pocl_present() -> bool {
    opencl3::platform::get_platforms().is_ok_and(|ps| {
        ps.iter().any(|p| {
            p.name()
                .is_ok_and(|n| n.contains("Portable Computing Language"))
        })
    })
}

#[test]
fn instrumented_opencl_app_capture_tune_select() {
    if !pocl_present() {
        eprintln!("SKIPPED: no PoCL OpenCL platform");
        return;
    }
    let dir = std::env::temp_dir().join(format!("kw-existing-app-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cap_dir = dir.join("caps");
    let wisdom_dir = dir.join("tuned");

    // 1. Plain run: correct results, default configuration, the too-short buffer refused.
    let (stdout, _) = run_app(&dir, &[]);
    assert_eq!(report_field(&stdout, "wrong"), "0", "{stdout}");
    assert_eq!(report_field(&stdout, "step"), "Default", "{stdout}");
    assert!(
        stdout.contains("TOO_SHORT kernel `vector_add`: buffer argument 0 `c` holds 2048 "),
        "{stdout}"
    );
    assert!(stdout.contains("needs 4096"), "{stdout}");

    // 2. A mistyped pattern captures nothing and says which keys exist.
    let (_, stderr) = run_app(
        &dir,
        &[
            ("KW_CAPTURE", "vector_ad"),
            ("KW_CAPTURE_DIR", cap_dir.to_str().unwrap()),
        ],
    );
    assert!(
        stderr.contains("`vector_ad` matched no kernel")
            && stderr.contains("launched were: vector_add"),
        "{stderr}"
    );
    assert!(captures(&cap_dir).is_empty());

    // 3. Capture, with no flush call in the application: written at exit, announced.
    let (stdout, stderr) = run_app(
        &dir,
        &[
            ("KW_CAPTURE", "vector_add"),
            ("KW_CAPTURE_DIR", cap_dir.to_str().unwrap()),
        ],
    );
    assert_eq!(report_field(&stdout, "wrong"), "0");
    let files = captures(&cap_dir);
    assert_eq!(files.len(), 1, "{files:?}\n{stderr}");
    let capture = &files[0];
    assert_eq!(capture.extension().and_then(|e| e.to_str()), Some("kwcap"));
    assert!(stderr.contains("capture written:"), "{stderr}");
    // The capture holds the whole buffers: the application pads `a` (4096 + 64 elements);
    // the declared length, 4096, is only what a launch needs at least.
    let cap = kw_capture::Capture::open(capture).expect("the capture loads");
    let meta: kw_core::capture_meta::CaptureMetadata =
        serde_json::from_value(cap.metadata().clone()).expect("metadata");
    for a in meta.args.iter().filter(|a| a.input.is_some()) {
        let whole = if a.name == "a" { 4096 + 64 } else { 4096 };
        assert_eq!(a.len, Some(whole), "{}", a.name);
    }

    // 4. Tune it.
    let out = kw_core::child_env::command(kw_bin())
        .current_dir(&dir)
        .env("KW_USER_WISDOM_DIR", dir.join("wisdom"))
        .env("KW_STATE_DIR", dir.join("state"))
        .args([
            "tune",
            capture.to_str().unwrap(),
            "--strategy",
            "random",
            "--budget",
            "6",
        ])
        .args([
            "--samples",
            "3",
            "--wisdom-dir",
            wisdom_dir.to_str().unwrap(),
        ])
        .output()
        .expect("running kw tune");
    check(&out, "kw tune");
    let wisdom: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(wisdom_dir.join("vector_add.json")).expect("wisdom written"),
    )
    .unwrap();
    let tuned = &wisdom["records"][0]["config"];

    // 5. The application again, with that wisdom: the tuned record is selected.
    let (stdout, stderr) = run_app(
        &dir,
        &[
            ("KW_WISDOM_PATH", wisdom_dir.to_str().unwrap()),
            ("KW_LOG", "debug"),
        ],
    );
    assert_eq!(report_field(&stdout, "wrong"), "0");
    assert_eq!(
        report_field(&stdout, "step"),
        "ExactDeviceExactSize",
        "{stdout}\n{stderr}"
    );
    let chosen = report_field(&stdout, "config");
    for (name, value) in tuned.as_object().expect("config object") {
        assert!(
            chosen.contains(&format!("{name}={value}")),
            "chosen {chosen} is not the tuned {tuned}"
        );
    }
    assert!(stderr.contains("selection in"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same loop for a cudarc application on the GPU machine: its own context, stream and
/// `CudaSlice`s; results bitwise equal to its own pipeline; capture, `kw tune`, selection.
#[test]
fn instrumented_cudarc_app_capture_tune_select() {
    if !kernel_wisdom::CudaBackend::new().is_available() {
        eprintln!("SKIPPED: no CUDA driver");
        return;
    }
    let dir = std::env::temp_dir().join(format!("kw-existing-cuda-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cap_dir = dir.join("caps");
    let wisdom_dir = dir.join("tuned");
    let n = [("KW_EXAMPLE_N", "65536")];
    let (stdout, _) = run_child(&dir, "cuda", &n);
    assert_eq!(report_field(&stdout, "wrong"), "0", "{stdout}");
    let (_, stderr) = run_child(
        &dir,
        "cuda",
        &[
            n[0],
            ("KW_CAPTURE", "vector_add"),
            ("KW_CAPTURE_DIR", cap_dir.to_str().unwrap()),
        ],
    );
    let files = captures(&cap_dir);
    assert_eq!(files.len(), 1, "{files:?}\n{stderr}");
    let out = kw_core::child_env::command(kw_bin())
        .current_dir(&dir)
        .env("KW_USER_WISDOM_DIR", dir.join("wisdom"))
        .env("KW_STATE_DIR", dir.join("state"))
        .args(["tune", files[0].to_str().unwrap(), "--budget", "24"])
        .args(["--wisdom-dir", wisdom_dir.to_str().unwrap()])
        .output()
        .expect("running kw tune");
    check(&out, "kw tune");
    println!("{}", String::from_utf8_lossy(&out.stdout));
    let wisdom: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(wisdom_dir.join("vector_add.json")).expect("wisdom written"),
    )
    .unwrap();
    let tuned = &wisdom["records"][0]["config"];
    let (stdout, stderr) = run_child(
        &dir,
        "cuda",
        &[
            n[0],
            ("KW_WISDOM_PATH", wisdom_dir.to_str().unwrap()),
            ("KW_LOG", "debug"),
        ],
    );
    assert_eq!(report_field(&stdout, "wrong"), "0", "{stdout}");
    assert_eq!(
        report_field(&stdout, "step"),
        "ExactDeviceExactSize",
        "{stdout}\n{stderr}"
    );
    let chosen = report_field(&stdout, "config");
    for (name, value) in tuned.as_object().expect("config object") {
        assert!(
            chosen.contains(&format!("{name}={value}")),
            "{chosen} vs {tuned}"
        );
    }
    println!("cudarc app: tuned and selected {chosen}");
    let _ = std::fs::remove_dir_all(&dir);
}
