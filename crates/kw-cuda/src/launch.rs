//! Packing [`KernelArg`]s into `cuLaunchKernel`'s parameter array, without allocating.

use crate::kernel::CudaKernel;
use crate::memory::mem_ptr;
use cudarc::driver::{result, sys, CudaContext};
use kw_core::backend::{BackendError, KernelArg};
use kw_core::device::BackendKind;
use kw_core::kernel_def::eval::Geometry;
use std::ffi::c_void;
use std::mem::MaybeUninit;
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
    // Only the first `args.len()` entries are written: a launch touches no more of its
    // stack than it needs.
    if args.len() <= INLINE_ARGS {
        let mut slots = [MaybeUninit::<u64>::uninit(); INLINE_ARGS];
        let mut ptrs = [MaybeUninit::<*mut c_void>::uninit(); INLINE_ARGS];
        launch_with(ctx, stream, kernel, geometry, args, &mut slots, &mut ptrs)
    } else {
        let mut slots = vec![MaybeUninit::<u64>::uninit(); args.len()];
        let mut ptrs = vec![MaybeUninit::<*mut c_void>::uninit(); args.len()];
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
    slots: &mut [MaybeUninit<u64>],
    ptrs: &mut [MaybeUninit<*mut c_void>],
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
            hint: String::new(),
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
                let ptr = mem_ptr(mem, ctx, || format!("buffer for argument {i}"))?;
                slots[i].write(ptr);
                if let Some(Err(message)) = arg.checked_bytes() {
                    return Err(arg_err(i, message));
                }
                std::mem::size_of::<sys::CUdeviceptr>()
            }
            KernelArg::Scalar(s) => {
                let bytes = s.bytes();
                let mut b = [0u8; 8];
                b[..bytes.len()].copy_from_slice(bytes);
                slots[i].write(u64::from_ne_bytes(b));
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
        p.write(s.as_mut_ptr().cast());
    }
    // SAFETY: the loop above wrote the first `args.len()` pointers (every argument wrote its
    // slot, or returned an error before getting here); `MaybeUninit<T>` has `T`'s layout.
    let ptrs: &mut [*mut c_void] =
        unsafe { std::slice::from_raw_parts_mut(ptrs.as_mut_ptr().cast(), args.len()) };
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
            ptrs,
        )
    }
    .map_err(|e| launch_err(crate::error::driver_message(e)))
}

#[cold]
fn kernel_name(kernel: &CudaKernel) -> String {
    use kw_core::backend::CompiledKernel;
    kernel.name().to_string()
}
