//! Part 3 of the CUDA benchmark: device-to-device copy bandwidth against vector add over a
//! small configuration space.

use super::median;
use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{demo_kernels, WisdomKernel};
use kw_core::backend::{Device, KernelArg};
use kw_core::buffer::DeviceBuffer;
use kw_cuda::cudarc::driver::{result, sys};
use kw_cuda::CudaDevice;
use std::sync::Arc;

/// Restricts a parameter to some of its values (keeping the default if it stays listed).
fn narrow(def: &mut kernel_wisdom::KernelDef, name: &str, values: &[i64]) {
    let p = def
        .parameters
        .iter_mut()
        .find(|p| p.name == name)
        .expect("a parameter of the bundled kernel");
    p.values = values
        .iter()
        .map(|&v| kernel_wisdom::Value::Int(v))
        .collect();
    if !p.values.contains(&p.default) {
        p.default = p.values[0].clone();
    }
}

pub(super) fn bandwidth(dev: &Arc<CudaDevice>) -> Result<(), Box<dyn std::error::Error>> {
    let n = 1usize << 26;
    let bytes = (n * 4) as f64;
    let d: &dyn Device = dev.as_ref();
    let a = DeviceBuffer::<f32>::new(d, n)?;
    let b = DeviceBuffer::<f32>::new(d, n)?;
    let c = DeviceBuffer::<f32>::new(d, n)?;
    // Non-zero, varied inputs (times must not come from zeros).
    let host_a: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 * 0.001 + 0.5)
        .collect();
    let host_b: Vec<f32> = (0..n)
        .map(|i| ((i * 104_729) % 977) as f32 * 0.002 - 0.9)
        .collect();
    a.write(&host_a)?;
    b.write(&host_b)?;
    let ptr = |x: &DeviceBuffer<f32>| {
        x.memory()
            .as_any()
            .downcast_ref::<kw_cuda::CudaMemory>()
            .expect("a CUDA buffer")
            .device_ptr()
    };
    let ctx = dev.context();
    let stream = dev.stream();
    let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
    let (e0, e1) = (ctx.new_event(timing)?, ctx.new_event(timing)?);
    const REPS: usize = 20;
    let mut copy = Vec::new();
    for i in 0..REPS + 3 {
        e0.record(stream)?;
        // SAFETY: both buffers hold n floats of this context.
        unsafe { result::memcpy_dtod_async(ptr(&c), ptr(&a), n * 4, stream.cu_stream()) }?;
        e1.record(stream)?;
        let ms = f64::from(e0.elapsed_ms(&e1)?);
        if i >= 3 {
            copy.push(ms);
        }
    }
    let copy_ms = median(&mut copy);
    let copy_gbs = 2.0 * bytes / (copy_ms * 1e-3) / 1e9;
    println!("\nbandwidth on 2^26 floats (bytes read + written; median of {REPS}):");
    println!(
        "  device-to-device copy (cuMemcpyDtoDAsync)        {copy_ms:8.4} ms  {copy_gbs:8.1} GB/s"
    );

    // The bundled vector_add.cu through WisdomKernel, over a small space.
    let mut def = demo_kernels::cuda::vector_add()?;
    narrow(&mut def, "block_size_x", &[128, 256, 512, 1024]);
    narrow(&mut def, "strided", &[1]);
    let wk = WisdomKernel::new(def, dev.clone() as Arc<dyn Device>)?;
    let args = [c.arg(), a.arg(), b.arg(), KernelArg::from(n as i32)];
    let want: Vec<f32> = host_a.iter().zip(&host_b).map(|(x, y)| x + y).collect();
    let mut best = (0.0f64, String::new());
    let mut default_gbs = 0.0;
    let space = wk.space();
    for point in space.iter() {
        let config = space.config(&point);
        c.fill(f32::NAN)?;
        let mut t = Vec::new();
        for i in 0..REPS + 3 {
            let ms = wk
                .launch_with(&args, LaunchOptions::new().config(&config).timed())
                .map(|l| l.device_ms.unwrap_or_default())?;
            if i >= 3 {
                t.push(ms);
            }
        }
        let ms = median(&mut t);
        let gbs = 3.0 * bytes / (ms * 1e-3) / 1e9;
        println!(
            "  vector_add {:<38} {ms:8.4} ms  {gbs:8.1} GB/s  {:5.1}% of copy",
            format!("{{{config}}}"),
            100.0 * gbs / copy_gbs
        );
        if &config == wk.default_config() {
            default_gbs = gbs;
        }
        if gbs > best.0 {
            best = (gbs, config.to_string());
        }
        let got = c.to_vec()?;
        assert!(got == want, "vector_add {{{config}}}: wrong result");
    }
    println!(
        "RESULT bandwidth_gbs copy={copy_gbs:.1} vector_add_best={:.1} vector_add_default={default_gbs:.1} best_share={:.3} default_share={:.3} best_config={{{}}}",
        best.0,
        best.0 / copy_gbs,
        default_gbs / copy_gbs,
        best.1
    );
    Ok(())
}
