//! CUDA benchmarks (harness = false): launch overhead, first launch by stage, bandwidth.
//!
//! `cargo bench -p kernel-wisdom --bench cuda_launch` (prints `SKIPPED: no CUDA driver` without one).
//! Lines starting with `RESULT` are machine-readable (`tools/gpu-check.sh` collects them).
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
//!    `WisdomKernel::launch_on` on a device attached to that context
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

#[path = "../../kernel-wisdom/benches/common/process_pairs.rs"]
mod process_pairs;

use kernel_wisdom::LaunchOptions;
use kernel_wisdom::{demo_kernels, lit, WisdomKernel};
use kw_core::backend::{
    BackendError, CompileRequest, CompiledKernel, Device, DeviceEvent, DeviceMemory, KernelArg,
    Queue, RawMem,
};
use kw_core::buffer::DeviceBuffer;
use kw_core::compile_cache::CompileCache;
use kw_core::device::DeviceInfo;
use kw_core::kernel_def::eval::Geometry;
use kw_cuda::cudarc::driver::{result, sys, LaunchConfig, PushKernelArg};
use kw_cuda::{CompileStats, CudaBackend, CudaDevice};
use std::ffi::c_void;
use std::sync::{Arc, Mutex};
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

/// Forwards to the CUDA device and keeps the compile statistics of the last compilation
/// (so that one WisdomKernel first launch can be split into its stages).
struct Recording {
    inner: Arc<CudaDevice>,
    last: Mutex<Option<CompileStats>>,
}

impl Device for Recording {
    fn info(&self) -> &DeviceInfo {
        self.inner.info()
    }
    fn compile(&self, req: &CompileRequest<'_>) -> Result<Arc<dyn CompiledKernel>, BackendError> {
        let k = self.inner.compile_cuda(req)?;
        *self.last.lock().expect("stats lock") = Some(k.stats());
        Ok(Arc::new(k))
    }
    fn alloc(&self, bytes: usize) -> Result<Box<dyn DeviceMemory>, BackendError> {
        self.inner.alloc(bytes)
    }
    fn launch(
        &self,
        k: &dyn CompiledKernel,
        g: &Geometry,
        a: &[KernelArg<'_>],
    ) -> Result<(), BackendError> {
        self.inner.launch(k, g, a)
    }
    fn launch_on(
        &self,
        q: Queue<'_>,
        k: &dyn CompiledKernel,
        g: &Geometry,
        a: &[KernelArg<'_>],
        e: bool,
    ) -> Result<Option<Box<dyn DeviceEvent>>, BackendError> {
        self.inner.launch_on(q, k, g, a, e)
    }
    fn synchronize_queue(&self, q: Queue<'_>) -> Result<(), BackendError> {
        self.inner.synchronize_queue(q)
    }
    fn view(&self, raw: RawMem) -> Result<Box<dyn DeviceMemory>, BackendError> {
        self.inner.view(raw)
    }
    fn launch_timed(
        &self,
        k: &dyn CompiledKernel,
        g: &Geometry,
        a: &[KernelArg<'_>],
    ) -> Result<f64, BackendError> {
        self.inner.launch_timed(k, g, a)
    }
    fn synchronize(&self) -> Result<(), BackendError> {
        self.inner.synchronize()
    }
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
        "WisdomKernel::launch_on (attached)",
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

fn first_launch(dev: &Arc<CudaDevice>) -> Result<(), Box<dyn std::error::Error>> {
    const KERNELS: usize = 8;
    let rec = Arc::new(Recording {
        inner: dev.clone(),
        last: Mutex::new(None),
    });
    let n = 1usize << 20;
    let a = DeviceBuffer::<f32>::new(dev.as_ref(), n)?;
    a.fill(1.5)?;
    let c = DeviceBuffer::<f32>::new(dev.as_ref(), n)?;
    let args = [c.arg(), a.arg(), a.arg(), KernelArg::from(n as i32)];
    let mut rows: Vec<[f64; 7]> = Vec::new();
    let mut defs = Vec::new();
    for i in 0..KERNELS {
        // A unique define (and comment) each time: no compile cache anywhere can serve it.
        let t_def = Instant::now();
        let mut b = demo_kernels::cuda::vector_add_builder();
        b.define(
            "KW_UNIQUE_VARIANT",
            lit(i as i64 + 1000 * std::process::id() as i64),
        );
        let def = b.build()?;
        let def_ms = t_def.elapsed().as_secs_f64() * 1e3;
        defs.push(def.clone());
        let t_new = Instant::now();
        let wk = WisdomKernel::new(def, rec.clone() as Arc<dyn Device>)?;
        let new_ms = t_new.elapsed().as_secs_f64() * 1e3;
        // The selection step on its own (today's hook: selector or default configuration).
        let t_sel = Instant::now();
        let ps = wk.problem_size(&args)?;
        let _config = wk.select_config(&ps)?;
        let select_ms = t_sel.elapsed().as_secs_f64() * 1e3;
        let t_first = Instant::now();
        wk.launch(&args)?;
        rec.synchronize()?;
        let first_ms = t_first.elapsed().as_secs_f64() * 1e3;
        let stats = rec
            .last
            .lock()
            .expect("stats lock")
            .take()
            .expect("a compilation");
        let rest = first_ms - stats.nvrtc_ms - stats.load_ms;
        rows.push([
            def_ms,
            new_ms,
            select_ms,
            stats.nvrtc_ms,
            stats.load_ms,
            rest,
            first_ms,
        ]);
    }
    let mean = |k: usize| rows.iter().map(|r| r[k]).sum::<f64>() / rows.len() as f64;
    let [def_ms, new_ms, sel_ms, nvrtc, load, rest, first] = [
        mean(0),
        mean(1),
        mean(2),
        mean(3),
        mean(4),
        mean(5),
        mean(6),
    ];
    let total = new_ms + first;
    println!("\nfirst launch of a new kernel through WisdomKernel (mean of {KERNELS}, cold: nothing cached):");
    println!("  (KernelBuilder::build         {def_ms:8.3} ms, application start-up, not counted)");
    println!(
        "  WisdomKernel::new (checks)     {new_ms:8.3} ms  {:5.1}%",
        100.0 * new_ms / total
    );
    println!("  selection (problem size+select){sel_ms:8.3} ms  (inside the first launch)");
    println!(
        "  NVRTC compile (cubin)          {nvrtc:8.2} ms  {:5.1}%",
        100.0 * nvrtc / total
    );
    println!(
        "  module load + get function     {load:8.3} ms  {:5.1}%",
        100.0 * load / total
    );
    println!(
        "  rest of first launch + sync    {rest:8.3} ms  {:5.1}%",
        100.0 * rest / total
    );
    println!("  total (new + first launch)     {total:8.2} ms");
    println!(
        "RESULT first_launch_ms total={total:.2} new={new_ms:.3} select={sel_ms:.4} nvrtc={nvrtc:.2} load={load:.3} rest={rest:.3} nvrtc_share={:.3}",
        nvrtc / total
    );
    assert!(c.to_vec()?.iter().all(|&v| v == 3.0), "first launch result");

    // The same kernels again, in new WisdomKernels: the on-disk cache serves them.
    let mut warm: Vec<[f64; 3]> = Vec::new();
    c.fill(0.0)?;
    for def in defs {
        let t_new = Instant::now();
        let wk = WisdomKernel::new(def, rec.clone() as Arc<dyn Device>)?;
        let new_ms = t_new.elapsed().as_secs_f64() * 1e3;
        let t_first = Instant::now();
        wk.launch(&args)?;
        rec.synchronize()?;
        let first_ms = t_first.elapsed().as_secs_f64() * 1e3;
        let stats = rec
            .last
            .lock()
            .expect("stats lock")
            .take()
            .expect("a compilation");
        assert!(
            stats.from_cache,
            "the warm first launch was served by the cache"
        );
        warm.push([new_ms, stats.load_ms, first_ms]);
    }
    let wmean = |k: usize| warm.iter().map(|r| r[k]).sum::<f64>() / warm.len() as f64;
    let (wnew, wload, wfirst) = (wmean(0), wmean(1), wmean(2));
    let wtotal = wnew + wfirst;
    println!("first launch of the same kernels through new WisdomKernels, warm on-disk cache:");
    println!("  WisdomKernel::new (checks)     {wnew:8.3} ms");
    println!("  module load + get function     {wload:8.3} ms  (no NVRTC)");
    println!(
        "  total (new + first launch)     {wtotal:8.3} ms  ({:.3} of cold)",
        wtotal / total
    );
    println!(
        "RESULT first_launch_warm_ms total={wtotal:.3} new={wnew:.3} load={wload:.3} cold_total={total:.2} ratio={:.4}",
        wtotal / total
    );
    assert!(
        c.to_vec()?.iter().all(|&v| v == 3.0),
        "warm first launch result"
    );
    Ok(())
}

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

fn bandwidth(dev: &Arc<CudaDevice>) -> Result<(), Box<dyn std::error::Error>> {
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
