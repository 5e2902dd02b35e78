//! [`ClDevice`]: one OpenCL device with its context and in-order, profiling-enabled queue.

use crate::error::{api, describe};
use crate::memory::ClMemory;
use crate::program::{compile, ClKernel, ParamSpace};
use kw_core::backend::{
    BackendError, CompileRequest, CompiledKernel, Device, DeviceMemory, KernelArg,
};
use kw_core::{BackendKind, DeviceInfo, Geometry};
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::Device as ClDeviceId;
use opencl3::event::Event;
use opencl3::kernel::set_kernel_arg;
use opencl3::types::cl_mem;
use std::ffi::c_void;
use std::sync::{Arc, PoisonError};

/// What the device's buffers and kernels share with it. The queue is declared first so it
/// is released before the context.
pub(crate) struct Shared {
    pub(crate) queue: CommandQueue,
    pub(crate) context: Context,
    pub(crate) device: ClDeviceId,
}

/// An opened OpenCL device. See the [crate documentation](crate) for the launch conventions.
pub struct ClDevice {
    shared: Arc<Shared>,
    info: DeviceInfo,
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
        })
    }

    fn foreign(what: &str) -> BackendError {
        BackendError::Foreign {
            backend: BackendKind::Opencl,
            what: what.to_string(),
        }
    }

    /// Sets the arguments and enqueues the kernel; `None` when the grid is empty.
    fn enqueue(
        &self,
        kernel: &dyn CompiledKernel,
        g: &Geometry,
        args: &[KernelArg<'_>],
    ) -> Result<Option<Event>, BackendError> {
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
        let has_local = match &k.params {
            Some(p) => p.len() == n + 1 && p[n] == ParamSpace::Local,
            None => k.num_args == n + 1,
        };
        if k.num_args != n && !has_local {
            return Err(arg_err(
                n.min(k.num_args),
                format!(
                    "the kernel takes {} parameters, {n} arguments were given",
                    k.num_args
                ),
            ));
        }
        if g.shared_memory_bytes > 0 && !has_local {
            return Err(arg_err(
                n,
                format!(
                    "{} bytes of dynamic local memory were asked for, but the kernel has no \
                     trailing `__local` parameter for them",
                    g.shared_memory_bytes
                ),
            ));
        }
        if let Some(params) = &k.params {
            for (i, (a, p)) in args.iter().zip(params).enumerate() {
                let ok = matches!(
                    (a, p),
                    (KernelArg::Buffer { .. }, ParamSpace::Memory)
                        | (KernelArg::Scalar(_), ParamSpace::Private)
                );
                if !ok {
                    let want = match p {
                        ParamSpace::Memory => "a buffer (`__global` pointer)",
                        ParamSpace::Local => "a `__local` pointer (only as the trailing parameter)",
                        ParamSpace::Private => "a scalar",
                    };
                    return Err(arg_err(
                        i,
                        format!("the kernel takes {want} here, got a {}", a.describe()),
                    ));
                }
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
                    let m = mem
                        .as_any()
                        .downcast_ref::<ClMemory>()
                        .filter(|m| Arc::ptr_eq(&m.shared, &self.shared))
                        .ok_or_else(|| Self::foreign(&format!("the buffer of argument {i}")))?;
                    let handle: cl_mem = m.raw();
                    // SAFETY: the kernel is locked; `handle` is a live buffer of this context
                    // and the driver copies the handle's bytes before returning.
                    unsafe {
                        set_kernel_arg(
                            raw,
                            i as u32,
                            std::mem::size_of::<cl_mem>(),
                            (&raw const handle).cast::<c_void>(),
                        )
                    }
                }
                KernelArg::Scalar(s) => {
                    let bytes = s.bytes();
                    // SAFETY: the kernel is locked; the driver copies `bytes` before returning.
                    unsafe {
                        set_kernel_arg(raw, i as u32, bytes.len(), bytes.as_ptr().cast::<c_void>())
                    }
                }
            };
            status.map_err(|e| {
                arg_err(
                    i,
                    format!(
                        "clSetKernelArg with a {} failed: {}",
                        a.describe(),
                        describe(e.into())
                    ),
                )
            })?;
        }
        if has_local {
            let bytes = (g.shared_memory_bytes as usize).max(1);
            // SAFETY: a null value with a size declares a `__local` buffer of that size.
            unsafe { set_kernel_arg(raw, n as u32, bytes, std::ptr::null()) }.map_err(|e| {
                arg_err(
                    n,
                    format!(
                        "setting {bytes} bytes of local memory failed: {}",
                        describe(e.into())
                    ),
                )
            })?;
        }
        // SAFETY: every argument was set above; `global` and `local` outlive the call.
        let event = unsafe {
            self.shared.queue.enqueue_nd_range_kernel(
                raw,
                work_dim,
                std::ptr::null(),
                global.as_ptr(),
                local.as_ptr(),
                &[],
            )
        }
        .map_err(|e| BackendError::Launch {
            kernel: k.name().to_string(),
            grid: g.grid,
            block: g.block,
            message: describe(e),
        })?;
        drop(guard);
        Ok(Some(event))
    }
}

impl Device for ClDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn compile(&self, req: &CompileRequest<'_>) -> Result<Arc<dyn CompiledKernel>, BackendError> {
        Ok(Arc::new(compile(&self.shared, req)?))
    }

    fn alloc(&self, bytes: usize) -> Result<Box<dyn DeviceMemory>, BackendError> {
        Ok(Box::new(ClMemory::new(Arc::clone(&self.shared), bytes)?))
    }

    fn launch(
        &self,
        kernel: &dyn CompiledKernel,
        geometry: &Geometry,
        args: &[KernelArg<'_>],
    ) -> Result<(), BackendError> {
        self.enqueue(kernel, geometry, args).map(drop)
    }

    fn launch_timed(
        &self,
        kernel: &dyn CompiledKernel,
        geometry: &Geometry,
        args: &[KernelArg<'_>],
    ) -> Result<f64, BackendError> {
        let Some(event) = self.enqueue(kernel, geometry, args)? else {
            return Ok(0.0);
        };
        event.wait().map_err(|e| BackendError::Launch {
            kernel: kernel.name().to_string(),
            grid: geometry.grid,
            block: geometry.block,
            message: describe(e),
        })?;
        let start = event
            .profiling_command_start()
            .map_err(|e| api("CL_PROFILING_COMMAND_START", e))?;
        let end = event
            .profiling_command_end()
            .map_err(|e| api("CL_PROFILING_COMMAND_END", e))?;
        Ok(end.saturating_sub(start) as f64 / 1.0e6)
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
