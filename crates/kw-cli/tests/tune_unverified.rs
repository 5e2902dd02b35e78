//! `kw tune` never tunes a capture without a reference silently: a capture whose written
//! buffer has no recorded output (as earlier versions wrote for a launch that left its output
//! unchanged) is refused, naming the file and the buffer; `--allow-unverified` tunes it and
//! the summary and the wisdom record say UNVERIFIED. A capture with its reference is
//! verified, and its record says so. On PoCL.

use kernel_wisdom::{demo_kernels, list_devices, open_device, BackendKind, DeviceSelector};
use kw_capture::record::{capture_launch, HostArg};
use kw_capture::{write_capture, Capture, CaptureBuffer};
use kw_core::capture_meta::CaptureMetadata;
use std::path::{Path, PathBuf};
use std::process::Output;

fn kw(dir: &Path, args: &[&str]) -> Output {
    kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .current_dir(dir)
        .env("KW_USER_WISDOM_DIR", dir.join("wisdom"))
        .env("KW_STATE_DIR", dir.join("state"))
        .args(args)
        .output()
        .expect("running kw")
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A copy of `capture` without the output frame of argument 0 (`c`), as earlier versions of
/// kernel-wisdom wrote it when the launch left `c` unchanged.
fn without_reference(capture: &Path, dir: &Path, stem: &str) -> PathBuf {
    let c = Capture::open(capture).unwrap();
    let mut meta: CaptureMetadata = c.metadata_as().unwrap();
    assert!(
        meta.args[0].output.is_some(),
        "the original has a reference"
    );
    meta.args[0].output = None;
    let mut buffers = Vec::new();
    for a in &meta.args {
        for frame in a.input.iter().chain(&a.output) {
            let bytes = c.read_buffer(frame).unwrap();
            buffers.push(CaptureBuffer::new(frame, a.ty.name(), bytes));
        }
    }
    write_capture(dir, stem, &meta, buffers).unwrap()
}

fn record(wisdom_dir: &Path) -> serde_json::Value {
    let json = std::fs::read_to_string(wisdom_dir.join("vector_add.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    json["records"][0].clone()
}

#[test]
fn a_capture_without_reference_is_refused_unless_allowed() {
    let Some(index) = list_devices()
        .ok()
        .and_then(|l| {
            l.into_iter()
                .find(|d| d.info.backend == BackendKind::Opencl)
        })
        .map(|d| d.index)
    else {
        eprintln!("SKIPPED: no OpenCL platform");
        return;
    };
    let device = open_device(&DeviceSelector::Index(index)).unwrap();
    let dir = std::env::temp_dir().join(format!("kw-tune-unverified-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let n = 2048;
    let seq: Vec<f32> = (0..n).map(|i| (i % 13) as f32).collect();
    let with_ref = capture_launch(
        &dir,
        "va_ref",
        &demo_kernels::opencl::vector_add().unwrap(),
        None,
        device.as_ref(),
        &[
            HostArg::buffer(&vec![0f32; n]),
            HostArg::buffer(&seq),
            HostArg::buffer(&seq),
            HostArg::scalar(n as i32),
        ],
    )
    .unwrap();
    without_reference(&with_ref, &dir, "va_noref");
    let device_arg = index.to_string();
    let tune = |capture: &str, log: &str, wisdom: &str, extra: &[&str]| {
        let mut args = vec![
            "tune",
            capture,
            "--device",
            &device_arg,
            "--budget",
            "2",
            "--samples",
            "2",
            "--log",
            log,
            "--wisdom-dir",
            wisdom,
        ];
        args.extend_from_slice(extra);
        kw(&dir, &args)
    };

    // Refused: names the capture, the buffer and the way out; nothing tuned or written.
    let out = tune("va_noref.kwcap", "refused.jsonl", "wisdom-refused", &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    for needle in [
        "va_noref.kwcap",
        "refusing to tune without a reference",
        "buffer `c`",
        "--allow-unverified",
    ] {
        assert!(stderr.contains(needle), "missing `{needle}` in:\n{stderr}");
    }
    assert!(!stdout.contains("failures: none"), "{stdout}");
    // (The wisdom directory is checked for writability up front; no file is written in it.)
    let written = std::fs::read_dir(dir.join("wisdom-refused"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(written, 0, "no wisdom written");
    assert!(!dir.join("refused.jsonl").exists());

    // Allowed explicitly: tuned, and said to be unverified in the summary and the record.
    let out = tune(
        "va_noref.kwcap",
        "allowed.jsonl",
        "wisdom-unverified",
        &["--allow-unverified"],
    );
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("verification: UNVERIFIED (buffer `c`"),
        "{stdout}"
    );
    assert!(stderr.contains("tuning UNVERIFIED"), "{stderr}");
    let rec = record(&dir.join("wisdom-unverified"));
    assert_eq!(rec["provenance"]["verified"], false, "{rec}");
    assert!(rec["provenance"]["unverified_reason"]
        .as_str()
        .unwrap()
        .contains("buffer `c`"));
    let out = kw(
        &dir,
        &["wisdom", "show", "vector_add", "--dir", "wisdom-unverified"],
    );
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("UNVERIFIED"), "{stdout}");

    // With its reference: verified, and the record says so.
    let out = tune("va_ref.kwcap", "verified.jsonl", "wisdom-verified", &[]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("verification: every output checked against the captured reference"),
        "{stdout}"
    );
    assert!(!stdout.contains("UNVERIFIED") && !stderr.contains("UNVERIFIED"));
    let rec = record(&dir.join("wisdom-verified"));
    assert_eq!(rec["provenance"]["verified"], true, "{rec}");
    assert!(rec["provenance"].get("unverified_reason").is_none());

    // `--no-verify` is explicit too, and said as well.
    let out = tune(
        "va_ref.kwcap",
        "no-verify.jsonl",
        "wisdom-no-verify",
        &["--no-verify"],
    );
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("verification: UNVERIFIED (--no-verify"),
        "{stdout}"
    );
    let rec = record(&dir.join("wisdom-no-verify"));
    assert_eq!(rec["provenance"]["verified"], false, "{rec}");
    std::fs::remove_dir_all(&dir).unwrap();
}
