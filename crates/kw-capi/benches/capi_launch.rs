//! What the C API adds to a launch: `kw_kernel_launch` (handle lookup, argument conversion)
//! against `WisdomKernel::launch_with` called from Rust with the same kernel, device, queue and
//! buffers, in one run, on the first OpenCL device (PoCL in CI).
//!
//! `cargo bench -p kw-capi --bench capi_launch [-- --n N --launches L --blocks B]`
//!
//! Each measure is the median host time of one launch call, in runs of 8 launches before one
//! `clFinish`, the variants taking turns run by run: the Rust call; the C call with element
//! counts given; the C call with `KW_COUNT_AUTO` (one `clGetMemObjectInfo` per buffer).

use kernel_wisdom::interop::opencl::ClMemory;
use kernel_wisdom::OpenClBackend;
use kernel_wisdom::{demo_kernels, BackendError, Device, DeviceBuffer, KernelArg, RawMem};
use kernel_wisdom::{ScalarType, WisdomKernel};
use kernel_wisdom_c::builder::BUILDERS;
use kernel_wisdom_c::device::DEVICES;
use kernel_wisdom_c::kernel::{kw_kernel_create, kw_kernel_launch};
use kernel_wisdom_c::types::{KwArg, COUNT_AUTO};
use std::ffi::c_void;
use std::sync::{Arc, Mutex};
use std::time::Instant;

#[path = "../../kernel-wisdom/benches/common/mod.rs"]
mod common;
use common::{arg_value, median};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let n = arg_value(&args, "--n", 1 << 12);
    let launches = arg_value(&args, "--launches", 400);
    let blocks = arg_value(&args, "--blocks", 10);
    let cl = match OpenClBackend.open_cl(0) {
        Ok(d) => Arc::new(d),
        Err(e @ BackendError::Unavailable { .. }) => {
            eprintln!("SKIPPED: no OpenCL platform ({e})");
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    let device: Arc<dyn Device> = cl.clone();
    let rust_kernel = WisdomKernel::new(demo_kernels::opencl::vector_add()?, device.clone())?;

    // The same kernel through the C API (handles made as kw_builder_new / kw_device_* do).
    let builder = BUILDERS.insert(Mutex::new(demo_kernels::opencl::vector_add_builder()));
    let dev = DEVICES.insert(device.clone());
    let mut k: *mut c_void = std::ptr::null_mut();
    // SAFETY: live handles and a valid out-pointer.
    let status = unsafe { kw_kernel_create(&mut k, builder, dev, std::ptr::null()) };
    assert_eq!(status, 0, "kw_kernel_create");

    let a = DeviceBuffer::from_slice(device.as_ref(), &vec![1.0f32; n])?;
    let b = DeviceBuffer::from_slice(device.as_ref(), &vec![2.0f32; n])?;
    let c = DeviceBuffer::<f32>::new(device.as_ref(), n)?;
    let mem = |buf: &DeviceBuffer<f32>| {
        buf.memory()
            .as_any()
            .downcast_ref::<ClMemory>()
            .map(ClMemory::raw)
            .expect("an OpenCL buffer")
    };
    let (ma, mb, mc) = (mem(&a), mem(&b), mem(&c));
    let n_i32 = i32::try_from(n)?;
    let bytes = n * 4;
    // SAFETY: live buffers of `bytes` bytes each, alive for the whole run.
    let rust_args = unsafe {
        [
            KernelArg::raw_buffer(RawMem::opencl(mc, bytes), ScalarType::F32),
            KernelArg::raw_buffer(RawMem::opencl(ma, bytes), ScalarType::F32),
            KernelArg::raw_buffer(RawMem::opencl(mb, bytes), ScalarType::F32),
            n_i32.into(),
        ]
    };
    let c_args = |count: usize| {
        let buf = |m: *mut c_void| KwArg::buffer(m, ScalarType::F32, count);
        [buf(mc), buf(ma), buf(mb), KwArg::i32(n_i32)]
    };
    let (given, auto) = (c_args(n), c_args(COUNT_AUTO));
    let launch = |variant: usize| -> Result<(), String> {
        match variant {
            0 => rust_kernel.launch(&rust_args).map_err(|e| e.to_string()),
            v => {
                let args = if v == 1 { &given } else { &auto };
                // SAFETY: a live kernel handle and four valid arguments.
                match unsafe { kw_kernel_launch(k, std::ptr::null_mut(), args.as_ptr(), 4) } {
                    0 => Ok(()),
                    s => Err(format!("kw_kernel_launch: status {s}")),
                }
            }
        }
    };
    for _ in 0..50 {
        for v in 0..3 {
            launch(v)?;
        }
    }
    device.synchronize()?;
    assert_eq!(c.to_vec()?[n - 1], 3.0, "the kernel computes c = a + b");

    let mut samples = [Vec::new(), Vec::new(), Vec::new()];
    for block in 0..blocks {
        for i in 0..launches / 8 {
            for turn in 0..3 {
                let v = (turn + i + block) % 3;
                for _ in 0..8 {
                    let t = Instant::now();
                    launch(v)?;
                    samples[v].push(t.elapsed().as_secs_f64() * 1e6);
                }
                device.synchronize()?;
            }
        }
    }
    let names = [
        "WisdomKernel::launch_with (Rust)",
        "kw_kernel_launch, counts given",
        "kw_kernel_launch, KW_COUNT_AUTO",
    ];
    let base = median(samples[0].clone());
    println!("device: {}", device.info().summary());
    println!(
        "vector_add, n = {n}; {} samples each, median host time of one launch call",
        samples[0].len()
    );
    for (name, s) in names.iter().zip(samples) {
        let m = median(s);
        println!(
            "{name:34} {m:8.3} us  {:+7.3} us  ratio {:.3}",
            m - base,
            m / base
        );
    }
    Ok(())
}
