//! [`CudaMemory`]: device memory from `cuMemAlloc`, with transfers ordered on the device's
//! stream.

use crate::error::api;
use cudarc::driver::{result, sys, CudaContext, CudaStream};
use kw_core::backend::{
    check_range, gentle_chunk, pieces, BackendError, DeviceMemory, Mem, RawHandle,
};
use kw_core::device::BackendKind;
use std::any::Any;
use std::sync::Arc;

/// A block of device memory owned by one [`crate::CudaDevice`].
pub struct CudaMemory {
    ptr: sys::CUdeviceptr,
    len: usize,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// Allocated here (freed on drop), or the application's memory (never freed here).
    owned: bool,
}

impl CudaMemory {
    /// Enqueues a copy of all of `src` (same context) to the start of this buffer on the
    /// stream, without waiting.
    pub(crate) fn copy_from_async(&self, src: &dyn DeviceMemory) -> Result<(), BackendError> {
        let src = src
            .as_any()
            .downcast_ref::<CudaMemory>()
            .filter(|s| Arc::ptr_eq(&s.ctx, &self.ctx))
            .ok_or_else(|| BackendError::Foreign {
                backend: BackendKind::Cuda,
                what: "source buffer of copy_from".into(),
                hint: String::new(),
            })?;
        check_range("copy", 0, src.len, self.len)?;
        if src.len == 0 {
            return Ok(());
        }
        self.ctx.bind_to_thread().map_err(api("cuCtxSetCurrent"))?;
        // Shared mode: pieces, each waited for (see `kw_core::backend::set_gentle`).
        let chunk = gentle_chunk() * 16;
        for (at, n) in pieces(0, src.len, chunk) {
            // SAFETY: both ranges lie inside live allocations of this context.
            unsafe {
                result::memcpy_dtod_async(
                    self.ptr + at as u64,
                    src.ptr + at as u64,
                    n,
                    self.stream.cu_stream(),
                )
            }
            .map_err(api("cuMemcpyDtoDAsync"))?;
            if chunk > 0 {
                self.sync()?;
            }
        }
        Ok(())
    }

    /// Allocates `bytes` (0 is allowed: a null pointer, never dereferenced).
    pub(crate) fn alloc(
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        bytes: usize,
    ) -> Result<CudaMemory, BackendError> {
        ctx.bind_to_thread().map_err(api("cuCtxSetCurrent"))?;
        let ptr = if bytes == 0 {
            0
        } else {
            // SAFETY: the context is current; the pointer is freed exactly once, on drop.
            unsafe { result::malloc_sync(bytes) }.map_err(|e| BackendError::Api {
                op: "cuMemAlloc",
                message: format!("{bytes} bytes: {}", crate::error::driver_message(e)),
            })?
        };
        Ok(CudaMemory {
            ptr,
            len: bytes,
            ctx: ctx.clone(),
            stream: stream.clone(),
            owned: true,
        })
    }

    /// The application's memory at `ptr`, `len` bytes (not freed on drop).
    ///
    /// # Safety
    /// `ptr` must point at `len` bytes of device memory of `ctx` that outlive the value.
    pub(crate) unsafe fn borrowed(
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        ptr: sys::CUdeviceptr,
        len: usize,
    ) -> CudaMemory {
        CudaMemory {
            ptr,
            len,
            ctx: ctx.clone(),
            stream: stream.clone(),
            owned: false,
        }
    }

    /// The device address (what a kernel's pointer parameter receives).
    pub fn device_ptr(&self) -> sys::CUdeviceptr {
        self.ptr
    }

    /// The context the memory belongs to.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    fn sync(&self) -> Result<(), BackendError> {
        self.stream
            .synchronize()
            .map_err(api("cuStreamSynchronize"))
    }
}

/// The device pointer behind a buffer of context `ctx` (memory allocated through this backend,
/// or the application's by raw handle); `what` names it when it belongs elsewhere.
#[inline]
pub(crate) fn mem_ptr(
    mem: &Mem<'_>,
    ctx: &Arc<CudaContext>,
    what: impl Fn() -> String,
) -> Result<sys::CUdeviceptr, BackendError> {
    let foreign = || BackendError::Foreign {
        backend: BackendKind::Cuda,
        what: what(),
        hint: String::new(),
    };
    match mem {
        Mem::Device(m) => m
            .as_any()
            .downcast_ref::<CudaMemory>()
            .filter(|m| Arc::ptr_eq(m.context(), ctx))
            .map(CudaMemory::device_ptr)
            .ok_or_else(foreign),
        Mem::Raw(r) => match r.handle() {
            RawHandle::Cuda(p) => Ok(p),
            _ => Err(foreign()),
        },
    }
}

impl DeviceMemory for CudaMemory {
    fn len_bytes(&self) -> usize {
        self.len
    }

    fn write(&self, offset: usize, data: &[u8]) -> Result<(), BackendError> {
        check_range("write", offset, data.len(), self.len)?;
        if data.is_empty() {
            return Ok(());
        }
        self.ctx.bind_to_thread().map_err(api("cuCtxSetCurrent"))?;
        for (at, n) in pieces(0, data.len(), gentle_chunk()) {
            // SAFETY: the range lies inside the allocation (checked above); `data` stays
            // borrowed until the stream is synchronised below, so the copy reads live memory.
            unsafe {
                result::memcpy_htod_async(
                    self.ptr + (offset + at) as u64,
                    &data[at..at + n],
                    self.stream.cu_stream(),
                )
            }
            .map_err(api("cuMemcpyHtoDAsync"))?;
            self.sync()?;
        }
        Ok(())
    }

    fn read(&self, offset: usize, out: &mut [u8]) -> Result<(), BackendError> {
        check_range("read", offset, out.len(), self.len)?;
        if out.is_empty() {
            return Ok(());
        }
        self.ctx.bind_to_thread().map_err(api("cuCtxSetCurrent"))?;
        for (at, n) in pieces(0, out.len(), gentle_chunk()) {
            // SAFETY: the range lies inside the allocation; `out` stays borrowed until the
            // stream is synchronised below, so the copy writes live memory.
            unsafe {
                result::memcpy_dtoh_async(
                    &mut out[at..at + n],
                    self.ptr + (offset + at) as u64,
                    self.stream.cu_stream(),
                )
            }
            .map_err(api("cuMemcpyDtoHAsync"))?;
            self.sync()?;
        }
        Ok(())
    }

    fn copy_from(&self, src: &dyn DeviceMemory) -> Result<(), BackendError> {
        self.copy_from_async(src)?;
        self.sync()
    }

    fn fill_zero(&self) -> Result<(), BackendError> {
        if self.len == 0 {
            return Ok(());
        }
        self.ctx.bind_to_thread().map_err(api("cuCtxSetCurrent"))?;
        for (at, n) in pieces(0, self.len, gentle_chunk() * 16) {
            // SAFETY: a range of the allocation, ordered on its stream.
            unsafe { result::memset_d8_async(self.ptr + at as u64, 0, n, self.stream.cu_stream()) }
                .map_err(api("cuMemsetD8Async"))?;
            self.sync()?;
        }
        Ok(())
    }

    fn device_address(&self) -> Option<u64> {
        Some(self.ptr)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Drop for CudaMemory {
    fn drop(&mut self) {
        if self.ptr == 0 || !self.owned {
            return;
        }
        // Kernels still queued may use the memory: wait for them before freeing it. Errors
        // cannot be returned from drop; the context records them for its next call.
        self.ctx.record_err(self.ctx.bind_to_thread());
        self.ctx.record_err(self.stream.synchronize());
        // SAFETY: allocated by cuMemAlloc in this context, freed once, no work pending.
        self.ctx.record_err(unsafe { result::free_sync(self.ptr) });
    }
}

impl std::fmt::Debug for CudaMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CudaMemory({:#x}, {} bytes)", self.ptr, self.len)
    }
}
