//! Packing [`KernelArg`]s into `cuLaunchKernel`'s parameter array, without allocating.

use crate::kernel::CudaKernel;
use crate::memory::CudaMemory;
use cudarc::driver::{result, sys, CudaContext};
use kw_core::backend::{BackendError, KernelArg, Mem, RawHandle};
use kw_core::def_eval::Geometry;
use kw_core::device::BackendKind;
use std::ffi::c_void;
use std::sync::Arc;

/// Arguments packed on the stack; longer lists use the heap.
const INLINE_ARGS: usize = 24;

/// Checks `args` against the kernel and launches it on `stream`.
#[inline]
pub(crate) fn launch(
    ctx: &Arc<CudaContext>,
    stream: sys::CUstream,
    kernel: &CudaKernel,
    geometry: &Geometry,
    args: &[KernelArg<'_>],
) -> Result<(), BackendError> {
    if args.len() <= INLINE_ARGS {
        let mut slots = [0u64; INLINE_ARGS];
        let mut ptrs = [std::ptr::null_mut::<c_void>(); INLINE_ARGS];
        launch_with(ctx, stream, kernel, geometry, args, &mut slots, &mut ptrs)
    } else {
        let mut slots = vec![0u64; args.len()];
        let mut ptrs = vec![std::ptr::null_mut::<c_void>(); args.len()];
        launch_with(ctx, stream, kernel, geometry, args, &mut slots, &mut ptrs)
    }
}

#[inline]
fn launch_with(
    ctx: &Arc<CudaContext>,
    stream: sys::CUstream,
    kernel: &CudaKernel,
    geometry: &Geometry,
    args: &[KernelArg<'_>],
    slots: &mut [u64],
    ptrs: &mut [*mut c_void],
) -> Result<(), BackendError> {
    let arg_err = |index: usize, message: String| BackendError::Argument {
        kernel: kernel_name(kernel),
        index,
        message,
    };
    if !Arc::ptr_eq(kernel.context(), ctx) {
        return Err(BackendError::Foreign {
            backend: BackendKind::Cuda,
            what: format!("kernel `{}`", kernel_name(kernel)),
        });
    }
    let sizes = kernel.param_sizes();
    if let Some(sizes) = sizes {
        if sizes.len() != args.len() {
            return Err(arg_err(
                args.len().min(sizes.len()),
                format!(
                    "the kernel takes {} arguments, {} were given",
                    sizes.len(),
                    args.len()
                ),
            ));
        }
    }
    for (i, arg) in args.iter().enumerate() {
        let size = match arg {
            KernelArg::Buffer { mem, .. } => {
                let foreign = || BackendError::Foreign {
                    backend: BackendKind::Cuda,
                    what: format!("buffer for argument {i}"),
                };
                slots[i] = match mem {
                    Mem::Device(m) => m
                        .as_any()
                        .downcast_ref::<CudaMemory>()
                        .filter(|m| Arc::ptr_eq(m.context(), ctx))
                        .ok_or_else(foreign)?
                        .device_ptr(),
                    Mem::Raw(r) => match r.handle() {
                        RawHandle::Cuda(p) => p,
                        _ => return Err(foreign()),
                    },
                };
                if let Some(Err(message)) = arg.checked_bytes() {
                    return Err(arg_err(i, message));
                }
                std::mem::size_of::<sys::CUdeviceptr>()
            }
            KernelArg::Scalar(s) => {
                let bytes = s.bytes();
                let mut b = [0u8; 8];
                b[..bytes.len()].copy_from_slice(bytes);
                slots[i] = u64::from_ne_bytes(b);
                bytes.len()
            }
        };
        if let Some(expected) = sizes.map(|s| s[i]) {
            if expected != size {
                return Err(arg_err(
                    i,
                    format!(
                        "{} is {size} bytes, the kernel's parameter is {expected} bytes",
                        arg.describe()
                    ),
                ));
            }
        }
    }
    for (p, s) in ptrs.iter_mut().zip(slots.iter_mut()).take(args.len()) {
        *p = (s as *mut u64).cast();
    }
    let launch_err = |message: String| BackendError::Launch {
        kernel: kernel_name(kernel),
        grid: geometry.grid,
        block: geometry.block,
        message,
    };
    if geometry.shared_memory_bytes > crate::kernel::DEFAULT_DYNAMIC_SHARED {
        kernel
            .ensure_dynamic_shared(geometry.shared_memory_bytes)
            .map_err(launch_err)?;
    }
    ctx.bind_to_thread()
        .map_err(|e| launch_err(crate::error::driver_message(e)))?;
    let [gx, gy, gz] = geometry.grid;
    let [bx, by, bz] = geometry.block;
    // SAFETY: the function belongs to a module loaded in `ctx`, which is current; `ptrs[i]`
    // points at `slots[i]`, which holds argument i's value (a device pointer of this context
    // into a buffer at least as long as the argument says, or a scalar of the parameter's
    // size where the driver reports sizes) and outlives this call, which copies them.
    unsafe {
        result::launch_kernel(
            kernel.cu_function(),
            (gx, gy, gz),
            (bx, by, bz),
            geometry.shared_memory_bytes,
            stream,
            &mut ptrs[..args.len()],
        )
    }
    .map_err(|e| launch_err(crate::error::driver_message(e)))
}

#[cold]
fn kernel_name(kernel: &CudaKernel) -> String {
    use kw_core::backend::CompiledKernel;
    kernel.name().to_string()
}
