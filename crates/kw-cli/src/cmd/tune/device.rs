//! The device a capture is tuned on, and the capture `--bundled` asks for.

use anyhow::{Context, Result};
use kernel_wisdom::{bundled, list_devices, open_device, DeviceSelector};
use kw_core::{backend::Device, device::BackendKind};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Opens the device to tune on: the one `selector` (or `KW_DEVICE`) names, else the first of
/// `backend`. Also returns its index (what evaluation workers are given).
pub fn open_for(backend: BackendKind, selector: Option<&str>) -> Result<Arc<dyn Device>> {
    Ok(open_indexed(backend, selector)?.0)
}

pub(super) fn open_indexed(
    backend: BackendKind,
    selector: Option<&str>,
) -> Result<(Arc<dyn Device>, String)> {
    let selector = match selector {
        Some(s) => Some(DeviceSelector::parse(s)),
        None => std::env::var(kernel_wisdom::DEVICE_ENV)
            .ok()
            .map(|s| DeviceSelector::parse(&s)),
    };
    let selector = match selector {
        Some(s) => s,
        None => {
            let d = kernel_wisdom::first_device_of(backend)
                .with_context(|| format!("no {backend} device to replay on"))?;
            DeviceSelector::Index(d.index)
        }
    };
    let text = match &selector {
        DeviceSelector::Index(i) => i.to_string(),
        DeviceSelector::Name(n) => n.clone(),
    };
    Ok((open_device(&selector)?, text))
}

pub(super) fn backend_of(path: &Path) -> Result<BackendKind> {
    let c = kw_capture::Capture::open(path)?;
    let meta: kw_core::capture_meta::CaptureMetadata = c.metadata_as()?;
    Ok(meta.kernel.backend)
}

/// Writes the capture asked for by `--bundled`, on the GPU when there is one (CUDA first,
/// else OpenCL: PoCL on machines without a GPU) unless a device was named.
pub(super) fn bundled_capture(spec: &str, selector: Option<&str>) -> Result<PathBuf> {
    let has_cuda = list_devices()
        .map(|d| d.iter().any(|d| d.info.backend == BackendKind::Cuda))
        .unwrap_or(false);
    let preferred = if has_cuda
        && selector.is_none()
        && std::env::var_os(kernel_wisdom::DEVICE_ENV).is_none()
    {
        BackendKind::Cuda
    } else {
        BackendKind::Opencl
    };
    let device = open_for(preferred, selector)?;
    let path = bundled::capture(spec, device.as_ref(), Path::new("captures"))?;
    eprintln!("kw tune: captured {}", path.display());
    Ok(path)
}
