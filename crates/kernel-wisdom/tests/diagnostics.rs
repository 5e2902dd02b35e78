//! One diagnostics path: a stale wisdom record is reported once per process, only for the
//! directories actually searched (`with_wisdom_dir` replaces `./wisdom` before anything is
//! loaded), and `KW_LOG` filters by level. The application runs in a child process (this test
//! binary re-executed) so that its standard error can be read; PoCL, SKIPPED without OpenCL.

mod common;

use kernel_wisdom::{demo_kernels, DeviceBuffer, WisdomKernel};
use kw_core::config::Config;
use kw_core::wisdom::{
    add_record, wisdom_file_name, Objective, Provenance, ReplacePolicy, SpaceFingerprint,
    WisdomDevice, WisdomFile, WisdomRecord,
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
        alternates: Vec::new(),
    };
    add_record(dir, "vector_add", record, ReplacePolicy::Always).unwrap();
}

/// Puts an invalid record (a time of 0 ms, rejected when the file is loaded) before the
/// records of `dir`'s `vector_add` wisdom file: the stale record becomes record #2 of the file
/// (the number `kw wisdom show` gives it), the first of the records that load. Returns the
/// file.
fn prepend_rejected(dir: &Path) -> PathBuf {
    let path = dir.join(wisdom_file_name("vector_add"));
    let mut file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let records = file["records"].as_array_mut().unwrap();
    let mut rejected = records[0].clone();
    rejected["objective"]["median_ms"] = 0.into();
    records.insert(0, rejected);
    std::fs::write(&path, serde_json::to_vec_pretty(&file).unwrap()).unwrap();
    path
}

fn run_child(root: &Path, level: Option<&str>) -> String {
    run_child_on(root, level, None)
}

/// [`run_child`] with `KW_WISDOM_PATH` set to `wisdom_path` (unset: `None`).
fn run_child_on(root: &Path, level: Option<&str>, wisdom_path: Option<&Path>) -> String {
    let (index, _) = common::opencl_device().unwrap();
    let mut cmd = kw_core::child_env::command(std::env::current_exe().unwrap());
    cmd.args(["--exact", "child_app", "--nocapture", "--test-threads=1"])
        .current_dir(root)
        .env(CHILD_ENV, root)
        .env(kernel_wisdom::DEVICE_ENV, index.to_string())
        .env_remove("KW_WISDOM_PATH")
        .env_remove("KW_CAPTURE");
    if let Some(p) = wisdom_path {
        cmd.env("KW_WISDOM_PATH", p);
    }
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
    // The application's file starts with a rejected record: the stale record is the file's
    // second (what `kw wisdom show` numbers it, by its place in the file), the first loaded.
    let app_file = prepend_rejected(&root.join("app"));
    let loaded = WisdomFile::load(&app_file).unwrap();
    assert_eq!(loaded.records.len(), 1, "{:?}", loaded.rejected);
    assert!(
        loaded.rejected[0].starts_with("record #1: "),
        "{:?}",
        loaded.rejected
    );
    assert_eq!(loaded.record_numbers(), vec![2]);

    let stderr = run_child(&root, None);
    let ignoring: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("ignoring record"))
        .collect();
    assert_eq!(ignoring.len(), 1, "one warning for one cause:\n{stderr}");
    assert!(ignoring[0].starts_with("kernel-wisdom: "), "{stderr}");
    assert!(
        ignoring[0].contains(&format!("{}: ", app_file.display())),
        "names the file of the searched directory:\n{stderr}"
    );
    assert!(
        ignoring[0].contains("ignoring record #2 of `vector_add`"),
        "numbers the record by its place in the file, as `kw wisdom show` does:\n{stderr}"
    );
    // The rejected record is reported too, by the same numbering.
    assert!(
        stderr
            .lines()
            .any(|l| l.contains(&app_file.display().to_string()) && l.contains("record #1: ")),
        "the rejected record is named:\n{stderr}"
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
    // KW_WISDOM_PATH naming a wisdom file instead of its directory is said, once.
    let named_file = run_child_on(&root, None, Some(&app_file));
    assert_eq!(
        named_file.matches("which is not a directory").count(),
        1,
        "{named_file}"
    );
    assert!(
        named_file.contains(&app_file.display().to_string()),
        "{named_file}"
    );
    let _ = std::fs::remove_dir_all(&root);
}
