//! Part 2 of the CUDA benchmark: the first launch of a new kernel by stage (cold: NVRTC;
//! warm: the on-disk compile cache), through a device that records each stage.

use kernel_wisdom::{demo_kernels, lit, WisdomKernel};
use kw_core::backend::{
    BackendError, CompileRequest, CompiledKernel, Device, DeviceEvent, DeviceMemory, KernelArg,
    Queue, RawMem,
};
use kw_core::buffer::DeviceBuffer;
use kw_core::device::DeviceInfo;
use kw_core::kernel_def::eval::Geometry;
use kw_cuda::{CompileStats, CudaDevice};
use std::sync::{Arc, Mutex};
use std::time::Instant;

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

pub(super) fn first_launch(dev: &Arc<CudaDevice>) -> Result<(), Box<dyn std::error::Error>> {
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
