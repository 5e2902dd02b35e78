//! The host work kernel-wisdom adds to a launch, without a GPU: the bundled CUDA
//! `vector_add` on a device that launches nothing (it answers every launch at once), so that
//! what is timed is only kernel-wisdom's own work (handle lookup, argument conversion and
//! checks, problem size, selection cache, geometry) and not the driver's.
//!
//! `cargo bench -p kw-capi --bench launch_overhead [-- --launches L --rounds R]`
//!
//! Variants, taking turns round by round, each the median over rounds of the mean time of
//! `L` calls: (0) the null device's `launch_on` called directly (the floor: one dynamic
//! call); (1) `WisdomKernel::launch_with` from Rust with raw CUDA pointers; (2)
//! `kw_kernel_launch` with element counts given. The differences against (0) are what
//! kernel-wisdom adds on top of the driver's `cuLaunchKernel` (the CUDA backend's packing of
//! the parameter array is not included: the null device does not pack). Profile with
//! `perf record` on the bench binary and `--only 2`.

use kernel_wisdom::{demo_kernels, Device, RawMem, WisdomKernel};
use kernel_wisdom_c::builder::BUILDERS;
use kernel_wisdom_c::device::DEVICES;
use kernel_wisdom_c::kernel::{kw_kernel_create, kw_kernel_launch};
use kernel_wisdom_c::types::KwArg;
use kw_core::backend::{KernelArg, Queue};
use kw_core::device::BackendKind;
use kw_core::null_device::NullDevice;
use kw_core::scalar::ScalarType;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};
use std::time::Instant;

#[path = "../../kernel-wisdom/benches/common/mod.rs"]
mod common;
use common::{arg_value, median};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let launches = arg_value(&args, "--launches", 1000);
    let rounds = arg_value(&args, "--rounds", 300);
    let only = args
        .iter()
        .position(|a| a == "--only")
        .map(|_| arg_value(&args, "--only", 2));
    let device: Arc<dyn Device> = Arc::new(NullDevice::new(BackendKind::Cuda));
    let n = 1usize << 16;
    let bytes = n * 4;
    let (pc, pa, pb) = (
        0x7000_0000_0000u64,
        0x7000_1000_0000u64,
        0x7000_2000_0000u64,
    );
    let n_i32 = i32::try_from(n)?;

    let rust_kernel = WisdomKernel::new(demo_kernels::cuda::vector_add()?, device.clone())?;
    // SAFETY: the null device never touches these addresses.
    let rust_args = unsafe {
        [
            KernelArg::raw_buffer(RawMem::cuda(pc, bytes), ScalarType::F32),
            KernelArg::raw_buffer(RawMem::cuda(pa, bytes), ScalarType::F32),
            KernelArg::raw_buffer(RawMem::cuda(pb, bytes), ScalarType::F32),
            n_i32.into(),
        ]
    };
    let builder = BUILDERS.insert(Mutex::new(demo_kernels::cuda::vector_add_builder()));
    let dev = DEVICES.insert(device.clone());
    let mut k: *mut c_void = std::ptr::null_mut();
    // SAFETY: live handles and a valid out-pointer.
    let status = unsafe { kw_kernel_create(&mut k, builder, dev, std::ptr::null()) };
    assert_eq!(status, 0, "kw_kernel_create");
    let buf = |p: u64| KwArg::buffer(p as *mut c_void, ScalarType::F32, n);
    let c_args = [buf(pc), buf(pa), buf(pb), KwArg::i32(n_i32)];
    // The floor: the device call kernel-wisdom ends in, with the same kernel and geometry.
    let kernel = device.compile(
        &rust_kernel
            .def()
            .compile_spec(rust_kernel.default_config(), Some(device.info()))?
            .request(),
    )?;
    let geometry = rust_kernel.def().geometry(
        rust_kernel.default_config(),
        &[n as i64, 1, 1],
        None,
        Some(device.info()),
    )?;
    // `--pollute KB`: between launches, write KB of other memory, as a driver's launch path
    // does, so that what kernel-wisdom reads is no longer all in the nearest caches.
    let mut scratch = vec![0u64; arg_value(&args, "--pollute", 0) * 128];
    let mut pollute = move || {
        for (i, w) in scratch.iter_mut().enumerate().step_by(8) {
            *w = w.wrapping_add(i as u64);
        }
        std::hint::black_box(&scratch);
    };
    let launch = |variant: usize| -> Result<(), String> {
        match variant {
            0 => device
                .launch_on(
                    Queue::DEFAULT,
                    kernel.as_ref(),
                    &geometry,
                    &rust_args,
                    false,
                )
                .map(drop)
                .map_err(|e| e.to_string()),
            1 => rust_kernel.launch(&rust_args).map_err(|e| e.to_string()),
            _ => {
                // SAFETY: a live kernel handle and four valid arguments.
                match unsafe { kw_kernel_launch(k, std::ptr::null_mut(), c_args.as_ptr(), 4) } {
                    0 => Ok(()),
                    s => Err(format!("kw_kernel_launch: status {s}")),
                }
            }
        }
    };
    if let Some(v) = only {
        // For a profiler: one variant, many times.
        for _ in 0..rounds * launches {
            pollute();
            launch(v)?;
        }
        println!("ran variant {v} {} times", rounds * launches);
        return Ok(());
    }
    for v in 0..3 {
        for _ in 0..launches {
            launch(v)?;
        }
    }
    let mut samples = [Vec::new(), Vec::new(), Vec::new()];
    for r in 0..rounds {
        for turn in 0..3 {
            let v = (turn + r) % 3;
            let mut ns = 0.0;
            for _ in 0..launches {
                pollute();
                let t = Instant::now();
                launch(v)?;
                ns += t.elapsed().as_secs_f64() * 1e9;
            }
            samples[v].push(ns / launches as f64);
        }
    }
    let names = [
        "Device::launch_on (null device)",
        "WisdomKernel::launch_with (Rust)",
        "kw_kernel_launch, counts given",
    ];
    let base = median(samples[0].clone());
    println!(
        "host work per launch on a null device ({rounds} rounds of {launches} calls, medians)"
    );
    for (name, s) in names.iter().zip(samples) {
        let m = median(s);
        println!("RESULT {name:<34} {m:8.1} ns  {:+8.1} ns", m - base);
    }
    Ok(())
}
