//! Set-up shared by the `kw` binary's tests (each test binary uses part of it).
#![allow(dead_code)]

use kernel_wisdom::{demo_kernels, list_devices, open_device, Device, DeviceSelector};
use kw_capture::record::{capture_launch, HostArg};
use kw_core::device::BackendKind;
use std::path::PathBuf;
use std::sync::Arc;

/// The index of the first OpenCL device (chosen explicitly: on a GPU machine device 0 may be
/// CUDA; the first OpenCL device is a GPU where there is one, PoCL in CI); `None` (after
/// saying so) without one.
pub fn opencl_index() -> Option<usize> {
    let found = list_devices().ok().and_then(|l| {
        l.into_iter()
            .find(|d| d.info.backend == BackendKind::Opencl)
    });
    if found.is_none() {
        eprintln!("SKIPPED: no OpenCL device");
    }
    found.map(|d| d.index)
}

/// A vector_add capture of `n` elements made on the first OpenCL device, in a fresh directory
/// named after `test`: the directory, the capture, the device's index (as `--device` takes
/// it) and the device. `None` (after saying so) without an OpenCL device.
#[allow(dead_code)]
pub fn vector_add_capture(
    test: &str,
    n: usize,
) -> Option<(PathBuf, PathBuf, String, Arc<dyn Device>)> {
    let index = opencl_index()?;
    let dir = std::env::temp_dir().join(format!("kw-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let device = open_device(&DeviceSelector::Index(index)).unwrap();
    let capture = capture_vector_add(&dir, "va", n, device.as_ref());
    Some((dir, capture, index.to_string(), device))
}

/// A vector_add launch of `n` elements on `device`, captured into `dir` as `STEM.kwcap`.
#[allow(dead_code)]
pub fn capture_vector_add(
    dir: &std::path::Path,
    stem: &str,
    n: usize,
    device: &dyn Device,
) -> PathBuf {
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let args = [
        HostArg::buffer(&vec![0f32; n]),
        HostArg::buffer(&x),
        HostArg::buffer(&x),
        HostArg::scalar(n as i32),
    ];
    let def = demo_kernels::opencl::vector_add().unwrap();
    capture_launch(dir, stem, &def, None, device, &args).unwrap()
}

/// A fresh directory for one test (pid and a nonce in its name, so that runs side by side
/// never share it).
#[allow(dead_code)]
pub fn unique_dir(test: &str) -> PathBuf {
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!("kw-{test}-{}-{nonce}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("creating the test directory");
    dir
}

/// `kw` to run in `dir`, with the per-user wisdom directory and the state directory inside it
/// (`dir/wisdom`, `dir/state`): the user's own take no part.
#[allow(dead_code)]
pub fn kw_in(dir: &std::path::Path) -> std::process::Command {
    let mut cmd = kw_core::child_env::command(env!("CARGO_BIN_EXE_kw"));
    cmd.current_dir(dir)
        .env("KW_USER_WISDOM_DIR", dir.join("wisdom"))
        .env("KW_STATE_DIR", dir.join("state"));
    cmd
}

/// `kw tune` arguments of a short run on device `idx`: 2 samples, no warm-up, one compile
/// thread, logged to `run.jsonl`.
#[allow(dead_code)]
pub fn quick(idx: &str) -> [&str; 10] {
    [
        "--device",
        idx,
        "--samples",
        "2",
        "--warmup",
        "0",
        "--compile-threads",
        "1",
        "--log",
        "run.jsonl",
    ]
}

/// A Kernel Tuner cache file of one parameter `a` (1, 2, 3) with these `time` values (JSON
/// text: numbers or failure strings), written as `name` in `dir`.
pub fn write_cache(dir: &std::path::Path, name: &str, times: [&str; 3]) {
    let cache: Vec<String> = times
        .iter()
        .enumerate()
        .map(|(i, t)| format!(r#""{n}":{{"a":{n},"time":{t}}}"#, n = i + 1))
        .collect();
    let text = format!(
        r#"{{"tune_params_keys":["a"],"tune_params":{{"a":[1,2,3]}},"cache":{{{}}}}}"#,
        cache.join(",")
    );
    std::fs::write(dir.join(name), text).unwrap();
}
