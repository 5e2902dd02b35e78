//! [`RawKernel`]: a kernel driven through `opencl3` directly, with no kernel-wisdom layer in
//! between, as a baseline for measuring the runtime's launch overhead. Each call is exactly
//! one `opencl3` call (`Kernel::set_arg`, `CommandQueue::enqueue_nd_range_kernel`).

use crate::device::ClDevice;
use crate::error::{api, describe};
use crate::memory::ClMemory;
use kw_core::backend::BackendError;
use kw_core::scalar::Scalar;
use opencl3::kernel::Kernel;
use opencl3::program::Program;
use opencl3::types::cl_mem;

/// A kernel built and launched with plain `opencl3` calls on a [`ClDevice`]'s context and
/// queue.
pub struct RawKernel {
    kernel: Kernel,
    _program: Program,
}

impl RawKernel {
    /// Builds `source` with `options` and creates kernel `name`.
    pub fn build(
        device: &ClDevice,
        source: &str,
        name: &str,
        options: &str,
    ) -> Result<RawKernel, BackendError> {
        if options.contains('\0') {
            return Err(BackendError::Api {
                op: "clBuildProgram",
                message: "options contain a NUL byte".into(),
            });
        }
        if source.is_empty() {
            // OpenCL reads a length of 0 as "NUL-terminated".
            return Err(BackendError::Compile {
                kernel: name.to_string(),
                file: "(raw)".into(),
                options: options.to_string(),
                reason: "the kernel source is empty".into(),
                log: String::new(),
            });
        }
        let (context, _, dev) = device.raw_parts();
        let mut program = Program::create_from_source(context, source)
            .map_err(|e| api("clCreateProgramWithSource", e))?;
        program
            .build(&[dev.id()], options)
            .map_err(|e| BackendError::Compile {
                kernel: name.to_string(),
                file: "(raw)".into(),
                options: options.to_string(),
                reason: describe(e),
                log: program.get_build_log(dev.id()).unwrap_or_default(),
            })?;
        let kernel = Kernel::create(&program, name).map_err(|e| api("clCreateKernel", e))?;
        Ok(RawKernel {
            kernel,
            _program: program,
        })
    }

    /// `clSetKernelArg` with a buffer.
    pub fn set_buffer(&self, index: u32, mem: &ClMemory) -> Result<(), BackendError> {
        let handle: cl_mem = mem.raw();
        // SAFETY: `handle` is a live buffer; the driver copies the handle's bytes.
        unsafe { self.kernel.set_arg(index, &handle) }.map_err(|e| api("clSetKernelArg", e))
    }

    /// `clSetKernelArg` with a scalar.
    pub fn set_scalar<T: Scalar>(&self, index: u32, value: T) -> Result<(), BackendError> {
        // SAFETY: `value` is plain data of the kernel parameter's size (the driver checks).
        unsafe { self.kernel.set_arg(index, &value) }.map_err(|e| api("clSetKernelArg", e))
    }

    /// `clEnqueueNDRangeKernel` on the device's queue, 1-D, releasing the event at once.
    pub fn enqueue_1d(
        &self,
        device: &ClDevice,
        global: usize,
        local: usize,
    ) -> Result<(), BackendError> {
        let (_, queue, _) = device.raw_parts();
        let (g, l) = ([global], [local]);
        // SAFETY: every argument was set by the caller; the size arrays outlive the call.
        let event = unsafe {
            queue.enqueue_nd_range_kernel(
                self.kernel.get(),
                1,
                std::ptr::null(),
                g.as_ptr(),
                l.as_ptr(),
                &[],
            )
        }
        .map_err(|e| api("clEnqueueNDRangeKernel", e))?;
        drop(event);
        Ok(())
    }
}
