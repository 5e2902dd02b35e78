//! [`CudaSnapshot`]: device copies of buffers enqueued on a stream, read back later on a
//! private stream (what [`kw_core::backend::Device::snapshot_on`] returns for CUDA).

use crate::error::api;
use cudarc::driver::{result, sys, CudaContext, CudaEvent};
use kw_core::backend::{
    check_range, host_vec, pieces, BackendError, Snapshot, SNAPSHOT_READ_PIECE,
};

use std::sync::Arc;

/// One copy: its device memory (from the stream-ordered allocator, or `cuMemAlloc` where
/// that is not supported) and its length.
struct DevCopy {
    ptr: sys::CUdeviceptr,
    bytes: usize,
    pooled: bool,
}

/// Copies made on the application's stream, and the event recorded after them.
pub(crate) struct CudaSnapshot {
    ctx: Arc<CudaContext>,
    copies: Vec<DevCopy>,
    done: Option<CudaEvent>,
}

impl CudaSnapshot {
    /// Enqueues on `stream` a copy of the first `bytes` of each `(pointer, its length,
    /// bytes)` into new device memory, then records an event; nothing waits.
    ///
    /// # Safety
    /// `stream` must be a live stream of `ctx`, and every source pointer live memory of `ctx`
    /// of at least the length given.
    pub(crate) unsafe fn enqueue(
        ctx: &Arc<CudaContext>,
        stream: sys::CUstream,
        sources: &[(sys::CUdeviceptr, usize, usize)],
    ) -> Result<CudaSnapshot, BackendError> {
        ctx.bind_to_thread().map_err(api("cuCtxSetCurrent"))?;
        let mut snapshot = CudaSnapshot {
            ctx: Arc::clone(ctx),
            copies: Vec::with_capacity(sources.len()),
            done: None,
        };
        for &(src, len, bytes) in sources {
            check_range("copy", 0, bytes, len)?;
            if bytes == 0 {
                snapshot.copies.push(DevCopy {
                    ptr: 0,
                    bytes,
                    pooled: false,
                });
                continue;
            }
            // SAFETY: the context is current and the stream is live; the memory is freed
            // once, by `free` (after the copy, which is ordered on the stream).
            let (ptr, pooled) = match unsafe { result::malloc_async(stream, bytes) } {
                Ok(p) => (p, true),
                Err(_) => (
                    unsafe { result::malloc_sync(bytes) }.map_err(|e| BackendError::Api {
                        op: "cuMemAlloc",
                        message: format!("{bytes} bytes: {}", crate::error::driver_message(e)),
                    })?,
                    false,
                ),
            };
            snapshot.copies.push(DevCopy { ptr, bytes, pooled });
            // SAFETY: both ranges lie in live allocations of this context (the caller
            // vouches for the source).
            unsafe { result::memcpy_dtod_async(ptr, src, bytes, stream) }
                .map_err(api("cuMemcpyDtoDAsync"))?;
        }
        let done = ctx.new_event(None).map_err(api("cuEventCreate"))?;
        // SAFETY: the event and the stream belong to the current context.
        unsafe { result::event::record(done.cu_event(), stream) }.map_err(api("cuEventRecord"))?;
        snapshot.done = Some(done);
        Ok(snapshot)
    }

    /// Waits for the copies, then frees their memory (on `stream` when given).
    fn free(&mut self, stream: Option<sys::CUstream>) -> Result<(), BackendError> {
        self.ctx.bind_to_thread().map_err(api("cuCtxSetCurrent"))?;
        if let Some(done) = &self.done {
            done.synchronize().map_err(api("cuEventSynchronize"))?;
        }
        for c in self.copies.drain(..).filter(|c| c.ptr != 0) {
            // SAFETY: allocated in `enqueue`, freed once; the copies into it are done.
            match (c.pooled, stream) {
                (true, Some(s)) => {
                    unsafe { result::free_async(c.ptr, s) }.map_err(api("cuMemFreeAsync"))?
                }
                _ => unsafe { result::free_sync(c.ptr) }.map_err(api("cuMemFree"))?,
            }
        }
        Ok(())
    }
}

impl Snapshot for CudaSnapshot {
    fn read(mut self: Box<Self>) -> Result<Vec<Vec<u8>>, BackendError> {
        if let Some(done) = &self.done {
            done.synchronize().map_err(api("cuEventSynchronize"))?;
        }
        // A stream of its own: reading on the application's stream would hold up the work
        // it enqueues meanwhile.
        let stream = self.ctx.new_stream().map_err(api("cuStreamCreate"))?;
        let mut out = Vec::with_capacity(self.copies.len());
        for c in &self.copies {
            let mut host = host_vec(c.bytes)?;
            // In pieces, each waited for: the application runs beside this read, and one
            // long transfer of a large buffer holds up its calls into the driver.
            for (at, n) in pieces(0, c.bytes, SNAPSHOT_READ_PIECE) {
                // SAFETY: the range lies in the allocation and its copy is done; `host` stays
                // borrowed until the stream is synchronised right after.
                unsafe {
                    result::memcpy_dtoh_async(
                        &mut host[at..at + n],
                        c.ptr + at as u64,
                        stream.cu_stream(),
                    )
                }
                .map_err(api("cuMemcpyDtoHAsync"))?;
                stream.synchronize().map_err(api("cuStreamSynchronize"))?;
            }
            out.push(host);
        }
        self.free(Some(stream.cu_stream()))?;
        stream.synchronize().map_err(api("cuStreamSynchronize"))?;
        Ok(out)
    }
}

impl Drop for CudaSnapshot {
    fn drop(&mut self) {
        // Not read (an error came first): wait for the copies, then free. Errors cannot be
        // returned from drop; the context records them for its next call.
        if !self.copies.is_empty() {
            let freed = self.free(None);
            if let Err(e) = freed {
                kw_core::diag::warn(&format!("freeing a capture's device copies: {e}"));
            }
        }
    }
}
