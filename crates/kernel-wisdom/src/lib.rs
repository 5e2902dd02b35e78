//! # kernel-wisdom
//!
//! Self-tuning GPU kernels. An application declares each tunable kernel once with a
//! [`KernelBuilder`] (source, tuning parameters, restrictions, geometry, arguments, all as
//! expressions), binds it to a device as a [`WisdomKernel`] and launches it with its
//! arguments; the runtime derives the problem size, selects a configuration, compiles it once
//! and launches it.
//!
//! ```no_run
//! use kernel_wisdom::{bundled, open_default_device, DeviceBuffer, WisdomKernel};
//! # fn main() -> Result<(), kernel_wisdom::Error> {
//! let device = open_default_device()?;
//! let add = WisdomKernel::new(bundled::vector_add()?, device.clone())?;
//! let x = DeviceBuffer::from_slice(device.as_ref(), &[1.0f32, 2.0, 3.0])?;
//! let y = DeviceBuffer::<f32>::new(device.as_ref(), 3)?;
//! add.launch(&[y.arg(), x.arg(), x.arg(), 3i32.into()])?;
//! assert_eq!(y.to_vec()?, vec![2.0, 4.0, 6.0]);
//! # Ok(()) }
//! ```
//!
//! Capture (for offline tuning): set `KW_CAPTURE=*` (or call [`set_capture_settings`]) and
//! selected launches are written to `captures/` (`KW_CAPTURE_DIR`) in the background; call
//! [`flush_captures`] before the application exits, or captures still being written are lost
//! (Rust does not drop statics at exit). See [`capture`].
//!
//! Devices: [`open_default_device`] honours `KW_DEVICE` (an index or a name substring);
//! [`open_device`] takes a [`DeviceSelector`]; [`list_devices`] lists them.

pub mod builder;
pub mod bundled;
pub mod bundled_cuda;
pub mod capture;
pub mod error;
mod includes;
pub mod kernel;
pub mod select;
pub mod wisdom;

pub use builder::{KernelBuilder, Source};
pub use capture::{flush_captures, set_capture_settings, CaptureSettings};
pub use error::Error;
pub use kernel::{ConfigSelector, Failure, WisdomKernel};
pub use select::{
    list_devices, open_default_device, open_device, DeviceSelector, ListedDevice, DEVICE_ENV,
};
pub use wisdom::{Choice, WisdomSource};

pub use kw_core::backend::{BackendError, KernelArg};
pub use kw_core::expr::{
    arg, device, div_ceil, lit, max, min, param, problem_size, round_up, select as ifelse,
    DeviceAttr,
};
pub use kw_core::{
    Access, BackendKind, Config, DefProblem, Device, DeviceBuffer, DeviceInfo, Expr, KernelDef,
    Scalar, ScalarType, Value,
};
pub use kw_cuda::CudaBackend;
pub use kw_opencl::OpenClBackend;
