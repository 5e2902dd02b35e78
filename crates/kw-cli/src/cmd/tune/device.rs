//! The device a capture is tuned on, and the capture `--bundled` asks for.

use anyhow::{Context, Result};
use kernel_wisdom::{demo_kernels as bundled, list_devices, open_listed, resolve, DeviceSelector};
use kw_core::{backend::Device, device::BackendKind};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Opens the device to tune on: the one `selector` (or `KW_DEVICE`) names among the
/// devices of `backend` (an index as `kw devices` numbers them, or a name substring), else
/// the first of `backend`.
pub fn open_for(backend: BackendKind, selector: Option<&str>) -> Result<Arc<dyn Device>> {
    Ok(open_indexed(backend, selector)?.0)
}

/// [`open_for`], also returning the device's stable identity
/// ([`kernel_wisdom::ListedDevice::identity`]): what evaluation workers are given, so that
/// they open exactly this device whatever their own numbering.
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
    let listed = match selector {
        Some(s) => resolve(&s, Some(backend))?,
        None => kernel_wisdom::first_device_of(backend)
            .with_context(|| format!("no {backend} device to replay on"))?,
    };
    Ok((open_listed(&listed)?, listed.identity()))
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
