//! `kw capture ls/show/verify` on real capture files.

use kw_capture::{write_capture, CaptureBuffer};
use std::path::Path;

fn kw(args: &[&str]) -> (bool, String, String) {
    let out = kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"))
        .args(args)
        .output()
        .expect("run kw");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn ls_show_verify() {
    let dir = std::env::temp_dir().join(format!("kw-cli-capture-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let meta = serde_json::json!({
        "tuning_key": "vector_add_f32",
        "kernel": {"name": "vector_add"},
        "problem_size": [1000, 1, 1],
        "device": {"name": "Test GPU", "backend": "opencl"},
        "provenance": {"date": "2026-01-02T03:04:05Z"},
        "args": [{"name": "c", "kind": "buffer", "bytes": 4000}, {"name": "n", "value": 1000}],
    });
    let data: Vec<u8> = (0..4000u32).map(|i| (i % 251) as u8).collect();
    let p = write_capture(
        &dir,
        "vector_add_f32_1000",
        &meta,
        vec![
            CaptureBuffer::new("a", "f32", data.clone()),
            CaptureBuffer::new("b", "f32", data.clone()),
            CaptureBuffer::new("c", "f32", vec![0u8; 4000]),
        ],
    )
    .unwrap();
    let ps = p.to_str().unwrap();

    let (ok, out, err) = kw(&["capture", "ls", dir.to_str().unwrap()]);
    assert!(ok, "{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("vector_add_f32_1000.kwcap"))
        .expect(&out);
    for want in [
        "vector_add_f32",
        "1000x1x1",
        "2026-01-02T03:04:05Z",
        "11.7 KiB",
    ] {
        assert!(line.contains(want), "{want} missing in {line}");
    }

    let (ok, out, err) = kw(&["capture", "show", ps]);
    assert!(ok, "{err}");
    for want in [
        "vector_add",
        "1000x1x1",
        "Test GPU",
        "\"name\":\"n\"",
        "(shared frame)",
        "2026-01-02",
    ] {
        assert!(out.contains(want), "{want} missing in {out}");
    }
    let (ok, out, _) = kw(&["capture", "show", "--json", ps]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["tuning_key"], "vector_add_f32");
    assert_eq!(v["raw_bytes"], 12000);
    assert_eq!(v["buffers"][1]["shared"], true);

    let (ok, out, _) = kw(&["capture", "verify", ps]);
    assert!(ok && out.starts_with("ok"), "{out}");

    // A corrupted copy fails verification, naming the file; the exit status is non-zero.
    let bad = dir.join("bad.kwcap");
    let mut bytes = std::fs::read(&p).unwrap();
    bytes[100] ^= 0x55;
    std::fs::write(&bad, bytes).unwrap();
    let (ok, out, err) = kw(&["capture", "verify", ps, bad.to_str().unwrap()]);
    assert!(!ok);
    assert!(out.contains("FAILED") && out.contains("bad.kwcap"), "{out}");
    assert!(err.contains("1 of 2"), "{err}");
    let (ok, _, err) = kw(&[
        "capture",
        "show",
        Path::new(&dir).join("missing.kwcap").to_str().unwrap(),
    ]);
    assert!(!ok && err.contains("missing.kwcap"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `kw tune` with nothing to tune says what it takes (captures, `--t1` or `--bundled`) and
/// how captures are made, before it touches a device or a directory.
#[test]
fn tune_without_input_says_what_it_takes() {
    let (ok, _, err) = kw(&["tune", "--budget", "3"]);
    assert!(!ok);
    for part in ["nothing to tune", "KW_CAPTURE=", "--t1 FILE", "--bundled"] {
        assert!(err.contains(part), "{part}: {err}");
    }
    // A --stop item without a value, or an unknown name, lists what is expected.
    let (ok, _, err) = kw(&["tune", "x.kwcap", "--stop", "fraction"]);
    assert!(!ok && err.contains("expected NAME=VALUE"), "{err}");
    let (ok, _, err) = kw(&["tune", "x.kwcap", "--stop", "foo=1"]);
    assert!(!ok && err.contains("no-improvement-time"), "{err}");
    // Counts are whole numbers from 1, times above 0: a run that could measure nothing is
    // refused before it starts.
    for (item, said) in [
        ("evals=0", "a count of evaluations, 1 or more"),
        ("no-improvement=-3", "a count of evaluations, 1 or more"),
        ("evals=2.7", "a count of evaluations, 1 or more"),
        ("no-improvement-time=0s", "a time above 0"),
        ("time=0.0000000001s", "1 ns or more"),
    ] {
        let (ok, _, err) = kw(&["tune", "x.kwcap", "--stop", item]);
        assert!(!ok && err.contains(said), "{item}: {err}");
    }
}
