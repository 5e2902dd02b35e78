//! [`ClMemory`]: an OpenCL buffer behind the [`DeviceMemory`] trait.

use crate::error::api;
use crate::shared::Shared;
use kw_core::backend::{check_range, gentle_chunk, pieces, BackendError, DeviceMemory};
use kw_core::device::BackendKind;
use opencl3::command_queue::{enqueue_copy_buffer, enqueue_read_buffer, enqueue_write_buffer};
use opencl3::event::Event;
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::types::{cl_mem, CL_BLOCKING};
use std::any::Any;
use std::ffi::c_void;
use std::ptr;
use std::sync::Arc;

/// A read-write OpenCL buffer of `len` bytes (at least one byte is allocated, since OpenCL
/// refuses empty buffers).
pub struct ClMemory {
    pub(crate) shared: Arc<Shared>,
    buffer: Buffer<u8>,
    len: usize,
}

/// What to do about a buffer of another context (another device's, or the same device opened
/// twice), which this device's queue cannot use.
pub(crate) const OTHER_CONTEXT_HINT: &str = "create it in the context the device was attached \
     to; a device opened by kernel-wisdom (kw_device_open) has a context of its own: attach the \
     application's context and queue instead, kw_device_attach_opencl";

/// Whether `mem` belongs to `shared`'s context.
///
/// # Safety
/// `mem` must be a live `cl_mem`.
pub(crate) unsafe fn in_context(shared: &Shared, mem: cl_mem) -> Result<bool, BackendError> {
    use opencl3::memory::{get_mem_object_info, CL_MEM_CONTEXT};
    let context = get_mem_object_info(mem, CL_MEM_CONTEXT)
        .map_err(|e| api("clGetMemObjectInfo(CL_MEM_CONTEXT)", e.into()))?
        .to_ptr();
    Ok(context as usize == shared.context.get() as usize)
}

impl ClMemory {
    /// Enqueues a copy of all of `src` (same context) to the start of this buffer without
    /// waiting; `None` when there is nothing to copy.
    pub(crate) fn enqueue_copy_from(
        &self,
        src: &dyn DeviceMemory,
    ) -> Result<Option<Event>, BackendError> {
        let src = src
            .as_any()
            .downcast_ref::<ClMemory>()
            .filter(|s| Arc::ptr_eq(&s.shared, &self.shared))
            .ok_or_else(|| BackendError::Foreign {
                backend: BackendKind::Opencl,
                what: "source buffer".into(),
                hint: String::new(),
            })?;
        check_range("copy", 0, src.len, self.len)?;
        if src.len == 0 {
            return Ok(None);
        }
        // SAFETY: both buffers belong to this queue's context and the range was checked.
        let ev = unsafe {
            enqueue_copy_buffer(
                self.shared.queue.get(),
                src.raw(),
                self.raw(),
                0,
                0,
                src.len,
                0,
                ptr::null(),
            )
        }
        .map_err(|e| api("clEnqueueCopyBuffer", e.into()))?;
        Ok(Some(Event::new(ev)))
    }

    pub(crate) fn new(shared: Arc<Shared>, len: usize) -> Result<ClMemory, BackendError> {
        // SAFETY: no host pointer is passed, so OpenCL allocates the memory itself.
        let buffer = unsafe {
            Buffer::<u8>::create(
                &shared.context,
                CL_MEM_READ_WRITE,
                len.max(1),
                ptr::null_mut(),
            )
        }
        .map_err(|e| api("clCreateBuffer", e))?;
        Ok(ClMemory {
            shared,
            buffer,
            len,
        })
    }

    /// The application's buffer `mem` of `len` bytes, retained (and released on drop).
    ///
    /// # Safety
    /// `mem` must be a live buffer of at least `len` bytes in `shared`'s context.
    pub(crate) unsafe fn borrowed(
        shared: Arc<Shared>,
        mem: cl_mem,
        len: usize,
    ) -> Result<ClMemory, BackendError> {
        // Refused by name rather than left to the driver.
        // SAFETY: the caller vouches for `mem`.
        if !unsafe { in_context(&shared, mem) }? {
            return Err(BackendError::Api {
                op: "view",
                message: format!(
                    "the cl_mem belongs to another OpenCL context than the device's \
                     ({OTHER_CONTEXT_HINT})"
                ),
            });
        }
        // SAFETY: the caller vouches for `mem`; the retain balances `Buffer`'s release.
        unsafe { opencl3::memory::retain_mem_object(mem) }
            .map_err(|e| api("clRetainMemObject", e.into()))?;
        Ok(ClMemory {
            shared,
            buffer: Buffer::new(mem),
            len,
        })
    }

    /// The raw `cl_mem` handle.
    pub fn raw(&self) -> cl_mem {
        self.buffer.get()
    }

    /// The buffer whose memory this is (its parent for a sub-buffer, else itself) and the
    /// offset in bytes there; `None` when the driver cannot say.
    fn in_parent(&self) -> Option<(usize, usize)> {
        use opencl3::memory::{get_mem_object_info, CL_MEM_ASSOCIATED_MEMOBJECT, CL_MEM_OFFSET};
        let mem = self.raw();
        let parent = get_mem_object_info(mem, CL_MEM_ASSOCIATED_MEMOBJECT)
            .ok()?
            .to_ptr();
        if parent == 0 {
            return Some((mem as usize, 0));
        }
        let offset = get_mem_object_info(mem, CL_MEM_OFFSET).ok()?.to_size();
        Some((parent as usize, offset))
    }
}

impl DeviceMemory for ClMemory {
    fn len_bytes(&self) -> usize {
        self.len
    }

    fn write(&self, offset: usize, data: &[u8]) -> Result<(), BackendError> {
        check_range("write", offset, data.len(), self.len)?;
        if data.is_empty() {
            return Ok(());
        }
        // Shared mode: pieces (see `kw_core::backend::set_gentle`).
        for (at, n) in pieces(0, data.len(), gentle_chunk()) {
            // SAFETY: the range was checked; the write is blocking, so `data` outlives it.
            let ev = unsafe {
                enqueue_write_buffer(
                    self.shared.queue.get(),
                    self.raw(),
                    CL_BLOCKING,
                    offset + at,
                    n,
                    data[at..].as_ptr().cast::<c_void>(),
                    0,
                    ptr::null(),
                )
            }
            .map_err(|e| api("clEnqueueWriteBuffer", e.into()))?;
            drop(Event::new(ev));
        }
        Ok(())
    }

    fn read(&self, offset: usize, out: &mut [u8]) -> Result<(), BackendError> {
        check_range("read", offset, out.len(), self.len)?;
        if out.is_empty() {
            return Ok(());
        }
        // Shared mode: pieces (see `kw_core::backend::set_gentle`).
        for (at, n) in pieces(0, out.len(), gentle_chunk()) {
            // SAFETY: the range was checked; the read is blocking, so `out` outlives it.
            let ev = unsafe {
                enqueue_read_buffer(
                    self.shared.queue.get(),
                    self.raw(),
                    CL_BLOCKING,
                    offset + at,
                    n,
                    out[at..].as_mut_ptr().cast::<c_void>(),
                    0,
                    ptr::null(),
                )
            }
            .map_err(|e| api("clEnqueueReadBuffer", e.into()))?;
            drop(Event::new(ev));
        }
        Ok(())
    }

    fn copy_from(&self, src: &dyn DeviceMemory) -> Result<(), BackendError> {
        match self.enqueue_copy_from(src)? {
            Some(ev) => ev.wait().map_err(|e| api("clWaitForEvents", e)),
            None => Ok(()),
        }
    }

    fn overlaps(&self, other: &dyn DeviceMemory) -> bool {
        // One `cl_mem`, however many views of it (the C API makes one per call); a sub-buffer
        // (`clCreateSubBuffer`) is a range of its parent: the ranges in the parent are compared.
        let Some(other) = other.as_any().downcast_ref::<ClMemory>() else {
            return false;
        };
        if other.raw() == self.raw() {
            return true;
        }
        let (Some((a_root, a_at)), Some((b_root, b_at))) = (self.in_parent(), other.in_parent())
        else {
            return false;
        };
        let (a_len, b_len) = (self.len, other.len);
        a_root == b_root
            && a_len > 0
            && b_len > 0
            && a_at < b_at.saturating_add(b_len)
            && b_at < a_at.saturating_add(a_len)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
