//! Runtime selection on the first OpenCL device (PoCL in CI): records in a wisdom directory pick the configuration per
//! problem size; stale records and corrupt files never stop the kernel from launching.

mod common;

use kernel_wisdom::{demo_kernels, DeviceBuffer, WisdomKernel};
use kw_core::rng::Rng;
use kw_core::wisdom::*;
use kw_core::{device::DeviceInfo, space::TuningSpace, value::Value};
use std::path::PathBuf;

fn temp_dir(name: &str) -> PathBuf {
    common::temp_dir(&format!("select-{name}"))
}

fn record(
    info: &DeviceInfo,
    name: &str,
    space: &TuningSpace,
    n: i64,
    bx: i64,
    ept: i64,
) -> WisdomRecord {
    let device = WisdomDevice {
        name: name.into(),
        ..WisdomDevice::of(info)
    };
    common::vector_add_record(device, space, n, bx, ept)
}

fn run(kernel: &WisdomKernel, n: usize) -> Vec<f32> {
    let device = kernel.device().clone();
    let mut rng = Rng::new(n as u64);
    let a = common::random_floats(&mut rng, n);
    let b = common::random_floats(&mut rng, n);
    let da = DeviceBuffer::from_slice(device.as_ref(), &a).unwrap();
    let db = DeviceBuffer::from_slice(device.as_ref(), &b).unwrap();
    let dc = DeviceBuffer::from_slice(device.as_ref(), &vec![f32::NAN; n]).unwrap();
    kernel
        .launch(&[dc.arg(), da.arg(), db.arg(), (n as i32).into()])
        .unwrap();
    let c = dc.to_vec().unwrap();
    assert_eq!(c, demo_kernels::vector_add_reference(&a, &b), "n = {n}");
    c
}

#[test]
fn records_select_per_problem_size_and_launch_correctly() {
    let Some(device) = common::device() else {
        return;
    };
    let dir = temp_dir("steps");
    let probe =
        WisdomKernel::new(demo_kernels::opencl::vector_add().unwrap(), device.clone()).unwrap();
    let info = device.info().clone();
    let space = probe.space().clone();
    for r in [
        record(&info, &info.name, &space, 1000, 64, 2),
        record(&info, &info.name, &space, 1_000_000, 128, 4),
        record(&info, "Some Other Device", &space, 5000, 32, 8),
    ] {
        add_record(&dir, "vector_add", r, ReplacePolicy::IfBetter).unwrap();
    }
    let kernel = WisdomKernel::new(demo_kernels::opencl::vector_add().unwrap(), device.clone())
        .unwrap()
        .with_wisdom_dir(&dir);
    assert_eq!(kernel.wisdom().records().len(), 3);

    // Step 1: exact size on this device.
    let c = kernel.choice(&[1000]);
    assert_eq!(c.step, Step::ExactDeviceExactSize);
    run(&kernel, 1000);
    assert_eq!(
        kernel
            .config_for(&[1000, 1, 1])
            .unwrap()
            .get("block_size_x"),
        Some(&Value::Int(64))
    );
    // Step 2: nearest size on this device (500,000 is nearer 1,000,000 than 1,000 on a log
    // scale; its 977 blocks fill a GPU too, so the fill rule keeps it on any device).
    assert_eq!(kernel.choice(&[500_000]).step, Step::DeviceNearestSize);
    run(&kernel, 500_000);
    let cfg = kernel.config_for(&[500_000, 1, 1]).unwrap();
    assert_eq!(cfg.get("elems_per_thread"), Some(&Value::Int(4)));
    // A new problem size may select another configuration than the first launch's.
    assert_ne!(
        kernel.config_for(&[1000, 1, 1]),
        kernel.config_for(&[500_000, 1, 1])
    );
}

#[test]
fn stale_records_and_corrupt_files_fall_back_and_still_launch() {
    let Some(device) = common::device() else {
        return;
    };
    let probe =
        WisdomKernel::new(demo_kernels::opencl::vector_add().unwrap(), device.clone()).unwrap();
    let info = device.info().clone();
    let space = probe.space().clone();
    // A stale record: a value the kernel no longer declares.
    let stale_dir = temp_dir("stale");
    let mut r = record(&info, &info.name, &space, 4096, 64, 2);
    r.config.set("block_size_x", 48);
    add_record(&stale_dir, "vector_add", r, ReplacePolicy::IfBetter).unwrap();
    let kernel = WisdomKernel::new(demo_kernels::opencl::vector_add().unwrap(), device.clone())
        .unwrap()
        .with_wisdom_dir(&stale_dir);
    assert_eq!(kernel.choice(&[4096]).step, Step::Default);
    run(&kernel, 4096);
    assert_eq!(
        kernel.config_for(&[4096, 1, 1]).as_ref(),
        Some(kernel.default_config())
    );
    // A corrupt file: skipped, default configuration, correct results.
    let bad_dir = temp_dir("corrupt");
    std::fs::write(
        bad_dir.join("vector_add.json"),
        "{\"format\": \"kernel-wisdom\", \"version\": 1, \"records\": [",
    )
    .unwrap();
    let kernel = WisdomKernel::new(demo_kernels::opencl::vector_add().unwrap(), device.clone())
        .unwrap()
        .with_wisdom_dir(&bad_dir);
    assert!(kernel.wisdom().file().is_none());
    run(&kernel, 777);
}

/// Every file on the search path takes part: a file with no record for this device
/// (`KW_WISDOM_PATH=/other-gpu`) does not hide the application's exact record; on equal steps
/// the earlier file wins. (`WisdomSource::load` is given the path, so that no test depends on
/// the process environment.)
#[test]
fn every_file_on_the_search_path_is_considered() {
    let Some(device) = common::device() else {
        return;
    };
    let probe =
        WisdomKernel::new(demo_kernels::opencl::vector_add().unwrap(), device.clone()).unwrap();
    let info = device.info().clone();
    let space = probe.space().clone();
    let other = temp_dir("path-other");
    let own = temp_dir("path-own");
    let mut foreign = record(&info, "Another GPU", &space, 1000, 32, 8);
    foreign.device.architecture = "another-arch".into();
    add_record(&other, "vector_add", foreign, ReplacePolicy::IfBetter).unwrap();
    add_record(
        &own,
        "vector_add",
        record(&info, &info.name, &space, 1000, 64, 2),
        ReplacePolicy::IfBetter,
    )
    .unwrap();
    let source = kernel_wisdom::WisdomSource::load(
        "vector_add",
        &[other.clone(), own.clone()],
        &info,
        &space,
        probe.default_config(),
    );
    assert_eq!(source.files().len(), 2);
    let choice = source.choose(&[1000]);
    assert_eq!(choice.step, Step::ExactDeviceExactSize);
    assert_eq!(
        choice.file.as_deref(),
        Some(own.join("vector_add.json").as_path())
    );
    assert_eq!(choice.config.get("block_size_x"), Some(&Value::Int(64)));
    // The same exact record in both files: the earlier file on the path wins.
    add_record(
        &other,
        "vector_add",
        record(&info, &info.name, &space, 1000, 128, 4),
        ReplacePolicy::IfBetter,
    )
    .unwrap();
    let source = kernel_wisdom::WisdomSource::load(
        "vector_add",
        &[other.clone(), own.clone()],
        &info,
        &space,
        probe.default_config(),
    );
    let choice = source.choose(&[1000]);
    assert_eq!(
        choice.file.as_deref(),
        Some(other.join("vector_add.json").as_path())
    );
    assert_eq!(choice.config.get("block_size_x"), Some(&Value::Int(128)));
    // No usable record anywhere: the default, and no file is named.
    let empty = temp_dir("path-empty");
    let source = kernel_wisdom::WisdomSource::load(
        "vector_add",
        &[empty],
        &info,
        &space,
        probe.default_config(),
    );
    let choice = source.choose(&[1000]);
    assert_eq!(choice.step, Step::Default);
    assert!(choice.file.is_none());
}

/// Wisdom embedded in the program (`with_embedded_wisdom`: what the library ships) is
/// selected when no file on the path has a record for the size; a file on the path wins
/// where both match at the same step; an embedded file of another kernel is skipped.
#[test]
fn embedded_wisdom_is_searched_after_the_path() {
    let Some(device) = common::device() else {
        return;
    };
    let dir = temp_dir("embedded");
    let probe =
        WisdomKernel::new(demo_kernels::opencl::vector_add().unwrap(), device.clone()).unwrap();
    let (info, space) = (device.info().clone(), probe.space().clone());
    let mut embedded = WisdomFile::new("vector_add");
    embedded.records = vec![
        record(&info, &info.name, &space, 1000, 64, 2),
        record(&info, &info.name, &space, 3000, 32, 4),
    ];
    let json: &'static str = Box::leak(serde_json::to_string(&embedded).unwrap().into_boxed_str());
    let mut other = WisdomFile::new("not_vector_add");
    other.records = vec![record(&info, &info.name, &space, 3000, 256, 8)];
    let other: &'static str = Box::leak(serde_json::to_string(&other).unwrap().into_boxed_str());
    // On disk: a record for 1000 only.
    add_record(
        &dir,
        "vector_add",
        record(&info, &info.name, &space, 1000, 128, 1),
        ReplacePolicy::Always,
    )
    .unwrap();
    let kernel = WisdomKernel::new(demo_kernels::opencl::vector_add().unwrap(), device.clone())
        .unwrap()
        .with_wisdom_dir(&dir)
        .with_embedded_wisdom("embedded:other.json", other)
        .with_embedded_wisdom("embedded:vector_add.json", json);
    let at = |n: i64| kernel.choice(&[n]);
    assert_eq!(
        at(1000).config.get("block_size_x"),
        Some(&Value::Int(128)),
        "the disk wins"
    );
    let c = at(3000);
    assert_eq!(
        c.config.get("block_size_x"),
        Some(&Value::Int(32)),
        "embedded"
    );
    assert_eq!(
        c.file.unwrap().display().to_string(),
        "embedded:vector_add.json"
    );
    run(&kernel, 3000);
    let _ = std::fs::remove_dir_all(&dir);
}
