//! # kw-opencl
//!
//! The OpenCL backend of kernel-wisdom, on [`opencl3`] with `libOpenCL` loaded at run time:
//! a machine without OpenCL builds and runs, and [`OpenClBackend::devices`] answers
//! "no OpenCL platform" instead of failing to load.
//!
//! - Devices are numbered over all platforms: GPUs and accelerators first, then CPUs, each in
//!   platform order then device order (the first OpenCL device of a GPU machine is a GPU).
//! - Each opened [`ClDevice`] has one context and one in-order queue with profiling enabled;
//!   transfers block, launches are asynchronous, [`kw_core::backend::Device::synchronize`] waits.
//!   [`ClDevice::attach`] uses an application's own context and queue instead.
//! - Kernels are built with `clBuildProgram`; defines become `-DNAME=VALUE`, include
//!   directories `-IDIR`, embedded headers are written once to a directory named by their
//!   hash inside this user's private temporary directory (`kw_core::files::private_temp_dir`)
//!   and added with `-I`. Builds go through the on-disk compile cache
//!   (`kw_core::compile_cache`, program binaries). A failed build returns
//!   [`kw_core::backend::BackendError::Compile`] with the full build log, its lines named
//!   by the source's `#line` directives where the compiler ignores them (NVIDIA's writes
//!   `<kernel>:LINE:COL`).
//! - A launch uses global size = grid x local size (the block size), per axis.
//! - **Dynamic local memory convention**: a kernel that uses dynamic local (shared) memory
//!   declares one extra, trailing `__local` pointer parameter after its declared arguments,
//!   e.g. `__kernel void k(__global float* x, int n, __local float* scratch)`. The runtime
//!   passes the definition's `shared_memory` bytes there (at least 1 byte, as OpenCL refuses
//!   0). A kernel without that parameter must ask for 0 bytes.
//! - Timed launches read the launch event's `CL_PROFILING_COMMAND_START/END`.
//!
//! All `unsafe` of the OpenCL path lives in this crate.
//!
//! ## Layer
//!
//! Layer 1 (`docs/architecture.md`): a backend. Depends on `kw-core` only among the workspace
//! crates and implements its traits (`kw_core::backend::{Backend, Device, CompiledKernel,
//! DeviceMemory}`); it never sees a `KernelDef`, wisdom or captures, only compile requests
//! (`kw_core::backend::CompileRequest`), memory, geometry and arguments. Used by
//! `kernel-wisdom` as the optional dependency behind its `opencl` feature.
//!
//! ## Where to start reading
//!
//! `lib.rs` (`OpenClBackend`), `device.rs` (the `Device` implementation), `program.rs`
//! (building through the compile cache), `attach.rs` (an application's context, queue and
//! buffers).

pub mod attach;
mod device;
mod error;
mod memory;
mod platform;
mod program;
pub mod raw;
mod shared;
mod snapshot;

pub use attach::{buffer_arg, queue, queue_after, EventList};
pub use device::{ClDevice, ClEvent};
pub use memory::ClMemory;
pub use opencl3;
pub use program::ClKernel;

use kw_core::backend::{Backend, BackendError, Device};
use kw_core::{device::BackendKind, device::DeviceInfo};
use std::sync::Arc;

/// The OpenCL backend: enumerates and opens OpenCL devices.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenClBackend;

impl OpenClBackend {
    /// The backend.
    pub fn new() -> OpenClBackend {
        OpenClBackend
    }

    /// Whether an OpenCL platform with at least one device is present.
    pub fn is_available(&self) -> bool {
        use kw_core::backend::Backend;
        self.devices().is_ok_and(|d| !d.is_empty())
    }

    /// Opens device `index` as its concrete type.
    pub fn open_cl(&self, index: usize) -> Result<ClDevice, BackendError> {
        let devices = platform::devices()?;
        let Some((d, info)) = devices.get(index) else {
            let names: Vec<String> = devices
                .iter()
                .enumerate()
                .map(|(i, (_, info))| format!("{i}: {}", info.name))
                .collect();
            return Err(BackendError::NoSuchDevice {
                backend: BackendKind::Opencl,
                selector: format!("index {index}"),
                available: names.join(", "),
            });
        };
        ClDevice::open(*d, info.clone())
    }
}

impl Backend for OpenClBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Opencl
    }

    fn devices(&self) -> Result<Vec<DeviceInfo>, BackendError> {
        Ok(platform::devices()?
            .iter()
            .map(|(_, i)| i.clone())
            .collect())
    }

    fn open(&self, index: usize) -> Result<Arc<dyn Device>, BackendError> {
        Ok(Arc::new(self.open_cl(index)?))
    }
}
