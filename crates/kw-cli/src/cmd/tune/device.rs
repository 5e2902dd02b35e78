//! The device a capture is tuned on, and the capture `--bundled` asks for.

pub(super) use crate::cmd::device_choice::{open_for, open_indexed};
use anyhow::Result;
use kernel_wisdom::{demo_kernels as bundled, list_devices};
use kw_core::device::BackendKind;
use std::path::{Path, PathBuf};

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
    let dir = &crate::cmd::capture::default_capture_dir();
    // A capture of the same kernel and size is replaced (the bundled inputs are generated
    // the same way each time), and that is said.
    let before: Vec<std::ffi::OsString> = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    let path = bundled::capture(spec, device.as_ref(), dir)?;
    let replaced = path
        .file_name()
        .is_some_and(|name| before.iter().any(|b| b == name));
    eprintln!(
        "kw tune: captured {}{}",
        path.display(),
        if replaced {
            " (replacing the earlier capture of that name)"
        } else {
            ""
        }
    );
    Ok(path)
}
