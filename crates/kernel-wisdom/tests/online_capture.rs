//! `KW_TUNE=online`: the first launch of a size no wisdom covers only enqueues device copies
//! of its buffers on its queue; the tuning's thread reads them back and writes the capture.
//! Checked by order of events, not by time: the read-back of the copies is held at a gate
//! until the test opens it, so the launch returning before any read-back, the capture
//! appearing only after, and the capture holding the launch's inputs although the
//! application overwrote them right after the launch are facts, not races. On PoCL (skipped
//! without an OpenCL device).

mod common;
#[path = "common/gated.rs"]
mod gated;

use common::floats;
use gated::{GatedDevice, HANG_GUARD};
use kernel_wisdom::WisdomKernel;
use kernel_wisdom::{demo_kernels, set_tune_settings, DeviceBuffer, TuneMode, TuneSettings};
use kw_core::backend::Device;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// The capture files under `dir` (recursively).
fn captures(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            out.extend(captures(&p));
        } else if p.extension().is_some_and(|x| x == "kwcap") {
            out.push(p);
        }
    }
    out
}

#[test]
fn the_first_launch_only_enqueues_copies_and_the_capture_holds_its_inputs() {
    let Some(real) = common::device() else {
        return;
    };
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let root =
        std::env::temp_dir().join(format!("kw-online-capture-{}-{nonce}", std::process::id()));
    let online = root.join("online");
    std::fs::create_dir_all(root.join("wisdom")).unwrap();
    // No `kw` to run: the tuning stops after writing the capture (and says why).
    std::env::set_var("KW_BIN", root.join("no-such-kw"));
    let mut settings = TuneSettings::new(TuneMode::Online);
    settings.dir = Some(online.clone());
    set_tune_settings(settings);

    // No configuration is gated: only the snapshots' read-backs are held.
    let gated = GatedDevice::new(real, "no-such-define", "-", false).with_held_snapshots();
    let gate = gated.snapshots().expect("held snapshots");
    let device: Arc<dyn Device> = Arc::new(gated);
    let kernel = WisdomKernel::new(
        demo_kernels::opencl::vector_add().unwrap(),
        Arc::clone(&device),
    )
    .unwrap()
    .with_wisdom_dir(root.join("wisdom"));
    let n = 10_007usize;
    let a_in: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b_in: Vec<f32> = (0..n).map(|i| 3.0 - i as f32).collect();
    let a = DeviceBuffer::from_slice(device.as_ref(), &a_in).unwrap();
    let b = DeviceBuffer::from_slice(device.as_ref(), &b_in).unwrap();
    let c = DeviceBuffer::<f32>::from_slice(device.as_ref(), &vec![-1.0; n]).unwrap();
    let args = [c.arg(), a.arg(), b.arg(), (n as i32).into()];

    kernel.launch(&args).unwrap();
    // The launch returned with every read-back held at the gate: nothing was copied to the
    // host on this thread, and no capture exists yet.
    {
        let seen = gate.seen();
        assert_eq!(seen.made.len(), 2, "copies before and after the launch");
        let me = std::thread::current().id();
        assert!(seen.made.iter().all(|t| *t == me), "made on the launch");
        assert!(
            seen.reads.iter().all(|(_, same)| !same),
            "read back on the launching thread: {:?}",
            seen.reads
        );
        assert!(seen.reads.is_empty(), "no read-back passed the closed gate");
    }
    assert!(
        captures(&online).is_empty(),
        "no capture before the read-back"
    );

    // The application overwrites its inputs and output at once (same queue, after the
    // launch), and launches again.
    a.write(&vec![7.0; n]).unwrap();
    b.write(&vec![9.0; n]).unwrap();
    kernel.launch(&args).unwrap();
    assert!(c.to_vec().unwrap().iter().all(|&v| v == 16.0));
    assert!(
        captures(&online).is_empty(),
        "still no capture: the gate holds"
    );

    gate.open();
    let began = Instant::now();
    let capture = loop {
        if let Some(p) = captures(&online).into_iter().next() {
            break p;
        }
        assert!(began.elapsed() < HANG_GUARD, "the capture never appeared");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let seen = gate.seen();
    assert_eq!(seen.reads.len(), 2, "{:?}", seen.reads);
    assert!(
        seen.reads
            .iter()
            .all(|(name, same)| !same && name == "kw-online-tuning"),
        "read back on the tuning's thread only: {:?}",
        seen.reads
    );
    drop(seen);
    let cap = kw_capture::Capture::open(&capture).unwrap();
    assert_eq!(floats(&cap.read_buffer("a.before").unwrap()), a_in);
    assert_eq!(floats(&cap.read_buffer("b.before").unwrap()), b_in);
    assert_eq!(floats(&cap.read_buffer("c.before").unwrap()), vec![-1.0; n]);
    let want: Vec<f32> = a_in.iter().zip(&b_in).map(|(x, y)| x + y).collect();
    assert_eq!(floats(&cap.read_buffer("c.after").unwrap()), want);
    let _ = std::fs::remove_dir_all(&root);
}
