//! `KW_DEVICE_NAME` lets a device use the wisdom of a similar GPU (its own test binary, since
//! it sets an environment variable).

mod common;

use kernel_wisdom::{demo_kernels, WisdomKernel};
use kw_core::config::Config;
use kw_core::wisdom::*;

#[test]
fn device_name_override_selects_the_other_devices_records() {
    let Some(device) = common::device() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("kw-devname-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let probe =
        WisdomKernel::new(demo_kernels::opencl::vector_add().unwrap(), device.clone()).unwrap();
    let mut config = Config::default();
    for (k, v) in [
        ("block_size_x", 32),
        ("elems_per_thread", 8),
        ("strided", 0),
        ("unroll", 0),
    ] {
        config.set(k, v);
    }
    let record = WisdomRecord {
        config: config.clone(),
        problem_size: vec![1 << 16],
        device: WisdomDevice {
            name: "Similar GPU 9000".into(),
            vendor: String::new(),
            // The device's own backend: selection never crosses backends.
            backend: device.info().backend.as_str().into(),
            architecture: "sm_00".into(),
            driver: String::new(),
        },
        objective: Objective {
            median_ms: 1.0,
            samples: 1,
            ..Default::default()
        },
        space: SpaceFingerprint::of(probe.space()),
        provenance: Provenance::default(),
        alternates: Vec::new(),
    };
    add_record(&dir, "vector_add", record, ReplacePolicy::IfBetter).unwrap();
    let plain = WisdomKernel::new(demo_kernels::opencl::vector_add().unwrap(), device.clone())
        .unwrap()
        .with_wisdom_dir(&dir);
    // Without the override the record is only another device of the same backend (step 4).
    assert_eq!(plain.choice(&[1 << 16]).step, Step::BackendNearestSize);
    std::env::set_var("KW_DEVICE_NAME", "Similar GPU 9000");
    let renamed = WisdomKernel::new(demo_kernels::opencl::vector_add().unwrap(), device)
        .unwrap()
        .with_wisdom_dir(&dir);
    let choice = renamed.choice(&[1 << 16]);
    assert_eq!(choice.step, Step::ExactDeviceExactSize);
    assert_eq!(choice.config, config);
}
