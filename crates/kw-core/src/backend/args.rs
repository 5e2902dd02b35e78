//! What a launch takes: its arguments ([`KernelArg`]: device buffers, the application's raw
//! memory ([`RawMem`]) or scalars) and where it is enqueued ([`Queue`]: the device's own
//! queue or stream, or the application's).

use super::memory::DeviceMemory;
use crate::scalar::{ScalarType, ScalarValue};

/// An application's device memory, by raw handle and size: a CUDA device pointer or an
/// OpenCL `cl_mem`. Made only through `unsafe` constructors (the caller vouches that the handle
/// is live memory of at least `bytes` bytes on the device it is launched on); the backend
/// crates offer safe constructors from `cudarc` slices and `opencl3` buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawMem {
    handle: RawHandle,
    bytes: usize,
}

/// Which API a raw handle belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RawHandle {
    /// A CUDA device pointer (`CUdeviceptr`).
    Cuda(u64),
    /// An OpenCL buffer (`cl_mem`), as an address.
    OpenCl(usize),
}

impl RawMem {
    /// A CUDA device pointer to `bytes` bytes.
    ///
    /// # Safety
    /// `ptr` must point at device memory of at least `bytes` bytes, in the context of the
    /// device it is launched on, that stays allocated while launches using it run.
    pub unsafe fn cuda(ptr: u64, bytes: usize) -> RawMem {
        RawMem {
            handle: RawHandle::Cuda(ptr),
            bytes,
        }
    }

    /// An OpenCL buffer of `bytes` bytes.
    ///
    /// # Safety
    /// `mem` must be a valid `cl_mem` buffer object of at least `bytes` bytes, in the context
    /// of the device it is launched on, that stays alive while launches using it run.
    pub unsafe fn opencl(mem: *mut std::ffi::c_void, bytes: usize) -> RawMem {
        RawMem {
            handle: RawHandle::OpenCl(mem as usize),
            bytes,
        }
    }

    /// The handle.
    pub fn handle(&self) -> RawHandle {
        self.handle
    }

    /// The size in bytes the constructor vouched for.
    pub fn len_bytes(&self) -> usize {
        self.bytes
    }
}

/// The memory behind a buffer argument.
#[derive(Clone, Copy)]
pub enum Mem<'a> {
    /// Memory allocated through a [`Device`](super::Device) (e.g. a [`crate::buffer::DeviceBuffer`]).
    Device(&'a dyn DeviceMemory),
    /// The application's own memory, by raw handle.
    Raw(RawMem),
}

impl Mem<'_> {
    /// Its size in bytes.
    pub fn len_bytes(&self) -> usize {
        match self {
            Mem::Device(m) => m.len_bytes(),
            Mem::Raw(r) => r.len_bytes(),
        }
    }
}

/// A launch argument: a device buffer or a scalar by value.
#[derive(Clone, Copy)]
pub enum KernelArg<'a> {
    /// A device buffer with its element type and element count.
    Buffer {
        /// The memory.
        mem: Mem<'a>,
        /// The element type.
        elem: ScalarType,
        /// The number of elements (at most what `mem` holds; backends check).
        len: usize,
    },
    /// A scalar.
    Scalar(ScalarValue),
}

impl<'a> KernelArg<'a> {
    /// A buffer argument over memory allocated through a [`Device`](super::Device): `len` elements of `elem`.
    pub fn device_buffer(mem: &'a dyn DeviceMemory, elem: ScalarType, len: usize) -> Self {
        KernelArg::Buffer {
            mem: Mem::Device(mem),
            elem,
            len,
        }
    }

    /// A buffer argument over the application's memory: `raw.len_bytes() / elem.size()`
    /// elements of `elem`.
    pub fn raw_buffer(raw: RawMem, elem: ScalarType) -> Self {
        KernelArg::Buffer {
            mem: Mem::Raw(raw),
            elem,
            len: raw.len_bytes() / elem.size().max(1),
        }
    }

    /// The scalar type (of the value, or of a buffer's elements).
    pub fn scalar_type(&self) -> ScalarType {
        match self {
            KernelArg::Buffer { elem, .. } => *elem,
            KernelArg::Scalar(s) => s.ty(),
        }
    }

    /// `"buffer of f32"` or `"scalar f32"`, for error messages.
    pub fn describe(&self) -> String {
        match self {
            KernelArg::Buffer { elem, .. } => format!("buffer of {elem}"),
            KernelArg::Scalar(s) => format!("scalar {}", s.ty()),
        }
    }

    /// For a buffer argument: checks that `len` elements fit its memory and returns the
    /// number of bytes they take.
    pub fn checked_bytes(&self) -> Option<Result<usize, String>> {
        match self {
            KernelArg::Buffer { mem, elem, len } => Some(match len.checked_mul(elem.size()) {
                Some(b) if b <= mem.len_bytes() => Ok(b),
                _ => Err(format!(
                    "{len} elements of {elem} do not fit a buffer of {} bytes",
                    mem.len_bytes()
                )),
            }),
            KernelArg::Scalar(_) => None,
        }
    }
}

impl std::fmt::Debug for KernelArg<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KernelArg::Buffer { elem, len, .. } => write!(f, "Buffer({elem} x {len})"),
            KernelArg::Scalar(s) => write!(f, "Scalar({:?})", s.to_value()),
        }
    }
}

/// Where a launch is enqueued: the device's own queue / stream, or the application's.
///
/// Safe constructors for the application's streams and queues are in the backend crates
/// (`kw_cuda::stream_queue`, `kw_opencl::command_queue`); the lifetime ties a `Queue` to
/// the stream or queue (and the events it waits for) it was made from.
#[derive(Clone, Copy, Debug)]
pub struct Queue<'a> {
    raw: RawQueue,
    wait: &'a [*mut std::ffi::c_void],
}

/// A stream or queue handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RawQueue {
    /// The device's own queue or stream.
    Default,
    /// A CUDA stream (`CUstream`, as an address; 0 is the context's legacy default stream).
    Cuda(usize),
    /// An OpenCL command queue (`cl_command_queue`, as an address).
    OpenCl(usize),
}

impl Queue<'static> {
    /// The device's own queue or stream.
    pub const DEFAULT: Queue<'static> = Queue {
        raw: RawQueue::Default,
        wait: &[],
    };

    /// A CUDA stream by handle (`CUstream`; null is the legacy default stream).
    ///
    /// # Safety
    /// `stream` must be a live stream of the context of the device it is used with, and
    /// stay alive while work enqueued on it through this value runs.
    pub unsafe fn cuda_raw(stream: *mut std::ffi::c_void) -> Queue<'static> {
        Queue {
            raw: RawQueue::Cuda(stream as usize),
            wait: &[],
        }
    }
}

impl<'a> Queue<'a> {
    /// An OpenCL command queue by handle, and the events (`cl_event` handles) a launch on it
    /// must wait for.
    ///
    /// # Safety
    /// `queue` must be a live command queue of the context of the device it is used with;
    /// every entry of `wait` must be a live `cl_event` of that context.
    pub unsafe fn opencl_raw(
        queue: *mut std::ffi::c_void,
        wait: &'a [*mut std::ffi::c_void],
    ) -> Queue<'a> {
        Queue {
            raw: RawQueue::OpenCl(queue as usize),
            wait,
        }
    }

    /// The device's own queue, and the events (OpenCL `cl_event` handles) a launch on it must
    /// wait for (a CUDA device has none: `wait` must be empty there).
    ///
    /// # Safety
    /// Every entry of `wait` must be a live `cl_event` of the context of the device it is
    /// used with.
    pub unsafe fn default_after(wait: &'a [*mut std::ffi::c_void]) -> Queue<'a> {
        Queue {
            raw: RawQueue::Default,
            wait,
        }
    }

    /// The handle.
    pub fn raw(&self) -> RawQueue {
        self.raw
    }

    /// The events (OpenCL `cl_event` handles) a launch waits for.
    pub fn wait_list(&self) -> &'a [*mut std::ffi::c_void] {
        self.wait
    }

    /// Whether this is the device's own queue.
    pub fn is_default(&self) -> bool {
        self.raw == RawQueue::Default
    }
}

impl Default for Queue<'_> {
    fn default() -> Self {
        Queue::DEFAULT
    }
}

impl<T: crate::scalar::Scalar> From<T> for KernelArg<'_> {
    fn from(v: T) -> Self {
        KernelArg::Scalar(ScalarValue::new(v))
    }
}
