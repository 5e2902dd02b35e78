//! One diagnostics path: a stale wisdom record is reported once per process, only for the
//! directories actually searched (`with_wisdom_dir` replaces `./wisdom` before anything is
//! loaded), and `KW_LOG` filters by level. The application runs in a child process (this test
//! binary re-executed) so that its standard error can be read; PoCL, SKIPPED without OpenCL.

mod common;

use kernel_wisdom::{demo_kernels, DeviceBuffer, WisdomKernel};
use kw_core::config::Config;
use kw_core::wisdom::{
    add_record, Objective, Provenance, ReplacePolicy, SpaceFingerprint, WisdomDevice, WisdomRecord,
};
use std::path::{Path, PathBuf};

const CHILD_ENV: &str = "KW_DIAGNOSTICS_CHILD";

/// The child: two kernels over the same stale wisdom directory, each launched twice.
#[test]
fn child_app() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let Some(device) = common::device() else {
        return;
    };
    for _ in 0..2 {
        let kernel = WisdomKernel::new(demo_kernels::opencl::vector_add().unwrap(), device.clone())
            .unwrap()
            .with_wisdom_dir(Path::new(&dir).join("app"));
        let n = 1000;
        let a = DeviceBuffer::from_slice(device.as_ref(), &vec![1f32; n]).unwrap();
        let c = DeviceBuffer::<f32>::new(device.as_ref(), n).unwrap();
        for _ in 0..2 {
            kernel
                .launch(&[c.arg(), a.arg(), a.arg(), (n as i32).into()])
                .unwrap();
        }
        assert_eq!(c.to_vec().unwrap(), vec![2f32; n]);
    }
}

/// A record whose configuration the kernel no longer declares (`block_size_x = 48`).
fn write_stale(
    dir: &Path,
    device: &kw_core::device::DeviceInfo,
    space: &kw_core::space::TuningSpace,
) {
    let mut config = Config::default();
    config.set("block_size_x", 48);
    config.set("elems_per_thread", 1);
    config.set("strided", 0);
    config.set("unroll", 0);
    let record = WisdomRecord {
        config,
        problem_size: vec![1000],
        device: WisdomDevice::of(device),
        objective: Objective {
            median_ms: 1.0,
            samples: 3,
            ..Default::default()
        },
        space: SpaceFingerprint::of(space),
        provenance: Provenance::default(),
    };
    add_record(dir, "vector_add", record, ReplacePolicy::Always).unwrap();
}

fn run_child(root: &Path, level: Option<&str>) -> String {
    let (index, _) = common::opencl_device().unwrap();
    let mut cmd = kw_core::child_env::command(std::env::current_exe().unwrap());
    cmd.args(["--exact", "child_app", "--nocapture", "--test-threads=1"])
        .current_dir(root)
        .env(CHILD_ENV, root)
        .env(kernel_wisdom::DEVICE_ENV, index.to_string())
        .env_remove("KW_WISDOM_PATH")
        .env_remove("KW_CAPTURE");
    match level {
        Some(l) => cmd.env("KW_LOG", l),
        None => cmd.env_remove("KW_LOG"),
    };
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "child failed:\n{stderr}");
    stderr
}

#[test]
fn each_warning_once_and_only_for_searched_directories() {
    let Some(device) = common::device() else {
        return;
    };
    let root: PathBuf = std::env::temp_dir().join(format!("kw-diagnostics-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let space = WisdomKernel::new(demo_kernels::opencl::vector_add().unwrap(), device.clone())
        .unwrap()
        .space()
        .clone();
    // Both the default directory (`./wisdom`, replaced) and the application's hold one.
    write_stale(&root.join("wisdom"), device.info(), &space);
    write_stale(&root.join("app"), device.info(), &space);

    let stderr = run_child(&root, None);
    let ignoring: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("ignoring record"))
        .collect();
    assert_eq!(ignoring.len(), 1, "one warning for one cause:\n{stderr}");
    assert!(ignoring[0].starts_with("kernel-wisdom: "), "{stderr}");
    assert!(
        ignoring[0].contains(&root.join("app").display().to_string()),
        "names the file of the searched directory:\n{stderr}"
    );
    assert!(
        !stderr.contains(&root.join("wisdom").display().to_string())
            && !stderr.contains("wisdom/vector_add"),
        "the replaced default directory is never read:\n{stderr}"
    );

    // KW_LOG=error hides warnings; KW_LOG=debug adds the selection.
    let quiet = run_child(&root, Some("error"));
    assert!(!quiet.contains("ignoring record"), "{quiet}");
    let debug = run_child(&root, Some("debug"));
    assert_eq!(debug.matches("ignoring record").count(), 1, "{debug}");
    assert!(
        debug.contains("kernel-wisdom: no usable record in 1 file(s) on the search path"),
        "{debug}"
    );
    assert!(
        !stderr.contains("no usable record"),
        "a debug line at the default level"
    );
    let _ = std::fs::remove_dir_all(&root);
}
