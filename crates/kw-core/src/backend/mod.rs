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
//!
//! The launch arguments and queues are in `args.rs`, the compile request in
//! `compile_request.rs`, the errors in `error.rs`; this file holds the traits.

pub(crate) mod args;
pub(crate) mod compile_request;
pub(crate) mod error;
pub(crate) mod memory;

pub use args::{KernelArg, Mem, Queue, RawHandle, RawMem, RawQueue};
pub use compile_request::CompileRequest;
pub use error::BackendError;
pub use memory::{
    check_range, gentle_chunk, pieces, set_gentle, DeviceMemory, SNAPSHOT_READ_PIECE,
};

use crate::device::{BackendKind, DeviceInfo};
use crate::kernel_def::eval::Geometry;
use std::any::Any;
use std::sync::Arc;

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
    /// Checks that `queue` can take this device's launches: a queue or stream of another
    /// context or backend is the caller's fault ([`BackendError::Foreign`]). Capture asks
    /// before it counts a launch, so that a launch refused for its queue is not counted.
    fn check_queue(&self, queue: Queue<'_>) -> Result<(), BackendError> {
        let _ = queue;
        Ok(())
    }
    /// Waits until every operation enqueued on `queue` so far has finished, and the events
    /// a launch on it waits for ([`Queue::wait_list`]: OpenCL events, maybe of other queues).
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
    /// Enqueues on `queue` (after the work already there and the events it names) a
    /// device-to-device copy of the first `bytes` bytes of each source into device memory the
    /// returned [`Snapshot`] owns, and returns without waiting: work enqueued on `queue` later
    /// runs after the copies, so the caller may overwrite the sources at once. The snapshot
    /// is read back on another thread ([`Snapshot::read`]), without holding up `queue`.
    ///
    /// The default (backends without device-side copies) waits for `queue` and copies to the
    /// host here.
    fn snapshot_on(
        &self,
        queue: Queue<'_>,
        sources: &[(Mem<'_>, usize)],
    ) -> Result<Box<dyn Snapshot>, BackendError> {
        self.synchronize_queue(queue)?;
        let mut contents = Vec::with_capacity(sources.len());
        for (mem, bytes) in sources {
            let mut out = host_vec(*bytes)?;
            match mem {
                Mem::Device(m) => m.read(0, &mut out)?,
                Mem::Raw(r) => self.view(*r)?.read(0, &mut out)?,
            }
            contents.push(out);
        }
        Ok(Box::new(HostSnapshot(contents)))
    }
    /// The on-disk compile cache [`Device::compile`] goes through, where the backend has one
    /// (its counters say how many compiles ran and how many were served from disk).
    fn compile_cache(&self) -> Option<&Arc<crate::compile_cache::CompileCache>> {
        None
    }
}

/// Device copies of buffers made on a queue by [`Device::snapshot_on`], to read back later.
pub trait Snapshot: Send {
    /// Waits until the copies are made and reads them to the host, in the order of the
    /// sources. Only the calling thread waits: the queue the copies were made on goes on.
    fn read(self: Box<Self>) -> Result<Vec<Vec<u8>>, BackendError>;
}

/// A snapshot already on the host (what the default [`Device::snapshot_on`] makes).
pub struct HostSnapshot(pub Vec<Vec<u8>>);

impl Snapshot for HostSnapshot {
    fn read(self: Box<Self>) -> Result<Vec<Vec<u8>>, BackendError> {
        Ok(self.0)
    }
}

/// `bytes` zeroed bytes on the host, or an error (never an abort) when they cannot be
/// allocated.
pub fn host_vec(bytes: usize) -> Result<Vec<u8>, BackendError> {
    let mut v: Vec<u8> = Vec::new();
    v.try_reserve_exact(bytes).map_err(|_| BackendError::Api {
        op: "host allocation",
        message: format!("{bytes} bytes could not be allocated"),
    })?;
    v.resize(bytes, 0);
    Ok(v)
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
