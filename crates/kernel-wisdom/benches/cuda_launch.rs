//! CUDA benchmarks (harness = false): launch overhead, first launch by stage, bandwidth.
//!
//! `cargo bench -p kernel-wisdom --bench cuda_launch` (prints `SKIPPED: no CUDA driver` without one).
//! Lines starting with `RESULT` are machine-readable (`tools/gpu.sh check` collects them).
//!
//! 1. Launch overhead: host time per launch of a tiny kernel (the bundled `vector_add.cu`,
//!    default configuration, one block), submitted in batches, for (a) cudarc's
//!    `launch_builder` (the "raw cudarc launch"), (b) a bare `cuLaunchKernel` through
//!    cudarc's `result` layer, (c) this backend's `Device::launch` (trait object), (d)
//!    `WisdomKernel::launch` on the cached kernel; interleaved in one run; medians over
//!    rounds; differences and ratios against (a).
//!
//!    The same for an application that owns its context, stream and memory: cudarc's
//!    `launch_builder` with `CudaSlice` arguments on the application's stream against
//!    `WisdomKernel::launch_with` (`LaunchOptions::on`) on a device attached to that context
//!    (`CudaDevice::from_context`), on the same stream, with the same slices
//!    (`kw_cuda::slice_arg`, made anew for every launch as an application would).
//! 2. First launch of a new kernel through `WisdomKernel` (definition check, configuration
//!    selection, NVRTC, module load, launch + synchronize), each kernel made unique so no
//!    cache can help (cold); stages measured inside one first launch. Then the same kernels'
//!    first launches through new `WisdomKernel`s (nothing compiled in memory), served by the
//!    on-disk compile cache the cold launches filled (warm: no NVRTC, module load only); the
//!    cache is a fresh temporary directory.
//!    Then the first launch in a new process, cold and warm cache: process pairs
//!    (`kernel-wisdom/benches/common/process_pairs.rs`), `RESULT first_launch_process_ms`.
//! 3. Bandwidth: device-to-device copy of 2^26 floats vs vector add on 2^26 floats over a
//!    small configuration space (bytes read + written counted for both).

#[path = "cuda_launch/bandwidth.rs"]
mod bandwidth;
#[path = "cuda_launch/first_launch.rs"]
mod first_launch;
#[path = "../../kernel-wisdom/benches/common/process_pairs.rs"]
mod process_pairs;

use bandwidth::bandwidth;
use first_launch::first_launch;

use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{demo_kernels, WisdomKernel};
use kw_core::backend::{BackendError, Device, KernelArg};
use kw_core::buffer::DeviceBuffer;
use kw_core::compile_cache::CompileCache;
use kw_core::kernel_def::eval::Geometry;
use kw_cuda::cudarc::driver::{result, LaunchConfig, PushKernelArg};
use kw_cuda::{CudaBackend, CudaDevice};
use std::ffi::c_void;
use std::sync::Arc;
use std::time::Instant;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == process_pairs::CHILD_FLAG) {
        // A child of the process-pair measurement: the process's compile cache (KW_CACHE_DIR).
        let n = args
            .iter()
            .position(|a| a == "--n")
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(1 << 20);
        let device: Arc<dyn Device> = Arc::new(CudaBackend::new().open_cuda(0)?);
        let def = demo_kernels::cuda::vector_add_builder().build()?;
        return process_pairs::child(device, def, n);
    }
    let t_open = Instant::now();
    let cache_dir =
        std::env::temp_dir().join(format!("kw-cuda-bench-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache_dir);
    let cache = Arc::new(CompileCache::at(&cache_dir, 1 << 30));
    let dev = match CudaBackend::new().open_cuda(0) {
        Ok(d) => Arc::new(d.with_compile_cache(cache)),
        Err(BackendError::Unavailable { reason, .. }) => {
            println!("SKIPPED: no CUDA driver ({reason})");
            return Ok(());
        }
        Err(e) => return Err(e.into()),
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
    attached_overhead()?;
    first_launch(&dev)?;
    bandwidth(&dev)?;
    let _ = std::fs::remove_dir_all(&cache_dir);
    println!();
    process_pairs::cold_and_warm(5, 1 << 20)?;
    Ok(())
}

fn launch_overhead(dev: &Arc<CudaDevice>) -> Result<(), Box<dyn std::error::Error>> {
    // The bundled kernel, default configuration (block_size_x = 256, elems_per_thread = 1):
    // once through WisdomKernel, once compiled directly with the same defines.
    let wk = WisdomKernel::new(
        demo_kernels::cuda::vector_add()?,
        dev.clone() as Arc<dyn Device>,
    )?;
    let config = wk.default_config().clone();
    let spec = wk.def().compile_spec(&config, Some(dev.info()))?;
    let k = dev.compile_cuda(&spec.request())?;
    let n = 256usize;
    let a = DeviceBuffer::<f32>::new(dev.as_ref(), n)?;
    a.fill(1.0)?;
    let c = DeviceBuffer::<f32>::new(dev.as_ref(), n)?;
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
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let geometry = Geometry {
        grid: [1, 1, 1],
        block: [256, 1, 1],
        shared_memory_bytes: 0,
        local_args: Default::default(),
    };
    let args = [c.arg(), a.arg(), a.arg(), KernelArg::from(n_i32)];
    wk.launch(&args)?; // the first launch compiles; the timed ones hit the cache
    dev.synchronize()?;
    const BATCH: usize = 256;
    const ROUNDS: usize = 60;
    let names = [
        "cudarc launch_builder",
        "cuLaunchKernel (result layer)",
        "Device::launch (trait)",
        "WisdomKernel::launch (cached)",
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
                                (256, 1, 1),
                                0,
                                stream.cu_stream(),
                                &mut params,
                            )
                        }
                        .expect("cuLaunchKernel");
                    }
                    2 => dev.launch(&k, &geometry, &args)?,
                    _ => wk.launch(&args)?,
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
            "  {name:<32} {m:8.3} us   {:+.3} us  ratio vs cudarc {:.3}",
            m - medians[0],
            m / medians[0]
        );
    }
    println!(
        "RESULT launch_us cudarc={:.3} culaunch={:.3} trait={:.3} wisdom={:.3} wisdom_minus_cudarc={:.3} wisdom_ratio={:.3} trait_minus_cudarc={:.3}",
        medians[0],
        medians[1],
        medians[2],
        medians[3],
        medians[3] - medians[0],
        medians[3] / medians[0],
        medians[2] - medians[0],
    );
    // The last launch wrote c = a + a = 2.
    let out = c.to_vec()?;
    assert!(
        out.iter().all(|&v| v == 2.0),
        "launch overhead kernel result"
    );
    Ok(())
}

fn attached_overhead() -> Result<(), Box<dyn std::error::Error>> {
    use kw_cuda::cudarc::driver::CudaContext;
    use kw_cuda::{slice_arg, stream_queue};
    // The application's own context object (the primary context, event tracking on, as
    // cudarc sets it up), its own stream and memory.
    let ctx = CudaContext::new(0)?;
    let stream = ctx.new_stream()?;
    let n = 256usize;
    let n_i32 = n as i32;
    let a = stream.clone_htod(&vec![1.0f32; n])?;
    let mut c = stream.alloc_zeros::<f32>(n)?;
    let attached = Arc::new(CudaDevice::from_context(ctx.clone())?);
    let wk = WisdomKernel::new(
        demo_kernels::cuda::vector_add()?,
        attached.clone() as Arc<dyn Device>,
    )?;
    let config = wk.default_config().clone();
    let spec = wk.def().compile_spec(&config, Some(attached.info()))?;
    let k = attached.compile_cuda(&spec.request())?;
    let func = k.function().clone();
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let queue = stream_queue(&stream);
    wk.launch_with(
        &[
            slice_arg(&c, &stream),
            slice_arg(&a, &stream),
            slice_arg(&a, &stream),
            n_i32.into(),
        ],
        LaunchOptions::new().on(queue),
    )?;
    stream.synchronize()?;
    const BATCH: usize = 256;
    const ROUNDS: usize = 60;
    let names = [
        "cudarc launch_builder (CudaSlice)",
        "WisdomKernel::launch_with (attached)",
    ];
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for round in 0..ROUNDS + 5 {
        for v in 0..names.len() {
            let variant = (v + round) % names.len();
            stream.synchronize()?;
            let t = Instant::now();
            for _ in 0..BATCH {
                if variant == 0 {
                    let mut b = stream.launch_builder(&func);
                    b.arg(&mut c).arg(&a).arg(&a).arg(&n_i32);
                    // SAFETY: the argument list matches the kernel's parameters and the
                    // slices outlive the launches (synchronised below).
                    unsafe { b.launch(cfg) }.expect("cudarc launch");
                } else {
                    let args = [
                        slice_arg(&c, &stream),
                        slice_arg(&a, &stream),
                        slice_arg(&a, &stream),
                        KernelArg::from(n_i32),
                    ];
                    wk.launch_with(&args, LaunchOptions::new().on(queue))?;
                }
            }
            let us = t.elapsed().as_secs_f64() * 1e6 / BATCH as f64;
            stream.synchronize()?;
            if round >= 5 {
                samples[variant].push(us);
            }
        }
    }
    let medians: Vec<f64> = samples.iter_mut().map(|s| median(s)).collect();
    println!(
        "\nlaunch overhead on the application's context, stream and CudaSlices (median of \
         {ROUNDS} batches of {BATCH}):"
    );
    for (name, m) in names.iter().zip(&medians) {
        println!(
            "  {name:<36} {m:8.3} us   {:+.3} us  ratio {:.3}",
            m - medians[0],
            m / medians[0]
        );
    }
    println!(
        "RESULT attached_launch_us cudarc_slices={:.3} wisdom_attached={:.3} wisdom_minus_cudarc={:.3} ratio={:.3}",
        medians[0],
        medians[1],
        medians[1] - medians[0],
        medians[1] / medians[0]
    );
    let out = stream.clone_dtoh(&c)?;
    assert!(out.iter().all(|&x| x == 2.0), "attached launch result");
    Ok(())
}
