//! CUDA benchmarks (harness = false): launch overhead, first launch by stage, bandwidth.
//!
//! `cargo bench -p kw-cuda --bench cuda_launch` (prints `SKIPPED: no CUDA driver` without one).
//! Lines starting with `RESULT` are machine-readable (`tools/gpu-check.sh` collects them).
//!
//! 1. Launch overhead: host time per launch of a tiny kernel, submitted in batches, for
//!    (a) cudarc's `launch_builder` (the "raw cudarc launch"), (b) a bare `cuLaunchKernel`
//!    through cudarc's `result` layer, (c) this backend's `Device::launch` (trait object),
//!    interleaved in one run; medians over rounds; ratios against (a).
//! 2. First launch of a new kernel: NVRTC, module load, first launch + synchronize, each
//!    kernel made unique so no cache can help.
//! 3. Bandwidth: device-to-device copy of 2^26 floats vs vector add on 2^26 floats over a
//!    small configuration space (bytes read + written counted for both).

use kw_core::backend::{BackendError, CompileRequest, Device, KernelArg};
use kw_core::buffer::DeviceBuffer;
use kw_core::def_eval::Geometry;
use kw_core::kernel_def::KernelSource;
use kw_cuda::cudarc::driver::{result, sys, LaunchConfig, PushKernelArg};
use kw_cuda::{CudaBackend, CudaDevice, CudaKernel};
use std::ffi::c_void;
use std::time::Instant;

const VECTOR_ADD: &str = r#"
extern "C" __global__ void vector_add(float* __restrict__ c, const float* __restrict__ a,
                                      const float* __restrict__ b, int n) {
    int base = (blockIdx.x * BLOCK_SIZE_X) * ELEMS_PER_THREAD + threadIdx.x;
    #pragma unroll
    for (int k = 0; k < ELEMS_PER_THREAD; k++) {
        int i = base + k * BLOCK_SIZE_X;
        if (i < n) c[i] = a[i] + b[i];
    }
}
"#;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn compile(
    dev: &CudaDevice,
    text: &str,
    block: u32,
    ept: u32,
    extra: &[(String, String)],
) -> CudaKernel {
    let src = KernelSource {
        file_name: "vector_add.cu".into(),
        text: text.into(),
        headers: vec![],
    };
    let mut defines = vec![
        ("BLOCK_SIZE_X".to_string(), block.to_string()),
        ("ELEMS_PER_THREAD".to_string(), ept.to_string()),
    ];
    defines.extend_from_slice(extra);
    dev.compile_cuda(&CompileRequest {
        source: &src,
        kernel_name: "vector_add",
        defines: &defines,
        flags: &[],
        include_dirs: &[],
        template_args: &[],
    })
    .expect("compile vector_add")
}

fn main() -> Result<(), BackendError> {
    let t_open = Instant::now();
    let dev = match CudaBackend::new().open_cuda(0) {
        Ok(d) => d,
        Err(BackendError::Unavailable { reason, .. }) => {
            println!("SKIPPED: no CUDA driver ({reason})");
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let open_ms = t_open.elapsed().as_secs_f64() * 1e3;
    let info = dev.info().clone();
    println!(
        "device: {} ({}, {} SMs, {}, {}); NVRTC from {:?}",
        info.name,
        info.architecture,
        info.compute_units,
        info.driver_version,
        info.compiler_version,
        kw_cuda::nvrtc_library().map(|l| l.0)
    );
    println!("RESULT open_device_ms={open_ms:.2}");
    launch_overhead(&dev)?;
    first_launch(&dev)?;
    bandwidth(&dev)?;
    Ok(())
}

fn launch_overhead(dev: &CudaDevice) -> Result<(), BackendError> {
    let k = compile(dev, VECTOR_ADD, 128, 1, &[]);
    let n = 128usize;
    let a = DeviceBuffer::<f32>::new(dev, n)?;
    a.fill(1.0)?;
    let c = DeviceBuffer::<f32>::new(dev, n)?;
    let mem = |b: &DeviceBuffer<f32>| {
        b.memory()
            .as_any()
            .downcast_ref::<kw_cuda::CudaMemory>()
            .expect("a CUDA buffer")
            .device_ptr()
    };
    let (pa, pc) = (mem(&a), mem(&c));
    let n_i32 = n as i32;
    let stream = dev.stream().clone();
    let func = k.function().clone();
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (128, 1, 1),
        shared_mem_bytes: 0,
    };
    let geometry = Geometry {
        grid: [1, 1, 1],
        block: [128, 1, 1],
        shared_memory_bytes: 0,
    };
    let args = [c.arg(), a.arg(), a.arg(), KernelArg::from(n_i32)];
    const BATCH: usize = 256;
    const ROUNDS: usize = 60;
    let names = [
        "cudarc launch_builder",
        "cuLaunchKernel (result layer)",
        "Device::launch (trait)",
    ];
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for round in 0..ROUNDS + 5 {
        for v in 0..names.len() {
            let variant = (v + round) % names.len();
            dev.synchronize()?;
            let t = Instant::now();
            for _ in 0..BATCH {
                match variant {
                    0 => {
                        let mut b = stream.launch_builder(&func);
                        b.arg(&pc).arg(&pa).arg(&pa).arg(&n_i32);
                        // SAFETY: the argument list matches the kernel's parameters and the
                        // buffers outlive the launches (synchronised below).
                        unsafe { b.launch(cfg) }.expect("cudarc launch");
                    }
                    1 => {
                        let (mut s0, mut s1, mut s2, mut s3) = (pc, pa, pa, n_i32);
                        let mut params: [*mut c_void; 4] = [
                            (&mut s0 as *mut u64).cast(),
                            (&mut s1 as *mut u64).cast(),
                            (&mut s2 as *mut u64).cast(),
                            (&mut s3 as *mut i32).cast(),
                        ];
                        // SAFETY: as above; the parameter slots live until the call returns.
                        unsafe {
                            result::launch_kernel(
                                k.cu_function(),
                                (1, 1, 1),
                                (128, 1, 1),
                                0,
                                stream.cu_stream(),
                                &mut params,
                            )
                        }
                        .expect("cuLaunchKernel");
                    }
                    _ => dev.launch(&k, &geometry, &args)?,
                }
            }
            let us = t.elapsed().as_secs_f64() * 1e6 / BATCH as f64;
            dev.synchronize()?;
            if round >= 5 {
                samples[variant].push(us);
            }
        }
    }
    let medians: Vec<f64> = samples.iter_mut().map(|s| median(s)).collect();
    println!("\nlaunch overhead (host time per launch, median of {ROUNDS} batches of {BATCH}):");
    for (name, m) in names.iter().zip(&medians) {
        println!(
            "  {name:<32} {m:8.3} us   ratio vs cudarc {:.3}",
            m / medians[0]
        );
    }
    println!(
        "RESULT launch_us cudarc={:.3} culaunch={:.3} trait={:.3} trait_minus_cudarc={:.3} trait_ratio={:.3}",
        medians[0],
        medians[1],
        medians[2],
        medians[2] - medians[0],
        medians[2] / medians[0]
    );
    // The last launch wrote c = a + a = 2.
    let out = c.to_vec()?;
    assert!(
        out.iter().all(|&v| v == 2.0),
        "launch overhead kernel result"
    );
    Ok(())
}

fn first_launch(dev: &CudaDevice) -> Result<(), BackendError> {
    const KERNELS: usize = 8;
    let n = 1usize << 20;
    let a = DeviceBuffer::<f32>::new(dev, n)?;
    a.fill(1.5)?;
    let c = DeviceBuffer::<f32>::new(dev, n)?;
    let geometry = Geometry {
        grid: [(n / 256) as u32, 1, 1],
        block: [256, 1, 1],
        shared_memory_bytes: 0,
    };
    let (mut nvrtc, mut load, mut launch, mut total) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..KERNELS {
        // A different source each time: no compile cache anywhere can serve it.
        let text = format!("// unique variant {i} {:?}\n{VECTOR_ADD}", Instant::now());
        let t = Instant::now();
        let k = compile(dev, &text, 256, 1, &[("KW_VARIANT".into(), i.to_string())]);
        let t_launch = Instant::now();
        dev.launch(
            &k,
            &geometry,
            &[c.arg(), a.arg(), a.arg(), KernelArg::from(n as i32)],
        )?;
        dev.synchronize()?;
        let launch_ms = t_launch.elapsed().as_secs_f64() * 1e3;
        total.push(t.elapsed().as_secs_f64() * 1e3);
        nvrtc.push(k.stats().nvrtc_ms);
        load.push(k.stats().load_ms);
        launch.push(launch_ms);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (tn, tl, tla, tt) = (mean(&nvrtc), mean(&load), mean(&launch), mean(&total));
    println!("\nfirst launch of a new kernel (mean of {KERNELS}, trait level, no cache):");
    println!(
        "  NVRTC compile (to cubin)  {tn:8.2} ms  {:5.1}%",
        100.0 * tn / tt
    );
    println!(
        "  module load + get func    {tl:8.2} ms  {:5.1}%",
        100.0 * tl / tt
    );
    println!(
        "  first launch + sync       {tla:8.2} ms  {:5.1}%",
        100.0 * tla / tt
    );
    println!("  total                     {tt:8.2} ms");
    println!(
        "RESULT first_launch_ms nvrtc={tn:.2} load={tl:.2} launch={tla:.2} total={tt:.2} nvrtc_share={:.3}",
        tn / tt
    );
    assert!(c.to_vec()?.iter().all(|&v| v == 3.0), "first launch result");
    Ok(())
}

fn bandwidth(dev: &CudaDevice) -> Result<(), BackendError> {
    let n = 1usize << 26;
    let bytes = (n * 4) as f64;
    let a = DeviceBuffer::<f32>::new(dev, n)?;
    let b = DeviceBuffer::<f32>::new(dev, n)?;
    let c = DeviceBuffer::<f32>::new(dev, n)?;
    // Random-ish, non-zero inputs (times must not come from zeros).
    let host: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 * 0.001 + 0.5)
        .collect();
    a.write(&host)?;
    b.write(&host)?;
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
    let (e0, e1) = (
        ctx.new_event(timing).expect("event"),
        ctx.new_event(timing).expect("event"),
    );
    const REPS: usize = 20;
    let mut copy = Vec::new();
    for i in 0..REPS + 3 {
        e0.record(stream).expect("record");
        // SAFETY: both buffers hold n floats of this context.
        unsafe { result::memcpy_dtod_async(ptr(&c), ptr(&a), n * 4, stream.cu_stream()) }
            .expect("copy");
        e1.record(stream).expect("record");
        let ms = f64::from(e0.elapsed_ms(&e1).expect("elapsed"));
        if i >= 3 {
            copy.push(ms);
        }
    }
    let copy_ms = median(&mut copy);
    let copy_gbs = 2.0 * bytes / (copy_ms * 1e-3) / 1e9;
    println!("\nbandwidth on 2^26 floats (bytes read + written; median of {REPS}):");
    println!("  device-to-device copy               {copy_ms:8.4} ms  {copy_gbs:8.1} GB/s");
    let mut best = (0.0f64, 0u32, 0u32);
    let mut default_gbs = 0.0;
    for block in [128u32, 256, 512, 1024] {
        for ept in [1u32, 2, 4, 8] {
            let k = compile(dev, VECTOR_ADD, block, ept, &[]);
            let g = Geometry {
                grid: [(n as u32).div_ceil(block * ept), 1, 1],
                block: [block, 1, 1],
                shared_memory_bytes: 0,
            };
            let args = [c.arg(), a.arg(), b.arg(), KernelArg::from(n as i32)];
            let mut t = Vec::new();
            for i in 0..REPS + 3 {
                let ms = dev.launch_timed(&k, &g, &args)?;
                if i >= 3 {
                    t.push(ms);
                }
            }
            let ms = median(&mut t);
            let gbs = 3.0 * bytes / (ms * 1e-3) / 1e9;
            println!(
                "  vector_add block={block:<4} ept={ept}     {ms:8.4} ms  {gbs:8.1} GB/s  {:5.1}% of copy",
                100.0 * gbs / copy_gbs
            );
            if block == 256 && ept == 1 {
                default_gbs = gbs;
            }
            if gbs > best.0 {
                best = (gbs, block, ept);
            }
        }
    }
    let got = c.to_vec()?;
    for (i, (&g, &h)) in got.iter().zip(&host).enumerate().step_by(4099) {
        assert_eq!(g, h + h, "vector_add element {i}");
    }
    println!(
        "RESULT bandwidth_gbs copy={copy_gbs:.1} vector_add_best={:.1} (block={} ept={}) vector_add_default={default_gbs:.1} best_share={:.3}",
        best.0,
        best.1,
        best.2,
        best.0 / copy_gbs
    );
    Ok(())
}
