//! Stand-ins for the backends left out of the build (cargo features `cuda`, `opencl`): the
//! same names and the same generic API, answering [`BackendError::NotBuilt`] ("built without
//! CUDA support ...") instead of listing or opening devices.

use kw_core::backend::{Backend, BackendError, Device};
use kw_core::{device::BackendKind, device::DeviceInfo};
use std::sync::Arc;

fn not_built(backend: BackendKind) -> BackendError {
    BackendError::NotBuilt {
        backend,
        feature: match backend {
            BackendKind::Cuda => "cuda",
            BackendKind::Opencl => "opencl",
        },
    }
}

macro_rules! not_built_backend {
    ($(#[$doc:meta])* $name:ident, $kind:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $name;

        impl $name {
            /// The backend.
            pub fn new() -> $name {
                $name
            }

            /// Always `false`: this build has no such backend.
            pub fn is_available(&self) -> bool {
                false
            }
        }

        impl Backend for $name {
            fn kind(&self) -> BackendKind {
                $kind
            }

            fn devices(&self) -> Result<Vec<DeviceInfo>, BackendError> {
                Err(not_built($kind))
            }

            fn open(&self, _index: usize) -> Result<Arc<dyn Device>, BackendError> {
                Err(not_built($kind))
            }
        }
    };
}

#[cfg(not(feature = "cuda"))]
not_built_backend!(
    /// The CUDA backend, left out of this build (enable the `cuda` feature).
    CudaBackend,
    BackendKind::Cuda
);

#[cfg(not(feature = "opencl"))]
not_built_backend!(
    /// The OpenCL backend, left out of this build (enable the `opencl` feature).
    OpenClBackend,
    BackendKind::Opencl
);
