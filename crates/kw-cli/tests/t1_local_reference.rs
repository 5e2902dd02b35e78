//! A second OpenCL T1 benchmark of our own making (issue 25), `tests/t1/smooth_T1.json`: a
//! 3-point smoothing whose kernel takes two `__local` arguments between its other parameters
//! (`MemoryType: Local`, sized by an expression of the tuning parameters), a `__constant`
//! pointer argument passed as a buffer, and a `ReferenceArguments` entry naming the expected
//! output in a binary file. `kw tune --t1 --t4` evaluates the whole space, verifies every
//! configuration against the file's reference (exactly the deliberately wrong `variant == 1`
//! configurations fail) and writes the T4 results file. On PoCL.

use kw_capture::record::output_frame_name;
use std::path::{Path, PathBuf};

const N: usize = 1000;

fn kw(dir: &Path, args: &[&str]) -> std::process::Output {
    kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("running kw")
}

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The expected output, computed here: `in[i] = i % 13 - 6`, weights 0.25, 0.5, 0.75, zero
/// outside the signal.
fn expected() -> Vec<f32> {
    let input: Vec<f32> = (0..N).map(|i| (i % 13) as f32 - 6.0).collect();
    let at = |i: isize| {
        if i < 0 || i >= N as isize {
            0.0
        } else {
            input[i as usize]
        }
    };
    (0..N as isize)
        .map(|i| 0.25 * at(i - 1) + 0.5 * at(i) + 0.75 * at(i + 1))
        .collect()
}

fn bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// A directory holding the benchmark and `smooth_expected.bin` = `reference`.
fn bench_dir(tag: &str, reference: &[f32]) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/t1");
    let dir = std::env::temp_dir().join(format!(
        "kw-t1-local-{tag}-{}-{}",
        std::process::id(),
        kw_core::files::nonce(tag.len() as u64)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["smooth_T1.json", "smooth.cl"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    std::fs::write(dir.join("smooth_expected.bin"), bytes(reference)).unwrap();
    dir
}

fn have_opencl() -> bool {
    kernel_wisdom::list_devices()
        .is_ok_and(|d| d.iter().any(|d| d.info.backend.as_str() == "opencl"))
}

#[test]
fn local_arguments_anywhere_and_a_file_reference_verify_every_configuration() {
    if !have_opencl() {
        eprintln!("SKIPPED: no OpenCL device");
        return;
    }
    let dir = bench_dir("right", &expected());
    let out = kw(
        &dir,
        &[
            "tune",
            "--t1",
            "smooth_T1.json",
            "--strategy",
            "exhaustive",
            "--samples",
            "1",
            "--log",
            "run.jsonl",
            "--wisdom-dir",
            "w",
            "--t4",
            "results.json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let log = std::fs::read_to_string(dir.join("run.jsonl")).unwrap();
    let (mut wrong, mut right) = (0, 0);
    for line in log.lines().skip(1) {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        if r["config"]["variant"].as_i64().unwrap() == 1 {
            wrong += 1;
            let failure = r["failure"].as_str().unwrap_or_default();
            assert!(failure.starts_with("wrong result"), "{line}");
        } else {
            right += 1;
            assert!(r["objective"].is_number(), "variant 0 must pass: {line}");
        }
    }
    // 4 x 3 x 2 x 2 configurations less the 4 with block_size_x * tile_size > 128.
    assert_eq!(
        (wrong, right),
        (22, 22),
        "every configuration, half of them wrong"
    );
    // The T4 results: one per evaluation, the wrong ones marked `correctness`.
    let t4: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(t4["schema_version"], "1.0.0");
    let results = t4["results"].as_array().unwrap();
    assert_eq!(results.len(), 44);
    for r in results {
        let wrong = r["configuration"]["variant"] == 1;
        let invalidity = if wrong { "correctness" } else { "correct" };
        assert_eq!(r["invalidity"], invalidity, "{r}");
        assert_eq!(r["correctness"], i32::from(!wrong), "{r}");
        if !wrong {
            assert!(r["measurements"][0]["value"].as_f64().unwrap() > 0.0);
            assert_eq!(r["times"]["runtimes"].as_array().unwrap().len(), 1);
        }
    }
    // `--t1` reuses its capture while nothing changes, and makes a new one when the kernel
    // file (not only the JSON file) changes.
    let again = |log: &str| {
        let out = kw(
            &dir,
            &[
                "tune",
                "--t1",
                "smooth_T1.json",
                "--budget",
                "1",
                "--log",
                log,
                "--wisdom-dir",
                "w",
            ],
        );
        assert!(out.status.success(), "{}", text(&out));
        text(&out)
    };
    assert!(again("a.jsonl").contains("using its capture"));
    let source = std::fs::read_to_string(dir.join("smooth.cl")).unwrap();
    std::fs::write(dir.join("smooth.cl"), format!("// edited\n{source}")).unwrap();
    assert!(again("b.jsonl").contains("captured captures/smooth_t1_test-"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_reference_comes_from_the_file_not_from_the_default_configuration() {
    if !have_opencl() {
        eprintln!("SKIPPED: no OpenCL device");
        return;
    }
    // A reference that no configuration computes: every output one more than right.
    let off: Vec<f32> = expected().iter().map(|v| v + 1.0).collect();
    let dir = bench_dir("off", &off);
    let out = kw(
        &dir,
        &["capture", "from-t1", "smooth_T1.json", "-o", "smooth.kwcap"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let capture = kw_capture::Capture::open(dir.join("smooth.kwcap")).unwrap();
    let reference = capture.read_buffer(&output_frame_name("out")).unwrap();
    assert_eq!(
        reference,
        bytes(&off),
        "the file's reference is the capture's"
    );
    let out = kw(
        &dir,
        &[
            "tune",
            "smooth.kwcap",
            "--budget",
            "4",
            "--samples",
            "1",
            "--log",
            "run.jsonl",
            "--wisdom-dir",
            "w",
        ],
    );
    // The configuration the capture was made with does not match the file's reference:
    // kw tune says so after that first evaluation and stops (every other would fail too).
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("does not reproduce the captured output"),
        "{}",
        text(&out)
    );
    let log = std::fs::read_to_string(dir.join("run.jsonl")).unwrap();
    let evals: Vec<&str> = log.lines().skip(1).collect();
    assert_eq!(evals.len(), 1);
    assert!(evals[0].contains("wrong result"), "{}", evals[0]);
    // A reference naming an input is refused, naming the file and the field.
    let json = std::fs::read_to_string(dir.join("smooth_T1.json")).unwrap();
    let bad = json.replace("\"TargetName\": \"out\"", "\"TargetName\": \"in\"");
    std::fs::write(dir.join("bad_T1.json"), bad).unwrap();
    let out = kw(
        &dir,
        &["capture", "from-t1", "bad_T1.json", "-o", "bad.kwcap"],
    );
    assert!(!out.status.success());
    let said = text(&out);
    assert!(
        said.contains("bad_T1.json")
            && said.contains("ReferenceArguments")
            && said.contains("`in`"),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
