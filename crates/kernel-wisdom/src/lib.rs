//! # kernel-wisdom
//!
//! Self-tuning GPU kernels. An application declares each tunable kernel once with a
//! [`KernelBuilder`] (source, tuning parameters, restrictions, geometry, arguments, all as
//! expressions), binds it to a device as a [`WisdomKernel`] and launches it with its
//! arguments; the runtime derives the problem size, selects a configuration, compiles it once
//! and launches it.
//!
//! ```no_run
//! use kernel_wisdom::{demo_kernels, open_default_device, DeviceBuffer, WisdomKernel};
//! # fn main() -> Result<(), kernel_wisdom::Error> {
//! let device = open_default_device()?;
//! let add = WisdomKernel::new(demo_kernels::opencl::vector_add()?, device.clone())?;
//! let x = DeviceBuffer::from_slice(device.as_ref(), &[1.0f32, 2.0, 3.0])?;
//! let y = DeviceBuffer::<f32>::new(device.as_ref(), 3)?;
//! add.launch(&[y.arg(), x.arg(), x.arg(), 3i32.into()])?;
//! assert_eq!(y.to_vec()?, vec![2.0, 4.0, 6.0]);
//! # Ok(()) }
//! ```
//!
//! ## Capture (for offline tuning)
//!
//! When the `KW_CAPTURE` environment variable (read once, at the first launch) or
//! [`set_capture_settings`] selects a kernel by its tuning key, [`WisdomKernel::launch`]
//! records selected launches into capture files (`kw-capture` format, one `.kwcap` file per
//! launch): the kernel definition with its source, the configuration, the argument values,
//! every buffer (its declared length) before the launch and, for each buffer the definition
//! declares written (`Out`/`InOut`, changed or not) or the launch changed, its contents after
//! the launch (the reference output), the problem size, the device and provenance.
//! The metadata schema is [`kw_core::capture_meta::CaptureMetadata`].
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `KW_CAPTURE` | glob patterns (`*`, `?`) over tuning keys, comma-separated; `*` = all | off |
//! | `KW_CAPTURE_DIR` | where the files go | `captures` |
//! | `KW_CAPTURE_SKIP` | launches of each selected kernel to skip first | 0 |
//! | `KW_CAPTURE_LIMIT` | captures per kernel and problem size | 1 |
//! | `KW_CAPTURE_FORCE` | capture even when an exact wisdom record exists | off |
//!
//! An invalid value is reported once on standard error and disables capture; the application
//! keeps running. A capture failure (host memory, an unwritable directory, ...) never fails
//! the launch: it is reported once per kernel.
//!
//! The application thread pays for the device-to-host copies (before and after the launch,
//! which it waits for); compression and writing run on a background thread. Captures still
//! pending at exit are written by an exit hook (no call needed;
//! [`flush_captures`] waits for them explicitly). Each capture written
//! prints one line (file, raw and compressed size); at `KW_LOG=debug`, each launch that is
//! not captured says why (exact wisdom, skip count, limit) once per kernel and size; at exit,
//! `KW_CAPTURE` patterns that matched no launched kernel are reported with the tuning keys
//! that were launched. Buffers are captured to their declared length
//! ([`KernelBuilder::buffer_len`]).
//!
//! When capture is off, a launch pays one relaxed atomic load for it.
//!
//! ## Recording and online tuning (`KW_TUNE`)
//!
//! For launches that no exact wisdom record covers (the selection decided at step 2 or
//! later), `KW_TUNE=record` captures each kernel and size once into `KW_CAPTURE_DIR` and
//! lists them at exit; `KW_TUNE=online` tunes them in the background while the application
//! runs (the `kw` binary in a child process, bounded by `KW_TUNE_BUDGET` and `KW_TUNE_SHARE`),
//! switches the launches to the result and writes it to `KW_TUNE_DIR`, which later runs read;
//! `KW_TUNE_RANKS=shared` makes processes sharing that directory switch at the same launch.
//! From code: [`set_tune_settings`], [`set_tune_mode`], [`set_tune_ranks`]; results:
//! [`online_reports`]. Details: [`online`] and `docs/online-tuning.md`.
//!
//! Joining an existing application: the library can use the application's context, streams
//! or queues and memory instead of its own; the backend-specific types are in
//! [`interop::cuda`] and [`interop::opencl`], a launch on the application's queue is
//! [`WisdomKernel::launch_with`] with [`LaunchOptions::on`]. Raw handles go through the
//! `unsafe` constructors [`Queue::cuda_raw`], [`Queue::opencl_raw`], [`RawMem::cuda`] and
//! [`RawMem::opencl`]. Every buffer argument is checked against its declared length
//! ([`KernelBuilder::buffer_len`]) before anything is launched. Examples:
//! `examples/04_existing_opencl_app.rs`, `examples/05_existing_cudarc_app.rs`.
//!
//! Devices: [`open_default_device`] honours `KW_DEVICE` (an index or a name substring);
//! [`open_device`] takes a [`DeviceSelector`]; [`list_devices`] lists them.
//!
//! ## What the crate root exports
//!
//! The runtime's own types and functions: [`KernelBuilder`], [`WisdomKernel`] with
//! [`LaunchOptions`] and [`Launched`], devices ([`open_default_device`], [`open_device`],
//! [`list_devices`], ...), capture and online-tuning settings, the wisdom search
//! ([`search_path`], [`WisdomSource`], [`Choice`]) and [`Error`]. Modules:
//! [`interop`] (the backend-specific types for joining an application's CUDA or OpenCL
//! objects), [`demo_kernels`] (the small kernels of `kernels/`), [`library`] (tuned routines)
//! and [`online`].
//!
//! Beside them, deliberately, the `kw-core` types that appear in the runtime's signatures,
//! so that an application needs no other crate: the expression builders ([`arg`], [`param`],
//! [`lit`], [`device()`], [`problem_size`], [`div_ceil`], [`round_up`], [`min`], [`max`],
//! [`ifelse`], [`Expr`], [`DeviceAttr`]); values and configurations ([`Value`], [`Config`],
//! [`Scalar`], [`ScalarType`], [`Tolerance`]); definitions ([`KernelDef`], [`Access`],
//! [`DefProblem`]); devices and launches ([`Device`], [`DeviceInfo`], [`BackendKind`],
//! [`DeviceBuffer`], [`KernelArg`], [`Queue`], [`RawMem`], [`DeviceEvent`],
//! [`BackendError`]).
//!
//! ## Layer
//!
//! Layer 2 (`docs/architecture.md`): the runtime applications depend on. It depends on
//! `kw-core`, `kw-capture` and the backends `kw-cuda` and `kw-opencl`, each an optional
//! dependency behind the cargo feature of its name (both on by default; a backend left out
//! answers `BackendError::NotBuilt`). It never depends on the tuner (`kw-tune`, `kw-replay`)
//! or on `kw-cli`; `kw-cli` and `kw-capi` depend on it. It is where devices are opened
//! (`devices.rs`) for every crate above it.
//!
//! ## Where to start reading
//!
//! `builder/` (`KernelBuilder`), then `kernel/` (`WisdomKernel`: `mod.rs` the type,
//! `launch.rs` `launch` → `enqueue` and the fallback to the default configuration,
//! `compile.rs` `prepare` and `compile`, `select.rs`, `shape_memo.rs` the hot path),
//! `wisdom.rs` (the search path and the choice per problem size), `capture/`
//! (settings, the per-kernel counters, the background writer, the exit hook) and
//! `devices.rs`. The whole launch path, step by step, is in `docs/architecture.md`.

mod builder;
mod capture;
pub mod demo_kernels;
mod devices;
mod error;
pub mod interop;
mod kernel;
pub mod library;
pub mod online;
mod wisdom;

pub use builder::{KernelBuilder, Source};
pub use capture::{
    capture_settings, flush_captures, set_capture_settings, CaptureSettings, SettingsError,
    CAPTURE_DIR_ENV, CAPTURE_ENV, CAPTURE_FORCE_ENV, CAPTURE_LIMIT_ENV, CAPTURE_SKIP_ENV,
    DEFAULT_CAPTURE_DIR,
};
pub use devices::{
    backend_built, backends, first_device_of, list_devices, open_default_device, open_device,
    open_listed, resolve, CudaBackend, DeviceSelector, ListedDevice, OpenClBackend, DEVICE_ENV,
};
pub use error::Error;
pub use kernel::{ConfigFailure, ConfigSelector, LaunchOptions, Launched, WisdomKernel};
pub use online::{
    online_reports, set_tune_mode, set_tune_ranks, set_tune_settings, tune_settings, OnlineReport,
    TuneBudget, TuneMode, TuneRanks, TuneSettings, TUNE_BUDGET_ENV, TUNE_DIR_ENV, TUNE_ENV,
    TUNE_RANKS_ENV, TUNE_SHARE_ENV,
};
pub use wisdom::{
    search_path, Choice, LaunchShape, WisdomSource, ALTERNATE_GAIN, DEFAULT_WISDOM_DIR,
    DEVICE_NAME_ENV, WISDOM_PATH_ENV,
};

pub use kw_core::backend::{BackendError, DeviceEvent, KernelArg, Queue, RawMem};
pub use kw_core::expr::{
    arg, device, div_ceil, ifelse, lit, max, min, param, problem_size, round_up, DeviceAttr,
};
pub use kw_core::{
    backend::Device, buffer::DeviceBuffer, config::Config, device::BackendKind, device::DeviceInfo,
    expr::Expr, kernel_def::check::DefProblem, kernel_def::Access, kernel_def::KernelDef,
    scalar::Scalar, scalar::ScalarType, tolerance::Tolerance, value::Value,
};
