//! Captures with hostile metadata load as typed errors, before anything is allocated: an
//! argument length whose size in bytes overflows, or one larger than the device's memory.

use kernel_wisdom::{list_devices, open_device, DeviceSelector, KernelBuilder, Source};
use kw_capture::record::{capture_launch, HostArg};
use kw_capture::{Capture, CaptureBuffer, CaptureWriter};
use kw_core::backend::Device;
use kw_core::device::BackendKind;
use kw_replay::{ReplayError, ReplaySession};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The first OpenCL device (chosen explicitly: device 0 may be CUDA on a GPU machine).
fn opencl() -> Option<Arc<dyn Device>> {
    let Some(d) = list_devices().ok().and_then(|l| {
        l.into_iter()
            .find(|d| d.info.backend == BackendKind::Opencl)
    }) else {
        eprintln!("SKIPPED: no OpenCL device");
        return None;
    };
    Some(open_device(&DeviceSelector::Index(d.index)).unwrap())
}

/// A copy of `capture` named `stem` whose metadata `edit` changed.
/// `copy(y, x, n)` in OpenCL with the statement `body` per element (`i`), tunable block size.
fn copy_def(body: &str) -> kernel_wisdom::KernelDef {
    let src = format!(
        "__kernel void copy(__global float* y, __global const float* x, const int n) {{\n\
         int i = get_global_id(0); if (i < n) {body}; }}"
    );
    let mut b = KernelBuilder::new("copy", Source::text("copy.cl", src));
    let bx = b.tune("block_size_x", [32, 64], 32);
    b.problem_size([kernel_wisdom::arg("n")])
        .block_size(bx.clone(), 1, 1)
        .grid_divisors(bx, 1, 1)
        .output::<f32>("y")
        .input::<f32>("x")
        .scalar::<i32>("n");
    b.build().unwrap()
}

fn rewrite(capture: &Path, stem: &str, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let c = Capture::open(capture).unwrap();
    let mut meta = c.metadata().clone();
    edit(&mut meta);
    let buffers: Vec<CaptureBuffer> = c
        .buffers()
        .map(|b| CaptureBuffer::new(b.name, b.elem_type, c.read_buffer(b.name).unwrap()))
        .collect();
    let dir = capture.parent().unwrap();
    CaptureWriter::default()
        .write(dir, stem, &meta, &buffers)
        .unwrap()
        .path
}

/// A fresh directory `kw-replay-TAG-PID` holding a capture of `copy` over 64 floats, which
/// loads.
fn good_copy_capture(tag: &str, device: &Arc<dyn Device>) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("kw-replay-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let def = copy_def("y[i] = x[i]");
    let n = 64usize;
    let args = [
        HostArg::buffer(&vec![0f32; n]),
        HostArg::buffer(&vec![1f32; n]),
        HostArg::scalar(n as i32),
    ];
    let good = capture_launch(&dir, "good", &def, None, device.as_ref(), &args).unwrap();
    ReplaySession::load(&good, device.clone()).expect("the unmodified capture loads");
    (dir, good)
}

#[test]
fn overflowing_and_absurd_lengths_are_typed_errors() {
    let Some(device) = opencl() else { return };
    let (dir, good) = good_copy_capture("bad", &device);
    for (stem, len, needle) in [
        ("overflow", usize::MAX / 2, "overflows"),
        ("huge", 1usize << 40, "exceed the device"),
    ] {
        let bad = rewrite(&good, stem, |m| {
            m["args"][0]["len"] = serde_json::json!(len)
        });
        let err = match ReplaySession::load(&bad, device.clone()) {
            Err(e) => e,
            Ok(_) => panic!("{stem}: a capture with length {len} loaded"),
        };
        assert!(matches!(err, ReplayError::Argument { .. }), "{stem}: {err}");
        let text = err.to_string();
        assert!(text.contains(needle) && text.contains(stem), "{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A capture whose recorded problem size is not what its definition gives for its arguments
/// (another size, more than three axes, none, a zero), or whose configuration sets a value the
/// parameter does not declare, is a metadata error naming the problem: it would otherwise be
/// tuned at the wrong size and its record filed under a size nobody launched.
#[test]
fn a_problem_size_or_configuration_the_capture_does_not_hold_is_refused() {
    let Some(device) = opencl() else { return };
    let (dir, good) = good_copy_capture("size", &device);
    // Trailing ones are the same size (an older writer may have kept them).
    let padded = rewrite(&good, "padded", |m| {
        m["problem_size"] = serde_json::json!([64, 1, 1])
    });
    ReplaySession::load(&padded, device.clone()).expect("[64, 1, 1] is [64]");
    for (stem, size, needle) in [
        (
            "bigger",
            serde_json::json!([128]),
            "problem size [128] recorded",
        ),
        (
            "ten_axes",
            serde_json::json!([64, 1, 1, 1, 1, 1, 1, 1, 1, 2]),
            "recorded",
        ),
        ("empty", serde_json::json!([]), "problem size [] recorded"),
        ("zero", serde_json::json!([0]), "gives [64]"),
    ] {
        let bad = rewrite(&good, stem, |m| m["problem_size"] = size);
        let err = match ReplaySession::load(&bad, device.clone()) {
            Err(e) => e,
            Ok(_) => panic!("{stem}: the capture loaded"),
        };
        assert!(matches!(err, ReplayError::Metadata { .. }), "{stem}: {err}");
        let text = err.to_string();
        assert!(
            text.contains(needle) && text.contains(stem),
            "{stem}: {text}"
        );
    }
    let bad = rewrite(&good, "config", |m| {
        m["config"]["block_size_x"] = serde_json::json!(7)
    });
    let text = match ReplaySession::load(&bad, device.clone()) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a configuration outside the space loaded"),
    };
    assert!(
        text.contains("`block_size_x` to 7, not one of its values (32, 64)"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A problem size that reads a device attribute is checked with the capturing device's: a
/// capture made on another GPU model (here: a device with 96 compute units) still loads.
#[test]
fn a_problem_size_of_the_capturing_device_is_checked_with_that_device() {
    let Some(device) = opencl() else { return };
    let dir = std::env::temp_dir().join(format!("kw-replay-devsize-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let src = "__kernel void copy(__global float* y, __global const float* x, const int n) {\n\
               int i = get_global_id(0); if (i < n) y[i] = x[i]; }";
    let mut b = KernelBuilder::new("copy", Source::text("copy.cl", src));
    let bx = b.tune("block_size_x", [32, 64], 32);
    let units = kw_core::expr::device(kw_core::expr::DeviceAttr::MultiprocessorCount);
    b.problem_size([units])
        .block_size(bx.clone(), 1, 1)
        .grid_divisors(bx, 1, 1)
        .output::<f32>("y")
        .input::<f32>("x")
        .scalar::<i32>("n");
    let def = b.build().unwrap();
    // Buffers longer than any device's compute units (the launch covers the problem size).
    let n = 1024usize;
    let args = [
        HostArg::buffer(&vec![0f32; n]),
        HostArg::buffer(&vec![1f32; n]),
        HostArg::scalar(n as i32),
    ];
    let good = capture_launch(&dir, "good", &def, None, device.as_ref(), &args).unwrap();
    let other = rewrite(&good, "other", |m| {
        m["device"]["compute_units"] = serde_json::json!(96);
        m["problem_size"] = serde_json::json!([96]);
    });
    ReplaySession::load(&other, device.clone()).expect("checked with the capturing device");
    let wrong = rewrite(&good, "wrong", |m| {
        m["device"]["compute_units"] = serde_json::json!(96);
    });
    let text = match ReplaySession::load(&wrong, device.clone()) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a size its device does not give loaded"),
    };
    assert!(text.contains("gives [96]"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Damages one byte of the compressed data of the buffer `name` (the header still checks).
fn damage(capture: &Path, name: &str) {
    let chunk = {
        let c = Capture::open(capture).unwrap();
        let frame = c.buffers().find(|b| b.name == name).unwrap().frame;
        c.header().frames[frame].chunks[0].clone()
    };
    let mut bytes = std::fs::read(capture).unwrap();
    bytes[(chunk.offset + chunk.compressed_len / 2) as usize] ^= 0x5a;
    std::fs::write(capture, bytes).unwrap();
}

/// Buffers are decompressed in parallel, yet a load reports the error a load one argument
/// after the other meets first: a damaged frame of an earlier argument before the misfit of a
/// later one, the misfit when nothing before it is damaged, and a damaged frame of any
/// argument as a checksum mismatch naming the buffer.
#[test]
fn a_parallel_load_reports_the_first_error_in_argument_order() {
    let Some(device) = opencl() else { return };
    let dir = std::env::temp_dir().join(format!("kw-replay-order-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // y differs from x: their frames are not shared.
    let def = copy_def("y[i] = x[i] + 1.0f");
    let n = 1 << 20;
    let x: Vec<f32> = (0..n).map(|i| (i % 977) as f32).collect();
    let args = [
        HostArg::buffer(&vec![0f32; n]),
        HostArg::buffer(&x),
        HostArg::scalar(n as i32),
    ];
    let good = capture_launch(&dir, "good", &def, None, device.as_ref(), &args).unwrap();
    ReplaySession::load(&good, device.clone()).expect("the capture loads");
    let meta = Capture::open(&good).unwrap().metadata().clone();
    let frame_of = |arg: usize, field: &str| meta["args"][arg][field].as_str().unwrap().to_string();
    let x_input = frame_of(1, "input");
    let y_output = frame_of(0, "output");

    let misfit = rewrite(&good, "misfit", |m| {
        m["args"][2]["type"] = serde_json::json!("f32")
    });
    let err = ReplaySession::load(&misfit, device.clone())
        .err()
        .expect("a misfit");
    assert!(matches!(err, ReplayError::Argument { .. }), "{err}");
    assert!(err.to_string().contains("declared i32"), "{err}");

    // x's input damaged too: x comes before n, its error first.
    damage(&misfit, &x_input);
    let err = ReplaySession::load(&misfit, device.clone())
        .err()
        .expect("damage");
    assert!(matches!(err, ReplayError::Capture { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("checksum mismatch") && text.contains(&x_input),
        "{text}"
    );

    // Only y's reference damaged: found although its frame is read alongside x's.
    let damaged = rewrite(&good, "damaged", |_| {});
    damage(&damaged, &y_output);
    let err = ReplaySession::load(&damaged, device.clone())
        .err()
        .expect("damage");
    let text = err.to_string();
    assert!(
        text.contains("checksum mismatch") && text.contains(&y_output),
        "{text}"
    );
}

/// A frame whose length is not its argument's (here the input of `x` a mebibyte longer than
/// its 64 floats) is refused, naming the argument and both lengths, before any frame is
/// decompressed: a header may declare any length, gigabytes from a file of kilobytes.
#[test]
fn a_frame_longer_than_its_argument_is_refused_before_it_is_read() {
    let Some(device) = opencl() else { return };
    let (dir, good) = good_copy_capture("frame-length", &device);
    let c = Capture::open(&good).unwrap();
    let meta = c.metadata().clone();
    let x_input = meta["args"][1]["input"].as_str().unwrap().to_string();
    let buffers: Vec<CaptureBuffer> = c
        .buffers()
        .map(|b| {
            let mut data = c.read_buffer(b.name).unwrap();
            if b.name == x_input {
                data.extend(vec![0u8; 1 << 20]);
            }
            CaptureBuffer::new(b.name, b.elem_type, data)
        })
        .collect();
    let long = CaptureWriter::default()
        .write(&dir, "long", &meta, &buffers)
        .unwrap()
        .path;
    let err = ReplaySession::load(&long, device.clone())
        .err()
        .expect("a frame longer than its argument");
    assert!(matches!(err, ReplayError::Argument { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "input frame `{x_input}` holds 1048832 bytes, expected 256"
        )),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
