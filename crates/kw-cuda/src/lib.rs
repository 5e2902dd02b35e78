//! # kw-cuda
//!
//! The CUDA backend of kernel-wisdom, on [`cudarc`] (driver API + NVRTC).
//!
//! Everything is loaded at run time, so the crate builds and runs on machines without CUDA:
//! there [`CudaBackend`]'s methods answer [`kw_core::backend::BackendError::Unavailable`]
//! ("no CUDA driver ...") instead of panicking (see [`probe`]).
//!
//! - [`CudaBackend`] enumerates devices ([`kw_core::device::DeviceInfo`]: name, UUID,
//!   `sm_XY`, SM count, memory, limits, driver and NVRTC versions) and opens them.
//! - [`CudaDevice`] owns the device's primary context and one stream; it compiles with NVRTC
//!   (defines, flags, `-std=c++17` by default, include directories, embedded headers, name
//!   expressions for templated and namespaced kernels; CUBIN for the exact `sm_XY` when
//!   NVRTC supports it, PTX otherwise), through the on-disk compile cache
//!   (`kw_core::compile_cache`), allocates memory, launches (grid, block, dynamic
//!   shared memory, raising the 48 KiB limit when asked for more) and times launches with
//!   CUDA events. [`attach`] joins an application's context, stream and `CudaSlice`s instead.
//! - NVRTC is loaded by this crate (see [`nvrtc_library`]): `libnvrtc.so.13`, `.so.12` or
//!   `.so`, or what `KW_NVRTC_LIBRARY` names.
//!
//! All `unsafe` of the CUDA path lives in this crate, each block with its SAFETY argument.
//!
//! ## Layer
//!
//! Layer 1 (`docs/architecture.md`): a backend. Depends on `kw-core` only among the workspace
//! crates and implements its traits (`kw_core::backend::{Backend, Device, CompiledKernel,
//! DeviceMemory}`); it never sees a `KernelDef`, wisdom or captures, only compile requests
//! (`kw_core::backend::CompileRequest`), memory, geometry and arguments. Used by
//! `kernel-wisdom` as the optional dependency behind its `cuda` feature. Its GPU tests print
//! `SKIPPED: no CUDA driver` on machines without one; `tools/gpu.sh check` runs them on a GPU.
//!
//! ## Where to start reading
//!
//! `backend.rs` (`CudaBackend`), `device.rs` (the `Device` implementation), `compile.rs` and
//! `nvrtc_lib.rs` (NVRTC), `launch.rs`, `attach.rs` (an application's context and stream).

pub mod attach;
mod backend;
mod compile;
#[cfg(feature = "cublas")]
pub mod cublas;
mod device;
mod error;
mod info;
mod kernel;
mod launch;
mod memory;
mod nvrtc_lib;
pub mod probe;
mod snapshot;

pub use attach::{slice_arg, stream_queue};
pub use backend::CudaBackend;
pub use compile::ImageKind;
pub use device::CudaDevice;
pub use info::{format_uuid, sm_arch};
pub use kernel::{CompileStats, CudaKernel};
pub use memory::CudaMemory;
pub use nvrtc_lib::{NvrtcLoadError, NVRTC_LIBRARY_ENV};

/// Re-exported so that users (benchmarks, tests) can make raw cudarc calls on the same
/// context and stream.
pub use cudarc;

/// Loads NVRTC (once) and says where from and which version: `("libnvrtc.so.13", "NVRTC 13.0")`.
pub fn nvrtc_library() -> Result<(String, String), kw_core::backend::BackendError> {
    let driver = probe::driver()?;
    let lib = nvrtc_lib::nvrtc(driver.major()).map_err(|e| {
        kw_core::backend::BackendError::Unavailable {
            backend: kw_core::device::BackendKind::Cuda,
            reason: e.to_string(),
        }
    })?;
    Ok((lib.origin.clone(), lib.version_string()))
}
