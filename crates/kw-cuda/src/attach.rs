//! Joining an application's CUDA setup: its context, its streams and its memory.
//!
//! - [`CudaDevice::from_context`] wraps a cudarc `Arc<CudaContext>` the application already
//!   has; [`CudaDevice::attach_primary`] takes the device's primary context (the one the CUDA
//!   runtime uses); [`CudaDevice::attach_current`] takes the calling thread's current context.
//!   None of them creates a context.
//! - [`stream_queue`] turns a cudarc `CudaStream` into a launch target, and
//!   [`slice_arg`] a `CudaSlice` / `CudaView` into a buffer argument; raw `CUstream`s and
//!   device pointers go through `kw_core::backend::Queue::cuda_raw` and `kw_core::backend::RawMem::cuda`.

use crate::backend::CudaBackend;
use crate::device::CudaDevice;
use crate::error::api;
use crate::probe;
use cudarc::driver::{result, sys, CudaContext, CudaStream, DevicePtr, DeviceRepr};
use kw_core::backend::{Backend, BackendError, KernelArg, Queue, RawMem};
use kw_core::device::BackendKind;
use kw_core::scalar::Scalar;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

impl CudaDevice {
    /// A device on the application's cudarc context. Launches on [`Queue::DEFAULT`] go to
    /// the context's default stream; pass the application's stream with [`stream_queue`].
    pub fn from_context(ctx: Arc<CudaContext>) -> Result<CudaDevice, BackendError> {
        let driver = probe::driver()?;
        let info = CudaBackend::new()
            .devices()?
            .get(ctx.ordinal())
            .cloned()
            .ok_or_else(|| BackendError::NoSuchDevice {
                backend: BackendKind::Cuda,
                selector: format!("index {}", ctx.ordinal()),
                available: "fewer devices".into(),
            })?;
        let stream = ctx.default_stream();
        CudaDevice::with_context(ctx, stream, info, driver)
    }

    /// A device on the primary context of device `ordinal`: the context a CUDA runtime
    /// application (`cudaMalloc`, `<<<...>>>`, `cudaStream_t`) works in.
    pub fn attach_primary(ordinal: usize) -> Result<CudaDevice, BackendError> {
        probe::driver()?;
        let ctx = CudaContext::new(ordinal).map_err(api("cuDevicePrimaryCtxRetain"))?;
        CudaDevice::from_context(ctx)
    }

    /// A device on the calling thread's current context (an error when there is none).
    ///
    /// When that context is its device's primary context this is
    /// [`CudaDevice::attach_primary`]. Another context (made with `cuCtxCreate`) is used as
    /// it is and never destroyed by this library: the application must keep it alive while
    /// kernels on it are used.
    pub fn attach_current() -> Result<CudaDevice, BackendError> {
        probe::driver()?;
        let current = result::ctx::get_current()
            .map_err(api("cuCtxGetCurrent"))?
            .ok_or_else(|| BackendError::Unavailable {
                backend: BackendKind::Cuda,
                reason: "the calling thread has no current CUDA context".into(),
            })?;
        let mut dev: sys::CUdevice = 0;
        // SAFETY: a context is current; `dev` is a valid out-pointer.
        unsafe { sys::cuCtxGetDevice(&mut dev) }
            .result()
            .map_err(api("cuCtxGetDevice"))?;
        let ordinal = usize::try_from(dev).map_err(|_| BackendError::Api {
            op: "cuCtxGetDevice",
            message: format!("device {dev} is out of range"),
        })?;
        let primary = CudaContext::new(ordinal).map_err(api("cuDevicePrimaryCtxRetain"))?;
        if primary.cu_ctx() == current {
            return CudaDevice::from_context(primary);
        }
        drop(primary);
        // Retaining the primary context made it current: give the thread its own back.
        // SAFETY: `current` was the thread's live current context a moment ago.
        unsafe { result::ctx::set_current(current) }.map_err(api("cuCtxSetCurrent"))?;
        CudaDevice::from_context(borrowed_context(ordinal, dev, current)?)
    }
}

/// A cudarc wrapper of a context this library did not create, kept for the life of the
/// process so that cudarc never destroys it.
fn borrowed_context(
    ordinal: usize,
    dev: sys::CUdevice,
    ctx: sys::CUcontext,
) -> Result<Arc<CudaContext>, BackendError> {
    static KEPT: OnceLock<Mutex<HashMap<usize, Arc<CudaContext>>>> = OnceLock::new();
    let mut kept = KEPT
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(c) = kept.get(&(ctx as usize)) {
        return Ok(Arc::clone(c));
    }
    // SAFETY: `ctx` is the live current context of device `dev`. The wrapper would destroy
    // it when its last reference drops; one reference stays in `KEPT` for the life of the
    // process, so that never happens.
    let wrapped = unsafe { CudaContext::from_raw_context(ordinal, dev, ctx) }
        .map_err(api("cuCtxGetCurrent"))?;
    kept.insert(ctx as usize, Arc::clone(&wrapped));
    Ok(wrapped)
}

/// The application's cudarc stream as a launch target.
pub fn stream_queue(stream: &CudaStream) -> Queue<'_> {
    // SAFETY: a live cudarc stream, borrowed for the `Queue`'s lifetime.
    unsafe { Queue::cuda_raw(stream.cu_stream().cast()) }
}

/// The application's cudarc memory (`CudaSlice<T>`, `CudaView<T>`, `CudaViewMut<T>`) as a
/// buffer argument of a launch on `stream`.
///
/// With cudarc's event tracking (several streams), `stream` first waits for the slice's
/// last write, as cudarc's own launches do; the read is recorded when this call returns,
/// so order later writes on other streams after the launch yourself (or use one stream).
pub fn slice_arg<'a, T, S>(slice: &'a S, stream: &'a CudaStream) -> KernelArg<'a>
where
    T: Scalar + DeviceRepr,
    S: DevicePtr<T>,
{
    let bytes = slice.num_bytes();
    let (ptr, _record) = slice.device_ptr(stream);
    // SAFETY: cudarc's memory of `bytes` bytes, borrowed for the argument's lifetime.
    let raw = unsafe { RawMem::cuda(ptr, bytes) };
    KernelArg::raw_buffer(raw, T::TYPE)
}

/// The bytes from device pointer `ptr` to the end of the allocation holding it (made with
/// `cuMemAlloc`, `cudaMalloc`, `cudaMallocManaged`, ...), asked of the driver
/// (`cuPointerGetAttributes`: the range's start and size; with unified addressing no context
/// needs to be current). What the C API uses when the caller passes a device pointer without
/// an element count. A pointer the driver does not know is an error, never undefined
/// behaviour.
pub fn bytes_from_pointer(ptr: u64) -> Result<usize, BackendError> {
    probe::driver()?;
    let mut base: sys::CUdeviceptr = 0;
    let mut size: usize = 0;
    let mut attributes = [
        sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
        sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_SIZE,
    ];
    let mut data: [*mut std::ffi::c_void; 2] = [(&raw mut base).cast(), (&raw mut size).cast()];
    // SAFETY: two attributes, two out-pointers of the attributes' types (a `CUdeviceptr` and
    // a `size_t`); the driver checks `ptr` itself.
    unsafe { sys::cuPointerGetAttributes(2, attributes.as_mut_ptr(), data.as_mut_ptr(), ptr) }
        .result()
        .map_err(|e| BackendError::Api {
            op: "cuPointerGetAttributes",
            message: format!(
                "cannot read the allocation of device pointer {ptr:#x}: {}",
                crate::error::driver_message(e)
            ),
        })?;
    if size == 0 || ptr < base {
        return Err(BackendError::Api {
            op: "cuPointerGetAttributes",
            message: format!(
                "{ptr:#x} is not a pointer into device memory the driver allocated; pass the \
                 element count explicitly"
            ),
        });
    }
    let offset = usize::try_from(ptr - base).unwrap_or(usize::MAX);
    Ok(size.saturating_sub(offset))
}
