//! [`ClSnapshot`]: device copies of buffers enqueued on a command queue, read back later on a
//! private queue (what [`kw_core::backend::Device::snapshot_on`] returns for OpenCL).

use crate::error::api;
use crate::memory::ClMemory;
use crate::shared::Shared;
use kw_core::backend::{
    check_range, host_vec, pieces, BackendError, Snapshot, SNAPSHOT_READ_PIECE,
};

use opencl3::command_queue::{enqueue_copy_buffer, enqueue_read_buffer, CommandQueue};
use opencl3::event::Event;
use opencl3::types::{cl_command_queue, cl_event, cl_mem, CL_BLOCKING};
use std::ffi::c_void;
use std::ptr;
use std::sync::Arc;

/// Copies made on the application's queue: each into a buffer of its own, with the copy's
/// event.
pub(crate) struct ClSnapshot {
    shared: Arc<Shared>,
    copies: Vec<(ClMemory, usize, Option<Event>)>,
}

impl ClSnapshot {
    /// Enqueues on `queue`, after the events of `wait`, a copy of the first `bytes` of each
    /// `(buffer, its length, bytes)` into a new buffer; nothing waits.
    ///
    /// # Safety
    /// `queue` must be a live command queue of `shared`'s context, every entry of `wait` a
    /// live event of that context, and every source a live buffer of that context of at least
    /// the length given.
    pub(crate) unsafe fn enqueue(
        shared: &Arc<Shared>,
        queue: cl_command_queue,
        wait: &[*mut c_void],
        sources: &[(cl_mem, usize, usize)],
    ) -> Result<ClSnapshot, BackendError> {
        let mut copies = Vec::with_capacity(sources.len());
        for &(src, len, bytes) in sources {
            check_range("copy", 0, bytes, len)?;
            let dst = ClMemory::new(Arc::clone(shared), bytes)?;
            let event = if bytes == 0 {
                None
            } else {
                let wait_ptr = if wait.is_empty() {
                    ptr::null()
                } else {
                    wait.as_ptr().cast::<cl_event>()
                };
                // SAFETY: the caller vouches for the queue, the events and the source; the
                // destination is a fresh buffer of `bytes` bytes of the same context.
                let ev = unsafe {
                    enqueue_copy_buffer(
                        queue,
                        src,
                        dst.raw(),
                        0,
                        0,
                        bytes,
                        wait.len() as u32,
                        wait_ptr,
                    )
                }
                .map_err(|e| api("clEnqueueCopyBuffer", e.into()))?;
                Some(Event::new(ev))
            };
            copies.push((dst, bytes, event));
        }
        Ok(ClSnapshot {
            shared: Arc::clone(shared),
            copies,
        })
    }
}

impl Snapshot for ClSnapshot {
    fn read(self: Box<Self>) -> Result<Vec<Vec<u8>>, BackendError> {
        for (_, _, event) in &self.copies {
            if let Some(e) = event {
                e.wait().map_err(|e| api("clWaitForEvents", e))?;
            }
        }
        // A queue of its own: reading on the application's queue would hold up the work it
        // enqueues meanwhile.
        let queue = CommandQueue::create_default_with_properties(&self.shared.context, 0, 0)
            .or_else(|_| {
                // OpenCL 1.x platforms lack clCreateCommandQueueWithProperties.
                #[allow(deprecated)]
                CommandQueue::create_default(&self.shared.context, 0)
            })
            .map_err(|e| api("clCreateCommandQueue", e))?;
        let mut out = Vec::with_capacity(self.copies.len());
        for (mem, bytes, _) in &self.copies {
            let mut host = host_vec(*bytes)?;
            // In pieces: the application runs beside this read, and one long transfer of a
            // large buffer holds up its own.
            for (at, n) in pieces(0, *bytes, SNAPSHOT_READ_PIECE) {
                // SAFETY: the range lies in the buffer; the read is blocking, so `host`
                // outlives it.
                let ev = unsafe {
                    enqueue_read_buffer(
                        queue.get(),
                        mem.raw(),
                        CL_BLOCKING,
                        at,
                        n,
                        host[at..].as_mut_ptr().cast::<c_void>(),
                        0,
                        ptr::null(),
                    )
                }
                .map_err(|e| api("clEnqueueReadBuffer", e.into()))?;
                drop(Event::new(ev));
            }
            out.push(host);
        }
        Ok(out)
    }
}
