//! Joining an existing application: the backend-specific types that let the library use the
//! application's context, streams or queues and memory instead of its own.
//!
//! - [`cuda`] (feature `cuda`): [`cuda::CudaDevice::from_context`] (a cudarc
//!   `Arc<CudaContext>`), [`cuda::CudaDevice::attach_primary`] (the CUDA runtime's context),
//!   [`cuda::CudaDevice::attach_current`]; launch on [`cuda::stream_queue`] with
//!   [`cuda::slice_arg`] buffers; [`cuda::cudarc`] is the cudarc this library was built with.
//! - [`opencl`] (feature `opencl`): [`opencl::ClDevice::attach`] (an opencl3 `Context` +
//!   `CommandQueue`), [`opencl::queue`] / [`opencl::queue_after`] (waiting for the
//!   application's events) and [`opencl::buffer_arg`]; [`opencl::ClEvent`] is the event a
//!   launch returns; [`opencl::opencl3`] is the opencl3 this library was built with.
//!
//! Either is used through [`LaunchOptions::on`](crate::LaunchOptions::on). Raw handles go
//! through the `unsafe` constructors [`Queue::cuda_raw`](crate::Queue::cuda_raw),
//! [`Queue::opencl_raw`](crate::Queue::opencl_raw), [`RawMem::cuda`](crate::RawMem::cuda) and
//! [`RawMem::opencl`](crate::RawMem::opencl), which need no backend module.

/// CUDA interop (the `kw-cuda` backend): attaching to a cudarc or CUDA-runtime context, the
/// application's streams and device memory.
#[cfg(feature = "cuda")]
pub mod cuda {
    pub use kw_cuda::attach::bytes_from_pointer;
    pub use kw_cuda::{cudarc, slice_arg, stream_queue, CudaDevice, CudaMemory};
}

/// OpenCL interop (the `kw-opencl` backend): attaching to an opencl3 context and queue, the
/// application's queues, events and buffers.
#[cfg(feature = "opencl")]
pub mod opencl {
    pub use kw_opencl::attach::raw_buffer_arg;
    pub use kw_opencl::{
        buffer_arg, opencl3, queue, queue_after, ClDevice, ClEvent, ClMemory, EventList,
    };
}
