//! Attaching to an application's CUDA context, stream and memory (GPU machine; prints
//! `SKIPPED: no CUDA driver` elsewhere): cudarc slices and raw device pointers as arguments,
//! the application's stream, declared buffer lengths, and the three ways to attach.

use kernel_wisdom::interop::cuda::cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use kernel_wisdom::interop::cuda::{slice_arg, stream_queue, CudaDevice};
use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{demo_kernels, CudaBackend, Device, Error, KernelArg, Queue, RawMem};
use kernel_wisdom::{ScalarType, WisdomKernel};
use std::sync::Arc;

fn cuda() -> bool {
    let ok = CudaBackend::new().is_available();
    if !ok {
        eprintln!("SKIPPED: no CUDA driver");
    }
    ok
}

fn inputs(stream: &Arc<CudaStream>, n: usize) -> (CudaSlice<f32>, CudaSlice<f32>, Vec<f32>) {
    let ha: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let hb: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let expected = ha.iter().zip(&hb).map(|(x, y)| x + y).collect();
    (
        stream.clone_htod(&ha).unwrap(),
        stream.clone_htod(&hb).unwrap(),
        expected,
    )
}

#[test]
fn launches_on_the_applications_context_stream_and_slices() {
    if !cuda() {
        return;
    }
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let device = Arc::new(CudaDevice::from_context(ctx.clone()).unwrap());
    assert_eq!(device.context().cu_ctx(), ctx.cu_ctx(), "no second context");
    let add = WisdomKernel::new(demo_kernels::cuda::vector_add().unwrap(), device.clone()).unwrap();
    let n = 10_007usize;
    let (a, b, expected) = inputs(&stream, n);
    let c = stream.alloc_zeros::<f32>(n).unwrap();
    let args = [
        slice_arg(&c, &stream),
        slice_arg(&a, &stream),
        slice_arg(&b, &stream),
        (n as i32).into(),
    ];
    add.launch_with(&args, LaunchOptions::new().on(stream_queue(&stream)))
        .unwrap();
    assert_eq!(stream.clone_dtoh(&c).unwrap(), expected);

    // A too-short slice: a typed error, nothing launched.
    let short = stream.alloc_zeros::<f32>(n - 1).unwrap();
    let bad = [
        slice_arg(&short, &stream),
        slice_arg(&a, &stream),
        slice_arg(&b, &stream),
        (n as i32).into(),
    ];
    match add.launch_with(&bad, LaunchOptions::new().on(stream_queue(&stream))) {
        Err(Error::BufferTooShort {
            index: 0,
            len,
            required,
            ..
        }) => {
            assert_eq!((len, required), (n - 1, n as u64));
        }
        other => panic!("expected BufferTooShort, got {other:?}"),
    }
    assert!(stream.clone_dtoh(&short).unwrap().iter().all(|&x| x == 0.0));

    // Raw device pointers and a raw CUstream, as a CUDA runtime program passes them.
    let d = stream.alloc_zeros::<f32>(n).unwrap();
    let raw = |s: &CudaSlice<f32>| {
        use kernel_wisdom::interop::cuda::cudarc::driver::DevicePtr;
        let (p, _sync) = s.device_ptr(&stream);
        // SAFETY: a live allocation of `n` floats of this context.
        KernelArg::raw_buffer(unsafe { RawMem::cuda(p, n * 4) }, ScalarType::F32)
    };
    // SAFETY: a live stream of this context.
    let q = unsafe { Queue::cuda_raw(stream.cu_stream().cast()) };
    add.launch_with(
        &[raw(&d), raw(&a), raw(&b), (n as i32).into()],
        LaunchOptions::new().on(q),
    )
    .unwrap();
    device.synchronize_queue(q).unwrap();
    assert_eq!(stream.clone_dtoh(&d).unwrap(), expected);
}

#[test]
fn attach_to_the_primary_and_the_current_context() {
    if !cuda() {
        return;
    }
    let app = CudaContext::new(0).unwrap();
    app.bind_to_thread().unwrap();
    let current = CudaDevice::attach_current().unwrap();
    assert_eq!(current.context().cu_ctx(), app.cu_ctx());
    let primary = CudaDevice::attach_primary(0).unwrap();
    assert_eq!(primary.context().cu_ctx(), app.cu_ctx());
    // Kernels built on either run on the application's memory.
    let stream = app.default_stream();
    let add =
        WisdomKernel::new(demo_kernels::cuda::vector_add().unwrap(), Arc::new(primary)).unwrap();
    let n = 4096usize;
    let (a, b, expected) = inputs(&stream, n);
    let c = stream.alloc_zeros::<f32>(n).unwrap();
    add.launch_with(
        &[
            slice_arg(&c, &stream),
            slice_arg(&a, &stream),
            slice_arg(&b, &stream),
            (n as i32).into(),
        ],
        LaunchOptions::new().on(stream_queue(&stream)),
    )
    .unwrap();
    assert_eq!(stream.clone_dtoh(&c).unwrap(), expected);
}

#[test]
fn no_current_context_is_an_error() {
    if !cuda() {
        return;
    }
    // A fresh thread has no current context.
    let r = std::thread::spawn(CudaDevice::attach_current)
        .join()
        .unwrap();
    let e = r.expect_err("an error").to_string();
    assert!(e.contains("no current CUDA context"), "{e}");
}
