//! A captured launch that leaves its output as it found it (an idempotent kernel run again on
//! the same inputs) still records that output: every buffer the definition declares written
//! (`Out`/`InOut`) has its "after" frame, the reference `kw tune` verifies against. Its own
//! test binary: capture settings are process-wide.

mod common;

use common::floats;
use kernel_wisdom::{demo_kernels, flush_captures, DeviceBuffer, WisdomKernel};
use kernel_wisdom::{set_capture_settings, CaptureSettings};
use kw_capture::Capture;
use kw_core::capture_meta::CaptureMetadata;

#[test]
fn an_unchanged_output_is_still_recorded() {
    let Some(dev) = common::device() else { return };
    let dir = std::env::temp_dir().join(format!("kw-capture-written-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut settings = CaptureSettings::new(["vector_add"]);
    settings.dir = dir.clone();
    settings.skip = 1; // the second launch: `c` already holds a + b
    set_capture_settings(Some(settings));

    let kernel =
        WisdomKernel::new(demo_kernels::opencl::vector_add().unwrap(), dev.clone()).unwrap();
    let n = 1000;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
    let b: Vec<f32> = (0..n).map(|i| 1.0 - i as f32).collect();
    let da = DeviceBuffer::from_slice(dev.as_ref(), &a).unwrap();
    let db = DeviceBuffer::from_slice(dev.as_ref(), &b).unwrap();
    let dc = DeviceBuffer::<f32>::new(dev.as_ref(), n).unwrap();
    for _ in 0..2 {
        kernel
            .launch(&[dc.arg(), da.arg(), db.arg(), (n as i32).into()])
            .unwrap();
    }
    let written: Vec<_> = flush_captures().into_iter().map(Result::unwrap).collect();
    set_capture_settings(None);
    assert_eq!(written.len(), 1, "{written:?}");

    let c = Capture::open(&written[0]).unwrap();
    let m: CaptureMetadata = c.metadata_as().unwrap();
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    let before = floats(&c.read_buffer(m.args[0].input.as_ref().unwrap()).unwrap());
    assert_eq!(before, want, "the captured launch found c = a + b already");
    let output = m.args[0]
        .output
        .as_ref()
        .expect("`c` is declared Out: its output is recorded though unchanged");
    assert_eq!(floats(&c.read_buffer(output).unwrap()), want);
    // Inputs the launch neither declares written nor changes have no "after" frame.
    assert!(m.args[1].output.is_none() && m.args[2].output.is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}
