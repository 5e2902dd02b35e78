//! [`CudaBackend`]: enumerating and opening CUDA devices.

use crate::device::CudaDevice;
use crate::error::api;
use crate::info;
use crate::nvrtc_lib;
use crate::probe;
use cudarc::driver::result;
use kw_core::backend::{Backend, BackendError, Device};
use kw_core::device::{BackendKind, DeviceInfo};
use std::sync::Arc;

/// The CUDA backend. Creating it is free; the driver is loaded on first use, and a machine
/// without one answers [`BackendError::Unavailable`] ("no CUDA driver ...").
#[derive(Clone, Copy, Debug, Default)]
pub struct CudaBackend;

impl CudaBackend {
    /// The backend.
    pub fn new() -> CudaBackend {
        CudaBackend
    }

    /// Whether a CUDA driver with at least one device is present.
    pub fn is_available(&self) -> bool {
        self.devices().is_ok_and(|d| !d.is_empty())
    }

    /// Opens device `index` as the concrete [`CudaDevice`].
    pub fn open_cuda(&self, index: usize) -> Result<CudaDevice, BackendError> {
        let devices = self.devices()?;
        let info = devices
            .get(index)
            .cloned()
            .ok_or_else(|| BackendError::NoSuchDevice {
                backend: BackendKind::Cuda,
                selector: format!("index {index}"),
                available: available(&devices),
            })?;
        CudaDevice::open(index, info, probe::driver()?)
    }
}

/// `0: NVIDIA H100 80GB HBM3 (sm_90)`, comma-separated.
fn available(devices: &[DeviceInfo]) -> String {
    if devices.is_empty() {
        return "none".into();
    }
    devices
        .iter()
        .enumerate()
        .map(|(i, d)| format!("{i}: {} ({})", d.name, d.architecture))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The compiler version as devices report it: `NVRTC 12.8`, or why there is none.
fn compiler_version(driver: probe::DriverVersion) -> String {
    match nvrtc_lib::nvrtc(driver.major()) {
        Ok(lib) => lib.version_string(),
        Err(_) => "NVRTC unavailable".into(),
    }
}

impl Backend for CudaBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cuda
    }

    fn devices(&self) -> Result<Vec<DeviceInfo>, BackendError> {
        let driver = probe::driver()?;
        let count = result::device::get_count().map_err(api("cuDeviceGetCount"))?;
        let compiler = compiler_version(driver);
        (0..usize::try_from(count).unwrap_or(0))
            .map(|i| info::describe(i, driver, &compiler))
            .collect()
    }

    fn open(&self, index: usize) -> Result<Arc<dyn Device>, BackendError> {
        Ok(Arc::new(self.open_cuda(index)?))
    }
}
