//! The backend traits: one device of a backend ([`Device`]), its compiled kernels
//! ([`CompiledKernel`]) and its memory ([`DeviceMemory`]), plus enumeration ([`Backend`]).
//!
//! The traits are object-safe: the runtime, the capture writer and the tuner hold
//! `Arc<dyn Device>` and are written once for CUDA and OpenCL. A backend finds its own
//! concrete types behind `&dyn CompiledKernel` / `&dyn DeviceMemory` with
//! [`CompiledKernel::as_any`] / [`DeviceMemory::as_any`]; handing one backend's object to
//! another backend is an error, never undefined behaviour.
//!
//! Mapping onto the APIs:
//! - CUDA: a `Device` owns a context and a stream; `compile` runs NVRTC (cubin for the exact
//!   `sm_XY`) and loads the module; `launch` packs the arguments into the `void*` array of
//!   `cuLaunchKernel` (grid = blocks, block = threads, dynamic shared memory bytes); timing
//!   uses a pair of CUDA events around the launch.
//! - OpenCL: a `Device` owns a context and an in-order queue with profiling enabled;
//!   `compile` is `clBuildProgram` with `-D` options; `launch` sets each argument with
//!   `clSetKernelArg` and enqueues with global size = grid x local size; dynamic local memory
//!   is passed as one extra trailing `__local` pointer argument (see the `kw-opencl` crate);
//!   timing reads the launch event's profiling counters.

use crate::device::{BackendKind, DeviceInfo};
use crate::kernel_def::eval::Geometry;
use crate::kernel_def::KernelSource;
use crate::scalar::{ScalarType, ScalarValue};
use std::any::Any;
use std::path::PathBuf;
use std::sync::Arc;
use thiserror::Error;

/// Errors of backends: typed, with the context needed to act on them.
#[derive(Debug, Clone, Error)]
#[non_exhaustive]
pub enum BackendError {
    /// The backend's driver or runtime library is missing, or it has no platform/device.
    #[error("no {backend} platform: {reason}")]
    Unavailable {
        /// The backend.
        backend: BackendKind,
        /// Why (library not found, no platform, ...).
        reason: String,
    },
    /// The backend was left out of this build (a cargo feature of `kernel-wisdom` / `kw-cli`).
    #[error("built without {backend} support: enable the `{feature}` cargo feature")]
    NotBuilt {
        /// The backend.
        backend: BackendKind,
        /// The feature that builds it in.
        feature: &'static str,
    },
    /// No device matched a selection.
    #[error("no {backend} device matches {selector} (available: {available})")]
    NoSuchDevice {
        /// The backend.
        backend: BackendKind,
        /// The selection (`index 3`, `name containing "A100"`).
        selector: String,
        /// The devices there are.
        available: String,
    },
    /// The kernel failed to compile; `log` is the compiler's full build log.
    #[error("kernel `{kernel}` ({file}) failed to compile with options `{options}`: {reason}\nbuild log:\n{log}")]
    Compile {
        /// The kernel name.
        kernel: String,
        /// The source file name.
        file: String,
        /// The compiler options used.
        options: String,
        /// The driver's error.
        reason: String,
        /// The full build log.
        log: String,
    },
    /// A launch argument does not fit the kernel.
    #[error("kernel `{kernel}`: argument {index}: {message}")]
    Argument {
        /// The kernel name.
        kernel: String,
        /// The argument's position.
        index: usize,
        /// What is wrong.
        message: String,
    },
    /// A constant-memory symbol could not be written.
    #[error("kernel `{kernel}`: constant symbol `{name}`: {message}")]
    Symbol {
        /// The kernel name.
        kernel: String,
        /// The symbol's name.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// A launch failed.
    #[error("kernel `{kernel}`: launch with grid {grid:?} x block {block:?} failed: {message}")]
    Launch {
        /// The kernel name.
        kernel: String,
        /// Blocks per axis.
        grid: [u32; 3],
        /// Threads per block per axis.
        block: [u32; 3],
        /// The driver's error.
        message: String,
    },
    /// A host <-> device transfer would leave the buffer.
    #[error("{op} of {bytes} bytes at offset {offset} is outside a buffer of {len} bytes")]
    OutOfRange {
        /// `write`, `read` or `copy`.
        op: &'static str,
        /// Bytes asked for.
        bytes: usize,
        /// Offset asked for.
        offset: usize,
        /// The buffer's length in bytes.
        len: usize,
    },
    /// An object of another backend (or another device) was passed.
    #[error("{what} does not belong to this {backend} device")]
    Foreign {
        /// The backend.
        backend: BackendKind,
        /// What was passed (`kernel`, `buffer for argument 2`).
        what: String,
    },
    /// Any other driver call failed.
    #[error("{op} failed: {message}")]
    Api {
        /// The operation (`clCreateBuffer`, `cuMemAlloc`).
        op: &'static str,
        /// The driver's error.
        message: String,
    },
}

/// What to compile. Defines become `-DNAME=VALUE`; headers are made available to
/// `#include "NAME"`; include directories become `-I DIR`.
#[derive(Clone, Copy, Debug)]
pub struct CompileRequest<'a> {
    /// The source and its embedded headers.
    pub source: &'a KernelSource,
    /// The kernel function's name.
    pub kernel_name: &'a str,
    /// `(name, value)` pairs, passed as `-Dname=value`.
    pub defines: &'a [(String, String)],
    /// Extra compiler flags.
    pub flags: &'a [String],
    /// Include directories.
    pub include_dirs: &'a [PathBuf],
    /// Template arguments (CUDA; must be empty for OpenCL).
    pub template_args: &'a [String],
}

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
    /// Memory allocated through a [`Device`] (e.g. a [`crate::buffer::DeviceBuffer`]).
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
    /// A buffer argument over memory allocated through a [`Device`]: `len` elements of `elem`.
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

/// The completion of a launch, where the backend has one to give (an OpenCL event; CUDA
/// applications record their own events on their stream).
pub trait DeviceEvent: Send + Sync {
    /// Waits until the launch has finished.
    fn wait(&self) -> Result<(), BackendError>;
    /// The concrete type, for the backend that made it (e.g. to get the `opencl3` event).
    fn as_any(&self) -> &dyn Any;
    /// The concrete type, by value.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<T: crate::scalar::Scalar> From<T> for KernelArg<'_> {
    fn from(v: T) -> Self {
        KernelArg::Scalar(ScalarValue::new(v))
    }
}

/// Enumerates and opens the devices of one backend.
pub trait Backend: Send + Sync {
    /// Which backend this is.
    fn kind(&self) -> BackendKind;
    /// The devices, in a stable order (their index is what [`Backend::open`] takes).
    /// [`BackendError::Unavailable`] when the driver is missing or there is no platform.
    fn devices(&self) -> Result<Vec<DeviceInfo>, BackendError>;
    /// Opens device `index` (a context and a default queue / stream).
    fn open(&self, index: usize) -> Result<Arc<dyn Device>, BackendError>;
}

/// One opened device: its context and default in-order queue (OpenCL) or stream (CUDA).
/// All operations are ordered on that queue.
pub trait Device: Send + Sync {
    /// The device's description.
    fn info(&self) -> &DeviceInfo;
    /// Compiles a kernel. [`BackendError::Compile`] carries the full build log.
    fn compile(&self, req: &CompileRequest<'_>) -> Result<Arc<dyn CompiledKernel>, BackendError>;
    /// Allocates `bytes` of device memory (contents unspecified; 0 bytes is allowed).
    fn alloc(&self, bytes: usize) -> Result<Box<dyn DeviceMemory>, BackendError>;
    /// Enqueues a launch on the device's own queue or stream (asynchronous). Checks the
    /// arguments against the kernel's parameter count and the buffers' device.
    fn launch(
        &self,
        kernel: &dyn CompiledKernel,
        geometry: &Geometry,
        args: &[KernelArg<'_>],
    ) -> Result<(), BackendError> {
        self.launch_on(Queue::DEFAULT, kernel, geometry, args, false)
            .map(drop)
    }
    /// Enqueues a launch on `queue` (asynchronous), after the events it names. With
    /// `want_event`, returns the launch's completion where the backend has one (OpenCL).
    fn launch_on(
        &self,
        queue: Queue<'_>,
        kernel: &dyn CompiledKernel,
        geometry: &Geometry,
        args: &[KernelArg<'_>],
        want_event: bool,
    ) -> Result<Option<Box<dyn DeviceEvent>>, BackendError>;
    /// Waits until every operation enqueued on `queue` so far has finished.
    fn synchronize_queue(&self, queue: Queue<'_>) -> Result<(), BackendError>;
    /// A [`DeviceMemory`] over the application's memory (not freed on drop), ordered on the
    /// device's own queue: what capture and replay use to copy raw buffer arguments.
    fn view(&self, raw: RawMem) -> Result<Box<dyn DeviceMemory>, BackendError>;
    /// Launches, waits for the launch to finish and returns its device time in milliseconds,
    /// measured with device events / profiling counters.
    fn launch_timed(
        &self,
        kernel: &dyn CompiledKernel,
        geometry: &Geometry,
        args: &[KernelArg<'_>],
    ) -> Result<f64, BackendError>;
    /// Waits until every operation enqueued so far has finished.
    fn synchronize(&self) -> Result<(), BackendError>;
    /// Runs `kernel` `runs` times, each run after copying every `(destination, source)` pair
    /// of `restore` (device to device, whole source), and returns each launch's device time in
    /// milliseconds. Backends enqueue everything without waiting on the host in between and
    /// wait once at the end (the default does one run at a time with [`Device::launch_timed`]).
    fn launch_timed_runs(
        &self,
        kernel: &dyn CompiledKernel,
        geometry: &Geometry,
        args: &[KernelArg<'_>],
        restore: &[(&dyn DeviceMemory, &dyn DeviceMemory)],
        runs: usize,
    ) -> Result<Vec<f64>, BackendError> {
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            for (dst, src) in restore {
                dst.copy_from(*src)?;
            }
            times.push(self.launch_timed(kernel, geometry, args)?);
        }
        Ok(times)
    }
    /// Writes `data` at the start of the constant-memory symbol `name` of `kernel`'s module
    /// (CUDA `__constant__`), after the work enqueued on the device's own queue so far, and
    /// waits until it is written: later launches of `kernel` read it. Backends without
    /// host-writable symbols (OpenCL) refuse with [`BackendError::Symbol`].
    fn write_symbol(
        &self,
        kernel: &dyn CompiledKernel,
        name: &str,
        data: &[u8],
    ) -> Result<(), BackendError> {
        let _ = data;
        Err(BackendError::Symbol {
            kernel: kernel.name().to_string(),
            name: name.to_string(),
            message: format!(
                "{} has no constant-memory symbols written from the host; pass the data as a \
                 `__constant` pointer argument (a buffer) instead",
                self.info().backend
            ),
        })
    }
    /// The on-disk compile cache [`Device::compile`] goes through, where the backend has one
    /// (its counters say how many compiles ran and how many were served from disk).
    fn compile_cache(&self) -> Option<&Arc<crate::compile_cache::CompileCache>> {
        None
    }
}

/// A compiled kernel, ready to launch on the device that compiled it.
pub trait CompiledKernel: Send + Sync {
    /// The kernel function's name.
    fn name(&self) -> &str;
    /// The number of parameters the compiled function takes, where the backend knows it.
    fn param_count(&self) -> Option<usize>;
    /// The concrete type, for the backend that made it.
    fn as_any(&self) -> &dyn Any;
}

/// A block of device memory. Transfers are ordered on the owning device's queue and block
/// until done.
pub trait DeviceMemory: Send + Sync {
    /// Its size in bytes.
    fn len_bytes(&self) -> usize;
    /// Copies `data` to the device at byte `offset`.
    fn write(&self, offset: usize, data: &[u8]) -> Result<(), BackendError>;
    /// Copies from the device at byte `offset` into `out` (after all enqueued work).
    fn read(&self, offset: usize, out: &mut [u8]) -> Result<(), BackendError>;
    /// Copies all of `src` (same device, same size or smaller) to the start of this buffer.
    fn copy_from(&self, src: &dyn DeviceMemory) -> Result<(), BackendError>;
    /// Sets every byte to zero. The default writes zeros from the host in chunks; backends
    /// with a device-side fill override it (no host memory, no transfer).
    fn fill_zero(&self) -> Result<(), BackendError> {
        const CHUNK: usize = 1 << 20;
        let zeros = vec![0u8; CHUNK.min(self.len_bytes())];
        let mut offset = 0;
        while offset < self.len_bytes() {
            let n = CHUNK.min(self.len_bytes() - offset);
            self.write(offset, &zeros[..n])?;
            offset += n;
        }
        Ok(())
    }
    /// The concrete type, for the backend that made it.
    fn as_any(&self) -> &dyn Any;
}

/// Writes every symbol of `symbols` into `kernel`'s module ([`Device::write_symbol`]), in
/// order: what replay and capture do after each compile.
pub fn write_symbols(
    device: &dyn Device,
    kernel: &dyn CompiledKernel,
    symbols: &[crate::scalar::SymbolValue],
) -> Result<(), BackendError> {
    symbols
        .iter()
        .try_for_each(|s| device.write_symbol(kernel, &s.name, &s.bytes))
}

/// Checks that `[offset, offset + bytes)` lies in a buffer of `len` bytes.
pub fn check_range(
    op: &'static str,
    offset: usize,
    bytes: usize,
    len: usize,
) -> Result<(), BackendError> {
    match offset.checked_add(bytes) {
        Some(end) if end <= len => Ok(()),
        _ => Err(BackendError::OutOfRange {
            op,
            bytes,
            offset,
            len,
        }),
    }
}

impl std::fmt::Debug for dyn CompiledKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CompiledKernel({})", self.name())
    }
}

impl std::fmt::Debug for dyn Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Device({})", self.info().summary())
    }
}

impl std::fmt::Debug for dyn DeviceMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceMemory({} bytes)", self.len_bytes())
    }
}

/// A launch's arguments as definition expressions see them ([`ArgValues`]): a scalar's value,
/// a buffer's element count.
///
/// [`ArgValues`]: crate::kernel_def::eval::ArgValues
#[derive(Clone, Copy)]
pub struct ArgView<'a>(pub &'a [KernelArg<'a>]);

impl crate::kernel_def::eval::ArgValues for ArgView<'_> {
    fn arg_value(&self, index: usize) -> Option<crate::value::Value> {
        match self.0.get(index)? {
            KernelArg::Buffer { len, .. } => {
                Some(crate::value::Value::Int(i64::try_from(*len).ok()?))
            }
            KernelArg::Scalar(s) => Some(s.to_value()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Memory on the host, with only the required methods (so the defaults are what runs).
    struct HostMemory(Mutex<Vec<u8>>);

    impl DeviceMemory for HostMemory {
        fn len_bytes(&self) -> usize {
            self.0.lock().unwrap().len()
        }
        fn write(&self, offset: usize, data: &[u8]) -> Result<(), BackendError> {
            let mut m = self.0.lock().unwrap();
            check_range("write", offset, data.len(), m.len())?;
            m[offset..offset + data.len()].copy_from_slice(data);
            Ok(())
        }
        fn read(&self, offset: usize, out: &mut [u8]) -> Result<(), BackendError> {
            let m = self.0.lock().unwrap();
            check_range("read", offset, out.len(), m.len())?;
            out.copy_from_slice(&m[offset..offset + out.len()]);
            Ok(())
        }
        fn copy_from(&self, _: &dyn DeviceMemory) -> Result<(), BackendError> {
            unimplemented!("not used by this test")
        }
        fn as_any(&self) -> &dyn Any {
            self
        }
    }

    #[test]
    fn the_default_fill_zero_clears_every_byte_across_chunks() {
        for len in [0, 1, (1 << 20) - 1, 1 << 20, (5 << 19) + 3] {
            let m = HostMemory(Mutex::new(vec![0xAB; len]));
            m.fill_zero().unwrap();
            assert!(m.0.lock().unwrap().iter().all(|&b| b == 0), "len {len}");
        }
    }
}
