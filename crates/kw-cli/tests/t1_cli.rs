//! T1 benchmark files (issue 25): `kw capture from-t1` turns a benchmark of our own making
//! (`tests/t1/blur_T1.json`: an OpenCL 5-point blur, 8 parameters, 3 restrictions, tiles
//! that do not divide the image) into an ordinary capture whose reference equals a CPU
//! reference, and `kw tune` on it verifies every evaluated configuration: exactly the
//! configurations of the deliberately wrong `variant == 2` fail. On PoCL.

use kw_capture::record::output_frame_name;
use kw_core::kernel_tuner::T1Benchmark;
use kw_core::scalar::HostArg;
use std::path::{Path, PathBuf};

fn t1_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/t1/blur_T1.json")
}

fn kw(dir: &Path, args: &[&str]) -> std::process::Output {
    kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .current_dir(dir)
        .env("KW_USER_WISDOM_DIR", dir.join("wisdom"))
        .env("KW_STATE_DIR", dir.join("state"))
        .args(args)
        .output()
        .expect("running kw")
}

/// A fresh directory for one test (process id and a nonce in its name).
fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "kw-t1-{tag}-{}-{}",
        std::process::id(),
        kw_core::files::nonce(tag.len() as u64)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn cpu_blur(input: &[f32], w: usize, h: usize) -> Vec<f32> {
    let mut out = vec![0f32; w * h];
    for y in 0..h {
        for x in 0..w {
            let mut s = input[y * w + x];
            if x > 0 {
                s += input[y * w + x - 1];
            }
            if x + 1 < w {
                s += input[y * w + x + 1];
            }
            if y > 0 {
                s += input[(y - 1) * w + x];
            }
            if y + 1 < h {
                s += input[(y + 1) * w + x];
            }
            out[y * w + x] = s * 0.2;
        }
    }
    out
}

#[test]
fn a_t1_benchmark_is_captured_and_tuned_with_every_result_verified() {
    if !kernel_wisdom::list_devices()
        .is_ok_and(|d| d.iter().any(|d| d.info.backend.as_str() == "opencl"))
    {
        eprintln!("SKIPPED: no OpenCL device");
        return;
    }
    let dir = std::env::temp_dir().join(format!("kw-t1-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let t1 = t1_file();
    let out = kw(
        &dir,
        &[
            "capture",
            "from-t1",
            t1.to_str().unwrap(),
            "-o",
            "blur.kwcap",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("seed 7"), "the seed used is said: {err}");
    // The capture's reference is the CPU's blur of the same (seeded) input.
    let bench = T1Benchmark::load(&t1).unwrap();
    let HostArg::Buffer { bytes, .. } = &bench.inputs[1] else {
        panic!("`in` is a buffer")
    };
    let input = floats(bytes);
    let capture = kw_capture::Capture::open(dir.join("blur.kwcap")).unwrap();
    let reference = floats(&capture.read_buffer(&output_frame_name("out")).unwrap());
    let expected = cpu_blur(&input, 100, 37);
    assert_eq!(reference.len(), expected.len());
    for (i, (r, e)) in reference.iter().zip(&expected).enumerate() {
        assert!(
            (r - e).abs() <= 1e-5 * e.abs().max(1.0),
            "element {i}: {r} vs {e}"
        );
    }
    // `--reference-config`: the reference is that configuration's output (variant 2 adds 1
    // to every sum before the scale of 0.2); a parameter or value the space lacks is refused.
    let out = kw(
        &dir,
        &[
            "capture",
            "from-t1",
            t1.to_str().unwrap(),
            "--reference-config",
            "variant=2, block_size_x=8",
            "-o",
            "variant2.kwcap",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let capture = kw_capture::Capture::open(dir.join("variant2.kwcap")).unwrap();
    let shifted = floats(&capture.read_buffer(&output_frame_name("out")).unwrap());
    for (i, (r, e)) in shifted.iter().zip(&expected).enumerate() {
        assert!(
            (r - (e + 0.2)).abs() <= 1e-5 * e.abs().max(1.0),
            "element {i}: {r} vs {e} + 0.2"
        );
    }
    for (bad, said) in [
        ("variant=7", "`variant` has no value 7"),
        ("colour=1", "no parameter `colour`"),
    ] {
        let out = kw(
            &dir,
            &[
                "capture",
                "from-t1",
                t1.to_str().unwrap(),
                "--reference-config",
                bad,
                "-o",
                "bad.kwcap",
            ],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(said) && err.contains("blur_T1.json"),
            "{err}"
        );
    }
    // Writing over an existing capture is refused.
    let again = kw(
        &dir,
        &[
            "capture",
            "from-t1",
            t1.to_str().unwrap(),
            "-o",
            "blur.kwcap",
        ],
    );
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("not overwriting"));

    let out = kw(
        &dir,
        &[
            "tune",
            "blur.kwcap",
            "--strategy",
            "random",
            "--budget",
            "30",
            "--samples",
            "2",
            "--log",
            "run.jsonl",
            "--wisdom-dir",
            "w",
        ],
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    // The header names the capture and its problem size (two captures of one kernel differ).
    assert!(
        text.contains("; capture blur.kwcap, problem size 100x37"),
        "{text}"
    );
    let log = std::fs::read_to_string(dir.join("run.jsonl")).unwrap();
    let (mut wrong, mut right) = (0, 0);
    for line in log.lines().skip(1) {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        let variant = r["config"]["variant"].as_i64().unwrap();
        if variant == 2 {
            wrong += 1;
            assert!(r["failure"].is_string(), "variant 2 must fail: {line}");
        } else {
            right += 1;
            assert!(
                r["objective"].is_number(),
                "variant {variant} must pass: {line}"
            );
        }
    }
    assert!(
        wrong > 0 && right > 0,
        "{wrong} wrong, {right} right evaluated"
    );
    let wisdom = std::fs::read_to_string(dir.join("w/blur_t1_test.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&wisdom).unwrap();
    assert_ne!(json["records"][0]["config"]["variant"], 2);

    // `kw tune --t1` does both steps, with the file's `Budget` (30 evaluations) when the
    // command line gives no stop condition, and reuses its capture while the file is unchanged.
    for round in 0..2 {
        let log = format!("t1-{round}.jsonl");
        let out = kw(
            &dir,
            &[
                "tune",
                "--t1",
                t1.to_str().unwrap(),
                "--strategy",
                "random",
                "--samples",
                "1",
                "--log",
                &log,
                "--wisdom-dir",
                "w2",
            ],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        let said = if round == 0 {
            "captured"
        } else {
            "using its capture"
        };
        assert!(err.contains(said), "{err}");
        let evals = std::fs::read_to_string(dir.join(&log))
            .unwrap()
            .lines()
            .count()
            - 1;
        assert_eq!(evals, 30, "the file's Budget");
    }
    // The capture's space is the T1 file's: `kw space stats` counts both the same.
    let count = |spec: &str| -> serde_json::Value {
        let out = kw(&dir, &["space", "stats", spec]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let from_capture = count("blur.kwcap");
    assert_eq!(from_capture["valid"], count(t1.to_str().unwrap())["valid"]);
    assert_eq!(from_capture["problem_size"], serde_json::json!([100, 37]));
    // `kw capture ls` lists the default capture directory, and says when a directory is empty.
    let ls = kw(&dir, &["capture", "ls"]);
    assert!(String::from_utf8_lossy(&ls.stdout).contains("blur_t1_test-"));
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    let ls = kw(&dir, &["capture", "ls", "empty"]);
    assert!(String::from_utf8_lossy(&ls.stdout).contains("no capture files"));
    // Without DIR, `KW_CAPTURE_DIR` (where applications write) is the directory listed; a
    // missing default directory is an error that says where the name came from.
    let ls_in = |capture_dir: &str| {
        kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
            .current_dir(&dir)
            .env("KW_CAPTURE_DIR", dir.join(capture_dir))
            .args(["capture", "ls"])
            .output()
            .expect("running kw")
    };
    let ls = ls_in("empty");
    let out = String::from_utf8_lossy(&ls.stdout);
    assert!(ls.status.success() && out.contains("no capture files") && out.contains("empty"));
    let ls = ls_in("missing");
    let err = String::from_utf8_lossy(&ls.stderr);
    assert!(!ls.status.success(), "{err}");
    assert!(
        err.contains("missing: no such directory") && err.contains("KW_CAPTURE_DIR"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The library GEMM's T1 file at a size its tiles do not divide: its restrictions over the
/// problem size (`ProblemSize[i]` in a condition) keep every configuration that would read
/// out of bounds from running, so the run ends with an error naming the restriction instead
/// of a crash of the reference launch (it was a segmentation fault).
#[test]
fn a_t1_size_the_tiles_do_not_divide_is_refused_not_a_crash() {
    if kernel_wisdom::list_devices().is_err() {
        eprintln!("SKIPPED: no OpenCL platform");
        return;
    }
    let src = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../kernels/library"
    ));
    let dir = temp_dir("tiles");
    for f in ["gemm.cl", "dialect.h"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(src.join("gemm_T1.json")).unwrap()).unwrap();
    json["KernelSpecification"]["ProblemSize"] = serde_json::json!([48, 48, 48]);
    std::fs::write(dir.join("gemm48.json"), json.to_string()).unwrap();
    let out = kw(&dir, &["tune", "--t1", "gemm48.json", "--budget", "2"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code().is_some_and(|c| c != 0),
        "an error exit, not a signal: {:?}\n{stderr}",
        out.status
    );
    assert!(
        stderr.contains("gemm48.json")
            && stderr.contains("is not valid")
            && stderr.contains("problem_size[0] % MWG"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A T1 file whose `Default` configuration writes far out of bounds (on a CPU device, a
/// segmentation fault of the process that launches it): `kw tune --t1` and `kw capture
/// from-t1` end with an error that names the file and the signal, written by `kw` itself,
/// and leave no capture behind.
#[test]
fn a_reference_launch_that_crashes_is_an_error_not_a_crash_of_kw() {
    // A CPU device (PoCL): a GPU answers an out-of-bounds write with an error, not a signal.
    let Some(pocl) = kernel_wisdom::list_devices().ok().and_then(|l| {
        l.into_iter()
            .find(|d| d.info.name.contains("pthread") || d.info.architecture.contains("pthread"))
    }) else {
        eprintln!("SKIPPED: no PoCL device");
        return;
    };
    let device = pocl.index.to_string();
    let dir = temp_dir("oob");
    std::fs::write(
        dir.join("oob.cl"),
        "__kernel void oob(__global float* out, const int n) {\n\
         \x20   size_t i = get_global_id(0);\n\
         \x20   out[i * (size_t)(1 << 30) * (size_t)wide] = 1.0f;\n}\n",
    )
    .unwrap();
    let t1 = serde_json::json!({
        "General": {"BenchmarkName": "oob", "OutputFormat": "JSON"},
        "ConfigurationSpace": {
            "TuningParameters": [
                {"Name": "block_size_x", "Type": "int", "Values": "[16, 32]", "Default": 16},
                {"Name": "wide", "Type": "int", "Values": "[1, 2]", "Default": 1}
            ],
            "Conditions": []
        },
        "KernelSpecification": {
            "Language": "OpenCL", "KernelName": "oob", "KernelFile": "oob.cl",
            "GlobalSizeType": "OpenCL",
            "LocalSize": {"X": "block_size_x", "Y": "1", "Z": "1"},
            "GridDivX": ["block_size_x"],
            "ProblemSize": [64],
            "Arguments": [
                {"Name": "out", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly",
                 "FillType": "Constant", "FillValue": 0.0, "Size": 64, "Output": 1},
                {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "FillValue": 64}
            ]
        }
    });
    std::fs::write(dir.join("oob_T1.json"), t1.to_string()).unwrap();
    for args in [
        &["tune", "--t1", "oob_T1.json", "--budget", "2"][..],
        &["capture", "from-t1", "oob_T1.json", "-o", "oob.kwcap"][..],
    ] {
        let mut args = args.to_vec();
        args.extend(["--device", &device]);
        let out = kw(&dir, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() == Some(1),
            "{args:?}: an error exit of kw, not a signal: {:?}\n{stderr}",
            out.status
        );
        assert!(
            stderr.contains("oob_T1.json")
                && stderr.contains("killed the process that ran it (signal"),
            "{args:?}: {stderr}"
        );
        assert!(!dir.join("oob.kwcap").exists());
        let captures = std::fs::read_dir(dir.join("captures"))
            .map(|d| d.count())
            .unwrap_or(0);
        assert_eq!(captures, 0, "{args:?}: no capture left behind");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `kw space stats` reads every library T1 file (conditions over the problem size taken at
/// the file's own size).
#[test]
fn space_stats_reads_every_library_t1_file() {
    let src = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../kernels/library"
    ));
    let mut files: Vec<PathBuf> = std::fs::read_dir(src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with("_T1.json"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "{files:?}");
    let dir = temp_dir("stats");
    for f in files {
        let out = kw(&dir, &["space", "stats", f.to_str().unwrap()]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("\"valid\""),
            "{}: {stdout}{}",
            f.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `kw capture from-t1 -o` with a name the capture writer changes (`gemm.v2` is written as
/// `gemm_v2`): the command says so, succeeds and prints the file it wrote.
#[test]
fn from_t1_prints_the_file_it_wrote() {
    if kernel_wisdom::list_devices().is_err() {
        eprintln!("SKIPPED: no OpenCL platform");
        return;
    }
    let dir = temp_dir("named");
    for f in ["blur_T1.json", "blur.cl"] {
        std::fs::copy(t1_file().with_file_name(f), dir.join(f)).unwrap();
    }
    let out = kw(
        &dir,
        &[
            "capture",
            "from-t1",
            "blur_T1.json",
            "-o",
            "caps/blur.v2.kwcap",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.trim(), "caps/blur_v2.kwcap");
    // ... and says so before it writes.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("note: writing caps/blur_v2.kwcap for caps/blur.v2.kwcap"),
        "{stderr}"
    );
    assert!(dir.join("caps/blur_v2.kwcap").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A name read from a file with control characters (a T1 `BenchmarkName`, the capture's
/// tuning key) never reaches the terminal raw: `kw tune`'s header, progress and summary
/// lines printed `\x1b[31m` and `\r` as they were.
#[test]
fn tune_escapes_control_characters_in_names() {
    if kernel_wisdom::list_devices().is_err() {
        eprintln!("SKIPPED: no OpenCL platform");
        return;
    }
    let dir = temp_dir("control");
    std::fs::copy(t1_file().with_file_name("blur.cl"), dir.join("blur.cl")).unwrap();
    let mut spec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t1_file()).unwrap()).unwrap();
    spec["General"]["BenchmarkName"] = serde_json::json!("bn\u{1b}[31mRED\u{1b}[0m\r\u{7}");
    std::fs::write(dir.join("c_T1.json"), spec.to_string()).unwrap();
    let out = kw(
        &dir,
        &[
            "tune",
            "--t1",
            "c_T1.json",
            "--budget",
            "2",
            "--samples",
            "2",
            "--warmup",
            "0",
        ],
    );
    let all = [out.stdout.as_slice(), out.stderr.as_slice()].concat();
    let text = String::from_utf8_lossy(&all);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("RED"), "{text}");
    assert!(
        !all.iter().any(|&b| b == 0x1b || b == b'\r' || b == 7),
        "{text:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A KTT file whose global size a parameter divides (`Modifiers`): the configuration that
/// divides it to 0 launches nothing, and `kw tune` says so ("its launch is empty"), not
/// "wrong result"; the others are verified. On PoCL.
#[test]
fn a_modifier_that_empties_the_launch_is_an_invalid_configuration() {
    if kernel_wisdom::list_devices().is_err() {
        eprintln!("SKIPPED: no OpenCL platform");
        return;
    }
    let dir = temp_dir("modifiers");
    std::fs::write(
        dir.join("fill.cl"),
        "__kernel void fill(__global float* out) {\n\
         const int i = get_global_id(0);\n\
         for (int u = 0; u < UNROLL; u++) out[i * UNROLL + u] = (float)(i * UNROLL + u);\n\
         }\n",
    )
    .unwrap();
    let spec = serde_json::json!({
        "General": {"BenchmarkName": "fill", "FormatVersion": 1},
        "ConfigurationSpace": {
            "TuningParameters": [
                {"Name": "UNROLL", "Type": "UnsignedInt", "Values": "[1, 2, 4, 8, 16]", "Default": 1}
            ],
            "Conditions": []
        },
        "KernelSpecification": {
            "Language": "OpenCL", "KernelName": "fill", "KernelFile": "fill.cl",
            "CompilerOptions": "",
            "GlobalSize": {"X": 8},
            "Modifiers": [
                {"Type": "Global", "Dimension": "X", "Parameter": "UNROLL", "Action": "Divide"}
            ],
            "Arguments": [
                {"Name": "out", "Type": "Float", "MemoryType": "Vector", "AccessType": "WriteOnly",
                 "FillType": "Constant", "FillValue": 0.0, "Size": 8}
            ]
        }
    });
    std::fs::write(dir.join("fill_T1.json"), spec.to_string()).unwrap();
    let out = kw(
        &dir,
        &[
            "tune",
            "--t1",
            "fill_T1.json",
            "--strategy",
            "exhaustive",
            "--budget",
            "5",
            "--samples",
            "2",
            "--warmup",
            "0",
            "--no-isolation",
        ],
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("failures: 1 (invalid configuration: 1)"),
        "{text}"
    );
    assert!(!text.contains("wrong result"), "{text}");
    // The results log says why, for UNROLL=16 (8 / 16 = 0 work-items).
    let logs: Vec<PathBuf> = std::fs::read_dir(dir.join("state/logs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    let log = std::fs::read_to_string(&logs[0]).unwrap();
    let line = log
        .lines()
        .find(|l| l.contains("\"UNROLL\":16"))
        .unwrap_or_else(|| panic!("{log}"));
    assert!(line.contains("its launch is empty"), "{line}");
    let _ = std::fs::remove_dir_all(&dir);
}
