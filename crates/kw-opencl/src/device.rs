//! [`ClDevice`]: one OpenCL device with its context and in-order, profiling-enabled queue.

use crate::error::{api, describe};
use crate::memory::ClMemory;
use crate::program::{compile, ClKernel, ParamSpace};
use crate::shared::Shared;
use kw_core::backend::{
    BackendError, CompileRequest, CompiledKernel, Device, DeviceEvent, DeviceMemory, KernelArg,
    Mem, Queue, RawHandle, RawMem, RawQueue, Snapshot,
};
use kw_core::compile_cache::CompileCache;
use kw_core::{device::BackendKind, device::DeviceInfo, kernel_def::eval::Geometry};
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::Device as ClDeviceId;
use opencl3::event::Event;
use opencl3::kernel::set_kernel_arg;
use opencl3::types::{cl_command_queue, cl_context, cl_mem};
use std::ffi::c_void;
use std::sync::{Arc, PoisonError};

/// An opened OpenCL device. See the [crate documentation](crate) for the launch conventions.
pub struct ClDevice {
    shared: Arc<Shared>,
    info: DeviceInfo,
    cache: Arc<CompileCache>,
}

impl ClDevice {
    pub(crate) fn open(device: ClDeviceId, info: DeviceInfo) -> Result<ClDevice, BackendError> {
        let context = Context::from_device(&device).map_err(|e| api("clCreateContext", e))?;
        let queue =
            CommandQueue::create_default_with_properties(&context, CL_QUEUE_PROFILING_ENABLE, 0)
                .or_else(|_| {
                    // OpenCL 1.x platforms lack clCreateCommandQueueWithProperties.
                    #[allow(deprecated)]
                    CommandQueue::create_default(&context, CL_QUEUE_PROFILING_ENABLE)
                })
                .map_err(|e| api("clCreateCommandQueue", e))?;
        Ok(ClDevice {
            shared: Arc::new(Shared {
                queue,
                context,
                device,
            }),
            info,
            cache: CompileCache::global(),
        })
    }

    /// Attaches to the application's context and command queue (retained, never copied:
    /// no second context is created). The device is the queue's device; the queue must
    /// have been created in `context`. Launches on the device's own queue
    /// ([`Queue::DEFAULT`]) go to this queue; launch timing needs a queue created with
    /// `CL_QUEUE_PROFILING_ENABLE`.
    pub fn attach(context: &Context, queue: &CommandQueue) -> Result<ClDevice, BackendError> {
        // SAFETY: both handles come from live opencl3 objects.
        unsafe { ClDevice::attach_raw(context.get(), queue.get()) }
    }

    /// [`ClDevice::attach`] by raw handles.
    ///
    /// # Safety
    /// `context` must be a live `cl_context` and `queue` a live `cl_command_queue` created in
    /// it. Both are retained here and released when the device is dropped.
    pub unsafe fn attach_raw(
        context: cl_context,
        queue: cl_command_queue,
    ) -> Result<ClDevice, BackendError> {
        use opencl3::command_queue::{get_command_queue_info, CL_QUEUE_CONTEXT, CL_QUEUE_DEVICE};
        if context.is_null() || queue.is_null() {
            return Err(BackendError::Api {
                op: "attach",
                message: "a null cl_context or cl_command_queue was given".into(),
            });
        }
        let queue_context = get_command_queue_info(queue, CL_QUEUE_CONTEXT)
            .map_err(|e| api("clGetCommandQueueInfo", e.into()))?;
        if queue_context.to_ptr() as cl_context != context {
            return Err(BackendError::Api {
                op: "attach",
                message: "the command queue was not created in the given context".into(),
            });
        }
        // The routines and kw's own copies follow each other on the queue without events:
        // an out-of-order queue would let them overlap (wrong results, reported as success).
        let properties = get_command_queue_info(queue, opencl3::command_queue::CL_QUEUE_PROPERTIES)
            .map_err(|e| api("clGetCommandQueueInfo", e.into()))?
            .to_ulong();
        if properties & opencl3::command_queue::CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE != 0 {
            return Err(BackendError::Api {
                op: "attach",
                message: "the command queue executes out of order \
                          (CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE): kernel-wisdom needs an in-order \
                          queue (create one without that property for it)"
                    .into(),
            });
        }
        let device_id = get_command_queue_info(queue, CL_QUEUE_DEVICE)
            .map_err(|e| api("clGetCommandQueueInfo", e.into()))?
            .to_ptr() as opencl3::types::cl_device_id;
        let device = ClDeviceId::new(device_id);
        let info = crate::platform::device_info(&device)?;
        // SAFETY: the caller vouches for both handles; retaining makes the wrappers' releases
        // on drop balance.
        unsafe {
            opencl3::context::context::retain_context(context)
                .map_err(|e| api("clRetainContext", e.into()))?;
            if let Err(e) = opencl3::command_queue::retain_command_queue(queue) {
                let _ = opencl3::context::context::release_context(context);
                return Err(api("clRetainCommandQueue", e.into()));
            }
        }
        let dims = device.max_work_item_dimensions().unwrap_or(3);
        Ok(ClDevice {
            shared: Arc::new(Shared {
                queue: CommandQueue::new(queue, dims),
                context: Context::new(context, &[device_id]),
                device,
            }),
            info,
            cache: CompileCache::global(),
        })
    }

    /// Compiles through `cache` instead of the process's cache ([`CompileCache::global`]).
    pub fn with_compile_cache(mut self, cache: Arc<CompileCache>) -> ClDevice {
        self.cache = cache;
        self
    }

    fn foreign(what: &str) -> BackendError {
        BackendError::Foreign {
            backend: BackendKind::Opencl,
            what: what.to_string(),
            hint: String::new(),
        }
    }

    /// Sets the arguments and enqueues the kernel; `None` when the grid is empty.
    fn enqueue(
        &self,
        queue: Queue<'_>,
        kernel: &dyn CompiledKernel,
        g: &Geometry,
        args: &[KernelArg<'_>],
    ) -> Result<Option<Event>, BackendError> {
        let raw_queue = self.raw_queue(queue)?;
        let k = kernel
            .as_any()
            .downcast_ref::<ClKernel>()
            .filter(|k| Arc::ptr_eq(&k.shared, &self.shared))
            .ok_or_else(|| Self::foreign("kernel"))?;
        let arg_err = |index: usize, message: String| BackendError::Argument {
            kernel: k.name().to_string(),
            index,
            message,
        };
        let n = args.len();
        let locals = &g.local_args;
        // Every parameter: the application's arguments in order, with the definition's
        // `__local` arguments at their positions.
        let declared = n + locals.len();
        if let Some((p, _)) = locals.iter().find(|(p, _)| *p as usize >= declared) {
            return Err(arg_err(
                p as usize,
                format!(
                    "a `__local` argument at position {p} is outside the {declared} parameters"
                ),
            ));
        }
        let has_local = match &k.params {
            Some(p) => p.len() == declared + 1 && p[declared] == ParamSpace::Local,
            None => k.num_args == declared + 1,
        };
        if k.num_args != declared && !has_local {
            let given = if locals.is_empty() {
                format!("{n} arguments were given")
            } else {
                format!(
                    "{n} arguments and {} `__local` arguments were given",
                    locals.len()
                )
            };
            return Err(arg_err(
                declared.min(k.num_args),
                format!("the kernel takes {} parameters, {given}", k.num_args),
            ));
        }
        if g.shared_memory_bytes > 0 && !has_local {
            // The configuration's shared memory: its fault, not the arguments'.
            return Err(BackendError::Launch {
                kernel: k.name().to_string(),
                grid: g.grid,
                block: g.block,
                message: format!(
                    "{} bytes of dynamic local memory were asked for, but the kernel has no \
                     trailing `__local` parameter for them",
                    g.shared_memory_bytes
                ),
            });
        }
        // The position of application argument `i` among the parameters (the local
        // arguments come by increasing position).
        let slot = |i: usize| {
            let mut p = i;
            for (l, _) in locals.iter() {
                if l as usize > p {
                    break;
                }
                p += 1;
            }
            p
        };
        if let Some(params) = &k.params {
            for (i, a) in args.iter().enumerate() {
                let p = &params[slot(i)];
                let ok = matches!(
                    (a, p),
                    (KernelArg::Buffer { .. }, ParamSpace::Memory)
                        | (KernelArg::Scalar(_), ParamSpace::Private)
                );
                if !ok {
                    let want = match p {
                        ParamSpace::Memory => "a buffer (`__global` or `__constant` pointer)",
                        ParamSpace::Local => {
                            "a `__local` pointer (declare it a local argument of the definition)"
                        }
                        ParamSpace::Private => "a scalar",
                    };
                    return Err(arg_err(
                        slot(i),
                        format!("the kernel takes {want} here, got a {}", a.describe()),
                    ));
                }
                // The element or value type, where the driver names a basic one: a buffer of
                // ints given for a `float*` launched and read garbage.
                let (ty, pointer) = match a {
                    KernelArg::Buffer { elem, .. } => (*elem, true),
                    KernelArg::Scalar(s) => (s.ty(), false),
                };
                if let Some(want) = k.types.get(slot(i)).copied().flatten() {
                    if !want.takes(ty, pointer) {
                        let (theirs, ours) = if pointer {
                            (format!("{}*", want.name), format!("a buffer of {ty}"))
                        } else {
                            (want.name.to_string(), format!("a scalar {ty}"))
                        };
                        let name = match k.names.get(slot(i)).cloned().flatten() {
                            Some(n) => format!(" `{n}`"),
                            None => String::new(),
                        };
                        return Err(arg_err(
                            slot(i),
                            format!("the kernel's parameter{name} is `{theirs}`, got {ours}"),
                        ));
                    }
                }
            }
            if let Some((p, _)) = locals
                .iter()
                .find(|(p, _)| params[*p as usize] != ParamSpace::Local)
            {
                return Err(arg_err(
                    p as usize,
                    "a `__local` argument is declared here, but the kernel's parameter is not a \
                     `__local` pointer"
                        .into(),
                ));
            }
        }
        let mut global = [0usize; 3];
        for (axis, slot) in global.iter_mut().enumerate() {
            *slot = (g.grid[axis] as usize)
                .checked_mul(g.block[axis] as usize)
                .ok_or_else(|| arg_err(0, "the global size overflows".into()))?;
        }
        let local = g.block.map(|b| b as usize);
        if global.contains(&0) {
            return Ok(None);
        }
        let work_dim: u32 = if global[2] > 1 || local[2] > 1 {
            3
        } else if global[1] > 1 || local[1] > 1 {
            2
        } else {
            1
        };
        let guard = k.kernel.lock().unwrap_or_else(PoisonError::into_inner);
        let raw = guard.get();
        for (i, a) in args.iter().enumerate() {
            let status = match a {
                KernelArg::Buffer { mem, .. } => {
                    if let Some(Err(message)) = a.checked_bytes() {
                        return Err(arg_err(i, message));
                    }
                    // A buffer this device cannot use is the argument's fault, whatever
                    // the configuration.
                    let handle: cl_mem = self.mem_handle(mem, "the buffer").map_err(|e| {
                        arg_err(
                            i,
                            match e {
                                BackendError::Api { message, .. } => message,
                                e => e.to_string(),
                            },
                        )
                    })?;
                    // SAFETY: the kernel is locked; `handle` is a live buffer of this context
                    // and the driver copies the handle's bytes before returning.
                    unsafe {
                        set_kernel_arg(
                            raw,
                            slot(i) as u32,
                            std::mem::size_of::<cl_mem>(),
                            (&raw const handle).cast::<c_void>(),
                        )
                    }
                }
                KernelArg::Scalar(s) => {
                    let bytes = s.bytes();
                    // SAFETY: the kernel is locked; the driver copies `bytes` before returning.
                    unsafe {
                        set_kernel_arg(
                            raw,
                            slot(i) as u32,
                            bytes.len(),
                            bytes.as_ptr().cast::<c_void>(),
                        )
                    }
                }
            };
            status.map_err(|e| {
                arg_err(
                    slot(i),
                    format!(
                        "clSetKernelArg with a {} failed: {}",
                        a.describe(),
                        describe(e.into())
                    ),
                )
            })?;
        }
        for (p, bytes) in locals.iter() {
            // SAFETY: a null value with a size declares a `__local` buffer of that size.
            unsafe { set_kernel_arg(raw, p, bytes as usize, std::ptr::null()) }.map_err(|e| {
                arg_err(
                    p as usize,
                    format!(
                        "setting a `__local` argument of {bytes} bytes failed: {}",
                        describe(e.into())
                    ),
                )
            })?;
        }
        if has_local {
            let bytes = (g.shared_memory_bytes as usize).max(1);
            // SAFETY: a null value with a size declares a `__local` buffer of that size.
            unsafe { set_kernel_arg(raw, declared as u32, bytes, std::ptr::null()) }.map_err(
                |e| {
                    arg_err(
                        declared,
                        format!(
                            "setting {bytes} bytes of local memory failed: {}",
                            describe(e.into())
                        ),
                    )
                },
            )?;
        }
        // Local memory beyond the device's: PoCL aborts the process at the launch (an
        // assertion) instead of failing it, even for a kernel whose own `__local` arrays are
        // too large (its compiler accepts them), so the total is checked here: the kernel's
        // own local memory (asked of the driver once, when it was built) and the `__local`
        // arguments of this launch.
        let limit = self.info.max_shared_memory_per_block;
        let asked: u64 = locals.iter().map(|(_, b)| b as u64).sum::<u64>()
            + if has_local {
                g.shared_memory_bytes.max(1) as u64
            } else {
                0
            };
        let used = k.static_local_bytes.saturating_add(asked);
        if limit > 0 && used > limit {
            return Err(BackendError::Launch {
                kernel: k.name().to_string(),
                grid: g.grid,
                block: g.block,
                message: format!(
                    "the launch needs {used} bytes of local memory ({asked} of them for its \
                     `__local` arguments), more than the device's {limit} \
                     (CL_DEVICE_LOCAL_MEM_SIZE)"
                ),
            });
        }
        let wait = queue.wait_list();
        // SAFETY: every argument was set above; `global` and `local` outlive the call; the
        // queue and the events are live (the `Queue`'s constructor vouched for them).
        let event = unsafe {
            opencl3::command_queue::enqueue_nd_range_kernel(
                raw_queue,
                raw,
                work_dim,
                std::ptr::null(),
                global.as_ptr(),
                local.as_ptr(),
                wait.len() as u32,
                if wait.is_empty() {
                    std::ptr::null()
                } else {
                    wait.as_ptr()
                },
            )
        }
        .map(Event::new)
        .map_err(|e| BackendError::Launch {
            kernel: k.name().to_string(),
            grid: g.grid,
            block: g.block,
            message: describe(e.into()),
        })?;
        drop(guard);
        Ok(Some(event))
    }

    /// The `cl_command_queue` a [`Queue`] names.
    fn raw_queue(&self, queue: Queue<'_>) -> Result<cl_command_queue, BackendError> {
        match queue.raw() {
            RawQueue::OpenCl(q) => {
                // A queue of another context reaches the driver as CL_INVALID_CONTEXT, which
                // a launch would blame on its configuration: said here, as for a buffer.
                use opencl3::command_queue::{get_command_queue_info, CL_QUEUE_CONTEXT};
                let context = get_command_queue_info(q as cl_command_queue, CL_QUEUE_CONTEXT)
                    .map_err(|e| api("clGetCommandQueueInfo(CL_QUEUE_CONTEXT)", e.into()))?
                    .to_ptr();
                if context as usize != self.shared.context.get() as usize {
                    // The caller's fault whatever the configuration (`is_arguments_fault`): the
                    // selection is not blamed for it.
                    return Err(BackendError::Foreign {
                        backend: BackendKind::Opencl,
                        what: "the command queue".into(),
                        hint: format!(
                            "it was created in another OpenCL context than the device's ({})",
                            crate::memory::OTHER_CONTEXT_HINT
                        ),
                    });
                }
                Ok(q as cl_command_queue)
            }
            RawQueue::Default => Ok(self.shared.queue.get()),
            _ => Err(Self::foreign("a CUDA stream")),
        }
    }

    /// The `cl_mem` of a buffer (`what`: how to name it in an error).
    fn mem_handle(&self, mem: &Mem<'_>, what: &str) -> Result<cl_mem, BackendError> {
        match mem {
            Mem::Device(m) => m
                .as_any()
                .downcast_ref::<ClMemory>()
                .filter(|m| Arc::ptr_eq(&m.shared, &self.shared))
                .map(ClMemory::raw)
                .ok_or_else(|| Self::foreign(what)),
            Mem::Raw(r) => match r.handle() {
                RawHandle::OpenCl(h) => {
                    // SAFETY: `RawMem`'s constructor vouched for a live buffer.
                    if !unsafe { crate::memory::in_context(&self.shared, h as cl_mem) }? {
                        return Err(BackendError::Api {
                            op: "a buffer argument",
                            message: format!(
                                "{what} belongs to another OpenCL context than the device's \
                                 ({})",
                                crate::memory::OTHER_CONTEXT_HINT
                            ),
                        });
                    }
                    Ok(h as cl_mem)
                }
                _ => Err(Self::foreign(&format!("{what}, a CUDA pointer,"))),
            },
        }
    }
}

/// A launch's completion: the OpenCL event (released on drop).
pub struct ClEvent(pub Event);

impl DeviceEvent for ClEvent {
    fn wait(&self) -> Result<(), BackendError> {
        self.0.wait().map_err(|e| api("clWaitForEvents", e))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

impl Device for ClDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn compile_cache(&self) -> Option<&Arc<CompileCache>> {
        Some(&self.cache)
    }

    fn compile(&self, req: &CompileRequest<'_>) -> Result<Arc<dyn CompiledKernel>, BackendError> {
        Ok(Arc::new(compile(
            &self.shared,
            &self.info,
            &self.cache,
            req,
        )?))
    }

    fn alloc(&self, bytes: usize) -> Result<Box<dyn DeviceMemory>, BackendError> {
        let limit = self.info.max_alloc_bytes;
        if limit > 0 && bytes as u64 > limit {
            return Err(BackendError::AllocTooLarge {
                backend: BackendKind::Opencl,
                bytes: bytes as u64,
                limit,
                limit_name: "CL_DEVICE_MAX_MEM_ALLOC_SIZE",
            });
        }
        Ok(Box::new(ClMemory::new(Arc::clone(&self.shared), bytes)?))
    }

    fn launch_on(
        &self,
        queue: Queue<'_>,
        kernel: &dyn CompiledKernel,
        geometry: &Geometry,
        args: &[KernelArg<'_>],
        want_event: bool,
    ) -> Result<Option<Box<dyn DeviceEvent>>, BackendError> {
        let event = self.enqueue(queue, kernel, geometry, args)?;
        Ok(match event {
            Some(e) if want_event => Some(Box::new(ClEvent(e))),
            _ => None,
        })
    }

    fn check_queue(&self, queue: Queue<'_>) -> Result<(), BackendError> {
        self.raw_queue(queue).map(drop)
    }

    fn synchronize_queue(&self, queue: Queue<'_>) -> Result<(), BackendError> {
        let q = self.raw_queue(queue)?;
        opencl3::command_queue::finish(q).map_err(|e| api("clFinish", e.into()))?;
        // The events a launch on it waits for may come from other queues (an upload there):
        // what the launch will read is complete only once they are.
        let wait: Vec<opencl3::types::cl_event> =
            queue.wait_list().iter().map(|e| e.cast()).collect();
        if wait.is_empty() {
            return Ok(());
        }
        // A user event the application completes after this call (a gate) would never
        // complete while we wait: refused instead (capture then skips the launch, saying so).
        use opencl3::event::{
            get_event_info, CL_COMMAND_USER, CL_COMPLETE, CL_EVENT_COMMAND_EXECUTION_STATUS,
            CL_EVENT_COMMAND_TYPE,
        };
        for (i, &e) in wait.iter().enumerate() {
            let user = get_event_info(e, CL_EVENT_COMMAND_TYPE)
                .map_err(|e| api("clGetEventInfo", e.into()))?
                .to_uint()
                == CL_COMMAND_USER;
            let status = get_event_info(e, CL_EVENT_COMMAND_EXECUTION_STATUS)
                .map_err(|e| api("clGetEventInfo", e.into()))?
                .to_int();
            if user && status != CL_COMPLETE {
                return Err(BackendError::Api {
                    op: "synchronize",
                    message: format!(
                        "the launch waits for a user event (wait-list entry {i}) that is not \
                         complete yet: waiting for it here could last for ever, as the \
                         application completes it only after this call"
                    ),
                });
            }
        }
        opencl3::event::wait_for_events(&wait).map_err(|e| api("clWaitForEvents", e.into()))
    }

    fn snapshot_on(
        &self,
        queue: Queue<'_>,
        sources: &[(Mem<'_>, usize)],
    ) -> Result<Box<dyn Snapshot>, BackendError> {
        let raw_queue = self.raw_queue(queue)?;
        let mut raw = Vec::with_capacity(sources.len());
        for (i, (mem, bytes)) in sources.iter().enumerate() {
            raw.push((
                self.mem_handle(mem, &format!("the buffer of argument {i}"))?,
                mem.len_bytes(),
                *bytes,
            ));
        }
        // SAFETY: the queue and its events are live (the `Queue`'s constructor vouched for
        // them); device memory was checked to be this context's, raw memory was vouched for
        // by `RawMem`'s constructor.
        let snapshot = unsafe {
            crate::snapshot::ClSnapshot::enqueue(&self.shared, raw_queue, queue.wait_list(), &raw)
        }?;
        Ok(Box::new(snapshot))
    }

    fn view(&self, raw: RawMem) -> Result<Box<dyn DeviceMemory>, BackendError> {
        match raw.handle() {
            // SAFETY: `RawMem`'s constructor vouched for a live buffer of that size.
            RawHandle::OpenCl(h) => Ok(Box::new(unsafe {
                ClMemory::borrowed(Arc::clone(&self.shared), h as cl_mem, raw.len_bytes())
            }?)),
            _ => Err(Self::foreign("a CUDA device pointer")),
        }
    }

    fn launch_timed(
        &self,
        kernel: &dyn CompiledKernel,
        geometry: &Geometry,
        args: &[KernelArg<'_>],
    ) -> Result<f64, BackendError> {
        let times = self.launch_timed_runs(kernel, geometry, args, &[], 1)?;
        Ok(times.first().copied().unwrap_or(0.0))
    }

    fn launch_timed_runs(
        &self,
        kernel: &dyn CompiledKernel,
        geometry: &Geometry,
        args: &[KernelArg<'_>],
        restore: &[(&dyn DeviceMemory, &dyn DeviceMemory)],
        runs: usize,
    ) -> Result<Vec<f64>, BackendError> {
        let launch_err = |message: String| BackendError::Launch {
            kernel: kernel.name().to_string(),
            grid: geometry.grid,
            block: geometry.block,
            message,
        };
        let mut events = Vec::with_capacity(runs);
        let gentle = kw_core::backend::gentle_chunk() > 0;
        for _ in 0..runs {
            for (dst, src) in restore {
                let dst = dst
                    .as_any()
                    .downcast_ref::<ClMemory>()
                    .filter(|d| Arc::ptr_eq(&d.shared, &self.shared))
                    .ok_or_else(|| Self::foreign("restore buffer"))?;
                // In-order queue: the launch below runs after the copy; its event is not needed.
                dst.enqueue_copy_from(*src)?;
            }
            events.push(self.enqueue(Queue::DEFAULT, kernel, geometry, args)?);
            if gentle {
                // Shared mode: one run at a time (see `kw_core::backend::set_gentle`).
                self.shared.queue.finish().map_err(|e| api("clFinish", e))?;
            }
        }
        self.shared.queue.finish().map_err(|e| api("clFinish", e))?;
        let mut times = Vec::with_capacity(runs);
        for event in events {
            let Some(event) = event else {
                times.push(0.0);
                continue;
            };
            event.wait().map_err(|e| launch_err(describe(e)))?;
            let start = event
                .profiling_command_start()
                .map_err(|e| api("CL_PROFILING_COMMAND_START", e))?;
            let end = event
                .profiling_command_end()
                .map_err(|e| api("CL_PROFILING_COMMAND_END", e))?;
            times.push(end.saturating_sub(start) as f64 / 1.0e6);
        }
        Ok(times)
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        self.shared.queue.finish().map_err(|e| api("clFinish", e))
    }
}

impl ClDevice {
    /// The raw OpenCL objects, for callers that drive OpenCL directly next to the runtime
    /// (e.g. a benchmark against a raw enqueue): the context, the queue and the device.
    pub fn raw_parts(&self) -> (&Context, &CommandQueue, &ClDeviceId) {
        (
            &self.shared.context,
            &self.shared.queue,
            &self.shared.device,
        )
    }
}
