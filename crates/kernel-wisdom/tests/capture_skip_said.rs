//! Silence is never an answer (issue 30): with `KW_CAPTURE` asking for a kernel whose launch
//! already has an exact wisdom record, nothing is captured and one line at the default level
//! says why and how to capture anyway. The application runs in a child process (this test
//! binary re-executed) so that its standard error can be read; PoCL, SKIPPED without OpenCL.

mod common;

use kernel_wisdom::{demo_kernels, DeviceBuffer, WisdomKernel};
use kw_core::wisdom::{
    add_record, Objective, Provenance, ReplacePolicy, SpaceFingerprint, WisdomDevice, WisdomRecord,
};
use std::path::Path;

const CHILD_ENV: &str = "KW_CAPTURE_SKIP_SAID_CHILD";

/// The child: vector_add at 1000 elements, launched three times.
#[test]
fn child_app() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let Some(device) = common::device() else {
        return;
    };
    let kernel = WisdomKernel::new(demo_kernels::opencl::vector_add().unwrap(), device.clone())
        .unwrap()
        .with_wisdom_dir(Path::new(&dir).join("wisdom"));
    let n = 1000;
    let a = DeviceBuffer::from_slice(device.as_ref(), &vec![1f32; n]).unwrap();
    let c = DeviceBuffer::<f32>::new(device.as_ref(), n).unwrap();
    for _ in 0..3 {
        kernel
            .launch(&[c.arg(), a.arg(), a.arg(), (n as i32).into()])
            .unwrap();
    }
    kernel_wisdom::flush_captures();
}

#[test]
fn a_capture_not_made_because_of_exact_wisdom_is_said_once() {
    let Some(device) = common::device() else {
        return;
    };
    let (index, _) = common::opencl_device().unwrap();
    let root = std::env::temp_dir().join(format!(
        "kw-capture-skip-said-{}-{}",
        std::process::id(),
        kw_core::files::nonce(0)
    ));
    std::fs::create_dir_all(&root).unwrap();
    let def = demo_kernels::opencl::vector_add().unwrap();
    let space = def.space(Some(device.info())).unwrap();
    let record = WisdomRecord {
        config: def.default_config(),
        problem_size: vec![1000],
        device: WisdomDevice::of(device.info()),
        objective: Objective {
            median_ms: 1.0,
            samples: 3,
            ..Default::default()
        },
        space: SpaceFingerprint::of(&space),
        provenance: Provenance::default(),
        alternates: Vec::new(),
    };
    add_record(
        &root.join("wisdom"),
        "vector_add",
        record,
        ReplacePolicy::Always,
    )
    .unwrap();
    let out = kw_core::child_env::command(std::env::current_exe().unwrap())
        .args(["--exact", "child_app", "--nocapture", "--test-threads=1"])
        .current_dir(&root)
        .env(CHILD_ENV, &root)
        .env(kernel_wisdom::DEVICE_ENV, index.to_string())
        .env("KW_CAPTURE", "vector_add")
        .env("KW_CAPTURE_DIR", root.join("caps"))
        .env_remove("KW_CAPTURE_FORCE")
        .env_remove("KW_WISDOM_PATH")
        .env_remove("KW_LOG")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed:\n{stderr}");
    let said = "not captured: an exact wisdom record exists";
    assert_eq!(stderr.matches(said).count(), 1, "said once:\n{stderr}");
    assert!(stderr.contains("KW_CAPTURE_FORCE=1"), "{stderr}");
    let written = std::fs::read_dir(root.join("caps")).map_or(0, |d| d.count());
    assert_eq!(written, 0, "nothing captured");
    let _ = std::fs::remove_dir_all(&root);
}
