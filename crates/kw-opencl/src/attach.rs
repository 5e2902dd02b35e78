//! Launching on the application's own command queue, with its own buffers: safe
//! [`Queue`]s and buffer arguments made from `opencl3` objects.

use kw_core::backend::{KernelArg, Queue, RawMem};
use kw_core::scalar::Scalar;
use opencl3::command_queue::CommandQueue;
use opencl3::event::Event;
use opencl3::memory::{Buffer, ClMem};
use opencl3::types::cl_event;
use std::marker::PhantomData;

/// The application's command queue as a launch target (no events to wait for).
pub fn queue(queue: &CommandQueue) -> Queue<'_> {
    // SAFETY: the queue is a live opencl3 object, borrowed for the `Queue`'s lifetime.
    unsafe { Queue::opencl_raw(queue.get(), &[]) }
}

/// Events a launch waits for (the handles of borrowed `opencl3` events).
pub struct EventList<'e> {
    handles: Vec<cl_event>,
    _events: PhantomData<&'e Event>,
}

impl<'e> EventList<'e> {
    /// The events, in order.
    pub fn new(events: &[&'e Event]) -> EventList<'e> {
        EventList {
            handles: events.iter().map(|e| e.get()).collect(),
            _events: PhantomData,
        }
    }
}

/// The application's command queue as a launch target that waits for `events` first.
pub fn queue_after<'a>(queue: &'a CommandQueue, events: &'a EventList<'_>) -> Queue<'a> {
    // SAFETY: the queue and the events are live opencl3 objects, borrowed for the
    // `Queue`'s lifetime.
    unsafe { Queue::opencl_raw(queue.get(), &events.handles) }
}

/// The application's buffer as a launch argument: all of it, as elements of `T`.
///
/// Its size is asked of the driver (`CL_MEM_SIZE`); a buffer whose size cannot be read
/// gives an argument of length 0, which a launch then refuses as too short.
pub fn buffer_arg<T: Scalar>(buffer: &Buffer<T>) -> KernelArg<'_> {
    let bytes = buffer.size().unwrap_or(0);
    // SAFETY: a live opencl3 buffer of `bytes` bytes, borrowed for the argument's lifetime.
    let raw = unsafe { RawMem::opencl(buffer.get(), bytes) };
    KernelArg::raw_buffer(raw, T::TYPE)
}

/// An application's `cl_mem` as a buffer argument of elements of `elem`, all of it: its size
/// is asked of the driver (`CL_MEM_SIZE`). What the C API uses when the caller gives no count.
///
/// # Safety
/// `mem` must be a live `cl_mem` buffer object of the context the launch goes to, that stays
/// alive while launches using it run.
pub unsafe fn raw_buffer_arg(
    mem: opencl3::types::cl_mem,
    elem: kw_core::scalar::ScalarType,
) -> Result<KernelArg<'static>, kw_core::backend::BackendError> {
    use opencl3::memory::{get_mem_object_info, CL_MEM_SIZE};
    if mem.is_null() {
        return Err(kw_core::backend::BackendError::Api {
            op: "clGetMemObjectInfo",
            message: "a null cl_mem was given".into(),
        });
    }
    let bytes = get_mem_object_info(mem, CL_MEM_SIZE)
        .map_err(|e| crate::error::api("clGetMemObjectInfo(CL_MEM_SIZE)", e.into()))?
        .to_size();
    // SAFETY: the caller vouches for the handle; `bytes` is its size as the driver reports it.
    let raw = unsafe { RawMem::opencl(mem, bytes) };
    Ok(KernelArg::raw_buffer(raw, elem))
}
