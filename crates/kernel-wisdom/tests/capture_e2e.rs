//! End to end: the `03_capture` example runs in a child process (this test binary, re-executed
//! with `KW_CAPTURE_E2E_CHILD=1`) with `KW_CAPTURE*` set; the parent reads the captures back
//! and replays them on a fresh `WisdomKernel` built from the captured definition.

mod common;

#[path = "../examples/03_capture.rs"]
mod app;

use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{KernelArg, WisdomKernel};
use kw_capture::Capture;
use kw_core::capture_meta::CaptureMetadata;
use kw_core::{scalar::ScalarType, value::Value};
use std::path::{Path, PathBuf};
use std::process::Output;

const CHILD_ENV: &str = "KW_CAPTURE_E2E_CHILD";

/// The child: runs the example (a no-op in an ordinary test run).
#[test]
fn child_app() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    match app::run() {
        Ok(Some(0)) | Ok(None) => {}
        Ok(Some(wrong)) => panic!("{wrong} wrong elements"),
        Err(e) => panic!("the application failed: {e}"),
    }
}

/// Runs the child with these variables (every other `KW_CAPTURE*` variable removed), on the
/// OpenCL device under test: the example runs OpenCL kernels on the default device, and on a
/// machine with a CUDA GPU the default device is the GPU's CUDA device, so `KW_DEVICE` names
/// the OpenCL one.
fn run_child(vars: &[(&str, &str)]) -> Output {
    let (index, _) = common::opencl_device().expect("an OpenCL device (checked by the caller)");
    let mut cmd = kw_core::child_env::command(std::env::current_exe().expect("test binary path"));
    cmd.args(["--exact", "child_app", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, "1")
        .env(kernel_wisdom::DEVICE_ENV, index.to_string());
    for v in [
        "KW_CAPTURE",
        "KW_CAPTURE_DIR",
        "KW_CAPTURE_SKIP",
        "KW_CAPTURE_LIMIT",
        "KW_CAPTURE_FORCE",
    ] {
        cmd.env_remove(v);
    }
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("running the child");
    assert!(
        out.status.success(),
        "child failed: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kw-capture-e2e-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The `.kwcap` files in `dir`, sorted; asserts that nothing else (no temporary file) is there.
fn captures_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries.map(|e| e.expect("dir entry").path()).collect();
    files.sort();
    for f in &files {
        assert_eq!(
            f.extension().and_then(|e| e.to_str()),
            Some("kwcap"),
            "leftover file {}",
            f.display()
        );
    }
    files
}

fn metadata(c: &Capture) -> CaptureMetadata {
    let m: CaptureMetadata = c.metadata_as().expect("capture metadata");
    m.check_version().expect("metadata version");
    m
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Replays a capture: uploads every input, launches the captured configuration of the
/// captured definition on a fresh kernel, and compares every reference output bitwise.
fn replay(capture: &Capture, meta: &CaptureMetadata) {
    let Some(device) = common::device() else {
        return;
    };
    let kernel = WisdomKernel::new(meta.kernel.clone(), device.clone()).expect("captured def");
    let mut mems = Vec::new();
    for a in &meta.args {
        if let Some(input) = &a.input {
            let bytes = capture.read_buffer(input).expect("input buffer");
            let mem = device.alloc(bytes.len()).expect("alloc");
            mem.write(0, &bytes).expect("upload");
            mems.push(Some(mem));
        } else {
            mems.push(None);
        }
    }
    let args: Vec<KernelArg<'_>> = meta
        .args
        .iter()
        .zip(&mems)
        .map(|(a, mem)| match (mem, a.ty, &a.value) {
            (Some(mem), ty, _) => {
                KernelArg::device_buffer(mem.as_ref(), ty, a.len.expect("buffer length"))
            }
            (None, ScalarType::I32, Some(Value::Int(v))) => {
                i32::try_from(*v).expect("i32 value").into()
            }
            (None, ScalarType::F32, Some(Value::Float(v))) => (*v as f32).into(),
            other => panic!("argument {} not handled by this test: {other:?}", a.name),
        })
        .collect();
    kernel
        .launch_with(&args, LaunchOptions::new().config(&meta.config))
        .expect("replayed launch");
    device.synchronize().expect("sync");
    let mut outputs = 0;
    for (a, mem) in meta.args.iter().zip(&mems) {
        if let (Some(output), Some(mem)) = (&a.output, mem) {
            let want = capture.read_buffer(output).expect("reference output");
            let mut got = vec![0u8; want.len()];
            mem.read(0, &mut got).expect("download");
            assert!(
                got == want,
                "replayed `{}` differs from the capture",
                a.name
            );
            outputs += 1;
        }
    }
    assert!(outputs > 0, "the capture has no reference output");
}

#[test]
fn every_kernel_is_captured_and_replays_bitwise() {
    if common::device().is_none() {
        return;
    }
    let dir = temp_dir("all");
    let out = run_child(&[
        ("KW_CAPTURE", "*"),
        ("KW_CAPTURE_DIR", dir.to_str().unwrap()),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let files = captures_in(&dir);
    assert_eq!(files.len(), 2, "{files:?}\n{stdout}");
    assert_eq!(stdout.matches("captured: ").count(), 2, "{stdout}");
    let mut seen = Vec::new();
    for f in &files {
        let c = Capture::open(f).expect("open capture");
        c.verify().expect("verify");
        let m = metadata(&c);
        assert_eq!(m.tuning_key, m.kernel.tuning_key);
        assert!(!m.kernel.source.text.is_empty(), "source embedded");
        assert!(!m.provenance.date.is_empty() && !m.provenance.host.is_empty());
        assert!(m.provenance.tool_version.starts_with("kernel-wisdom "));
        assert_eq!(m.provenance.driver_version, m.device.driver_version);
        assert!(!m.config.key().is_empty());
        let name = f.file_name().unwrap().to_str().unwrap().to_string();
        assert!(name.starts_with(&m.tuning_key), "{name}");
        match m.tuning_key.as_str() {
            "vector_add" => {
                assert_eq!(
                    m.problem_size,
                    vec![app::N as i64],
                    "the definition's one axis"
                );
                let names: Vec<&str> = m.args.iter().map(|a| a.name.as_str()).collect();
                assert_eq!(names, ["c", "a", "b", "n"]);
                assert_eq!(m.args[3].value, Some(Value::Int(app::N as i64)));
                assert_eq!(m.args[1].len, Some(app::N));
                // Inputs bitwise as the application made them (first launch).
                let a = c.read_buffer(m.args[1].input.as_ref().unwrap()).unwrap();
                assert!(a == f32_bytes(&app::input_a(0)));
                let b = c.read_buffer(m.args[2].input.as_ref().unwrap()).unwrap();
                assert!(b == f32_bytes(&app::input_b()));
                // Only `c` changed.
                assert!(m.args[1].output.is_none() && m.args[2].output.is_none());
                let out = floats(&c.read_buffer(m.args[0].output.as_ref().unwrap()).unwrap());
                let (a, b) = (app::input_a(0), app::input_b());
                assert!((0..app::N).all(|i| out[i] == a[i] + b[i]));
            }
            "stencil2d" => {
                assert_eq!(m.problem_size, vec![app::WIDTH as i64, app::HEIGHT as i64]);
                let input = c.read_buffer(m.args[1].input.as_ref().unwrap()).unwrap();
                assert!(input == f32_bytes(&app::stencil_input()));
            }
            other => panic!("unexpected capture of {other}"),
        }
        replay(&c, &m);
        seen.push(m.tuning_key.clone());
    }
    seen.sort();
    assert_eq!(seen, ["stencil2d", "vector_add"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn skip_limit_and_patterns_select_launches() {
    if common::device().is_none() {
        return;
    }
    let dir = temp_dir("skip");
    run_child(&[
        ("KW_CAPTURE", "vector_*, nothing?"),
        ("KW_CAPTURE_DIR", dir.to_str().unwrap()),
        ("KW_CAPTURE_SKIP", "1"),
        ("KW_CAPTURE_LIMIT", "5"),
    ]);
    // Launches 2 and 3 of the vector add (its inputs tell which), no stencil.
    let mut firsts = Vec::new();
    for f in captures_in(&dir) {
        let c = Capture::open(&f).unwrap();
        let m = metadata(&c);
        assert_eq!(m.tuning_key, "vector_add");
        let a = floats(&c.read_buffer(m.args[1].input.as_ref().unwrap()).unwrap());
        firsts.push(a[0]);
    }
    firsts.sort_by(f32::total_cmp);
    assert_eq!(firsts, [1.0, 2.0], "launches 2 and 3 (a[0] = k)");
    std::fs::remove_dir_all(&dir).unwrap();

    // The default limit (1 per kernel and problem size) with a skip of 1: launch 2 only.
    let dir = temp_dir("limit");
    run_child(&[
        ("KW_CAPTURE", "vector_add"),
        ("KW_CAPTURE_DIR", dir.to_str().unwrap()),
        ("KW_CAPTURE_SKIP", "1"),
    ]);
    let files = captures_in(&dir);
    assert_eq!(files.len(), 1, "{files:?}");
    let c = Capture::open(&files[0]).unwrap();
    let m = metadata(&c);
    let a = floats(&c.read_buffer(m.args[1].input.as_ref().unwrap()).unwrap());
    assert_eq!(a[0], 1.0);
    // The kernel definition inside is checked with the metadata: a newer format version, or
    // a tolerance that is not a finite number of 0 or more, is refused before any tuning
    // (they were found after the whole search, or never).
    let mut newer = m.clone();
    newer.kernel.format_version = 9;
    let e = newer.check_version().unwrap_err();
    assert!(e.contains("format version 9 is newer"), "{e}");
    let mut bad = m.clone();
    let out = bad
        .kernel
        .args
        .iter()
        .position(|a| a.tolerance.is_some() || a.name == "out");
    let i = out.unwrap_or(0);
    bad.kernel.args[i].tolerance = Some(kw_core::tolerance::Tolerance {
        rtol: -1.0,
        ..Default::default()
    });
    let e = bad.check_version().unwrap_err();
    assert!(e.contains("rtol -1 is not a valid tolerance"), "{e}");
    // The tuning key shown by `kw capture ls/show` is the one `kw tune` writes: an edit of
    // either is refused.
    let mut edited = m.clone();
    edited.tuning_key = format!("{}_edited", m.tuning_key);
    let e = edited.check_version().unwrap_err();
    assert!(e.contains("differs from its kernel definition's"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_invalid_value_disables_capture_with_one_message() {
    if common::device().is_none() {
        return;
    }
    let dir = temp_dir("invalid");
    let out = run_child(&[
        ("KW_CAPTURE", "*"),
        ("KW_CAPTURE_DIR", dir.to_str().unwrap()),
        ("KW_CAPTURE_SKIP", "lots"),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr
            .matches("kernel-wisdom: invalid KW_CAPTURE_SKIP")
            .count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("capture is disabled"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("wrong elements: 0"));
    assert!(!dir.exists(), "nothing captured");
}

#[test]
fn an_unwritable_directory_is_reported_and_results_stay_right() {
    if common::device().is_none() {
        return;
    }
    let base = temp_dir("unwritable");
    std::fs::create_dir_all(&base).unwrap();
    let file = base.join("a-file");
    std::fs::write(&file, b"not a directory").unwrap();
    let dir = file.join("captures");
    let out = run_child(&[
        ("KW_CAPTURE", "*"),
        ("KW_CAPTURE_DIR", dir.to_str().unwrap()),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("wrong elements: 0"), "{stdout}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // Reported once per kernel, naming the directory.
    for key in ["vector_add", "stencil2d"] {
        let line = format!("kernel-wisdom: kernel `{key}`: launch not captured");
        assert_eq!(stderr.matches(&line).count(), 1, "{stderr}");
    }
    assert!(
        stderr.contains("cannot create the capture directory"),
        "{stderr}"
    );
    assert!(stderr.contains(dir.to_str().unwrap()), "{stderr}");
    let left: Vec<_> = std::fs::read_dir(&base).unwrap().collect();
    assert_eq!(left.len(), 1, "only the file itself");
    std::fs::remove_dir_all(&base).unwrap();
}
