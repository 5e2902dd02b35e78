//! The library's 2D convolution (`Library::convolution`, `kernels/library/convolution.cl`) on
//! PoCL and, where there is one, a CUDA device (the filter then a `__constant__` symbol; the
//! CUDA tests print `SKIPPED` without a driver): every configuration of a reduced tuning
//! space at an output size no tile divides, against the CPU reference; the routine at
//! awkward sizes and filter shapes, and from threads sharing one library; wrong shapes are
//! typed errors and write nothing.

mod common;

use common::{cuda_device, device, narrow, random_floats};
use kernel_wisdom::library::{defs, reference, Library};
use kernel_wisdom::{BackendKind, Config, DeviceBuffer, Error, LaunchOptions, Value};
use kernel_wisdom::{KernelArg, WisdomKernel};
use kw_core::backend::Device;
use kw_core::rng::Rng;
use std::sync::Arc;

/// Every result within 1e-5 of the reference, scaled by the sum of the terms' magnitudes.
fn assert_close(got: &[f32], want: &[f32], scale: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-5 * scale,
            "{what}: output {i}: {g} vs {w}"
        );
    }
}

/// Every configuration of a reduced space (OpenCL 20, CUDA 40 with `read_only`), each
/// output poisoned with NaN first.
fn every_configuration(dev: Arc<dyn Device>) {
    let backend = dev.info().backend;
    let [fw, fh] = [5usize, 3];
    let mut def = defs::convolution(backend, [fw, fh]).build().unwrap();
    for (name, values) in [
        ("block_size_x", &[16, 32][..]),
        ("block_size_y", &[1, 4]),
        ("tile_size_x", &[1, 3]),
        ("tile_size_y", &[2]),
    ] {
        narrow(&mut def, name, values);
    }
    let kernel = WisdomKernel::new(def, dev.clone()).unwrap();
    let [w, h] = [37usize, 23];
    let mut rng = Rng::new(7);
    let input = random_floats(&mut rng, (w + fw - 1) * (h + fh - 1));
    let filter = random_floats(&mut rng, fw * fh);
    let want = reference::convolution(&input, [w, h], &filter, [fw, fh]);
    let d = dev.as_ref();
    let din = DeviceBuffer::from_slice(d, &input).unwrap();
    let dfilter = DeviceBuffer::from_slice(d, &filter).unwrap();
    let dout = DeviceBuffer::<f32>::new(d, w * h).unwrap();
    let mut args: Vec<KernelArg<'_>> =
        vec![dout.arg(), din.arg(), (w as i32).into(), (h as i32).into()];
    if backend == BackendKind::Cuda {
        kernel.set_symbol("filter", &filter).unwrap();
    } else {
        args.push(dfilter.arg());
    }
    let space = kernel.space().clone();
    let mut seen: Vec<Config> = Vec::new();
    for p in space.iter() {
        let config = space.config(&p);
        dout.fill(f32::NAN).unwrap();
        kernel
            .launch_with(&args, LaunchOptions::new().config(&config))
            .unwrap();
        let scale = 4.0 * (fw * fh) as f32;
        let what = format!("{{{config}}}");
        assert_close(&dout.to_vec().unwrap(), &want, scale, &what);
        seen.push(config);
    }
    let expected = if backend == BackendKind::Cuda { 40 } else { 20 };
    assert_eq!(seen.len(), expected, "{} configurations", seen.len());
    for (name, value) in [("use_shmem", 0), ("use_shmem", 1), ("use_padding", 1)] {
        assert!(
            seen.iter().any(|c| c.get(name) == Some(&Value::Int(value))),
            "no configuration with {name}={value}"
        );
    }
}

/// The routine at awkward output sizes and filter shapes (1 x 1 to 17 x 17, even sides), a
/// shape's kernel reused with a new filter and with the same filter.
fn routine_at_awkward_sizes(dev: Arc<dyn Device>) {
    let lib = Library::new(dev.clone());
    let d = dev.as_ref();
    let mut rng = Rng::new(13);
    for ([w, h], [fw, fh]) in [
        ([1usize, 1usize], [1usize, 1usize]),
        ([3, 50], [17, 17]),
        ([100, 1], [3, 3]),
        ([41, 19], [5, 3]),
        ([33, 17], [2, 7]), // even and odd sides
        ([41, 19], [5, 3]), // again: the shape's kernel is reused, the new filter written
    ] {
        let input = random_floats(&mut rng, (w + fw - 1) * (h + fh - 1));
        let filter = random_floats(&mut rng, fw * fh);
        let din = DeviceBuffer::from_slice(d, &input).unwrap();
        let dout = DeviceBuffer::from_slice(d, &vec![f32::NAN; w * h]).unwrap();
        lib.convolution([w, h], [fw, fh], &filter, &din, &dout)
            .unwrap();
        let want = reference::convolution(&input, [w, h], &filter, [fw, fh]);
        let what = format!("{w}x{h}, filter {fw}x{fh}");
        assert_close(
            &dout.to_vec().unwrap(),
            &want,
            4.0 * (fw * fh) as f32,
            &what,
        );
    }
    // The same filter again on other inputs (the filter is not written again).
    let filter = random_floats(&mut rng, 9);
    for _ in 0..2 {
        let input = random_floats(&mut rng, 12 * 7);
        let din = DeviceBuffer::from_slice(d, &input).unwrap();
        let dout = DeviceBuffer::<f32>::new(d, 10 * 5).unwrap();
        lib.convolution([10, 5], [3, 3], &filter, &din, &dout)
            .unwrap();
        let want = reference::convolution(&input, [10, 5], &filter, [3, 3]);
        assert_close(
            &dout.to_vec().unwrap(),
            &want,
            36.0,
            "the same filter twice",
        );
    }
    // A zero-sized output (0 x 1; the input 2 x 1): nothing to do, and nothing refused.
    let din = DeviceBuffer::from_slice(d, &[1.0f32; 2]).unwrap();
    let dout = DeviceBuffer::<f32>::new(d, 0).unwrap();
    lib.convolution([0, 1], [3, 1], &[1.0; 3], &din, &dout)
        .unwrap();
    // The library kernel `convolution` is the 15 x 15 filter's.
    let k = lib.kernel("convolution").unwrap();
    assert!(Arc::ptr_eq(
        &k,
        &lib.convolution_kernel(defs::CONVOLUTION_FILTER).unwrap()
    ));
}

/// Threads sharing a library, each with its own filter of one shape: every result is the
/// thread's own (the filter is written and launched under one lock).
fn threads_sharing_a_library(dev: Arc<dyn Device>) {
    let lib = Arc::new(Library::new(dev.clone()));
    let [w, h, f] = [29usize, 31, 3];
    let input: Vec<f32> = random_floats(&mut Rng::new(17), (w + f - 1) * (h + f - 1));
    let handles: Vec<_> = (0..3)
        .map(|t| {
            let (lib, input) = (Arc::clone(&lib), input.clone());
            std::thread::spawn(move || {
                let d = lib.device().as_ref();
                let din = DeviceBuffer::from_slice(d, &input).unwrap();
                let dout = DeviceBuffer::<f32>::new(d, w * h).unwrap();
                for round in 0..4 {
                    let filter: Vec<f32> = (0..f * f)
                        .map(|i| (t * 10 + round) as f32 + i as f32 * 0.5)
                        .collect();
                    lib.convolution([w, h], [f, f], &filter, &din, &dout)
                        .unwrap();
                    let want = reference::convolution(&input, [w, h], &filter, [f, f]);
                    let scale = 2.0 * filter.iter().map(|v| v.abs()).sum::<f32>();
                    let what = format!("thread {t} round {round}");
                    assert_close(&dout.to_vec().unwrap(), &want, scale, &what);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// Wrong lengths and filter sizes: [`Error::Shape`] naming the routine and the problem, and
/// nothing launched.
fn wrong_shapes(dev: Arc<dyn Device>) {
    let lib = Library::new(dev.clone());
    let d = dev.as_ref();
    // 4 x 3 output, 3 x 3 filter: a 6 x 5 input.
    let din = DeviceBuffer::from_slice(d, &[1.0f32; 30]).unwrap();
    let dout = DeviceBuffer::from_slice(d, &[7.0f32; 12]).unwrap();
    let f9 = [1.0f32; 9];
    let cases: [(&str, Error); 7] = [
        (
            "holds 8 elements",
            lib.convolution([4, 3], [3, 3], &f9[..8], &din, &dout)
                .unwrap_err(),
        ),
        (
            "input",
            lib.convolution([4, 4], [3, 3], &f9, &din, &dout)
                .unwrap_err(),
        ),
        (
            "output",
            lib.convolution([4, 3], [3, 3], &f9, &din, &din)
                .unwrap_err(),
        ),
        (
            "must be 1 to 17",
            lib.convolution([4, 3], [19, 1], &[1.0; 19], &din, &dout)
                .unwrap_err(),
        ),
        (
            "must be 1 to 17",
            lib.convolution([4, 3], [0, 3], &[], &din, &dout)
                .unwrap_err(),
        ),
        (
            "overflow",
            lib.convolution([usize::MAX, 3], [3, 3], &f9, &din, &dout)
                .unwrap_err(),
        ),
        (
            "must be 1 to 17",
            lib.convolution_kernel([18, 18]).map(|_| ()).unwrap_err(),
        ),
    ];
    for (want, e) in cases {
        assert!(
            matches!(
                e,
                Error::Shape {
                    routine: "convolution",
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains(want), "`{e}` lacks `{want}`");
    }
    assert_eq!(dout.to_vec().unwrap(), vec![7.0; 12], "nothing launched");
}

#[test]
fn pocl_every_configuration_of_a_reduced_space() {
    if let Some(dev) = device() {
        every_configuration(dev);
    }
}

#[test]
fn pocl_the_routine_at_awkward_sizes_and_filters() {
    if let Some(dev) = device() {
        routine_at_awkward_sizes(dev);
    }
}

#[test]
fn pocl_threads_sharing_a_library_get_their_own_filter() {
    if let Some(dev) = device() {
        threads_sharing_a_library(dev);
    }
}

#[test]
fn pocl_wrong_shapes_are_typed_errors_and_write_nothing() {
    if let Some(dev) = device() {
        wrong_shapes(dev);
    }
}

#[test]
fn cuda_every_configuration_of_a_reduced_space() {
    if let Some(dev) = cuda_device("cuda_every_configuration_of_a_reduced_space") {
        every_configuration(dev);
    }
}

#[test]
fn cuda_the_routine_at_awkward_sizes_and_filters() {
    if let Some(dev) = cuda_device("cuda_the_routine_at_awkward_sizes_and_filters") {
        routine_at_awkward_sizes(dev);
    }
}

#[test]
fn cuda_threads_sharing_a_library_get_their_own_filter() {
    if let Some(dev) = cuda_device("cuda_threads_sharing_a_library_get_their_own_filter") {
        threads_sharing_a_library(dev);
    }
}

#[test]
fn cuda_wrong_shapes_are_typed_errors_and_write_nothing() {
    if let Some(dev) = cuda_device("cuda_wrong_shapes_are_typed_errors_and_write_nothing") {
        wrong_shapes(dev);
    }
}
