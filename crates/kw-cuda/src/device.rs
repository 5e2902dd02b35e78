//! [`CudaDevice`]: a context (the device's primary context) and one stream.

use crate::compile;
use crate::error::api;
use crate::kernel::CudaKernel;
use crate::launch;
use crate::memory::CudaMemory;
use crate::nvrtc_lib;
use crate::probe::DriverVersion;
use cudarc::driver::{sys, CudaContext, CudaEvent, CudaStream};
use kw_core::backend::{
    BackendError, CompileRequest, CompiledKernel, Device, DeviceEvent, DeviceMemory, KernelArg,
    Mem, Queue, RawHandle, RawMem, RawQueue, Snapshot,
};
use kw_core::compile_cache::{CacheKey, CompileCache, Entry, Label};
use kw_core::device::{BackendKind, DeviceInfo};
use kw_core::kernel_def::eval::Geometry;
use std::sync::{Arc, Mutex};

/// One opened CUDA device. All work is ordered on its stream.
pub struct CudaDevice {
    info: DeviceInfo,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// Start and end events for [`Device::launch_timed`].
    events: Mutex<(CudaEvent, CudaEvent)>,
    /// Start and end events of [`Device::launch_timed_runs`], one pair per run (grown as
    /// needed).
    run_events: Mutex<Vec<(CudaEvent, CudaEvent)>>,
    driver: DriverVersion,
    cache: Arc<CompileCache>,
}

impl CudaDevice {
    /// Opens device `ordinal` (its primary context and a new non-blocking stream).
    pub(crate) fn open(
        ordinal: usize,
        info: DeviceInfo,
        driver: DriverVersion,
    ) -> Result<CudaDevice, BackendError> {
        let ctx = CudaContext::new(ordinal).map_err(api("cuDevicePrimaryCtxRetain"))?;
        // SAFETY: this backend never hands out cudarc `CudaSlice`s, whose cross-stream
        // tracking is what event tracking is for; all its work is on one stream.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().map_err(api("cuStreamCreate"))?;
        CudaDevice::with_context(ctx, stream, info, driver)
    }

    /// A device over an existing context and stream (no context is created).
    pub(crate) fn with_context(
        ctx: Arc<CudaContext>,
        stream: Arc<CudaStream>,
        info: DeviceInfo,
        driver: DriverVersion,
    ) -> Result<CudaDevice, BackendError> {
        let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let events = (
            ctx.new_event(timing).map_err(api("cuEventCreate"))?,
            ctx.new_event(timing).map_err(api("cuEventCreate"))?,
        );
        Ok(CudaDevice {
            info,
            ctx,
            stream,
            events: Mutex::new(events),
            run_events: Mutex::new(Vec::new()),
            driver,
            cache: CompileCache::global(),
        })
    }

    /// The `CUstream` a [`Queue`] names.
    #[inline]
    fn cu_stream(&self, queue: Queue<'_>) -> Result<sys::CUstream, BackendError> {
        match queue.raw() {
            RawQueue::Default => Ok(self.stream.cu_stream()),
            RawQueue::Cuda(s) => Ok(s as sys::CUstream),
            _ => Err(BackendError::Foreign {
                backend: BackendKind::Cuda,
                what: "an OpenCL command queue".into(),
                hint: String::new(),
            }),
        }
    }

    /// The cudarc context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream all of this device's work goes to.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The driver's CUDA version.
    pub fn driver_version(&self) -> DriverVersion {
        self.driver
    }

    /// Compiles through `cache` instead of the process's cache ([`CompileCache::global`]).
    pub fn with_compile_cache(mut self, cache: Arc<CompileCache>) -> CudaDevice {
        self.cache = cache;
        self
    }

    /// What identifies this device's binaries in cache keys: name, architecture, compute
    /// capability, NVRTC version and driver version.
    fn cache_target(&self) -> Vec<(&'static str, String)> {
        let cc = self.info.compute_capability.unwrap_or((0, 0));
        vec![
            ("backend", "cuda".to_string()),
            ("device", self.info.name.clone()),
            ("architecture", self.info.architecture.clone()),
            ("compute-capability", format!("{}.{}", cc.0, cc.1)),
            ("compiler", self.info.compiler_version.clone()),
            ("driver", self.driver.raw.to_string()),
        ]
    }

    /// Compiles to a concrete [`CudaKernel`] (what [`Device::compile`] wraps in an `Arc`),
    /// through the compile cache: a cached cubin or PTX is loaded without running NVRTC (its
    /// [`crate::CompileStats::from_cache`] says so); a fresh one is stored.
    pub fn compile_cuda(&self, req: &CompileRequest<'_>) -> Result<CudaKernel, BackendError> {
        let target = self.cache_target();
        let target: Vec<(&str, &str)> = target.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let key = CacheKey::for_request(&target, req);
        let device_label = format!("{} ({})", self.info.name, self.info.architecture);
        let label = Label {
            backend: "cuda",
            kernel: req.kernel_name,
            device: &device_label,
        };
        let load = |entry: &Entry| {
            let compiled = compile::Compiled::from_entry(entry)?;
            CudaKernel::load(
                &self.ctx,
                req.kernel_name,
                &req.source.file_name,
                compiled,
                self.driver.raw,
            )
            .map(CudaKernel::loaded_from_cache)
            .map_err(|e| e.to_string())
        };
        self.cache.compile_through(key.as_ref(), label, load, |_| {
            let nvrtc =
                nvrtc_lib::nvrtc(self.driver.major()).map_err(|e| BackendError::Unavailable {
                    backend: BackendKind::Cuda,
                    reason: e.to_string(),
                })?;
            let cc = self.info.compute_capability.unwrap_or((0, 0));
            let compiled = compile::compile(nvrtc, req, cc)?;
            let artifact = compiled.artifact();
            let kernel = CudaKernel::load(
                &self.ctx,
                req.kernel_name,
                &req.source.file_name,
                compiled,
                self.driver.raw,
            )?;
            Ok((kernel, Some(artifact)))
        })
    }

    fn kernel<'k>(&self, kernel: &'k dyn CompiledKernel) -> Result<&'k CudaKernel, BackendError> {
        kernel
            .as_any()
            .downcast_ref::<CudaKernel>()
            .ok_or_else(|| BackendError::Foreign {
                backend: BackendKind::Cuda,
                what: format!("kernel `{}`", kernel.name()),
                hint: String::new(),
            })
    }
}

impl Device for CudaDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn compile_cache(&self) -> Option<&Arc<CompileCache>> {
        Some(&self.cache)
    }

    fn compile(&self, req: &CompileRequest<'_>) -> Result<Arc<dyn CompiledKernel>, BackendError> {
        Ok(Arc::new(self.compile_cuda(req)?))
    }

    fn alloc(&self, bytes: usize) -> Result<Box<dyn DeviceMemory>, BackendError> {
        Ok(Box::new(CudaMemory::alloc(&self.ctx, &self.stream, bytes)?))
    }

    #[inline]
    fn launch_on(
        &self,
        queue: Queue<'_>,
        kernel: &dyn CompiledKernel,
        geometry: &Geometry,
        args: &[KernelArg<'_>],
        _want_event: bool,
    ) -> Result<Option<Box<dyn DeviceEvent>>, BackendError> {
        let k = self.kernel(kernel)?;
        launch::launch(&self.ctx, self.cu_stream(queue)?, k, geometry, args)?;
        Ok(None)
    }

    fn check_queue(&self, queue: Queue<'_>) -> Result<(), BackendError> {
        self.cu_stream(queue).map(drop)
    }

    fn synchronize_queue(&self, queue: Queue<'_>) -> Result<(), BackendError> {
        let stream = self.cu_stream(queue)?;
        self.ctx.bind_to_thread().map_err(api("cuCtxSetCurrent"))?;
        // SAFETY: the stream is live (the `Queue`'s constructor vouched for it) and belongs
        // to this device's context, which is current.
        unsafe { cudarc::driver::result::stream::synchronize(stream) }
            .map_err(api("cuStreamSynchronize"))
    }

    fn snapshot_on(
        &self,
        queue: Queue<'_>,
        sources: &[(Mem<'_>, usize)],
    ) -> Result<Box<dyn Snapshot>, BackendError> {
        let stream = self.cu_stream(queue)?;
        let mut raw = Vec::with_capacity(sources.len());
        for (i, (mem, bytes)) in sources.iter().enumerate() {
            let ptr = crate::memory::mem_ptr(mem, &self.ctx, || format!("buffer {i} to copy"))?;
            raw.push((ptr, mem.len_bytes(), *bytes));
        }
        // SAFETY: the stream is live (the `Queue`'s constructor vouched for it); device
        // memory was checked to be this context's, raw memory was vouched for by `RawMem`'s
        // constructor.
        let snapshot = unsafe { crate::snapshot::CudaSnapshot::enqueue(&self.ctx, stream, &raw) }?;
        Ok(Box::new(snapshot))
    }

    fn view(&self, raw: RawMem) -> Result<Box<dyn DeviceMemory>, BackendError> {
        match raw.handle() {
            // SAFETY: `RawMem`'s constructor vouched for live memory of that size.
            RawHandle::Cuda(p) => Ok(Box::new(unsafe {
                CudaMemory::borrowed(&self.ctx, &self.stream, p, raw.len_bytes())
            })),
            _ => Err(BackendError::Foreign {
                backend: BackendKind::Cuda,
                what: "an OpenCL buffer".into(),
                hint: String::new(),
            }),
        }
    }

    fn launch_timed(
        &self,
        kernel: &dyn CompiledKernel,
        geometry: &Geometry,
        args: &[KernelArg<'_>],
    ) -> Result<f64, BackendError> {
        let k = self.kernel(kernel)?;
        let events = self.events.lock().unwrap_or_else(|p| p.into_inner());
        let (start, end) = &*events;
        start.record(&self.stream).map_err(api("cuEventRecord"))?;
        launch::launch(&self.ctx, self.stream.cu_stream(), k, geometry, args)?;
        end.record(&self.stream).map_err(api("cuEventRecord"))?;
        end.synchronize().map_err(api("cuEventSynchronize"))?;
        let ms = start.elapsed_ms(end).map_err(api("cuEventElapsedTime"))?;
        Ok(f64::from(ms))
    }

    fn launch_timed_runs(
        &self,
        kernel: &dyn CompiledKernel,
        geometry: &Geometry,
        args: &[KernelArg<'_>],
        restore: &[(&dyn DeviceMemory, &dyn DeviceMemory)],
        runs: usize,
    ) -> Result<Vec<f64>, BackendError> {
        let k = self.kernel(kernel)?;
        let mut events = self.run_events.lock().unwrap_or_else(|p| p.into_inner());
        let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        while events.len() < runs {
            events.push((
                self.ctx.new_event(timing).map_err(api("cuEventCreate"))?,
                self.ctx.new_event(timing).map_err(api("cuEventCreate"))?,
            ));
        }
        let gentle = kw_core::backend::gentle_chunk() > 0;
        for (start, end) in events.iter().take(runs) {
            for (dst, src) in restore {
                let dst = dst.as_any().downcast_ref::<CudaMemory>().ok_or_else(|| {
                    BackendError::Foreign {
                        backend: BackendKind::Cuda,
                        what: "restore buffer".into(),
                        hint: String::new(),
                    }
                })?;
                // On the buffer's stream, which is this device's: ordered before the launch.
                dst.copy_from_async(*src)?;
            }
            start.record(&self.stream).map_err(api("cuEventRecord"))?;
            launch::launch(&self.ctx, self.stream.cu_stream(), k, geometry, args)?;
            end.record(&self.stream).map_err(api("cuEventRecord"))?;
            if gentle {
                // Shared mode: one run at a time (see `kw_core::backend::set_gentle`).
                end.synchronize().map_err(api("cuEventSynchronize"))?;
            }
        }
        let mut times = Vec::with_capacity(runs);
        if let Some((_, last)) = events.get(runs.wrapping_sub(1)) {
            last.synchronize().map_err(|e| BackendError::Launch {
                kernel: kernel.name().to_string(),
                grid: geometry.grid,
                block: geometry.block,
                message: crate::error::driver_message(e),
            })?;
        }
        for (start, end) in events.iter().take(runs) {
            let ms = start.elapsed_ms(end).map_err(api("cuEventElapsedTime"))?;
            times.push(f64::from(ms));
        }
        Ok(times)
    }

    fn write_symbol(
        &self,
        kernel: &dyn CompiledKernel,
        name: &str,
        data: &[u8],
    ) -> Result<(), BackendError> {
        let k = self.kernel(kernel)?;
        let err = |message: String| BackendError::Symbol {
            kernel: k.name().to_string(),
            name: name.to_string(),
            message,
        };
        self.ctx.bind_to_thread().map_err(api("cuCtxSetCurrent"))?;
        let mut symbol = k.module().get_global(name, &self.stream).map_err(|e| {
            err(format!(
                "cuModuleGetGlobal: {} (declare it `__constant__` at namespace scope of the \
                 kernel's source, outside any C++ namespace)",
                crate::error::driver_message(e)
            ))
        })?;
        if data.len() > symbol.len() {
            return Err(err(format!(
                "{} bytes given, the module's symbol holds {}",
                data.len(),
                symbol.len()
            )));
        }
        let mut target = symbol.slice_mut(..data.len());
        self.stream
            .memcpy_htod(data, &mut target)
            .map_err(|e| err(format!("cuMemcpyHtoD: {}", crate::error::driver_message(e))))?;
        self.stream
            .synchronize()
            .map_err(api("cuStreamSynchronize"))
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        self.stream
            .synchronize()
            .map_err(api("cuStreamSynchronize"))
    }
}

impl std::fmt::Debug for CudaDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CudaDevice({})", self.info.summary())
    }
}
